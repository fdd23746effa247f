"""One record per shell: everything a shell does differently that is data (names, file extension, line ending,
encoding, quoting, list separator, template and snippet files, startup file, what it cannot express).

What must be shell code lives in that shell's templates under `templates/` (the activation hooks) and `hooks/`
(`cudaswitch init`); the logic of a switch is the same for every shell (docs/design/activation.md). Adding a shell
means one record here plus its files there: the checklist is in docs/design/activation.md, "Adding a shell".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Tuple

from cudaswitch.core.i18n import M

if TYPE_CHECKING:
    from cudaswitch.switching.activation import Changes


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


# cmd.exe stops a batch file at a line longer than this after expansion ("The input line is too long")
CMD_LINE_LIMIT = 8191


def bat_problem(changes: "Changes") -> Optional[str]:
    """Why the toolkit's paths cannot go into a .bat file (non-ASCII; `%`/`=` break %PATH:old=new%; `^` is doubled
    by CALL, so the recorded pattern never matches; `!` is lost under delayed expansion), or None."""
    values = [*changes.scalars.values(), *changes.prepend.get("PATH", [])]
    for v in values:
        if not v.isascii():
            return M("{path} is not ASCII", path=v)
        for ch in '%=;"^!':  # ^: CALL doubles carets, so the recorded pattern would never match; !: delayed expansion
            if ch in v:
                return M("{path} contains {ch!r}", path=v, ch=ch)
    return None


def bat_spelling(entries: List[str]) -> List[str]:
    """How the cmd.exe hook writes its PATH entries: with one trailing backslash (the same folder to Windows)."""
    return [e.rstrip("\\") + "\\" for e in entries]


def msys_path(path: str) -> str:
    """A Windows path as Git Bash / MSYS writes it on PATH (`C:\\x\\y` -> `/c/x/y`): MSYS splits PATH on ':'."""
    m = re.match(r"^([A-Za-z]):[\\/]?(.*)$", path)
    if not m:
        return path.replace("\\", "/")
    return f"/{m.group(1).lower()}/" + m.group(2).replace("\\", "/")


def _root(changes: "Changes") -> str:
    roots = set(changes.scalars.values())
    if len(roots) != 1:  # the templates set CUDA_PATH and CUDA_HOME to one value
        raise ValueError(f"CUDA_PATH and CUDA_HOME must agree: {changes.scalars}")
    return roots.pop()


def values_words(shell: "Shell", changes: "Changes", path_add: List[str], ld_add: List[str]) -> Dict[str, str]:
    """Placeholder values for a shell with word lists (sh, fish, csh, PowerShell)."""
    return {
        "ROOT": shell.quote(_root(changes)),
        "PATH_ADD": shell.quote(":".join(path_add)),
        "LD_ADD": shell.quote(":".join(ld_add)),
        "PATH_ADD_LIST": shell.quote_list(path_add),
        "LD_ADD_LIST": shell.quote_list(ld_add),
    }


def values_bat(shell: "Shell", changes: "Changes", path_add: List[str], ld_add: List[str]) -> Dict[str, str]:
    """Placeholder values for cmd.exe: one `;` list, and the longest PATH the hook may still touch (HC1-HC10)."""
    # our copy of each entry is spelled with a trailing backslash, a text only cudaswitch writes: cmd can only
    # replace every copy of a text, and this way the user's own copies never match (docs/design/activation.md)
    add = ";".join(bat_spelling(path_add))
    # The longest line a hook expands holds PATH, our entries and another toolkit's record (at most as long
    # as ours, with room to spare): above this PATH length the hook warns and leaves PATH alone.
    longest = CMD_LINE_LIMIT - 2 * len(add) - 400
    return {"ROOT": shell.quote(_root(changes)), "PATH_ADD": shell.quote(add), "MAXLEN": str(longest),
            **{f"MAXLEN_{i}": str(longest + i) for i in (1, 2, 3)}, "BANG_CHECK": bang_check()}


# Every value a cmd.exe hook reads or writes: with delayed expansion on, each `!` in one of them is lost as it is read.
BAT_VALUES = ("PATH", "_CUDASWITCH_ADDED_PATH", "CUDA_PATH", "CUDA_HOME", "_CUDASWITCH_OLD_CUDA_PATH",
              "_CUDASWITCH_OLD_CUDA_HOME", "CONDA_PREFIX")


def bang_check() -> str:
    """The cmd.exe lines that, only while delayed expansion is on (_CS_DE undefined), find a value with a `!`:
    %X:!=% and %X:!=_% replace them in the same expansion that reads X, before delayed expansion could drop them,
    so the two copies differ exactly when X has one; their quotes are taken out before they are compared (HC4).
    A value without `!` is read the same with delayed expansion on or off, so only such a value stops the hook."""
    out = []
    for var in BAT_VALUES:
        guard = f"@if not defined _CS_DE if defined {var}"
        out += ['@set "_CS_A="', '@set "_CS_B="',
                f'{guard} set "_CS_A=%{var}:!=%"', f'{guard} set "_CS_B=%{var}:!=_%"',
                '@if defined _CS_A set "_CS_A=%_CS_A:"=%"', '@if defined _CS_B set "_CS_B=%_CS_B:"=%"',
                f'{guard} if not "%_CS_A%"=="%_CS_B%" set "_CS_SKIP=delayed expansion is on (cmd /V:ON or the '
                f'DelayedExpansion registry value) and {var} has an exclamation mark, which it would drop"']
    return "\n".join(out + ['@set "_CS_A="', '@set "_CS_B="'])


@dataclass(frozen=True)
class Startup:
    """A `cudaswitch init` shell: its name, other names `$SHELL` may carry, and its startup file for --install:
    `under` below the folder `$base_var` names (else `base_default` below the home folder). `profile`: the file
    PowerShell itself names ($PROFILE.CurrentUserAllHosts); `under` None and no profile: it has none.
    `loads`: the one guarded line --install puts there, which sources the integration file `{file}` (quoted) only
    when it exists, silently otherwise; `ext`: that file's name ending. `completion`: the name of its tab-completion
    script (cli/completion.py), or None."""

    name: str
    aliases: Tuple[str, ...] = ()
    under: Optional[str] = None
    base_var: Optional[str] = None
    base_default: str = ""
    profile: bool = False
    loads: Optional[str] = None
    ext: str = ""
    completion: Optional[str] = None


@dataclass(frozen=True)
class Shell:
    key: str  # the hook's key: its extension (conda runs one extension per shell: docs/design/activation.md)
    name: str  # conda's name for the activator family
    quote: Callable[[str], str]
    newline: str = "\n"
    encoding: str = "utf-8"
    list_sep: str = " "  # how the template receives a list of literals (a shell word list)
    values: Callable[..., Dict[str, str]] = values_words  # the placeholder values of its templates
    lib: bool = True  # its templates pull in templates/lib.<ext> at @LIB@
    # what it cannot express: a reason for a switch's changes, or None; the activate hook is then `unsupported`
    cannot_express: Optional[Callable[["Changes"], Optional[str]]] = None
    unsupported: Optional[str] = None
    msys_on_windows: bool = False  # on Windows, read by Git Bash/MSYS: PATH entries in MSYS spelling
    init: Tuple[Startup, ...] = ()  # the `cudaswitch init` shells it serves
    snippet: Optional[str] = None  # hooks/<file>: the shell function `cudaswitch init` prints
    reconciler: Optional[str] = None  # hooks/<file>: the prompt-time reconciler added after it
    reconciler_from_precmd: bool = False  # no functions: precmd sources the reconciler file instead
    eval_one_line: bool = False  # `eval "`cudaswitch init`"` joins lines: print one line of commands

    @property
    def ext(self) -> str:
        return self.key

    def quote_list(self, values: List[str]) -> str:
        return self.list_sep.join(self.quote(v) for v in values)

    def template(self, direction: str) -> str:
        return f"{direction}.{self.ext}"

    def template_files(self) -> List[str]:
        """Every file of templates/ this shell's hooks are made from."""
        return ([self.template("activate"), self.template("deactivate")] + ([f"lib.{self.ext}"] if self.lib else [])
                + ([self.unsupported] if self.unsupported else []))

    def hook_files(self) -> List[str]:
        """Every file of hooks/ its `cudaswitch init` uses."""
        return [f for f in (self.snippet, self.reconciler) if f]


# `[ -f X ] && . X` would leave the startup file's status 1 when X is gone
_SH_LOADS = "if [ -f {file} ]; then . {file}; fi"

SHELLS: Dict[str, Shell] = {
    "sh": Shell("sh", "posix", quote_sh, msys_on_windows=True, snippet="bash.sh", reconciler="reconcile.sh",
                init=(Startup("bash", under=".bashrc", loads=_SH_LOADS, ext="bash", completion="bash"),
                      Startup("zsh", under=".zshrc", base_var="ZDOTDIR", loads=_SH_LOADS, ext="zsh", completion="zsh"))),
    "fish": Shell("fish", "fish", quote_fish, snippet="fish.fish", reconciler="reconcile.fish",
                  init=(Startup("fish", under="fish/config.fish", base_var="XDG_CONFIG_HOME", base_default=".config",
                                loads="if test -f {file}; source {file}; end", ext="fish", completion="fish"),)),
    "csh": Shell("csh", "csh", quote_csh, snippet="tcsh.csh", reconciler="reconcile.csh", reconciler_from_precmd=True,
                 eval_one_line=True, init=(Startup("tcsh", aliases=("csh",), under=".tcshrc", loads="if ( -f {file} ) source {file}",
                              ext="tcsh"),)),
    # Windows shells: cmd.exe reads each line in the console code page, so the file is ASCII with CRLF (HC1, HC2);
    # it has no prompt hook, so no reconciler, and no startup file.
    "bat": Shell("bat", "cmd.exe", quote_bat, newline="\r\n", encoding="ascii", values=values_bat, lib=False,
                 cannot_express=bat_problem, unsupported="unsupported.bat", snippet="cmd.bat", init=(Startup("cmd"),)),
    # Windows PowerShell 5.1 reads a BOM-less file as the ANSI code page, so non-ASCII needs the BOM.
    "ps1": Shell("ps1", "powershell", quote_ps1, newline="\n", encoding="utf-8-sig", list_sep=", ", lib=False,
                 snippet="powershell.ps1", reconciler="reconcile.ps1",
                 init=(Startup("powershell", aliases=("pwsh",), profile=True, ext="ps1", completion="powershell",
                                   loads="if (Test-Path -LiteralPath {file}) {{ . {file} }}"),)),
}

# `cudaswitch init NAME` (and the names `$SHELL` may carry) -> (hook shell, startup record)
INIT_SHELLS: Dict[str, Tuple[Shell, Startup]] = {s.name: (sh, s) for sh in SHELLS.values() for s in sh.init}


def init_shell(name: Optional[str]) -> Optional[Tuple[Shell, Startup]]:
    """The init shell a name stands for (its own name or an alias), or None."""
    for sh, st in INIT_SHELLS.values():
        if name == st.name or name in st.aliases:
            return sh, st
    return None
