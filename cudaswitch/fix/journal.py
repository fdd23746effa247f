"""The journal of the last applied plan, in the environment: `etc/cudaswitch/fix/journal.json` and one file per
previous content under `before/`. Written before the first change (status "pending"), marked "applied" after the
last; `doctor --undo` restores every file from it, byte for byte and with its mode, and removes it last, so an
interrupt at any point leaves either the old files, the new ones, or a journal that puts the old ones back."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

from cudaswitch.core.errors import CudaswitchError, UsageError
from cudaswitch.core.i18n import Listed, M

FOLDER = ("etc", "cudaswitch", "fix")
JOURNAL = "journal.json"
SCHEMA = 1
PENDING, APPLIED = "pending", "applied"
# the environment's scripts folder as a site's RECORDs name it, from the site
SCRIPTS = os.path.join(os.pardir, os.pardir, os.pardir, "bin")


@dataclass
class Entry:
    path: str
    blob: Optional[str]  # name under before/, None: the file did not exist
    mode: Optional[int]
    # the modification time, put back too: Python keeps a module's compiled copy only while the source's time
    # matches the one recorded in it (and pip's RECORD hashes those compiled copies)
    mtime: Optional[int] = None


@dataclass
class Journal:
    folder: Path
    status: str
    codes: List[str]
    commands: List[str]
    entries: List[Entry]
    # distributions a step replaces: {"site": folder, "names": [dist names], "kept": [their dist-info folders then],
    # "top": [the site's entries then], "owned": [the folders the kept ones' files lie in, from the site],
    # "present": [every path under those then, from the site]} -- the last three for a pip killed half-way
    packages: List[dict] = field(default_factory=list)


def folder(prefix: str) -> Path:
    return Path(prefix, *FOLDER)


def _allowed(prefix: str, path: str) -> bool:
    """A journal lies in the environment: it may only name files a fixer writes (the environment's own files, a
    Jupyter kernel.json), never make undo write elsewhere."""
    real = os.path.realpath(path)
    top = os.path.realpath(prefix)
    base = _user_base()
    return os.path.isabs(path) and (real.startswith(top + os.sep) or os.path.basename(path) == "kernel.json"
                                    or (base is not None and real.startswith(base + os.sep)))


def _user_base() -> Optional[str]:
    """Where `pip install --user` put a second torch, found as Python's `site` finds it (~/.local from $HOME;
    %APPDATA%\\Python on Windows): the one place outside the environment a journal may name files in (cudaswitch
    works as the user it belongs to)."""
    if os.name == "nt":
        appdata = os.environ.get("APPDATA")
        return os.path.realpath(os.path.join(appdata, "Python")) if appdata and os.path.isabs(appdata) else None
    home = os.path.expanduser("~")
    return os.path.realpath(os.path.join(home, ".local")) if home and home != os.sep and os.path.isabs(home) else None


def read(prefix: str) -> Optional[Journal]:
    from cudaswitch.core.trust import read_json

    where = folder(prefix)
    path = where / JOURNAL
    if not path.exists():
        return None
    shape = {"schema": int, "status": str, "codes": [str], "commands": [str],
             "files": [{"path": str, "blob": (str, type(None)), "mode": (int, type(None)), "mtime": (int, type(None))}],
             "packages": [{"site": str, "names": [str], "kept": [str], "top": [str], "owned": [str],
                           "present": [str]}]}
    try:
        data = read_json(path, shape=shape)
    except (OSError, ValueError, CudaswitchError) as exc:
        raise CudaswitchError(M("{path} is not a journal cudaswitch wrote ({why}); nothing was changed",
                                path=str(path), why=str(exc))) from None
    missing = [k for k in shape if k not in data]
    if missing:
        raise CudaswitchError(M("{path} is not a journal cudaswitch wrote ({why}); nothing was changed",
                                path=str(path), why=Listed(missing)))
    entries = [Entry(f["path"], f["blob"], f["mode"], f.get("mtime")) for f in data["files"]]
    bad = [e.path for e in entries if not _allowed(prefix, e.path)
           or (e.blob is not None and (os.sep in e.blob or "/" in e.blob or e.blob.startswith(".")))]
    if data["schema"] != SCHEMA or data["status"] not in (PENDING, APPLIED) or bad:
        raise CudaswitchError(M("{path} is not a journal cudaswitch wrote ({why}); nothing was changed",
                                path=str(path), why=Listed(bad) or data["status"]))
    packages = data.get("packages") or []
    if any(not _allowed(prefix, os.path.join(p["site"], "x"))
           or any(o != SCRIPTS and (not o or os.sep in o or "/" in o or o.startswith("."))
                  for o in p.get("owned") or []) for p in packages):
        raise CudaswitchError(M("{path} is not a journal cudaswitch wrote ({why}); nothing was changed",
                                path=str(path), why=Listed(p["site"] for p in packages)))
    return Journal(where, data["status"], data["codes"], data["commands"], entries, packages)


def _write(j: Journal) -> None:
    import json

    from cudaswitch.core.trust import write_file

    data = {"schema": SCHEMA, "status": j.status, "codes": j.codes, "commands": j.commands,
            "files": [{"path": e.path, "blob": e.blob, "mode": e.mode, "mtime": e.mtime} for e in j.entries],
            "packages": j.packages}
    write_file(j.folder / JOURNAL, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def refuse_pending(prefix: str) -> None:
    old = read(prefix)
    if old is not None and old.status == PENDING:
        raise UsageError(M("an earlier 'doctor --fix' in {prefix} was interrupted; 'cudaswitch doctor --undo -p "
                           "{prefix}' puts its files back first", prefix=prefix))


def _refuse_foreign(paths: List[str], packages: List[dict], where: Path, what: str, how: str) -> None:
    """One line, nothing changed, for a file, a package site or the journal whose folders another user could have
    written (the write rule): a fix and its undo judge the same paths the same way."""
    from cudaswitch.core.trust import refuse_if_foreign

    refuse_if_foreign([Path(p) for p in dict.fromkeys(paths)] + [Path(p["site"]) for p in packages]
                      + [where / JOURNAL], what, how, writing=True)


def begin(prefix: str, paths: List[str], codes: List[str], commands: List[str],
          packages: Optional[List[dict]] = None) -> Journal:
    """Keep the present content of every file in `paths`, then the journal saying so (the commit point). A path
    whose folders another user could have changed is refused first, with nothing changed: restore() would refuse to
    put it back, so the fix could not be undone."""
    from cudaswitch.core import faults
    from cudaswitch.core.trust import read_bytes, remove, remove_tree, write_file

    where = folder(prefix)
    refuse_pending(prefix)
    _refuse_foreign(paths, packages or [], where, M("apply 'doctor --fix'"),
                    M("its undo could not put them back either"))
    remove_tree(where / "before", ignore_errors=True)
    entries = []
    for n, path in enumerate(dict.fromkeys(paths)):
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            entries.append(Entry(path, None, None))
            continue
        if not stat.S_ISREG(st.st_mode):
            raise CudaswitchError(M("{path} is not a regular file; --fix changes only regular files, nothing was "
                                    "changed", path=path))
        blob = str(n)
        write_file(where / "before" / blob, read_bytes(path), mode=0o600)
        entries.append(Entry(path, blob, stat.S_IMODE(st.st_mode), st.st_mtime_ns))
        faults.reach("fix-keep", n + 1)
    j = Journal(where, PENDING, list(codes), list(commands), entries, [_listed(p) for p in packages or []])
    _write(j)
    return j


def commit(j: Journal) -> None:
    j.status = APPLIED
    _write(j)


def restore(j: Journal) -> List[str]:
    """Every file back as the journal kept it (removed where it did not exist), then the journal itself removed.
    Returns the files that differed. A file whose folders another user could have changed since the fix (a link
    planted in one of them would lead the write or the removal elsewhere, as root into any folder) is refused
    first, in one line, with nothing changed: write_file and remove follow the links of the folders above a path."""
    from cudaswitch.core import faults
    from cudaswitch.core.trust import read_bytes, remove, remove_tree, write_file

    _refuse_foreign([e.path for e in j.entries], j.packages, j.folder, M("undo the last 'doctor --fix'"),
                    M("the journal and the kept files stay in {folder}", folder=j.folder))
    changed = _remove_new_distributions(j)
    for n, e in enumerate(j.entries, 1):
        faults.reach("fix-undo", n)
        now = None
        try:
            now = read_bytes(e.path) if os.path.lexists(e.path) else None
        except OSError:
            now = b""  # not readable as a file: put the kept one in its place
        if e.blob is None:
            if now is not None:
                remove(e.path)
                changed.append(e.path)
            continue
        before = read_bytes(j.folder / "before" / e.blob)
        if now != before:
            write_file(e.path, before, mode=e.mode)
            changed.append(e.path)
        elif e.mode is not None and stat.S_IMODE(os.stat(e.path).st_mode) != e.mode:
            write_file(e.path, before, mode=e.mode)  # the same bytes with the kept mode, through the write door
        if e.mtime is not None:
            os.utime(e.path, ns=(e.mtime, e.mtime), follow_symlinks=False)
    remove(j.folder / JOURNAL)  # the commit point of the undo
    remove_tree(j.folder, ignore_errors=True)
    return changed


def _remove_new_distributions(j: Journal) -> List[str]:
    """The files of every distribution pip put in place of the ones a step replaced (their RECORD names them), so
    that the kept ones come back alone; a pip killed half-way leaves a RECORD too, or files the kept ones cover."""
    from cudaswitch.core.trust import remove, remove_dir, remove_tree
    from cudaswitch.fix import pip

    removed = []
    prefix = str(j.folder.parent.parent.parent)
    for pkg in j.packages:
        for name in pkg["names"]:
            for d in pip.installed(prefix, name):
                if d["site"] != pkg["site"] or d["folder"] in pkg["kept"]:
                    continue
                try:
                    files = pip.record_files(d["site"], d["folder"])
                except OSError:
                    files = []
                for path in files:
                    if os.path.isfile(path) or os.path.islink(path):
                        remove(path)
                        removed.append(path)
                remove_tree(os.path.join(d["site"], d["folder"]), ignore_errors=True)
                site = os.path.abspath(d["site"])
                for folder in sorted({os.path.dirname(p) for p in files}, key=len, reverse=True):
                    _remove_empty_up_to(os.path.abspath(folder), site)
        if j.status == PENDING and "top" in pkg:
            removed += _sweep(pkg)
    return removed


def _listed(pkg: dict) -> dict:
    """`pkg` with what its site holds now: its entries, and every path under the folders the kept distributions'
    files lie in (a top folder of the site, or the scripts folder). A pip killed half-way leaves what no RECORD
    names: the old distribution it had moved aside (`~orch`), the new one's files before its RECORD was written;
    undo removes what is not listed here."""
    from cudaswitch.fix import pip

    site = pkg["site"]
    try:
        top = sorted(os.listdir(site))
    except OSError:
        top = []
    owned = set()
    for dist in pkg["kept"]:
        try:
            files = pip.record_files(site, dist)
        except OSError:
            continue
        for path in files:
            rel = os.path.relpath(path, site).split(os.sep)
            if rel[0] != os.pardir and len(rel) > 1:
                owned.add(rel[0])
            elif os.path.normpath(os.path.dirname(os.path.relpath(path, site))) == SCRIPTS:
                owned.add(SCRIPTS)
    present = []
    for rel in sorted(owned):
        for dirpath, dirnames, files in os.walk(os.path.join(site, rel)):
            present += [os.path.relpath(os.path.join(dirpath, n), site) for n in dirnames + files]
    return dict(pkg, top=top, owned=sorted(owned), present=present)


def _sweep(pkg: dict) -> List[str]:
    """What a pip killed half-way left in the site beside what the journal lists (see `_listed`): new entries of
    the site, new paths under the folders the kept distributions own. Before the kept files are put back."""
    from cudaswitch.core.trust import remove, remove_dir, remove_tree

    site, removed = pkg["site"], []
    top, present = set(pkg["top"]), set(pkg["present"])
    try:
        now = sorted(os.listdir(site))
    except OSError:
        return removed
    for name in now:
        if name in top:
            continue
        path = os.path.join(site, name)
        if os.path.isdir(path) and not os.path.islink(path):
            remove_tree(path, ignore_errors=True)
        else:
            remove(path, missing_ok=True)
        removed.append(path)
    for rel in pkg["owned"]:
        if os.path.islink(os.path.join(site, rel)):
            continue  # a link put in its place: what it points to is not the environment's to sweep
        for dirpath, dirnames, files in os.walk(os.path.join(site, rel), topdown=False):
            for n in files + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                path = os.path.join(dirpath, n)
                if os.path.relpath(path, site) not in present:
                    remove(path, missing_ok=True)
                    removed.append(path)
            for n in dirnames:
                path = os.path.join(dirpath, n)
                if os.path.relpath(path, site) not in present and not os.path.islink(path):
                    try:
                        remove_dir(path)
                    except OSError:
                        pass
    return removed


def _remove_empty_up_to(folder: str, site: str) -> None:
    """The folders that held only the removed files, from `folder` up to (not including) site-packages."""
    from cudaswitch.core.trust import remove_dir

    while folder != site and folder.startswith(site + os.sep):
        try:
            remove_dir(folder)
        except OSError:  # not empty, or gone: what is left above is not only ours
            return
        folder = os.path.dirname(folder)
