"""`smoke`, `doctor`, `recommend`: does torch work here, and if not, why."""

from __future__ import annotations

import sys

import click

from cudaswitch.cli.common import _as_owner, _json_out, _record_smoke, _system, handle_errors
from cudaswitch.cli.options import _env_options, _seconds, _version_arg, completes


def _report_out(report, lines, as_json: bool, chain_first=None, chain_last=None, environ=None) -> None:
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
    sys.exit(report.exit_code)


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
@_env_options
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@handle_errors
def doctor(name, prefix, as_json):
    """Machine and shell checks that need no torch: PATH, CUDA_PATH/CUDA_HOME, ld.so.conf.d, driver, WSL, hooks.

    Exit 1 when a finding is an error, 0 otherwise."""
    from cudaswitch.checks.doctor import doctor_env, doctor_lines, run_doctor

    system = _system()
    report = run_doctor(system, doctor_env(system, name, prefix))
    from cudaswitch.checks.chain import from_doctor

    _report_out(report, doctor_lines, as_json, chain_first=from_doctor, environ=system.environ)


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
