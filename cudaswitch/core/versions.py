"""CUDA version numbers: reading them from a toolkit's files, and parsing the selectors users type.

Sources and their formats: version.txt up to CUDA 11.0 (sources.csv S20), version.json from 11.1 (S22), CUDA_VERSION
in cuda.h (S25) and `nvcc --version` (S26, S28).
"""

from __future__ import annotations

import re
from collections import namedtuple
from pathlib import Path

from cudaswitch.core.errors import UsageError
from cudaswitch.core.i18n import Listed, M, N_
from cudaswitch.core import trust
from cudaswitch.core.system import under
from cudaswitch.core.trust import read_bytes, read_text

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import Iterable, List, Optional, Tuple, Union

# version.json's cuda.version third field is sometimes a build date (12.1.20230222; seen in
# public install notes), sometimes an update number (13.0.2, S22): a third field >= 10000000 is a date.
BUILD_DATE_MIN = 10_000_000


# named tuples, not dataclasses: every command reads versions, and a frozen, ordered dataclass costs a millisecond of
# start-up to build its methods; a named tuple is immutable and orders by its fields already. collections', not
# typing's: importing typing costs a TAB more than the rest of a kept answer (CONTRIBUTING, imports).
class CudaVersion(namedtuple("CudaVersion", "major minor patch", defaults=(None,))):
    """major, minor (int) and patch (int, or None where the version has two numbers)."""

    __slots__ = ()

    def __str__(self) -> str:
        base = f"{self.major}.{self.minor}"
        return base if self.patch is None else f"{base}.{self.patch}"

    @property
    def short(self) -> str:
        return f"{self.major}.{self.minor}"

    def matches(self, parts: Tuple[int, ...]) -> bool:
        mine = (self.major, self.minor, self.patch)
        return all(mine[i] == p for i, p in enumerate(parts))


# version (CudaVersion); source: "version.json", "version.txt", "dist-info", "conda-meta", "cuda.h", "nvcc"; file
VersionReading = namedtuple("VersionReading", "version source file")


class VersionFileError(Exception):
    """A version file exists but cannot be used; the message names the file."""


# Patterns stay strings, compiled (and cached by `re`) on first use: most commands need few of them, and compiling
# them all at import was a cost every command paid.
_NUM = r"^(\d+)\.(\d+)(?:\.(\d+))?"


def numbers(text: Optional[str]) -> Optional[Tuple[int, ...]]:
    """The one reading of a dotted version: '550.54.14' -> (550, 54, 14), '12.1' -> (12, 1), 'r570.86' -> (570, 86);
    None for anything that does not start with a number. Compare versions as these tuples, never as strings."""
    if not text:
        return None
    m = re.match(r"\s*[rR]?(\d+(?:\.\d+)*)", str(text))
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def parse_dotted(text: str) -> Optional[CudaVersion]:
    m = re.match(_NUM, text.strip())
    if not m:
        return None
    patch = int(m.group(3)) if m.group(3) is not None else None
    return CudaVersion(int(m.group(1)), int(m.group(2)), patch)


def from_version_json(path: Path) -> Optional[CudaVersion]:
    try:
        data = trust.parse_json(read_text(path, encoding="utf-8-sig"), path)
    except PermissionError as exc:
        raise VersionFileError(M("{path}: permission denied ({reason}); check its permissions", path=path,
                                 reason=exc.strerror)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise VersionFileError(M("{path}: unreadable ({reason})", path=path, reason=str(exc))) from None
    except trust.FileShapeError as exc:  # not JSON, or nested too deeply: the line names the file
        raise VersionFileError(M("{error}; reinstall the toolkit or delete the file", error=exc.args[0])) from None
    cuda = data.get("cuda") if isinstance(data, dict) else None
    v = parse_dotted(str(cuda.get("version", ""))) if isinstance(cuda, dict) else None
    if v is None:
        raise VersionFileError(M("{path}: has no cuda.version entry", path=path))
    if v.patch is not None and v.patch >= BUILD_DATE_MIN:
        # A date, not an update number: the compiler's version is the exact one when it agrees.
        comp = data.get("cuda_nvcc") or data.get("cuda_cudart") or {}
        cv = parse_dotted(str(comp.get("version", ""))) if isinstance(comp, dict) else None
        patch = cv.patch if cv and (cv.major, cv.minor) == (v.major, v.minor) else None
        v = CudaVersion(v.major, v.minor, patch)
    return v


def from_version_txt(path: Path) -> Optional[CudaVersion]:
    try:
        text = read_text(path, errors="replace")
    except OSError as exc:
        raise VersionFileError(M("{path}: unreadable ({reason})", path=path,
                                 reason=str(exc.strerror or exc))) from None
    m = re.search(r"CUDA Version (\d+)\.(\d+)(?:\.(\d+))?", text)
    if not m:
        raise VersionFileError(M("{path}: no 'CUDA Version X.Y.Z' line", path=path))
    return CudaVersion(int(m.group(1)), int(m.group(2)), int(m.group(3)) if m.group(3) else None)


# Which wheel's version is the toolkit's: the compiler first, the runtime next (sources.csv S29, S30).
_WHEEL_PREFERENCE = ("nvidia_cuda_nvcc", "nvidia_cuda_runtime", "nvidia_cuda_")
_DIST_INFO = r"^(nvidia_[a-z0-9_]+?)(?:_cu\d+)?-(\d+\.\d+(?:\.\d+)*)\.dist-info$"


def from_dist_infos(folders: Iterable[Path]) -> Optional[Tuple[CudaVersion, Path]]:
    """Version of a toolkit assembled from NVIDIA pip wheels, from their `*.dist-info` folder names."""
    found = []
    for folder in folders:
        m = re.match(_DIST_INFO, folder.name)
        if m:
            found.append((m.group(1), parse_dotted(m.group(2)), folder))
    for prefix in _WHEEL_PREFERENCE:
        hits = sorted((v, f) for name, v, f in found if name.startswith(prefix) and v is not None)
        if hits:
            return hits[-1]
    return None


_CUDA_H = rb"#define\s+CUDA_VERSION\s+(\d+)"


def from_cuda_h(path: Path) -> Optional[CudaVersion]:
    try:
        head = read_bytes(path, limit=1 << 16, truncate=True)  # the define sits near the top; cuda.h is over 1 MB
    except OSError as exc:
        raise VersionFileError(M("{path}: unreadable ({reason})", path=path,
                                 reason=str(exc.strerror or exc))) from None
    m = re.search(_CUDA_H, head)
    if not m:
        return None
    n = int(m.group(1))
    return CudaVersion(n // 1000, (n % 1000) // 10)


_PE_CUDA = r"\bCUDA (\d+)\.(\d+)\.(\d+)\b|\bVersion (\d+)\.(\d+)\.(\d+)\b"


def from_pe(path: Path) -> Optional[CudaVersion]:
    """CUDA version stamped in an NVIDIA Windows binary (nvcc.exe, cudart64_*.dll), read without running it.

    Their FileVersion is a driver-style 6.14.11.xxxx; the CUDA release is in ProductName ("NVIDIA CUDA 13.0.88 Cuda
    compiler driver", "NVIDIA CUDA 12.9.79 Runtime") and FileDescription ("..., Version 13.0.88")."""
    from cudaswitch.core import pe

    try:
        info = pe.read_version_info(path)
    except pe.PEError as exc:
        raise VersionFileError(M("{path}: damaged Windows binary ({reason})", path=path,
                                 reason=exc.args[0] if exc.args else str(exc))) from None
    except OSError as exc:
        raise VersionFileError(M("{path}: unreadable ({reason})", path=path,
                                 reason=str(exc.strerror or exc))) from None
    if info is None:
        return None
    for key in ("ProductName", "FileDescription"):
        m = re.search(_PE_CUDA, info.strings.get(key, ""))
        if m:
            g = [x for x in m.groups() if x is not None]
            return CudaVersion(int(g[0]), int(g[1]), int(g[2]))
    return None


def cudnn_from_pe(path: Path) -> Optional[str]:
    """cuDNN version of a cudnn64_N.dll from its version resource (FileVersion 9.10.2.21): major.minor.patch."""
    from cudaswitch.core import pe

    try:
        info = pe.read_version_info(path)
    except (pe.PEError, OSError):
        return None
    fv = info.file_version if info else None
    if not fv or fv[0] < 7 or fv[0] > 99:  # older cuDNN DLLs carry a driver-style 6.14.x version
        return None
    return f"{fv[0]}.{fv[1]}.{fv[2]}"


_NVCC = r"release (\d+)\.(\d+), V(\d+)\.(\d+)\.(\d+)"


def from_nvcc_output(text: str) -> Optional[CudaVersion]:
    m = re.search(_NVCC, text)
    if not m:
        return None
    return CudaVersion(int(m.group(3)), int(m.group(4)), int(m.group(5)))


def version_from_name(name: str) -> Optional[Tuple[int, int]]:
    """The version a folder name claims: cuda-11.3, v11.3, cuda11.3, and EasyBuild's VERSION-TOOLCHAIN
    (8.0.44-GCC-5.4.0-2.26 claims 8.0: what follows the first '-' is the compiler's and binutils' versions)."""
    m = re.match(r"(\d+)\.(\d+)(?:\.\d+)*-[A-Za-z]", name) or re.search(r"(?:^|[-_v]|cuda)(\d+)\.(\d+)$", name)
    return (int(m.group(1)), int(m.group(2))) if m else None


# ---- selectors -------------------------------------------------------------------------------------------------

# text as given; parts (the version's numbers, a tuple of int); path (a folder given instead, or None)
Selector = namedtuple("Selector", "text parts path", defaults=((), None))


def parse_selector(text: str) -> Selector:
    """`11.3`, `11`, `11.8.89`, `v11.8`, `cuda-11.8`, `cu118`, or a path."""
    raw = text.strip()
    if not raw:
        raise UsageError(N_("empty CUDA selector: give a version such as 11.8 or a toolkit folder"))
    if any(c in raw for c in "/\\") or raw.startswith((".", "~")) or re.match(r"^[A-Za-z]:", raw):
        return Selector(text, path=raw)
    low = raw.lower()
    m = re.fullmatch(r"cu(\d{2,4})", low)
    if m:
        digits = m.group(1)
        if len(digits) == 2 and digits[0] == "1":  # cu11, cu12, cu13: a major, as in nvidia-*-cu12 wheels
            return Selector(text, (int(digits),))
        return Selector(text, (int(digits[:-1]), int(digits[-1])))
    for prefix in ("cuda-", "cuda_", "cuda", "v"):
        if low.startswith(prefix):
            low = low[len(prefix):]
            break
    if re.fullmatch(r"\d+(\.\d+){0,2}", low):
        return Selector(text, numbers(low))
    raise UsageError(
        f"not a CUDA selector: {text!r}; use a version (11.8, 11, 11.8.89, v11.8, cuda-11.8, cu118) or a toolkit folder"
    )


def describe(versions: List[str]) -> str:
    return Listed(versions) if versions else M("none")


_CUDNN_DEFINE = r"#define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+(\d+)"


def parse_cudnn_header(text: str) -> Optional[str]:
    """cuDNN version from cudnn_version.h (8.x+) or cudnn.h (7.x): CUDNN_MAJOR/MINOR/PATCHLEVEL."""
    found = dict(re.findall(_CUDNN_DEFINE, text))
    if "MAJOR" not in found or "MINOR" not in found:
        return None
    return f"{found['MAJOR']}.{found['MINOR']}.{found.get('PATCHLEVEL', '0')}"


def cudnn_version_in(include: Union[Path, str]) -> Optional[str]:
    """cuDNN version of the headers in an include folder, if any (cudnn_version.h first, cudnn.h for 7.x);
    the folder as a Path, or as the text of one (discovery's, which builds no Path for it)."""
    for name in ("cudnn_version.h", "cudnn.h"):
        try:
            path = under(include, name) if isinstance(include, str) else include / name
            found = parse_cudnn_header(read_text(path, errors="replace"))
        except OSError:
            continue
        if found:
            return found
    return None
