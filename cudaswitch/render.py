"""Plain-text tables and JSON for the CLI. Core modules return records; only this module formats them."""

from __future__ import annotations

import json
from typing import Any, List, Sequence

from cudaswitch.i18n import _, tr


def table(headers: Sequence[str], rows: List[Sequence[Any]]) -> str:
    cells = [[("" if c is None else str(c)) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))
    def line(values):
        return "  ".join(v.ljust(widths[i]) for i, v in enumerate(values)).rstrip()
    return "\n".join([line(headers)] + [line(r) for r in cells])


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


def error_line(message: str) -> str:
    """The one line every failure ends in; the message is translated when it is a marked one."""
    return _("cudaswitch: error: {message}").format(message=tr(message))


def warning_line(message: str) -> str:
    return _("warning: {message}").format(message=tr(message))
