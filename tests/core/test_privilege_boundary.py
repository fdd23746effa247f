"""The privilege boundary (docs/design/security.md, "The boundary"): root on another user's environment works as
that user, and every program cudaswitch starts is the file it checked. Each attack is replayed with the real second
uid of tests/other_user.py: what she plants leaves a marker when it runs, and the marker's owner says with whose
rights it ran."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, make_env, require_tool
from other_user import NOBODY, as_user, readable_cli, shared_base

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="replays attacks by another user on root: needs root (CI runs as root)")


@pytest.fixture
def base():
    base, attacker, _victim, _home = shared_base("cudaswitch-boundary-")
    yield base, attacker
    shutil.rmtree(base, ignore_errors=True)


def _cli(base: Path, args, env, uid=None, cwd="/"):
    return readable_cli(base, args, env, uid=uid, cwd=cwd)


def _toolkit(base: Path, real_trees) -> Path:
    tk = base / "cuda-12.9"
    shutil.copytree(real_trees / "cuda-12.9", tk, symlinks=True)
    return tk


def _her_env(attacker: Path) -> Path:
    prefix = attacker / "env"
    as_user(lambda: make_env(prefix))
    return prefix


def _owners(prefix: Path):
    return {p: p.lstat().st_uid for p in [prefix, *prefix.rglob("*")]}


def _env(base: Path):
    return {"PATH": "/usr/bin:/bin", "HOME": str(base / "home"), "LANG": "C.UTF-8", "TMPDIR": "/tmp"}


def test_roots_use_on_her_environment_works_as_her_and_she_can_off_it(base, real_trees):
    base, attacker = base
    tk = _toolkit(base, real_trees)
    prefix = _her_env(attacker)
    proc = _cli(base, ["use", tk, "-p", prefix, "--no-smoke"], _env(base))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "working as nobody (uid 65534)" in proc.stderr and str(prefix) in proc.stderr, proc.stderr
    assert (prefix / "etc" / "conda" / "activate.d" / "cudaswitch.sh").is_file()
    assert "Hooks run in bash" in proc.stdout, proc.stdout  # the hook check ran, as her
    root_owned = [p for p, uid in _owners(prefix).items() if uid != NOBODY]
    assert root_owned == [], root_owned
    # her own `off` works: nothing root left there locks her out
    off = _cli(base, ["off", "-p", prefix], _env(base), uid=NOBODY)
    assert off.returncode == 0, off.stdout + off.stderr
    assert not (prefix / "etc" / "conda" / "activate.d" / "cudaswitch.sh").exists()
    assert not (prefix / "etc" / "cudaswitch" / "state.yaml").exists()


def test_roots_off_and_refresh_on_her_environment_work_as_her(base, real_trees):
    base, attacker = base
    tk = _toolkit(base, real_trees)
    prefix = _her_env(attacker)
    assert _cli(base, ["use", tk, "-p", prefix, "--no-smoke", "--no-verify"], _env(base), uid=NOBODY).returncode == 0
    again = _cli(base, ["use", "--refresh", "-p", prefix, "--no-smoke", "--no-verify"],
                 dict(_env(base), CUDASWITCH_SEARCH_PATH=str(base)))
    assert again.returncode == 0 and "working as nobody (uid 65534)" in again.stderr, again.stdout + again.stderr
    assert [p for p, uid in _owners(prefix).items() if uid != NOBODY] == []
    off = _cli(base, ["off", "-p", prefix], _env(base))
    assert off.returncode == 0 and "working as nobody (uid 65534)" in off.stderr, off.stdout + off.stderr
    assert not (prefix / "etc" / "cudaswitch" / "state.yaml").exists()


def test_her_pth_runs_with_her_rights_when_root_smoke_tests_her_environment(base):
    """Root's `smoke` on her environment runs her Python, as her: her `.pth` cannot act as root."""
    base, attacker = base
    prefix = attacker / "env"
    marker = base / "marker"
    marker_dir = base / "markers"
    marker_dir.mkdir()
    marker_dir.chmod(0o1777)
    py = Path(os.path.realpath(sys.executable))
    ver = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    bind_py = base / "py" / py.relative_to(os.path.realpath(sys.base_prefix))

    def plant():
        make_env(prefix)
        (prefix / "bin").mkdir()
        (prefix / "bin" / "python").symlink_to(bind_py)
        (prefix / "pyvenv.cfg").write_text(f"home = {bind_py.parent}\ninclude-system-site-packages = false\n")
        site = prefix / "lib" / ver / "site-packages"
        site.mkdir(parents=True)
        (site / "evil.pth").write_text(
            f"import os; open({str(marker_dir / 'ran')!r} + '-' + str(os.geteuid()), 'w').close()\n")
    as_user(plant)
    proc = _cli(base, ["smoke", "-p", prefix, "--cpu-ok"], _env(base))
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert "working as nobody (uid 65534)" in proc.stderr, proc.stderr
    ran = sorted(p.name for p in marker_dir.iterdir())
    assert ran and all(name == f"ran-{NOBODY}" for name in ran), ran  # it ran, and never as root
    assert not marker.exists()


def test_an_environment_of_a_uid_without_a_user_is_a_one_line_refusal(base, real_trees):
    base, attacker = base
    tk = _toolkit(base, real_trees)
    prefix = base / "orphan"
    make_env(prefix)
    for p in [prefix, *prefix.rglob("*")]:
        os.lchown(p, 4242424, 4242424)
    proc = _cli(base, ["use", tk, "-p", prefix, "--no-smoke"], _env(base))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cudaswitch: error: ") and "uid 4242424" in lines[0], lines
    assert not (prefix / "etc").exists()


def test_a_root_owned_environment_stays_roots_work(base, real_trees):
    base, _attacker = base
    tk = _toolkit(base, real_trees)
    prefix = base / "shared-env"
    make_env(prefix)
    proc = _cli(base, ["use", tk, "-p", prefix, "--no-smoke", "--no-verify"], _env(base))
    assert proc.returncode == 0, proc.stderr
    assert "working as" not in proc.stderr
    assert (prefix / "etc" / "cudaswitch" / "state.yaml").stat().st_uid == 0


# ---- the mechanism, with the runner passed in ------------------------------------------------------------------------

def test_the_child_drops_uid_gid_and_groups_and_cannot_regain_root():
    from cudaswitch.core.asowner import Owner, run_as

    def work():
        gained = True
        try:
            os.setuid(0)
        except PermissionError:
            gained = False
        return {"res": list(os.getresuid()), "gid": list(os.getresgid()), "groups": os.getgroups(),
                "gained": gained}
    # this interpreter may sit in root's 0700 home: the check of cudaswitch's own files is the next test's
    got = run_as(Owner(NOBODY, NOBODY, "nobody", "/nonexistent"), work, unreadable=lambda: None)
    assert got == {"res": [NOBODY] * 3, "gid": [NOBODY] * 3, "groups": [NOBODY], "gained": False}


def test_a_failed_drop_runs_no_work_and_is_one_line():
    from cudaswitch.core.asowner import Owner, run_as
    from cudaswitch.core.errors import CudaswitchError

    def dropper(owner):
        raise PermissionError(1, "Operation not permitted")

    def work():  # would leave a file were it run
        Path("/tmp/cudaswitch-boundary-should-not-exist").write_text("x")
    with pytest.raises(CudaswitchError) as exc:
        run_as(Owner(NOBODY, NOBODY, "nobody", "/"), work, dropper=dropper)
    assert "refused to work as nobody (uid 65534)" in str(exc.value)
    assert not Path("/tmp/cudaswitch-boundary-should-not-exist").exists()


def test_own_files_the_owner_cannot_read_are_a_one_line_refusal_before_any_work():
    from cudaswitch.core.asowner import Owner, run_as
    from cudaswitch.core.errors import CudaswitchError

    flag = Path("/tmp/cudaswitch-boundary-should-not-exist")
    with pytest.raises(CudaswitchError) as exc:
        run_as(Owner(NOBODY, NOBODY, "nobody", "/"), lambda: flag.write_text("x"),
               unreadable=lambda: "/root/.venv/lib/python3.11")
    assert "cannot read cudaswitch's own files (/root/.venv/lib/python3.11)" in str(exc.value)
    assert not flag.exists()


def test_errors_and_exit_codes_of_the_child_reach_the_parent():
    from cudaswitch.core.asowner import Owner, run_as
    from cudaswitch.core.errors import CudaswitchError, UsageError

    owner = Owner(NOBODY, NOBODY, "nobody", "/")
    with pytest.raises(SystemExit) as done:
        run_as(owner, lambda: sys.exit(3), unreadable=lambda: None)
    assert done.value.code == 3
    with pytest.raises(CudaswitchError) as exc:
        run_as(owner, lambda: (_ for _ in ()).throw(UsageError("bad selector")), unreadable=lambda: None)
    assert str(exc.value) == "bad selector" and exc.value.exit_code == 2


# ---- programs are started by the path that was checked -------------------------------------------------------------

SYSTEM_PYTHON = "/usr/bin/python3"


def _venv_link(folder: Path, name: str, marker: Path) -> Path:
    """folder/bin/NAME, a link to the system's Python, with a pyvenv.cfg beside it and a site-packages whose .pth
    leaves `marker`-UID when a Python started through the link reads it."""
    real = Path(os.path.realpath(SYSTEM_PYTHON))
    (folder / "bin").mkdir()
    link = folder / "bin" / name
    link.symlink_to(real)
    (folder / "pyvenv.cfg").write_text(f"home = {real.parent}\ninclude-system-site-packages = false\n")
    site = folder / "lib" / real.name / "site-packages"
    site.mkdir(parents=True)
    (site / "canary.pth").write_text(f"import os; open({str(marker)!r} + '-' + str(os.geteuid()), 'w').close()\n")
    return link


@pytest.fixture
def markers(base):
    folder = base[0] / "markers"
    folder.mkdir()
    folder.chmod(0o1777)
    return folder


def _need_system_python():
    if not os.path.isfile(SYSTEM_PYTHON):
        pytest.skip(f"needs the system's Python at {SYSTEM_PYTHON}")


def test_a_link_in_her_folder_to_the_system_python_is_neither_found_nor_run(base, markers):
    """Her `nvidia-smi` (or `dash`) links to the system's Python, which is root's; started through the link, Python
    reads her pyvenv.cfg and runs her .pth as root."""
    from cudaswitch.core import trust
    from cudaswitch.core.system import System

    _need_system_python()
    _base, attacker = base
    as_user(lambda: _venv_link(attacker, "nvidia-smi", markers / "ran"))
    link = attacker / "bin" / "nvidia-smi"
    found, note = trust.find_program(System(os="linux", environ={"PATH": str(link.parent)}), "nvidia-smi")
    assert found is None and note and str(attacker) in note and "nobody (uid 65534)" in note, (found, note)
    with pytest.raises(trust.UntrustedProgram):
        trust.run_program([str(link)], 20)
    assert list(markers.iterdir()) == []


def test_a_trusted_link_is_started_by_its_resolved_file_not_through_the_link(base, markers):
    """A root-owned link (in a root-owned folder) to the system's Python, whose pyvenv.cfg names a site-packages
    she may write: started by the resolved file, Python never looks beside the link."""
    from cudaswitch.core import trust

    _need_system_python()
    root, _attacker = base
    shared = root / "shared"
    shared.mkdir()
    link = _venv_link(shared, "dash", markers / "ran")
    site = next((shared / "lib").glob("*/site-packages"))
    os.chown(site, NOBODY, NOBODY)  # hers, below folders only root may write
    assert trust.executable_problem(link) is None
    proc = trust.run_program([str(link), "-c", "import sys; print(sys.prefix)"], 20)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() != str(shared), proc.stdout
    assert list(markers.iterdir()) == []


# ---- the hook check runs its own copy of the hooks, and its Python children run -I from / --------------------------

def _hook_setup(tmp_path):
    from cudaswitch.switching import hookfiles, verify
    from cudaswitch.switching.activation import Changes
    from shell_driver import clean_environ

    root = str(tmp_path / "cuda")
    os.makedirs(root + "/bin")
    prefix = str(make_env(tmp_path / "env"))
    ch = Changes(scalars={"CUDA_PATH": root, "CUDA_HOME": root}, prepend={"PATH": [root + "/bin"]})
    hookfiles.write_hooks(prefix, ch, "12.9")
    env = clean_environ(PATH=f"{prefix}/bin:/usr/bin:/bin", CONDA_PREFIX=prefix)
    present = [(sh, require_tool(sh.program)) for sh in verify.LINUX_SHELLS if sh.name in ("bash", "dash")]
    return prefix, ch, env, present


def test_a_hook_swapped_after_use_wrote_it_is_not_what_the_check_runs(tmp_path):
    """Between `use` writing etc/conda/activate.d/cudaswitch.sh and the shell sourcing it, whoever may write that
    folder swaps it; the check runs the text `use` wrote, from its own folder."""
    from cudaswitch.switching import verify

    prefix, ch, env, present = _hook_setup(tmp_path)
    marker = tmp_path / "swapped-hook-ran"
    hook = Path(prefix, "etc", "conda", "activate.d", "cudaswitch.sh")

    def swap_then_run(argv, env, timeout):
        hook.write_text(f"touch {marker}\n")  # the owner's move, in the window
        return verify._run_bytes(argv, env, timeout)
    result = verify.verify(prefix, ch, env, [prefix + "/bin"], present, run=swap_then_run)
    assert not marker.exists()
    assert [c.status for c in result.checks] == ["ok", "ok"], [(c.shell, c.note) for c in result.checks]


def test_the_checks_python_child_imports_nothing_from_the_callers_folder(tmp_path, monkeypatch):
    """Without the system's `env` each shell's state comes from `python -c`; a json.py in the folder cudaswitch
    was started from must not be imported (the PowerShell check's dump is the same `python -I -c`)."""
    from cudaswitch.switching import verify

    monkeypatch.setattr(verify, "ENV_PROGRAMS", ())
    prefix, ch, env, present = _hook_setup(tmp_path)
    here = tmp_path / "here"
    here.mkdir()
    marker = tmp_path / "json-ran"
    (here / "json.py").write_text(f"open({str(marker)!r}, 'w').close()\nfrom _json import *\n")
    monkeypatch.chdir(here)
    result = verify.verify(prefix, ch, env, [prefix + "/bin"], present)
    assert not marker.exists()
    assert [c.status for c in result.checks] == ["ok", "ok"], [(c.shell, c.note) for c in result.checks]
    _ext, ps1 = verify.driver(verify.LINUX_SHELLS[-1], "a.ps1", "d.ps1", "/usr/bin/python3", env, env)
    assert ps1.count(b"/usr/bin/python3' -I -c ") == 2, ps1


# ---- smoke: a root-owned environment whose sys.path another user may write -----------------------------------------

@pytest.mark.parametrize("where", ["site-packages", "pth"])
def test_smoke_does_not_run_a_root_owned_env_whose_site_packages_another_user_may_write(base, markers, where):
    """A shared environment owned by root, its site-packages writable by her group (or a .pth in it hers): her
    .pth would run as root at the interpreter's start."""
    from conftest import run_cli

    root, _attacker = base
    prefix = make_env(root / "shared-env")
    (prefix / "bin").mkdir()
    real = Path(os.path.realpath(sys.executable))
    (prefix / "bin" / "python").symlink_to(real)
    (prefix / "pyvenv.cfg").write_text(f"home = {real.parent}\ninclude-system-site-packages = false\n")
    site = prefix / "lib" / real.name / "site-packages"
    site.mkdir(parents=True)
    pth = site / "canary.pth"
    canary = f"import os; open({str(markers / 'ran')!r} + '-' + str(os.geteuid()), 'w').close()\n"
    if where == "site-packages":
        os.chown(site, 0, NOBODY)
        site.chmod(0o775)
        as_user(lambda: pth.write_text(canary))
    else:
        pth.write_text("")
        os.chown(pth, NOBODY, NOBODY)
        as_user(lambda: pth.write_text(canary))
    proc = run_cli(["smoke", "-p", prefix, "--cpu-ok"], _env(root), process=True)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert list(markers.iterdir()) == []
    said = proc.stdout + proc.stderr
    assert "PYTHON_FOREIGN" in said and str(site) in said, said
    if where == "site-packages":
        assert "writable by group nogroup" in said and "chmod go-w" in said, said
    else:
        assert "belongs to nobody (uid 65534)" in said and "sudo -u nobody cudaswitch smoke -p" in said, said


# ---- the driver query loads no libcuda from a folder another user may write -----------------------------------------

def _canary_library(folder: Path, marker: Path) -> Path:
    """folder/libcuda.so.1: a real shared library whose constructor leaves `marker`-UID when it is loaded."""
    src = folder / "canary.c"
    src.write_text('#include <stdio.h>\n#include <unistd.h>\n__attribute__((constructor)) static void ran(void) {'
                   f' char p[4096]; snprintf(p, sizeof p, "%s-%d", "{marker}", (int)geteuid());'
                   ' FILE *f = fopen(p, "w"); if (f) fclose(f); }\n')
    lib = folder / "libcuda.so.1"
    subprocess.run([require_tool("gcc"), "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib


def test_the_driver_query_loads_no_libcuda_from_her_folder_on_ld_library_path(base, markers):
    from cudaswitch.checks import driver
    from cudaswitch.core.system import System

    root, attacker = base
    as_user(lambda: _canary_library(attacker, markers / "hers"))
    got = driver.query(System(os="linux", environ={"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": str(attacker)}))
    assert list(markers.iterdir()) == [], got
    assert got.library != str(attacker / "libcuda.so.1")
    # a folder only root may write is still searched, and its libcuda is loaded by its absolute path
    mine = root / "driver"
    mine.mkdir()
    _canary_library(mine, markers / "root")
    got = driver.query(System(os="linux", environ={"PATH": "/usr/bin:/bin",
                                                   "LD_LIBRARY_PATH": f"{attacker}:{mine}"}))
    assert [p.name for p in markers.iterdir()] == ["root-0"]
    assert got.library == str(mine / "libcuda.so.1"), got


# ---- the startup file's bytecode goes where the module went ---------------------------------------------------------

def test_the_startup_files_bytecode_is_written_through_the_open_folder_not_its_path(tmp_path, monkeypatch):
    """Between writing the module and its __pycache__, site-packages is swapped for a link to another folder: the
    .pyc goes into the folder the module went to (opened once, never looked up by path again), and nothing is
    created where the link points."""
    from cudaswitch.switching import pythonhook

    ver = f"{sys.version_info[0]}.{sys.version_info[1]}"
    prefix = make_env(tmp_path / "env")
    site = prefix / "lib" / f"python{ver}" / "site-packages"
    site.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = tmp_path / "the-real-site-packages"
    real_bytecode = pythonhook.bytecode

    def swap_then_compile(*args):
        site.rename(moved)
        site.symlink_to(elsewhere)
        return real_bytecode(*args)
    monkeypatch.setattr(pythonhook, "bytecode", swap_then_compile)
    place = pythonhook.Place(["lib", f"python{ver}", "site-packages"], ver)
    pythonhook.write(str(prefix), place, b"X = 1\n")
    assert list(elsewhere.iterdir()) == []
    assert [p.name for p in (moved / "__pycache__").iterdir()] == [f"_cudaswitch_cuda.{sys.implementation.cache_tag}.pyc"]


# ---- modulefile DIR: no link planted as DIR or along it is followed -------------------------------------------------

@pytest.mark.parametrize("planted", ["DIR", "along"])
def test_modulefile_follows_no_link_another_user_planted(base, real_trees, planted):
    """In a sticky shared folder (a /tmp) she leaves a link to a folder only root may write (/etc/cuda); root's
    `modulefile 12.9 /tmp/mods` would create the module's folder and file there."""
    from conftest import run_cli

    root, attacker = base
    sticky = root / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    victim = root / "victim-etc"
    victim.mkdir(mode=0o755)
    as_user(lambda: (sticky / "mods").symlink_to(victim))
    folder = sticky / "mods" if planted == "DIR" else sticky / "mods" / "site"
    if planted == "along":
        (victim / "site").mkdir()
    env = dict(_env(root), CUDASWITCH_SEARCH_PATH=str(real_trees))
    proc = run_cli(["modulefile", "12.9", folder, "--tcl"], env)
    line = proc.stderr.strip()
    assert proc.returncode == 1 and line.startswith("cudaswitch: error: refused to follow"), proc.stdout + line
    assert str(sticky / "mods") in line and "nobody (uid 65534)" in line and "\n" not in line, line
    assert sorted(p.name for p in victim.rglob("*")) == ([] if planted == "DIR" else ["site"])


def test_modulefile_into_a_folder_of_roots_own_still_works(base, real_trees):
    from conftest import run_cli

    root, _attacker = base
    folder = root / "modulefiles"
    folder.mkdir()
    proc = run_cli(["modulefile", "12.9", folder, "--tcl"], dict(_env(root), CUDASWITCH_SEARCH_PATH=str(real_trees)))
    assert proc.returncode == 0, proc.stderr
    assert (folder / "cuda" / "12.9").is_file()


def test_who_does_the_work_is_decided_by_the_environments_owner(base):
    """as_owner_of with the runner passed in: another user's environment goes to the runner as that user, said in
    one line; root's own environment and an ordinary user's run are done here."""
    from cudaswitch.core.asowner import as_owner_of

    root, attacker = base
    theirs = _her_env(attacker)
    ours = make_env(root / "ours")
    calls, said = [], []

    def runner(owner, work):
        calls.append(owner)
        return work()
    assert as_owner_of(str(theirs), lambda: "done", said.append, euid=0, runner=runner) == "done"
    assert [(o.uid, o.gid, o.name) for o in calls] == [(NOBODY, NOBODY, "nobody")]
    assert len(said) == 1 and "nobody (uid 65534)" in said[0] and str(theirs) in said[0]
    for prefix, euid in ((ours, 0), (theirs, NOBODY), (theirs, 1000)):
        assert as_owner_of(str(prefix), lambda: "here", said.append, euid=euid, runner=runner) == "here"
    assert len(calls) == 1 and len(said) == 1


def test_a_child_of_root_searches_no_folder_another_user_could_write(base):
    """pip and cuDNN's load check start programs and load libraries by name: as root their PATH and
    LD_LIBRARY_PATH keep only folders nobody else could write, in order; her folder, a relative entry and a
    world-writable folder go, and the list that would be empty goes altogether."""
    from cudaswitch.core import trust

    root, attacker = base
    open_to_all = root / "tmpish"
    open_to_all.mkdir()
    open_to_all.chmod(0o777)
    env, dropped = trust.trusted_search_folders({
        "PATH": f"{attacker}:/usr/bin:bin:{open_to_all}:/bin", "LD_LIBRARY_PATH": str(attacker), "HOME": "/x"})
    assert env == {"PATH": "/usr/bin:/bin", "HOME": "/x"}
    assert dropped == [str(attacker), "bin", str(open_to_all), str(attacker)]


def test_pip_as_root_reads_none_of_her_settings(base):
    """Her pip.conf named by PIP_CONFIG_FILE, under the HOME root was given, or in an XDG_CONFIG_DIRS folder of
    hers: pip reads /dev/null and root's trusted folders instead, and the note names the first one."""
    from cudaswitch.core import trust

    root, attacker = base
    as_user(lambda: ((attacker / "pip").mkdir(), (attacker / "pip" / "pip.conf").write_text("[global]\n")))
    env, note = trust.pip_environ({"PIP_CONFIG_FILE": str(attacker / "pip" / "pip.conf"), "HOME": "/root"})
    assert env["PIP_CONFIG_FILE"] == os.devnull and str(attacker / "pip" / "pip.conf") in note
    env, note = trust.pip_environ({"HOME": str(attacker), "XDG_CONFIG_HOME": "/root/.config"})
    assert env["PIP_CONFIG_FILE"] == os.devnull and note.startswith(f"pip's settings {attacker}/.pip/pip.conf")
    env, note = trust.pip_environ({"HOME": "/root", "XDG_CONFIG_HOME": "/root/.config",
                                   "XDG_CONFIG_DIRS": f"{attacker}:/etc/xdg"})
    assert env["XDG_CONFIG_DIRS"] == "/etc/xdg" and "PIP_CONFIG_FILE" not in env
    assert note.startswith(f"pip's settings {attacker}/pip/pip.conf are not read: {attacker} belongs to")
    env, note = trust.pip_environ({"HOME": "/root", "XDG_CONFIG_HOME": "/root/.config", "PATH": "/usr/bin"})
    assert note is None and "PIP_CONFIG_FILE" not in env and env["PATH"] == "/usr/bin"
