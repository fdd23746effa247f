"""Tab completion: click's own protocol (`_CUDASWITCH_COMPLETE=bash_complete` etc., click.shell_completion) for bash,
zsh and fish, one more class of that protocol for PowerShell, and the values only cudaswitch knows: toolkit selectors
(versions, cuXYZ, module names, folders), environment names and shell names.

Imported only when a shell asks for completions (`cli/__init__.py`) or when `init` prints the scripts. A selector's
completion runs discovery as `list` does, kept between TABs (discovery/selector_cache.py), and must stay cheap
(benchmarks/bench_completion.py); any failure is no
completion, never an error in the user's prompt.
"""

from __future__ import annotations

import os
from typing import List

from click.shell_completion import CompletionItem, ShellComplete, add_completion_class, split_arg_string
from click.shell_completion import FishComplete as _FishComplete



def _source(self) -> str:
    """click's `<protocol>_source` answer: the completion script of the record whose `completion` is this protocol,
    as `init` puts it in the integration (switching/completion.py)."""
    from cudaswitch.core.shells import INIT_SHELLS
    from cudaswitch.switching.completion import template

    start = next(st for _sh, st in INIT_SHELLS.values() if st.completion == self.name)
    return template(start) % self.source_vars()


class FishComplete(_FishComplete):
    """click's fish protocol, one line per candidate (see hooks/complete.fish)."""

    source = _source

    def format_completion(self, item: CompletionItem) -> str:
        help_ = " ".join((item.help or "").split())
        return f"{item.type}\t{item.value}\t{help_}"


class PowerShellComplete(ShellComplete):
    """The command line up to the cursor in COMP_WORDS; when it ends in a space, the word being completed is
    empty."""

    name = "powershell"
    source = _source

    def get_completion_args(self):
        line = os.environ.get("COMP_WORDS", "")
        words = split_arg_string(line)
        incomplete = "" if not line or line[-1].isspace() or not words else words.pop()
        return words[1:], incomplete

    def format_completion(self, item: CompletionItem) -> str:
        return f"{item.type}\t{item.value}"


add_completion_class(PowerShellComplete)
add_completion_class(FishComplete)


def complete_folder(ctx, param, incomplete):
    return [CompletionItem(incomplete, type="dir")]


def selectors(incomplete: str, auto: bool = False) -> List[CompletionItem]:
    """discovery's selector words (toolkits.selector_words); a folder is completed by the shell once the word
    starts like a path."""
    from cudaswitch.discovery.selector_cache import typed_as_path

    if typed_as_path(incomplete):
        return [CompletionItem(incomplete, type="dir")]
    from cudaswitch.core.system import System
    from cudaswitch.discovery.selector_cache import offered

    return [CompletionItem(w) for w in offered(System.current(), incomplete, auto)]


def complete_selector(ctx, param, incomplete):
    return _quietly(selectors, incomplete)


def complete_use_selector(ctx, param, incomplete):
    return _quietly(selectors, incomplete, auto=True)


def env_names(incomplete: str) -> List[CompletionItem]:
    """The names conda shows for its environments (`conda env list`), read from its files without starting it."""
    from cudaswitch.core.system import System
    from cudaswitch.discovery.condaenvs import env_names as names

    return [CompletionItem(n) for n in names(System.current(), incomplete)]


def complete_env_name(ctx, param, incomplete):
    return _quietly(env_names, incomplete)


def _quietly(fn, *args, **kw) -> List[CompletionItem]:
    # whatever goes wrong while the user presses TAB (an unreadable folder, a damaged config file) costs the
    # candidates, not a traceback printed into the prompt
    try:
        return fn(*args, **kw)
    except Exception:
        return []


def codes(incomplete: str) -> List[CompletionItem]:
    """`doctor --fix CODE`: the finding codes a fix exists for, then every other code doctor can report."""
    from cudaswitch.checks.severities import SEVERITIES
    from cudaswitch.fix.plan import fixer_codes

    fixable = fixer_codes()
    words = [*fixable, *sorted(c for c in SEVERITIES if c not in fixable)]
    return [CompletionItem(c) for c in dict.fromkeys(words) if c.startswith(incomplete.upper())]


def complete_code(ctx, param, incomplete):
    return _quietly(codes, incomplete)
