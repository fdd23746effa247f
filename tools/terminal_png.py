"""Render terminal output with its colours (ANSI SGR escapes, as `tmux capture-pane -e -p` writes them) to a PNG,
for the guide's pictures of real output: the text becomes an SVG in a monospace font, which `rsvg-convert` (Debian's
librsvg2-bin package) turns into the PNG. Not installed with cudaswitch.

    python tools/terminal_png.py CAPTURE.ansi OUT.png
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape

COLOURS = {30: "#2e3436", 31: "#ef2929", 32: "#8ae234", 33: "#fce94f", 34: "#729fcf", 35: "#ad7fa8", 36: "#34e2e2",
           37: "#eeeeec"}
FOREGROUND, BACKGROUND, DIM = "#d3d7cf", "#1e1e1e", "#888a85"
SGR = re.compile(r"\x1b\[([0-9;]*)m")
BOLD = ' font-weight="bold"'
CHAR_W, LINE_H, PAD, SIZE = 8.4, 19, 14, 14


def spans(line):
    """(text, colour, bold) pieces of one line."""
    colour, bold, dim, pos, out = None, False, False, 0, []
    for m in SGR.finditer(line):
        if m.start() > pos:
            out.append((line[pos:m.start()], DIM if dim and not colour else (colour or FOREGROUND), bold))
        for code in [int(c) for c in (m.group(1) or "0").split(";") if c]:
            if code == 0:
                colour, bold, dim = None, False, False
            elif code == 1:
                bold = True
            elif code == 2:
                dim = True
            elif code == 39:
                colour = None
            elif code in COLOURS:
                colour = COLOURS[code]
        pos = m.end()
    if pos < len(line):
        out.append((line[pos:], DIM if dim and not colour else (colour or FOREGROUND), bold))
    return out


def svg(text):
    lines = text.rstrip("\n").split("\n")
    width = max(len(SGR.sub("", ln)) for ln in lines) * CHAR_W + 2 * PAD
    height = len(lines) * LINE_H + 2 * PAD
    body = []
    for n, line in enumerate(lines):
        y = PAD + (n + 1) * LINE_H - 5
        pieces = "".join(f'<tspan fill="{c}"{BOLD if b else ""}>{escape(t)}</tspan>' for t, c, b in spans(line))
        body.append(f'<text x="{PAD}" y="{y}" xml:space="preserve">{pieces}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}">'
            f'<rect width="100%" height="100%" fill="{BACKGROUND}"/>'
            f'<g font-family="DejaVu Sans Mono" font-size="{SIZE}">{"".join(body)}</g></svg>')


def main(capture: str, png: str) -> None:
    text = Path(capture).read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "terminal.svg"
        source.write_text(svg(text), encoding="utf-8")
        subprocess.run(["rsvg-convert", "-o", png, str(source)], check=True)


if __name__ == "__main__":
    main(*sys.argv[1:3])
