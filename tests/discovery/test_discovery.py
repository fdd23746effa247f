"""Toolkit discovery against trees built from real NVIDIA files, and synthetic trees for what no wheel carries."""

import json
import os
import shutil
from pathlib import Path

import pytest

import cudatrees
from conftest import make_env
import nvidia_wheels as nw
from cudaswitch.core.system import System
from cudaswitch.discovery.toolkits import discover

REAL_CUDA = Path("/usr/local/cuda-13.0")


class Recorder:
    """A subprocess runner that records every call (to prove no nvcc is spawned) and runs it for real."""

    def __init__(self):
        self.calls = []

    def __call__(self, args, timeout=20.0, env=None):
        from cudaswitch.core.system import run_subprocess

        self.calls.append(list(args))
        return run_subprocess(args, timeout=timeout, env=env)


def linux(tmp_path, search=(), environ=None, root=None, run=None, python_paths=()):
    env = {"PATH": "/usr/bin:/bin", "CUDASWITCH_CONFIG": str(tmp_path / "none.yaml")}
    env["CUDASWITCH_SEARCH_PATH"] = os.pathsep.join(str(s) for s in search)
    env.update(environ or {})
    return System(os="linux", environ=env, root=root, run=run or Recorder(), python_paths=list(python_paths))


def mine(found, base):
    """Toolkits under `base` only: the machine's own /usr/local/cuda must not disturb these tests."""
    return [t for t in found.toolkits if t.root.startswith(str(base))]


def test_real_wheel_trees_exact_versions_without_spawning(real_trees, tmp_path):
    system = linux(tmp_path, search=[real_trees])
    found = discover(system)
    tks = {t.version: t for t in mine(found, real_trees)}
    assert set(tks) == {"11.8.89", "12.9.1"}
    cu11, cu12 = tks["11.8.89"], tks["12.9.1"]
    # 11.8's version.json carries a build date in cuda.version: the exact patch comes from cuda_nvcc.
    assert cu11.version_source == "version.json" and (cu11.cuda.major, cu11.cuda.minor, cu11.cuda.patch) == (11, 8, 89)
    assert cu11.lib_dirs == [str(real_trees / "cuda-11.8" / "lib64")]
    assert (Path(cu11.lib_dirs[0]) / "libcudart.so.11.0").is_file()
    assert cu11.include_dir == str(real_trees / "cuda-11.8" / "include")
    assert cu11.nvcc is None and {"no-nvcc", "runtime-only"} <= set(cu11.flags)
    assert cu12.nvcc == str(real_trees / "cuda-12.9" / "bin" / "nvcc") and cu12.flags == []
    assert cu12.bin_dirs == [str(real_trees / "cuda-12.9" / "bin")]
    assert all(t.sources == ["search path"] for t in tks.values())
    nvcc_calls = [c for c in system.run.calls if any("nvcc" in a or "ptxas" in a for a in c)]
    assert nvcc_calls == [], "a version file exists, so nvcc must not run"


def test_nvcc_is_the_last_resort_and_parsed_from_real_output(tmp_path):
    root = tmp_path / "cuda-nofiles"
    (root / "bin").mkdir(parents=True)
    ptxas = nw.extracted(nw.CUDA_NVCC_CU12) / "nvidia" / "cuda_nvcc" / "bin" / "ptxas"
    os.symlink(ptxas, root / "bin" / "nvcc")  # real binary printing 'release 12.9, V12.9.86'
    system = linux(tmp_path, search=[root])
    (tk,) = mine(discover(system), tmp_path)
    assert tk.version == "12.9.86" and tk.version_source == "nvcc"
    assert len(system.run.calls) == 1


@pytest.mark.skipif(not (REAL_CUDA / "bin" / "nvcc").exists(), reason="no real CUDA 13.0 on this machine")
def test_real_nvcc_output(tmp_path):
    root = tmp_path / "nvcc-only"
    (root / "bin").mkdir(parents=True)
    os.symlink(REAL_CUDA / "bin" / "nvcc", root / "bin" / "nvcc")
    (tk,) = mine(discover(linux(tmp_path, search=[root])), tmp_path)
    assert tk.version_source == "nvcc" and tk.cuda.major == 13 and tk.cuda.patch is not None


def test_version_sources_in_documented_order(tmp_path):
    root = cudatrees.cuda_12_9(tmp_path / "cuda-12.9")
    (root / "version.json").unlink()
    site = nw.extracted(nw.CUDA_NVCC_CU12)
    info = next(site.glob("nvidia_cuda_nvcc_cu12-*.dist-info"))
    shutil.copytree(info, root / "dist-info" / info.name)
    (tk,) = mine(discover(linux(tmp_path, search=[root])), tmp_path)
    assert (tk.version, tk.version_source) == ("12.9.86", "dist-info")
    shutil.rmtree(root / "dist-info")
    (tk,) = mine(discover(linux(tmp_path, search=[root])), tmp_path)
    assert (tk.version, tk.version_source) == ("12.9", "cuda.h")  # real cuda.h: CUDA_VERSION 12090
    (root / "version.txt").write_text("CUDA Version 12.9.41\n")
    (tk,) = mine(discover(linux(tmp_path, search=[root])), tmp_path)
    assert (tk.version, tk.version_source) == ("12.9.41", "version.txt")


def test_cuda_10_2_version_txt(tmp_path):
    root = cudatrees.cuda_10_2(tmp_path / "cuda-10.2")
    (tk,) = mine(discover(linux(tmp_path, search=[root])), tmp_path)
    assert (tk.version, tk.version_source) == ("10.2.89", "version.txt")


def test_misnamed_folder_reports_the_real_version(tmp_path):
    root = cudatrees.cuda_11_8(tmp_path / "cuda-11.3")
    found = discover(linux(tmp_path, search=[root]))
    (tk,) = mine(found, tmp_path)
    assert tk.version == "11.8.89" and "misnamed" in tk.flags
    assert any("cuda-11.3" in w and "11.3" in w and "11.8.89" in w for w in found.warnings)


def test_unreadable_version_json_falls_back_and_names_the_file(tmp_path):
    root = cudatrees.cuda_11_8(tmp_path / "cuda-11.8")
    (root / "version.json").write_text('{"cuda": {"version": ')
    found = discover(linux(tmp_path, search=[root]))
    (tk,) = mine(found, tmp_path)
    assert (tk.version, tk.version_source) == ("11.8", "cuda.h")
    assert any(str(root / "version.json") in w and "not valid JSON" in w for w in found.warnings)


def test_usr_local_symlink_is_an_alias_and_broken_links_are_reported(tmp_path):
    fs = tmp_path / "fs"
    local = fs / "usr" / "local"
    cudatrees.cuda_12_9(local / "cuda-12.9")
    os.symlink("cuda-12.9", local / "cuda")
    os.symlink("/nonexistent/cuda-11.0", local / "cuda-11.0")
    system = linux(tmp_path, root=fs, environ={"CUDA_HOME": "/usr/local/cuda"})
    found = discover(system)
    assert [t.root for t in found.toolkits] == ["/usr/local/cuda-12.9"]
    tk = found.toolkits[0]
    assert tk.aliases == ["/usr/local/cuda"]
    assert set(tk.sources) == {"CUDA_HOME", "/usr/local"}
    assert any("/usr/local/cuda-11.0" in w and "broken symlink" in w for w in found.warnings)


def test_broken_lib64_link_flags_incomplete_install(tmp_path):
    root = cudatrees.cuda_12_9(tmp_path / "cuda-12.9")
    shutil.rmtree(root / "targets" / "x86_64-linux" / "lib")
    (tk,) = mine(discover(linux(tmp_path, search=[root])), tmp_path)
    assert "broken-symlink" in tk.flags


def test_dangling_nvcc_link_is_named_and_the_version_file_still_answers(tmp_path):
    root = cudatrees.cuda_12_9(tmp_path / "cuda-12.9")
    (root / "bin" / "nvcc").unlink()
    os.symlink("/nonexistent/nvcc", root / "bin" / "nvcc")
    found = discover(linux(tmp_path, search=[root]))
    (tk,) = mine(found, tmp_path)
    assert (tk.version_source, tk.nvcc) == ("version.json", None) and "broken-symlink" in tk.flags
    assert any("broken symlink(s) bin/nvcc;" in w for w in map(str, found.warnings)), found.warnings


def test_fifo_in_place_of_version_json_is_named_as_the_user_sees_it_and_version_txt_answers(tmp_path):
    fs = tmp_path / "fs"
    root = cudatrees.cuda_10_2(fs / "usr" / "local" / "cuda-10.2")
    os.mkfifo(root / "version.json")  # opening it would block every `list`
    found = discover(linux(tmp_path, root=fs))
    (tk,) = found.toolkits
    assert (tk.version, tk.version_source) == ("10.2.89", "version.txt")
    assert "/usr/local/cuda-10.2/version.json: not a regular file (a FIFO or device); not read" in \
        map(str, found.warnings), found.warnings


def test_usr_local_itself_is_never_a_toolkit(tmp_path):
    """The wrapper /usr/local/bin/nvcc ('exec /usr/local/cuda-X/bin/nvcc "$@"') maps to the real toolkit."""
    fs = tmp_path / "fs"
    cudatrees.cuda_12_9(fs / "usr" / "local" / "cuda-12.9")
    (fs / "usr" / "local" / "bin").mkdir()
    (fs / "usr" / "local" / "include").mkdir()
    wrapper = fs / "usr" / "local" / "bin" / "nvcc"
    wrapper.write_text('#!/bin/sh\nexec /usr/local/cuda-12.9/bin/nvcc "$@"\n')
    wrapper.chmod(0o755)
    found = discover(linux(tmp_path, root=fs, environ={"PATH": "/usr/local/bin:/usr/bin"}))
    assert [t.root for t in found.toolkits] == ["/usr/local/cuda-12.9"]
    assert "nvcc on PATH" in found.toolkits[0].sources


def test_debian_package_layout(tmp_path):
    fs = tmp_path / "fs"
    bin_dir = fs / "usr" / "lib" / "nvidia-cuda-toolkit" / "bin"
    bin_dir.mkdir(parents=True)
    shutil.copy(nw.extracted(nw.CUDA_NVCC_CU12) / "nvidia" / "cuda_nvcc" / "bin" / "ptxas", bin_dir / "nvcc")
    (fs / "usr" / "lib" / "x86_64-linux-gnu").mkdir(parents=True)
    (fs / "usr" / "include").mkdir(parents=True)
    shutil.copy(nw.extracted(nw.CUDA_RUNTIME_CU12) / "nvidia" / "cuda_runtime" / "include" / "cuda.h", fs / "usr" / "include")
    (tk,) = discover(linux(tmp_path, root=fs)).toolkits
    assert tk.kind == "debian" and tk.root == "/usr/lib/nvidia-cuda-toolkit"
    assert tk.include_dir == "/usr/include" and tk.version == "12.9"
    assert tk.lib_dirs == ["/usr/lib/x86_64-linux-gnu"]


def test_conda_prefix_with_targets_layout(tmp_path):
    prefix = tmp_path / "envs" / "cu"
    target = prefix / "targets" / "x86_64-linux"
    shutil.copytree(nw.extracted(nw.CUDA_RUNTIME_CU12) / "nvidia" / "cuda_runtime" / "include", target / "include")
    (target / "lib").mkdir()
    (prefix / "bin").mkdir()
    (prefix / "bin" / "nvcc").write_text("#!/bin/sh\n")
    (prefix / "bin" / "nvcc").chmod(0o755)
    make_env(prefix, history=None, packages=["cuda-nvcc-12.9.86-0"])
    (tk,) = mine(discover(linux(tmp_path, environ={"CONDA_PREFIX": str(prefix)})), tmp_path)
    assert (tk.kind, tk.version, tk.version_source) == ("conda", "12.9.86", "conda-meta")
    assert tk.lib_dirs == [str(target / "lib")] and tk.nvcc == str(prefix / "bin" / "nvcc")


def test_pip_wheels_cu12_and_cu13(tmp_path):
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    src = nw.extracted(nw.CUDA_RUNTIME_CU12)
    shutil.copytree(src, site)
    cu13 = site / "nvidia" / "cu13"
    for d in ("bin", "lib", "include"):
        (cu13 / d).mkdir(parents=True)
    (cu13 / "lib" / "libcudart.so.13").write_bytes(b"\x7fELF")
    (site / "nvidia_cuda_runtime-13.0.96.dist-info").mkdir()
    found = discover(linux(tmp_path, python_paths=[str(site)]))
    tks = {t.version: t for t in mine(found, tmp_path)}
    assert set(tks) == {"12.9.79", "13.0.96"}
    assert tks["12.9.79"].kind == "pip-wheels" and "runtime-only" in tks["12.9.79"].flags
    assert tks["12.9.79"].lib_dirs == [str(site / "nvidia" / "cuda_runtime" / "lib")]
    assert tks["13.0.96"].root == str(cu13)


def test_same_toolkit_from_several_sources_is_merged(real_trees, tmp_path):
    root = real_trees / "cuda-12.9"
    env = {"CUDA_HOME": str(root), "CUDA_PATH": str(root) + "/", "PATH": f"{root}/bin:/usr/bin"}
    found = discover(linux(tmp_path, search=[real_trees], environ=env))
    (tk,) = [t for t in mine(found, real_trees) if t.cuda.major == 12]
    assert set(tk.sources) == {"search path", "CUDA_HOME", "CUDA_PATH", "nvcc on PATH"}


def test_cudnn_in_toolkit_is_reported(tmp_path):
    root = cudatrees.cuda_12_9(tmp_path / "cuda-12.9")
    (root / "include" / "cudnn_version.h").write_text(
        "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 10\n#define CUDNN_PATCHLEVEL 2\n")
    (tk,) = mine(discover(linux(tmp_path, search=[root])), tmp_path)
    assert tk.cudnn == "9.10.2"


# ---- Windows, driven on Linux through an injected root, environment and registry --------------------------------

PF = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA"


def windows(tmp_path, environ=None, registry=()):
    env = {"ProgramFiles": r"C:\Program Files", "PATH": r"C:\Windows\system32",
           "CUDASWITCH_CONFIG": str(tmp_path / "none.yaml")}
    env.update(environ or {})
    return System(os="windows", environ=env, root=tmp_path / "drives", registry=lambda: list(registry),
                  run=Recorder(), python_paths=[])


def test_windows_program_files_env_vars_and_registry(tmp_path):
    drives = tmp_path / "drives"
    cudatrees.windows_toolkit(drives, "11.3")
    cudatrees.windows_toolkit(drives, "11.8")
    cudatrees.windows_toolkit(drives, "13.0.2", cuda13=True)
    other = cudatrees.windows_toolkit(drives, "12.1", folder="v12.1")
    # Registry InstallDir pointing somewhere else (D:\) than Program Files: only the registry knows it.
    d_root = drives / "D" / "CUDA" / "v12.1"
    d_root.parent.mkdir(parents=True)
    shutil.move(str(other), str(d_root))
    system = windows(tmp_path, environ={"CUDA_PATH_V11_3": PF + r"\v11.3", "CUDA_PATH_V11_8": PF + r"\v11.8",
                                        "CUDA_PATH": PF + r"\v11.8"},
                     registry=[("v12.1", "D:\\CUDA\\v12.1\\"), ("v11.3", PF + r"\v11.3")])
    found = discover(system)
    tks = {t.version: t for t in found.toolkits}
    assert set(tks) == {"11.3.0", "11.8.0", "12.1.0", "13.0.2"}
    assert tks["11.3.0"].root == PF + r"\v11.3"
    assert set(tks["11.3.0"].sources) == {"Program Files", "CUDA_PATH_V11_3", "registry v11.3"}
    assert set(tks["11.8.0"].sources) == {"Program Files", "CUDA_PATH_V11_8", "CUDA_PATH"}
    assert tks["12.1.0"].root == r"D:\CUDA\v12.1" and tks["12.1.0"].sources == ["registry v12.1"]
    assert tks["11.3.0"].bin_dirs == [PF + r"\v11.3\bin", PF + r"\v11.3\libnvvp"]
    assert tks["11.3.0"].lib_dirs == [PF + r"\v11.3\lib\x64"]
    assert tks["11.3.0"].nvcc == PF + r"\v11.3\bin\nvcc.exe"
    # CUDA 13 moved the runtime DLLs to bin\x64 (sources.csv S3).
    assert tks["13.0.2"].bin_dirs == [PF + r"\v13.0\bin", PF + r"\v13.0\bin\x64"]
    assert tks["13.0.2"].lib_dirs == [PF + r"\v13.0\lib\x64", PF + r"\v13.0\bin\x64"]
    assert found.warnings == []


def test_windows_conda_library_prefix(tmp_path):
    prefix = r"C:\Users\me\miniconda3\envs\torch"
    local = tmp_path / "drives" / "C" / "Users" / "me" / "miniconda3" / "envs" / "torch"
    (local / "Library" / "bin").mkdir(parents=True)
    (local / "Library" / "include").mkdir()
    (local / "Library" / "lib").mkdir()
    (local / "Library" / "bin" / "nvcc.exe").write_bytes(b"MZ")
    make_env(local, history=None, packages=["cuda-nvcc-12.4.131-0"])
    (tk,) = discover(windows(tmp_path, environ={"CONDA_PREFIX": prefix})).toolkits
    assert tk.kind == "conda" and tk.version == "12.4.131"
    assert tk.nvcc == prefix + r"\Library\bin\nvcc.exe" and tk.lib_dirs == [prefix + r"\Library\lib"]


def test_windows_missing_cuda_path_is_reported(tmp_path):
    cudatrees.windows_toolkit(tmp_path / "drives", "11.8")
    found = discover(windows(tmp_path, environ={"CUDA_PATH_V11_3": PF + r"\v11.3"}))
    assert [t.version for t in found.toolkits] == ["11.8.0"]
    assert any(r"v11.3" in w and "CUDA_PATH_V11_3" in w for w in found.warnings)


# ---- the machine's own toolkit ------------------------------------------------------------------------------------

@pytest.mark.this_machine
@pytest.mark.skipif(not REAL_CUDA.is_dir(), reason="no /usr/local/cuda-13.0 on this machine")
def test_real_cuda_13_assembled_from_wheels(clean_env):
    from conftest import run_cli

    env = dict(clean_env, PATH="/usr/local/bin:/usr/bin:/bin")
    out = run_cli(["list", "--json"], env=env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    # the one at REAL_CUDA, whatever else the machine has beside it (.ci/gpu-workstation adds 11.8 and 12.4)
    (tk,) = [t for t in data["toolkits"] if t["root"] == str(REAL_CUDA)]
    aliases = ["/usr/local/cuda"] if os.path.realpath("/usr/local/cuda") == str(REAL_CUDA) else []
    nvcc_info = sorted((REAL_CUDA / "dist-info").glob("nvidia_cuda_nvcc-*.dist-info"))
    expected = nvcc_info[-1].name.split("-")[1][: -len(".dist")] if nvcc_info else None
    assert tk["aliases"] == aliases
    assert tk["major"] == 13 and tk["minor"] == 0 and tk["version"] == expected
    assert tk["version_source"] == "dist-info" and tk["active"] is True
    assert "nvcc on PATH" in tk["sources"]
    status = run_cli(["status", "--json"], env=env)
    shell = json.loads(status.stdout)["shell"]
    nvcc = next(e for e in shell["entries"] if e["variable"] == "nvcc")
    assert nvcc["value"] == "/usr/local/bin/nvcc" and nvcc["toolkit_root"] == str(REAL_CUDA)


def test_conda_envs_from_environments_txt_and_envs_without_cuda(tmp_path):
    home = tmp_path / "home"
    with_cuda = tmp_path / "envs" / "cu"
    cudatrees.cuda_12_9(with_cuda)  # targets/x86_64-linux layout, as conda-forge's cuda-* packages lay it out
    make_env(with_cuda, history=None)
    plain = tmp_path / "envs" / "plain"
    (plain / "bin").mkdir(parents=True)
    make_env(plain, history=None, packages=["cuda-version-12.1-h1"])  # a pin, no toolkit
    (home / ".conda").mkdir(parents=True)
    (home / ".conda" / "environments.txt").write_text(f"{with_cuda}\n{plain}\n")
    found = discover(linux(tmp_path, environ={"HOME": str(home)}))
    assert [(t.root, t.kind) for t in mine(found, tmp_path)] == [(str(with_cuda), "conda")]
    assert found.warnings == []
