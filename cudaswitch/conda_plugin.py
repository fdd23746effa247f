"""conda plugin: `conda cuda ...`, a `conda doctor` health check, and a note after install/update/remove.

conda finds it through the `conda` entry point group (pyproject.toml) when cudaswitch is installed into the Python
that runs conda (`pip install cudaswitch` in base). conda loads every plugin module on every command, so this
module imports only conda's plugin types; cudaswitch itself is imported when a hook actually runs.
"""

from __future__ import annotations

import sys

from conda import plugins
from conda.plugins.types import CondaHealthCheck, CondaPostCommand, CondaSubcommand

POST_COMMANDS = {"install", "update", "upgrade", "remove", "uninstall", "env_update"}


def cuda_command(argv) -> int:
    """`conda cuda ARGS`: cudaswitch's own command line, same options, output and exit codes."""
    from cudaswitch.cli import main

    try:
        main.main(args=list(argv), prog_name="conda cuda")
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    return 0


def health_check(prefix: str, verbose: bool) -> None:
    from conda.base.constants import OK_MARK, X_MARK

    from cudaswitch.checks.conda_health import health, health_lines
    from cudaswitch.cli.output import printable
    from cudaswitch.core import audit

    try:
        with audit.active():  # as root, held to the trust rule as the command line is
            lines = health_lines(health(prefix), OK_MARK, X_MARK, verbose)
    except audit.AuditViolation as exc:
        from cudaswitch.core.i18n import tr

        lines = [tr(exc.line)]
    # the texts name files and versions another user may have written: shown, never sent to the terminal
    print("\n".join(printable(line) for line in lines))


def health_fix(prefix: str, args, confirm) -> int:
    """`conda doctor --fix cudaswitch`: the plan `cudaswitch doctor --fix` shows, conda's own confirmation (and its
    --dry-run and --yes), the same fixers and journal, then the re-check. 1 when a step did not clear its finding."""
    from cudaswitch.checks.conda_health import _env
    from cudaswitch.cli.output import printable
    from cudaswitch.core.errors import CudaswitchError
    from cudaswitch.core.i18n import _, tr
    from cudaswitch.core.system import System
    from cudaswitch.fix import apply as fixing
    from cudaswitch.fix.plan import plan_lines

    system = System.current()
    env = _env(prefix, system)
    try:
        fixing.check_owner(env.prefix)
        _report, plan = fixing.plan_for(system, env)
        print("\n".join(printable(line) for line in plan_lines(plan)))
        if not plan.steps:
            return 0
        confirm(_("Apply this plan?"))  # conda raises to stop here: declined, or --dry-run
        fixing.apply_plan(plan, env, system)
        outcome = fixing.cleared(plan, env, system)
    except CudaswitchError as exc:
        from cudaswitch.cli.output import error_line

        print(printable(error_line(str(exc))), file=sys.stderr)
        return 1
    print("\n".join(printable(line) for line in fixing.outcome_lines(plan, outcome)))
    print(tr(_undo_line(prefix)))
    return 0 if outcome.ok else 1


def _undo_line(prefix: str):
    from cudaswitch.core.i18n import M
    from cudaswitch.core.shellquote import for_user

    return M("Applied; undo with: {command}", command=for_user(["cudaswitch", "doctor", "--undo", "-p", prefix]))


def post_command(command: str) -> None:
    try:
        from conda.base.context import context

        prefix = context.target_prefix
        from cudaswitch.checks.conda_health import after_change
        from cudaswitch.cli.output import printable
        from cudaswitch.core import audit
        from cudaswitch.core.i18n import tr

        try:
            with audit.active():
                line = after_change(prefix)
        except audit.AuditViolation as exc:
            line = exc.line
        if line:
            line = printable(tr(line))  # wheel names and torch's CUDA come from the environment's files
    except Exception:  # never break or slow a conda command over a note
        return
    if line:
        print(line, file=sys.stderr)


@plugins.hookimpl
def conda_subcommands():
    yield CondaSubcommand(name="cuda", summary="See, switch and verify the CUDA toolkit of environments (cudaswitch).",
                          action=cuda_command)


@plugins.hookimpl
def conda_health_checks():
    yield CondaHealthCheck(name="cudaswitch", action=health_check, fixer=health_fix,
                           summary="CUDA toolkit switch, hooks and torch (cudaswitch)",
                           fix="cudaswitch doctor --fix: stale hooks, a vanished toolkit, kernelspecs pinning CUDA, "
                               "a torch build the driver cannot run or a CPU build on a GPU machine, a second torch "
                               "in the user site, NumPy 2 under an old torch (undo: cudaswitch doctor --undo)")


@plugins.hookimpl
def conda_post_commands():
    yield CondaPostCommand(name="cudaswitch-post-command", action=post_command, run_for=POST_COMMANDS)
