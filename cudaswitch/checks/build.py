"""doctor: will a CUDA extension build (torch.utils.cpp_extension, flash-attn, apex, mmcv ...) work here?

Only for an environment whose torch is a CUDA build. Everything is read from files: torch's CUDA from
torch/version.py (torchenv.torch_installs), the toolkit a build would use (CUDA_HOME, else nvcc on PATH, as
cpp_extension looks), the host-compiler limits from that toolkit's own include/crt/host_config.h (the `#error --
unsupported GNU version!` lines nvcc itself enforces), and the architectures nvcc can target from the nvcc binary's
own table (what `nvcc --list-gpu-arch` prints). One process at most for the host compiler's version (`c++ --version`,
`cl.exe` on Windows), plus `nvidia-smi` only when TORCH_CUDA_ARCH_LIST is set and has to be compared with the GPU.
Never run from a hook.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from cudaswitch.data import knowledge
from cudaswitch.checks.diagnosis import ERROR, INFO, WARNING, Finding, finding
from cudaswitch.core.i18n import Cited, Listed, M, N_
from cudaswitch.core.system import System
from cudaswitch.core.trust import read_bytes, read_text

NVCC_LIMIT = 256 << 20  # nvcc is tens of MB; its architecture table is read from the whole binary

# The C++ standard torch's headers need (torch_release.csv cpp_std) -> the first GCC that implements it
# (docs/design/checks.md section 3).
GCC_FOR_STD = {"C++14": 5, "C++17": 7, "C++20": 10}
_GNU_MAX = re.compile(r"#if\s+__GNUC__\s*>\s*(\d+)")
_MSC_RANGE = re.compile(r"#if\s+_MSC_VER\s*<\s*(\d+)\s*\|\|\s*_MSC_VER\s*>=\s*(\d+)")
_CLANG_MAX = re.compile(r"#if\s+\(__clang_major__\s*>=\s*(\d+)\)")
ARCH_NAMES = {"kepler": ["3.5", "3.7"], "maxwell": ["5.0", "5.2"], "pascal": ["6.0", "6.1"], "volta": ["7.0"],
              "turing": ["7.5"], "ampere": ["8.0", "8.6"], "ada": ["8.9"], "hopper": ["9.0"],
              "blackwell": ["10.0", "12.0"]}


def host_limits(include_dir: Optional[str]) -> Dict:
    """Host-compiler limits the toolkit's crt/host_config.h enforces, e.g. {'gcc_max': 15, 'msc': (1920, 1950)}."""
    out: Dict = {}
    if not include_dir:
        return out
    try:
        text = read_text(Path(include_dir) / "crt" / "host_config.h", errors="replace")
    except OSError:
        return out
    m = _GNU_MAX.search(text)
    if m:
        out["gcc_max"] = int(m.group(1))
    m = _MSC_RANGE.search(text)
    if m:
        out["msc"] = (int(m.group(1)), int(m.group(2)))
    m = _CLANG_MAX.search(text)
    if m:
        out["clang_below"] = int(m.group(1))
    out["file"] = str(Path(include_dir) / "crt" / "host_config.h")
    return out


def nvcc_archs(nvcc: Optional[str]) -> List[str]:
    """['7.5', '8.0', ...]: the real architectures the nvcc binary carries in its table (sm_XY strings); sm_20 and
    other pre-3.0 strings are leftovers of error texts, not targets."""
    if not nvcc:
        return []
    try:
        data = read_bytes(os.path.realpath(nvcc), limit=NVCC_LIMIT)
    except OSError:
        return []
    nums = {int(n) for n in re.findall(rb"\bsm_(\d{2,3})[af]?\b", data)}
    return [f"{n // 10}.{n % 10}" for n in sorted(nums) if n >= 30]


def parse_arch_list(value: str) -> List[Tuple[str, str]]:
    """TORCH_CUDA_ARCH_LIST ('8.0;8.6+PTX 9.0', 'Ampere') -> [(entry as written, 'X.Y'), ...]."""
    out = []
    for entry in re.split(r"[;\s]+", value.strip()):
        if not entry:
            continue
        base = entry.split("+")[0]
        if re.fullmatch(r"\d+\.\d+[af]?", base):
            out.append((entry, base.rstrip("af")))
        else:
            for cc in ARCH_NAMES.get(base.lower(), []):
                out.append((entry, cc))
            if base.lower() not in ARCH_NAMES:
                out.append((entry, ""))
    return out


def compiler_version(system: System, notes: Optional[List[str]] = None) -> Optional[Tuple[str, str, str]]:
    """(kind 'gcc'|'clang'|'msvc', version, first line) of the host compiler a build would use: one process. As
    root, a compiler another user could have put there is not run; `notes` gets why."""
    if system.windows:
        cmd = [system.which("cl") or "cl.exe"]
    else:
        cxx = _trusted(system, system.environ.get("CXX") or "c++", notes)
        if cxx is None:
            return None
        cmd = [cxx, "--version"]
    try:
        r = system.run(cmd, timeout=10)
    except Exception:  # no compiler, or it hangs: nothing to compare, the build itself will say so
        return None
    text = (r.stdout or "") + (r.stderr or "")
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    m = re.search(r"Compiler Version (\d+)\.(\d+)", text)
    if m:
        return "msvc", f"{m.group(1)}.{m.group(2)}", first.strip()
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", first[first.find(")") + 1:] if ")" in first else first)
    if not m:
        return None
    kind = "clang" if "clang" in text.lower() else "gcc"
    return kind, m.group(0), first.strip()


def _build_toolkit(toolkits, system: System):
    from cudaswitch.discovery.toolkits import owner_of

    home = system.environ.get("CUDA_HOME") or system.environ.get("CUDA_PATH")
    if home:
        return owner_of(toolkits, home, system), "CUDA_HOME" if system.environ.get("CUDA_HOME") else "CUDA_PATH"
    nvcc = system.which("nvcc")
    if nvcc:
        return owner_of(toolkits, nvcc, system), M("nvcc on PATH")
    return None, None


def build_findings(installs: Dict, toolkits, system: System, env_prefix: Optional[str] = None,
                   selected=None, gpu_capability: Optional[str] = None) -> List[Finding]:
    cuda = installs.get("cuda")
    if not cuda:
        return []
    out: List[Finding] = []
    notes: List[str] = []
    tk, how = (selected, M("the environment's cudaswitch choice")) if selected is not None else \
        _build_toolkit(toolkits, system)
    torch_v = installs.get("build_version") or installs.get("version")
    tv = knowledge.vtuple(cuda)
    if tk is not None:
        if tk.cuda.major != tv[0]:
            if selected is None:  # the environment's own choice: TORCH_TOOLKIT_MAJOR_MISMATCH (checks/switched.py)
                out.append(finding("BUILD_TOOLKIT_MAJOR", ERROR, M("torch {torch} was built with CUDA {cuda}, but the "
                                                               "toolkit a build uses ({how}) is CUDA {version} ({root}): "
                                                               "cpp_extension stops with 'The detected CUDA version "
                                                               "mismatches the version that was used to compile "
                                                               "PyTorch'", torch=torch_v, cuda=cuda, how=how,
                                                               version=tk.version, root=tk.root)))
        elif tk.cuda.minor != tv[1]:
            out.append(finding("BUILD_TOOLKIT_MINOR", WARNING, M("torch {torch} was built with CUDA {cuda}, the "
                                                                 "toolkit a build uses ({how}) is CUDA {version}: "
                                                                 "cpp_extension warns about the minor version "
                                                                 "difference; builds normally work", torch=torch_v,
                                                                 cuda=cuda, how=how, version=tk.version)))
    limits = host_limits(tk.include_dir if tk is not None else None)
    if system.windows:
        out += msvc_findings(system, tk, limits)
    elif limits:
        comp = compiler_version(system, notes)
        std = None
        rel = knowledge.torch_releases().get(knowledge.vtuple(torch_v or "")[:2] if torch_v else ())
        if rel is not None:
            std = next((r["cpp_std"] for r in knowledge.table("torch_release.csv")
                        if knowledge.vtuple(r["torch"])[:2] == rel.minor), None)
        if comp and comp[0] == "gcc":
            major = int(comp[1].split(".")[0])
            if limits.get("gcc_max") is not None and major > limits["gcc_max"]:
                out.append(finding("HOST_COMPILER_TOO_NEW", ERROR, M("the host compiler is GCC {gcc}, CUDA {cuda}'s "
                                                                     "nvcc accepts GCC <= {most} ({file}): "
                                                                     "'unsupported GNU version!'", gcc=comp[1],
                                                                     cuda=tk.version, most=limits['gcc_max'],
                                                                     file=limits['file']), details=[comp[2]]))
            need = GCC_FOR_STD.get(std or "")
            if need and major < need:
                out.append(finding("HOST_COMPILER_TOO_OLD", ERROR, M("the host compiler is GCC {gcc}, torch "
                                                                     "{torch}'s headers need {std}, which GCC "
                                                                     "implements from {need}{src}", gcc=comp[1],
                                                                     torch=torch_v, std=std, need=need,
                                                                     src=Cited("S121")),
                                   details=[comp[2]]))
    arch_env = system.environ.get("TORCH_CUDA_ARCH_LIST")
    if arch_env and tk is not None:
        can = nvcc_archs(tk.nvcc)
        entries = parse_arch_list(arch_env)
        bad = [e for e, cc in entries if not cc or (can and cc not in can)]
        if bad:
            out.append(finding("ARCH_LIST_UNSUPPORTED", ERROR, M("TORCH_CUDA_ARCH_LIST names {names}, which CUDA "
                                                                 "{cuda}'s nvcc cannot target (it can: {can})",
                                                                 names=Listed(bad), cuda=tk.version,
                                                                 can=' '.join(can) or '?'), details=can))
        cap = gpu_capability or _gpu_capability(system, notes)
        if cap and entries and not any(cc == cap or (cc and cc.split('.')[0] == cap.split('.')[0]
                                                     and knowledge.vtuple(cc) <= knowledge.vtuple(cap))
                                       for _, cc in entries) \
                and not any("+PTX" in e.upper() and cc and knowledge.vtuple(cc) <= knowledge.vtuple(cap)
                            for e, cc in entries):
            out.append(finding("ARCH_LIST_MISSES_GPU", ERROR, M("TORCH_CUDA_ARCH_LIST={value} has no code for this GPU "
                                                                "(compute capability {cap}): the extension fails with "
                                                                "'no kernel image is available'", value=arch_env,
                                                                cap=cap)))
    # as root, a program another user could have put there was skipped (docs/design/security.md): said, not hidden
    out.extend(Finding("PROGRAM_NOT_RUN", WARNING, note, N_("run the command as that user, or fix the folder's "
                                                            "permissions (chown/chmod go-w)")) for note in notes)
    bins = [os.path.join(env_prefix, "Scripts" if system.windows else "bin")] if env_prefix else []
    if not system.which("ninja") and not any(system.which("ninja", path=b) for b in bins):
        out.append(finding("NINJA_MISSING", INFO, N_("ninja is not installed: cpp_extension falls back to slow, "
                                                     "serial distutils builds (and some projects, e.g. flash-attn, "
                                                     "expect ninja)")))
    return out


# where Visual Studio 2017-2022 and their Build Tools put vcvars64.bat (Microsoft, "Use the Microsoft C++ toolset
# from the command line": <install>\VC\Auxiliary\Build\vcvars64.bat)
_VS_ROOTS = ("Program Files", "Program Files (x86)")
_VS_YEARS = ("2022", "2019", "2017")
_VS_EDITIONS = ("Enterprise", "Professional", "Community", "BuildTools")


def find_vcvars(system: System) -> Optional[str]:
    """The newest vcvars64.bat of an installed Visual Studio or Build Tools, as a displayed path."""
    for year in _VS_YEARS:
        for root in _VS_ROOTS:
            for edition in _VS_EDITIONS:
                path = system.join("C:\\", root, "Microsoft Visual Studio", year, edition, "VC", "Auxiliary", "Build",
                                   "vcvars64.bat")
                if system.local(path).is_file():
                    return path
    return None


def msvc_findings(system: System, tk, limits: Dict) -> List[Finding]:
    """Windows: cl.exe must be on PATH for nvcc and cpp_extension (MSVC_NOT_ON_PATH), and its version inside the
    _MSC_VER range the toolkit's nvcc accepts: its host_config.h, else cudaswitch/data/nvcc_msvc.csv."""
    if not system.which("cl"):
        vcvars = find_vcvars(system)
        fix = M("open the \"x64 Native Tools Command Prompt for VS\" from the Start menu, or run \"{vcvars}\" in this "
                "terminal, then activate the environment and build", vcvars=vcvars) if vcvars else \
            N_("install Visual Studio or its Build Tools with \"Desktop development with C++\", then open the \"x64 "
               "Native Tools Command Prompt for VS\" from the Start menu (or run its VC\\Auxiliary\\Build\\"
               "vcvars64.bat in this terminal), activate the environment and build")
        return [finding("MSVC_NOT_ON_PATH", WARNING, N_("cl.exe (MSVC) is not on PATH: nvcc and "
                                                        "torch.utils.cpp_extension cannot compile CUDA extensions "
                                                        "here"), fix)]
    comp = compiler_version(system)
    if tk is None or not comp or comp[0] != "msvc":
        return []
    major, minor = (int(x) for x in comp[1].split(".")[:2])
    msc = major * 100 + minor
    if limits.get("msc"):
        lo, hi = limits["msc"]
        where, src = limits["file"], Cited("")
    else:
        row = knowledge.nvcc_msvc_range(tk.version)
        if row is None:
            return []
        lo, hi, where, src = int(row["msc_min"]), int(row["msc_below"]), "nvcc_msvc.csv", Cited(row["src"])
    vs = knowledge.visual_studio(msc)
    if msc >= hi:
        newer = next((r for r in knowledge.table("nvcc_msvc.csv") if int(r["msc_below"]) > msc
                      and knowledge.vtuple(r["cuda_min"]) > knowledge.vtuple(tk.version)[:2]), None)
        fix = M("install an older MSVC toolset next to it (Visual Studio Installer > Individual components, e.g. "
                "\"MSVC v143 - VS 2022 C++ x64/x86 build tools (v14.38-17.8)\") and open it with vcvars64.bat "
                "-vcvars_ver=14.38; or use CUDA {cuda} or newer, which accepts {vs}; or pass "
                "-allow-unsupported-compiler to nvcc, at your own risk", cuda=newer["cuda_min"], vs=vs) if newer else \
            N_("install an older MSVC toolset next to it (Visual Studio Installer > Individual components) and open "
               "it with vcvars64.bat -vcvars_ver=14.xx; or pass -allow-unsupported-compiler to nvcc, at your own risk")
        return [finding("HOST_COMPILER_TOO_NEW", ERROR, M("cl.exe is version {cl} (_MSC_VER {msc}, {vs}); CUDA "
                                                          "{cuda}'s nvcc accepts _MSC_VER < {hi} ({file}{src}): it "
                                                          "stops with 'unsupported Microsoft Visual Studio version!'",
                                                          cl=comp[1], msc=msc, vs=vs, cuda=tk.version, hi=hi,
                                                          file=where, src=src), fix, details=[comp[2]])]
    if msc < lo:
        return [finding("HOST_COMPILER_TOO_OLD", ERROR, M("cl.exe is version {cl} (_MSC_VER {msc}, {vs}); CUDA "
                                                          "{cuda}'s nvcc needs _MSC_VER >= {lo} ({file}{src})",
                                                          cl=comp[1], msc=msc, vs=vs, cuda=tk.version, lo=lo,
                                                          file=where, src=src),
                        N_("install a newer Visual Studio or its Build Tools (\"Desktop development with C++\")"),
                        details=[comp[2]])]
    return []


def _trusted(system: System, program: str, notes: Optional[List[str]]) -> Optional[str]:
    """`program` (a name looked up on PATH, or a path) unless, as root, another user could have put it there: the
    same rule as for nvcc (docs/design/security.md); the reason goes into `notes`."""
    from cudaswitch.core.trust import find_program, not_run, program_problem

    if os.path.dirname(program):
        why = program_problem(system.local(program))
        if why and notes is not None:
            notes.append(not_run(program, why))
        return None if why else program
    found, skipped = find_program(system, program)
    if skipped and notes is not None:
        notes.append(skipped)
    return found


def _gpu_capability(system: System, notes: Optional[List[str]] = None) -> Optional[str]:
    smi = _trusted(system, "nvidia-smi", notes)
    if not smi:
        return None
    try:
        r = system.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"], timeout=10)
    except Exception:
        return None
    m = re.search(r"(\d+\.\d+)", r.stdout or "")
    return m.group(1) if m and r.returncode == 0 else None
