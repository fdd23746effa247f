"""Command line: parses, calls the core, prints. Each command group is its own module, imported only when
that command runs (start-up time is part of every command)."""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import sys

import click

from cudaswitch import __version__
from cudaswitch.cli.common import _ENVIRONMENT_ERRNOS, _fail, _os_error_line, _silence_stdout
from cudaswitch.core.i18n import M, N_

# command name -> module:function under cudaswitch/cli/
_COMMANDS = {
    "list": "discovery:list_cmd",
    "which": "discovery:which",
    "status": "discovery:status",
    "envs": "discovery:envs",
    "use": "switching:use",
    "off": "switching:off",
    "init": "switching:init",
    "run": "switching:run",
    "smoke": "checks:smoke",
    "doctor": "checks:doctor",
    "recommend": "checks:recommend",
    "install-cudnn": "cudnn:install_cudnn",
    "uninstall-cudnn": "cudnn:uninstall_cudnn",
    "install-toolkit": "toolkits:install_toolkit",
    "uninstall-toolkit": "toolkits:uninstall_toolkit",
    "modulefile": "modules:modulefile",
}


class _Context(click.Context):
    def make_formatter(self):  # --help in the user's language; English help is click's own, untouched
        from cudaswitch.core import i18n

        if i18n.current_language() == i18n.ENGLISH:
            return super().make_formatter()
        from cudaswitch.cli.help_text import formatter

        return formatter(self)


# click 8.2+ raises it for a group called with no arguments (and prints the help to stderr, exit 2); older clicks
# print the help themselves
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class _OneLineErrors(click.Group):
    """click's own usage errors (unknown option, bad value, missing argument) as one line like every other error,
    instead of click's three-line usage block."""

    context_class = _Context

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        from cudaswitch.core.console import prepare

        prepare()
        if "_CUDASWITCH_COMPLETE" in os.environ:  # a shell asks for completions: click answers, with our classes
            import cudaswitch.cli.completion  # noqa: F401

            complete_var = "_CUDASWITCH_COMPLETE"
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        audit = _audit()
        try:
            try:
                with audit.active() if audit else contextlib.nullcontext():
                    super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            except audit.AuditViolation if audit else () as exc:
                _fail(exc.line, 1)
            except _NO_ARGS_IS_HELP as exc:  # bare `cudaswitch`: the help itself, not squashed into one error line
                exc.show()
                sys.exit(exc.exit_code)
            except click.UsageError as exc:
                where = exc.ctx.command_path if exc.ctx is not None else "cudaswitch"
                _fail(M("{message} (see '{where} --help')", message=_click_message(exc), where=where), exc.exit_code)
            except click.exceptions.Abort:
                _fail(N_("aborted; nothing was changed"), 1)
            except click.ClickException as exc:
                _fail(_click_message(exc), exc.exit_code)
            except OSError as exc:  # click's own output (--help, --version) to a full disk or closed pipe
                if exc.errno not in _ENVIRONMENT_ERRNOS | {errno.EPIPE}:
                    raise
                _silence_stdout()
                if exc.errno == errno.EPIPE:
                    sys.exit(141)
                _fail(_os_error_line(OSError(exc.errno, exc.strerror)), 1)
        except SystemExit as done:
            code = done.code
        else:
            code = 0
        try:
            sys.stdout.flush()
        except OSError as exc:  # the last of the output did not reach a full disk: that is a failure to say
            _silence_stdout()
            if exc.errno == errno.EPIPE:
                sys.exit(141)
            _fail(_os_error_line(OSError(exc.errno, exc.strerror)), code or 1)
        sys.exit(code)

    def list_commands(self, ctx):
        return sorted(_COMMANDS)

    def get_command(self, ctx, name):
        spec = _COMMANDS.get(name)
        if spec is None:
            return None
        module, attr = spec.split(":")
        command = getattr(importlib.import_module(f"cudaswitch.cli.{module}"), attr)
        command.context_class = _Context
        _give_help_option(command, ctx)
        return command

    def get_help_option(self, ctx):
        _give_help_option(self, ctx)
        return super().get_help_option(ctx)


def _audit():
    """core/audit.py when its hook belongs in this run: as root, every start, load and write is held to the trust
    rule as it happens (or the test suite loaded it and forced it on). An ordinary user's command does not even
    import it."""
    audit = sys.modules.get("cudaswitch.core.audit")
    if audit is None and hasattr(os, "geteuid") and os.geteuid() == 0:
        from cudaswitch.core import audit
    return audit if audit is not None and audit.wanted() else None


def _click_message(exc: click.ClickException) -> str:
    """click's sentence, in the user's language (click formats it in English: docs/design/i18n.md)."""
    from cudaswitch.core import i18n

    message = exc.format_message()
    if i18n.current_language() == i18n.ENGLISH:
        return message
    from cudaswitch.cli.click_errors import translate

    return translate(message)


def _show_help(ctx, _param, value):
    if value and not ctx.resilient_parsing:
        click.echo(ctx.get_help(), color=ctx.color)
        ctx.exit()


def _give_help_option(command: click.Command, ctx) -> None:
    """-h/--help, built as click builds it but with its text given: click asks gettext for "Show this message and
    exit." on every run, which imports `locale` and searches the disk for click's catalogs (about 2 ms of every
    command). click keeps the option it built in `_help_option`; where a click version has no such cache, nothing
    is set and click builds its own, as it also does when asked without a context (the catalog script lists the
    commands so). The Chinese help translates the text when it prints it (cli/help_text.py)."""
    if ctx is None or getattr(command, "_help_option", False) is not None or not command.add_help_option:
        return
    left = set(command.get_help_option_names(ctx))  # a set inside click: its order changes from run to run
    names = [n for n in ctx.help_option_names if n in left]
    if names:
        command._help_option = click.Option(names, is_flag=True, is_eager=True, expose_value=False,
                                            callback=_show_help, help="Show this message and exit.")


def _show_version(ctx, _param, value):
    # click.version_option would do the same, but building it at import asks gettext for its message, which imports
    # `locale` and looks for catalogs on disk: a cost every command paid for an option few use.
    if value and not ctx.resilient_parsing:
        from cudaswitch.core.i18n import _

        click.echo(_("cudaswitch, version {version}").format(version=__version__), color=ctx.color)
        ctx.exit()


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version,
              help="Show the version and exit.")
def main():
    """See, switch and verify the CUDA toolkit each conda environment uses."""
