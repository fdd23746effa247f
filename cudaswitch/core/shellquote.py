"""Commands the user pastes: each word quoted for the shell that will read it (sh, csh, fish, cmd.exe, PowerShell).

Every command cudaswitch prints for pasting (`conda activate ...`, `cudaswitch use ...`, `cudaswitch smoke -p ...`)
goes through `command()`, so a folder such as `/tmp/工具 包/cuda 13.0` stays one word. The rules, and how the shell is
known, are in docs/design/shellquote.md; tests/core/test_shellquote.py pastes the printed lines into the real shells.
"""

from __future__ import annotations

import os
import re
from typing import Iterable, Mapping, Optional

from cudaswitch.core.shells import PLAIN_WINDOWS, PS_DOUBLE_QUOTED, SHELLS, named

# the quoting families are the shell records' keys (core/shells.py): each record's `paste_word` is its rule
SH, CSH, FISH, CMD, POWERSHELL = "sh", "csh", "fish", "bat", "ps1"
# Windows without a POSIX shell: cmd.exe or PowerShell, which cannot be told apart from their children's
# environment. A word both read alike is written that way; otherwise PowerShell's form (docs/design/shellquote.md).
WINDOWS = "windows"


def shell_named(name: Optional[str]) -> Optional[str]:
    """The quoting family of a shell name or path (`/usr/bin/fish`, `pwsh.exe`, `tcsh`), None when unknown."""
    record = named(name)
    return record.key if record else None


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
        if PLAIN_WINDOWS.fullmatch(word):
            return word
        # double quotes mean one word to both cmd.exe and PowerShell unless the text holds what PowerShell expands
        # there ($ `) or a quote; cmd's %NAME% is what it would be in cmd's own form
        if not any(ch in word for ch in PS_DOUBLE_QUOTED):
            return '"' + re.sub(r"(\\+)$", lambda m: m.group(1) * 2, word) + '"'  # C runtime: \" is a quote
        return quote(word, POWERSHELL)
    return SHELLS[shell].paste_word(word)


def command(words: Iterable[str], shell: str = SH) -> str:
    """A command line: each word quoted for `shell`; a line whose program needed quotes gets the record's `call`
    (PowerShell's `& `)."""
    words = list(words)
    line = " ".join(quote(w, shell) for w in words)
    call = SHELLS[shell].call if shell in SHELLS else ""
    if call and words and quote(words[0], shell) != words[0]:
        line = call + line
    return line


def for_user(words: Iterable[str], environ: Optional[Mapping[str, str]] = None, windows: Optional[bool] = None) -> str:
    """`command()` for the shell of the user this process runs for."""
    environ = os.environ if environ is None else environ
    return command(words, user_shell(environ, os.name == "nt" if windows is None else windows))
