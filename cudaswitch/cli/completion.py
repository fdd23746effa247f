"""Tab completion: click's own protocol (`_CUDASWITCH_COMPLETE=bash_complete` etc., click.shell_completion) for bash,
zsh and fish, one more class of that protocol for PowerShell, and the values only cudaswitch knows: toolkit selectors
(versions, cuXYZ, module names, folders), environment names and shell names.

Imported only when a shell asks for completions (`cli/__init__.py`) or when `init` prints the scripts. A selector's
completion runs discovery as `list` does and must stay cheap (benchmarks/bench_completion.py); any failure is no
completion, never an error in the user's prompt.
"""

from __future__ import annotations

import os
from typing import List

from click.shell_completion import CompletionItem, ShellComplete, add_completion_class, split_arg_string
from click.shell_completion import FishComplete as _FishComplete

PROG = "cudaswitch"
COMPLETE_VAR = "_CUDASWITCH_COMPLETE"

# PowerShell: a native argument completer. It hands the command line up to the cursor to cudaswitch, which answers
# one "type<TAB>value" line per candidate; folders and files are left to PowerShell's own path completion (a native
# completer that returns nothing gets it).
_SOURCE_POWERSHELL = """\
Register-ArgumentCompleter -Native -CommandName %(prog_name)s -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $line = $commandAst.Extent.Text
    $upto = $cursorPosition - $commandAst.Extent.StartOffset
    if ($upto -ge 0 -and $upto -lt $line.Length) { $line = $line.Substring(0, $upto) }
    $exe = Get-Command %(prog_name)s -CommandType Application -ErrorAction SilentlyContinue | Select-Object -First 1
    if (-not $exe) { return }
    $Env:COMP_WORDS = $line
    $Env:%(complete_var)s = 'powershell_complete'
    try { $answer = & $exe 2>$null } finally {
        Remove-Item Env:COMP_WORDS, Env:%(complete_var)s -ErrorAction SilentlyContinue
    }
    foreach ($item in $answer) {
        $kind, $value = $item -split "`t", 2
        if ($kind -eq 'plain') {
            [System.Management.Automation.CompletionResult]::new($value, $value, 'ParameterValue', $value)
        }
    }
}
"""


# click's bash and zsh templates leave `type`, `value`, `completion` (bash) and `type`, `key`, `descr` (zsh) set in
# the user's shell after every TAB; these are the same protocol with every variable local.
_SOURCE_BASH = """\
_cudaswitch_completion() {
    local IFS=$'\\n' response completion type value
    response=$(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD="$COMP_CWORD" %(complete_var)s=bash_complete \\
        %(prog_name)s 2>/dev/null)
    for completion in $response; do
        IFS=',' read -r type value <<< "$completion"
        case $type in
            dir) COMPREPLY=(); compopt -o dirnames ;;
            file) COMPREPLY=(); compopt -o default ;;
            plain) COMPREPLY+=("$value") ;;
        esac
    done
    return 0
}
complete -o nosort -F _cudaswitch_completion %(prog_name)s 2>/dev/null || complete -F _cudaswitch_completion %(prog_name)s
"""

_SOURCE_ZSH = """\
_cudaswitch_completion() {
    local -a completions completions_with_descriptions response
    local type key descr
    (( ! $+commands[%(prog_name)s] )) && return 1
    response=("${(@f)$(env COMP_WORDS="${words[*]}" COMP_CWORD=$((CURRENT-1)) %(complete_var)s=zsh_complete \\
        %(prog_name)s 2>/dev/null)}")
    for type key descr in ${response}; do
        if [[ "$type" == "plain" ]]; then
            if [[ "$descr" == "_" ]]; then
                completions+=("$key")
            else
                completions_with_descriptions+=("$key":"$descr")
            fi
        elif [[ "$type" == "dir" ]]; then
            _path_files -/
        elif [[ "$type" == "file" ]]; then
            _path_files -f
        fi
    done
    if [ -n "$completions_with_descriptions" ]; then
        _describe -V unsorted completions_with_descriptions -U
    fi
    if [ -n "$completions" ]; then
        compadd -U -V unsorted -a completions
    fi
}
# only where the completion system is loaded (compinit): elsewhere `compdef` would print "command not found" in
# every new shell
if (( $+functions[compdef] )); then compdef _cudaswitch_completion %(prog_name)s; fi
"""

# click 8.4's fish template splits on a newline its Python string already turned into a line break (fish then
# fails with "string split: missing argument"); this one reads one "type<TAB>value<TAB>help" line per candidate.
_SOURCE_FISH = """\
function _cudaswitch_completion
    set -l response (env %(complete_var)s=fish_complete COMP_WORDS=(commandline -cp) COMP_CWORD=(commandline -t) \\
        %(prog_name)s 2>/dev/null)
    for completion in $response
        set -l metadata (string split -m 2 \\t -- $completion)
        switch $metadata[1]
            case dir
                __fish_complete_directories $metadata[2]
            case file
                __fish_complete_path $metadata[2]
            case plain
                if test -n "$metadata[3]"
                    printf '%%s\\t%%s\\n' $metadata[2] $metadata[3]
                else
                    printf '%%s\\n' $metadata[2]
                end
        end
    end
end
complete --no-files --command %(prog_name)s --arguments "(_cudaswitch_completion)"
"""

_TEMPLATES = {"bash": _SOURCE_BASH, "zsh": _SOURCE_ZSH, "fish": _SOURCE_FISH, "powershell": _SOURCE_POWERSHELL}


class FishComplete(_FishComplete):
    """click's fish protocol, one line per candidate (see _SOURCE_FISH)."""

    source_template = _SOURCE_FISH

    def format_completion(self, item: CompletionItem) -> str:
        help_ = " ".join((item.help or "").split())
        return f"{item.type}\t{item.value}\t{help_}"


class PowerShellComplete(ShellComplete):
    """The command line up to the cursor in COMP_WORDS; when it ends in a space, the word being completed is
    empty."""

    name = "powershell"
    source_template = _SOURCE_POWERSHELL

    def get_completion_args(self):
        line = os.environ.get("COMP_WORDS", "")
        words = split_arg_string(line)
        incomplete = "" if not line or line[-1].isspace() or not words else words.pop()
        return words[1:], incomplete

    def format_completion(self, item: CompletionItem) -> str:
        return f"{item.type}\t{item.value}"


add_completion_class(PowerShellComplete)
add_completion_class(FishComplete)


def script(shell: str) -> str:
    """The completion script `init` puts in SHELL's integration."""
    return _TEMPLATES[shell] % {"complete_func": f"_{PROG}_completion", "complete_var": COMPLETE_VAR, "prog_name": PROG}


def _paths(incomplete: str) -> List[CompletionItem]:
    """A selector that is being typed as a folder: the shell's own folder completion."""
    if incomplete[:1] in ("/", ".", "~", "\\") or (len(incomplete) > 1 and incomplete[1] == ":"):
        return [CompletionItem(incomplete, type="dir")]
    return []


def complete_folder(ctx, param, incomplete):
    return [CompletionItem(incomplete, type="dir")]


def selectors(incomplete: str, auto: bool = False) -> List[CompletionItem]:
    """What a toolkit selector may be, for the toolkits discovery finds: X.Y, the full version, cuXYZ (as pip's
    and PyTorch's indexes name a CUDA), a module name that loads it; `auto` where the command takes it. A folder
    is completed by the shell once the word starts like a path."""
    paths = _paths(incomplete)
    if paths:
        return paths
    from cudaswitch.core.system import System
    from cudaswitch.discovery.toolkits import discover

    found = discover(System.current())
    words: List[str] = ["auto"] if auto else []
    for tk in found.toolkits:
        short = f"{tk.cuda.major}.{tk.cuda.minor}"
        words += [short, tk.version, f"cu{tk.cuda.major}{tk.cuda.minor}", *tk.modules]
    return [CompletionItem(w, help=None) for w in dict.fromkeys(words) if w.startswith(incomplete)]


def complete_selector(ctx, param, incomplete):
    return _quietly(selectors, incomplete)


def complete_use_selector(ctx, param, incomplete):
    return _quietly(selectors, incomplete, auto=True)


def env_names(incomplete: str) -> List[CompletionItem]:
    """The names conda shows for its environments (`conda env list`), read from its files without starting it."""
    from cudaswitch.core.system import System
    from cudaswitch.discovery.condaenvs import env_name, known_prefixes, layout

    system = System.current()
    lay = layout(system, use_conda=False)
    names = {env_name(p, lay, system) for p in known_prefixes(system, lay)}
    return [CompletionItem(n) for n in sorted(n for n in names if n and n.startswith(incomplete))]


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
