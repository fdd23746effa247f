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
