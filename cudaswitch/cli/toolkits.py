"""`install-toolkit`, `uninstall-toolkit`."""

from __future__ import annotations


import click

from cudaswitch.cli.common import _json_out, _system, handle_errors


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
    click.echo(f"Installed CUDA {r.version} at {r.root} from {len(r.wheels)} NVIDIA wheels "
               f"({r.download_bytes / 1e6:.0f} MB downloaded, {r.disk_bytes / 1e6:.0f} MB on disk).")
    click.echo(f"Use it: cudaswitch use {r.root}   Remove it: cudaswitch uninstall-toolkit {r.root}")


@click.command("uninstall-toolkit")
@click.argument("selector")
@handle_errors
def uninstall_toolkit(selector):
    """Remove a toolkit 'cudaswitch install-toolkit' made (X.Y or its folder), and nothing else."""
    from cudaswitch.discovery.toolkit_install import uninstall

    click.echo(f"Removed {uninstall(selector, _system())}.")
