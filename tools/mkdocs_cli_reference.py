"""The command reference, written into `docs/guide/reference.md` and `reference.zh.md` themselves (so GitHub shows
it as the built guide does), between the lines `<!-- cli-reference -->` and `<!-- /cli-reference -->`:

    python tools/mkdocs_cli_reference.py          # rewrite both pages from the CLI
    python tools/mkdocs_cli_reference.py --check  # exit 1 when a page is not what the CLI says

One section per command, with its usage, its help and one entry per option carrying its own anchor
(`reference.md#use--name`), the way uv's reference is laid out. Every text is read from the click commands and, for
the Chinese page, translated as `--help` translates it when it prints (cudaswitch/cli/help_text.py), so the page
shows what a Chinese user's `--help` shows. `tests/test_docs.py` fails when a page differs from this rendering.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import List

REPO = Path(__file__).resolve().parent.parent
BEGIN = "<!-- cli-reference -->"
END = "<!-- /cli-reference -->"
MARKER = BEGIN
CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"  # Han and CJK/full-width punctuation
PAGES = {"en": REPO / "docs" / "guide" / "reference.md", "zh_CN": REPO / "docs" / "guide" / "reference.zh.md"}


def _anchor(command: str, option: str) -> str:
    return f"{command or 'cudaswitch'}-{option.lstrip('-')}" if not option.startswith("--") else \
        f"{command or 'cudaswitch'}{option}"


def _entries(cmd, ctx, name: str, translate) -> List[str]:
    import click

    from cudaswitch.cli.help_text import TranslatedHelpFormatter

    fmt = TranslatedHelpFormatter(ctx) if translate else None
    out = []
    for param in cmd.get_params(ctx):
        if not isinstance(param, click.Option):
            continue
        record = param.get_help_record(ctx)
        if record is None:
            continue
        opts, text = record
        anchor = _anchor(name, next((o for o in param.opts if o.startswith("--")), param.opts[0]))
        text = fmt._row_text(opts, text) if fmt else text
        out.append(f'- <a id="{anchor}"></a>[`{opts}`](#{anchor}): {" ".join(text.split())}')
    return out


def reference(language: str) -> str:
    """The reference in `language` ("en" or "zh_CN"), as markdown."""
    from cudaswitch.cli import main
    from cudaswitch.cli.help_text import help_source
    from cudaswitch.core import i18n

    saved = os.environ.get("CUDASWITCH_LANG")
    os.environ["CUDASWITCH_LANG"] = language
    i18n.set_language(None)
    try:
        zh = language != "en"
        tr = i18n._ if zh else (lambda s: s)
        usage = tr("Usage:")
        usage = usage if usage.endswith("：") else usage + " "
        # as a real run builds them: the group's context settings (-h) reach every command's context
        root = main.make_context("cudaswitch", [], resilient_parsing=True)
        parts = []
        for name in ["", *main.list_commands(root)]:
            cmd = main if not name else main.get_command(root, name)
            ctx = cmd.make_context(name, [], parent=root, resilient_parsing=True) if name else root
            title = f"cudaswitch {name}".strip()
            pieces = " ".join(cmd.collect_usage_pieces(ctx))
            parts += [f"### `{title}`", "", "```text", f"{usage}{title} {pieces}".rstrip(), "```", ""]
            parts += [tr(help_source(cmd)), ""]
            if not name:
                for sub in main.list_commands(root):
                    first = " ".join(tr(help_source(main.get_command(root, sub))).split("\n\n")[0].split())
                    parts.append(f"- [`{sub}`](#cudaswitch-{sub}): {first}")
                parts.append("")
            entries = _entries(cmd, ctx, name, zh)
            if entries:
                parts += [f"**{tr('Options')}**", "", *entries, ""]
        text = "\n".join(parts).rstrip() + "\n"
        # a line break between two Chinese characters shows as a space in a browser: the help's own breaks go
        return re.sub(f"(?<=[{CJK}])\n(?=[{CJK}])", "", text) if zh else text
    finally:
        if saved is None:
            os.environ.pop("CUDASWITCH_LANG", None)
        else:
            os.environ["CUDASWITCH_LANG"] = saved
        i18n.set_language(None)


def page_text(language: str, current: str) -> str:
    """`current` (a reference page) with the part between the marker lines rendered anew."""
    head, sep, rest = current.partition(BEGIN + "\n")
    if not sep:
        raise SystemExit(f"{PAGES[language]}: no {BEGIN} line")
    _old, sep, tail = rest.partition(END)
    return head + BEGIN + "\n\n" + reference(language) + "\n" + END + (tail if sep else "\n")


def main(argv: List[str]) -> int:
    sys.path.insert(0, str(REPO))
    stale = []
    for language, page in PAGES.items():
        current = page.read_text(encoding="utf-8")
        new = page_text(language, current)
        if new != current:
            stale.append(page)
            if "--check" not in argv:
                page.write_text(new, encoding="utf-8")
    if "--check" in argv and stale:
        print("not what the CLI says: " + ", ".join(str(p) for p in stale) + "; run python tools/mkdocs_cli_reference.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
