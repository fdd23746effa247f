"""A PEP 503 package index on 127.0.0.1 laid out as the PyTorch index is (/whl/cpu/<project>/, /whl/cu126/...),
serving real wheels from the test cache, for `doctor --fix`'s pip steps; CUDASWITCH_TORCH_INDEX=<url>/whl points
the real `recommend` URLs (https://download.pytorch.org/whl/<tag>) at it."""

from __future__ import annotations

import hashlib
import html
import os
import threading
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Dict, List


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the test's output is pip's, not the server's
        pass


def lay_out(root: Path, tags: Dict[str, List[Path]]) -> Path:
    """root/whl/<tag>/<project>/index.html linking each wheel (with its sha256, as PEP 503 allows), the wheel
    linked beside it."""
    for tag, wheels in tags.items():
        base = root / "whl" / tag
        projects = {}
        for whl in wheels:
            projects.setdefault(whl.name.split("-")[0].lower().replace("_", "-"), []).append(whl)
        for project, files in projects.items():
            folder = base / project
            folder.mkdir(parents=True, exist_ok=True)
            links = []
            for whl in files:
                if not (folder / whl.name).exists():
                    os.symlink(whl, folder / whl.name)
                digest = hashlib.sha256(whl.read_bytes()).hexdigest()
                links.append(f'<a href="{html.escape(whl.name)}#sha256={digest}">{html.escape(whl.name)}</a><br>')
            page = "<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n"
            (folder / "index.html").write_text(page)
        (base / "index.html").write_text("<!DOCTYPE html><html><body>\n" + "\n".join(
            f'<a href="{p}/">{p}</a><br>' for p in sorted(projects)) + "\n</body></html>\n")
    return root


@contextmanager
def serving(root: Path):
    """The index's base URL (http://127.0.0.1:PORT/whl) while it serves."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/whl"
    finally:
        server.shutdown()
        server.server_close()


def shaped_wheel(folder: Path, name: str, version: str, files: Dict[str, str], requires: List[str] = ()) -> Path:
    """A wheel laid out as the PyTorch index's are (`torch-2.14.1+cu126-cp311-cp311-linux_x86_64.whl`: the build in
    the local version, a CPython tag, a RECORD with every file's hash) holding `files` (path -> text): the real
    CUDA builds are gigabytes, and what a fix does with them is pip's work on exactly this shape."""
    import base64
    import sys
    import zipfile

    py = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    path = Path(folder) / f"{name}-{version}-{py}-{py}-linux_x86_64.whl"
    info = f"{name}-{version}.dist-info"
    meta = "".join([f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"]
                   + [f"Requires-Dist: {r}\n" for r in requires])
    members = dict(files)
    members[f"{info}/METADATA"] = meta
    members[f"{info}/WHEEL"] = f"Wheel-Version: 1.0\nGenerator: cudaswitch-tests\nRoot-Is-Purelib: false\nTag: {py}-{py}-linux_x86_64\n"
    rows = []
    for member, text in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        rows.append(f"{member},sha256={digest},{len(text.encode())}")
    rows.append(f"{info}/RECORD,,")
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for member, text in members.items():
            zf.writestr(member, text)
        zf.writestr(f"{info}/RECORD", "\n".join(rows) + "\n")
    return path
