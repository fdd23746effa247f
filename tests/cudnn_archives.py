"""cuDNN archives for the tests, in the layouts and with the file names NVIDIA ships (sources.csv
S46-S68): the old `cuda/` wrapper zips and tgz (<= 8.2), the `_cudaX.Y` / `_cudaNN` `-archive` folders (8.3+),
cuDNN 9 for CUDA 13 with DLLs in `bin/x64`, and Linux tarballs with versioned `.so` files and symlinks.

`real_linux_tarball()` repacks the real cuDNN of the `nvidia-cudnn-cu12` wheel into NVIDIA's Linux tarball layout
(`cudnn-linux-x86_64-9.10.2.21_cuda12-archive/{include,lib}`, `libcudnn.so -> libcudnn.so.9 -> libcudnn.so.9.10.2`),
built once and cached next to the wheel cache.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import nvidia_wheels as nw

LICENSE = b"NVIDIA Software License Agreement (test copy)\n"

# library names per cuDNN major: sources.csv S47, S80, S81, S82
LIBS_7 = ["cudnn"]
LIBS_8 = ["cudnn", "cudnn_ops_infer", "cudnn_ops_train", "cudnn_cnn_infer", "cudnn_cnn_train", "cudnn_adv_infer",
          "cudnn_adv_train"]
LIBS_9 = ["cudnn", "cudnn_graph", "cudnn_ops", "cudnn_cnn", "cudnn_adv", "cudnn_engines_precompiled",
          "cudnn_engines_runtime_compiled", "cudnn_heuristic"]
HEADERS_8 = ["cudnn.h", "cudnn_adv_infer.h", "cudnn_adv_train.h", "cudnn_backend.h", "cudnn_cnn_infer.h",
             "cudnn_cnn_train.h", "cudnn_ops_infer.h", "cudnn_ops_train.h", "cudnn_version.h"]
HEADERS_9 = ["cudnn.h", "cudnn_adv.h", "cudnn_backend.h", "cudnn_cnn.h", "cudnn_graph.h", "cudnn_ops.h",
             "cudnn_version.h"]


def version_header(version: str) -> bytes:
    major, minor, patch = version.split(".")[:3]
    formula = "CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL" if int(major) >= 9 else \
        "CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL"
    return (f"/* cudnn_version.h (test copy) */\n#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n\n"
            f"#define CUDNN_MAJOR {major}\n#define CUDNN_MINOR {minor}\n#define CUDNN_PATCHLEVEL {patch}\n\n"
            f"#define CUDNN_VERSION ({formula})\n\n#endif /* CUDNN_VERSION_H */\n").encode()


def _blob(name: str, version: str, size: int = 2048) -> bytes:
    seed = f"{name}:{version}:".encode()
    return (seed * (size // len(seed) + 1))[:size]


# An entry: (path, kind, data or link target). kind: "file", "dir", "symlink"
Entry = Tuple[str, str, object]


def windows_entries(version: str, cuda_tag: str, style: str) -> List[Entry]:
    """style: 'cuda-wrapper' (<= 8.2: cuda/bin, cuda/include, cuda/lib/x64), 'archive' (8.3-9.x: bin, include,
    lib/x64), 'archive-lib' (the same with lib/ instead of lib/x64), 'archive-cuda13' (bin/x64)."""
    major = int(version.split(".")[0])
    libs = {7: LIBS_7, 8: LIBS_8}.get(major, LIBS_9)
    headers = ["cudnn.h"] if major == 7 else (HEADERS_8 if major == 8 else HEADERS_9)
    if style == "cuda-wrapper":
        top, bindir, libdir = "cuda", "bin", "lib/x64"
    else:
        top = f"cudnn-windows-x86_64-{version}_cuda{cuda_tag}-archive"
        bindir = "bin/x64" if style == "archive-cuda13" else "bin"
        libdir = "lib" if style == "archive-lib" else "lib/x64"
    out: List[Entry] = [(top + "/", "dir", None)]
    for h in headers:
        data = version_header(version) if (h == "cudnn_version.h" or (major == 7 and h == "cudnn.h")) else \
            f"/* {h} */\n#include \"cudnn_version.h\"\n".encode()
        out.append((f"{top}/include/{h}", "file", data))
    for lib in libs:
        out.append((f"{top}/{bindir}/{lib}64_{major}.dll", "file", b"MZ" + _blob(lib, version)))
        out.append((f"{top}/{libdir}/{lib}.lib", "file", b"!<arch>\n" + _blob(lib + ".lib", version, 512)))
    if major >= 8 and style != "cuda-wrapper":
        out.append((f"{top}/LICENSE", "file", LICENSE))
    else:
        out.append((f"{top}/NVIDIA_SLA_cuDNN_Support.txt", "file", LICENSE))
    return out


def linux_entries(version: str, cuda_tag: str, style: str = "archive") -> List[Entry]:
    """style 'archive' (8.3+: <name>/include, <name>/lib) or 'cuda-wrapper' (<= 8.2 tgz: cuda/include, cuda/lib64).
    Versioned libraries with the symlink chain NVIDIA ships: libX.so -> libX.so.M -> libX.so.M.m.p."""
    major, minor, patch = version.split(".")[:3]
    libs = {"7": LIBS_7, "8": LIBS_8}.get(major, LIBS_9)
    headers = ["cudnn.h"] if major == "7" else (HEADERS_8 if major == "8" else HEADERS_9)
    if style == "cuda-wrapper":
        top, libdir = "cuda", "lib64"
    else:
        top, libdir = f"cudnn-linux-x86_64-{version}_cuda{cuda_tag}-archive", "lib"
    out: List[Entry] = [(top + "/", "dir", None), (f"{top}/include/", "dir", None), (f"{top}/{libdir}/", "dir", None)]
    for h in headers:
        data = version_header(version) if (h == "cudnn_version.h" or (major == "7" and h == "cudnn.h")) else \
            f"/* {h} */\n#include \"cudnn_version.h\"\n".encode()
        out.append((f"{top}/include/{h}", "file", data))
    for lib in libs:
        full = f"lib{lib}.so.{major}.{minor}.{patch}"
        out.append((f"{top}/{libdir}/{full}", "file", b"\x7fELF" + _blob(lib, version)))
        out.append((f"{top}/{libdir}/lib{lib}.so.{major}", "symlink", full))
        out.append((f"{top}/{libdir}/lib{lib}.so", "symlink", f"lib{lib}.so.{major}"))
        out.append((f"{top}/{libdir}/lib{lib}_static.a", "file", b"!<arch>\n" + _blob(lib + ".a", version, 512)))
    out.append((f"{top}/LICENSE" if style != "cuda-wrapper" else f"{top}/NVIDIA_SLA_cuDNN_Support.txt", "file",
                LICENSE))
    return out


def write_zip(path: Path, entries: List[Entry]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, kind, data in entries:
            if kind == "dir":
                zf.writestr(zipfile.ZipInfo(name), b"")
            elif kind == "symlink":
                info = zipfile.ZipInfo(name)
                info.external_attr = (0o120777 << 16)
                info.create_system = 3
                zf.writestr(info, str(data))
            else:
                zf.writestr(name, data)
    return path


def write_tar(path: Path, entries: List[Entry], mode: Optional[str] = None) -> Path:
    if mode is None:
        mode = "w:xz" if path.name.endswith(".xz") else "w:gz"
    with tarfile.open(path, mode) as tf:
        for name, kind, data in entries:
            info = tarfile.TarInfo(name.rstrip("/") if kind == "dir" else name)
            info.mtime = 1_700_000_000
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tf.addfile(info)
            elif kind == "symlink":
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, str(data), 0o777
                tf.addfile(info)
            elif kind == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, str(data)
                tf.addfile(info)
            else:
                raw = bytes(data)  # type: ignore[arg-type]
                info.size, info.mode = len(raw), 0o755 if ".so" in name else 0o644
                tf.addfile(info, io.BytesIO(raw))
    return path


# ---- archives that exhaust disk or memory (cudnn_archive.MAX_MEMBERS / MAX_TOTAL, the free-space check) -----------

def many_members_tar(path: Path, n: int, version: str = "9.10.2.21", cuda_tag: str = "12") -> Path:
    """A complete cuDNN tarball followed by `n` empty headers: a few KB compressed (the demonstrated one held 100,000
    members in 130 KB, and took minutes and 1.25 GB of memory to unpack)."""
    top = linux_entries(version, cuda_tag)[0][0].split("/")[0]
    extra = [(f"{top}/include/cudnn_extra_{i}.h", "file", b"") for i in range(n)]
    return write_tar(path, linux_entries(version, cuda_tag) + extra)


def huge_member_tar(path: Path, declared: int, version: str = "9.10.2.21", cuda_tag: str = "12") -> Path:
    """A gzip tarball whose header declares a `declared`-byte library and then ends: the size is known from the
    header alone, which is where the limit must act, before any of those bytes would be written."""
    import gzip

    top = linux_entries(version, cuda_tag)[0][0].split("/")[0]
    info = tarfile.TarInfo(f"{top}/lib/libcudnn_engines_precompiled.so.9.10.2")
    info.size, info.mode, info.mtime = declared, 0o755, 1_700_000_000
    with gzip.open(path, "wb") as fh:
        fh.write(info.tobuf(format=tarfile.GNU_FORMAT))
        fh.write(bytes(1 << 16))
    return path


def zeros_library_tar(path: Path, size: int, version: str = "9.10.2.21", cuda_tag: str = "12") -> Path:
    """A real-looking cuDNN tarball whose main library is `size` zero bytes (compresses to almost nothing, unpacks to
    `size`): for the free-space check on a small file system."""
    entries = [(p, k, bytes(size) if (k == "file" and "/lib/libcudnn.so." in p) else d)
               for p, k, d in linux_entries(version, cuda_tag)]
    return write_tar(path, entries, "w:gz")


# ---- named archives as NVIDIA names them ------------------------------------------------------------------------

def make(folder: Path, layout: str) -> Path:
    """One archive per layout NVIDIA shipped, with its real file name."""
    folder.mkdir(parents=True, exist_ok=True)
    if layout == "win-8.2-cuda-wrapper":
        return write_zip(folder / "cudnn-11.3-windows-x64-v8.2.1.32.zip", windows_entries("8.2.1.32", "11.3",
                                                                                           "cuda-wrapper"))
    if layout == "win-7.6-cuda-wrapper":
        return write_zip(folder / "cudnn-10.2-windows10-x64-v7.6.5.32.zip", windows_entries("7.6.5.32", "10.2",
                                                                                            "cuda-wrapper"))
    if layout == "win-8.3-archive":
        return write_zip(folder / "cudnn-windows-x86_64-8.3.2.44_cuda11.5-archive.zip",
                         windows_entries("8.3.2.44", "11.5", "archive-lib"))
    if layout == "win-8.9-archive":  # NVIDIA's real cuDNN 8.9.7.29 files where the tests have them
        out = folder / "cudnn-windows-x86_64-8.9.7.29_cuda12-archive.zip"
        shutil.copyfile(real_windows_8_zip(), out)
        return out
    if layout == "win-9.10-archive":
        return write_zip(folder / "cudnn-windows-x86_64-9.10.2.21_cuda12-archive.zip",
                         windows_entries("9.10.2.21", "12", "archive"))
    if layout == "win-9.20-cuda13":
        return write_zip(folder / "cudnn-windows-x86_64-9.20.0.48_cuda13-archive.zip",
                         windows_entries("9.20.0.48", "13", "archive-cuda13"))
    if layout == "linux-8.2-cuda-wrapper":
        return write_tar(folder / "cudnn-11.3-linux-x64-v8.2.1.32.tgz", linux_entries("8.2.1.32", "11.3",
                                                                                     "cuda-wrapper"), "w:gz")
    if layout == "linux-8.9-archive":
        return write_tar(folder / "cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz",
                         linux_entries("8.9.7.29", "12"))
    if layout == "linux-9.10-archive":
        return write_tar(folder / "cudnn-linux-x86_64-9.10.2.21_cuda12-archive.tar.xz",
                         linux_entries("9.10.2.21", "12"))
    if layout == "linux-9.1-cuda11":
        return write_tar(folder / "cudnn-linux-x86_64-9.1.0.70_cuda11-archive.tar.xz",
                         linux_entries("9.1.0.70", "11"))
    if layout == "linux-9.20-cuda13":
        return write_tar(folder / "cudnn-linux-x86_64-9.20.0.48_cuda13-archive.tar.gz",
                         linux_entries("9.20.0.48", "13"))
    raise ValueError(layout)


# ---- the real cuDNN -------------------------------------------------------------------------------------------------

REAL_VERSION = "9.10.2.21"
REAL_NAME = f"cudnn-linux-x86_64-{REAL_VERSION}_cuda12-archive"


def real_linux_tarball(source: Optional[Path] = None, version: str = REAL_VERSION, cuda: str = "12",
                       fmt: str = "tar.xz", out_dir: Optional[Path] = None) -> Path:
    """NVIDIA's Linux tarball layout rebuilt from the nvidia-cudnn-cu12 wheel (real libcudnn*.so.9, real headers):
    `<name>/include/*.h`, `<name>/lib/libX.so.M.m.p` with `libX.so.M` and `libX.so` links, `<name>/LICENSE`.
    xz in one block (as a single-threaded `tar -cJf` writes it; the Python lzma module when there is no `xz`), or
    gzip. Cached: built once per machine. `source` is an `nvidia/cudnn` folder (default: the pinned wheel)."""
    name = f"cudnn-linux-x86_64-{version}_cuda{cuda}-archive"
    out_dir = out_dir or nw.cache_dir() / "archives"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{name}.{fmt}"
    if out.exists():
        return out
    src = source or nw.extracted(nw.CUDNN_CU12) / "nvidia" / "cudnn"
    work = out_dir / f".build-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    top = work / name
    (top / "include").mkdir(parents=True)
    (top / "lib").mkdir()
    for h in sorted((src / "include").iterdir()):
        if h.suffix == ".h":
            shutil.copy2(h, top / "include" / h.name)
    major, minor, patch = version.split(".")[:3]
    for lib in sorted((src / "lib").iterdir()):
        if ".so" not in lib.name:
            continue
        # wheel: libcudnn_ops.so.9 ; tarball: libcudnn_ops.so.9.10.2 + .so.9 + .so links
        base = lib.name.split(".so")[0]
        full = f"{base}.so.{major}.{minor}.{patch}"
        os.link(lib, top / "lib" / full) if _same_fs(lib, top) else shutil.copy2(lib, top / "lib" / full)
        os.symlink(full, top / "lib" / f"{base}.so.{major}")
        os.symlink(f"{base}.so.{major}", top / "lib" / f"{base}.so")
    (top / "LICENSE").write_bytes(LICENSE)
    if source is None:
        lic = next((nw.extracted(nw.CUDNN_CU12)).glob("*.dist-info/licenses/License.txt"), None)
        if lic:
            (top / "LICENSE").write_bytes(lic.read_bytes())
    tmp = out_dir / f".{out.name}.{os.getpid()}.partial"  # per process: parallel test runs may build it at once
    t0 = time.time()
    if fmt == "tar.xz" and shutil.which("xz") and shutil.which("tar"):
        # -T1: one block, as a plain single-threaded `tar -cJf` writes it; -1 keeps the one-time build short
        with open(tmp, "wb") as fh:
            # The lib files are hard links to the cached wheel's: another test run building the same archive at the
            # same time links them too, which changes their ctime (not their bytes), and GNU tar then says "file
            # changed as we read it" and exits 1. That warning alone is not a broken archive; anything else is.
            tar = subprocess.Popen(["tar", "-C", str(work), "--owner=0", "--group=0", "--numeric-owner",
                                    "--warning=no-file-changed", "-cf", "-", name], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
            xz = subprocess.run(["xz", "-T1", "-1", "-c"], stdin=tar.stdout, stdout=fh, check=True)
            tar.stdout.close()
            err = tar.stderr.read().decode("utf-8", "replace")
            tar.stderr.close()
            assert tar.wait() in (0, 1) and not err.strip() and xz.returncode == 0, err
    else:
        mode = {"tar.xz": "w:xz", "tar.gz": "w:gz"}[fmt]
        kw = {"preset": 1} if fmt == "tar.xz" else {"compresslevel": 1}

        def owner(info):
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            return info

        with tarfile.open(tmp, mode, **kw) as tf:
            tf.add(top, arcname=name, filter=owner)
    os.replace(tmp, out)
    shutil.rmtree(work, ignore_errors=True)
    print(f"built {out} ({out.stat().st_size >> 20} MiB) in {time.time() - t0:.0f}s")
    return out


def _same_fs(a: Path, b: Path) -> bool:
    return os.stat(a).st_dev == os.stat(b).st_dev


# ---- snapshots -----------------------------------------------------------------------------------------------------

def snapshot(root: Path, skip: Tuple[str, ...] = ()) -> Dict[str, Tuple[str, str]]:
    """Every path under root -> (kind, sha256 / link target / mode), symlinks not followed."""
    import hashlib

    out: Dict[str, Tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir != "." and rel_dir.split(os.sep)[0] in skip:
            dirnames[:] = []
            continue
        for d in list(dirnames):
            p = os.path.join(dirpath, d)
            rel = os.path.normpath(os.path.join(rel_dir, d))
            if rel.split(os.sep)[0] in skip:
                continue
            if os.path.islink(p):
                out[rel] = ("symlink", os.readlink(p))
                dirnames.remove(d)
            else:
                out[rel] = ("dir", oct(os.lstat(p).st_mode & 0o7777))
        for f in filenames:
            p = os.path.join(dirpath, f)
            rel = os.path.normpath(os.path.join(rel_dir, f))
            if os.path.islink(p):
                out[rel] = ("symlink", os.readlink(p))
                continue
            h = hashlib.sha256()
            with open(p, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
            out[rel] = ("file", h.hexdigest() + " " + oct(os.lstat(p).st_mode & 0o7777))
    return out


def real_windows_zip(out_dir: Optional[Path] = None) -> Path:
    """NVIDIA's Windows zip layout rebuilt from the real cuDNN 9.10.2.21 Windows DLLs and headers of the
    nvidia-cudnn-cu11 win_amd64 wheel: `cudnn-windows-x86_64-9.10.2.21_cuda11-archive/{bin,include,lib/x64}` +
    LICENSE (the wheel's license text). The `lib/x64/*.lib` import libraries are synthetic: no wheel ships cuDNN 9's.
    Deflated like NVIDIA's zips (level 1 to keep the one-time build short); cached."""
    name = "cudnn-windows-x86_64-9.10.2.21_cuda11-archive"
    out_dir = out_dir or nw.cache_dir() / "archives"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{name}.zip"
    if out.exists():
        return out
    wheel = nw.extracted(nw.WIN_CUDNN_9, nw.WIN)
    src = wheel / "nvidia" / "cudnn"
    tmp = out_dir / f".{out.name}.{os.getpid()}.partial"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for role in ("bin", "include"):
            for f in sorted((src / role).iterdir()):
                if f.suffix in (".dll", ".h"):
                    zf.write(f, f"{name}/{role}/{f.name}")
        for lib in LIBS_9:
            zf.writestr(f"{name}/lib/x64/{lib}.lib", b"!<arch>\n" + _blob(lib + ".lib", "9.10.2.21", 512))
        lic = next(wheel.glob("*.dist-info/licenses/License.txt"), None)
        zf.writestr(f"{name}/LICENSE", lic.read_bytes() if lic else LICENSE)
    os.replace(tmp, out)
    return out


def real_windows_8_zip(spec: str = nw.WIN_CUDNN_8_CU12, load: bool = False, out_dir: Optional[Path] = None) -> Path:
    """NVIDIA's cuDNN 8.9 Windows zip layout, `cudnn-windows-x86_64-<ver>_cuda<major>-archive/{bin,include,lib/x64}`
    + LICENSE, from the real members of the cuDNN 8.9 win_amd64 wheel (nvidia_wheels.win_cudnn_8): the real
    cudnn64_8.dll, the 9 real headers, the 14 real import libraries and the wheel's license text. Of the six
    sub-library DLLs (53-351 MB compressed each) only cudnn_ops_infer64_8.dll is real, and only with load=True
    (the one cudnnGetVersion needs); the others are small synthetic stand-ins with the real names. Cached."""
    name, version = spec.split("==")
    cuda = name.rsplit("cu", 1)[1]
    top = f"cudnn-windows-x86_64-{version}_cuda{cuda}-archive"
    out_dir = out_dir or nw.cache_dir() / "archives"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / (f"{top}.zip" if not load else f"{top}-load.zip")
    if out.exists():
        return out
    src = nw.win_cudnn_8(spec, load=load)
    tmp = out_dir / f".{out.name}.{os.getpid()}.partial"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.write(src / "bin" / "cudnn64_8.dll", f"{top}/bin/cudnn64_8.dll")
        for sub in nw.WIN_CUDNN_8_SUBLIBS:
            real = src / "bin" / f"{sub}64_8.dll"
            if load and real.is_file():
                zf.write(real, f"{top}/bin/{real.name}")
            else:
                zf.writestr(f"{top}/bin/{sub}64_8.dll", b"MZ" + _blob(sub, version))
        for role, folder in (("include", "include"), ("lib/x64", "lib/x64")):
            for f in sorted((src / folder).iterdir()):
                zf.write(f, f"{top}/{role}/{f.name}")
        lic = src.parent.parent / f"{name.replace('-', '_')}-{version}.dist-info" / "License.txt"
        zf.writestr(f"{top}/LICENSE", lic.read_bytes())
    os.replace(tmp, out)
    return out
