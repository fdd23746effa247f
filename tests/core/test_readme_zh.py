"""README.zh-CN.md keeps up with README.md: every command and every finding code the English README documents is
in the Chinese one, and each links to the other from its top."""

import re

from conftest import REPO

EN = (REPO / "README.md").read_text(encoding="utf-8")
ZH = (REPO / "README.zh-CN.md").read_text(encoding="utf-8")


def test_the_readmes_link_to_each_other_from_the_top():
    assert "](README.zh-CN.md)" in "\n".join(EN.splitlines()[:5])
    assert "](README.md)" in "\n".join(ZH.splitlines()[:5])


def test_every_command_in_the_english_readme_is_in_the_chinese_one():
    from cudaswitch.cli import main

    documented = {c for c in main.list_commands(None) if re.search(rf"`cudaswitch {re.escape(c)}\b", EN)}
    assert {"list", "use", "smoke", "doctor", "install-cudnn"} <= documented  # the check reads the README right
    missing = sorted(c for c in documented if not re.search(rf"cudaswitch {re.escape(c)}\b", ZH))
    assert not missing, f"commands documented in README.md but not in README.zh-CN.md: {missing}"
    undocumented = sorted(c for c in main.list_commands(None) if not re.search(rf"cudaswitch {re.escape(c)}\b", ZH))
    assert not undocumented, f"commands missing from README.zh-CN.md: {undocumented}"


def test_every_finding_code_in_the_english_readme_is_in_the_chinese_one():
    from cudaswitch.checks.diagnosis import CATALOGUE
    # every code a doctor check can report, as written in the checks' source
    doctor_codes = {c for f in ("checks/doctor.py", "checks/build.py", "cudnn/windows.py")
                    for c in re.findall(r'"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)"', (REPO / "cudaswitch" / f).read_text())}
    codes = set(CATALOGUE) | doctor_codes
    documented = {c for c in codes if re.search(rf"\b{c}\b", EN)}
    assert len(documented) >= 30, documented
    missing = sorted(c for c in documented if not re.search(rf"\b{c}\b", ZH))
    assert not missing, f"codes documented in README.md but not in README.zh-CN.md: {missing}"


def test_the_chinese_catalogue_table_shows_the_translations_the_tool_prints():
    from cudaswitch.core import i18n
    from cudaswitch.checks.diagnosis import CATALOGUE

    i18n.set_language("zh_CN")
    try:
        for code, (cause, fix, _) in CATALOGUE.items():
            assert f"| {code} | {i18n.tr(cause)} | {i18n.tr(fix)} |" in ZH, code
    finally:
        i18n.set_language(None)


def _headings(text):
    """The `#`..`###` headings of a Markdown text, outside fenced code blocks (a shell comment there is no heading)."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,3} ", line):
            out.append(line.split(" ", 1)[1].strip())
    return out


def test_every_section_of_the_english_readme_has_a_chinese_counterpart():
    """Each Chinese section names the English one it renders (`<!-- en: HEADING -->` on the line before its heading),
    so a section added to README.md without a Chinese counterpart fails here."""
    from collections import Counter

    english = Counter(_headings(EN))
    assert english["Tests"] >= 3 and "Per-shell guarantees" in english  # the parser reads the README right
    zh_lines = ZH.splitlines()
    rendered = Counter()
    for i, line in enumerate(zh_lines):
        m = re.fullmatch(r"<!-- en: (.+) -->", line)
        if m:
            assert i + 1 < len(zh_lines) and re.match(r"#{1,3} ", zh_lines[i + 1]), f"marker without a heading: {line}"
            rendered[m.group(1)] += 1
    missing = {h: n - rendered[h] for h, n in english.items() if rendered[h] < n}
    assert not missing, f"sections of README.md without a counterpart in README.zh-CN.md: {missing}"
    unknown = set(rendered) - set(english)
    assert not unknown, f"README.zh-CN.md names sections README.md does not have: {unknown}"
