"""`--help` in the user's language, without touching the commands: the English help stays in the decorators and
docstrings (the source of the catalog, `scripts/i18n_catalog.py` reads it from the commands themselves), and this
formatter translates each piece when click writes it.

Imported only when help is printed in a language other than English (`cli/__init__.py`'s `_Context`), so the
English path and every command that prints no help neither import this module nor read the catalog.

click's own words ("Usage:", "Options", "Commands", "Show this message and exit.", "[default: ...]") come through
here too: click looks them up in gettext's global domain, which is not ours, so the formatter translates them as
they pass (they are in our catalog, see `CLICK_WORDS`).
"""

from __future__ import annotations

import inspect
import re
from typing import List, Optional, Sequence, Tuple

import click

from cudaswitch.core.i18n import N_, _
from cudaswitch.core.i18n import columns as width

# The help texts click itself supplies, in the form they reach the formatter.
CLICK_WORDS = (N_("Usage:"), N_("Options"), N_("Commands"), N_("Show this message and exit."),
               N_("Show the version and exit."), N_("default: {default}"), N_("required"))

_EXTRA = re.compile(r"^(?P<help>.*?)\s*\[(?P<extra>[^\[\]]*)\]$", re.S)
_SHORT = "\0"  # marks a command's short help: one line, cut to fit, as click does in English
_NO_LINE_START = "，。；：、）》」』！？,.;:)!?"


def help_source(command: click.Command) -> str:
    """The text click prints for a command's docstring, which is also its catalog entry."""
    return inspect.cleandoc(command.help or "").partition("\f")[0]


def wrap(text: str, columns: int) -> List[str]:
    """Wrap by terminal columns. Chinese has no spaces to break at, so any character boundary is a break point,
    except before closing punctuation; English words inside stay whole. Line breaks in the text are kept."""
    columns = max(columns, 10)
    out: List[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for token in re.findall(r"[A-Za-z0-9_\-./'`()\[\]{}<>=:,;!?%$@#*+~|\\\"]+|\s+|.", paragraph):
            if width(line) + width(token) <= columns or not line.strip():
                line += token
                continue
            if token in _NO_LINE_START and len(line) > 1 and not line[-1].isspace():
                # closing punctuation never starts a line: the character before it moves down with it, and so does
                # a run of closing punctuation before that (`）。` moves with the word it closes)
                cut = len(line) - 1
                while cut > 1 and line[cut] in _NO_LINE_START and not line[cut - 1].isspace():
                    cut -= 1
                line, token = line[:cut], line[cut:] + token
            out.append(line.rstrip())
            line = "" if token.isspace() else token
        out.append(line.rstrip())
    return out


class TranslatedHelpFormatter(click.HelpFormatter):
    """click's formatter with each text translated as it is written, and wrapped by terminal columns."""

    def __init__(self, ctx: click.Context, **kwargs):
        super().__init__(**kwargs)
        self.ctx = ctx

    def write_usage(self, prog: str, args: str = "", prefix: Optional[str] = None) -> None:
        if prefix is None:
            usage = _("Usage:")
            prefix = usage if usage.endswith("：") else f"{usage} "  # a full-width colon carries its own space
        super().write_usage(prog, args, prefix)

    def write_heading(self, heading: str) -> None:
        translated = _(heading)
        colon = "" if translated == heading else "："  # click writes "Options:"; Chinese ends with a full-width colon
        self.write(f"{'':>{self.current_indent}}{translated}{colon or ':'}\n")

    def write_text(self, text: str) -> None:
        translated = _(text)
        if translated == text:
            super().write_text(text)
            return
        indent = " " * self.current_indent
        for line in wrap(translated, self.width - self.current_indent):
            self.write(f"{indent}{line}\n" if line else "\n")

    def _row_text(self, term: str, text: str) -> str:
        command = self.ctx.command
        if isinstance(command, click.Group) and term in command.list_commands(self.ctx):
            # a command list shows the first sentence of each command's help, cut to the width: translate the
            # whole help and take its first sentence
            sub = command.get_command(self.ctx, term)
            if sub is not None and sub.short_help:  # written to fit the list: translated whole, never cut
                return _(sub.short_help)
            if sub is not None:
                translated = _(help_source(sub))
                if translated != help_source(sub):
                    return _SHORT + re.split(r"。|\n", translated, maxsplit=1)[0]
            return text
        match = _EXTRA.match(text)
        if match and match.group("help") and _(match.group("help")) != match.group("help"):
            extras = []
            for item in match.group("extra").split("; "):
                if item.startswith("default: "):
                    item = _("default: {default}").format(default=item[len("default: "):])
                else:
                    item = _(item)
                extras.append(item)
            return f"{_(match.group('help'))}  [{'; '.join(extras)}]"
        return _(text)

    def write_dl(self, rows: Sequence[Tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        rows = [(first, self._row_text(first, second)) for first, second in rows]
        first_col = min(max((width(first) for first, _s in rows), default=0), col_max) + col_spacing
        text_width = max(self.width - first_col - 2, 10)
        for first, second in rows:
            self.write(f"{'':>{self.current_indent}}{first}")
            if not second:
                self.write("\n")
                continue
            if width(first) <= first_col - col_spacing:
                self.write(" " * (first_col - width(first)))
            else:
                self.write("\n")
                self.write(" " * (first_col + self.current_indent))
            if second.startswith(_SHORT):
                second = second[len(_SHORT):]
                if width(second) > text_width:
                    while width(second) > text_width - 1:
                        second = second[:-1]
                    second = second.rstrip("，、；： ") + "…"
            lines = wrap(second, text_width)
            self.write(f"{lines[0]}\n")
            for line in lines[1:]:
                self.write(f"{'':>{first_col + self.current_indent}}{line}\n")


def formatter(ctx: click.Context) -> TranslatedHelpFormatter:
    return TranslatedHelpFormatter(ctx, width=ctx.terminal_width, max_width=ctx.max_content_width)
