"""MkDocs hook: the command reference pages show what `cudaswitch COMMAND --help` prints, in the page's language.

A page holding the line `<!-- cli-reference -->` gets, in its place, one section per command with the real help
text, produced by running the CLI itself (click's CliRunner, the same path a terminal takes, translation included),
so the reference cannot drift from the code. Chosen over mkdocs-click, which formats the click objects' English
docstrings itself: the Chinese help is translated while click prints it (cudaswitch/cli/help_text.py), so only running
`--help` gives the page the text a Chinese user sees.
"""

from __future__ import annotations

import os

MARKER = "<!-- cli-reference -->"


def help_text(args, language: str) -> str:
    from click.testing import CliRunner

    from cudaswitch.cli import main
    from cudaswitch.core import i18n

    saved = dict(os.environ)
    os.environ.update(CUDASWITCH_LANG=language, COLUMNS="100")
    try:
        result = CliRunner().invoke(main, [*args, "--help"], prog_name="cudaswitch")
    finally:
        os.environ.clear()
        os.environ.update(saved)
        i18n.set_language(None)
    if result.exit_code != 0:
        raise RuntimeError(f"cudaswitch {' '.join(args)} --help exited {result.exit_code}: {result.output}")
    return result.output.rstrip()


def reference(language: str) -> str:
    import click

    from cudaswitch.cli import main

    parts = ["### `cudaswitch`", "", "```text", help_text([], language), "```", ""]
    for name in main.list_commands(click.Context(main, info_name="cudaswitch")):
        parts += [f"### `cudaswitch {name}`", "", "```text", help_text([name], language), "```", ""]
    return "\n".join(parts)


def on_page_markdown(markdown, page, config, files, **kwargs):
    if MARKER not in markdown:
        return markdown
    language = "zh_CN" if page.file.src_uri.endswith(".zh.md") else "en"
    return markdown.replace(MARKER, reference(language))
