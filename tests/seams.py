"""Test-only seams of cudaswitch, switched on by the test suite and never by anything a user can set.

`enable()` makes the CLI honour CUDASWITCH_FAULT (fault injection in core/faults.py: "kill@commit:3" kills the
process with SIGKILL the 3rd time it reaches point `commit`, "enospc@stage:2" raises ENOSPC there, "eacces@..."
EACCES, "sigint@unpack:3" sends the process a Ctrl-C the first time it gets there (once, whichever thread gets
there), "interrupt@commit-moved:2" sends it SIGINT each time the count matches; the name `step` counts every point:
"interrupt@step:7" is the 7th point reached, whatever its name), corrupts one line of a rendered hook ("corrupt@hook:sh", `corrupt_hook`), and silences the note every command prints when CUDASWITCH_FS_ROOT relocates "/" (the suite relocates
nearly every run and counts stderr lines). conftest.py enables it in the pytest process; `run_cli` and the tests'
subprocesses start the CLI through `python tests/seams.py ARGS` (same as `python -m cudaswitch ARGS`, with the
seams on).

It also points discovery's look into the machine's own places (/usr/local, /opt, the Debian toolkit folder, the
running Python's site-packages) at `SUITE_MACHINE_ROOT`, by default a folder that does not exist: a test sees
the toolkits of this machine only when it is about them and sets `SUITE_MACHINE_ROOT=/` (conftest's
`this_machine` mark). Every other input of the machine reaches cudaswitch through the environment, which conftest
scrubs.
"""

from __future__ import annotations

import errno
import os
import signal
import sys


_STEPS = [0]
# points reached once per file of an archive or wheel (thousands in a toolkit): named faults reach them, but they
# are not steps of a command, or interrupt@step:N would restart a whole install once per file
PER_FILE = {"unpack"}


def env_fault(point: str, n: int) -> None:
    spec = os.environ.get("CUDASWITCH_FAULT")
    if not spec:
        return
    step = point not in PER_FILE
    _STEPS[0] += step
    for item in spec.split(","):
        action, _, where = item.partition("@")
        name, _, count = where.partition(":")
        if name == "step":
            if not step:
                continue
            name, n_here = point, _STEPS[0]
        else:
            n_here = n
        if name != point or (count and int(count) != n_here):
            continue
        if action == "kill":
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        elif action == "interrupt":
            # a real signal, not a raised KeyboardInterrupt: where cudaswitch holds Ctrl-C, it must be held here too
            _ctrl_c()
        elif action == "enospc":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        elif action == "eacces":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        elif action == "sigint" and item not in _SIGNALLED:  # Ctrl-C, once: another thread may reach it too
            _SIGNALLED.add(item)
            _ctrl_c()


_SIGNALLED: set = set()


def _ctrl_c() -> None:
    """SIGINT to the main thread, as a terminal's Ctrl-C reaches a process (os.kill from a worker thread would land
    in that thread, and the main thread, asleep waiting for the workers, would see it only once they had finished:
    an interrupt of the unpack that came after the unpack)."""
    import threading

    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)


def corrupt_hook(shell_key: str, direction: str, text: str, entry: str) -> str:
    """CUDASWITCH_FAULT=corrupt@hook:KEY (or hook:KEY-deactivate): in that shell's rendered hook, the first line
    that holds the toolkit's first PATH entry gets a wrong entry instead (one broken line, as a typo would be)."""
    for item in (os.environ.get("CUDASWITCH_FAULT") or "").split(","):
        action, _, where = item.partition("@")
        if action != "corrupt" or where not in (f"hook:{shell_key}-{direction}",) + (
                (f"hook:{shell_key}",) if direction == "activate" else ()):
            continue
        lines = text.split("\n")
        code = [i for i, ln in enumerate(lines) if entry in ln and not ln.lstrip("@ ").startswith(("#", "REM"))]
        # the line that writes PATH with the rest of PATH after our entry, where the hook spells the entry out there
        # (csh, cmd), else the one line that holds it (sh, fish, PowerShell keep it in a variable)
        writes = [i for i in code if "PATH" in lines[i]] or code
        i = max(writes, key=lambda i: len(lines[i]) - lines[i].rindex(entry)) if writes else None
        if i is not None:
            lines[i] = lines[i].replace(entry, entry + "-corrupted")
            return "\n".join(lines)
    return text


NO_MACHINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "no-machine")  # never created


def machine_root() -> str:
    return os.environ.get("SUITE_MACHINE_ROOT") or NO_MACHINE


def enable() -> None:
    from cudaswitch.core import faults
    from cudaswitch.core import system
    from cudaswitch.switching import hookfiles

    faults.HOOK = env_fault
    hookfiles.CORRUPT = corrupt_hook
    system.QUIET_RELOCATION = True
    system.MACHINE_ROOT = machine_root
    # the audit hook judges every command the suite runs, in process and in a child, as root or not
    from cudaswitch.core import audit

    audit.force()


ENTRY = os.path.abspath(__file__)

if __name__ == "__main__":
    sys.path[0] = os.path.dirname(os.path.dirname(ENTRY))  # the checkout, not tests/, first
    enable()
    from cudaswitch.launch import main

    main(prog_name="cudaswitch")
