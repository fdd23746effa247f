"""One cudaswitch at a time per target (cudaswitch/cudnn/lock.py)."""

from __future__ import annotations

import os

from conftest import run_cli
from cudnn_checks import snap, refused



def test_a_second_cudaswitch_on_the_same_toolkit_is_refused(archives, linux_fs):
    import fcntl

    fs, env = linux_fs
    root = fs / "usr/local/cuda-12.9"
    before = snap(fs)
    fd = os.open(root, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running install-cudnn holds it
        refused(run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], env), "another cudaswitch",
                "nothing was changed")
        refused(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env), "another cudaswitch")
    finally:
        os.close(fd)
    assert snap(fs) == before
