"""`install-cudnn`, `uninstall-cudnn`."""

from __future__ import annotations

import os
import sys

import click

from cudaswitch.cli.common import _json_out, _system, _warn, handle_errors
from cudaswitch.cli.options import _sha256_arg, completes
from cudaswitch.core.i18n import Listed, N_


def _progress(path, quiet, label):
    """A bytes progress bar on stderr for archives over a few MB, only on a terminal and without --quiet."""
    from cudaswitch.cli.output import progress_bar

    return progress_bar(os.path.getsize(path) if os.path.exists(path) else 0, quiet, label)


@click.command("install-cudnn", short_help='Install a cuDNN archive into a toolkit or environment.')
@click.argument("archive", type=click.Path())  # a folder gets our own hint below, not click's "is a directory"
@click.option("--cuda", "cuda", metavar="SELECTOR", shell_complete=completes("selector"),
              help="Toolkit to install into (version or folder).")
@click.option("--into-env", is_flag=True, help="Install into a conda environment instead (no admin rights needed).")
@click.option("-n", "--name", "env_name", metavar="NAME", shell_complete=completes("env_name"),
              help="With --into-env: the environment's name.")
@click.option("-p", "--prefix", "env_prefix", metavar="PREFIX", shell_complete=completes("folder"),
              help="With --into-env: the environment's folder.")
@click.option("--dry-run", is_flag=True, help="Print the plan (each file: new / overwrite / identical); write nothing.")
@click.option("--force", is_flag=True, help="Install even if the archive's CUDA major or version does not match.")
@click.option("--yes", "-y", is_flag=True, help="Replace another cuDNN version without asking.")
@click.option("--sha256", metavar="HEX", callback=_sha256_arg, help="Verify the archive's SHA-256 first.")
@click.option("--redistrib-json", type=click.Path(dir_okay=False), help="Verify against NVIDIA's redistrib_*.json.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, only the result.")
@click.option("--json", "as_json", is_flag=True, help="Print the result record as JSON.")
@handle_errors
def install_cudnn(archive, cuda, into_env, env_name, env_prefix, dry_run, force, yes, sha256, redistrib_json, quiet,
                  as_json):
    """Install a cuDNN ARCHIVE (.zip, .tar.xz, .tar.gz) into a CUDA toolkit or conda environment, undoably."""
    from cudaswitch.cudnn.install import planned
    from cudaswitch.core.errors import UsageError
    from cudaswitch.core.i18n import M, _, tr

    if cuda and (into_env or env_name or env_prefix):
        raise UsageError(N_("--cuda installs into a toolkit, --into-env/-n/-p into a conda environment: give one of "
                            "them"))
    if os.path.isdir(archive):
        raise UsageError(M("{archive} is a folder: install-cudnn installs from the archive NVIDIA ships (the .zip or "
                           ".tar.xz that folder was unpacked from), whose every file it checks and records so that "
                           "'cudaswitch uninstall-cudnn' can undo it; give that archive (download it again from "
                           "https://developer.nvidia.com/cudnn if it is gone)", archive=archive))
    if not os.path.isfile(archive):
        raise UsageError(M("no such archive: {archive}", archive=archive))
    say = (lambda m: None) if (quiet or as_json) else click.echo

    def tell(kind, text):
        if kind == "target":
            # before the unpack, beside its progress bar (a terminal only: the result line names it again)
            if not (quiet or as_json) and sys.stderr.isatty():
                click.echo(_("Installing {archive} {text}...").format(archive=archive, text=tr(text)), err=True)
            return
        say(_("note: {text}").format(text=tr(text)) if kind == "note" else _("Archive SHA-256 verified."))

    def progress(label):
        return _progress(archive, quiet, label)

    with planned(_system(), archive, cuda=cuda, into_env=into_env, name=env_name, prefix=env_prefix, dry_run=dry_run,
                 force=force, sha256=sha256, redistrib_json=redistrib_json, tell=tell, progress=progress) as plan:
        a, target, prep = plan.archive, plan.target, plan.prep
        if not as_json:
            say(tr(M("{archive} [{top}/] -> {target} ({why})", archive=a.label, top=a.top, target=target.label,
                     why=plan.why)))
            for p in prep.problems:
                say(_("warning: --force: {problem}").format(problem=tr(p)))
        if dry_run:
            _print_dry_run(plan, as_json)
            return
        ask = None if (as_json or not sys.stdin.isatty()) else _confirm
        result = plan.carry_out(yes, ask)
    _print_installed(result, as_json)


def _confirm(question):
    try:
        from cudaswitch.core.i18n import tr

        return click.confirm(tr(question), default=False, err=True)
    except (click.exceptions.Abort, KeyboardInterrupt, EOFError):
        return False


# the plan's words for each file, as printed (the --json record keeps the English action)
_ACTIONS = {"new": N_("new"), "overwrite": N_("overwrite"), "identical": N_("identical")}


def _print_dry_run(plan, as_json):
    from pathlib import Path

    from cudaswitch.core.i18n import M, _, tr

    prep, target = plan.prep, plan.target
    if as_json:
        _json_out(plan.to_json())
        return
    for o in prep.ops:
        action = _(_ACTIONS.get(o.action, o.action))
        click.echo(f"  {action:<9} {target.display(Path(o.dest))}" + (f" -> {o.link}" if o.link else ""))
    c = prep.counts
    click.echo(tr(M("Dry run: {new} new, {overwrite} overwrite, {identical} identical; nothing was written.",
                    new=c["new"], overwrite=c["overwrite"], identical=c["identical"])))
    if prep.replaces_other_version:
        click.echo(tr(M("It would replace cuDNN {existing} (asks first, or --yes; uninstall-cudnn undoes it).",
                        existing=prep.existing)))
    _warn(prep.warnings)


def _print_installed(result, as_json):
    from cudaswitch.core.i18n import M, _, tr

    a, target = result.archive, result.target
    if as_json:
        _json_out(result.to_json())
        if result.incomplete:
            sys.exit(1)
        return
    if result.already_installed:
        click.echo(tr(M("cuDNN {version} is already installed there (every file identical); nothing was changed.",
                        version=a.full_version or a.version)))
        return
    for role, n in result.files_per_role().items():
        click.echo("  " + tr(M("{role:<8} {n:>3} files -> {folder}", role=role, n=n, folder=target.dirs[role])))
    c = result.prep.counts
    click.echo(tr(M("Installed cuDNN {version}: {new} new, {overwrite} replaced (backed up), {identical} identical.",
                    version=a.full_version or a.version, new=c["new"], overwrite=c["overwrite"],
                    identical=c["identical"])))
    click.echo(_("Manifest: {manifest}").format(manifest=result.manifest))
    check = result.check
    lib = f"{result.main_library} cudnnGetVersion() = {check['library']}" if check["library"] is not None \
        else _("library {error}").format(error=tr(check["library_error"]))
    values = dict(header=a.header, says=check["header"], lib=lib)
    if check["checked"] == "header only":
        click.echo(tr(M("Checked (header only): include/{header} says {says}; {lib}", **values)))
    elif check["ok"]:
        click.echo(tr(M("Verified: include/{header} says {says}; {lib}", **values)))
    else:
        click.echo(tr(M("Checked: include/{header} says {says}; {lib}", **values)))
    _warn(result.prep.warnings)
    if not result.incomplete:
        _warn(result.check_warnings)
    click.echo(_("Undo with: {command}").format(command=result.undo))
    if result.incomplete:  # the files are in place (undo above), but nothing can use this cuDNN
        from cudaswitch.cli.common import _fail

        _fail(M("the installed {lib} does not load: {names} missing; install a complete cuDNN archive (then "
                "uninstall-cudnn undoes both)", lib=result.main_library, names=Listed(result.check["missing"])), 1)


@click.command("uninstall-cudnn", short_help='Undo the latest install-cudnn.')
@click.option("--cuda", "cuda", metavar="SELECTOR", shell_complete=completes("selector"),
              help="Toolkit to restore.")
@click.option("--into-env", is_flag=True, help="Restore the conda environment instead.")
@click.option("-n", "--name", "env_name", metavar="NAME", shell_complete=completes("env_name"),
              help="With --into-env: the environment's name.")
@click.option("-p", "--prefix", "env_prefix", metavar="PREFIX", shell_complete=completes("folder"),
              help="With --into-env: the environment's folder.")
@click.option("--force", is_flag=True, help="Undo even if installed files changed since (they are kept aside).")
@click.option("--quiet", "-q", is_flag=True, help="Only errors.")
@click.option("--json", "as_json", is_flag=True, help="Print the result record as JSON.")
@handle_errors
def uninstall_cudnn(cuda, into_env, env_name, env_prefix, force, quiet, as_json):
    """Undo the latest install-cudnn: the toolkit is restored byte for byte."""
    from cudaswitch.cudnn.uninstall import undo_latest
    from cudaswitch.core.errors import UsageError
    from cudaswitch.core.i18n import M, _, tr

    if cuda and (into_env or env_name or env_prefix):
        raise UsageError(N_("--cuda restores a toolkit, --into-env/-n/-p a conda environment: give one of them"))
    result = undo_latest(_system(), cuda=cuda, into_env=into_env, name=env_name, prefix=env_prefix, force=force)
    if as_json:
        _json_out(result.to_json())
        return
    if quiet:
        return
    for line in result.recovered:
        click.echo(_("note: {text}").format(text=tr(line)))
    res = result.removed
    if res is None:
        return
    values = dict(version=res.version, target=result.target.label, removed=res.removed, restored=res.restored)
    if res.previous:
        click.echo(tr(M("Removed cuDNN {version} from {target}: {removed} files removed, {restored} restored from "
                        "backup; cuDNN {previous} is back.", previous=res.previous, **values)))
    else:
        click.echo(tr(M("Removed cuDNN {version} from {target}: {removed} files removed, {restored} restored from "
                        "backup.", **values)))
    for k in res.kept:
        click.echo(_("kept changed file: {path}").format(path=k))
