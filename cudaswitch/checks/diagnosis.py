"""Failure classification for the torch smoke test: a stable code, a one-line cause naming what was found, and the fix.

The catalogue covers the torch install failures users commonly report (the c10.dll / WinError 1114 causes, the
error message -> likely cause -> first fix pairs, the reasons torch.cuda.is_available() is False) and failures no
existing tool classifies (WinError 1114, LD_LIBRARY_PATH shadowing pip's CUDA libraries, the NumPy 2 ABI break).
Matching is on the real error texts; the third field of each entry is data (the README's catalogue table shows
it): where the symptom and the fix are documented, or `-`. Classification order, severities and where the texts come from:
docs/design/checks.md section 4. The texts the tests feed in are in tests/fake_torch/texts.py.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from cudaswitch.checks.driver import Driver
from cudaswitch.checks.runner import ProbeOutcome
from cudaswitch.discovery.environment import site_packages
from cudaswitch.core.i18n import M, N_, _, columns

ERROR, WARNING, INFO = "error", "warning", "info"
# what a person reads in the severity column; --json keeps the codes above
_SEVERITY_WORDS = {ERROR: N_("error"), WARNING: N_("warning"), INFO: N_("info")}


def severity_label(severity: str, width: int = 8) -> str:
    """The severity column of the text output, padded by terminal columns: "error   ", or "错误    " in Chinese."""
    word = _(_SEVERITY_WORDS.get(severity, severity))
    return word + " " * max(1, width - columns(word))


def message(text: str) -> str:
    """`text` as a value another message can carry and still translate: a marked constant becomes an `M`."""
    if isinstance(text, M) or not text or "{" in text or "}" in text:
        return text
    return M(text)


@dataclass
class Finding:
    code: str
    severity: str
    cause: str
    fix: str
    details: List[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


# code -> (what it means, the usual fix, where the symptom and the fix are documented)
CATALOGUE: Dict[str, tuple] = {
    "TORCH_NOT_INSTALLED": (N_("torch is not installed in the environment (smoke test skipped)"),
                            N_("install torch; `cudaswitch recommend` prints the pip line that fits this machine"),
                            "-"),
    "PYTHON_MISSING": (N_("the environment has no Python interpreter, so no torch (smoke test skipped)"), N_("conda install -p PREFIX python"),
                       "-"),
    "PYTHON_FOREIGN": (N_("the environment's Python could have been written by another user than the one running "
                       "cudaswitch, which does not run it with its own rights (smoke test skipped)"),
                       N_("run the smoke test as the environment's owner: sudo -u OWNER cudaswitch smoke -p PREFIX"),
                       "docs/design/security.md"),
    "PYTHON_32BIT": (N_("32-bit Python: torch ships 64-bit wheels only; c10.dll fails to load"),
                     N_("recreate the environment with a 64-bit Python"), "PyPI torch file list: 64-bit wheels only"),
    "CPU_ONLY_BUILD": (N_("torch is a CPU-only build (torch.version.cuda is None)"),
                       N_("reinstall torch from a CUDA index: `cudaswitch recommend` prints the line"),
                       "torch.version.cuda is None in CPU builds; pytorch.org Get Started (CUDA wheel indexes)"),
    "NO_GPU": (N_("torch has CUDA but no GPU/driver is usable"), N_("install the NVIDIA driver, or pass --cpu-ok"),
               "-"),
    "DRIVER_TOO_OLD": (N_("the NVIDIA driver is older than torch's CUDA build needs"),
                       N_("update the driver, or install a torch build for the driver's CUDA (`cudaswitch recommend`)"),
                       "c10/cuda/CUDAFunctions.cpp warning text; NVIDIA CUDA Toolkit Release Notes, Table 3 "
                       "[S40][S41]"),
    "CUDA_VISIBLE_DEVICES_HIDDEN": (N_("CUDA_VISIBLE_DEVICES hides every GPU"), N_("unset CUDA_VISIBLE_DEVICES (or set it "
                                    "to the GPU index you want)"),
                                    "NVIDIA CUDA C++ Programming Guide, CUDA_VISIBLE_DEVICES; conda's __cuda plugin "
                                    "pops it"),
    "NO_KERNEL_IMAGE": (N_("the GPU's architecture is missing from this torch build ('no kernel image is available')"),
                        N_("install a torch build that lists this GPU's sm_XY (`cudaswitch recommend`)"),
                        "torch/cuda/__init__.py capability warning"),
    "DLL_INIT_FAILED": (N_("WinError 1114: a torch DLL (c10.dll) failed to initialise"),
                        N_("install the VC++ 2015-2022 x64 redistributable; import torch before PyQt/PySide; "
                        "reinstall torch with one tool only"),
                        "pytorch/pytorch#169429, #166628, #126507"),
    "DLL_NOT_FOUND": (N_("WinError 126: a DLL torch needs is missing"), N_("install the VC++ 2015-2022 x64 "
                      "redistributable, then reinstall torch"), "torch/__init__.py _load_dll_libraries error text"),
    "NUMPY_ABI": (N_("NumPy 2.x with a module compiled for NumPy 1.x (_ARRAY_API not found)"),
                  N_("pip install 'numpy<2' (or upgrade the module that was built for NumPy 1.x)"),
                  "pytorch/pytorch#135013"),
    "OPENMP_DUPLICATE": (N_("OMP: Error #15: two OpenMP runtimes are loaded"), N_("remove one of the runtimes listed (keep "
                         "torch's for pip torch, conda's for conda torch); do not set KMP_DUPLICATE_LIB_OK"),
                         "the OpenMP runtime's own OMP: Error #15 hint"),
    "LIB_SHADOWED": (N_("'undefined symbol': LD_LIBRARY_PATH puts other CUDA libraries before torch's pip wheels"),
                     N_("remove that folder from LD_LIBRARY_PATH (switch without adding the toolkit's lib64 to "
                     "LD_LIBRARY_PATH)"),
                     "pytorch/pytorch#111469, #140797, #152783"),
    "TORCH_MIXED_INSTALL": (N_("torch is installed twice (conda and pip, or two folders on sys.path)"),
                            N_("pip uninstall torch torchvision torchaudio; conda remove pytorch; then reinstall "
                            "with ONE tool"), "-"),
    "NO_AVX2": (N_("the CPU lacks AVX2, which torch's wheels require"), N_("use an older torch build or another machine"),
                "-"),
    "ILLEGAL_INSTRUCTION": (N_("torch was built for instructions this CPU does not have"), N_("install the official "
                            "wheel for this platform (a conda-forge or custom build may target a newer CPU)"),
                            "-"),
    "PROBE_TIMEOUT": (N_("the probe did not finish in time"), N_("rerun with a larger --timeout; if it hangs at the same "
                      "stage, that stage is the problem"), "-"),
    "PROBE_CRASHED": (N_("the Python process died without a result"), N_("run `python -c \"import torch\"` in the "
                      "environment to see the crash"), "-"),
    "IMPORT_FAILED": (N_("import torch failed"), N_("read the error; reinstall torch if the files are damaged"), "-"),
    "CUDNN_FAILED": (N_("the cuDNN convolution failed"), N_("remove other cuDNN copies from PATH/LD_LIBRARY_PATH so torch "
                     "loads its own"), "-"),
    "COMPUTE_FAILED": (N_("a GPU computation failed"), N_("read the error; check the driver with nvidia-smi"), "-"),
    "PYTHON_UNSUPPORTED": (N_("this Python is outside the torch release's supported range"), N_("use a Python the release "
                           "supports, or another torch release"),
                           "pytorch/pytorch RELEASE.md, Release Compatibility Matrix [S98]"),
    "TORCH_TOOLKIT_MAJOR_MISMATCH": (N_("torch's CUDA major differs from the selected toolkit's: CUDA extensions will "
                                     "not build"), N_("switch to a toolkit of torch's CUDA major (`cudaswitch use X.Y`)"),
                                     "torch/utils/cpp_extension.py CUDA_MISMATCH_MESSAGE; prefix-dev/pixi#2145"),
    "TOOLKIT_MISSING": (N_("the toolkit `cudaswitch use` chose for the environment is no longer installed"),
                        N_("run `cudaswitch use X.Y` with an installed toolkit (`cudaswitch list`)"), "-"),
    "BUILD_TOOLKIT_MAJOR": (N_("the toolkit an extension build uses (CUDA_HOME, else nvcc on PATH) has another CUDA "
                            "major than torch: cpp_extension refuses to build"),
                            N_("`cudaswitch use auto` picks a toolkit of torch's CUDA (or names the install-toolkit "
                            "command)"), "torch/utils/cpp_extension.py _check_cuda_version; docs/design/torch-aware.md"),
    "BUILD_TOOLKIT_MINOR": (N_("the build toolkit's CUDA minor differs from torch's: cpp_extension warns, builds "
                            "normally work"), N_("`cudaswitch use auto`, or `cudaswitch install-toolkit X.Y` for an "
                            "exact match"), "torch/utils/cpp_extension.py _check_cuda_version"),
    "HOST_COMPILER_TOO_NEW": (N_("the host compiler is newer than the toolkit's nvcc accepts ('unsupported GNU "
                              "version!' / unsupported Microsoft Visual Studio version)"),
                              N_("install an older gcc/g++ (e.g. conda install -c conda-forge gxx=13) and set CXX/CC, "
                              "or a newer toolkit"), "the toolkit's include/crt/host_config.h"),
    "HOST_COMPILER_TOO_OLD": (N_("the host compiler is older than torch's headers (C++ standard) or nvcc require"),
                              N_("install a newer gcc/g++ (conda install -c conda-forge gxx) and set CXX/CC"),
                              "torch_release.csv cpp_std; GCC C++ standards support [S121]"),
    "ARCH_LIST_UNSUPPORTED": (N_("TORCH_CUDA_ARCH_LIST names an architecture the toolkit's nvcc cannot target"),
                              N_("drop it from TORCH_CUDA_ARCH_LIST or use a toolkit that supports it"),
                              "nvcc --list-gpu-arch of the toolkit"),
    "ARCH_LIST_MISSES_GPU": (N_("TORCH_CUDA_ARCH_LIST has no code for this GPU's compute capability"),
                             N_("add the GPU's X.Y (nvidia-smi --query-gpu=compute_cap) or unset TORCH_CUDA_ARCH_LIST "
                             "(cpp_extension then builds for the visible GPU)"), "torch/utils/cpp_extension.py"),
    "TABLES_BEHIND": (N_("torch or cuDNN is newer than cudaswitch's tables; the message says how far they go and "
                      "what still follows"), N_("update cudaswitch (maintainers: tools/update_tables.py)"),
                      "cudaswitch/data/*.csv"),
    "NINJA_MISSING": (N_("ninja is not installed: extension builds run serially through distutils (slow)"),
                      N_("pip install ninja (in the environment)"), "torch/utils/cpp_extension.py verify_ninja_availability"),
    "DRIVER_MINOR_COMPAT": (N_("the driver is older than torch's CUDA minor: runs under minor-version compatibility"),
                            N_("update the driver for full support (PTX JIT of newer code)"),
                            "NVIDIA, CUDA Minor Version Compatibility [S43]"),
}


def finding(code: str, severity: str, cause: Optional[str] = None, fix: Optional[str] = None,
            details: Optional[List[str]] = None) -> Finding:
    base_cause, base_fix, _ = CATALOGUE[code]
    return Finding(code, severity, cause or base_cause, fix or base_fix, list(details or []))


# ---- the real texts ------------------------------------------------------------------------------------------

RX_WIN1114 = re.compile(r"WinError 1114|DLL initiali[sz]ation routine failed|动态链接库\(DLL\)初始化例程失败")
RX_WIN126 = re.compile(r"WinError 126|The specified module could not be found|找不到指定的模块")
# a path is at most MAX_PATH long: the bound keeps a line of repeated "Error loading" linear, not quadratic
RX_DLL_FILE = re.compile(r"""Error loading ["']?([^"'\n]{1,400}?\.dll)["']?(?: or one of its dependencies)""", re.I)
RX_NUMPY = re.compile(r"_ARRAY_API not found|compiled using NumPy 1\.x cannot be run in|numpy\.core\.multiarray "
                      r"failed to import")
RX_OMP15 = re.compile(r"OMP: Error #15: Initializing (\S+), but found (\S+) already initialized")
# The library name starts after whitespace or at a line start and is matched lazily, so each position is tried in
# constant time: `(\S+\.so...)` from every offset of one long token was quadratic (200 KB of stderr: minutes).
RX_UNDEF = re.compile(r"(?:^|(?<=\s))(\S+?\.so[.\d]*): undefined symbol: (\S+?)(?:, version (\S+))?$", re.M)
RX_DRIVER_OLD = re.compile(r"NVIDIA driver on your system is too old(?: \(found version (\d+)\))?|"
                           r"CUDA driver version is insufficient for CUDA runtime version")
RX_NO_KERNEL = re.compile(r"no kernel image is available for execution on the device")
RX_NOT_COMPATIBLE = re.compile(r"with CUDA capability (sm_\d+) is not compatible with the current PyTorch "
                               r"installation")
RX_NO_TORCH = re.compile(r"No module named '?torch'?(?:$|\s|\n)")
RX_CUDNN = re.compile(r"CUDNN_STATUS_\w+|cuDNN error|Could not load library libcudnn|cudnn\w*64_\d\.dll")

OPENMP_NAMES = re.compile(r"^(libiomp5|libgomp|libomp|vcomp|libiomp5md)[\w.-]*\.(so[\d.]*|dll|dylib)$", re.I)


def openmp_files(prefix: str) -> List[str]:
    """OpenMP runtimes inside an environment: the files the OMP #15 message is about."""
    out: List[str] = []
    roots = [os.path.join(prefix, "lib"), os.path.join(prefix, "Library", "bin"), os.path.join(prefix, "bin")]
    for sp in site_packages(prefix):
        roots += [os.path.join(sp, "torch", "lib"), os.path.join(sp, "numpy.libs"), os.path.join(sp, "torch.libs")]
        roots += [str(p) for p in Path(sp).glob("*.libs")]
    seen = set()
    for root in roots:
        try:
            names = sorted(os.listdir(root))
        except OSError:
            continue
        for n in names:
            full = os.path.join(root, n)
            if OPENMP_NAMES.match(n) and full not in seen and not os.path.islink(full):
                seen.add(full)
                out.append(full)
    return out


def folders_with(lib: str, paths: List[str]) -> List[str]:
    """Entries of a search-path list holding a file named `lib` (or a soname sibling of it)."""
    base = lib.split(".so")[0] if ".so" in lib else lib
    hits = []
    for d in paths:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        if any(n == lib or n.startswith(base + ".so") for n in names):
            hits.append(d)
    return hits


# ---- classification ------------------------------------------------------------------------------------------

def _text(outcome: ProbeOutcome) -> str:
    rec = outcome.record or {}
    parts = [outcome.stderr or ""] + ([outcome.stdout or ""] if outcome.record is None else [])
    imp = rec.get("import") or {}
    if imp.get("traceback"):
        parts.append(imp["traceback"])
    if imp.get("error"):
        parts.append(imp["error"].get("message", ""))
    parts += rec.get("warnings", [])
    for step in (rec.get("steps") or {}).values():
        if step.get("error"):
            parts.append(step["error"].get("message", ""))
    t = rec.get("torch") or {}
    for k in ("cuda_error", "device_error"):
        if t.get(k):
            parts.append(t[k].get("message", ""))
    return "\n".join(_capped(p) for p in parts)


CLASSIFY_HEAD, CLASSIFY_TAIL = 16 << 10, 48 << 10


def _capped(text: str) -> str:
    """What is classified of one output: its start and its end, where the errors are. A module that floods stderr
    must not make the diagnosis slower than the probe's own --timeout."""
    text = text or ""
    if len(text) <= CLASSIFY_HEAD + CLASSIFY_TAIL:
        return text
    return text[:CLASSIFY_HEAD] + "\n" + text[-CLASSIFY_TAIL:]


def _cvd_hides(value: Optional[str]) -> bool:
    if value is None:
        return False
    v = value.strip()
    if v == "" or v.startswith("-1"):
        return True
    first = v.split(",")[0].strip()
    return not (first.isdigit() or first.startswith(("GPU-", "MIG-")))


def classify_import_failure(text: str, outcome: ProbeOutcome, prefix: str, environ: Dict[str, str],
                            windows: bool) -> List[Finding]:
    rec = outcome.record or {}
    py = rec.get("python") or {}
    out: List[Finding] = []
    m = RX_OMP15.search(text)
    if m:
        files = openmp_files(prefix)
        if files:
            cause = M("OMP: Error #15: two OpenMP runtimes ({name}): {files}", name=m.group(1), files="; ".join(files))
        else:
            cause = M("OMP: Error #15: two OpenMP runtimes ({name}): none found inside the environment (one comes from "
                      "outside it)", name=m.group(1))
        out.append(finding("OPENMP_DUPLICATE", ERROR, cause, details=files))
        return out
    m = RX_UNDEF.search(text)
    if m:
        lib, sym, ver = m.group(1), m.group(2), m.group(3)
        ld = [p for p in environ.get("LD_LIBRARY_PATH", "").split(":") if p]
        wanted = [ver] if ver else []
        wanted.append(os.path.basename(lib))
        culprits = []
        for w in wanted:
            for d in folders_with(w, ld):
                if d not in culprits:
                    culprits.append(d)
        if culprits:
            cause = M("undefined symbol {symbol} in {lib}: LD_LIBRARY_PATH folder {folder} shadows torch's pip NVIDIA "
                      "libraries", symbol=sym, lib=os.path.basename(lib), folder=culprits[0])
            fix = M("remove {folder} from LD_LIBRARY_PATH (switch without adding the toolkit's lib64 to "
                    "LD_LIBRARY_PATH)", folder=culprits[0])
        else:
            cause = M("undefined symbol {symbol} in {lib}: two versions of a CUDA library are mixed", symbol=sym, lib=lib)
            fix = N_("make sure LD_LIBRARY_PATH and /etc/ld.so.conf.d hold no other CUDA toolkit's lib64; "
                     "reinstall torch's nvidia-* wheels")
        out.append(finding("LIB_SHADOWED", ERROR, cause, fix, details=culprits))
        return out
    if RX_NUMPY.search(text):
        out.append(finding("NUMPY_ABI", ERROR))
        return out
    message = ((rec.get("import") or {}).get("error") or {}).get("message", "")
    dll = RX_DLL_FILE.search(message) or RX_DLL_FILE.search(text)  # the message first: tracebacks quote source
    dll_name = dll.group(1) if dll else None
    if py.get("bits") == 32:
        out.append(finding("PYTHON_32BIT", ERROR))
        return out
    if RX_WIN1114.search(text):
        details = []
        dll_text = dll_name or M("a torch DLL")
        cause = M("WinError 1114: {dll} failed to initialise", dll=dll_text)
        if rec.get("cpu_avx2") is False:
            out.append(finding("NO_AVX2", ERROR, M("WinError 1114: {dll} failed to initialise, and this CPU lacks AVX2, "
                                                   "which torch's wheels need", dll=dll_text)))
            return out
        copies = rec.get("msvcp140") or []
        on_windows = py.get("platform") == "win32"
        if len(copies) > 1:
            details.append("msvcp140.dll copies in load order: " + "; ".join(copies))
            cause = M("WinError 1114: {dll} failed to initialise; the first msvcp140.dll found is {copy} (older copies "
                      "shadow the VC++ runtime)", dll=dll_text, copy=copies[0])
        elif not copies and on_windows:
            cause = M("WinError 1114: {dll} failed to initialise; no msvcp140.dll was found: the VC++ 2015-2022 runtime "
                      "is missing", dll=dll_text)
        out.append(finding("DLL_INIT_FAILED", ERROR, cause, details=details))
        return out
    if RX_WIN126.search(text):
        out.append(finding("DLL_NOT_FOUND", ERROR, M("WinError 126: {dll} or one of its dependencies is missing",
                                                     dll=dll_name or M("a DLL"))))
        return out
    if outcome.returncode in (-4, 132) or "Illegal instruction" in text:
        avx = rec.get("cpu_avx2")
        if avx is None:  # the probe died before reporting: same machine, ask here
            from cudaswitch.checks.probe import cpu_has_avx2

            avx = cpu_has_avx2()
        if avx:
            out.append(finding("ILLEGAL_INSTRUCTION", ERROR, N_("torch died with an illegal instruction (SIGILL) although "
                               "this CPU has AVX2: the build needs an instruction set this CPU lacks")))
        else:
            out.append(finding("NO_AVX2", ERROR, N_("torch died with an illegal instruction (SIGILL): this CPU lacks "
                                                    "AVX2") if avx is False else
                               N_("torch died with an illegal instruction (SIGILL)")))
        return out
    imp = rec.get("import") or {}
    err = imp.get("error") or {}
    if err.get("type") in ("ModuleNotFoundError",) and RX_NO_TORCH.search(err.get("message", "") + "\n"):
        out.append(finding("TORCH_NOT_INSTALLED", INFO))
        return out
    last = (err.get("type", "") + ": " + err.get("message", "")).strip(": ").splitlines()
    out.append(finding("IMPORT_FAILED", ERROR, M("import torch failed: {error}",
                                                 error=last[0] if last else M("unknown error"))))
    return out


def classify(outcome: ProbeOutcome, prefix: str, environ: Dict[str, str], windows: bool, cpu_ok: bool,
             driver: Driver, toolkit: Optional[Dict] = None) -> List[Finding]:
    """Every finding for one probe run, most important first."""
    from cudaswitch.checks import knowledge

    rec = outcome.record
    text = _text(outcome)
    if outcome.timed_out:
        return [finding("PROBE_TIMEOUT", ERROR, M("the probe did not finish in time (last stage: {stage})",
                                                  stage=outcome.last_stage or "start"))]
    if rec is None:
        if RX_OMP15.search(text) or RX_WIN1114.search(text) or RX_UNDEF.search(text) or outcome.returncode in (-4, 132):
            return classify_import_failure(text, outcome, prefix, environ, windows)
        tail = [ln for ln in (outcome.stderr or "").splitlines() if ln and not ln.startswith("cudaswitch-probe:")]
        stage = outcome.last_stage or "start"
        return [finding("PROBE_CRASHED", ERROR, M("the probe died (exit {code}) at stage {stage}: {last}",
                                                  code=outcome.returncode, stage=stage, last=tail[-1]) if tail else
                        M("the probe died (exit {code}) at stage {stage}", code=outcome.returncode, stage=stage))]
    findings: List[Finding] = []
    py = rec.get("python") or {}
    imp = rec.get("import") or {}
    if not imp.get("ok"):
        return classify_import_failure(text, outcome, prefix, environ, windows)
    t = rec.get("torch") or {}
    version = t.get("version") or ""
    cuda = t.get("cuda")
    avail = t.get("is_available")
    steps = rec.get("steps") or {}

    # --- chain: Python range of the release
    pyok = knowledge.python_ok(version, py.get("version", ""))
    if pyok and not pyok[0]:
        findings.append(finding("PYTHON_UNSUPPORTED", WARNING, M("Python {python} is outside torch {version}'s "
                                                                 "{range} [{src}]", python=py.get('version'),
                                                                 version=version, range=pyok[1], src=pyok[2])))
    if NUMPY_WARNING.search(text):
        findings.append(finding("NUMPY_ABI", ERROR))

    # --- build / device
    if cuda is None and not t.get("hip"):
        sev = WARNING if cpu_ok else ERROR
        findings.insert(0, finding("CPU_ONLY_BUILD", sev, M("torch {version} is a CPU-only build (torch.version.cuda "
                                                            "is None): no GPU test (--cpu-ok)", version=version)
                                   if cpu_ok else M("torch {version} is a CPU-only build (torch.version.cuda is None)",
                                                    version=version)))
    elif not avail:
        cvd = rec.get("cuda_visible_devices")
        dmax = driver.cuda_max
        verdict = knowledge.driver_runs(dmax, cuda, windows)
        m = RX_DRIVER_OLD.search(text)
        if _cvd_hides(cvd):
            findings.insert(0, finding("CUDA_VISIBLE_DEVICES_HIDDEN", ERROR,
                                       M("CUDA_VISIBLE_DEVICES={value} hides every GPU from torch", value=repr(cvd))))
        elif m or verdict.status == "too-old":
            found = M("driver supports CUDA {cuda}", cuda=dmax) if dmax else M("driver too old")
            if m and m.group(1):
                n = int(m.group(1))
                reported = f"{n // 1000}.{(n % 1000) // 10}"
                found = M("driver supports CUDA {cuda}", cuda=reported)
            need = knowledge.min_driver(cuda, windows)
            fix = M("update the NVIDIA driver to >= {driver} (CUDA {cuda}) [{src}], or install a torch build for your "
                    "driver's CUDA (`cudaswitch recommend`)", driver=need[0], cuda=cuda, src=need[1]) if need else None
            findings.insert(0, finding("DRIVER_TOO_OLD", ERROR, M("torch {version} needs CUDA {cuda}; {found}",
                                                                  version=version, cuda=cuda, found=found), fix))
        elif cvd is not None and dmax:
            findings.insert(0, finding("CUDA_VISIBLE_DEVICES_HIDDEN", ERROR,
                                       M("CUDA_VISIBLE_DEVICES={value} selects no usable GPU (the driver supports "
                                         "CUDA {cuda}, torch sees no device)", value=repr(cvd), cuda=dmax)))
        elif not dmax:
            sev = WARNING if cpu_ok else ERROR
            findings.insert(0, finding("NO_GPU", sev, M("torch {version} has CUDA {cuda} but no NVIDIA driver was "
                                                        "found ({why})", version=version, cuda=cuda,
                                                        why=message(driver.error) or M("no GPU"))))
        else:
            findings.insert(0, finding("NO_GPU", WARNING if cpu_ok else ERROR, M("torch {version} (CUDA {cuda}) sees "
                                                                                 "no GPU although the driver supports "
                                                                                 "CUDA {dmax}", version=version,
                                                                                 cuda=cuda, dmax=dmax)))
    else:
        dmax = driver.cuda_max
        verdict = knowledge.driver_runs(dmax, cuda, windows)
        if verdict.status == "minor-compat":
            findings.append(finding("DRIVER_MINOR_COMPAT", INFO, verdict.message))
        cap = t.get("capability")
        in_list = knowledge.arch_in_list(cap, t.get("arch_list") or []) if cap else None
        m = RX_NOT_COMPATIBLE.search(text)
        if in_list is False or m:
            findings.append(finding("NO_KERNEL_IMAGE", ERROR, M("{gpu} (compute capability {cap}) is not in torch "
                                                                "{version}'s arch list {archs}",
                                                                gpu=t.get('device_name', M("the GPU")), cap=cap,
                                                                version=version,
                                                                archs=' '.join(t.get('arch_list') or []) or
                                                                M("(empty)"))))

    # --- computations
    for name in ("matmul", "conv2d", "autocast"):
        step = steps.get(name) or {}
        err = step.get("error")
        if not err:
            continue
        msg = err.get("message", "")
        if RX_NO_KERNEL.search(msg):
            if not any(f.code == "NO_KERNEL_IMAGE" for f in findings):
                findings.append(finding("NO_KERNEL_IMAGE", ERROR, M("{step}: no kernel image is available for {gpu} "
                                                                    "(compute capability {cap}) in torch {version}",
                                                                    step=name, gpu=t.get('device_name', M("the GPU")),
                                                                    cap=t.get('capability', '?'), version=version)))
        elif name == "conv2d" and RX_CUDNN.search(msg):
            findings.append(finding("CUDNN_FAILED", ERROR, M("conv2d failed in cuDNN: {error}",
                                                             error=msg.splitlines()[0][:200])))
        else:
            findings.append(finding("COMPUTE_FAILED", ERROR, M("{step} failed: {type}: {error}", step=name,
                                                               type=err.get('type'),
                                                               error=msg.splitlines()[0][:200] if msg else '')))

    # --- toolkit major vs torch CUDA major (CUDA extension builds)
    if toolkit and cuda:
        if knowledge.same_major(toolkit.get("version"), cuda) is False:
            findings.append(finding("TORCH_TOOLKIT_MAJOR_MISMATCH", WARNING,
                                    M("torch is built with CUDA {cuda} but the selected toolkit is CUDA {version} "
                                      "({root}): torch.utils.cpp_extension refuses major mismatches", cuda=cuda,
                                      version=toolkit.get('version'), root=toolkit.get('root'))))
    # --- install layout
    folders = rec.get("torch_folders") or []
    if len(folders) > 1:
        findings.append(finding("TORCH_MIXED_INSTALL", ERROR, M("two torch packages on sys.path: {folders} (the "
                                                                "first one is imported)", folders='; '.join(folders)),
                                details=folders))
    return findings


NUMPY_WARNING = re.compile(r"Failed to initialize NumPy: _ARRAY_API not found|compiled using NumPy 1\.x cannot be run")


def install_findings(installs: Dict) -> List[Finding]:
    """From torchenv.torch_installs(): a conda record plus a pip-installed dist-info, or two dist-infos."""
    out: List[Finding] = []
    conda = installs.get("conda") or []
    pip = [d for d in installs.get("dist_infos") or [] if (d.get("installer") or "").lower() != "conda"]
    if conda and pip:
        out.append(finding("TORCH_MIXED_INSTALL", ERROR,
                           M("torch is installed by conda ({conda_name} {conda_version}, {conda_file}) AND by pip "
                             "({pip_name} {pip_version}, {pip_path})", conda_name=conda[0]['name'],
                             conda_version=conda[0]['version'], conda_file=conda[0]['file'], pip_name=pip[0]['name'],
                             pip_version=pip[0]['version'], pip_path=pip[0]['path']),
                           details=[c["file"] for c in conda] + [p["path"] for p in pip]))
    elif len(installs.get("dist_infos") or []) > 1:
        paths = [d["path"] for d in installs["dist_infos"]]
        out.append(finding("TORCH_MIXED_INSTALL", ERROR, M("{count} torch dist-info folders: {paths}",
                                                           count=len(paths), paths='; '.join(paths)), details=paths))
    return out
