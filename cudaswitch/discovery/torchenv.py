"""torch in an environment as its files say, without importing it (a broken torch must still be described):
conda-meta records, dist-info folders and their INSTALLER, torch/version.py, the CUDA and cuDNN wheels it pulled
in, and the environment's Python version. `doctor`, `smoke`, `recommend`, `use auto` and `envs` all read it here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict

from cudaswitch.data import knowledge
from cudaswitch.core.trust import read_json, read_text
from cudaswitch.core.versions import cudnn_version_in
from cudaswitch.discovery.environment import site_packages


def torch_installs(prefix: str) -> Dict:
    """torch as the files say, without importing it: conda-meta records, dist-infos (with INSTALLER), the Python
    version, and the CUDA build (local version tag or the nvidia-cuda-runtime wheel)."""
    out: Dict = {"conda": [], "dist_infos": [], "python": None, "cuda": None, "version": None}
    meta = Path(prefix) / "conda-meta"
    try:
        names = sorted(os.listdir(meta))
    except OSError:
        names = []
    for n in names:
        if not n.endswith(".json"):
            continue
        if n.startswith("python-") and n[7:8].isdigit():
            out["python"] = ".".join(n[7:].split("-")[0].split(".")[:2])
        if not n.startswith(("pytorch-", "torch-")):
            continue
        try:
            data = read_json(meta / n, {"name": (str, type(None)), "version": (str, type(None)),
                                        "build": (str, type(None))})
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        if data.get("name") in ("pytorch", "torch", "pytorch-gpu", "pytorch-cpu"):
            out["conda"].append({"name": data.get("name"), "version": data.get("version"), "build": data.get("build"),
                                 "file": str(meta / n)})
    for sp in site_packages(prefix):
        if out["python"] is None:
            m = re.search(r"python(\d+\.\d+)", sp)
            if m:
                out["python"] = m.group(1)
        for d in sorted(Path(sp).glob("torch-*.dist-info")):
            installer = None
            try:
                installer = read_text(d / "INSTALLER", limit=4096, truncate=True).strip()
            except (OSError, ValueError):
                pass
            version = d.name[len("torch-"):-len(".dist-info")]
            out["dist_infos"].append({"name": "torch", "version": version, "installer": installer, "path": str(d)})
        for d in sorted(Path(sp).glob("nvidia_cuda_runtime_cu*-*.dist-info")):
            out.setdefault("runtime_wheel", d.name)
    _build_from_files(prefix, out)
    if out["dist_infos"]:
        out["version"] = out["dist_infos"][0]["version"]
    elif out["conda"]:
        out["version"] = out["conda"][0]["version"]
    elif out.get("build_version"):
        out["version"] = out["build_version"]
    if out["version"]:
        _, local = knowledge.split_local(out["version"])
        if local and local.startswith("cu"):
            out["cuda"] = "%s.%s" % knowledge.tag_cuda(local)
        elif local == "cpu":
            out["cuda"] = None
        elif out.get("runtime_wheel"):
            m = re.search(r"-(\d+\.\d+)", out["runtime_wheel"])
            out["cuda"] = m.group(1) if m else None
        for c in out["conda"]:
            m = re.search(r"cuda(\d+)[._]?(\d+)", c.get("build") or "")
            if m and not out["cuda"]:
                out["cuda"] = f"{m.group(1)}.{m.group(2)}"
    if out.get("build_version"):
        # torch/version.py is what torch itself reports: it knows the CUDA of a PyPI default wheel
        # (dist-info says '2.14.1', no '+cu130') and that a '+cpu' build has none.
        out["cuda"] = out.get("build_cuda")
    return out


_VERSION_PY = re.compile(r"^(__version__|cuda)\s*(?::[^=]*)?=\s*(?:'([^']*)'|\"([^\"]*)\"|None)", re.M)
_CUDNN_REQ = re.compile(r"^Requires-Dist:\s*nvidia-cudnn-cu(\d+)\s*==\s*([\d.]+)", re.M | re.I)


def _build_from_files(prefix: str, out: Dict) -> None:
    """New keys, from files only: build_version / build_cuda (torch/version.py), cudnn + cudnn_source."""
    for sp in site_packages(prefix):
        vp = Path(sp) / "torch" / "version.py"
        try:
            text = read_text(vp, errors="replace")
        except OSError:
            continue
        found = {m.group(1): (m.group(2) if m.group(2) is not None else m.group(3)) for m in _VERSION_PY.finditer(text)}
        if found.get("__version__"):
            out["version_py"] = str(vp)
            out["build_version"] = found["__version__"]
            out["build_cuda"] = found.get("cuda") or None
            break
    for sp in site_packages(prefix):
        for d in sorted(Path(sp).glob("nvidia_cudnn_cu*-*.dist-info")):
            m = re.match(r"nvidia_cudnn_cu\d+-([\d.]+)\.dist-info$", d.name)
            if m:
                out["cudnn"], out["cudnn_source"] = m.group(1), str(d)
                return
    for d in out["dist_infos"]:
        try:
            text = read_text(Path(d["path"]) / "METADATA", errors="replace")
        except OSError:
            continue
        m = _CUDNN_REQ.search(text)
        if m:
            out["cudnn"], out["cudnn_source"] = m.group(2), f"{d['path']}/METADATA (Requires-Dist)"
            return
    for inc in (Path(prefix) / "include", Path(prefix) / "Library" / "include"):
        v = cudnn_version_in(inc)
        if v:
            out["cudnn"], out["cudnn_source"] = v, str(inc)
            return
