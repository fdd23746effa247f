"""`cudaswitch install-toolkit X.Y` / `uninstall-toolkit`: a CUDA toolkit from NVIDIA's own PyPI wheels, no admin.

pip downloads exactly the wheels of cudaswitch/data/toolkit_wheels.csv, pinned by version and SHA-256 (the user's pip
configuration, index and proxy apply; pip runs isolated, in hash-checking mode), every file is checked against its
wheel's RECORD hash while it is unpacked into a 0700 staging folder next to the destination, and only a complete
toolkit is renamed into place, so `list` never sees half an install (docs/design/security.md: install-toolkit). The result has NVIDIA's
layout (bin/nvcc, include/, lib64/, nvvm/, targets/<arch>/{include,lib} as nvcc.profile expects) and a version.json,
so discovery, CMake's FindCUDAToolkit and torch's cpp_extension treat it like an installer-made toolkit.

Only CUDA 13.x can be assembled: the 11.x/12.x compiler wheels (nvidia-cuda-nvcc-cu11/-cu12) carry ptxas and libnvvm
but no nvcc driver, cudafe++ or crt headers (docs/design/torch-aware.md lists the wheels checked).
"""

from __future__ import annotations

import base64
import contextlib
import csv
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import threading
import time
import zipfile
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from cudaswitch.core import faults, interrupts, trust
from cudaswitch.core.errors import CudaswitchError, FinishedInterrupted, UsageError
from cudaswitch.core.fsutil import current_umask
from cudaswitch.core.i18n import Listed, M, N_
from cudaswitch.core.system import System
from cudaswitch.core.versions import numbers
from cudaswitch.discovery.toolkit_store import store_dir

# The wheels a toolkit that builds CUDA extensions needs: compiler driver + front end, crt headers, cicc/libnvvm,
# the runtime (headers, libcudart, cudart_static), CCCL (thrust/cub/libcu++) and NVRTC.
COMPONENTS_13 = ("nvidia-cuda-nvcc", "nvidia-cuda-crt", "nvidia-nvvm", "nvidia-cuda-runtime", "nvidia-cuda-cccl",
                 "nvidia-cuda-nvrtc")
NO_NVCC_WHEELS = {
    11: M("nvidia-cuda-nvcc-cu11 (11.7, 11.8) ships ptxas and libnvvm only, no nvcc"),
    12: M("nvidia-cuda-nvcc-cu12 (12.0-12.9) ships ptxas and libnvvm only, no nvcc"),
}
MANIFEST = ".cudaswitch-toolkit.json"
PipRunner = Callable[[Sequence[str], bool], "subprocess.CompletedProcess[str]"]
CHUNK = 1 << 20


@dataclass(frozen=True)
class KnownWheel:
    package: str
    version: str
    filename: str
    sha256: str


@dataclass
class InstallResult:
    version: str
    root: str
    wheels: List[Dict] = field(default_factory=list)  # name, version, file, sha256, size
    download_seconds: float = 0.0
    assemble_seconds: float = 0.0
    download_bytes: int = 0
    disk_bytes: int = 0
    already: Optional[str] = None  # the toolkit of the same version found before anything was downloaded

    def to_json(self) -> dict:
        return asdict(self)


def known_wheels() -> Dict[tuple, List[KnownWheel]]:
    """(major, minor) -> the exact wheels install-toolkit downloads for it (cudaswitch/data/toolkit_wheels.csv):
    pinned by version and SHA-256, so no index (a mirror, an extra index in the user's pip configuration) can hand
    over a different file or a higher fake version."""
    from cudaswitch.data.knowledge import table

    out: Dict[tuple, List[KnownWheel]] = {}
    for row in table("toolkit_wheels.csv"):
        key = tuple(numbers(row["cuda"]) or ())[:2]
        out.setdefault(key, []).append(KnownWheel(row["package"], row["version"], row["filename"], row["sha256"]))
    return out


def parse_request(text: str) -> tuple:
    """(major, minor) for what every other command accepts as a version (13.0, 13, 13.0.88, cu130, v13.0,
    cuda-13.0); a folder or another word is a usage error."""
    from cudaswitch.core.versions import parse_selector

    try:
        sel = parse_selector(text or "")
    except UsageError:
        sel = None
    if sel is None or sel.path is not None or not sel.parts:
        raise UsageError(M("'{text}' is not a CUDA version: give one such as 13.0 (or 13, 13.0.88, cu130), e.g. "
                           "'cudaswitch install-toolkit 13.0'", text=text))
    major = sel.parts[0]
    requirements(major, sel.parts[1] if len(sel.parts) > 1 else None)
    table = known_wheels()
    if len(sel.parts) == 1:
        minor = max(m for (a, m) in table if a == major)
    else:
        minor = sel.parts[1]
    if len(sel.parts) == 3:
        nvcc = _nvcc_of(table.get((major, minor), []))
        want = ".".join(map(str, sel.parts))
        if nvcc is None or nvcc.version != want:
            raise UsageError(M("NVIDIA's wheels make CUDA {major}.{minor} as {have}, not {want}; give "
                               "'{major}.{minor}'", major=major, minor=minor, want=want,
                               have=nvcc.version if nvcc else M("none")))
    return major, minor


def _nvcc_of(wheels: List[KnownWheel]) -> Optional[KnownWheel]:
    return next((w for w in wheels if w.package == "nvidia-cuda-nvcc"), None)


def requirements(major: int, minor: Optional[int]) -> List[KnownWheel]:
    if major in NO_NVCC_WHEELS:
        raise UsageError(M("CUDA {major}.{minor} cannot be assembled from NVIDIA's wheels: {why}; "
                           "install it with NVIDIA's runfile or conda (conda install -c nvidia cuda-toolkit="
                           "{major}.{minor}), or use a 13.x toolkit ('cudaswitch install-toolkit 13.0')",
                           major=major, minor="x" if minor is None else minor, why=NO_NVCC_WHEELS[major]))
    if major < 13:
        raise UsageError(M("NVIDIA publishes no CUDA {major}.x compiler wheels; install-toolkit can assemble CUDA "
                           "13.x (e.g. 'cudaswitch install-toolkit 13.0')", major=major))
    table = known_wheels()
    if minor is None:
        minor = max((m for (a, m) in table if a == major), default=None)
    wheels = table.get((major, minor)) if minor is not None else None
    if not wheels:
        raise UsageError(M("cudaswitch knows the wheels of CUDA {known} (pinned by version and SHA-256), not CUDA "
                           "{want}; a newer cudaswitch knows newer releases",
                           known=Listed(f"{a}.{b}" for a, b in sorted(table)),
                           want=f"{major}.{minor}" if minor is not None else f"{major}.x"))
    return wheels


def _pip(args: Sequence[str], show_progress: bool) -> "subprocess.CompletedProcess[str]":
    """pip as cudaswitch's own Python child: isolated (-I: no PYTHONPATH, no user site, no working folder on
    sys.path), from a neutral working folder, no stdin and --no-input (an index that asks for a password fails
    instead of waiting for an answer nobody sees). pip's retry warnings reach the user as they happen; the rest of
    its stderr is kept to explain a failure. Its stdout (progress bars) goes to the user's stderr when asked."""
    out = subprocess.DEVNULL
    if show_progress:
        try:
            sys.stderr.flush()
            out = sys.stderr.fileno()
        except (AttributeError, OSError, ValueError):  # a stderr with no descriptor (captured): no bars
            out = subprocess.DEVNULL
    env, note = trust.pip_environ(os.environ)
    if note:
        from cudaswitch.core.i18n import _, tr

        sys.stderr.write(_("note: {text}").format(text=tr(note)) + "\n")
    proc = subprocess.Popen([sys.executable, "-I", "-m", "pip", *args], cwd=os.path.abspath(os.sep),
                            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE, text=True,
                            errors="replace", env=env)
    kept: List[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            kept.append(line)
            if _RETRY.search(line):
                from cudaswitch.core.i18n import _

                sys.stderr.write(_("pip: {line}").format(line=line.strip()) + "\n")
                sys.stderr.flush()
        proc.wait()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return subprocess.CompletedProcess(list(args), proc.returncode, "", "".join(kept))


_RETRY = re.compile(r"WARNING: Retrying \(")
_FROM_VERSIONS = re.compile(r"from versions:\s*([^)]*)\)")
_HASH_ROW = re.compile(r"^\s*(\S+?)==(\S+) from (\S+?):?(?:\s|$)")


def download(wheels: List[KnownWheel], dest: Path, runner: PipRunner = _pip, show_progress: bool = False) \
        -> List[Path]:
    trust.make_dir(dest)
    reqs = dest.parent / "requirements.txt"
    pins: Dict[str, List[str]] = {}
    for w in wheels:  # one line per package; every x86_64 file of that release may be the one pip picks
        pins.setdefault(f"{w.package}=={w.version}", []).append(f"--hash=sha256:{w.sha256}")
    trust.write_file(reqs, "".join(f"{pin} {' '.join(hashes)}\n" for pin, hashes in pins.items()))
    log = dest.parent / "pip.log"  # pip's debug log: the only place it says an index answered 401
    args = ["download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "--no-input",
            "--require-hashes", "--log", str(log), "-d", str(dest), "-r", str(reqs)]
    r = runner(args, show_progress)
    if r.returncode != 0:

        try:
            fd = trust.open_dir(log.parent, [])
            try:
                detail = (trust.read_regular(fd, log.name, limit=16 << 20) or b"").decode("utf-8", "replace")
            finally:
                os.close(fd)
        except OSError:
            detail = ""
        raise CudaswitchError(_pip_failure(r, wheels, detail))
    got = sorted(dest.glob("*.whl"))
    names = {w.filename: w.package for w in wheels}
    if any(p.name not in names for p in got) or sorted(names[p.name] for p in got) != sorted(pins_of(wheels)):
        raise CudaswitchError(M("pip download produced {found} instead of {wanted}; nothing was installed",
                                found=Listed(p.name for p in got) or M("no wheel"),
                                wanted=Listed(f"{w.package} {w.version}" for w in _one_per_package(wheels))))
    return got


def pins_of(wheels: List[KnownWheel]) -> List[str]:
    return sorted({w.package for w in wheels})


def _one_per_package(wheels: List[KnownWheel]) -> List[KnownWheel]:
    seen: Dict[str, KnownWheel] = {}
    for w in wheels:
        seen.setdefault(w.package, w)
    return list(seen.values())


def _pip_failure(r: "subprocess.CompletedProcess[str]", wheels: List[KnownWheel], log: str = "") -> str:
    """One line for what pip printed (and its debug `log`): a file that is not the one NVIDIA published, an
    index asking for a password, a release the index lacks, or pip's last line."""
    err = r.stderr or ""
    lines = err.splitlines()
    if "DO NOT MATCH THE HASHES" in err:
        for i, ln in enumerate(lines):
            m = _HASH_ROW.match(ln)
            got = next((x.split()[-1] for x in lines[i + 1:i + 4] if x.strip().startswith("Got")), None)
            if m and got:
                want = " / ".join(w.sha256 for w in wheels if w.package == m.group(1)) or "?"
                return M("the package index served a file for {package} {version} that is not NVIDIA's: its SHA-256 "
                         "is {got}, NVIDIA's is {want} ({url}); check the index and mirrors in your pip "
                         "configuration (pip config list); nothing was installed", package=m.group(1),
                         version=m.group(2), got=got, want=want, url=m.group(3))
    denied = re.search(r"Could not fetch URL (\S+?): 401\b", log) or re.search(r"\b401\b.*?(https?://\S+)", err)
    if denied:
        url = denied.group(1)
        return M("{url} asks for a user name and password (HTTP 401), and install-toolkit does not prompt; put "
                 "them in pip's configuration or keyring, then run the command again; nothing was installed",
                 url=url.rstrip(":.,)"))
    m = _FROM_VERSIONS.search(err)
    if m and "No matching distribution" in err:
        missing = re.search(r"No matching distribution found for (\S+)", err)
        return M("the package index offers no {wanted} (it has: {available}); check the index in your pip "
                 "configuration (pip config list); nothing was installed",
                 wanted=missing.group(1) if missing else M("wheel"), available=m.group(1).strip() or M("none"))
    last = [ln for ln in lines if ln.strip()][-1:] or ["no output"]
    return M("pip download failed (exit {code}): {last}", code=r.returncode, last=last[0].strip())


def _record_hashes(zf: zipfile.ZipFile, wheel: str) -> Dict[str, str]:
    name = next((n for n in zf.namelist() if n.endswith(".dist-info/RECORD")), None)
    if name is None:
        raise CudaswitchError(M("{wheel}: no RECORD file; not a valid wheel", wheel=wheel))
    try:
        text = zf.read(name).decode("utf-8")
        rows = list(csv.reader(io.StringIO(text)))
    except (UnicodeDecodeError, csv.Error):
        raise CudaswitchError(M("{wheel}: its RECORD is not UTF-8 CSV; not a valid wheel; nothing was installed",
                                wheel=wheel)) from None
    return {row[0]: row[1][len("sha256="):] for row in rows if len(row) >= 2 and row[1].startswith("sha256=")}


def _payload_prefix(name: str) -> Optional[str]:
    """'nvidia/cu13/bin/nvcc' -> 'bin/nvcc'; 'nvidia/cuda_nvcc/bin/ptxas' -> 'bin/ptxas'; None for metadata.
    A name that could leave the toolkit (absolute, a drive, a backslash, an empty, '.' or '..' part) raises: pip
    refuses such wheels too, and the RECORD comes from the same wheel, so it cannot vouch for them."""
    parts = name.split("/")
    if (name.startswith("/") or "\\" in name or ":" in parts[0] or "\0" in name
            or any(p in ("", ".", "..") for p in parts[:-1]) or parts[-1] in (".", "..")):
        raise _Unsafe(name)
    if len(parts) < 3 or parts[0] != "nvidia" or parts[2] in ("", ".metadata") or parts[-1] in ("", "__init__.py"):
        return None
    return "/".join(parts[2:])


class _Unsafe(Exception):
    pass


class _Cancelled(Exception):
    pass


def _payload(zf: zipfile.ZipFile, wheel: str) -> List[tuple]:
    """(info, rel) of every file the toolkit takes from the wheel; CudaswitchError for a name that could leave it."""
    out = []
    for info in zf.infolist():
        try:
            rel = _payload_prefix(info.filename)
        except _Unsafe:
            raise CudaswitchError(M("{wheel}: member {name!r} would be written outside the toolkit; cudaswitch "
                                    "does not unpack such a wheel; nothing was installed", wheel=wheel,
                                    name=info.filename)) from None
        if rel is not None and not info.is_dir():
            out.append((info, rel))
    return out


def _open_wheel(path: Path, known: Optional[KnownWheel]):
    """The wheel open once, its SHA-256 checked against the table from that same descriptor before any member is
    read (what was hashed is what is unpacked), as a ZipFile; CudaswitchError for a damaged or different file."""
    fh = trust.open_regular(path)
    try:
        h = hashlib.sha256()
        for chunk in iter(lambda: fh.read(CHUNK), b""):
            h.update(chunk)
        digest = h.hexdigest()
        if known is not None and digest != known.sha256:
            raise CudaswitchError(M("{wheel} is not the file NVIDIA published: its SHA-256 is {got}, NVIDIA's is "
                                    "{want}; nothing was installed", wheel=path.name, got=digest, want=known.sha256))
        fh.seek(0)
        try:
            return zipfile.ZipFile(fh), digest
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise CudaswitchError(M("{wheel} is not a readable wheel ({why}); nothing was installed",
                                    wheel=path.name, why=exc)) from None
    except BaseException:
        fh.close()
        raise


def unpack(wheel: Path, root: Path, files: List[str], exec_mode: int, known: Optional[KnownWheel] = None,
           cancel: Optional[threading.Event] = None, progress: Optional[Callable[[int], None]] = None) -> Dict:
    """Extract the toolkit payload of one wheel into root, each file checked against the wheel's RECORD;
    executables get `exec_mode`. Stops within one chunk once `cancel` is set (Ctrl-C)."""
    zf, digest = _open_wheel(wheel, known)
    with zf:
        record = _record_hashes(zf, wheel.name)
        real_root = os.path.realpath(root)
        for n, (info, rel) in enumerate(_payload(zf, wheel.name), 1):
            faults.reach("unpack", n)
            want = record.get(info.filename)
            if want is None:
                raise CudaswitchError(M("{wheel}: {file} is not listed in the wheel's RECORD", wheel=wheel.name,
                                        file=info.filename))
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            # the parts were checked above; this holds even if a folder of the same name arrived as a link
            if os.path.commonpath([real_root, os.path.realpath(target.parent)]) != real_root:
                raise CudaswitchError(M("{wheel}: member {name!r} would be written outside the toolkit; "
                                        "nothing was installed", wheel=wheel.name, name=info.filename))
            digest_f = hashlib.sha256()
            try:
                with zf.open(info) as src:
                    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0),
                                 0o666)
                    with os.fdopen(fd, "wb") as out:
                        for chunk in iter(lambda: src.read(CHUNK), b""):
                            if cancel is not None and cancel.is_set():
                                raise _Cancelled()
                            digest_f.update(chunk)
                            out.write(chunk)
                            if progress is not None:
                                progress(len(chunk))
            except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
                raise CudaswitchError(M("{wheel}: {file} cannot be read ({why}); damaged download; nothing was "
                                        "installed", wheel=wheel.name, file=info.filename, why=exc)) from None
            got = base64.urlsafe_b64encode(digest_f.digest()).rstrip(b"=").decode()
            if got != want:
                raise CudaswitchError(M("{wheel}: {file} does not match its RECORD hash (damaged "
                                        "download); nothing was installed", wheel=wheel.name, file=info.filename))
            if (info.external_attr >> 16) & 0o111:
                os.chmod(target, exec_mode)
            files.append(rel)
    m = re.match(r"([A-Za-z0-9_]+?)-(\d[^-]*)-", wheel.name)
    return {"name": m.group(1).replace("_", "-") if m else wheel.name, "version": m.group(2) if m else None,
            "file": wheel.name, "sha256": digest, "size": wheel.stat().st_size}


def _finish_layout(root: Path, files: List[str]) -> None:
    """What NVIDIA's installer has and the wheels lack: lib64, targets/<arch>, unversioned .so links."""
    links = []
    lib = root / "lib"
    if lib.is_dir():
        for so in sorted(lib.glob("lib*.so.*")):
            plain = lib / (so.name.split(".so.")[0] + ".so")
            if not plain.exists():
                trust.symlink(so.name, plain)
                links.append(f"lib/{plain.name}")
        trust.symlink("lib", root / "lib64")
        links.append("lib64")
    target = root / "targets" / "x86_64-linux"
    trust.make_dirs(target, exist_ok=False)
    for sub in ("include", "lib"):
        if (root / sub).is_dir():
            trust.symlink(f"../../{sub}", target / sub)
            links.append(f"targets/x86_64-linux/{sub}")
    files.extend(links)


def _tree_bytes(root: Path) -> int:
    total = 0
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            if not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def payload_bytes(wheels: List[Path]) -> int:
    """The unpacked size of the toolkit's files in these wheels: the length of the unpack's progress bar."""
    total = 0
    for w in wheels:
        try:
            with trust.open_regular(w) as fh, zipfile.ZipFile(fh) as zf:
                total += sum(i.file_size for i, _ in _payload(zf, w.name))
        except (zipfile.BadZipFile, OSError, CudaswitchError):
            pass  # reported by the unpack itself
    return total


def assemble(wheels: List[Path], root: Path, requested: str, known: Optional[Dict[str, KnownWheel]] = None,
             progress: Optional[Callable[[int], None]] = None) -> InstallResult:
    """Build the toolkit from downloaded wheels into `root` (a fresh staging folder). `known`: file name -> the
    table's row, whose SHA-256 each wheel must have."""
    known = known or {}
    files: List[str] = []
    # executables: runnable by everyone the umask allows (read once, before the threads start)
    exec_mode = 0o777 & ~current_umask()
    # The wheels unpack side by side: inflating and hashing release the GIL, so on two cores the unpack takes about
    # 40% less time (benchmarks/bench_toolkit_install.py). Should two wheels ever hold the same file, they unpack one
    # after the other as before, so the later one still wins and no file is written by two threads at once.
    names = []
    for w in wheels:
        try:
            with trust.open_regular(w) as fh, zipfile.ZipFile(fh) as zf:
                names += [rel for _, rel in _payload(zf, w.name)]
        except (zipfile.BadZipFile, OSError):
            names.append("")  # unreadable: one after the other, the unpack reports it
            names.append("")
    workers = min(len(wheels), os.cpu_count() or 1, 4) if len(set(names)) == len(names) else 1
    cancel = threading.Event()
    if progress is not None:
        lock, report = threading.Lock(), progress

        def progress(n: int) -> None:  # the bar is drawn from every worker thread: one at a time
            with lock:
                report(n)

    def one(w: Path) -> Dict:
        return unpack(w, root, files, exec_mode, known.get(w.name), cancel, progress)

    try:
        if workers > 1:
            from concurrent.futures import ThreadPoolExecutor

            pool = ThreadPoolExecutor(workers)
            try:
                infos = list(pool.map(one, wheels))
            finally:
                # Ctrl-C or a failed wheel: the other threads stop within one chunk instead of finishing their wheels
                cancel.set()
                pool.shutdown(wait=True, cancel_futures=True)
        else:
            infos = [one(w) for w in wheels]
    except _Cancelled:  # a wheel stopped by cancel.set(): the failure or Ctrl-C that set it is what propagates
        raise CudaswitchError(N_("the unpack was stopped; nothing was installed")) from None
    nvcc = next((i for i in infos if i["name"].startswith("nvidia-cuda-nvcc")), None)
    if not (root / "bin" / "nvcc").is_file() or nvcc is None:
        raise UsageError(M("the wheels for CUDA {requested} contain no nvcc ({files}); nothing was installed",
                           requested=requested, files=Listed(i["file"] for i in infos)))
    _finish_layout(root, files)
    comp = {i["name"].replace("nvidia-", "").replace("-", "_").replace("cuda_runtime", "cuda_cudart"):
            {"name": i["name"], "version": i["version"]} for i in infos}
    version_json = {"cuda": {"name": "CUDA SDK", "version": nvcc["version"]}, **comp,
                    "cudaswitch": {"assembled_from": [i["file"] for i in infos]}}
    trust.write_file(root / "version.json", json.dumps(version_json, indent=3) + "\n")
    files += ["version.json", MANIFEST]
    trust.write_file(root / MANIFEST, json.dumps({"version": nvcc["version"], "wheels": infos,
                                                  "files": sorted(files)}, indent=1) + "\n")
    return InstallResult(nvcc["version"], str(root), infos)


def _destination(system: System, into: Optional[str], major: int, minor: int) -> Path:
    if not into:
        return store_dir(system) / f"cuda-{major}.{minor}"
    try:
        dest = Path(os.path.abspath(os.path.expanduser(into)))
    except FileNotFoundError:  # os.getcwd() of a deleted working folder
        raise UsageError(M("--into {into} is relative, and the working folder no longer exists; give an absolute "
                           "path", into=into)) from None
    return dest


def _check_destination(dest: Path, what: str) -> None:
    """One line for a destination cudaswitch cannot or must not install into, before anything is downloaded:
    it exists; a plain file stands where a folder above it should be; a folder above it could have been written
    by another user (who could then swap the staging folder or the result for a link: the rule of
    docs/design/security.md)."""

    if os.path.lexists(dest):
        raise UsageError(M("{dest} already exists; 'cudaswitch uninstall-toolkit {dest}' removes a toolkit it "
                           "installed, or choose another --into folder", dest=dest))
    for p in dest.parents:
        if os.path.lexists(p):
            if not os.path.isdir(p):
                raise UsageError(M("{path} is a file, not a folder: cudaswitch cannot install into {dest}; choose "
                                   "another --into folder", path=p, dest=dest))
            break
    trust.refuse_if_foreign([dest.parent], what, M("choose a folder only you (and root) can write, or run it as "
                                                   "the owner of that folder"))


def _make_parents(folder: Path) -> List[Path]:
    """mkdir -p, returning the folders it created (deepest last): a failed install removes those and no other."""
    made: List[Path] = []
    for p in reversed([folder, *folder.parents]):
        if not os.path.lexists(p):
            trust.make_dir(p)
            made.append(p)
    return made


def _clean_up(stage: Optional[Path], made: List[Path]) -> bool:
    """Remove the staging folder and the folders this install created, with Ctrl-C held meanwhile: a second
    Ctrl-C during the cleanup of a failed install would otherwise leave a `.partial-*` behind. Whether a Ctrl-C came
    meanwhile: after a finished install it is reported, not lost."""
    import signal

    held = threading.current_thread() is threading.main_thread()
    pressed: List[int] = []
    old = signal.signal(signal.SIGINT, lambda *_: pressed.append(1)) if held else None
    try:
        faults.reach("cleanup", 1)
        if stage is not None:
            trust.remove_tree(stage, ignore_errors=True)
        for p in reversed(made):
            try:
                trust.remove_dir(p)
            except OSError:
                break
    finally:
        if held:
            signal.signal(signal.SIGINT, old)
    return bool(pressed)


def _unregister(system: System, dest: Path, registered: bool) -> None:
    """Take back the write-ahead record of a --into install that did not happen."""
    if not registered:
        return
    import signal

    from cudaswitch.discovery.toolkit_store import register

    held = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGINT, signal.SIG_IGN) if held else None
    try:
        register(system, str(dest), add=False)
    except OSError:
        pass
    finally:
        if held:
            signal.signal(signal.SIGINT, old)


def already_installed(system: System, version: str) -> Optional[str]:
    """The folder of a toolkit of exactly this version that discovery finds already, or None."""
    from cudaswitch.discovery.toolkits import discover

    try:
        found = discover(system).toolkits
    except CudaswitchError:
        return None
    same = [t for t in found if t.version == version]
    system_first = sorted(same, key=lambda t: ("install-toolkit" in t.sources, t.root))
    return system_first[0].root if system_first else None


Progress = Callable[[int], "contextlib.AbstractContextManager[Optional[Callable[[int], None]]]"]


def install(version: str, system: System, into: Optional[str] = None, runner: PipRunner = _pip,
            show_progress: bool = False, again: bool = False, progress: Optional[Progress] = None,
            tell: Callable[[str, str], None] = lambda version, dest: None) -> InstallResult:
    """Download, check and assemble CUDA `version` into `into` (default: the store). Unless `again`, a toolkit of
    the same version that discovery already finds is answered with its folder (InstallResult.already), and nothing
    is downloaded. `progress(total)` gives the unpack's bar; `tell` hears the destination before the download."""
    if system.windows:
        raise UsageError(N_("install-toolkit assembles Linux toolkits only so far; on Windows use NVIDIA's installer"))
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64"):
        raise UsageError(M("install-toolkit knows NVIDIA's x86_64 Linux wheels only, not {machine}; install CUDA "
                           "with NVIDIA's installer or conda", machine=platform.machine() or "?"))
    major, minor = parse_request(version)
    wheels = requirements(major, minor)
    nvcc = _nvcc_of(wheels)
    full = nvcc.version if nvcc else f"{major}.{minor}"
    dest = _destination(system, into, major, minor)
    if not again:
        have = already_installed(system, full)
        if have:
            return InstallResult(full, have, already=have)
    _check_destination(dest, M("install CUDA {version} into {dest}", version=f"{major}.{minor}", dest=dest))
    if into:  # refused now rather than after the download: the result would be installed but not listed
        from cudaswitch.discovery.toolkit_store import _registry

        trust.refuse_if_foreign([_registry(system)], M("record {dest} in the list of installed toolkits", dest=dest),
                                M("set CUDASWITCH_TOOLKITS_DIR to a folder of your own"))
    tell(full, str(dest))
    made: List[Path] = []
    stage: Optional[Path] = None
    registered = False
    try:  # a disk that fills, a folder the user cannot write, a file where a folder should be: one line
        made = _make_parents(dest.parent)
        # created now, so checked again: another user may have made one of these folders first
        _check_destination(dest, M("install CUDA {version} into {dest}", version=f"{major}.{minor}", dest=dest))
        # Staging beside the destination (same file system, so the final rename is atomic), a hidden 0700 folder
        # only this user can enter, in a folder nobody else can write (checked above): nobody can swap its
        # contents. Discovery does not announce hidden folders, so an interrupted install is invisible to `list`.
        stage = Path(trust.private_dir(f".{dest.name}.partial-", dir=dest.parent))
        t0 = time.perf_counter()
        files = download(wheels, stage / "wheels", runner, show_progress)
        t1 = time.perf_counter()
        known = {w.filename: w for w in wheels}
        if progress is None:
            result = assemble(files, stage / "root", f"{major}.{minor}", known)
        else:
            with progress(payload_bytes(files)) as bar:
                result = assemble(files, stage / "root", f"{major}.{minor}", known, bar)
        t2 = time.perf_counter()
        if (numbers(result.version) or ())[:2] != (major, minor):
            raise CudaswitchError(M("pip delivered nvcc {version} for CUDA {major}.{minor}; nothing installed",
                                    version=result.version, major=major, minor=minor))
        built = stage / "root"
        if os.path.islink(built) or not os.path.isdir(built):
            raise CudaswitchError(M("{path} is no longer the folder cudaswitch built; nothing was installed",
                                    path=built))
        faults.reach("toolkit-assembled", 1)
        if into:  # write-ahead: a listed folder that does not exist (yet) is not a toolkit discovery shows
            from cudaswitch.discovery.toolkit_store import register

            registered = True  # first: an interrupt inside register still has it taken back
            register(system, str(dest))
            faults.reach("toolkit-registered", 1)
        with interrupts.held() as held:
            held.check()
            trust.move(built, dest)
            faults.reach("toolkit-moved", 1)
            if _clean_up(stage, []):
                held.pending = True
    except OSError as exc:
        _clean_up(stage, made)
        _unregister(system, dest, registered)
        raise CudaswitchError(M("cannot install CUDA {major}.{minor} into {dest}: {why}; nothing was installed",
                                major=major, minor=minor, dest=dest, why=exc.strerror or exc)) from None
    except BaseException:
        _clean_up(stage, made)
        _unregister(system, dest, registered)
        raise
    if held.pending:
        raise FinishedInterrupted(M("interrupted after CUDA {version} was in place: it is installed in {dest}; "
                                    "'cudaswitch uninstall-toolkit {dest}' removes it", version=full, dest=dest))
    result.root = str(dest)
    result.download_seconds, result.assemble_seconds = t1 - t0, t2 - t1
    result.download_bytes = sum(w["size"] for w in result.wheels)
    result.disk_bytes = _tree_bytes(dest)
    return result


def _manifest(root: Path) -> Optional[dict]:
    """The record install-toolkit left in a toolkit it made, or None when there is none or it is not one
    (malformed, a link, a FIFO): such a folder is simply not one cudaswitch made, and blocks no other."""

    try:
        fd = trust.open_dir(root, [])
    except (OSError, CudaswitchError):
        return None
    try:
        data = trust.read_regular(fd, MANIFEST, limit=16 << 20)
    finally:
        os.close(fd)
    try:
        rec = trust.parse_json(data, root / MANIFEST) if data is not None else None
    except (UnicodeDecodeError, ValueError):
        return None
    if (not isinstance(rec, dict) or not isinstance(rec.get("version"), str) or not isinstance(rec.get("files"), list)
            or not all(isinstance(f, str) for f in rec["files"])):
        return None
    return rec


def find_installed(selector: str, system: System) -> Path:
    """The toolkit install-toolkit made that SELECTOR (a version or a folder) names."""
    from cudaswitch.core.versions import parse_selector
    from cudaswitch.discovery.toolkit_store import _registered

    store = store_dir(system)
    try:
        names = sorted(os.listdir(store)) if store.is_dir() else []
    except OSError:
        names = []
    cands = [store / d for d in names if not d.startswith(".")] + [Path(r) for r in _registered(system)]
    ours = [(c, m) for c, m in ((c, _manifest(c)) for c in cands) if m is not None]
    sel = parse_selector(selector)
    if sel.path is not None:
        try:
            path = Path(os.path.abspath(os.path.expanduser(sel.path)))
        except FileNotFoundError:
            raise UsageError(M("{path} is relative, and the working folder no longer exists; give an absolute path",
                               path=selector)) from None
        if not os.path.lexists(path):
            raise UsageError(M("no such folder: {path}", path=path))
        if os.path.islink(path):
            raise UsageError(M("{path} is a symlink; cudaswitch removes only the folder install-toolkit made, never "
                               "through a link: remove the link itself with rm, or name the folder it points to",
                               path=path))
        if not os.path.isdir(path):
            raise UsageError(M("{path} is a file, not a toolkit folder", path=path))
        if _manifest(path) is None:
            raise UsageError(M("{path} was not installed by 'cudaswitch install-toolkit' (no {manifest}); "
                               "cudaswitch removes only toolkits it made", path=path, manifest=MANIFEST))
        return path
    hits = [(c, m) for c, m in ours if (numbers(m["version"]) or ())[:len(sel.parts)] == tuple(sel.parts)]
    if len(hits) != 1:
        have = Listed(f"{m['version']} ({c})" for c, m in ours) or M("none")
        raise UsageError(M("no toolkit installed by cudaswitch matches '{selector}'; installed by cudaswitch: {have}",
                           selector=selector, have=have) if not hits else
                         M("more than one toolkit installed by cudaswitch matches '{selector}'; installed by "
                           "cudaswitch: {have}; give the folder instead", selector=selector, have=have))
    return hits[0][0]


def users_of(root: Path, system: System) -> List[str]:
    """The conda environments whose cudaswitch state names this toolkit (their hooks would point at nothing)."""
    from cudaswitch.discovery.condaenvs import known_prefixes
    from cudaswitch.discovery.environment import _make, read_state

    real = os.path.realpath(root)
    out = []
    try:
        prefixes = known_prefixes(system)
    except (CudaswitchError, OSError):
        return []
    for prefix in prefixes:
        try:
            state = read_state(_make(prefix, system))
        except (CudaswitchError, OSError):
            continue
        if state is not None and state.root and os.path.realpath(state.root) == real:
            out.append(prefix)
    return out


def uninstall(selector: str, system: System, force: bool = False) -> Tuple[str, List[str]]:
    """Remove a toolkit install-toolkit made, exactly what it made. Refused while conda environments use it
    (unless `force`), when another user could have written it, or when it holds files cudaswitch did not put
    there. Returns (the folder removed, the environments still switched to it: with `force`, those it broke)."""

    root = find_installed(selector, system)
    trust.refuse_if_foreign([root], M("remove {root}", root=root),
                            M("run it as that user ({hint} cudaswitch uninstall-toolkit ...)", hint=trust.owner_hint(root)))
    made = set(_manifest(root)["files"])
    foreign, others = [], []
    for dirpath, dirs, names in os.walk(root):
        for n in names + dirs:
            full = os.path.join(dirpath, n)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if (n in names or os.path.islink(full)) and rel not in made:
                foreign.append(rel)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if trust.stat_problem(st) and not os.path.islink(full):
                others.append(rel)
    if foreign:
        raise CudaswitchError(M("{root} holds files cudaswitch did not put there ({files}); move them out first, "
                                "nothing was removed", root=root,
                                files=Listed(sorted(foreign)[:3] + (["..."] if len(foreign) > 3 else []))))
    if others:
        raise CudaswitchError(M("refused to remove {root}: {file} could have been written by another user; "
                                "nothing was removed", root=root, file=sorted(others)[0]))
    users = users_of(root, system)
    if users and not force:
        raise CudaswitchError(M("{root} is the CUDA of {count} conda environment(s): {envs}; switch them first "
                                "(cudaswitch use VERSION -p PREFIX, or cudaswitch off -p PREFIX), or give --force "
                                "to remove it anyway; nothing was removed", root=root, count=len(users),
                                envs=Listed(users)))
    # Rename first: the toolkit disappears from `list` at once, even if the deletion is interrupted.
    trash = root.with_name(f".{root.name}.removing-{os.getpid()}")
    try:
        trust.move(root, trash)
    except OSError as exc:
        raise CudaswitchError(M("cannot remove {root}: {why}; nothing was removed", root=root,
                                why=exc.strerror or exc)) from None
    try:
        trust.remove_tree(trash)
    except OSError as exc:
        raise CudaswitchError(M("{root} is gone from its place, but deleting its files stopped: {why}; remove {trash} "
                                "with rm -rf", root=root, why=exc.strerror or exc, trash=trash)) from None
    from cudaswitch.discovery.toolkit_store import _registered, register

    if str(root) in _registered(system):
        register(system, str(root), add=False)
    return str(root), users
