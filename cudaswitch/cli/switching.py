"""`use`, `off`, `init`, `run`: per-environment switching."""

from __future__ import annotations

import os
import sys

import click

from cudaswitch.cli.common import (_as_owner, _discover, _fail, _json_out, _no_nvcc_note, _note, _record_smoke,
                                   _system, _warn, handle_errors)
from cudaswitch.cli.options import _env_options, _force_option, _python_hook_option, _seconds, completes
from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import Listed, M, N_, _, tr


@click.command(short_help='Make an environment use a CUDA toolkit.')
@click.argument("selector", required=False, shell_complete=completes("use_selector"))
@_env_options
@click.option("--ld-library-path/--no-ld-library-path", "ld_flag", default=None,
              help="Put the toolkit's lib folder on LD_LIBRARY_PATH (default: yes, unless pip CUDA wheels are installed).")
@click.option("--refresh", is_flag=True, help="Re-render the hooks from the recorded choice (after an upgrade).")
@click.option("-y", "--yes", is_flag=True, help="Do not ask before switching the base environment.")
@click.option("--no-smoke", is_flag=True, help="Skip the PyTorch smoke test after switching.")
@click.option("--no-verify", is_flag=True, help="Do not run the new hooks in this machine's shells before trusting them.")
@click.option("--cpu-ok", is_flag=True, help="Smoke test: no GPU is not a failure.")
@click.option("--timeout", default="180", show_default=True, callback=_seconds, metavar="SECONDS",
              help="Seconds the smoke test may take (0 or none: no limit).")
@click.option("--save", is_flag=False, flag_value="environment.yml", default=None, metavar="[FILE]",
              help="Also declare the toolkit in FILE's 'variables:' (default ./environment.yml).")
@click.option("--dry-run", is_flag=True, help="Say which toolkit it would use and why; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="The choice (with 'auto', its reasons too) as JSON (implies --dry-run).")
@_python_hook_option
@_force_option
@handle_errors
def use(selector, name, prefix, ld_flag, refresh, yes, no_smoke, cpu_ok, timeout, save, dry_run=False,
        as_json=False, python_hook=None, force=False, no_verify=False):
    """Make a conda environment use the CUDA toolkit SELECTOR names, in every shell, from its next activation."""
    from cudaswitch.switching import switch
    from cudaswitch.discovery.environment import resolve_env
    from cudaswitch.core.errors import UsageError

    system = _system()
    dry_run = dry_run or as_json  # JSON is the dry run's record, whatever the selector
    env = resolve_env(system, name, prefix, command=f"use {selector or 'SELECTOR'}")
    choice = switch.choose(env, selector, refresh, ld_flag)
    choice.python_hook, choice.force = python_hook, force
    if choice.selector == "auto":
        choice.selector = _use_auto(env, system, dry_run, as_json, choice.old)
    if (env.is_base or env.base_unknown) and not yes and not dry_run:
        if env.base_unknown:  # its files neither show nor rule out a base: asked as if it were one
            question = M("{prefix} may be a base environment (it has {files}, but conda is not installed in it); "
                         "switch it to CUDA {selector}?", prefix=env.prefix, files=Listed(env.base_seen),
                         selector=choice.selector)
            refusal = M("cannot tell whether {prefix} is a base environment (it has {files}, but conda is not "
                        "installed in it); add --yes to switch it anyway", prefix=env.prefix,
                        files=Listed(env.base_seen) or M("no readable conda-meta folder"))
        else:
            question = M("Switch the base environment ({prefix}) to CUDA {selector}?", prefix=env.prefix,
                         selector=choice.selector)
            refusal = N_("that is the base environment, which every shell starts in; add --yes to switch it anyway")
        if not sys.stdin.isatty():
            raise UsageError(refusal)
        click.confirm(tr(question), abort=True)
    notes = []
    found = _discover(system)
    tk = switch.resolve_toolkit(found, choice, env, system, notes)
    _note(notes)
    if choice.declared:  # on stderr under --json, where stdout is the record
        click.echo(tr(M("Using CUDA {selector}: {declared}.", selector=choice.selector, declared=choice.declared)),
                   err=as_json)
    saving = None
    if save:
        from cudaswitch.switching.envfile import plan_save

        saving = plan_save(save, tk)  # a file that is not an environment file stops here, before any change
    switch.check_switchable(tk)
    if dry_run:
        switch.check_coexistence(env, tk, choice, system)  # a switch that would be refused says so
        if as_json:
            _json_out({"dry_run": True, "environment": {"name": env.name, "prefix": env.prefix},
                       "selector": choice.recorded, "declared": choice.declared,
                       "toolkit": {"version": tk.version, "root": tk.root}})
            return
        click.echo(tr(M("Would make environment {name} ({prefix}) use CUDA {version} ({root}); nothing written.",
                        name=env.name, prefix=env.prefix, version=tk.version, root=tk.root)))
        return
    try:
        _as_owner(env, lambda: _use_as_owner(env, tk, choice, found, system, saving, no_verify, no_smoke, timeout,
                                              cpu_ok))
    finally:
        # the invoking user's own shell integration (not the environment owner's), so outside the owner's work; an
        # upgrade's new shell function then reaches shells without an --install
        _keep_integration_current(system.environ)


def _use_as_owner(env, tk, choice, found, system, saving, no_verify, no_smoke, timeout, cpu_ok):
    """Everything `use` does to the environment, run as its owner where cudaswitch has more privilege
    (core/asowner.py): the hooks, the startup file, the hook check in real shells, --save and the smoke test."""
    from cudaswitch.checks import hookhealth
    from cudaswitch.switching import switch

    # what the files of the earlier switch were, by content, before they are rewritten (said after the rewrite)
    before = hookhealth.health(env, choice.old, hookhealth.toolkit_for(choice.old, found), system) \
        if choice.old is not None else None
    done = switch.use(env, tk, choice, system)
    changes = done.changes
    click.echo(tr(M("Environment {name} ({prefix}) now uses CUDA {version} ({root}).", name=env.name, prefix=env.prefix,
                    version=tk.version, root=tk.root)))
    click.echo(f"  CUDA_PATH = CUDA_HOME = {tk.root}")
    for var, entries in changes.prepend.items():
        click.echo("  " + tr(M("{var} gets {entries} in front", var=var, entries=system.pathsep.join(entries))))
    _warn(_no_nvcc_note(tk, system, system.pathsep.join(
        [*changes.prepend.get("PATH", []), *system.split_list(system.environ.get("PATH"))])))
    if done.ld_note:
        click.echo(f"  {tr(done.ld_note)}")
    for shell, problem in done.unexpressible.items():
        _warn([M("{shell} cannot be switched to this toolkit ({problem}); its hook only prints a warning", shell=shell,
                 problem=problem)])
    folder = os.path.join(env.prefix, "etc", "conda") + os.sep + "{activate,deactivate}.d"
    from cudaswitch.core.shells import SHELLS

    *shells, last = [sh.shown for sh in SHELLS.values()]  # every record's hooks are written, each in its files
    click.echo(tr(M("Hooks for {shells} and {last}: {count} files named cudaswitch.* in {folder}",
                    shells=Listed(shells), last=last, count=len(done.written), folder=folder)))
    _python_hook_lines(done)
    if before is not None and before.bad:
        click.echo("  " + tr(M("Rewrote files that were out of date: {files}",
                               files=hookhealth.shown(f.line for f in before.bad))))
    _conda_cuda_lines(done)
    verified = None
    if not no_verify:
        from cudaswitch.switching.verify import report_lines, verify_use

        verified = verify_use(env, changes, system)
        said, errors = report_lines(verified)
        for line in said:
            click.echo("  " + tr(line))
        from cudaswitch.cli.output import error_line, printable

        for line in errors:
            click.echo(printable(error_line(line)), err=True)
    else:
        click.echo("  " + _("Hooks not run in any shell (--no-verify)."))
    from cudaswitch.switching.startup import user_reconciler_missing

    # once: on the environment's first switch, not on every later `use` or `--refresh`
    missing = user_reconciler_missing(system) if done.first_switch else None
    if missing:
        click.echo(tr(M("Tip: a switch from this environment to one without cudaswitch hooks leaves its PATH entry "
                        "behind (conda#14762); 'cudaswitch init {shell} --install' adds a prompt-time cleanup that "
                        "removes it.", shell=missing)))
    if saving:
        from cudaswitch.switching.envfile import VARIABLE, short_version, write_file

        if saving[2]:
            write_file(saving[0], saving[1])
        said = M("{path}: now declares variables: {var}: \"{version}\"", path=saving[0], var=VARIABLE,
                 version=short_version(tk)) if saving[2] else \
            M("{path}: already declares variables: {var}: \"{version}\"", path=saving[0], var=VARIABLE,
              version=short_version(tk))
        click.echo(tr(said))
    failed = 1 if verified is not None and not verified.ok else 0
    # where a hook was removed, the errors above say where the switch does not apply
    if not failed and switch.shell_function_applies(env, system.environ):
        click.echo(_("Applied to this shell by the cudaswitch shell function."))
    elif not failed:
        click.echo(tr(M("Takes effect at the next activation. To apply it to this shell now: {command}",
                        command=switch.apply_now_hint(env.name, env.prefix, system.windows, system))))
    if no_smoke:
        _switch_facts(env, tk, done.ld_library_path, system)
        sys.exit(failed)
    from cudaswitch.checks.smoke import run_smoke, smoke_lines

    # The switch stays whatever the smoke test finds: a failure is a diagnosis, not a reason to undo.
    report = run_smoke(env, system, timeout=timeout, cpu_ok=cpu_ok, toolkit=tk, ld_library_path=done.ld_library_path,
                       progress=True, environ=verified.environ() if verified is not None else None)
    _record_smoke(env, report)
    click.echo("")
    for line in smoke_lines(report):
        click.echo(line)
    if report.exit_code:
        click.echo(_("The switch is kept. Fix the cause above, then run 'cudaswitch smoke' to check again."))
    sys.exit(report.exit_code or failed)


def _conda_cuda_lines(done):
    from cudaswitch.switching.condaforge import provides_lines

    cc = done.conda_cuda
    if cc is None or not cc.packages:
        return
    click.echo("  " + _("conda-forge CUDA packages in this environment:"))
    for line in provides_lines(cc):
        click.echo("    " + tr(line))
    if done.forced:
        _warn([M("switched with --force: {why}", why=done.forced)])


def _python_hook_lines(done):
    if done.python_files:
        click.echo(tr(M("Python startup file: {path} (a Python of this environment started without activation, such "
                        "as a Jupyter kernel, gets the switch too)", path=done.python_files[-1])))
    elif done.python_note:
        click.echo("  " + tr(done.python_note))
    for path in done.python_removed:
        click.echo("  " + tr(M("removed {path}, an earlier Python startup file", path=path)))


def _switch_facts(env, tk, ld_library_path, system):
    """Without the smoke test (which reports them too): what checks/switched.py finds about the new switch, with
    the severities every command gives them; an error ends `use` with exit 1, the switch kept."""
    from cudaswitch.checks.diagnosis import severity_label
    from cudaswitch.checks.severities import fails
    from cudaswitch.checks.switched import switch_findings

    found = switch_findings(env.prefix, tk.version, tk.root, ld_library_path, system)
    for f in found:
        click.echo(f"{severity_label(f.severity)} {f.code}: {tr(f.cause)}")
        click.echo(f"{'':<8} " + _("fix: {fix}").format(fix=tr(f.fix)))
    if any(fails(f.severity) for f in found):
        click.echo(_("The switch is kept. Fix the cause above, then run 'cudaswitch smoke' to check again."))
        sys.exit(1)


def _use_auto(env, system, dry_run, as_json, old=None):
    """`use auto`: print the choice (torch_aware.pick); the selector to switch to, or exit when there is none.
    `old`: the environment's present choice (its toolkit wins a tie)."""
    from cudaswitch.switching.torch_aware import pick_for_env

    auto = pick_for_env(env.prefix, M("environment {name} ({prefix})", name=env.name, prefix=env.prefix),
                        _discover(system).toolkits, old.root if old is not None else None)
    if as_json:
        _json_out({"auto": auto.to_json()})
        sys.exit(0 if auto.ok else 1)
    if not auto.ok:
        _fail(M("{reason}; {fix}", reason=auto.reason, fix=auto.fix), 1)
    click.echo(tr(M("auto: {reason}.", reason=auto.reason)))
    for line in auto.notes:
        click.echo("  " + tr(M("note: {line}", line=line)))
    if auto.fix:
        click.echo("  " + tr(M("for an exact match: {fix}", fix=auto.fix)))
    for line in auto.considered:
        click.echo("  " + tr(M("considered: {line}", line=line)))
    if dry_run:
        click.echo(tr(M("Would make environment {name} ({prefix}) use CUDA {version} ({root}); nothing written.",
                        name=env.name, prefix=env.prefix, version=auto.toolkit["version"],
                        root=auto.toolkit["root"])))
        sys.exit(0)
    return auto.toolkit["root"]

@click.command(short_help='Stop switching CUDA in an environment.')
@_env_options
@handle_errors
def off(name, prefix):
    """Stop switching CUDA in an environment: remove exactly the files 'cudaswitch use' wrote."""
    from cudaswitch.switching import switch
    from cudaswitch.discovery.environment import resolve_env

    system = _system()
    env = resolve_env(system, name, prefix, command="off")
    _as_owner(env, lambda: _off_lines(env, switch.off(env, system.environ), system))


def _off_lines(env, done, system):
    from cudaswitch.switching import switch

    removed, had_state, state = done.removed, done.had_state, done.state
    if not removed and not had_state:
        click.echo(tr(M("Environment {name} ({prefix}) was not switched by cudaswitch; nothing to remove.", name=env.name,
                        prefix=env.prefix)))
        return
    from cudaswitch.switching.pythonhook import NAMES

    hooks = [p for p in removed if p.name not in NAMES]  # the startup file is no hook file: named on its own
    parts = [M("{count} hook files", count=len(hooks))] if hooks else []
    parts += [N_("the Python startup file")] if len(hooks) < len(removed) else []
    parts += [N_("the state file")] if had_state else []
    words = [tr(p) for p in parts]
    what = words[0] if len(words) == 1 else _("{rest} and {last}").format(rest=_(", ").join(words[:-1]),
                                                                         last=words[-1])
    said = M("Environment {name} ({prefix}) no longer switches CUDA: removed {what}.", name=env.name,
             prefix=env.prefix, what=what)
    click.echo(tr(said))
    if switch.shell_function_applies(env, system.environ):
        click.echo(_("Undone in this shell by the cudaswitch shell function."))
    elif done.still_set_here:
        click.echo(tr(M("This shell still has CUDA {version} set until it is closed; next time run 'conda deactivate' "
                        "before 'cudaswitch off', or install the shell function ('cudaswitch init --help').",
                        version=state.version)))


class _InitShell(click.Choice):
    """The shells `init` knows, read from the shell records when click first asks (a command is declared when
    `cudaswitch --help` lists it, and the records are not worth loading for that)."""

    def __init__(self):
        super().__init__([])

    @property
    def choices(self):
        from cudaswitch.core.shells import INIT_SHELLS

        return sorted(INIT_SHELLS)

    @choices.setter
    def choices(self, _value):
        pass


@click.command(short_help='Print or install the shell function and completion.')
@click.argument("shell", type=_InitShell(), required=False)
@click.option("--install", is_flag=True,
              help="Keep it in a file cudaswitch keeps current, and add one line that loads it to the shell's "
                   "startup file (every PowerShell edition's profile); idempotent.")
@click.option("--rc-file", type=click.Path(dir_okay=False), help="Startup file to use with --install.")
@handle_errors
def init(shell, install, rc_file):
    """Print the shell function that makes 'cudaswitch use' apply to the current shell at once, with tab completion.

    Without SHELL, the shell $SHELL names."""
    from cudaswitch.switching import startup

    environ = _system().environ
    chosen = None
    if shell is None:
        shell = startup.shell_from_environ(environ)
        chosen = M("shell {shell}, from $SHELL={value}", shell=shell, value=environ.get("SHELL"))
    _keep_integration_current(environ)
    if not install:
        if chosen and sys.stdout.isatty():  # said to a reader, not into an `eval "$(cudaswitch init)"`
            click.echo(tr(M("cudaswitch init: {chosen}", chosen=chosen)), err=True)
        click.echo(startup.init_text(shell, one_line=True), nl=False)
        return
    file = startup.integration_file(shell, environ)
    # the pass runs before this command's own writes, which a pass younger than them would not keep
    for path, what in startup.install(shell, rc_file, environ, before_writing=_keep_selectors):
        said = {"added": M("Added one line to {path} that loads {file}; open a new shell to use it.", path=path,
                           file=file),
                "replaced": M("Replaced the cudaswitch block in {path} by one line that loads {file}; open a new "
                              "shell to use it.", path=path, file=file),
                "kept": M("Already in {path} (it loads {file}); open a new shell to use it.", path=path,
                          file=file)}[what]
        click.echo(tr(M("{said} ({chosen})", said=said, chosen=chosen)) if chosen else tr(said))


def _keep_selectors() -> None:
    """A discovery pass kept for the first TAB in the new shell, which is then answered from it instead of by a
    whole pass of its own (discovery/selector_cache.py). Whatever fails here, the TAB meets and says again."""
    try:
        _discover(_system())
    except (OSError, CudaswitchError):
        pass


def _keep_integration_current(environ) -> None:
    """The integration files --install made, rewritten when this build's differ; a failure is one warning, never
    the command's."""
    from cudaswitch.switching.startup import keep_current

    try:
        keep_current(environ)
    except (OSError, CudaswitchError) as exc:
        where = getattr(exc, "filename", None)
        why = getattr(exc, "strerror", None) or exc
        _warn([M("could not refresh the shell integration cudaswitch keeps: {why}",
                 why=f"{where}: {why}" if where else why)])


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}, short_help='Run a command with a toolkit applied.')
@click.argument("selector", shell_complete=completes("selector"))
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--ld-library-path/--no-ld-library-path", "ld_flag", default=None,
              help="Put the toolkit's lib folder on LD_LIBRARY_PATH (default: as 'use' decides).")
@handle_errors
def run(selector, command, ld_flag):
    """Run COMMAND with toolkit SELECTOR applied, touching neither the shell nor any environment:
    cudaswitch run 11.8 -- nvcc --version"""

    from cudaswitch.switching.switch import run_environ
    from cudaswitch.core.errors import UsageError

    command = list(command)
    # After SELECTOR click hands everything over as COMMAND, so `run 12.9 --no-ld-library-path -- cmd` would run
    # the option; our own options before `--` (or before the command) are taken here.
    while command and command[0] in ("--ld-library-path", "--no-ld-library-path"):
        ld_flag = command.pop(0) == "--ld-library-path"
    if command and command[0] == "--":  # click keeps the separator once positional parsing has started
        command = command[1:]
    if not command:
        raise UsageError(N_("missing COMMAND, e.g. 'cudaswitch run 11.8 -- nvcc --version'"))
    from cudaswitch.core.trust import call_program, exec_program
    from cudaswitch.discovery.toolkits import select

    system = _system()
    notes = []
    tk = select(_discover(system), selector, system, notes=notes)
    _note(notes)
    env = run_environ(tk, ld_flag, system)
    if system.which("nvcc", env.get("PATH")) or os.path.basename(command[0]).lower() in ("nvcc", "nvcc.exe"):
        _warn(_no_nvcc_note(tk, system, env.get("PATH")))  # only when the command can meet the trap
    if os.name == "posix":
        # Nothing is left to do after the command, so become it: the terminal's Ctrl-C, a SIGTERM or SIGHUP sent to
        # this pid, and the exit status are the command's own, exactly as if it had been run directly.
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            exec_program(command, env)
        except FileNotFoundError:
            err = CudaswitchError(M("command not found: {command}", command=command[0]))
            err.exit_code = 127
            raise err from None
        except OSError as exc:
            err = CudaswitchError(M("cannot run {command}: {why}", command=command[0], why=exc.strerror or exc))
            err.exit_code = 126
            raise err from None
    import signal

    # Windows: the console delivers Ctrl-C to the child too; this process only waits for its status.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        rc = call_program(command, env)
    except FileNotFoundError:
        err = CudaswitchError(M("command not found: {command}", command=command[0]))
        err.exit_code = 127
        raise err from None
    except PermissionError:
        err = CudaswitchError(M("cannot run {command}: permission denied", command=command[0]))
        err.exit_code = 126
        raise err from None
    sys.exit(rc if rc >= 0 else 128 - rc)
