"""Command line: parses, calls the core modules, prints. No logic of its own."""

from __future__ import annotations

import errno
import functools
import os
import sys

import click

from cudaswitch import __version__
from cudaswitch.core.errors import CudaswitchError

JSON_SCHEMA = 1


def _fail(message: str, code: int) -> None:
    import re

    from cudaswitch.cli.output import error_line, printable

    try:
        # translated first (a marked message keeps its template), then one line: a path's own spaces stay as they
        # are; control characters are shown, not sent
        click.echo(printable(re.sub(r"\s*[\r\n]+\s*", " ", error_line(message))), err=True)
    except OSError:
        pass  # stderr is gone too; the exit code still says it
    sys.exit(code)


def _silence_stdout() -> None:
    """After stdout failed (reader gone, disk full), point it at /dev/null so that the interpreter's final flush of
    what is still buffered neither fails again nor prints 'Exception ignored'."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (tests capture it): nothing will be flushed at exit


# Failures of the machine or of the user's rights, not of cudaswitch: one line naming the file, like every error.
_ENVIRONMENT_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EIO}


def _os_error_line(exc: OSError) -> str:
    what = exc.strerror or str(exc)
    if exc.filename is None:
        return f"cannot write the output: {what}"
    if exc.errno == errno.EROFS:
        return f"cannot write to {exc.filename}: it is on a read-only file system; nothing more was changed"
    return f"cannot use {exc.filename}: {what}"


def handle_errors(fn):
    """Expected failures become one line on stderr and an exit code; unexpected ones too, without a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except CudaswitchError as exc:
            _fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        except BrokenPipeError:  # `cudaswitch list | head`: the reader left; stop quietly, as other tools do
            _silence_stdout()
            sys.exit(141)
        except click.exceptions.Exit:
            raise
        except click.exceptions.Abort:  # "no", Ctrl-C or Ctrl-D at a question: the answer, not a failure
            _fail("aborted; nothing was changed", 1)
        except click.ClickException:
            raise
        except OSError as exc:
            if exc.errno not in _ENVIRONMENT_ERRNOS or os.environ.get("CUDASWITCH_DEBUG"):
                _internal(exc)
            if exc.filename is None:
                _silence_stdout()
            _fail(_os_error_line(exc), 1)
        except Exception as exc:  # a bug: still one line, the traceback only on request
            _internal(exc)

    return wrapper


def _internal(exc: BaseException) -> None:
    if os.environ.get("CUDASWITCH_DEBUG"):
        raise exc
    _fail(f"internal error: {type(exc).__name__}: {exc} (set CUDASWITCH_DEBUG=1 for the traceback)", 70)


def _system():
    from cudaswitch.core import system as system_mod

    system = system_mod.System.current()
    note = system.relocation_note()
    if note and not system_mod.QUIET_RELOCATION:
        click.echo(f"cudaswitch: note: {note}", err=True)
    return system


def _discover(system):
    from cudaswitch.discovery.toolkits import discover

    return discover(system)


def _warn(lines):
    from cudaswitch.cli.output import printable, warning_line

    for line in lines:
        click.echo(printable(warning_line(line)), err=True)


def _json_out(payload: dict) -> None:
    from cudaswitch.cli.output import to_json

    click.echo(to_json({"schema": JSON_SCHEMA, **payload}))


class _OneLineErrors(click.Group):
    """click's own usage errors (unknown option, bad value, missing argument) as one line like every other error,
    instead of click's three-line usage block."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        from cudaswitch.core.console import prepare

        prepare()
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            try:
                super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            except click.UsageError as exc:
                where = exc.ctx.command_path if exc.ctx is not None else "cudaswitch"
                _fail(f"{exc.format_message()} (see '{where} --help')", exc.exit_code)
            except click.exceptions.Abort:
                _fail("aborted; nothing was changed", 1)
            except click.ClickException as exc:
                _fail(exc.format_message(), exc.exit_code)
            except OSError as exc:  # click's own output (--help, --version) to a full disk or closed pipe
                if exc.errno not in _ENVIRONMENT_ERRNOS | {errno.EPIPE}:
                    raise
                _silence_stdout()
                if exc.errno == errno.EPIPE:
                    sys.exit(141)
                _fail(_os_error_line(OSError(exc.errno, exc.strerror)), 1)
        except SystemExit as done:
            code = done.code
        else:
            code = 0
        try:
            sys.stdout.flush()
        except OSError as exc:  # the last of the output did not reach a full disk: that is a failure to say
            _silence_stdout()
            if exc.errno == errno.EPIPE:
                sys.exit(141)
            _fail(_os_error_line(OSError(exc.errno, exc.strerror)), code or 1)
        sys.exit(code)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cudaswitch")
def main():
    """See, switch and verify the CUDA toolkit each conda environment uses."""


@main.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (schema in the README).")
@handle_errors
def list_cmd(as_json):
    """Every installed CUDA toolkit with its exact version."""
    from cudaswitch.discovery.shellstate import shell_state

    system = _system()
    found = _discover(system)
    state = shell_state(found.toolkits, system)
    if as_json:
        tks = []
        for tk in found.toolkits:
            d = tk.to_json()
            d["active"] = tk.root == state.active
            tks.append(d)
        _json_out({"toolkits": tks, "cudnn_installs": [c.to_json() for c in found.cudnn_installs],
                   "warnings": found.warnings, "errors": found.config_errors})
    else:
        from cudaswitch.cli.output import table

        rows = []
        for tk in found.toolkits:
            notes = list(tk.flags) + ([f"alias {', '.join(tk.aliases)}"] if tk.aliases else [])
            rows.append(["*" if tk.root == state.active else "", tk.version, tk.root, ", ".join(tk.sources),
                         "yes" if tk.nvcc else "no", tk.cudnn or "-", "; ".join(notes)])
        if rows:
            click.echo(table(["", "VERSION", "ROOT", "SOURCE", "NVCC", "CUDNN", "NOTES"], rows))
        else:
            click.echo("No CUDA toolkit found. Install one, or add its folder to CUDASWITCH_SEARCH_PATH.")
        _cudnn_installs_table(found.cudnn_installs)
        _warn(found.warnings)
    for err in found.config_errors:
        click.echo(f"cudaswitch: error: {err}", err=True)
    if found.config_errors:
        sys.exit(1)


def _cudnn_installs_table(installs):
    if installs:
        from cudaswitch.cli.output import table

        click.echo("\ncuDNN from NVIDIA's installer:")
        click.echo(table(["CUDNN", "FOR CUDA", "DLL FOLDER"],
                         [[c.version or "unknown", c.cuda, c.bin_dir if c.dll else f"{c.bin_dir} (no cudnn64_*.dll)"]
                          for c in installs]))


@main.command()
@click.argument("selector")
@click.option("--bin", "want_bin", is_flag=True, help="Print the bin folder(s).")
@click.option("--lib", "want_lib", is_flag=True, help="Print the library folder(s).")
@click.option("--nvcc", "want_nvcc", is_flag=True, help="Print the nvcc path.")
@handle_errors
def which(selector, want_bin, want_lib, want_nvcc):
    """Print the root (or bin, lib, nvcc) of the toolkit SELECTOR names, for scripts."""
    from cudaswitch.core.errors import CudaswitchError, UsageError
    from cudaswitch.discovery.toolkits import select

    asked = [w for w, on in (("bin", want_bin), ("lib", want_lib), ("nvcc", want_nvcc)) if on]
    if len(asked) > 1:  # one answer per call: a script reading the output cannot tell two lists apart
        raise UsageError(f"give one of --bin, --lib, --nvcc, not {' and '.join('--' + a for a in asked)}")
    what = asked[0] if asked else None

    system = _system()
    tk = select(_discover(system), selector, system)
    if what == "bin":
        lines = tk.bin_dirs
    elif what == "lib":
        lines = tk.lib_dirs
    elif what == "nvcc":
        if not tk.nvcc:
            raise CudaswitchError(f"CUDA {tk.version} at {tk.root} has no nvcc (flags: {', '.join(tk.flags)})")
        lines = [tk.nvcc]
    else:
        lines = [tk.root]
    for line in lines:
        click.echo(line)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@handle_errors
def status(as_json):
    """What this shell uses: CUDA_PATH, CUDA_HOME, nvcc, and the CUDA entries of PATH/LD_LIBRARY_PATH."""
    from cudaswitch.discovery.shellstate import shell_state

    system = _system()
    found = _discover(system)
    state = shell_state(found.toolkits, system)
    from cudaswitch.switching.hookfiles import env_report

    report = env_report(system)
    if as_json:
        from cudaswitch.cudnn.windows import dll_on_path

        _json_out({"shell": state.to_json(), "env": report, "warnings": found.warnings,
                   "cudnn_installs": [c.to_json() for c in found.cudnn_installs],
                   "cudnn_dll_on_path": dll_on_path(system) if system.windows else None})
        return
    from cudaswitch.cli.output import table

    rows = []
    for e in state.entries:
        where = f"{e.variable}[{e.position}]" if e.position is not None else e.variable
        mapped = f"CUDA {e.toolkit}" if e.toolkit else ("-" if e.value is None else "not a known toolkit")
        rows.append([where, "(unset)" if e.value is None else e.value, mapped])
    click.echo(table(["VARIABLE", "VALUE", "TOOLKIT"], rows))
    active = next((t for t in found.toolkits if t.root == state.active), None)
    click.echo(f"\nActive: CUDA {active.version} ({active.root})" if active else "\nActive: no CUDA toolkit")
    if system.windows:
        from cudaswitch.cudnn.windows import dll_on_path

        click.echo(f"cuDNN on PATH: {dll_on_path(system) or 'none (no cudnn64_*.dll in any PATH folder)'}")
        _cudnn_installs_table(found.cudnn_installs)
    if report:
        st = report["state"]
        click.echo(f"Environment {report['name']} ({report['prefix']}): " + (
            f"cudaswitch selects CUDA {st['version']} ({st['root']}), chosen with '{st['selector']}' at {st['time']}"
            if st else "not switched by cudaswitch"))
        gone = st and not system.local(st["root"]).is_dir()
        if gone:
            click.echo(f"warning: CUDA {st['version']} at {st['root']}, which this environment uses, is gone "
                       f"(TOOLKIT_MISSING); 'cudaswitch list' shows what is installed, 'cudaswitch use SELECTOR' "
                       f"switches to one of them")
        elif st and system.environ.get("CUDA_HOME") != st["root"]:
            from cudaswitch.switching.hookfiles import apply_now_hint

            click.echo(f"  not applied to this shell yet: "
                       f"{apply_now_hint(report['name'], report['prefix'], system.windows, system)}")
    for w in state.warnings + (_no_nvcc_note(active, system, system.environ.get("PATH")) if active else []):
        click.echo(f"warning: {w}")
    for entry in (report or {}).get("leftover_path", []):
        click.echo(f"warning: PATH still holds {entry}, added by a cudaswitch environment this shell switched away "
                   f"from (conda re-exports it, conda#14762); it goes when you deactivate back through that "
                   f"environment, or in a new shell")


_MAX_TIMEOUT = 7 * 24 * 3600.0  # beyond a week is "no limit" in all but name, and past what the OS timers take


def _seconds(ctx, param, value):
    """--timeout: positive seconds; 0, none or inf mean no limit; nan, negatives and words are refused."""
    import math

    if value is None:
        return value
    text = str(value).strip().lower()
    if text in ("0", "0.0", "none", "inf", "infinity", "+inf"):
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise click.BadParameter(f"{value!r} is not a positive number of seconds (0 or none: no limit)")
    if seconds > _MAX_TIMEOUT:
        raise click.BadParameter(f"{value!r} seconds is more than a week; give 0 or none for no limit")
    return seconds


# ---- per-environment switching (issue 3) ------------------------------------------------------------------------

def _env_options(fn):
    fn = click.option("-p", "--prefix", "prefix", metavar="PREFIX", help="The environment at this folder.")(fn)
    fn = click.option("-n", "--name", "name", metavar="NAME", help="The conda environment of this name.")(fn)
    return fn


@main.command()
@click.argument("selector", required=False)
@_env_options
@click.option("--ld-library-path/--no-ld-library-path", "ld_flag", default=None,
              help="Put the toolkit's lib folder on LD_LIBRARY_PATH (default: yes, unless pip CUDA wheels are installed).")
@click.option("--refresh", is_flag=True, help="Re-render the hooks from the recorded choice (after an upgrade).")
@click.option("-y", "--yes", is_flag=True, help="Do not ask before switching the base environment.")
@click.option("--no-smoke", is_flag=True, help="Skip the PyTorch smoke test after switching.")
@click.option("--cpu-ok", is_flag=True, help="Smoke test: no GPU is not a failure.")
@click.option("--timeout", default="180", show_default=True, callback=_seconds, metavar="SECONDS",
              help="Seconds the smoke test may take (0 or none: no limit).")
@click.option("--save", is_flag=False, flag_value="environment.yml", default=None, metavar="[FILE]",
              help="Also declare the toolkit in FILE's 'variables:' (default ./environment.yml).")
@click.option("--dry-run", is_flag=True, help="Say which toolkit it would use and why; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="With 'auto': the choice and its reasons as JSON (implies --dry-run).")
@handle_errors
def use(selector, name, prefix, ld_flag, refresh, yes, no_smoke, cpu_ok, timeout, save, dry_run=False,
        as_json=False):
    """Make a conda environment use the CUDA toolkit SELECTOR names, in every shell, from its next activation."""
    from cudaswitch.switching import hookfiles as hooks
    from cudaswitch.switching.activation import changes_for
    from cudaswitch.discovery.environment import read_state, resolve_env
    from cudaswitch.core.errors import UsageError
    from cudaswitch.discovery.toolkits import select

    system = _system()
    env = resolve_env(system, name, prefix, command=f"use {selector or 'SELECTOR'}")
    try:
        old = read_state(env)
    except CudaswitchError:
        if refresh:
            raise
        old = None  # a new choice replaces a broken state file
    if refresh:
        if selector:
            raise UsageError("give either SELECTOR or --refresh, not both")
        if old is None:
            raise UsageError(f"environment {env.name!r} has no cudaswitch choice to refresh; run 'cudaswitch use SELECTOR'")
        selector = old.root
        if ld_flag is None:
            ld_flag = old.ld_library_path
    declared = None
    if not selector and not refresh:
        from cudaswitch.switching.envfile import declared_selector

        selector, declared = declared_selector(env)
    chosen_with = selector  # the state file records 'auto', not the folder it resolved to
    if selector == "auto":
        selector = _use_auto(env, system, dry_run or as_json, as_json)
    if env.is_base and not yes and not dry_run:
        if not sys.stdin.isatty():
            raise UsageError("that is the base environment, which every shell starts in; add --yes to switch it anyway")
        click.confirm(f"Switch the base environment ({env.prefix}) to CUDA {selector}?", abort=True)
    found = _discover(system)
    if refresh:
        # the state file lies in the environment: its root is taken only if discovery finds that toolkit itself
        tk = next((t for t in found.toolkits if old.root in (t.root, *t.aliases)), None)
        if tk is None:
            raise CudaswitchError(f"{env.state_path} records {old.root!r}, which is not a toolkit cudaswitch finds "
                                  f"('cudaswitch list' shows them); choose again with 'cudaswitch use SELECTOR'; "
                                  f"nothing was changed")
    else:
        try:
            tk = select(found, selector, system)
        except UsageError as exc:
            if declared:
                from cudaswitch.switching.envfile import missing_declared

                raise missing_declared(exc, declared) from None
            raise
    if declared:
        click.echo(f"Using CUDA {selector}: {declared}.")
    saving = None
    if save:
        from cudaswitch.switching.envfile import plan_save

        saving = plan_save(save, tk)  # a file that is not an environment file stops here, before any change
    if not tk.bin_dirs:
        raise UsageError(f"CUDA {tk.version} at {tk.root} has no bin folder to put on PATH")
    if dry_run:
        click.echo(f"Would make environment {env.name} ({env.prefix}) use CUDA {tk.version} ({tk.root}); nothing written.")
        return
    ld, note = hooks.ld_choice(env.prefix, ld_flag)
    changes = changes_for(tk, system, ld_library_path=ld)
    written = hooks.switch(env, changes, tk, old.selector if refresh else chosen_with, old, system.windows)
    click.echo(f"Environment {env.name} ({env.prefix}) now uses CUDA {tk.version} ({tk.root}).")
    click.echo(f"  CUDA_PATH = CUDA_HOME = {tk.root}")
    for var, entries in changes.prepend.items():
        click.echo(f"  {var} gets {system.pathsep.join(entries)} in front")
    _warn(_no_nvcc_note(tk, system, system.pathsep.join(
        [*changes.prepend.get("PATH", []), *system.split_list(system.environ.get("PATH"))])))
    if note:
        click.echo(f"  {note}")
    problem = hooks.bat_problem(changes)
    if problem:
        _warn([f"cmd.exe cannot be switched to this toolkit ({problem}); its hook only prints a warning"])
    click.echo(f"Hooks for sh/bash/zsh, fish, csh, cmd.exe and PowerShell: {len(written)} files named "
               f"cudaswitch.* in {os.path.join(env.prefix, 'etc', 'conda')}{os.sep}{{activate,deactivate}}.d")
    from cudaswitch.switching.shellinit import reconciler_hint

    # once: on the environment's first switch, not on every later `use` or `--refresh`
    hint = reconciler_hint("powershell" if system.windows else os.environ.get("SHELL")) if old is None else None
    if hint:
        click.echo(hint)
    if saving:
        from cudaswitch.switching.envfile import VARIABLE, short_version, write_file

        if saving[2]:
            write_file(saving[0], saving[1])
        click.echo(f"{saving[0]}: {'now declares' if saving[2] else 'already declares'} "
                   f"variables: {VARIABLE}: \"{short_version(tk)}\"")
    if os.environ.get("CUDASWITCH_APPLIES") == "1":
        click.echo("Applied to this shell by the cudaswitch shell function.")
    else:
        click.echo(f"Takes effect at the next activation. To apply it to this shell now: "
                   f"{hooks.apply_now_hint(env.name, env.prefix, system.windows, system)}")
    if no_smoke:
        return
    from cudaswitch.checks.smoke import render, run_smoke

    # The switch stays whatever the smoke test finds: a failure is a diagnosis, not a reason to undo.
    report = run_smoke(env, system, timeout=timeout, cpu_ok=cpu_ok, toolkit=tk, ld_library_path=ld, progress=True)
    _record_smoke(env, report)
    click.echo("")
    for line in render(report):
        click.echo(line)
    if report.exit_code:
        click.echo("The switch is kept. Fix the cause above, then run 'cudaswitch smoke' to check again.")
    sys.exit(report.exit_code)


def _record_smoke(env, report):
    """Keep the result for `cudaswitch envs`; an environment the user may read but not write (a shared one) still
    gets its smoke test, only without the record."""
    from cudaswitch.discovery.environment import record_smoke

    if report.status != "skip":
        try:
            record_smoke(env, report.status, report.code)
        except (CudaswitchError, OSError):
            pass


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (schema in the README).")
@handle_errors
def envs(as_json):
    """Every conda environment: the toolkit cudaswitch switches it to, torch and its CUDA/cuDNN, pip CUDA wheels,
    the last smoke test. Read from files only."""
    from cudaswitch.discovery.envs_report import envs_report, table_rows
    from cudaswitch.cli.output import table

    report = envs_report(_system())
    if as_json:
        return _json_out(report)
    click.echo(table(["", "NAME", "PREFIX", "CUDA", "TORCH", "PIP CUDA", "SMOKE"], table_rows(report["envs"])))
    _warn(report["conda"]["problems"] + [p for r in report["envs"] for p in r["problems"]])


def _use_auto(env, system, dry_run, as_json):
    """`use auto`: print the choice (torch_aware.pick); the selector to switch to, or exit when there is none."""
    from cudaswitch.switching.torch_aware import pick_for_env

    auto = pick_for_env(env.prefix, f"environment {env.name} ({env.prefix})", _discover(system).toolkits)
    if as_json:
        _json_out({"auto": auto.to_json()})
        sys.exit(0 if auto.ok else 1)
    if not auto.ok:
        _fail(f"{auto.reason}; {auto.fix}", 1)
    click.echo(f"auto: {auto.reason}.")
    for line in auto.notes:
        click.echo(f"  note: {line}")
    if auto.fix:
        click.echo(f"  for an exact match: {auto.fix}")
    if dry_run:
        click.echo(f"Would make environment {env.name} ({env.prefix}) use CUDA {auto.toolkit['version']} "
                   f"({auto.toolkit['root']}); nothing written.")
        sys.exit(0)
    return auto.toolkit["root"]


@main.command()
@_env_options
@handle_errors
def off(name, prefix):
    """Stop switching CUDA in an environment: remove exactly the files 'cudaswitch use' wrote."""
    from cudaswitch.switching import hookfiles as hooks
    from cudaswitch.discovery.environment import resolve_env

    system = _system()
    env = resolve_env(system, name, prefix, command="off")
    removed, had_state, state = hooks.unswitch(env)
    if not removed and not had_state:
        click.echo(f"Environment {env.name} ({env.prefix}) was not switched by cudaswitch; nothing to remove.")
        return
    click.echo(f"Environment {env.name} ({env.prefix}) no longer switches CUDA: removed {len(removed)} hook files"
               f"{' and the state file' if had_state else ''}.")
    if os.environ.get("CUDASWITCH_APPLIES") == "1":
        click.echo("Undone in this shell by the cudaswitch shell function.")
    elif state is not None and env.prefix == os.environ.get("CONDA_PREFIX") and \
            state.root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")):
        click.echo(f"This shell still has CUDA {state.version} set until it is closed; next time run 'conda deactivate' "
                   f"before 'cudaswitch off', or install the shell function ('cudaswitch init --help').")


_INIT_FILES = {"bash": "bash.sh", "zsh": "bash.sh", "fish": "fish.fish", "tcsh": "tcsh.csh",
               "powershell": "powershell.ps1", "cmd": "cmd.bat"}


@main.command()
@click.argument("shell", type=click.Choice(sorted(_INIT_FILES)))
@click.option("--install", is_flag=True, help="Add it to the shell's startup file (idempotent, between marker lines).")
@click.option("--rc-file", type=click.Path(dir_okay=False), help="Startup file to use with --install.")
@handle_errors
def init(shell, install, rc_file):
    """Print the shell function that makes 'cudaswitch use' apply to the current shell at once."""
    from cudaswitch.switching import shellinit

    text = shellinit.init_text(shell, _INIT_FILES[shell])
    if not install:
        if shell == "tcsh":
            # eval "`cudaswitch init tcsh`" joins the lines: one line of commands separated by ';' reads the same
            # whether it is eval'ed or sourced from a file, and a comment would swallow everything after it
            text = " ; ".join(ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")) + "\n"
        click.echo(text, nl=False)
        return
    path, changed = shellinit.install(shell, text, rc_file)
    click.echo(f"{'Added to' if changed else 'Already in'} {path}; open a new shell to use it.")


@main.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("selector")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--ld-library-path/--no-ld-library-path", "ld_flag", default=None,
              help="Put the toolkit's lib folder on LD_LIBRARY_PATH (default: as 'use' decides).")
@handle_errors
def run(selector, command, ld_flag):
    """Run COMMAND with toolkit SELECTOR applied, touching neither the shell nor any environment:
    cudaswitch run 11.8 -- nvcc --version"""
    import subprocess

    from cudaswitch.switching import hookfiles as hooks
    from cudaswitch.switching.activation import apply, changes_for, recorded_entries
    from cudaswitch.core.errors import UsageError

    command = list(command)
    # After SELECTOR click hands everything over as COMMAND, so `run 12.9 --no-ld-library-path -- cmd` would run
    # the option; our own options before `--` (or before the command) are taken here.
    while command and command[0] in ("--ld-library-path", "--no-ld-library-path"):
        ld_flag = command.pop(0) == "--ld-library-path"
    if command and command[0] == "--":  # click keeps the separator once positional parsing has started
        command = command[1:]
    if not command:
        raise UsageError("missing COMMAND, e.g. 'cudaswitch run 11.8 -- nvcc --version'")
    from cudaswitch.discovery.toolkits import select

    system = _system()
    tk = select(_discover(system), selector, system)
    ld, note = hooks.ld_choice(system.environ.get("CONDA_PREFIX"), ld_flag)
    changes = changes_for(tk, system, ld_library_path=ld)
    hooks.check_paths(changes, system.windows)  # a ':' inside the toolkit's path would split into two entries
    env = apply(system.environ, changes, system, remove=recorded_entries(system.environ, system))
    if system.which("nvcc", env.get("PATH")) or os.path.basename(command[0]).lower() in ("nvcc", "nvcc.exe"):
        _warn(_no_nvcc_note(tk, system, env.get("PATH")))  # only when the command can meet the trap
    if os.name == "posix":
        # Nothing is left to do after the command, so become it: the terminal's Ctrl-C, a SIGTERM or SIGHUP sent to
        # this pid, and the exit status are the command's own, exactly as if it had been run directly.
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            os.execvpe(command[0], command, env)
        except FileNotFoundError:
            err = CudaswitchError(f"command not found: {command[0]}")
            err.exit_code = 127
            raise err from None
        except OSError as exc:
            err = CudaswitchError(f"cannot run {command[0]}: {exc.strerror or exc}")
            err.exit_code = 126
            raise err from None
    import signal

    # Windows: the console delivers Ctrl-C to the child too; this process only waits for its status.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        rc = subprocess.call(command, env=env)
    except FileNotFoundError:
        err = CudaswitchError(f"command not found: {command[0]}")
        err.exit_code = 127
        raise err from None
    except PermissionError:
        err = CudaswitchError(f"cannot run {command[0]}: permission denied")
        err.exit_code = 126
        raise err from None
    sys.exit(rc if rc >= 0 else 128 - rc)


def _no_nvcc_note(tk, system, path):
    """A toolkit without nvcc cannot put one first on PATH: say which nvcc the user gets instead (the trap of a
    runtime-only install), or that there is none."""
    if tk.nvcc:
        return []
    other = system.which("nvcc", path)
    got = f"'nvcc' is {other}, from another toolkit" if other else "no nvcc is on PATH"
    return [f"CUDA {tk.version} at {tk.root} has no nvcc ({', '.join(tk.flags)}); {got}"]


# ---- smoke test, doctor, recommend (issue 5) ----

def _version_arg(ctx, param, value):
    import re

    if value is not None and not re.fullmatch(r"\d+(\.\d+){0,2}", value.strip()):
        raise click.BadParameter(f"{value!r} is not a version like 12.4 or 2.7.1")
    return value.strip() if value else value


@main.command()
@_env_options
@click.option("--json", "as_json", is_flag=True, help="One JSON record with every field and the classification.")
@click.option("--cpu-ok", is_flag=True, help="No GPU is not a failure (CPU-only machines, CPU builds).")
@click.option("--timeout", default="180", show_default=True, callback=_seconds, metavar="SECONDS",
              help="Seconds the probe may take (0 or none: no limit).")
@handle_errors
def smoke(name, prefix, as_json, cpu_ok, timeout):
    """Prove torch computes: the env's own Python, with the env's hooks applied, runs matmul, conv2d, autocast.

    Exit 0: pass (or torch not installed: skipped); 1: a check failed (code, cause and fix printed); 2: usage."""
    from cudaswitch.discovery.environment import resolve_env
    from cudaswitch.checks.smoke import render, run_smoke

    system = _system()
    env = resolve_env(system, name, prefix, command="smoke")
    report = run_smoke(env, system, timeout=timeout, cpu_ok=cpu_ok, progress=not as_json)
    _record_smoke(env, report)
    if as_json:
        _json_out(report.to_json())
    else:
        for line in render(report):
            click.echo(line)
    sys.exit(report.exit_code)

@main.command()
@_env_options
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@handle_errors
def doctor(name, prefix, as_json):
    """Machine and shell checks that need no torch: PATH, CUDA_PATH/CUDA_HOME, ld.so.conf.d, driver, WSL, hooks.

    Exit 1 when a finding is an error, 0 otherwise."""
    from cudaswitch.checks.doctor import run_doctor
    from cudaswitch.discovery.environment import resolve_env
    from cudaswitch.core.errors import UsageError
    from cudaswitch.core.i18n import _, tr

    system = _system()
    env = None
    if name or prefix or system.environ.get("CONDA_PREFIX"):
        try:
            env = resolve_env(system, name, prefix, command="doctor")
        except UsageError:
            if name or prefix:
                raise
    report = run_doctor(system, env)
    if as_json:
        _json_out(report.to_json())
        sys.exit(report.exit_code)
    d = report.driver
    click.echo(f"driver: max CUDA {d.get('cuda_max') or 'none'}"
               + (f" (driver {d['driver_version']})" if d.get("driver_version") else "")
               + (f" [{d.get('source')}]" if d.get("source") else ""))
    if report.active_toolkit:
        click.echo(f"shell toolkit: CUDA {report.active_toolkit['version']} ({report.active_toolkit['root']})")
    if env is not None:
        click.echo(f"environment: {env.name} ({env.prefix})")
        t = report.torch
        if t.get("version"):
            click.echo(f"torch (from its files): {t.get('build_version') or t['version']}, CUDA "
                       f"{t.get('cuda') or 'none'}" + (f", cuDNN {t['cudnn']}" if t.get("cudnn") else "") +
                       f", Python {t.get('python') or '?'}")
    if not report.findings:
        click.echo("no problems found")
    for f in report.findings:
        click.echo(f"{f.severity:<8} {f.code}: {tr(f.cause)}")
        if f.fix and f.fix != "-" and f.severity != "info":
            click.echo(f"{'':<8} " + _("fix: {fix}").format(fix=tr(f.fix)))
    click.echo("result: " + ("OK" if report.ok else "problems found"))
    sys.exit(report.exit_code)


@main.command()
@_env_options
@click.option("--torch", "torch_version", callback=_version_arg, metavar="VERSION",
              help="Only this torch release (e.g. 2.4 or 1.12.1).")
@click.option("--python", "python_version", callback=_version_arg, metavar="X.Y",
              help="Python version (default: the environment's, else this interpreter's).")
@click.option("--cuda", "cuda_max", callback=_version_arg, metavar="X.Y",
              help="The driver's maximum CUDA version (default: asked from the driver).")
@click.option("--cc", "capability", callback=_version_arg, metavar="X.Y", help="GPU compute capability.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@handle_errors
def recommend(name, prefix, torch_version, python_version, cuda_max, capability, as_json):
    """The torch/torchvision/torchaudio versions and the pip line that fit this driver, GPU, Python and OS."""
    from cudaswitch.checks import knowledge
    from cudaswitch.checks.doctor import torch_installs
    from cudaswitch.discovery.environment import resolve_env
    from cudaswitch.checks.smoke import driver_info

    system = _system()
    py_source = "--python"
    if not python_version:
        env = None
        if name or prefix or system.environ.get("CONDA_PREFIX"):
            env = resolve_env(system, name, prefix, command="recommend")
        if env is not None:
            python_version = torch_installs(env.prefix).get("python")
            py_source = f"environment {env.name}"
        if not python_version:
            python_version = "%d.%d" % sys.version_info[:2]
            py_source = "this interpreter"
    if cuda_max:
        driver = {"source": "--cuda", "cuda_max": cuda_max, "devices": []}
    else:
        driver = driver_info(system)
    if not capability and driver.get("devices"):
        capability = driver["devices"][0].get("capability")
    rec = knowledge.recommend(driver.get("cuda_max"), python_version, system.os, capability, torch_version)
    if as_json:
        _json_out({"recommendation": rec.to_json(), "inputs": {
            "driver_cuda_max": driver.get("cuda_max"), "driver_source": driver.get("source"),
            "python": python_version, "python_source": py_source, "os": system.os, "capability": capability,
            "torch": torch_version}, "sources": knowledge.cite(rec.src)})
        sys.exit(0 if rec.ok else 1)
    click.echo(f"driver max CUDA: {driver.get('cuda_max') or 'none'} [{driver.get('source')}]; "
               f"GPU compute capability: {capability or 'unknown'}; Python {python_version} ({py_source}); "
               f"{system.os}")
    if rec.ok:
        click.echo(f"torch {rec.torch}, torchvision {rec.torchvision or '?'}, torchaudio {rec.torchaudio or '?'} "
                   f"({rec.tag})")
        for r in rec.reasons:
            click.echo(f"  {r}" if r.startswith("note:") else f"  because {r}")
        click.echo(rec.command)
        click.echo(f"table sources: {rec.src} (cudaswitch/data/sources.csv; --json prints them in full)")
    else:
        click.echo("no torch release fits:")
        for r in rec.reasons:
            click.echo(f"  {r}")
    sys.exit(0 if rec.ok else 1)


# ---- cuDNN (issue 4) ----

def _progress(path, quiet, label):
    """A bytes progress bar on stderr for archives over a few MB, only on a terminal and without --quiet."""
    import contextlib

    size = os.path.getsize(path) if os.path.exists(path) else 0
    if quiet or size < (4 << 20) or not sys.stderr.isatty():
        return contextlib.nullcontext(None)
    return click.progressbar(length=size, label=label, file=sys.stderr, show_pos=False)


def _sha256_arg(ctx, param, value):
    import re

    if value is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", value.strip()):
        raise click.BadParameter(f"{value!r} is not a SHA-256 (64 hex digits)")
    return value


@main.command("install-cudnn")
@click.argument("archive", type=click.Path(dir_okay=False))
@click.option("--cuda", "cuda", metavar="SELECTOR", help="Toolkit to install into (version or folder).")
@click.option("--into-env", is_flag=True, help="Install into a conda environment instead (no admin rights needed).")
@click.option("-n", "--name", "env_name", metavar="NAME", help="With --into-env: the environment's name.")
@click.option("-p", "--prefix", "env_prefix", metavar="PREFIX", help="With --into-env: the environment's folder.")
@click.option("--dry-run", is_flag=True, help="Print the plan (each file: new / overwrite / identical); write nothing.")
@click.option("--force", is_flag=True, help="Install even if the archive's CUDA major or version does not match.")
@click.option("--yes", "-y", is_flag=True, help="Replace another cuDNN version without asking.")
@click.option("--sha256", metavar="HEX", callback=_sha256_arg, help="Verify the archive's SHA-256 first.")
@click.option("--redistrib-json", type=click.Path(dir_okay=False), help="Verify against NVIDIA's redistrib_*.json.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, only the result.")
@click.option("--json", "as_json", is_flag=True, help="Print the result record as JSON.")
@handle_errors
def install_cudnn(archive, cuda, into_env, env_name, env_prefix, dry_run, force, yes, sha256, redistrib_json, quiet,
                  as_json):
    """Install a cuDNN ARCHIVE (.zip, .tar.xz, .tar.gz) into a CUDA toolkit or conda environment, undoably."""
    from pathlib import Path

    from cudaswitch.cudnn import install as ci
    from cudaswitch.core.errors import UsageError

    if cuda and (into_env or env_name or env_prefix):
        raise UsageError("--cuda installs into a toolkit, --into-env/-n/-p into a conda environment: give one of them")
    path = Path(archive)
    if not path.is_file():
        raise UsageError(f"no such archive: {archive}")
    system = _system()
    target, why = ci.resolve_target(system, path, cuda, into_env, env_name, env_prefix)
    try:
        fh = open(path, "rb")  # hashed and unpacked from this one open file: a swapped file is never installed
    except OSError as exc:
        raise UsageError(f"cannot read {archive}: {exc.strerror or exc}") from None
    with fh, ci.locked(target):
        _install_cudnn(system, path, target, why, dry_run, force, yes, sha256, redistrib_json, quiet, as_json, fh)


def _install_cudnn(system, path, target, why, dry_run, force, yes, sha256, redistrib_json, quiet, as_json, fh=None):
    from pathlib import Path

    from cudaswitch.cudnn import install as ci
    from cudaswitch.cudnn.archive import verify_integrity
    from cudaswitch.core.errors import UsageError

    say = (lambda m: None) if (quiet or as_json) else click.echo
    if dry_run:  # writes nothing, so it does not recover either; it says what the next command will do
        for line in ci.pending(target):
            say(f"note: {line}")
    else:
        for _what, line in ci.recover_target(target):
            say(f"note: {line}")
    if sha256 or redistrib_json:
        with _progress(path, quiet, "Checking SHA-256") as bar:
            verify_integrity(path, sha256, Path(redistrib_json) if redistrib_json else None,
                             bar.update if bar else None, fh=fh)
        say("Archive SHA-256 verified.")
    with _progress(path, quiet, "Reading" if dry_run else "Unpacking") as bar:
        step = bar.update if bar else None
        prep = ci.scan(path, target, force, step, fh=fh) if dry_run else ci.prepare(path, target, force, step,
                                                                                      fh=fh)
    a = prep.archive
    if not as_json:
        say(f"{a.label} [{a.top}/] -> {target.label} ({why})")
        for p in prep.problems:
            say(f"warning: --force: {p}")
    if dry_run:
        if as_json:
            _json_out({"dry_run": True, "archive": a.to_json(), "target": target.to_json(),
                       "previous_cudnn": prep.existing, "problems": prep.problems,
                       "files": [{"dest": target.display(Path(o.dest)), "action": o.action} for o in prep.ops]})
            return
        for o in prep.ops:
            click.echo(f"  {o.action:<9} {target.display(Path(o.dest))}" + (f" -> {o.link}" if o.link else ""))
        c = prep.counts
        click.echo(f"Dry run: {c['new']} new, {c['overwrite']} overwrite, {c['identical']} identical; "
                   f"nothing was written.")
        if prep.replaces_other_version:
            click.echo(f"It would replace cuDNN {prep.existing} (asks first, or --yes; uninstall-cudnn undoes it).")
        _warn(prep.warnings)
        return
    if prep.ops and all(o.action == "identical" for o in prep.ops):
        ci.abort(prep)
        if as_json:
            _json_out({"installed": False, "already_installed": True, "archive": a.to_json(),
                       "target": target.to_json()})
        else:
            click.echo(f"cuDNN {a.full_version or a.version} is already installed there (every file identical); "
                       f"nothing was changed.")
        return
    if prep.replaces_other_version and not yes:
        question = f"{target.label} has cuDNN {prep.existing}; replace it with {a.version}? (undo: uninstall-cudnn)"
        if not sys.stdin.isatty() or as_json:
            ci.abort(prep)
            raise UsageError(f"{target.label} already has cuDNN {prep.existing}; pass --yes to replace it with "
                             f"{a.version} (uninstall-cudnn undoes it); nothing was changed")
        try:
            answer = click.confirm(question, default=False, err=True)
        except (click.exceptions.Abort, KeyboardInterrupt, EOFError):
            answer = False
        if not answer:
            ci.abort(prep)
            raise CudaswitchError("not replaced; nothing was changed")
    manifest = ci.commit(prep)
    result = ci.verify(prep, system)
    c = prep.counts
    undo = "cudaswitch uninstall-cudnn " + ("-p " if target.kind == "env" else "--cuda ") + _shell_word(
        str(target.root), target.os == "windows")
    if as_json:
        _json_out({"installed": True, "archive": a.to_json(), "target": target.to_json(),
                   "previous_cudnn": prep.existing, "forced": prep.problems, "counts": c,
                   "manifest": target.display(manifest), "verify": result, "warnings": prep.warnings,
                   "files": [{"dest": target.display(Path(o.dest)), "action": o.action, "sha256": o.sha256,
                              "link": o.link} for o in prep.ops], "undo": undo})
        return
    for role in ("bin", "include", "lib"):
        n = sum(1 for o in prep.ops if o.role == role)
        if n:
            click.echo(f"  {role:<8} {n:>3} files -> {target.dirs[role]}")
    click.echo(f"Installed cuDNN {a.full_version or a.version}: {c['new']} new, {c['overwrite']} replaced (backed up), "
               f"{c['identical']} identical.")
    click.echo(f"Manifest: {target.display(manifest)}")
    main_lib = f"cudnn64_{a.cudnn_major}.dll" if target.os == "windows" else f"libcudnn.so.{a.cudnn_major}"
    lib = f"{main_lib} cudnnGetVersion() = {result['library']}" if result["library"] is not None \
        else f"library {result['library_error']}"
    if result["checked"] == "header only":
        click.echo(f"Checked (header only): include/{a.header} says {result['header']}; {lib}")
    else:
        click.echo(f"{'Verified' if result['ok'] else 'Checked'}: include/{a.header} says {result['header']}; {lib}")
    _warn(prep.warnings)
    if result["header"] != a.version:
        _warn([f"the installed header says cuDNN {result['header']}, expected {a.version}"])
    if result["library_error"] and not result["library_error"].startswith("not loaded"):
        _warn([f"the installed {main_lib} did not load: {result['library_error']}"])
    click.echo(f"Undo with: {undo}")


def _shell_word(value: str, windows: bool) -> str:
    """`value` as one word the user can paste into their shell: double quotes for cmd and PowerShell (both take
    "C:\\Program Files\\..." as one argument; Windows paths cannot hold a double quote), POSIX quoting elsewhere."""
    import re

    if windows:
        return f'"{value}"' if re.search(r"[\s&()\[\]{}^=;!'+,`~$%@#]", value) else value
    import shlex

    return shlex.quote(value)


@main.command("uninstall-cudnn")
@click.option("--cuda", "cuda", metavar="SELECTOR", help="Toolkit to restore.")
@click.option("--into-env", is_flag=True, help="Restore the conda environment instead.")
@click.option("-n", "--name", "env_name", metavar="NAME", help="With --into-env: the environment's name.")
@click.option("-p", "--prefix", "env_prefix", metavar="PREFIX", help="With --into-env: the environment's folder.")
@click.option("--force", is_flag=True, help="Undo even if installed files changed since (they are kept aside).")
@click.option("--quiet", "-q", is_flag=True, help="Only errors.")
@click.option("--json", "as_json", is_flag=True, help="Print the result record as JSON.")
@handle_errors
def uninstall_cudnn(cuda, into_env, env_name, env_prefix, force, quiet, as_json):
    """Undo the latest install-cudnn: the toolkit is restored byte for byte."""
    from cudaswitch.cudnn import install as ci
    from cudaswitch.core.errors import UsageError

    if cuda and (into_env or env_name or env_prefix):
        raise UsageError("--cuda restores a toolkit, --into-env/-n/-p a conda environment: give one of them")
    system = _system()
    target, _why = ci.resolve_target(system, None, cuda, into_env, env_name, env_prefix, uninstalling=True)
    with ci.locked(target):
        _uninstall_cudnn(target, force, quiet, as_json)


def _uninstall_cudnn(target, force, quiet, as_json):
    from cudaswitch.cudnn import install as ci

    recovered = ci.recover_target(target)
    notes = [line for _what, line in recovered]
    # an interrupted uninstall that was just completed, or a rolled-back install, is what the user asked for
    if any(what != "installed" for what, _line in recovered) or (notes and not ci.installed_records(target)):
        if as_json:
            _json_out({"uninstalled": False, "recovered": notes, "target": target.to_json()})
        elif not quiet:
            for line in notes:
                click.echo(f"note: {line}")
        return
    res = ci.uninstall(target, force)
    if as_json:
        _json_out({"uninstalled": True, "recovered": notes, "target": target.to_json(), **res.to_json()})
        return
    if quiet:
        return
    for line in notes:
        click.echo(f"note: {line}")
    back = f"; cuDNN {res.previous} is back" if res.previous else ""
    click.echo(f"Removed cuDNN {res.version} from {target.label}: {res.removed} files removed, {res.restored} "
               f"restored from backup{back}.")
    for k in res.kept:
        click.echo(f"kept changed file: {k}")


@main.command("install-toolkit")
@click.argument("version")
@click.option("--into", metavar="DIR", help="Install into this new folder (default: the user data folder).")
@click.option("--quiet", "-q", is_flag=True, help="No pip progress, only the result.")
@click.option("--json", "as_json", is_flag=True, help="Print the result record as JSON.")
@handle_errors
def install_toolkit(version, into, quiet, as_json):
    """Assemble CUDA toolkit VERSION (X.Y) from NVIDIA's PyPI wheels, without admin rights."""
    from cudaswitch.discovery.toolkit_install import install

    r = install(version, _system(), into, show_progress=not (quiet or as_json))
    if as_json:
        return _json_out({"installed": r.to_json()})
    click.echo(f"Installed CUDA {r.version} at {r.root} from {len(r.wheels)} NVIDIA wheels "
               f"({r.download_bytes / 1e6:.0f} MB downloaded, {r.disk_bytes / 1e6:.0f} MB on disk).")
    click.echo(f"Use it: cudaswitch use {r.root}   Remove it: cudaswitch uninstall-toolkit {r.root}")


@main.command("uninstall-toolkit")
@click.argument("selector")
@handle_errors
def uninstall_toolkit(selector):
    """Remove a toolkit 'cudaswitch install-toolkit' made (X.Y or its folder), and nothing else."""
    from cudaswitch.discovery.toolkit_install import uninstall

    click.echo(f"Removed {uninstall(selector, _system())}.")
