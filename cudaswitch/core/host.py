"""The OS flavour whose rules apply: "windows" or "linux".

One answer for `System` and for the language choice, which must be made before a `System` exists.
`CUDASWITCH_OS=windows` (with `CUDASWITCH_FS_ROOT`) runs the Windows rules against a Windows-layout folder on Linux:
that is how the Windows paths are tested without Windows."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import Mapping


def os_flavour(environ: Mapping[str, str]) -> str:
    return environ.get("CUDASWITCH_OS") or ("windows" if sys.platform == "win32" else "linux")
