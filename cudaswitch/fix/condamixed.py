"""TORCH_MIXED_INSTALL where conda's pytorch and a pip torch are both installed in the environment itself (the usual
way: `conda install pytorch`, then `pip install torch` over it). The user chooses which goes, and the tool that
installed it removes it:

* `conda` (conda's record goes, pip's torch stays): `conda remove --force --offline -p PREFIX pytorch` with the
  user's conda (CONDA_EXE, or the base conda_root() names);
* `pip` (pip's torch goes, conda's stays): `python -m pip uninstall torch` with the environment's pip.

Both lists name the files they share (torch/__init__.py ...), and whichever tool removes its side takes those with
it. torch/version.py, the file torch reports itself from, tells whose bytes they hold now (the side installed last).
Removing the other side (the default, and what --yes takes: it changes the least of what runs) leaves the shared
files to be put back from the copies the journal kept, which are the kept side's own bytes. Removing the side in
place needs the other side's own bytes, which were overwritten: conda's are in its package cache (the record's
extracted_package_dir), offered only when it holds every shared file with the record's sha256 and no prefix
placeholder, and checked again when copied; pip's are only on the index, so keeping pip's torch when conda's files
are in place is not offered. When version.py names neither version (or both are the same), which side is in place
cannot be told: no safe default, the finding stays advice. The journal keeps every file either side lists, with
conda-meta/<record>.json and conda-meta/history, so `doctor --undo` puts both back byte for byte without the
network."""

from __future__ import annotations

import os
from typing import Dict, List, Optional

from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.i18n import M, N_
from cudaswitch.fix.plan import Change, Step

CODES = ("TORCH_MIXED_INSTALL",)
CHOICES = {"conda": N_("conda removes its pytorch record; pip's torch stays (its shared files put back from the "
                       "kept copies)"),
           "pip": N_("pip removes its torch; conda's stays (its shared files put back from conda's package cache)")}
TIMEOUT = 1800
_RECORD = {"name": str, "version": str, "build": (str, type(None)), "channel": (str, type(None)),
           "url": (str, type(None)), "extracted_package_dir": (str, type(None)), "files": ([str], type(None)),
           "paths_data": ({"paths": [{"_path": str, "sha256": (str, type(None)),
                                      "prefix_placeholder": (str, type(None))}]}, type(None))}


def _record(path: str) -> dict:
    from cudaswitch.core.trust import read_json

    try:
        data = read_json(path, shape=_RECORD)
    except (OSError, ValueError, CudaswitchError):
        return {}
    return data if isinstance(data, dict) else {}


def _sides(prefix: str):
    """(conda's record, its JSON, pip's torch dist) when exactly one of each is installed, else None."""
    from cudaswitch.discovery.torchenv import torch_installs
    from cudaswitch.fix import pip

    installs = torch_installs(prefix)
    dists = [d for d in pip.installed(prefix, "torch")]
    pips = [d for d in installs["dist_infos"] if (d.get("installer") or "").lower() != "conda"]
    if len(installs["conda"]) != 1 or len(pips) != 1 or len(dists) != 1:
        return None
    rec = installs["conda"][0]
    data = _record(rec["file"])
    if not data.get("files"):
        return None
    return rec, data, dists[0], installs.get("build_version")


def live_side(build_version: Optional[str], conda_version: str, pip_version: str) -> Optional[str]:
    """Which side's files torch imports now, from torch/version.py: 'pip', 'conda', or None (neither, or both
    alike)."""
    if not build_version or conda_version == pip_version:
        return None
    if build_version == pip_version:
        return "pip"
    if build_version == conda_version or build_version.split("+")[0] == conda_version:
        return "conda"
    return None


def _cache_restorable(prefix: str, data: dict, shared: List[str]) -> bool:
    """Every shared file conda's record lists is in the package cache with the record's sha256 and no prefix
    placeholder, so pip's removal can be followed by conda's own bytes."""
    from cudaswitch.core.trust import read_bytes
    import hashlib

    cache = data.get("extracted_package_dir")
    paths = {p["_path"]: p for p in ((data.get("paths_data") or {}).get("paths") or [])}
    if not cache or not os.path.isabs(cache):
        return False
    for path in shared:
        rel = os.path.relpath(path, prefix).replace(os.sep, "/")
        p = paths.get(rel)
        if p is None or not p.get("sha256") or p.get("prefix_placeholder"):
            return False
        try:
            if hashlib.sha256(read_bytes(os.path.join(cache, rel))).hexdigest() != p["sha256"]:
                return False
        except OSError:
            return False
    return True


def conda_argv(system) -> Optional[List[str]]:
    """The user's conda, as the rest of cudaswitch finds it (CONDA_EXE, else the base conda_root() names): the
    base's own Python with `-I -m conda` where conda is importable there (the form a pip-installed conda needs,
    and no PYTHON* variable decides what it imports), else the conda program."""
    from cudaswitch.discovery.condaenvs import conda_root

    root = conda_root(system)
    if root:
        py = os.path.join(root, "python.exe") if system.windows else os.path.join(root, "bin", "python")
        import glob

        sites = glob.glob(os.path.join(root, "lib", "python3*", "site-packages", "conda", "__init__.py")) + \
            glob.glob(os.path.join(root, "Lib", "site-packages", "conda", "__init__.py"))
        if os.path.isfile(py) and sites:
            return [py, "-I", "-m", "conda"]
    exe = system.environ.get("CONDA_EXE")
    if exe and os.path.isabs(exe) and os.path.isfile(exe):
        return [exe]
    return None


def plan(mine: List, env, system, findings, choice: Optional[str] = None) -> Optional[Step]:
    from cudaswitch.core.shellquote import for_user
    from cudaswitch.fix import pip

    found = next((f for f in mine if any(str(d).endswith(".json") and os.sep + "conda-meta" + os.sep in str(d)
                                         for d in (f.details or []))), None)
    sides = _sides(env.prefix) if found is not None else None
    if sides is None:
        return None
    rec, data, dist, build_version = sides
    live = live_side(build_version, rec["version"], dist["version"])
    if live is None:
        return None  # which side's files are in place cannot be told: no safe default, the finding stays advice
    top = os.path.realpath(env.prefix) + os.sep
    conda_files = [p for p in (os.path.normpath(os.path.join(env.prefix, f)) for f in data["files"])
                   if os.path.realpath(p).startswith(top)]  # a record naming files elsewhere names nothing here
    pip_files = pip.record_files(dist["site"], dist["folder"])
    shared = sorted(set(conda_files) & set(pip_files))
    argv = conda_argv(system)
    # removing the side not in place: the shared files hold the kept side's bytes, which the journal keeps, so they
    # are put back from there. Removing the side in place needs the other side's own bytes: conda's are in its
    # package cache (when it holds them all, hash for hash); pip's were overwritten and only the index has them.
    if live == "pip":
        ways = (["conda"] if argv is not None else []) + \
            (["pip"] if _cache_restorable(env.prefix, data, shared) else [])
    else:
        ways = ["pip"]
    if not ways or ways[0] != ("conda" if live == "pip" else "pip"):
        return None  # the safe default cannot be done here (no conda found): the finding stays advice
    other = "pip" if live == "pip" else "conda"
    choice = choice if choice in ways else ways[0]
    source = "kept" if choice != live else "cache"
    meta = rec["file"]
    history = os.path.join(env.prefix, "conda-meta", "history")
    # a package installed from a file has channel "<unknown>" in its record; its url names the file then
    where = next((w for w in (data.get("channel"), data.get("url")) if w and not w.startswith("<")), "-")
    conda_label = f"{data['name']} {data['version']} {data.get('build') or ''} ({where})".replace("  ", " ")
    pip_label = f"torch {dist['version']} ({dist['site']}/{dist['folder']})"
    changes = [Change("package", M("{name} (conda, {where})", name=data["name"], where=where),
                      f"{data['version']} {data.get('build') or ''}".strip(),
                      M("removed") if choice == "conda" else M("kept")),
               Change("package", M("torch (pip, {where})", where=dist["site"]), dist["version"],
                      M("removed") if choice == "pip" else M("kept"))]
    if choice == "conda":
        changes.append(Change("file", meta, after=M("removed by conda, with the {count} file(s) its record lists",
                                                    count=len(conda_files))))
        changes.append(Change("file", dist["site"], after=M(
            "{count} file(s) of pip's torch that conda's record also lists put back as pip wrote them",
            count=len(shared))))
        words = ["conda", "remove", "--force", "--offline", "--yes", "-p", env.prefix, data["name"]]
        tag = dist["version"].partition("+")[2] or "cpu"
        then = [env.python, "-m", "pip", "install", "--force-reinstall", "--no-deps", f"torch=={dist['version']}",
                "--index-url", pip.index_url(tag, system.environ)]
        by_hand = M("by hand, conda's removal takes pip's shared files with it: follow it with {command} (needs the "
                    "index; --fix puts them back from the kept copies instead)",
                    command=for_user(then, system.environ, system.windows))
    else:
        changes.append(Change("file", dist["site"], after=M("pip removes the {count} file(s) its RECORD lists",
                                                            count=len(pip_files))))
        changes.append(Change("file", data.get("extracted_package_dir") or "-", after=M(
            "{count} file(s) of conda's pytorch that pip's RECORD also lists put back from conda's package cache",
            count=len(shared))) if source == "cache" else Change("file", meta, after=M(
                "{count} file(s) of conda's pytorch that pip's RECORD also lists put back as conda wrote them",
                count=len(shared))))
        words = [env.python, "-m", "pip", "uninstall", "--yes", "torch"]
        then = ["conda", "install", "--offline", "--force-reinstall", "--no-deps", "--yes", "-p", env.prefix,
                f"{data['name']}=={data['version']}={data.get('build') or '*'}"]
        by_hand = M("by hand, pip's removal takes conda's shared files with it: follow it with {command} (--fix "
                    "copies them from conda's package cache, checked against conda's record)",
                    command=for_user(then, system.environ, system.windows))
    default = ways[0]
    labels = {"conda": M("remove conda's {what}; keep pip's {kept}", what=conda_label, kept=pip_label),
              "pip": M("remove pip's {what}; keep conda's {kept}", what=pip_label, kept=conda_label)}
    why = M("default {key}: Python imports {live}'s torch now (torch/version.py says {version}), so removing the "
            "other changes the least of what runs", key=default, live=live, version=build_version)
    causes = [found.cause, why] + ([] if len(ways) > 1 else [_why_one(other)]) + [by_hand]
    return Step("condamixed", ["TORCH_MIXED_INSTALL"], causes, changes,
                for_user(words, system.environ, system.windows),
                {"choice": choice, "choices": [(k, labels[k]) for k in ways], "conda": argv, "name": data["name"],
                 "record": meta, "shared": shared, "cache": data.get("extracted_package_dir"), "source": source,
                 "hashes": _hashes(env.prefix, data, shared),
                 "packages": [{"site": dist["site"], "names": ["torch"], "kept": [dist["folder"]]}]},
                [meta, history, *conda_files, *pip_files])


def _hashes(prefix: str, data: dict, shared: List[str]) -> Dict[str, str]:
    by_rel = {p["_path"]: p.get("sha256") for p in ((data.get("paths_data") or {}).get("paths") or [])}
    return {path: by_rel.get(os.path.relpath(path, prefix).replace(os.sep, "/")) or "" for path in shared}


def _why_one(other: str) -> str:
    if other == "pip":
        return M("the other way (removing pip's torch) is not offered: conda's package cache does not hold every "
                 "shared file with the hash conda's record gives, so conda's torch could not be put back whole")
    return M("the other way (removing conda's pytorch) is not offered: conda's files overwrote pip's copies of the "
             "shared files, and only the index has those again")


def apply(step: Step, env, system) -> None:
    from cudaswitch.core import faults

    if step.data["choice"] == "conda":
        _conda_remove(step, env, system)
    else:
        from cudaswitch.fix import pip

        pip.run(env, ["uninstall", "--yes", "torch"], system)
    faults.reach("fix-removed", 1)
    if step.data["source"] == "kept":
        _put_back_kept(env.prefix, step.data["shared"])
    else:
        _put_back_from_cache(env.prefix, step.data["cache"], step.data["shared"], step.data["hashes"])


def _conda_remove(step: Step, env, system) -> None:
    from cudaswitch.core.trust import run_program
    from cudaswitch.fix.pip import _PASS

    # the user's conda settings are theirs (CONDA_PKGS_DIRS, CONDA_SOLVER ...); the activated environment is not
    # the one changed
    environ = {k: v for k, v in system.environ.items()
               if k in _PASS or (k.startswith("CONDA_") and not k.startswith(("CONDA_PREFIX", "CONDA_DEFAULT_ENV",
                                                                              "CONDA_SHLVL")))}
    args = [*step.data["conda"], "remove", "--force", "--offline", "--yes", "--quiet", "-p", env.prefix,
            step.data["name"]]
    # by_link: a base's Python reached through a link (a venv's bin/python) is that base only by the pyvenv.cfg
    # beside the link; the link's folders are checked too
    proc = run_program(args, TIMEOUT, env=environ, cwd=os.path.abspath(os.sep), by_link=True)
    if proc.returncode != 0:
        last = [ln for ln in (proc.stderr or proc.stdout or "").splitlines() if ln.strip()][-1:] or ["-"]
        raise CudaswitchError(M("conda exited {code}: {line}", code=proc.returncode, line=last[0]))
    if os.path.exists(step.data["record"]):
        raise CudaswitchError(M("conda left {path} in place", path=step.data["record"]))


def _put_back_kept(prefix: str, shared: List[str]) -> None:
    """The kept side's shared files the removal took, as the journal kept them (bytes, mode and time)."""
    from cudaswitch.core.trust import read_bytes, write_file
    from cudaswitch.fix import journal

    j = journal.read(prefix)
    kept: Dict[str, journal.Entry] = {e.path: e for e in j.entries} if j is not None else {}
    for path in shared:
        e = kept.get(path)
        if e is None or e.blob is None:
            raise CudaswitchError(M("{path} was not kept before the change", path=path))
        write_file(path, read_bytes(j.folder / "before" / e.blob), mode=e.mode)
        if e.mtime is not None:
            os.utime(path, ns=(e.mtime, e.mtime), follow_symlinks=False)


def _put_back_from_cache(prefix: str, cache: str, shared: List[str], hashes: Dict[str, str]) -> None:
    """conda's own copies of the files pip's removal took, each checked again against the record's sha256 (the
    cache may have changed since the plan), with the cache file's mode."""
    import hashlib
    import stat

    from cudaswitch.core.trust import read_bytes, write_file

    for path in shared:
        source = os.path.join(cache, os.path.relpath(path, prefix))
        data = read_bytes(source)
        if hashlib.sha256(data).hexdigest() != hashes.get(path):
            raise CudaswitchError(M("{path} in conda's package cache is not the file conda's record hashed",
                                    path=source))
        write_file(path, data, mode=stat.S_IMODE(os.stat(source).st_mode))
