"""One record per shell: everything a shell does differently that is data (names, file extension, line ending,
encoding, quoting, list separator, template and snippet files, startup file, what it cannot express, the real
programs that run its hooks, the script `use` checks them with and how that check models them, how a command is
quoted for pasting into it, how a variable is set for good in it, what conda's own PATH export in it cannot carry,
how its activate.d scripts set a variable, its startup file or why it has none, its tab-completion script, how `use`
names it, what its programs read at start that another user may own).

What must be shell code lives in that shell's templates under `templates/` (the activation hooks) and `hooks/`
(`cudaswitch init`); the logic of a switch is the same for every shell (docs/design/activation.md). Adding a shell
means one record here plus its files there: the checklist is in docs/design/activation.md, "Adding a shell". The
records sit in core/ because every layer reads them: discovery (which activate.d scripts conda runs for the user's
shell), switching (hooks, `init`, the check in the real shells), and every command that prints a line to paste.
They import nothing but core.i18n; the functions here only build strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Mapping, Optional, Tuple

from cudaswitch.core.i18n import M, N_

if TYPE_CHECKING:
    from cudaswitch.switching.activation import Changes


def quote_sh(value: str) -> str:
    """POSIX single quotes; a `'` becomes `'\\''` (docs/design/activation.md, sh). Nothing inside is expanded."""
    return "'" + value.replace("'", "'\\''") + "'"


def quote_fish(value: str) -> str:
    """fish single quotes: only `\\` and `'` are special inside them (docs/design/activation.md, fish)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def quote_csh(value: str) -> str:
    """csh single quotes: `$` and backticks stay literal; `'` is closed-escaped-reopened like sh, `!` needs a
    backslash even inside single quotes (history substitution: tcsh reads `'a\\!b'` as `a!b` in a script and at the
    prompt alike), and a newline one before it (else "Unmatched '")."""
    return "'" + value.replace("'", "'\\''").replace("!", "\\!").replace("\n", "\\\n") + "'"


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


def paste_cmd(word: str) -> str:
    """A word of a command typed at cmd.exe's prompt: cmd keeps "..." as one word, and the program's C runtime reads
    \" as a quote (backslashes before a quote, and at the end, doubled). %NAME% still expands inside the quotes
    when NAME is a defined variable: no escape works there (docs/design/shellquote.md), and Windows paths that hold
    one are rare."""
    body = re.sub(r'(\\*)"', lambda m: m.group(1) * 2 + '\\"', word)
    return '"' + re.sub(r"(\\+)$", lambda m: m.group(1) * 2, body) + '"'


# Words a shell reads as they are, so a pasted command shows them bare: letters, digits and the punctuation of
# versions, options and paths (not a leading `=`: zsh expands `=cmd` to a program's path)
PLAIN_POSIX = re.compile(r"(?!=)[A-Za-z0-9_@+=:,./-]+")
PLAIN_WINDOWS = re.compile(r"[A-Za-z0-9_+=:./\\-]+")


@dataclass(frozen=True)
class RealShell:
    """A program that runs one kind of hook (`hook`: its record's key, filled in by the record): its name, the
    program, and the arguments that start it without startup files and without a terminal, before the script's
    path. `use` runs each present one on the hooks it wrote (switching/verify.py); the tests start them the same."""

    name: str
    program: str
    args: Tuple[str, ...]
    windows: bool = False
    empty_is_unset: bool = False  # cannot hold an empty variable (cmd.exe, Windows PowerShell 5.1)
    # lists in which the shell spells an empty element (the current folder) as '.', which means the same: fish
    # imports PATH that way, the csh hook splits lists through tcsh's $path
    dot_lists: Tuple[str, ...] = ()
    hook: str = ""
    # what the program reads at start that another user may own (core/trust.py's INPUT_SOURCES, keyed as
    # tests/hostile/ plants its canaries): (key, what it is)
    reads: Tuple[Tuple[str, str], ...] = ()

    @property
    def sep(self) -> str:
        """The list separator of the system it runs on."""
        return ";" if self.windows else ":"


@dataclass(frozen=True)
class VerifyRun:
    """What the script that checks a shell's hooks does (switching/verify.py): source `act` as conda does (inside a
    function where the shell has them), dump, set PATH to `path` and unset CONDA_PREFIX as `conda deactivate` does,
    source `deact`, dump. A dump prints a line holding `mark`, then the environment: `env0` (the system's `env`,
    run with -0), else `python -I -c dump` (one JSON line); cmd.exe's is its own `set`. `preset`: the start, set in
    the script by a shell that does not take it from its environment (cmd under wine); `codec`: the one cmd reads
    the batch file in (None: ASCII only); `psversion`: the marker PowerShell prints its version after."""

    act: str
    deact: str
    path: str
    sep: str
    python: str
    dump: str
    mark: str
    psversion: str
    env0: Optional[str] = None
    preset: Tuple[Tuple[str, str], ...] = ()
    codec: Optional[str] = None


def _dump_posix(run: VerifyRun, q: Callable[[str], str]) -> List[str]:
    if run.env0:
        return [f"echo {run.mark}", f"{q(run.env0)} -0"]
    return [f"{q(run.python)} -I -c {q(run.dump)}"]


def verify_sh(run: VerifyRun) -> bytes:
    q, dump = quote_sh, _dump_posix(run, quote_sh)
    lines = ["__cudaswitch_verify() { . \"$1\"; }", f"__cudaswitch_verify {q(run.act)}", "; ".join(dump),
             f"PATH={q(run.path)}; export PATH; unset CONDA_PREFIX", f"__cudaswitch_verify {q(run.deact)}",
             "; ".join(dump)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def verify_fish(run: VerifyRun) -> bytes:
    q, dump = quote_fish, _dump_posix(run, quote_fish)
    entries = " ".join(q(e) for e in run.path.split(run.sep)) if run.path else "''"
    lines = ["function __cudaswitch_verify", "    source $argv[1]", "end", f"__cudaswitch_verify {q(run.act)}",
             "; ".join(dump), f"set -gx PATH {entries}", "set -e CONDA_PREFIX", f"__cudaswitch_verify {q(run.deact)}",
             "; ".join(dump)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def verify_csh(run: VerifyRun) -> bytes:
    """csh has no functions: the hooks are sourced at top level."""
    q, dump = quote_csh, _dump_posix(run, quote_csh)
    lines = [f"source {q(run.act)}", *dump, f"setenv PATH {q(run.path)}", "unsetenv CONDA_PREFIX",
             f"source {q(run.deact)}", *dump]
    return ("\n".join(lines) + "\n").encode("utf-8")


def verify_ps1(run: VerifyRun) -> bytes:
    """PowerShell prints its version first: an empty value deletes a variable before pwsh 7.5 and in Windows
    PowerShell 5.1, so which plan the result is compared with is the running one's."""
    q = quote_ps1
    dump = f"& {q(run.python)} -I -c {q(run.dump)}"
    lines = [f"Write-Output ('{run.psversion} ' + $PSVersionTable.PSVersion.Major + '.' + "
             "$PSVersionTable.PSVersion.Minor)",
             "function __cudaswitch_verify([string]$hook) { . $hook }", f"__cudaswitch_verify {q(run.act)}", dump,
             f"$Env:PATH = {q(run.path)}", "Remove-Item Env:CONDA_PREFIX -ErrorAction SilentlyContinue",
             f"__cudaswitch_verify {q(run.deact)}", dump, "exit 0"]
    text = "\n".join(lines) + "\n"
    return text.encode("ascii") if text.isascii() else text.encode("utf-8-sig")


def verify_bat(run: VerifyRun) -> bytes:
    """cmd.exe: the start is set in the script (wine does not hand PATH over from the process) and `set` prints the
    environment (a Windows Python need not be reachable from cmd, e.g. under wine); CRLF, in the console's code
    page (UnicodeEncodeError where a value has no spelling in it)."""
    def setl(k, v):
        return f'@set "{k}={v.replace("%", "%%")}"'
    lines = [setl(k, v) for k, v in run.preset]
    lines += [f'@call "{run.act}"', f"@echo {run.mark}", "@set", setl("PATH", run.path), '@set "CONDA_PREFIX="',
              f'@call "{run.deact}"', f"@echo {run.mark}", "@set", "@exit /b 0"]
    return ("\r\n".join(lines) + "\r\n").encode(run.codec or "ascii")


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


def bat_own_record(record: str) -> bool:
    """Whether an earlier hook's PATH record is in the cmd.exe hook's spelling (bat_spelling): cmd can only replace
    every copy of a text, so it takes out only such a record and leaves PowerShell's (and the NVIDIA installer's
    same entries) in place."""
    return record.endswith("\\")


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
class CondaExport:
    """How conda's own activator sets PATH in a shell: without escaping, so a PATH entry holding one of `breaks` is
    executed or mangled by conda itself on `conda deactivate` (`use` refuses such a toolkit path). `shown`: the shell
    and that line as a message names them (shell names and syntax only, so a translated sentence carries it
    unchanged); `windows`: checked for a switch on Windows, else for one elsewhere."""

    shown: str
    breaks: str
    windows: bool = False


@dataclass(frozen=True)
class Edition:
    """An edition of a shell that names its own startup file (PowerShell's pwsh 7 and Windows PowerShell 5.1): the
    program asked for it (Startup.ask), and on Windows the folder below Documents it reads that file from; `ships`:
    it comes with Windows, so its file is written even where that folder is not there yet."""

    program: str
    folder: str
    ships: bool = False


@dataclass(frozen=True)
class Startup:
    """A `cudaswitch init` shell: its name, other names `$SHELL` may carry, and its startup file for --install:
    `under` below the folder `$base_var` names (else `base_default` below the home folder). `profile`: the name of
    the file a shell itself names (PowerShell's $PROFILE.CurrentUserAllHosts), asked of each of its `editions` by
    running it with `ask` (the last line it prints); where none answers, `profile` in each edition's `folder` below
    Windows' Documents folder, elsewhere in `profile_dir` below the `base_var`/`base_default` folder. `under` None and
    no profile: it has none, and --install refuses with `no_file` (why, and what to do instead; `{shell}`: the init
    name).
    `loads`: the one guarded line --install puts there, which sources the integration file `{file}` (quoted) only
    when it exists, silently otherwise; `ext`: that file's name ending. `completion`: the tab-completion protocol it
    speaks to cudaswitch, as click names it (`_CUDASWITCH_COMPLETE=<completion>_complete`, cli/completion.py), or
    None for none; `completion_script`: hooks/<file>, the completion script `init` puts in its integration; `starts`: the argv that starts a new shell which reads that file and runs
    the command that follows."""

    name: str
    aliases: Tuple[str, ...] = ()
    under: Optional[str] = None
    base_var: Optional[str] = None
    base_default: str = ""
    profile: Optional[str] = None
    editions: Tuple[Edition, ...] = ()
    ask: Tuple[str, ...] = ()
    profile_dir: str = ""
    no_file: Optional[str] = None
    loads: Optional[str] = None
    ext: str = ""
    completion: Optional[str] = None
    completion_script: Optional[str] = None
    # a new shell that reads the startup file and runs the command given after these (the tests start it so)
    starts: Tuple[str, ...] = ()


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
    # the check in the real shells (switching/verify.py): the programs that run these hooks, the script they run
    # (None: `use` has no way to check the hooks, an error), and how its dump comes back: "env" (the system's
    # `env -0`, else JSON from Python), "json" (Python only), "set" (cmd.exe's own `set`)
    real: Tuple[RealShell, ...] = ()
    verify: Optional[Callable[[VerifyRun], bytes]] = None
    dump: str = "env"
    # what its hooks do, as the check's plan models it (switching/verify.py): `lists`, the lists they prepend to
    # (None: every list of the switch); `spelling`, how they write their entries (None: as given); `own_record`,
    # whether an earlier hook's PATH record is one they can take out (None: any), one they cannot stays in the
    # start as it is; `runs_inside`, on Windows, the shells whose sessions start this one more often than not
    # (each inherits the other's entries and records), so its check starts as if their hooks had run first
    lists: Optional[Tuple[str, ...]] = None
    spelling: Optional[Callable[[List[str]], List[str]]] = None
    own_record: Optional[Callable[[str], bool]] = None
    runs_inside: Tuple[str, ...] = ()
    # what the check reads in what the shell prints: `gives_up`, the text of the warning with which its hook leaves
    # the shell as it was (a check then skips, not fails, when nothing changed); `refusal`, markers of the shell
    # refusing to run any script (a skip, `refusal_note` says why); `empty_below`, the (major, minor) version
    # (its driver prints it after VerifyRun.psversion) below which it cannot hold an empty variable
    gives_up: Optional[str] = None
    refusal: Tuple[str, ...] = ()
    refusal_note: Optional[str] = None
    empty_below: Optional[Tuple[int, int]] = None
    # a command printed for the user to paste (core/shellquote.py): the words it reads bare, else `paste` (None:
    # `quote`); `call`: put in front of a line whose program needed quotes; `names`: other program names (`$SHELL`,
    # CUDASWITCH_SHELL) of a shell that reads this language, besides its `init` names
    plain: "re.Pattern[str]" = PLAIN_POSIX
    paste: Optional[Callable[[str], str]] = None
    call: str = ""
    names: Tuple[str, ...] = ()
    # on Windows, where no $SHELL names the user's shell: variables a session of it sets, which its children inherit
    # (none: the Windows shell of a session without another's variables)
    session_vars: Tuple[str, ...] = ()
    # a line the user adds by hand to set a variable for good (`doctor --fix`'s advice): `export(shell, var, value)`
    # (None: sh's), in the file each program name reads in every interactive shell: its `init` startup file, else
    # `rc_files` (csh reads ~/.cshrc, tcsh ~/.tcshrc), else the sh family's login-only ~/.profile
    export: Optional[Callable[["Shell", str, str], str]] = None
    rc_files: Tuple[Tuple[str, str], ...] = ()
    # on Windows, that advice is a `setx` command quoted for this shell, shown in this message (`{command}`)
    setx: Optional[str] = None
    # conda's own unescaped PATH export in this shell (None: none that a PATH entry breaks)
    conda_export: Optional[CondaExport] = None
    # how an activate.d script in this language sets an environment variable, as status and doctor read them
    # (discovery/activation_scripts.py, assignment_patterns): a pattern with `{name}` where the variable's name goes
    # and a `value` group, the value as written; `fold_case`: its variable names and keywords are case-insensitive
    # (conda's own PowerShell activator writes `$Env:X = ...`)
    assigns: Optional[str] = None
    fold_case: bool = False
    # how `use` names the shells that run these hooks (shell names only, so a translated sentence carries it as is)
    shown: str = ""

    def __post_init__(self):
        object.__setattr__(self, "real", tuple(replace(r, hook=self.key) for r in self.real))

    @property
    def ext(self) -> str:
        return self.key

    def hooked(self, changes: "Changes") -> "Changes":
        """The part of a switch's changes its hooks make (`lists`)."""
        if self.lists is None:
            return changes
        return replace(changes, scalars=dict(changes.scalars),
                       prepend={var: changes.prepend.get(var, []) for var in self.lists})

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
        return [f for f in (self.snippet, self.reconciler, *(st.completion_script for st in self.init)) if f]

    def program_names(self) -> List[str]:
        """Every program name of a shell that reads this language (its `init` names, their aliases, `names`)."""
        return [n for st in self.init for n in (st.name, *st.aliases)] + list(self.names)

    def rc_file(self, program: str) -> Optional[str]:
        """The startup file (`~/...`) the program `program` of this shell reads in every interactive shell, or None."""
        own = dict(self.rc_files)
        if program in own:
            return own[program]
        st = next((st for st in self.init if st.name == program and st.under), None)
        return "~/" + "/".join(x for x in (st.base_default, st.under) if x) if st else None

    def paste_word(self, word: str) -> str:
        """`word` as one word of a command typed into this shell, bare when the shell reads it as it is."""
        return word if self.plain.fullmatch(word) else (self.paste or self.quote)(word)


def export_sh(shell: "Shell", var: str, value: str) -> str:
    return "export " + shell.paste_word(f"{var}={value}")


def export_fish(shell: "Shell", var: str, value: str) -> str:
    return " ".join(shell.paste_word(w) for w in ("set", "-gx", var, value))


def export_csh(shell: "Shell", var: str, value: str) -> str:
    return " ".join(shell.paste_word(w) for w in ("setenv", var, value))


# A value as a script writes it: quoted on one line, else a word. Each pattern is linear on any text: no two
# quantifiers next to each other match the same characters (a run of newlines or of letters is tried once per start,
# not once per way of splitting it), and a start is a fixed character or word.
ASSIGN_VALUE = r"""(?:"[^"\n]*"|'[^'\n]*'|[^\s;&|]+)"""


def assignment_patterns(names: Iterable[str]) -> List["re.Pattern[str]"]:
    """The patterns that find an assignment to one of `names` in an activate.d script: one per record that says how
    its scripts set a variable, in the records' order; the match's `var` group is the name as written."""
    alt = "(?P<var>" + "|".join(re.escape(n) for n in names) + ")"
    return [re.compile(sh.assigns.replace("{name}", alt), re.M | (re.I if sh.fold_case else 0))
            for sh in SHELLS.values() if sh.assigns]


# `[ -f X ] && . X` would leave the startup file's status 1 when X is gone
_SH_LOADS = "if [ -f {file} ]; then . {file}; fi"

_PS_ARGS = ("-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File")

# The execution policy's refusal, in markers PowerShell does not translate: the help topic and the error ids
# (a Chinese Windows prints "无法加载文件 …，因为在此系统上禁止运行脚本。…about_Execution_Policies。").
POLICY_MARKERS = ("about_Execution_Policies", "PSSecurityException", "UnauthorizedAccess")

# What ends or expands a PowerShell "..." string: the double quotes its tokenizer takes as quotes, typographic ones
# too (PowerShell/PowerShell, src/System.Management.Automation/engine/parser/CharTraits.cs, IsDoubleQuote), `$` and
# the backtick escape
PS_DOUBLE_QUOTED = '"\u201c\u201d\u201e$`'

# a batch file takes no '#' lines, and cmd.exe runs none at start: the wrapper is a file of its own. cmd reads it in
# the console code page, so it is written from cmd.exe itself (PowerShell 5.1's '>' writes UTF-16).
_CMD_NO_FILE = N_("cmd.exe has no startup file: save the output of 'cudaswitch init {shell}' as cs.bat in a folder on "
                  "PATH instead (in cmd.exe: cudaswitch init {shell} > cs.bat)")

SHELLS: Dict[str, Shell] = {
    "sh": Shell("sh", "posix", quote_sh, msys_on_windows=True, snippet="bash.sh", reconciler="reconcile.sh",
                init=(Startup("bash", under=".bashrc", loads=_SH_LOADS, ext="bash", completion="bash", completion_script="complete.bash",
                              starts=("bash", "-i", "-c")),  # bash and zsh read their rc file when interactive
                      Startup("zsh", under=".zshrc", base_var="ZDOTDIR", loads=_SH_LOADS, ext="zsh", completion="zsh",
                              completion_script="complete.zsh",
                              starts=("zsh", "-i", "-c"))),
                real=(RealShell("bash", "bash", ("--noprofile", "--norc"),
                                reads=(("bash_env", "BASH_ENV, read by every non-interactive bash"),)),
                      RealShell("zsh", "zsh", ("-f",), reads=(("zdotdir", "ZDOTDIR, the folder of zsh's startup files"),
                                                              ("zshenv", ".zshenv, read by every zsh"))),
                      RealShell("dash", "dash", (), reads=(("env", "ENV, read by sh and dash"),))),
                verify=verify_sh, names=("sh", "dash", "ksh", "ash"), export=export_sh,
                rc_files=(("ksh", "~/.kshrc"),), conda_export=CondaExport("sh (export PATH='...')", "'"),
                # X=..., export X=..., declare -x X=..., at a command's start
                assigns=r"(?:^|[;&|]|\bthen\b|\bdo\b|\belse\b)[ \t]*(?:(?:export|declare[ \t]+-x)[ \t]+)?{name}="
                        r"(?P<value>" + ASSIGN_VALUE + "?)", shown="sh/bash/zsh"),
    "fish": Shell("fish", "fish", quote_fish, snippet="fish.fish", reconciler="reconcile.fish",
                  init=(Startup("fish", under="fish/config.fish", base_var="XDG_CONFIG_HOME", base_default=".config",
                                loads="if test -f {file}; source {file}; end", ext="fish", completion="fish",
                                completion_script="complete.fish",
                                starts=("fish", "-c")),),
                  real=(RealShell("fish", "fish", ("--no-config",), dot_lists=("PATH",),
                                  reads=(("fish_conf_d", "fish's conf.d folders (XDG_CONFIG_HOME, XDG_DATA_DIRS)"),)),),
                  verify=verify_fish,
                  export=export_fish, conda_export=CondaExport('fish (set -gx PATH "...")', '"$\\'),
                  # set with flags that hold -x (-x, -gx, -xg...)
                  assigns=r"\bset[ \t]+-(?=[a-zA-Z]*x)[a-zA-Z]+[ \t]+{name}[ \t]+(?P<value>" + ASSIGN_VALUE + ")",
                  shown="fish"),
    "csh": Shell("csh", "csh", quote_csh, snippet="tcsh.csh", reconciler="reconcile.csh", reconciler_from_precmd=True,
                 eval_one_line=True, init=(Startup("tcsh", aliases=("csh",), under=".tcshrc", loads="if ( -f {file} ) source {file}",
                              ext="tcsh", starts=("tcsh", "-c")),),
                 real=(RealShell("tcsh", "tcsh", ("-f",), dot_lists=("PATH", "LD_LIBRARY_PATH"),
                                 reads=(("tcshrc", ".tcshrc and .cshrc, read by tcsh"),)),), verify=verify_csh,
                 export=export_csh, rc_files=(("csh", "~/.cshrc"),),
                 conda_export=CondaExport('csh (setenv PATH "...")', '"$`'),
                 assigns=r"\bsetenv\s+{name}\s+(?P<value>" + ASSIGN_VALUE + ")", shown="csh"),
    # Windows shells: cmd.exe reads each line in the console code page, so the file is ASCII with CRLF (HC1, HC2);
    # it has no prompt hook, so no reconciler, and no startup file. It runs with /d (no AutoRun) and /v:off: delayed
    # expansion off whatever the registry says, as conda's own cmd activation needs it; the hook's handling of
    # delayed expansion is tested on its own (tests/switching/test_hooks_cmd.py).
    "bat": Shell("bat", "cmd.exe", quote_bat, newline="\r\n", encoding="ascii", values=values_bat, lib=False,
                 cannot_express=bat_problem, unsupported="unsupported.bat", snippet="cmd.bat", init=(Startup("cmd", no_file=_CMD_NO_FILE),),
                 real=(RealShell("cmd.exe", "cmd", ("/d", "/v:off", "/c"), windows=True, empty_is_unset=True),),
                 verify=verify_bat, dump="set", plain=PLAIN_WINDOWS, paste=paste_cmd,
                 # its hooks prepend to PATH only, in their own spelling, and leave PATH alone near the line limit
                 lists=("PATH",), spelling=bat_spelling, own_record=bat_own_record, runs_inside=("ps1",),
                 gives_up="PATH left as it is", setx=N_("in cmd.exe: {command}"),
                 # set X=... and set "X=...": the value is the rest of the line, up to the closing quote
                 assigns=r"""\bset\s+"?{name}=(?P<value>[^"\r\n]*)""", fold_case=True, shown="cmd.exe"),
    # Windows PowerShell 5.1 reads a BOM-less file as the ANSI code page, so non-ASCII needs the BOM.
    "ps1": Shell("ps1", "powershell", quote_ps1, newline="\n", encoding="utf-8-sig", list_sep=", ", lib=False,
                 snippet="powershell.ps1", reconciler="reconcile.ps1",
                 init=(Startup("powershell", aliases=("pwsh",), ext="ps1", completion="powershell",
                               completion_script="complete.ps1",
                                   loads="if (Test-Path -LiteralPath {file}) {{ . {file} }}",
                               # as `conda init powershell` finds them: pwsh 7 reads Documents\PowerShell, Windows
                               # PowerShell 5.1 (the Anaconda PowerShell Prompt) Documents\WindowsPowerShell
                               profile="profile.ps1", editions=(Edition("pwsh", "PowerShell"),
                                                                Edition("powershell", "WindowsPowerShell", ships=True)),
                               ask=("-NoLogo", "-NoProfile", "-NonInteractive", "-Command",
                                    "$PROFILE.CurrentUserAllHosts"),
                               base_var="XDG_CONFIG_HOME", base_default=".config", profile_dir="powershell"),),
                 real=(RealShell("pwsh", "pwsh", _PS_ARGS),
                       RealShell("Windows PowerShell", "powershell", _PS_ARGS, windows=True, empty_is_unset=True),
                       RealShell("pwsh", "pwsh", _PS_ARGS, windows=True)),
                 verify=verify_ps1, dump="json", plain=PLAIN_WINDOWS, call="& ", runs_inside=("bat",),
                 session_vars=("PSExecutionPolicyPreference", "POWERSHELL_DISTRIBUTION_CHANNEL"),
                 # pwsh before 7.5 (.NET 9) deletes a variable set to '', as Windows PowerShell 5.1 does
                 refusal=POLICY_MARKERS, refusal_note=M("its execution policy lets no script run"),
                 empty_below=(7, 5), setx=N_("in PowerShell: {command}"),
                 conda_export=CondaExport('PowerShell ($Env:PATH = "...")', PS_DOUBLE_QUOTED, windows=True),
                 assigns=r"\$env:{name}\s*=\s*(?P<value>" + ASSIGN_VALUE + ")", fold_case=True,
                 shown="PowerShell"),
}

# the shell assumed where none is named, as conda assumes sh's activate.d scripts
POSIX_DEFAULT = "sh"

# The real programs that run the hooks, in the records' order (switching/verify.py checks each present one)
REAL_SHELLS: Tuple[RealShell, ...] = tuple(r for sh in SHELLS.values() for r in sh.real)

# `cudaswitch init NAME` (and the names `$SHELL` may carry) -> (hook shell, startup record)
INIT_SHELLS: Dict[str, Tuple[Shell, Startup]] = {s.name: (sh, s) for sh in SHELLS.values() for s in sh.init}


def init_shell(name: Optional[str]) -> Optional[Tuple[Shell, Startup]]:
    """The init shell a name stands for (its own name or an alias), or None."""
    for sh, st in INIT_SHELLS.values():
        if name == st.name or name in st.aliases:
            return sh, st
    return None


def named(name: Optional[str]) -> Optional[Shell]:
    """The record of a shell program's name or path (`/usr/bin/fish`, `pwsh.exe`, `tcsh`), None when unknown."""
    if not name:
        return None
    base = re.split(r"[\\/]", name.strip())[-1].lower()
    base = base[:-4] if base.endswith(".exe") else base
    return next((sh for sh in SHELLS.values() if base in sh.program_names()), None)


def windows_shells() -> List[Shell]:
    """The records of the shells that run on Windows (cmd.exe's and PowerShell's), in the records' order."""
    return [sh for sh in SHELLS.values() if any(r.windows for r in sh.real)]


def session_shell(environ: Mapping[str, str], windows: bool) -> Shell:
    """The record of the shell this process was started from: on Windows the one whose `session_vars` are set, else
    the Windows shell without such variables (cmd.exe); elsewhere the one `$SHELL` names, else POSIX_DEFAULT's."""
    if windows:
        kinds = windows_shells()
        return next((sh for sh in kinds if any(environ.get(v) for v in sh.session_vars)),
                    next(sh for sh in kinds if not sh.session_vars))
    return named(environ.get("SHELL")) or SHELLS[POSIX_DEFAULT]
