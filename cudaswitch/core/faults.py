"""The test seam of every writing command: named points where the test suite makes this process die, fail or get
Ctrl-C.

The points: install-cudnn's `stage` (before each staged file), `staged`, `commit` (before each pair of renames),
`commit-mid` (between a backup rename and the rename into place), `commit-moved` (after a file is in place),
`committed`, `marked`; uninstall-cudnn's `uninstall` (before each restore); install-toolkit's `toolkit-assembled`,
`toolkit-registered`, `toolkit-moved`; use's `hook-written`, `python-written`, `state-written`; off's
`state-cleared`, `hook-removed`. `HOOK` is None
in production and nothing a user sets (no environment variable, no file) turns it on: only code that imports this
module and assigns it does (tests/seams.py, which reads CUDASWITCH_FAULT in the test suite's processes).
"""

from __future__ import annotations

from typing import Callable, Optional

Fault = Callable[[str, int], None]
HOOK: Optional[Fault] = None


def reach(point: str, n: int) -> None:
    """The `n`th arrival at `point`."""
    if HOOK is not None:
        HOOK(point, n)
