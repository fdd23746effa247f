"""The run-time trust rule (cudaswitch/core/audit.py): every process start, library load and write that cudaswitch's
code makes while a command runs is held to the rule of core/trust.py, with files really planted by another uid
(tests/other_user.py). The hook is on in every test (tests/seams.py); these tests provoke it on purpose."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from other_user import NOBODY, as_user, refused, shared_base

from cudaswitch.core import audit


@pytest.fixture
def world():
    """(base, attacker): a world-traversable root-owned folder and, inside, a folder of uid 65534 holding a script
    `tool` that leaves base/pwned when it runs."""
    base, attacker, _victim, _home = shared_base("cs-audit-")
    marker = base / "pwned"

    def plant():
        tool = attacker / "tool"
        tool.write_text(f"#!/bin/sh\ntouch {marker}\n")
        tool.chmod(0o755)
        (attacker / "sub").mkdir()
    as_user(plant)
    yield base, attacker
    shutil.rmtree(base)


def stopped(fn, *needles):
    """fn() under the hook raised AuditViolation, whose one line names each of `needles`; the violation is taken
    (it was provoked on purpose)."""
    with pytest.raises(audit.AuditViolation) as caught:
        with audit.active():
            fn()
    assert audit.take_violations() == [caught.value.line]
    line = caught.value.line
    assert "\n" not in line
    for n in needles:
        assert str(n) in line, line
    return line


def test_a_program_in_another_users_folder_is_not_started(world):
    base, attacker = world
    line = stopped(lambda: subprocess.run([str(attacker / "tool")]), attacker, "nobody (uid 65534)")
    assert line.startswith(f"cudaswitch stopped before starting {attacker / 'tool'}")
    assert not (base / "pwned").exists()


def test_a_program_found_on_path_in_her_folder_is_not_started(world):
    base, attacker = world
    stopped(lambda: subprocess.run(["tool"], env={"PATH": f"{attacker}:/usr/bin:/bin"}), attacker / "tool")
    stopped(lambda: os.execvpe("tool", ["tool"], {"PATH": str(attacker)}), attacker / "tool")
    assert not (base / "pwned").exists()


def test_her_link_to_a_system_program_is_not_started(world):
    """The link's own folder counts, not only where it points: python3 through her link reads her pyvenv.cfg."""
    base, attacker = world
    link = attacker / "nvidia-smi"
    as_user(lambda: link.symlink_to("/bin/true"))
    stopped(lambda: subprocess.run([str(link)]), attacker)


def test_a_root_link_into_her_folder_is_not_started(world):
    base, attacker = world
    link = base / "nvcc"
    link.symlink_to(attacker / "tool")
    stopped(lambda: subprocess.run([str(link)]), attacker)
    assert not (base / "pwned").exists()


def test_every_hop_of_a_link_counts_not_only_where_it_ends(world):
    """root's link -> her link -> /bin/true: she can flip her link to her script between the check and the start."""
    base, attacker = world
    as_user(lambda: (attacker / "hop").symlink_to("/bin/true"))
    link = base / "nvcc2"
    link.symlink_to(attacker / "hop")
    stopped(lambda: subprocess.run([str(link)]), attacker)


def test_a_group_writable_folder_counts_for_root(world):
    base, _attacker = world
    shared = base / "shared"
    shared.mkdir()
    shutil.copy("/bin/true", shared / "true")
    os.chown(shared, 0, NOBODY)
    shared.chmod(0o775)
    stopped(lambda: subprocess.run([str(shared / "true")]), shared, "writable by group")


def test_every_kind_of_start_is_judged(world):
    base, attacker = world
    tool = str(attacker / "tool")
    stopped(lambda: os.execv(tool, [tool]), tool)
    stopped(lambda: os.posix_spawn(tool, [tool], {}), tool)
    with audit.active():  # forks first: the child is stopped at its exec and exits 127 (the violation is its own)
        assert os.spawnv(os.P_WAIT, tool, [tool]) == 127

    import pty

    stopped(lambda: pty.spawn([tool]), tool)
    assert not (base / "pwned").exists()


def test_trusted_programs_still_start(world):
    with audit.active():
        assert subprocess.run(["true"]).returncode == 0
        assert os.system("true") == 0
    assert audit.take_violations() == []


def test_a_library_by_bare_name_is_refused_and_by_a_trusted_path_loaded(world):
    base, attacker = world
    stopped(lambda: ctypes.CDLL("libm.so.6"), "libm.so.6", "bare name")
    lib = ctypes.util.find_library("m")
    real = next(p for p in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64")
                if os.path.exists(os.path.join(p, "libm.so.6")))
    with audit.active():
        ctypes.CDLL(os.path.join(real, "libm.so.6"))
    assert lib and audit.take_violations() == []
    planted = attacker / "libm.so.6"
    as_user(lambda: shutil.copy(os.path.join(real, "libm.so.6"), planted))
    stopped(lambda: ctypes.CDLL(str(planted)), planted)


def test_writes_into_her_folder_are_stopped_and_reads_are_not(world):
    base, attacker = world
    target = attacker / "sub" / "f"
    stopped(lambda: open(target, "w"), attacker)
    stopped(lambda: os.open(str(target), os.O_WRONLY | os.O_CREAT), attacker)
    stopped(lambda: Path(target).write_text("x"), attacker)
    assert not target.exists()
    with audit.active():
        assert (attacker / "tool").read_text().startswith("#!")
    assert audit.take_violations() == []


def test_a_write_relative_to_a_folder_descriptor_is_judged_by_that_folder(world):
    base, attacker = world
    fd = os.open(str(attacker / "sub"), os.O_RDONLY)
    try:
        def write(dir_fd):
            os.close(os.open("f", os.O_WRONLY | os.O_CREAT, dir_fd=dir_fd))
        stopped(lambda: write(fd), attacker)
        stopped(lambda: os.mkdir("d", dir_fd=fd), attacker)
        stopped(lambda: os.unlink("tool", dir_fd=fd), attacker)
    finally:
        os.close(fd)
    assert not (attacker / "sub" / "f").exists()


def test_every_kind_of_change_is_judged(world):
    base, attacker = world
    tool = attacker / "tool"
    stopped(lambda: os.rename(tool, base / "x"), attacker)
    stopped(lambda: os.replace(base / "nothing", attacker / "sub" / "x"), attacker)
    stopped(lambda: os.remove(tool), attacker)
    stopped(lambda: os.rmdir(attacker / "sub"), attacker)
    stopped(lambda: shutil.rmtree(attacker / "sub"), attacker)
    stopped(lambda: os.symlink("/etc/shadow", attacker / "sub" / "l"), attacker)
    stopped(lambda: os.chmod(tool, 0o4755), attacker)
    stopped(lambda: os.chown(tool, 0, 0), attacker)
    assert tool.is_file() and (tool.stat().st_uid, tool.stat().st_mode & 0o7777) == (NOBODY, 0o755)


def test_her_file_in_a_root_folder_is_not_rewritten(world):
    """The file's own owner counts for a change: a root folder can hold a file another user owns."""
    base, _attacker = world
    mine = base / "hers"
    mine.write_text("x")
    os.chown(mine, NOBODY, NOBODY)
    stopped(lambda: os.chmod(mine, 0o600), mine, "nobody")
    with audit.active():
        (base / "mine").write_text("ok")  # root's own folder: allowed
    assert audit.take_violations() == []


def test_nothing_is_judged_outside_a_command(world):
    base, attacker = world
    (attacker / "sub").chmod(0o755)
    subprocess.run([str(attacker / "tool")])  # the test itself, not cudaswitch
    assert (base / "pwned").exists() and audit.take_violations() == []


def test_a_violation_in_a_real_process_is_one_line(world, clean_env, tmp_path):
    """What a user sees: one error line naming the file and its owner, exit 1, no traceback (a stand-in command
    that writes where it must not, run through the CLI's own entry and error handling)."""
    base, attacker = world
    script = tmp_path / "entry.py"
    script.write_text(
        "import sys\n"
        f"sys.path[0] = {str(Path(__file__).resolve().parents[2])!r}\n"
        "import click\n"
        "from cudaswitch.cli import discovery, main\n"
        "@click.command('list')\n"
        "def scribble():\n"
        f"    open({str(attacker / 'sub' / 'x')!r}, 'w')\n"
        "discovery.list_cmd = scribble\n"
        "main(prog_name='cudaswitch')\n")
    proc = subprocess.run([sys.executable, str(script), "list"], env=clean_env, capture_output=True, text=True)
    line = refused(proc, str(attacker / "sub" / "x"), "nobody (uid 65534)")
    assert proc.returncode == 1 and line.startswith("cudaswitch: error: cudaswitch stopped before writing")
    assert not (attacker / "sub" / "x").exists()
