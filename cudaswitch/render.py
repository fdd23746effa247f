"""Plain-text tables and JSON for the CLI. Core modules return records; only this module formats them."""

from __future__ import annotations

import json
from typing import Any, List, Sequence


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
