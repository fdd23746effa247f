"""Which activation script of an environment sets CUDA_HOME/CUDA_PATH after cudaswitch's hook, and so wins.

conda runs the `etc/conda/activate.d` scripts of the shell's extension sorted by path, by code point
(conda/activate.py `_get_activate_scripts`), after it exported the environment's `conda env config vars`; so a
user's `env_vars.sh` (`e` after `c`) or `~local.sh` runs after `cudaswitch.sh` and its CUDA_HOME is the one the
shell keeps, while `00-cuda.sh` or a config var is overridden by the switch. conda-forge's own CUDA scripts are
condaforge.py's to explain. The files are read by discovery/activation_scripts.py's one reader of activate.d.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import List

OURS = "cudaswitch"

@dataclass
class LaterSetter:
    script: str  # the file's path
    variables: List[str]  # CUDA_HOME, CUDA_PATH, ...


def later_setters(prefix: str, ext: str, skip: List[str] = ()) -> List[LaterSetter]:
    """The scripts of `ext` that run after cudaswitch's and set a CUDA variable, in the order conda runs them;
    `skip`: files to leave out (relative to the prefix, as conda-meta records name them)."""
    from cudaswitch.discovery.activation_scripts import scripts

    skipped = {os.path.basename(s) for s in skip}
    ours = f"{OURS}.{ext}"
    out = []
    for script in scripts(prefix, "." + ext):
        if script.name <= ours or script.name in skipped:
            continue
        hits = cuda_variables(script.text)
        if hits:
            out.append(LaterSetter(script.path, hits))
    return out


def cuda_variables(text: str) -> List[str]:
    """The CUDA location variables a script's text sets, in any shell's syntax (the records' `assigns`), sorted."""
    from cudaswitch.discovery.activation_scripts import assignments
    from cudaswitch.discovery.kernelspecs import CUDA_VARS

    return sorted({var for _, var, _ in assignments(text, CUDA_VARS)})
