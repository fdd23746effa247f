"""Ctrl-C at every step of every writing command (install-cudnn, uninstall-cudnn, install-toolkit, use, off):
after each, the tree is exactly the old one or the new one, the message says which, and uninstall / undo still
work. The interrupt is a real SIGINT the process sends itself at the Nth point of the test seam
(CUDASWITCH_FAULT=interrupt@step:N, tests/seams.py), for N = 1, 2, ... until a run passes every point."""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path

import pytest

from conftest import make_env, one_line_error, run_cli
import cudnn_archives as ca
from cudnn_checks import ok, snap

MAX_STEPS = 400  # far above any command's count: a seam that never stops firing fails instead of looping


def every_interrupt(args, env, reset, after, cwd=None):
    """Run `args` with Ctrl-C at step 1, 2, ... (`reset()` before each run puts the old state back); `after(n,
    proc)` checks each interrupted run. Returns the number of steps (the first N the command runs through)."""
    for n in itertools.count(1):
        assert n < MAX_STEPS
        reset()
        proc = run_cli(args, dict(env, CUDASWITCH_FAULT=f"interrupt@step:{n}"), cwd=cwd)
        if proc.returncode == 0:
            return n - 1
        one_line_error(proc, 130)
        after(n, proc)


def small_cudnn(folder: Path) -> Path:
    """NVIDIA's cuDNN 9 tarball layout cut to few members (the version header, two headers, every library the main
    one loads with its soname link, the main one's whole link chain), so that every step can be interrupted."""
    keep = ("include/cudnn.h", "include/cudnn_version.h", "include/cudnn_backend.h", "lib/libcudnn.so") + tuple(
        f"lib/lib{lib}.so.9{tail}" for lib in ca.LIBS_9 for tail in ("", ".10.2"))
    entries = [e for e in ca.linux_entries("9.10.2.21", "12") if e[1] == "dir" or e[0].endswith(keep)]
    folder.mkdir(parents=True, exist_ok=True)
    return ca.write_tar(folder / "cudnn-linux-x86_64-9.10.2.21_cuda12-archive.tar.xz", entries)


@pytest.fixture
def cudnn_case(linux_fs, tmp_path):
    """(fs, env, archive, toolkit, pristine copy): a toolkit with a hand-copied cudnn_backend.h of another cuDNN
    (the install overwrites it, so a backup is part of every run) and the small archive."""
    fs, env = linux_fs
    tk = fs / "usr/local/cuda-12.9"
    (tk / "include/cudnn_backend.h").write_bytes(b"/* cudnn_backend.h of cuDNN 8.9, copied by hand */\n")
    pristine = tmp_path / "pristine"
    shutil.copytree(fs, pristine, symlinks=True)
    return fs, env, small_cudnn(tmp_path / "archive"), tk, pristine


def tree(prefix: Path):
    """The environment's files byte for byte, less what holds the time of the run: the bytecode cache the hook
    check's Python leaves, and the state file's `time:` line (compared without it)."""
    out = {k: v for k, v in snap(prefix).items() if "__pycache__" not in k}
    state = prefix / "etc/cudaswitch/state.yaml"
    if state.is_file():
        out["etc/cudaswitch/state.yaml"] = [ln for ln in state.read_text().splitlines() if not ln.startswith("time:")]
    return out


def restore(fs: Path, pristine: Path) -> None:
    shutil.rmtree(fs)
    shutil.copytree(pristine, fs, symlinks=True)


def test_install_cudnn_interrupted_at_every_step(cudnn_case):
    fs, env, archive, tk, pristine = cudnn_case
    old = snap(fs)
    ok(run_cli(["install-cudnn", str(archive), "--yes"], env))
    new = snap(tk, skip=(".cudaswitch",))
    seen = {"old": 0, "new": 0}

    def after(n, proc):
        line = proc.stderr.strip()
        if snap(fs) == old:
            seen["old"] += 1
            assert line == "cudaswitch: error: interrupted", (n, line)
            # nothing is left for a later command to find: no journal, nothing "identical" to count
            assert "nothing to undo" in one_line_error(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env), 1)
            return
        assert snap(tk, skip=(".cudaswitch",)) == new, f"step {n}: neither the old tree nor the new one"
        seen["new"] += 1
        assert "interrupted after every file was in place: cuDNN 9.10.2 is installed in CUDA 12.9.1" in line, (n, line)
        assert "uninstall-cudnn --cuda" in line
        out = ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env)).stdout
        assert "Removed cuDNN 9.10.2.21" in out and "interrupted" not in out
        assert snap(fs) == old, f"step {n}: the undo did not bring the old tree back"

    steps = every_interrupt(["install-cudnn", str(archive), "--yes"], env, lambda: restore(fs, pristine), after)
    # staging each member, the commit and every move into place: the count grows with the archive
    assert steps >= 2 * 8 + 2 * 17 and seen["old"] and seen["new"], (steps, seen)


def test_uninstall_cudnn_interrupted_at_every_step(cudnn_case):
    fs, env, archive, tk, pristine = cudnn_case
    old = snap(fs)
    ok(run_cli(["install-cudnn", str(archive), "--yes"], env))
    installed = pristine.parent / "installed"
    shutil.copytree(fs, installed, symlinks=True)

    def after(n, proc):
        # held from the first restore to the last: always the whole undo, and said so
        assert "interrupted after the uninstall was complete: cuDNN 9.10.2.21 is removed from" in proc.stderr, n
        assert snap(fs) == old, f"step {n}"
        ok(run_cli(["install-cudnn", str(archive), "--yes"], env))  # and it installs again

    steps = every_interrupt(["uninstall-cudnn", "--cuda", "12.9"], env, lambda: restore(fs, installed), after)
    assert steps >= 3
    assert snap(fs) == old


@pytest.fixture
def switch_case(real_trees, clean_env, tmp_path):
    """An environment with a Python (so use writes the startup file too) switched to 11.8, and the CLI's env."""
    prefix = make_env(tmp_path / "envs" / "work")
    (prefix / "lib/python3.11/site-packages").mkdir(parents=True)
    (prefix / "bin").mkdir()
    (prefix / "bin/python3.11").write_bytes(b"")
    env = dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))
    return prefix, env, str(real_trees / "cuda-11.8"), str(real_trees / "cuda-12.9")


def test_use_interrupted_at_every_step(switch_case, tmp_path):
    prefix, env, tk_old, tk_new = switch_case
    ok(run_cli(["use", tk_old, "-p", str(prefix), "--no-smoke"], env))
    pristine = tmp_path / "pristine"
    shutil.copytree(prefix, pristine, symlinks=True)
    old = tree(prefix)
    ok(run_cli(["use", tk_new, "-p", str(prefix), "--no-smoke"], env))
    new = tree(prefix)

    def after(n, proc):
        assert tree(prefix) != old, f"step {n}: the switch was held, so it is complete"
        assert tree(prefix) == new, f"step {n}: neither the old switch nor the new one"
        assert "interrupted after the switch was written: environment work now uses CUDA 12.9" in proc.stderr
        assert f"root: {tk_new}" in (prefix / "etc/cudaswitch/state.yaml").read_text()
        off = ok(run_cli(["off", "-p", str(prefix)], env)).stdout  # and it undoes as any switch does
        assert "removed 10 hook files, the Python startup file and the state file." in off

    steps = every_interrupt(["use", tk_new, "-p", str(prefix), "--no-smoke"], env,
                            lambda: restore(prefix, pristine), after)
    assert steps >= 2 * 5 + 2  # every hook file (five shells, two directions), the startup file, the state file


def test_off_interrupted_at_every_step(switch_case, tmp_path):
    prefix, env, tk_old, _tk_new = switch_case
    old = tree(prefix)
    ok(run_cli(["use", tk_old, "-p", str(prefix), "--no-smoke"], env))
    pristine = tmp_path / "pristine"
    shutil.copytree(prefix, pristine, symlinks=True)

    def after(n, proc):
        assert "interrupted after the switch was removed: environment work is no longer switched" in proc.stderr
        assert tree(prefix) == old, f"step {n}: a hook or the state file was left"

    steps = every_interrupt(["off", "-p", str(prefix)], env, lambda: restore(prefix, pristine), after)
    assert steps >= 1 + 2 * 5  # the state file, then every hook file


def test_install_toolkit_interrupted_at_every_step(tmp_path, clean_env):
    import nvidia_wheels as nw

    for spec in nw.TOOLKIT_13_0:
        nw.wheel(spec)
    store = tmp_path / "store"
    dest = tmp_path / "apps" / "cuda-13.0"
    env = dict(clean_env, CUDASWITCH_TOOLKITS_DIR=str(store), PIP_NO_INDEX="1",
               PIP_FIND_LINKS=str(nw.cache_dir() / "wheels"))
    args = ["install-toolkit", "13.0", "-q", "--again", "--into", str(dest)]

    def listed():
        return [t["root"] for t in __import__("json").loads(run_cli(["list", "--json"], env=env).stdout)["toolkits"]
                if t["root"] == str(dest)]

    def reset():
        if dest.exists():
            ok(run_cli(["uninstall-toolkit", str(dest)], env))
        assert not os.path.lexists(dest) and not listed()

    def after(n, proc):
        if not os.path.lexists(dest):
            assert proc.stderr.strip() == "cudaswitch: error: interrupted", (n, proc.stderr)
            assert not listed(), f"step {n}: a toolkit that is not there is listed"
            assert not [p for p in dest.parent.iterdir() if ".partial-" in p.name] if dest.parent.exists() else True
            return
        assert "interrupted after CUDA 13.0.88 was in place: it is installed in" in proc.stderr, (n, proc.stderr)
        assert listed() == [str(dest)], f"step {n}: installed but not listed"

    steps = every_interrupt(args, env, reset, after)
    assert steps >= 3
