"""`modulefile`: a toolkit as a module for Lmod or Environment Modules."""

from __future__ import annotations

from pathlib import Path

import click

from cudaswitch.cli.options import completes

from cudaswitch.cli.common import _discover, _json_out, _system, handle_errors
from cudaswitch.core.i18n import M


@click.command("modulefile", short_help='Write a modulefile that loads a toolkit.')
@click.argument("selector", shell_complete=completes("selector"))
@click.argument("folder", required=False, metavar="[DIR]")
@click.option("--lmod", "syntax", flag_value="lua", help="Write Lmod's Lua (the default where Lmod runs).")
@click.option("--tcl", "syntax", flag_value="tcl", help="Write Tcl, which both module systems read (the default "
              "elsewhere).")
@click.option("--name", "name", metavar="NAME/VERSION", help="The module's name (default: cuda/X.Y).")
@click.option("--force", is_flag=True, help="Replace a different modulefile already there.")
@click.option("--json", "as_json", is_flag=True, help="Print the result record as JSON.")
@handle_errors
def modulefile(selector, folder, syntax, name, force, as_json):
    """Write a modulefile that loads the toolkit SELECTOR names into DIR (a MODULEPATH folder), or print it."""
    from cudaswitch.core.errors import UsageError
    from cudaswitch.discovery.modules import default_syntax, export, module_name
    from cudaswitch.discovery.toolkits import select

    system = _system()
    tk = select(_discover(system), selector, system)
    syntax = syntax or default_syntax(system)
    target = None
    if folder is not None:
        target = Path(folder).expanduser()
        if not target.is_dir():
            raise UsageError(M("no such folder: {folder}; create it, or give a folder on MODULEPATH", folder=folder))
    result = export(tk, syntax, module_name(tk, name), target, force)
    if as_json:
        _json_out({"name": result.name, "syntax": result.syntax, "path": result.path, "unchanged": result.unchanged,
                   "toolkit": tk.to_json(), "text": result.text})
        return
    if result.path is None:
        click.echo(result.text, nl=False)
        return
    from cudaswitch.core.i18n import tr

    kind = "Lmod" if result.syntax == "lua" else "Tcl"
    if result.unchanged:
        click.echo(tr(M("{path} already holds this modulefile; nothing was changed", path=result.path)))
    else:
        click.echo(tr(M("Wrote {path} ({kind}) for CUDA {version} at {root}.", path=result.path, kind=kind,
                        version=tk.version, root=tk.root)))
    click.echo(tr(M("Load it with: module use {folder} && module load {name}", folder=folder, name=result.name)))
