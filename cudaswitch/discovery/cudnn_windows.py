"""cuDNN on Windows outside a toolkit: what NVIDIA's cuDNN 9 exe installer leaves, and which cudnn64_*.dll PATH reaches.

The graphical installer bundles one cuDNN build per CUDA version and installs the ones chosen under
`C:\\Program Files\\NVIDIA\\CUDNN\\v9.x\\{bin,include,lib}\\<cuda major.minor>\\` (from about 9.10 on with one more
`x64` level under bin and lib), and puts only `...\\v9.x\\bin` on PATH, where no DLL lies: programs that load
cudnn64_9.dll from PATH fail with error 126 until `...\\bin\\12.9` (or `...\\bin\\12.9\\x64`) is on PATH. Evidence and
sources: docs/design/windows-cudnn.md. Versions come from cudnn_version.h, else from the DLL's version resource,
so nothing is run.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from typing import List, Optional

from cudaswitch.core import versions
from cudaswitch.core.system import System

_DLL = re.compile(r"^cudnn64_(\d+)\.dll$", re.IGNORECASE)
_INSTALLER_BIN = re.compile(r"\\NVIDIA\\CUDNN\\v\d+(\.\d+)*\\bin\\?$", re.IGNORECASE)
_CUDA_FOLDER = re.compile(r"^\d+\.\d+$")


@dataclass
class CudnnInstall:
    """One cuDNN build the exe installer put down, for one CUDA version."""

    version: Optional[str]  # 9.10.2 from cudnn_version.h, else the DLL's FileVersion; None when neither reads
    root: str  # C:\Program Files\NVIDIA\CUDNN\v9.10
    cuda: str  # the CUDA folder name: 12.9
    bin_dir: str  # the folder holding cudnn64_9.dll: ...\bin\12.9 or ...\bin\12.9\x64
    include_dir: Optional[str]
    lib_dir: Optional[str]
    dll: Optional[str]
    version_source: str  # "cudnn_version.h", "pe-resource" or "none"

    def to_json(self) -> dict:
        return asdict(self)


def _names(system: System, folder: str) -> List[str]:
    try:
        return sorted(os.listdir(system.local(folder)))
    except OSError:
        return []


def _is_dir(system: System, path: str) -> bool:
    return system.local(path).is_dir()


def dll_in(system: System, folder: str) -> Optional[str]:
    """The cudnn64_N.dll in a folder (displayed path), the highest N first."""
    hits = sorted((int(m.group(1)), n) for n in _names(system, folder) for m in [_DLL.match(n)] if m)
    return system.join(folder, hits[-1][1]) if hits else None


def _x64_or_self(system: System, folder: str) -> str:
    x64 = system.join(folder, "x64")
    return x64 if _is_dir(system, x64) else folder


def installer_root(system: System) -> str:
    program_files = system.environ.get("ProgramFiles") or system.environ.get("PROGRAMFILES") or r"C:\Program Files"
    return system.join(program_files, "NVIDIA", "CUDNN")


def find_installed(system: System) -> List[CudnnInstall]:
    """Every cuDNN build under Program Files\\NVIDIA\\CUDNN (Windows only)."""
    if not system.windows:
        return []
    base = installer_root(system)
    out: List[CudnnInstall] = []
    for name in _names(system, base):
        if not re.fullmatch(r"v\d+(\.\d+)*", name, flags=re.IGNORECASE):
            continue
        root = system.join(base, name)
        for cuda in _names(system, system.join(root, "bin")):
            folder = system.join(root, "bin", cuda)
            if not _CUDA_FOLDER.match(cuda) or not _is_dir(system, folder):
                continue
            bin_dir = _x64_or_self(system, folder)
            include = system.join(root, "include", cuda)
            lib = system.join(root, "lib", cuda)
            include_dir = include if _is_dir(system, include) else None
            lib_dir = _x64_or_self(system, lib) if _is_dir(system, lib) else None
            dll = dll_in(system, bin_dir)
            version, source = None, "none"
            if include_dir:
                version = versions.cudnn_version_in(system.local(include_dir))
                source = "cudnn_version.h" if version else source
            if version is None and dll:
                version = versions.cudnn_from_pe(system.local(dll))
                source = "pe-resource" if version else source
            out.append(CudnnInstall(version, root, cuda, bin_dir, include_dir, lib_dir, dll, source))
    return out


def needs_zlibwapi(version: str) -> bool:
    """cuDNN 8.3 to 8.9 on Windows loads zlibwapi.dll, which its archive does not carry (sources.csv S58, S70)."""
    parts = versions.numbers(version)
    return bool(parts) and parts[0] == 8 and len(parts) > 1 and parts[1] >= 3


def dll_on_path(system: System) -> Optional[str]:
    """The cudnn64_*.dll a program loading it by name from PATH would get (the first PATH folder holding one)."""
    for entry in system.split_list(system.environ.get("PATH")):
        if entry and dll_in(system, entry.strip('"')):
            return dll_in(system, entry.strip('"'))
    return None


def empty_installer_bin_entries(system: System) -> List[str]:
    """PATH entries `...\\NVIDIA\\CUDNN\\v9.x\\bin` (what the installer adds) that hold no cudnn64_*.dll."""
    return [e for e in system.split_list(system.environ.get("PATH"))
            if e and _INSTALLER_BIN.search(e.strip('"')) and not dll_in(system, e.strip('"'))]
