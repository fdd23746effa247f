"""`list`, `which`, `status`, `envs`: what is installed and what is switched where."""

from __future__ import annotations

import os
import sys

import click

from cudaswitch.cli.options import completes

from cudaswitch.cli.common import _discover, _json_out, _no_nvcc_note, _note, _system, _warn, handle_errors
from cudaswitch.core.i18n import Listed, M, N_, _, tr


def _source_label(source: str) -> str:
    """`list`'s SOURCE in the user's language: the kinds of place are words (search path, nvcc on PATH); folders,
    variable names and registry keys are names and stay as they are."""
    words = {"search path": N_("search path"), "nvcc on PATH": N_("nvcc on PATH"), "conda env": N_("conda env"),
             "pip wheels": N_("pip wheels"), "command line": N_("command line"),
             "debian-package": N_("debian-package")}
    if source.startswith("registry "):
        return _("registry {key}").format(key=source[len("registry "):])
    return tr(words[source]) if source in words else source


@click.command("list", short_help='Every installed CUDA toolkit with its exact version.')
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (schema in the user guide).")
@handle_errors
def list_cmd(as_json):
    """Every installed CUDA toolkit with its exact version."""
    from cudaswitch.discovery.shellstate import shell_state

    system = _system()
    found = _discover(system)
    state = shell_state(found.toolkits, system)
    warnings = found.warnings + ([state.unsearchable_note] if state.unsearchable_note else [])
    if as_json:
        tks = []
        for tk in found.toolkits:
            d = tk.to_json()
            d["active"] = tk.root == state.active
            tks.append(d)
        _json_out({"toolkits": tks, "cudnn_installs": [c.to_json() for c in found.cudnn_installs],
                   "warnings": warnings, "errors": found.config_errors})
    else:
        from cudaswitch.cli.output import table

        rows = []
        for tk in found.toolkits:
            notes = list(tk.flags) + ([_("alias {names}").format(names=_(", ").join(tk.aliases))] if tk.aliases else [])
            rows.append(["*" if tk.root == state.active else "", tk.version, tk.root,
                         _(", ").join(_source_label(s) for s in tk.sources),  # '、' in Chinese
                         _("yes") if tk.nvcc else _("no"), tk.cudnn or "-", "; ".join(notes)])
        if rows:
            click.echo(table(["", _("VERSION"), _("ROOT"), _("SOURCE"), "NVCC", "CUDNN", _("NOTES")], rows))
        else:
            click.echo(_("No CUDA toolkit found. Install one, or add its folder to CUDASWITCH_SEARCH_PATH."))
        _cudnn_installs_table(found.cudnn_installs)
        _warn(warnings)
    from cudaswitch.cli.output import error_line

    for err in found.config_errors:
        click.echo(error_line(err), err=True)
    if found.config_errors:
        sys.exit(1)


def _cudnn_installs_table(installs):
    if installs:
        from cudaswitch.cli.output import table

        click.echo("\n" + _("cuDNN from NVIDIA's installer:"))
        click.echo(table(["CUDNN", _("FOR CUDA"), _("DLL FOLDER")],
                         [[c.version or _("unknown"), c.cuda,
                           c.bin_dir if c.dll else _("{folder} (no cudnn64_*.dll)").format(folder=c.bin_dir)]
                          for c in installs]))


@click.command(short_help="Print a toolkit's root, bin, lib or nvcc.")
@click.argument("selector", shell_complete=completes("selector"))
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
        raise UsageError(M("give one of --bin, --lib, --nvcc, not {options}",
                           options=_(" and ").join("--" + a for a in asked)))
    what = asked[0] if asked else None

    system = _system()
    notes = []
    tk = select(_discover(system), selector, system, notes=notes)
    _note(notes)
    if what == "bin":
        lines = tk.bin_dirs
    elif what == "lib":
        lines = tk.lib_dirs
    elif what == "nvcc":
        if not tk.nvcc:
            raise CudaswitchError(M("CUDA {version} at {root} has no nvcc (flags: {flags})", version=tk.version,
                                    root=tk.root, flags=Listed(tk.flags)))
        lines = [tk.nvcc]
    else:
        lines = [tk.root]
    for line in lines:
        click.echo(line)


@click.command(short_help="What this shell uses: CUDA variables, nvcc, PATH.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@handle_errors
def status(as_json):
    """What this shell uses: CUDA_PATH, CUDA_HOME, nvcc, and the CUDA entries of PATH/LD_LIBRARY_PATH."""
    from cudaswitch.discovery.shellstate import shell_state

    system = _system()
    found = _discover(system)
    state = shell_state(found.toolkits, system)
    from cudaswitch.checks.hookhealth import env_report

    report = env_report(system, found)
    from cudaswitch.checks.modules import loaded_cuda, module_findings

    modules = loaded_cuda(system, found.toolkits)
    selected = next((t for t in found.toolkits if report and report["state"] and t.root == report["state"]["root"]),
                    None)
    module_warnings = [M("{cause}; {fix}", cause=f.cause, fix=f.fix)
                       for f in module_findings(system, found.toolkits, selected)]
    if as_json:
        from cudaswitch.discovery.cudnn_windows import dll_on_path

        _json_out({"shell": state.to_json(), "env": report, "warnings": found.warnings + module_warnings,
                   "modules": [m._asdict() for m in modules],
                   "cudnn_installs": [c.to_json() for c in found.cudnn_installs],
                   "cudnn_dll_on_path": dll_on_path(system) if system.windows else None})
        return
    from cudaswitch.cli.output import finding_line, table, warning_line
    from cudaswitch.core.i18n import tr

    rows = []
    for e in state.entries:
        where = f"{e.variable}[{e.position}]" if e.position is not None else e.variable
        mapped = f"CUDA {e.toolkit}" if e.toolkit else ("-" if e.value is None else _("not a known toolkit"))
        rows.append([where, _("(unset)") if e.value is None else e.value, mapped])
    click.echo(table([_("VARIABLE"), _("VALUE"), _("TOOLKIT")], rows))
    active = next((t for t in found.toolkits if t.root == state.active), None)
    click.echo("\n" + (_("Active: CUDA {version} ({root})").format(version=active.version, root=active.root)
                       if active else _("Active: no CUDA toolkit")))
    if system.windows:
        from cudaswitch.discovery.cudnn_windows import dll_on_path

        click.echo(_("cuDNN on PATH: {dll}").format(
            dll=dll_on_path(system) or _("none (no cudnn64_*.dll in any PATH folder)")))
        _cudnn_installs_table(found.cudnn_installs)
    if report:
        st = report["state"]
        click.echo(_("Environment {name} ({prefix}): {state}").format(
            name=report["name"], prefix=report["prefix"], state=_(
                "cudaswitch selects CUDA {version} ({root}), chosen with '{selector}' at {time}").format(**st)
            if st else _("not switched by cudaswitch")))
        if st:
            from cudaswitch.switching.pythonhook import status_line

            click.echo("  " + tr(status_line(report["python_hook"], st.get("python_hook"))))
            for f in (report["hooks"] or {}).get("findings", []):
                click.echo("  " + finding_line(f["code"], M("{cause}; {fix}", cause=f["cause"], fix=f["fix"])))
        gone = st and not system.local(st["root"]).is_dir()
        if gone:
            click.echo(finding_line("TOOLKIT_MISSING", M(
                "CUDA {version} at {root}, which this environment uses, is gone (TOOLKIT_MISSING); 'cudaswitch "
                "list' shows what is installed, 'cudaswitch use SELECTOR' switches to one of them",
                version=st["version"], root=st["root"])))
        elif st and system.environ.get("CUDA_HOME") != st["root"]:
            from cudaswitch.discovery.activation_scripts import last_setter, shell_extension
            from cudaswitch.switching.switch import apply_now_hint

            # another activation script that runs after cudaswitch's sets it: activating again changes nothing
            last = last_setter(report["prefix"], "CUDA_HOME", shell_extension(system.environ, system.windows))
            if last is not None and last.kind == "script" and not os.path.basename(last.source).startswith(
                    "cudaswitch."):
                click.echo("  " + tr(M("not applied to this shell: {script} sets CUDA_HOME ({value}) and runs after "
                                       "cudaswitch's hook (conda runs the activate.d scripts in name order), so the "
                                       "last word is its own and activating again changes nothing; edit or remove "
                                       "that script ('conda list' names the package of one you did not write)",
                                       script=last.source, value=last.value)))
            else:
                click.echo("  " + _("not applied to this shell yet: {hint}").format(
                    hint=tr(apply_now_hint(report["name"], report["prefix"], system.windows, system))))
    for m in modules:
        click.echo(_("Module loaded: {name} ({toolkit})").format(name=m.name, toolkit=_(
            "CUDA {version} at {root}").format(version=m.version, root=m.root) if m.version else m.root or _(
            "its toolkit folder cannot be read from {path}").format(path=m.path)))
    for w in state.warnings + (_no_nvcc_note(active, system, system.environ.get("PATH")) if active else []) + \
            module_warnings:
        click.echo(warning_line(w))
    from cudaswitch.switching.startup import user_reconciler_missing

    missing = user_reconciler_missing(system)
    for entry in (report or {}).get("leftover_path", []):
        said = M("PATH still holds {entry}, added by a cudaswitch environment this shell switched away from (conda "
                 "re-exports it, conda#14762); it goes when you deactivate back through that environment, or in a "
                 "new shell", entry=entry)
        if missing or system.environ.get("CUDASWITCH_RECONCILER") != "1":  # the cleanup that removes it at the prompt
            said = M("{said}; 'cudaswitch init {shell} --install' adds a prompt-time cleanup that removes it",
                     said=said, shell=missing or "SHELL")
        click.echo(warning_line(said))



@click.command(short_help="Every conda environment, its toolkit and torch.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (schema in the user guide).")
@handle_errors
def envs(as_json):
    """Every conda environment: the toolkit cudaswitch switches it to, torch and its CUDA/cuDNN, pip CUDA wheels,
    the last smoke test. Read from files only.

    Exit 1 when no conda installation and no environment is found (the JSON record is still printed)."""
    from cudaswitch.core.errors import CudaswitchError
    from cudaswitch.core.i18n import N_
    from cudaswitch.discovery.envs_report import envs_report, table_rows
    from cudaswitch.cli.output import table

    report = envs_report(_system())
    if not report["envs"] and not report["conda"]["root_prefix"]:
        if as_json:
            _json_out(report)
        raise CudaswitchError(N_("no conda found: CONDA_EXE is not set and no conda environment is known; run this "
                                 "where 'conda activate' works (after 'conda init'), or set CONDA_EXE to your conda "
                                 "program (e.g. ~/miniconda3/bin/conda)"))
    if as_json:
        return _json_out(report)
    headers = ["", _("NAME"), _("PREFIX"), "CUDA", "TORCH", _("PIP CUDA"), _("SMOKE")]
    click.echo(table(headers, table_rows(report["envs"])))
    _warn(report["conda"]["problems"] + [p for r in report["envs"] for p in r["problems"]])
