"""Failure classification for the torch smoke test: a stable code, a one-line cause naming what was found, and the fix.

The catalogue covers the torch install failures users commonly report (the c10.dll / WinError 1114 causes, the
error message -> likely cause -> first fix pairs, the reasons torch.cuda.is_available() is False) and failures no
existing tool classifies (WinError 1114, LD_LIBRARY_PATH shadowing pip's CUDA libraries, the NumPy 2 ABI break).
Matching is on the real error texts; the third field of each entry is data (the guide's troubleshooting page shows
it): where the symptom and the fix are documented, or `-`. Classification order, severities and where the texts come from:
docs/design/checks.md section 4. The texts the tests feed in are in tests/fake_torch/texts.py.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from cudaswitch.checks.driver import Driver
from cudaswitch.checks.runner import ProbeOutcome
from cudaswitch.checks.severities import ERROR, INFO, WARNING, severity as table_severity
from cudaswitch.checks.windll import ILLEGAL_INSTRUCTION, exit_status
from cudaswitch.discovery.environment import site_packages
from cudaswitch.core.i18n import Cited, Listed, M, N_, _, columns

# what a person reads in the severity column; --json keeps the codes above
_SEVERITY_WORDS = {ERROR: N_("error"), WARNING: N_("warning"), INFO: N_("info")}


def severity_label(severity: str, width: int = 8) -> str:
    """The severity column of the text output, padded by terminal columns: "error   ", or "错误    " in Chinese."""
    word = _(_SEVERITY_WORDS.get(severity, severity))
    return word + " " * max(1, width - columns(word))


def severity_word(severity: str) -> str:
    """The severity as a word another message carries: "warning", or "警告" in Chinese."""
    return message(_SEVERITY_WORDS.get(severity, severity))


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
    "NO_GPU": (N_("torch has CUDA but no GPU/driver is usable"),
               N_("no driver: install the NVIDIA driver; a driver but no GPU seen (cuInit: CUDA_ERROR_NO_DEVICE): "
                  "switch the laptop's GPU mode to hybrid/discrete or enable the GPU; or pass --cpu-ok"),
               "NVIDIA CUDA Driver API, cuInit / CUDA_ERROR_NO_DEVICE"),
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
    "VCRUNTIME_TOO_OLD": (N_("the VC++ runtime DLL the loader takes first is older than the environment's torch "
                           "needs (WinError 1114 on c10.dll)"),
                          N_("update the copy that is loaded first: the environment's vc14_runtime package, or the "
                          "VC++ 2015-2022 redistributable for System32's"), "pytorch/pytorch#169429 [S122][S123]"),
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
    "CUDNN_DLL_MISSING": (N_("cuDNN could not locate a DLL it loads at run time (zlibwapi.dll, or its own "
                           "cudnn_*64_8.dll sub-libraries) and ended the process"),
                           N_("put zlibwapi.dll, or the folder holding every cudnn_*64_8.dll, on the loader path"),
                           "NVIDIA cuDNN 8.x installation guide (zlib) [S58]; docs/design/windows-cudnn.md"),
    "IMPORT_FAILED": (N_("import torch failed"), N_("read the error; reinstall torch if the files are damaged"), "-"),
    "LIB_NOT_FOUND": (N_("a CUDA or cuDNN library torch is linked to is not on the loader's path ('cannot open shared "
                       "object file')"),
                      N_("install torch with the CUDA libraries it was built with (pip's nvidia-* wheels come with "
                         "it; reinstall torch from its index), or put the folder holding that library on "
                         "LD_LIBRARY_PATH"), "the dynamic loader's dlopen error text (ld.so)"),
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
    "MSVC_NOT_ON_PATH": (N_("cl.exe (MSVC) is not on PATH: nvcc and torch.utils.cpp_extension cannot compile CUDA "
                          "extensions"),
                         N_("open the \"x64 Native Tools Command Prompt for VS\", or run vcvars64.bat in this terminal, "
                         "then build"), "Microsoft, Use the Microsoft C++ toolset from the command line (vcvars64.bat)"),
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


def finding(code: str, severity: Optional[str] = None, cause: Optional[str] = None, fix: Optional[str] = None,
            details: Optional[List[str]] = None, when: Optional[str] = None) -> Finding:
    """A catalogued finding; its severity is the table's (checks/severities.py) for the form `when`, whatever the
    caller passed (that only serves a code the table does not have yet)."""
    base_cause, base_fix, _ = CATALOGUE[code]
    return Finding(code, table_severity(code, when, severity), cause or base_cause, fix or base_fix,
                   list(details or []))


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
# cuDNN 8's own text (the format string "Could not locate %s. Please make sure it is in your library path!" in the
# real cudnn64_8.dll) before it ends the process (docs/design/checks.md section 6)
RX_CUDNN_LOCATE = re.compile(r"Could not locate (\S{1,260}?\.dll)\. Please make sure it is in your library path")
RX_CUDNN = re.compile(r"CUDNN_STATUS_\w+|cuDNN error|cuDNN version incompatibility|Could not load library libcudnn|"
                      r"cudnn\w*64_\d\.dll")
# the loader's words for a library torch links to that it cannot find (dlerror: "libcudnn.so.8: cannot open shared
# object file: No such file or directory")
RX_SO_MISSING = re.compile(r"(lib[\w+-]+\.so(?:\.\d+)*): cannot open shared object file")
# cuDNN 8 loads its sub-libraries at run time and ends the process when one is missing
RX_CUDNN_SO_LOAD = re.compile(r"Could not load library (libcudnn\w*\.so(?:\.\d+)*)")

# a process killed by SIGILL: -4 from subprocess, 132 from a shell; 0xC000001D on Windows
SIGILL_CODES = (-4, 132, ILLEGAL_INSTRUCTION)

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
                            windows: bool, system=None) -> List[Finding]:
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
    m = RX_SO_MISSING.search(text)
    owner = wheel_of_library(prefix, m.group(1) or m.group(2)) if m and prefix and not windows else None
    if owner:  # a file of a pip wheel that is gone: that wheel is what to reinstall
        wheel, version = owner
        out.append(finding("LIB_NOT_FOUND", ERROR, M("import torch failed: {lib} is missing, a library of the pip "
                                                     "wheel {wheel} {version}", lib=m.group(1) or m.group(2) + ".so",
                                                     wheel=wheel, version=version),
                           M("reinstall that wheel: pip install --force-reinstall --no-deps {wheel}=={version}",
                             wheel=wheel, version=version)))
        return out
    if m:
        out.append(finding("LIB_NOT_FOUND", ERROR, M("import torch failed: {lib} is not on the loader's path "
                                                     "(cannot open shared object file)", lib=m.group(1) or
                                                     m.group(2) + ".so")))
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
        if system is not None and windows:
            read = runtime_finding(system, prefix, dll_text)
            if read is not None:
                out.append(read)
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
        walked = missing_dll_finding(system, prefix, dll_name, environ) if system is not None and windows and \
            dll_name else None
        if walked is not None:
            out.append(walked)
            return out
        out.append(finding("DLL_NOT_FOUND", ERROR, M("WinError 126: {dll} or one of its dependencies is missing",
                                                     dll=dll_name or M("a DLL"))))
        return out
    if outcome.returncode in SIGILL_CODES or "Illegal instruction" in text:
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


# the loader's "libcudnn.so.9: cannot open shared object file", torch's own "libcublas.so.*[0-9] not found in the
# system path" (torch/__init__.py, _preload_cuda_deps)
RX_SO_MISSING = re.compile(r"(lib[\w+.-]+?\.so[.\d]*): cannot open shared object file|"
                           r"(lib[\w+-]+)\.so\.\*\[0-9\] not found in the system path")


def wheel_of_library(prefix: str, name: str) -> Optional[Tuple[str, str]]:
    """(wheel, version) of the pip `nvidia-*` wheel whose RECORD lists the library `name` (`libcudnn.so.9`, or a
    stem such as `libcublas`), or None: the record still names a file that was deleted."""
    from cudaswitch.core.trust import read_text

    for sp in site_packages(prefix):
        for dist in sorted(Path(sp).glob("nvidia_*.dist-info")):
            try:
                record = read_text(dist / "RECORD", limit=4 << 20)
            except (OSError, ValueError):
                continue
            for line in record.splitlines():
                base = line.split(",", 1)[0].rsplit("/", 1)[-1]
                if base == name or (not name.count(".so") and base.startswith(name + ".so")):
                    stem, _, version = dist.name[:-len(".dist-info")].partition("-")
                    return stem.replace("_", "-"), version
    return None


# ---- Windows DLL failures, read from the DLLs (cudaswitch/checks/windll.py; docs/design/checks.md section 6) ------

REDIST_URL = "https://aka.ms/vs/17/release/vc_redist.x64.exe"
_VC_NAMES = re.compile(r"^(msvcp140[\w]*|vcruntime140[\w]*|concrt140|vcomp140|vccorlib140)\.dll$", re.I)


def _shown_prefix(system, prefix: str) -> str:
    return system.display(Path(prefix))


def runtime_finding(system, prefix: str, dll_text) -> Optional[Finding]:
    """WinError 1114: the VC++ runtime copies in load order with their versions, the one older than torch needs,
    and the fix that reaches that copy (the environment's package, or the redistributable for System32)."""
    from cudaswitch.checks import windll
    from cudaswitch.discovery.torchenv import torch_installs

    shown = _shown_prefix(system, prefix)
    copies = windll.runtime_copies(system, windll.env_folders(system, shown), windll.system32(system))
    if not copies:
        return None
    details = [f"{c.path} {windll.version_text(c.version)}" + (" (loaded first)" if c.first else "") for c in copies]
    torch_version = torch_installs(prefix).get("version")
    old = windll.too_old(copies, torch_version)
    absent = [n for n in windll.RUNTIME_DLLS if not any(c.name == n for c in copies)]
    if not old and absent:
        return finding("DLL_INIT_FAILED", ERROR, M("WinError 1114: {dll} failed to initialise; {files} is in none of "
                                                   "the environment's folders nor System32: the VC++ 2015-2022 "
                                                   "runtime is incomplete", dll=dll_text, files=Listed(absent)),
                       M("install the current Microsoft Visual C++ 2015-2022 Redistributable (x64), which replaces "
                         "System32's copy: {url}", url=REDIST_URL), details=details)
    if not old:
        first = next(c for c in copies if c.first)
        return finding("DLL_INIT_FAILED", ERROR, M("WinError 1114: {dll} failed to initialise; the VC++ runtime the "
                                                   "loader takes first ({copy}, version {version}) is not older than "
                                                   "torch {torch} needs", dll=dll_text, copy=first.path,
                                                   version=windll.version_text(first.version),
                                                   torch=torch_version or "?"), details=details)
    c, row = old[0]
    cause = M("WinError 1114: {dll} failed to initialise: the {name} the loader takes first is {copy}, version "
              "{version}; torch {torch} needs {minimum} or newer{src}", dll=dll_text, name=c.name,
              copy=c.path, version=windll.version_text(c.version), torch=torch_version, minimum=row["min_version"],
              src=Cited(row["src"]))
    details.append(row["why"])
    return finding("DLL_INIT_FAILED", ERROR, cause, _runtime_fix(system, shown, c, row), details=details)


def _runtime_fix(system, shown: str, c, row: Dict[str, str]) -> str:
    """The fix that reaches the copy `c` the loader takes: the environment's conda package, or the redistributable
    for System32's."""
    from cudaswitch.checks import windll

    if c.in_env:
        package = windll.owning_package(system, shown, c.path)
        if package:
            return M("update the environment's own copy, which is loaded before System32's (the VC++ redistributable "
                     "does not replace it): conda install -p \"{prefix}\" -c conda-forge \"{package}>={minimum}\"",
                     prefix=shown, package=package, minimum=row["min_version"])
        return M("{copy} belongs to no conda package of the environment (a pip wheel or a copied file) and is loaded "
                 "before System32's: remove it, or replace it with version {minimum} or newer (conda install -p "
                 "\"{prefix}\" -c conda-forge \"vc14_runtime>={minimum}\")", copy=c.path, prefix=shown,
                 minimum=row["min_version"])
    return M("install the current Microsoft Visual C++ 2015-2022 Redistributable (x64), which replaces System32's "
             "copy: {url}", url=REDIST_URL)


def vc_runtime_findings(system, prefix: str, installs: Dict) -> List[Finding]:
    """doctor, without importing torch: the VC++ runtime copy the loader takes first is older than the
    environment's torch needs (VCRUNTIME_MISSING only sees whether System32 has one)."""
    from cudaswitch.checks import windll

    if not system.windows or not installs.get("version"):
        return []
    shown = _shown_prefix(system, prefix)
    copies = windll.runtime_copies(system, windll.env_folders(system, shown), windll.system32(system))
    out = []
    for c, row in windll.too_old(copies, installs["version"]):
        out.append(finding("VCRUNTIME_TOO_OLD", ERROR, M("{copy} is version {version}, and it is the {name} the "
                                                         "loader takes first; torch {torch} needs {minimum} or newer: "
                                                         "import torch fails with WinError 1114{src}", copy=c.path,
                                                         version=windll.version_text(c.version), name=c.name,
                                                         torch=installs["version"], minimum=row["min_version"],
                                                         src=Cited(row["src"])),
                           _runtime_fix(system, shown, c, row),
                           details=[f"{x.path} {windll.version_text(x.version)}" for x in copies] + [row["why"]]))
    return out



def missing_dll_finding(system, prefix: str, dll: str, environ: Dict[str, str]) -> Optional[Finding]:
    """WinError 126: the import tables walked from the DLL torch names through the files the loader finds; the
    first import no folder holds is the DLL that is missing."""
    from cudaswitch.checks import windll

    if not system.local(dll).is_file():
        return finding("DLL_NOT_FOUND", ERROR, M("WinError 126: {dll} itself is missing", dll=dll),
                       N_("reinstall torch with the tool that installed it (the files are incomplete)"))
    folders = windll.search_folders(system, _shown_prefix(system, prefix), environ.get("PATH"))
    missing = windll.missing_imports(system, dll, folders)
    if not missing:
        return None
    m = missing[0]
    cause = M("WinError 126: {name}, which {importer} imports, is in none of the folders the loader searches (for "
              "{dll})", name=m.name, importer=system.pure(m.needed_by).name, dll=dll)
    if _VC_NAMES.match(m.name):
        fix = M("install the Microsoft Visual C++ 2015-2022 Redistributable (x64), which puts {name} into System32: "
                "{url}", name=m.name, url=REDIST_URL)
    else:
        fix = M("put the folder that holds {name} on PATH, or reinstall the package that ships it", name=m.name)
    details = [" -> ".join(m.chain + [m.name])] + [f"{x.name} (imported by {x.needed_by})" for x in missing[1:]] + \
        ["searched: " + "; ".join(folders)]
    return finding("DLL_NOT_FOUND", ERROR, cause, fix, details=details)


def cudnn_locate_finding(name: str, outcome: ProbeOutcome, prefix: str, environ: Dict[str, str],
                         system=None) -> Finding:
    """cuDNN 8 printed "Could not locate NAME": zlibwapi.dll for cuDNN 8.3-8.9, or one of its own sub-libraries,
    which it loads by bare name from PATH. Then it ended the process (no record), or returned an error."""
    from cudaswitch.cudnn.compat import joined
    from cudaswitch.discovery.cudnn_windows import needs_zlibwapi

    loaded = None
    if system is not None and system.windows:
        from cudaswitch.checks import windll

        loaded = windll.loaded_cudnn(system, _shown_prefix(system, prefix), environ.get("PATH"))
    if outcome.record is None:
        then = M("the process ended (exit {code}) at stage {stage}", code=exit_status(outcome.returncode),
                 stage=outcome.last_stage or "start")
    else:
        then = N_("then the cuDNN convolution failed")
    folder = str(system.pure(loaded[0]).parent) if loaded else None
    version = loaded[1] if loaded else None
    if name.lower() == "zlibwapi.dll":
        what = M("cuDNN {version} ({dll}) needs zlibwapi.dll, which NVIDIA does not ship with cuDNN 8.3-8.9, and none "
                 "is on the loader path", version=version, dll=loaded[0]) if loaded and version and \
            needs_zlibwapi(version) else \
            N_("cuDNN could not locate zlibwapi.dll, which cuDNN 8.3-8.9 loads and NVIDIA does not ship")
        fix = M("put zlibwapi.dll (zlib's 64-bit DLL, as NVIDIA's cuDNN 8 installation guide says) into {folder}, "
                "or remove that cuDNN from PATH so torch uses the copy in its own wheel", folder=folder) if folder \
            else N_("put zlibwapi.dll (zlib's 64-bit DLL, as NVIDIA's cuDNN 8 installation guide says) into the "
                    "folder that holds cudnn64_8.dll")
    else:
        where = M("{dll}, cuDNN {version}", dll=loaded[0], version=version or "?") if loaded else "cudnn64_8.dll"
        what = M("cuDNN ({where}) could not locate its sub-library {name}: cuDNN loads it by bare name from PATH",
                 where=where, name=name)
        fix = M("put the folder that holds {name} and the other cudnn_*64_8.dll on PATH (all of cuDNN's DLLs belong "
                "in one folder: {folder})", name=name, folder=folder) if folder else \
            M("put the folder that holds {name} and the other cudnn_*64_8.dll on PATH (all of cuDNN's DLLs belong in "
              "one folder)", name=name)
    return finding("CUDNN_DLL_MISSING", ERROR, joined([what, then]), fix, details=[loaded[0]] if loaded else [])


def classify(outcome: ProbeOutcome, prefix: str, environ: Dict[str, str], windows: bool, cpu_ok: bool,
             driver: Driver, toolkit: Optional[Dict] = None, system=None) -> List[Finding]:
    """Every finding for one probe run, most important first. `system` (the file-system root) lets a Windows DLL
    failure be read from the DLLs themselves (cudaswitch/checks/windll.py)."""
    from cudaswitch.data import knowledge

    rec = outcome.record
    text = _text(outcome)
    if outcome.timed_out:
        return [finding("PROBE_TIMEOUT", ERROR, M("the probe did not finish in time (last stage: {stage})",
                                                  stage=outcome.last_stage or "start"))]
    if rec is None:
        if RX_OMP15.search(text) or RX_WIN1114.search(text) or RX_UNDEF.search(text) or outcome.returncode in SIGILL_CODES:
            return classify_import_failure(text, outcome, prefix, environ, windows, system)
        m = RX_CUDNN_LOCATE.search(text)
        if m:
            return [cudnn_locate_finding(m.group(1), outcome, prefix, environ, system)]
        m = RX_CUDNN_SO_LOAD.search(text)
        if m:
            return [finding("CUDNN_FAILED", ERROR, M("cuDNN could not load its library {lib} and ended the process "
                                                     "(another cuDNN on LD_LIBRARY_PATH, or an incomplete one)",
                                                     lib=m.group(1)))]
        tail = [ln for ln in (outcome.stderr or "").splitlines() if ln and not ln.startswith("cudaswitch-probe:")]
        stage = outcome.last_stage or "start"
        code = exit_status(outcome.returncode)
        return [finding("PROBE_CRASHED", ERROR, M("the probe died (exit {code}) at stage {stage}: {last}",
                                                  code=code, stage=stage, last=tail[-1]) if tail else
                        M("the probe died (exit {code}) at stage {stage}", code=code, stage=stage))]
    findings: List[Finding] = []
    py = rec.get("python") or {}
    imp = rec.get("import") or {}
    twice = torch_twice(rec)
    if not imp.get("ok"):
        # a second torch (the user site's, above all) is the likely cause of the import failure: looked at first
        return ([twice] if twice else []) + classify_import_failure(text, outcome, prefix, environ, windows, system)
    t = rec.get("torch") or {}
    version = t.get("version") or ""
    cuda = t.get("cuda")
    avail = t.get("is_available")
    steps = rec.get("steps") or {}

    # --- chain: Python range of the release
    pyok = knowledge.python_ok(version, py.get("version", ""))
    if pyok and not pyok[0]:
        findings.append(finding("PYTHON_UNSUPPORTED", WARNING, M("Python {python} is outside torch {version}'s "
                                                                 "{range}{src}", python=py.get('version'),
                                                                 version=version, range=pyok[1],
                                                                 src=Cited(pyok[2]))))
    if NUMPY_WARNING.search(text):
        findings.append(finding("NUMPY_ABI", ERROR))

    # --- build / device
    if cuda is None and not t.get("hip"):
        findings.insert(0, finding("CPU_ONLY_BUILD", None, M("torch {version} is a CPU-only build (torch.version.cuda "
                                                            "is None): no GPU test (--cpu-ok)", version=version)
                                   if cpu_ok else M("torch {version} is a CPU-only build (torch.version.cuda is None)",
                                                    version=version), when="cpu_ok" if cpu_ok else None))
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
            fix = M("update the NVIDIA driver to >= {driver} (CUDA {cuda}), or install a torch build for your "
                    "driver's CUDA (`cudaswitch recommend`)", driver=need[0], cuda=cuda) if need else None
            findings.insert(0, finding("DRIVER_TOO_OLD", ERROR, M("torch {version} needs CUDA {cuda}; {found}",
                                                                  version=version, cuda=cuda, found=found), fix))
        elif cvd is not None and dmax:
            findings.insert(0, finding("CUDA_VISIBLE_DEVICES_HIDDEN", ERROR,
                                       M("CUDA_VISIBLE_DEVICES={value} selects no usable GPU (the driver supports "
                                         "CUDA {cuda}, torch sees no device)", value=repr(cvd), cuda=dmax)))
        else:
            findings.insert(0, no_gpu_finding(driver, version, cuda, windows, cpu_ok))
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
        elif name == "conv2d" and RX_CUDNN_LOCATE.search(text):  # cuDNN said which DLL before the error
            findings.append(cudnn_locate_finding(RX_CUDNN_LOCATE.search(text).group(1), outcome, prefix, environ,
                                                 system))
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
            findings.append(finding("TORCH_TOOLKIT_MAJOR_MISMATCH", ERROR,
                                    M("torch is built with CUDA {cuda} but the selected toolkit is CUDA {version} "
                                      "({root}): torch.utils.cpp_extension refuses major mismatches", cuda=cuda,
                                      version=toolkit.get('version'), root=toolkit.get('root'))))
    # --- install layout
    if twice:
        findings.append(twice)
    return findings


def _under(path: str, folder: Optional[str]) -> bool:
    if not folder:
        return False
    a, b = os.path.normcase(path.replace("\\", "/")), os.path.normcase(folder.replace("\\", "/")).rstrip("/")
    return a == b or a.startswith(b + "/")


def torch_twice(rec: Dict) -> Optional[Finding]:
    """Two torch packages on the probe's sys.path; the one in the user site-packages (`pip install --user`) is
    imported before the environment's and named as such."""
    folders = rec.get("torch_folders") or []
    if len(folders) < 2:
        return None
    user = rec.get("user_site")
    if _under(folders[0], user):
        python = (rec.get("python") or {}).get("executable") or "python"
        return finding("TORCH_MIXED_INSTALL", ERROR,
                       M("torch is installed twice: {first} is in the user site-packages (pip install --user) and is "
                         "imported instead of the environment's {second}", first=folders[0], second=folders[1]),
                       M("remove the user-site copy: \"{python}\" -m pip uninstall torch torchvision torchaudio "
                         "(pip removes the copy found first on sys.path, the user site's; `pip show torch` then names "
                         "{second}), or set PYTHONNOUSERSITE=1 for this environment", python=python,
                         second=folders[1]), details=folders)
    return finding("TORCH_MIXED_INSTALL", ERROR, M("two torch packages on sys.path: {folders} (the first one is "
                                                   "imported)", folders='; '.join(folders)), details=folders)


# cuInit's CUDA_ERROR_NO_DEVICE (NVIDIA, CUDA Driver API, CUresult): a driver answered but sees no GPU
CUDA_ERROR_NO_DEVICE = 100
DRIVER_DOWNLOAD = "https://www.nvidia.com/Download/index.aspx"


def no_gpu_finding(driver: Driver, version: str, cuda: str, windows: bool, cpu_ok: bool) -> Finding:
    """torch has CUDA but sees no GPU, and nothing hides one: no driver at all, a driver too old to name a CUDA
    version, a driver that answers but sees no device (a laptop on its integrated GPU), or a driver that sees one."""
    from cudaswitch.data import knowledge

    form = "cpu_ok" if cpu_ok else None  # the table's weight of NO_GPU (checks/severities.py)
    dmax = driver.cuda_max
    installed = M("driver {version}", version=driver.driver_version) if driver.driver_version else M("a driver")
    if not dmax and driver.driver_version:
        need = knowledge.min_driver(cuda, windows)
        fix = M("update the NVIDIA driver to >= {driver} (CUDA {cuda}): {url}", driver=need[0], cuda=cuda,
                url=DRIVER_DOWNLOAD) if need else \
            M("update the NVIDIA driver: {url}", url=DRIVER_DOWNLOAD)
        return finding("DRIVER_TOO_OLD", ERROR, M("torch {version} needs CUDA {cuda}; the installed NVIDIA {installed} is "
                                                  "too old to name a CUDA version ({why})", version=version, cuda=cuda,
                                                  installed=installed, why=message(driver.error) or "-"), fix)
    if not dmax:
        return finding("NO_GPU", None, M("torch {version} has CUDA {cuda} but no NVIDIA driver was found ({why})",
                                        version=version, cuda=cuda, why=message(driver.error) or M("no GPU")),
                       M("install the NVIDIA driver ({url}) if this machine has an NVIDIA GPU; on a machine without "
                         "one, pass --cpu-ok", url=DRIVER_DOWNLOAD), when=form)
    if driver.cuinit == CUDA_ERROR_NO_DEVICE or (driver.cuinit == 0 and not driver.devices):
        cause = M("the NVIDIA {installed} is installed (CUDA {dmax}) but sees no GPU (cuInit: CUDA_ERROR_NO_DEVICE), so "
                  "torch {version} has none", installed=installed, dmax=dmax, version=version)
        fix = N_("the NVIDIA GPU is switched off or hidden from the driver: on a laptop, set the GPU mode to hybrid or "
                 "discrete, not integrated/eco (the maker's tool, e.g. Armoury Crate or Lenovo Vantage, or the BIOS "
                 "MUX setting), and check that the GPU is enabled in Device Manager; then `nvidia-smi` must list it") \
            if windows else \
            N_("the NVIDIA GPU is not visible to the driver: `nvidia-smi` must list it; in a container, start it with "
               "the GPU (docker run --gpus all); on a laptop with PRIME, select the NVIDIA GPU (prime-select nvidia "
               "or on-demand)")
        return finding("NO_GPU", None, cause, fix, when=form)
    if driver.cuinit not in (None, 0):
        return finding("NO_GPU", None, M("the NVIDIA {installed} is installed (CUDA {dmax}) but cuInit failed with error "
                                        "{code}, so torch {version} has no GPU", installed=installed, dmax=dmax,
                                        code=driver.cuinit, version=version),
                       N_("run `nvidia-smi`: if it fails too, reinstall the NVIDIA driver and restart"), when=form)
    return finding("NO_GPU", None, M("torch {version} (CUDA {cuda}) sees no GPU although the driver supports CUDA "
                                    "{dmax}", version=version, cuda=cuda, dmax=dmax),
                   N_("run `nvidia-smi`: if it lists no GPU, the GPU is switched off (laptop GPU mode, Device "
                      "Manager); if it lists one, reinstall torch from a CUDA index (`cudaswitch recommend`)"),
                   when=form)


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
