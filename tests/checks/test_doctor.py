"""`cudaswitch doctor`: machine and shell checks against toolkit trees from the foundation fixtures, an injectable
file-system root (CUDASWITCH_FS_ROOT) for /etc/ld.so.conf.d, /usr/lib/wsl/lib and C:\\Windows\\System32, and the
driver's maximum CUDA through CONDA_OVERRIDE_CUDA."""

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "fake_torch"))

import cudatrees  # noqa: E402
from conftest import make_env, one_line_error, run_cli  # noqa: E402

from cudaswitch.checks import doctor  # noqa: E402
from cudaswitch.core.system import System  # noqa: E402


@pytest.fixture(scope="module")
def fsroot(tmp_path_factory):
    """A `/` holding /usr/local/cuda-11.8 and /usr/local/cuda-12.9 (real NVIDIA wheel files)."""
    root = tmp_path_factory.mktemp("root")
    cudatrees.cuda_11_8(root / "usr" / "local" / "cuda-11.8")
    cudatrees.cuda_12_9(root / "usr" / "local" / "cuda-12.9")
    return root


def run_doctor_cli(env_vars, root, *args):
    env_vars = dict(env_vars)
    env_vars["CUDASWITCH_FS_ROOT"] = str(root)
    env_vars.setdefault("CONDA_OVERRIDE_CUDA", "12.9")
    r = run_cli(["doctor", "--json", *args], env=env_vars)
    assert "Traceback" not in r.stderr
    rec = json.loads(r.stdout)
    return r, rec, {f["code"]: f for f in rec["findings"]}


def codes_of(rec):
    return [f["code"] for f in rec["findings"]]


def test_clean_machine_passes(fsroot, clean_env):
    r, rec, codes = run_doctor_cli(clean_env, fsroot)
    assert r.returncode == 0 and rec["ok"]
    assert not [c for c in codes if c not in ("TORCH_DRIVER",)]


def test_several_cuda_bin_folders_on_path(fsroot, clean_env):
    clean_env["PATH"] = os.pathsep.join(["/usr/local/cuda-12.9/bin", "/usr/local/cuda-11.8/bin", clean_env["PATH"]])
    r, rec, codes = run_doctor_cli(clean_env, fsroot)
    f = codes["MULTIPLE_CUDA_ON_PATH"]
    assert f["severity"] == "warning" and "CUDA 12.9.1" in f["cause"] and "CUDA 11.8" in f["cause"]
    assert r.returncode == 0  # a warning


def test_cuda_home_cuda_path_and_nvcc_disagree(fsroot, clean_env):
    clean_env["CUDA_HOME"] = "/usr/local/cuda-11.8"
    clean_env["CUDA_PATH"] = "/usr/local/cuda-12.9"
    r, rec, codes = run_doctor_cli(clean_env, fsroot)
    f = codes["CUDA_VARS_DISAGREE"]
    assert "CUDA_HOME -> CUDA 11.8" in f["cause"] and "CUDA_PATH -> CUDA 12.9.1" in f["cause"]


def test_cuda_path_pointing_at_a_missing_folder_is_an_error(fsroot, clean_env):
    clean_env["CUDA_PATH"] = "/usr/local/cuda-12.1"
    r, rec, codes = run_doctor_cli(clean_env, fsroot)
    assert r.returncode == 1 and not rec["ok"]
    assert codes["CUDA_PATH_MISSING"]["severity"] == "error"
    assert "/usr/local/cuda-12.1" in codes["CUDA_PATH_MISSING"]["cause"]


def test_ld_so_conf_d_pinning(tmp_path, clean_env):
    root = tmp_path / "root"
    cudatrees.cuda_12_9(root / "usr" / "local" / "cuda-12.9")
    conf = root / "etc" / "ld.so.conf.d"
    conf.mkdir(parents=True)
    (conf / "988_cuda-12.conf").write_text("/usr/local/cuda-12.9/targets/x86_64-linux/lib\n")
    (conf / "libc.conf").write_text("# libc default configuration\n/usr/local/lib\n")
    r, rec, codes = run_doctor_cli(clean_env, root)
    f = codes["LDCONF_PINS_CUDA"]
    assert "988_cuda-12.conf" in f["cause"] and "CUDA 12.9.1" in f["cause"]
    assert "ldconfig" in f["fix"]
    assert [c for c in codes_of(rec) if c == "LDCONF_PINS_CUDA"] == ["LDCONF_PINS_CUDA"]  # libc.conf not reported
    assert "unless LD_LIBRARY_PATH or its own RPATH names another copy" in f["cause"]


def test_ld_so_conf_d_pinning_another_toolkit_says_when_the_cache_wins(tmp_path, clean_env, real_trees):
    """The message claims LD_LIBRARY_PATH is searched before the loader cache, and the cache is searched when the
    variable does not name the library: the real loader's LD_DEBUG=libs trace must show exactly that."""
    import subprocess

    from cudaswitch.discovery.environment import CondaEnv, SwitchState, write_state

    root = tmp_path / "root"
    cudatrees.cuda_12_9(root / "usr" / "local" / "cuda-12.9")
    cudatrees.cuda_11_8(root / "usr" / "local" / "cuda-11.8")
    conf = root / "etc" / "ld.so.conf.d"
    conf.mkdir(parents=True)
    (conf / "988_cuda-12.conf").write_text("/usr/local/cuda-12.9/targets/x86_64-linux/lib\n")
    prefix = make_env(tmp_path / "envs" / "e")
    write_state(CondaEnv(str(prefix), "e", False), SwitchState("11.8", "11.8.89", "/usr/local/cuda-11.8", "now", "0.1.0"))
    r, rec, codes = run_doctor_cli(clean_env, root, "-p", str(prefix))
    cause = codes["LDCONF_PINS_CUDA"]["cause"]
    assert "the loader cache wins over hooks" not in cause
    assert ("the hooks' LD_LIBRARY_PATH is searched before the cache, so it wins where it is set, but the cache wins "
            "in processes that do not get it") in cause, cause
    assert "when LD_LIBRARY_PATH is unset, for every library a program loads without an RPATH" in cause
    # the real loader: a library on LD_LIBRARY_PATH is taken from there before the cache is looked at ...
    lib = real_trees / "cuda-12.9" / "targets" / "x86_64-linux" / "lib"
    load = [sys.executable, "-c", "import ctypes; ctypes.CDLL('libcudart.so.12')"]
    trace = subprocess.run(load, env=dict(clean_env, LD_DEBUG="libs", LD_LIBRARY_PATH=str(lib)),
                           capture_output=True, text=True).stderr
    block = trace[trace.index("find library=libcudart.so.12"):].split("find library=")[1]  # its lookup alone
    assert "(LD_LIBRARY_PATH)" in block and f"trying file={lib}/libcudart.so.12" in block
    assert "search cache=/etc/ld.so.cache" not in block
    # ... and without the variable (the process did not get the hooks' environment) the cache is searched
    env = {k: v for k, v in clean_env.items() if k != "LD_LIBRARY_PATH"}
    trace = subprocess.run(load, env=dict(env, LD_DEBUG="libs"), capture_output=True, text=True).stderr
    block = trace[trace.index("find library=libcudart.so.12"):]
    assert "search cache=/etc/ld.so.cache" in block.split("find library=")[1]


def test_driver_below_the_toolkit_in_use(fsroot, clean_env):
    clean_env["CUDA_HOME"] = clean_env["CUDA_PATH"] = "/usr/local/cuda-12.9"
    clean_env["CONDA_OVERRIDE_CUDA"] = "11.8"
    r, rec, codes = run_doctor_cli(clean_env, fsroot)
    f = codes["DRIVER_BELOW_TOOLKIT"]
    assert f["severity"] == "error" and r.returncode == 1
    assert ">= 575.51.03" in f["fix"]  # CUDA 12.9 GA Linux minimum (cuda_driver.csv, sources.csv S40)
    clean_env["CONDA_OVERRIDE_CUDA"] = "12.4"
    r, rec, codes = run_doctor_cli(clean_env, fsroot)
    assert codes["DRIVER_BELOW_TOOLKIT"]["severity"] == "warning"  # same major: minor-version compatibility
    assert "minor-version" in codes["DRIVER_BELOW_TOOLKIT"]["cause"]


def test_no_driver_is_information(fsroot, clean_env):
    clean_env["CONDA_OVERRIDE_CUDA"] = ""
    r, rec, codes = run_doctor_cli(clean_env, fsroot)
    assert codes["NO_DRIVER"]["severity"] == "info" and r.returncode == 0


def test_wsl2(tmp_path, clean_env):
    root = tmp_path / "root"
    (root / "usr" / "lib" / "wsl" / "lib").mkdir(parents=True)
    (root / "usr" / "lib" / "wsl" / "lib" / "libcuda.so.1").write_bytes(b"\x7fELF")
    r, rec, codes = run_doctor_cli(clean_env, root)
    assert codes["WSL2"]["severity"] == "info"
    assert "WSL2_LINUX_LIBCUDA" not in codes
    linux = root / "usr" / "lib" / "x86_64-linux-gnu"
    linux.mkdir(parents=True)
    (linux / "libcuda.so.1").write_bytes(b"\x7fELF")
    r, rec, codes = run_doctor_cli(clean_env, root)
    assert codes["WSL2_LINUX_LIBCUDA"]["severity"] == "error" and r.returncode == 1


def test_windows_vc_runtime_missing_then_present(tmp_path, clean_env):
    root = tmp_path / "win"
    sys32 = root / "C" / "Windows" / "System32"
    sys32.mkdir(parents=True)
    clean_env["CUDASWITCH_OS"] = "windows"
    clean_env["SystemRoot"] = r"C:\Windows"
    r, rec, codes = run_doctor_cli(clean_env, root)
    f = codes["VCRUNTIME_MISSING"]
    assert "msvcp140.dll" in f["cause"] and "vcruntime140_1.dll" in f["cause"] and r.returncode == 1
    for n in ("msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"):
        (sys32 / n).write_bytes(b"MZ")
    r, rec, codes = run_doctor_cli(clean_env, root)
    assert "VCRUNTIME_MISSING" not in codes


def test_windows_prefix_with_spaces_and_non_ascii():
    system = System(os="windows", environ={}, root=Path("/nonexistent"))
    found = {f.code for f in doctor.windows_findings(system, "C:\\Users\\张三\\My Envs\\pt")}
    assert {"PREFIX_NON_ASCII", "PREFIX_HAS_SPACES"} <= found
    assert not {"PREFIX_NON_ASCII", "PREFIX_HAS_SPACES"} & {
        f.code for f in doctor.windows_findings(system, "C:\\envs\\pt")}


def _conda_env(tmp_path, name="env", python="3.11"):
    prefix = make_env(tmp_path / name, packages=[f"python-{python}.0-h1_0_cpython"])
    site = prefix / "lib" / f"python{python}" / "site-packages"
    site.mkdir(parents=True)
    return prefix, site


def _conda_torch_env(tmp_path, dist_info, installer):
    """An env whose conda-meta holds conda's pytorch 2.4.1 (CUDA 12.1) record and whose site-packages holds the
    `dist_info` folder with `installer` in its INSTALLER."""
    prefix, site = _conda_env(tmp_path)
    (prefix / "conda-meta" / "pytorch-2.4.1-py3.11_cuda12.1_cudnn9.1.0_0.json").write_text(json.dumps(
        {"name": "pytorch", "version": "2.4.1", "build": "py3.11_cuda12.1_cudnn9.1.0_0"}))
    (site / f"{dist_info}.dist-info").mkdir()
    (site / f"{dist_info}.dist-info" / "INSTALLER").write_text(installer + "\n")
    return prefix


def test_foreign_activate_d_hooks(tmp_path, fsroot, clean_env):
    prefix, _ = _conda_env(tmp_path)
    act = prefix / "etc" / "conda" / "activate.d"
    act.mkdir(parents=True)
    # conda-forge/nvcc-feedstock recipe/linux/activate.sh sets both
    (act / "activate-nvcc_linux-64.sh").write_text('export CUDA_HOME="/usr/local/cuda"\nexport CUDA_PATH="$CUDA_HOME"\n')
    (act / "cudaswitch.sh").write_text('export CUDA_HOME="/usr/local/cuda-11.8"\n')
    (act / "activate-gcc.sh").write_text('export CC="x86_64-conda-linux-gnu-cc"\n')
    r, rec, codes = run_doctor_cli(clean_env, fsroot, "-p", str(prefix))
    f = codes["FOREIGN_CUDA_HOOKS"]
    assert "activate-nvcc_linux-64.sh" in f["cause"] and "CUDA_HOME, CUDA_PATH" in f["cause"]
    assert codes_of(rec).count("FOREIGN_CUDA_HOOKS") == 1


def test_torch_from_conda_and_pip(tmp_path, fsroot, clean_env):
    prefix = _conda_torch_env(tmp_path, "torch-2.4.1+cu121", "pip")
    r, rec, codes = run_doctor_cli(clean_env, fsroot, "-p", str(prefix))
    assert codes["TORCH_MIXED_INSTALL"]["severity"] == "error" and r.returncode == 1
    assert "conda" in codes["TORCH_MIXED_INSTALL"]["cause"] and "pip" in codes["TORCH_MIXED_INSTALL"]["cause"]


def test_conda_only_torch_is_not_mixed(tmp_path, fsroot, clean_env):
    prefix = _conda_torch_env(tmp_path, "torch-2.4.1", "conda")
    r, rec, codes = run_doctor_cli(clean_env, fsroot, "-p", str(prefix))
    assert "TORCH_MIXED_INSTALL" not in codes
    assert rec["torch"]["cuda"] == "12.1"
    assert "fine" in codes["TORCH_DRIVER"]["cause"]


def test_tables_torch_with_this_driver_and_python(tmp_path, fsroot, clean_env):
    prefix, site = _conda_env(tmp_path, python="3.10")
    (site / "torch-1.12.1+cu113.dist-info").mkdir()
    (site / "torch-1.12.1+cu113.dist-info" / "INSTALLER").write_text("pip\n")
    clean_env["CONDA_OVERRIDE_CUDA"] = "12.2"
    r, rec, codes = run_doctor_cli(clean_env, fsroot, "-p", str(prefix))
    assert codes["TORCH_DRIVER"]["cause"].startswith("torch 1.12.1+cu113 with this driver: fine")
    clean_env["CONDA_OVERRIDE_CUDA"] = "11.0"
    r, rec, codes = run_doctor_cli(clean_env, fsroot, "-p", str(prefix))
    assert codes["TORCH_DRIVER"]["severity"] == "info" and "minor-version" in codes["TORCH_DRIVER"]["cause"]
    clean_env["CONDA_OVERRIDE_CUDA"] = "10.2"
    r, rec, codes = run_doctor_cli(clean_env, fsroot, "-p", str(prefix))
    assert codes["DRIVER_TOO_OLD"]["severity"] == "error" and ">= 465.19.01" in codes["DRIVER_TOO_OLD"]["cause"]

    prefix13, site13 = _conda_env(tmp_path, "py313", python="3.13")
    (site13 / "torch-1.12.1+cu113.dist-info").mkdir()
    r, rec, codes = run_doctor_cli(clean_env, fsroot, "-p", str(prefix13))
    f = codes["PYTHON_UNSUPPORTED"]
    assert "Python 3.13 has no wheel for torch 1.12.1" in f["cause"] and "3.7-3.10" in f["cause"]
    # the record keeps the table row's sources.csv key; the printed line, which a person reads, does not
    assert f["cause"].endswith("(Python 3.7-3.10) [S98]"), f["cause"]
    for lang in ("C.UTF-8", "zh_CN.UTF-8"):
        text = run_cli(["doctor", "-p", str(prefix13)], env=dict(clean_env, CUDASWITCH_FS_ROOT=str(fsroot),
                                                                 LANG=lang)).stdout
        line = next(ln for ln in text.splitlines() if "PYTHON_UNSUPPORTED" in ln)
        assert line.endswith("(Python 3.7-3.10)" if lang == "C.UTF-8" else "（Python 3.7-3.10）"), line


def test_cudnn_built_for_another_cuda(tmp_path, clean_env):
    root = tmp_path / "root"
    tk = cudatrees.cuda_12_9(root / "usr" / "local" / "cuda-12.9")
    inc = tk / "targets" / "x86_64-linux" / "include"
    (inc / "cudnn_version.h").write_text("#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 2\n#define CUDNN_PATCHLEVEL 1\n")
    r, rec, codes = run_doctor_cli(clean_env, root)
    f = codes["CUDNN_TOOLKIT_MISMATCH"]
    assert "cuDNN 8.2.1" in f["cause"] and "CUDA 12.9" in f["cause"]


def test_text_output_and_usage_errors(fsroot, clean_env):
    env_vars = dict(clean_env, CUDASWITCH_FS_ROOT=str(fsroot), CONDA_OVERRIDE_CUDA="12.9",
                    CUDA_PATH="/usr/local/cuda-12.1")
    r = run_cli(["doctor"], env=env_vars)
    assert r.returncode == 1
    assert "error    CUDA_PATH_MISSING: CUDA_PATH=/usr/local/cuda-12.1 does not exist" in r.stdout
    assert "fix: point CUDA_PATH at an installed toolkit" in r.stdout
    one_line_error(run_cli(["doctor", "-p", "/no/such/env"], env=env_vars), 2)
