"""`smoke`, `doctor`, `recommend`: does torch work here, and if not, why."""

from __future__ import annotations

import sys

import click

from cudaswitch.cli.common import _json_out, _record_smoke, _system, handle_errors
from cudaswitch.cli.options import _env_options, _seconds, _version_arg


@click.command()
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

@click.command()
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


@click.command()
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
