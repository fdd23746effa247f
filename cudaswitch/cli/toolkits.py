"""`install-toolkit`, `uninstall-toolkit`."""

from __future__ import annotations


import click

from cudaswitch.cli.common import _json_out, _system, handle_errors
from cudaswitch.core.i18n import _


@click.command("install-toolkit")
@click.argument("version")
@click.option("--into", metavar="DIR", help="Install into this new folder (default: the user data folder).")
@click.option("--quiet", "-q", is_flag=True, help="No pip progress, only the result.")
@click.option("--json", "as_json", is_flag=True, help="Print the result record as JSON.")
@handle_errors
def install_toolkit(version, into, quiet, as_json):
    """Assemble CUDA toolkit VERSION (X.Y) from NVIDIA's PyPI wheels, without admin rights."""
    from cudaswitch.discovery.toolkit_install import install

    r = install(version, _system(), into, show_progress=not (quiet or as_json))
    if as_json:
        return _json_out({"installed": r.to_json()})
    click.echo(_("Installed CUDA {version} at {root} from {wheels} NVIDIA wheels ({downloaded:.0f} MB downloaded, "
                 "{on_disk:.0f} MB on disk).").format(version=r.version, root=r.root, wheels=len(r.wheels),
                                                       downloaded=r.download_bytes / 1e6, on_disk=r.disk_bytes / 1e6))
    from cudaswitch.core.shellquote import for_user  # the folder may hold spaces: pasted, it must stay one word
    click.echo(_("Use it: cudaswitch use {root}   Remove it: cudaswitch uninstall-toolkit {root}").format(
        root=for_user([r.root])))


@click.command("uninstall-toolkit")
@click.argument("selector")
@handle_errors
def uninstall_toolkit(selector):
    """Remove a toolkit 'cudaswitch install-toolkit' made (X.Y or its folder), and nothing else."""
    from cudaswitch.discovery.toolkit_install import uninstall

    click.echo(_("Removed {what}.").format(what=uninstall(selector, _system())))
