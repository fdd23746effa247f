"""The install-cudnn flow (cudaswitch/cudnn/install.py): the dry-run plan, the replace question and its refusal
without a terminal, stacking, the progress bar."""

from __future__ import annotations

import json
import os

import seams
from conftest import REPO, run_cli
import cudnn_archives as ca
from cudnn_checks import WTOP, snap, ok, refused



def test_dry_run_writes_nothing_and_classifies_each_file(archives, linux_fs):
    fs, env = linux_fs
    before = snap(fs)
    out = ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--dry-run"], env)).stdout
    assert snap(fs) == before
    assert out.count("  new ") >= 30 and "nothing was written" in out
    ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], env))
    after_install = snap(fs)
    out = ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--dry-run"], env)).stdout
    assert "identical" in out and " new " not in out
    out = ok(run_cli(["install-cudnn", str(archives["linux-8.9-archive"]), "--dry-run", "--json"], env)).stdout
    plan = json.loads(out)
    actions = {f["dest"].rsplit("/", 1)[-1]: f["action"] for f in plan["files"]}
    assert actions["cudnn_version.h"] == "overwrite" and actions["libcudnn_ops_infer.so.8"] == "new"
    assert actions["libcudnn.so"] == "overwrite"  # the link now points to .so.8
    assert plan["previous_cudnn"] == "9.10.2"
    assert snap(fs) == after_install


def test_second_version_asks_is_undoable_and_stacks(archives, linux_fs):
    fs, env = linux_fs
    before = snap(fs)
    ok(run_cli(["install-cudnn", str(archives["linux-8.9-archive"])], env))
    with_89 = snap(fs)
    # reinstalling the same archive is a no-op
    out = ok(run_cli(["install-cudnn", str(archives["linux-8.9-archive"])], env)).stdout
    assert "already installed" in out and snap(fs) == with_89
    # another version: not a TTY and no --yes -> refused, nothing changed
    refused(run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], env), "already has cuDNN 8.9.7", "--yes",
            code=2)
    assert snap(fs) == with_89
    proc = ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"], env))
    assert "replaced (backed up)" in proc.stdout
    assert "file(s) of another cuDNN stay in place" in proc.stderr  # 8.x's libcudnn_ops_infer.so.8 and friends
    root = fs / "usr/local/cuda-12.9"
    assert os.readlink(root / "lib64" / "libcudnn.so") == "libcudnn.so.9"
    out = ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env)).stdout
    assert "cuDNN 8.9.7 is back" in out
    assert snap(fs) == with_89
    ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env))
    assert snap(fs) == before
    refused(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env), "nothing to undo")


def test_progress_bar_only_on_a_terminal_and_not_with_quiet(tmp_path, win_fs):
    import pty
    import subprocess
    import sys

    fs, env = win_fs
    big = ca.write_zip(tmp_path / f"{WTOP}.zip", [
        (p, k, os.urandom(1 << 20) if p.endswith(".dll") else d)
        for p, k, d in ca.windows_entries("9.10.2.21", "12", "archive")])
    assert big.stat().st_size > (4 << 20)
    env = dict(env, PYTHONPATH=str(REPO), COLUMNS="100")

    def on_tty(*extra):
        master, slave = pty.openpty()
        proc = subprocess.run([sys.executable, seams.ENTRY, "install-cudnn", str(big), "--cuda", "12.4",
                               "--dry-run", *extra], env=env, stdout=subprocess.PIPE, stderr=slave, timeout=120)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        os.close(master)
        return proc, b"".join(chunks).decode("utf-8", "replace")

    proc, tty = on_tty()
    assert proc.returncode == 0 and "Reading" in tty and "100%" in tty
    proc, tty = on_tty("--quiet")
    assert proc.returncode == 0 and "Reading" not in tty
    piped = ok(run_cli(["install-cudnn", str(big), "--cuda", "12.4", "--dry-run"], env))
    assert "Reading" not in piped.stderr and "%" not in piped.stderr


def test_the_target_is_named_before_the_unpack_on_a_terminal(archives, linux_fs, tmp_path):
    """A user at a terminal sees where the archive goes before waiting for its unpack (the result line names it
    again afterwards); a script reading a pipe gets only the result."""
    from conftest import cli_on_path
    from terminal import stderr_on_a_terminal

    _fs, env = linux_fs
    env = dict(env, PATH=f"{cli_on_path(tmp_path)}:{env['PATH']}")
    archive = str(archives["linux-9.10-archive"])
    code, out, tty = stderr_on_a_terminal(["cudaswitch", "install-cudnn", archive, "--dry-run"], env, timeout=120)
    assert code == 0, tty
    lines = [ln for ln in tty.splitlines() if "CUDASWITCH_FS_ROOT is set" not in ln]  # the fixture's relocation
    assert lines[0] == (f"Installing {archive} into CUDA 12.9.1 at /usr/local/cuda-12.9 (the only CUDA 12.x toolkit "
                        f"installed)...")
    assert out.startswith("cuDNN 9.10.2.21 for CUDA 12 (linux) [")
    code, out, tty = stderr_on_a_terminal(["cudaswitch", "install-cudnn", archive, "--dry-run", "--json"], env,
                                          timeout=120)
    assert code == 0 and "Installing" not in tty and json.loads(out)
