# -*- coding: utf-8 -*-
"""cudaswitch torch probe: run by the conda environment's OWN Python, in a fresh process, with the environment the
env's activation hooks produce. Prints exactly one JSON record on stdout, on a line starting with MARKER.

Rules for this file (it runs in interpreters cudaswitch does not control; docs/design/checks.md section 1):
  * standard library only until `import torch`; Python 3.6+ syntax (no walrus, no dataclasses, no annotations
    future import);
  * import nothing torch does not import anyway (the benchmark compares this probe with `python -c "import torch"`);
  * never raise: every failure is recorded and the record is still printed;
  * progress goes to stderr as "cudaswitch-probe: stage NAME" lines, so a probe that dies mid-way (OMP abort,
    segfault, timeout) still tells the parent where it was.

Modes: `python -c <this file> [--device auto|cpu]` runs the torch checks (with the driver query first);
`--driver-only` prints only the driver/GPU record (used by `doctor` and `recommend`).
"""
import sys

# `python -c` puts the working folder first on sys.path: a ctypes.py or json.py left there by another user would
# be imported below, with the rights of whoever runs the probe (root under sudo). Dropped before any import.
while sys.path and sys.path[0] in ("", "."):
    del sys.path[0]

import ctypes  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import struct  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

MARKER = "CUDASWITCH-PROBE-JSON:"
RECORD_VERSION = 1


def stage(name):
    try:
        sys.stderr.write("cudaswitch-probe: stage %s\n" % name)
        sys.stderr.flush()
    except Exception:
        pass


def _err(exc):
    return {"type": type(exc).__name__, "message": str(exc)[:4000]}


# ---- driver: the maximum CUDA version it supports (conda's __cuda method) and the GPUs -------------------------

def _libcuda_candidates(given=None):
    if given:  # absolute paths in folders cudaswitch has checked (driver.query): nothing found by name
        return list(given)
    if sys.platform == "win32":
        return ["nvcuda.dll"]
    # the soname, then these folders, WSL last: where conda's __cuda looks (docs/design/checks.md section 2)
    names = ["libcuda.so.1", "libcuda.so"]
    for d in ("/usr/lib64/nvidia", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
              "/usr/lib/wsl/lib"):
        names.append(os.path.join(d, "libcuda.so.1"))
    return names


def _load(candidates):
    loader = ctypes.WinDLL if sys.platform == "win32" else ctypes.CDLL
    errors = []
    for name in candidates:
        try:
            return loader(name), name, errors
        except OSError as exc:
            errors.append("%s: %s" % (name, exc))
    return None, None, errors


def ask_driver(query_devices, libraries=None):
    """cuDriverGetVersion needs no cuInit; the device queries do (and a hidden device makes cuInit fail).
    `libraries`: the only files to load (absolute paths), instead of the soname and the usual folders."""
    out = {"source": "libcuda", "library": None, "cuda_max": None, "driver_version": None, "devices": [],
           "cuinit": None, "error": None}
    lib, name, errors = _load(_libcuda_candidates(libraries))
    if lib is None:
        out["error"] = "no NVIDIA driver library (%s)" % ("libcuda" if sys.platform != "win32" else "nvcuda.dll")
        out["load_errors"] = errors[-3:]
        return out
    out["library"] = name
    v = ctypes.c_int(0)
    try:
        rc = lib.cuDriverGetVersion(ctypes.byref(v))
        if rc == 0 and v.value > 0:
            out["cuda_max"] = "%d.%d" % (v.value // 1000, (v.value % 1000) // 10)
        else:
            out["error"] = "cuDriverGetVersion returned %d" % rc
    except Exception as exc:  # symbol missing: not a real driver
        out["error"] = "cuDriverGetVersion failed: %s" % exc
    # driver version string from NVML (libnvidia-ml / nvml.dll); optional
    nvml_names = ["libnvidia-ml.so.1", "libnvidia-ml.so"]
    if libraries:  # beside the libcuda loaded, never by name
        nvml_names = [os.path.join(os.path.dirname(name), n) for n in nvml_names]
    nvml, _, _ = _load(["nvml.dll"] if sys.platform == "win32" else nvml_names)
    if nvml is not None:
        try:
            if nvml.nvmlInit_v2() == 0:
                buf = ctypes.create_string_buffer(96)
                if nvml.nvmlSystemGetDriverVersion(buf, 96) == 0:
                    out["driver_version"] = buf.value.decode("ascii", "replace")
                nvml.nvmlShutdown()
        except Exception:
            pass
    if query_devices and out["cuda_max"]:
        try:
            rc = lib.cuInit(0)
            out["cuinit"] = rc
            if rc == 0:
                count = ctypes.c_int(0)
                lib.cuDeviceGetCount(ctypes.byref(count))
                for i in range(count.value):
                    dev = ctypes.c_int(0)
                    lib.cuDeviceGet(ctypes.byref(dev), i)
                    name_buf = ctypes.create_string_buffer(256)
                    lib.cuDeviceGetName(name_buf, 256, dev)
                    major, minor = ctypes.c_int(0), ctypes.c_int(0)
                    lib.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)  # COMPUTE_CAPABILITY_MAJOR
                    lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)  # COMPUTE_CAPABILITY_MINOR
                    out["devices"].append({"index": i, "name": name_buf.value.decode("utf-8", "replace"),
                                           "capability": "%d.%d" % (major.value, minor.value)})
        except Exception as exc:
            out["error"] = "device query failed: %s" % exc
    return out


# ---- before torch: interpreter, CPU, where torch would come from ----------------------------------------------

def cpu_has_avx2():
    try:
        if sys.platform == "win32":
            return bool(ctypes.windll.kernel32.IsProcessorFeaturePresent(40))  # PF_AVX2_INSTRUCTIONS_AVAILABLE
        if sys.platform.startswith("linux"):
            with open("/proc/cpuinfo") as fh:
                for line in fh:
                    if line.startswith("flags"):
                        return " avx2 " in (line.rstrip("\n") + " ")
    except Exception:
        pass
    return None


def torch_folders():
    """Every sys.path entry holding a torch package: two of them is the 'installed twice' case."""
    found = []
    for entry in sys.path:
        path = os.path.join(entry or os.getcwd(), "torch", "__init__.py")
        if os.path.isfile(path):
            found.append(os.path.dirname(path))
    return found


def user_site():
    """The user site-packages on sys.path (`pip install --user`: %APPDATA%\\Python\\PythonXY\\site-packages,
    ~/.local/lib/pythonX.Y/site-packages), or None. Read from the `site` module Python already ran at startup."""
    site = sys.modules.get("site")
    try:
        if site is not None and site.ENABLE_USER_SITE:
            return site.getusersitepackages()
    except Exception:
        pass
    return None


def msvcp_copies():
    """Windows: msvcp140.dll copies in the order the loader meets them (docs/design/checks.md section 4)."""
    if sys.platform != "win32":
        return []
    dirs = [sys.prefix, os.path.join(sys.prefix, "Library", "bin")]
    windir = os.environ.get("SystemRoot") or os.environ.get("windir") or r"C:\Windows"
    dirs.append(os.path.join(windir, "System32"))
    dirs += [p for p in os.environ.get("PATH", "").split(";") if p]
    seen, out = set(), []
    for d in dirs:
        key = os.path.normcase(os.path.abspath(d))
        if key in seen:
            continue
        seen.add(key)
        f = os.path.join(d, "msvcp140.dll")
        if os.path.isfile(f):
            out.append(f)
    return out


def python_info():
    return {
        "version": "%d.%d.%d" % sys.version_info[:3],
        "bits": struct.calcsize("P") * 8,
        "executable": sys.executable,
        "prefix": sys.prefix,
        "platform": sys.platform,
        "implementation": sys.implementation.name if hasattr(sys, "implementation") else None,
    }


# ---- torch ---------------------------------------------------------------------------------------------------

def _warning_texts(caught):
    return [str(w.message)[:2000] for w in caught]


def timed(record, name, fn):
    stage(name)
    t0 = time.perf_counter()
    step = {"ok": False, "seconds": None, "error": None, "detail": None}
    try:
        step["detail"] = fn()
        step["ok"] = True
    except BaseException as exc:  # noqa: B902 - a probe records everything
        if isinstance(exc, KeyboardInterrupt):
            raise
        step["error"] = _err(exc)
    step["seconds"] = round(time.perf_counter() - t0, 4)
    record["steps"][name] = step
    return step


def run_torch(record, device_pref):
    import warnings

    stage("import_torch")
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            import torch  # noqa: F401
        except BaseException as exc:  # OSError (WinError 1114/126), ImportError, SystemError, ...
            if isinstance(exc, KeyboardInterrupt):
                raise
            record["import"] = {"ok": False, "seconds": round(time.perf_counter() - t0, 4), "error": _err(exc),
                                "traceback": traceback.format_exc()[-6000:]}
            record["warnings"] += _warning_texts(caught)
            return
    record["import"] = {"ok": True, "seconds": round(time.perf_counter() - t0, 4), "error": None}
    record["warnings"] += _warning_texts(caught)
    t = record["torch"]
    t["version"] = str(getattr(torch, "__version__", None))
    t["file"] = getattr(torch, "__file__", None)
    version_mod = getattr(torch, "version", None)
    t["cuda"] = getattr(version_mod, "cuda", None)
    t["hip"] = getattr(version_mod, "hip", None)
    t["debug"] = getattr(version_mod, "debug", None)
    try:
        t["cudnn"] = torch.backends.cudnn.version()
    except Exception as exc:
        t["cudnn_error"] = _err(exc)
    stage("cuda_init")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            t["is_available"] = bool(torch.cuda.is_available())
            t["device_count"] = int(torch.cuda.device_count())
        except Exception as exc:
            t["cuda_error"] = _err(exc)
        try:
            t["arch_list"] = list(torch.cuda.get_arch_list())
        except Exception:
            t["arch_list"] = []
        if t.get("is_available"):
            try:
                t["device_name"] = torch.cuda.get_device_name(0)
                cap = torch.cuda.get_device_capability(0)
                t["capability"] = "%d.%d" % (cap[0], cap[1])
                t["memory_total"] = int(torch.cuda.get_device_properties(0).total_memory)
            except Exception as exc:
                t["device_error"] = _err(exc)
    record["warnings"] += _warning_texts(caught)

    use_cuda = bool(t.get("is_available")) and device_pref != "cpu"
    dev = "cuda" if use_cuda else "cpu"
    record["device"] = dev

    def sync():
        if use_cuda:
            torch.cuda.synchronize()

    def matmul():
        n = 2048
        g = torch.Generator(device="cpu").manual_seed(0)
        a = torch.randn(n, n, generator=g).to(dev)
        b = torch.randn(n, n, generator=g).to(dev)
        if use_cuda:  # the first product creates the cuBLAS handle: keep it out of the timing
            a @ b
        sync()
        t0 = time.perf_counter()
        c = a @ b
        sync()
        elapsed = time.perf_counter() - t0
        ref = float((a[0].double() * b[:, 0].double()).sum())
        got = float(c[0, 0])
        if not abs(got - ref) <= 1e-2 * (abs(ref) + n ** 0.5):
            raise ArithmeticError("matmul result wrong: c[0,0]=%r, expected %r" % (got, ref))
        return {"n": n, "device": str(c.device), "gflops": round(2 * n ** 3 / max(elapsed, 1e-9) / 1e9, 1)}

    def conv():
        x = torch.randn(8, 3, 64, 64, device=dev)
        layer = torch.nn.Conv2d(3, 16, 3, padding=1).to(dev)
        with torch.no_grad():
            y = layer(x)
        sync()
        if tuple(y.shape) != (8, 16, 64, 64) or not bool(torch.isfinite(y).all()):
            raise ArithmeticError("conv2d produced shape %s or non-finite values" % (tuple(y.shape),))
        cudnn = bool(use_cuda and torch.backends.cudnn.is_available() and torch.backends.cudnn.enabled)
        return {"shape": list(y.shape), "device": str(y.device), "cudnn": cudnn}

    def autocast():
        dtype = torch.float16 if use_cuda else torch.bfloat16
        a = torch.randn(256, 256, device=dev)
        if hasattr(torch, "autocast"):
            ctx = torch.autocast(device_type=dev, dtype=dtype)
        elif use_cuda:
            ctx = torch.cuda.amp.autocast()
        else:
            return {"skipped": "this torch has no CPU autocast"}
        with ctx:
            b = a @ a
        sync()
        return {"dtype": str(b.dtype), "device": str(b.device)}

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        timed(record, "matmul", matmul)
        timed(record, "conv2d", conv)
        timed(record, "autocast", autocast)
    record["warnings"] += _warning_texts(caught)


def main(argv):
    started = time.perf_counter()
    device_pref = "auto"
    if "--device" in argv:
        device_pref = argv[argv.index("--device") + 1]
    record = {"probe": RECORD_VERSION, "python": python_info(), "steps": {}, "warnings": [], "torch": {},
              "import": None, "device": None}
    stage("driver")
    env_cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    if "--driver-only" in argv:
        # like conda: a hidden device list makes cuInit fail, so the machine-level query ignores it
        os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        given = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--libcuda"]
        record["driver"] = ask_driver(query_devices=True, libraries=given or None)
    else:
        record["driver"] = ask_driver(query_devices=False)
        record["cuda_visible_devices"] = env_cvd
        record["environ"] = dict((k, os.environ.get(k)) for k in (
            "CONDA_PREFIX", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES"))
        record["environ"]["PATH_HEAD"] = os.environ.get("PATH", "").split(os.pathsep)[:3]
        record["cpu_avx2"] = cpu_has_avx2()
        record["torch_folders"] = torch_folders()
        record["user_site"] = user_site()
        record["msvcp140"] = msvcp_copies()
        run_torch(record, device_pref)
        if record["driver"].get("cuda_max") and (record["import"] or {}).get("ok") and \
                not record["torch"].get("is_available"):
            # torch sees no GPU although a driver answered: ask the driver itself (cuInit, device count), which tells
            # "no device visible" (a laptop on its integrated GPU) from a torch build problem. torch has already
            # called cuInit, so this adds no initialisation of its own.
            seen = ask_driver(query_devices=True)
            record["driver"]["cuinit"] = seen.get("cuinit")
            record["driver"]["devices"] = seen.get("devices") or []
    record["seconds"] = round(time.perf_counter() - started, 4)
    stage("done")
    if "--result" in argv:  # a file of its own: whatever torch or a .pth module prints cannot garble the record
        with open(argv[argv.index("--result") + 1], "w") as fh:
            fh.write(json.dumps(record))
        return
    sys.stdout.write(MARKER + json.dumps(record) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
