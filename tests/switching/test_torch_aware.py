"""`cudaswitch use auto`: the toolkit the environment's torch builds extensions with.

torch is real: the CPU torch 2.13.0 environment, and the identity files (torch/version.py, dist-info) of the real
PyPI CUDA wheels torch 2.14.1 (+cu130) and 2.15.0 (+cu132). Toolkits are real trees: CUDA 13.0 assembled by
`install-toolkit` from NVIDIA's wheels, CUDA 12.9 and 11.8 from the wheels tests/cudatrees.py uses.
"""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "fake_torch"))

import cudatrees  # noqa: E402
from conftest import make_env, one_line_error, run_cli  # noqa: E402

from cudaswitch.discovery.torchenv import torch_installs  # noqa: E402
from cudaswitch.core.system import System  # noqa: E402
from cudaswitch.discovery.toolkits import discover  # noqa: E402
from cudaswitch.switching.torch_aware import pick  # noqa: E402


@pytest.fixture(scope="module")
def fs(tmp_path_factory, toolkit_13_0):
    """A machine (file-system root) with /usr/local/cuda-11.8 (no nvcc), cuda-12.9 and cuda-13.0."""
    root = tmp_path_factory.mktemp("fs")
    local = root / "usr" / "local"
    cudatrees.cuda_11_8(local / "cuda-11.8")
    cudatrees.cuda_12_9(local / "cuda-12.9")
    cudatrees._copytree(toolkit_13_0, local / "cuda-13.0")  # hard links: the same real files
    return root


def toolkits(fs, *keep):
    found = discover(System(os="linux", environ={"PATH": "/usr/bin"}, root=fs)).toolkits
    return [t for t in found if any(t.root.endswith(k) for k in keep)] if keep else found


def test_torch_build_is_read_from_torch_files_without_importing(cu130_env):
    info = torch_installs(str(cu130_env))
    # the PyPI dist-info says only '2.14.1'; torch/version.py knows the CUDA build
    assert info["version"] == "2.14.1" and info["build_version"] == "2.14.1+cu130"
    assert info["cuda"] == "13.0" and info["build_cuda"] == "13.0"
    assert info["cudnn"] == "9.24.0.43" and "Requires-Dist" in info["cudnn_source"]
    assert info["dist_infos"] and info["conda"] == []  # the keys other commands use stay


def test_exact_major_minor_is_picked(fs, cu130_env):
    p = pick(torch_installs(str(cu130_env)), toolkits(fs), "env")
    assert p.ok and p.toolkit["version"] == "13.0.88" and p.toolkit["root"] == "/usr/local/cuda-13.0"
    assert "torch 2.14.1+cu130 was built with CUDA 13.0" in p.reason and not p.notes and p.fix is None
    assert any("12.9" in c and "major 12" in c for c in p.considered)
    assert any("11.8" in c and "no nvcc" in c for c in p.considered)


def test_same_major_other_minor_is_picked_with_the_cpp_extension_note(fs, cu132_env):
    p = pick(torch_installs(str(cu132_env)), toolkits(fs), "env")
    assert p.ok and p.toolkit["version"] == "13.0.88"
    assert p.torch == "2.15.0+cu132" and p.torch_cuda == "13.2"
    assert len(p.notes) == 1 and "cpp_extension warns about the minor version difference" in p.notes[0]
    assert p.fix == "cudaswitch install-toolkit 13.2"


def test_never_another_major_names_the_install_command(fs, cu130_env):
    p = pick(torch_installs(str(cu130_env)), toolkits(fs, "cuda-11.8", "cuda-12.9"), "env")
    assert not p.ok and p.toolkit is None
    assert "no installed toolkit with nvcc has CUDA 13.x" in p.reason and "12.9.1" in p.reason
    assert p.fix == "cudaswitch install-toolkit 13.0"


def test_no_torch(fs, tmp_path):
    make_env(tmp_path)
    p = pick(torch_installs(str(tmp_path)), toolkits(fs), "environment x")
    assert not p.ok and p.reason.startswith("no torch in environment x") and "cudaswitch recommend" in p.fix


def test_cpu_build_says_so_through_the_cli(torch_env, clean_env):
    r = run_cli(["use", "auto", "-p", str(torch_env)], env=clean_env)
    line = one_line_error(r, 1)
    assert r.stdout == ""
    assert "torch 2.13.0+cpu" in line and "is a CPU build" in line and "cudaswitch recommend" in line
    assert not (torch_env / "etc" / "conda" / "activate.d" / "cudaswitch.sh").exists()


def test_cli_json_and_dry_run_write_nothing(fs, cu130_env, clean_env):
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux", PATH="/usr/bin:/bin")
    r = run_cli(["use", "auto", "--json", "-p", str(cu130_env)], env=env)
    assert r.returncode == 0, r.stderr
    auto = json.loads(r.stdout)["auto"]
    assert auto["ok"] and auto["toolkit"]["version"] == "13.0.88" and auto["torch_cuda"] == "13.0"
    r = run_cli(["use", "auto", "--dry-run", "-p", str(cu130_env)], env=env)
    assert r.returncode == 0, r.stderr
    assert "auto: torch 2.14.1+cu130 was built with CUDA 13.0; CUDA 13.0.88 matches it." in r.stdout
    assert "Would make environment cu130" in r.stdout and "nothing written" in r.stdout
    assert not (cu130_env / "etc").exists()


def test_cli_switches_to_the_pick(fs, cu132_env, clean_env):
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux", PATH="/usr/bin:/bin")
    r = run_cli(["use", "auto", "--no-smoke", "-p", str(cu132_env)], env=env)
    assert r.returncode == 0, r.stderr
    assert "note: torch was built with CUDA 13.2, this toolkit is 13.0" in r.stdout
    assert "for an exact match: cudaswitch install-toolkit 13.2" in r.stdout
    assert "now uses CUDA 13.0.88 (/usr/local/cuda-13.0)" in r.stdout
    assert (cu132_env / "etc" / "conda" / "activate.d" / "cudaswitch.sh").exists()
    st = run_cli(["status", "--json"], env=dict(env, CONDA_PREFIX=str(cu132_env)))
    state = json.loads(st.stdout)["env"]["state"]
    assert state["selector"] == "auto" and state["version"] == "13.0.88"


def test_cli_no_matching_major_exits_1_with_the_command(fs, tmp_path, cu130_env, clean_env):
    only12 = tmp_path / "fs12"
    cudatrees.cuda_12_9(only12 / "usr" / "local" / "cuda-12.9")
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(only12), CUDASWITCH_OS="linux", PATH="/usr/bin:/bin")
    r = run_cli(["use", "auto", "-p", str(cu130_env)], env=env)
    assert r.returncode == 1
    assert r.stderr.strip().endswith("; cudaswitch install-toolkit 13.0")
    assert "Traceback" not in r.stderr


def _cu121_env(prefix: Path) -> Path:
    """torch 2.5.1+cu121 from download.pytorch.org, by the two files `use auto` reads: torch/version.py as torch's
    build writes it, and the dist-info folder its wheel unpacks to (that index names the build in the folder)."""
    site = prefix / "lib" / "python3.11" / "site-packages"
    (site / "torch").mkdir(parents=True)
    make_env(prefix)
    (site / "torch" / "version.py").write_text(
        "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
        "__version__ = '2.5.1+cu121'\ndebug = False\ncuda: Optional[str] = '12.1'\n"
        "git_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'\nhip: Optional[str] = None\n")
    info = site / "torch-2.5.1+cu121.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+cu121\n")
    (info / "INSTALLER").write_text("pip\n")
    return prefix


@pytest.fixture(scope="module")
def fs12(tmp_path_factory):
    """/usr/local/cuda-12.1 and cuda-12.9: one CUDA major, two minors. The 12.1 tree is the 12.9 wheel files with
    12.1.1's version.json (the test cache has no 12.1 wheel; discovery takes the version from version.json)."""
    root = tmp_path_factory.mktemp("fs12")
    local = root / "usr" / "local"
    cudatrees.cuda_12_9(local / "cuda-12.1", {"cuda": {"name": "CUDA SDK", "version": "12.1.1"},
                                              "cuda_nvcc": {"name": "CUDA NVCC", "version": "12.1.105"}})
    cudatrees.cuda_12_9(local / "cuda-12.9")
    return root


def test_the_exact_minor_wins_over_a_newer_one_of_the_same_major(fs12, tmp_path, clean_env):
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(fs12), CUDASWITCH_OS="linux", PATH="/usr/bin:/bin")
    r = run_cli(["use", "auto", "--json", "-p", str(_cu121_env(tmp_path / "cu121"))], env=env)
    auto = json.loads(r.stdout)["auto"]
    assert auto["ok"] and auto["toolkit"]["version"] == "12.1.1", auto
    assert auto["considered"] == ["12.1.1 (/usr/local/cuda-12.1): chosen",
                                  "12.9.1 (/usr/local/cuda-12.9): CUDA 12.9, not torch's 12.1; an exact match is "
                                  "installed"]


def test_a_tie_is_shown_with_the_rule_that_broke_it(fs, tmp_path, cu130_env, clean_env, toolkit_13_0):
    """Two CUDA 13.0.88 (/usr/local's and /opt's): the human output and --json name both, the pick and why; a
    toolkit the environment already uses wins the tie."""
    twin = tmp_path / "fs2"
    cudatrees._copytree(fs, twin)
    cudatrees._copytree(toolkit_13_0, twin / "opt" / "cuda-13.0")
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(twin), CUDASWITCH_OS="linux", PATH="/usr/bin:/bin")
    r = run_cli(["use", "auto", "--dry-run", "-p", str(cu130_env)], env=env)
    assert r.returncode == 0, r.stderr
    rule = "/opt/cuda-13.0 is chosen because its folder comes first in the order 'cudaswitch list' shows"
    assert f"  note: tie: 2 toolkits are CUDA 13.0.88; {rule}" in r.stdout, r.stdout
    assert "  considered: 13.0.88 (/opt/cuda-13.0): chosen" in r.stdout
    assert f"  considered: 13.0.88 (/usr/local/cuda-13.0): same version, not chosen: {rule}" in r.stdout
    assert "  considered: 12.9.1 (/usr/local/cuda-12.9): CUDA major 12 != torch's 13" in r.stdout
    assert "use CUDA 13.0.88 (/opt/cuda-13.0); nothing written" in r.stdout
    zh = run_cli(["use", "auto", "--dry-run", "-p", str(cu130_env)], env=dict(env, CUDASWITCH_LANG="zh_CN"))
    assert ("  注意：并列：2 个工具包都是 CUDA 13.0.88；选中 /opt/cuda-13.0，因为在 'cudaswitch list' 的排列顺序里它的"
            "文件夹排在最前") in zh.stdout, zh.stdout
    assert "  已考虑：13.0.88 (/usr/local/cuda-13.0)：版本相同，未选中：选中 /opt/cuda-13.0，" in zh.stdout
    # the environment already uses the other one: it stays
    assert run_cli(["use", "/usr/local/cuda-13.0", "--no-smoke", "-p", str(cu130_env)], env).returncode == 0
    try:
        r = run_cli(["use", "auto", "--json", "-p", str(cu130_env)], env=env)
        auto = json.loads(r.stdout)["auto"]
        assert auto["toolkit"]["root"] == "/usr/local/cuda-13.0"
        assert ("tie: 2 toolkits are CUDA 13.0.88; /usr/local/cuda-13.0 is chosen because the environment already "
                "uses it") in auto["notes"]
        assert len(auto["considered"]) == 4 and "13.0.88 (/usr/local/cuda-13.0): chosen" in auto["considered"]
    finally:
        run_cli(["off", "-p", str(cu130_env)], env)
