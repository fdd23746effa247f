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
    from cudaswitch.checks.doctor import DOCTOR_CHECKS

    codes = set(CATALOGUE) | set(DOCTOR_CHECKS)
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
