"""Per-shell data for the activation hooks: file extension, line ending, encoding, and how a literal is quoted.

Everything a shell does differently lives either here (data and quoting) or in its template under `templates/`;
the logic of a switch is the same for every shell (docs/design/activation.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List


def quote_sh(value: str) -> str:
    """POSIX single quotes; a `'` becomes `'\\''` (docs/design/activation.md, sh). Nothing inside is expanded."""
    return "'" + value.replace("'", "'\\''") + "'"


def quote_fish(value: str) -> str:
    """fish single quotes: only `\\` and `'` are special inside them (docs/design/activation.md, fish)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def quote_csh(value: str) -> str:
    """csh single quotes: `$` and backticks stay literal; `'` is closed-escaped-reopened like sh, and `!` needs a
    backslash even inside single quotes (history substitution)."""
    return "'" + value.replace("'", "'\\''").replace("!", "\\!") + "'"


def quote_ps1(value: str) -> str:
    """PowerShell single quotes: `'` is doubled, and so are the typographic single quotes PowerShell also accepts
    as quote characters."""
    out = value
    for q in ("'", "\u2018", "\u2019", "\u201a", "\u201b"):
        out = out.replace(q, q + q)
    return "'" + out + "'"


def quote_bat(value: str) -> str:
    """Text inside `set "X=..."` in a batch file: only `%` is special there (HC4, HC9 in docs/design/activation.md)."""
    return value.replace("%", "%%")


@dataclass(frozen=True)
class Shell:
    name: str  # conda's name for the activator family
    ext: str  # the one extension conda runs for it (docs/design/activation.md)
    quote: Callable[[str], str]
    newline: str = "\n"
    encoding: str = "utf-8"
    list_sep: str = " "  # how the template receives a list of literals (a shell word list)

    def quote_list(self, values: List[str]) -> str:
        return self.list_sep.join(self.quote(v) for v in values)


SHELLS = {
    "sh": Shell("posix", "sh", quote_sh),
    "fish": Shell("fish", "fish", quote_fish),
    "csh": Shell("csh", "csh", quote_csh),
    # Windows shells: cmd.exe reads each line in the console code page, so the file is ASCII with CRLF (HC1, HC2);
    # Windows PowerShell 5.1 reads a BOM-less file as the ANSI code page, so non-ASCII needs the BOM.
    "bat": Shell("cmd.exe", "bat", quote_bat, newline="\r\n", encoding="ascii"),
    "ps1": Shell("powershell", "ps1", quote_ps1, newline="\n", encoding="utf-8-sig", list_sep=", "),
}
