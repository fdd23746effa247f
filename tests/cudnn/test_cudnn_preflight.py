"""What is checked before a byte is staged (cudaswitch/cudnn/preflight.py): permission denied, a read-only file
system, a full disk."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import cudatrees
import cudnn_archives as ca
from conftest import run_cli
from cudnn_checks import WTOP, snap, refused



@contextlib.contextmanager
def _tmpfs(path: Path, size: str):
    """A real tmpfs of `size` mounted at `path` for the block (root only: skipped otherwise), unmounted after."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    path.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)])


def test_real_disk_full_on_a_tiny_filesystem(archives, tmp_path, linux_templates, clean_env):
    """ENOSPC from the kernel, not injected: the toolkit sits on a 2 MiB tmpfs (needs root to mount)."""
    with _tmpfs(tmp_path / "small", "2m") as mnt:
        cudatrees.windows_toolkit(mnt, "12.4")
        env = dict(clean_env, CUDASWITCH_FS_ROOT=str(mnt), CUDASWITCH_OS="windows")
        big = ca.write_zip(tmp_path / f"{WTOP}.zip", [
            (p, k, os.urandom(700_000) if p.endswith(".dll") else d)
            for p, k, d in ca.windows_entries("9.10.2.21", "12", "archive")])
        before = snap(mnt)
        refused(run_cli(["install-cudnn", str(big), "--cuda", "12.4"], env), "disk full", "nothing was changed")
        assert snap(mnt) == before


@pytest.mark.parametrize("os_", ["linux", "windows"])
def test_no_write_permission_is_detected_before_anything_is_staged(os_, tmp_path):
    """The up-front check with the access test injected (root passes every access() check)."""
    from cudaswitch.cudnn.preflight import check_writable
    from cudaswitch.cudnn.target import toolkit_target
    from cudaswitch.core.errors import CudaswitchError
    from cudaswitch.core.system import System
    from cudaswitch.discovery.toolkits import discover, select

    fs = tmp_path / "fs"
    if os_ == "linux":
        cudatrees.cuda_10_2(fs / "usr/local/cuda-10.2")
    else:
        cudatrees.windows_toolkit(fs, "10.2")
    system = System(os=os_, environ={"CUDASWITCH_CONFIG": str(tmp_path / "none.yaml")}, root=fs)
    target = toolkit_target(system, select(discover(system), "10.2", system))
    before = snap(fs)
    with pytest.raises(CudaswitchError) as exc:
        check_writable(target, access=lambda path, mode: False)
    msg = str(exc.value)
    assert "permission denied" in msg and "--into-env" in msg and "nothing was changed" in msg
    assert ("sudo" in msg) if os_ == "linux" else ("administrator" in msg and "C:\\Program Files" in msg)
    assert snap(fs) == before


def _install_as_nobody(args, env, conn):
    """The real command line, in this (forked) process, as the unprivileged user 65534."""
    from click.testing import CliRunner

    from cudaswitch.cli import main

    os.setgid(65534)
    os.setuid(65534)
    result = CliRunner().invoke(main, args, env=env)
    conn.send((result.exit_code, result.output))


def test_no_write_permission_cli_as_an_ordinary_user(archives, clean_env):
    """A real EACCES: an ordinary user installing into a toolkit it may not write. As root (CI), the test drops to
    another user in a forked process; modules the install needs are imported first, since that user cannot read
    root's site-packages."""
    import multiprocessing
    import tempfile

    import cudaswitch.cli.cudnn
    import cudaswitch.cudnn.archive
    import cudaswitch.cudnn.install

    assert cudaswitch.cli.cudnn and cudaswitch.cudnn.archive and cudaswitch.cudnn.install

    base = Path(tempfile.mkdtemp(prefix="cs-eacces-"))
    fs = base / "fs"
    try:
        base.chmod(0o755)
        cudatrees.cuda_10_2(fs / "usr/local/cuda-10.2")
        archive = base / archives["linux-9.1-cuda11"].name
        shutil.copy(archives["linux-9.1-cuda11"], archive)
        archive.chmod(0o644)
        for dirpath, _d, files in os.walk(fs):
            os.chmod(dirpath, 0o555)
        env = dict(clean_env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux", HOME=str(base))
        before = snap(fs)
        args = ["install-cudnn", str(archive), "--cuda", "10.2", "--force"]
        if os.geteuid() == 0:
            ctx = multiprocessing.get_context("fork")
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_install_as_nobody, args=(args, env, child))
            proc.start()
            code, output = parent.recv()
            proc.join(60)
        else:
            r = run_cli(args, env)
            code, output = r.returncode, r.stdout + r.stderr
        assert code != 0 and "Traceback" not in output, output
        errors = [line for line in output.splitlines() if line.startswith("cudaswitch: error: ")]
        assert len(errors) == 1, output
        for needle in ("permission denied", "sudo", "--into-env", "nothing was changed"):
            assert needle in errors[0], errors[0]
        assert snap(fs) == before
    finally:
        for dirpath, _d, _f in os.walk(base):
            os.chmod(dirpath, 0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_read_only_mount_cli(archives, clean_env, tmp_path):
    """A toolkit on a read-only file system (root included): refused up front, nothing staged."""
    with _tmpfs(tmp_path / "ro", "8m") as mnt:
        cudatrees.windows_toolkit(mnt, "12.4")
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        env = dict(clean_env, CUDASWITCH_FS_ROOT=str(mnt), CUDASWITCH_OS="windows")
        before = snap(mnt)
        refused(run_cli(["install-cudnn", str(archives["win-9.10-archive"]), "--cuda", "12.4"], env),
                "read-only file system", "--into-env", "nothing was changed")
        assert snap(mnt) == before
