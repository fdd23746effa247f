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
