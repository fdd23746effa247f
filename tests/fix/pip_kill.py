"""SIGKILL inside the real pip, at a named point of its own work, for the interrupt tests of `doctor --fix`'s pip
steps. cudaswitch starts pip as `python -I -m pip` with only a few variables passed on, so neither PYTHONPATH nor a
sitecustomize reaches it; a `.pth` file in the environment's own site-packages does (`-I` still reads those), and
it is written only into a test's throwaway environment by `arm`.

The `.pth` imports this file (copied beside it) and puts an import hook in front of pip's own modules; the hook
wraps, in the pip process only, one of:

* `uninstalled:N` -- after the N-th `UninstallPathSet.remove` returned (pip has moved the old distribution's
  files aside, the new one is not in yet);
* `installed:N` -- after the N-th `InstallRequirement.install` returned (that distribution is in, the ones after
  it are still the old ones; pip has not yet deleted the old one it moved aside);
* `writing:N` -- half-way through writing the N-th file of a wheel (`shutil.copyfileobj` in pip's wheel
  installer: half the file's bytes are on disk, flushed, the rest never comes).

There the pip process kills its parent (cudaswitch, as an interrupt of the whole command would: only after
checking that the parent is the suite's CLI, `tests/seams.py`) and then itself, both with SIGKILL, so nothing of
either runs after the point; `alone` kills only pip, so cudaswitch sees pip die and puts things back itself. No
timing is involved: the point is reached by pip's own code path, counted."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import shutil
import signal
import sys
from pathlib import Path

MODULE = "_cudaswitch_test_pip_kill"


def arm(site: Path, point: str, n: int, alone: bool = False) -> None:
    """Make every pip started from the environment of `site` die at `point`'s `n`-th arrival."""
    shutil.copyfile(__file__, site / f"{MODULE}.py")
    (site / f"{MODULE}.pth").write_text(f"import {MODULE}; {MODULE}.install({point!r}, {n}, {alone!r})\n")


def _die(alone: bool) -> None:
    sys.stdout.flush()
    if not alone:
        parent = os.getppid()
        with open(f"/proc/{parent}/cmdline", "rb") as f:
            cmdline = f.read().split(b"\0")
        if any(arg.endswith(b"seams.py") for arg in cmdline):
            os.kill(parent, signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


class _Count:
    def __init__(self, n: int, alone: bool):
        self.n, self.alone, self.seen = n, alone, 0

    def arrive(self) -> bool:
        self.seen += 1
        return self.seen == self.n


def _after(cls, method: str, count: _Count) -> None:
    original = getattr(cls, method)

    def wrapped(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        if count.arrive():
            _die(count.alone)
        return result

    setattr(cls, method, wrapped)


def _half_way(module, count: _Count) -> None:
    """`shutil` as the wheel installer sees it, whose copyfileobj stops half-way through the n-th file."""
    real = module.shutil

    class _Shutil:
        def __getattr__(self, name):
            return getattr(real, name)

        @staticmethod
        def copyfileobj(src, dst, *args, **kwargs):
            if not count.arrive():
                return real.copyfileobj(src, dst, *args, **kwargs)
            data = src.read()
            dst.write(data[: max(1, len(data) // 2)])
            dst.flush()
            _die(count.alone)

    module.shutil = _Shutil()


def install(point: str, n: int, alone: bool) -> None:
    count = _Count(n, alone)
    patches = {
        "uninstalled": ("pip._internal.req.req_uninstall", lambda m: _after(m.UninstallPathSet, "remove", count)),
        "installed": ("pip._internal.req.req_install", lambda m: _after(m.InstallRequirement, "install", count)),
        "writing": ("pip._internal.operations.install.wheel", lambda m: _half_way(m, count)),
    }
    target, patch = patches[point]

    class _Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target_=None):
            if name != target:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None:
                return None
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                patch(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _Finder())
