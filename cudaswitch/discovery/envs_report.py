"""`cudaswitch envs`: every conda environment with its CUDA and torch facts, from files only.

No process is started per environment and torch is never imported: the toolkit comes from cudaswitch's state
file, torch from its dist-info / conda-meta record and `torch/version.py`, cuDNN from the nvidia-cudnn wheel or the
conda `cudnn` record. The environment list is conda's own (cudaswitch/discovery/condaenvs.py).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, List, Optional

from cudaswitch.core.system import System
from cudaswitch.core.trust import read_text

ENVS_SCHEMA_KEYS = ("name", "prefix", "base", "active", "cuda", "torch", "nvidia_wheels", "smoke", "problems")
_RX_VERSION_PY = re.compile(r"^(__version__|cuda)\s*(?::[^=]*)?=\s*['\"]([^'\"]*)['\"]", re.M)


def torch_build(prefix: str) -> Optional[Dict]:
    """torch's version and the CUDA / cuDNN it was built with, from its files (torchenv.torch_installs plus
    `torch/version.py` and the cuDNN it ships with). None when torch is not installed."""
    from cudaswitch.discovery.torchenv import torch_installs
    from cudaswitch.discovery.environment import site_packages

    installs = torch_installs(prefix)
    if not installs.get("version"):
        return None
    cuda, cudnn, source = installs.get("cuda"), None, "pip" if installs.get("dist_infos") else "conda"
    for sp in site_packages(prefix):
        try:
            text = read_text(Path(sp, "torch", "version.py"), errors="replace")
        except OSError:
            text = ""
        found = dict(_RX_VERSION_PY.findall(text))
        if "cuda" in found:  # what torch.version.cuda says; None (CPU build) leaves no quoted value
            cuda = found["cuda"]
        elif text and re.search(r"^cuda\s*(?::[^=]*)?=\s*None", text, re.M):
            cuda = None
        for d in sorted(Path(sp).glob("nvidia_cudnn_cu*-*.dist-info")):
            cudnn = d.name[: -len(".dist-info")].split("-", 1)[1]
    if cudnn is None:
        meta = Path(prefix, "conda-meta")
        try:
            names = os.listdir(meta)
        except OSError:
            names = []
        for n in sorted(names):
            m = re.fullmatch(r"cudnn-(\d[\w.]*)-[^-]+\.json", n)
            if m:
                cudnn = m.group(1)
    # the version torch itself reports (torch/version.py: '2.14.1+cu130'), as doctor shows it; a PyPI dist-info
    # leaves the local tag out
    return {"version": installs.get("build_version") or installs["version"], "cuda": cuda, "cudnn": cudnn,
            "source": source, "python": installs.get("python")}


def _nvidia_wheels(prefix: str) -> List[str]:
    """The same rule as hooks.pip_cuda_wheels (what `use` bases its LD_LIBRARY_PATH choice on), without importing
    the hook machinery for every `envs` run."""
    from cudaswitch.discovery.environment import site_packages

    return sorted({p.name.split("-")[0].replace("_", "-") for sp in site_packages(prefix)
                   for p in Path(sp).glob("nvidia_*.dist-info")})


def _toolkit(state) -> Optional[Dict]:
    if state is None:
        return None
    root = state.root
    exists = os.path.isdir(root) and (os.path.isdir(os.path.join(root, "bin")) or
                                      os.path.isdir(os.path.join(root, "Library", "bin")))
    return {"version": state.version, "root": root, "selector": state.selector, "chosen": state.time,
            "exists": exists}


def env_record(prefix: str, name: Optional[str], system: System, base: bool = False) -> Dict:
    from cudaswitch.discovery.environment import _make, read_state
    from cudaswitch.core.errors import CudaswitchError

    problems: List[str] = []
    env = _make(prefix, system)
    try:
        state = read_state(env)
    except CudaswitchError as exc:
        state, problems = None, [str(exc)]
    smoke = None
    if state is not None and getattr(state, "smoke_status", None):
        smoke = {"status": state.smoke_status, "code": getattr(state, "smoke_code", None),
                 "time": getattr(state, "smoke_time", None)}
    current = system.environ.get("CONDA_PREFIX")
    active = bool(current) and os.path.normcase(os.path.abspath(current)) == os.path.normcase(os.path.abspath(prefix))
    return {"name": name, "prefix": prefix, "base": base, "active": active,
            "cuda": _toolkit(state), "torch": torch_build(prefix), "nvidia_wheels": _nvidia_wheels(prefix),
            "smoke": smoke, "problems": problems}


def envs_report(system: System) -> Dict:
    """{"conda": where conda looks, "envs": one record per environment conda lists}."""
    from cudaswitch.discovery.condaenvs import env_name, known_prefixes, layout

    lay = layout(system)
    records = []
    for prefix in known_prefixes(system, lay if lay.source == "files" else None):
        name = env_name(prefix, lay, system)
        records.append(env_record(prefix, name, system, base=name == "base"))
    return {"conda": lay.to_json(), "envs": records}


def table_rows(records: List[Dict]) -> List[List[str]]:
    from cudaswitch.core.i18n import _  # the rows are printed as they are made

    rows = []
    for r in records:
        c = r["cuda"]
        cuda = "-" if c is None else c["version"] + ("" if c["exists"] else _(" (missing!)"))
        t = r["torch"]
        torch = "-" if t is None else (f"{t['version']} (CUDA {t['cuda'] or 'none'}"
                                       + (f", cuDNN {t['cudnn']}" if t.get("cudnn") else "") + ")")
        wheels = r["nvidia_wheels"]
        pip = "-" if not wheels else f"{len(wheels)} nvidia-*"
        s = r["smoke"]
        smoke = "-" if s is None else " ".join(x for x in (s["status"], s.get("code"), (s.get("time") or "")[:10]) if x)
        rows.append(["*" if r["active"] else "", r["name"] or "", r["prefix"], cuda, torch, pip, smoke])
    return rows
