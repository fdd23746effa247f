"""The tab-completion scripts `init` puts into each shell's integration: shell code only, one file of hooks/ per
shell, named by its record's `completion_script` (core/shells.py). They hand the command line to `cudaswitch` itself
(click's protocol, `_CUDASWITCH_COMPLETE`, as the record's `completion` names it), which answers in
cudaswitch/cli/completion.py.

Why they are not click's own: click's bash and zsh templates leave `type`, `value`, `completion` (bash) and `type`,
`key`, `descr` (zsh) set in the user's shell after every TAB (complete.bash and complete.zsh are the same protocol
with every variable local); click 8.4's fish template splits on a newline its Python string already turned into a
line break (fish then fails with "string split: missing argument"), complete.fish reads one "type<TAB>value<TAB>help"
line per candidate; PowerShell has none in click: complete.ps1 is a native argument completer that hands the command
line up to the cursor to cudaswitch, which answers one "type<TAB>value" line per candidate, and leaves folders and
files to PowerShell's own path completion (a native completer that returns nothing gets it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cudaswitch.core.shells import Startup

PROG = "cudaswitch"
COMPLETE_VAR = "_CUDASWITCH_COMPLETE"


def template(start: "Startup") -> str:
    """The completion script of an `init` shell's record (`completion_script`, a file of hooks/), its %(...)s
    placeholders as click's ShellComplete.source_vars() names them."""
    from cudaswitch.core.resources import resource_dir
    from cudaswitch.core.trust import package_text

    return package_text(resource_dir("hooks") / start.completion_script)


def script(start: "Startup") -> str:
    """The completion script `init` puts in that shell's integration."""
    return template(start) % {"complete_func": f"_{PROG}_completion", "complete_var": COMPLETE_VAR,
                              "prog_name": PROG}
