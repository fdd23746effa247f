"""`smoke`, `doctor`, `recommend`: does torch work here, and if not, why."""

from __future__ import annotations

import sys

import click

from cudaswitch.cli.common import _as_owner, _json_out, _record_smoke, _system, handle_errors
from cudaswitch.cli.options import _env_options, _seconds, _version_arg, completes
from cudaswitch.core.i18n import M, N_, _, tr


def _report_out(report, lines, as_json: bool, chain_first=None, chain_last=None, environ=None,
                exit_code=None) -> None:
    """smoke, doctor and recommend end alike: the record as JSON or its lines, and the report's exit code. The chain
    (driver -> ... -> Python) is drawn before (doctor) or after (smoke) the lines, never into the JSON."""
    if as_json:
        _json_out(report.to_json())
    else:
        from cudaswitch.cli.chainview import echo_chain
        from cudaswitch.cli.output import printable_lines

        if chain_first:
            echo_chain(chain_first(report), environ or {})
            click.echo("")
        for line in lines(report):
            # names and versions in these lines come from files anyone who can write the environment wrote
            click.echo(printable_lines(line))
        if chain_last:
            click.echo("")
            echo_chain(chain_last(report), environ or {})
    sys.exit(report.exit_code if exit_code is None else exit_code)


@click.command(short_help='Prove torch computes in an environment.')
@_env_options
@click.option("--json", "as_json", is_flag=True, help="One JSON record with every field and the classification.")
@click.option("--cpu-ok", is_flag=True, help="No GPU is not a failure (CPU-only machines, CPU builds).")
@click.option("--timeout", default="180", show_default=True, callback=_seconds, metavar="SECONDS",
              help="Seconds the probe may take (0 or none: no limit).")
@handle_errors
def smoke(name, prefix, as_json, cpu_ok, timeout):
    """Prove torch computes: the env's own Python, with the env's hooks applied, runs matmul, conv2d, autocast.

    Exit 0: pass (or torch not installed: skipped); 1: a check failed (code, cause and fix printed); 2: usage."""
    from cudaswitch.checks.smoke import run_smoke, smoke_lines
    from cudaswitch.discovery.environment import resolve_env

    system = _system()
    env = resolve_env(system, name, prefix, command="smoke")

    def work():
        from cudaswitch.checks.chain import from_smoke

        report = run_smoke(env, system, timeout=timeout, cpu_ok=cpu_ok, progress=not as_json)
        _record_smoke(env, report)
        _report_out(report, smoke_lines, as_json, chain_last=from_smoke, environ=system.environ)

    _as_owner(env, work)


@click.command(short_help='Check driver, toolkit and shell, without torch.')
@click.argument("codes", nargs=-1, metavar="[CODE]...", shell_complete=completes("code"))
@_env_options
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--fix", "fix", is_flag=True, help="Apply the fixes doctor names (only those CODEs, when given), after "
              "showing the plan and asking.")
@click.option("--dry-run", is_flag=True, help="With --fix: show the plan; change nothing.")
@click.option("-y", "--yes", is_flag=True, help="With --fix: do not ask (for scripts).")
@click.option("--undo", is_flag=True, help="Put back every file the last --fix changed, then check again.")
@handle_errors
def doctor(codes, name, prefix, as_json, fix=False, dry_run=False, yes=False, undo=False):
    """Machine and shell checks that need no torch: PATH, CUDA_PATH/CUDA_HOME, ld.so.conf.d, driver, WSL, hooks.

    Exit 1 when a finding is an error, 0 otherwise. With --fix: exit 1 when a fix did not clear its finding, or
    the plan was not confirmed."""
    from cudaswitch.checks.doctor import doctor_env, doctor_lines, run_doctor
    from cudaswitch.checks.chain import from_doctor
    from cudaswitch.core.errors import UsageError

    if (codes or dry_run or yes) and not fix:
        raise UsageError(N_("CODE, --dry-run and --yes go with --fix"))
    if (fix or undo) and as_json:
        raise UsageError(N_("--json does not go with --fix or --undo"))
    if fix and undo:
        raise UsageError(N_("give either --fix or --undo, not both"))
    system = _system()
    env = doctor_env(system, name, prefix)
    if fix or undo:
        if env is None:
            raise UsageError(N_("--fix and --undo work on a conda environment: activate one, or give -n NAME / -p "
                                "PATH"))
        # as root on another user's environment, the whole plan runs as that user (core/asowner.py): her pip, her
        # .pth files and her journal, with her rights
        _as_owner(env, lambda: _fix_or_undo(system, env, list(codes), dry_run, yes, undo))
    report = run_doctor(system, env)
    _report_out(report, doctor_lines, as_json, chain_first=from_doctor, environ=system.environ)


def _fix_or_undo(system, env, codes, dry_run, yes, undo) -> None:
    from cudaswitch.checks.chain import from_doctor
    from cudaswitch.checks.doctor import doctor_lines
    from cudaswitch.fix import apply as fixing
    from cudaswitch.fix.plan import plan_lines

    if undo:
        changed = fixing.undo(env, system)
        click.echo(tr(M("Put back {count} file(s) the last 'doctor --fix' changed in {prefix}.", count=len(changed),
                        prefix=env.prefix)))
        click.echo("")
        report = fixing.doctor_again(system, env)
        _report_out(report, doctor_lines, False, chain_first=from_doctor, environ=system.environ)
    fixing.check_owner(env.prefix)
    report, plan = fixing.plan_for(system, env, codes)
    from cudaswitch.cli.output import printable_lines

    for line in plan_lines(plan):
        click.echo(printable_lines(line))
    if not plan.steps:
        sys.exit(report.exit_code)
    if dry_run:
        click.echo(_("Dry run: nothing was changed."))
        sys.exit(0)
    if not yes:
        if not sys.stdin.isatty():
            click.echo(_("Not applied: add --yes to apply this plan without a terminal to ask on."), err=True)
            sys.exit(1)
        plan = _choose(plan, env, system)
        if not click.confirm(_("Apply this plan?"), default=False):
            click.echo(_("Not applied: nothing was changed."))
            sys.exit(1)
    fixing.apply_plan(plan, env, system)
    click.echo(tr(M("Applied; undo with: {command}", command=_undo_command(env, system))))
    click.echo("")
    outcome = fixing.cleared(plan, env, system)
    for line in fixing.outcome_lines(plan, outcome):
        click.echo(line)
    click.echo("")
    _report_out(outcome.report, doctor_lines, False, chain_first=from_doctor, environ=system.environ,
                exit_code=None if outcome.ok else 1)


def _choose(plan, env, system):
    """Where a step has several ways (which of two torches goes), the user picks one; the plan is shown again
    when the pick is not the one it was drawn with (--yes keeps each step's documented default)."""
    from cudaswitch.cli.output import printable_lines
    from cudaswitch.fix.plan import plan_lines

    picks = {}
    for n, step in enumerate(plan.steps, 1):
        keys = [key for key, _label in step.data.get("choices") or []]
        if keys:
            pick = click.prompt(_("Step {n}: which way?").format(n=n), type=click.Choice(keys),
                                default=step.data.get("choice"))
            if pick != step.data.get("choice"):
                picks[step.fixer] = pick
    if not picks:
        return plan
    plan = plan.rebuilt(env, system, picks)
    for line in plan_lines(plan):
        click.echo(printable_lines(line))
    return plan


def _undo_command(env, system) -> str:
    from cudaswitch.core.shellquote import for_user

    return for_user(["cudaswitch", "doctor", "--undo", "-p", env.prefix], system.environ, system.windows)


@click.command(short_help='The torch versions and pip line that fit this machine.')
@_env_options
@click.option("--torch", "torch_version", callback=_version_arg, metavar="VERSION",
              help="Only this torch release (e.g. 2.4 or 1.12.1).")
@click.option("--python", "python_version", callback=_version_arg, metavar="X.Y",
              help="Python version (default: the environment's, else this interpreter's).")
@click.option("--cuda", "cuda_max", callback=_version_arg, metavar="X.Y",
              help="The driver's maximum CUDA version (default: asked from the driver).")
@click.option("--cc", "capability", callback=_version_arg, metavar="X.Y", help="GPU compute capability.")
@click.option("--toolkit", metavar="SELECTOR", shell_complete=completes("selector"),
              help="Match this CUDA toolkit's version (as for 'use': 11.3, cu113, a folder); default: the one the "
                   "environment was switched to.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@handle_errors
def recommend(name, prefix, torch_version, python_version, cuda_max, capability, toolkit, as_json):
    """The torch/torchvision/torchaudio versions and the pip line that fit this driver, GPU, Python and OS."""
    from cudaswitch.checks.recommend import recommend_lines, run_recommend

    report = run_recommend(_system(), name, prefix, torch_version, python_version, cuda_max, capability, toolkit)
    _report_out(report, recommend_lines, as_json)
