"""Chinese messages: which language is chosen, what is translated, what never changes, and output that cannot
fail on a GBK / cp437 console or a pipe."""

import json
import locale
import os

import pytest
from click.testing import CliRunner

from conftest import run_cli
from cudaswitch.core import i18n
from cudaswitch.core.i18n import M, choose_language
from cudaswitch.core.system import System

ZH = {"LANG": "zh_CN.UTF-8"}


def _env(clean_env, **extra):
    env = {k: v for k, v in clean_env.items()
           if k not in ("CUDASWITCH_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG", "PYTHONIOENCODING")}
    env.update(extra)
    return env


@pytest.fixture(autouse=True)
def _fresh_language():
    i18n.set_language(None)
    yield
    i18n.set_language(None)


# ---- choosing the language -------------------------------------------------------------------------------

@pytest.mark.parametrize("environ, expected", [
    ({"LANG": "zh_CN.UTF-8"}, "zh_CN"),
    ({"LANG": "zh_CN.GB18030"}, "zh_CN"),
    ({"LANG": "zh_SG.UTF-8"}, "zh_CN"),
    ({"LANG": "en_US.UTF-8"}, "en"),
    ({"LANG": "de_DE.UTF-8"}, "en"),  # no German catalog: English, no error
    ({"LANG": "zh_TW.UTF-8"}, "en"),  # Traditional Chinese is not given Simplified
    ({"LANG": "C.UTF-8"}, "en"),
    ({}, "en"),
    ({"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh_CN"),  # LC_ALL beats LANG
    ({"LC_ALL": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"}, "en"),
    ({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh_CN"),
    ({"LANGUAGE": "zh_TW:zh_CN:en", "LANG": "en_US.UTF-8"}, "zh_CN"),  # first LANGUAGE entry with a catalog
    ({"LANGUAGE": "zh_CN", "LANG": "C"}, "en"),  # GNU gettext ignores LANGUAGE under the C locale
    ({"LANGUAGE": "zh_CN", "LC_ALL": "C.UTF-8"}, "en"),
    ({"LANGUAGE": "zh_CN"}, "en"),  # no locale variable on POSIX is the C locale
    ({"CUDASWITCH_LANG": "zh_CN", "LANG": "C"}, "zh_CN"),
    ({"CUDASWITCH_LANG": "en", "LANG": "zh_CN.UTF-8"}, "en"),
    ({"CUDASWITCH_LANG": "klingon", "LANG": "zh_CN.UTF-8"}, "en"),
    ({"LANG": "zh_CN.UTF-8@garbage..."}, "zh_CN"),
])
def test_language_follows_the_gettext_variables(environ, expected):
    assert choose_language(environ) == expected


def test_windows_follows_the_ui_language_when_no_variable_is_set():
    # 0x0804 is the LANGID GetUserDefaultUILanguage returns on a Simplified Chinese Windows
    chinese = System(os="windows", environ={}, ui_language=lambda: locale.windows_locale[0x0804])
    english = System(os="windows", environ={}, ui_language=lambda: locale.windows_locale[0x0409])
    taiwan = System(os="windows", environ={}, ui_language=lambda: locale.windows_locale[0x0404])
    unknown = System(os="windows", environ={}, ui_language=lambda: None)
    for system, expected in ((chinese, "zh_CN"), (english, "en"), (taiwan, "en"), (unknown, "en")):
        assert choose_language(system.environ, system.windows, system.ui_language) == expected
    # Windows has no C-locale default: LANGUAGE alone counts there
    assert choose_language({"LANGUAGE": "zh_CN"}, True, english.ui_language) == "zh_CN"
    # a variable set by the user (Git Bash, MSYS2 set LANG) or the override wins over the UI language
    chinese.environ = {"LANG": "en_US.UTF-8"}
    assert choose_language(chinese.environ, chinese.windows, chinese.ui_language) == "en"
    chinese.environ = {"CUDASWITCH_LANG": "en"}
    assert choose_language(chinese.environ, chinese.windows, chinese.ui_language) == "en"
    # Linux never asks for a UI language
    asked = []
    linux = System(os="linux", environ={}, ui_language=lambda: asked.append(1) or "zh_CN")
    assert choose_language(linux.environ, linux.windows, linux.ui_language) == "en" and not asked


def test_windows_ui_language_off_windows_is_none():
    assert i18n.windows_ui_language() is None


@pytest.mark.parametrize("langid, expected", [(0x0804, "zh_CN"), (0x1004, "zh_SG"), (0x0409, "en_US"),
                                              (0x0404, "zh_TW"), (0x7FFF, None)])
def test_the_real_system_reads_the_windows_ui_language_through_kernel32(monkeypatch, langid, expected):
    """The default `System.ui_language` calls GetUserDefaultUILanguage (only a stand-in kernel32 exists here)."""
    import ctypes
    from types import SimpleNamespace

    monkeypatch.setattr(ctypes, "windll", SimpleNamespace(
        kernel32=SimpleNamespace(GetUserDefaultUILanguage=lambda: langid)), raising=False)
    system = System(os="windows", environ={})
    assert system.ui_language() == expected
    assert choose_language(system.environ, True, system.ui_language) == ("zh_CN" if expected in ("zh_CN", "zh_SG")
                                                                         else "en")


# ---- translating, and falling back line by line ----------------------------------------------------------

def test_marked_text_is_translated_and_unknown_text_stays_english():
    i18n.set_language("zh_CN")
    assert i18n.tr("no NVIDIA driver found") == "没有找到 NVIDIA 显卡驱动"
    assert i18n.tr("a message nobody translated") == "a message nobody translated"
    assert i18n.tr("") == ""
    i18n.set_language("en")
    assert i18n.tr("no NVIDIA driver found") == "no NVIDIA driver found"


def test_a_message_with_values_is_english_for_records_and_translated_when_printed():
    msg = M("warning: {message}", message="PATH 很长")
    assert msg == "warning: PATH 很长" and json.loads(json.dumps({"m": msg})) == {"m": "warning: PATH 很长"}
    i18n.set_language("zh_CN")
    assert i18n.tr(msg) == "警告: PATH 很长"
    untranslated = M("{n} toolkits nobody translated", n=3)
    assert i18n.tr(untranslated) == "3 toolkits nobody translated"


def test_a_translation_that_lost_its_placeholder_falls_back_to_english(monkeypatch):
    class Broken:
        def gettext(self, message):
            return "警告: {信息}"

    i18n.set_language("zh_CN")
    monkeypatch.setitem(i18n._cache, "zh_CN", Broken())
    assert i18n.tr(M("warning: {message}", message="x")) == "warning: x"


def test_a_missing_catalog_means_english_not_a_crash(monkeypatch, tmp_path):
    monkeypatch.setattr(i18n, "LOCALE_DIR", str(tmp_path))
    i18n.set_language("zh_CN")
    assert i18n.tr("no NVIDIA driver found") == "no NVIDIA driver found"


def test_every_catalogue_text_has_a_translation():
    """Also catches entries added to the table without a mark, which the extractor would not see."""
    from cudaswitch.checks.diagnosis import CATALOGUE

    i18n.set_language("zh_CN")
    texts = [t for cause, fix, _ in CATALOGUE.values() for t in (cause, fix)]
    missing = [t for t in texts if i18n.tr(t) == t and not t.startswith("conda install")]
    assert not missing, missing


# ---- the command line ------------------------------------------------------------------------------------

def test_json_codes_and_exit_codes_are_the_same_in_every_language(clean_env, tmp_path):
    for args in (["list", "--json"], ["doctor", "--json"], ["status", "--json"]):
        en = run_cli(args, env=_env(clean_env, LANG="en_US.UTF-8"))
        zh = run_cli(args, env=_env(clean_env, **ZH))
        assert (zh.returncode, zh.stdout) == (en.returncode, en.stdout), args
        assert not any("\u4e00" <= c <= "\u9fff" for c in zh.stdout), args
    bad_en = run_cli(["which", "99.99"], env=_env(clean_env, LANG="en_US.UTF-8"))
    bad_zh = run_cli(["which", "99.99"], env=_env(clean_env, **ZH))
    assert bad_en.returncode == bad_zh.returncode != 0


def test_errors_and_doctor_findings_print_in_chinese(clean_env, tmp_path):
    missing = tmp_path / "没有这个环境"
    r = run_cli(["doctor", "-p", str(missing)], env=_env(clean_env, **ZH))
    assert r.returncode == 2 and r.stderr.startswith("cudaswitch: 错误: ") and str(missing) in r.stderr
    # a WSL-like machine root gives a finding with a translated cause and fix
    (tmp_path / "root" / "usr" / "lib" / "wsl" / "lib").mkdir(parents=True)
    env = _env(clean_env, CUDASWITCH_FS_ROOT=str(tmp_path / "root"), CUDASWITCH_SEARCH_PATH="", PATH=os.defpath,
               **ZH)
    r = run_cli(["doctor"], env=env)
    assert "WSL2: 运行在 WSL2 中" not in r.stdout  # the cause text of the record, not the table's description
    assert "提示     WSL2: WSL2：NVIDIA 显卡驱动是 Windows 上的那个" in r.stdout, r.stdout
    en = run_cli(["doctor"], env=dict(env, LANG="en_US.UTF-8"))
    assert "info     WSL2: WSL2: the NVIDIA driver is the Windows one" in en.stdout


def test_list_json_never_reads_the_catalog(monkeypatch, clean_env):
    """The catalog is read on the first translated line only: `list --json` pays nothing for translation."""
    from cudaswitch.cli import main

    for k, v in _env(clean_env, **ZH).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("CUDASWITCH_LANG", raising=False)
    r = CliRunner().invoke(main, ["list", "--json"])
    assert r.exit_code == 0 and not i18n.loaded()
    r = CliRunner().invoke(main, ["which", "99.99"])
    assert r.exit_code != 0 and i18n.loaded() and "错误" in r.output


# ---- consoles --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("encoding, chinese, written", [
    ("cp936", True, "cp936"), ("gbk", True, "gbk"), ("gb18030", True, "gb18030"), ("utf-8", True, "utf-8"),
    ("cp437", False, "cp437"), ("latin-1", False, "latin-1"),
    ("ascii", False, "utf-8"),  # click treats an ASCII stream as misconfigured and writes UTF-8 to it
])
def test_output_never_fails_on_the_console_encoding(clean_env, tmp_path, encoding, chinese, written):
    """A CJK path in an error and Chinese messages on each console encoding: shown where it can be, escaped where
    it cannot, never a UnicodeEncodeError / internal error."""
    import subprocess
    import sys

    from conftest import REPO

    missing = tmp_path / "实验室 环境"
    env = _env(clean_env, PYTHONIOENCODING=encoding, PYTHONPATH=str(REPO), **ZH)
    r = subprocess.run([sys.executable, "-m", "cudaswitch", "doctor", "-p", str(missing)], env=env,
                       capture_output=True, timeout=120)
    err = r.stderr.decode(written)
    assert r.returncode == 2, err
    assert "Traceback" not in err and "internal error" not in err and "UnicodeEncodeError" not in err
    if chinese:
        assert err.startswith("cudaswitch: 错误: ") and str(missing) in err
    elif written != encoding:
        assert err.startswith("cudaswitch: error: ") and str(missing) in err
    else:  # English, and the folder as escapes a user can still read back
        assert err.startswith("cudaswitch: error: ") and "\\u5b9e\\u9a8c\\u5ba4" in err
    # stdout is strict by default (stderr already escapes): an environment whose folder has a CJK name
    prefix = tmp_path / "实验室 环境"
    (prefix / "conda-meta").mkdir(parents=True)
    r = subprocess.run([sys.executable, "-m", "cudaswitch", "doctor", "-p", str(prefix)],
                       env=dict(env, CUDA_PATH=str(tmp_path / "gone")), capture_output=True, timeout=120)
    out, err = r.stdout.decode(written), r.stderr.decode(written)
    assert r.returncode in (0, 1) and "internal error" not in err and "Traceback" not in err, err
    if written == encoding and not chinese:
        assert f"({tmp_path}/\\u5b9e\\u9a8c\\u5ba4 \\u73af\\u5883)" in out, out
    else:  # full-width around the folder in Chinese text (glossary.md, punctuation)
        assert (f"（{prefix}）" if chinese else f"({prefix})") in out, out
    # a finding with a fix (CUDA_PATH names a missing folder), in the language the console can show
    assert ("错误     CUDA_PATH_MISSING: " if chinese else "error    CUDA_PATH_MISSING: ") in out, out
    assert ("解决: " in out) == chinese and ("fix: " in out) != chinese, out


def test_a_forced_language_on_a_console_that_cannot_show_it_falls_back_to_english(clean_env, tmp_path):
    env = _env(clean_env, PYTHONIOENCODING="cp437", CUDASWITCH_LANG="zh_CN")
    r = run_cli(["which", "99.99"], env=env)
    assert r.returncode != 0 and r.stderr.startswith("cudaswitch: error: ")


# ---- discovery and core messages -------------------------------------------------------------------------------

def test_discovery_errors_and_warnings_print_in_chinese_and_stay_english_in_json(clean_env, tmp_path):
    """Messages raised or returned by discovery/ and core/ (an unknown selector, a bad -n/-p, a missing search
    folder) print in Chinese, while `--json` keeps the English text and the exit codes stay the same."""
    gone = str(tmp_path / "gone")
    base = dict(clean_env, CUDASWITCH_SEARCH_PATH=gone)
    cases = [(["which", "99.99"], "cudaswitch: 错误: 没有与 '99.99' 匹配的 CUDA 工具包；已安装：", 2),
             (["doctor", "-n", "a", "-p", "b"], "cudaswitch: 错误: -n NAME 和 -p PREFIX 只能二选一", 2),
             (["install-toolkit", "abc"], "cudaswitch: 错误: 'abc' 不是 CUDA 版本号", 2),
             (["list"], f"警告: {gone}（search path）：文件夹不存在；请修正或删除这项设置", 0)]
    for args, chinese, code in cases:
        zh = run_cli(args, env=_env(base, **ZH))
        en = run_cli(args, env=_env(base, LANG="en_US.UTF-8"))
        assert zh.returncode == en.returncode == code, (args, zh.stderr, en.stderr)
        assert chinese in zh.stderr, (args, zh.stderr)
        assert "错误" not in en.stderr and "警告" not in en.stderr
    zh = run_cli(["list", "--json"], env=_env(base, **ZH))
    en = run_cli(["list", "--json"], env=_env(base, LANG="en_US.UTF-8"))
    assert json.loads(zh.stdout) == json.loads(en.stdout)
    assert f"{gone} (search path): no such folder; fix or remove that setting" in json.loads(zh.stdout)["warnings"]


def test_a_message_inside_a_message_is_translated_too():
    i18n.set_language("zh_CN")
    why = M("nvidia-cuda-nvcc-cu12 (12.0-12.9) ships ptxas and libnvvm only, no nvcc")
    outer = M("CUDA {major}.{minor} cannot be assembled from NVIDIA's wheels: {why}; install it with NVIDIA's runfile "
              "or conda (conda install -c nvidia cuda-toolkit={major}.{minor}), or use a 13.x toolkit "
              "('cudaswitch install-toolkit 13.0')", major=12, minor=4, why=why)
    assert str(outer).startswith("CUDA 12.4 cannot be assembled from NVIDIA's wheels: nvidia-cuda-nvcc-cu12 (12.0")
    assert i18n.tr(outer).startswith("CUDA 12.4 无法用 NVIDIA 的 wheel 包组装：nvidia-cuda-nvcc-cu12（12.0-12.9）只带")


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_source_keys_stay_in_the_record_and_out_of_the_printed_text(language):
    """A key of sources.csv means nothing to a reader: the record (JSON) keeps it, the printed line leaves it out;
    no key leaves nothing, not an empty pair of brackets."""
    from cudaswitch.core.i18n import Cited

    msg = M("its kernels cover GPU compute capability {cap}{src}", cap="9.0", src=Cited("S98"))
    assert msg == "its kernels cover GPU compute capability 9.0 [S98]"
    assert json.loads(json.dumps({"m": msg})) == {"m": "its kernels cover GPU compute capability 9.0 [S98]"}
    i18n.set_language(language)
    assert i18n.tr(msg) == {"en": "its kernels cover GPU compute capability 9.0",
                            "zh_CN": "它的 kernel 覆盖 GPU 算力 9.0"}[language]
    assert M("{a}{src}", a="x", src=Cited("")) == "x"


def test_no_message_joins_a_list_with_an_english_comma():
    """A list inside a message is a Listed (", " in the record, 、 in Chinese): a `", ".join` left in the product
    would print ASCII commas inside Chinese text. Only Listed itself and the developers' reprs join so."""
    import ast
    from pathlib import Path

    from conftest import REPO

    left = []
    for path in sorted((REPO / "cudaswitch").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        allowed = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.ClassDef))
                   and f.name in ("__repr__", "Listed") for n in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" \
                    and isinstance(node.func.value, ast.Constant) and node.func.value.value == ", " \
                    and id(node) not in allowed:
                left.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not left, left


def test_a_list_is_joined_as_the_reader_lists():
    from cudaswitch.core.i18n import Listed

    msg = M("{names} and {more} more", names=Listed(["libcudnn.so.8", M("no candidate")]), more=2)
    assert msg == "libcudnn.so.8, no candidate and 2 more"
    i18n.set_language("zh_CN")
    assert i18n.tr(msg) == "libcudnn.so.8、没有候选版本 等另外 2 个"
