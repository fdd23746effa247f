"""`cudaswitch envs`: every environment conda lists, with the toolkit cudaswitch chose (and whether it is still
there), torch and the CUDA/cuDNN it was built with (real torch and NVIDIA wheel files), pip CUDA wheels, and the
last smoke result, through the real CLI."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "fake_torch"))

import cudatrees  # noqa: E402
import envs as torch_envs  # noqa: E402
import nvidia_wheels  # noqa: E402
from conftest import make_env, run_cli  # noqa: E402


def _env(path: Path) -> Path:
    make_env(path)
    (path / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    return path


def _site(prefix: Path) -> Path:
    return prefix / "lib" / "python3.11" / "site-packages"


def _real_torch_files(prefix: Path, venv: Path) -> None:
    """torch's dist-info and version.py, copied from the real CPU wheel install `venv` (nothing importable)."""
    src = torch_envs.site_packages(venv)
    info = next(src.glob("torch-*.dist-info"))
    shutil.copytree(info, _site(prefix) / info.name)
    (_site(prefix) / "torch").mkdir()
    shutil.copy(src / "torch" / "version.py", _site(prefix) / "torch" / "version.py")


def _wheel_dist_info(prefix: Path, spec: str) -> None:
    unpacked = nvidia_wheels.extracted(spec)
    info = next(unpacked.glob("*.dist-info"))
    shutil.copytree(info, _site(prefix) / info.name)


@pytest.fixture
def lab(tmp_path, clean_env, torch_env):
    envs_dir = tmp_path / "envs"
    trees = tmp_path / "cuda"
    cudatrees.cuda_11_8(trees / "cuda-11.8")
    cudatrees.cuda_12_9(trees / "cuda-12.9")
    cpu = _env(envs_dir / "cpu")
    _real_torch_files(cpu, torch_env)
    pipcu = _env(envs_dir / "pipcu")
    _wheel_dist_info(pipcu, "nvidia-cudnn-cu12==9.10.2.21")
    _wheel_dist_info(pipcu, "nvidia-cuda-runtime-cu12==12.9.79")
    # a cu12 torch build: the same version.py layout as the real wheel, with the CUDA build's values
    (_site(pipcu) / "torch").mkdir()
    (_site(pipcu) / "torch" / "version.py").write_text(
        "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
        "__version__ = '2.8.0+cu129'\ndebug = False\ncuda: Optional[str] = '12.9'\nhip: Optional[str] = None\n")
    (_site(pipcu) / "torch-2.8.0+cu129.dist-info").mkdir()
    (_site(pipcu) / "torch-2.8.0+cu129.dist-info" / "INSTALLER").write_text("pip\n")
    old = _env(envs_dir / "old")
    _env(envs_dir / "plain")
    (envs_dir / "not-an-env").mkdir()
    env = dict(clean_env, HOME=str(tmp_path / "home"), CONDA_ENVS_DIRS=str(envs_dir),
               CUDASWITCH_SEARCH_PATH=str(trees))
    for prefix, sel in ((cpu, "12.9"), (pipcu, "12.9"), (old, "11.8")):
        r = run_cli(["use", sel, "-p", str(prefix), "--no-smoke"], env)
        assert r.returncode == 0, r.stderr
    shutil.move(str(trees / "cuda-11.8"), str(tmp_path / "removed-11.8"))  # the toolkit `old` uses is gone
    return envs_dir, trees, env


def test_envs_json_has_every_env_and_its_facts(lab):
    envs_dir, trees, env = lab
    r = run_cli(["envs", "--json"], env)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["schema"] == 1
    from cudaswitch.discovery.envs_report import ENVS_SCHEMA_KEYS

    assert all(tuple(e) == ENVS_SCHEMA_KEYS for e in data["envs"])  # the keys the guide documents (docs/guide/conda.md), in order
    # run as root, conda (and so cudaswitch) also lists other users' recorded environments: look at ours
    by = {e["name"]: e for e in data["envs"] if e["prefix"].startswith(str(envs_dir))}
    assert sorted(by) == ["cpu", "old", "pipcu", "plain"]  # not-an-env has no conda-meta/history
    assert by["cpu"]["prefix"] == str(envs_dir / "cpu")
    assert by["cpu"]["cuda"]["version"] == "12.9.1" and by["cpu"]["cuda"]["exists"] is True
    assert by["cpu"]["torch"] == {"version": "2.13.0+cpu", "cuda": None, "cudnn": None, "source": "pip",
                                  "python": "3.11"}
    assert by["pipcu"]["torch"]["cuda"] == "12.9" and by["pipcu"]["torch"]["cudnn"] == "9.10.2.21"
    assert by["pipcu"]["nvidia_wheels"] == ["nvidia-cuda-runtime-cu12", "nvidia-cudnn-cu12"]
    assert by["old"]["cuda"]["version"] == "11.8.89" and by["old"]["cuda"]["exists"] is False
    assert by["plain"]["cuda"] is None and by["plain"]["torch"] is None and by["plain"]["smoke"] is None
    assert data["conda"]["envs_dirs"][0] == str(envs_dir)


def test_envs_table_marks_the_missing_toolkit_and_the_active_env(lab):
    envs_dir, trees, env = lab
    r = run_cli(["envs"], dict(env, CONDA_PREFIX=str(envs_dir / "pipcu")))
    assert r.returncode == 0, r.stderr
    lines = {line.lstrip("* ").split()[0]: line for line in r.stdout.splitlines()[1:]}
    assert "11.8.89 (missing!)" in lines["old"]
    assert lines["pipcu"].startswith("*") and "2.8.0+cu129 (CUDA 12.9, cuDNN 9.10.2.21)" in lines["pipcu"]
    assert "2 nvidia-*" in lines["pipcu"]
    assert "2.13.0+cpu (CUDA none)" in lines["cpu"]


def test_a_broken_state_file_is_a_warning_not_a_failure(lab):
    envs_dir, trees, env = lab
    (envs_dir / "plain" / "etc" / "cudaswitch").mkdir(parents=True)
    (envs_dir / "plain" / "etc" / "cudaswitch" / "state.yaml").write_text("selector: [unclosed\n")
    r = run_cli(["envs"], env)
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert "warning:" in r.stderr and "state.yaml" in r.stderr
    assert "cpu" in r.stdout


def _record(env, prefix):
    return next(e for e in json.loads(run_cli(["envs", "--json"], env).stdout)["envs"] if e["prefix"] == str(prefix))


def test_smoke_result_is_kept_and_shown(tmp_path, clean_env, torch_env):
    cudatrees.cuda_12_9(tmp_path / "cuda" / "cuda-12.9")
    prefix = torch_envs.real_torch_env(tmp_path / "envs", "t")
    env = dict(clean_env, HOME=str(tmp_path / "home"), CONDA_ENVS_DIRS=str(tmp_path / "envs"),
               CUDASWITCH_SEARCH_PATH=str(tmp_path / "cuda"))
    r = run_cli(["use", "12.9", "-n", "t"], env, timeout=300)  # CPU torch, no --cpu-ok: the smoke test fails
    assert r.returncode == 1, r.stdout + r.stderr
    rec = _record(env, prefix)
    assert rec["smoke"]["status"] == "fail" and rec["smoke"]["code"] == "CPU_ONLY_BUILD"
    r = run_cli(["smoke", "-n", "t", "--cpu-ok"], env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    rec = _record(env, prefix)
    assert rec["smoke"]["status"] == "pass" and rec["smoke"]["time"][:4].isdigit()
