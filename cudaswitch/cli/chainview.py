"""Drawing the chain (cudaswitch/checks/chain.py) for a person: marks and colours where the console can show them.

Two decisions, each from the stream the lines go to: marks (✓ ✗ → └) only where its encoding can encode ✓, which a
GBK (cp936) or cp437 console cannot, so those get ASCII; colours only on a terminal, never with NO_COLOR set
(https://no-color.org: any non-empty value) or TERM=dumb, and on Windows only in a terminal known to read ANSI
escapes (Windows Terminal, VS Code, ConEmu, mintty), since an old console prints them as text.
"""

from __future__ import annotations

import os
from typing import List, Mapping

from cudaswitch.checks.chain import ABSENT, BROKEN, DOUBT, OK, Chain
from cudaswitch.core.i18n import _, columns, tr
from cudaswitch.cli.output import printable

_MARKS = {True: {OK: "✓", BROKEN: "✗", DOUBT: "!", ABSENT: "-"}, False: {OK: "+", BROKEN: "x", DOUBT: "!", ABSENT: "-"}}
_ARROW = {True: " → ", False: " -> "}
_BELOW = {True: "└", False: "`-"}
_COLOURS = {OK: "32", BROKEN: "31;1", DOUBT: "33", ABSENT: "2"}  # green, bold red, yellow, dim


def can_draw(stream) -> bool:
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        "✓✗→└".encode(encoding)
    except (LookupError, UnicodeEncodeError):
        return False
    return True


def use_colour(stream, environ: Mapping[str, str], windows: bool = os.name == "nt") -> bool:
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    if not tty or environ.get("NO_COLOR") or environ.get("TERM") == "dumb":
        return False
    if windows:
        return any(environ.get(v) for v in ("WT_SESSION", "TERM_PROGRAM", "ConEmuANSI", "ANSICON", "TERM"))
    return True


def _paint(text: str, status: str, colour: bool) -> str:
    return f"\x1b[{_COLOURS[status]}m{text}\x1b[0m" if colour else text


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - columns(text))


def chain_lines(chain: Chain, *, unicode: bool, colour: bool) -> List[str]:
    """The chain on one screen: a head line with every link, then a line per link (mark, name, version, where it
    came from) and, beneath a link with a problem, each finding's code and cause."""
    names = [tr(link.name) for link in chain.links]
    head = _ARROW[unicode].join(_paint(n, link.status, colour) if link.status in (BROKEN, DOUBT) else n
                                for n, link in zip(names, chain.links))
    lines = [_("chain: {links}").format(links=head)]
    versions = [tr(link.version) if link.version else _("not found") for link in chain.links]
    name_w = max(columns(n) for n in names)
    version_w = max(columns(v) for v in versions)
    broken = chain.broken
    for link, name, version in zip(chain.links, names, versions):
        mark = _paint(_MARKS[unicode][link.status], link.status, colour)
        line = f"  {mark} {_pad(name, name_w)}  {_pad(printable(version), version_w)}  {printable(tr(link.origin))}"
        if link is broken:
            line += "  " + _paint(_("<- the chain breaks here") if not unicode else _("← the chain breaks here"),
                                  BROKEN, colour)
        lines.append(line.rstrip())
        for f in link.findings:
            lines.append(f"      {_BELOW[unicode]} {f.code}: {printable(tr(f.cause))}")
    return lines


def echo_chain(chain: Chain, environ: Mapping[str, str]) -> None:
    import sys

    import click

    stream = sys.stdout  # the stream click.echo writes to (click's get_text_stream would be a new wrapper)
    colour = use_colour(stream, environ)
    for line in chain_lines(chain, unicode=can_draw(stream), colour=colour):
        click.echo(line, color=colour)
