"""`cudaswitch use` runs the smoke test in the switched environment: the real CPU torch, the real CLI."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "fake_torch"))

import envs  # noqa: E402
from conftest import run_cli  # noqa: E402


@pytest.fixture
def torch_env_copy(torch_env, tmp_path):
    """A fresh env whose Python imports the cached real torch (`use` writes into it; the cache stays clean)."""
    return envs.real_torch_env(tmp_path)


def hooks_of(prefix):
    return sorted(p.name for p in (Path(prefix) / "etc" / "conda").glob("*.d/cudaswitch.*"))


def test_use_runs_the_smoke_test_and_keeps_the_switch_when_it_fails(torch_env_copy, real_trees, clean_env):
    env = dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))
    r = run_cli(["use", "12.9", "-p", str(torch_env_copy)], env=env, timeout=300)
    # A CPU-only torch on a machine without a GPU: the diagnosis is printed and the exit code says so...
    assert r.returncode == 1, r.stdout + r.stderr
    assert "CPU_ONLY_BUILD" in r.stdout and "The switch is kept" in r.stdout
    assert "Traceback" not in r.stderr
    # ...but the switch stays: hooks for every shell and the state file.
    assert len(hooks_of(torch_env_copy)) == 10
    state = run_cli(["status", "--json"], env=dict(env, CONDA_PREFIX=str(torch_env_copy)))
    assert json.loads(state.stdout)["env"]["state"]["version"] == "12.9.1"


def test_use_with_cpu_ok_passes_after_real_matmul_and_conv(torch_env_copy, real_trees, clean_env):
    env = dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))
    r = run_cli(["use", "12.9", "-p", str(torch_env_copy), "--cpu-ok"], env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS" in r.stdout and "matmul" in r.stdout and "conv2d" in r.stdout


def test_no_smoke_skips_it(torch_env_copy, real_trees, clean_env):
    env = dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))
    r = run_cli(["use", "12.9", "-p", str(torch_env_copy), "--no-smoke"], env=env)
    assert r.returncode == 0, r.stderr
    assert "now uses CUDA 12.9.1" in r.stdout and "smoke test:" not in r.stdout


def test_the_smoke_test_runs_in_the_real_shells_environment_and_fails_on_a_hook_that_breaks_path(
        torch_env_copy, real_trees, clean_env):
    """Every hook of this machine's shells broken in one line (the test seam): no shell gives the plan, so the
    smoke test runs in what the first shell really left, and fails there although torch itself works."""
    env = dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees),
               CUDASWITCH_FAULT="corrupt@hook:sh,corrupt@hook:fish,corrupt@hook:csh")
    r = run_cli(["use", "12.9", "-p", str(torch_env_copy), "--cpu-ok"], env=env, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "SWITCH_NOT_IN_EFFECT" in r.stdout and "bin-corrupted" in r.stdout, r.stdout
    assert "the sh hook disagrees with the switch in bash" in r.stderr


@pytest.mark.parametrize("smoke", [False, True], ids=["exit-0", "exit-1"])
def test_the_tcsh_alias_says_what_it_applied(torch_env_copy, real_trees, clean_env, tmp_path, smoke):
    """`use` exits 1 when its smoke test fails with the switch kept (a CPU-only torch, no GPU); the tcsh alias
    applies the hook either way, and `use` says so: "Applied to this shell", never "Takes effect at the next
    activation" while CUDA_HOME has already changed. The alias gives back use's exit status and leaves no variable."""
    import subprocess

    from conftest import cli_on_path, require_tool
    from cudaswitch.core.shells import quote_sh

    exe = require_tool("tcsh")
    env = dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))
    (tmp_path / "init.csh").write_text(run_cli(["init", "tcsh"], env).stdout)
    script = tmp_path / "s.csh"
    flag = "" if smoke else " --no-smoke"
    script.write_text(f"source {quote_sh(str(tmp_path / 'init.csh'))}\ncudaswitch use 12.9{flag}\n"
                      'echo "[rc=$status|$CUDA_HOME|$?_cs_rc|$?CUDASWITCH_APPLIES]"\n')
    env = dict(env, PATH=f"{cli_on_path(tmp_path)}:/usr/bin:/bin", CONDA_PREFIX=str(torch_env_copy))
    out = subprocess.run([exe, "-f", str(script)], env=env, capture_output=True, text=True, timeout=300)
    last = out.stdout.strip().splitlines()[-1]
    assert last == f"[rc={1 if smoke else 0}|{real_trees / 'cuda-12.9'}|0|0]", (out.stdout, out.stderr)
    assert "Applied to this shell by the cudaswitch shell function." in out.stdout
    assert "Takes effect at the next activation" not in out.stdout
