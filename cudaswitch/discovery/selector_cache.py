"""The toolkit selectors a TAB offers (`cudaswitch use <TAB>`), kept between TABs in the user's cache folder.

A TAB on a selector needs the full versions (version.json) and the module names that load a toolkit, which only a
whole discovery pass gives (on a cluster's module tree more than the 50 ms a completion may add to Python's start:
benchmarks/bench_completion.py). So the pass that answers one TAB records what it looked at: every path it stat'ed,
listed, read or resolved (with its lstat, and its stat where it is a link: kind, inode, size, mtime, ctime, owner,
mode, or that it was missing), every environment variable it read, the folders it took from sys.path and
cudaswitch's own source files. The next TAB re-stats those paths (about 560 on such a tree) and reuses the words only
when every one is as recorded, so a toolkit added, removed or upgraded, a modulefile edited, a variable changed or a
new cudaswitch all mean a fresh pass. A pass that ran a program (nvcc --version), that looked at a relative path, or
that saw a file changed less than RACY_NS before it began (a change in the same clock tick would not show in mtime)
is not kept; on Windows (the registry is no file) nothing is.

That fresh pass reads again only what changed: the record also keeps each pieces.piece() of the pass (a folder's
resolution, a toolkit folder's inspection, a MODULEPATH folder's walk, a family's default, a modulefile's reading,
the module tree) with the variables and paths that piece read, and a piece whose own inputs are all unchanged gives
its kept result, its inputs becoming the new record's as if read again. discovery's own logic runs whole every time,
so the words are those of a whole pass. A command that discovers (cli/common._discover: list, use, run...) and
`init --install` record their pass the same way and keep it for the next TAB (discover_keeping), reading nothing
kept themselves. Measured (bench_completion.py, CPU time over `python -c pass` at 13-17 ms in a fresh virtual
environment, medians of 20, two runs; docs/guide/performance.md): kept words +15 to +19 ms on every machine, the
first TAB after `cudaswitch list` +19 to +20; the first TAB after a change +24 to +26 on a workstation of three
toolkits, +23 to +28 on one site's login node (13 real sites), +32 to +36 on a stress tree of 20 toolkits and ten
sites' modules; nothing kept (only after an upgrade of cudaswitch's discovery or with the file deleted, before any
command has run) +24 to +26, +27 to +39 and +62 to +65 (the last over the 50 ms budget; where Python starts in
22-25 ms, about twice each).

The file is the user's own: marshal's bytes under a header and a CRC (trust.kept_bytes: json's import and codec
were a tenth of a kept TAB), written atomically (trust.write_file), only into a cache folder the user owns and
nobody else may write; read (trust.parse_kept) only when it is a regular file owned by the user and writable by
nobody else, at most READ_LIMIT bytes; anything else, or a file that does not have the shape written here, is a
fresh pass, never an answer, and no piece of it is reused (docs/design/security.md, "The completion cache").
"""

from __future__ import annotations

import builtins
import os
import stat
import sys
import time
from pathlib import Path

from cudaswitch.discovery import pieces

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Mapping, Optional

FORMAT = 2
NAME = "selectors.marshal"
READ_LIMIT = 4 << 20
RACY_NS = 100_000_000  # a file changed this shortly before the pass: a later change could keep its mtime


def cache_file(system) -> Optional[Path]:
    """platformdirs.user_cache_dir("cudaswitch")/selectors.marshal, or None where no cache is kept (Windows)."""
    if os.name != "posix" or system.windows:
        return None
    from cudaswitch.core.config import user_dir

    return Path(user_dir(system, "cache")) / NAME


class _Environ(dict):
    """The environment, noting each variable discovery reads (present or not)."""

    def __init__(self, env: Mapping[str, str]):
        super().__init__(env)
        self.read: Dict[str, Optional[str]] = {}
        self.open: List[dict] = []  # the variables read by each piece being computed (piece())

    def _note(self, key):
        if isinstance(key, str):
            value = self.read.setdefault(key, dict.get(self, key))
            for env in self.open:
                env.setdefault(key, value)

    def get(self, key, default=None):
        self._note(key)
        return dict.get(self, key, default)

    def __getitem__(self, key):
        self._note(key)
        return dict.__getitem__(self, key)

    def __contains__(self, key):
        self._note(key)
        return dict.__contains__(self, key)

    def _every(self):
        self.read.setdefault("\0every", None)  # a pass that reads the variables wholesale is not kept
        for env in self.open:
            env.setdefault("\0every", None)

    def __iter__(self):
        self._every()
        return dict.__iter__(self)

    def items(self):
        self._every()
        return dict.items(self)

    def keys(self):
        self._every()
        return dict.keys(self)

    def values(self):
        self._every()
        return dict.values(self)

    def copy(self):
        self._every()
        return dict(dict.items(self))


def _sig(st, full: bool) -> list:
    # a folder or file only stat'ed tells its kind, owner and mode; its size and times count only where its content
    # was read or listed (the mtime of /tmp or of a home folder changes all day)
    kind = [st.st_mode, st.st_ino, st.st_dev, st.st_uid, st.st_gid]
    return kind + [st.st_size, st.st_mtime_ns, st.st_ctime_ns] if full else kind


def signature(path: str, full: bool = True) -> list:
    """[lstat, stat] of a path as compared between TABs, None for each that fails (missing, no permission); [lstat]
    alone where the path is no link (the same file either way: one system call, and half the record)."""
    try:
        st = _real["stat"](path, follow_symlinks=False)
    except (OSError, ValueError):
        return [None]
    if not stat.S_ISLNK(st.st_mode):
        return [_sig(st, full)]
    try:
        return [_sig(st, full), _sig(_real["stat"](path), full)]
    except (OSError, ValueError):
        return [_sig(st, full), None]


_real = {"stat": os.stat, "lstat": os.lstat, "listdir": os.listdir, "scandir": os.scandir, "readlink": os.readlink,
         "access": os.access, "open": os.open, "builtin_open": builtins.open}


_READS = ("listdir", "scandir", "readlink", "open", "builtin_open")  # the content counts, not only the kind


class _Recorder:
    """Every path the pass looks at, with its signature when first seen (before the pass read it), and whether its
    content (a listing, a file's bytes, a link's target) was read."""

    def __init__(self, now: Optional["_Now"] = None):
        self.now = now or _Now()
        self.paths: Dict[str, list] = {}
        self.read: set = set()
        self.fds: Dict[int, str] = {}  # descriptors os.open gave, by the path they were opened at
        self.relative = 0  # how many times a relative path was looked at
        self.open: List[Dict[str, bool]] = []  # path -> content read, of each piece being computed (piece())

    def note(self, path, dir_fd, content: bool) -> Optional[str]:
        # on every system call of the pass: kept lean (a str path is what almost every call gives)
        if type(path) is not str:
            if isinstance(path, int):
                return None  # an open descriptor: the path it was opened at was noted
            try:
                path = os.fsdecode(path)
            except TypeError:
                return None
        if dir_fd is not None:  # a name below a folder opened before (trust.open_dir, read_regular)
            if dir_fd not in self.fds:
                self.relative += 1
                return None
            path = os.path.join(self.fds[dir_fd], path)
        if path[:1] != "/":  # os.path.isabs: the recorder runs only where paths are POSIX (cache_file)
            self.relative += 1  # the answer would depend on the working folder
            return None
        if path not in self.paths:
            self.paths[path] = self.now.full(path)
        if content:
            self.read.add(path)
        for piece in self.open:
            if not piece.get(path):
                piece[path] = content
        return path

    def wrap(self, name):
        real, note, content = _real[name], self.note, name in _READS

        def wrapped(path=".", *args, **kw):
            p = note(path, kw.get("dir_fd"), content)
            result = real(path, *args, **kw)
            if name == "open" and p is not None:
                self.fds[result] = p
            return result

        return wrapped

    def __enter__(self):
        for name in _OS:
            setattr(os, name, self.wrap(name))
        builtins.open = self.wrap("builtin_open")
        return self

    def __exit__(self, *exc):
        for name in _OS:
            setattr(os, name, _real[name])
        builtins.open = _real["builtin_open"]

    def record(self) -> Dict[str, list]:
        """path -> [full or not, its signature then]."""
        return {p: [p in self.read, _trim(sig, p in self.read)] for p, sig in self.paths.items()}


_OS = ("stat", "lstat", "listdir", "scandir", "readlink", "access", "open")


def _own_files() -> List[str]:
    """cudaswitch's source files loaded now: a changed or upgraded cudaswitch may discover differently."""
    return sorted(getattr(m, "__file__", None) or "" for n, m in list(sys.modules.items())
                  if (n == "cudaswitch" or n.startswith("cudaswitch.")) and getattr(m, "__file__", None))


def _package() -> str:
    return os.path.dirname(sys.modules["cudaswitch"].__file__)


def _fingerprint_extra(system) -> dict:
    return {"euid": os.geteuid(), "sites": system.pip_sites(),
            "machine": system.machine_place("/"), "root": None if system.root is None else str(system.root),
            "os": system.os}


def typed_as_path(incomplete: str) -> bool:
    """A selector being typed as a folder (the shell's own folder completion takes it over)."""
    return incomplete[:1] in ("/", ".", "~", "\\") or (len(incomplete) > 1 and incomplete[1] == ":")


def offered(system, incomplete: str, auto: bool = False) -> List[str]:
    """toolkits.selector_words for a TAB on a selector: every toolkit's words, kept between TABs."""
    every = words(system, _every_word, cache_file(system))
    return [w for w in dict.fromkeys((["auto"] if auto else []) + every) if w.startswith(incomplete)]


def _every_word(system) -> List[str]:
    from cudaswitch.discovery.toolkits import discover, selector_words

    return selector_words(discover(system), "")


def discover_keeping(system):
    """toolkits.discover(system) for a command (list, use, run...): always a whole pass that takes nothing from the
    record, since a command acts on what it finds; the pass is recorded and kept as the next TAB's, under the same
    rules as a TAB's own, so that the first TAB after a command (after `init --install`, after an upgrade of
    cudaswitch) is answered from it instead of by a whole pass of its own."""
    from cudaswitch.discovery.toolkits import discover, selector_words

    return words(system, discover, cache_file(system), fresh=True, keep=lambda found: selector_words(found, ""))


class _Now:
    """The signature of each path as it is now, taken once per TAB: the check of the kept record, the check of each
    kept piece and the recording of the new pass all compare against the same stat."""

    def __init__(self):
        self.sigs: Dict[str, list] = {}

    def full(self, path: str) -> list:
        sig = self.sigs.get(path)
        if sig is None:
            sig = self.sigs[path] = signature(path)
        return sig

    def same(self, path: str, full, sig) -> bool:
        return _trim(self.full(path), full) == sig


def _trim(sig, full: bool):
    return sig if full else [s and s[:5] for s in sig]


class _Pieces:
    """The pieces of the pass being recorded: those the last pass kept (by key: the variables it read, the paths it
    looked at as numbers into the record's paths, 2 * place + 1 where their content was read, and its result) and
    those of this one (paths by name, until _store numbers them)."""

    def __init__(self, old: dict, rec: _Recorder, env: _Environ, names: List[str], changed: set):
        self.old, self.new = old, {}
        self.rec, self.env, self.names, self.changed = rec, env, names, changed

    def still_true(self, piece) -> Optional[Dict[str, bool]]:
        """The piece's paths (name -> content read) when every one of them and every variable it read is as it was;
        else None."""
        names, changed = self.names, self.changed
        try:
            if "\0every" in piece["env"] or any(self.env.get(k) != v for k, v in piece["env"].items()):
                return None
            paths = {}
            for n in piece["paths"]:
                name = names[n >> 1] if type(n) is int and n >= 0 else None
                if name is None or name in changed:
                    return None
                paths[name] = bool(n & 1)
            return paths
        except (TypeError, ValueError, AttributeError, IndexError, KeyError):  # a record of another shape
            return None

    def reuse(self, key: str, piece, paths: Dict[str, bool]):
        """Takes a kept piece's inputs into this pass's record, as if the pass had read them again."""
        rec = self.rec
        for p, full in paths.items():
            if p not in rec.paths:
                rec.paths[p] = rec.now.full(p)
            if full:
                rec.read.add(p)
            for open_piece in rec.open:
                open_piece[p] = open_piece.get(p, False) or full
        for k, v in piece["env"].items():
            self.env.read.setdefault(k, v)
            for env in self.env.open:
                env.setdefault(k, v)
        self.new[key] = {"env": piece["env"], "paths": paths, "value": piece["value"]}

    def compute(self, key: str, compute, encode):
        # a piece that ran a program, looked at a relative path, read every variable or saw a racy file makes the
        # whole pass one that is not kept (words()), so none of its pieces is either
        rec, env = self.rec, self.env
        paths, read = {}, {}
        rec.open.append(paths)
        env.open.append(read)
        try:
            value = compute()
        finally:  # a stack: the piece computed inside this one has left it (by identity: two may compare equal)
            rec.open.pop()
            env.open.pop()
        self.new[key] = {"env": read, "paths": paths, "value": encode(value)}
        return value


def words(system, compute: Callable[[object], object], where: Optional[Path], fresh: bool = False,
          keep: Callable[[object], List[str]] = list):
    """compute(system), from the record at `where` while everything it looked at is as it was then; otherwise a
    fresh pass that reuses each piece() of the last one whose own inputs are unchanged. `fresh`: a whole pass that
    reads nothing kept. The record keeps keep(result) as the words."""
    if where is None or system.windows:
        return compute(system)
    environ = system.environ
    started = time.time_ns()
    now = _Now()
    kept = None if fresh else _load(where)
    changed = _changed(kept, environ, system, now) if kept is not None else None
    if changed is not None and not changed:
        return kept["words"]
    reusable = changed is not None and _same_cudaswitch(kept, system, now)
    old, names = (kept["pieces"], list(kept["paths"])) if reusable else ({}, [])
    env, ran, run = _Environ(environ), [], system.run
    # a shallow copy, as copy.copy makes of a plain instance (System has no __slots__ or __copy__), without importing
    # copy and weakref (about 3.7 million instructions of a TAB that computes)
    recording = object.__new__(type(system))
    recording.__dict__.update(system.__dict__)
    recording.environ = env
    recording.run = lambda *a, **kw: ran.append(a) or run(*a, **kw)
    with _Recorder(now) as rec:
        recorded = pieces.active = _Pieces(old, rec, env, names, changed or set())
        try:
            found = compute(recording)
        finally:
            pieces.active = None
    new = recorded.new
    if ran or rec.relative or "\0every" in env.read:
        return found
    paths = rec.record()
    if any(s is not None and max(s[6], s[7]) >= started - RACY_NS for full, sig in paths.values() if full
           for s in sig):
        return found
    own = _own_files()
    for f in own:
        paths.setdefault(f, [True, now.full(f)])
    place = {p: 2 * n for n, p in enumerate(paths)}
    kept_pieces = {k: dict(v, paths=[place[p] + full for p, full in v["paths"].items()]) for k, v in new.items()}
    _store(where, {"format": FORMAT, "env": env.read, "extra": _fingerprint_extra(system), "own": own,
                   "package": _package(), "paths": paths, "words": keep(found), "pieces": kept_pieces})
    return found


def _same_cudaswitch(kept: dict, system, now: _Now) -> bool:
    """The kept pieces were computed by this cudaswitch (the same folder, each source file the last pass had loaded
    unchanged: a file it did not load can matter only through one that changed), for this user and machine."""
    try:
        return (kept.get("extra") == _fingerprint_extra(system) and kept["package"] == _package()
                and all(now.same(f, True, kept["paths"][f][1]) for f in kept["own"]))
    except (TypeError, KeyError, IndexError):
        return False


def _changed(kept: dict, environ: Mapping[str, str], system, now: _Now) -> Optional[set]:
    """The kept paths that are not as recorded (every one is stat'ed: the pieces need them all), with "\0variables"
    when a variable the pass read differs (no whole answer then; each piece checks the variables it read); None
    where nothing kept can be used: another user or machine, a record of another shape."""
    if kept.get("extra") != _fingerprint_extra(system):
        return None
    try:
        changed = {p for p, (full, sig) in kept["paths"].items()
                   if type(full) is not bool or not now.same(p, full, sig)}
        if any(environ.get(k) != v for k, v in kept["env"].items()):
            changed.add("\0variables")
        return changed
    except (TypeError, ValueError, AttributeError):  # a record of another shape
        return None


def _own_folder(folder: Path) -> bool:
    """The cache folder is the user's own and nobody else may write it (a foreign folder could hold a link or a
    hard link to a file of the user's that says something else)."""
    try:
        st = _real["stat"](folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def _load(where: Path) -> Optional[dict]:
    """The kept record, or None: missing, not the user's own regular file in the user's own folder, writable by
    others, too large, or not of the shape _store writes."""
    from cudaswitch.core.trust import open_regular, parse_kept

    if not _own_folder(where.parent):
        return None
    try:
        with open_regular(where, nofollow=True) as fh:
            st = os.fstat(fh.fileno())
            if st.st_uid != os.geteuid() or st.st_mode & 0o022:
                return None
            data = fh.read(READ_LIMIT + 1)
    except OSError:
        return None
    if len(data) > READ_LIMIT:
        return None
    kept = parse_kept(data)
    return kept if _shaped(kept) else None


def _shaped(kept) -> bool:
    # only what is used without a comparison: a path's record or a variable of another shape compares unequal in
    # _changed, which is a fresh pass
    return (isinstance(kept, dict) and kept.get("format") == FORMAT and isinstance(kept.get("env"), dict)
            and isinstance(kept.get("paths"), dict) and isinstance(kept.get("words"), list)
            and all(isinstance(w, str) for w in kept["words"]) and isinstance(kept.get("pieces"), dict))


def _store(where: Path, record: dict) -> None:
    """Kept only in a cache folder of the user's own that nobody else may write, created only below a folder of the
    user's own (root run with another user's HOME creates nothing there) with no folder above it another user could
    change (the write door's own rule: root's HOME inside her folder is no place for root's file, and a command
    that keeps its pass must not be stopped for it); a failure keeps nothing."""
    from cudaswitch.core.trust import kept_bytes, make_dirs, write_file, write_problem

    existing = where.parent
    while not os.path.lexists(existing) and existing.parent != existing:
        existing = existing.parent
    if not _own_folder(existing) or write_problem(where) is not None:
        return
    try:
        make_dirs(where.parent, 0o700)
        if _own_folder(where.parent):
            # marshal (trust.kept_bytes), not JSON: importing json, then encoding and parsing the 120 KB record,
            # was about a tenth of a kept TAB's instructions and of a first TAB after a change (CONTRIBUTING, tab
            # completion). A value marshal cannot write (none that pieces.plain gives) keeps nothing, as a failed
            # write does.
            write_file(where, kept_bytes(record), mode=0o600, durable=False)
    except (OSError, ValueError):
        pass
