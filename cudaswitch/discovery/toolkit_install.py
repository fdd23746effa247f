"""`cudaswitch install-toolkit X.Y` / `uninstall-toolkit`: a CUDA toolkit from NVIDIA's own PyPI wheels, no admin.

pip downloads the wheels (the user's pip configuration, index and proxy apply; pip checks the index's sha256), every
file is checked against its wheel's RECORD hash while it is unpacked into a staging folder next to the destination,
and only a complete toolkit is renamed into place, so `list` never sees half an install. The result has NVIDIA's
layout (bin/nvcc, include/, lib64/, nvvm/, targets/<arch>/{include,lib} as nvcc.profile expects) and a version.json,
so discovery, CMake's FindCUDAToolkit and torch's cpp_extension treat it like an installer-made toolkit.

Only CUDA 13.x can be assembled: the 11.x/12.x compiler wheels (nvidia-cuda-nvcc-cu11/-cu12) carry ptxas and libnvvm
but no nvcc driver, cudafe++ or crt headers (docs/design/torch-aware.md lists the wheels checked).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

from cudaswitch.core.errors import CudaswitchError, UsageError
from cudaswitch.core.fsutil import current_umask
from cudaswitch.core.i18n import M, N_
from cudaswitch.core.system import System
from cudaswitch.core.versions import numbers
from cudaswitch.discovery.toolkit_store import _registered, _write_registry, store_dir

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


@dataclass
class InstallResult:
    version: str
    root: str
    wheels: List[Dict] = field(default_factory=list)  # name, version, file, sha256, size
    download_seconds: float = 0.0
    assemble_seconds: float = 0.0
    download_bytes: int = 0
    disk_bytes: int = 0

    def to_json(self) -> dict:
        return asdict(self)


def parse_request(text: str) -> tuple:
    m = re.fullmatch(r"\s*(?:cuda-?|v)?(\d+)\.(\d+)\s*", text or "", re.I)
    if not m:
        raise UsageError(M("'{text}' is not a CUDA version: give major.minor, e.g. 'cudaswitch install-toolkit 13.0'",
                           text=text))
    return int(m.group(1)), int(m.group(2))


def requirements(major: int, minor: int) -> List[str]:
    if major in NO_NVCC_WHEELS:
        raise UsageError(M("CUDA {major}.{minor} cannot be assembled from NVIDIA's wheels: {why}; "
                           "install it with NVIDIA's runfile or conda (conda install -c nvidia cuda-toolkit="
                           "{major}.{minor}), or use a 13.x toolkit ('cudaswitch install-toolkit 13.0')",
                           major=major, minor=minor, why=NO_NVCC_WHEELS[major]))
    if major < 13:
        raise UsageError(M("NVIDIA publishes no CUDA {major}.x compiler wheels; install-toolkit can assemble CUDA "
                           "13.x (e.g. 'cudaswitch install-toolkit 13.0')", major=major))
    return [f"{name}=={major}.{minor}.*" for name in COMPONENTS_13]


def _pip(args: Sequence[str], show_progress: bool) -> "subprocess.CompletedProcess[str]":
    # stdout (pip's progress bars) goes to the user's terminal; stderr is kept to explain a failure.
    return subprocess.run([sys.executable, "-m", "pip", *args],
                          stdout=sys.stderr if show_progress else subprocess.PIPE, stderr=subprocess.PIPE, text=True)


_FROM_VERSIONS = re.compile(r"from versions:\s*([^)]*)\)")


def download(reqs: List[str], dest: Path, runner: PipRunner = _pip, show_progress: bool = False) -> List[Path]:
    args = ["download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "-d", str(dest), *reqs]
    r = runner(args, show_progress)
    if r.returncode != 0:
        err = r.stderr or ""
        m = _FROM_VERSIONS.search(err)
        if m and "No matching distribution" in err:
            found = [re.match(r"(\d+)\.(\d+)", v.strip()) for v in m.group(1).split(",")]
            # nvidia-cuda-nvcc also has a 0.0.1 placeholder release; only real CUDA versions count
            minors = [f"{a}.{b}" for a, b in sorted({(int(x.group(1)), int(x.group(2))) for x in found if x})
                      if a >= 11]
            want = reqs[0].split("==")[1].rstrip(".*")
            raise UsageError(M("NVIDIA publishes no wheels for CUDA {want} ({package}); available: {available}",
                               want=want, package=reqs[0].split("==")[0], available=", ".join(minors) or M("none")))
        last = [ln for ln in err.strip().splitlines() if ln.strip()][-1:] or ["no output"]
        raise CudaswitchError(M("pip download failed (exit {code}): {last}", code=r.returncode, last=last[0].strip()))
    wheels = sorted(dest.glob("*.whl"))
    if len(wheels) != len(reqs):
        raise CudaswitchError(M("pip download produced {wheels} wheels for {reqs} requirements in {dest}",
                                wheels=len(wheels), reqs=len(reqs), dest=dest))
    return wheels


def _record_hashes(zf: zipfile.ZipFile) -> Dict[str, str]:
    name = next((n for n in zf.namelist() if n.endswith(".dist-info/RECORD")), None)
    if name is None:
        raise CudaswitchError(M("{wheel}: no RECORD file; not a valid wheel", wheel=zf.filename))
    out = {}
    for row in csv.reader(io.StringIO(zf.read(name).decode("utf-8"))):
        if len(row) >= 2 and row[1].startswith("sha256="):
            out[row[0]] = row[1][len("sha256="):]
    return out


def _payload_prefix(name: str) -> Optional[str]:
    """'nvidia/cu13/bin/nvcc' -> 'bin/nvcc'; 'nvidia/cuda_nvcc/bin/ptxas' -> 'bin/ptxas'; None for metadata."""
    parts = name.split("/")
    if len(parts) < 3 or parts[0] != "nvidia" or parts[2] in ("", ".metadata") or parts[-1] == "__init__.py":
        return None
    return "/".join(parts[2:])


def _payload_names(wheel: Path) -> List[str]:
    with zipfile.ZipFile(wheel) as zf:
        return [rel for rel in (_payload_prefix(i.filename) for i in zf.infolist() if not i.is_dir()) if rel]


def unpack(wheel: Path, root: Path, files: List[str], exec_mode: int) -> Dict:
    """Extract the toolkit payload of one wheel into root, each file checked against the wheel's RECORD; executables
    get `exec_mode`."""
    h = hashlib.sha256()
    with open(wheel, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    with zipfile.ZipFile(wheel) as zf:
        record = _record_hashes(zf)
        for info in zf.infolist():
            rel = _payload_prefix(info.filename)
            if rel is None or info.is_dir():
                continue
            want = record.get(info.filename)
            if want is None:
                raise CudaswitchError(M("{wheel}: {file} is not listed in the wheel's RECORD", wheel=wheel.name,
                                        file=info.filename))
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            digest = hashlib.sha256()
            with zf.open(info) as src, open(target, "wb") as out:
                for chunk in iter(lambda: src.read(1 << 20), b""):
                    digest.update(chunk)
                    out.write(chunk)
            got = base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
            if got != want:
                raise CudaswitchError(M("{wheel}: {file} does not match its RECORD hash (damaged "
                                        "download); nothing was installed", wheel=wheel.name, file=info.filename))
            if (info.external_attr >> 16) & 0o111:
                os.chmod(target, exec_mode)
            files.append(rel)
    m = re.match(r"([A-Za-z0-9_]+?)-(\d[^-]*)-", wheel.name)
    return {"name": m.group(1).replace("_", "-") if m else wheel.name, "version": m.group(2) if m else None,
            "file": wheel.name, "sha256": h.hexdigest(), "size": wheel.stat().st_size}


def _finish_layout(root: Path, files: List[str]) -> None:
    """What NVIDIA's installer has and the wheels lack: lib64, targets/<arch>, unversioned .so links."""
    links = []
    lib = root / "lib"
    if lib.is_dir():
        for so in sorted(lib.glob("lib*.so.*")):
            plain = lib / (so.name.split(".so.")[0] + ".so")
            if not plain.exists():
                os.symlink(so.name, plain)
                links.append(f"lib/{plain.name}")
        os.symlink("lib", root / "lib64")
        links.append("lib64")
    target = root / "targets" / "x86_64-linux"
    target.mkdir(parents=True)
    for sub in ("include", "lib"):
        if (root / sub).is_dir():
            os.symlink(f"../../{sub}", target / sub)
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


def assemble(wheels: List[Path], root: Path, requested: str) -> InstallResult:
    """Build the toolkit from downloaded wheels into `root` (a fresh staging folder)."""
    files: List[str] = []
    # executables: runnable by everyone the umask allows (read once, before the threads start)
    exec_mode = 0o777 & ~current_umask()
    # The wheels unpack side by side: inflating and hashing release the GIL, so on two cores the unpack takes about
    # 40% less time (benchmarks/bench_toolkit_install.py). Should two wheels ever hold the same file, they unpack one
    # after the other as before, so the later one still wins and no file is written by two threads at once.
    names = [n for w in wheels for n in _payload_names(w)]
    workers = min(len(wheels), os.cpu_count() or 1, 4) if len(set(names)) == len(names) else 1
    if workers > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:  # leaving the block waits for every wheel, failed or not
            infos = list(pool.map(lambda w: unpack(w, root, files, exec_mode), wheels))
    else:
        infos = [unpack(w, root, files, exec_mode) for w in wheels]
    nvcc = next((i for i in infos if i["name"].startswith("nvidia-cuda-nvcc")), None)
    if not (root / "bin" / "nvcc").is_file() or nvcc is None:
        raise UsageError(M("the wheels for CUDA {requested} contain no nvcc ({files}); nothing was installed",
                           requested=requested, files=", ".join(i["file"] for i in infos)))
    _finish_layout(root, files)
    comp = {i["name"].replace("nvidia-", "").replace("-", "_").replace("cuda_runtime", "cuda_cudart"):
            {"name": i["name"], "version": i["version"]} for i in infos}
    version_json = {"cuda": {"name": "CUDA SDK", "version": nvcc["version"]}, **comp,
                    "cudaswitch": {"assembled_from": [i["file"] for i in infos]}}
    (root / "version.json").write_text(json.dumps(version_json, indent=3) + "\n", encoding="utf-8")
    files += ["version.json", MANIFEST]
    (root / MANIFEST).write_text(json.dumps({"version": nvcc["version"], "wheels": infos, "files": sorted(files)},
                                            indent=1) + "\n", encoding="utf-8")
    return InstallResult(nvcc["version"], str(root), infos)


def install(version: str, system: System, into: Optional[str] = None, runner: PipRunner = _pip,
            show_progress: bool = False) -> InstallResult:
    if system.windows:
        raise UsageError(N_("install-toolkit assembles Linux toolkits only so far; on Windows use NVIDIA's installer"))
    major, minor = parse_request(version)
    reqs = requirements(major, minor)
    dest = Path(os.path.abspath(os.path.expanduser(into))) if into else store_dir(system) / f"cuda-{major}.{minor}"
    if os.path.lexists(dest):
        raise UsageError(M("{dest} already exists; 'cudaswitch uninstall-toolkit {dest}' removes a toolkit it "
                           "installed, or choose another --into folder", dest=dest))
    # Staging beside the destination (same file system, so the final rename is atomic) but never inside a folder
    # discovery scans, so an interrupted install is invisible to `list`.
    stage_parent = dest.parent.parent / ".cudaswitch-staging" if not into else dest.parent
    try:  # a disk that fills, a folder the user cannot write, a file where a folder should be: one line
        stage_parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=stage_parent))
        try:
            t0 = time.perf_counter()
            wheels = download(reqs, stage / "wheels", runner, show_progress)
            t1 = time.perf_counter()
            result = assemble(wheels, stage / "root", f"{major}.{minor}")
            t2 = time.perf_counter()
            if (numbers(result.version) or ())[:2] != (major, minor):
                raise CudaswitchError(M("pip delivered nvcc {version} for CUDA {major}.{minor}; nothing installed",
                                        version=result.version, major=major, minor=minor))
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.rename(stage / "root", dest)
        finally:
            shutil.rmtree(stage, ignore_errors=True)
            try:
                stage_parent.rmdir()
            except OSError:
                pass
    except OSError as exc:
        raise CudaswitchError(M("cannot install CUDA {major}.{minor} into {dest}: {why}; nothing was installed",
                                major=major, minor=minor, dest=dest, why=exc.strerror or exc)) from None
    if into:
        _write_registry(system, [r for r in _registered(system) if r != str(dest)] + [str(dest)])
    result.root = str(dest)
    result.download_seconds, result.assemble_seconds = t1 - t0, t2 - t1
    result.download_bytes = sum(w["size"] for w in result.wheels)
    result.disk_bytes = _tree_bytes(dest)
    return result


def _manifest(root: Path) -> Optional[dict]:
    try:
        return json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def find_installed(selector: str, system: System) -> Path:
    """The toolkit install-toolkit made that SELECTOR (X.Y or a folder) names."""
    cands = [store_dir(system) / d for d in sorted(os.listdir(store_dir(system)))] if store_dir(system).is_dir() else []
    cands += [Path(r) for r in _registered(system)]
    ours = [c for c in cands if _manifest(c) is not None]
    if os.path.sep in selector or selector.startswith("."):
        path = Path(os.path.abspath(os.path.expanduser(selector)))
        if _manifest(path) is None:
            raise UsageError(M("{path} was not installed by 'cudaswitch install-toolkit' (no {manifest}); "
                               "cudaswitch removes only toolkits it made", path=path, manifest=MANIFEST))
        return path
    major, minor = parse_request(selector)
    hits = [c for c in ours if (numbers(str(_manifest(c).get("version", ""))) or ())[:2] == (major, minor)]
    if len(hits) != 1:
        have = ", ".join(f"{_manifest(c)['version']} ({c})" for c in ours) or M("none")
        raise UsageError(M("no toolkit installed by cudaswitch matches '{selector}'; installed by cudaswitch: {have}",
                           selector=selector, have=have) if not hits else
                         M("more than one toolkit installed by cudaswitch matches '{selector}'; installed by "
                           "cudaswitch: {have}; give the folder instead", selector=selector, have=have))
    return hits[0]


def uninstall(selector: str, system: System) -> str:
    root = find_installed(selector, system)
    made = set(_manifest(root)["files"])
    foreign = []
    for dirpath, dirs, names in os.walk(root):
        for n in names + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            rel = os.path.relpath(os.path.join(dirpath, n), root).replace(os.sep, "/")
            if rel not in made:
                foreign.append(rel)
    if foreign:
        raise CudaswitchError(M("{root} holds files cudaswitch did not put there ({files}); move them out first, "
                                "nothing was removed", root=root,
                                files=", ".join(sorted(foreign)[:3]) + (", ..." if len(foreign) > 3 else "")))
    # Rename first: the toolkit disappears from `list` at once, even if the deletion is interrupted.
    trash = root.with_name(f".{root.name}.removing-{os.getpid()}")
    os.rename(root, trash)
    shutil.rmtree(trash)
    if str(root) in _registered(system):
        _write_registry(system, [r for r in _registered(system) if r != str(root)])
    return str(root)
