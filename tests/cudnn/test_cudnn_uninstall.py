"""Undoing an install (cudaswitch/cudnn/uninstall.py) when the user changed an installed file since."""

from __future__ import annotations

from conftest import run_cli
from cudnn_checks import snap, ok, refused



def test_uninstall_refuses_when_installed_files_changed_and_force_keeps_them(archives, linux_fs):
    fs, env = linux_fs
    before = snap(fs)
    ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], env))
    hdr = fs / "usr/local/cuda-12.9/include/cudnn.h"
    hdr.write_text("/* edited by the user */\n")
    with_edit = snap(fs)
    refused(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env), "changed since the install", "--force")
    assert snap(fs) == with_edit
    out = ok(run_cli(["uninstall-cudnn", "--cuda", "12.9", "--force"], env)).stdout
    kept = hdr.with_name("cudnn.h.cudaswitch-changed")
    assert kept.read_text() == "/* edited by the user */\n" and str(kept.name) in out
    kept.unlink()
    assert snap(fs) == before
