"""All-or-nothing (cudaswitch/cudnn/transaction.py): a run killed, out of disk or denied at any point of staging or
commit leaves the toolkit as it was or, past the commit point, completed by the next command."""

from __future__ import annotations

import os

import pytest

import seams
from conftest import REPO, run_cli
from cudnn_checks import snap, ok, refused, with_old_cudnn



KILLS = ["stage:1", "stage:5", "staged", "commit:1", "commit:7", "commit-mid", "commit:37", "committed"]


@pytest.mark.parametrize("point", KILLS)
def test_sigkill_during_install_then_next_command_recovers(point, archives, linux_fs):
    fs, env = linux_fs
    with_old_cudnn(fs, archives)
    root = fs / "usr/local/cuda-12.9"
    before = snap(fs)
    before_tk = snap(root, skip=(".cudaswitch",))
    proc = run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"],
                   dict(env, CUDASWITCH_FAULT=f"kill@{point}"))
    assert proc.returncode == -9, proc.stdout + proc.stderr
    mid = snap(root, skip=(".cudaswitch",))
    if point.startswith(("stage", "staged")):
        assert mid == before_tk  # nothing in the toolkit was touched before the commit point
    journal = list((root / ".cudaswitch" / "cudnn").glob("*/manifest.yaml"))
    assert len(journal) == 1
    # the next command finds the journal: before the commit point it rolls back, after it completes
    out = ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env)).stdout
    if point.startswith(("stage", "staged")):
        assert "rolled back an interrupted cuDNN install" in out
        assert snap(fs) == before
    else:
        assert "completed an interrupted cuDNN install" in out
        assert "Removed cuDNN 9.10.2.21" in out
        assert snap(fs) == before


@pytest.mark.parametrize("point", ["commit:3", "committed"])
def test_sigkill_then_rerun_install_completes_it(point, archives, linux_fs, full_install_reference):
    fs, env = linux_fs
    with_old_cudnn(fs, archives)
    before = snap(fs)
    proc = run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"],
                   dict(env, CUDASWITCH_FAULT=f"kill@{point}"))
    assert proc.returncode == -9
    out = ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"], env)).stdout
    assert "completed an interrupted cuDNN install" in out and "already installed" in out
    assert snap(fs / "usr/local/cuda-12.9", skip=(".cudaswitch",)) == full_install_reference
    ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env))
    assert snap(fs) == before


@pytest.mark.parametrize("fault,words", [
    ("enospc@stage:3", ["disk full", "nothing was changed"]),
    ("eacces@stage:2", ["permission denied", "nothing was changed"]),
    ("enospc@commit:5", ["disk full", "nothing was changed"]),
    ("eacces@commit-mid", ["permission denied", "nothing was changed"]),
    ("eacces@committed", ["permission denied", "nothing was changed"]),
])
def test_enospc_and_eacces_leave_the_toolkit_untouched(fault, words, archives, linux_fs):
    fs, env = linux_fs
    with_old_cudnn(fs, archives)
    before = snap(fs)
    refused(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"],
                    dict(env, CUDASWITCH_FAULT=fault)), *words)
    assert snap(fs) == before


def _install_until_staged(tarball, env, root, count, *extra, **popen):
    """`install-cudnn TARBALL` in a real process (what it does on a signal from outside is the point), returned
    still running once `count` files are staged under `root` (or when it ended first), with those files."""
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, seams.ENTRY, "install-cudnn", str(tarball), *extra],
                            env=dict(env, PYTHONPATH=str(REPO)), **popen)
    deadline = time.time() + 600
    staged = []
    while time.time() < deadline and proc.poll() is None:
        staged = list((root / ".cudaswitch" / "cudnn").glob("*/stage/*/*"))
        if len(staged) >= count:
            break
        time.sleep(0.05)
    return proc, staged


@pytest.mark.slow
def test_real_kill_mid_stream_of_the_real_tarball(real_tarball, linux_fs):
    """A real SIGKILL from outside, once two files are staged; the next command rolls it back."""
    import signal
    import subprocess

    fs, env = linux_fs
    root = fs / "usr/local/cuda-12.9"
    before = snap(fs)
    proc, staged = _install_until_staged(real_tarball, env, root, 2, "-q", stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
    assert proc.poll() is None, "the install ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(staged) >= 2
    mid = snap(fs)
    assert any(".cudaswitch" in p for p in mid)  # the journal is there ...
    assert {p: v for p, v in mid.items() if ".cudaswitch" not in p} == before  # ... and nothing else changed
    out = ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env)).stdout
    assert "rolled back an interrupted cuDNN install" in out
    assert snap(fs) == before


@pytest.mark.slow
def test_ctrl_c_while_unpacking_the_real_tarball_changes_nothing(real_tarball, linux_fs):
    import signal
    import subprocess

    fs, env = linux_fs
    root = fs / "usr/local/cuda-12.9"
    before = snap(fs)
    proc, _ = _install_until_staged(real_tarball, env, root, 3, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.strip() == "cudaswitch: error: interrupted"
    assert snap(fs) == before  # staged data and the journal are gone too
