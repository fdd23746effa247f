"""The punctuation rules of cudaswitch/locale/zh_CN/glossary.md ("Punctuation"), checked over the compiled catalog
(what users read), and the help formatter's line breaks."""

import gettext
import re
from pathlib import Path

import pytest

from conftest import run_cli

import cudaswitch

MO = Path(cudaswitch.__file__).parent / "locale" / "zh_CN" / "LC_MESSAGES" / "cudaswitch.mo"
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
# what keeps its ASCII punctuation (rule 2 and 3): text the user types or another program prints, placeholders,
# URLs and paths; the line marks shared with English; a finding code's ': '; Python's 'Type: message'
VERBATIM = re.compile(r"'[^'\n]*'|`[^`\n]*`|\"[^\"\n]*\"|\{[^}]*\}|https?://\S+|[A-Za-z]:\\\S*|"
                      r"OMP: Error #\d+|variables: \{var\}: |\.\.\.")
LINE_MARKS = re.compile(r"^(?:cudaswitch: )?(?:错误: |警告: |解决: |提示: )?")
# a half-width mark in Chinese text; a comma or full stop only where it touches a Chinese character
HALF_WIDTH = re.compile(r"[();?!]|: |:$|, |(?<=[\u4e00-\u9fff]),|,(?=[\u4e00-\u9fff])|(?<=[\u4e00-\u9fff])\.(?!\S)")


def catalog():
    return {k: v for k, v in gettext.GNUTranslations(MO.open("rb"))._catalog.items() if k and isinstance(v, str)}


def test_chinese_text_uses_full_width_punctuation():
    bad = []
    for msgid, text in catalog().items():
        if not CJK.search(text):
            continue
        for line in text.split("\n"):
            rest = LINE_MARKS.sub("", line, count=1)
            rest = re.sub(r"\{(code|kind|type)\}: ", "\0", rest)  # CODE: cause, TypeError: message
            found = HALF_WIDTH.findall(VERBATIM.sub("\0", rest))
            if found:
                bad.append((line, found))
    assert bad == [], "\n".join(f"{b[1]}  {b[0]}" for b in bad)


def test_a_list_joined_by_semicolons_is_joined_full_width():
    assert catalog()["; "] == "；" and catalog()[", "] == "、"


@pytest.mark.parametrize("word", ["ok", "unknown", "mismatch", "missing", "too-old", "minor-compat", "beyond tables",
                                  "not listed"])
def test_status_words_in_human_lines_are_translated(word):
    from cudaswitch.checks.smoke import CHAIN_WORDS

    assert word in CHAIN_WORDS and CJK.search(catalog()[word]), word


@pytest.mark.parametrize("source", ["search path", "nvcc on PATH", "conda env", "pip wheels", "command line"])
def test_list_source_words_are_translated(source):
    assert CJK.search(catalog()[source])


def test_list_shows_the_source_in_chinese(real_trees, clean_env):
    env = dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees), CUDASWITCH_LANG="zh_CN")
    r = run_cli(["list"], env=env)
    assert r.returncode == 0, r.stderr
    assert "搜索路径" in r.stdout and "search path" not in r.stdout


COMMANDS = ["use", "smoke", "doctor", "recommend", "install-cudnn", "install-toolkit", "envs", "init", "status", "off"]


@pytest.mark.parametrize("columns", [50, 60, 70, 80, 90, 100, 120])
def test_help_never_starts_a_line_with_closing_punctuation(columns, clean_env):
    env = dict(clean_env, CUDASWITCH_LANG="zh_CN", COLUMNS=str(columns))
    for command in COMMANDS:
        out = run_cli([command, "--help"], env=env).stdout
        for line in out.splitlines():
            assert not re.match(r"\s*[，。；：、）》」』！？]", line), (command, columns, line)
