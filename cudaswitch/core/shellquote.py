"""Commands the user pastes: each word quoted for the shell that will read it (sh, csh, fish, cmd.exe, PowerShell).

Every command cudaswitch prints for pasting (`conda activate ...`, `cudaswitch use ...`, `cudaswitch smoke -p ...`)
goes through `command()`, so a folder such as `/tmp/工具 包/cuda 13.0` stays one word. The rules, and how the shell is
known, are in docs/design/shellquote.md; tests/core/test_shellquote.py pastes the printed lines into the real shells.
"""

from __future__ import annotations

import os
import re
from typing import Iterable, Mapping, Optional

SH, CSH, FISH, CMD, POWERSHELL = "sh", "csh", "fish", "cmd", "powershell"
# Windows without a POSIX shell: cmd.exe or PowerShell, which cannot be told apart from their children's
# environment. A word both read alike is written that way; otherwise PowerShell's form (docs/design/shellquote.md).
WINDOWS = "windows"

# words no shell changes: letters, digits and the punctuation of versions, options and paths
_PLAIN = re.compile(r"[A-Za-z0-9_@+=:,./-]+")
_PLAIN_WINDOWS = re.compile(r"[A-Za-z0-9_+=:./\\-]+")
_NAMES = {"bash": SH, "sh": SH, "dash": SH, "zsh": SH, "ksh": SH, "ash": SH, "fish": FISH, "tcsh": CSH, "csh": CSH,
          "cmd": CMD, "pwsh": POWERSHELL, "powershell": POWERSHELL}


def shell_named(name: Optional[str]) -> Optional[str]:
    """The quoting family of a shell name or path (`/usr/bin/fish`, `pwsh.exe`, `tcsh`), None when unknown."""
    if not name:
        return None
    base = re.split(r"[\\/]", name.strip())[-1].lower()
    base = base[:-4] if base.endswith(".exe") else base
    return _NAMES.get(base)


def user_shell(environ: Mapping[str, str], windows: bool = False) -> str:
    """Which shell the user will paste into: `CUDASWITCH_SHELL` (a shell name; what a user or a wrapper sets), else
    `$SHELL` (the login shell; Git Bash and MSYS set it on Windows too), else sh, or on Windows cmd/PowerShell."""
    for value in (environ.get("CUDASWITCH_SHELL"), environ.get("SHELL")):
        family = shell_named(value)
        if family:
            return family
    return WINDOWS if windows else SH


def quote(word: str, shell: str = SH) -> str:
    """`word` as one word of `shell`, unchanged when that shell would read it as it is."""
    if shell == WINDOWS:
        if _PLAIN_WINDOWS.fullmatch(word):
            return word
        # double quotes mean one word to both cmd.exe and PowerShell unless the text holds what PowerShell expands
        # there ($ `) or a quote; cmd's %NAME% is what it would be in cmd's own form
        if not re.search(r"[\"$`\u201c\u201d\u201e]", word):
            return '"' + re.sub(r"(\\+)$", lambda m: m.group(1) * 2, word) + '"'  # C runtime: \" is a quote
        return quote(word, POWERSHELL)
    if shell in (CMD, POWERSHELL) and _PLAIN_WINDOWS.fullmatch(word):
        return word
    if shell not in (CMD, POWERSHELL) and _PLAIN.fullmatch(word) and not word.startswith("="):  # zsh: =cmd
        return word
    if shell == FISH:
        return "'" + word.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if shell == CSH:
        # '!' is history substitution even inside single quotes: it goes outside them, escaped
        return "'" + word.replace("'", "'\\''").replace("!", "'\\!'").replace("\n", "\\\n") + "'"
    if shell == POWERSHELL:
        out = word
        for q in ("'", "\u2018", "\u2019", "\u201a", "\u201b"):  # PowerShell takes typographic quotes as quotes
            out = out.replace(q, q + q)
        return "'" + out + "'"
    if shell == CMD:
        # cmd.exe keeps "..." as one word; the program's C runtime reads \" as a quote (backslashes before a quote
        # doubled). Typed at the prompt, %NAME% still expands inside quotes when NAME is a defined variable: no
        # escape works there (docs/design/shellquote.md), and Windows paths that hold one are rare.
        body = re.sub(r'(\\*)"', lambda m: m.group(1) * 2 + '\\"', word)
        return '"' + re.sub(r"(\\+)$", lambda m: m.group(1) * 2, body) + '"'
    return "'" + word.replace("'", "'\\''") + "'"


def command(words: Iterable[str], shell: str = SH) -> str:
    """A command line: each word quoted for `shell`. A PowerShell line whose program needed quotes gets `& `."""
    words = list(words)
    line = " ".join(quote(w, shell) for w in words)
    if shell == POWERSHELL and words and quote(words[0], shell) != words[0]:
        line = "& " + line
    return line


def for_user(words: Iterable[str], environ: Optional[Mapping[str, str]] = None, windows: Optional[bool] = None) -> str:
    """`command()` for the shell of the user this process runs for."""
    environ = os.environ if environ is None else environ
    return command(words, user_shell(environ, os.name == "nt" if windows is None else windows))
