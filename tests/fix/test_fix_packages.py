"""`doctor --fix` for NUMPY_ABI with real pip, real NumPy wheels from PyPI (1.26.4 and 2.1.3, cached in the test
cache) served by a local index laid out as the PyTorch index (tests/fix/torch_index.py), in an environment broken
as users break it: `pip install numpy` brought NumPy 2 under a torch 2.2 compiled for NumPy 1.

torch 2.2 cannot be installed here (its wheel is the CUDA build, 755 MB plus the NVIDIA wheels), so the torch of
the environment is a small package that behaves as torch 2.2 does under NumPy 2 -- NumPy's real message and the
ImportError (tests/fake_torch/texts.py) -- and under NumPy 1 hands over to the suite's real CPU torch, so the
re-check runs the real smoke test. The plan names numpy 2.1.3 -> 1.26.4 and the index; --yes installs it with the
environment's own pip; smoke then passes; `doctor --undo` gives NumPy 2.1.3 back without the network, every file
of it byte for byte (its RECORD hashes equal)."""

from __future__ import annotations

import base64
import csv
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import make_env, run_cli

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fake_torch"))
import envs  # noqa: E402
import nvidia_wheels  # noqa: E402
import texts  # noqa: E402
import torch_index  # noqa: E402
from test_fix_files import cli_env, fsroot, snapshot  # noqa: E402,F401  (fixtures)

TORCH_22 = '''"""torch 2.2 under NumPy 2, as a module compiled for NumPy 1 fails there; under NumPy 1, real torch."""
import importlib.util
import os
import sys

import numpy

if int(numpy.__version__.split(".")[0]) >= 2:
    sys.stderr.write({stderr!r})
    raise ImportError({error!r})
_spec = importlib.util.spec_from_file_location("torch", os.path.join({real!r}, "__init__.py"),
                                               submodule_search_locations=[{real!r}])
_mod = importlib.util.module_from_spec(_spec)
sys.modules["torch"] = _mod
_spec.loader.exec_module(_mod)
'''


def record_mismatches(site: Path, dist_info: str) -> list:
    """The files the RECORD lists whose content does not have the hash the RECORD gives (or that are missing)."""
    bad = []
    for row in csv.reader((site / dist_info / "RECORD").read_text().splitlines()):
        if len(row) < 2 or not row[1]:
            continue
        algo, _, want = row[1].partition("=")
        path = site / row[0]
        got = base64.urlsafe_b64encode(hashlib.new(algo, path.read_bytes()).digest()).rstrip(b"=").decode() \
            if path.is_file() else None
        if got != want:
            bad.append(row[0])
    return bad


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    wheels = [nvidia_wheels.wheel("numpy==1.26.4"), nvidia_wheels.wheel("numpy==2.1.3")]
    root = torch_index.lay_out(tmp_path_factory.mktemp("index"), {"cpu": wheels, "cu126": wheels})
    with torch_index.serving(root) as url:
        yield url


@pytest.fixture(scope="session")
def pip_template(tmp_path_factory, torch_env):
    """A conda-style environment with its own pip (ensurepip takes the longest of any step here, so it is made once
    and copied), and torch's own dependencies (typing_extensions, sympy ...) importable from the real torch's
    environment, without its torch."""
    prefix = envs.python_prefix(tmp_path_factory.mktemp("template"), "env")
    make_env(prefix)
    py = str(prefix / "bin" / "python")
    subprocess.run([py, "-I", "-m", "ensurepip", "--default-pip"], check=True, capture_output=True, cwd="/")
    deps = prefix.parent / "torch-deps"
    deps.mkdir()
    for entry in envs.site_packages(torch_env).iterdir():
        if entry.name != "torch" and not entry.name.startswith("torch-") and entry.suffix != ".pth":
            os.symlink(entry, deps / entry.name)
    (envs.site_packages(prefix) / "zz_torch_deps.pth").write_text(f"{deps}\n")
    return prefix


def pip_env(base: Path, name: str, template: Path) -> Path:
    """A copy of the template (its Python finds its prefix from where it lies; pip runs as `python -m pip`)."""
    import shutil

    prefix = Path(base) / name
    shutil.copytree(template, prefix, symlinks=True)
    return prefix


@pytest.fixture
def numpy2_env(tmp_path, index, torch_env, pip_template):
    prefix = pip_env(tmp_path / "envs", "old-torch", pip_template)
    py = str(prefix / "bin" / "python")
    # what the user did: `pip install numpy`, which took NumPy 2
    subprocess.run([py, "-I", "-m", "pip", "--isolated", "install", "--index-url", f"{index}/cpu", "numpy"],
                   check=True, capture_output=True, cwd="/")
    site = envs.site_packages(prefix)
    real = str(envs.site_packages(torch_env) / "torch")
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text(TORCH_22.format(stderr=texts.NUMPY_ABI_STDERR,
                                                                error=texts.NUMPY_ABI_ERROR, real=real))
    (site / "torch" / "version.py").write_text("__version__ = '2.2.2+cpu'\ncuda = None\n")
    dist = site / "torch-2.2.2+cpu.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.2.2+cpu\n")
    (dist / "INSTALLER").write_text("pip\n")
    return prefix


def test_numpy2_under_old_torch(numpy2_env, cli_env, index):
    env = dict(cli_env, CUDASWITCH_TORCH_INDEX=index)
    site = envs.site_packages(numpy2_env)
    assert (site / "numpy-2.1.3.dist-info").is_dir()
    # right after pip installs it, the odd compiled file already differs from its RECORD hash (here numpy/distutils
    # conv_template.pyc): undo must give back exactly this state
    as_installed = record_mismatches(site, "numpy-2.1.3.dist-info")
    assert all(p.endswith(".pyc") for p in as_installed) and len(as_installed) < 3
    broken = snapshot(numpy2_env)
    plan = run_cli(["doctor", "-p", numpy2_env, "--fix", "--dry-run"], env)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert " 1. NUMPY_ABI: " in plan.stdout
    assert "package numpy: 2.1.3 -> 1.26.4" in plan.stdout and f"from the index {index}/cpu" in plan.stdout
    assert f"-m pip install numpy==1.26.4 --no-deps --index-url {index}/cpu" in plan.stdout
    assert snapshot(numpy2_env) == broken
    r = run_cli(["doctor", "-p", numpy2_env, "--fix", "--yes"], env)
    assert "step 1 cleared NUMPY_ABI" in r.stdout, r.stdout + r.stderr
    assert (site / "numpy-1.26.4.dist-info").is_dir() and not (site / "numpy-2.1.3.dist-info").exists()
    smoke = run_cli(["smoke", "-p", numpy2_env, "--cpu-ok"], env)
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    # undo with the index gone: nothing is downloaded
    u = run_cli(["doctor", "-p", numpy2_env, "--undo"], dict(env, CUDASWITCH_TORCH_INDEX="http://127.0.0.1:9/whl"))
    assert "Put back" in u.stdout, u.stdout + u.stderr
    assert snapshot(numpy2_env) == broken
    assert record_mismatches(site, "numpy-2.1.3.dist-info") == as_installed
    assert not (site / "numpy-1.26.4.dist-info").exists()


@pytest.mark.parametrize("point", ["fix-step:1", "fix-commit:1"])
def test_killed_before_or_after_pip_then_undone(numpy2_env, cli_env, index, point):
    """SIGKILL before pip starts and after it has installed NumPy 1 (the journal still `pending`): the next --fix
    names the interrupted one, and --undo gives NumPy 2.1.3 back as it was, without the index."""
    env = dict(cli_env, CUDASWITCH_TORCH_INDEX=index)
    site = envs.site_packages(numpy2_env)
    broken = snapshot(numpy2_env)
    killed = run_cli(["doctor", "-p", numpy2_env, "--fix", "--yes"], dict(env, CUDASWITCH_FAULT=f"kill@{point}"))
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert (site / "numpy-1.26.4.dist-info").is_dir() == (point == "fix-commit:1")
    again = run_cli(["doctor", "-p", numpy2_env, "--fix", "--yes"], env)
    assert again.returncode == 2 and "was interrupted" in again.stderr
    u = run_cli(["doctor", "-p", numpy2_env, "--undo"], dict(env, CUDASWITCH_TORCH_INDEX="http://127.0.0.1:9/whl"))
    assert "Put back" in u.stdout, u.stdout + u.stderr
    journal_dir = str(numpy2_env / "etc" / "cudaswitch" / "fix")
    assert {p: v for p, v in snapshot(numpy2_env).items() if not p.startswith(journal_dir)} == broken


@pytest.mark.parametrize("point", ["uninstalled:1", "writing:300"])
def test_killed_inside_pip_then_undone(numpy2_env, cli_env, index, point):
    """SIGKILL of cudaswitch and pip together inside pip's own work (tests/fix/pip_kill.py): after it moved NumPy 2
    aside, and half-way through the 300th file of NumPy 1 (whose files and numpy.libs names NumPy 2 lacks). --undo
    gives NumPy 2.1.3 back byte for byte, RECORD hashes as before, nothing of NumPy 1's half-written files left."""
    import pip_kill

    env = dict(cli_env, CUDASWITCH_TORCH_INDEX=index)
    site = envs.site_packages(numpy2_env)
    name, n = point.split(":")
    pip_kill.arm(site, name, int(n))
    broken = snapshot(numpy2_env)
    as_installed = record_mismatches(site, "numpy-2.1.3.dist-info")
    killed = run_cli(["doctor", "-p", numpy2_env, "--fix", "--yes"], env, process=True)  # pip kills this process
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert not (site / "numpy-2.1.3.dist-info").exists() and not (site / "numpy-1.26.4.dist-info").exists()
    again = run_cli(["doctor", "-p", numpy2_env, "--fix", "--yes"], env)
    assert again.returncode == 2 and "was interrupted" in again.stderr
    u = run_cli(["doctor", "-p", numpy2_env, "--undo"], dict(env, CUDASWITCH_TORCH_INDEX="http://127.0.0.1:9/whl"))
    assert "Put back" in u.stdout, u.stdout + u.stderr
    assert snapshot(numpy2_env) == broken
    assert record_mismatches(site, "numpy-2.1.3.dist-info") == as_installed
