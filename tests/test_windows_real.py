"""Windows with NVIDIA's real files: the win_amd64 wheels' nvcc.exe, cudart64_*.dll, cuDNN 9 DLLs and cuDNN 8.9
files, in the layouts NVIDIA's installers and zips leave (tests/cudatrees.py and tests/nvidia_wheels.py say which
file comes from which wheel), read under CUDASWITCH_OS=windows; and the Windows cuDNN load check run under wine with
a mingw-built loader.

Real and synthetic here: every exe, header and cuDNN 8 import library, and every DLL a test loads or reads, is
NVIDIA's own file. Synthetic: cuDNN 9's .lib import libraries (installer layout, 9.10 zip; no wheel carries them),
and the five cuDNN 8 sub-library DLLs cudnnGetVersion never opens (the wheels have them, at 53-351 MB compressed
each; the 8.9 zips hold small stand-ins with the real names).
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cudatrees
import nvidia_wheels as nw
from conftest import require_tool, run_cli
from cudaswitch.cudnn import install as ci
from cudaswitch.core import pe
from cudaswitch.core import versions
from cudaswitch.core.system import System
from cudaswitch.discovery.toolkits import discover

HERE = Path(__file__).parent


def no_process(*args, **kw):
    raise AssertionError(f"discovery spawned a process: {args}")


def win_system(root, path="", run=no_process, python_paths=(), **environ):
    env = {"PATH": path, "CUDASWITCH_CONFIG": str(root / "none.yaml"), **environ}
    return System(os="windows", environ=env, root=root, run=run, python_paths=list(python_paths))


@pytest.fixture(scope="module")
def drive(tmp_path_factory):
    """A C: drive with CUDA 11.8, 12.9 and 13.0 from the real wheels, and cuDNN 9.10 from NVIDIA's exe installer."""
    root = tmp_path_factory.mktemp("drive")
    for v in ("11.8", "12.9", "13.0"):
        cudatrees.windows_real_toolkit(root, v)
    cudatrees.windows_cudnn_installer(root, cuda="12.9", x64=True)
    return root


# ---- versions from the PE version resource --------------------------------------------------------------------

@pytest.mark.parametrize("spec,rel,cuda", [
    (nw.WIN_CUDA_NVCC_13, "nvidia/cu13/bin/nvcc.exe", "13.0.88"),
    (nw.WIN_CUDA_RUNTIME_CU12, "nvidia/cuda_runtime/bin/cudart64_12.dll", "12.9.79"),
    (nw.WIN_CUDA_RUNTIME_CU11, "nvidia/cuda_runtime/bin/cudart64_110.dll", "11.8.89"),
])
def test_cuda_version_read_from_real_nvidia_binaries(spec, rel, cuda):
    path = nw.extracted(spec, nw.WIN) / rel
    assert str(versions.from_pe(path)) == cuda
    info = pe.read_version_info(path)
    # the fixed FileVersion is a driver-style number, not the CUDA release: only the strings name it
    assert info.file_version[:3] == (6, 14, 11) and info.strings["CompanyName"] == "NVIDIA Corporation"


def test_cudnn_version_read_from_real_dll():
    dll = cudatrees.win_cudnn_bin() / "cudnn64_9.dll"
    assert versions.cudnn_from_pe(dll) == "9.10.2"
    assert pe.read_version_info(dll).strings["FileVersion"] == "9.10.2.21"


@pytest.mark.parametrize("spec,version", [(nw.WIN_CUDNN_8_CU11, "8.9.5"), (nw.WIN_CUDNN_8_CU12, "8.9.7")])
def test_cudnn_8_version_read_from_real_dll_and_header(spec, version):
    files = nw.win_cudnn_8(spec)
    dll = files / "bin" / "cudnn64_8.dll"
    assert versions.cudnn_from_pe(dll) == version and pe.read_version_info(dll).strings["FileVersion"] == version + ".29"
    assert versions.cudnn_version_in(files / "include") == version


def test_files_that_are_not_pe_or_carry_no_version():
    query = nw.extracted(nw.WIN_CUDA_NVCC_13, nw.WIN) / "nvidia/cu13/bin/__nvcc_device_query.exe"
    assert pe.is_pe(query) and pe.read_version_info(query) is None  # a real exe without a version resource
    elf = nw.extracted(nw.CUDA_RUNTIME_CU12) / "nvidia/cuda_runtime/lib/libcudart.so.12"
    assert not pe.is_pe(elf) and pe.read_version_info(elf) is None and versions.from_pe(elf) is None


def test_truncated_dll_is_a_readable_error(tmp_path):
    real = (nw.extracted(nw.WIN_CUDA_RUNTIME_CU12, nw.WIN) / "nvidia/cuda_runtime/bin/cudart64_12.dll").read_bytes()
    cut = tmp_path / "cudart64_12.dll"
    cut.write_bytes(real[:len(real) // 2])  # the resource section is at the end
    with pytest.raises(versions.VersionFileError, match="damaged Windows binary"):
        versions.from_pe(cut)


_CUDART = None


def _cudart_bytes() -> bytes:
    global _CUDART
    if _CUDART is None:
        _CUDART = (nw.extracted(nw.WIN_CUDA_RUNTIME_CU11, nw.WIN) / "nvidia/cuda_runtime/bin/cudart64_110.dll"
                   ).read_bytes()
    return _CUDART


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 1023), st.integers(0, 255)), min_size=1, max_size=8),
       st.sampled_from(["headers", "resources"]))
def test_corrupted_headers_never_crash_the_reader(tmp_path, edits, region):
    """Whatever bytes a damaged download holds, the reader answers None, a version, or PEError: never another
    exception (discovery turns PEError into a warning naming the file)."""
    data = bytearray(_cudart_bytes())
    base = 0 if region == "headers" else len(data) - 4096
    for off, val in edits:
        data[base + off * (4 if region == "resources" else 1)] = val
    f = tmp_path / "x.dll"
    f.write_bytes(bytes(data))
    try:
        pe.read_version_info(f)
    except pe.PEError:
        pass


# ---- discovery on the real Windows files --------------------------------------------------------------------

def test_versions_come_from_the_binaries_without_a_process(drive):
    found = discover(win_system(drive))
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
    found = discover(win_system(tmp_path))
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
    (tk,) = discover(win_system(tmp_path)).toolkits
    assert (tk.version, tk.version_source) == ("12.9.1", "version.json")


def test_pip_wheel_env_shows_the_cudnn_wheel_version(tmp_path):
    """Windows env with nvidia-cuda-runtime-cu11 and nvidia-cudnn-cu11 (real win_amd64 wheels) in site-packages."""
    site = tmp_path / "C" / "envs" / "torch" / "Lib" / "site-packages"
    for spec in (nw.WIN_CUDA_RUNTIME_CU11, nw.WIN_CUDNN_9):
        cudatrees._copytree(nw.extracted(spec, nw.WIN), site)
    found = discover(win_system(tmp_path, python_paths=[r"C:\envs\torch\Lib\site-packages"]))
    (tk,) = [t for t in found.toolkits if t.kind == "pip-wheels"]
    assert (tk.version, tk.cudnn) == ("11.8.89", "9.10.2.21")


def test_pip_wheel_env_linux_cudnn_column(tmp_path):
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    for spec in (nw.CUDA_RUNTIME_CU12, nw.CUDNN_CU12):
        cudatrees._copytree(nw.extracted(spec), site)
    env = {"PATH": "/usr/bin:/bin", "CUDASWITCH_CONFIG": str(tmp_path / "none.yaml")}
    found = discover(System(os="linux", environ=env, run=no_process, python_paths=[str(site)]))
    (tk,) = [t for t in found.toolkits if t.kind == "pip-wheels" and t.root.startswith(str(tmp_path))]
    assert (tk.version, tk.cudnn) == ("12.9.79", "9.10.2.21")


# ---- cuDNN 8.9 copied into the toolkit (what NVIDIA's 8.x guide told users to do) -----------------------------

def cudnn_8_into_toolkit(root: Path, spec: str, load: bool = False, parts=("bin", "include", "lib/x64")) -> Path:
    """The real cuDNN 8.9 members copied into a toolkit's bin, include and lib\\x64 (nvidia_wheels.win_cudnn_8)."""
    files = nw.win_cudnn_8(spec, load=load)
    for part in parts:
        cudatrees._copytree(files / part, root / part)
    return root


@pytest.fixture(scope="module")
def drive8(tmp_path_factory):
    """C: with CUDA 11.8 + cuDNN 8.9.5 and CUDA 12.9 + cuDNN 8.9.7 (real files, copied into the toolkits), CUDA 13.0,
    and cuDNN 9.10 from NVIDIA's exe installer."""
    root = tmp_path_factory.mktemp("drive8")
    cudnn_8_into_toolkit(cudatrees.windows_real_toolkit(root, "11.8"), nw.WIN_CUDNN_8_CU11)
    cudnn_8_into_toolkit(cudatrees.windows_real_toolkit(root, "12.9"), nw.WIN_CUDNN_8_CU12)
    cudatrees.windows_real_toolkit(root, "13.0")
    cudatrees.windows_cudnn_installer(root, cuda="12.9", x64=True)
    return root


def test_toolkit_cudnn_8_versions_without_a_process(drive8):
    found = discover(win_system(drive8))  # run=no_process: any spawn fails the test
    got = {t.root.rsplit("\\", 1)[-1]: (t.version, t.cudnn) for t in found.toolkits}
    assert got == {"v11.8": ("11.8.89", "8.9.5"), "v12.9": ("12.9.79", "8.9.7"), "v13.0": ("13.0.88", None)}
    assert [c.version for c in found.cudnn_installs] == ["9.10.2"] and found.warnings == []


def test_toolkit_with_only_the_cudnn_dll_copied_in(tmp_path):
    """Many setup guides say: copy cudnn64_8.dll into CUDA's bin. No header then: the version comes from the real
    DLL's version resource, and nothing is run."""
    cudnn_8_into_toolkit(cudatrees.windows_real_toolkit(tmp_path, "11.8"), nw.WIN_CUDNN_8_CU11, parts=("bin",))
    (tk,) = discover(win_system(tmp_path)).toolkits
    assert (tk.version, tk.cudnn) == ("11.8.89", "8.9.5")


def test_list_and_status_spawn_no_process_on_the_real_windows_files(drive8, clean_env, tmp_path):
    """The whole CLI, not only discover(): `list --json` and `status --json` on the real Windows files (three
    toolkits read from their PE resources, cuDNN 8 from headers, the installer's cuDNN 9) start no process: strace
    sees one execve, Python itself, and no fork or non-thread clone."""
    import re

    strace = require_tool("strace")
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(drive8), CUDASWITCH_OS="windows",
               PATH=r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.9\bin;C:\Windows\System32")
    env["PYTHONPATH"] = str(HERE.parent)
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


def test_doctor_names_cudnn64_8_for_a_toolkit_with_cudnn_8(tmp_path, clean_env):
    drive = tmp_path / "drive"
    cudnn_8_into_toolkit(cudatrees.windows_real_toolkit(drive, "11.8"), nw.WIN_CUDNN_8_CU11)
    codes = _doctor_codes(drive, r"C:\Windows\System32", clean_env)
    fix = codes["CUDNN_NOT_ON_PATH"]["fix"]
    assert "cudnn64_8.dll" in fix and "cudnn64_9.dll" not in fix
    assert r"CUDA\v11.8\bin (cuDNN 8.9.5)" in fix
    on_path = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.8\bin"
    assert "CUDNN_NOT_ON_PATH" not in _doctor_codes(drive, on_path, clean_env)
    st_ = _cli(["status"], drive, on_path, clean_env).stdout
    assert f"cuDNN on PATH: {on_path}\\cudnn64_8.dll" in st_


@pytest.mark.parametrize("spec,cuda,version", [(nw.WIN_CUDNN_8_CU11, "11.8", "8.9.5"),
                                               (nw.WIN_CUDNN_8_CU12, "12.9", "8.9.7")])
def test_real_cudnn_8_zip_installs_and_undoes_byte_identically(tmp_path, clean_env, spec, cuda, version):
    """NVIDIA's cuDNN 8.9 zip layout built from the real files (tests/cudnn_archives.real_windows_8_zip) into the
    real-file toolkit for its CUDA: files land in bin, include and lib\\x64; list reads the version back; undo
    leaves the drive byte for byte as it was."""
    import cudnn_archives as ca

    drive = tmp_path / "drive"
    root = cudatrees.windows_real_toolkit(drive, cuda)
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(drive), CUDASWITCH_OS="windows")

    def snap():
        return {str(p.relative_to(drive)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
                for p in sorted(drive.rglob("*"))}

    before = snap()
    out = run_cli(["install-cudnn", str(ca.real_windows_8_zip(spec)), "--cuda", cuda], env=env)
    assert out.returncode == 0, out.stderr
    real = nw.win_cudnn_8(spec)
    assert (root / "bin" / "cudnn64_8.dll").read_bytes() == (real / "bin" / "cudnn64_8.dll").read_bytes()
    assert (root / "lib" / "x64" / "cudnn_cnn_infer64_8.lib").read_bytes() == \
        (real / "lib" / "x64" / "cudnn_cnn_infer64_8.lib").read_bytes()
    assert sorted(p.name for p in (root / "include").glob("cudnn*.h")) == sorted(nw.WIN_CUDNN_8_HEADERS)
    assert f"Checked (header only): include/cudnn_version.h says {version}" in out.stdout
    listed = json.loads(run_cli(["list", "--json"], env=env).stdout)
    assert [t["cudnn"] for t in listed["toolkits"]] == [version]
    back = run_cli(["uninstall-cudnn", "--cuda", cuda], env=env)
    assert back.returncode == 0 and f"Removed cuDNN {version}" in back.stdout, back.stderr
    assert snap() == before


# ---- cuDNN from NVIDIA's exe installer ------------------------------------------------------------------------

INSTALLER = r"C:\Program Files\NVIDIA\CUDNN\v9.10"


@pytest.mark.parametrize("x64", [False, True])
def test_installer_cudnn_is_found(tmp_path, x64):
    cudatrees.windows_cudnn_installer(tmp_path, cuda="12.9", x64=x64)
    (c,) = discover(win_system(tmp_path)).cudnn_installs
    bindir = INSTALLER + r"\bin\12.9" + (r"\x64" if x64 else "")
    assert (c.version, c.cuda, c.bin_dir, c.dll) == ("9.10.2", "12.9", bindir, bindir + r"\cudnn64_9.dll")
    assert c.include_dir == INSTALLER + r"\include\12.9" and c.lib_dir == INSTALLER + r"\lib\12.9\x64"


def test_installer_cudnn_version_from_the_dll_when_headers_are_gone(tmp_path):
    root = cudatrees.windows_cudnn_installer(tmp_path, cuda="12.9")
    shutil.rmtree(root / "include")
    (c,) = discover(win_system(tmp_path)).cudnn_installs
    assert (c.version, c.version_source) == ("9.10.2", "pe-resource")


def _cli(args, drive, path, clean_env):
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(drive), CUDASWITCH_OS="windows", CONDA_OVERRIDE_CUDA="12.9")
    env["PATH"] = path
    r = run_cli(args, env=env)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def test_list_and_status_show_the_installer_cudnn(drive, clean_env):
    r = _cli(["list", "--json"], drive, "", clean_env)
    rec = json.loads(r.stdout)
    assert [c["bin_dir"] for c in rec["cudnn_installs"]] == [INSTALLER + r"\bin\12.9\x64"]
    assert sorted(t["version"] for t in rec["toolkits"]) == ["11.8.89", "12.9.79", "13.0.88"]
    text = _cli(["list"], drive, "", clean_env).stdout
    assert "cuDNN from NVIDIA's installer:" in text and INSTALLER + r"\bin\12.9\x64" in text
    on_path = INSTALLER + r"\bin\12.9\x64"
    st_ = _cli(["status"], drive, on_path, clean_env).stdout
    assert f"cuDNN on PATH: {on_path}\\cudnn64_9.dll" in st_
    assert "cuDNN on PATH: none" in _cli(["status"], drive, "", clean_env).stdout


def _doctor_codes(drive, path, clean_env):
    r = _cli(["doctor", "--json"], drive, path, clean_env)
    return {f["code"]: f for f in json.loads(r.stdout)["findings"]}


def test_doctor_on_the_installer_bin_folder_without_dll(drive, clean_env):
    """What the installer does: it puts ...\\v9.10\\bin on PATH, where no DLL is."""
    codes = _doctor_codes(drive, INSTALLER + r"\bin;C:\Windows\System32", clean_env)
    assert codes["CUDNN_BIN_WITHOUT_DLL"]["details"] == [INSTALLER + r"\bin"]
    assert INSTALLER + r"\bin\12.9\x64" in codes["CUDNN_BIN_WITHOUT_DLL"]["fix"]
    assert "CUDNN_NOT_ON_PATH" in codes


def test_doctor_quiet_once_the_dll_folder_is_on_path(drive, clean_env):
    codes = _doctor_codes(drive, INSTALLER + r"\bin\12.9\x64;C:\Windows\System32", clean_env)
    assert "CUDNN_BIN_WITHOUT_DLL" not in codes and "CUDNN_NOT_ON_PATH" not in codes


# ---- the Windows load check under wine ----------------------------------------------------------------------

def z(local) -> str:
    return "Z:" + str(local).replace("/", "\\")


@pytest.fixture(scope="module")
def loader():
    """The mingw-built loader (cached by source hash) and a wine environment with the tests' cached prefix."""
    cc = require_tool("x86_64-w64-mingw32-gcc")
    wine = require_tool("wine")
    src = HERE / "winloader" / "cudnn_loader.c"
    exe = nw.cache_dir() / f"cudnn_loader-{hashlib.sha256(src.read_bytes()).hexdigest()[:12]}.exe"
    if not exe.exists():
        subprocess.run([cc, "-municode", "-O2", "-o", str(exe), str(src)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WINE")}
    env.update(WINEDEBUG="-all", WINEPREFIX=str(nw.cache_dir() / "wineprefix"), WINEDLLOVERRIDES="mscoree,mshtml=")
    return wine, exe, env


def run_loader(loader, dll, bindir, winepath=None, timeout=300):
    wine, exe, env = loader
    env = dict(env)
    if winepath is not None:
        env["WINEPATH"] = winepath
    return subprocess.run([wine, str(exe), z(dll), z(bindir)], env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def cudnn_bin(tmp_path_factory):
    """The real cuDNN 9.10.2.21 DLLs in a folder of their own (hard links)."""
    d = tmp_path_factory.mktemp("cudnn") / "bin"
    cudatrees._copytree(cudatrees.win_cudnn_bin(), d)
    return d


@pytest.fixture(scope="module")
def cudnn8_bin(tmp_path_factory):
    """The real cuDNN 8.9.7.29 cudnn64_8.dll with cudnn_ops_infer64_8.dll, the one sub-library it loads before
    cudnnGetVersion answers (tests/nvidia_wheels.win_cudnn_8 says how that was found)."""
    d = tmp_path_factory.mktemp("cudnn8") / "bin"
    cudatrees._copytree(nw.win_cudnn_8(nw.WIN_CUDNN_8_CU12, load=True) / "bin", d)
    return d


# per cuDNN major: the bin fixture, the headers, the main DLL, the sub-library it loads by bare name, the version
# the archive names and the number cudnnGetVersion returns
CUDNN = {
    9: ("cudnn_bin", lambda: cudatrees.win_cudnn_bin().parent / "include", "cudnn64_9.dll", "cudnn_graph64_9.dll",
        "9.10.2", 91002),
    8: ("cudnn8_bin", lambda: nw.win_cudnn_8(nw.WIN_CUDNN_8_CU12) / "include", "cudnn64_8.dll",
        "cudnn_ops_infer64_8.dll", "8.9.7", 8907),
}


@pytest.mark.parametrize("major", [9, 8])
def test_add_dll_directory_alone_cannot_load_real_cudnn(loader, request, major):
    """Why the check needs PATH: cudnn64_9.dll loads cudnn_graph64_9.dll (cudnn64_8.dll: cudnn_ops_infer64_8.dll)
    by bare name at run time, which the AddDllDirectory folders do not cover."""
    fixture, _inc, main, sub, _v, number = CUDNN[major]
    bindir = request.getfixturevalue(fixture)
    r = run_loader(loader, bindir / main, bindir, winepath="")
    assert r.returncode != 0 and str(number) not in r.stdout
    assert f"Could not locate {sub}" in r.stdout + r.stderr


def _windows_verify(loader, tmp_path, monkeypatch, bindir, major, drop=None, seen=None):
    """cudnn_install.verify on a Windows host for a real-file CUDA 12.9 toolkit holding the real cuDNN DLLs and
    headers; its child is the loader doing what the Python child does (os.add_dll_directory + ctypes.CDLL), run by
    wine with the PATH verify gives it."""
    _fixture, include, _main, _sub, version, _number = CUDNN[major]
    root = cudatrees.windows_real_toolkit(tmp_path, "12.9")
    cudatrees._copytree(bindir, root / "bin")
    if drop:
        (root / "bin" / drop).unlink()
    cudatrees._copytree(include(), root / "include")
    system = win_system(tmp_path)
    (tk,) = discover(system).toolkits
    target = ci.toolkit_target(system, tk)

    def wine_child(args, timeout=20.0, env=None):
        assert args[1] == "-I"  # isolated: nothing from the working folder is imported
        *_, dll, bin_arg = args
        path_entries = [e for e in env["PATH"].split(";") if e and os.path.isdir(e)]
        if seen is not None:
            seen["path"] = path_entries
        return run_loader(loader, dll, bin_arg, winepath=";".join(z(e) for e in path_entries))

    system.run = wine_child
    monkeypatch.setattr(ci, "host_os", lambda: "windows")
    prep = SimpleNamespace(target=target, archive=SimpleNamespace(cudnn_major=major, version=version))
    return target, ci.verify(prep, system)


@pytest.mark.parametrize("major", [9, 8])
def test_verify_loads_real_cudnn_the_windows_way(loader, request, tmp_path, monkeypatch, major):
    """The child gets the DLL folder first on PATH, and the real cuDNN answers with its own version number."""
    fixture, _inc, _main, _sub, version, number = CUDNN[major]
    seen = {}
    target, res = _windows_verify(loader, tmp_path, monkeypatch, request.getfixturevalue(fixture), major, seen=seen)
    assert seen["path"][0] == str(target.local_dirs["bin"])
    assert res == {"header": version, "expected": version, "library": number, "library_error": None,
                   "checked": "header and library", "ok": True}


@pytest.mark.parametrize("major", [9, 8])
def test_verify_says_which_sub_library_failed(loader, request, tmp_path, monkeypatch, major):
    """The sub-library missing from the installed bin: the check fails and names it."""
    fixture, _inc, _main, sub, _v, _n = CUDNN[major]
    _target, res = _windows_verify(loader, tmp_path, monkeypatch, request.getfixturevalue(fixture), major, drop=sub)
    assert res["ok"] is False and res["library"] is None and sub in res["library_error"]


# ---- item 6: paths the user types and pastes, hooks with echo on --------------------------------------------

@pytest.fixture
def win_env(tmp_path, clean_env):
    """A C: drive with the real CUDA 12.9 files and an empty conda env C:\\envs\\torch; -p takes the Windows path."""
    drive = tmp_path / "drive"
    cudatrees.windows_real_toolkit(drive, "12.9")
    (drive / "C" / "envs" / "torch" / "conda-meta").mkdir(parents=True)
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(drive), CUDASWITCH_OS="windows")
    r = run_cli(["use", "12.9", "-p", r"C:\envs\torch"], env=env)
    assert r.returncode == 0, r.stderr
    return drive, env


def test_prefix_given_as_a_windows_path_under_fs_root(win_env):
    drive, _env = win_env
    hooks = drive / "C" / "envs" / "torch" / "etc" / "conda"
    assert (hooks / "activate.d" / "cudaswitch.bat").is_file() and (hooks / "deactivate.d" / "cudaswitch.bat").is_file()


def test_undo_line_is_quoted_for_the_shell(win_env, tmp_path):
    import cudnn_archives as ca

    _drive, env = win_env
    archive = ca.real_windows_8_zip(nw.WIN_CUDNN_8_CU12)  # real 8.9.7 files
    out = run_cli(["install-cudnn", str(archive), "--cuda", "12.9"], env=env)
    assert out.returncode == 0, out.stderr
    undo = next(line for line in out.stdout.splitlines() if line.startswith("Undo with: "))
    assert undo == ('Undo with: cudaswitch uninstall-cudnn --cuda '
                    '"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.9"')
    # a Windows library cannot be loaded on this Linux host: the header alone was checked, and it says so
    assert "Checked (header only): include/cudnn_version.h says 8.9.7" in out.stdout
    assert "Verified" not in out.stdout
    # and the pasted command works (cmd and PowerShell both strip the double quotes; so does this argv split)
    import shlex

    back = run_cli(shlex.split(undo[len("Undo with: cudaswitch "):]), env=env)
    assert back.returncode == 0 and "Removed cuDNN 8.9.7" in back.stdout, back.stderr


def test_verify_json_ok_is_false_when_only_the_header_was_checked(win_env, tmp_path):
    import cudnn_archives as ca

    _drive, env = win_env
    archive = ca.real_windows_8_zip(nw.WIN_CUDNN_8_CU12)  # real 8.9.7 files
    rec = json.loads(run_cli(["install-cudnn", str(archive), "--cuda", "12.9", "--json"], env=env).stdout)
    assert rec["verify"]["checked"] == "header only" and rec["verify"]["ok"] is False
    assert rec["verify"]["header"] == "8.9.7" and rec["verify"]["library"] is None


def test_cmd_hooks_stay_silent_with_echo_on(win_env, tmp_path, loader):
    """wine's cmd echoes the command a CALL runs when echo is on; the hooks' CALL SET lines send it to nul, so a
    user with `echo on` (or a batch file that did not turn it off) sees nothing from them."""
    wine, _exe, wenv = loader
    drive, _env = win_env
    hooks = drive / "C" / "envs" / "torch" / "etc" / "conda"
    driver = tmp_path / "drive_echo_on.bat"
    driver.write_bytes("\r\n".join([
        "@echo on",
        r'@set "PATH=C:\cuda\bin;C:\windows\system32;C:\windows"',
        r'@set "_CUDASWITCH_ADDED_PATH=C:\cuda\bin"',
        r'@set "CONDA_PREFIX=C:\envs\torch"',
        f'@call "{z(hooks / "activate.d" / "cudaswitch.bat")}" 2>nul',
        r'@set "_CUDASWITCH_ADDED_PATH=C:\cuda\bin"',
        f'@call "{z(hooks / "deactivate.d" / "cudaswitch.bat")}"',
        "@echo PATH=[%PATH%]", ""]).encode())
    out = tmp_path / "out.txt"
    with open(out, "wb") as fh:
        subprocess.run([wine, "cmd", "/d", "/c", z(driver)], env=wenv, stdout=fh, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, timeout=300, check=False)
    lines = [x.strip() for x in out.read_bytes().decode("ascii", "replace").splitlines() if x.strip()]
    assert lines == [r"PATH=[C:\windows\system32;C:\windows]"], lines


@pytest.mark.slow
def test_real_windows_cudnn_zip_installs_and_undoes_byte_identically(tmp_path, clean_env):
    """The real cuDNN 9.10.2.21 Windows DLLs in NVIDIA's zip layout, into the real-file CUDA 11.8 tree."""
    import cudnn_archives as ca

    drive = tmp_path / "drive"
    root = cudatrees.windows_real_toolkit(drive, "11.8")
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(drive), CUDASWITCH_OS="windows")

    def snap():
        return {str(p.relative_to(drive)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
                for p in sorted(drive.rglob("*"))}

    before = snap()
    out = run_cli(["install-cudnn", str(ca.real_windows_zip()), "--cuda", "11.8"], env=env, timeout=900)
    assert out.returncode == 0, out.stderr
    dll = root / "bin" / "cudnn64_9.dll"
    assert dll.read_bytes() == (cudatrees.win_cudnn_bin() / "cudnn64_9.dll").read_bytes()
    assert versions.cudnn_from_pe(dll) == "9.10.2"
    assert "Checked (header only): include/cudnn_version.h says 9.10.2" in out.stdout
    listed = json.loads(run_cli(["list", "--json"], env=env).stdout)
    assert [t["cudnn"] for t in listed["toolkits"]] == ["9.10.2"]
    back = run_cli(["uninstall-cudnn", "--cuda", "11.8"], env=env, timeout=900)
    assert back.returncode == 0, back.stderr
    assert snap() == before
