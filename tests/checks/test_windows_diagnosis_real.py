"""Windows failures diagnosed from the real files (cudaswitch/checks/windll.py, diagnosis.py): Microsoft's own
msvcp140.dll / vcruntime140*.dll from the msvc-runtime wheels (14.34 and 14.44), NVIDIA's real cudnn64_8.dll, and
the error texts Windows and cuDNN print. What cannot run here is the Windows process itself: its outcome is a
recorded probe result with the real texts, and the environment is a C: drive laid out as conda and pip leave it."""

import re
import shutil

import pytest

import nvidia_wheels as nw
import winfiles as wf
from conftest import make_env
from cudaswitch.checks import smoke
from cudaswitch.checks.diagnosis import classify
from cudaswitch.checks.driver import Driver
from cudaswitch.checks.runner import ProbeOutcome
from cudaswitch.discovery.environment import resolve_env

PREFIX = r"C:\envs\pt"
TORCH_LIB = PREFIX + r"\Lib\site-packages\torch\lib"


def _drive(tmp_path, torch="2.9.1"):
    drive = tmp_path / "drive"
    prefix = make_env(drive / "C" / "envs" / "pt")
    site = prefix / "Lib" / "site-packages"
    dist = site / f"torch-{torch}.dist-info"
    dist.mkdir(parents=True)
    (dist / "INSTALLER").write_text("pip\n")
    (site / "torch" / "lib").mkdir(parents=True)
    (drive / "C" / "Windows" / "System32").mkdir(parents=True)
    return drive, prefix


def _put(src, dest_dir, *names):
    dest_dir.mkdir(parents=True, exist_ok=True)
    for n in names:
        shutil.copyfile(src / n, dest_dir / n)


def _vc14_record(prefix, *files):
    (prefix / "conda-meta" / "vc14_runtime-14.34.31931-h5fd82a7_0.json").write_text(
        '{"name": "vc14_runtime", "version": "14.34.31931", "files": [%s]}' % ", ".join(f'"{f}"' for f in files))


def _failed_import(message):
    return {"python": {"version": "3.11.9", "bits": 64, "platform": "win32"}, "cpu_avx2": True,
            "import": {"ok": False, "error": {"type": "OSError", "message": message}}, "warnings": [], "steps": {},
            "torch": {}}


def _smoke(drive, outcome, path=""):
    system = wf.win_system(drive, path=path)
    env = resolve_env(system, prefix=PREFIX)
    environ = {"PATH": path, "CONDA_OVERRIDE_CUDA": "12.9"}
    return smoke.report_from_outcome(outcome, env, environ, system)


def _first(report):
    return report.findings[0]


WIN1114 = ('[WinError 1114] 动态链接库(DLL)初始化例程失败。 Error loading "' + TORCH_LIB + r'\c10.dll" or one of its '
           'dependencies.')


def _outcome_1114():
    return ProbeOutcome(_failed_import(WIN1114), 1, "", "", False, "import_torch")


# ---- WinError 1114: the VC++ runtime the loader takes first, and its version --------------------------------------

def test_1114_names_the_environments_old_msvcp140_and_the_conda_package_that_updates_it(tmp_path):
    """torch 2.9 with the env's own msvcp140.dll 14.34 (conda's vc14_runtime) and a current System32: the env's copy
    is loaded first, so the redistributable cannot help; the fix updates the package that owns the copy."""
    drive, prefix = _drive(tmp_path)
    _put(nw.msvc_runtime(nw.MSVC_RUNTIME_OLD), prefix, "msvcp140.dll")
    _vc14_record(prefix, "msvcp140.dll")
    _put(nw.msvc_runtime(nw.MSVC_RUNTIME_NEW) / "Scripts", drive / "C" / "Windows" / "System32", "msvcp140.dll",
         "vcruntime140.dll", "vcruntime140_1.dll")
    f = _first(_smoke(drive, _outcome_1114()))
    assert f.code == "DLL_INIT_FAILED"
    assert PREFIX + r"\msvcp140.dll, version 14.34.31931.0" in f.cause and "torch 2.9.1 needs 14.40" in f.cause
    assert 'conda install -p "C:\\envs\\pt" -c conda-forge "vc14_runtime>=14.40"' in f.fix
    assert "does not replace it" in f.fix
    # every copy in load order with its version, System32's after the environment's
    assert f.details[0] == PREFIX + r"\msvcp140.dll 14.34.31931.0 (loaded first)"
    assert r"C:\Windows\System32\msvcp140.dll 14.44.35211.0" in f.details


def test_1114_with_an_old_system32_runtime_gives_the_redistributable(tmp_path):
    drive, _prefix = _drive(tmp_path)
    _put(nw.msvc_runtime(nw.MSVC_RUNTIME_OLD) / "Scripts", drive / "C" / "Windows" / "System32", "msvcp140.dll",
         "vcruntime140.dll", "vcruntime140_1.dll")
    f = _first(_smoke(drive, _outcome_1114()))
    assert f.code == "DLL_INIT_FAILED"
    assert r"C:\Windows\System32\msvcp140.dll, version 14.34.31931.0" in f.cause and "14.40" in f.cause
    assert "Visual C++ 2015-2022 Redistributable" in f.fix and "https://aka.ms/vs/17/release/vc_redist.x64.exe" in f.fix


def test_1114_with_a_new_enough_first_copy_blames_no_runtime(tmp_path):
    """The env's 14.44 is loaded before System32's 14.34: the old System32 copy is not the cause."""
    drive, prefix = _drive(tmp_path)
    _put(nw.msvc_runtime(nw.MSVC_RUNTIME_NEW), prefix, "msvcp140.dll")
    _put(nw.msvc_runtime(nw.MSVC_RUNTIME_OLD) / "Scripts", drive / "C" / "Windows" / "System32", "msvcp140.dll",
         "vcruntime140.dll", "vcruntime140_1.dll")
    f = _first(_smoke(drive, _outcome_1114()))
    assert f.code == "DLL_INIT_FAILED" and "is not older than torch 2.9.1 needs" in f.cause
    assert PREFIX + r"\msvcp140.dll, version 14.44.35211.0" in f.cause


def test_1114_with_part_of_the_runtime_names_what_is_missing(tmp_path):
    """msvcp140.dll 14.44 in System32 but no vcruntime140_1.dll anywhere (a runtime copied by hand)."""
    drive, _prefix = _drive(tmp_path)
    _put(nw.msvc_runtime(nw.MSVC_RUNTIME_NEW) / "Scripts", drive / "C" / "Windows" / "System32", "msvcp140.dll",
         "vcruntime140.dll")
    f = _first(_smoke(drive, _outcome_1114()))
    assert f.code == "DLL_INIT_FAILED" and "vcruntime140_1.dll is in none of the environment's folders nor System32" \
        in f.cause and "Redistributable" in f.fix


def test_1114_before_torch_2_9_has_no_minimum_to_blame(tmp_path):
    drive, prefix = _drive(tmp_path, torch="2.8.0")
    _put(nw.msvc_runtime(nw.MSVC_RUNTIME_OLD) / "Scripts", prefix, "msvcp140.dll", "vcruntime140.dll",
         "vcruntime140_1.dll")
    f = _first(_smoke(drive, _outcome_1114()))
    assert f.code == "DLL_INIT_FAILED" and "14.40" not in f.cause and "is not older than torch 2.8.0" in f.cause


# ---- WinError 126: the DLL that is really missing ------------------------------------------------------------

WIN126 = ('[WinError 126] The specified module could not be found. Error loading "' + TORCH_LIB + r'\msvcp140.dll" '
          'or one of its dependencies.')


def test_126_walks_the_import_tables_to_the_missing_vcruntime(tmp_path):
    """Microsoft's msvcp140.dll without its vcruntime140.dll anywhere the loader looks (a Windows without the VC++
    runtime): the import table names VCRUNTIME140.dll; API sets and known DLLs (KERNEL32, ole32) are the system's."""
    drive, prefix = _drive(tmp_path)
    _put(nw.msvc_runtime(nw.MSVC_RUNTIME_NEW), prefix / "Lib" / "site-packages" / "torch" / "lib", "msvcp140.dll")
    outcome = ProbeOutcome(_failed_import(WIN126), 1, "", "", False, "import_torch")
    f = _first(_smoke(drive, outcome))
    assert f.code == "DLL_NOT_FOUND"
    assert f.cause.startswith("WinError 126: VCRUNTIME140.dll, which msvcp140.dll imports")
    assert "Redistributable" in f.fix and "VCRUNTIME140.dll" in f.fix
    assert f.details[0] == TORCH_LIB + r"\msvcp140.dll -> VCRUNTIME140.dll"
    assert "VCRUNTIME140_1.dll (imported by" in f.details[1]
    assert not any("KERNEL32" in d or "api-ms-win" in d for d in f.details[:-1])

    # vcruntime140.dll found on PATH: the one still missing is vcruntime140_1.dll
    bin_dir = drive / "C" / "tools"
    _put(nw.msvc_runtime(nw.MSVC_RUNTIME_NEW) / "Scripts", bin_dir, "vcruntime140.dll")
    f = _first(_smoke(drive, outcome, path=r"C:\tools"))
    assert f.cause.startswith("WinError 126: VCRUNTIME140_1.dll, which msvcp140.dll imports")

    # the whole runtime in System32: nothing in the chain is missing, so nothing is named
    _put(nw.msvc_runtime(nw.MSVC_RUNTIME_NEW) / "Scripts", drive / "C" / "Windows" / "System32", "vcruntime140.dll",
         "vcruntime140_1.dll")
    f = _first(_smoke(drive, outcome))
    assert f.code == "DLL_NOT_FOUND" and "msvcp140.dll or one of its dependencies is missing" in f.cause


# ---- cuDNN's "Could not locate ..." and Windows exit codes ---------------------------------------------------

def _cudnn_text(name):
    """cuDNN 8's own message, from the format string inside NVIDIA's real cudnn64_8.dll."""
    data = (nw.win_cudnn_8(nw.WIN_CUDNN_8_CU12) / "bin" / "cudnn64_8.dll").read_bytes()
    fmt = re.search(rb"Could not locate %s\. Please make sure it is in your library path!", data).group(0)
    return fmt.decode().replace("%s", name)


STACK_BUFFER_OVERRUN = 3221226505  # what subprocess reports on Windows for 0xC0000409


def test_zlibwapi_missing_is_named_with_the_cudnn_that_needs_it(tmp_path):
    drive, prefix = _drive(tmp_path)
    _put(nw.win_cudnn_8(nw.WIN_CUDNN_8_CU12) / "bin", prefix / "Library" / "bin", "cudnn64_8.dll")
    stderr = "cudaswitch-probe: stage conv2d\n" + _cudnn_text("zlibwapi.dll") + "\n"
    f = _first(_smoke(drive, ProbeOutcome(None, STACK_BUFFER_OVERRUN, "", stderr, False, "conv2d")))
    assert f.code == "CUDNN_DLL_MISSING"
    assert "cuDNN 8.9.7 (" + PREFIX + r"\Library\bin\cudnn64_8.dll) needs zlibwapi.dll" in f.cause
    assert f.cause.endswith("; the process ended (exit 3221226505 = 0xC0000409 STATUS_STACK_BUFFER_OVERRUN) at stage "
                            "conv2d")
    assert "put zlibwapi.dll" in f.fix and PREFIX + r"\Library\bin" in f.fix


def test_zlibwapi_before_a_cudnn_error_is_named_instead_of_the_error(tmp_path):
    """cuDNN printed its text and returned an error instead of ending the process: conv2d fails with
    CUDNN_STATUS_NOT_INITIALIZED; the DLL it named is the cause."""
    drive, prefix = _drive(tmp_path)
    _put(nw.win_cudnn_8(nw.WIN_CUDNN_8_CU12) / "bin", prefix / "Library" / "bin", "cudnn64_8.dll")
    rec = {"python": {"version": "3.11.9", "bits": 64, "platform": "win32"}, "import": {"ok": True}, "warnings": [],
           "torch": {"version": "2.0.1+cu118", "cuda": "11.8", "is_available": True, "capability": "8.6",
                     "arch_list": ["sm_86"], "device_name": "NVIDIA GeForce RTX 3060"},
           "steps": {"matmul": {"ok": True}, "conv2d": {"ok": False, "error": {
               "type": "RuntimeError", "message": "cuDNN error: CUDNN_STATUS_NOT_INITIALIZED"}}}}
    stderr = _cudnn_text("zlibwapi.dll") + "\n"
    f = _first(_smoke(drive, ProbeOutcome(rec, 0, "", stderr, False, "done")))
    assert f.code == "CUDNN_DLL_MISSING" and "needs zlibwapi.dll" in f.cause
    assert f.cause.endswith("; then the cuDNN convolution failed") and "process ended" not in f.cause


def test_cudnn_sublibrary_missing_from_the_real_loader_run(tmp_path):
    """NVIDIA's real cudnn64_8.dll alone in a folder, loaded under wine by the mingw loader: its own output names
    cudnn_ops_infer64_8.dll; the diagnosis names that DLL and the folder its siblings belong in."""
    drive, prefix = _drive(tmp_path)
    bin_dir = prefix / "Library" / "bin"
    _put(nw.win_cudnn_8(nw.WIN_CUDNN_8_CU12) / "bin", bin_dir, "cudnn64_8.dll")
    r = wf.run_loader(wf.wine_loader(), bin_dir / "cudnn64_8.dll", bin_dir, winepath="")
    assert r.returncode != 0
    outcome = ProbeOutcome(None, r.returncode, "", r.stdout + r.stderr, False, "conv2d")
    f = _first(_smoke(drive, outcome))
    assert f.code == "CUDNN_DLL_MISSING" and "could not locate its sub-library cudnn_ops_infer64_8.dll" in f.cause
    assert PREFIX + r"\Library\bin\cudnn64_8.dll, cuDNN 8.9.7" in f.cause
    assert "on PATH" in f.fix and PREFIX + r"\Library\bin" in f.fix


@pytest.mark.parametrize("code,shown", [
    (STACK_BUFFER_OVERRUN, "exit 3221226505 = 0xC0000409 STATUS_STACK_BUFFER_OVERRUN)"),
    (-1073740791, "exit -1073740791 = 0xC0000409 STATUS_STACK_BUFFER_OVERRUN)"),  # the same, read as signed
    (3221225477, "exit 3221225477 = 0xC0000005 STATUS_ACCESS_VIOLATION)"),
    (-11, "(exit -11) at"), (1, "(exit 1) at"),
])
def test_windows_exit_codes_are_printed_in_hex(code, shown):
    outcome = ProbeOutcome(None, code, "", "cudaswitch-probe: stage import_torch\n", False, "import_torch")
    (f,) = classify(outcome, "/x", {}, True, False, Driver(None))
    assert f.code == "PROBE_CRASHED" and shown in f.cause


def test_windows_illegal_instruction_status_is_sigill():
    outcome = ProbeOutcome(None, 0xC000001D, "", "cudaswitch-probe: stage import_torch\n", False, "import_torch")
    assert classify(outcome, "/x", {}, True, False, Driver(None))[0].code in ("NO_AVX2", "ILLEGAL_INSTRUCTION")


def test_the_zlibwapi_rule_is_install_cudnns():
    """One rule for install-cudnn's warning and the diagnosis: cuDNN 8.3 to 8.9 on Windows load zlibwapi.dll."""
    from cudaswitch.discovery.cudnn_windows import needs_zlibwapi

    assert [needs_zlibwapi(v) for v in ("8.2.1.32", "8.3.2.44", "8.9.7.29", "9.10.2.21", "7.6.5")] == \
        [False, True, True, False, False]


def test_doctor_reports_the_loaded_runtime_older_than_torch_needs(tmp_path, clean_env):
    """doctor (no torch import): System32 holds the whole VC++ runtime, so VCRUNTIME_MISSING is silent, but the
    environment's own msvcp140.dll 14.34, loaded first, is older than torch 2.9 needs."""
    import json

    drive, prefix = _drive(tmp_path)
    _put(nw.msvc_runtime(nw.MSVC_RUNTIME_OLD), prefix, "msvcp140.dll")
    _vc14_record(prefix, "msvcp140.dll")
    _put(nw.msvc_runtime(nw.MSVC_RUNTIME_NEW) / "Scripts", drive / "C" / "Windows" / "System32", "msvcp140.dll",
         "vcruntime140.dll", "vcruntime140_1.dll")
    r = wf.win_cli(["doctor", "-p", PREFIX, "--json"], drive, "", clean_env)
    codes = {f["code"]: f for f in json.loads(r.stdout)["findings"]}
    assert "VCRUNTIME_MISSING" not in codes and r.returncode == 1
    f = codes["VCRUNTIME_TOO_OLD"]
    assert f["cause"].startswith(PREFIX + r"\msvcp140.dll is version 14.34.31931.0")
    assert "torch 2.9.1 needs 14.40" in f["cause"] and '"vc14_runtime>=14.40"' in f["fix"]
    # once the environment's copy is current, nothing is reported
    _put(nw.msvc_runtime(nw.MSVC_RUNTIME_NEW), prefix, "msvcp140.dll")
    r = wf.win_cli(["doctor", "-p", PREFIX, "--json"], drive, "", clean_env)
    assert "VCRUNTIME_TOO_OLD" not in {f["code"] for f in json.loads(r.stdout)["findings"]}


# ---- torch installed twice: the user site-packages before the environment's ---------------------------------

USER_SITE = r"C:\Users\u\AppData\Roaming\Python\Python311\site-packages"


def test_a_user_site_torch_is_named_before_the_dll_failure_it_causes(tmp_path):
    """The seed author's case: `pip install --user` left a torch in %APPDATA%\\Python\\Python311\\site-packages,
    which a conda Python puts on sys.path before the environment's own; that copy fails with WinError 1114. The
    probe's record lists both folders and the user site: the double install is named first, the user site's copy
    as the one imported, and the fix removes that copy, not msvcp140."""
    drive, prefix = _drive(tmp_path)
    _put(nw.msvc_runtime(nw.MSVC_RUNTIME_OLD), prefix, "msvcp140.dll")  # an old runtime is there too: not blamed first
    rec = _failed_import(WIN1114)
    rec["python"]["executable"] = PREFIX + r"\python.exe"
    rec["user_site"] = USER_SITE
    rec["torch_folders"] = [USER_SITE + r"\torch", PREFIX + r"\Lib\site-packages\torch"]
    report = _smoke(drive, ProbeOutcome(rec, 1, "", "", False, "import_torch"))
    assert [f.code for f in report.findings][:2] == ["TORCH_MIXED_INSTALL", "DLL_INIT_FAILED"]
    f = report.findings[0]
    assert USER_SITE + r"\torch is in the user site-packages (pip install --user)" in f.cause
    assert "likely cause of DLL_INIT_FAILED" in f.cause
    assert '"C:\\envs\\pt\\python.exe" -m pip uninstall torch torchvision torchaudio' in f.fix
    assert "PYTHONNOUSERSITE=1" in f.fix and "msvcp140" not in f.fix


def test_the_real_probe_records_the_user_site_and_both_torch_folders(tmp_path, clean_env):
    """The real probe in a real Python with the user site enabled (PYTHONUSERBASE): it records the user
    site-packages and every torch folder on sys.path, and a second torch is named before the import failure of the
    first (a venv puts its own site-packages before the user site, so here the environment's copy is the failing
    one)."""
    import json
    import sys

    sys.path.insert(0, str(wf.HERE / "fake_torch"))
    import envs
    from conftest import run_cli

    env = envs.make_env(tmp_path)
    envs.fake_import_failure(env, "win1114")
    cfg = env / "pyvenv.cfg"  # a venv enables the user site only with the system site-packages
    cfg.write_text(cfg.read_text().replace("include-system-site-packages = false", "include-system-site-packages = true"))
    user_base = tmp_path / "userbase"
    user_site = user_base / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    (user_site / "torch").mkdir(parents=True)
    (user_site / "torch" / "__init__.py").write_text("")
    r = run_cli(["smoke", "-p", str(env), "--json"], env=dict(clean_env, PYTHONUSERBASE=str(user_base)))
    rec = json.loads(r.stdout)
    assert rec["probe"]["user_site"] == str(user_site) and rec["probe"]["torch_folders"][1] == str(user_site / "torch")
    assert r.returncode == 1 and [f["code"] for f in rec["findings"]][:2] == ["TORCH_MIXED_INSTALL", "DLL_INIT_FAILED"]
    assert "likely cause of DLL_INIT_FAILED" in rec["cause"]


# ---- several toolkits on PATH after a correct switch ---------------------------------------------------------

def test_several_toolkits_on_path_after_a_correct_switch_say_where_they_live(tmp_path, clean_env):
    """NVIDIA's installers for 11.8 and 13.0 left their folders in the system Path; the environment is switched to
    12.9 (its folders first, CUDA_PATH and CUDA_HOME on it). Nothing is wrong: the finding says so, where the other
    entries live and how to remove them safely, never that cudaswitch keeps exactly one."""
    drive = wf.real_drive(tmp_path / "drive")
    tk = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA"
    path = ";".join([tk + r"\v12.9\bin", tk + r"\v12.9\libnvvp", tk + r"\v13.0\bin", tk + r"\v11.8\bin",
                     tk + r"\v11.8\libnvvp", r"C:\Windows\System32"])
    env = dict(clean_env, CUDA_PATH=tk + r"\v12.9", CUDA_HOME=tk + r"\v12.9")
    f = wf.doctor_codes(drive, path, env)["MULTIPLE_CUDA_ON_PATH"]
    assert "the first, CUDA 12.9.79, is the one CUDA_HOME/CUDA_PATH name, so it wins" in f["cause"]
    assert f["fix"].startswith("nothing to do: cudaswitch works with the others present")
    assert "System Properties > Environment Variables" in f["fix"] and "administrator" in f["fix"]
    assert "reopen every terminal" in f["fix"] and "never run `setx PATH ...`, which cuts PATH to 1024" in f["fix"]
    assert "exactly one" not in f["fix"]
    # the shell's first toolkit is not the one CUDA_PATH names: that is the case to act on
    f = wf.doctor_codes(drive, path, dict(env, CUDA_PATH=tk + r"\v11.8", CUDA_HOME=tk + r"\v11.8"))[
        "MULTIPLE_CUDA_ON_PATH"]
    assert f["cause"].endswith("the first wins") and "`cudaswitch use X.Y` puts its folders first" in f["fix"]


# ---- extension builds on Windows: cl.exe on PATH, and a version nvcc accepts ------------------------------------

CL_1940 = ("Microsoft (R) C/C++ Optimizing Compiler Version 19.40.33811 for x64\n"  # VS 2022 17.10's banner
           "Copyright (C) Microsoft Corporation.  All rights reserved.\n")
CU118 = {"version": "2.1.2+cu118", "cuda": "11.8"}


def _build(drive, path, run=None, version="11.8"):
    import cudatrees
    from cudaswitch.checks.build import build_findings
    from cudaswitch.discovery.toolkits import discover

    root = drive.joinpath("C", *cudatrees.WIN_TOOLKIT, f"v{version}")
    if not root.exists():
        cudatrees.windows_real_toolkit(drive, version)
    system = wf.win_system(drive, path=path, run=run or wf.no_process)
    tk = next(t for t in discover(system).toolkits if system.local(t.root) == root)
    return {f.code: f for f in build_findings(CU118, [tk], system, PREFIX, selected=tk)}


def test_no_cl_on_path_says_how_to_get_one(tmp_path):
    """Real CUDA 11.8 files, a torch cu118 environment, no cl.exe on PATH (an ordinary terminal): nothing is run;
    the fix names the Native Tools prompt and, when Visual Studio is there, its own vcvars64.bat."""
    drive, _prefix = _drive(tmp_path)
    f = _build(drive, r"C:\Windows\System32")["MSVC_NOT_ON_PATH"]
    assert f.severity == "warning" and "cl.exe (MSVC) is not on PATH" in f.cause
    assert "x64 Native Tools Command Prompt" in f.fix and "vcvars64.bat" in f.fix
    vcvars = drive / "C" / "Program Files (x86)" / "Microsoft Visual Studio" / "2022" / "BuildTools" / "VC" / \
        "Auxiliary" / "Build" / "vcvars64.bat"
    vcvars.parent.mkdir(parents=True)
    vcvars.write_text("@echo off\r\n")
    f = _build(drive, r"C:\Windows\System32")["MSVC_NOT_ON_PATH"]
    assert r'run "C:\Program Files (x86)\Microsoft Visual Studio\2022\BuildTools\VC\Auxiliary\Build\vcvars64.bat"' \
        in f.fix


def test_cl_from_vs_2022_17_10_is_rejected_by_cuda_11_8s_nvcc(tmp_path):
    """cl.exe 19.40 (VS 2022 17.10) on PATH; the real CUDA 11.8 files carry no crt\\host_config.h, so the range comes
    from the knowledge table (NVIDIA's own header of the 11.8 nvcc wheel: _MSC_VER < 1940)."""
    import subprocess

    drive, _prefix = _drive(tmp_path)
    vs_bin = drive / "C" / "VS" / "bin"
    vs_bin.mkdir(parents=True)
    (vs_bin / "cl.exe").write_bytes(b"MZ")
    ran = []

    def run(cmd, timeout=None, env=None):
        ran.append(cmd)
        return subprocess.CompletedProcess(cmd, 2, "", CL_1940)  # cl.exe prints its banner on stderr

    f = _build(drive, r"C:\VS\bin", run)
    assert ran == [[r"C:\VS\bin\cl.exe"]]
    bad = f["HOST_COMPILER_TOO_NEW"]
    assert "cl.exe is version 19.40 (_MSC_VER 1940, Visual Studio 2022 17.10)" in bad.cause
    assert "CUDA 11.8.89's nvcc accepts _MSC_VER < 1940 (nvcc_msvc.csv [S124])" in bad.cause
    assert "-vcvars_ver=14.38" in bad.fix and "CUDA 12.4 or newer" in bad.fix and "-allow-unsupported-compiler" in bad.fix
    # the same cl.exe with CUDA 12.9 (its real header range, from the table: < 1950) is fine
    assert "HOST_COMPILER_TOO_NEW" not in _build(drive, r"C:\VS\bin", run, version="12.9")


def test_the_windows_tables_cite_known_sources():
    from cudaswitch.data import knowledge

    known = knowledge.sources()
    for name in ("vc_runtime.csv", "nvcc_msvc.csv"):
        rows = knowledge.table(name)
        assert rows and all(k in known for r in rows for k in r["src"].split(";")), name
    assert knowledge.nvcc_msvc_range("11.8.89")["msc_below"] == "1940"
    assert knowledge.nvcc_msvc_range("12.4")["msc_below"] == "1950" and knowledge.nvcc_msvc_range("11.0") is None
    assert knowledge.vc_runtime_minimum("2.9.0+cu128", "msvcp140.dll")["min_version"] == "14.40"
    assert knowledge.vc_runtime_minimum("2.8.0", "msvcp140.dll") is None
