"""A real conda for the tests that are about conda.

Which conda: `CUDASWITCH_TEST_CONDA`, else `conda` on PATH. The variable may name
- a conda root prefix (a folder holding `bin/python` with conda importable): run as `<root>/bin/python -m conda`;
- a Python with conda importable (`.../bin/python`): run as `python -m conda`;
- a `conda` executable.
`python -m conda` is the form that works for a conda installed with pip, whose own `conda` script refuses most
commands. No package registry serves conda itself, so a machine without one skips these tests with that reason;
a user or CI that has conda runs them.

Tests get a `RealConda` from the `real_conda` fixture (conftest.py). Commands run with the classic solver and
offline: environments are created empty (`conda create -p PREFIX --offline --yes`), which is all the activation
tests need.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence


@dataclass
class RealConda:
    argv: List[str]  # how to start conda: ["/opt/conda/bin/conda"] or [python, "-m", "conda"]
    root: str  # conda's root prefix (base)

    def env(self, extra: Optional[Mapping[str, str]] = None, base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        env = dict(os.environ if base is None else base)
        env.setdefault("CONDA_SOLVER", "classic")
        env.setdefault("CONDA_NUMBER_CHANNEL_NOTICES", "0")
        env.update(extra or {})
        return env

    def run(self, args: Sequence[str], env: Optional[Mapping[str, str]] = None, check: bool = True,
            timeout: float = 300, base: Optional[Mapping[str, str]] = None, **kw) -> subprocess.CompletedProcess:
        """`base`: the environment `env` is added to, instead of os.environ (a scenario's whole environment)."""
        proc = subprocess.run([*self.argv, *args], env=self.env(env, base), capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, **kw)
        if check and proc.returncode != 0:
            raise AssertionError(f"conda {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return proc

    def info(self, env: Optional[Mapping[str, str]] = None) -> dict:
        return json.loads(self.run(["info", "--json"], env=env).stdout)

    def create(self, prefix: os.PathLike, env: Optional[Mapping[str, str]] = None) -> Path:
        """An empty environment at `prefix` (offline, nothing to download)."""
        self.run(["create", "-p", str(prefix), "--offline", "--yes", "--quiet"], env=env)
        return Path(prefix)

    def hook(self, shell: str, env: Optional[Mapping[str, str]] = None) -> str:
        """`conda shell.<shell> hook`: the text a user's rc file evaluates (bash, zsh, fish, tcsh, ...)."""
        return self.run([f"shell.{shell}", "hook"], env=env).stdout


def find_conda() -> Optional[RealConda]:
    import sys

    spec = os.environ.get("CUDASWITCH_TEST_CONDA")
    if spec:
        p = Path(spec)
        if p.is_dir():
            py = p / ("python.exe" if sys.platform == "win32" else "bin/python")
            argv = [str(py), "-m", "conda"]
        elif p.name.startswith("python"):
            argv = [str(p), "-m", "conda"]
        else:
            argv = [str(p)]
    else:
        exe = shutil.which("conda")
        if not exe:
            return None
        argv = [exe]
    try:
        out = subprocess.run([*argv, "info", "--base"], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "CONDA_SOLVER": "classic"}, stdin=subprocess.DEVNULL)
    except OSError:
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    return RealConda(argv=argv, root=out.stdout.strip().splitlines()[-1])


# ---- cudaswitch as conda's plugin ------------------------------------------------------------------------------

def plugin_site(base: Path) -> Path:
    """A folder that, on conda's PYTHONPATH, makes this checkout conda's `cudaswitch` plugin: a dist-info with the
    entry point pyproject.toml declares, and click and platformdirs (conda's Python lacks them). Shared by the tests
    of the plugin in every folder, so that each test file runs alone."""
    import click
    import platformdirs

    from cudaswitch import __version__

    repo = Path(__file__).resolve().parent.parent
    d = base / "site"
    info = d / f"cudaswitch-{__version__}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: cudaswitch\nVersion: {__version__}\n")
    text = (repo / "pyproject.toml").read_text()
    assert '[project.entry-points.conda]\ncudaswitch = "cudaswitch.conda_plugin"' in text
    (info / "entry_points.txt").write_text("[conda]\ncudaswitch = cudaswitch.conda_plugin\n")
    for mod in (click, platformdirs):
        (d / mod.__name__).symlink_to(Path(mod.__file__).parent)
    # the suite's hermetic seam inside conda's own process too: discovery's look into the machine's own places goes
    # where tests/seams.py points it (nowhere, unless a test is about this machine), not at its real /usr/local
    (d / "sitecustomize.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(repo / 'tests')!r})\n"
        "import seams\n"
        "from cudaswitch.core import system\n"
        "system.MACHINE_ROOT = seams.machine_root\n"
        "del sys.path[0]\n")
    return d


def plugin_prefix(base: Path, name: str = "p") -> Path:
    """An environment under base/envs with a Python 3.11 site-packages folder, for the plugin's checks."""
    from conftest import make_env

    p = make_env(base / "envs" / name)
    (p / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    return p

