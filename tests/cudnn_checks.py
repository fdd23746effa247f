"""What the cuDNN tests (tests/cudnn/) check commands with: tree snapshots (`snap`: sha256 + mode of every file,
every symlink target, every folder, from `cudnn_archives.snapshot`), the two outcomes (`ok`, `refused`), `cli`,
which runs the command line in-process, and a cuDNN copied in by hand (`with_old_cudnn`)."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import cudnn_archives as ca
from conftest import one_line_error

WIN_BASE = Path("C") / "Program Files" / "NVIDIA GPU Computing Toolkit" / "CUDA"
TOP = "cudnn-linux-x86_64-9.10.2.21_cuda12-archive"
WTOP = "cudnn-windows-x86_64-9.10.2.21_cuda12-archive"


def sha256_of(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def snap(root: Path, skip=()):
    return ca.snapshot(root, skip=skip)


def ok(proc):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr
    return proc


def refused(proc, *needles, code=None):
    """one_line_error with any failing code unless `code` is given, and the line names each of `needles`."""
    assert proc.returncode != 0, proc.stdout + proc.stderr
    line = one_line_error(proc, proc.returncode if code is None else code)
    for n in needles:
        assert n.lower() in line.lower(), proc.stderr
    return line


def with_old_cudnn(fs: Path, archives) -> None:
    """A cuDNN 8.9 copied in by hand (no manifest), as NVIDIA's manual install steps and most tutorials do it: the
    install must overwrite some of its files and the backups must bring them back."""
    root = fs / "usr/local/cuda-12.9"
    with tarfile.open(archives["linux-8.9-archive"]) as tf:
        for m in tf.getmembers():
            if m.isdir():
                continue
            parts = m.name.split("/")
            folder = {"include": "include", "lib": "lib64"}.get(parts[1])
            if not folder:
                continue
            dest = root / folder / parts[-1]
            if m.issym():
                os.symlink(m.linkname, dest)
            else:
                dest.write_bytes(tf.extractfile(m).read())
                os.chmod(dest, m.mode)
