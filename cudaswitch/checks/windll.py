"""Windows DLL failures read from the files themselves: which copy of the VC++ runtime the loader meets first and
its version (WinError 1114), which DLL of an import chain is missing (WinError 126), which cuDNN a "Could not locate"
comes from, and how a Windows exit status reads (0xC0000409).

Everything is read through `System` (the file-system root, PATH), from the PE headers (cudaswitch/core/pe.py):
nothing is loaded or run, so these work on a Windows drive seen from Linux. The rules and their sources:
docs/design/checks.md section 6.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from cudaswitch.data import knowledge
from cudaswitch.core import pe
from cudaswitch.core.system import System
from cudaswitch.core import trust

RUNTIME_DLLS = ("msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll")

# Windows maps these from its \KnownDlls section, never from a search folder (Microsoft, "Dynamic-link library
# search order", known DLLs; the names of HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\KnownDLLs on
# Windows 10 and 11, plus ntdll.dll, which every process has). The VC++ runtime is not among them.
KNOWN_DLLS = frozenset(n.lower() for n in (
    "advapi32.dll", "clbcatq.dll", "combase.dll", "comdlg32.dll", "coml2.dll", "difxapi.dll", "gdi32.dll",
    "gdiplus.dll", "imagehlp.dll", "imm32.dll", "kernel32.dll", "kernelbase.dll", "msctf.dll", "msvcrt.dll",
    "normaliz.dll", "nsi.dll", "ntdll.dll", "ole32.dll", "oleaut32.dll", "psapi.dll", "rpcrt4.dll", "sechost.dll",
    "setupapi.dll", "shcore.dll", "shell32.dll", "shlwapi.dll", "user32.dll", "wldap32.dll", "ws2_32.dll"))

# API sets (api-ms-win-crt-runtime-l1-1-0.dll, ext-ms-...) are names the loader resolves through the API set schema
# of the running Windows, not files it searches for (Microsoft, "Windows API sets").
_API_SET = re.compile(r"^(api|ext)-ms-", re.I)

# NTSTATUS values a crashed Windows process exits with, by the name people search for (Microsoft, [MS-ERREF] 2.3.1)
NTSTATUS = {0xC0000005: "STATUS_ACCESS_VIOLATION", 0xC000001D: "STATUS_ILLEGAL_INSTRUCTION",
            0xC00000FD: "STATUS_STACK_OVERFLOW", 0xC0000135: "STATUS_DLL_NOT_FOUND",
            0xC0000139: "STATUS_ENTRYPOINT_NOT_FOUND", 0xC0000142: "STATUS_DLL_INIT_FAILED",
            0xC0000409: "STATUS_STACK_BUFFER_OVERRUN"}
ILLEGAL_INSTRUCTION = 0xC000001D


def exit_status(code: Optional[int]) -> str:
    """An exit code as the user will search for it: 3221226505 -> '3221226505 = 0xC0000409
    STATUS_STACK_BUFFER_OVERRUN'; a plain exit code or a POSIX signal stays as it is."""
    if code is None:
        return "?"
    unsigned = code & 0xFFFFFFFF
    if unsigned < 0xC0000000 or (code < 0 and code > -0x10000):  # -11: SIGSEGV from a POSIX runner
        return str(code)
    name = NTSTATUS.get(unsigned)
    return f"{code} = 0x{unsigned:08X} {name}" if name else f"{code} = 0x{unsigned:08X}"


def _names(system: System, folder: str, cache: Optional[Dict[str, Dict[str, str]]] = None) -> Dict[str, str]:
    """lower-case name -> name as spelt in `folder` (Windows names are case-insensitive); `cache` keeps each
    folder's listing for one walk."""
    if cache is not None and folder in cache:
        return cache[folder]
    try:
        names = {n.lower(): n for n in os.listdir(system.local(folder))}
    except OSError:
        names = {}
    if cache is not None:
        cache[folder] = names
    return names


def find_in(system: System, name: str, folders: Sequence[str],
            cache: Optional[Dict[str, Dict[str, str]]] = None) -> Optional[str]:
    """The first folder of `folders` (load order) holding `name`, as a displayed path of the file."""
    want = name.lower()
    for folder in folders:
        hit = _names(system, folder, cache).get(want)
        if hit and system.local(system.join(folder, hit)).is_file():
            return system.join(folder, hit)
    return None


def system32(system: System) -> str:
    windir = system.environ.get("SystemRoot") or system.environ.get("windir") or r"C:\Windows"
    return system.join(windir, "System32")


def env_folders(system: System, prefix: str) -> List[str]:
    """The environment's own folders in the order the loader meets them for torch's DLLs: the application folder
    (python.exe's, where conda puts vcruntime140.dll), torch\\lib and Library\\bin (os.add_dll_directory)."""
    out = [prefix]
    torch_lib = system.join(prefix, "Lib", "site-packages", "torch", "lib")
    if system.local(torch_lib).is_dir():
        out.append(torch_lib)
    out.append(system.join(prefix, "Library", "bin"))
    return out


def file_version(system: System, path: str) -> Optional[Tuple[int, ...]]:
    try:
        info = pe.read_version_info(system.local(path))
    except (OSError, pe.PEError):
        return None
    return info.file_version if info else None


@dataclass
class RuntimeCopy:
    name: str  # msvcp140.dll
    path: str  # the displayed path
    version: Optional[Tuple[int, ...]]
    first: bool  # the copy the loader takes
    in_env: bool


def runtime_copies(system: System, env: Sequence[str], sys32: str,
                   names: Sequence[str] = RUNTIME_DLLS) -> List[RuntimeCopy]:
    """Every copy of the VC++ runtime DLLs in load order (the environment's folders `env`, then `sys32`), with the
    version of its version resource; the first of each name is the one the process gets."""
    out: List[RuntimeCopy] = []
    for name in names:
        seen = False
        for folder in list(env) + [sys32]:
            path = find_in(system, name, [folder])
            if path is None:
                continue
            out.append(RuntimeCopy(name, path, file_version(system, path), not seen, folder != sys32))
            seen = True
    return out


def version_text(v: Optional[Tuple[int, ...]]) -> str:
    return ".".join(str(x) for x in v) if v else "?"


def too_old(copies: List[RuntimeCopy], torch_version: Optional[str]) -> List[Tuple[RuntimeCopy, Dict[str, str]]]:
    """The copies the loader takes (first of each name) that are older than the torch release needs
    (cudaswitch/data/vc_runtime.csv), each with its table row."""
    out = []
    for c in copies:
        if not c.first or c.version is None:
            continue
        row = knowledge.vc_runtime_minimum(torch_version, c.name)
        if row and c.version[:2] < knowledge.vtuple(row["min_version"])[:2]:
            out.append((c, row))
    return out


def owning_package(system: System, prefix: str, path: str) -> Optional[str]:
    """The conda package whose record lists `path` (conda-meta/*.json "files"), e.g. vc14_runtime."""
    meta = system.local(system.join(prefix, "conda-meta"))
    try:
        names = sorted(os.listdir(meta))
    except OSError:
        return None
    try:
        rel = str(system.pure(path).relative_to(system.pure(prefix))).replace("\\", "/").lower()
    except ValueError:  # a copy outside the environment belongs to no conda package of it
        return None
    for n in names:
        if not n.endswith(".json"):
            continue
        try:
            rec = trust.read_json(meta / n)
        except (OSError, ValueError):
            continue
        files = rec.get("files") or [] if isinstance(rec, dict) else []
        if any(isinstance(f, str) and f.replace("\\", "/").lower() == rel for f in files):
            return rec.get("name")
    return None


# ---- WinError 126: which DLL of the chain is missing -----------------------------------------------------------

@dataclass
class Missing:
    name: str  # the DLL no folder holds
    needed_by: str  # the file whose import table names it
    chain: List[str]  # from the failing DLL down to needed_by


def missing_imports(system: System, dll: str, folders: Sequence[str], limit: int = 400) -> List[Missing]:
    """Walk the import tables from `dll` through the files found in `folders` (load order; the DLL's own folder is
    searched first, as torch's LoadLibraryExW(LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | ..._DEFAULT_DIRS) does) and name
    every import no folder holds. API sets and known DLLs are the system's, not searched for."""
    out: List[Missing] = []
    todo: List[Tuple[str, List[str]]] = [(dll, [dll])]
    seen = {dll.lower()}
    listings: Dict[str, Dict[str, str]] = {}
    while todo and len(seen) < limit:
        path, chain = todo.pop(0)
        try:
            imports = pe.imported_dlls(system.local(path)) or []
        except (OSError, pe.PEError):
            continue
        own = str(system.pure(path).parent)
        for name in imports:
            low = name.lower()
            if _API_SET.match(low):
                continue
            found = find_in(system, name, [own] + list(folders), listings)
            if found is None:
                if low in KNOWN_DLLS:
                    continue
                if not any(m.name.lower() == low for m in out):
                    out.append(Missing(name, path, chain))
                continue
            if found.lower() not in seen:
                seen.add(found.lower())
                todo.append((found, chain + [found]))
    return out


def search_folders(system: System, prefix: str, path_value: Optional[str]) -> List[str]:
    """The loader's folders for torch's DLLs: the environment's own, System32, then PATH (torch retries a failed
    load with plain LoadLibraryW, which searches PATH)."""
    return env_folders(system, prefix) + [system32(system)] + \
        [e.strip('"') for e in system.split_list(path_value) if e.strip('"')]


# ---- cuDNN's "Could not locate X.dll" --------------------------------------------------------------------------

def loaded_cudnn(system: System, prefix: str, path_value: Optional[str]) -> Optional[Tuple[str, Optional[str]]]:
    """(cudnn64_N.dll the process most likely got, its cuDNN version): the environment's own folders first (torch's
    copy in torch\\lib), then PATH."""
    from cudaswitch.core import versions
    from cudaswitch.discovery.cudnn_windows import dll_in

    for folder in env_folders(system, prefix) + [e.strip('"') for e in system.split_list(path_value) if e]:
        dll = dll_in(system, folder)
        if dll:
            try:
                return dll, versions.cudnn_from_pe(system.local(dll))
            except Exception:  # a damaged DLL still names the folder
                return dll, None
    return None
