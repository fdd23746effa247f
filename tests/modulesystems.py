"""The two real module systems, driven the way a user's shell drives them: `module` is a shell function that
evals what the module command prints for bash (Lmod's `lmod bash load X`, Environment Modules' `modulecmd.tcl
bash load X`; both systems' own init scripts define it so).

Lmod comes from Debian's `lmod` package. Environment Modules comes from Debian's `environment-modules`, which
conflicts with `lmod`, so .ci/run unpacks it with `dpkg -x` into /opt/environment-modules (or point
CUDASWITCH_TEST_ENVMODULES at a modulecmd.tcl); its modulecmd.tcl runs under the system's tclsh from there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Optional

import pytest

IN_CI = bool(os.environ.get("CI"))
LMOD = Path("/usr/share/lmod/lmod/libexec/lmod")
ENVMODULES = Path(os.environ.get("CUDASWITCH_TEST_ENVMODULES") or "/opt/environment-modules/usr/lib/modulecmd.tcl")


def _missing(what: str) -> None:
    if IN_CI:
        pytest.fail(f"{what} is not installed; .ci/run must install it")
    pytest.skip(f"{what} not installed (see tests/modulesystems.py)")


def command(system: str) -> List[str]:
    """The module command of 'lmod' or 'envmodules', as argv before the shell name."""
    if system == "lmod":
        if not LMOD.is_file():
            _missing("Lmod (Debian package lmod)")
        return [str(LMOD)]
    tclsh = shutil.which("tclsh")
    if not ENVMODULES.is_file() or not tclsh:
        _missing("Environment Modules (Debian package environment-modules, unpacked)")
    return [tclsh, str(ENVMODULES)]


def run(system: str, steps: List[str], env: Dict[str, str], extra: Optional[Dict[str, str]] = None) \
        -> List[Dict[str, str]]:
    """Run `module STEP` for each step in one real bash and return the environment after each (index 0: before the
    first step). A failing `module` command fails the test with what it printed."""
    import json
    import shlex
    import sys

    argv = " ".join(shlex.quote(a) for a in command(system))
    dump = f"{shlex.quote(sys.executable)} -c 'import json,os;print(json.dumps(dict(os.environ)))'"
    lines = [f'module() {{ eval "$({argv} bash "$@")"; }}', dump]
    for step in steps:
        lines += [f"module {step} || exit 9", dump]
    full = dict(env, **(extra or {}))
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", "\n".join(lines)], env=full, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, (steps, r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    states = [json.loads(ln) for ln in r.stdout.splitlines() if ln.startswith("{")]
    assert len(states) == len(steps) + 1, (r.stdout, r.stderr)
    return states
