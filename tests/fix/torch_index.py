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
