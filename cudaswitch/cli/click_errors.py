"""click's own usage errors ("No such option '--x'.", "Missing argument 'SELECTOR'.") in the user's language.

click writes these with `gettext.gettext` in Python's global text domain, and formats them when it raises, so by
the time the CLI prints one only the English sentence is left. Each form click can produce for our commands is
listed here as click writes it; a message is matched against these forms, its values taken out, and the translated
form filled with them. A message no form matches stays English. Loaded only when the language is not English.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Pattern, Tuple

from cudaswitch.core.i18n import N_, _

# click's sentences, in click's own words ({x!r} as click writes it: the value arrives already quoted). A form
# whose value is itself a sentence names it {message}: that part is translated in turn.
FORMS = (
    N_("{message} Did you mean {possibility}?"),
    N_("{message} (Did you mean one of: {possibilities}?)"),
    N_("No such option {name!r}."),
    N_("No such command {name!r}."),
    N_("Missing argument {param_hint}."),
    N_("Missing option {param_hint}."),
    N_("Missing parameter {param_hint}."),
    N_("Missing command."),
    N_("Got unexpected extra argument ({args})"),
    N_("Got unexpected extra arguments ({args})"),
    N_("Option {name!r} requires an argument."),
    N_("Option {name!r} requires {nargs} arguments."),
    N_("Option {name!r} does not take a value."),
    N_("Invalid value for {param_hint}: {message}"),
    N_("Invalid value: {message}"),
    N_("{value!r} is not one of {choices}."),
    N_("{value!r} is not a valid integer."),
    N_("{value!r} is not a valid float."),
    N_("{value!r} is not a valid boolean."),
    N_("{value!r} is not {choice}."),  # the most general last: "{choice}" would match any of the above
)

_FIELD = re.compile(r"\{(\w+)(?:![rs])?\}")
_compiled: List[Tuple[str, Pattern[str]]] = []


def _pattern(form: str) -> Pattern[str]:
    out, pos = [], 0
    for m in _FIELD.finditer(form):
        out.append(re.escape(form[pos:m.start()]))
        out.append(f"(?P<{m.group(1)}>.+?)")
        pos = m.end()
    out.append(re.escape(form[pos:]))
    return re.compile("".join(out) + r"\Z", re.S)


def _forms() -> List[Tuple[str, Pattern[str]]]:
    if not _compiled:
        _compiled.extend((form, _pattern(form)) for form in FORMS)
    return _compiled


def translate(message: str) -> str:
    """`message`, a sentence click made, in the user's language; unchanged when no form fits."""
    for form, pattern in _forms():
        m = pattern.match(message)
        if m is None:
            continue
        translated = _(form)
        if translated == form:
            return message
        values: Dict[str, Optional[str]] = dict(m.groupdict())
        if values.get("message") is not None:
            values["message"] = translate(values["message"])
        try:
            # the values are click's text as printed (already quoted): fill them in as they are
            return _FIELD.sub(lambda f: "{" + f.group(1) + "}", translated).format(**values)
        except (KeyError, IndexError, ValueError):
            return message
    return message
