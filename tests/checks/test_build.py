"""doctor's extension-build findings: real toolkits (CUDA 13.0 from install-toolkit, 12.9 from wheels), the real
identity files of CUDA torch wheels, the real host_config.h and nvcc; a host compiler this machine does not have
(GCC 16, GCC 9, cl.exe) is a script printing that compiler's real banner format."""

import json
import os
import subprocess
from pathlib import Path

import sys

sys.path.insert(0, str(Path(__file__).parent.parent / "fake_torch"))

from conftest import run_cli  # noqa: E402
from conftest import require_tool  # noqa: E402

from cudaswitch.checks.build import build_findings, host_limits, nvcc_archs, parse_arch_list
from cudaswitch.discovery.torchenv import torch_installs
from cudaswitch.core.system import System
from cudaswitch.discovery.toolkits import discover


def fake_compiler(tmp_path: Path, banner: str) -> str:
    p = tmp_path / "fake-c++"
    p.write_text(f"#!/bin/sh\ncat <<'EOF'\n{banner}\nEOF\n")
    p.chmod(0o755)
    return str(p)


def codes(findings):
    return {f.code: f for f in findings}


def check(env_prefix, toolkit_root, environ, **kw):
    system = System(os="linux", environ={"CUDA_HOME": str(toolkit_root), "CUDASWITCH_SEARCH_PATH": str(toolkit_root),
                                         **environ})
    tks = discover(system).toolkits
    return codes(build_findings(torch_installs(str(env_prefix)), tks, system, str(env_prefix), **kw))


def test_limits_come_from_the_toolkits_own_host_config(toolkit_13_0):
    lim = host_limits(str(toolkit_13_0 / "include"))
    assert lim["gcc_max"] == 15 and lim["msc"] == (1920, 1950) and lim["clang_below"] == 21


def test_nvcc_arch_table_equals_list_gpu_arch(toolkit_13_0):
    nvcc = str(toolkit_13_0 / "bin" / "nvcc")
    out = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True).stdout.split()
    listed = sorted(f"{int(a[8:]) // 10}.{int(a[8:]) % 10}" for a in out)
    assert sorted(nvcc_archs(nvcc)) == listed and "7.5" in listed and "6.0" not in listed


def test_major_mismatch_is_an_error(cu130_env, real_trees, tmp_path):
    f = check(cu130_env, real_trees / "cuda-12.9", {"PATH": "/usr/bin:/bin"})
    assert f["BUILD_TOOLKIT_MAJOR"].severity == "error"
    assert "CUDA 13.0" in f["BUILD_TOOLKIT_MAJOR"].cause and "12.9.1" in f["BUILD_TOOLKIT_MAJOR"].cause


def test_minor_mismatch_is_a_warning_and_the_real_gcc_passes(cu132_env, toolkit_13_0):
    require_tool("c++")
    f = check(cu132_env, toolkit_13_0, {"PATH": os.environ["PATH"]})
    assert f["BUILD_TOOLKIT_MINOR"].severity == "warning" and "13.2" in f["BUILD_TOOLKIT_MINOR"].cause
    assert "BUILD_TOOLKIT_MAJOR" not in f
    assert "HOST_COMPILER_TOO_NEW" not in f and "HOST_COMPILER_TOO_OLD" not in f  # Debian's g++ 12


def test_gcc_newer_than_nvcc_accepts(cu130_env, toolkit_13_0, tmp_path):
    cxx = fake_compiler(tmp_path, "g++ (GCC) 16.1.1 20260507 (Red Hat 16.1.1-1)\nCopyright (C) 2026 Free Software "
                                  "Foundation, Inc.")
    f = check(cu130_env, toolkit_13_0, {"PATH": "/usr/bin:/bin", "CXX": cxx})
    assert "GCC 16.1.1" in f["HOST_COMPILER_TOO_NEW"].cause and "GCC <= 15" in f["HOST_COMPILER_TOO_NEW"].cause
    assert "host_config.h" in f["HOST_COMPILER_TOO_NEW"].cause


def test_gcc_older_than_torchs_cpp_standard(cu130_env, toolkit_13_0, tmp_path):
    cxx = fake_compiler(tmp_path, "g++ (Ubuntu 9.4.0-1ubuntu1~20.04.2) 9.4.0")
    f = check(cu130_env, toolkit_13_0, {"PATH": "/usr/bin:/bin", "CXX": cxx})
    assert "C++20" in f["HOST_COMPILER_TOO_OLD"].cause and "from 10" in f["HOST_COMPILER_TOO_OLD"].cause


def test_cl_exe_newer_than_nvcc_accepts(cu130_env, toolkit_13_0, tmp_path):
    banner = "Microsoft (R) C/C++ Optimizing Compiler Version 19.50.35717 for x64\nCopyright (C) Microsoft Corporation."

    def run(cmd, timeout=None, env=None):
        return subprocess.CompletedProcess(cmd, 0, "", banner)

    system = System(os="linux", environ={"CUDA_HOME": str(toolkit_13_0), "CUDASWITCH_SEARCH_PATH": str(toolkit_13_0),
                                         "PATH": "/usr/bin"})
    tks = discover(system).toolkits
    (tmp_path / "C" / "VS").mkdir(parents=True)
    (tmp_path / "C" / "VS" / "cl.exe").write_bytes(b"MZ")  # on PATH, as in a Native Tools prompt; run gives its banner
    win = System(os="windows", environ={"PATH": "C:\\VS"}, root=tmp_path, run=run)
    sel = next(t for t in tks if t.root == str(toolkit_13_0))
    f = codes(build_findings(torch_installs(str(cu130_env)), tks, win, None, selected=sel))
    assert "_MSC_VER 1950" in f["HOST_COMPILER_TOO_NEW"].cause and "< 1950" in f["HOST_COMPILER_TOO_NEW"].cause


def test_arch_list_names_unsupported_and_misses_the_gpu(cu130_env, toolkit_13_0):
    f = check(cu130_env, toolkit_13_0, {"PATH": "/usr/bin:/bin", "TORCH_CUDA_ARCH_LIST": "6.0;8.0 8.6"},
              gpu_capability="9.0")
    assert "names 6.0" in f["ARCH_LIST_UNSUPPORTED"].cause and "7.5" in f["ARCH_LIST_UNSUPPORTED"].cause
    assert "compute capability 9.0" in f["ARCH_LIST_MISSES_GPU"].cause
    f = check(cu130_env, toolkit_13_0, {"PATH": "/usr/bin:/bin", "TORCH_CUDA_ARCH_LIST": "8.0+PTX"},
              gpu_capability="9.0")
    assert "ARCH_LIST_MISSES_GPU" not in f and "ARCH_LIST_UNSUPPORTED" not in f
    f = check(cu130_env, toolkit_13_0, {"PATH": "/usr/bin:/bin", "TORCH_CUDA_ARCH_LIST": "Hopper"},
              gpu_capability="9.0")
    assert "ARCH_LIST_MISSES_GPU" not in f and "ARCH_LIST_UNSUPPORTED" not in f
    assert parse_arch_list("8.0;8.6+PTX Ada") == [("8.0", "8.0"), ("8.6+PTX", "8.6"), ("Ada", "8.9")]


def test_ninja_missing_and_found_in_the_env(cu130_env, toolkit_13_0, tmp_path):
    ninja = require_tool("ninja")
    f = check(cu130_env, toolkit_13_0, {"PATH": str(tmp_path)})
    assert f["NINJA_MISSING"].severity == "info"
    f = check(cu130_env, toolkit_13_0, {"PATH": os.path.dirname(ninja)})
    assert "NINJA_MISSING" not in f


def test_cpu_torch_gets_no_build_findings(toolkit_13_0, tmp_path, torch_env):
    assert check(torch_env, toolkit_13_0, {"PATH": str(tmp_path)}) == {}


def test_doctor_cli_names_each_with_a_fix(cu130_env, real_trees, toolkit_13_0, clean_env):
    env = dict(clean_env, CUDA_HOME=str(real_trees / "cuda-12.9"))
    r = run_cli(["doctor", "--json", "-p", str(cu130_env)], env=env)
    found = {f["code"]: f for f in json.loads(r.stdout)["findings"]}
    assert r.returncode == 1
    assert found["BUILD_TOOLKIT_MAJOR"]["fix"].startswith("`cudaswitch use auto`")
    env = dict(clean_env, CUDA_HOME=str(toolkit_13_0), TORCH_CUDA_ARCH_LIST="3.5;8.0")
    r = run_cli(["doctor", "-p", str(cu130_env)], env=env)
    assert "ARCH_LIST_UNSUPPORTED: TORCH_CUDA_ARCH_LIST names 3.5" in r.stdout
    assert "fix: drop it from TORCH_CUDA_ARCH_LIST" in r.stdout and "BUILD_TOOLKIT" not in r.stdout
