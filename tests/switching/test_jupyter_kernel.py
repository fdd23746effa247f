"""A real Jupyter kernel of a switched environment, started by jupyter_client's KernelManager from a process where
the environment is not activated (a JupyterLab running in base does exactly this): ipykernel runs under the
environment's own Python and sees the switch through the Python startup file; a kernel.json `env` entry that sets
CUDA_HOME wins over it, and its `${CUDA_HOME}` stays literal when the server lacks the variable (jupyter_client's
safe_substitute); `doctor` lists the kernelspecs that start the environment and flags that entry.

The environment is a conda-style prefix holding this interpreter (tests/fake_torch/envs.py python_prefix); ipykernel
and its dependencies are this test run's own (the `test` extra), made importable there by a path line appended to
its site-packages, the way the suite links the cached torch (link_real_torch): installing ipykernel into a conda
prefix would need a package index for the prefix's own pip, and the kernel would run the same code."""

from __future__ import annotations

import json
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fake_torch"))
import envs  # noqa: E402
from startup_probe import SHOW as CODE, outside  # noqa: E402

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

@pytest.fixture
def cli_env(clean_env, real_trees):
    return dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))


@pytest.fixture
def kernel_env(tmp_path):
    prefix = envs.python_prefix(tmp_path / "envs", "nb")
    (envs.site_packages(prefix) / "zz_test_jupyter.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return prefix


def _spec(data_dir: Path, name: str, python: Path, env=None) -> Path:
    folder = data_dir / "kernels" / name
    folder.mkdir(parents=True)
    spec = {"argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": name,
            "language": "python"}
    if env is not None:
        spec["env"] = env
    (folder / "kernel.json").write_text(json.dumps(spec))
    return folder / "kernel.json"


def _server_env(tmp_path):
    """The environment of a Jupyter server running elsewhere: no conda environment active, the system CUDA first."""
    return outside({"JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")})


def _run_in_kernel(data_dir: Path, name: str, server_env: dict) -> dict:
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    ksm = KernelSpecManager(kernel_dirs=[str(data_dir / "kernels")])
    km = KernelManager(kernel_name=name, kernel_spec_manager=ksm,
                       connection_file=str(Path(server_env["JUPYTER_RUNTIME_DIR"]) / f"kernel-{name}.json"))
    Path(server_env["JUPYTER_RUNTIME_DIR"]).mkdir(exist_ok=True)
    km.start_kernel(env=server_env)
    kc = km.client()
    kc.start_channels()
    out = []
    try:
        kc.wait_for_ready(timeout=120)
        reply = kc.execute_interactive(
            CODE, timeout=120,
            output_hook=lambda msg: out.append(msg["content"].get("text", "")) if msg["msg_type"] == "stream" else None)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return json.loads("".join(out))


def test_a_kernel_started_elsewhere_gets_the_switch(cli_env, kernel_env, real_trees, tmp_path):
    tk = real_trees / "cuda-12.9"
    assert run_cli(["use", "12.9", "-p", kernel_env, "--no-smoke"], cli_env).returncode == 0
    data = tmp_path / "jupyter-data"
    _spec(data, "nb", kernel_env / "bin" / "python")
    got = _run_in_kernel(data, "nb", _server_env(tmp_path))
    assert got["exe"].startswith(str(kernel_env))
    assert got["CUDA_HOME"] == str(tk)
    assert got["nvcc"] == str(tk / "bin" / "nvcc") and got["ptxas"] == str(tk / "bin" / "ptxas")
    assert got["release"] == ["Cuda compilation tools, release 12.9, V12.9.86"]
    assert got["cudaswitch_imported"] is False
    # doctor, given the same user data folder, lists the kernel as one that gets the switch
    doc = run_cli(["doctor", "-p", kernel_env, "--json"], dict(cli_env, JUPYTER_DATA_DIR=str(data)))
    found = {f["code"]: f for f in json.loads(doc.stdout)["findings"]}
    assert "through the Python startup file" in found["JUPYTER_KERNELS"]["cause"]
    assert str(data / "kernels" / "nb" / "kernel.json") in found["JUPYTER_KERNELS"]["cause"]


def test_without_the_startup_file_the_kernel_misses_the_switch(cli_env, kernel_env, real_trees, tmp_path):
    assert run_cli(["use", "12.9", "-p", kernel_env, "--no-smoke", "--no-python-hook"], cli_env).returncode == 0
    data = tmp_path / "jupyter-data"
    _spec(data, "nb", kernel_env / "bin" / "python")
    got = _run_in_kernel(data, "nb", _server_env(tmp_path))
    assert got["CUDA_HOME"] is None and got["nvcc"] != str(real_trees / "cuda-12.9" / "bin" / "nvcc")
    doc = run_cli(["doctor", "-p", kernel_env, "--json"], dict(cli_env, JUPYTER_DATA_DIR=str(data)))
    codes = {f["code"] for f in json.loads(doc.stdout)["findings"]}
    assert "KERNEL_WITHOUT_SWITCH" in codes


def test_a_kernelspec_env_entry_wins_and_stays_literal(cli_env, kernel_env, real_trees, tmp_path):
    """`ipykernel install --env CUDA_HOME '${CUDA_HOME}'`-style spec, started by a server without CUDA_HOME."""
    assert run_cli(["use", "12.9", "-p", kernel_env, "--no-smoke"], cli_env).returncode == 0
    data = tmp_path / "jupyter-data"
    spec = _spec(data, "pinned", kernel_env / "bin" / "python", env={"CUDA_HOME": "${CUDA_HOME}"})
    got = _run_in_kernel(data, "pinned", _server_env(tmp_path))
    assert got["CUDA_HOME"] == "${CUDA_HOME}"  # jupyter_client's safe_substitute left it as written
    assert got["nvcc"] != str(real_trees / "cuda-12.9" / "bin" / "nvcc")  # the startup file stood back
    doc = run_cli(["doctor", "-p", kernel_env, "--json"], dict(cli_env, JUPYTER_DATA_DIR=str(data)))
    flagged = [f for f in json.loads(doc.stdout)["findings"] if f["code"] == "KERNELSPEC_SETS_CUDA"]
    assert len(flagged) == 1 and str(spec) in flagged[0]["cause"]
    assert "leaves ${VAR} literally in place" in flagged[0]["cause"] and "CUDA_HOME" in flagged[0]["fix"]
    # it does not get the switch, so it is not listed among the kernels that do
    listed = [f for f in json.loads(doc.stdout)["findings"] if f["code"] == "JUPYTER_KERNELS"]
    assert all(str(spec) not in f["cause"] for f in listed), listed


def test_a_kernel_started_from_a_shell_with_another_switched_environment_gets_its_own(cli_env, kernel_env,
                                                                                       real_trees, tmp_path):
    """Jupyter started in a shell where environment `other` (switched to 11.8) is active: its hook's records and
    CUDA_HOME reach the kernel of `nb` (switched to 12.9), whose startup file yields only to its own records."""
    import subprocess

    from conftest import make_env, require_tool

    other = make_env(tmp_path / "envs" / "other")
    assert run_cli(["use", "11.8", "-p", other, "--no-smoke"], cli_env).returncode == 0
    assert run_cli(["use", "12.9", "-p", kernel_env, "--no-smoke"], cli_env).returncode == 0
    server = _server_env(tmp_path)
    # the real activate hook of `other`, run as conda runs it, gives the server its environment
    hook = other / "etc" / "conda" / "activate.d" / "cudaswitch.sh"
    r = subprocess.run([require_tool("bash"), "-c", '. "$1" && env -0', "bash", str(hook)], capture_output=True,
                       env=dict(server, CONDA_PREFIX=str(other)), check=True)
    server = dict(item.split("=", 1) for item in r.stdout.decode().split("\0") if "=" in item)
    old = real_trees / "cuda-11.8"
    assert server["CUDA_HOME"] == str(old) and server["_CUDASWITCH_ADDED_PATH"] == str(old / "bin")
    data = tmp_path / "jupyter-data"
    _spec(data, "nb", kernel_env / "bin" / "python")
    got = _run_in_kernel(data, "nb", server)
    tk = real_trees / "cuda-12.9"
    assert got["CUDA_HOME"] == str(tk) and got["CUDA_PATH"] == str(tk)
    assert got["nvcc"] == str(tk / "bin" / "nvcc")
    assert got["release"] == ["Cuda compilation tools, release 12.9, V12.9.86"]
    assert str(old / "bin") not in got["PATH"].split(":")  # the other environment's entry is taken out


def test_kernelspecs_of_other_environments_are_not_listed(tmp_path):
    from cudaswitch.discovery import kernelspecs

    data = tmp_path / "share" / "jupyter"
    prefix = tmp_path / "envs" / "nb"
    (prefix / "bin").mkdir(parents=True)
    _spec(data, "nb", prefix / "bin" / "python")
    _spec(data, "other", tmp_path / "envs" / "other" / "bin" / "python")
    run = data / "kernels" / "via-conda-run"
    run.mkdir(parents=True)
    (run / "kernel.json").write_text(json.dumps({"argv": ["conda", "run", "-p", str(prefix), "python", "-m",
                                                          "ipykernel_launcher", "-f", "{connection_file}"]}))
    (data / "kernels" / "broken").mkdir()
    (data / "kernels" / "broken" / "kernel.json").write_text("{")
    names = sorted(s.name for s in kernelspecs.for_env([str(tmp_path / "nothing"), str(data)], str(prefix), "nb"))
    assert names == ["nb", "via-conda-run"]
    dirs = kernelspecs.data_dirs({"HOME": "/home/u", "JUPYTER_PATH": "/extra"}, False, ["/opt/conda"])
    assert dirs == ["/extra", "/home/u/.local/share/jupyter", "/opt/conda/share/jupyter", "/usr/local/share/jupyter",
                    "/usr/share/jupyter"]
    assert kernelspecs.data_dirs({"APPDATA": r"C:\Users\u\AppData\Roaming", "PROGRAMDATA": r"C:\ProgramData"},
                                 True)[-1].endswith("jupyter")
