"""The Windows cuDNN load check (cudaswitch/cudnn/install.py verify, windows_load_check) under wine with a
mingw-built loader (tests/winloader) and NVIDIA's real cuDNN 9.10.2.21 and 8.9.7.29 DLLs: what fails without the DLL
folder on PATH, what cudnnGetVersion answers with it, and which sub-library a failure names."""

import os
from types import SimpleNamespace

import pytest

import cudatrees
import nvidia_wheels as nw
import winfiles as wf
from cudaswitch.cudnn import verify as cudnn_verify
from cudaswitch.cudnn.target import toolkit_target
from cudaswitch.discovery.toolkits import discover


@pytest.fixture(scope="module")
def loader():
    return wf.wine_loader()


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
    r = wf.run_loader(loader, bindir / main, bindir, winepath="")
    assert r.returncode != 0 and str(number) not in r.stdout
    assert f"Could not locate {sub}" in r.stdout + r.stderr

def _windows_verify(loader, tmp_path, monkeypatch, bindir, major, drop=None, seen=None):
    """cudnn/verify.py's verify on a Windows host for a real-file CUDA 12.9 toolkit holding the real cuDNN DLLs and
    headers; its child is the loader doing what the Python child does (os.add_dll_directory + ctypes.CDLL), run by
    wine with the PATH verify gives it."""
    _fixture, include, _main, _sub, version, _number = CUDNN[major]
    root = cudatrees.windows_real_toolkit(tmp_path, "12.9")
    cudatrees._copytree(bindir, root / "bin")
    if drop:
        (root / "bin" / drop).unlink()
    cudatrees._copytree(include(), root / "include")
    system = wf.win_system(tmp_path)
    (tk,) = discover(system).toolkits
    target = toolkit_target(system, tk)

    def wine_child(args, timeout=20.0, env=None, cwd=None):
        assert args[1] == "-I"  # isolated: nothing from the working folder is imported
        assert cwd == os.path.abspath(os.sep)  # and started in the root folder, where no DLL lies either
        *_, dll, bin_arg = args
        path_entries = [e for e in env["PATH"].split(";") if e and os.path.isdir(e)]
        if seen is not None:
            seen["path"] = path_entries
        return wf.run_loader(loader, dll, bin_arg, winepath=";".join(wf.z(e) for e in path_entries))

    system.run = wine_child
    monkeypatch.setattr(cudnn_verify, "host_os", lambda: "windows")
    prep = SimpleNamespace(target=target, archive=SimpleNamespace(cudnn_major=major, version=version))
    return target, cudnn_verify.verify(prep, system)

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
