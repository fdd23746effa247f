"""Maintainer tool for the message catalogs (Babel, development time only; the installed tool uses gettext).

    python scripts/i18n_catalog.py update    # extract marked messages from cudaswitch/ into every .po
    python scripts/i18n_catalog.py compile   # .po -> .mo (commit both)
    python scripts/i18n_catalog.py check     # what tests/core/test_i18n_catalog.py checks, as a report

Marks: `_("...")`, `N_("...")`, `M("... {name} ...", name=...)` (cudaswitch/core/i18n.py). `--help` texts need no
mark: they are read from the click commands (docstrings, `help=`) and translated by cudaswitch/cli/help_text.py. After `update`, translate the
new empty entries in cudaswitch/locale/<lang>/LC_MESSAGES/cudaswitch.po (terms: cudaswitch/locale/<lang>/glossary.md),
then `compile`.
"""

from __future__ import annotations

import io
import string
import sys
from pathlib import Path
from typing import Dict, List, Tuple

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po, write_po

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "cudaswitch"
LOCALE = PACKAGE / "locale"
DOMAIN = "cudaswitch"
KEYWORDS = {"_": None, "N_": None, "M": None}


def po_paths(locale_dir: Path = LOCALE) -> List[Path]:
    return sorted(locale_dir.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def help_texts() -> List[Tuple[str, str, int]]:
    """The `--help` texts of the group and every command and option, exactly as click prints them: read from the
    commands themselves (docstrings and `help=`), so the command modules carry no marks."""
    import inspect

    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from cudaswitch.cli import main
    from cudaswitch.cli.help_text import help_source

    found: List[Tuple[str, str, int]] = []
    for command in [main] + [main.get_command(None, name) for name in main.list_commands(None)]:
        callback = inspect.unwrap(command.callback)  # the command's own function, not the shared error wrapper
        source = inspect.getsourcefile(callback)
        line = inspect.getsourcelines(callback)[1]
        where = _rel(Path(source)) if source else "cudaswitch/cli"
        if help_source(command):
            found.append((help_source(command), where, line))
        if command.short_help:  # the line `cudaswitch --help` lists it with
            found.append((command.short_help, where, line))
        for param in command.params:
            if getattr(param, "help", None):
                found.append((param.help, where, line))
    return found


def extract() -> Catalog:
    template = Catalog(project="cudaswitch", domain=DOMAIN)
    for filename, lineno, message, comments, context in extract_from_dir(
            str(PACKAGE), method_map=[("locale/**", "ignore"), ("**.py", "python")], keywords=KEYWORDS,
            comment_tags=("TRANSLATORS:",), strip_comment_tags=True):
        template.add(message, None, [(f"cudaswitch/{filename}", lineno)], auto_comments=comments, context=context)
    for message, filename, lineno in help_texts():
        template.add(message, None, [(filename, lineno)], auto_comments=["--help"])
    return template


def load_po(path: Path) -> Catalog:
    with open(path, "rb") as fh:
        return read_po(fh, locale=path.parent.parent.name, domain=DOMAIN)


def update() -> None:
    template = extract()
    for path in po_paths():
        catalog = load_po(path)
        created = catalog.creation_date  # kept: a date changing on every update would make every merge conflict
        catalog.update(template, no_fuzzy_matching=True)
        catalog.creation_date = created
        catalog.obsolete.clear()
        catalog.fuzzy = False
        catalog.last_translator = "cudaswitch maintainers"
        lang = path.parent.parent.name
        catalog.language_team = f"{lang} (glossary: cudaswitch/locale/{lang}/glossary.md)"
        with open(path, "wb") as fh:
            # no source locations: line numbers would change with every edit of the code and make merges conflict
            write_po(fh, catalog, width=116, sort_output=False, include_previous=False,
                     no_location=True)
        print(f"{path.relative_to(REPO)}: {len(catalog)} messages, "
              f"{sum(1 for m in catalog if m.id and not m.string)} untranslated")


def compile_mo(path: Path) -> bytes:
    catalog = load_po(path)
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    return buf.getvalue()


def compile_all() -> None:
    for path in po_paths():
        path.with_suffix(".mo").write_bytes(compile_mo(path))
        print(f"{path.with_suffix('.mo').relative_to(REPO)} written")


def fields(text: str) -> List[str]:
    """The placeholders a message needs kept: `{name}` fields and printf `%s`-style conversions."""
    out = []
    try:
        out += sorted(f"{{{name}}}" for _, name, _, _ in string.Formatter().parse(text) if name is not None)
    except ValueError:
        out.append("<unbalanced braces>")
    import re

    out += sorted(re.findall(r"%(?:\([a-z_]+\))?[-#0 +]*\d*(?:\.\d+)?[sdifr%]", text))
    return out


def problems(locale_dir: Path = LOCALE) -> List[str]:
    """Everything that makes a catalog unfit to ship: untranslated, placeholders lost, .mo not the .po compiled."""
    found: List[str] = []
    wanted = {m.id: m for m in extract() if m.id}
    for path in po_paths(locale_dir):
        rel = _rel(path)
        catalog = load_po(path)
        have: Dict[str, Tuple[str, bool]] = {m.id: (m.string, m.fuzzy) for m in catalog if m.id}
        for msgid, msg in wanted.items():
            where = ", ".join(f"{f}:{n}" for f, n in msg.locations)
            string_, fuzzy = have.get(msgid, ("", False))
            if not string_ or fuzzy:
                found.append(f"{rel}: no translation for {msgid!r} ({where})")
            elif fields(msgid) != fields(string_):
                found.append(f"{rel}: placeholders {fields(msgid)} became {fields(string_)} in the translation of "
                             f"{msgid!r}")
        mo = path.with_suffix(".mo")
        if not mo.is_file():
            found.append(f"{_rel(mo)} missing: run scripts/i18n_catalog.py compile")
            continue
        with open(mo, "rb") as fh:
            compiled = {m.id: m.string for m in read_mo(fh) if m.id}
        source = {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy}
        if compiled != source:
            diff = sorted(set(compiled.items()) ^ set(source.items()), key=str)[:3]
            found.append(f"{_rel(mo)} is not {rel} compiled (e.g. {diff}): run scripts/i18n_catalog.py "
                         f"compile")
    return found


def main(argv: List[str]) -> int:
    cmd = argv[1] if len(argv) > 1 else "check"
    if cmd == "update":
        update()
    elif cmd == "compile":
        compile_all()
    elif cmd == "check":
        bad = problems()
        for line in bad:
            print(line)
        return 1 if bad else 0
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
