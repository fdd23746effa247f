"""The test seam of the install transaction: named points where the test suite makes this process die or fail.

The points: `stage` (before each staged file), `staged`, `commit` (before each pair of renames), `commit-mid`
(between a backup rename and the rename into place), `committed`, `uninstall` (before each restore). `HOOK` is None
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
