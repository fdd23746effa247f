"""The `cudaswitch` program's entry point (pyproject.toml's [project.scripts], `python -m cudaswitch`).

A TAB on a command name or an option is answered here, from the words click itself gave when
tools/completion_table.py wrote cudaswitch/data/completion_table.py, without importing click: importing click is
about two thirds of what such a TAB costs over Python's own start (benchmarks/bench_completion.py). A toolkit selector
is answered the same way, by discovery without click, kept between TABs while what it read stays as it was
(discovery/selector_cache.py; cli/completion.py answers it so through click). Environment names (`-n <TAB>`)
and finding codes (`doctor <TAB>`) too. Only a command line of plain words is answered here (what click would split
the same way) with the options the command has; anything else, and every command, goes to the click group in
cudaswitch/cli/. tests/cli/test_completion.py
holds both answers equal in the four shells.
"""

from __future__ import annotations

import os
import re
import sys

# no quote, backslash, '$' or '=': on these characters click's shlex split is str.split()
_PLAIN = re.compile(r"[A-Za-z0-9 ._/~:+-]*")


def _words():
    """(shell, args, incomplete) as click's completion classes read them (click.shell_completion and
    cli/completion.py), or None where the line is not plain words."""
    shell, _, instruction = os.environ.get("_CUDASWITCH_COMPLETE", "").partition("_")
    line = os.environ.get("COMP_WORDS", "")
    if instruction != "complete" or not _PLAIN.fullmatch(line):
        return None
    words = line.split()
    if shell in ("bash", "zsh"):
        cword = os.environ.get("COMP_CWORD", "")
        if not cword.isdigit():
            return None
        at = int(cword)
        return shell, words[1:at], words[at] if at < len(words) else ""
    if shell == "fish":
        incomplete = os.environ.get("COMP_CWORD", "")
        if not _PLAIN.fullmatch(incomplete):
            return None
        incomplete = (incomplete.split() or [""])[0]
        args = words[1:]
        if incomplete and args and args[-1] == incomplete:
            args.pop()
        return shell, args, incomplete
    if shell == "powershell":
        incomplete = "" if not line or line[-1].isspace() or not words else words.pop()
        return shell, words[1:], incomplete
    return None


def answer():
    """The lines click would print for this TAB, or None where only click can tell."""
    asked = _words()
    if asked is None:
        return None
    shell, args, incomplete = asked
    from cudaswitch.data.completion_table import ARGUMENTS, COMMANDS, FORMATS, OPTIONS, VALUES

    if shell not in COMMANDS or (args and args[0] not in OPTIONS[shell]):
        return None
    option = incomplete[:1] == "-"
    if args and not option:
        values = VALUES[args[0]]
        known = {value for value, _ in OPTIONS[shell][args[0]]}
        if any(a[:1] == "-" and a not in known for a in args[1:]):
            return None  # `--`, an option click would refuse: only click can tell
        if len(args) > 1 and args[-1] in values:  # `cudaswitch doctor -n <TAB>`: that option's value
            return _value(FORMATS[shell], incomplete, values[args[-1]])
        what = ARGUMENTS.get(args[0])
        if what == "code":  # `cudaswitch doctor H<TAB>`: any number of finding codes
            from cudaswitch.data.completion_table import CODES

            before, after = FORMATS[shell]["plain"]
            return [before + c + after for c in CODES if c.startswith(incomplete.upper())]
        if len(args) == 1 and what is not None:  # `cudaswitch use 12<TAB>`: the toolkit selectors
            return _selectors(FORMATS[shell], incomplete, what == "use_selector")
        return None
    if len(args) > 1 or not (option or not incomplete or incomplete[:1].isalnum()):
        return None
    if args:  # `cudaswitch use --n`: the options of the command
        items = OPTIONS[shell][args[0]]
    else:  # `cudaswitch u`: the commands, and the group's own options for `cudaswitch -`
        items = COMMANDS[shell] + (OPTIONS[shell][""] if option else [])
    return [text for value, text in items if value.startswith(incomplete)]


def _value(formats, incomplete: str, what):
    """What cli/completion.py's complete_<what> gives for an option's value, formatted; None where only click
    knows (an option completed by its type)."""
    if what == "selector":
        return _selectors(formats, incomplete, False)
    if what == "folder":
        before, after = formats["dir"]
        return [before + incomplete + after]
    if what == "env_name":
        before, after = formats["plain"]
        return [before + name + after for name in _quietly(_env_names, incomplete)]
    return None


def _env_names(incomplete: str):
    from cudaswitch.core.system import System
    from cudaswitch.discovery.condaenvs import env_names

    return env_names(System.current(), incomplete)


def _selectors(formats, incomplete: str, auto: bool):
    """What cli/completion.py's `selectors` gives, formatted as the shell's completion class formats it."""
    from cudaswitch.discovery.selector_cache import typed_as_path

    if typed_as_path(incomplete):
        before, after = formats["dir"]
        return [before + incomplete + after]
    before, after = formats["plain"]
    return [before + word + after for word in _quietly(_selector_words, incomplete, auto)]


def _selector_words(incomplete: str, auto: bool):
    from cudaswitch.core.system import System
    from cudaswitch.discovery.selector_cache import offered

    return offered(System.current(), incomplete, auto)


def _quietly(fn, *args):
    # as in cli/completion.py: whatever goes wrong while the user presses TAB costs the candidates, not a traceback
    # in the prompt; as root, discovery runs under the audit hook as every command does (cli/__init__.py, _audit)
    audit = sys.modules.get("cudaswitch.core.audit")
    if audit is None and hasattr(os, "geteuid") and os.geteuid() == 0:
        from cudaswitch.core import audit
    try:
        if audit is not None and audit.wanted():
            with audit.active():
                return fn(*args)
        return fn(*args)
    except Exception:
        return []
    except BaseException as exc:  # the audit hook's stop: no candidates either
        if audit is not None and isinstance(exc, audit.AuditViolation):
            return []
        raise


def main(**extra):
    if "_CUDASWITCH_COMPLETE" in os.environ:
        # a TAB is a process of a few dozen milliseconds that frees what it made at exit: the cycle collector's
        # passes over a discovery's objects are work nobody needs (about 1% of a first TAB's instructions)
        import gc

        gc.disable()
        lines = answer()
        if lines is not None:
            from cudaswitch.core.console import make_streams_safe

            make_streams_safe()  # a module's name is the site's text: never a traceback for one the terminal lacks
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)  # the answer is out; tearing the interpreter down was about 7% of a first TAB's instructions
    from cudaswitch.cli import main as group

    group(**extra)
