"""The version resource of a Windows PE file (.exe, .dll), read from the bytes: no process, on any host.

NVIDIA stamps its Windows binaries with a VS_VERSIONINFO resource (nvcc.exe: FileDescription "NVIDIA CUDA 13.0.88
Cuda compiler driver"; cudart64_12.dll: FileVersion "12.9.79"; cudnn64_9.dll: FileVersion "9.10.2.21"). Reading it
needs only the section table and the resource tree, so this module seeks to those parts instead of reading a file
that can be hundreds of MB. Formats: Microsoft's "PE Format" page (optional header data directory 2 = resources,
IMAGE_RESOURCE_DIRECTORY / _ENTRY / _DATA_ENTRY) and the VS_VERSIONINFO / VS_FIXEDFILEINFO / StringFileInfo
structures of the Win32 "Version Information" reference; the import directory (data directory 1,
IMAGE_IMPORT_DESCRIPTOR) for the DLL names a file needs at load time. `pefile` reads the same, but the run-time
dependencies are limited to click, ruamel.yaml and platformdirs, and this needs a few hundred lines.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Dict, List, Optional, Tuple

from cudaswitch.core.i18n import M
from cudaswitch.core.trust import open_regular

RT_VERSION = 16
_FIXED_SIGNATURE = 0xFEEF04BD
_MAX_RESOURCES = 16 << 20  # a version resource sits in a resource section of a few KB to a few MB
_MAX_DEPTH_ENTRIES = 4096


class PEError(Exception):
    """The file is a PE file whose headers or resources are damaged."""


@dataclass
class VersionInfo:
    file_version: Optional[Tuple[int, int, int, int]] = None  # VS_FIXEDFILEINFO dwFileVersionMS/LS
    product_version: Optional[Tuple[int, int, int, int]] = None
    strings: Dict[str, str] = field(default_factory=dict)  # StringFileInfo: FileVersion, FileDescription, ...


def _read_at(fh: BinaryIO, offset: int, size: int) -> bytes:
    fh.seek(offset)
    data = fh.read(size)
    if len(data) != size:
        raise PEError(M("truncated at offset {offset}", offset=offset))
    return data


def is_pe(path: Path) -> bool:
    try:
        with open_regular(path) as fh:
            head = fh.read(64)
            if len(head) < 64 or head[:2] != b"MZ":
                return False
            (lfanew,) = struct.unpack_from("<I", head, 0x3C)
            fh.seek(lfanew)
            return fh.read(4) == b"PE\0\0"
    except OSError:
        return False


def _headers(fh: BinaryIO):
    """(sections [(vaddr, vsize, raw_size, raw_ptr)], data directories [(rva, size)]); None for a file that is not
    PE. PEError when the headers are damaged."""
    head = fh.read(64)
    if len(head) < 64 or head[:2] != b"MZ":
        return None
    (lfanew,) = struct.unpack_from("<I", head, 0x3C)
    fh.seek(lfanew)
    if fh.read(4) != b"PE\0\0":
        return None
    coff = _read_at(fh, lfanew + 4, 20)
    n_sections, opt_size = struct.unpack_from("<H", coff, 2)[0], struct.unpack_from("<H", coff, 16)[0]
    opt = _read_at(fh, lfanew + 24, opt_size)
    if len(opt) < 2:
        raise PEError(M("no optional header"))
    magic = struct.unpack_from("<H", opt, 0)[0]
    dirs_at = {0x10B: 96, 0x20B: 112}.get(magic)
    if dirs_at is None:
        raise PEError(M("unknown optional header magic {magic}", magic=hex(magic)))
    if len(opt) < dirs_at:  # a header size field that a damaged file shrank below the fixed part
        raise PEError(M("truncated at offset {offset}", offset=lfanew + 24 + len(opt)))
    n_dirs = min(struct.unpack_from("<I", opt, dirs_at - 4)[0], (len(opt) - dirs_at) // 8)
    dirs = [struct.unpack_from("<II", opt, dirs_at + 8 * i) for i in range(n_dirs)]
    table = _read_at(fh, lfanew + 24 + opt_size, 40 * n_sections)
    sections = []
    for i in range(n_sections):
        vsize, vaddr, raw_size, raw_ptr = struct.unpack_from("<IIII", table, 40 * i + 8)
        sections.append((vaddr, vsize, raw_size, raw_ptr))
    return sections, dirs


def _section_of(sections, rva: int):
    for vaddr, vsize, raw_size, raw_ptr in sections:
        if vaddr <= rva < vaddr + max(vsize, raw_size):
            return vaddr, vsize, raw_size, raw_ptr
    return None


def read_version_info(path: Path) -> Optional[VersionInfo]:
    """The version resource of `path`; None when it is not a PE file or carries none. OSError when unreadable,
    PEError when the headers are damaged."""
    with open_regular(path) as fh:
        parsed = _headers(fh)
        if parsed is None:
            return None
        sections, dirs = parsed
        if len(dirs) <= 2:
            return None
        rsrc_rva, rsrc_size = dirs[2]
        if not rsrc_rva or not rsrc_size:
            return None
        sec = _section_of(sections, rsrc_rva)
        if sec is None:
            raise PEError(M("the resource directory lies in no section"))
        vaddr, vsize, raw_size, raw_ptr = sec
        size = min(max(vsize, raw_size), raw_size, _MAX_RESOURCES)
        section = _read_at(fh, raw_ptr, size)
        return _version_from_section(section, vaddr, rsrc_rva - vaddr)


def imported_dlls(path: Path) -> Optional[List[str]]:
    """The DLL names in the import table of `path` (data directory 1: IMAGE_IMPORT_DESCRIPTOR, 20 bytes each, a
    zero one ends it), in the file's order: what the loader must find before the DLL's entry point runs. Delay-load
    imports (directory 13) are not listed: they are loaded at the first call, not at load time. None when `path` is
    not a PE file; OSError when unreadable, PEError when damaged."""
    with open_regular(path) as fh:
        parsed = _headers(fh)
        if parsed is None:
            return None
        sections, dirs = parsed
        if len(dirs) <= 1 or not dirs[1][0]:
            return []
        imp_rva = dirs[1][0]
        sec = _section_of(sections, imp_rva)
        if sec is None:
            raise PEError(M("the import directory lies in no section"))
        vaddr, vsize, raw_size, raw_ptr = sec
        section = _read_at(fh, raw_ptr, min(raw_size, _MAX_RESOURCES))
        names: List[str] = []
        at = imp_rva - vaddr
        for _ in range(_MAX_DEPTH_ENTRIES):
            if at + 20 > len(section):
                raise PEError(M("import directory out of bounds"))
            desc = struct.unpack_from("<IIIII", section, at)
            if not any(desc):
                return names
            name_rva = desc[3]
            if _section_of(sections, name_rva) != sec:  # names sit with the descriptors in every linker's output
                name = _string_at(fh, sections, name_rva)
            else:
                off = name_rva - vaddr
                end = section.find(b"\0", off, off + 260)
                if off < 0 or end < 0:
                    raise PEError(M("import name out of bounds"))
                name = section[off:end].decode("ascii", "replace")
            names.append(name)
            at += 20
        raise PEError(M("implausible import directory"))


def _string_at(fh: BinaryIO, sections, rva: int) -> str:
    sec = _section_of(sections, rva)
    if sec is None:
        raise PEError(M("import name out of bounds"))
    vaddr, _vs, raw_size, raw_ptr = sec
    if rva - vaddr >= raw_size:
        raise PEError(M("import name out of bounds"))
    fh.seek(raw_ptr + rva - vaddr)
    data = fh.read(260)
    end = data.find(b"\0")
    if end < 0:
        raise PEError(M("import name out of bounds"))
    return data[:end].decode("ascii", "replace")


def _entries(section: bytes, at: int):
    if at + 16 > len(section):
        raise PEError(M("resource directory out of bounds"))
    named, ids = struct.unpack_from("<HH", section, at + 12)
    count = named + ids
    if count > _MAX_DEPTH_ENTRIES:
        raise PEError(M("implausible resource directory"))
    for i in range(count):
        pos = at + 16 + 8 * i
        if pos + 8 > len(section):
            raise PEError(M("resource entry out of bounds"))
        name, target = struct.unpack_from("<II", section, pos)
        yield name, target


def _version_from_section(section: bytes, vaddr: int, root: int) -> Optional[VersionInfo]:
    # resource tree: type -> name -> language -> data entry; take the first name and language of RT_VERSION
    node = None
    for name, target in _entries(section, root):
        if not name & 0x80000000 and name == RT_VERSION:
            node = target
            break
    if node is None:
        return None
    for _depth in range(2):
        if not node & 0x80000000:
            break
        first = next(iter(_entries(section, node & 0x7FFFFFFF)), None)
        if first is None:
            return None
        node = first[1]
    if node & 0x80000000 or node + 16 > len(section):
        raise PEError(M("bad version resource entry"))
    data_rva, data_size = struct.unpack_from("<II", section, node)
    start = data_rva - vaddr
    if start < 0 or start + data_size > len(section):
        raise PEError(M("version resource out of bounds"))
    return parse_vs_versioninfo(section[start:start + data_size])


def _align4(n: int) -> int:
    return (n + 3) & ~3


def _block(data: bytes, at: int, end: int):
    """One VS_VERSIONINFO-style block: (length, value length, type, key, value offset, block end)."""
    if at + 6 > end:
        raise PEError(M("version block out of bounds"))
    length, value_len, kind = struct.unpack_from("<HHH", data, at)
    if length < 6 or at + length > end:
        raise PEError(M("bad version block length"))
    key_end = at + 6
    while key_end + 1 < at + length and data[key_end:key_end + 2] != b"\0\0":
        key_end += 2
    key = data[at + 6:key_end].decode("utf-16-le", "replace")
    return length, value_len, kind, key, _align4(key_end + 2), at + length


def parse_vs_versioninfo(data: bytes) -> VersionInfo:
    info = VersionInfo()
    length, value_len, _kind, key, value_at, end = _block(data, 0, len(data))
    if key != "VS_VERSION_INFO":
        raise PEError(M("version resource key is {key}", key=repr(key)))
    if value_len >= 52 and value_at + 52 <= end:
        sig, _sv, fms, fls, pms, pls = struct.unpack_from("<IIIIII", data, value_at)
        if sig == _FIXED_SIGNATURE:
            info.file_version = (fms >> 16, fms & 0xFFFF, fls >> 16, fls & 0xFFFF)
            info.product_version = (pms >> 16, pms & 0xFFFF, pls >> 16, pls & 0xFFFF)
    child = _align4(value_at + value_len)
    while child + 6 <= end:  # what is left after the last block is padding
        clen, _vl, _k, ckey, cval, cend = _block(data, child, end)
        if ckey == "StringFileInfo":
            table = cval
            while table + 6 <= cend:
                _tl, _tv, _tk, _tkey, tval, tend = _block(data, table, cend)
                s = tval
                while s + 6 <= tend:
                    _sl, svl, stype, skey, sval, send = _block(data, s, tend)
                    # wValueLength counts WCHARs for text values (type 1); some linkers count bytes: stop at NUL
                    raw = data[sval:send]
                    text = raw.decode("utf-16-le", "replace").split("\0", 1)[0]
                    info.strings.setdefault(skey, text.strip())
                    s = _align4(send)
                table = _align4(tend)
        child = _align4(cend)
    return info
