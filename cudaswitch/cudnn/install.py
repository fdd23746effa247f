"""Installing a cuDNN archive into a CUDA toolkit or a conda environment, all-or-nothing, and undoing it.

Transaction, one folder per install under the target (`<toolkit>/.cudaswitch/cudnn/<id>/`, or
`<env>/etc/cudaswitch/cudnn/<id>/`), on the same file system as the destination folders so that the last step is
renames:

1. `manifest.yaml` with `phase: staging` is written; the archive is streamed into `<id>/stage/` (hashed while
   written, fsynced). The toolkit's own folders are not touched. Any failure, refusal or a "no" at the prompt
   deletes the transaction folder. A run killed here is rolled back by the next command.
2. Commit point: the manifest is rewritten (atomically) with `phase: committing` and every operation: destination,
   sha256 or link target, and for each file that is replaced the backup path. From here a killed run is completed
   by the next command (roll forward); an exception in this process rolls the renames back.
3. For each file: the file it replaces is renamed into `<id>/backup/`, the staged file is renamed into place.
4. `phase: installed`. `uninstall-cudnn` sets `phase: uninstalling`, puts the backups back, removes the new files
   and the folders the install created, then deletes the transaction folder: byte-for-byte the tree from before.

Installs stack: a second install over the first backs up the first one's files, and is undone first.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from cudaswitch.cudnn.archive import Archive, ArchiveError, Entry, read_archive
from cudaswitch.core.errors import CudaswitchError, UsageError
from cudaswitch.core.fsutil import fsync_dir
from cudaswitch.core.system import System
from cudaswitch.core.versions import CudaVersion, cudnn_version_in

RECORD_TOOLKIT = (".cudaswitch", "cudnn")
RECORD_ENV = ("etc", "cudaswitch", "cudnn")
MANIFEST = "manifest.yaml"
SCHEMA = 1

# ---- fault injection (tests only) --------------------------------------------------------------------------------
# The tests make this process die or fail at named points: stage (before each staged file), staged, commit (before
# each rename pair), commit-mid (between a backup rename and the rename into place), committed, uninstall (before each
# restore). The hook is None in production and nothing a user sets (no environment variable, no file) turns it on:
# only code that imports this module and assigns FAULT_HOOK (tests/seams.py) does.

Fault = Callable[[str, int], None]
FAULT_HOOK: Optional[Fault] = None


def env_fault(point: str, n: int) -> None:
    if FAULT_HOOK is not None:
        FAULT_HOOK(point, n)


# ---- targets ---------------------------------------------------------------------------------------------------------

@dataclass
class Target:
    kind: str  # "toolkit" or "env"
    root: str  # displayed
    os: str
    label: str
    dirs: Dict[str, str]  # role -> displayed destination folder
    local_dirs: Dict[str, Path]
    record_base: Path  # local
    local_root: Path
    cuda: Optional[CudaVersion] = None
    selector: str = ""  # how to name it again for uninstall
    system: Optional[System] = field(default=None, repr=False)

    def display(self, p: Path) -> str:
        return self.system.display(p) if self.system else str(p)

    def arch(self) -> Optional[str]:
        """x86_64 or sbsa for a Linux toolkit with a targets/<arch>-linux folder; x86_64 on Windows; else None."""
        if self.os == "windows":
            return "x86_64"
        try:
            names = os.listdir(self.local_root / "targets")
        except OSError:
            return None
        arches = {{"x86_64-linux": "x86_64", "sbsa-linux": "sbsa", "aarch64-linux": "sbsa",
                   "ppc64le-linux": "ppc64le"}.get(n) for n in names} - {None}
        return arches.pop() if len(arches) == 1 else None

    def existing_cudnn(self) -> Optional[str]:
        return cudnn_version_in(self.local_dirs["include"])

    def to_json(self) -> dict:
        return {"kind": self.kind, "root": self.root, "os": self.os, "label": self.label, "dirs": self.dirs,
                "cuda": str(self.cuda) if self.cuda else None}


def toolkit_target(system: System, tk) -> Target:
    """Destination folders in a CUDA toolkit: `bin` (13.x: `bin\\x64`), `include`, `lib\\x64` on Windows, `lib64`
    on Linux (sources.csv S1, S3, S47, S70)."""
    from cudaswitch.discovery.toolkits import TOOLKIT

    if tk.kind != TOOLKIT:
        advice = {"pip-wheels": "install cuDNN with pip (pip install nvidia-cudnn-cu12) instead",
                  "conda": "use --into-env to install into the conda environment",
                  "debian": "install cuDNN with apt instead"}.get(tk.kind, "")
        raise UsageError(f"CUDA {tk.version} at {tk.root} is a {tk.kind} install, not a toolkit folder; {advice}")
    j = system.join
    if system.windows:
        bin_x64 = j(tk.root, "bin", "x64")
        bindir = bin_x64 if tk.cuda.major >= 13 else j(tk.root, "bin")
        dirs = {"bin": bindir, "include": j(tk.root, "include"), "lib": j(tk.root, "lib", "x64")}
    else:
        lib = j(tk.root, "lib64")
        if not system.local(lib).is_dir() and tk.lib_dirs:
            lib = tk.lib_dirs[0]
        dirs = {"bin": j(tk.root, "bin"), "include": tk.include_dir or j(tk.root, "include"), "lib": lib}
    local_root = system.local(tk.root)
    _check_inside(local_root, {k: system.local(v) for k, v in dirs.items()}, f"CUDA {tk.version} at {tk.root}",
                  system.display)
    return Target(kind="toolkit", root=tk.root, os=system.os, label=f"CUDA {tk.version} at {tk.root}", dirs=dirs,
                  local_dirs={k: system.local(v) for k, v in dirs.items()},
                  record_base=local_root.joinpath(*RECORD_TOOLKIT), local_root=local_root, cuda=tk.cuda,
                  selector=tk.root, system=system)


def env_target(system: System, env, cuda: Optional[CudaVersion]) -> Target:
    """A conda environment: Library\\bin, Library\\include, Library\\lib (Windows); lib, include (Linux)."""
    prefix = Path(env.prefix)
    if system.windows:
        lib = prefix / "Library"
        dirs = {"bin": lib / "bin", "include": lib / "include", "lib": lib / "lib"}
    else:
        dirs = {"bin": prefix / "bin", "include": prefix / "include", "lib": prefix / "lib"}
    _check_inside(prefix, dirs, f"conda environment {env.name} ({prefix})", str)
    return Target(kind="env", root=str(prefix), os=system.os, label=f"conda environment {env.name} ({prefix})",
                  dirs={k: str(v) for k, v in dirs.items()}, local_dirs=dirs,
                  record_base=prefix.joinpath(*RECORD_ENV), local_root=prefix, cuda=cuda,
                  selector=str(prefix), system=None)


def _inside(path: Path, root: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _check_inside(root: Path, dirs: Dict[str, Path], label: str, display) -> None:
    """Every destination folder, symlinks resolved, lies inside the resolved toolkit or environment: a `lib64`
    linking elsewhere would make the install write there while the output names lib64."""
    for role in ("bin", "include", "lib"):
        d = dirs[role]
        if not _inside(d, root):
            raise CudaswitchError(f"{display(d)} leads to {display(Path(os.path.realpath(d)))}, outside {label}; "
                                  f"cudaswitch installs only inside the toolkit or environment folder; fix that link "
                                  f"or install with --into-env; nothing was changed")


# ---- compatibility ---------------------------------------------------------------------------------------------------

def compatibility_problems(archive: Archive, target: Target) -> List[str]:
    """Reasons not to install; --force overrides them, except the OS."""
    problems: List[str] = []
    if archive.full_version and ".".join(archive.full_version.split(".")[:3]) != archive.version:
        problems.append(f"the archive name says cuDNN {archive.full_version} but {archive.header} says "
                        f"{archive.version}")
    if target.cuda is None:
        return problems
    if archive.cuda_major is None:
        problems.append(f"cannot tell which CUDA this cuDNN was built for: {archive.notes[0] if archive.notes else ''}")
    elif archive.cuda_major != target.cuda.major:
        problems.append(f"this cuDNN is built for CUDA {archive.cuda_tag} and {target.label} is CUDA "
                        f"{target.cuda.major}.x (cuDNN builds are per CUDA major; get the _cuda{target.cuda.major} "
                        f"archive)")
    elif archive.cuda_major < 11 and archive.cuda_minor is not None and archive.cuda_minor != target.cuda.minor:
        problems.append(f"this cuDNN is built for CUDA {archive.cuda_tag} and {target.label} is CUDA "
                        f"{target.cuda.short}; before CUDA 11 cuDNN was built per minor release")
    return problems


def os_problem(archive: Archive, target: Target) -> Optional[str]:
    """The archive cannot work there at all (no --force): another OS or another CPU architecture."""
    return _platform_problem(Path(archive.path).name, archive.os, archive.arch, target)


def _platform_problem(name: str, os_: str, arch: Optional[str], target: Target) -> Optional[str]:
    if os_ != target.os:
        what = {"linux": "a Linux tarball", "windows": "a Windows zip"}[os_]
        return (f"{name} is {what}; {target.label} is a {target.os.capitalize()} install: "
                f"download the cudnn-{target.os}-x86_64-..._cudaNN-archive for {target.os.capitalize()}")
    have = target.arch()
    arch = {"aarch64": "sbsa"}.get(arch or "", arch)
    if arch and have and arch != have:
        return (f"{name} is built for {arch} and {target.label} is an {have} toolkit: download the "
                f"cudnn-{target.os}-{have}-... archive")
    return None


# ---- permissions -----------------------------------------------------------------------------------------------------

def _nearest_existing(p: Path) -> Path:
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _read_only(p: Path) -> bool:
    try:
        return bool(os.statvfs(p).f_flag & getattr(os, "ST_RDONLY", 1))
    except (OSError, AttributeError):
        return False


def check_writable(target: Target, access: Callable[[str, int], bool] = os.access) -> None:
    """Every folder the install writes to must be writable before anything is staged."""
    places = [("", target.record_base)] + [(role, d) for role, d in target.local_dirs.items()]
    for role, d in places:
        where = _nearest_existing(d)
        if not access(str(where), os.W_OK | os.X_OK):
            shown = target.display(where)
            if _read_only(where):
                raise CudaswitchError(f"cannot write to {shown}: it is on a read-only file system; remount it "
                                      f"read-write, or install into a conda environment with --into-env; nothing "
                                      f"was changed")
            if target.kind == "env":
                advice = "fix the environment folder's permissions, or use an environment you own (-n/-p)"
            elif target.os == "windows":
                advice = ("run the command from an administrator prompt (right-click the terminal, 'Run as "
                          "administrator'), or install into a conda environment with --into-env")
            else:
                advice = "run it with sudo (sudo cudaswitch install-cudnn ...), or install into a conda environment " \
                         "with --into-env"
            raise CudaswitchError(f"cannot write to {shown} (permission denied): {advice}; nothing was changed")
    devs = set()
    base = _nearest_existing(target.record_base)
    for d in [base] + [_nearest_existing(x) for x in target.local_dirs.values()]:
        devs.add(os.stat(d).st_dev)
    if len(devs) > 1:
        raise CudaswitchError(f"the folders of {target.label} are on different file systems; cudaswitch needs "
                              f"them on one file system to install atomically; nothing was changed")


def check_trusted(target: Target) -> None:
    """The rule of docs/design/security.md: the toolkit or environment, every destination folder and every
    cudaswitch record in it must belong to the invoking user or root and be writable by nobody else; otherwise
    another user could have planted a journal, a link or a library that cudaswitch would act on."""
    from cudaswitch.core import trust

    if not trust.POSIX:
        return
    root = Path(os.path.realpath(target.local_root))
    places = [root] + [Path(os.path.realpath(d)) for d in target.local_dirs.values()]
    how = (f"run it as that user ({trust.owner_hint(root)} cudaswitch ...) or fix the permissions "
           f"(chown/chmod go-w)")
    trust.refuse_if_foreign(places, f"work on {target.label}", how)
    base = Path(os.path.realpath(target.record_base)) if os.path.lexists(target.record_base) else None
    if base is not None:
        trust.refuse_if_foreign([base], f"use the cudaswitch records of {target.label}", how, below=root)
        for dirpath, dirnames, filenames in os.walk(base):
            for n in dirnames + filenames:
                p = Path(dirpath, n)
                st = os.lstat(p)
                why = trust.stat_problem(st) if not os.path.islink(p) else (
                    None if st.st_uid in (0, trust.euid()) else f"belongs to {trust.user_name(st.st_uid)}")
                if why:
                    raise CudaswitchError(f"refused to use the cudaswitch records of {target.label}: {p} {why}, and "
                                          f"cudaswitch runs as {trust.user_name(trust.euid())}: a journal another "
                                          f"user could have written is never acted on; {how}; nothing was changed")


# ---- the transaction record -----------------------------------------------------------------------------------------

def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(1 << 20)
            if not chunk:
                break
            h.update(chunk)
    return h.hexdigest()


def _paths(data: dict, conv: Callable[[str], str]) -> dict:
    """The manifest with every path converted (stored relative to the target's root, used absolute)."""
    out = dict(data)
    for key in ("created", "record_created"):
        if isinstance(out.get(key), list):
            out[key] = [conv(p) for p in out[key]]
    if isinstance(out.get("ops"), list):
        out["ops"] = [dict(op, dest=conv(op["dest"])) if isinstance(op, dict) and "dest" in op else op
                      for op in out["ops"]]
    return out


def _write_manifest(txdir: Path, data: dict, root: Path) -> None:
    """Paths are stored relative to the toolkit / environment root, so a moved folder keeps a valid manifest (and
    for a human to read: destinations are recomputed from role and name when it is read back)."""
    from cudaswitch.core.fsutil import dump_yaml

    dump_yaml(txdir / MANIFEST, _paths(data, lambda p: Path(os.path.relpath(p, root)).as_posix()))


ROLES = ("bin", "include", "lib")
KINDS = ("file", "symlink")
ACTIONS = ("new", "overwrite", "identical")


def _single_name(name) -> bool:
    return (isinstance(name, str) and name not in ("", ".", "..") and not any(c in name for c in "/\\\0")
            and not (len(name) > 1 and name[1] == ":"))


def _read_manifest(txdir: Path, target: Target) -> Optional[dict]:
    """The manifest with every destination recomputed from the target's own folders and a one-component name; the
    paths stored in it are never used. Anything a cudaswitch did not write there (another role or kind, a path in
    a name, a folder outside the known ones) makes the whole record refused, never partly acted on."""
    from cudaswitch.core.fsutil import load_yaml

    shown = target.display(txdir / MANIFEST)
    try:
        data = load_yaml(txdir / MANIFEST)
    except Exception as exc:  # ruamel's errors
        why = " ".join(str(exc).split())
        raise CudaswitchError(f"{shown}: unreadable cudaswitch manifest ({why}); move that folder "
                              f"away and check the toolkit by hand") from None
    if not isinstance(data, dict):
        return None

    def bad(what: str) -> CudaswitchError:
        return CudaswitchError(f"{shown}: not a manifest cudaswitch wrote ({what}); it is not acted on: move "
                               f"{target.display(txdir)} away and check {target.label} by hand")

    out = dict(data)
    ops = data.get("ops")
    if ops is not None:
        if not isinstance(ops, list):
            raise bad("ops is not a list")
        checked = []
        for op in ops:
            if not isinstance(op, dict):
                raise bad("an operation is not a mapping")
            role, kind, name, action = op.get("role"), op.get("kind"), op.get("name"), op.get("action")
            if role not in ROLES or kind not in KINDS or action not in ACTIONS or not _single_name(name):
                raise bad(f"operation role={role!r} kind={kind!r} action={action!r} name={name!r}")
            for key in ("sha256", "old_sha256", "link", "old_link"):
                if op.get(key) is not None and not isinstance(op.get(key), str):
                    raise bad(f"{key} of {name} is not text")
            if kind == "file" and not isinstance(op.get("sha256"), str):
                raise bad(f"{name} has no sha256")
            if kind == "symlink" and not _single_name(op.get("link")):
                raise bad(f"symlink {name} -> {op.get('link')!r}")
            checked.append(dict(op, dest=str(target.local_dirs[role] / name)))
        out["ops"] = checked
    root = target.local_root
    may_create = {os.path.normpath(p) for d in target.local_dirs.values() for p in _chain(d, root)}
    may_record = {os.path.normpath(p) for p in _chain(target.record_base, root)}
    for key, allowed in (("created", may_create), ("record_created", may_record)):
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
            raise bad(f"{key} is not a list of folders")
        full = [os.path.normpath(str(root / p)) for p in value]
        for p in full:
            if p not in allowed:
                raise bad(f"{key} names {p}, not a folder cudaswitch creates")
        out[key] = full
    return out


def _chain(d: Path, root: Path) -> List[str]:
    """`d` and its parents below `root`: the only folders an install may create."""
    out, p = [], Path(d)
    while p != root and p != p.parent and root in p.parents:
        out.append(str(p))
        p = p.parent
    return out


def _records(base: Path) -> List[Path]:
    try:
        return sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


def _created_parents(base: Path, stop: Path) -> List[str]:
    """Folders between `stop` and `base` (inclusive) that do not exist yet, outermost first."""
    out: List[Path] = []
    p = base
    while p != stop and p != p.parent and not p.exists():
        out.append(p)
        p = p.parent
    return [str(x) for x in reversed(out)]


def _remove_empty(dirs: List[str]) -> None:
    for d in reversed(dirs):
        try:
            os.rmdir(d)
        except OSError:
            pass


@dataclass
class Op:
    dest: str  # local path
    role: str
    name: str
    kind: str  # "file" or "symlink"
    action: str  # "new", "overwrite", "identical"
    sha256: Optional[str] = None
    link: Optional[str] = None
    old_sha256: Optional[str] = None
    old_link: Optional[str] = None
    size: int = 0

    def to_yaml(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if v is not None}
        return d

    @classmethod
    def from_yaml(cls, d: dict) -> "Op":
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__ if k in d})


def _describe(path: Path) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """(kind, sha256, link) of what is at `path` now, without following a final symlink."""
    if os.path.islink(path):
        return "symlink", None, os.readlink(path)
    if path.is_dir():
        return "dir", None, None
    if path.exists():
        return "file", _sha256(path), None
    return None, None, None


def _matches(path: Path, op: Op) -> bool:
    kind, sha, link = _describe(path)
    return kind == op.kind and (sha == op.sha256 if op.kind == "file" else link == op.link)


# ---- install ---------------------------------------------------------------------------------------------------------

@dataclass
class Prepared:
    archive: Archive
    target: Target
    txdir: Path
    ops: List[Op]
    created: List[str]  # folders the commit creates (local), outermost first
    record_created: List[str]  # record folders this transaction created
    existing: Optional[str]
    problems: List[str]  # overridden with --force
    dry_run: bool = False
    warnings: List[str] = field(default_factory=list)

    @property
    def counts(self) -> Dict[str, int]:
        c = {"new": 0, "overwrite": 0, "identical": 0}
        for op in self.ops:
            c[op.action] += 1
        return c

    @property
    def replaces_other_version(self) -> bool:
        return bool(self.existing) and self.existing != self.archive.version


def _txid(base: Path) -> str:
    seq = 0
    for p in _records(base):
        head = p.name.split("-")[0]
        if head.isdigit():
            seq = max(seq, int(head))
    return f"{seq + 1:04d}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}"


def plan_ops(archive: Archive, target: Target) -> Tuple[List[Op], List[str]]:
    """One operation per file or link of the archive (new / overwrite / identical), and the destination folders
    that do not exist yet (only those the archive needs: a Linux tarball creates no bin folder)."""
    ops: List[Op] = []
    created: List[str] = []
    for role in sorted({e.role for e in archive.installable}):
        d = target.local_dirs[role]
        for parent in _created_parents(d, target.local_root):
            if parent not in created:
                created.append(parent)
    # files before symlinks, so that a link never points at a file that is not there yet
    for e in sorted(archive.installable, key=lambda e: (e.kind == "symlink", e.role, e.name)):
        dest = target.local_dirs[e.role] / e.name
        kind, sha, link = _describe(dest)
        if kind == "dir":
            raise CudaswitchError(f"{target.display(dest)} is a folder; the archive has a file of that name; "
                                  f"nothing was changed")
        if kind is None:
            action = "new"
        elif kind == e.kind and ((e.kind == "file" and sha == e.sha256) or (e.kind == "symlink" and link == e.link)):
            action = "identical"
        else:
            action = "overwrite"
        ops.append(Op(dest=str(dest), role=e.role, name=e.name, kind=e.kind, action=action,
                      sha256=e.sha256 if e.kind == "file" else None, link=e.link, old_sha256=sha, old_link=link,
                      size=e.size))
    names = [op.dest for op in ops]
    if len(set(n.lower() for n in names)) != len(names) and target.os == "windows":
        raise ArchiveError(f"{Path(archive.path).name}: two files differ only in case; Windows cannot hold both")
    return ops, created


def _stage_path(txdir: Path, op_or_entry) -> Path:
    return txdir / "stage" / op_or_entry.role / op_or_entry.name


def _backup_path(txdir: Path, op: Op) -> Path:
    return txdir / "backup" / op.role / op.name


def early_check(archive_path: Path, target: Target, force: bool) -> None:
    """What the archive's name already says, checked before a byte is read or written: OS and CUDA major."""
    from cudaswitch.cudnn.archive import peek_name

    info = peek_name(archive_path)
    if not info:
        return
    problem = _platform_problem(Path(archive_path).name, info["os"], info.get("arch"), target)
    if problem:
        raise ArchiveError(problem + "; nothing was changed")
    if target.cuda is not None and info["cuda_major"] != target.cuda.major and not force:
        tag = f"{info['cuda_major']}" + (f".{info['cuda_minor']}" if info["cuda_minor"] is not None else "")
        raise ArchiveError(f"refused: this cuDNN is built for CUDA {tag} and {target.label} is CUDA "
                           f"{target.cuda.major}.x (cuDNN builds are per CUDA major; get the _cuda{target.cuda.major} "
                           f"archive); --force installs it anyway; nothing was changed")


def refuse_incompatible(archive, target: Target, force: bool) -> List[str]:
    """A Linux archive for a Windows toolkit is always refused; a CUDA-major or version mismatch unless --force,
    which returns the problems so the caller can say it overrode them."""
    problem = os_problem(archive, target)
    if problem:
        raise ArchiveError(problem)
    problems = compatibility_problems(archive, target)
    if problems and not force:
        raise ArchiveError("refused: " + "; ".join(problems) + "; --force installs it anyway")
    return problems


def scan(archive_path: Path, target: Target, force: bool = False, progress=None, fh=None) -> Prepared:
    """The plan without writing anything: every member is read and hashed (for --dry-run). Refuses what an
    install would refuse."""
    early_check(archive_path, target, force)
    check_trusted(target)
    archive = read_archive(archive_path, progress=progress, fh=fh)
    problems = refuse_incompatible(archive, target, force)
    ops, created = plan_ops(archive, target)
    prep = Prepared(archive, target, Path(), ops, created, [], target.existing_cudnn(), problems, dry_run=True)
    prep.warnings = _leftover_warnings(prep)
    return prep


def prepare(archive_path: Path, target: Target, force: bool = False, progress=None,
            fault: Fault = env_fault, fh=None) -> Prepared:
    """Stage the archive inside the transaction folder; the toolkit is not touched. Raises (after removing the
    transaction folder) when the archive is refused."""
    early_check(archive_path, target, force)
    check_writable(target)
    record_created = _created_parents(target.record_base, target.local_root)
    try:
        target.record_base.mkdir(parents=True, exist_ok=True)
        txdir = target.record_base / _txid(target.record_base)
        txdir.mkdir()
    except OSError as exc:
        _remove_empty(record_created)
        raise _explain(exc, target, "preparing to install into") from None
    try:
        _write_manifest(txdir, {"schema": SCHEMA, "phase": "staging", "archive": str(archive_path),
                                "target": target.to_json(), "record_created": record_created,
                                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, target.local_root)
        fsync_dir(txdir.parent)
        count = [0]

        from cudaswitch.cudnn.archive import declared_size

        total = declared_size(archive_path, fh)
        if total is not None:
            check_space(txdir, total, target)

        def write(entry: Entry):
            count[0] += 1
            fault("stage", count[0])
            p = _stage_path(txdir, entry)
            p.parent.mkdir(parents=True, exist_ok=True)
            check_space(p.parent, entry.size, target)
            return _SyncedFile(p, entry.mode)

        archive = read_archive(archive_path, write=write, progress=progress, fh=fh)
        problems = refuse_incompatible(archive, target, force)
        for e in archive.installable:
            if e.kind == "symlink":
                p = _stage_path(txdir, e)
                p.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(e.link, p)
        for sub in ("bin", "include", "lib"):
            if (txdir / "stage" / sub).is_dir():
                fsync_dir(txdir / "stage" / sub)
        ops, created = plan_ops(archive, target)
        fault("staged", 1)
        prep = Prepared(archive, target, txdir, ops, created, record_created, target.existing_cudnn(), problems)
        prep.warnings = _leftover_warnings(prep)
        return prep
    except BaseException as exc:
        _discard(txdir, record_created)
        raise _explain(exc, target, "unpacking into") from None


SPACE_MARGIN = 1 << 20  # what the manifest, folders and backups' metadata take besides the files themselves


def check_space(folder: Path, size: int, target: Target) -> None:
    """Refuse before writing `size` more bytes where they would not fit in the space ordinary users may use: as root,
    writes would otherwise go on into the blocks the file system reserves for root, until / itself is full."""
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):
        return  # Windows: ENOSPC from the write is reported instead
    free = st.f_bavail * st.f_frsize
    if size + SPACE_MARGIN > free:
        raise CudaswitchError(f"not enough free space for {target.label} on {target.display(folder)}: "
                              f"{_mib(size)} more would be needed and {_mib(free)} are free (the blocks reserved for "
                              f"root are not used); installing would leave the disk full: free some space and run "
                              f"the command again; nothing was changed")


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def _leftover_warnings(prep: Prepared) -> List[str]:
    """Files of another cuDNN in the destination folders that this archive does not replace."""
    new_names = {op.name.lower() for op in prep.ops}
    left: List[str] = []
    for role in ("bin", "lib"):
        d = prep.target.local_dirs[role]
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for n in names:
            low = n.lower()
            if (low.startswith("cudnn") or low.startswith("libcudnn")) and low not in new_names:
                left.append(n)
    out: List[str] = []
    a = prep.archive
    major, minor = (int(x) for x in a.version.split(".")[:2])
    if a.os == "windows" and major == 8 and minor >= 3:
        # cuDNN 8.3-8.9 on Windows loads zlibwapi.dll (sources.csv S58, S70), which the archive does not carry
        bindir = prep.target.local_dirs["bin"]
        if not (bindir / "zlibwapi.dll").exists() and "zlibwapi.dll" not in new_names:
            out.append(f"cuDNN {a.version} on Windows needs zlibwapi.dll on the loader path (it is not in "
                       f"{prep.target.dirs['bin']}); without it cudnn64_8.dll fails to load")
    if left:
        shown = ", ".join(left[:6]) + (f" and {len(left) - 6} more" if len(left) > 6 else "")
        out.append(f"{len(left)} file(s) of another cuDNN stay in place, not replaced by this archive: {shown}")
    return out


class _SyncedFile:
    def __init__(self, path: Path, mode: int):
        self.path = path
        self.fh = open(path, "xb")
        self.mode = mode

    def write(self, data: bytes) -> None:
        self.fh.write(data)

    def close(self) -> None:
        if self.fh.closed:
            return
        self.fh.flush()
        os.fsync(self.fh.fileno())
        if hasattr(os, "fchmod"):
            os.fchmod(self.fh.fileno(), self.mode)
        self.fh.close()


def _discard(txdir: Path, record_created: List[str]) -> None:
    """Remove a transaction that never reached its commit point; the manifest goes last."""
    try:
        for sub in ("stage", "backup"):
            shutil.rmtree(txdir / sub, ignore_errors=True)
        try:
            (txdir / MANIFEST).unlink()
        except FileNotFoundError:
            pass
        shutil.rmtree(txdir, ignore_errors=True)
        fsync_dir(txdir.parent)
    finally:
        _remove_empty(record_created)


def _explain(exc: BaseException, target: Target, doing: str) -> BaseException:
    if isinstance(exc, (CudaswitchError, KeyboardInterrupt, SystemExit)):
        return exc
    if isinstance(exc, OSError):
        where = f" ({target.display(Path(exc.filename))})" if exc.filename else ""
        if exc.errno == errno.ENOSPC:
            return CudaswitchError(f"disk full while {doing} {target.label}{where}: free some space and run the "
                                   f"command again; nothing was changed")
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            hint = ("; on Windows a running program that loaded cuDNN (Python, Jupyter, an IDE) keeps its DLLs "
                    "locked: close it and run the command again") if target.os == "windows" else ""
            return CudaswitchError(f"permission denied while {doing} {target.label}{where}{hint}; nothing was "
                                   f"changed")
        return CudaswitchError(f"{exc.strerror or exc} while {doing} {target.label}{where}; nothing was "
                               f"changed")
    return exc


def abort(prep: Prepared) -> None:
    if not prep.dry_run:
        _discard(prep.txdir, prep.record_created)


def commit(prep: Prepared, fault: Fault = env_fault) -> Path:
    """Rename the staged files into place. Returns the manifest path."""
    txdir = prep.txdir
    manifest = {"schema": SCHEMA, "phase": "committing", "archive": prep.archive.to_json(),
                "target": prep.target.to_json(), "previous_cudnn": prep.existing,
                "created": prep.created, "record_created": prep.record_created,
                "forced": prep.problems, "ops": [op.to_yaml() for op in prep.ops],
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        (txdir / "backup").mkdir(exist_ok=True)
        for role in ("bin", "include", "lib"):
            (txdir / "backup" / role).mkdir(exist_ok=True)
        _write_manifest(txdir, manifest, prep.target.local_root)  # the commit point
    except BaseException as exc:
        _discard(txdir, prep.record_created)
        raise _explain(exc, prep.target, "installing into") from None
    done = 0
    try:
        for d in prep.created:
            os.makedirs(d, exist_ok=True)
        k = 0
        for i, op in enumerate(prep.ops, 1):
            if op.action == "identical":
                continue
            k += 1
            fault("commit", k)
            dest = Path(op.dest)
            if op.action == "overwrite":
                os.replace(dest, _backup_path(txdir, op))
                fault("commit-mid", k)
            os.replace(_stage_path(txdir, op), dest)
            done = i
        for d in {str(Path(op.dest).parent) for op in prep.ops}:
            fsync_dir(d)
        fault("committed", 1)
    except BaseException as exc:
        try:
            _rollback(prep, done)
        except BaseException:
            raise CudaswitchError(f"installing into {prep.target.label} failed ({_why(exc)}) and could not be "
                                  f"rolled back; run the command again to complete it from the journal "
                                  f"{txdir / MANIFEST}") from None
        raise _explain(exc, prep.target, "installing into") from None
    manifest["phase"] = "installed"
    try:
        _write_manifest(txdir, manifest, prep.target.local_root)
    except OSError as exc:
        raise CudaswitchError(f"cuDNN is installed in {prep.target.label} but its manifest could not be marked "
                              f"complete ({_why(exc)}); the next install-cudnn or uninstall-cudnn finishes that from "
                              f"the journal {prep.target.display(txdir / MANIFEST)}") from None
    shutil.rmtree(txdir / "stage", ignore_errors=True)
    return txdir / MANIFEST


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc) or type(exc).__name__


def _rollback(prep: Prepared, done: int) -> None:
    """Undo the renames of a commit that failed in this process; then drop the transaction."""
    txdir = prep.txdir
    for i, op in reversed(list(enumerate(prep.ops, 1))):
        if op.action == "identical":
            continue
        dest, staged, backup = Path(op.dest), _stage_path(txdir, op), _backup_path(txdir, op)
        if not os.path.lexists(staged) and os.path.lexists(dest) and i <= done:
            os.replace(dest, staged)
        if op.action == "overwrite" and os.path.lexists(backup):
            os.replace(backup, dest)
    _remove_empty(prep.created)
    _discard(txdir, prep.record_created)


# ---- recovery --------------------------------------------------------------------------------------------------------

def recover(target: Target) -> List[Tuple[str, str]]:
    """Finish or undo whatever a killed run left in the target's records. Returns (what, one line) for each:
    what is "rolled-back", "installed" or "uninstalled"."""
    done: List[Tuple[str, str]] = []
    root, display = target.local_root, target.display
    for txdir in _records(target.record_base):
        data = _read_manifest(txdir, target)
        phase = (data or {}).get("phase")
        if phase in (None, "staging"):
            _discard(txdir, (data or {}).get("record_created") or [])
            done.append(("rolled-back", f"rolled back an interrupted cuDNN install ({display(txdir)}); nothing had been changed"))
        elif phase == "committing":
            _roll_forward_install(txdir, data, root)
            done.append(("installed", f"completed an interrupted cuDNN install from its journal "
                                      f"({display(txdir / MANIFEST)})"))
        elif phase == "uninstalling":
            _roll_forward_uninstall(txdir, data, root)
            done.append(("uninstalled", f"completed an interrupted cuDNN uninstall from its journal ({display(txdir)})"))
    return done


def _roll_forward_install(txdir: Path, data: dict, root: Path) -> None:
    for d in data.get("created") or []:
        os.makedirs(d, exist_ok=True)
    for raw in data.get("ops") or []:
        op = Op.from_yaml(raw)
        if op.action == "identical":
            continue
        dest, staged, backup = Path(op.dest), _stage_path(txdir, op), _backup_path(txdir, op)
        if not os.path.lexists(staged):
            continue  # already in place
        if op.action == "overwrite" and not os.path.lexists(backup) and os.path.lexists(dest):
            os.replace(dest, backup)
        os.replace(staged, dest)
    for d in {str(Path(Op.from_yaml(r).dest).parent) for r in data.get("ops") or []}:
        fsync_dir(d)
    data["phase"] = "installed"
    _write_manifest(txdir, data, root)
    shutil.rmtree(txdir / "stage", ignore_errors=True)


def _roll_forward_uninstall(txdir: Path, data: dict, root: Path, fault: Fault = env_fault,
                            checked: bool = False) -> None:
    """Put backups back and remove the installed files. `checked`: the caller has just verified that every
    installed file is unchanged (or moved the changed ones aside), so they are not hashed a second time."""
    ops = [Op.from_yaml(r) for r in data.get("ops") or []]
    k = 0
    for op in reversed(ops):
        if op.action == "identical":
            continue
        k += 1
        fault("uninstall", k)
        dest, backup = Path(op.dest), _backup_path(txdir, op)
        if op.action == "overwrite":
            if os.path.lexists(backup):
                os.replace(backup, dest)
        elif os.path.lexists(dest) and (checked or _matches(dest, op)):
            os.unlink(dest)
    for d in {str(Path(op.dest).parent) for op in ops}:
        fsync_dir(d)
    _remove_empty(data.get("created") or [])
    try:
        (txdir / MANIFEST).unlink()
    except FileNotFoundError:
        pass
    shutil.rmtree(txdir, ignore_errors=True)
    _remove_empty(data.get("record_created") or [])


# ---- uninstall -------------------------------------------------------------------------------------------------------

@dataclass
class Uninstalled:
    version: Optional[str]
    restored: int
    removed: int
    previous: Optional[str]
    kept: List[str]
    manifest: str

    def to_json(self) -> dict:
        return dict(self.__dict__)


def installed_records(target: Target) -> List[Tuple[Path, dict]]:
    out = []
    for txdir in _records(target.record_base):
        data = _read_manifest(txdir, target)
        if data and data.get("phase") == "installed":
            out.append((txdir, data))
    return out


def uninstall(target: Target, force: bool = False, fault: Fault = env_fault) -> Uninstalled:
    """Undo the latest install into `target`: backups back, new files removed, created folders removed."""
    recs = installed_records(target)
    if not recs:
        raise CudaswitchError(f"no cuDNN installed by cudaswitch in {target.label} (no manifest under "
                              f"{target.display(target.record_base)}); nothing to undo")
    txdir, data = recs[-1]
    check_trusted(target)
    check_writable(target)
    ops = [Op.from_yaml(r) for r in data.get("ops") or []]
    changed = []
    for op in ops:
        if op.action == "identical":
            continue
        if not _matches(Path(op.dest), op):
            changed.append(op)
    kept: List[str] = []
    if changed:
        names = ", ".join(target.display(Path(op.dest)) for op in changed[:5])
        if not force:
            raise CudaswitchError(f"{len(changed)} installed file(s) changed since the install ({names}); "
                                  f"--force undoes it anyway and keeps each changed file as "
                                  f"<name>.cudaswitch-changed; nothing was changed")
        for op in changed:
            dest = Path(op.dest)
            if os.path.lexists(dest):
                keep = dest.with_name(dest.name + ".cudaswitch-changed")
                os.replace(dest, keep)
                kept.append(target.display(keep))
    data["phase"] = "uninstalling"
    try:
        _write_manifest(txdir, data, target.local_root)
    except OSError as exc:
        raise _explain(exc, target, "uninstalling from") from None
    try:
        _roll_forward_uninstall(txdir, data, target.local_root, fault, checked=True)
    except OSError as exc:
        raise CudaswitchError(f"uninstalling from {target.label} stopped half-way ({_why(exc)}); fix that and run "
                              f"uninstall-cudnn again: it finishes from the journal "
                              f"{target.display(txdir / MANIFEST)}") from None
    arch = data.get("archive") or {}
    return Uninstalled(version=arch.get("full_version") or arch.get("version"),
                       restored=sum(1 for op in ops if op.action == "overwrite"),
                       removed=sum(1 for op in ops if op.action == "new"), previous=data.get("previous_cudnn"),
                       kept=kept, manifest=target.display(txdir / MANIFEST))


# ---- verification ----------------------------------------------------------------------------------------------------

_LOAD = ("import ctypes, sys\n"
         "lib = ctypes.CDLL(sys.argv[1])\n"
         "lib.cudnnGetVersion.restype = ctypes.c_size_t\n"
         "print(lib.cudnnGetVersion())\n")


def expected_number(version: str) -> int:
    """CUDNN_VERSION as cudnnGetVersion() returns it (*10000 from 9.0, *1000 before: sources.csv S75, S77)."""
    major, minor, patch = (int(x) for x in (version.split(".") + ["0", "0"])[:3])
    return major * (10000 if major >= 9 else 1000) + minor * 100 + patch


_LOAD_WINDOWS = ("import ctypes, os, sys\n"
                 "os.add_dll_directory(sys.argv[2])\n"
                 "lib = ctypes.CDLL(sys.argv[1])\n"
                 "lib.cudnnGetVersion.restype = ctypes.c_size_t\n"
                 "print(lib.cudnnGetVersion())\n")


def host_os() -> str:
    return "windows" if sys.platform == "win32" else ("linux" if sys.platform.startswith("linux") else sys.platform)


def windows_load_check(dll: Path, bindir: Path, environ: Dict[str, str]) -> Tuple[List[str], Dict[str, str]]:
    """Command and environment of the Windows load check. cudnn64_9.dll (and cudnn64_8.dll) import only KERNEL32
    and load their sub-libraries (cudnn_graph64_9.dll, cudnn_ops_infer64_8.dll) later with a bare-name
    LoadLibrary, which searches PATH but not the folders os.add_dll_directory adds; so the child gets the DLL folder
    first on PATH, as the user's activated environment has it. os.add_dll_directory still covers the main DLL's
    own imports (docs/design/windows-cudnn.md)."""
    env = dict(environ)
    key = next((k for k in env if k.upper() == "PATH"), "PATH")
    env[key] = str(bindir) + (";" + env[key] if env.get(key) else "")
    return [sys.executable, "-I", "-c", _LOAD_WINDOWS, str(dll), str(bindir)], env


def verify(prep: Prepared, system: System) -> dict:
    """Read the installed header back, then load the installed main library in a subprocess (it can abort the
    process when a sub-library is missing) and call cudnnGetVersion(): on Linux with the library folder on
    LD_LIBRARY_PATH (libcudnn.so.9 loads libcudnn_graph.so.9 by name), on Windows with the DLL folder first on PATH
    (see windows_load_check). Where the target's OS is not the host's, only the header is checked: `checked` says
    "header only" and `ok` stays false, since nothing proved the library loads. The check runs isolated (-I):
    nothing from the caller's working folder, PYTHONPATH or user site is imported (as root, a ctypes.py in the
    folder sudo was run from would run as root)."""
    target = prep.target
    major = prep.archive.cudnn_major
    result: dict = {"header": target.existing_cudnn(), "expected": prep.archive.version, "library": None,
                    "library_error": None, "checked": "header only", "ok": False}
    header_ok = result["header"] == prep.archive.version
    host = host_os()
    if target.os != host:
        result["library_error"] = f"not loaded (a {target.os.capitalize()} library cannot be loaded on {host})"
        return result
    result["checked"] = "header and library"
    env = dict(os.environ)
    if target.os == "windows":
        bindir = target.local_dirs["bin"]
        args, env = windows_load_check(bindir / f"cudnn64_{major}.dll", bindir, env)
    else:
        libdir = target.local_dirs["lib"]
        env["LD_LIBRARY_PATH"] = str(libdir) + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        args = [sys.executable, "-I", "-c", _LOAD, str(libdir / f"libcudnn.so.{major}")]
    try:
        proc = system.run(args, timeout=120, env=env)
    except Exception as exc:  # timeouts, OSError
        result["library_error"] = f"could not run the load check ({type(exc).__name__}: {exc})"
        return result
    out = (proc.stdout or "").strip().splitlines()
    if proc.returncode == 0 and out and out[-1].isdigit():
        result["library"] = int(out[-1])
        result["ok"] = header_ok and result["library"] == expected_number(prep.archive.version)
    else:
        lines = [x.strip() for x in ((proc.stderr or "") + "\n" + (proc.stdout or "")).splitlines() if x.strip()]
        # cuDNN names the sub-library it could not find before the generic last line ("Invalid handle...")
        why = next((x for x in lines if "could not locate" in x.lower()), lines[-1] if lines else None)
        result["library_error"] = f"load failed: {why[-300:]}" if why else f"exit status {proc.returncode}"
    return result


# ---- one cudaswitch at a time per target -----------------------------------------------------------------------------

LOCK_WAIT = 10.0  # seconds: another cudaswitch finishing its commit takes well under that


class locked:
    """Exclusive lock on the target's root folder (flock on the folder itself, so no lock file is left behind) for
    the whole install / uninstall, recovery included: a second cudaswitch on the same toolkit is refused instead of
    taking the first one's transaction for an interrupted one. Any user who can open the folder can take that lock,
    so it is waited for `wait` seconds at most, and the refusal names the process holding it. A no-op where flock
    does not exist (Windows)."""

    def __init__(self, target: Target, wait: Optional[float] = None):
        self.target = target
        self.wait = LOCK_WAIT if wait is None else wait
        self.fd: Optional[int] = None

    def __enter__(self) -> "locked":
        try:
            import fcntl
        except ImportError:
            return self
        try:
            self.fd = os.open(str(self.target.local_root), os.O_RDONLY)
        except OSError:
            return self  # a missing root is reported by what follows
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except OSError:
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.2)
        holder = lock_holder(self.fd)
        os.close(self.fd)
        self.fd = None
        raise CudaswitchError(f"{self.target.label} is locked by {holder or 'another process'} (waited "
                              f"{self.wait:g} s); if that is another cudaswitch, let it finish; if not, that process "
                              f"blocks installs: end it or ask its owner; nothing was changed") from None

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)  # releases the lock
            self.fd = None


def lock_holder(fd: int) -> Optional[str]:
    """'process 1234 (flock, user alice (uid 1000))' holding a flock on the file `fd` is open on, from /proc/locks
    (Linux); None where that cannot be told."""
    from cudaswitch.core import trust

    st = os.fstat(fd)
    want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    for line in lines:
        f = line.split()
        if len(f) < 6 or f[1] != "FLOCK" or "->" in f:
            continue
        try:
            maj, mnr, ino = f[5].split(":")
            if (int(maj, 16), int(mnr, 16), int(ino)) != want:
                continue
            pid = int(f[4])
        except ValueError:
            continue
        if pid == os.getpid():
            continue
        what = f"process {pid}"
        try:
            with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as fh:
                comm = fh.read().strip()
            what += f" ({comm}, user {trust.user_name(os.stat(f'/proc/{pid}').st_uid)})"
        except OSError:
            pass
        return what
    return None


# ---- choosing the target ---------------------------------------------------------------------------------------------

def _env_state(system: System):
    from cudaswitch.discovery.environment import read_state, resolve_env

    if not system.environ.get("CONDA_PREFIX"):
        return None, None
    try:
        env = resolve_env(system)
    except CudaswitchError:
        return None, None
    return env, read_state(env)


def _toolkit_by_root(system: System, found, root: str):
    from cudaswitch.discovery.toolkits import select

    return select(found, root, system)


def resolve_target(system: System, archive_path: Optional[Path], cuda: Optional[str] = None, into_env: bool = False,
                   name: Optional[str] = None, prefix: Optional[str] = None, uninstalling: bool = False,
                   found=None) -> Tuple[Target, str]:
    """(target, why it was chosen): --cuda; --into-env; the toolkit the active environment uses
    (`cudaswitch use`); the single toolkit matching the archive's CUDA major; else an error listing candidates."""
    from cudaswitch.cudnn.archive import peek_name
    from cudaswitch.discovery.environment import read_state, resolve_env
    from cudaswitch.discovery.toolkits import TOOLKIT, discover, select
    from cudaswitch.core.versions import parse_dotted

    command = "uninstall-cudnn --into-env" if uninstalling else "install-cudnn ARCHIVE --into-env"
    if (name or prefix) and not into_env:
        into_env = True
    if into_env:
        env = resolve_env(system, name, prefix, command=command)
        cuda_v = None
        if cuda:
            cuda_v = select(found or discover(system), cuda, system).cuda
        else:
            state = read_state(env)
            if state:
                cuda_v = parse_dotted(state.version)
        return env_target(system, env, cuda_v), "--into-env"
    found = found or discover(system)
    if cuda:
        return toolkit_target(system, select(found, cuda, system)), f"--cuda {cuda}"
    env, state = _env_state(system)
    if state is not None:
        tk = _toolkit_by_root(system, found, state.root)
        return toolkit_target(system, tk), f"the toolkit environment {env.name} uses (cudaswitch use)"
    toolkits = [t for t in found.toolkits if t.kind == TOOLKIT]
    listing = ", ".join(f"{t.version} ({t.root})" for t in toolkits) or "none"
    if uninstalling:
        # a toolkit with any transaction folder counts: an interrupted one is finished by this command
        having = [t for t in toolkits if _records(toolkit_target(system, t).record_base)]
        if len(having) == 1:
            return toolkit_target(system, having[0]), "the only toolkit with a cuDNN installed by cudaswitch"
        if not having:
            raise CudaswitchError(f"no toolkit has a cuDNN installed by cudaswitch (toolkits: {listing})")
        raise UsageError("more than one toolkit has a cuDNN installed by cudaswitch: "
                         + ", ".join(f"{t.version} ({t.root})" for t in having) + "; choose one with --cuda")
    info = peek_name(archive_path) if archive_path else None
    if not info:
        raise UsageError(f"cannot tell from {Path(archive_path).name if archive_path else 'the archive'} which CUDA "
                         f"it is for; choose the toolkit with --cuda (installed: {listing})")
    major = info["cuda_major"]
    matching = [t for t in toolkits if t.cuda.major == major]
    if len(matching) == 1:
        return toolkit_target(system, matching[0]), f"the only CUDA {major}.x toolkit installed"
    if not matching:
        raise UsageError(f"no CUDA {major}.x toolkit is installed for this cuDNN (built for CUDA "
                         f"{major}); installed: {listing}; install one, or give --cuda / --into-env")
    raise UsageError(f"more than one CUDA {major}.x toolkit is installed: "
                     + ", ".join(f"{t.version} ({t.root})" for t in matching) + "; choose one with --cuda")


def pending(target: Target) -> List[str]:
    """Interrupted transactions the next install/uninstall will finish, without touching them."""
    out = []
    for txdir in _records(target.record_base):
        data = _read_manifest(txdir, target)
        phase = (data or {}).get("phase")
        if phase != "installed":
            what = "roll back" if phase in (None, "staging") else "complete"
            out.append(f"an interrupted cuDNN {'uninstall' if phase == 'uninstalling' else 'install'} is pending in "
                       f"{target.display(txdir)}; the next install-cudnn or uninstall-cudnn will {what} it")
    return out


def recover_target(target: Target) -> List[Tuple[str, str]]:
    check_trusted(target)
    if not target.record_base.is_dir():
        return []
    try:
        return recover(target)
    except OSError as exc:
        raise CudaswitchError(f"{target.label} has an interrupted cuDNN install that cannot be finished now "
                              f"({exc.strerror or exc}); run the command with the rights to write there") from None
