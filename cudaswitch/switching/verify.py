"""Run the hooks `use` wrote in every real shell of their kind on this machine before calling them good.

A hook is a program in another language; the only proof it does what the plan says is to run it where it will run.
For each shell present (bash, zsh, dash, fish, tcsh, pwsh; on Windows cmd.exe, Windows PowerShell, pwsh) one fresh
non-interactive process without the user's startup files sources the activate hook the way conda does (inside a
function where the shell has them; CALL for cmd.exe), from the start the smoke test uses (conda has activated the
environment), and reports its environment; then, in the same process, PATH and CONDA_PREFIX are set as `conda
deactivate` leaves them and the deactivate hook runs. What each step left (PATH, LD_LIBRARY_PATH, CUDA_PATH,
CUDA_HOME and every `_CUDASWITCH_*` record) is compared entry for entry with the plan (`activation.activated`,
`activation.deactivated`). The shells run in parallel. docs/guide/verification.md says what is checked where.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from cudaswitch.core import trust
from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import Listed, M
from cudaswitch.core.shells import REAL_SHELLS, SHELLS, RealShell, Shell, VerifyRun
from cudaswitch.switching import hookfiles
from cudaswitch.switching.activation import LISTS, RECORD, Changes, activated, conda_activated, deactivated

MARK = "__CUDASWITCH_STATE__"
# PowerShell's version, printed by the driver first: an empty value deletes the variable before pwsh 7.5 (.NET 9) and
# in Windows PowerShell 5.1, so which of the two the plan is compared with is the running one's, not the name's
PSVERSION = "__CUDASWITCH_PSVERSION__"
# The dump: the shell's exported environment as JSON, from a child Python (only exported variables count). No
# double quote, `%`, `!` or `^` in it, so every shell (and Windows PowerShell 5.1's native argument passing, which
# mangles embedded double quotes) hands it over unchanged.
_DUMP = "import os,json;print();print('" + MARK + "'+json.dumps(dict(os.environ)))"
# Where the system's `env` is, it dumps instead (NUL-separated, so any value survives), at a fraction of a Python
# start: most of what a check costs is its two dumps.
ENV_PROGRAMS = ("/usr/bin/env", "/bin/env")


def env_program() -> Optional[str]:
    for path in ENV_PROGRAMS:
        if os.path.isfile(path) and os.access(path, os.X_OK) and not trust.executable_problem(Path(path)):
            return path
    return None
TIMEOUT = 60.0


# The programs that run each kind of hook, from the shell records (core/shells.py, `Shell.real`)
LINUX_SHELLS = tuple(r for r in REAL_SHELLS if not r.windows)
WINDOWS_SHELLS = tuple(r for r in REAL_SHELLS if r.windows)


@dataclass
class Difference:
    phase: str  # "activate" or "deactivate"
    var: str
    want: Optional[str]
    got: Optional[str]
    detail: str  # which entry, in words


@dataclass
class ShellCheck:
    shell: str
    hook: str
    status: str  # "ok", "differs", "failed", "skipped", "not installed", "refused"
    differences: List[Difference] = field(default_factory=list)
    note: Optional[str] = None  # why it failed, was skipped or refused; a warning the hook printed
    environ: Optional[Dict[str, str]] = None  # what the activate hook left (the whole exported environment)
    seconds: float = 0.0


@dataclass
class Verification:
    checks: List[ShellCheck]
    removed: List[Path] = field(default_factory=list)  # hook files taken away because a shell disagreed

    @property
    def bad(self) -> List[ShellCheck]:
        return [c for c in self.checks if c.status in ("differs", "failed")]

    @property
    def ok(self) -> bool:
        return not self.bad

    def environ(self) -> Optional[Dict[str, str]]:
        """The environment the first verified shell's activate hook left; else the first that ran at all (so the
        smoke test sees what a broken hook does); None when no shell ran."""
        for status in ("ok", "differs"):
            for c in self.checks:
                if c.status == status and c.environ is not None:
                    return dict(c.environ)
        return None


# ---- the plan ----------------------------------------------------------------------------------------------------

def start_state(environ: Mapping[str, str], prefix: str, name: str, system) -> Dict[str, str]:
    """Where the check starts, as the smoke test does: this process's environment without an earlier cudaswitch
    switch (its records and our one copy of each recorded entry), then `conda activate PREFIX`."""
    base = {k: v for k, v in deactivated(environ, system.pathsep, None).items() if not k.startswith(RECORD)}
    start = conda_activated(base, prefix, system)
    start["CONDA_DEFAULT_ENV"] = name
    return start


def conda_deactivated(environ: Mapping[str, str], conda_dirs: Sequence[str], sep: str) -> Dict[str, str]:
    """What `conda deactivate` does before the deactivate hook runs: the env's folders off PATH, CONDA_PREFIX
    gone."""
    out = dict(environ)
    out["PATH"] = sep.join(e for e in (environ.get("PATH") or "").split(sep) if e not in conda_dirs)
    out.pop("CONDA_PREFIX", None)
    return out


def conda_dirs(prefix: str, system) -> List[str]:
    """The folders `conda activate PREFIX` puts in front of PATH."""
    return system.split_list(conda_activated({"PATH": ""}, prefix, system)["PATH"])


def _planned(record: Shell, changes: Changes, start: Mapping[str, str], sep: str,
             empty_is_unset: bool) -> Dict[str, str]:
    """What the hooks of `record` leave after activation in `start`, as its record says they work (core/shells.py:
    the lists they prepend to, their spelling, the earlier records they can take out)."""
    rec = start.get(f"{RECORD}ADDED_PATH")
    if rec and record.own_record and not record.own_record(rec):
        start = {k: v for k, v in start.items() if k != f"{RECORD}ADDED_PATH"}
    return _untouched(record, start, activated(start, record.hooked(changes), sep, empty_is_unset, record.spelling),
                      empty_is_unset)


def _untouched(record: Shell, before: Mapping[str, str], after: Mapping[str, str],
               empty_is_unset: bool) -> Dict[str, str]:
    """`after` with each list the record's hooks never touch (one not in its `lists`), and that list's records, as
    they were `before`: cmd.exe's hooks neither prepend to LD_LIBRARY_PATH nor take an earlier hook's entries off
    it."""
    out = dict(after)
    for var in LISTS:
        if record.lists is None or var in record.lists:
            continue
        for name in (var, f"{RECORD}ADDED_{var}", f"{RECORD}UNSET_{var}"):
            value = before.get(name)
            if value is None or (empty_is_unset and value == ""):
                out.pop(name, None)
            else:
                out[name] = value
    return out


def plan_for(shell: RealShell, changes: Changes, start: Mapping[str, str]) -> Dict[str, str]:
    return _planned(SHELLS[shell.hook], changes, start, shell.sep, shell.empty_is_unset)


def with_other_windows_records(shell: RealShell, changes: Changes, start: Mapping[str, str]) -> Dict[str, str]:
    """Where a Windows shell's check starts: as if the hooks of the shells it runs inside of (its record's
    `runs_inside`) had run first for the same switch: cmd.exe runs inside a PowerShell session more often than not
    (`conda run`, a build `.bat`, typing `cmd`), and PowerShell inside cmd.exe. Such a shell may hold an empty
    variable unless none of its Windows programs can."""
    out = dict(start)
    if not shell.windows:
        return out
    for key in SHELLS[shell.hook].runs_inside:
        other = SHELLS[key]
        empty_is_unset = all(r.empty_is_unset for r in other.real if r.windows)
        out = _planned(other, changes, out, shell.sep, empty_is_unset)
    return out


# ---- one shell -----------------------------------------------------------------------------------------------------

def _keys(*envs: Mapping[str, str]) -> List[str]:
    keys = {"PATH", "LD_LIBRARY_PATH", "CUDA_PATH", "CUDA_HOME"}
    for e in envs:
        keys |= {k for k in e if k.upper().startswith(RECORD)}
    return sorted(keys)


def _norm(environ: Mapping[str, str], windows: bool, empty_is_unset: bool, dot_lists=(), sep=":") -> Dict[str, str]:
    out = {(k.upper() if windows else k): v for k, v in environ.items()}
    for k in dot_lists:  # these shells cannot tell a list holding one empty element from '': both count as '.'
        if out.get(k) is not None:
            out[k] = sep.join(e or "." for e in out[k].split(sep))
    return {k: v for k, v in out.items() if not (empty_is_unset and v == "")}


def compare(phase: str, want: Mapping[str, str], got: Mapping[str, str], shell: RealShell) -> List[Difference]:
    """Entry for entry: every compared variable of `want` against `got`, as `shell` holds them (its separator,
    Windows' case-blind names, whether it can hold an empty variable, the lists it spells '' as '.')."""
    sep = shell.sep
    w = _norm(want, shell.windows, shell.empty_is_unset, shell.dot_lists, sep)
    g = _norm(got, shell.windows, shell.empty_is_unset, shell.dot_lists, sep)
    out = []
    for key in _keys(w, g):
        a, b = w.get(key), g.get(key)
        if a != b:
            out.append(Difference(phase, key, a, b, _detail(key, a, b, sep)))
    return out


def _detail(var: str, want: Optional[str], got: Optional[str], sep: str) -> str:
    if want is None:
        return M("{var} is set to {got!r}, which the switch does not set", var=var, got=got)
    if got is None:
        return M("{var} is unset, expected {want!r}", var=var, want=want)
    if var.upper() not in LISTS and not var.upper().startswith(f"{RECORD}ADDED_"):
        return M("{var} is {got!r}, expected {want!r}", var=var, got=got, want=want)
    a, b = want.split(sep), got.split(sep)
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return M("{var} entry {n} is {got!r}, expected {want!r}", var=var, n=i + 1, got=y, want=x)
    if len(b) > len(a):
        return M("{var} has {count} more entries than expected, from {extra!r}", var=var, count=len(b) - len(a),
                 extra=b[len(a)])
    return M("{var} lacks {count} expected entries, from {missing!r}", var=var, count=len(a) - len(b),
             missing=a[len(b)])


def driver(shell: RealShell, act: str, deact: str, python: str, start: Mapping[str, str],
           after: Mapping[str, str], envprog: Optional[str] = None,
           codepage: Optional[int] = None) -> Tuple[str, bytes]:
    """(file extension, bytes) of the script one shell runs, as its record's `verify` writes it (core/shells.py,
    VerifyRun): activate as conda runs it, dump, leave PATH and CONDA_PREFIX as `conda deactivate` does,
    deactivate, dump. The start is the shell's environment; cmd.exe's script also sets it (wine does not hand PATH
    over from the process). `envprog`: the system's `env`, which dumps with `-0`; else a Python child dumps JSON.
    `codepage`: the one cmd.exe reads the batch file in; None: ASCII only."""
    record = SHELLS.get(shell.hook)
    if record is None or record.verify is None:  # a record without its driver: never run as another shell's script
        raise ValueError(f"no verification driver for the {shell.hook!r} hooks ({shell.name})")
    keys = {x.upper() for x in _keys(start)} | {"CONDA_PREFIX"}
    run = VerifyRun(act=act, deact=deact, path=after.get("PATH") or "", sep=shell.sep,
                    python=python, dump=_DUMP, mark=MARK, psversion=PSVERSION, env0=envprog,
                    preset=tuple((k, v) for k, v in start.items() if k.upper() in keys),
                    codec=codec(codepage) if codepage else None)
    return record.ext, record.verify(run)


def _states(out: str, cmd: bool, nul: bool = False) -> List[Dict[str, str]]:
    chunks = out.split(MARK)[1:]
    if nul:  # `env -0` right after the marker line: NAME=VALUE, each ended by a NUL
        return [dict(e.split("=", 1) for e in c[1:].split("\0")[:-1] if "=" in e) for c in chunks]
    if not cmd:
        return [trust.parse_json(c.splitlines()[0], "the shell's environment") for c in chunks if c.strip()]
    states = []
    for chunk in chunks:
        lines = chunk.replace("\r", "").splitlines()[1:]
        states.append(dict(ln.split("=", 1) for ln in lines if "=" in ln and not ln.startswith("=")))
    return states


Runner = Callable[..., "subprocess.CompletedProcess[bytes]"]

# ---- code pages ----------------------------------------------------------------------------------------------------
# cmd.exe reads a batch file's bytes in the console's code page and writes `set`/`echo` to a pipe in it (936 on a
# Chinese Windows, 850 or 437 in the West, 65001 after `chcp 65001`), not in the ANSI code page and not in UTF-8;
# PowerShell writes its errors to a pipe in [Console]::OutputEncoding, the same code page. A child started without a
# console gets a new one, in the OEM code page.


def console_code_pages() -> Tuple[int, int]:
    """(the code page a cmd.exe child reads a batch file in, the one its output comes back in) on this machine:
    both the console's. Not on Windows: UTF-8 (no cmd.exe runs)."""
    if sys.platform != "win32":
        return 65001, 65001
    import ctypes

    k32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
    cp = int(k32.GetConsoleOutputCP()) or int(k32.GetOEMCP())
    return cp, cp


def codec(codepage: int) -> str:
    """Python's codec for a Windows code page; UTF-8 for one Python does not know (its output is then read with
    replacement characters, and a check that depends on it disagrees rather than passes)."""
    import codecs

    name = "utf-8" if codepage == 65001 else f"cp{codepage}"
    try:
        return codecs.lookup(name).name
    except LookupError:
        return "utf-8"


def _run_bytes(argv, env, timeout):
    """A shell run through trust's door, its output kept as bytes (a hook's values are decoded by the caller), from
    the root folder: the dump's Python (`-I` too) then finds no module of the caller's working folder."""
    return trust.run_program(argv, timeout, env=env, text=False, cwd=os.path.abspath(os.sep))


STARTUP_FILE_VARIABLES = ("BASH_ENV", "ENV")


def check_shell(shell: RealShell, program: str, prefix: str, changes: Changes, start: Dict[str, str],
                dirs: Sequence[str], folder: Path, python: str = sys.executable,
                run: Runner = None, spell: Callable[[str], str] = str, launcher: Sequence[str] = (),
                timeout: float = TIMEOUT, codepages: Optional[Tuple[int, int]] = None,
                copies: Optional[Tuple[Path, Path]] = None) -> ShellCheck:
    """Run one shell (see the module's doc); `spell` gives a path as that shell writes it (wine: `Z:\\...`),
    `launcher` what starts it (wine), `codepages` (script, output) as console_code_pages() gives them, `copies` the
    hooks' private copies where the caller made them already (_private_copies)."""
    run = run or _run_bytes
    script_cp, out_cp = codepages or (console_code_pages() if shell.windows else (65001, 65001))
    from cudaswitch.core.fsutil import atomic_write

    t0 = time.perf_counter()
    record = SHELLS[shell.hook]
    if record.cannot_express and record.cannot_express(changes):
        return ShellCheck(shell.name, shell.hook, "skipped", note=record.cannot_express(changes))
    sep = shell.sep
    given, start = start, with_other_windows_records(shell, changes, start)
    # a non-interactive bash sources $BASH_ENV before the script (and sh its $ENV, interactive or not in some
    # builds): the file someone named there would run inside the check, as whoever runs it. The hooks never read
    # them, so the check runs without.
    start = {k: v for k, v in start.items() if k not in STARTUP_FILE_VARIABLES}
    try:
        act, deact = (spell(str(p)) for p in copies or _private_copies(prefix, record, folder, shell.program))
    except (OSError, CudaswitchError) as exc:
        return ShellCheck(shell.name, shell.hook, "failed", note=M("its hooks could not be read: {why}",
                                                                   why=getattr(exc, "strerror", None) or exc))
    plan = plan_for(shell, changes, start)
    after_conda = conda_deactivated(plan, dirs, sep)
    envprog = env_program() if record.dump == "env" else None
    try:
        ext, data = driver(shell, act, deact, python, start, after_conda, envprog, script_cp)
    except UnicodeEncodeError:  # a value this console's code page cannot hold: cmd could not be handed it
        return ShellCheck(shell.name, shell.hook, "skipped", note=M("a value cannot be written in this console's "
                                                                    "code page"))
    script = folder / f"verify-{shell.program}.{ext}"
    atomic_write(script, data)
    try:
        proc = run([*launcher, program, *shell.args, spell(str(script))], env=start, timeout=timeout)
    except subprocess.TimeoutExpired:
        return ShellCheck(shell.name, shell.hook, "failed", note=M("it did not finish within {seconds} s",
                                                                   seconds=int(timeout)),
                          seconds=time.perf_counter() - t0)
    except OSError as exc:
        return ShellCheck(shell.name, shell.hook, "failed", note=M("it could not be started: {why}",
                                                                   why=exc.strerror or exc))
    seconds = time.perf_counter() - t0
    out = proc.stdout.decode(codec(out_cp), "replace")
    err = proc.stderr.decode(codec(out_cp), "replace").strip()
    states = _states(out, record.dump == "set", nul=envprog is not None)
    if not states and any(m in err for m in record.refusal):
        # the shell refused every script (PowerShell's execution policy, conda's own hooks included): nothing ran
        return ShellCheck(shell.name, shell.hook, "skipped", seconds=seconds, note=record.refusal_note)
    if len(states) != 2:
        last = (err or out).strip().splitlines()[-1:] or [""]
        return ShellCheck(shell.name, shell.hook, "failed", seconds=seconds,
                          note=M("it exited with {code} before the hooks had run: {last}", code=proc.returncode,
                                 last=last[0][:200]))
    got_act, got_deact = states
    version = re.search(PSVERSION + r" (\d+)\.(\d+)", out) if record.empty_below else None
    if version and (int(version.group(1)), int(version.group(2))) < record.empty_below and not shell.empty_is_unset:
        shell = replace(shell, empty_is_unset=True)
        plan = plan_for(shell, changes, start)
        after_conda = conda_deactivated(plan, dirs, sep)
    warning = next((ln for ln in (err + "\n" + out).splitlines() if ln.startswith("cudaswitch: warning:")), None)
    diffs = compare("activate", plan, got_act, shell)
    if diffs and record.gives_up and warning and record.gives_up in warning and \
            not compare("activate", start, got_act, shell):
        # the hook left everything as it was and said why (cmd.exe's: PATH near the line limit): its own decision
        return ShellCheck(shell.name, shell.hook, "skipped", note=warning, environ=_merged(given, got_act),
                          seconds=seconds)
    own = next((d for d in dirs if d.endswith("\\Library\\bin" if shell.windows else "/bin")), None)
    want_back = _untouched(record, after_conda, deactivated(after_conda, sep, own, shell.empty_is_unset),
                           shell.empty_is_unset)
    diffs += compare("deactivate", want_back, got_deact, shell)
    return ShellCheck(shell.name, shell.hook, "differs" if diffs else "ok", diffs, warning,
                      _merged(given, got_act), seconds)


def _private_copies(prefix: str, record, folder: Path, tag: str) -> Tuple[Path, Path]:
    """The activate and deactivate hooks of one kind, copied into the check's own folder (0700, the checker's),
    which is what the shell runs: whoever may write the environment's hook folders could swap a hook between
    `use` writing it and the shell sourcing it, and have that run in the checker's shells."""
    from cudaswitch.core.fsutil import atomic_write

    copies = []
    for direction in ("activate", "deactivate"):
        where = hookfiles.hook_path(prefix, direction, record)
        if trust.POSIX:  # through the folders without following a link, as use wrote them
            fd = trust.open_dir(Path(prefix), where.parent.relative_to(prefix).parts)
            try:
                data = trust.read_regular(fd, where.name, limit=trust.READ_LIMIT)
            finally:
                os.close(fd)
        else:
            data = trust.read_bytes(where)
        if data is None:
            raise CudaswitchError(M("{path} is not a regular file", path=where))
        copy = folder / f"{tag}-{direction}.{record.ext}"
        atomic_write(copy, data)
        copies.append(copy)
    return copies[0], copies[1]


def _merged(start: Mapping[str, str], got: Mapping[str, str]) -> Dict[str, str]:
    """The start with what the hook changed, as the real shell exported it (its own SHLVL, PWD, _ left out)."""
    out = dict(start)
    upper = {k.upper(): k for k in out}
    for key in _keys(start, got):
        real = next((v for k, v in got.items() if k.upper() == key.upper()), None)
        name = upper.get(key.upper(), key)
        if real is None:
            out.pop(name, None)
        else:
            out[name] = real
    return out


# ---- every shell -----------------------------------------------------------------------------------------------

def shells_here(system, table: Optional[Sequence[RealShell]] = None):
    """([(shell, program path)], [shells not installed]) for this machine."""
    table = table if table is not None else (WINDOWS_SHELLS if system.windows else LINUX_SHELLS)
    present, missing = [], []
    for sh in table:
        found = system.which(sh.program)
        (present.append((sh, str(system.local(found)))) if found else missing.append(sh))
    return present, missing


def verify(prefix: str, changes: Changes, start: Dict[str, str], dirs: Sequence[str],
           shells: Sequence[Tuple[RealShell, str]], missing: Sequence[RealShell] = (), **kw) -> Verification:
    """Every present shell in parallel, one process each; `dirs`: the folders conda put on PATH for the env. The
    hooks of a kind any shell disagreed with are removed."""

    slots: List[Optional[ShellCheck]] = [None] * len(shells)
    try:
        folder = trust.private_temp_dir("cudaswitch-verify-")
    except OSError as exc:
        return Verification([ShellCheck(sh.name, sh.hook, "skipped", note=M("no temporary folder: {why}",
                                                                            why=exc.strerror or exc))
                             for sh, _ in shells] + [ShellCheck(sh.name, sh.hook, "not installed") for sh in missing])
    with folder as tmp:
        # every shell's hooks copied before the first shell starts: what one shell runs must not be read while
        # another already runs (a hook swapped in that window would be the next shell's); one that cannot be read
        # is read again, and reported, by check_shell
        copies = {}
        for i, (sh, _program) in enumerate(shells):
            try:
                copies[i] = _private_copies(prefix, SHELLS[sh.hook], Path(tmp), sh.program)
            except (OSError, CudaswitchError):
                pass
        with ThreadPoolExecutor(max_workers=max(1, len(shells))) as pool:
            futures = {}
            for i, (sh, program) in enumerate(shells):
                why = trust.executable_problem(Path(program))
                if why:
                    slots[i] = ShellCheck(sh.name, sh.hook, "refused", note=M("{program} {why}", program=program,
                                                                             why=why))
                else:
                    futures[i] = pool.submit(check_shell, sh, program, prefix, changes, start, dirs, Path(tmp),
                                             copies=copies.get(i), **kw)
            for i, fut in futures.items():
                slots[i] = fut.result()
    result = Verification([c for c in slots if c is not None] +
                          [ShellCheck(sh.name, sh.hook, "not installed") for sh in missing])
    for key in sorted({c.hook for c in result.bad}):
        result.removed += hookfiles.remove_shell_hooks(prefix, key)
    return result


def verify_use(env, changes: Changes, system, **kw) -> Verification:
    """`use`'s check of the hooks it has just written into `env`, in the shells of this machine."""
    present, missing = shells_here(system)
    start = start_state(system.environ, env.prefix, env.name, system)
    return verify(env.prefix, changes, start, conda_dirs(env.prefix, system), present, missing, **kw)


# ---- what `use` says ---------------------------------------------------------------------------------------------

def report_lines(result: Verification) -> Tuple[List[str], List[str]]:
    """(lines for stdout, error lines for stderr), each a message to translate."""
    out, err = [], []
    ok = [c.shell for c in result.checks if c.status == "ok"]
    if ok:
        out.append(M("Hooks run in {shells}: each left what the switch plans, and deactivating gave back the "
                     "start.", shells=Listed(ok)))
    for c in result.checks:
        if c.status == "skipped":
            out.append(M("{shell}: not checked: {why}", shell=c.shell, why=c.note))
        elif c.status == "refused":
            out.append(M("{shell}: not run: {why}", shell=c.shell, why=c.note))
    missing = [c.shell for c in result.checks if c.status == "not installed"]
    if missing:
        out.append(M("Not checked (not installed here): {shells}.", shells=Listed(missing)))
    for c in result.bad:
        if c.status == "failed":
            err.append(M("the {ext} hook failed in {shell}: {why}", ext=c.hook, shell=c.shell, why=c.note))
        firsts = {}
        for d in c.differences:
            firsts.setdefault(d.phase, d)  # the first difference of each step: the rest follow from it
        for d in firsts.values():
            err.append(M("the {ext} hook disagrees with the switch in {shell} after activation: {detail}", ext=c.hook,
                         shell=c.shell, detail=d.detail) if d.phase == "activate" else
                       M("the {ext} hook disagrees with the switch in {shell} after deactivation: {detail}",
                         ext=c.hook, shell=c.shell, detail=d.detail))
    if result.removed:
        err.append(M("removed {files}: a hook that does not do what the switch plans is not left in place; the "
                     "other shells' hooks stay; report this with the lines above",
                     files=Listed(str(p) for p in result.removed)))
    return out, err
