"""Folders another user may not search, met by an ordinary account (uid 65534; root searches everything): an
admin's toolkit whose `targets/` is mode 0700, a CUDA_HOME, a conda environment and a module's compiler folder
below a closed folder. pathlib's is_dir/is_file/exists raise PermissionError there on Python 3.9-3.13, which made
`list`, `status` and every TAB fail for that user; what she cannot reach she cannot use, and the rest is listed.
Real NVIDIA files (tests/cudatrees.py) in a root-owned tree standing for "/" (CUDASWITCH_FS_ROOT), so that nothing
of this machine is read."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

import cudatrees
from other_user import NOBODY, as_user, readable_cli
from test_modules import NVHPC_TCL, SPACK_LUA

from cudaswitch.core.system import System
from cudaswitch.discovery.toolkits import discover

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="needs root to close a folder to another user (CI runs as root)")

TOOLKIT = "/usr/local/cuda-12.9"


@pytest.fixture
def fs():
    """(base, fs): a world-searchable folder holding `fs/`, root's "/" for the run, with CUDA 12.9 at
    /usr/local/cuda-12.9 as NVIDIA lays it out (include and lib64 links into targets/x86_64-linux)."""
    base = Path(tempfile.mkdtemp(prefix="cs-closed-"))
    base.chmod(0o755)
    fs = base / "fs"
    cudatrees.cuda_12_9(fs / TOOLKIT.lstrip("/"))
    (base / "home").mkdir()
    for d, _, _ in os.walk(base):
        os.chmod(d, 0o755)
    yield base, fs
    shutil.rmtree(base, ignore_errors=True)


def _env(base: Path, fs: Path, **extra) -> dict:
    return {"PATH": "/usr/bin:/bin", "HOME": "/home/her", "LANG": "C.UTF-8", "CUDASWITCH_FS_ROOT": str(fs),
            "CUDASWITCH_OS": "linux", "CUDASWITCH_CONFIG": "/nonexistent/config.yaml",
            "XDG_CACHE_HOME": str(base / "cache"), **extra}


def _as_her(system: System) -> dict:
    """discover(system) as uid 65534: its toolkits (to_json) and warnings."""
    discover(system)  # as root first: what discovery imports lazily, from an interpreter she may not read
    out = Path(tempfile.mkdtemp(prefix="cs-closed-out-"))
    os.chown(out, NOBODY, NOBODY)
    try:
        def run():
            found = discover(system)
            (out / "found.json").write_text(json.dumps({"toolkits": [t.to_json() for t in found.toolkits],
                                                         "warnings": [str(w) for w in found.warnings]}))
        as_user(run)
        return json.loads((out / "found.json").read_text())
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _tab_as_her(system: System, cache: Path) -> list:
    """The words two TABs on `use` offer as uid 65534 (the second from the first's kept record), each the same."""
    from cudaswitch.discovery.selector_cache import NAME, RACY_NS, offered

    offered(system, "")  # as root first, as _as_her does
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir()
    os.chown(cache, NOBODY, NOBODY)
    out = Path(tempfile.mkdtemp(prefix="cs-closed-out-"))
    os.chown(out, NOBODY, NOBODY)
    time.sleep(RACY_NS / 1e9 + 0.05)  # a tree younger than that is never kept
    try:
        def run():
            first = offered(system, "")
            assert list(cache.rglob(NAME)), "the first TAB kept no record"
            (out / "words.json").write_text(json.dumps([first, offered(system, "")]))
        as_user(run)
        first, second = json.loads((out / "words.json").read_text())
        assert first == second, (first, second)
        return first
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _clean(proc) -> None:
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Traceback" not in out and "internal error" not in out and "Errno" not in out, out


@pytest.mark.parametrize("closed", ["targets", "targets/x86_64-linux"])
def test_a_toolkit_with_a_closed_folder_is_listed_with_the_folder_named(fs, closed):
    base, fs = fs
    os.chmod(fs / TOOLKIT.lstrip("/") / closed, 0o700)
    found = _as_her(System(os="linux", environ=_env(base, fs), root=fs, python_paths=[]))
    (tk,) = found["toolkits"]
    assert (tk["root"], tk["version"], tk["version_source"]) == (TOOLKIT, "12.9.1", "version.json")
    assert tk["nvcc"] == f"{TOOLKIT}/bin/nvcc"
    # lib64 and include lead into the closed folder: not hers to use, and not broken either
    assert tk["lib_dirs"] == [] and tk["include_dir"] is None and "broken-symlink" not in tk["flags"], tk
    said = [w for w in found["warnings"] if "cannot search" in w]
    assert said and said[0].startswith(f"{TOOLKIT}/{closed}: "), found["warnings"]
    assert not any("broken symlink" in w for w in found["warnings"]), found["warnings"]

    proc = readable_cli(base, ["list"], _env(base, fs), uid=NOBODY)
    _clean(proc)
    assert "12.9.1" in proc.stdout and TOOLKIT in proc.stdout, proc.stdout
    assert f"{TOOLKIT}/{closed}: this user cannot search it" in proc.stderr, proc.stderr
    proc = readable_cli(base, ["doctor"], _env(base, fs, CUDA_HOME=TOOLKIT), uid=NOBODY)
    _clean(proc)
    assert f"CUDA toolkit  12.9.1     {TOOLKIT}" in proc.stdout, proc.stdout


def test_settings_and_environments_below_a_closed_folder_are_skipped_and_the_rest_listed(fs):
    """CUDA_HOME, and an environment her ~/.conda/environments.txt still names, in a project folder she was
    taken out of: status and list go on, and CUDA_HOME is not called missing (it may well be there)."""
    base, fs = fs
    project = fs / "srv" / "project"
    cudatrees.cuda_11_8(project / "cuda-11.8")
    (project / "envs" / "torch" / "conda-meta").mkdir(parents=True)
    (project / "envs" / "torch" / "conda-meta" / "history").write_text("")
    project.chmod(0o700)
    home = fs / "home" / "her"
    (home / ".conda").mkdir(parents=True)
    (home / "envs" / "mine" / "conda-meta").mkdir(parents=True)
    (home / "envs" / "mine" / "conda-meta" / "history").write_text("")
    (home / ".conda" / "environments.txt").write_text("/srv/project/envs/torch\n/home/her/envs/mine\n")
    env = _env(base, fs, CUDA_HOME="/srv/project/cuda-11.8")
    system = System(os="linux", environ=env, root=fs, python_paths=[])
    found = _as_her(system)
    assert [t["root"] for t in found["toolkits"]] == [TOOLKIT]
    assert any(w.startswith("/srv/project/cuda-11.8 (CUDA_HOME): this user cannot reach it") for w in
               found["warnings"]), found["warnings"]

    assert _tab_as_her(system, base / "cache") == ["12.9", "12.9.1", "cu129"]

    proc = readable_cli(base, ["list"], env, uid=NOBODY)
    _clean(proc)
    assert TOOLKIT in proc.stdout and "12.9.1" in proc.stdout, proc.stdout
    assert "/srv/project/cuda-11.8 (CUDA_HOME): this user cannot reach it" in proc.stderr, proc.stderr
    proc = readable_cli(base, ["status"], env, uid=NOBODY)
    _clean(proc)
    assert "CUDA_HOME=/srv/project/cuda-11.8 is not a CUDA toolkit cudaswitch can see" in proc.stdout, proc.stdout
    assert "missing folder" not in proc.stdout, proc.stdout
    proc = readable_cli(base, ["doctor"], env, uid=NOBODY)
    _clean(proc)
    assert "CUDA_PATH_NOT_TOOLKIT: CUDA_HOME=/srv/project/cuda-11.8" in proc.stdout, proc.stdout
    assert "CUDA_PATH_MISSING" not in proc.stdout, proc.stdout
    proc = readable_cli(base, ["envs"], env, uid=NOBODY)
    _clean(proc)
    assert "/home/her/envs/mine" in proc.stdout and "/srv/project/envs/torch" not in proc.stdout, proc.stdout


def test_a_module_whose_compilers_folder_is_closed_still_gives_its_cuda(fs):
    """NVIDIA HPC SDK's modulefile puts four bin folders on PATH: one of them in a folder she may not search
    (the SDK's MPI, installed for one group) is passed over, and the CUDA bin's nvcc names the toolkit."""
    base, fs = fs
    nvhome = base / "hpc_sdk"
    sdk = nvhome / "Linux_x86_64" / "24.3"
    (sdk / "cuda").mkdir(parents=True)
    os.symlink(fs / TOOLKIT.lstrip("/"), sdk / "cuda" / "12.9")
    os.symlink("12.9/bin", sdk / "cuda" / "bin")
    (sdk / "compilers" / "bin").mkdir(parents=True)
    (sdk / "comm_libs" / "mpi" / "bin").mkdir(parents=True)
    mp = base / "modulefiles"
    (mp / "nvhpc").mkdir(parents=True)
    (mp / "nvhpc" / "24.3").write_text(NVHPC_TCL.format(nvhome=nvhome))
    for d, _, _ in os.walk(base):
        os.chmod(d, 0o755)
    (sdk / "comm_libs").chmod(0o700)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(base / "home"), "MODULEPATH": str(mp),
           "CUDASWITCH_CONFIG": "/nonexistent/config.yaml"}
    found = _as_her(System(os="linux", environ=env, python_paths=[]))
    (tk,) = found["toolkits"]
    assert tk["root"] == str(fs / TOOLKIT.lstrip("/")) and tk["modules"] == ["nvhpc/24.3"], found


def test_a_module_family_folder_she_may_list_but_not_search_costs_only_its_own_modules(fs):
    """`chmod -R 744` over a module tree: cuda/ lists its files to her but opens none (its link 12 -> 12.9.lua
    too); the modulefiles of another folder on MODULEPATH still give their toolkit."""
    base, fs = fs
    root = fs / TOOLKIT.lstrip("/")
    closed, other = base / "mf-closed", base / "mf-open"
    (closed / "cuda").mkdir(parents=True)
    (closed / "cuda" / "12.9.lua").write_text(SPACK_LUA.format(version="12.9.1", root=root))
    os.symlink("12.9.lua", closed / "cuda" / "12.lua")
    (other / "cuda").mkdir(parents=True)
    (other / "cuda" / "12.9.1.lua").write_text(SPACK_LUA.format(version="12.9.1", root=root))
    for d, _, _ in os.walk(base):
        os.chmod(d, 0o755)
    (closed / "cuda").chmod(0o744)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(base / "home"), "MODULEPATH": f"{closed}:{other}",
           "CUDASWITCH_CONFIG": "/nonexistent/config.yaml"}
    found = _as_her(System(os="linux", environ=env, python_paths=[]))
    (tk,) = found["toolkits"]
    assert tk["root"] == str(root) and tk["modules"] == ["cuda/12.9.1"], found
    said = [w for w in found["warnings"] if str(closed) in w]
    assert len(said) == 2 and all("cannot read it: Permission denied" in w for w in said), found["warnings"]


def test_a_link_into_a_closed_folder_costs_only_that_entry(fs):
    """A MODULEPATH folder holding, beside cuda/, a link to a licensed tool's modulefiles in a folder installed for one
    group: for her that entry is no folder, and cuda/ beside it still gives the toolkit (the whole folder's listing
    was dropped)."""
    base, fs = fs
    root = fs / TOOLKIT.lstrip("/")
    mp, licensed = base / "modulefiles", base / "licensed"
    (mp / "cuda").mkdir(parents=True)
    (mp / "cuda" / "12.9.1.lua").write_text(SPACK_LUA.format(version="12.9.1", root=root))
    (licensed / "modulefiles" / "matlab").mkdir(parents=True)
    os.symlink(licensed / "modulefiles" / "matlab", mp / "matlab")
    for d, _, _ in os.walk(base):
        os.chmod(d, 0o755)
    licensed.chmod(0o700)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(base / "home"), "MODULEPATH": str(mp),
           "CUDASWITCH_CONFIG": "/nonexistent/config.yaml"}
    found = _as_her(System(os="linux", environ=env, python_paths=[]))
    (tk,) = found["toolkits"]
    assert tk["root"] == str(root) and tk["modules"] == ["cuda/12.9.1"], found
