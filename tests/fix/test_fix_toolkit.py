"""`doctor --fix` for TOOLKIT_MISSING: the environment was switched to CUDA 12.9, then that toolkit was uninstalled
(its folder removed), so every activation warns and sets no CUDA. The step switches to the nearest installed
toolkit the environment's torch accepts; with none of torch's CUDA major, it stays advice. Real NVIDIA wheel files
make the toolkits (tests/cudatrees.py)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from conftest import make_env, run_cli

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fake_torch"))
import cudatrees  # noqa: E402
import envs  # noqa: E402
from test_fix_files import snapshot  # noqa: E402


@pytest.fixture
def gone(tmp_path, clean_env):
    """(environment switched to 12.9, whose toolkit is then removed; the CLI's environment): 11.8 is left."""
    root = tmp_path / "root"
    cudatrees.cuda_12_9(root / "usr" / "local" / "cuda-12.9")
    cudatrees.cuda_11_8(root / "usr" / "local" / "cuda-11.8")
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(root), CONDA_OVERRIDE_CUDA="12.9", SHELL="/bin/bash",
               PATH="/usr/bin:/bin", HOME=str(tmp_path / "home"), JUPYTER_DATA_DIR=str(tmp_path / "jupyter"),
               JUPYTER_PATH=str(tmp_path / "jupyter"))
    prefix = envs.python_prefix(tmp_path / "envs", "work")
    make_env(prefix)
    assert run_cli(["use", "12.9", "-p", prefix, "--no-smoke", "--no-verify"], env).returncode == 0
    shutil.rmtree(root / "usr" / "local" / "cuda-12.9")
    return prefix, env


def test_a_vanished_toolkit_is_replaced_by_the_nearest_one(gone):
    prefix, env = gone
    broken = snapshot(prefix)
    plan = run_cli(["doctor", "-p", prefix, "--fix", "--dry-run"], env)
    assert " 1. TOOLKIT_MISSING: " in plan.stdout, plan.stdout + plan.stderr
    assert "variable CUDA_HOME: /usr/local/cuda-12.9 -> /usr/local/cuda-11.8" in plan.stdout
    assert f"same as: cudaswitch use /usr/local/cuda-11.8 -p {prefix}" in plan.stdout
    r = run_cli(["doctor", "-p", prefix, "--fix", "--yes"], env)
    assert "step 1 cleared TOOLKIT_MISSING" in r.stdout, r.stdout + r.stderr
    hook = (prefix / "etc" / "conda" / "activate.d" / "cudaswitch.sh").read_text()
    assert "/usr/local/cuda-11.8" in hook and "cuda-12.9" not in hook
    u = run_cli(["doctor", "-p", prefix, "--undo"], env)
    assert "Put back" in u.stdout, u.stdout + u.stderr
    assert snapshot(prefix) == broken


def test_no_toolkit_of_torchs_major_stays_advice(gone):
    """torch 2.5.1+cu124 in the environment: CUDA 11.8 is not its major, so nothing is switched."""
    prefix, env = gone
    site = envs.site_packages(prefix)
    (site / "torch").mkdir()
    (site / "torch" / "version.py").write_text("__version__ = '2.5.1+cu124'\ncuda = '12.4'\n")
    (site / "torch-2.5.1+cu124.dist-info").mkdir()
    plan = run_cli(["doctor", "-p", prefix, "--fix", "TOOLKIT_MISSING", "--dry-run"], env)
    assert " 1. TOOLKIT_MISSING" not in plan.stdout and " - TOOLKIT_MISSING: " in plan.stdout, plan.stdout


@pytest.fixture
def own_variable(tmp_path, clean_env):
    """CUDA_HOME exported by the user's own startup file names CUDA 12.4, since uninstalled; 12.9 and 11.8 are
    installed, and the environment was never switched by cudaswitch."""
    root = tmp_path / "root"
    cudatrees.cuda_12_9(root / "usr" / "local" / "cuda-12.9")
    cudatrees.cuda_11_8(root / "usr" / "local" / "cuda-11.8")
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(root), CONDA_OVERRIDE_CUDA="12.9", PATH="/usr/bin:/bin",
               HOME=str(tmp_path / "home"), JUPYTER_DATA_DIR=str(tmp_path / "jupyter"),
               JUPYTER_PATH=str(tmp_path / "jupyter"), CUDA_HOME="/usr/local/cuda-12.4")
    prefix = envs.python_prefix(tmp_path / "envs", "work")
    make_env(prefix)
    return prefix, env


@pytest.mark.parametrize("shell, line", [
    ("/bin/bash", "in ~/.bashrc: export CUDA_HOME=/usr/local/cuda-12.9"),
    ("/usr/bin/zsh", "in ~/.zshrc: export CUDA_HOME=/usr/local/cuda-12.9"),
    ("/bin/sh", "in ~/.profile: export CUDA_HOME=/usr/local/cuda-12.9"),
    ("/usr/bin/fish", "in ~/.config/fish/config.fish: set -gx CUDA_HOME /usr/local/cuda-12.9"),
    ("/bin/tcsh", "in ~/.tcshrc: setenv CUDA_HOME /usr/local/cuda-12.9"),
])
def test_the_users_own_variable_gets_the_line_for_their_startup_file(own_variable, shell, line):
    """Nothing is changed (the plan has no step), and the advice names the toolkit the switch would choose: the
    nearest to 12.4, of the same major first (12.9, not 11.8)."""
    prefix, env = own_variable
    before = snapshot(prefix)
    r = run_cli(["doctor", "-p", prefix, "--fix", "--dry-run"], dict(env, SHELL=shell))
    out = r.stdout
    assert " - CUDA_PATH_MISSING: CUDA_HOME=/usr/local/cuda-12.4 does not exist" in out, out + r.stderr
    assert "CUDA_HOME is your own setting, not cudaswitch's: point it at CUDA 12.9.1 (/usr/local/cuda-12.9)" in out
    assert "\n     " + line + "\n" in out, out
    assert " 1. " not in out and snapshot(prefix) == before


def test_the_line_is_in_chinese_too(own_variable):
    prefix, env = own_variable
    r = run_cli(["doctor", "-p", prefix, "--fix", "--dry-run"], dict(env, SHELL="/bin/bash", LANG="zh_CN.UTF-8",
                                                                    LC_ALL="zh_CN.UTF-8"))
    assert "在 ~/.bashrc 中：export CUDA_HOME=/usr/local/cuda-12.9" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("root, cmd, ps", [
    (r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.6",
     r'setx CUDA_PATH "C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.6"',
     r"setx CUDA_PATH 'C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.6'"),
    (r"D:\工具 包\CUDA\v12.6", r'setx CUDA_PATH "D:\工具 包\CUDA\v12.6"', r"setx CUDA_PATH 'D:\工具 包\CUDA\v12.6'"),
    (r"D:\张三's tools\v12.6", r'setx CUDA_PATH "D:\张三' + "'" + r's tools\v12.6"',
     r"setx CUDA_PATH 'D:\张三''s tools\v12.6'"),
    (r"C:\CUDA\v12.6", r"setx CUDA_PATH C:\CUDA\v12.6", r"setx CUDA_PATH C:\CUDA\v12.6"),
])
def test_windows_gets_setx_for_cmd_and_for_powershell(root, cmd, ps):
    from cudaswitch.fix.toolkit import user_variable_lines

    lines = [str(m) for m in user_variable_lines("CUDA_PATH", root, {}, True)]
    assert lines == [f"in cmd.exe: {cmd}", f"in PowerShell: {ps}"]


def test_a_folder_with_quotes_and_spaces_stays_one_word_in_each_posix_shell():
    from cudaswitch.fix.toolkit import user_variable_lines

    value = "/opt/工具 包/it's cuda-12.6"
    got = {sh: str(user_variable_lines("CUDA_HOME", value, {"SHELL": sh}, False)[0]) for sh in
           ("/bin/bash", "/usr/bin/fish", "/bin/tcsh")}
    assert got["/bin/bash"] == "in ~/.bashrc: export 'CUDA_HOME=/opt/工具 包/it'\\''s cuda-12.6'"
    assert got["/usr/bin/fish"] == "in ~/.config/fish/config.fish: set -gx CUDA_HOME '/opt/工具 包/it\\'s cuda-12.6'"
    assert got["/bin/tcsh"] == "in ~/.tcshrc: setenv CUDA_HOME '/opt/工具 包/it'\\''s cuda-12.6'"
