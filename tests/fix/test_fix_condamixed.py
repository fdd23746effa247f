"""`doctor --fix` for TORCH_MIXED_INSTALL with conda's pytorch and a pip torch in the environment itself, built as
users build it: `conda install pytorch`, then `pip install torch` over it (pip overwrites the files both list).

* With a stand-in conda (CONDA_EXE, a script doing what `conda remove --force -p PREFIX NAME` does to the files:
  every file the record lists, then the record, and a line in conda-meta/history) fed a record laid out as conda
  writes one (files, paths_data with sha256, extracted_package_dir in the package cache): the plan text, both
  ways, the journal, an interrupt before and after the removal, undo byte for byte.
* With the real conda (CUDASWITCH_TEST_CONDA): the conda side is a real package built here (conda has no channel
  on this machine) and installed by conda from that file; real pip puts the wheel over it; real `conda remove`."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from conftest import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fake_torch"))
import envs  # noqa: E402
import torch_index  # noqa: E402
from test_fix_files import cli_env, fsroot, snapshot  # noqa: E402,F401  (fixtures)
from test_fix_packages import pip_env, pip_template  # noqa: E402,F401  (fixtures)
from test_fix_torch import TORCH  # noqa: E402

CONDA_VERSION, CONDA_BUILD = "2.11.0", "cpu_py_0"
PIP_VERSION = "2.12.1+cpu"

FAKE_CONDA = '''#!{python}
"""What `conda remove --force -p PREFIX NAME` does to an environment's files (a stand-in; the real conda is
tests/fix/test_fix_condamixed.py's last test)."""
import json, os, sys
args = sys.argv[1:]
assert args[0] == "remove" and "--force" in args, args
prefix, name = args[args.index("-p") + 1], args[-1]
meta = os.path.join(prefix, "conda-meta")
for n in os.listdir(meta):
    if n.startswith(name + "-") and n.endswith(".json"):
        rec = json.load(open(os.path.join(meta, n)))
        for f in rec["files"]:
            p = os.path.join(prefix, f)
            if os.path.lexists(p):
                os.unlink(p)
        os.unlink(os.path.join(meta, n))
        with open(os.path.join(meta, "history"), "a") as h:
            h.write("==> 2026-12-02 04:00:00 <==\\n# cmd: conda remove --force\\n-defaults/noarch::%s-%s-%s\\n"
                    % (rec["name"], rec["version"], rec["build"]))
'''


def conda_payload(torch_env) -> dict:
    real = str(envs.site_packages(torch_env) / "torch")
    return {"torch/__init__.py": TORCH.format(version=CONDA_VERSION, real=real, cuda=None),
            "torch/version.py": f"__version__ = {CONDA_VERSION!r}\ncuda = None\n",
            "torch/_conda_only.py": "# only conda's pytorch has this file\n"}


def pip_wheel(folder: Path, torch_env) -> Path:
    real = str(envs.site_packages(torch_env) / "torch")
    return torch_index.shaped_wheel(folder, "torch", PIP_VERSION, {
        "torch/__init__.py": TORCH.format(version=PIP_VERSION, real=real, cuda=None),
        "torch/version.py": f"__version__ = {PIP_VERSION!r}\ncuda = None\n",
        "torch/_pip_only.py": "# only pip's torch has this file\n"})


def conda_install_by_hand(prefix: Path, pkgs: Path, payload: dict) -> Path:
    """conda's install of pytorch, as it leaves the files: the package extracted in the cache, its files linked
    into the environment, and conda-meta/<name>-<version>-<build>.json listing them with their sha256."""
    site_rel = os.path.relpath(envs.site_packages(prefix), prefix)
    extracted = pkgs / f"pytorch-{CONDA_VERSION}-{CONDA_BUILD}"
    files, paths = [], []
    for rel, text in payload.items():
        path = f"{site_rel}/{rel}"
        for top in (extracted, prefix):
            (top / path).parent.mkdir(parents=True, exist_ok=True)
            (top / path).write_text(text)
        files.append(path)
        paths.append({"_path": path, "path_type": "hardlink", "sha256": hashlib.sha256(text.encode()).hexdigest(),
                      "size_in_bytes": len(text.encode())})
    record = {"build": CONDA_BUILD, "build_number": 0, "channel": "https://conda.anaconda.org/pytorch/linux-64",
              "constrains": [], "depends": [], "extracted_package_dir": str(extracted),
              "files": files, "fn": f"pytorch-{CONDA_VERSION}-{CONDA_BUILD}.tar.bz2",
              "license": "BSD 3-Clause", "link": {"source": str(extracted), "type": 1}, "name": "pytorch",
              "paths_data": {"paths": paths, "paths_version": 1}, "requested_spec": "pytorch",
              "subdir": "linux-64", "url": f"https://conda.anaconda.org/pytorch/linux-64/pytorch-{CONDA_VERSION}-"
                                           f"{CONDA_BUILD}.tar.bz2", "version": CONDA_VERSION}
    meta = prefix / "conda-meta" / f"pytorch-{CONDA_VERSION}-{CONDA_BUILD}.json"
    meta.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return meta


def pip_over(prefix: Path, wheel: Path) -> None:
    """What the user typed next: `pip install torch` over conda's."""
    subprocess.run([str(prefix / "bin" / "python"), "-I", "-m", "pip", "--isolated", "install", "--no-deps",
                    "--no-index", str(wheel)], check=True, capture_output=True, cwd="/")


@pytest.fixture
def mixed(tmp_path, pip_template, torch_env, cli_env):
    """(prefix, CLI environment, package cache) for conda's pytorch 2.11.0 with pip's torch 2.12.1+cpu over it."""
    prefix = pip_env(tmp_path / "envs", "mixed", pip_template)
    pkgs = tmp_path / "pkgs"
    conda_install_by_hand(prefix, pkgs, conda_payload(torch_env))
    pip_over(prefix, pip_wheel(tmp_path / "wheels", torch_env))
    conda = tmp_path / "conda-root" / "bin" / "conda"
    conda.parent.mkdir(parents=True)
    conda.write_text(FAKE_CONDA.format(python=sys.executable))
    conda.chmod(0o755)
    return prefix, dict(cli_env, CONDA_EXE=str(conda)), pkgs


def test_the_plan_names_both_torches_and_its_default(mixed):
    prefix, env, pkgs = mixed
    broken = snapshot(prefix, pkgs)
    r = run_cli(["doctor", "-p", prefix, "--fix", "TORCH_MIXED_INSTALL", "--dry-run"], env)
    out = r.stdout
    assert " 1. TORCH_MIXED_INSTALL: torch is installed by conda (pytorch 2.11.0" in out, out + r.stderr
    assert ("default conda: Python imports pip's torch now (torch/version.py says 2.12.1+cpu), so removing the "
            "other changes the least of what runs") in out
    assert ("package pytorch (conda, https://conda.anaconda.org/pytorch/linux-64): 2.11.0 cpu_py_0 -> removed"
            in out)
    assert "package torch (pip, " in out and "): 2.12.1+cpu -> kept" in out
    assert "2 file(s) of pip's torch that conda's record also lists put back as pip wrote them" in out
    assert f"same as: conda remove --force --offline --yes -p {prefix} pytorch" in out
    assert (f"by hand, conda's removal takes pip's shared files with it: follow it with {prefix}/bin/python -m pip "
            "install --force-reinstall --no-deps torch==2.12.1+cpu --index-url https://download.pytorch.org/whl/cpu"
            in out), out
    assert "[chosen] conda: remove conda's pytorch 2.11.0 cpu_py_0" in out
    assert "[or] pip: remove pip's torch 2.12.1+cpu" in out
    assert snapshot(prefix, pkgs) == broken


def test_the_default_removes_condas_record_and_keeps_pips_torch_whole(mixed):
    prefix, env, pkgs = mixed
    site = envs.site_packages(prefix)
    broken = snapshot(prefix, pkgs)
    pip_bytes = (site / "torch" / "__init__.py").read_bytes()
    r = run_cli(["doctor", "-p", prefix, "--fix", "TORCH_MIXED_INSTALL", "--yes"], env)
    assert "step 1 cleared TORCH_MIXED_INSTALL" in r.stdout, r.stdout + r.stderr
    assert not list((prefix / "conda-meta").glob("pytorch-*.json"))
    assert not (site / "torch" / "_conda_only.py").exists()
    assert (site / "torch" / "__init__.py").read_bytes() == pip_bytes
    assert (site / "torch" / "version.py").read_text() == f"__version__ = {PIP_VERSION!r}\ncuda = None\n"
    assert (site / "torch" / "_pip_only.py").exists()
    journal = json.loads((prefix / "etc" / "cudaswitch" / "fix" / "journal.json").read_text())
    kept = {f["path"] for f in journal["files"] if f["blob"]}
    assert str(prefix / "conda-meta" / f"pytorch-{CONDA_VERSION}-{CONDA_BUILD}.json") in kept
    assert str(prefix / "conda-meta" / "history") in kept
    assert str(site / "torch" / "_conda_only.py") in kept
    u = run_cli(["doctor", "-p", prefix, "--undo"], env)
    assert "Put back" in u.stdout, u.stdout + u.stderr
    assert snapshot(prefix, pkgs) == broken


def test_the_other_way_pip_removes_its_torch_and_condas_files_come_back_from_the_cache(mixed):
    from test_fix_torch import run_in_terminal
    import pty

    prefix, env, pkgs = mixed
    site = envs.site_packages(prefix)
    broken = snapshot(prefix, pkgs)
    out = run_in_terminal(["doctor", "-p", str(prefix), "--fix", "TORCH_MIXED_INSTALL"], env, ["pip", "y"], pty)
    assert "Step 1: which way?" in out and "[chosen] pip: remove pip's torch" in out, out
    assert (f"follow it with conda install --offline --force-reinstall --no-deps --yes -p {prefix} "
            "pytorch==2.11.0=cpu_py_0" in out), out
    assert "step 1 cleared TORCH_MIXED_INSTALL" in out, out
    assert not list(site.glob("torch-*.dist-info")) and not (site / "torch" / "_pip_only.py").exists()
    assert (site / "torch" / "version.py").read_text() == f"__version__ = {CONDA_VERSION!r}\ncuda = None\n"
    assert (site / "torch" / "_conda_only.py").exists()
    assert list((prefix / "conda-meta").glob("pytorch-*.json"))
    u = run_cli(["doctor", "-p", prefix, "--undo"], env)
    assert "Put back" in u.stdout, u.stdout + u.stderr
    assert snapshot(prefix, pkgs) == broken


def test_a_cache_without_condas_bytes_offers_only_the_default(mixed):
    prefix, env, pkgs = mixed
    for f in pkgs.rglob("version.py"):
        f.write_text("# not what conda's record hashed\n")
    r = run_cli(["doctor", "-p", prefix, "--fix", "TORCH_MIXED_INSTALL", "--dry-run"], env)
    assert "[chosen] conda:" in r.stdout and "[or] pip:" not in r.stdout, r.stdout
    assert "conda's package cache does not hold every shared file" in r.stdout


def test_neither_side_in_place_stays_advice(mixed):
    """torch/version.py names neither version (a third install wrote it): no safe default, nothing changed."""
    prefix, env, pkgs = mixed
    (envs.site_packages(prefix) / "torch" / "version.py").write_text("__version__ = '2.9.0'\ncuda = None\n")
    r = run_cli(["doctor", "-p", prefix, "--fix", "TORCH_MIXED_INSTALL", "--dry-run"], env)
    assert " 1. " not in r.stdout and " - TORCH_MIXED_INSTALL: torch is installed by conda" in r.stdout, r.stdout


@pytest.mark.parametrize("point", ["fix-step:1", "fix-removed:1", "fix-commit:1"])
def test_killed_before_or_after_the_removal_then_undone(mixed, point):
    """SIGKILL before conda starts, after conda removed its record (pip's shared files not yet put back), and after
    the step: the next --fix names the interrupted one, and --undo gives both torches back as they were."""
    prefix, env, pkgs = mixed
    broken = snapshot(prefix, pkgs)
    killed = run_cli(["doctor", "-p", prefix, "--fix", "TORCH_MIXED_INSTALL", "--yes"],
                     dict(env, CUDASWITCH_FAULT=f"kill@{point}"))
    assert killed.returncode == -9, killed.stdout + killed.stderr
    record = prefix / "conda-meta" / f"pytorch-{CONDA_VERSION}-{CONDA_BUILD}.json"
    assert record.exists() == (point == "fix-step:1")
    again = run_cli(["doctor", "-p", prefix, "--fix", "--yes"], env)
    assert again.returncode == 2 and "was interrupted" in again.stderr, again.stdout + again.stderr
    u = run_cli(["doctor", "-p", prefix, "--undo"], env)
    assert "Put back" in u.stdout, u.stdout + u.stderr
    journal_dir = str(prefix / "etc" / "cudaswitch" / "fix")
    assert {p: v for p, v in snapshot(prefix, pkgs).items() if not p.startswith(journal_dir)} == broken


# ---- the real conda ---------------------------------------------------------------------------------------------

def conda_package(folder: Path, prefix: Path, payload: dict) -> Path:
    """A real conda package file (.tar.bz2: info/index.json, info/files, info/paths.json, the payload) for this
    environment's Python's site-packages: conda installs it from the file, no channel needed."""
    site_rel = os.path.relpath(envs.site_packages(prefix), prefix)
    members = {f"{site_rel}/{rel}": text.encode() for rel, text in payload.items()}
    index = {"name": "pytorch", "version": CONDA_VERSION, "build": CONDA_BUILD, "build_number": 0, "depends": [],
             "license": "BSD-3-Clause", "subdir": "linux-64", "arch": "x86_64", "platform": "linux"}
    paths = {"paths": [{"_path": p, "path_type": "hardlink", "sha256": hashlib.sha256(b).hexdigest(),
                        "size_in_bytes": len(b)} for p, b in members.items()], "paths_version": 1}
    members["info/index.json"] = json.dumps(index).encode()
    members["info/files"] = ("\n".join(p for p in members if not p.startswith("info/")) + "\n").encode()
    members["info/paths.json"] = json.dumps(paths).encode()
    path = folder / f"pytorch-{CONDA_VERSION}-{CONDA_BUILD}.tar.bz2"
    folder.mkdir(parents=True, exist_ok=True)
    import io

    with tarfile.open(path, "w:bz2") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tf.addfile(info, io.BytesIO(data))
    return path


def test_with_the_real_conda(tmp_path, pip_template, torch_env, cli_env, real_conda):
    prefix = pip_env(tmp_path / "envs", "mixed", pip_template)
    pkgs = tmp_path / "pkgs"
    conda_env = dict(cli_env, CONDA_PKGS_DIRS=str(pkgs), CONDA_SOLVER="classic", CONDA_NUMBER_CHANNEL_NOTICES="0",
                     CONDA_PKGS_DIRS_ONLY="1", PATH=os.environ.get("PATH", "/usr/bin:/bin"))
    package = conda_package(tmp_path / "channel", prefix, conda_payload(torch_env))
    real_conda.run(["install", "--offline", "--yes", "-p", str(prefix), str(package)], env=conda_env)
    record = prefix / "conda-meta" / f"pytorch-{CONDA_VERSION}-{CONDA_BUILD}.json"
    assert record.exists()
    pip_over(prefix, pip_wheel(tmp_path / "wheels", torch_env))
    site = envs.site_packages(prefix)
    broken = snapshot(prefix)
    pip_bytes = (site / "torch" / "__init__.py").read_bytes()
    env = dict(cli_env, CONDA_PKGS_DIRS=str(pkgs), CONDA_SOLVER="classic",
               CONDA_EXE=str(Path(real_conda.root) / "bin" / "conda"))
    plan = run_cli(["doctor", "-p", prefix, "--fix", "TORCH_MIXED_INSTALL", "--dry-run"], env)
    assert "[chosen] conda: remove conda's pytorch 2.11.0 cpu_py_0" in plan.stdout, plan.stdout + plan.stderr
    assert "[or] pip:" in plan.stdout, plan.stdout  # conda's cache holds the package's files
    assert f"package pytorch (conda, file://{package}): 2.11.0 cpu_py_0 -> removed" in plan.stdout, plan.stdout
    r = run_cli(["doctor", "-p", prefix, "--fix", "TORCH_MIXED_INSTALL", "--yes"], env)
    assert "step 1 cleared TORCH_MIXED_INSTALL" in r.stdout, r.stdout + r.stderr
    assert not record.exists() and not (site / "torch" / "_conda_only.py").exists()
    assert (site / "torch" / "__init__.py").read_bytes() == pip_bytes
    listed = real_conda.run(["list", "-p", str(prefix), "--json"], env=conda_env)
    assert "pytorch" not in {p["name"] for p in json.loads(listed.stdout)}
    u = run_cli(["doctor", "-p", prefix, "--undo"], env)
    assert "Put back" in u.stdout, u.stdout + u.stderr
    assert snapshot(prefix) == broken
    listed = real_conda.run(["list", "-p", str(prefix), "--json"], env=conda_env)
    assert "pytorch" in {p["name"] for p in json.loads(listed.stdout)}


def test_a_cache_file_changed_after_the_plan_is_not_put_back(tmp_path):
    """The pip way checks each cached file against conda's sha256 again when it copies it."""
    from cudaswitch.core.errors import CudaswitchError
    from cudaswitch.fix.condamixed import _put_back_from_cache

    prefix, cache = tmp_path / "env", tmp_path / "cache"
    (cache / "torch").mkdir(parents=True)
    (cache / "torch" / "version.py").write_text("__version__ = '2.11.0'\n")
    target = str(prefix / "torch" / "version.py")
    good = hashlib.sha256(b"__version__ = '2.11.0'\n").hexdigest()
    _put_back_from_cache(str(prefix), str(cache), [target], {target: good})
    assert Path(target).read_text() == "__version__ = '2.11.0'\n"
    Path(target).unlink()
    (cache / "torch" / "version.py").write_text("changed\n")
    with pytest.raises(CudaswitchError, match="is not the file conda's record hashed"):
        _put_back_from_cache(str(prefix), str(cache), [target], {target: good})
    assert not Path(target).exists()


def test_condas_files_in_place_pip_goes_and_condas_shared_files_come_back_from_the_journal(mixed, torch_env):
    """conda installed last (its files over pip's): the only way offered removes pip's torch; the shared files
    then hold conda's bytes again, from the journal's copies (the cache is not needed)."""
    prefix, env, pkgs = mixed
    site = envs.site_packages(prefix)
    for rel, text in conda_payload(torch_env).items():
        (site / rel).write_text(text)
    import shutil

    shutil.rmtree(pkgs)  # no cache at all
    broken = snapshot(prefix)
    plan = run_cli(["doctor", "-p", prefix, "--fix", "TORCH_MIXED_INSTALL", "--dry-run"], env)
    assert "default pip: Python imports conda's torch now (torch/version.py says 2.11.0)" in plan.stdout, plan.stdout
    assert "[chosen] pip:" in plan.stdout and "[or] conda:" not in plan.stdout
    assert "the other way (removing conda's pytorch) is not offered" in plan.stdout
    r = run_cli(["doctor", "-p", prefix, "--fix", "TORCH_MIXED_INSTALL", "--yes"], env)
    assert "step 1 cleared TORCH_MIXED_INSTALL" in r.stdout, r.stdout + r.stderr
    for rel, text in conda_payload(torch_env).items():
        assert (site / rel).read_text() == text
    assert not list(site.glob("torch-*.dist-info")) and not (site / "torch" / "_pip_only.py").exists()
    u = run_cli(["doctor", "-p", prefix, "--undo"], env)
    assert "Put back" in u.stdout, u.stdout + u.stderr
    assert snapshot(prefix) == broken
