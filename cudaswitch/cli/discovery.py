"""`list`, `which`, `status`, `envs`: what is installed and what is switched where."""

from __future__ import annotations

import sys

import click

from cudaswitch.cli.common import _discover, _json_out, _no_nvcc_note, _system, _warn, handle_errors


@click.command("list")
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


@click.command()
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


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@handle_errors
def status(as_json):
    """What this shell uses: CUDA_PATH, CUDA_HOME, nvcc, and the CUDA entries of PATH/LD_LIBRARY_PATH."""
    from cudaswitch.discovery.shellstate import shell_state

    system = _system()
    found = _discover(system)
    state = shell_state(found.toolkits, system)
    from cudaswitch.discovery.shellstate import env_report

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
            from cudaswitch.switching.switch import apply_now_hint

            click.echo(f"  not applied to this shell yet: "
                       f"{apply_now_hint(report['name'], report['prefix'], system.windows, system)}")
    for w in state.warnings + (_no_nvcc_note(active, system, system.environ.get("PATH")) if active else []):
        click.echo(f"warning: {w}")
    for entry in (report or {}).get("leftover_path", []):
        click.echo(f"warning: PATH still holds {entry}, added by a cudaswitch environment this shell switched away "
                   f"from (conda re-exports it, conda#14762); it goes when you deactivate back through that "
                   f"environment, or in a new shell")



@click.command()
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
