"""`install-toolkit`, `uninstall-toolkit`."""

from __future__ import annotations

import click

from cudaswitch.cli.options import completes

from cudaswitch.cli.common import _json_out, _system, handle_errors
from cudaswitch.core.i18n import Listed, _


@click.command("install-toolkit", short_help="Assemble a CUDA toolkit from NVIDIA's PyPI wheels.")
@click.argument("version")
@click.option("--into", metavar="DIR", help="Install into this new folder (default: the user data folder).")
@click.option("--again", is_flag=True, help="Install even if a toolkit of the same version is already installed.")
@click.option("--quiet", "-q", is_flag=True, help="No pip progress, only the result.")
@click.option("--json", "as_json", is_flag=True, help="Print the result record as JSON.")
@handle_errors
def install_toolkit(version, into, again, quiet, as_json):
    """Assemble CUDA toolkit VERSION (13.0, 13, 13.0.88, cu130) from NVIDIA's PyPI wheels, without admin rights."""
    from cudaswitch.cli.output import progress_bar
    from cudaswitch.discovery.toolkit_install import install

    loud = not (quiet or as_json)

    def tell(full, dest):
        if loud:
            click.echo(_("Installing CUDA {version} into {dest}...").format(version=full, dest=dest), err=True)

    r = install(version, _system(), into, show_progress=loud, again=again, tell=tell,
                progress=lambda size: progress_bar(size, not loud, _("Unpacking")))
    if as_json:
        return _json_out({"installed": r.to_json()})
    if r.already:
        from cudaswitch.core.shellquote import for_user

        click.echo(_("CUDA {version} is already installed at {root}; nothing was downloaded.").format(
            version=r.version, root=r.root))
        # one command per line, so that each can be pasted as it is
        click.echo(_("Use it: cudaswitch use {root}").format(root=for_user([r.root])))
        click.echo(_("Another copy: add --again"))
        return
    click.echo(_("Installed CUDA {version} at {root} from {wheels} NVIDIA wheels ({downloaded:.0f} MB downloaded, "
                 "{on_disk:.0f} MB on disk).").format(version=r.version, root=r.root, wheels=len(r.wheels),
                                                       downloaded=r.download_bytes / 1e6, on_disk=r.disk_bytes / 1e6))
    from cudaswitch.core.shellquote import for_user  # the folder may hold spaces: pasted, it must stay one word
    click.echo(_("Use it: cudaswitch use {root}").format(root=for_user([r.root])))
    click.echo(_("Remove it: cudaswitch uninstall-toolkit {root}").format(root=for_user([r.root])))


@click.command("uninstall-toolkit", short_help='Remove a toolkit install-toolkit made.')
@click.argument("selector", shell_complete=completes("selector"))
@click.option("--yes", "-y", "--force", "force", is_flag=True,
              help="Remove it even if conda environments are switched to it.")
@handle_errors
def uninstall_toolkit(selector, force):
    """Remove a toolkit 'cudaswitch install-toolkit' made (a version or its folder), and nothing else."""
    from cudaswitch.discovery.toolkit_install import uninstall

    from cudaswitch.cli.common import _warn
    from cudaswitch.core.i18n import M

    root, broken = uninstall(selector, _system(), force=force)
    click.echo(_("Removed {what}.").format(what=root))
    if broken:  # removed with --force: the environments whose hooks now name nothing, each to switch again
        _warn([M("{count} conda environment(s) are still switched to {root}, which is gone: {envs}; activating them "
                 "warns and sets no CUDA until 'cudaswitch use VERSION -p PREFIX' or 'cudaswitch off -p PREFIX'",
                 count=len(broken), root=root, envs=Listed(broken))])
