"""Command line: parses, calls the core modules, prints. No logic of its own."""

from __future__ import annotations

import functools
import os
import sys

import click

from cudaswitch import __version__
from cudaswitch.errors import CudaswitchError

JSON_SCHEMA = 1


def _fail(message: str, code: int) -> None:
    click.echo(f"cudaswitch: error: {message}", err=True)
    sys.exit(code)


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
        except click.exceptions.Exit:
            raise
        except click.ClickException:
            raise
        except Exception as exc:  # a bug: still one line, the traceback only on request
            if os.environ.get("CUDASWITCH_DEBUG"):
                raise
            _fail(f"internal error: {type(exc).__name__}: {exc} (set CUDASWITCH_DEBUG=1 for the traceback)", 70)

    return wrapper


def _system():
    from cudaswitch.system import System

    return System.current()


def _discover(system):
    from cudaswitch.toolkits import discover

    return discover(system)


def _warn(lines):
    for line in lines:
        click.echo(f"warning: {line}", err=True)


def _json_out(payload: dict) -> None:
    from cudaswitch.render import to_json

    click.echo(to_json({"schema": JSON_SCHEMA, **payload}))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cudaswitch")
def main():
    """See, switch and verify the CUDA toolkit each conda environment uses."""


@main.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (schema in the README).")
@handle_errors
def list_cmd(as_json):
    """Every installed CUDA toolkit with its exact version."""
    from cudaswitch.shellstate import shell_state

    system = _system()
    found = _discover(system)
    state = shell_state(found.toolkits, system)
    if as_json:
        tks = []
        for tk in found.toolkits:
            d = tk.to_json()
            d["active"] = tk.root == state.active
            tks.append(d)
        _json_out({"toolkits": tks, "warnings": found.warnings, "errors": found.config_errors})
    else:
        from cudaswitch.render import table

        rows = []
        for tk in found.toolkits:
            notes = list(tk.flags) + ([f"alias {', '.join(tk.aliases)}"] if tk.aliases else [])
            rows.append(["*" if tk.root == state.active else "", tk.version, tk.root, ", ".join(tk.sources),
                         "yes" if tk.nvcc else "no", tk.cudnn or "-", "; ".join(notes)])
        if rows:
            click.echo(table(["", "VERSION", "ROOT", "SOURCE", "NVCC", "CUDNN", "NOTES"], rows))
        else:
            click.echo("No CUDA toolkit found. Install one, or add its folder to CUDASWITCH_SEARCH_PATH.")
        _warn(found.warnings)
    for err in found.config_errors:
        click.echo(f"cudaswitch: error: {err}", err=True)
    if found.config_errors:
        sys.exit(1)


@main.command()
@click.argument("selector")
@click.option("--bin", "what", flag_value="bin", help="Print the bin folder(s).")
@click.option("--lib", "what", flag_value="lib", help="Print the library folder(s).")
@click.option("--nvcc", "what", flag_value="nvcc", help="Print the nvcc path.")
@handle_errors
def which(selector, what):
    """Print the root (or bin, lib, nvcc) of the toolkit SELECTOR names, for scripts."""
    from cudaswitch.errors import CudaswitchError
    from cudaswitch.toolkits import select

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
    from cudaswitch.shellstate import shell_state

    system = _system()
    found = _discover(system)
    state = shell_state(found.toolkits, system)
    if as_json:
        _json_out({"shell": state.to_json(), "warnings": found.warnings})
        return
    from cudaswitch.render import table

    rows = []
    for e in state.entries:
        where = f"{e.variable}[{e.position}]" if e.position is not None else e.variable
        mapped = f"CUDA {e.toolkit}" if e.toolkit else ("-" if e.value is None else "not a known toolkit")
        rows.append([where, "(unset)" if e.value is None else e.value, mapped])
    click.echo(table(["VARIABLE", "VALUE", "TOOLKIT"], rows))
    active = next((t for t in found.toolkits if t.root == state.active), None)
    click.echo(f"\nActive: CUDA {active.version} ({active.root})" if active else "\nActive: no CUDA toolkit")
    for w in state.warnings:
        click.echo(f"warning: {w}")


# ---- smoke test, doctor, recommend (issue 5) ----

def _env_options(fn):
    fn = click.option("-p", "--prefix", "prefix", metavar="PREFIX", help="The environment at this folder.")(fn)
    fn = click.option("-n", "--name", "name", metavar="NAME", help="The conda environment of this name.")(fn)
    return fn


def _positive(ctx, param, value):
    if value is not None and value <= 0:
        raise click.BadParameter("must be a positive number of seconds")
    return value


def _version_arg(ctx, param, value):
    import re

    if value is not None and not re.fullmatch(r"\d+(\.\d+){0,2}", value.strip()):
        raise click.BadParameter(f"{value!r} is not a version like 12.4 or 2.7.1")
    return value.strip() if value else value


@main.command()
@_env_options
@click.option("--json", "as_json", is_flag=True, help="One JSON record with every field and the classification.")
@click.option("--cpu-ok", is_flag=True, help="No GPU is not a failure (CPU-only machines, CPU builds).")
@click.option("--timeout", type=float, default=180.0, show_default=True, callback=_positive,
              help="Seconds the probe may take.")
@handle_errors
def smoke(name, prefix, as_json, cpu_ok, timeout):
    """Prove torch computes: the env's own Python, with the env's hooks applied, runs matmul, conv2d, autocast.

    Exit 0: pass (or torch not installed: skipped); 1: a check failed (code, cause and fix printed); 2: usage."""
    from cudaswitch.environment import resolve_env
    from cudaswitch.smoke import render, run_smoke

    system = _system()
    env = resolve_env(system, name, prefix, command="smoke")
    report = run_smoke(env, system, timeout=timeout, cpu_ok=cpu_ok)
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
    from cudaswitch.doctor import run_doctor
    from cudaswitch.environment import resolve_env
    from cudaswitch.errors import UsageError

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
            click.echo(f"torch (from its files): {t['version']}, CUDA {t.get('cuda') or 'none'}, "
                       f"Python {t.get('python') or '?'}")
    if not report.findings:
        click.echo("no problems found")
    for f in report.findings:
        click.echo(f"{f.severity:<8} {f.code}: {f.cause}")
        if f.fix and f.fix != "-" and f.severity != "info":
            click.echo(f"{'':<8} fix: {f.fix}")
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
    from cudaswitch import knowledge
    from cudaswitch.doctor import torch_installs
    from cudaswitch.environment import resolve_env
    from cudaswitch.smoke import driver_info

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
