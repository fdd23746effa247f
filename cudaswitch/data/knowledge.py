"""The version chain as data: driver minimums, cuDNN <-> CUDA, torch releases and wheels, GPU architectures.

Every table is a CSV under cudaswitch/data/ transcribed from public sources (NVIDIA release notes and support
matrices, PyTorch's RELEASE.md and wheel indexes); every row keeps its `src` column, a key of `sources.csv`.
Nothing here runs a process or touches the network.
"""

from __future__ import annotations

import csv
import functools
import io
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from cudaswitch.core.i18n import Cited, Listed, M, N_
from cudaswitch.core.versions import numbers


Version = Tuple[int, ...]


def table(name: str) -> List[Dict[str, str]]:
    from importlib.resources import files

    from cudaswitch.core.trust import package_text

    text = package_text(files("cudaswitch.data").joinpath(name))
    return list(csv.DictReader(io.StringIO(text)))


# the tables' versions are read the one way the whole package reads a dotted version
vtuple = numbers


def same_major(a: Optional[str], b: Optional[str]) -> Optional[bool]:
    """'12.4' and '12.8' -> True, '12.4' and '13.0' -> False; None when either is not a version."""
    va, vb = vtuple(a), vtuple(b)
    return va[0] == vb[0] if va and vb else None


def vstr(v: Optional[Version]) -> str:
    return ".".join(str(p) for p in v) if v else "?"


@functools.lru_cache(maxsize=None)
def sources() -> Dict[str, str]:
    return {row["key"]: row["reference"] for row in table("sources.csv")}


def cite(src: str) -> str:
    """'S40;S41' -> the references, for --json output and the README."""
    keys = re.findall(r"S\d+", src or "")
    return "; ".join(f"[{k}] {sources().get(k, '?')}" for k in keys)


# ---- driver ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DriverRow:
    release: str
    cuda: Version
    linux: Optional[Version]
    windows: Optional[Version]
    src: str
    linux_text: str = ""
    windows_text: str = ""


@functools.lru_cache(maxsize=None)
def driver_table() -> List[DriverRow]:
    return [DriverRow(r["cuda_release"], vtuple(r["cuda_version"]), vtuple(r["linux_min_driver"]),
                      vtuple(r["windows_min_driver"]), r["src"], r["linux_min_driver"], r["windows_min_driver"])
            for r in table("cuda_driver.csv")]


@functools.lru_cache(maxsize=None)
def minor_compat() -> Dict[int, Dict[str, str]]:
    return {vtuple(r["cuda_major"])[0]: r for r in table("cuda_minor_compat.csv")}


def min_driver(cuda: str, windows: bool = False) -> Optional[Tuple[str, str]]:
    """(driver, src) for the GA release of CUDA X.Y (the lowest driver any X.Y release needs), or None."""
    want = vtuple(cuda)
    if not want:
        return None
    rows = [r for r in driver_table() if r.cuda[:2] == want[:2]]
    vals = [(r.windows_text if windows else r.linux_text, r.src) for r in rows]
    vals = [(d, s) for d, s in vals if vtuple(d)]
    if not vals:
        return None
    return min(vals, key=lambda item: vtuple(item[0]))


def major_min_driver(major: int, windows: bool = False) -> Optional[Tuple[str, str]]:
    row = minor_compat().get(major)
    if not row:
        return None
    value = row["windows_min_driver" if windows else "linux_min_driver"]
    m = re.match(r"\s*(\d+(?:\.\d+)*)", value or "")
    return (m.group(1), row["src"]) if m else None


@dataclass
class Verdict:
    status: str  # "ok", "minor-compat", "too-old", "unknown"
    message: str
    src: str = ""


def driver_runs(driver_cuda_max: Optional[str], build_cuda: Optional[str], windows: bool = False) -> Verdict:
    """Can a driver whose maximum CUDA is `driver_cuda_max` run code built for CUDA `build_cuda`?
    NVIDIA's minor-version compatibility (docs/design/checks.md section 3): newer driver fine; same major but older
    minor runs under minor-version compatibility (PTX JIT of newer code excluded); older major cannot run."""
    d, b = vtuple(driver_cuda_max), vtuple(build_cuda)
    if not d or not b:
        return Verdict("unknown", N_("driver or build CUDA version unknown"))
    need = min_driver(build_cuda, windows)
    need_txt = M(" (CUDA {build} needs driver >= {driver} on {os})", build=vstr(b[:2]), driver=need[0],
                 os="Windows" if windows else "Linux") if need else ""
    src = need[1] if need else ""
    if d[:2] >= b[:2]:
        return Verdict("ok", M("driver supports up to CUDA {driver}; CUDA {build} builds run{need}", driver=vstr(d[:2]),
                               build=vstr(b[:2]), need=need_txt), src)
    if d[0] == b[0] and b[0] >= 11:
        mm = major_min_driver(b[0], windows)
        extra = M(" (needs a {major}.x driver >= {driver})", major=b[0], driver=mm[0]) if mm else ""
        return Verdict("minor-compat", M("driver supports CUDA {driver} < {build}: runs under CUDA minor-version "
                                         "compatibility{extra}, without JIT of newer PTX", driver=vstr(d[:2]),
                                         build=vstr(b[:2]), extra=extra), "S43")
    return Verdict("too-old", M("driver supports only CUDA {driver}, this build needs CUDA {build}{need}",
                                driver=vstr(d[:2]), build=vstr(b[:2]), need=need_txt), src)


# ---- cuDNN -------------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def cudnn_table() -> List[Dict[str, str]]:
    return table("cudnn_cuda.csv")


def cudnn_number(value) -> Optional[str]:
    """torch.backends.cudnn.version() -> 'X.Y.Z' (formula switches at 9.0: sources.csv S75, S77)."""
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    if n >= 90000:
        return f"{n // 10000}.{(n % 10000) // 100}.{n % 100}"
    return f"{n // 1000}.{(n % 1000) // 100}.{n % 100}"


def _cudnn_span(text: str) -> Optional[Tuple[Version, Version]]:
    nums = re.findall(r"\d+(?:\.\d+)*(?:\.x)?", text.split(" ")[0])
    if not nums:
        return None
    lo = vtuple(nums[0].replace(".x", ""))
    hi = vtuple(nums[1].replace(".x", "")) if len(nums) > 1 else lo
    return lo, hi


def cudnn_supports(cudnn: str, cuda: str) -> Optional[Tuple[bool, str]]:
    """Does the cuDNN support matrix (section 4) list CUDA `cuda` for cuDNN `cudnn`? (answer, src); None when the
    table has no row for that cuDNN release."""
    cv, tv = vtuple(cudnn), vtuple(cuda)
    if not cv or not tv:
        return None
    hit = None
    for row in cudnn_table():
        span = _cudnn_span(row["cudnn_version"])
        if not span:
            continue
        lo, hi = span
        n = max(len(lo), len(hi))
        key = cv[:n]
        if not (lo[:len(key)] <= key <= hi + (99,) * (n - len(hi))):
            continue
        hit = row
        for a, z in re.findall(r"(\d+\.\d+)(?:\s*-\s*(\d+\.\d+))?", row["supported_cuda_toolkits"]):
            a_v = vtuple(a)
            z_v = vtuple(z) if z else a_v
            if a_v <= tv[:2] <= z_v or (a.endswith(".x") and a_v[0] == tv[0]):
                return True, row["src"]
        for major in re.findall(r"(\d+)\.x", row["supported_cuda_toolkits"]):
            if int(major) == tv[0]:
                return True, row["src"]
    return (False, hit["src"]) if hit else None


# ---- torch -------------------------------------------------------------------------------------------------------

def parse_python_range(text: str) -> Tuple[Optional[Version], Optional[Version]]:
    lo = re.search(r">=\s*(\d+\.\d+)", text or "")
    hi = re.search(r"<=\s*(\d+\.\d+)", text or "")
    return (vtuple(lo.group(1)) if lo else None, vtuple(hi.group(1)) if hi else None)


@dataclass
class TorchRelease:
    minor: Version  # (2, 13)
    python: Tuple[Optional[Version], Optional[Version]]
    cuda_builds: List[Tuple[str, Optional[str]]]  # (cuda, bundled cudnn)
    src: str
    confidence: str


@functools.lru_cache(maxsize=None)
def torch_releases() -> Dict[Version, TorchRelease]:
    out = {}
    for r in table("torch_release.csv"):
        builds = []
        for col in ("stable_cuda (cudnn)", "experimental_cuda (cudnn)"):
            parts = [p.strip() for p in r[col].split(";") if p.strip() and p.strip() != "--" and p.strip() != "None"]
            pending: List[str] = []
            for p in parts:
                m = re.match(r"(\d+\.\d+)(?:\s*\((?:all\s+)?(\d+\.\d+[\d.]*)\))?", p)
                if not m:
                    continue
                pending.append(m.group(1))
                if m.group(2):
                    builds += [(c, m.group(2)) for c in pending]
                    pending = []
            builds += [(c, None) for c in pending]
        out[vtuple(r["torch"])[:2]] = TorchRelease(vtuple(r["torch"])[:2], parse_python_range(r["python"]), builds,
                                                   r["src"], r["confidence"])
    return out


@dataclass
class TorchWheel:
    torch: str
    torchvision: Optional[str]
    torchaudio: Optional[str]
    tags: List[str]
    python: Tuple[Optional[Version], Optional[Version]]
    src: str
    confidence: str
    notes: List[str] = field(default_factory=list)

    @property
    def version(self) -> Version:
        return vtuple(self.torch)


def _first_version(text: str) -> Optional[str]:
    m = re.match(r"\s*(\d+(?:\.\d+)+)", text or "")
    return m.group(1) if m else None


@functools.lru_cache(maxsize=None)
def torch_wheels() -> List[TorchWheel]:
    out = []
    for r in table("torch_wheels.csv"):
        tags_col = r["cuda_wheel_tags (Linux+Windows)"]
        head = tags_col.split("(")[0] if not tags_col.startswith("cu") else tags_col
        tags = re.findall(r"\bcu\d{3}\b", head.split("[")[0].split(" on ")[0]) or re.findall(r"\bcu\d{3}\b", tags_col)
        out.append(TorchWheel(_first_version(r["torch"]), _first_version(r["torchvision"]),
                              _first_version(r["torchaudio"]), sorted(set(tags), key=lambda t: int(t[2:])),
                              parse_python_range(r["python (torchvision README)"]), r["src"], r["confidence"],
                              [n for n in (r["torchvision"], r["torchaudio"], tags_col) if "(" in n]))
    return sorted(out, key=lambda w: w.version, reverse=True)


def tag_cuda(tag: str) -> Version:
    """'cu121' -> (12, 1); 'cu118' -> (11, 8); 'cu102' -> (10, 2)."""
    digits = tag[2:]
    return (int(digits[:-1]), int(digits[-1]))


def cuda_tag(cuda: str) -> Optional[str]:
    v = vtuple(cuda)
    return f"cu{v[0]}{v[1]}" if v and len(v) >= 2 else None


def split_local(version: str) -> Tuple[str, Optional[str]]:
    """'2.4.1+cu121' -> ('2.4.1', 'cu121')."""
    base, _, local = (version or "").partition("+")
    return base, local or None


def python_ok(torch_version: str, python: str) -> Optional[Tuple[bool, str, str]]:
    """(supported, range text, src) from the release matrix for torch's minor, None when the table lacks it."""
    tv, pv = vtuple(torch_version), vtuple(python)
    if not tv or not pv:
        return None
    rel = torch_releases().get(tv[:2])
    if rel is None:
        return None
    lo, hi = rel.python
    ok = (lo is None or pv[:2] >= lo) and (hi is None or pv[:2] <= hi)
    rng = f"Python {vstr(lo) if lo else '?'}-{vstr(hi) if hi else '?'}"
    return ok, rng, rel.src


@functools.lru_cache(maxsize=None)
def arch_rows() -> List[Dict[str, str]]:
    return table("torch_arch.csv")


def arch_supported(torch_version: str, tag: str, capability: str) -> Optional[Tuple[bool, str]]:
    """From section 5.3: does torch X.Y's `tag` build carry kernels for compute capability `capability`?"""
    tv, cc = vtuple(torch_version), vtuple(capability)
    if not tv or not cc:
        return None
    for r in arch_rows():
        if not (vtuple(r["torch_min"]) <= tv[:2] <= vtuple(r["torch_max"])):
            continue
        if tag not in r["cuda_tags"].split(";"):
            continue
        lo, hi = vtuple(r["min_cc"]), vtuple(r["max_cc"])
        ok = lo <= cc[:2] and (cc[:2] <= hi or r["ptx_above_max"] == "yes")
        return ok, r["src"]
    return None


def arch_in_list(capability: str, arch_list: List[str]) -> Optional[bool]:
    """torch.cuda.get_arch_list() (['sm_80', 'sm_90', 'compute_90']) covers capability X.Y? An exact sm_XY, a lower
    sm of the same major (binary compatible within a major), or PTX (compute_XY) of a lower or equal arch."""
    cc = vtuple(capability)
    if not cc or not arch_list:
        return None
    want = cc[0] * 10 + (cc[1] if len(cc) > 1 else 0)
    for a in arch_list:
        m = re.match(r"(sm|compute)_(\d+)", a)
        if not m:
            continue
        n = int(m.group(2))
        if m.group(1) == "sm" and (n == want or (n // 10 == want // 10 and n <= want)):
            return True
        if m.group(1) == "compute" and n <= want:
            return True
    return False


# ---- recommendation ------------------------------------------------------------------------------------------

@dataclass
class Recommendation:
    ok: bool
    torch: Optional[str] = None
    torchvision: Optional[str] = None
    torchaudio: Optional[str] = None
    tag: Optional[str] = None  # cu121 / cpu
    index_url: Optional[str] = None
    command: Optional[str] = None
    reasons: List[str] = field(default_factory=list)  # why this one, or why none fits
    skipped: List[str] = field(default_factory=list)  # newer candidates and why they were passed over
    src: str = ""

    def to_json(self) -> dict:
        from dataclasses import asdict

        return asdict(self)


INDEX = "https://download.pytorch.org/whl"


def pip_line(w: TorchWheel, tag: str) -> Tuple[str, str]:
    v = w.version
    pkgs = [f"torch=={w.torch}"]
    if w.torchvision:
        pkgs.append(f"torchvision=={w.torchvision}")
    if w.torchaudio:
        pkgs.append(f"torchaudio=={w.torchaudio}")
    if v >= (1, 13):
        url = f"{INDEX}/{tag}"
        return url, f"pip install {' '.join(pkgs)} --index-url {url}"
    if v >= (1, 11):
        # PyPI serves these versions too (its own default build): the local version (+cu113) makes pip take the
        # build chosen here from the extra index, as PyTorch's own install lines for these releases do
        url = f"{INDEX}/{tag}"
        return url, f"pip install {' '.join(p + f'+{tag}' for p in pkgs)} --extra-index-url {url}"
    url = f"{INDEX}/torch_stable.html"
    pkgs = [p + f"+{tag}" for p in pkgs]
    return url, f"pip install {' '.join(pkgs)} -f {url}"


def _python_reason(w: TorchWheel, pv: Version, lo: Optional[Version], hi: Optional[Version]) -> str:
    return M("Python {python} is in torch {torch}'s range ({lo}-{hi})", python=vstr(pv[:2]) if pv else "-",
             torch=w.torch, lo=vstr(lo) if lo else "-", hi=vstr(hi) if hi else "-")


def recommend(driver_cuda_max: Optional[str], python: str, windows: bool = False, capability: Optional[str] = None,
              torch: Optional[str] = None, toolkit: Optional[str] = None) -> Recommendation:
    """The newest torch/torchvision/torchaudio triplet whose wheels exist for this Python, whose CUDA build the driver
    runs (build CUDA <= the driver's maximum) and, where section 5.3 knows, that carries kernels for the GPU.

    With a toolkit (CUDA X.Y), only builds of its major count, as torch.utils.cpp_extension refuses another major:
    a build of exactly X.Y first (what nvcc compiles extensions with), else the newest build below it."""
    if toolkit:
        tk = vtuple(toolkit)[:2]
        rec = _recommend(driver_cuda_max, python, windows, capability, torch, lambda t: tag_cuda(t) == tk)
        if rec.ok:
            rec.reasons.insert(0, M("its build matches the toolkit: CUDA {cuda} ({tag})", cuda=vstr(tk), tag=rec.tag))
            return rec
        near = _recommend(driver_cuda_max, python, windows, capability, torch,
                          lambda t: tag_cuda(t)[0] == tk[0] and tag_cuda(t) <= tk)
        if near.ok:
            near.reasons.insert(0, M("no torch build for exactly CUDA {cuda} fits; {tag} is the nearest below it in "
                                     "the toolkit's major (extensions build with its nvcc)", cuda=vstr(tk),
                                     tag=near.tag))
            return near
        near.reasons = [M("no torch build of CUDA {major}.x up to {cuda} fits the toolkit: {why}", major=tk[0],
                          cuda=vstr(tk), why=near.reasons[0] if near.reasons else M("no candidate"))]
        return near
    return _recommend(driver_cuda_max, python, windows, capability, torch, None)


def _recommend(driver_cuda_max: Optional[str], python: str, windows: bool, capability: Optional[str],
               torch: Optional[str], build_ok) -> Recommendation:
    pv = vtuple(python)
    wheels = torch_wheels()
    if torch:
        want = vtuple(torch)
        wheels = [w for w in wheels if w.version[:len(want)] == want]
        if not wheels:
            known = Listed(sorted({vstr(w.version[:2]) for w in torch_wheels()}, key=vtuple))
            return Recommendation(False, reasons=[M("torch {torch} is not in cudaswitch's table (known: {known})",
                                                    torch=torch, known=known)])
    skipped: List[str] = []
    # A row whose Python bound is unknown is held to the table's widest known bound instead of none: otherwise the
    # oldest release "fits" Python 2.7 or 3.5, for which it has no wheel.
    known_lo = min((w.python[0] for w in torch_wheels() if w.python[0]), default=None)
    known_hi = max((w.python[1] for w in torch_wheels() if w.python[1]), default=None)
    for w in wheels:
        lo, hi = w.python[0] or known_lo, w.python[1] or known_hi
        if pv and ((lo and pv[:2] < lo) or (hi and pv[:2] > hi)):
            skipped.append(M("torch {torch}: no wheel for Python {python} (supports {lo}-{hi})", torch=w.torch,
                             python=vstr(pv[:2]), lo=vstr(lo) if lo else '?', hi=vstr(hi) if hi else '?'))
            continue
        if not driver_cuda_max and build_ok is None:
            url, cmd = pip_line(w, "cpu")
            return Recommendation(True, w.torch, w.torchvision, w.torchaudio, "cpu", url, cmd,
                                  [N_("no NVIDIA driver found: the CPU build"), _python_reason(w, pv, lo, hi)],
                                  skipped, w.src)
        dmax = vtuple(driver_cuda_max) if driver_cuda_max else ()
        fitting = [t for t in reversed(w.tags) if (not dmax or tag_cuda(t) <= dmax[:2])
                   and (build_ok is None or build_ok(t))]
        if build_ok is not None and not [t for t in w.tags if build_ok(t)]:
            skipped.append(M("torch {torch}: no build for the toolkit's CUDA (builds: {tags})", torch=w.torch,
                             tags=Listed(w.tags) or M("none")))
            continue
        chosen, arch = None, None
        for t in fitting:
            if capability:
                arch = arch_supported(w.torch, t, capability)
                if arch is not None and not arch[0]:
                    skipped.append(M("torch {torch}+{tag}: no kernels for compute capability {cap}{src}",
                                     torch=w.torch, tag=t, cap=capability, src=Cited(arch[1])))
                    continue
            chosen = t
            break
        if chosen is None:
            if not fitting:
                skipped.append(M("torch {torch}: builds {tags} all need a driver newer than CUDA {cuda}",
                                 torch=w.torch, tags=Listed(w.tags) or M("none"), cuda=vstr(dmax[:2])))
            continue
        url, cmd = pip_line(w, chosen)
        reasons = [M("driver supports CUDA {driver} >= {build} ({tag})", driver=vstr(dmax[:2]),
                     build=vstr(tag_cuda(chosen)), tag=chosen) if dmax else
                   N_("note: no NVIDIA driver found: this CUDA build needs one to run on a GPU"),
                   _python_reason(w, pv, lo, hi)]
        if capability and arch is not None:
            reasons.append(M("its kernels cover GPU compute capability {cap}{src}", cap=capability,
                             src=Cited(arch[1])))
        elif capability:
            reasons.append(M("note: GPU compute capability {cap} was NOT checked: cudaswitch's tables hold no "
                             "architecture data for torch {torch}+{tag}; after installing, 'cudaswitch smoke' shows "
                             "whether it has kernels for this GPU (NO_KERNEL_IMAGE if not)", cap=capability,
                             torch=w.torch, tag=chosen))
        if w.confidence != "high":
            reasons.append(M("table row confidence: {confidence}", confidence=w.confidence))
        newer = next(((n, t) for n in torch_wheels() if n.version > w.version for t in n.tags
                      if dmax and tag_cuda(t)[0] == dmax[0] and tag_cuda(t) > dmax[:2]), None)
        mm = major_min_driver(dmax[0], windows) if dmax and build_ok is None else None
        if newer and mm:
            reasons.append(M("note: newer builds such as torch {torch}+{tag} also run on a CUDA {major}.x driver >= "
                             "{driver} under minor-version compatibility (no PTX JIT){src}; pass --cuda {cuda} to "
                             "choose them", torch=newer[0].torch, tag=newer[1], major=dmax[0], driver=mm[0],
                             src=Cited(mm[1]),
                             cuda=vstr(tag_cuda(newer[1]))))
        return Recommendation(True, w.torch, w.torchvision, w.torchaudio, chosen, url, cmd, reasons, skipped, w.src)
    if not skipped:
        why = M("no candidate")
    elif len(skipped) > 1:
        why = M("{first} (and {count} older releases skipped)", first=skipped[0], count=len(skipped) - 1)
    else:
        why = skipped[0]
    return Recommendation(False, reasons=[M("no torch release in the table fits: {why}", why=why)], skipped=skipped)


# ---- beyond the tables ---------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def table_horizon() -> Dict[str, str]:
    """The newest release each table knows, for 'the tables end at ...' messages."""
    cudnn = [s[1] for s in (_cudnn_span(r["cudnn_version"]) for r in cudnn_table()) if s]
    return {"torch": vstr(max(torch_releases())), "cudnn": vstr(max(cudnn)),
            "cuda": vstr(max(r.cuda for r in driver_table() if r.cuda)[:2])}


def cudnn_verdict(cudnn: str, cuda: str) -> Tuple[str, str, str]:
    """(status, detail, src) for 'cuDNN X with CUDA Y': ok / not listed from the table; past the table's newest
    cuDNN, what still follows: from 9.0 on every cuDNN is built per CUDA major, so a build for CUDA Y's major is
    expected to work with any CUDA Y minor of that major."""
    ans = cudnn_supports(cudnn, cuda)
    if ans is not None:
        return ("ok" if ans[0] else "not listed"), M("cuDNN {cudnn} with CUDA {cuda}", cudnn=cudnn, cuda=cuda), ans[1]
    cv, horizon = vtuple(cudnn), table_horizon()["cudnn"]
    major = (vtuple(cuda) or (0,))[0]
    if cv and cv > vtuple(horizon) and cv[0] == 9 and major in (12, 13):
        return ("beyond tables", M("cuDNN {cudnn} is newer than cudnn_cuda.csv (it ends at {horizon}); cuDNN 9 is "
                                   "built per CUDA major, so its CUDA {major}.x build works with CUDA {cuda}",
                                   cudnn=cudnn, horizon=horizon, major=major, cuda=cuda), "S97;S120")
    return "unknown", M("cuDNN {cudnn} with CUDA {cuda}: no row in cudnn_cuda.csv (it covers up to {horizon})",
                        cudnn=cudnn, cuda=cuda, horizon=horizon), ""


def python_beyond(torch_version: str) -> Optional[str]:
    """When torch is newer than torch_release.csv: how far the table goes and what still holds."""
    tv = vtuple(torch_version)
    if not tv or tv[:2] in torch_releases():
        return None
    horizon = table_horizon()["torch"]
    if tv[:2] > vtuple(horizon):
        return M("torch {torch} is newer than cudaswitch's tables (they end at torch {horizon}; "
                 "`python tools/update_tables.py` in cudaswitch's repository refreshes them): its Python range is "
                 "not checked; pip installs a torch wheel only for a Python it supports", torch=vstr(tv[:2]),
                 horizon=horizon)
    return None


# ---- Windows: the VC++ runtime torch needs, the MSVC versions nvcc accepts ---------------------------------------

def vc_runtime_minimum(torch_version: Optional[str], dll: str) -> Optional[Dict[str, str]]:
    """The vc_runtime.csv row saying how new `dll` must be for this torch (the newest row whose torch_min it
    reaches); None when the table names no minimum (any VC++ 2015-2022 runtime then loads it)."""
    tv = vtuple(split_local(torch_version)[0]) if torch_version else None
    if not tv:
        return None
    rows = [r for r in table("vc_runtime.csv") if r["dll"].lower() == dll.lower() and tv[:2] >= vtuple(r["torch_min"])]
    return max(rows, key=lambda r: vtuple(r["torch_min"])) if rows else None


def nvcc_msvc_range(cuda: Optional[str]) -> Optional[Dict[str, str]]:
    """The nvcc_msvc.csv row for a CUDA release: the _MSC_VER range its nvcc accepts (msc_min <= _MSC_VER <
    msc_below), as its include/crt/host_config.h enforces; None for a release the table does not cover."""
    cv = vtuple(cuda)
    if not cv:
        return None
    for r in table("nvcc_msvc.csv"):
        if vtuple(r["cuda_min"])[:2] <= cv[:2] <= vtuple(r["cuda_max"])[:2]:
            return r
    return None


def visual_studio(msc: int) -> str:
    """_MSC_VER -> the Visual Studio release people name: 1940 -> 'Visual Studio 2022 17.10' (Microsoft, Predefined
    macros: 1910-1916 VS 2017 15.x, 1920-1929 VS 2019 16.x, 1930-1949 VS 2022 17.0-17.14, 1950 VS 2026)."""
    if 1930 <= msc < 1950:
        return f"Visual Studio 2022 17.{msc - 1930}"
    if 1920 <= msc < 1930:
        return f"Visual Studio 2019 16.{msc - 1920}"
    if 1910 <= msc < 1920:
        return "Visual Studio 2017"
    if msc >= 1950:
        return "Visual Studio 2026"
    return f"_MSC_VER {msc}"
