"""`cudaswitch smoke` end to end: the real CLI, the env's own Python, the real CPU torch where this machine can run
it, and fake torch packages raising the real error texts for what cannot happen here (tests/fake_torch)."""

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "fake_torch"))

import cudatrees  # noqa: E402
import envs  # noqa: E402
from conftest import make_env, one_line_error, run_cli  # noqa: E402


@pytest.fixture
def env(tmp_path):
    return envs.make_env(tmp_path)


def smoke(prefix, env_vars, *extra):
    r = run_cli(["smoke", "-p", str(prefix), "--json", *extra], env=env_vars)
    assert r.stdout.strip(), r.stderr
    assert "Traceback" not in r.stderr
    return r, json.loads(r.stdout)


# ---- the real torch -------------------------------------------------------------------------------------------

def test_real_cpu_torch_is_a_cpu_only_build_and_fails_without_cpu_ok(torch_env, clean_env):
    r, rec = smoke(torch_env, clean_env)
    assert r.returncode == 1
    assert rec["status"] == "fail" and rec["ok"] is False
    assert rec["code"] == "CPU_ONLY_BUILD"
    assert "torch.version.cuda is None" in rec["cause"]
    assert "recommend" in rec["fix"]
    assert rec["torch"]["version"] == "2.13.0+cpu"
    assert rec["torch"]["cuda"] is None and rec["torch"]["is_available"] is False
    assert rec["result"] == "no GPU"
    # every field is in the one record
    for key in ("env", "python", "torch", "driver", "toolkit", "chain", "steps", "findings", "probe", "seconds",
                "exit_code", "device", "cpu_ok"):
        assert key in rec
    assert rec["python"]["bits"] == 64
    assert rec["env"]["prefix"] == str(torch_env)
    assert rec["python"]["executable"].startswith(str(torch_env))


def test_real_cpu_torch_passes_with_cpu_ok_and_really_computes(torch_env, clean_env):
    r, rec = smoke(torch_env, clean_env, "--cpu-ok")
    assert r.returncode == 0, rec
    assert rec["status"] == "pass" and rec["code"] == "OK"
    mm, conv, amp = rec["steps"]["matmul"], rec["steps"]["conv2d"], rec["steps"]["autocast"]
    assert mm["ok"] and mm["detail"]["n"] == 2048 and mm["detail"]["device"] == "cpu" and mm["seconds"] > 0
    assert conv["ok"] and conv["detail"]["shape"] == [8, 16, 64, 64]
    assert amp["ok"] and amp["detail"]["dtype"] == "torch.bfloat16"
    assert [f["code"] for f in rec["findings"]][0] == "CPU_ONLY_BUILD"
    assert rec["findings"][0]["severity"] == "warning"
    # the probe ran with the activated environment: the env's bin first on PATH, CONDA_PREFIX set
    seen = rec["probe"]["environ"]
    assert seen["CONDA_PREFIX"] == str(torch_env)
    assert seen["PATH_HEAD"][0] == str(torch_env / "bin")


def test_text_output_names_steps_and_result(torch_env, clean_env):
    r = run_cli(["smoke", "-p", str(torch_env)], env=clean_env)
    assert r.returncode == 1
    out = r.stdout
    assert "torch      2.13.0+cpu" in out
    assert "matmul     pass" in out and "conv2d     pass" in out
    assert "result: FAIL (CPU_ONLY_BUILD" in out
    assert "fix: reinstall torch from a CUDA index" in out


def test_active_env_is_used_without_n_or_p(torch_env, clean_env):
    clean_env["CONDA_PREFIX"] = str(torch_env)
    r = run_cli(["smoke", "--cpu-ok", "--json"], env=clean_env)
    assert r.returncode == 0
    assert json.loads(r.stdout)["env"]["prefix"] == str(torch_env)


def test_selected_toolkit_is_applied_and_major_mismatch_reported(tmp_path, clean_env, torch_env):
    """The env's state names CUDA 11.8; the probe sees CUDA_HOME/CUDA_PATH/PATH set to it (activation.changes_for),
    and torch built for CUDA 12.4 against toolkit 11.8 is reported as a major mismatch."""
    from cudaswitch.discovery.environment import SwitchState, write_state, CondaEnv

    prefix = envs.make_env(tmp_path)
    envs.fake_cuda(prefix, "no_device")
    search = tmp_path / "toolkits"
    root = cudatrees.cuda_11_8(search / "cuda-11.8")
    write_state(CondaEnv(str(prefix), "env", False), SwitchState("11.8", "11.8.0", str(root), "now", "0.1.0"))
    clean_env["CUDASWITCH_SEARCH_PATH"] = str(search)
    clean_env["CONDA_OVERRIDE_CUDA"] = "12.4"
    r, rec = smoke(prefix, clean_env, "--cpu-ok")
    seen = rec["probe"]["environ"]
    assert seen["CUDA_HOME"] == str(root) and seen["CUDA_PATH"] == str(root)
    assert rec["toolkit"]["version"].startswith("11.8")
    codes = {f["code"]: f for f in rec["findings"]}
    assert "TORCH_TOOLKIT_MAJOR_MISMATCH" in codes
    assert "CUDA 12.4" in codes["TORCH_TOOLKIT_MAJOR_MISMATCH"]["cause"]
    chain = {c["check"]: c for c in rec["chain"]}
    assert chain["torch CUDA vs toolkit nvcc"]["status"] == "mismatch"


# ---- skip, usage -----------------------------------------------------------------------------------------------

def test_torch_not_installed_is_a_skip_not_a_failure(env, clean_env):
    r, rec = smoke(env, clean_env)
    assert r.returncode == 0
    assert rec["status"] == "skip" and rec["code"] == "TORCH_NOT_INSTALLED"
    assert rec["result"] == "not run"


def test_env_without_python(tmp_path, clean_env):
    prefix = make_env(tmp_path / "nopython")
    r, rec = smoke(prefix, clean_env)
    # No Python means no torch: skipped like an env without torch, so `cudaswitch use` there still exits 0.
    assert r.returncode == 0 and rec["code"] == "PYTHON_MISSING" and rec["status"] == "skip"


@pytest.mark.parametrize("args", [
    ["--timeout", "nan"],
    ["-n", "x", "-p", "/tmp"],
    ["-p", "/no/such/env"],
    ["--timeout", "abc"],
])
def test_usage_errors_exit_2_with_one_line(args, clean_env):
    one_line_error(run_cli(["smoke", *args], env=clean_env), 2)


def test_no_active_env_is_a_usage_error(clean_env):
    r = run_cli(["smoke"], env=clean_env)
    assert r.returncode == 2
    assert "no conda environment is active" in r.stderr and "smoke -n NAME" in r.stderr


# ---- failures that cannot happen on this machine: fake torch, real texts -------------------------------------

def test_winerror_1114_c10_dll(env, clean_env):
    envs.fake_import_failure(env, "win1114")
    r, rec = smoke(env, clean_env)
    assert r.returncode == 1
    assert rec["code"] == "DLL_INIT_FAILED"
    assert "c10.dll" in rec["cause"] and "WinError 1114" in rec["cause"]
    assert "VC++" in rec["fix"]


def test_winerror_126_missing_dll(env, clean_env):
    envs.fake_import_failure(env, "win126")
    r, rec = smoke(env, clean_env)
    assert r.returncode == 1 and rec["code"] == "DLL_NOT_FOUND"
    assert "fbgemm.dll" in rec["cause"]


def test_numpy_abi(env, clean_env):
    envs.fake_import_failure(env, "numpy_abi")
    r, rec = smoke(env, clean_env)
    assert r.returncode == 1 and rec["code"] == "NUMPY_ABI"
    assert "numpy<2" in rec["fix"]


def test_omp_error_15_lists_both_runtimes(env, clean_env):
    envs.fake_import_failure(env, "omp15")
    a, b = envs.openmp_files(env)
    r, rec = smoke(env, clean_env)
    assert r.returncode == 1 and rec["code"] == "OPENMP_DUPLICATE"
    assert str(a) in rec["cause"] and str(b) in rec["cause"]
    assert "KMP_DUPLICATE_LIB_OK" in rec["fix"]


def test_undefined_symbol_names_the_ld_library_path_folder(tmp_path, clean_env):
    """LD_LIBRARY_PATH comes from the env's own switch (state: ld_library_path: true), as the hooks would set it."""
    from cudaswitch.discovery.environment import SwitchState, write_state, CondaEnv

    prefix = envs.make_env(tmp_path)
    envs.fake_import_failure(prefix, "undefined_symbol")
    search = tmp_path / "toolkits"
    root = cudatrees.cuda_12_9(search / "cuda-12.9")
    lib = root / "targets" / "x86_64-linux" / "lib"
    (lib / "libnvJitLink.so.12.9.86").write_bytes(b"\x7fELF")
    os.symlink("libnvJitLink.so.12.9.86", lib / "libnvJitLink.so.12")
    write_state(CondaEnv(str(prefix), "env", False),
                SwitchState("12.9", "12.9.1", str(root), "now", "0.1.0", ld_library_path=True))
    clean_env["CUDASWITCH_SEARCH_PATH"] = str(search)
    r, rec = smoke(prefix, clean_env)
    assert r.returncode == 1 and rec["code"] == "LIB_SHADOWED"
    assert "__nvJitLinkAddData_12_1" in rec["cause"]
    ld = rec["probe"]["environ"]["LD_LIBRARY_PATH"].split(":")[0]
    assert ld in rec["cause"] and ld in rec["fix"]
    assert ld.startswith(str(root))


def test_illegal_instruction_is_missing_avx2(env, clean_env):
    """SIGILL at import: NO_AVX2 on a CPU without AVX2 (torch's wheels require it); on one with AVX2 the build
    wants more."""
    from cudaswitch.checks.probe import cpu_has_avx2

    envs.fake_import_failure(env, "sigill")
    r, rec = smoke(env, clean_env)
    assert r.returncode == 1
    assert rec["code"] == ("ILLEGAL_INSTRUCTION" if cpu_has_avx2() else "NO_AVX2")
    assert "illegal instruction" in rec["cause"]


def test_probe_timeout_names_the_stage(env, clean_env):
    envs.fake_import_failure(env, "hang")
    r, rec = smoke(env, clean_env, "--timeout", "3")
    assert r.returncode == 1 and rec["code"] == "PROBE_TIMEOUT"
    assert "import_torch" in rec["cause"]
    assert rec["probe"]["timed_out"] is True
    assert rec["seconds"] < 30


def test_driver_too_old(env, clean_env, torch_env):
    envs.fake_cuda(env, "driver_old")
    clean_env["CONDA_OVERRIDE_CUDA"] = "11.4"
    r, rec = smoke(env, clean_env)
    assert r.returncode == 1 and rec["code"] == "DRIVER_TOO_OLD"
    assert "CUDA 12.4" in rec["cause"] and "11.4" in rec["cause"]
    assert ">= 550.54.14" in rec["fix"]  # CUDA 12.4 GA, Linux (cuda_driver.csv, sources.csv S40)
    assert rec["driver"]["source"] == "CONDA_OVERRIDE_CUDA"
    chain = {c["check"]: c for c in rec["chain"]}
    assert chain["driver vs torch CUDA"]["status"] == "too-old"


@pytest.mark.parametrize("visible,field,says", [
    ("", "fix", "unset CUDA_VISIBLE_DEVICES"),  # hides every GPU
    ("3", "cause", "'3' selects no usable GPU"),  # names a GPU that is not there
])
def test_cuda_visible_devices_hides_the_gpus(visible, field, says, env, clean_env, torch_env):
    envs.fake_cuda(env, "no_device")
    clean_env["CONDA_OVERRIDE_CUDA"] = "12.4"
    clean_env["CUDA_VISIBLE_DEVICES"] = visible
    r, rec = smoke(env, clean_env)
    assert r.returncode == 1 and rec["code"] == "CUDA_VISIBLE_DEVICES_HIDDEN"
    assert says in rec[field]


def test_cuda_build_without_driver_is_no_gpu_unless_cpu_ok(env, clean_env, torch_env):
    envs.fake_cuda(env, "no_device")
    clean_env["CONDA_OVERRIDE_CUDA"] = ""
    r, rec = smoke(env, clean_env)
    assert r.returncode == 1 and rec["code"] == "NO_GPU"
    r, rec = smoke(env, clean_env, "--cpu-ok")
    assert r.returncode == 0 and rec["status"] == "pass" and rec["steps"]["matmul"]["ok"]


def test_gpu_architecture_missing_from_build(env, clean_env, torch_env):
    envs.fake_cuda(env, "sm120")
    clean_env["CONDA_OVERRIDE_CUDA"] = "12.8"
    r, rec = smoke(env, clean_env)
    assert r.returncode == 1 and rec["code"] == "NO_KERNEL_IMAGE"
    assert "12.0" in rec["cause"] and "sm_90" in rec["cause"]
    assert rec["steps"]["matmul"]["ok"] is False
    assert "no kernel image is available" in rec["steps"]["matmul"]["error"]["message"]
    chain = {c["check"]: c for c in rec["chain"]}
    assert chain["GPU arch vs build"]["status"] == "missing"


def test_conda_and_pip_torch_in_one_env(env, clean_env, torch_env):
    """Real layouts: a conda-meta record for pytorch and the real wheel's dist-info (INSTALLER: pip)."""
    envs.link_real_torch(env)
    envs.copy_dist_info(env)
    record = envs.conda_record(env)
    r, rec = smoke(env, clean_env, "--cpu-ok")
    assert rec["steps"]["matmul"]["ok"]  # torch itself imports and computes...
    assert r.returncode == 1 and rec["code"] == "TORCH_MIXED_INSTALL"  # ...but the install is broken
    assert str(record) in rec["cause"] and "pip" in rec["cause"]


def test_two_torch_folders_on_sys_path(env, clean_env, torch_env):
    envs.link_real_torch(env)
    real = envs.site_packages(torch_env) / "torch"
    os.symlink(real, envs.site_packages(env) / "torch")
    r, rec = smoke(env, clean_env, "--cpu-ok")
    assert r.returncode == 1 and rec["code"] == "TORCH_MIXED_INSTALL"
    assert len(rec["probe"]["torch_folders"]) == 2


def test_winerror_1114_in_an_env_with_conda_and_pip_torch_names_the_double_install(env, clean_env, torch_env):
    """'conda and pip both installed torch' is a WinError 1114 cause; the mixed install comes first."""
    envs.fake_import_failure(env, "win1114")
    envs.copy_dist_info(env)
    envs.conda_record(env)
    r, rec = smoke(env, clean_env)
    assert r.returncode == 1 and rec["code"] == "TORCH_MIXED_INSTALL"
    assert "likely cause of DLL_INIT_FAILED" in rec["cause"]
    assert [f["code"] for f in rec["findings"]][:2] == ["TORCH_MIXED_INSTALL", "DLL_INIT_FAILED"]


@pytest.mark.parametrize("lang", ["en_US.UTF-8", "zh_CN.UTF-8"])
def test_a_missing_library_of_a_pip_nvidia_wheel_names_the_wheel(env, clean_env, lang):
    """torch loads libcudart.so.13 from the nvidia-cuda-runtime wheel, whose file was deleted (a half-removed
    wheel, a disk cleaner): the loader's own error, and the wheel's real RECORD still listing the file, name the wheel
    to reinstall."""
    import zipfile

    import nvidia_wheels as nw

    site = envs.site_packages(env)
    with zipfile.ZipFile(nw.wheel("nvidia-cuda-runtime==13.0.96")) as zf:
        for name in zf.namelist():
            if ".dist-info/" in name:
                zf.extract(name, site)
    torch = site / "torch"
    torch.mkdir()
    (torch / "__init__.py").write_text(
        "import ctypes, os\n"
        "site = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n"
        "ctypes.CDLL(os.path.join(site, 'nvidia', 'cuda_runtime', 'lib', 'libcudart.so.13'))\n")
    r, rec = smoke(env, dict(clean_env, LANG=lang, LC_ALL=lang))
    assert r.returncode == 1 and rec["code"] == "LIB_NOT_FOUND"  # JSON is English in either language
    assert rec["cause"] == ("import torch failed: libcudart.so.13 is missing, a library of the pip wheel "
                            "nvidia-cuda-runtime 13.0.96")
    assert rec["fix"] == "reinstall that wheel: pip install --force-reinstall --no-deps nvidia-cuda-runtime==13.0.96"
    text = run_cli(["smoke", "-p", str(env)], env=dict(clean_env, LANG=lang, LC_ALL=lang)).stdout
    said = {"en_US.UTF-8": "libcudart.so.13 is missing, a library of the pip wheel nvidia-cuda-runtime 13.0.96",
            "zh_CN.UTF-8": "缺少 libcudart.so.13，它属于 pip wheel 包 nvidia-cuda-runtime 13.0.96"}[lang]
    assert said in text, text
