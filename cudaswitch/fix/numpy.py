"""NUMPY_ABI: torch (or a module it imports) compiled for NumPy 1.x under NumPy 2: the newest `numpy<2` the
index of the environment's torch build offers for its Python, with the environment's own pip, nothing else
changed (--no-deps). The NumPy it replaces is kept, file by file, in the journal, so undo needs no network."""

from __future__ import annotations

from typing import List, Optional

from cudaswitch.core.i18n import M
from cudaswitch.fix.plan import Change, Step

CODES = ("NUMPY_ABI",)


def _tag(report_torch: dict) -> str:
    """The PyTorch index the torch build came from: its local version (+cpu, +cu121), else the CPU one (every
    PyTorch index carries the same NumPy wheels)."""
    version = (report_torch or {}).get("version") or ""
    local = version.partition("+")[2]
    return local if local and (local == "cpu" or local.startswith(("cu", "rocm"))) else "cpu"


def plan(mine: List, env, system, findings) -> Optional[Step]:
    from cudaswitch.discovery.torchenv import torch_installs
    from cudaswitch.core.shellquote import for_user
    from cudaswitch.fix import pip

    now = pip.installed(env.prefix, "numpy")
    if len(now) != 1:
        return None  # none, or two copies: not a change pip can make exactly
    url = pip.index_url(_tag(torch_installs(env.prefix)), system.environ)
    version = pip.resolve(env, "numpy<2", url, system)
    if version is None:
        return None
    site, folder = now[0]["site"], now[0]["folder"]
    paths = pip.record_files(site, folder)
    changes = [Change("package", "numpy", now[0]["version"], version), Change("index", url)]
    words = [env.python, "-m", "pip", "install", f"numpy=={version}", "--no-deps", "--index-url", url]
    return Step("numpy", ["NUMPY_ABI"], [f.cause for f in mine], changes,
                for_user(words, system.environ, system.windows),
                {"version": version, "url": url,
                 "packages": [{"site": site, "names": ["numpy"], "kept": [folder]}]}, paths)


def apply(step: Step, env, system) -> None:
    from cudaswitch.fix import pip

    pip.run(env, ["install", "--no-deps", "--index-url", step.data["url"], f"numpy=={step.data['version']}"],
            system)
