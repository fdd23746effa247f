"""The standing hostile user: a real second account (uid 65534) plants canaries into every input source cudaswitch
declares (tests/hostile/world.py, core/trust.py INPUT_SOURCES) and root runs every command against that machine.
A test fails when a canary ran as root (its line in the marker file), when the audit hook stopped or saw a start,
load or write there (conftest's audit fixture), when root read one of her files outside the registered sources, or
when a command took past the harness's time limit on her adversarial-size files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

import world as hostile
from bounded import within
from conftest import require_tool, run_cli
from other_user import NOBODY, as_user

from cudaswitch.core import audit, trust



@pytest.fixture(scope="module")
def world(real_trees):
    require_tool("gcc")
    w = hostile.build(real_trees)
    yield w
    shutil.rmtree(w.base, ignore_errors=True)


@pytest.fixture
def fresh(world):
    if world.marks.exists():
        world.marks.unlink()
    yield world


def test_every_registered_source_is_planted():
    """A new input source in core/trust.py gets a planter here, or this fails."""
    assert set(hostile.PLANTERS) == set(trust.INPUT_SOURCES) == set(hostile._SOURCE_PATHS)


def test_the_canaries_leave_their_mark_when_root_runs_them(fresh):
    """The harness can fail: each kind of canary, run as root on purpose (outside any command), leaves its line."""
    w = fresh
    subprocess.run([str(w.her / "bin" / "nvcc")], check=True)
    subprocess.run([sys.executable, "-I", "-c", f"import ctypes; ctypes.CDLL({str(w.her / 'lib' / 'libcuda.so.1')!r})"],
                   check=True)
    subprocess.run([str(w.her / "pybin" / "nvidia-smi"), "-c", "pass"], check=True)
    subprocess.run(["bash", "-c", "true"], env={"BASH_ENV": str(w.her / "bashenv"), "PATH": "/usr/bin:/bin"},
                   check=True)
    assert set(w.ran()) == {"path:nvcc", "ld_library_path:lib", "pyvenv:pth", "bash_env"}
    w.marks.unlink()
    as_user(lambda: subprocess.run([str(w.her / "bin" / "nvcc")], check=True))  # as her: no mark
    assert w.ran() == []


def test_the_hook_tells_the_harness_every_read_and_listing(fresh):
    """The unregistered-read check can fail: a file of hers outside every source, read or listed during a command,
    is reported; a registered one is recognised as such."""
    w = fresh
    notes = w.her / "notes"
    as_user(lambda: (notes.mkdir(exist_ok=True), (notes / "todo.txt").write_text("x")))
    reads = []
    audit.ON_READ = reads.append
    try:
        with audit.active():
            (notes / "todo.txt").read_bytes()
            os.listdir(notes)
    finally:
        audit.ON_READ = None
    assert [r for r in reads if r.startswith(str(notes))] == [str(notes / "todo.txt"), str(notes)]
    assert not w.registered(str(notes / "todo.txt")) and w.registered(str(w.her / "bin" / "nvcc"))


COMMANDS = {
    "list": ["list"],
    "list --json": ["list", "--json"],
    "status": ["status"],
    "doctor": ["doctor"],
    "doctor -p ROOTENV": ["doctor", "-p", "{root_env}"],
    "which": ["which", "12.9"],
    "envs": ["envs"],
    "use -p ROOTENV": ["use", "12.9", "-p", "{root_env}", "--no-smoke"],
    "off -p ROOTENV": ["off", "-p", "{root_env}"],
    "smoke -p ROOTENV": ["smoke", "-p", "{root_env}", "--cpu-ok"],
    "recommend": ["recommend"],
    "modulefile": ["modulefile", "12.9", "{base}/modules/cuda"],
    # last, in this order: the fix changes ROOTENV and the undo puts it back for what follows
    "doctor --fix --dry-run -p ROOTENV": ["doctor", "-p", "{root_env}", "--fix", "--dry-run"],
    "doctor --fix --yes -p ROOTENV": ["doctor", "-p", "{root_env}", "--fix", "--yes"],
    "doctor --undo -p ROOTENV": ["doctor", "-p", "{root_env}", "--undo"],
    # her own environment: root's --fix works there as her (core/asowner.py), so what she planted runs as her
    "doctor --fix --yes -p HERENV": ["doctor", "-p", "{her}/envs/hers", "--fix", "--yes"],
}


def _run(w, args):
    reads = []
    audit.ON_READ = reads.append
    try:
        proc = within(run_cli, args, w.environ, limit=120)
    finally:
        audit.ON_READ = None
    return proc, reads


@pytest.mark.parametrize("name", list(COMMANDS))
def test_root_runs_nothing_she_planted(fresh, name):
    w = fresh
    args = [a.format(root_env=w.root_env, base=w.base, her=w.her) for a in COMMANDS[name]]
    proc, reads = _run(w, args)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert w.ran() == [], (w.ran(), proc.stdout, proc.stderr)
    her = str(w.her) + "/"
    stray = sorted({r for r in reads if r.startswith(her) and not w.registered(r)})
    assert stray == [], f"root read her files outside every registered source: {stray}"


def _linked_toolkit(w, name):
    """A root-owned toolkit without version files (so `list` asks its nvcc) whose bin/nvcc links into her folder."""
    tk = w.base / name
    (tk / "bin").mkdir(parents=True)
    (tk / "include").mkdir()
    (tk / "bin" / "nvcc").symlink_to(w.her / name / "nvcc")
    return tk


def test_a_link_through_her_folder_to_a_trusted_program_is_not_started(fresh):
    """Her folder on the way to /bin/true: the check walks every link on the way, as the audit hook does, so the
    toolkit's nvcc is refused before anything starts, and `list` says why instead of stopping."""
    w = fresh
    tk = _linked_toolkit(w, "cuda-via-her")

    def plant():
        (w.her / "cuda-via-her").mkdir()
        (w.her / "cuda-via-her" / "nvcc").symlink_to("/bin/true")
    as_user(plant)
    proc = run_cli(["list"], dict(w.environ, CUDASWITCH_SEARCH_PATH=str(tk)))
    assert proc.returncode == 0 and w.ran() == [], (proc.stdout, proc.stderr)
    assert f"{tk / 'bin' / 'nvcc'}: 'nvcc --version' not run: {w.her} belongs to" in proc.stderr, proc.stderr
    assert audit.take_violations() == []  # refused by the check, not left to the net below it


def test_a_racing_link_never_runs_her_program_as_root(fresh):
    """The same link, which she flips between a link to a trusted program and her script as fast as she can while
    root runs `list` ten times: whichever it meets, the check refuses her link itself, so her script never runs as
    root and the audit hook never has to stop a start the check let through (a second resolution after the check
    would meet the flip)."""
    w = fresh
    tk = _linked_toolkit(w, "race")
    race = w.her / "race"
    stop = w.base / "stop-race"

    def flip():
        race.mkdir(exist_ok=True)
        (race / "script").write_text(hostile.sh_canary(w, "race:nvcc"))
        (race / "script").chmod(0o755)
        deadline = time.monotonic() + 120
        while not stop.exists() and time.monotonic() < deadline:
            for src in ("/bin/true", str(race / "script")):
                tmp = race / ".nvcc"
                try:
                    tmp.unlink()
                except FileNotFoundError:
                    pass
                tmp.symlink_to(src)
                os.replace(tmp, race / "nvcc")
    child = threading.Thread(target=as_user, args=(flip,))
    child.start()
    try:
        while not (race / "nvcc").exists():
            time.sleep(0.01)
        env = dict(w.environ, CUDASWITCH_SEARCH_PATH=str(tk))
        for _ in range(10):
            proc = within(run_cli, ["list"], env, limit=60)
            assert "Traceback" not in proc.stderr, proc.stderr
    finally:
        stop.write_text("")
        child.join()
        stop.unlink()
    assert w.ran() == []
    assert audit.take_violations() == []
