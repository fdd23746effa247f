"""Discovery on NVIDIA's real Windows files under CUDASWITCH_OS=windows (tests/winfiles.py builds the drives):
toolkit versions from the binaries' version resources, cuDNN 8.9 in the toolkits, pip-wheel environments, and
`list` / `status` proven to start no process."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import cudatrees
import nvidia_wheels as nw
import winfiles as wf
from conftest import require_tool, run_cli
from cudaswitch.core.system import System
from cudaswitch.discovery.toolkits import discover


@pytest.fixture(scope="module")
def drive(tmp_path_factory):
    return wf.real_drive(tmp_path_factory.mktemp("drive"))


@pytest.fixture(scope="module")
def drive8(tmp_path_factory):
    return wf.real_drive_cudnn_8(tmp_path_factory.mktemp("drive8"))


def test_versions_come_from_the_binaries_without_a_process(drive):
    found = discover(wf.win_system(drive))
    got = {t.root.rsplit("\\", 1)[-1]: (t.version, t.version_source) for t in found.toolkits}
    assert got == {"v11.8": ("11.8.89", "pe-resource"), "v12.9": ("12.9.79", "pe-resource"),
                   "v13.0": ("13.0.88", "pe-resource")}
    v13 = next(t for t in found.toolkits if t.cuda.major == 13)
    assert v13.nvcc == r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v13.0\bin\nvcc.exe"
    assert found.warnings == []

def test_nvcc_exe_without_version_is_listed_not_dropped(tmp_path):
    """An nvcc.exe that names no version (here: NVIDIA's real __nvcc_device_query.exe in its place) and no other
    version source: listed with an unknown version and a warning, and never run (it cannot run on Linux)."""
    root = tmp_path.joinpath("C", *cudatrees.WIN_TOOLKIT, "v13.0")
    (root / "bin").mkdir(parents=True)
    shutil.copy(nw.extracted(nw.WIN_CUDA_NVCC_13, nw.WIN) / "nvidia/cu13/bin/__nvcc_device_query.exe",
                root / "bin" / "nvcc.exe")
    found = discover(wf.win_system(tmp_path))
    (tk,) = found.toolkits
    assert (tk.version, tk.version_source, tk.flags) == ("unknown", "none", ["unknown-version"])
    assert any("version unknown" in w and "v13.0" in w for w in found.warnings)
    out = run_cli(["list"], env=dict(os.environ, CUDASWITCH_FS_ROOT=str(tmp_path), CUDASWITCH_OS="windows",
                                     CUDASWITCH_CONFIG=str(tmp_path / "none.yaml"), PATH="/usr/bin:/bin"))
    assert out.returncode == 0 and "Traceback" not in out.stderr
    row = next(line for line in out.stdout.splitlines() if "v13.0" in line)
    assert "unknown" in row and "unknown-version" in row

def test_version_json_with_a_byte_order_mark(tmp_path):
    root = cudatrees.windows_real_toolkit(tmp_path, "12.9")
    (root / "version.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(cudatrees.VERSION_JSON_12_9).encode())
    (tk,) = discover(wf.win_system(tmp_path)).toolkits
    assert (tk.version, tk.version_source) == ("12.9.1", "version.json")

def test_pip_wheel_env_shows_the_cudnn_wheel_version(tmp_path):
    """Windows env with nvidia-cuda-runtime-cu11 and nvidia-cudnn-cu11 (real win_amd64 wheels) in site-packages."""
    site = tmp_path / "C" / "envs" / "torch" / "Lib" / "site-packages"
    for spec in (nw.WIN_CUDA_RUNTIME_CU11, nw.WIN_CUDNN_9):
        cudatrees._copytree(nw.extracted(spec, nw.WIN), site)
    found = discover(wf.win_system(tmp_path, python_paths=[r"C:\envs\torch\Lib\site-packages"]))
    (tk,) = [t for t in found.toolkits if t.kind == "pip-wheels"]
    assert (tk.version, tk.cudnn) == ("11.8.89", "9.10.2.21")

def test_pip_wheel_env_linux_cudnn_column(tmp_path):
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    for spec in (nw.CUDA_RUNTIME_CU12, nw.CUDNN_CU12):
        cudatrees._copytree(nw.extracted(spec), site)
    env = {"PATH": "/usr/bin:/bin", "CUDASWITCH_CONFIG": str(tmp_path / "none.yaml")}
    found = discover(System(os="linux", environ=env, run=wf.no_process, python_paths=[str(site)]))
    (tk,) = [t for t in found.toolkits if t.kind == "pip-wheels" and t.root.startswith(str(tmp_path))]
    assert (tk.version, tk.cudnn) == ("12.9.79", "9.10.2.21")

def test_toolkit_cudnn_8_versions_without_a_process(drive8):
    found = discover(wf.win_system(drive8))  # run=no_process: any spawn fails the test
    got = {t.root.rsplit("\\", 1)[-1]: (t.version, t.cudnn) for t in found.toolkits}
    assert got == {"v11.8": ("11.8.89", "8.9.5"), "v12.9": ("12.9.79", "8.9.7"), "v13.0": ("13.0.88", None)}
    assert [c.version for c in found.cudnn_installs] == ["9.10.2"] and found.warnings == []

def test_toolkit_with_only_the_cudnn_dll_copied_in(tmp_path):
    """Many setup guides say: copy cudnn64_8.dll into CUDA's bin. No header then: the version comes from the real
    DLL's version resource, and nothing is run."""
    wf.cudnn_8_into_toolkit(cudatrees.windows_real_toolkit(tmp_path, "11.8"), nw.WIN_CUDNN_8_CU11, parts=("bin",))
    (tk,) = discover(wf.win_system(tmp_path)).toolkits
    assert (tk.version, tk.cudnn) == ("11.8.89", "8.9.5")

def test_list_and_status_spawn_no_process_on_the_real_windows_files(drive8, clean_env, tmp_path):
    """The whole CLI, not only discover(): `list --json` and `status --json` on the real Windows files (three
    toolkits read from their PE resources, cuDNN 8 from headers, the installer's cuDNN 9) start no process: strace
    sees one execve, Python itself, and no fork or non-thread clone."""
    strace = require_tool("strace")
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(drive8), CUDASWITCH_OS="windows",
               PATH=r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.9\bin;C:\Windows\System32")
    env["PYTHONPATH"] = str(wf.HERE.parent)
    import seams

    for args in (["list", "--json"], ["status", "--json"]):
        log = tmp_path / f"trace-{args[0]}"
        r = subprocess.run([strace, "-f", "-e", "trace=execve,clone,clone3,fork,vfork", "-o", str(log),
                            sys.executable, seams.ENTRY, *args], env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        rec = json.loads(r.stdout)
        calls = [ln for ln in log.read_text().splitlines() if re.search(r"\b(execve|clone3?|v?fork)\(", ln)
                 and "CLONE_THREAD" not in ln and "resumed>" not in ln]
        assert len(calls) == 1 and "execve(" in calls[0], calls
        if args[0] == "list":
            assert sorted((t["version"], t["cudnn"]) for t in rec["toolkits"]) == [
                ("11.8.89", "8.9.5"), ("12.9.79", "8.9.7"), ("13.0.88", None)]
        else:
            assert rec["cudnn_dll_on_path"] == env["PATH"].split(";")[0] + "\\cudnn64_8.dll"
