"""Living with conda-forge's CUDA packages (cudaswitch/switching/condaforge.py): `use` reads the environment's
conda-meta records, says what they provide, refuses without --force to put another toolkit's nvcc over conda-forge's;
`doctor` says which toolkit each consumer takes, and what it says is what an activated shell shows: with the
feedstocks' real activation lines (tests/condaforge_scripts.py names their source) under py-rattler's activator
(CI) and a real conda (skipped without one)."""

from __future__ import annotations

import json
import shlex
import subprocess
from types import SimpleNamespace

import pytest

import condaforge_scripts as cf
from conftest import make_env, one_line_error, run_cli
from cudaswitch.switching import condaforge
from shell_driver import clean_environ

SHOW = ('echo "nvcc=$(command -v nvcc)"; echo "release=$(nvcc --version 2>&1 | grep release)"; '
        'echo "CUDA_HOME=${CUDA_HOME-<unset>}"; echo "CUDA_PATH=${CUDA_PATH-<unset>}"; echo "CFLAGS=${CFLAGS-}"; '
        'echo "CMAKE_ARGS=${CMAKE_ARGS-}"')


@pytest.fixture
def cli_env(clean_env, real_trees):
    return dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))


def _shown(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line and line.split("=", 1)[0] in
                ("nvcc", "release", "CUDA_HOME", "CUDA_PATH", "CFLAGS", "CMAKE_ARGS"))


def _mix(cli_env, prefix):
    doc = run_cli(["doctor", "-p", prefix, "--json"], cli_env)
    found = {f["code"]: f for f in json.loads(doc.stdout)["findings"]}
    assert "CONDA_FORGE_CUDA_MIX" in found, found.keys()
    return found["CONDA_FORGE_CUDA_MIX"]


def test_use_says_what_they_provide_and_refuses_to_shadow_their_nvcc(cli_env, tmp_path, real_trees):
    prefix = cf.cuda_nvcc_13(make_env(tmp_path / "cf"))
    line = one_line_error(run_cli(["use", "12.9", "-p", prefix, "--no-smoke"], cli_env), 1)
    assert "conda-forge's CUDA 13.0 compiler (cuda-nvcc 13.0.88" in line
    assert f"{prefix}/targets/x86_64-linux/include" in line and "--force" in line
    assert "conda remove -p" in line and "nothing was changed" in line
    assert not (prefix / "etc" / "cudaswitch").exists()
    assert sorted(p.name for p in (prefix / "etc" / "conda" / "activate.d").iterdir()) == ["~cuda-nvcc_activate.sh"]
    r = run_cli(["use", "12.9", "-p", prefix, "--no-smoke", "--force"], cli_env)
    assert r.returncode == 0, r.stderr
    assert "cuda-nvcc 13.0.88: the nvcc compiler" in r.stdout
    assert "cuda-nvcc_linux-64 13.0.88: the nvcc compiler (activation: ~cuda-nvcc_activate.sh)" in r.stdout
    assert "cuda-cudart-dev 13.0.96: CUDA headers and libraries to build against" in r.stdout
    assert "switched with --force" in r.stderr


def test_runtime_libraries_alone_are_described_not_refused(cli_env, tmp_path):
    prefix = make_env(tmp_path / "rt")
    cf.record(prefix, "cuda-cudart", "12.9.79", "h5888daf_0")
    cf.record(prefix, "cuda-version", "12.9", "3")
    r = run_cli(["use", "12.9", "-p", prefix, "--no-smoke"], cli_env)
    assert r.returncode == 0, r.stderr
    assert "cuda-cudart 12.9.79: CUDA runtime libraries" in r.stdout and "--force" not in r.stderr
    doc = run_cli(["doctor", "-p", prefix, "--json"], cli_env)
    codes = {f["code"] for f in json.loads(doc.stdout)["findings"]}
    assert "CONDA_FORGE_CUDA" in codes and "CONDA_FORGE_CUDA_MIX" not in codes


def test_the_wrapper_takes_a_toolkit_of_its_own_version(tmp_path):
    cc = condaforge.read(str(cf.nvcc_wrapper_11_8(make_env(tmp_path / "w"))))
    assert [p.name for p in cc.packages] == ["nvcc_linux-64"] and cc.cuda == "11.8"
    assert condaforge.conflict(cc, SimpleNamespace(nvcc="/usr/local/cuda-11.8/bin/nvcc", version="11.8.89")) is None
    why = condaforge.conflict(cc, SimpleNamespace(nvcc="/usr/local/cuda-12.9/bin/nvcc", version="12.9.1"))
    assert "Version of installed CUDA didn't match package" in why
    assert condaforge.conflict(cc, SimpleNamespace(nvcc=None, version="12.9.1")) is None  # no nvcc to shadow it


def test_broken_records_are_skipped(tmp_path):
    prefix = make_env(tmp_path / "b")
    (prefix / "conda-meta" / "cuda-nvcc-13.0.88-0.json").write_text("{not json")
    (prefix / "conda-meta" / "cuda-toolkit-13.0.0-0.json").mkdir()
    cf.record(prefix, "cuda-version", "13.0", "3")
    assert [p.name for p in condaforge.read(str(prefix)).packages] == ["cuda-version"]


def _rattler_shell(prefix, tmp_path, env):
    rattler = pytest.importorskip("rattler.shell")
    av = rattler.ActivationVariables(current_path=["/usr/bin", "/bin"],
                                     path_modification_behavior=rattler.PathModificationBehavior.Replace)
    result = rattler.activate(prefix, av, rattler.Shell.bash)
    script = tmp_path / "rattler.sh"
    script.write_text(f"{result.script}\n{SHOW}\n")
    return subprocess.run(["bash", "--noprofile", "--norc", str(script)], env=env, capture_output=True, text=True,
                          timeout=120)


def test_cuda_nvcc_beside_the_switch_under_rattler(cli_env, tmp_path, real_trees):
    """What doctor says each consumer takes is what the activated shell has: the toolkit's nvcc first on PATH and
    CUDA_HOME, conda-forge's headers in the compiler flags. CXX is set as conda-forge's compiler packages set it."""
    tk = real_trees / "cuda-12.9"
    prefix = cf.cuda_nvcc_13(make_env(tmp_path / "cf"))
    assert run_cli(["use", "12.9", "-p", prefix, "--no-smoke", "--force"], cli_env).returncode == 0
    proc = _rattler_shell(prefix, tmp_path, clean_environ(PATH="/usr/bin:/bin", CXX="/usr/bin/g++"))
    shell = _shown(proc.stdout)
    assert shell["nvcc"] == f"{tk}/bin/nvcc" and "release 12.9" in shell["release"], proc.stdout + proc.stderr
    assert shell["CUDA_HOME"] == str(tk)
    assert f"-I{prefix}/targets/x86_64-linux/include" in shell["CFLAGS"]
    mix = _mix(cli_env, prefix)
    assert f"nvcc on PATH: cudaswitch's toolkit ({tk}/bin/nvcc)" in mix["details"]
    assert any(d.startswith("CUDA_HOME") and d.endswith(f"cudaswitch's toolkit ({tk})") for d in mix["details"])
    assert f"host compiler flags (CFLAGS, CPPFLAGS, CXXFLAGS): conda-forge's packages " \
           f"({prefix}/targets/x86_64-linux/include)" in mix["details"]
    assert "CMake's CUDAToolkit_ROOT: cudaswitch's toolkit" in " ".join(mix["details"])
    # without the switch, conda-forge's nvcc is the one on PATH
    assert run_cli(["off", "-p", prefix], cli_env).returncode == 0
    shell = _shown(_rattler_shell(prefix, tmp_path, clean_environ(PATH="/usr/bin:/bin", CXX="/usr/bin/g++")).stdout)
    assert shell["nvcc"] == f"{prefix}/bin/nvcc" and "release 13.0" in shell["release"]


def test_nvcc_wrapper_beside_the_switch_under_rattler(cli_env, tmp_path, real_trees):
    """nvcc_linux-64 11.8 with a switch to 12.9 (--force): its activation takes cudaswitch's CUDA_HOME, says the
    version does not match, points CMake at it, and nvcc on PATH is the toolkit's own, not the wrapper."""
    tk = real_trees / "cuda-12.9"
    prefix = cf.nvcc_wrapper_11_8(make_env(tmp_path / "w"))
    line = one_line_error(run_cli(["use", "12.9", "-p", prefix, "--no-smoke"], cli_env), 1)
    assert "nvcc_linux-64 11.8" in line and "--force" in line
    assert run_cli(["use", "12.9", "-p", prefix, "--no-smoke", "--force"], cli_env).returncode == 0
    proc = _rattler_shell(prefix, tmp_path, clean_environ(PATH="/usr/bin:/bin", CXX="/usr/bin/g++"))
    shell = _shown(proc.stdout)
    assert "Warning: Version of installed CUDA didn't match package" in proc.stdout
    assert shell["nvcc"] == f"{tk}/bin/nvcc" and shell["CUDA_HOME"] == shell["CUDA_PATH"] == str(tk)
    assert f"-DCUDAToolkit_ROOT={tk}" in shell["CMAKE_ARGS"]
    details = " | ".join(_mix(cli_env, prefix)["details"])
    assert f"nvcc on PATH: cudaswitch's toolkit ({tk}/bin/nvcc)" in details
    assert f"CMake's CUDAToolkit_ROOT: cudaswitch's toolkit ({tk} (-DCUDAToolkit_ROOT in CMAKE_ARGS, from " \
           f"nvcc_linux-64's activation))" in details


def test_cuda_nvcc_and_the_wrapper_through_real_conda(real_conda, cli_env, tmp_path, real_trees):
    """The same through a real `conda activate` / `conda deactivate` in bash: conda sorts activate.d by code point
    (cudaswitch.sh, nvcc_linux-64_activate.sh, ~cuda-nvcc_activate.sh) and runs deactivate.d in reverse."""
    tk = real_trees / "cuda-12.9"
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "condarc").write_text(f"envs_dirs: [{tmp_path / 'envs'}]\npkgs_dirs: [{tmp_path / 'pkgs'}]\n"
                                      "auto_activate_base: false\nchangeps1: false\nnotify_outdated_conda: false\n")
    env = clean_environ(HOME=str(home), CONDARC=str(tmp_path / "condarc"), CONDA_SOLVER="classic",
                        CONDA_NUMBER_CHANNEL_NOTICES="0", PATH="/usr/bin:/bin", CXX="/usr/bin/g++")
    for name, build in (("cf", cf.cuda_nvcc_13), ("wrapper", cf.nvcc_wrapper_11_8)):
        prefix = build(real_conda.create(tmp_path / "envs" / name, env=env))
        assert run_cli(["use", "12.9", "-p", prefix, "--no-smoke", "--force"], cli_env).returncode == 0
        hook = real_conda.run(["shell.bash", "hook"], env=env).stdout
        script = tmp_path / f"{name}.sh"
        script.write_text(f"{hook}\nconda activate {shlex.quote(str(prefix))}\n{SHOW}\necho ---\nconda deactivate\n"
                          f"{SHOW}\n")
        proc = subprocess.run(["bash", "--noprofile", "--norc", str(script)], env=env, capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL)
        active_text, _, after_text = proc.stdout.partition("---")
        active, after = _shown(active_text), _shown(after_text)
        assert active["nvcc"] == f"{tk}/bin/nvcc" and active["CUDA_HOME"] == str(tk), proc.stdout + proc.stderr
        details = _mix(cli_env, prefix)["details"]
        assert f"nvcc on PATH: cudaswitch's toolkit ({tk}/bin/nvcc)" in details
        if name == "cf":
            assert f"-I{prefix}/targets/x86_64-linux/include" in active["CFLAGS"]
        else:
            assert f"-DCUDAToolkit_ROOT={tk}" in active["CMAKE_ARGS"]
        # deactivation: the wrapper's script restores what it found (ours), then ours restores the shell's
        assert after["CUDA_HOME"] == after["CUDA_PATH"] == "<unset>" and after["nvcc"] != f"{tk}/bin/nvcc"
        # the wrapper restores CMAKE_ARGS only when it was set before: an unset one keeps the toolkit after
        # deactivation (the feedstock's own leak, documented in docs/guide/reach.md)
        assert after["CMAKE_ARGS"] == ("" if name == "cf" else f" -DCUDAToolkit_ROOT={tk} -DCUDA_TOOLKIT_ROOT_DIR={tk}")


def test_record_files_are_read_through_the_no_follow_reader(tmp_path):
    """A conda-meta that is a link is not followed (another user's environment could point it anywhere)."""
    prefix = make_env(tmp_path / "l")
    other = make_env(tmp_path / "other")
    cf.record(other, "cuda-nvcc", "13.0.88", "0")
    import shutil

    shutil.rmtree(prefix / "conda-meta")
    (prefix / "conda-meta").symlink_to(other / "conda-meta")
    assert condaforge.read(str(prefix)).packages == []


def _user_scripts(prefix):
    act = prefix / "etc" / "conda" / "activate.d"
    act.mkdir(parents=True, exist_ok=True)
    (act / "00-early.sh").write_text("export CUDA_HOME=/opt/early\n")
    (act / "env_vars.sh").write_text("export CUDA_HOME=/opt/mine\n")
    return act


def test_a_user_script_after_ours_wins_and_doctor_names_it(cli_env, tmp_path, real_trees):
    """Under rattler's activator: 00-early.sh runs before cudaswitch.sh (overridden), env_vars.sh after (it wins)."""
    prefix = make_env(tmp_path / "u")
    act = _user_scripts(prefix)
    assert run_cli(["use", "12.9", "-p", prefix, "--no-smoke"], cli_env).returncode == 0
    shell = _shown(_rattler_shell(prefix, tmp_path, clean_environ(PATH="/usr/bin:/bin")).stdout)
    assert shell["CUDA_HOME"] == "/opt/mine" and shell["CUDA_PATH"] == str(real_trees / "cuda-12.9")
    doc = run_cli(["doctor", "-p", prefix, "--json"], cli_env)
    later = [f for f in json.loads(doc.stdout)["findings"] if f["code"] == "CUDA_SET_AFTER_SWITCH"]
    assert [f["details"] for f in later] == [[str(act / "env_vars.sh")]]
    assert "sets CUDA_HOME" in later[0]["cause"] and "00-env_vars.sh" in later[0]["fix"]
    # one warning for one script: the generic 'another hook sets CUDA' finding does not repeat it
    assert not [f for f in json.loads(doc.stdout)["findings"]
                if f["code"] == "FOREIGN_CUDA_HOOKS" and "env_vars.sh" in f["cause"]]


def test_user_scripts_and_config_vars_through_real_conda(real_conda, cli_env, tmp_path, real_trees):
    """A real conda exports `conda env config vars` before any activate.d script: the switch overrides a CUDA_HOME
    set there, and a script sorting after cudaswitch.sh overrides the switch."""
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "condarc").write_text(f"envs_dirs: [{tmp_path / 'envs'}]\npkgs_dirs: [{tmp_path / 'pkgs'}]\n"
                                      "auto_activate_base: false\nchangeps1: false\nnotify_outdated_conda: false\n")
    env = clean_environ(HOME=str(home), CONDARC=str(tmp_path / "condarc"), CONDA_SOLVER="classic",
                        CONDA_NUMBER_CHANNEL_NOTICES="0", PATH="/usr/bin:/bin")
    prefix = real_conda.create(tmp_path / "envs" / "u", env=env)
    real_conda.run(["env", "config", "vars", "set", "CUDA_HOME=/opt/cfg", "-p", str(prefix)], env=env)
    assert run_cli(["use", "12.9", "-p", prefix, "--no-smoke"], cli_env).returncode == 0
    hook = real_conda.run(["shell.bash", "hook"], env=env).stdout

    def activated():
        script = tmp_path / "a.sh"
        script.write_text(f"{hook}\nconda activate {shlex.quote(str(prefix))}\n{SHOW}\n")
        return _shown(subprocess.run(["bash", "--noprofile", "--norc", str(script)], env=env, capture_output=True,
                                     text=True, timeout=300, stdin=subprocess.DEVNULL).stdout)

    assert activated()["CUDA_HOME"] == str(real_trees / "cuda-12.9")
    _user_scripts(prefix)
    assert activated()["CUDA_HOME"] == "/opt/mine"
    doc = run_cli(["doctor", "-p", prefix, "--json"], cli_env)
    assert [f["details"][0].rsplit("/", 1)[-1] for f in json.loads(doc.stdout)["findings"]
            if f["code"] == "CUDA_SET_AFTER_SWITCH"] == ["env_vars.sh"]


def test_dry_run_says_it_would_be_refused(cli_env, tmp_path):
    prefix = cf.cuda_nvcc_13(make_env(tmp_path / "cf"))
    line = one_line_error(run_cli(["use", "12.9", "-p", prefix, "--dry-run"], cli_env), 1)
    assert "cuda-nvcc 13.0.88" in line and "--force" in line
    r = run_cli(["use", "12.9", "-p", prefix, "--dry-run", "--force"], cli_env)
    assert r.returncode == 0 and "nothing written" in r.stdout
