"""Write cudaswitch/data/completion_table.py: every command name and every option, each as the line click's
completion prints for it in each shell, for the click-free answer of cudaswitch/launch.py. Run it after adding or
renaming a command or an option (tests/cli/test_completion.py fails until then):

    python tools/completion_table.py
"""

import pprint
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TABLE = REPO / "cudaswitch" / "data" / "completion_table.py"


def generate() -> str:
    sys.path.insert(0, str(REPO))
    from click import Argument, Option
    from click.shell_completion import CompletionItem, get_completion_class

    import cudaswitch.cli.completion  # noqa: F401 (registers the fish and PowerShell classes cudaswitch uses)
    from cudaswitch.cli import main
    from cudaswitch.cli.completion import codes
    from cudaswitch.core.shells import INIT_SHELLS

    # the completion protocols of the init shells' records
    shells = [st.completion for _sh, st in INIT_SHELLS.values() if st.completion]

    commands, options, formats = {}, {}, {}
    arguments = {}  # command -> what its first argument completes, where launch.py answers it itself
    values = {}  # command -> each option that takes a value -> what completes it (None: only click knows)
    for name in main.list_commands(None):
        params = main.get_command(None, name).params
        first = next((p for p in params if isinstance(p, Argument)), None)
        what = getattr(getattr(first, "_custom_shell_complete", None), "what", None)
        if what in ("selector", "use_selector") or (what == "code" and first.nargs == -1):
            arguments[name] = what
        values[name] = {opt: getattr(getattr(p, "_custom_shell_complete", None), "what", None)
                        for p in params if isinstance(p, Option) and not (p.is_flag or p.count) and p.nargs == 1
                        for opt in p.opts}
    for shell in shells:
        comp = get_completion_class(shell)(main, {}, "cudaswitch", "_CUDASWITCH_COMPLETE")

        def lines(args, incomplete):
            return [(item.value, comp.format_completion(item)) for item in comp.get_completions(args, incomplete)]

        commands[shell] = lines([], "")
        formats[shell] = {kind: tuple(comp.format_completion(CompletionItem("\0", type=kind)).split("\0"))
                          for kind in ("plain", "dir")}
        options[shell] = {"": lines([], "-")}
        for name in main.list_commands(None):
            options[shell][name] = lines([name], "-")
    return ('"""Written by tools/completion_table.py from the click commands: do not edit. shell -> [(word, the line\n'
            'click prints for it)]; OPTIONS: shell -> command ("" for the group) -> its options; ARGUMENTS: command ->\n'
            'the toolkit selector (or the finding codes) its first argument is; VALUES: command -> option -> what\n'
            'completes its value; CODES: the finding codes, in the order doctor --fix offers them; FORMATS: shell ->\n'
            'kind -> the text before and after a value."""\n\n'
            f"COMMANDS = {pprint.pformat(commands, width=120)}\n\nOPTIONS = {pprint.pformat(options, width=120)}\n\n"
            f"ARGUMENTS = {pprint.pformat(arguments, width=120)}\n\nVALUES = {pprint.pformat(values, width=120)}\n\n"
            f"CODES = {pprint.pformat([item.value for item in codes('')], width=120, compact=True)}\n\n"
            f"FORMATS = {pprint.pformat(formats, width=120)}\n")


if __name__ == "__main__":
    TABLE.write_text(generate(), encoding="utf-8")
