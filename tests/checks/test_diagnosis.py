"""The classifier on records this machine cannot produce (32-bit Python, several msvcp140.dll copies, a CPU without
AVX2 behind WinError 1114, a cuDNN failure), and the failure catalogue."""

from cudaswitch.checks import diagnosis
from cudaswitch.checks.diagnosis import classify
from cudaswitch.checks.driver import Driver
from cudaswitch.checks.runner import ProbeOutcome

NONE = Driver(None)


def _outcome(record, rc=0, stderr=""):
    return ProbeOutcome(record, rc, "", stderr, False, "import_torch")


def _failed_import(message, **extra):
    rec = {"python": {"version": "3.10.11", "bits": 64}, "import": {"ok": False, "error": {"type": "OSError",
           "message": message}}, "warnings": [], "steps": {}, "torch": {}}
    rec.update(extra)
    return rec


WIN1114 = ('[WinError 1114] A dynamic link library (DLL) initialization routine failed. Error loading '
           '"C:\\Users\\u\\miniconda3\\envs\\pt\\lib\\site-packages\\torch\\lib\\c10.dll" or one of its dependencies.')


def test_32_bit_python():
    rec = _failed_import(WIN1114, python={"version": "3.9.0", "bits": 32})
    f = classify(_outcome(rec), "/x", {}, True, False, NONE)
    assert f[0].code == "PYTHON_32BIT"


def test_1114_names_the_first_msvcp140_copy():
    rec = _failed_import(WIN1114, msvcp140=["C:\\envs\\pt\\msvcp140.dll", "C:\\Windows\\System32\\msvcp140.dll"],
                         cpu_avx2=True)
    f = classify(_outcome(rec), "/x", {}, True, False, NONE)
    assert f[0].code == "DLL_INIT_FAILED"
    assert "C:\\envs\\pt\\msvcp140.dll" in f[0].cause and "c10.dll" in f[0].cause
    assert "System32" in f[0].details[0]


def test_1114_on_a_cpu_without_avx2():
    rec = _failed_import(WIN1114, cpu_avx2=False)
    assert classify(_outcome(rec), "/x", {}, True, False, NONE)[0].code == "NO_AVX2"


def test_cudnn_failure_in_conv():
    rec = {"python": {"version": "3.11.0", "bits": 64}, "import": {"ok": True}, "warnings": [],
           "torch": {"version": "2.4.1+cu121", "cuda": "12.1", "is_available": True, "capability": "8.6",
                     "arch_list": ["sm_86"], "device_name": "NVIDIA GeForce RTX 3060"},
           "steps": {"matmul": {"ok": True}, "conv2d": {"ok": False, "error": {
               "type": "RuntimeError", "message": "cuDNN error: CUDNN_STATUS_NOT_INITIALIZED"}}}}
    f = classify(_outcome(rec), "/x", {}, False, False, Driver("libcuda", "12.4"))
    assert f[0].code == "CUDNN_FAILED"


def test_cuda_visible_devices_values():
    assert diagnosis._cvd_hides("") and diagnosis._cvd_hides("-1") and diagnosis._cvd_hides("abc")
    assert not diagnosis._cvd_hides("0") and not diagnosis._cvd_hides("GPU-1234") and not diagnosis._cvd_hides(None)


def test_catalogue_has_cause_fix_and_source_for_every_code():
    for code, (cause, fix, src) in diagnosis.CATALOGUE.items():
        assert code.isupper() and cause and fix and src, code


def test_1114_on_windows_without_any_msvcp140_names_the_missing_runtime():
    rec = _failed_import(WIN1114, msvcp140=[], cpu_avx2=True, python={"version": "3.10.11", "bits": 64,
                                                                       "platform": "win32"})
    f = classify(_outcome(rec), "/x", {}, True, False, NONE)
    assert f[0].code == "DLL_INIT_FAILED" and "VC++ 2015-2022 runtime is missing" in f[0].cause
    rec["python"]["platform"] = "linux"  # a record from elsewhere says nothing about msvcp140
    assert "runtime is missing" not in classify(_outcome(rec), "/x", {}, True, False, NONE)[0].cause


def _dlopen_error(name):
    """The real loader's message for a library it cannot find, as torch's import shows it (ctypes.CDLL is how
    torch/__init__.py loads its CUDA libraries)."""
    import ctypes

    try:
        ctypes.CDLL(name)
    except OSError as exc:
        return str(exc)
    raise AssertionError(f"{name} is loadable on this machine")


def test_a_cuda_library_the_loader_cannot_find_is_named():
    for lib in ("libcudnn.so.8", "libcudart.so.11.0"):
        message = _dlopen_error(lib)
        assert message.startswith(f"{lib}: cannot open shared object file"), message
        rec = _failed_import(message)
        rec["import"]["error"]["type"] = "ImportError"
        f = classify(_outcome(rec, rc=1, stderr=f"ImportError: {message}\n"), "/x", {}, False, False, NONE)
        assert f[0].code == "LIB_NOT_FOUND" and f[0].severity == "error"
        assert f"{lib} is not on the loader's path" in f[0].cause


def test_cudnn_ending_the_process_for_a_sublibrary_is_a_cudnn_failure():
    """cuDNN 8 prints this and aborts (SIGABRT) when it cannot load a sub-library: the probe leaves no record."""
    stderr = ("Could not load library libcudnn_cnn_infer.so.8. Error: " + _dlopen_error("libcudnn_cnn_infer.so.8")
              + "\nPlease make sure libcudnn_cnn_infer.so.8 is in your library path!\n")
    f = classify(ProbeOutcome(None, -6, "", stderr, False, "conv2d"), "/x", {}, False, False, NONE)
    assert f[0].code == "CUDNN_FAILED" and "libcudnn_cnn_infer.so.8" in f[0].cause


def test_cudnn_version_incompatibility_is_a_cudnn_failure():
    # torch 2.13.0's torch/backends/cudnn/__init__.py, _init(), with a bundled cuDNN shadowed by an older one
    message = ("cuDNN version incompatibility: PyTorch was compiled  against (9, 10, 2) but found runtime version "
               "(9, 1, 0). PyTorch already comes bundled with cuDNN. One option to resolving this error is to ensure "
               "PyTorch can find the bundled cuDNN. ")
    rec = {"python": {"version": "3.11.0", "bits": 64}, "import": {"ok": True}, "warnings": [],
           "torch": {"version": "2.13.0+cu126", "cuda": "12.6", "is_available": True, "capability": "8.6",
                     "arch_list": ["sm_86"], "device_name": "NVIDIA GeForce RTX 3060"},
           "steps": {"matmul": {"ok": True}, "conv2d": {"ok": False, "error": {"type": "RuntimeError",
                                                                                 "message": message}}}}
    f = classify(_outcome(rec), "/x", {}, False, False, Driver("libcuda", "12.8"))
    assert f[0].code == "CUDNN_FAILED" and "cuDNN version incompatibility" in f[0].cause
