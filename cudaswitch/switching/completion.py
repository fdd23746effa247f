"""The tab-completion scripts `init` puts into each shell's integration: shell code only. They hand the command line
to `cudaswitch` itself (click's protocol, `_CUDASWITCH_COMPLETE`), which answers in cudaswitch/cli/completion.py.
"""

from __future__ import annotations

PROG = "cudaswitch"
COMPLETE_VAR = "_CUDASWITCH_COMPLETE"

# PowerShell: a native argument completer. It hands the command line up to the cursor to cudaswitch, which answers
# one "type<TAB>value" line per candidate; folders and files are left to PowerShell's own path completion (a native
# completer that returns nothing gets it).
SOURCE_POWERSHELL = """\
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
SOURCE_BASH = """\
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

SOURCE_ZSH = """\
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
SOURCE_FISH = """\
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

TEMPLATES = {"bash": SOURCE_BASH, "zsh": SOURCE_ZSH, "fish": SOURCE_FISH, "powershell": SOURCE_POWERSHELL}


def script(shell: str) -> str:
    """The completion script `init` puts in SHELL's integration."""
    return TEMPLATES[shell] % {"complete_func": f"_{PROG}_completion", "complete_var": COMPLETE_VAR, "prog_name": PROG}
