"""Options and argument checks more than one command shares, declared once."""

from __future__ import annotations

import click

_MAX_TIMEOUT = 7 * 24 * 3600.0  # beyond a week is "no limit" in all but name, and past what the OS timers take


def _seconds(ctx, param, value):
    """--timeout: positive seconds; 0, none or inf mean no limit; nan, negatives and words are refused."""
    import math

    if value is None:
        return value
    text = str(value).strip().lower()
    if text in ("0", "0.0", "none", "inf", "infinity", "+inf"):
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise click.BadParameter(f"{value!r} is not a positive number of seconds (0 or none: no limit)")
    if seconds > _MAX_TIMEOUT:
        raise click.BadParameter(f"{value!r} seconds is more than a week; give 0 or none for no limit")
    return seconds


def completes(what: str):
    """A parameter's tab completion (cli/completion.py), imported only when a shell asks for completions."""

    def complete(ctx, param, incomplete):
        from cudaswitch.cli import completion

        return getattr(completion, f"complete_{what}")(ctx, param, incomplete)

    complete.what = what  # for tools/completion_table.py: a selector is answered without click (launch.py)
    return complete


def _env_options(fn):
    fn = click.option("-p", "--prefix", "prefix", metavar="PREFIX", help="The environment at this folder.",
                      shell_complete=completes("folder"))(fn)
    fn = click.option("-n", "--name", "name", metavar="NAME", help="The conda environment of this name.",
                      shell_complete=completes("env_name"))(fn)
    return fn


def _version_arg(ctx, param, value):
    import re

    if value is not None and not re.fullmatch(r"\d+(\.\d+){0,2}", value.strip()):
        raise click.BadParameter(f"{value!r} is not a version like 12.4 or 2.7.1")
    return value.strip() if value else value

def _sha256_arg(ctx, param, value):
    import re

    if value is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", value.strip()):
        raise click.BadParameter(f"{value!r} is not a SHA-256 (64 hex digits)")
    return value


def _python_hook_option(fn):
    return click.option("--python-hook/--no-python-hook", "python_hook", default=None,
                        help="Write the Python startup file that gives a Python of the environment started without "
                             "activation (Jupyter kernels, IDE runners, bare python) the switch (default: yes, "
                             "except in base).")(fn)


def _force_option(fn):
    return click.option("--force", is_flag=True,
                        help="Switch even where conda-forge CUDA compiler packages in the environment would be "
                             "shadowed by the toolkit's nvcc.")(fn)
