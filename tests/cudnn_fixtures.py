"""The cuDNN tests' fixtures (tests/cudnn/): toolkit trees, the archives, the real tarball, the reference tree of an
uninterrupted install. tests/conftest.py loads it as a plugin (no conftest.py in test
folders); test modules never import it themselves."""

from __future__ import annotations

import shutil

import pytest

import cudatrees
import cudnn_archives as ca
from conftest import run_cli
from cudnn_checks import ok, snap, with_old_cudnn


@pytest.fixture(scope="session")
def linux_templates(tmp_path_factory, real_trees):
    """cuda-11.8, cuda-12.9 from the real wheels, and a cuda-13.0 built the same way with a 13.0 version.json."""
    base = tmp_path_factory.mktemp("tpl")
    for name in ("cuda-11.8", "cuda-12.9"):
        shutil.copytree(real_trees / name, base / name, symlinks=True)
    cudatrees.cuda_12_9(base / "cuda-13.0", version_json={"cuda": {"name": "CUDA SDK", "version": "13.0.2"}})
    return base


@pytest.fixture
def linux_fs(tmp_path, linux_templates, clean_env):
    """A file-system root with /usr/local/cuda-11.8 and /usr/local/cuda-12.9; env for the CLI."""
    root = tmp_path / "fs"
    (root / "usr" / "local").mkdir(parents=True)
    for name in ("cuda-11.8", "cuda-12.9"):
        shutil.copytree(linux_templates / name, root / "usr" / "local" / name, symlinks=True)
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(root), CUDASWITCH_OS="linux")
    return root, env


@pytest.fixture
def win_fs(tmp_path, clean_env):
    root = tmp_path / "fs"
    for v, c13 in (("10.2", False), ("11.3", False), ("12.4", False), ("13.0", True)):
        cudatrees.windows_toolkit(root, v, cuda13=c13)
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(root), CUDASWITCH_OS="windows")
    return root, env


@pytest.fixture(scope="session")
def archives(tmp_path_factory):
    d = tmp_path_factory.mktemp("archives")
    names = ["win-7.6-cuda-wrapper", "win-8.2-cuda-wrapper", "win-8.3-archive", "win-8.9-archive", "win-9.10-archive",
             "win-9.20-cuda13", "linux-8.2-cuda-wrapper", "linux-8.9-archive", "linux-9.10-archive",
             "linux-9.1-cuda11", "linux-9.20-cuda13"]
    return {n: ca.make(d / n, n) for n in names}


@pytest.fixture(scope="session")
def real_tarball():
    return ca.real_linux_tarball()


@pytest.fixture
def full_install_reference(archives, linux_fs, tmp_path):
    """The tree after an uninterrupted install of 9.10 over a hand-copied 8.9 (manifest folder excluded)."""
    fs, env = linux_fs
    ref = tmp_path / "ref-fs"
    shutil.copytree(fs, ref, symlinks=True)
    with_old_cudnn(ref, archives)
    renv = dict(env, CUDASWITCH_FS_ROOT=str(ref))
    ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"], renv))
    return snap(ref / "usr/local/cuda-12.9", skip=(".cudaswitch",))
