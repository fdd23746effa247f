"""`cudaswitch init SHELL`: the shell function from the top-level `hooks/` folder, printed or added to the
shell's startup file between marker lines (idempotent: a second --install replaces the block)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional, Tuple

from cudaswitch.errors import UsageError
from cudaswitch.fsutil import atomic_write

BEGIN = "# >>> cudaswitch init >>>"
END = "# <<< cudaswitch init <<<"


def hooks_dir() -> Path:
    from cudaswitch.resources import resource_dir

    return resource_dir("hooks")


def snippet(filename: str) -> str:
    return (hooks_dir() / filename).read_text(encoding="utf-8")


def rc_file(shell: str) -> Path:
    home = Path(os.path.expanduser("~"))
    if shell == "bash":
        return home / ".bashrc"
    if shell == "zsh":
        return Path(os.environ.get("ZDOTDIR") or home) / ".zshrc"
    if shell == "fish":
        return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "fish" / "config.fish"
    if shell == "tcsh":
        return home / ".tcshrc"
    if shell == "powershell":
        if sys.platform == "win32":  # Windows PowerShell 5.1; pwsh 7 reads Documents\PowerShell (use --rc-file)
            return home / "Documents" / "WindowsPowerShell" / "Microsoft.PowerShell_profile.ps1"
        return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "powershell" / "Microsoft.PowerShell_profile.ps1"
    raise UsageError("cmd.exe has no startup file: save the output of 'cudaswitch init cmd' as cs.bat in a folder "
                     "on PATH instead")


def install(shell: str, text: str, path: Optional[str] = None) -> Tuple[Path, bool]:
    """Put `text` between the marker lines in the startup file; (file, whether it changed)."""
    target = Path(path) if path else rc_file(shell)
    try:
        old = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        old = ""
    except UnicodeDecodeError:
        raise UsageError(f"{target} is not UTF-8 text; add the lines 'cudaswitch init {shell}' prints to it "
                         f"yourself") from None
    block = f"{BEGIN}\n{text.rstrip()}\n{END}\n"
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        new = head + block + tail
    else:
        new = old + ("\n" if old and not old.endswith("\n") else "") + block
    if new == old:
        return target, False
    from cudaswitch.fsutil import check_writable

    # a dotfile manager's symlinked rc file stays a link: its target gets the block, with its mode kept
    check_writable(target.resolve() if target.is_symlink() else target,
                   f"add the lines 'cudaswitch init {shell}' prints to it yourself")
    atomic_write(target, new, follow_symlinks=True)
    return target, True
