"""cuDNN on Windows with NVIDIA's real files (tests/winfiles.py builds the drives): NVIDIA's cuDNN 9 exe installer
layout found, listed and diagnosed; real cuDNN 8.9 and 9.10 files installed from NVIDIA's zip layout and undone byte
for byte; the pasted undo line and the header-only verify record."""

import json
import shlex
import shutil

import pytest

import cudatrees
import cudnn_archives as ca
import nvidia_wheels as nw
import winfiles as wf
from conftest import run_cli
from cudaswitch.core import versions
from cudaswitch.discovery.toolkits import discover


@pytest.fixture(scope="module")
def drive(tmp_path_factory):
    return wf.real_drive(tmp_path_factory.mktemp("drive"))


@pytest.fixture
def win_env(tmp_path, clean_env):
    drive = tmp_path / "drive"
    return drive, wf.windows_env(drive, clean_env)


@pytest.mark.parametrize("x64", [False, True])
def test_installer_cudnn_is_found(tmp_path, x64):
    cudatrees.windows_cudnn_installer(tmp_path, cuda="12.9", x64=x64)
    (c,) = discover(wf.win_system(tmp_path)).cudnn_installs
    bindir = wf.INSTALLER + r"\bin\12.9" + (r"\x64" if x64 else "")
    assert (c.version, c.cuda, c.bin_dir, c.dll) == ("9.10.2", "12.9", bindir, bindir + r"\cudnn64_9.dll")
    assert c.include_dir == wf.INSTALLER + r"\include\12.9" and c.lib_dir == wf.INSTALLER + r"\lib\12.9\x64"

def test_installer_cudnn_version_from_the_dll_when_headers_are_gone(tmp_path):
    root = cudatrees.windows_cudnn_installer(tmp_path, cuda="12.9")
    shutil.rmtree(root / "include")
    (c,) = discover(wf.win_system(tmp_path)).cudnn_installs
    assert (c.version, c.version_source) == ("9.10.2", "pe-resource")

def test_list_and_status_show_the_installer_cudnn(drive, clean_env):
    r = wf.win_cli(["list", "--json"], drive, "", clean_env)
    rec = json.loads(r.stdout)
    assert [c["bin_dir"] for c in rec["cudnn_installs"]] == [wf.INSTALLER + r"\bin\12.9\x64"]
    assert sorted(t["version"] for t in rec["toolkits"]) == ["11.8.89", "12.9.79", "13.0.88"]
    text = wf.win_cli(["list"], drive, "", clean_env).stdout
    assert "cuDNN from NVIDIA's installer:" in text and wf.INSTALLER + r"\bin\12.9\x64" in text
    on_path = wf.INSTALLER + r"\bin\12.9\x64"
    st_ = wf.win_cli(["status"], drive, on_path, clean_env).stdout
    assert f"cuDNN on PATH: {on_path}\\cudnn64_9.dll" in st_
    assert "cuDNN on PATH: none" in wf.win_cli(["status"], drive, "", clean_env).stdout

def test_doctor_on_the_installer_bin_folder_without_dll(drive, clean_env):
    """What the installer does: it puts ...\\v9.10\\bin on PATH, where no DLL is."""
    codes = wf.doctor_codes(drive, wf.INSTALLER + r"\bin;C:\Windows\System32", clean_env)
    assert codes["CUDNN_BIN_WITHOUT_DLL"]["details"] == [wf.INSTALLER + r"\bin"]
    assert wf.INSTALLER + r"\bin\12.9\x64" in codes["CUDNN_BIN_WITHOUT_DLL"]["fix"]
    assert "CUDNN_NOT_ON_PATH" in codes

def test_doctor_quiet_once_the_dll_folder_is_on_path(drive, clean_env):
    codes = wf.doctor_codes(drive, wf.INSTALLER + r"\bin\12.9\x64;C:\Windows\System32", clean_env)
    assert "CUDNN_BIN_WITHOUT_DLL" not in codes and "CUDNN_NOT_ON_PATH" not in codes

def test_doctor_names_cudnn64_8_for_a_toolkit_with_cudnn_8(tmp_path, clean_env):
    drive = tmp_path / "drive"
    wf.cudnn_8_into_toolkit(cudatrees.windows_real_toolkit(drive, "11.8"), nw.WIN_CUDNN_8_CU11)
    codes = wf.doctor_codes(drive, r"C:\Windows\System32", clean_env)
    fix = codes["CUDNN_NOT_ON_PATH"]["fix"]
    assert "cudnn64_8.dll" in fix and "cudnn64_9.dll" not in fix
    assert r"CUDA\v11.8\bin (cuDNN 8.9.5)" in fix
    on_path = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.8\bin"
    assert "CUDNN_NOT_ON_PATH" not in wf.doctor_codes(drive, on_path, clean_env)
    st_ = wf.win_cli(["status"], drive, on_path, clean_env).stdout
    assert f"cuDNN on PATH: {on_path}\\cudnn64_8.dll" in st_

@pytest.mark.parametrize("spec,cuda,version", [(nw.WIN_CUDNN_8_CU11, "11.8", "8.9.5"),
                                               (nw.WIN_CUDNN_8_CU12, "12.9", "8.9.7")])
def test_real_cudnn_8_zip_installs_and_undoes_byte_identically(tmp_path, clean_env, spec, cuda, version):
    """NVIDIA's cuDNN 8.9 zip layout built from the real files (tests/cudnn_archives.real_windows_8_zip) into the
    real-file toolkit for its CUDA: files land in bin, include and lib\\x64; list reads the version back; undo
    leaves the drive byte for byte as it was."""
    drive = tmp_path / "drive"
    root = cudatrees.windows_real_toolkit(drive, cuda)
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(drive), CUDASWITCH_OS="windows")

    before = wf.drive_snapshot(drive)
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
    assert wf.drive_snapshot(drive) == before

def test_undo_line_is_quoted_for_the_shell(win_env, tmp_path):
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
    back = run_cli(shlex.split(undo[len("Undo with: cudaswitch "):]), env=env)
    assert back.returncode == 0 and "Removed cuDNN 8.9.7" in back.stdout, back.stderr

def test_verify_json_ok_is_false_when_only_the_header_was_checked(win_env, tmp_path):
    _drive, env = win_env
    archive = ca.real_windows_8_zip(nw.WIN_CUDNN_8_CU12)  # real 8.9.7 files
    rec = json.loads(run_cli(["install-cudnn", str(archive), "--cuda", "12.9", "--json"], env=env).stdout)
    assert rec["verify"]["checked"] == "header only" and rec["verify"]["ok"] is False
    assert rec["verify"]["header"] == "8.9.7" and rec["verify"]["library"] is None

@pytest.mark.slow
def test_real_windows_cudnn_zip_installs_and_undoes_byte_identically(tmp_path, clean_env):
    """The real cuDNN 9.10.2.21 Windows DLLs in NVIDIA's zip layout, into the real-file CUDA 11.8 tree."""
    drive = tmp_path / "drive"
    root = cudatrees.windows_real_toolkit(drive, "11.8")
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(drive), CUDASWITCH_OS="windows")

    before = wf.drive_snapshot(drive)
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
    assert wf.drive_snapshot(drive) == before
