"""`install-cudnn`, `uninstall-cudnn`."""

from __future__ import annotations

import os
import sys

import click

from cudaswitch.cli.common import _json_out, _system, _warn, handle_errors
from cudaswitch.cli.options import _sha256_arg
from cudaswitch.core.errors import CudaswitchError


def _progress(path, quiet, label):
    """A bytes progress bar on stderr for archives over a few MB, only on a terminal and without --quiet."""
    import contextlib

    size = os.path.getsize(path) if os.path.exists(path) else 0
    if quiet or size < (4 << 20) or not sys.stderr.isatty():
        return contextlib.nullcontext(None)
    return click.progressbar(length=size, label=label, file=sys.stderr, show_pos=False)

@click.command("install-cudnn")
@click.argument("archive", type=click.Path(dir_okay=False))
@click.option("--cuda", "cuda", metavar="SELECTOR", help="Toolkit to install into (version or folder).")
@click.option("--into-env", is_flag=True, help="Install into a conda environment instead (no admin rights needed).")
@click.option("-n", "--name", "env_name", metavar="NAME", help="With --into-env: the environment's name.")
@click.option("-p", "--prefix", "env_prefix", metavar="PREFIX", help="With --into-env: the environment's folder.")
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
    from pathlib import Path

    from cudaswitch.cudnn import install as ci
    from cudaswitch.core.errors import UsageError

    if cuda and (into_env or env_name or env_prefix):
        raise UsageError("--cuda installs into a toolkit, --into-env/-n/-p into a conda environment: give one of them")
    path = Path(archive)
    if not path.is_file():
        raise UsageError(f"no such archive: {archive}")
    system = _system()
    target, why = ci.resolve_target(system, path, cuda, into_env, env_name, env_prefix)
    try:
        fh = open(path, "rb")  # hashed and unpacked from this one open file: a swapped file is never installed
    except OSError as exc:
        raise UsageError(f"cannot read {archive}: {exc.strerror or exc}") from None
    with fh, ci.locked(target):
        _install_cudnn(system, path, target, why, dry_run, force, yes, sha256, redistrib_json, quiet, as_json, fh)


def _install_cudnn(system, path, target, why, dry_run, force, yes, sha256, redistrib_json, quiet, as_json, fh=None):
    from pathlib import Path

    from cudaswitch.cudnn import install as ci
    from cudaswitch.cudnn.archive import verify_integrity
    from cudaswitch.core.errors import UsageError

    say = (lambda m: None) if (quiet or as_json) else click.echo
    if dry_run:  # writes nothing, so it does not recover either; it says what the next command will do
        for line in ci.pending(target):
            say(f"note: {line}")
    else:
        for _what, line in ci.recover_target(target):
            say(f"note: {line}")
    if sha256 or redistrib_json:
        with _progress(path, quiet, "Checking SHA-256") as bar:
            verify_integrity(path, sha256, Path(redistrib_json) if redistrib_json else None,
                             bar.update if bar else None, fh=fh)
        say("Archive SHA-256 verified.")
    with _progress(path, quiet, "Reading" if dry_run else "Unpacking") as bar:
        step = bar.update if bar else None
        prep = ci.scan(path, target, force, step, fh=fh) if dry_run else ci.prepare(path, target, force, step,
                                                                                      fh=fh)
    a = prep.archive
    if not as_json:
        say(f"{a.label} [{a.top}/] -> {target.label} ({why})")
        for p in prep.problems:
            say(f"warning: --force: {p}")
    if dry_run:
        if as_json:
            _json_out({"dry_run": True, "archive": a.to_json(), "target": target.to_json(),
                       "previous_cudnn": prep.existing, "problems": prep.problems,
                       "files": [{"dest": target.display(Path(o.dest)), "action": o.action} for o in prep.ops]})
            return
        for o in prep.ops:
            click.echo(f"  {o.action:<9} {target.display(Path(o.dest))}" + (f" -> {o.link}" if o.link else ""))
        c = prep.counts
        click.echo(f"Dry run: {c['new']} new, {c['overwrite']} overwrite, {c['identical']} identical; "
                   f"nothing was written.")
        if prep.replaces_other_version:
            click.echo(f"It would replace cuDNN {prep.existing} (asks first, or --yes; uninstall-cudnn undoes it).")
        _warn(prep.warnings)
        return
    if prep.ops and all(o.action == "identical" for o in prep.ops):
        ci.abort(prep)
        if as_json:
            _json_out({"installed": False, "already_installed": True, "archive": a.to_json(),
                       "target": target.to_json()})
        else:
            click.echo(f"cuDNN {a.full_version or a.version} is already installed there (every file identical); "
                       f"nothing was changed.")
        return
    if prep.replaces_other_version and not yes:
        question = f"{target.label} has cuDNN {prep.existing}; replace it with {a.version}? (undo: uninstall-cudnn)"
        if not sys.stdin.isatty() or as_json:
            ci.abort(prep)
            raise UsageError(f"{target.label} already has cuDNN {prep.existing}; pass --yes to replace it with "
                             f"{a.version} (uninstall-cudnn undoes it); nothing was changed")
        try:
            answer = click.confirm(question, default=False, err=True)
        except (click.exceptions.Abort, KeyboardInterrupt, EOFError):
            answer = False
        if not answer:
            ci.abort(prep)
            raise CudaswitchError("not replaced; nothing was changed")
    manifest = ci.commit(prep)
    result = ci.verify(prep, system)
    c = prep.counts
    undo = "cudaswitch uninstall-cudnn " + ("-p " if target.kind == "env" else "--cuda ") + _shell_word(
        str(target.root), target.os == "windows")
    if as_json:
        _json_out({"installed": True, "archive": a.to_json(), "target": target.to_json(),
                   "previous_cudnn": prep.existing, "forced": prep.problems, "counts": c,
                   "manifest": target.display(manifest), "verify": result, "warnings": prep.warnings,
                   "files": [{"dest": target.display(Path(o.dest)), "action": o.action, "sha256": o.sha256,
                              "link": o.link} for o in prep.ops], "undo": undo})
        return
    for role in ("bin", "include", "lib"):
        n = sum(1 for o in prep.ops if o.role == role)
        if n:
            click.echo(f"  {role:<8} {n:>3} files -> {target.dirs[role]}")
    click.echo(f"Installed cuDNN {a.full_version or a.version}: {c['new']} new, {c['overwrite']} replaced (backed up), "
               f"{c['identical']} identical.")
    click.echo(f"Manifest: {target.display(manifest)}")
    main_lib = f"cudnn64_{a.cudnn_major}.dll" if target.os == "windows" else f"libcudnn.so.{a.cudnn_major}"
    lib = f"{main_lib} cudnnGetVersion() = {result['library']}" if result["library"] is not None \
        else f"library {result['library_error']}"
    if result["checked"] == "header only":
        click.echo(f"Checked (header only): include/{a.header} says {result['header']}; {lib}")
    else:
        click.echo(f"{'Verified' if result['ok'] else 'Checked'}: include/{a.header} says {result['header']}; {lib}")
    _warn(prep.warnings)
    if result["header"] != a.version:
        _warn([f"the installed header says cuDNN {result['header']}, expected {a.version}"])
    if result["library_error"] and not result["library_error"].startswith("not loaded"):
        _warn([f"the installed {main_lib} did not load: {result['library_error']}"])
    click.echo(f"Undo with: {undo}")


def _shell_word(value: str, windows: bool) -> str:
    """`value` as one word the user can paste into their shell: double quotes for cmd and PowerShell (both take
    "C:\\Program Files\\..." as one argument; Windows paths cannot hold a double quote), POSIX quoting elsewhere."""
    import re

    if windows:
        return f'"{value}"' if re.search(r"[\s&()\[\]{}^=;!'+,`~$%@#]", value) else value
    import shlex

    return shlex.quote(value)


@click.command("uninstall-cudnn")
@click.option("--cuda", "cuda", metavar="SELECTOR", help="Toolkit to restore.")
@click.option("--into-env", is_flag=True, help="Restore the conda environment instead.")
@click.option("-n", "--name", "env_name", metavar="NAME", help="With --into-env: the environment's name.")
@click.option("-p", "--prefix", "env_prefix", metavar="PREFIX", help="With --into-env: the environment's folder.")
@click.option("--force", is_flag=True, help="Undo even if installed files changed since (they are kept aside).")
@click.option("--quiet", "-q", is_flag=True, help="Only errors.")
@click.option("--json", "as_json", is_flag=True, help="Print the result record as JSON.")
@handle_errors
def uninstall_cudnn(cuda, into_env, env_name, env_prefix, force, quiet, as_json):
    """Undo the latest install-cudnn: the toolkit is restored byte for byte."""
    from cudaswitch.cudnn import install as ci
    from cudaswitch.core.errors import UsageError

    if cuda and (into_env or env_name or env_prefix):
        raise UsageError("--cuda restores a toolkit, --into-env/-n/-p a conda environment: give one of them")
    system = _system()
    target, _why = ci.resolve_target(system, None, cuda, into_env, env_name, env_prefix, uninstalling=True)
    with ci.locked(target):
        _uninstall_cudnn(target, force, quiet, as_json)


def _uninstall_cudnn(target, force, quiet, as_json):
    from cudaswitch.cudnn import install as ci

    recovered = ci.recover_target(target)
    notes = [line for _what, line in recovered]
    # an interrupted uninstall that was just completed, or a rolled-back install, is what the user asked for
    if any(what != "installed" for what, _line in recovered) or (notes and not ci.installed_records(target)):
        if as_json:
            _json_out({"uninstalled": False, "recovered": notes, "target": target.to_json()})
        elif not quiet:
            for line in notes:
                click.echo(f"note: {line}")
        return
    res = ci.uninstall(target, force)
    if as_json:
        _json_out({"uninstalled": True, "recovered": notes, "target": target.to_json(), **res.to_json()})
        return
    if quiet:
        return
    for line in notes:
        click.echo(f"note: {line}")
    back = f"; cuDNN {res.previous} is back" if res.previous else ""
    click.echo(f"Removed cuDNN {res.version} from {target.label}: {res.removed} files removed, {res.restored} "
               f"restored from backup{back}.")
    for k in res.kept:
        click.echo(f"kept changed file: {k}")
