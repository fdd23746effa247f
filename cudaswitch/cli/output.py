"""Plain-text tables and JSON for the CLI. Core modules return records; only this module formats them."""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, Callable, Iterator, List, Optional, Sequence

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
    """Terminal columns of `text`: a Chinese character takes two, a combining mark none."""
    import unicodedata

    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
               for ch in text)


def table(headers: Sequence[str], rows: List[Sequence[Any]]) -> str:
    cells = [[printable("" if c is None else str(c)) for c in row] for row in rows]
    # measured in terminal columns in every language: a folder named in Chinese is wide in an English table too
    size = lambda v: len(v) if v.isascii() else _columns(v)  # noqa: E731
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


def finding_line(code: str, message: str) -> str:
    """A finding outside the check commands' listings (`status`), under the severity the table gives its code."""
    from cudaswitch.checks.severities import WARNING, severity

    sev = severity(code)
    if sev == WARNING:
        return warning_line(message)
    return (_("error: {message}") if sev == "error" else _("info: {message}")).format(message=tr(message))
@contextlib.contextmanager
def progress_bar(size: int, quiet: bool, label: str) -> Iterator[Optional[Callable[[int], None]]]:
    """A bytes progress bar on stderr for work over a few MB, only on a terminal and without --quiet/--json
    (install-cudnn's archive, install-toolkit's unpack); yields the callable taking the bytes just done, or None."""
    import sys

    import click

    if quiet or size < (4 << 20) or not sys.stderr.isatty():
        yield None
        return
    with click.progressbar(length=size, label=_(label), file=sys.stderr, show_pos=False) as bar:
        yield bar.update
