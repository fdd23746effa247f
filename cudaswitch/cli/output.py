"""Plain-text tables and JSON for the CLI. Core modules return records; only this module formats them."""

from __future__ import annotations

import json
import re
from typing import Any, List, Sequence

from cudaswitch.core.i18n import _, tr

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# a byte of a name that is not UTF-8, as Python keeps it (surrogateescape); searched in C, not char by char
_ESCAPED_BYTE = re.compile(r"[\udc80-\udcff]")


def printable(text: str) -> str:
    """`text` safe to print on a terminal: control characters (an ESC starting a terminal escape sequence, a carriage
    return that overwrites the line) shown as \\x1b, and the bytes of a name that is not UTF-8 (kept by Python as
    lone surrogates, which cannot be encoded for output) shown as \\xff. Folder names come from anyone who can create
    a folder where cudaswitch looks."""
    if _ESCAPED_BYTE.search(text):
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def printable_lines(text: str) -> str:
    """`printable` for text of several lines: the line breaks stay, everything else is shown as in `printable`."""
    return "\n".join(printable(line) for line in text.split("\n"))


def _columns(text: str) -> int:
    """Terminal columns of `text`: a Chinese character takes two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def table(headers: Sequence[str], rows: List[Sequence[Any]]) -> str:
    cells = [[printable("" if c is None else str(c)) for c in row] for row in rows]
    # English tables stay as they always were (characters, not columns); translated headers are measured in columns
    wide = not all(h.isascii() for h in headers)
    size = (lambda v: len(v) if v.isascii() else _columns(v)) if wide else len
    widths = [size(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], size(c))
    def line(values):
        return "  ".join(v + " " * (widths[i] - size(v)) for i, v in enumerate(values)).rstrip()
    return "\n".join([line(headers)] + [line(r) for r in cells])


def to_json(data: Any) -> str:
    """JSON text; control characters come out escaped (\\u001b), the bytes of a name that is not UTF-8 as \\\\xff."""
    return json.dumps(_no_surrogates(data), indent=2, ensure_ascii=False)


def _no_surrogates(data: Any) -> Any:
    if isinstance(data, str):
        if _ESCAPED_BYTE.search(data):
            return data.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        return data
    if isinstance(data, dict):
        return {_no_surrogates(k): _no_surrogates(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_no_surrogates(v) for v in data]
    return data


def error_line(message: str) -> str:
    """The one line every failure ends in; the message is translated when it is a marked one."""
    return _("cudaswitch: error: {message}").format(message=tr(message))


def warning_line(message: str) -> str:
    return _("warning: {message}").format(message=tr(message))
