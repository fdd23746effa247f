"""`cudaswitch list / which / status` as a user runs them: selectors, bad input, exit codes, one-line errors."""

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

import cudatrees
import seams
from conftest import one_line_error, run_cli


@pytest.fixture
def env(clean_env, real_trees):
    return dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees), PATH="/usr/bin:/bin")


@pytest.mark.parametrize("selector", ["11.8", "11", "11.8.89", "v11.8", "cuda-11.8", "CUDA-11.8", "cu118", "PATH"])
def test_every_selector_form_names_the_same_toolkit(env, real_trees, selector):
    if selector == "PATH":
        selector = str(real_trees / "cuda-11.8")
    out = run_cli(["which", selector], env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(real_trees / "cuda-11.8")


def test_relative_path_selector(env, real_trees):
    out = run_cli(["which", "./cuda-12.9"], env=env, cwd=real_trees)
    assert out.stdout.strip() == str(real_trees / "cuda-12.9")


def test_which_bin_lib_nvcc(env, real_trees):
    root = real_trees / "cuda-12.9"
    assert run_cli(["which", "--bin", "12.9"], env=env).stdout.split() == [str(root / "bin")]
    assert run_cli(["which", "--lib", "cu129"], env=env).stdout.split() == [str(root / "lib64")]
    assert run_cli(["which", "--nvcc", "12"], env=env).stdout.split() == [str(root / "bin" / "nvcc")]
    line = one_line_error(run_cli(["which", "--nvcc", "11.8"], env=env), 1)
    assert "has no nvcc" in line


def test_unknown_selector_lists_what_is_installed(env):
    line = one_line_error(run_cli(["which", "11.7"], env=env), 2)
    assert "no CUDA toolkit matches '11.7'" in line and "11.8.89" in line and "12.9.1" in line


def test_not_a_selector(env):
    line = one_line_error(run_cli(["which", "banana"], env=env), 2)
    assert "not a CUDA selector" in line


def test_ambiguous_selector(env, real_trees, tmp_path):
    other = cudatrees.cuda_12_9(tmp_path / "cuda-12.4", version_json={"cuda": {"name": "CUDA SDK", "version": "12.4.1"}})
    env["CUDASWITCH_SEARCH_PATH"] = os.pathsep.join([str(real_trees), str(other)])
    line = one_line_error(run_cli(["which", "12"], env=env), 2)
    assert "ambiguous" in line and "12.4.1" in line and "12.9.1" in line
    assert run_cli(["which", "12.4"], env=env).stdout.strip() == str(other)


def test_path_that_is_not_a_toolkit(env, tmp_path):
    line = one_line_error(run_cli(["which", str(tmp_path)], env=env), 2)
    assert "is not a CUDA toolkit" in line
    line = one_line_error(run_cli(["which", str(tmp_path / "missing")], env=env), 2)
    assert "no such folder" in line


def test_list_table_and_json_schema(env, real_trees):
    out = run_cli(["list"], env=env)
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["VERSION", "ROOT", "SOURCE", "NVCC", "CUDNN", "NOTES"]
    row = next(l for l in lines if str(real_trees / "cuda-11.8") in l)
    assert "11.8.89" in row and "no-nvcc" in row
    data = json.loads(run_cli(["list", "--json"], env=env).stdout)
    assert data["schema"] == 1
    tk = next(t for t in data["toolkits"] if t["root"] == str(real_trees / "cuda-12.9"))
    assert {"version", "major", "minor", "patch", "root", "sources", "version_source", "nvcc", "bin_dirs",
            "lib_dirs", "include_dir", "cudnn", "aliases", "flags", "warnings", "kind", "active"} <= set(tk)


def test_active_toolkit_is_marked(env, real_trees):
    env["CUDA_HOME"] = str(real_trees / "cuda-11.8")
    data = json.loads(run_cli(["list", "--json"], env=env).stdout)
    active = [t["root"] for t in data["toolkits"] if t["active"]]
    assert active == [str(real_trees / "cuda-11.8")]
    row = next(l for l in run_cli(["list"], env=env).stdout.splitlines() if "cuda-11.8" in l)
    assert row.startswith("*")


def test_malformed_config_is_reported_and_discovery_goes_on(env, tmp_path, real_trees):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("search_paths: [unclosed\n  - x: {\n")
    env["CUDASWITCH_CONFIG"] = str(cfg)
    out = run_cli(["list"], env=env)
    assert out.returncode == 1
    assert "11.8.89" in out.stdout  # the other sources still answered
    err = [l for l in out.stderr.splitlines() if l.startswith("cudaswitch: error:")]
    assert len(err) == 1 and str(cfg) in err[0] and "not valid YAML" in err[0]
    assert "Traceback" not in out.stderr


def test_config_search_paths(clean_env, real_trees, tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"search_paths:\n  - {real_trees}\n")
    env = dict(clean_env, CUDASWITCH_CONFIG=str(cfg))
    data = json.loads(run_cli(["list", "--json"], env=env).stdout)
    assert {"11.8.89", "12.9.1"} <= {t["version"] for t in data["toolkits"]}
    cfg.write_text("search_paths: 42\n")
    out = run_cli(["list"], env=env)
    assert out.returncode == 1 and "search_paths must be a list" in out.stderr


def test_status_maps_variables_and_warns_on_disagreement(env, real_trees):
    cu11, cu12 = real_trees / "cuda-11.8", real_trees / "cuda-12.9"
    env.update(CUDA_HOME=str(cu11), CUDA_PATH=str(cu11), PATH=f"{cu12}/bin:{cu11}/bin:/usr/bin:/bin")
    out = run_cli(["status"], env=env)
    assert out.returncode == 0, out.stderr
    assert f"CUDA_HOME points at 11.8.89 ({cu11}) while nvcc on PATH is 12.9.1 ({cu12})" in out.stdout
    assert "PATH holds folders of 2 CUDA toolkits" in out.stdout
    data = json.loads(run_cli(["status", "--json"], env=env).stdout)["shell"]
    path_entries = [(e["position"], e["toolkit"]) for e in data["entries"] if e["variable"] == "PATH"]
    assert [v for _, v in path_entries] == ["12.9.1", "11.8.89"]
    assert path_entries[0][0] < path_entries[1][0]
    assert data["active"] == str(cu11)


def test_status_missing_cuda_path(env, tmp_path):
    env["CUDA_PATH"] = str(tmp_path / "gone")
    out = run_cli(["status"], env=env)
    assert f"CUDA_PATH points at a missing folder: {tmp_path / 'gone'}" in out.stdout


def _discover_as_nobody(search, conn):
    from cudaswitch.core.system import System
    from cudaswitch.discovery.toolkits import discover

    system = System(os="linux", environ={"CUDASWITCH_SEARCH_PATH": search, "PATH": "/usr/bin",
                                         "CUDASWITCH_CONFIG": "/nonexistent/config.yaml"}, python_paths=[])
    try:
        # once as root first: the modules discovery imports lazily must already be loaded, since the test's own
        # Python may live where the other user cannot read (/root/.pyenv)
        discover(system)
        os.setgid(65534)
        os.setuid(65534)
        found = discover(system)
        conn.send(([t.to_json() for t in found.toolkits], found.warnings))
    except BaseException as exc:  # the parent must hear of it, not wait for ever
        conn.send(exc)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another user")
def test_permission_denied_version_json_and_root():
    """A real permission error, seen by an unprivileged user (root reads everything): discovery goes on."""
    import multiprocessing

    base = Path(tempfile.mkdtemp(prefix="cs-perm-"))
    try:
        base.chmod(0o755)
        tk = cudatrees.cuda_11_8(base / "cuda-11.8")
        (tk / "version.json").chmod(0o000)
        locked = base / "cuda-12.0"
        locked.mkdir(mode=0o700)
        (locked / "version.json").write_text("{}")
        for dirpath, _, _ in os.walk(tk):
            os.chmod(dirpath, 0o755)
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_discover_as_nobody, args=(str(base), child))
        proc.start()
        assert parent.poll(120), "the child process sent nothing"
        got = parent.recv()
        proc.join(30)
        assert not isinstance(got, BaseException), repr(got)
        toolkits, warnings = got
        (found,) = [t for t in toolkits if t["root"].startswith(str(base))]
        assert found["version"] == "11.8" and found["version_source"] == "cuda.h"
        assert any(str(tk / "version.json") in w and "permission denied" in w for w in warnings)
        assert any(str(locked) in w and "permission denied" in w for w in warnings)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_closed_pipe_is_not_an_error(env):
    """`cudaswitch list | head -1`: the reader has gone; no error text, no traceback, exit 141 as for SIGPIPE."""
    import subprocess
    import sys

    from conftest import REPO

    env["PYTHONPATH"] = str(REPO)
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write now fails with EPIPE
    try:
        proc = subprocess.run([sys.executable, seams.ENTRY, "list"], env=env, stdout=write_end,
                              stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write_end)
    assert proc.stderr == "" and proc.returncode == 141, proc.stderr


@pytest.mark.parametrize("args", [["list", "--bogus"], ["which"], ["bogus"], ["run", "13"], ["init", "badshell"],
                                  ["smoke", "--timeout", "-1"], ["recommend", "--torch", "abc"]])
def test_click_usage_errors_are_one_line_too(env, args):
    line = one_line_error(run_cli(args, env=env), 2)
    assert "--help" in line and "Usage:" not in line
