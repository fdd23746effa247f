"""`--help` in Chinese: the group, every command and option, and click's own words ("Usage:", "Options:", "Show
this message and exit."), translated when help is printed, from English texts that stay in the command modules.
English help stays exactly what click prints, and costs no import and no catalog."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from conftest import REPO, run_cli
from cudaswitch.cli import main
from cudaswitch.cli.help_text import help_source, width, wrap
from cudaswitch.core import i18n

LANG_VARS = ("CUDASWITCH_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG", "PYTHONIOENCODING")
COMMANDS = sorted(main.list_commands(None))


@pytest.fixture
def lang(monkeypatch):
    def set_(value):
        for var in LANG_VARS:
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("LANG", value)
    yield set_
    i18n.set_language(None)


def _help(args):
    r = CliRunner().invoke(main, [*args, "--help"], prog_name="cudaswitch", terminal_width=80)
    assert r.exit_code == 0, r.output
    return r.output


def test_group_and_use_help_print_chinese_in_a_real_process(clean_env):
    env = {k: v for k, v in clean_env.items() if k not in LANG_VARS}
    env["LANG"] = "zh_CN.UTF-8"
    group = run_cli(["--help"], env=env)
    assert group.returncode == 0, group.stderr
    lines = group.stdout.splitlines()
    assert lines[0] == "用法：cudaswitch [OPTIONS] COMMAND [ARGS]..."
    assert "  查看、切换并验证每个 conda 虚拟环境所用的 CUDA 工具包。" in lines
    assert "选项：" in lines and "命令：" in lines
    assert "  -h, --help  显示本帮助并退出。" in lines
    assert "  list               列出已安装的每个 CUDA 工具包及其确切版本。" in lines
    use = run_cli(["use", "--help"], env=env)
    assert use.returncode == 0, use.stderr
    assert use.stdout.startswith("用法：cudaswitch use [OPTIONS] [SELECTOR]\n\n  让 conda 虚拟环境使用 SELECTOR 指定的")
    assert "  -n, --name NAME                 指定名称的 conda 虚拟环境。\n" in use.stdout
    assert "[默认：180]" in use.stdout  # click's "[default: 180]" added to an option's help
    assert "Usage" not in use.stdout + group.stdout and "Show this" not in use.stdout + group.stdout


def test_every_command_and_option_help_is_chinese(lang):
    """No English help sentence is left in any command's Chinese help, and every row of the command list is
    Chinese."""
    lang("zh_CN.UTF-8")
    group = _help([])
    for name in COMMANDS:
        row = next(line for line in group.splitlines() if line.startswith(f"  {name} "))
        assert any("\u4e00" <= ch <= "\u9fff" for ch in row), row
        out = _help([name])
        command = main.get_command(None, name)
        english = [help_source(command)] + [p.help for p in command.params if getattr(p, "help", None)]
        flat = " ".join(out.split())
        for text in english:
            words = " ".join(text.split()[:4])
            assert words not in flat, (name, text)
        assert "选项：" in out and "显示本帮助并退出。" in out


def test_chinese_help_fits_the_terminal(lang):
    """Chinese characters take two columns: lines are wrapped by columns, not characters."""
    lang("zh_CN.UTF-8")
    for args in [[]] + [[name] for name in COMMANDS]:
        for line in _help(args).splitlines():
            # an option name longer than its column is click's own layout, in every language
            if not line.lstrip().startswith("-"):
                assert width(line) <= 80, (args, line)


def test_wrap_breaks_chinese_anywhere_but_keeps_english_words_and_closing_punctuation():
    lines = wrap("把 CUDA 工具包的 lib 文件夹加入 LD_LIBRARY_PATH（默认：加入，除非装了 pip 的 CUDA wheel 包）。", 30)
    assert all(width(line) <= 30 for line in lines[:-1]), lines
    assert "LD_LIBRARY_PATH" in " ".join(lines)  # never split inside an English word
    assert not any(line.startswith(("。", "，", "）")) for line in lines), lines
    assert wrap("第一行\n第二行", 40) == ["第一行", "第二行"]


def test_english_help_is_exactly_what_click_prints(lang):
    """The translation hook leaves English help byte for byte as click formats it (README examples hold)."""
    import click

    lang("en_US.UTF-8")
    root = click.Context(main, info_name="cudaswitch", help_option_names=["-h", "--help"], terminal_width=80)
    assert _help([]) == root.get_help() + "\n"
    for name in COMMANDS:
        command = main.get_command(None, name)
        plain = click.Context(command, info_name=name, parent=root, help_option_names=["-h", "--help"])
        assert _help([name]) == plain.get_help() + "\n", name
    assert not i18n.loaded()


def test_english_help_imports_no_translation_code_and_reads_no_catalog(clean_env):
    code = ("import sys\nfrom cudaswitch.cli import main\nfrom cudaswitch.core import i18n\n"
            "try:\n    main(['use', '--help'])\nexcept SystemExit:\n    pass\n"
            "print('help_text' if 'cudaswitch.cli.help_text' in sys.modules else 'no help_text', i18n.loaded())")
    env = {k: v for k, v in clean_env.items() if k not in LANG_VARS}
    env.update(LANG="en_US.UTF-8", PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.stdout.splitlines()[-1] == "no help_text False", r.stdout + r.stderr
    env["LANG"] = "zh_CN.UTF-8"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.stdout.splitlines()[-1] == "help_text True", r.stdout + r.stderr


def test_a_console_that_cannot_show_chinese_gets_english_help(clean_env):
    env = {k: v for k, v in clean_env.items() if k not in LANG_VARS}
    env.update(LANG="zh_CN.UTF-8", PYTHONIOENCODING="cp437", PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-m", "cudaswitch", "use", "--help"], env=env, capture_output=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.decode("cp437").startswith("Usage: cudaswitch use"), r.stdout
    env["PYTHONIOENCODING"] = "cp936"  # a Chinese Windows console
    r = subprocess.run([sys.executable, "-m", "cudaswitch", "use", "--help"], env=env, capture_output=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.decode("cp936").startswith("用法：cudaswitch use"), r.stdout


def test_json_and_exit_codes_do_not_change_with_the_help_language(lang):
    lang("zh_CN.UTF-8")
    zh = CliRunner().invoke(main, ["list", "--json"])
    lang("en_US.UTF-8")
    en = CliRunner().invoke(main, ["list", "--json"])
    assert zh.exit_code == en.exit_code == 0 and json.loads(zh.output) == json.loads(en.output)
    for value in ("zh_CN.UTF-8", "en_US.UTF-8"):
        lang(value)
        assert CliRunner().invoke(main, ["use", "--help"]).exit_code == 0
        assert CliRunner().invoke(main, ["use", "--no-such-option"]).exit_code == 2
