"""Test-only seams of cudaswitch, switched on by the test suite and never by anything a user can set.

`enable()` makes the CLI honour CUDASWITCH_FAULT (fault injection in cudnn/faults.py: "kill@commit:3" kills the
process with SIGKILL the 3rd time it reaches point `commit`, "enospc@stage:2" raises ENOSPC there, "eacces@..."
EACCES), and silences the note every command prints when CUDASWITCH_FS_ROOT relocates "/" (the suite relocates
nearly every run and counts stderr lines). conftest.py enables it in the pytest process; `run_cli` and the tests'
subprocesses start the CLI through `python tests/seams.py ARGS` (same as `python -m cudaswitch ARGS`, with the
seams on).
"""

from __future__ import annotations

import errno
import os
import signal
import sys


def env_fault(point: str, n: int) -> None:
    spec = os.environ.get("CUDASWITCH_FAULT")
    if not spec:
        return
    for item in spec.split(","):
        action, _, where = item.partition("@")
        name, _, count = where.partition(":")
        if name != point or (count and int(count) != n):
            continue
        if action == "kill":
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        elif action == "enospc":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        elif action == "eacces":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))


def enable() -> None:
    from cudaswitch.cudnn import faults
    from cudaswitch.core import system

    faults.HOOK = env_fault
    system.QUIET_RELOCATION = True


ENTRY = os.path.abspath(__file__)

if __name__ == "__main__":
    sys.path[0] = os.path.dirname(os.path.dirname(ENTRY))  # the checkout, not tests/, first
    enable()
    from cudaswitch.cli import main

    main(prog_name="cudaswitch")
