"""Finishing what a killed run left (cudaswitch/cudnn/recovery.py), by the journal's phase."""

from __future__ import annotations

import pytest

from conftest import run_cli
from cudnn_checks import snap, ok, refused, with_old_cudnn



@pytest.mark.parametrize("point", ["uninstall:1", "uninstall:9", "uninstall:37"])
def test_sigkill_during_uninstall_then_next_command_completes_it(point, archives, linux_fs):
    fs, env = linux_fs
    with_old_cudnn(fs, archives)
    before = snap(fs)
    ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"], env))
    proc = run_cli(["uninstall-cudnn", "--cuda", "12.9"], dict(env, CUDASWITCH_FAULT=f"kill@{point}"))
    assert proc.returncode == -9
    out = ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env)).stdout
    assert "completed an interrupted cuDNN uninstall" in out
    assert snap(fs) == before


def test_uninstall_without_selector_finds_the_interrupted_toolkit(archives, linux_fs):
    fs, env = linux_fs
    before = snap(fs)
    proc = run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], dict(env, CUDASWITCH_FAULT="kill@commit:4"))
    assert proc.returncode == -9
    out = ok(run_cli(["uninstall-cudnn"], env)).stdout
    assert "completed an interrupted cuDNN install" in out and "Removed cuDNN 9.10.2.21" in out
    assert snap(fs) == before


def test_dry_run_after_a_kill_reports_the_pending_journal_and_writes_nothing(archives, linux_fs):
    fs, env = linux_fs
    proc = run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], dict(env, CUDASWITCH_FAULT="kill@commit:3"))
    assert proc.returncode == -9
    mid = snap(fs)
    out = ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--dry-run"], env)).stdout
    assert "note: an interrupted cuDNN install is pending" in out and "will complete it" in out
    assert snap(fs) == mid


def test_sigkill_mid_commit_on_a_windows_toolkit_then_recovery(archives, win_fs):
    fs, env = win_fs
    ok(run_cli(["install-cudnn", str(archives["win-8.2-cuda-wrapper"])], env))
    with_82 = snap(fs)
    proc = run_cli(["install-cudnn", str(archives["win-8.3-archive"]), "--yes"],
                   dict(env, CUDASWITCH_FAULT="kill@commit-mid:4"))
    assert proc.returncode == -9
    assert snap(fs) != with_82  # half-way: some DLLs are 8.3, one is in the backup folder only
    out = ok(run_cli(["uninstall-cudnn", "--cuda", "11.3"], env)).stdout
    assert "completed an interrupted cuDNN install" in out and "cuDNN 8.2.1 is back" in out
    assert snap(fs) == with_82


def test_permission_denied_half_way_through_uninstall_is_finished_by_the_next_one(archives, linux_fs):
    fs, env = linux_fs
    with_old_cudnn(fs, archives)
    before = snap(fs)
    ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"], env))
    refused(run_cli(["uninstall-cudnn", "--cuda", "12.9"], dict(env, CUDASWITCH_FAULT="eacces@uninstall:5")),
            "stopped half-way", "run uninstall-cudnn again")
    out = ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env)).stdout
    assert "completed an interrupted cuDNN uninstall" in out
    assert snap(fs) == before
