"""Environment resolution equals the real conda's: `conda info --json` (envs_dirs, envs) and what
`conda activate NAME` activates, for condarc files in each place conda reads, env vars and clashing names.

Each case runs in an isolated HOME (no CONDARC, XDG_CONFIG_HOME or CONDA_* from the caller), so nothing is written
to the user's own ~/.conda. Environments are made the way conda recognises them (conda-meta/history), plus one
real `conda create` per run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, make_env, one_line_error, run_cli

PROBE = """
import json, sys
from cudaswitch.core.system import System
from cudaswitch.discovery import condaenvs
s = System.current()
lay = condaenvs.layout(s)
names = sys.argv[1:]
print(json.dumps({"envs_dirs": lay.envs_dirs, "config_files": lay.config_files, "envs": condaenvs.known_prefixes(s), "source": lay.source,
                  "root": lay.root_prefix, "located": {n: condaenvs.locate(n, s, lay) for n in names}}))
"""


_HISTORY = "==> 2026-01-01 00:00:00 <==\n# cmd: conda create\n"


@pytest.fixture
def world(tmp_path, real_conda):
    home = tmp_path / "home"
    home.mkdir()
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("CONDA_", "_CONDA", "CUDASWITCH_")) and k not in ("CONDARC", "XDG_CONFIG_HOME")}
    base.update(HOME=str(home), CONDA_SOLVER="classic", CONDA_NUMBER_CHANNEL_NOTICES="0",
                CONDA_EXE=os.path.join(real_conda.root, "bin", "conda"))  # what conda's shell hook exports
    return tmp_path, home, base


def _conda_view(real_conda, env, names):
    info = real_conda.run(["info", "--json"], env=env)
    data = json.loads(info.stdout)
    activated = {}
    for n in names:
        proc = real_conda.run(["shell.posix", "activate", n], env=env, check=False)
        m = re.search(r"^export CONDA_PREFIX='([^']*)'", proc.stdout, re.M)
        activated[n] = m.group(1) if (proc.returncode == 0 and m) else None
    return data, sorted(data["envs"]), activated


def _ours(env, names, python=None):
    env = dict(env)
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run([python or sys.executable, "-c", PROBE, *names], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _mine(envs, env):
    """Run as root, conda also lists every other user's ~/.conda/environments.txt (envs_manager.is_admin), which
    other test runs on this machine change concurrently: compare the environments this test made, and the root."""
    tmp = str(Path(env["HOME"]).parent)
    return sorted(e for e in envs if e.startswith(tmp + os.sep) or e == env["_ROOT"])


def _check(real_conda, env, names):
    env = {**env, "_ROOT": real_conda.root}
    info, envs, activated = _conda_view(real_conda, env, names)
    ours = _ours(env, names)
    assert ours["envs_dirs"] == info["envs_dirs"]
    assert ours["config_files"] == info["config_files"]
    assert _mine(ours["envs"], env) == _mine(envs, env)
    assert real_conda.root in ours["envs"]
    assert ours["located"] == activated
    return ours, activated


def test_condarc_in_every_user_location(world, real_conda):
    tmp, home, env = world
    xdg = tmp / "xdg"
    places = {
        "home_condarc": home / ".condarc",
        "config_conda": home / ".config" / "conda" / "condarc",
        "dot_conda_d": home / ".conda" / "condarc.d" / "10-envs.yml",
        "xdg": xdg / "conda" / ".condarc",
        "condarc_var": tmp / "custom-rc.yaml",
        "conda_root": tmp / "croot" / "condarc.d" / "site.yaml",
    }
    for key, rc in places.items():
        rc.parent.mkdir(parents=True, exist_ok=True)
        d = tmp / f"envs-{key}"
        make_env(d / f"only-{key}", history=_HISTORY)
        rc.write_text(f"# set by the lab admin\nenvs_dirs:\n  - {d}\n")
    env.update(XDG_CONFIG_HOME=str(xdg), CONDARC=str(places["condarc_var"]), CONDA_ROOT=str(tmp / "croot"))
    ours, activated = _check(real_conda, env, [f"only-{k}" for k in places] + ["base", "missing"])
    assert all(activated[f"only-{k}"] for k in places), activated  # conda finds each; so must we
    assert activated["missing"] is None


def test_env_vars_name_in_two_dirs_and_environments_txt(world, real_conda):
    tmp, home, env = world
    first, second = tmp / "first", tmp / "second"
    make_env(first / "twin", history=_HISTORY)
    make_env(second / "twin", history=_HISTORY)
    make_env(second / "solo", history=_HISTORY)
    elsewhere = make_env(tmp / "anywhere" / "recorded", history=_HISTORY)
    (home / ".conda").mkdir()
    (home / ".conda" / "environments.txt").write_text(f"{elsewhere}\n{tmp / 'gone'}\n")
    (home / ".condarc").write_text(f"envs_dirs: [{second}]\n")
    env["CONDA_ENVS_DIRS"] = str(first)  # beats every condarc
    ours, activated = _check(real_conda, env, ["twin", "solo"])
    assert activated["twin"] == str(first / "twin")
    assert str(tmp / "gone") not in ours["envs"]
    # run as root, conda reads every user's environments.txt from the password database, not $HOME's
    assert (str(elsewhere) in ours["envs"]) == (os.geteuid() != 0)


def test_active_prefix_condarc_and_precedence_flags(world, real_conda):
    tmp, home, env = world
    active = make_env(tmp / "active", history=_HISTORY)
    a, b, c = tmp / "a", tmp / "b", tmp / "c"
    for d in (a, b, c):
        make_env(d / "x", history=_HISTORY)
    (active / ".condarc").write_text(f"envs_dirs:\n  - {b}\n  - {c}  #!bottom\n")
    (home / ".condarc").write_text(f"envs_dirs:  #!final\n  - {a}\n")  # final: later files are ignored
    env["CONDA_PREFIX"] = str(active)
    _check(real_conda, env, ["x"])
    (home / ".condarc").write_text(f"envs_dirs:\n  - {a}\n  - ~/mine\n  - $HOME/theirs\n")
    _check(real_conda, env, ["x"])


def test_real_conda_create_is_found_by_name_and_listed(world, real_conda):
    tmp, home, env = world
    envs = tmp / "lab envs"
    (home / ".condarc").write_text(f"envs_dirs:\n  - {envs}\n")
    real_conda.run(["create", "-n", "e2", "--offline", "--yes", "--quiet"], env=env)
    assert (envs / "e2" / "conda-meta").is_dir()
    ours, activated = _check(real_conda, env, ["e2"])
    assert activated["e2"] == str(envs / "e2")
    # the command the issue reported: `cudaswitch use 12.9 -n e2` said "no conda environment named 'e2'"
    proc = run_cli(["off", "-n", "e2"], env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"Environment e2 ({envs / 'e2'})" in proc.stdout


def test_inside_condas_python_conda_answers_and_agrees(world, real_conda):
    tmp, home, env = world
    make_env(tmp / "d" / "y", history=_HISTORY)
    (home / ".condarc").write_text(f"envs_dirs: [{tmp / 'd'}]\n")
    python = os.path.join(real_conda.root, "bin", "python")
    inside = _ours(env, ["y"], python=python)
    outside = _ours(env, ["y"])
    assert inside["source"] == "conda" and outside["source"] == "files"
    assert inside["envs_dirs"] == outside["envs_dirs"]
    assert inside["located"] == outside["located"] == {"y": str(tmp / "d" / "y")}


def test_broken_condarc_is_named_not_a_traceback(world, real_conda):
    tmp, home, env = world
    (home / ".condarc").write_text("envs_dirs: [unclosed\n")
    assert real_conda.run(["info", "--json"], env=env, check=False).returncode != 0  # conda itself gives up
    line = one_line_error(run_cli(["off", "-n", "nowhere"], env=env), 2)
    assert f"{home / '.condarc'}: not valid YAML" in line


def test_system_condarc_read_through_injected_root(tmp_path):
    """/etc/conda cannot be written by a test; the same code reads it under an injected file-system root."""
    from cudaswitch.discovery import condaenvs
    from cudaswitch.core.system import System

    rc = tmp_path / "etc" / "conda" / "condarc.d"
    rc.mkdir(parents=True)
    (rc / "lab.yaml").write_text("envs_dirs:\n  - /shared/envs\n")
    (rc / "notes.txt").write_text("envs_dirs: [/ignored]\n")
    (tmp_path / "home" / "u").mkdir(parents=True)
    (tmp_path / "home" / "u" / ".condarc").write_text("envs_dirs: [/home/u/my-envs]\n")
    s = System(os="linux", environ={"HOME": "/home/u", "CONDA_EXE": "/opt/conda/bin/conda"}, root=tmp_path)
    lay = condaenvs.layout(s)
    assert lay.config_files == ["/etc/conda/condarc.d/lab.yaml", "/home/u/.condarc"]
    assert lay.envs_dirs == ["/home/u/my-envs", "/shared/envs", "/home/u/.conda/envs", "/opt/conda/envs"]


def test_environments_txt_of_a_user(tmp_path):
    from cudaswitch.discovery import condaenvs
    from cudaswitch.core.system import System

    home = tmp_path / "home" / "u"
    (home / ".conda").mkdir(parents=True)
    make_env(tmp_path / "proj" / "env1", history=_HISTORY)
    (tmp_path / "proj" / "half").mkdir()  # no conda-meta/history: conda does not list it
    (home / ".conda" / "environments.txt").write_text("/proj/env1\n/proj/half\n/proj/deleted\n")
    s = System(os="linux", environ={"HOME": "/home/u"}, root=tmp_path)
    lay = condaenvs.layout(s)
    assert condaenvs.known_prefixes(s, lay) == ["/proj/env1"]
    assert condaenvs.env_name("/proj/env1", lay) is None


def test_windows_layout_through_injected_root(tmp_path):
    """The Windows search path (C:/ProgramData/conda), %VAR% in values, ';' in CONDA_ENVS_DIRS and the per-user
    data folder conda adds on Windows, on a Windows layout examined from Linux."""
    from cudaswitch.discovery import condaenvs
    from cudaswitch.core.system import System

    (tmp_path / "C" / "ProgramData" / "conda").mkdir(parents=True)
    (tmp_path / "C" / "ProgramData" / "conda" / ".condarc").write_text("envs_dirs:\n  - D:\\lab\n")
    home = tmp_path / "C" / "Users" / "u"
    make_env(home / "miniconda3")
    (home / ".condarc").write_text("envs_dirs:\n  - '%USERPROFILE%\\my-envs'\n")
    (tmp_path / "D" / "lab" / "proj").mkdir(parents=True)
    s = System(os="windows", root=tmp_path, environ={
        "USERPROFILE": "C:\\Users\\u", "LOCALAPPDATA": "C:\\Users\\u\\AppData\\Local",
        "_CONDA_ROOT": "C:\\Users\\u\\miniconda3", "CONDA_ENVS_DIRS": "E:\\envs;F:\\more"})
    lay = condaenvs.layout(s)
    assert lay.config_files == ["C:\\ProgramData\\conda\\.condarc", "C:\\Users\\u\\.condarc"]
    assert lay.envs_dirs == ["E:\\envs", "F:\\more", "C:\\Users\\u\\my-envs", "D:\\lab",
                             "C:\\Users\\u\\miniconda3\\envs", "C:\\Users\\u\\.conda\\envs",
                             "C:\\Users\\u\\AppData\\Local\\conda\\conda\\envs"]
    assert condaenvs.locate("proj", s, lay) == "D:\\lab\\proj"
    assert condaenvs.env_name("D:\\lab\\proj", lay, s) == "proj"
