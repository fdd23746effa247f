"""The Chinese documentation keeps up with the English: every command and every finding code the English README and
guide document are in the Chinese ones, the Chinese code table shows the translations the tool prints, and the
READMEs link to each other from their top. (Same pages and sections: tests/test_docs.py.)"""

import re

from conftest import REPO

GUIDE = REPO / "docs" / "guide"
README_EN = (REPO / "README.md").read_text(encoding="utf-8")
README_ZH = (REPO / "README.zh-CN.md").read_text(encoding="utf-8")
EN = "\n".join([README_EN] + [p.read_text(encoding="utf-8") for p in sorted(GUIDE.glob("*.md"))
                              if not p.name.endswith(".zh.md")])
ZH = "\n".join([README_ZH] + [p.read_text(encoding="utf-8") for p in sorted(GUIDE.glob("*.zh.md"))])
TROUBLESHOOTING_ZH = (GUIDE / "troubleshooting.zh.md").read_text(encoding="utf-8")


def test_the_readmes_link_to_each_other_from_the_top():
    assert "](README.zh-CN.md)" in "\n".join(README_EN.splitlines()[:5])
    assert "](README.md)" in "\n".join(README_ZH.splitlines()[:5])


def test_every_command_in_the_english_docs_is_in_the_chinese_ones():
    from cudaswitch.cli import main

    documented = {c for c in main.list_commands(None) if re.search(rf"`cudaswitch {re.escape(c)}\b", EN)}
    assert {"list", "use", "smoke", "doctor", "install-cudnn"} <= documented  # the check reads the README right
    missing = sorted(c for c in documented if not re.search(rf"cudaswitch {re.escape(c)}\b", ZH))
    assert not missing, f"commands documented in English but not in Chinese: {missing}"
    undocumented = sorted(c for c in main.list_commands(None) if not re.search(rf"cudaswitch {re.escape(c)}\b", ZH))
    assert not undocumented, f"commands missing from the Chinese docs: {undocumented}"


def test_every_finding_code_in_the_english_docs_is_in_the_chinese_ones():
    from cudaswitch.checks.diagnosis import CATALOGUE
    # every code a doctor check can report, as written in the checks' source
    doctor_codes = {c for f in ("checks/doctor.py", "checks/build.py", "discovery/cudnn_windows.py")
                    for c in re.findall(r'"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)"', (REPO / "cudaswitch" / f).read_text())}
    codes = set(CATALOGUE) | doctor_codes
    documented = {c for c in codes if re.search(rf"\b{c}\b", EN)}
    assert len(documented) >= 30, documented
    missing = sorted(c for c in documented if not re.search(rf"\b{c}\b", ZH))
    assert not missing, f"codes documented in English but not in Chinese: {missing}"


def test_the_english_catalogue_table_is_the_catalogue_without_its_source_keys():
    """The page shows each code's meaning, fix and source as the catalogue holds them; the keys of sources.csv
    ("[S43]") stay in the catalogue, for maintainers."""
    from cudaswitch.checks.diagnosis import CATALOGUE

    page = (GUIDE / "troubleshooting.md").read_text(encoding="utf-8")
    keyed = [code for code, (_c, _f, src) in CATALOGUE.items() if "[S" in src]
    assert keyed, "no catalogue entry cites sources.csv"
    for code, (cause, fix, src) in CATALOGUE.items():
        shown = re.sub(r" ?\[S\d+\]", "", src)
        assert f"| {code} | {cause} | {fix} | {shown} |" in page, code


def test_the_chinese_catalogue_table_shows_the_translations_the_tool_prints():
    from cudaswitch.core import i18n
    from cudaswitch.checks.diagnosis import CATALOGUE

    i18n.set_language("zh_CN")
    try:
        for code, (cause, fix, _) in CATALOGUE.items():
            assert f"| {code} | {i18n.tr(cause)} | {i18n.tr(fix)} |" in TROUBLESHOOTING_ZH, code
    finally:
        i18n.set_language(None)
