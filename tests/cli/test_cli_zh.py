"""What `list`, `which`, `status`, `envs`, `uninstall-toolkit` and the CLI's own one-line errors (click's usage
errors, interrupted, internal error, read-only file system) print for a user whose locale is Chinese: Chinese, with
the same `--json` and exit codes as in English."""

import errno
import json
import os
import re
import shutil
import unicodedata

import click
import pytest

import cudatrees
from conftest import make_env, run_cli


def _zh(env):
    out = {k: v for k, v in env.items() if k not in ("CUDASWITCH_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    out["LANG"] = "zh_CN.UTF-8"
    return out


def _en(env):
    return dict(env, CUDASWITCH_LANG="en")


@pytest.fixture
def env(clean_env, real_trees):
    return dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees), PATH="/usr/bin:/bin")


def _columns(text):
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _starts(line, cell):
    """The terminal column where `cell` starts in `line`."""
    return _columns(line[:line.index(cell)])


def test_list_prints_a_chinese_table_aligned_on_a_terminal(env, real_trees):
    r = run_cli(["list"], env=_zh(env))
    assert r.returncode == 0, r.stderr
    header, *rows = r.stdout.splitlines()
    assert header.split() == ["版本", "根目录", "来源", "NVCC", "CUDNN", "备注"]
    row_11 = next(row for row in rows if "11.8.89" in row)
    # a Chinese character takes two columns: the headers stand above their column as a terminal shows it
    assert _starts(header, "根目录") == _starts(row_11, str(real_trees / "cuda-11.8"))
    assert _starts(header, "备注") == _starts(row_11, "no-nvcc")
    assert re.search(r"\s无\s", row_11) and re.search(r"\s有\s", next(row for row in rows if "12.9.1" in row))
    for english in ("VERSION", "ROOT", "NOTES", " yes ", " no "):
        assert english not in r.stdout


def test_list_names_an_alias_in_chinese(env, real_trees, tmp_path):
    (tmp_path / "cuda").symlink_to(real_trees / "cuda-12.9")
    r = run_cli(["list"], env=_zh(dict(env, CUDA_HOME=str(tmp_path / "cuda"))))
    assert f"别名 {tmp_path / 'cuda'}" in r.stdout, r.stdout
    assert not re.search(r"\balias ", r.stdout)


def test_list_lists_two_aliases_as_a_chinese_reader_lists(env, real_trees, tmp_path):
    """Two names of one toolkit: 、 between them in Chinese, the English table and --json keep ', '."""
    (tmp_path / "cuda").symlink_to(real_trees / "cuda-12.9")
    (tmp_path / "cuda-b").symlink_to(real_trees / "cuda-12.9")
    both = dict(env, CUDA_HOME=str(tmp_path / "cuda"), CUDA_PATH=str(tmp_path / "cuda-b"))
    zh = run_cli(["list"], env=_zh(both))
    assert f"别名 {tmp_path / 'cuda'}、{tmp_path / 'cuda-b'}" in zh.stdout, zh.stdout
    assert f"alias {tmp_path / 'cuda'}, {tmp_path / 'cuda-b'}" in run_cli(["list"], env=_en(both)).stdout
    assert run_cli(["list", "--json"], env=_zh(both)).stdout == run_cli(["list", "--json"], env=_en(both)).stdout


def test_list_without_toolkits_says_so_in_chinese(clean_env, tmp_path):
    r = run_cli(["list"], env=_zh(dict(clean_env, CUDASWITCH_SEARCH_PATH=str(tmp_path), PATH="/usr/bin:/bin",
                                       CUDASWITCH_FS_ROOT=str(tmp_path))))
    assert r.returncode == 0, r.stderr
    assert "没有找到 CUDA 工具包。请安装一个，或把它所在的文件夹加入 CUDASWITCH_SEARCH_PATH。" in r.stdout
    assert "No CUDA toolkit found" not in r.stdout


def test_a_broken_version_file_is_a_chinese_warning_naming_the_file(clean_env, tmp_path):
    root = cudatrees.cuda_12_9(tmp_path / "cuda-12.9")
    (root / "version.json").write_text("{not json")
    r = run_cli(["list"], env=_zh(dict(clean_env, CUDASWITCH_SEARCH_PATH=str(tmp_path), PATH="/usr/bin:/bin")))
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stderr.splitlines() if "version.json" in x)
    assert line.startswith(f"警告: {root / 'version.json'}：不是有效的 JSON（"), line
    assert line.endswith("）；请重新安装该工具包或删除这个文件"), line


def test_a_file_on_the_search_path_is_a_chinese_warning(clean_env, tmp_path):
    f = tmp_path / "cuda-12.1.tar"  # a downloaded archive put where a toolkit folder belongs
    f.write_text("x")
    proc = run_cli(["list"], _zh(dict(clean_env, CUDASWITCH_SEARCH_PATH=str(f))))
    assert f"{f}：是文件而不是文件夹；这里应列出工具包文件夹（或包含它们的文件夹）" in proc.stderr, proc.stderr


def test_a_damaged_windows_binary_is_reported_in_chinese(clean_env, tmp_path):
    bin_dir = tmp_path / "C" / "Program Files" / "NVIDIA GPU Computing Toolkit" / "CUDA" / "v12.9" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "nvcc.exe").write_bytes(b"MZ" + b"\0" * 58 + (64).to_bytes(4, "little") + b"PE\0\0" + b"\0" * 20)
    r = run_cli(["list"], env=_zh(dict(clean_env, CUDASWITCH_FS_ROOT=str(tmp_path), CUDASWITCH_OS="windows",
                                       PATH="")))
    line = next(x for x in r.stderr.splitlines() if "nvcc.exe" in x)
    root = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.9"
    assert line == rf"警告: {root}：版本未知（{root}\bin\nvcc.exe：Windows 可执行文件已损坏（没有可选头（optional header）））"
    assert "damaged" not in line and "unknown" not in line


@pytest.mark.parametrize("args", [["list", "--json"], ["status", "--json"], ["envs", "--json"]])
def test_json_and_exit_codes_do_not_change_with_the_language(env, args):
    zh, en = run_cli(args, env=_zh(env)), run_cli(args, env=_en(env))
    assert (zh.returncode, json.loads(zh.stdout)) == (en.returncode, json.loads(en.stdout))


def test_status_reads_in_chinese(env, real_trees):
    r = run_cli(["status"], env=_zh(dict(env, CUDA_HOME=str(real_trees / "cuda-11.8"))))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["环境变量", "值", "工具包"]
    assert re.match(r"CUDA_PATH\s+（未设置）\s+-$", lines[1]), lines[1]
    assert f"当前生效：CUDA 11.8.89（{real_trees / 'cuda-11.8'}）" in lines
    # status's own warnings carry the translated prefix and text
    assert f"警告: 位于 {real_trees / 'cuda-11.8'} 的 CUDA 11.8.89 没有 nvcc（no-nvcc、runtime-only）；PATH 上没有 nvcc" \
        in lines
    for english in ("VARIABLE", "(unset)", "Active:", "warning:", "has no nvcc"):
        assert english not in r.stdout


def test_status_of_a_switched_environment_in_chinese(env, tmp_path):
    trees = tmp_path / "trees"
    root = cudatrees.cuda_12_9(trees / "cuda-12.9")
    prefix = make_env(tmp_path / "envs" / "torch")
    env = dict(env, CUDASWITCH_SEARCH_PATH=str(trees), CONDA_PREFIX=str(prefix), CONDA_DEFAULT_ENV="torch")
    assert run_cli(["use", "12.9", "--no-smoke"], env=env).returncode == 0
    r = run_cli(["status"], env=_zh(env))
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("虚拟环境 torch"))
    assert line.startswith(f"虚拟环境 torch（{prefix}）：cudaswitch 为它选定了 CUDA 12.9.1（{root}），于 "), line
    assert line.endswith(" 用 '12.9' 选择"), line
    assert any(x.startswith("  尚未在当前 shell 中生效：") for x in r.stdout.splitlines()), r.stdout
    shutil.rmtree(root)
    r = run_cli(["status"], env=_zh(env))
    assert (f"错误: 这个虚拟环境使用的 CUDA 12.9.1（{root}）已经不在了（TOOLKIT_MISSING）；'cudaswitch list' 列出已安装的"
            f"工具包，'cudaswitch use SELECTOR' 可切换到其中一个") in r.stdout.splitlines(), r.stdout
    assert "is gone" not in r.stdout and "Environment " not in r.stdout


def test_envs_headers_are_chinese(env, tmp_path):
    env = dict(env, CONDA_ENVS_DIRS=str(make_env(tmp_path / "envs" / "x").parent))  # an environment to list
    r = run_cli(["envs"], env=_zh(env))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].split() == ["名称", "路径", "CUDA", "TORCH", "PIP", "CUDA", "包", "冒烟测试"]


def test_which_errors_in_chinese_keep_their_exit_codes(env):
    for args, chinese in ((["which", "--bin", "--lib", "11.8"], "--bin、--lib、--nvcc 只能给一个，不能同时给 --bin、--lib"),
                          (["which", "--nvcc", "11.8"], "没有 nvcc（标记：no-nvcc、runtime-only）")):
        zh, en = run_cli(args, env=_zh(env)), run_cli(args, env=_en(env))
        assert zh.returncode == en.returncode != 0
        assert zh.stderr.startswith("cudaswitch: 错误: ") and chinese in zh.stderr, zh.stderr
        assert len(zh.stderr.splitlines()) == 1


@pytest.mark.parametrize("args, chinese, english", [
    (["list", "--x"], "没有 '--x' 这个选项。（请参阅 'cudaswitch list --help'）", "No such option"),
    (["status", "--jsn"], "没有 '--jsn' 这个选项。你是不是想输入 '--json'？（请参阅 'cudaswitch status --help'）",
     "Did you mean"),
    (["which"], "缺少参数 'SELECTOR'。（请参阅 'cudaswitch which --help'）", "Missing argument"),
    (["lis"], "没有 'lis' 这个命令。（请参阅 'cudaswitch --help'）", "No such command"),
    (["which", "12", "extra"], "多了一个无法识别的参数（extra）", "unexpected extra"),
    (["init", "bogus"], "'bogus' 不在可选值 'bash', 'cmd', 'fish', 'powershell', 'tcsh', 'zsh' 之中。", "not one of"),
    (["init", "zsh", "--rc-file"], "选项 '--rc-file' 后面需要跟一个值。", "requires an argument"),
])
def test_clicks_usage_errors_are_one_chinese_line(env, args, chinese, english):
    zh, en = run_cli(args, env=_zh(env)), run_cli(args, env=_en(env))
    assert zh.returncode == en.returncode == 2
    assert zh.stderr.startswith("cudaswitch: 错误: ") and len(zh.stderr.splitlines()) == 1, zh.stderr
    assert chinese in zh.stderr, zh.stderr
    assert english not in zh.stderr and "see '" not in zh.stderr


def test_english_usage_errors_are_clicks_own_words(env):
    r = run_cli(["status", "--jsn"], env=_en(env))
    assert r.stderr == ("cudaswitch: error: No such option '--jsn'. Did you mean '--json'? "
                        "(see 'cudaswitch status --help')\n")


def test_a_click_sentence_no_form_knows_stays_as_click_wrote_it():
    from cudaswitch.cli.click_errors import translate
    from cudaswitch.core import i18n

    i18n.set_language("zh_CN")
    try:
        assert translate("Something click says one day.") == "Something click says one day."
        assert translate("Invalid value for '--n': 'x' is not a valid integer.") == "'--n' 的值无效：'x' 不是有效的整数。"
    finally:
        i18n.set_language(None)


def test_the_click_forms_are_clicks_own_sentences():
    """A click release that rewords a message must show up here, not as an English line in a Chinese run."""
    import inspect

    from cudaswitch.cli.click_errors import FORMS

    source = "".join(inspect.getsource(m) for m in (click.exceptions, click.parser, click.core, click.types))
    ours = {"Missing argument {param_hint}.", "Missing option {param_hint}.", "Missing parameter {param_hint}.",
            "{value!r} is not a valid integer.", "{value!r} is not a valid float.", "{value!r} is not a valid boolean."}
    for form in FORMS:
        if form in ours:
            continue
        piece = form.replace("{message} ", "")
        assert f'"{piece}"' in source, form
    assert '"Missing argument"' in source and "{value!r} is not a valid {number_type}." in source


def test_the_version_line_in_chinese(env):
    r = run_cli(["--version"], env=_zh(env))
    assert re.fullmatch(r"cudaswitch，版本 \S+\n", r.stdout), r.stdout


def test_uninstall_toolkit_says_what_it_removed_in_chinese(toolkit_13_0, tmp_path, clean_env):
    copy = tmp_path / "cuda-13.0"
    shutil.copytree(toolkit_13_0, copy, symlinks=True, copy_function=os.link)
    r = run_cli(["uninstall-toolkit", str(copy)], env=_zh(dict(clean_env, CUDASWITCH_TOOLKITS_DIR=str(tmp_path / "s"))))
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"已删除 {copy}。\n"
    assert not copy.exists()


# ---- the one-line errors every command shares (cli/common.py), in-process ----

def _fail_with(exc, capsys):
    from cudaswitch.cli.common import handle_errors
    from cudaswitch.core import i18n

    @handle_errors
    def command():
        raise exc

    i18n.set_language("zh_CN")
    try:
        with pytest.raises(SystemExit) as done:
            command()
    finally:
        i18n.set_language(None)
    return done.value.code, capsys.readouterr().err


def test_interrupted_in_chinese(capsys):
    assert _fail_with(KeyboardInterrupt(), capsys) == (130, "cudaswitch: 错误: 已中断\n")


def test_aborted_in_chinese(capsys):
    assert _fail_with(click.exceptions.Abort(), capsys) == (1, "cudaswitch: 错误: 已中止，未做任何更改\n")


def test_internal_error_in_chinese(capsys, monkeypatch):
    monkeypatch.delenv("CUDASWITCH_DEBUG", raising=False)
    code, err = _fail_with(ZeroDivisionError("division by zero"), capsys)
    assert (code, err) == (70, "cudaswitch: 错误: 内部错误：ZeroDivisionError: division by zero（设置 "
                               "CUDASWITCH_DEBUG=1 可查看完整的 traceback）\n")


def test_read_only_file_system_in_chinese(capsys):
    code, err = _fail_with(OSError(errno.EROFS, "Read-only file system", "/envs/torch/etc"), capsys)
    assert (code, err) == (1, "cudaswitch: 错误: 无法写入 /envs/torch/etc：它位于只读文件系统上；没有再做其他更改\n")


def test_the_relocation_note_in_chinese(capsys, monkeypatch, tmp_path):
    from cudaswitch.cli.common import _system
    from cudaswitch.core import i18n
    from cudaswitch.core import system as system_mod

    monkeypatch.setattr(system_mod, "QUIET_RELOCATION", False)
    monkeypatch.setenv("CUDASWITCH_FS_ROOT", str(tmp_path))
    i18n.set_language("zh_CN")
    try:
        _system()
    finally:
        i18n.set_language(None)
    assert capsys.readouterr().err == (f"cudaswitch: 提示: 已设置 CUDASWITCH_FS_ROOT：显示为 /...（或 C:\\...）的每个路径"
                                       f"实际位于 {tmp_path} 之下，而不在本机自己的文件系统上\n")


def test_windows_status_names_cudnn_on_path_and_the_installers_builds_in_chinese(clean_env, tmp_path):
    cudatrees.windows_cudnn_installer(tmp_path, cuda="12.9", x64=True, with_dlls=False)
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(tmp_path), CUDASWITCH_OS="windows",
               PATH=r"C:\Program Files\NVIDIA\CUDNN\v9.10\bin")
    r = run_cli(["status"], env=_zh(env))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "当前生效：没有 CUDA 工具包" in lines
    assert "PATH 上的 cuDNN：无（PATH 的所有文件夹里都没有 cudnn64_*.dll）" in lines
    assert "NVIDIA 安装程序装的 cuDNN：" in lines
    header = lines[lines.index("NVIDIA 安装程序装的 cuDNN：") + 1]
    assert header.split() == ["CUDNN", "对应", "CUDA", "动态链接库（DLL）文件夹"]
    row = lines[lines.index(header) + 1]
    folder = r"C:\Program Files\NVIDIA\CUDNN\v9.10\bin\12.9\x64"
    assert row.endswith(f"{folder}（没有 cudnn64_*.dll）"), row
    assert _starts(header, "动态链接库") == _starts(row, folder)
    for english in ("cuDNN on PATH", "from NVIDIA's installer", "FOR CUDA", "DLL FOLDER", "Active:"):
        assert english not in r.stdout


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_the_command_list_shows_each_commands_short_help_whole(lang, clean_env):
    """`cudaswitch --help` at 80 columns: every command's line is its whole short help, never cut with "..." or
    "…" (click cuts a docstring's first sentence at 45 characters)."""
    from cudaswitch.cli import main

    out = run_cli(["--help"], dict(clean_env, COLUMNS="80", CUDASWITCH_LANG=lang)).stdout
    rows = out.split("\n\n")[-1].splitlines()[1:]
    names = main.list_commands(click.Context(main))
    assert [r.split()[0] for r in rows] == names, out
    for row in rows:
        assert len(row.split(None, 1)) == 2 and not row.rstrip().endswith(("...", "…")), row
        assert row.rstrip()[-1] in ".。", row
