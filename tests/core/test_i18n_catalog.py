"""The shipped catalogs are complete and compiled: every marked message in cudaswitch/ has a translation that keeps
its placeholders, and each .mo is exactly its .po compiled (scripts/i18n_catalog.py, Babel)."""

import importlib.util
import shutil

import pytest

from conftest import REPO

pytest.importorskip("babel", reason="Babel is in the [test] extra; CI installs it")

spec = importlib.util.spec_from_file_location("i18n_catalog", REPO / "scripts" / "i18n_catalog.py")
catalog_tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(catalog_tool)

PO = "zh_CN/LC_MESSAGES/cudaswitch.po"


def test_the_shipped_catalogs_are_complete_and_compiled():
    assert catalog_tool.po_paths(), "no catalog found"
    assert catalog_tool.problems() == []


@pytest.fixture
def locale_copy(tmp_path):
    dest = tmp_path / "locale"
    shutil.copytree(REPO / "cudaswitch" / "locale", dest)
    return dest


def _edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_message_without_translation_fails(locale_copy):
    _edit(locale_copy / PO, 'msgstr "如果本机有 NVIDIA 显卡，请安装 NVIDIA 显卡驱动"', 'msgstr ""')
    found = catalog_tool.problems(locale_copy)
    assert any("no translation for 'install the NVIDIA driver if this machine has an NVIDIA GPU'" in p for p in found), found


def test_a_message_missing_from_the_catalog_fails(locale_copy):
    _edit(locale_copy / PO, 'msgid "install the NVIDIA driver if this machine has an NVIDIA GPU"\n'
          'msgstr "如果本机有 NVIDIA 显卡，请安装 NVIDIA 显卡驱动"\n', '')
    found = catalog_tool.problems(locale_copy)
    assert any("no translation for 'install the NVIDIA driver if this machine has an NVIDIA GPU' "
               "(cudaswitch/checks/doctor.py" in p for p in found), found


@pytest.mark.parametrize("old, new, lost", [
    ('msgstr "警告: {message}"', 'msgstr "警告: {信息}"', "{message}"),
    ('msgstr "cudaswitch: 错误: {message}"', 'msgstr "cudaswitch: 错误"', "{message}"),
])
def test_a_translation_that_lost_a_placeholder_fails(locale_copy, old, new, lost):
    _edit(locale_copy / PO, old, new)
    found = [p for p in catalog_tool.problems(locale_copy) if "placeholders" in p]
    assert found and lost in found[0], found


def test_printf_placeholders_count_too():
    assert catalog_tool.fields("%s of %(n)d") != catalog_tool.fields("%s 个")
    assert catalog_tool.fields("{a} {b}") == catalog_tool.fields("{b} 和 {a}")


def test_a_compiled_catalog_that_is_not_its_source_fails(locale_copy):
    _edit(locale_copy / PO, 'msgstr "没有找到 NVIDIA 显卡驱动"', 'msgstr "未找到 NVIDIA 显卡驱动"')
    found = catalog_tool.problems(locale_copy)
    assert any("is not" in p and "compiled" in p for p in found), found
    (locale_copy / PO).with_suffix(".mo").write_bytes(catalog_tool.compile_mo(locale_copy / PO))
    assert catalog_tool.problems(locale_copy) == []


def test_the_glossary_terms_are_used_consistently():
    """Every English term of the glossary is rendered by its Chinese term in every message that contains it."""
    import re

    from babel.messages.pofile import read_po

    glossary = (REPO / "cudaswitch" / "locale" / "zh_CN" / "glossary.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([^`]+)` \| ([^|]+?) \|", glossary, re.M)
    assert len(rows) >= 10, rows
    with open(REPO / "cudaswitch" / "locale" / PO, "rb") as fh:
        messages = [m for m in read_po(fh) if m.id]
    bad = []
    for english, chinese in rows:
        # the word, not a file name (environment.yml), a command (install-toolkit) or a placeholder ({wheel})
        pattern = re.compile(rf"(?<![-{{])\b{re.escape(english)}s?\b(?!\.\w|}})")
        for m in messages:
            if pattern.search(m.id) and chinese not in m.string:
                bad.append(f"{english} -> {chinese}: {m.id!r} -> {m.string!r}")
    assert not bad, "\n".join(bad)


def test_no_message_prints_a_source_key():
    """A key of cudaswitch/data/sources.csv ("[S43]") means nothing to a reader: a message carries it as a Cited
    value ("{src}"), which the record keeps and the printed text leaves out, never as text of its own."""
    import re

    from babel.messages.pofile import read_po

    with open(REPO / "cudaswitch" / "locale" / PO, "rb") as fh:
        messages = [m for m in read_po(fh) if m.id]
    assert any("{src}" in m.id for m in messages)
    key = re.compile(r"\[(?:S\d+|\{src\})")
    bad = [m.id for m in messages if key.search(str(m.id)) or key.search(str(m.string))]
    assert not bad, bad


def test_help_texts_are_in_the_catalog_check(locale_copy):
    """The `--help` texts (docstrings, `help=`, click's own words) are extracted from the commands themselves, so a
    new option without a translation fails like any marked message."""
    wanted = {m.id for m in catalog_tool.extract() if m.id}
    assert {"Show this message and exit.", "Usage:", "Options", "Commands", "default: {default}",
            "Every installed CUDA toolkit with its exact version.",
            "Seconds the smoke test may take (0 or none: no limit)."} <= wanted
    _edit(locale_copy / PO, 'msgstr "列出已安装的每个 CUDA 工具包及其确切版本。"', 'msgstr ""')
    found = catalog_tool.problems(locale_copy)
    assert any("no translation for 'Every installed CUDA toolkit with its exact version.' "
               "(cudaswitch/cli/discovery.py" in p for p in found), found
