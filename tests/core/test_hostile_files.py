"""Reads, starts and writes of files another user planted, with cudaswitch run as root (docs/design/security.md,
"The doors"): FIFOs and links to /dev/zero where cudaswitch reads an environment's files, an nvidia-smi or c++ in a
folder on PATH another user owns, terminal escapes in the contents cudaswitch prints, another user's link named
environment.yml. Planted by uid 65534 in a forked child, then the real command line runs as root against them, in a
process with a time limit (a FIFO read blocks forever) and a memory limit (/dev/zero never ends)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import make_env, one_line_error
from other_user import readable_cli
from core.test_security import NOBODY, as_user, seams_entry, shared  # noqa: F401  (a fixture)

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="replays attacks on root: the suite runs as root in CI")

MEMORY = 1 << 30  # what the commands need is a small fraction; /dev/zero read whole needs all there is


def bounded(args, env, cwd=None, timeout=60):
    """The real command line as its own process, with at most MEMORY bytes of address space and `timeout` seconds:
    a hang is a TimeoutExpired, a memory blow-up a MemoryError (an internal error) instead of a stuck machine."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY * 2, MEMORY * 2))
    return subprocess.run([sys.executable, seams_entry(), *map(str, args)], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, preexec_fn=limit)


def clean(proc):
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "internal error" not in out and "MemoryError" not in out, out
    return out


@pytest.fixture
def hostile(shared):
    """test_security's `shared` folder (attacker/ owned by uid 65534, a root-only victim/, a root-owned HOME), with
    conda told to list the environments in attacker/ (as ~/.conda/environments.txt would)."""
    base, attacker, victim, env = shared
    return base, attacker, dict(env, CONDA_ENVS_DIRS=str(attacker))


SP = Path("lib", "python3.12", "site-packages")
# every file of an environment cudaswitch reads for doctor, envs, use and conda's hooks (issue: FIFOs, /dev/zero)
READ_FILES = [SP / "torch" / "version.py", Path("conda-meta", "pytorch-2.5.1-py3.12_cuda12.4_cudnn9_0.json"),
              SP / "torch-2.5.1.dist-info" / "INSTALLER", SP / "torch-2.5.1.dist-info" / "METADATA",
              Path("conda-meta", "state")]


def _hostile_env(attacker: Path, how: str) -> Path:
    """Another user's environment whose files are each a FIFO (`fifo`) or a link to /dev/zero (`zero`)."""
    prefix = attacker / "env"

    def plant():
        make_env(prefix)
        for rel in READ_FILES:
            p = prefix / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            if how == "fifo":
                os.mkfifo(p)
            else:
                os.symlink("/dev/zero", p)
        (prefix / SP / "nvidia_cuda_runtime_cu12-12.4.127.dist-info").mkdir()
    as_user(plant)
    return prefix


@pytest.mark.parametrize("how", ["fifo", "zero"])
@pytest.mark.parametrize("command", [["envs"], ["envs", "--json"], ["doctor", "-p", "{prefix}"],
                                     ["use", "-p", "{prefix}", "--dry-run"],
                                     ["recommend", "-p", "{prefix}", "--cuda", "12.4", "--cc", "8.6"]])
def test_fifos_and_dev_zero_in_an_environment_neither_hang_nor_fill_memory(hostile, how, command):
    _base, attacker, env = hostile
    prefix = _hostile_env(attacker, how)
    proc = bounded([a.format(prefix=prefix) for a in command], env)
    clean(proc)
    if command[0] == "use":  # no selector: the declaration in conda-meta/state is unreadable, said in one line
        line = one_line_error(proc, 2 if "missing SELECTOR" in proc.stderr else proc.returncode)
        assert "conda-meta/state" in line or "missing SELECTOR" in line, line


@pytest.mark.parametrize("how", ["fifo", "zero"])
def test_conda_post_command_and_health_check_neither_hang_nor_fill_memory(hostile, real_trees, how):
    """What conda runs after every install/update in a switched environment, and `conda doctor`: the hook files
    the state file names and torch's files, each a FIFO or /dev/zero."""
    base, attacker, env = hostile
    prefix = _hostile_env(attacker, how)
    fs = base / "fs"
    (fs / "usr" / "local").mkdir(parents=True)
    shutil.copytree(real_trees / "cuda-12.9", fs / "usr" / "local" / "cuda-12.9", symlinks=True)
    os.unlink(prefix / "conda-meta" / "state")
    proc = readable_cli(base, ["use", "12.9", "-p", prefix, "--no-smoke"], dict(env, CUDASWITCH_FS_ROOT=str(fs),
                                                                                 CUDASWITCH_OS="linux"))
    clean(proc)
    assert proc.returncode == 0, proc.stderr
    state = prefix / "etc" / "cudaswitch" / "state.yaml"
    assert state.is_file()
    # the owner of the environment replaces each hook file by a FIFO or a /dev/zero link
    for rel in (Path("etc", "conda", "activate.d", "cudaswitch.sh"), Path("etc", "conda", "activate.d", "cudaswitch.csh")):
        def swap(p=prefix / rel):
            os.unlink(p)
            os.mkfifo(p) if how == "fifo" else os.symlink("/dev/zero", p)
        if (prefix / rel).exists():
            os.chown(prefix / rel, NOBODY, NOBODY)
            os.chown(prefix / rel.parent, NOBODY, NOBODY)
            as_user(swap)
    code = ("import sys; from cudaswitch.checks.conda_health import after_change, health; "
            "print(after_change(sys.argv[1])); print([c.code for c in health(sys.argv[1])])")

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY * 2, MEMORY * 2))
    run = subprocess.run([sys.executable, "-c", code, str(prefix)], capture_output=True, text=True, timeout=60,
                         preexec_fn=limit, env=dict(env, PYTHONPATH=str(Path(seams_entry()).parent.parent)))
    assert run.returncode == 0, run.stderr
    assert "HOOKS_STALE" in run.stdout, run.stdout  # a hook that cannot be read is reported, not waited for


def test_a_list_where_conda_keeps_a_mapping_in_conda_meta_state_is_one_line(hostile):
    _base, attacker, env = hostile
    prefix = attacker / "env"

    def plant():
        make_env(prefix)
        (prefix / "conda-meta" / "state").write_text(json.dumps({"env_vars": ["x"]}))
    as_user(plant)
    proc = bounded(["use", "-p", prefix], env)
    line = one_line_error(proc, proc.returncode)
    assert proc.returncode != 70 and "env_vars is a list, not a mapping" in line, line


# ---- programs found on PATH ------------------------------------------------------------------------------------------

def _planted_program(attacker: Path, name: str, marker: Path, output: str) -> Path:
    folder = attacker / "bin"

    def plant():
        folder.mkdir(exist_ok=True)
        (folder / name).write_text(f"#!/bin/sh\necho {name} >> {marker}\necho '{output}'\n")
        (folder / name).chmod(0o755)
    as_user(plant)
    return folder


SMI = "| NVIDIA-SMI 550.54.14   Driver Version: 550.54.14   CUDA Version: 12.4 |"


def test_recommend_and_doctor_skip_an_nvidia_smi_in_another_users_folder_on_path_and_says_so(hostile):
    base, attacker, env = hostile
    marker = base / "pwned"
    evil = _planted_program(attacker, "nvidia-smi", marker, SMI)
    env.pop("CONDA_OVERRIDE_CUDA", None)
    proc = bounded(["recommend", "--json"], dict(env, PATH=f"{evil}:/usr/bin:/bin"))
    clean(proc)
    assert not marker.exists(), marker.read_text()
    data = json.loads(proc.stdout)["inputs"]
    assert data["driver_source"] != "nvidia-smi" and data["driver_cuda_max"] is None, data
    # doctor says why there is no driver reading
    proc = bounded(["doctor"], dict(env, PATH=f"{evil}:/usr/bin:/bin"))
    clean(proc)
    assert not marker.exists(), marker.read_text()
    assert "nvidia-smi not run" in proc.stdout and "belongs to nobody" in proc.stdout, proc.stdout
    # a trusted nvidia-smi further along PATH is the one asked
    good = base / "root-bin"
    good.mkdir()
    (good / "nvidia-smi").write_text(f"#!/bin/sh\necho '{SMI}'\n")
    (good / "nvidia-smi").chmod(0o755)
    proc = bounded(["recommend", "--json"], dict(env, PATH=f"{evil}:{good}:/usr/bin:/bin"))
    data = json.loads(proc.stdout)["inputs"]
    assert not marker.exists()
    assert (data["driver_source"], data["driver_cuda_max"]) == ("nvidia-smi", "12.4"), data


@pytest.mark.parametrize("via", ["PATH", "CXX"])
def test_host_compiler_in_another_users_folder_is_not_run_as_root(hostile, via):
    from cudaswitch.checks.build import compiler_version
    from cudaswitch.core.system import System

    base, attacker, env = hostile
    marker = base / "pwned"
    evil = _planted_program(attacker, "c++", marker, "g++ (GCC) 99.1.0")
    environ = dict(env, PATH=f"{evil}:/usr/bin:/bin")
    if via == "CXX":
        environ["CXX"] = str(evil / "c++")
    notes = []
    found = compiler_version(System(os="linux", environ=environ), notes)
    assert not marker.exists(), marker.read_text()
    assert notes and "not run" in notes[0] and "belongs to" in notes[0], notes
    if via == "PATH":  # the next c++ on PATH, the system's own, answers
        assert found is not None and found[1] != "99.1.0", found
    else:
        assert found is None


# ---- terminal escapes in what files say ----------------------------------------------------------------------------

ESC = "\x1b]0;owned\x07\x1b[2J"


def test_doctor_prints_torchs_own_files_escaped(hostile):
    _base, attacker, env = hostile
    prefix = attacker / "env"

    def plant():
        make_env(prefix)
        (prefix / SP / "torch").mkdir(parents=True)
        (prefix / SP / "torch" / "version.py").write_text(f"__version__ = '2.5.1{ESC}'\ncuda = '12.4{ESC}'\n")
        (prefix / SP / "torch-2.5.1.dist-info").mkdir()
    as_user(plant)
    proc = bounded(["doctor", "-p", prefix], env)
    out = clean(proc)
    line = next(ln for ln in proc.stdout.splitlines() if "from its files" in ln)
    assert "\x1b" not in out and "\x07" not in out, out
    assert "\\x1b]0;owned\\x07" in line, line


# ---- writing into a target -------------------------------------------------------------------------------------------

def test_use_save_as_root_does_not_follow_another_users_environment_yml_link(hostile, real_trees):
    base, attacker, env = hostile
    secret = base / "victim" / "secret.yml"
    secret.write_text("name: root-only\ndependencies: [python]\n")
    secret.chmod(0o600)
    fs = base / "fs"
    (fs / "usr" / "local").mkdir(parents=True)
    shutil.copytree(real_trees / "cuda-12.9", fs / "usr" / "local" / "cuda-12.9", symlinks=True)
    prefix = make_env(base / "rootenv")  # root's own environment: only the file named by --save is another user's
    proj = attacker / "proj"

    def plant():
        proj.mkdir()
        os.symlink(secret, proj / "environment.yml")
    as_user(plant)
    env = dict(env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux")
    before = (secret.read_bytes(), os.stat(secret))
    proc = bounded(["use", "12.9", "-p", prefix, "--no-smoke", "--save"], env, cwd=proj)
    line = one_line_error(proc, proc.returncode)
    assert "environment.yml" in line and "belongs to nobody" in line, line
    after = os.stat(secret)
    assert secret.read_bytes() == before[0] and (after.st_ino, after.st_mode) == (before[1].st_ino, before[1].st_mode)
    assert not (prefix / "etc" / "cudaswitch" / "state.yaml").exists()  # refused before anything was switched
    # root's own link to root's own file is followed, as for a dotfile manager's link
    mine = base / "mine"
    mine.mkdir()
    (mine / "real.yml").write_text("name: mine\ndependencies: [python]\n")
    os.symlink(mine / "real.yml", mine / "environment.yml")
    proc = bounded(["use", "12.9", "-p", prefix, "--no-smoke", "--save"], env, cwd=mine)
    assert proc.returncode == 0, proc.stderr
    assert (mine / "environment.yml").is_symlink() and "CUDASWITCH_CUDA" in (mine / "real.yml").read_text()


# ---- each protection layer of the Python children on its own ----------------------------------------------------
# Planting in the working folder alone passes as long as any one layer holds (-I drops it from sys.path, and so does
# the root folder as the child's working folder); each test below fails when its one layer is removed.

def _mark_if_probe(marker: Path) -> str:
    """Module text that records that it ran in a `python -c` child (the probe), not in the command line itself."""
    return f"import sys\nif '-c' in sys.orig_argv:\n    open({str(marker)!r}, 'a').write('planted code ran\\n')\n"


@pytest.mark.parametrize("via", ["PYTHONPATH", "user site"])
def test_layer_isolated_mode_keeps_pythonpath_and_the_user_site_out_of_the_driver_query(hostile, via):
    import site

    if via == "user site" and not site.ENABLE_USER_SITE:
        pytest.skip("this interpreter is a virtual environment without system site-packages: it has no user site "
                    "to block (CI's interpreter has one)")
    base, attacker, env = hostile
    marker = base / "pwned"
    home = attacker / "home"
    user_site = home / ".local" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    pp = attacker / "pp"

    def plant():
        if via == "PYTHONPATH":  # before the standard library on sys.path: a ctypes.py there wins
            pp.mkdir()
            (pp / "ctypes.py").write_text(_mark_if_probe(marker) + "from _ctypes import *  # noqa\n")
        else:  # after it: a .pth file there runs at start-up (sudo -E keeps the invoking user's HOME)
            user_site.mkdir(parents=True)
            (user_site / "evil.pth").write_text(f"import sys; '-c' in sys.orig_argv and open({str(marker)!r}, 'a')"
                                                ".write('planted code ran\\n')\n")
    as_user(plant)
    env = dict(env, **({"PYTHONPATH": str(pp)} if via == "PYTHONPATH" else {"HOME": str(home)}))
    env.pop("CONDA_OVERRIDE_CUDA", None)
    proc = bounded(["recommend", "--json"], env, cwd=base)
    clean(proc)
    assert not marker.exists(), marker.read_text()


def _isolated_children_start_in_the_root_folder(log: Path) -> None:
    """In an `strace -f -e trace=chdir,execve` log: every process that became `python -I -c` changed to / first."""
    by_pid = {}
    for line in log.read_text().splitlines():
        pid, _, call = line.partition(" ")
        by_pid.setdefault(pid, []).append(call.strip())
    children = [calls for calls in by_pid.values() if any('"-I", "-c"' in c for c in calls if c.startswith("execve("))]
    assert children, log.read_text()
    for calls in children:
        first_exec = next(i for i, c in enumerate(calls) if c.startswith("execve("))
        assert any(c.startswith('chdir("/")') for c in calls[:first_exec]), calls


def test_layer_the_driver_query_runs_from_the_root_folder(hostile, tmp_path):
    """Seen from the outside: the child changes to / before it becomes `python -I`."""
    import conftest

    strace = conftest.require_tool("strace")
    base, attacker, env = hostile
    env.pop("CONDA_OVERRIDE_CUDA", None)
    log = tmp_path / "trace"
    proc = subprocess.run([strace, "-f", "-qq", "-e", "trace=chdir,execve", "-o", str(log), sys.executable,
                           seams_entry(), "recommend", "--json"], env=env, cwd=attacker, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    _isolated_children_start_in_the_root_folder(log)


def test_layer_the_smoke_test_runs_the_environments_python_in_its_own_prefix(hostile):
    """Not in the folder the command was started from: the probe also drops that folder from sys.path (pinned by
    test_security's run_probe with cwd=), so this layer is seen through the working folder the interpreter gets."""
    base, attacker, env = hostile
    prefix = make_env(base / "rootenv")
    (prefix / "bin").mkdir()
    seen = base / "cwd-seen"
    (prefix / "bin" / "python").write_text(f"#!/bin/sh\npwd >> {seen}\nexec {sys.executable} \"$@\"\n")
    (prefix / "bin" / "python").chmod(0o755)
    proc = bounded(["smoke", "-p", prefix, "--cpu-ok"], env, cwd=attacker)
    clean(proc)
    assert seen.read_text().split() == [str(prefix)], seen.read_text()


@pytest.mark.parametrize("layer", ["PYTHONPATH", "working folder"])
def test_layer_the_cudnn_load_check_imports_nothing_from_pythonpath_or_the_working_folder(hostile, real_trees, layer,
                                                                                         tmp_path_factory):
    """-I keeps PYTHONPATH out; the root folder as the child's working folder keeps the folder sudo ran in out of
    it altogether (a ctypes.py there: -I alone would not list it either, so this one is seen through strace)."""
    import cudnn_archives as ca

    base, attacker, env = hostile
    marker = base / "pwned"
    pp = attacker / "pp"

    def plant():
        pp.mkdir()
        (pp / "ctypes.py").write_text(_mark_if_probe(marker) + "from _ctypes import *  # noqa\n")
    as_user(plant)
    archive = ca.make(tmp_path_factory.mktemp("arch"), "linux-9.10-archive")
    fs = base / "fs"
    (fs / "usr" / "local").mkdir(parents=True)
    shutil.copytree(real_trees / "cuda-12.9", fs / "usr" / "local" / "cuda-12.9", symlinks=True)
    env = dict(env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux")
    args = ["install-cudnn", archive, "--cuda", "12.9", "--yes"]
    if layer == "PYTHONPATH":
        proc = bounded(args, dict(env, PYTHONPATH=str(pp)), cwd=base, timeout=300)
        clean(proc)
        assert proc.returncode == 0, proc.stderr
        assert not marker.exists(), marker.read_text()
        return
    import conftest

    strace = conftest.require_tool("strace")
    log = base / "trace"
    proc = subprocess.run([strace, "-f", "-qq", "-e", "trace=chdir,execve", "-o", str(log), sys.executable,
                           seams_entry(), *map(str, args)], env=env, cwd=pp, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    _isolated_children_start_in_the_root_folder(log)
