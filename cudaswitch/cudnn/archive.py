"""Reading a cuDNN archive as NVIDIA ships it, in one streaming pass: `.zip` (Windows), `.tar.xz` / `.tar.gz` /
`.tgz` (Linux). Layouts, names and version headers: sources.csv S46-S82 (NVIDIA's archives, install guides and
release notes).

Nothing here writes anywhere. `read_archive` walks the members in archive order, refuses hostile or unexpected
entries as soon as their header is seen (before their data is read), hands each file's bytes to a caller-supplied
writer while hashing them, and checks at the end that the archive is complete and is a cuDNN:

- one top folder: `cuda/` (<= 8.2) or `cudnn-<os>-<arch>-<version>_cuda<X[.Y]>-archive/` (8.3+);
- below it only `bin/`, `bin/x64/` (cuDNN 9 for CUDA 13), `include/`, `lib/`, `lib/x64/`, `lib64/` (old Linux
  tgz) and top-level documents such as `LICENSE`; any other folder is reported, never guessed;
- no absolute paths, drive letters, `..`, hard links, devices, or symlinks leaving their folder;
- a version header (`cudnn_version.h`, or `cudnn.h` for 7.x) and the main library (`cudnn64_N.dll` /
  `libcudnn.so.N`).
"""

from __future__ import annotations

import hashlib
import lzma
import os
import re
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Callable, Dict, List, Optional, Tuple

from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import Listed, M
from cudaswitch.core import trust
from cudaswitch.core.trust import open_regular, read_text
from cudaswitch.core.versions import parse_cudnn_header

CHUNK = 1 << 20

# Folder below the top folder -> (role, the OS it implies or None)
FOLDERS: Dict[str, Tuple[str, Optional[str]]] = {
    "bin": ("bin", "windows"),
    "bin/x64": ("bin", "windows"),
    "include": ("include", None),
    "lib": ("lib", None),
    "lib/x64": ("lib", "windows"),
    "lib64": ("lib", "linux"),
}
# Parents that may appear as bare folder entries
_DIR_ONLY = {"", "bin", "lib"}

# What a cuDNN archive installs, by role: NVIDIA's names all start with cudnn / libcudnn (headers cudnn*.h, DLLs
# cudnn*64_N.dll, import libraries cudnn*.lib, shared and static libraries libcudnn*.so* / libcudnn*.a; which OS's
# files sit where is checked later, with a better message). Anything else (include/.bashrc, lib/libc.so.6,
# bin/python.exe) would be put into a toolkit that every user's programs load.
ALLOWED_NAMES = {
    "include": re.compile(r"^cudnn[A-Za-z0-9_.+-]*\.h$", re.I),
    "lib": re.compile(r"^(?:lib)?cudnn[A-Za-z0-9_.+-]*$", re.I),
    "bin": re.compile(r"^cudnn[A-Za-z0-9_.+-]*$", re.I),
}

# Limits far above every archive NVIDIA shipped (cuDNN 9 for CUDA 12 on Linux: about 60 members, 2 GiB unpacked
# with its static libraries), far below what fills a disk or memory: a 300 KB .tar.xz can declare a 2 GiB member
# and a 130 KB one 100,000 empty members.
MAX_MEMBERS = 2000
MAX_TOTAL = 8 << 30

NEW_NAME = re.compile(r"^cudnn-(windows|linux)-(x86_64|sbsa|aarch64|ppc64le)-(\d+\.\d+\.\d+(?:\.\d+)?)"
                      r"_cuda(\d+)(?:\.(\d+))?-archive$")
OLD_NAME = re.compile(r"^cudnn-(\d+)\.(\d+)-(windows\d*|linux)-(x64|ppc64le|aarch64sbsa|sbsa)"
                      r"-v(\d+\.\d+\.\d+(?:\.\d+)?)")
_SUFFIXES = (".tar.xz", ".tar.gz", ".tgz", ".txz", ".zip", ".tar")


class ArchiveError(CudaswitchError):
    """The archive is refused; nothing was written."""


@dataclass
class Entry:
    path: str  # normalised member path inside the archive
    kind: str  # "file", "symlink", "dir"
    size: int = 0
    mode: int = 0o644
    link: Optional[str] = None
    role: Optional[str] = None  # "bin", "include", "lib", "doc" (top-level document, not installed)
    folder: str = ""  # folder below the top folder: "bin/x64", "lib", ...
    name: str = ""
    sha256: Optional[str] = None

    def to_json(self) -> dict:
        return {"path": self.path, "kind": self.kind, "size": self.size, "role": self.role, "link": self.link,
                "sha256": self.sha256}


@dataclass
class Archive:
    path: str
    format: str  # "zip", "tar.xz", "tar.gz"
    top: str
    style: str  # "cuda-wrapper" or "archive"
    os: str  # "windows" or "linux"
    arch: Optional[str]
    version: str  # from the header: 9.10.2
    full_version: Optional[str]  # from the name: 9.10.2.21
    cuda_major: Optional[int]  # from the name
    cuda_minor: Optional[int]
    entries: List[Entry] = field(default_factory=list)
    header: str = ""  # which header gave the version
    notes: List[str] = field(default_factory=list)

    @property
    def cudnn_major(self) -> int:
        return int(self.version.split(".")[0])

    @property
    def cuda_tag(self) -> Optional[str]:
        if self.cuda_major is None:
            return None
        return f"{self.cuda_major}" + (f".{self.cuda_minor}" if self.cuda_minor is not None else "")

    @property
    def installable(self) -> List[Entry]:
        return [e for e in self.entries if e.role in ("bin", "include", "lib")]

    @property
    def label(self) -> str:
        v = self.full_version or self.version
        if self.cuda_tag:
            return M("cuDNN {version} for CUDA {cuda} ({os})", version=v, cuda=self.cuda_tag, os=self.os)
        return f"cuDNN {v} ({self.os})"

    def to_json(self) -> dict:
        return {"path": self.path, "format": self.format, "top": self.top, "layout": self.style, "os": self.os,
                "arch": self.arch, "version": self.version, "full_version": self.full_version,
                "cuda": self.cuda_tag, "files": len(self.installable)}


# ---- names ---------------------------------------------------------------------------------------------------------

def _stem(filename: str) -> str:
    low = filename.lower()
    for suf in _SUFFIXES:
        if low.endswith(suf):
            return filename[: -len(suf)]
    return filename


def name_info(name: str) -> Optional[dict]:
    """What an archive or top-folder name says: os, arch, cuDNN version, CUDA major[.minor]."""
    stem = _stem(name)
    m = NEW_NAME.match(stem)
    if m:
        return {"os": m.group(1), "arch": m.group(2), "version": m.group(3), "cuda_major": int(m.group(4)),
                "cuda_minor": int(m.group(5)) if m.group(5) else None}
    m = OLD_NAME.match(stem)
    if m:
        arch = {"x64": "x86_64"}.get(m.group(4), m.group(4))
        return {"os": "windows" if m.group(3).startswith("windows") else "linux", "arch": arch,
                "version": m.group(5), "cuda_major": int(m.group(1)), "cuda_minor": int(m.group(2))}
    return None


# ---- member paths ----------------------------------------------------------------------------------------------------

def check_member_path(raw: str) -> str:
    """The normalised path of a member, or ArchiveError when it could land outside the install."""
    if not raw or "\x00" in raw:
        raise ArchiveError(M("refused: archive member with an empty or NUL-containing name ({raw!r})", raw=raw))
    p = raw.replace("\\", "/")
    if p.startswith("/"):
        raise ArchiveError(M("refused: archive member {raw!r} has an absolute path", raw=raw))
    if re.match(r"^[A-Za-z]:", p):
        raise ArchiveError(M("refused: archive member {raw!r} has a drive letter", raw=raw))
    parts = [x for x in p.split("/") if x not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(M("refused: archive member {raw!r} contains '..' (a path-traversal entry)", raw=raw))
    if not parts:
        raise ArchiveError(M("refused: archive member {raw!r} has no name", raw=raw))
    for part in parts:
        if re.search(r'[:<>"|?*\x00-\x1f]', part):
            # a ':' makes an NTFS alternate data stream or a drive-relative path on Windows
            raise ArchiveError(M("refused: archive member {raw!r} has a character Windows treats specially", raw=raw))
    return "/".join(parts)


def _check_link(path: str, target: str) -> None:
    """A symlink may only name a sibling file in its own folder, as NVIDIA's libX.so -> libX.so.9 links do."""
    t = target.replace("\\", "/")
    if not t or t.startswith("/") or re.match(r"^[A-Za-z]:", t) or "/" in t or t in (".", ".."):
        raise ArchiveError(M("refused: symlink {path} -> {target} points outside its folder", path=path,
                             target=target))


# ---- streaming readers -------------------------------------------------------------------------------------------

class _Counting:
    """File wrapper that reports how many compressed bytes were consumed."""

    def __init__(self, fh: BinaryIO, progress: Optional[Callable[[int], None]]):
        self.fh, self.progress = fh, progress

    def read(self, n: int = -1) -> bytes:
        data = self.fh.read(n)
        if self.progress and data:
            self.progress(len(data))
        return data

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def close(self) -> None:
        pass


def sniff(path: Path, fh: Optional[BinaryIO] = None) -> str:
    if fh is not None:
        fh.seek(0)
        head = fh.read(6)
        fh.seek(0)
    else:
        with open_regular(path) as raw:
            head = raw.read(6)
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "tar.xz"
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    raise ArchiveError(M("{name}: not a .zip, .tar.xz or .tar.gz archive (unrecognised file signature)",
                         name=path.name))


Writer = Callable[[Entry], Optional[BinaryIO]]


def read_archive(path, write: Optional[Writer] = None, progress: Optional[Callable[[int], None]] = None,
                 fh: Optional[BinaryIO] = None) -> Archive:
    """Stream the archive once. For every file to install, `write(entry)` returns a binary file to receive its bytes
    (or None); the writer's `close()` is called when the member ends. Raises ArchiveError on anything refused.
    `fh`: the archive already open (the one whose SHA-256 was checked): read from it, never reopened by name, so a
    file swapped in between is not what gets installed."""
    path = Path(path)
    try:
        fmt = sniff(path, fh)
    except OSError as exc:
        raise ArchiveError(M("{path}: cannot read ({why})", path=path, why=exc.strerror or str(exc))) from None
    state = _State(path)
    seen = [0]
    if progress is not None:
        report = progress

        def progress(n: int) -> None:
            seen[0] += n
            report(n)
    try:
        if fmt == "zip":
            _read_zip(path, state, write, progress, fh)
        else:
            _read_tar(path, fmt, state, write, progress, fh)
    except ArchiveError:
        raise
    except (tarfile.TarError, EOFError, lzma.LZMAError, zlib.error, zipfile.BadZipFile,
            zipfile.LargeZipFile) as exc:
        raise ArchiveError(M("{name}: truncated or corrupt archive ({why}); download it again", name=path.name,
                             why=_why(exc))) from None
    archive = state.finish(fmt)
    if progress is not None:
        rest = (os.fstat(fh.fileno()) if fh is not None else path.stat()).st_size - seen[0]
        if rest > 0:
            progress(rest)  # headers and the zip's central directory: the bar ends at 100%
    return archive


def _why(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.replace("\n", " ")


def _read_tar(path: Path, fmt: str, state: "_State", write, progress, fh=None) -> None:
    with _opened(path, fh) as raw:
        counted = _Counting(raw, progress)
        dec = lzma.LZMAFile(counted) if fmt == "tar.xz" else __import__("gzip").GzipFile(fileobj=counted)
        with dec, _Prefetch(dec) as stream:
            with tarfile.open(fileobj=stream, mode="r|", bufsize=CHUNK) as tf:
                for info in tf:
                    tf.members.clear()  # a stream read keeps every header otherwise; the iterator does not need them
                    entry = state.add(info.name, _tar_kind(info), info.size, info.mode, info.linkname or None)
                    if entry.kind == "file":
                        src = tf.extractfile(info)
                        state.copy(entry, src, write)
            # tarfile stops at the end-of-archive marker; read to the end so that a truncated or corrupt stream
            # (xz/gzip checksums and footers) is noticed
            while stream.read(CHUNK):
                pass


class _Prefetch:
    """Decompresses in a second thread, at most `depth` chunks ahead (a few MB), so that decompression (which
    releases the GIL) overlaps with hashing and writing. Errors of the reader thread are raised in the caller."""

    def __init__(self, src, depth: int = 8):
        import queue
        import threading

        self.src = src
        self.q: "queue.Queue" = queue.Queue(maxsize=depth)
        self.stop = threading.Event()
        self.buf = memoryview(b"")
        self.done = False
        self.thread = threading.Thread(target=self._run, name="cudaswitch-decompress", daemon=True)

    def _run(self) -> None:
        import queue

        try:
            while not self.stop.is_set():
                chunk = self.src.read(CHUNK)
                item = chunk if chunk else None
                while not self.stop.is_set():
                    try:
                        self.q.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if item is None:
                    return
        except BaseException as exc:  # handed to the reading thread
            self.q.put(exc)

    def __enter__(self) -> "_Prefetch":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        """Up to n bytes (fewer at a chunk boundary, b"" at the end); n < 0: everything left."""
        if n is None or n < 0:
            parts = []
            while True:
                part = self.read(CHUNK)
                if not part:
                    return b"".join(parts)
                parts.append(part)
        while not self.buf:
            if self.done:
                return b""
            item = self.q.get()
            if isinstance(item, BaseException):
                self.done = True
                raise item
            if item is None:
                self.done = True
                return b""
            self.buf = memoryview(item)
        take = bytes(self.buf[:n])
        self.buf = self.buf[len(take):]
        return take

    def close(self) -> None:
        pass


def _tar_kind(info: tarfile.TarInfo) -> str:
    if info.isreg():
        return "file"
    if info.isdir():
        return "dir"
    if info.issym():
        return "symlink"
    if info.islnk():
        return "hardlink"
    return "special"


def _opened(path: Path, fh: Optional[BinaryIO]):
    """The archive as a file object: the one the caller opened through a door, else `path` opened through one."""
    import contextlib

    return contextlib.nullcontext(fh) if fh is not None else open_regular(path)


def _read_zip(path: Path, state: "_State", write, progress, fh=None) -> None:
    with _opened(path, fh) as raw, zipfile.ZipFile(raw) as zf:
        infos = zf.infolist()
        # the central directory is complete: check every name before reading any data
        pre = _State(path)
        for info in infos:
            pre.add(info.filename, _zip_kind(info), info.file_size, _zip_mode(info), None, check_only=True)
        for info in infos:
            if info.flag_bits & 0x1:
                raise ArchiveError(M("refused: {name} is encrypted", name=info.filename))
            entry = state.add(info.filename, _zip_kind(info), info.file_size, _zip_mode(info), None)
            if entry.kind == "file":
                with zf.open(info) as src:
                    state.copy(entry, src, write)
            if progress:
                progress(info.compress_size)


def _zip_kind(info: zipfile.ZipInfo) -> str:
    mode = info.external_attr >> 16
    if info.is_dir():
        return "dir"
    if info.create_system == 3 and stat.S_ISLNK(mode):
        return "zip-symlink"
    return "file"


def _zip_mode(info: zipfile.ZipInfo) -> int:
    mode = (info.external_attr >> 16) & 0o777
    return mode if mode else 0o644


# ---- what the members add up to ---------------------------------------------------------------------------------

class _State:
    def __init__(self, path: Path):
        self.path = path
        self.top: Optional[str] = None
        self.entries: List[Entry] = []
        self.seen: Dict[str, Entry] = {}
        self.headers: Dict[str, str] = {}
        self.members = 0
        self.total = 0

    def add(self, raw: str, kind: str, size: int, mode: int, link: Optional[str], check_only: bool = False) -> Entry:
        p = check_member_path(raw)
        self.members += 1
        if self.members > MAX_MEMBERS:
            raise ArchiveError(M("refused: {name} has more than {limit} members; a cuDNN archive has under 100; not an "
                                 "archive NVIDIA ships", name=self.path.name, limit=MAX_MEMBERS))
        self.total += max(size, 0)
        if self.total > MAX_TOTAL:
            raise ArchiveError(M("refused: {name} unpacks to more than {limit} GiB (at {path}, {size:,} bytes); a "
                                 "cuDNN archive unpacks to about 2 GiB; not an archive NVIDIA ships",
                                 name=self.path.name, limit=MAX_TOTAL >> 30, path=p, size=size))
        if kind == "hardlink":
            raise ArchiveError(M("refused: {path} is a hard link (NVIDIA archives have none)", path=p))
        if kind == "special":
            raise ArchiveError(M("refused: {path} is a device, FIFO or other special file", path=p))
        if kind == "zip-symlink":
            raise ArchiveError(M("refused: {path} is a symlink inside a zip (NVIDIA's zips have none)", path=p))
        if kind == "symlink":
            _check_link(p, link or "")
        parts = p.split("/")
        top = parts[0]
        if self.top is None:
            self.top = top
        elif top != self.top:
            raise ArchiveError(M("{name}: more than one top folder ({first}/, {top}/); a cuDNN archive has exactly one "
                                 "(cuda/ or cudnn-<os>-<arch>-<version>_cudaNN-archive/)", name=self.path.name,
                                 first=self.top, top=top))
        if len(parts) == 1 and kind != "dir":
            raise ArchiveError(M("{name}: {path} lies outside a top folder; not an archive NVIDIA ships",
                                 name=self.path.name, path=p))
        if top != "cuda" and not NEW_NAME.match(top):
            raise ArchiveError(M("{name}: top folder {top}/ is not one NVIDIA uses (cuda/ or "
                                 "cudnn-<os>-<arch>-<version>_cudaNN-archive/); not a cuDNN archive",
                                 name=self.path.name, top=top))
        rest = parts[1:]
        entry = Entry(path=p, kind=kind, size=size, mode=mode & 0o755 | 0o400, link=link)
        if kind == "dir":
            sub = "/".join(rest)
            if sub not in FOLDERS and sub not in _DIR_ONLY:
                raise ArchiveError(self._stray(sub))
        else:
            folder = "/".join(rest[:-1])
            entry.name = rest[-1]
            entry.folder = folder
            if folder == "":
                entry.role = "doc"
            elif folder in FOLDERS:
                entry.role = FOLDERS[folder][0]
                if not ALLOWED_NAMES[entry.role].match(entry.name):
                    raise ArchiveError(M("refused: {path} is not a cuDNN file (a cuDNN archive's {folder}/ holds only "
                                         "{allowed}); not an archive NVIDIA ships", path=p, folder=folder,
                                         allowed="cudnn*.h" if entry.role == "include"
                                         else M("cudnn*/libcudnn* libraries")))
            else:
                raise ArchiveError(self._stray(folder))
        key = p.lower()
        if key in self.seen:
            raise ArchiveError(M("refused: {path} appears twice in the archive", path=p))
        if check_only:
            self.seen[key] = entry
            return entry
        self.seen[key] = entry
        self.entries.append(entry)
        return entry

    def _stray(self, folder: str) -> str:
        hint = ""
        first = folder.split("/")[0]
        if first == "cuda" or NEW_NAME.match(first):
            hint = M(" (an extra folder level: the archive was re-packed one level too deep)")
        elif folder.startswith("lib/"):
            hint = M(" (libraries belong in lib/x64/ or lib/)")
        elif folder.startswith("bin/"):
            hint = M(" (DLLs belong in bin/ or bin/x64/)")
        return M("{name}: unexpected folder {top}/{folder}/{hint}; cudaswitch installs only bin/, bin/x64/, include/, "
                 "lib/, lib/x64/ and lib64/ and does not guess", name=self.path.name, top=self.top, folder=folder,
                 hint=hint)

    def copy(self, entry: Entry, src: BinaryIO, write: Optional[Writer]) -> None:
        out = write(entry) if (write and entry.role in ("bin", "include", "lib")) else None
        h = hashlib.sha256()
        keep = entry.role == "include" and entry.name in ("cudnn_version.h", "cudnn.h")
        kept: List[bytes] = []
        n = 0
        try:
            while True:
                chunk = src.read(CHUNK)
                if not chunk:
                    break
                h.update(chunk)
                n += len(chunk)
                if out is not None:
                    out.write(chunk)
                if keep and n <= (1 << 20):
                    kept.append(chunk)
        finally:
            if out is not None:
                out.close()
        if n != entry.size:
            raise ArchiveError(M("{name}: truncated or corrupt archive ({path}: {n} of {size} bytes); download it "
                                 "again", name=self.path.name, path=entry.path, n=n, size=entry.size))
        entry.sha256 = h.hexdigest()
        if keep:
            self.headers[entry.name] = b"".join(kept).decode("utf-8", "replace")

    def finish(self, fmt: str) -> Archive:
        name = self.path.name
        if self.top is None or not self.entries:
            raise ArchiveError(M("{name}: empty archive; not a cuDNN archive", name=name))
        files = [e for e in self.entries if e.kind in ("file", "symlink")]
        installable = [e for e in files if e.role in ("bin", "include", "lib")]
        # OS from the folders and the file types
        hints = set()
        for e in installable:
            implied = FOLDERS[e.folder][1]
            if implied:
                hints.add((implied, f"{e.folder}/"))
            low = e.name.lower()
            if low.endswith((".dll", ".lib")):
                hints.add(("windows", f"{e.folder}/{e.name}"))
            elif ".so" in low or low.endswith(".a"):
                hints.add(("linux", f"{e.folder}/{e.name}"))
        oses = {h[0] for h in hints}
        if len(oses) > 1:
            win = next(h[1] for h in sorted(hints) if h[0] == "windows")
            lin = next(h[1] for h in sorted(hints) if h[0] == "linux")
            raise ArchiveError(M("{name}: mixes Windows ({win}) and Linux ({lin}) files; not an archive NVIDIA ships",
                                 name=name, win=win, lin=lin))
        # one folder per role: bin and bin/x64 both holding DLLs would be a guess
        for role in ("bin", "lib"):
            used = sorted({e.folder for e in installable if e.role == role})
            if len(used) > 1:
                shown = [f"{self.top}/{u}/" for u in used]
                raise ArchiveError(M("{name}: both {first} and {second} hold files; cudaswitch does not guess which "
                                     "to install", name=name, first=shown[0], second=" and ".join(shown[1:])))
        # symlinks must name a file of the archive
        names = {e.path for e in files}
        for e in files:
            if e.kind == "symlink":
                target = (e.path.rsplit("/", 1)[0] + "/" + e.link) if "/" in e.path else e.link
                if target not in names:
                    raise ArchiveError(M("refused: symlink {path} -> {link} points to nothing in the archive",
                                         path=e.path, link=e.link))
        # version header
        version, header = None, ""
        for h in ("cudnn_version.h", "cudnn.h"):
            if h in self.headers:
                version = parse_cudnn_header(self.headers[h])
                if version:
                    header = h
                    break
        if not version:
            raise ArchiveError(M("{name}: not a cuDNN archive (no include/cudnn_version.h or include/cudnn.h with "
                                 "CUDNN_MAJOR/CUDNN_MINOR)", name=name))
        info = name_info(self.top) or name_info(name)
        os_ = oses.pop() if oses else (info or {}).get("os")
        if os_ is None:
            raise ArchiveError(M("{name}: holds no libraries; not a complete cuDNN archive", name=name))
        if info and info["os"] != os_:
            raise ArchiveError(M("{name}: the name says {said} but the files are {os} files", name=name,
                                 said=info["os"], os=os_))
        major = version.split(".")[0]
        want = f"cudnn64_{major}.dll" if os_ == "windows" else f"libcudnn.so.{major}"
        if not any(e.name.lower() == want.lower() for e in installable):
            raise ArchiveError(M("{name}: not a complete cuDNN archive (no {want} for cuDNN {version})", name=name,
                                 want=want, version=version))
        style = "cuda-wrapper" if self.top == "cuda" else "archive"
        notes: List[str] = []
        if info is None:
            notes.append(M("the archive name {name!r} does not say which CUDA it was built for (NVIDIA names them "
                           "like cudnn-11.3-windows-x64-v8.2.1.32.zip)", name=name))
        return Archive(path=os.path.abspath(self.path), format=fmt, top=self.top, style=style, os=os_,
                       arch=(info or {}).get("arch"), version=version,
                       full_version=(info or {}).get("version"), cuda_major=(info or {}).get("cuda_major"),
                       cuda_minor=(info or {}).get("cuda_minor"), entries=self.entries, header=header, notes=notes)


def declared_size(path: Path, fh: Optional[BinaryIO] = None) -> Optional[int]:
    """Bytes a zip says its files unpack to (its central directory lists them), for the free-space check before a
    byte is written; None for a tarball, whose sizes are only known member by member."""
    try:
        if sniff(path, fh) != "zip":
            return None
        with _opened(path, fh) as raw, zipfile.ZipFile(raw) as zf:
            return sum(i.file_size for i in zf.infolist())
    except (OSError, zipfile.BadZipFile, ArchiveError):
        return None  # reported by the full read


# ---- integrity -------------------------------------------------------------------------------------------------------

def sha256_file(path: Path, progress: Optional[Callable[[int], None]] = None, fh: Optional[BinaryIO] = None) -> str:
    import contextlib

    h = hashlib.sha256()
    if fh is not None:
        fh.seek(0)
    with (contextlib.nullcontext(fh) if fh is not None else open_regular(path)) as src:
        while True:
            chunk = src.read(CHUNK)
            if not chunk:
                break
            h.update(chunk)
            if progress:
                progress(len(chunk))
    if fh is not None:
        fh.seek(0)
    return h.hexdigest()


def expected_from_redistrib(redistrib: Path, archive: Path) -> Tuple[str, Optional[int]]:
    """(sha256, size) of `archive` as NVIDIA's redistrib_<version>.json lists it."""
    try:
        data = trust.parse_json(read_text(redistrib), redistrib)
    except OSError as exc:
        raise ArchiveError(M("{path}: cannot read ({why})", path=redistrib, why=exc.strerror or str(exc))) from None
    except trust.FileShapeError as exc:  # names the file: not JSON, or nested too deeply
        raise ArchiveError(exc.args[0]) from None
    except ValueError as exc:  # not UTF-8
        raise ArchiveError(M("{path}: not valid JSON ({why})", path=redistrib, why=str(exc))) from None
    found = []

    def walk(node):
        if isinstance(node, dict):
            rel = node.get("relative_path")
            if isinstance(rel, str) and isinstance(node.get("sha256"), str):
                found.append(node)
            for v in node.values():
                walk(v)

    walk(data)
    for node in found:
        if node["relative_path"].rsplit("/", 1)[-1] == archive.name:
            size = node.get("size")
            return node["sha256"].lower(), int(size) if size is not None and str(size).isdigit() else None
    raise ArchiveError(M("{path}: does not list {name} (it lists {listed})", path=redistrib, name=archive.name,
                         listed=Listed(n["relative_path"].rsplit("/", 1)[-1] for n in found) or M("nothing")))


def verify_integrity(archive: Path, sha256: Optional[str], redistrib: Optional[Path],
                     progress: Optional[Callable[[int], None]] = None, fh: Optional[BinaryIO] = None) -> Optional[str]:
    """Check the archive against --sha256 / --redistrib-json before anything else; returns the hash checked.
    `fh`: the open archive that is then unpacked (hash and unpack must read the same file)."""
    expected, size = None, None
    if redistrib is not None:
        expected, size = expected_from_redistrib(Path(redistrib), archive)
    if sha256:
        want = sha256.strip().lower()
        if not re.fullmatch(r"[0-9a-f]{64}", want):
            raise ArchiveError(M("--sha256: {value!r} is not a SHA-256 (64 hex digits)", value=sha256))
        if expected and expected != want:
            raise ArchiveError(M("--sha256 and --redistrib-json disagree; check which one is right"))
        expected = want
    if expected is None:
        return None
    have = (os.fstat(fh.fileno()) if fh is not None else archive.stat()).st_size
    if size is not None and have != size:
        raise ArchiveError(M("{name}: {have} bytes, the manifest says {size}: incomplete or wrong download; nothing "
                             "was installed", name=archive.name, have=have, size=size))
    got = sha256_file(archive, progress, fh)
    if got != expected:
        raise ArchiveError(M("{name}: SHA-256 {got} does not match the expected {expected}; download it again; "
                             "nothing was installed", name=archive.name, got=got, expected=expected))
    return got


def peek_name(path) -> Optional[dict]:
    """What the archive's file name, else its top folder's name, says (reads only the first member)."""
    path = Path(path)
    info = name_info(path.name)
    if info:
        return info
    try:
        fmt = sniff(path)
        if fmt == "zip":
            with open_regular(path) as raw, zipfile.ZipFile(raw) as zf:
                names = zf.namelist()
            first = names[0] if names else ""
        else:
            import gzip

            with open_regular(path) as raw:
                dec = lzma.LZMAFile(raw) if fmt == "tar.xz" else gzip.GzipFile(fileobj=raw)
                with dec, tarfile.open(fileobj=dec, mode="r|") as tf:
                    first = next(iter(tf)).name
    except (OSError, EOFError, StopIteration, tarfile.TarError, lzma.LZMAError, zlib.error, zipfile.BadZipFile,
            ArchiveError):
        return None
    return name_info(first.replace("\\", "/").lstrip("/").split("/")[0])
