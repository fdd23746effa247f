"""`use`, `use auto`, `use --save`, `off`, `init`, `run` in Simplified Chinese (LANG=zh_CN.UTF-8), and the activation
hooks' warning in the language of the user who ran `use`: every line a user reads is Chinese, while `--json`, exit
codes and the English hook bytes stay what they are."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "fake_torch"))

import cudatrees  # noqa: E402
import torch_wheel_files as twf  # noqa: E402
from conftest import require_tool, run_cli  # noqa: E402
from shell_driver import SHELLS as REAL_SHELLS, Toolkit, clean_environ, hook_ext, source_cmd  # noqa: E402

from cudaswitch.core import i18n  # noqa: E402
from cudaswitch.switching import hookfiles  # noqa: E402
from cudaswitch.core.shells import SHELLS  # noqa: E402

# English sentences of this area that must not survive in the Chinese output
ENGLISH = ("now uses CUDA", "gets ", "in front", "Hooks for", "Takes effect", "Would make", "nothing written",
           "no longer switches", "hook files", "was not switched", "Added one line", "Already in", "open a new shell",
           "was built with", "for an exact match", "note:", "is the newest", "declares", "error:", "missing COMMAND",
           "command not found", "is not a conda environment", "warning:")


def _zh(env):
    out = {k: v for k, v in env.items() if k not in ("CUDASWITCH_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    out["LANG"] = "zh_CN.UTF-8"
    return out


def _no_english(text):
    left = [w for w in ENGLISH if w in text]
    assert not left, (left, text)


def _has_chinese(line):
    return re.search(r"[\u4e00-\u9fff]", line) is not None


@pytest.fixture
def env_prefix(tmp_path):
    p = tmp_path / "envs" / "torch"
    (p / "conda-meta").mkdir(parents=True)
    return p


@pytest.fixture
def cli_env(clean_env, real_trees):
    return dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))


def test_use_and_off_speak_chinese_with_the_same_files_and_exit_codes(cli_env, env_prefix, real_trees):
    en = run_cli(["use", "12.9", "-p", str(env_prefix), "--no-smoke"], cli_env)
    assert en.returncode == 0, en.stderr
    en_files = {p.relative_to(env_prefix): p.read_bytes() for p in (env_prefix / "etc" / "conda").rglob("cudaswitch.*")}
    assert run_cli(["off", "-p", str(env_prefix)], cli_env).returncode == 0

    zh = run_cli(["use", "12.9", "-p", str(env_prefix), "--no-smoke"], _zh(cli_env))
    assert zh.returncode == 0, zh.stderr
    tk = real_trees / "cuda-12.9"
    assert f"虚拟环境 torch（{env_prefix}）现在使用 CUDA 12.9.1（{tk}）。" in zh.stdout
    assert f"  PATH 最前面加入 {tk}/bin" in zh.stdout
    assert "的激活脚本：" in zh.stdout and "中的 10 个 cudaswitch.* 文件" in zh.stdout
    assert "下次激活时生效。要立即应用到当前 shell，请运行：conda activate " in zh.stdout
    _no_english(zh.stdout + zh.stderr)
    # every line but the variable assignment (names and a path only) has Chinese in it
    assert all(_has_chinese(ln) for ln in zh.stdout.splitlines() if "CUDA_PATH = CUDA_HOME" not in ln), zh.stdout
    zh_files = {p.relative_to(env_prefix): p.read_bytes() for p in (env_prefix / "etc" / "conda").rglob("cudaswitch.*")}
    assert zh_files.keys() == en_files.keys()
    bat = Path("etc/conda/activate.d/cudaswitch.bat")
    assert zh_files[bat] == en_files[bat] and zh_files[bat].isascii()  # cmd.exe's hook stays ASCII English
    assert "已找不到 CUDA 12.9.1" in zh_files[Path("etc/conda/activate.d/cudaswitch.sh")].decode("utf-8")

    off = run_cli(["off", "-p", str(env_prefix)], _zh(cli_env))
    assert off.returncode == 0
    assert off.stdout == f"虚拟环境 torch（{env_prefix}）不再切换 CUDA：已删除 10 个激活脚本文件和状态文件。\n"
    again = run_cli(["off", "-p", str(env_prefix)], _zh(cli_env))
    assert again.returncode == 0
    assert again.stdout == f"虚拟环境 torch（{env_prefix}）没有被 cudaswitch 切换过；没有需要删除的文件。\n"


def test_use_dry_run_save_and_the_refused_paths_in_chinese(cli_env, env_prefix, tmp_path, real_trees):
    dry = run_cli(["use", "12.9", "--dry-run", "-p", str(env_prefix)], _zh(cli_env))
    assert dry.returncode == 0
    assert dry.stdout == (f"将让虚拟环境 torch（{env_prefix}）使用 CUDA 12.9.1（{real_trees / 'cuda-12.9'}）；"
                          f"未写入任何文件。\n")

    yml = tmp_path / "environment.yml"
    yml.write_text("name: torch\ndependencies:\n  - python=3.11\n", encoding="utf-8")
    saved = run_cli(["use", "12.9", "--no-smoke", "-p", str(env_prefix), "--save", str(yml)], _zh(cli_env))
    assert saved.returncode == 0, saved.stderr
    assert f'{yml}：现已声明环境变量 variables: CUDASWITCH_CUDA: "12.9"' in saved.stdout
    _no_english(saved.stdout + saved.stderr)

    missing = run_cli(["use", "12.9", "--no-smoke", "-p", str(env_prefix), "--save", str(tmp_path / "no.yml")],
                      _zh(cli_env))
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.startswith(f"cudaswitch: 错误: 没有虚拟环境文件 {tmp_path / 'no.yml'}；")

    # a toolkit path conda's own PATH export would break (here a `$`) is refused, in Chinese, exit code unchanged
    odd = tmp_path / "odd $dir"
    cudatrees.cuda_12_9(odd / "cuda-12.9")
    env = dict(cli_env, CUDASWITCH_SEARCH_PATH=str(odd))
    en = run_cli(["use", "12.9", "--no-smoke", "-p", str(env_prefix)], env)
    zh = run_cli(["use", "12.9", "--no-smoke", "-p", str(env_prefix)], _zh(env))
    assert en.returncode == zh.returncode == 1
    assert "which conda's own unescaped PATH export" in en.stderr
    assert zh.stderr.startswith("cudaswitch: 错误: ") and 'conda 自己在 csh (setenv PATH "...")、fish (set -gx PATH "...")' in zh.stderr
    assert "不含该字符的路径下" in zh.stderr and zh.stderr.count("\n") == 1


def test_init_and_run_speak_chinese(cli_env, tmp_path):
    rc = tmp_path / "bashrc"
    first = run_cli(["init", "bash", "--install", "--rc-file", str(rc)], _zh(cli_env))
    second = run_cli(["init", "bash", "--install", "--rc-file", str(rc)], _zh(cli_env))
    assert (first.returncode, second.returncode) == (0, 0)
    loaded = os.path.join(cli_env["XDG_DATA_HOME"], "cudaswitch", "shell", "init.bash")
    assert first.stdout == f"已在 {rc} 中添加一行，用来加载 {loaded}；打开一个新的 shell 即可使用。\n"
    assert second.stdout == f"{rc} 中已经有了（它加载 {loaded}）；打开一个新的 shell 即可使用。\n"
    # the shell function itself is code, the same in every language
    assert run_cli(["init", "bash"], _zh(cli_env)).stdout == run_cli(["init", "bash"], cli_env).stdout

    none = run_cli(["run", "12.9", "--"], _zh(cli_env))
    assert none.returncode == 2
    assert none.stderr == "cudaswitch: 错误: 缺少 COMMAND，例如 'cudaswitch run 11.8 -- nvcc --version'\n"
    lost = run_cli(["run", "12.9", "--", "no-such-program-cs"], _zh(cli_env), process=True)
    assert lost.returncode == 127
    assert lost.stderr == "cudaswitch: 错误: 找不到命令：no-such-program-cs\n"


@pytest.fixture(scope="module")
def fs(tmp_path_factory, toolkit_13_0):
    """A machine (file-system root) with /usr/local/cuda-12.9 and cuda-13.0 (install-toolkit's, from NVIDIA's wheels)."""
    root = tmp_path_factory.mktemp("fs")
    cudatrees.cuda_12_9(root / "usr" / "local" / "cuda-12.9")
    cudatrees._copytree(toolkit_13_0, root / "usr" / "local" / "cuda-13.0")
    return root


def test_use_auto_speaks_chinese_and_its_json_is_unchanged(fs, tmp_path_factory, clean_env):
    cu132 = twf.cuda_torch_env(tmp_path_factory.mktemp("e") / "cu132", "torch==2.15.0")
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux", PATH="/usr/bin:/bin")
    en_json = run_cli(["use", "auto", "--json", "-p", str(cu132)], env)
    zh_json = run_cli(["use", "auto", "--json", "-p", str(cu132)], _zh(env))
    assert en_json.returncode == zh_json.returncode == 0
    assert zh_json.stdout == en_json.stdout
    assert json.loads(zh_json.stdout)["auto"]["reason"].startswith("torch 2.15.0+cu132 was built with CUDA 13.2")

    r = run_cli(["use", "auto", "--no-smoke", "-p", str(cu132)], _zh(env))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == ("auto：torch 2.15.0+cu132 是用 CUDA 13.2 编译的；未安装 13.2 的工具包，CUDA 13.0.88 是同一主版本中"
                        "最新的。")
    assert lines[1].startswith("  注意：torch 是用 CUDA 13.2 编译的，此工具包是 13.0：torch.utils.cpp_extension 会就次版本")
    assert lines[2] == "  如需完全匹配：cudaswitch install-toolkit 13.2"
    assert f"虚拟环境 cu132（{cu132}）现在使用 CUDA 13.0.88（/usr/local/cuda-13.0）。" in r.stdout
    _no_english(r.stdout + r.stderr)

    # no toolkit of torch's major: one Chinese error line naming the install command, exit code 1 as in English
    only12 = tmp_path_factory.mktemp("fs12")
    cudatrees.cuda_12_9(only12 / "usr" / "local" / "cuda-12.9")
    env12 = dict(env, CUDASWITCH_FS_ROOT=str(only12))
    en = run_cli(["use", "auto", "-p", str(cu132)], env12)
    zh = run_cli(["use", "auto", "-p", str(cu132)], _zh(env12))
    assert en.returncode == zh.returncode == 1
    assert zh.stderr.startswith("cudaswitch: 错误: torch 2.15.0+cu132 是用 CUDA 13.2 编译的，而已安装的带 nvcc 的工具包中没有 "
                                "CUDA 13.x（已安装：12.9.1）；cudaswitch install-toolkit 13.2")
    assert zh.stderr.count("\n") == 1


# ---- the hooks' warning ------------------------------------------------------------------------------------------

def _rendered(language, windows=False):
    tk = Toolkit("/opt/cuda-12.9")
    i18n.set_language(language)
    try:
        return hookfiles.render_all(tk.changes(), "12.9.1", windows=windows)
    finally:
        i18n.set_language(None)


@pytest.mark.parametrize("windows", [False, True])
def test_zh_hooks_differ_from_english_only_in_the_warning_and_cmd_stays_english(windows):
    en, zh = _rendered("en", windows), _rendered("zh_CN", windows)
    assert zh["bat"] == en["bat"]  # cmd.exe reads its file in the console code page: ASCII English
    for key in ("sh", "fish", "csh", "ps1"):
        assert zh[key]["deactivate"] == en[key]["deactivate"]  # deactivation prints nothing
        enc = SHELLS[key].encoding
        a, b = en[key]["activate"].decode(enc).splitlines(), zh[key]["activate"].decode(enc).splitlines()
        changed = [(x, y) for x, y in zip(a, b) if x != y]
        assert len(a) == len(b) and len(changed) == 1, key
        old, new = changed[0]
        assert "cudaswitch: warning: CUDA 12.9.1 is gone from" in old
        assert "cudaswitch: 警告: 在 $" in new and "已找不到 CUDA 12.9.1；此虚拟环境保留原来的 CUDA 设置" in new
        # the text around the sentence (the shell's own printing and quoting) is the same
        assert old.split("cudaswitch: warning:")[0] == new.split("cudaswitch: 警告:")[0]
    assert zh["ps1"]["activate"].startswith(b"\xef\xbb\xbf")  # Windows PowerShell 5.1 needs the BOM for UTF-8
    assert en["ps1"]["activate"].isascii()


def test_an_unsafe_translation_leaves_the_hook_english(monkeypatch):
    """A translation bringing shell syntax ($, backquote, a quote) into the double-quoted string is not used."""
    en = _rendered("en")
    real = i18n._

    def bad(message):
        if message == hookfiles.GONE_WARNING:
            return "CUDA {version} 在 {root} 已不存在 $(rm -rf ~)"
        return real(message)

    monkeypatch.setattr(i18n, "_", bad)
    assert _rendered("zh_CN") == en


@pytest.mark.parametrize("shell", sorted(REAL_SHELLS))
def test_a_zh_hook_prints_the_chinese_warning_in_the_real_shell(shell, tmp_path):
    exe = require_tool(shell)
    tk = Toolkit(str(tmp_path / "gone cuda"))
    prefix = tmp_path / "env"
    (prefix / "conda-meta").mkdir(parents=True)
    i18n.set_language("zh_CN")
    try:
        hookfiles.write_hooks(str(prefix), tk.changes(), "11.8")
    finally:
        i18n.set_language(None)
    ext, q = hook_ext(shell), REAL_SHELLS[shell][2]
    hook = prefix / "etc" / "conda" / "activate.d" / f"cudaswitch.{ext}"
    script = tmp_path / f"m.{ext}"
    script.write_text(f"{source_cmd(shell)} {q(str(hook))}\necho after\n", encoding="utf-8")
    # the user's shell may run in any locale: the warning is in the file, not chosen by the shell
    proc = subprocess.run([exe] + REAL_SHELLS[shell][1][1:] + [str(script)], env=clean_environ(PATH="/usr/bin:/bin"),
                          capture_output=True)
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert proc.returncode == 0 and "after" in out, out + err
    warn = [ln for ln in err.splitlines() if ln.startswith("cudaswitch:")]
    assert warn == [f"cudaswitch: 警告: 在 {tk.root} 已找不到 CUDA 11.8；此虚拟环境保留原来的 CUDA 设置（请重新运行 "
                    f"'cudaswitch use'）"], err


def test_the_language_is_the_one_of_the_user_running_use(cli_env, env_prefix):
    """Rendered at `use` time: an English `use` writes English hooks even where a Chinese one wrote Chinese before."""
    assert run_cli(["use", "12.9", "--no-smoke", "-p", str(env_prefix)], _zh(cli_env)).returncode == 0
    sh = env_prefix / "etc" / "conda" / "activate.d" / "cudaswitch.sh"
    assert "已找不到" in sh.read_text(encoding="utf-8")
    assert run_cli(["use", "--refresh", "--no-smoke", "-p", str(env_prefix)], cli_env).returncode == 0
    assert sh.read_bytes().isascii() and b"is gone from" in sh.read_bytes()
    assert os.path.exists(env_prefix / "etc" / "cudaswitch" / "state.yaml")


def test_the_cmd_exe_warning_of_use_is_chinese(cli_env, env_prefix, tmp_path):
    """A toolkit under a Chinese folder name: every shell but cmd.exe is switched; `use` says so in Chinese."""
    lab = tmp_path / "实验室"
    cudatrees.cuda_12_9(lab / "cuda-12.9")
    env = dict(cli_env, CUDASWITCH_SEARCH_PATH=str(lab))
    en = run_cli(["use", "12.9", "--no-smoke", "-p", str(env_prefix)], env)
    zh = run_cli(["use", "12.9", "--no-smoke", "-p", str(env_prefix)], _zh(env))
    assert en.returncode == zh.returncode == 0
    assert "warning: cmd.exe cannot be switched to this toolkit" in en.stderr
    assert f"警告: cmd.exe 无法切换到此工具包（{lab / 'cuda-12.9'} 含有非 ASCII 字符）；它的激活脚本只会打印一条警告" \
        in zh.stderr
    _no_english(zh.stdout + zh.stderr)


def test_base_refresh_and_selector_errors_are_chinese_with_the_same_exit_codes(cli_env, env_prefix, tmp_path):
    base = tmp_path / "miniconda3"
    (base / "conda-meta").mkdir(parents=True)
    env = dict(cli_env, _CONDA_ROOT=str(base), CONDA_PREFIX=str(base))
    for args, base_env, code, said in [
            (["use", "11.8"], True, 2, "这是 base 虚拟环境，每个 shell 启动时都处在其中；如仍要切换，请加上 --yes"),
            (["use", "--refresh", "-p", str(env_prefix)], False, 2,
             "虚拟环境 'torch' 没有可刷新的 cudaswitch 选择；请运行 'cudaswitch use SELECTOR'"),
            (["use", "11.8", "--refresh", "-p", str(env_prefix)], False, 2,
             "SELECTOR 和 --refresh 只能给一个，不能同时给出")]:
        e = env if base_env else cli_env
        en = run_cli(args, e, stdin=subprocess.DEVNULL)
        zh = run_cli(args, _zh(e), stdin=subprocess.DEVNULL)
        assert en.returncode == zh.returncode == code, (en.stderr, zh.stderr)
        assert zh.stderr == f"cudaswitch: 错误: {said}\n"
    assert not (base / "etc").exists() and not (env_prefix / "etc").exists()
