"""What every command shares: one-line errors and exit codes, the System of this run, warnings and JSON out."""

from __future__ import annotations

import errno
import functools
import os
import sys

import click

from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import Listed, M, N_

JSON_SCHEMA = 1


def _fail(message: str, code: int) -> None:
    import re

    from cudaswitch.cli.output import error_line, printable

    try:
        # translated first (a marked message keeps its template), then one line: a path's own spaces stay as they
        # are; control characters are shown, not sent
        click.echo(printable(re.sub(r"\s*[\r\n]+\s*", " ", error_line(message))), err=True)
    except OSError:
        pass  # stderr is gone too; the exit code still says it
    sys.exit(code)


def _silence_stdout() -> None:
    """After stdout failed (reader gone, disk full), point it at /dev/null so that the interpreter's final flush of
    what is still buffered neither fails again nor prints 'Exception ignored'."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (tests capture it): nothing will be flushed at exit


# Failures of the machine or of the user's rights, not of cudaswitch: one line naming the file, like every error.
_ENVIRONMENT_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EIO}


def _os_error_line(exc: OSError) -> str:
    what = exc.strerror or str(exc)
    if exc.filename is None:
        return M("cannot write the output: {reason}", reason=what)
    if exc.errno == errno.EROFS:
        return M("cannot write to {path}: it is on a read-only file system; nothing more was changed",
                 path=exc.filename)
    return M("cannot use {path}: {reason}", path=exc.filename, reason=what)


def handle_errors(fn):
    """Expected failures become one line on stderr and an exit code; unexpected ones too, without a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except CudaswitchError as exc:
            _fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            _fail(N_("interrupted"), 130)
        except BrokenPipeError:  # `cudaswitch list | head`: the reader left; stop quietly, as other tools do
            _silence_stdout()
            sys.exit(141)
        except click.exceptions.Exit:
            raise
        except click.exceptions.Abort:  # "no", Ctrl-C or Ctrl-D at a question: the answer, not a failure
            _fail(N_("aborted; nothing was changed"), 1)
        except click.ClickException:
            raise
        except OSError as exc:
            if exc.errno not in _ENVIRONMENT_ERRNOS or _debugging():
                _internal(exc)
            if exc.filename is None:
                _silence_stdout()
            _fail(_os_error_line(exc), 1)
        except Exception as exc:  # a bug: still one line, the traceback only on request
            _internal(exc)

    return wrapper


def _debugging() -> bool:
    # not System.current(): that can itself refuse (a relocated root), and this runs while reporting a failure
    from cudaswitch.core.system import System

    return bool(System().environ.get("CUDASWITCH_DEBUG"))


def _internal(exc: BaseException) -> None:
    if _debugging():
        raise exc
    _fail(M("internal error: {kind}: {error} (set CUDASWITCH_DEBUG=1 for the traceback)",
            kind=type(exc).__name__, error=str(exc)), 70)


def _system():
    from cudaswitch.core import system as system_mod

    system = system_mod.System.current()
    note = system.relocation_note()
    if note and not system_mod.QUIET_RELOCATION:
        from cudaswitch.core.i18n import _, tr

        click.echo(_("cudaswitch: note: {note}").format(note=tr(note)), err=True)
    return system


def _as_owner(env, work):
    """work() as the owner of `env` where cudaswitch runs with more privilege (core/asowner.py), saying so on
    stderr; here otherwise."""
    from cudaswitch.cli.output import printable
    from cudaswitch.core.asowner import as_owner_of
    from cudaswitch.core.i18n import _, tr

    return as_owner_of(env.prefix, work, lambda line: click.echo(printable(
        _("cudaswitch: note: {note}").format(note=tr(line))), err=True))


def _discover(system):
    from cudaswitch.discovery.selector_cache import discover_keeping

    return discover_keeping(system)


def _warn(lines):
    from cudaswitch.cli.output import printable, warning_line

    for line in lines:
        click.echo(printable(warning_line(line)), err=True)


def _note(lines):
    """Notes on stderr (which of two identical toolkits a selector chose): stdout stays the answer scripts read."""
    from cudaswitch.cli.output import printable
    from cudaswitch.core.i18n import _, tr

    for line in lines:
        click.echo(printable(_("note: {text}").format(text=tr(line))), err=True)


def _json_out(payload: dict) -> None:
    from cudaswitch.cli.output import to_json

    click.echo(to_json({"schema": JSON_SCHEMA, **payload}))


def _record_smoke(env, report):
    """Keep the result for `cudaswitch envs`; an environment the user may read but not write (a shared one) still
    gets its smoke test, only without the record."""
    from cudaswitch.discovery.environment import record_smoke

    if report.status != "skip":
        try:
            record_smoke(env, report.status, report.code)
        except (CudaswitchError, OSError):
            pass


def _no_nvcc_note(tk, system, path):
    """A toolkit without nvcc cannot put one first on PATH: say which nvcc the user gets instead (the trap of a
    runtime-only install), or that there is none."""
    if tk.nvcc:
        return []
    other = system.which("nvcc", path)
    got = M("'nvcc' is {nvcc}, from another toolkit", nvcc=other) if other else M("no nvcc is on PATH")
    return [M("CUDA {version} at {root} has no nvcc ({flags}); {got}", version=tk.version, root=tk.root,
              flags=Listed(tk.flags), got=got)]
