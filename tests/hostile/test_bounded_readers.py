"""Every reader of a file another user may have planted ends, linearly, in a value or one clear line: the
activate.d readers (status's setters, doctor's CUDA_SET_AFTER_SWITCH and FOREIGN_CUDA_HOOKS, all one reader now) on
any text up to their own size limit, and every JSON reader (version.json, kernel.json, conda-meta records,
conda-meta/state) on JSON nested far deeper than the parser recurses. The texts repeat a short unit to the reader's
limit: a backtracking pattern is slow exactly on long runs of one thing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cudatrees
from bounded import within
from conftest import make_env, one_line_error, run_cli

from cudaswitch.checks import activation_order, doctor
from cudaswitch.core import trust, versions
from cudaswitch.discovery import activation_scripts, kernelspecs
from cudaswitch.switching import condaforge

LIMIT = activation_scripts.SCRIPT_LIMIT
SETS = "export CUDA_HOME=/opt/planted\n"

# the units that made the old readers quadratic or worse, and their neighbours
UNITS = ["\n", " ", "\t", "; ", ";", "|", "then ", "do ", "export ", "declare -x ", "set -", "x", "set -x ",
         "set -gx ", "setenv ", "$env:", "$env:CUDA_HOME", '"', "'", "CUDA_HOME", "CUDA_HOME=", ';CUDA_HOME="',
         'set "CUDA_HOME=', "SetEnvironmentVariable(", "SetEnvironmentVariable( '", "export\n", "set\n"]


def _filled(unit: str) -> str:
    """SETS, then `unit` repeated up to the reader's limit."""
    room = LIMIT - len(SETS)
    return SETS + (unit * (room // len(unit) + 1))[:room]


def _env_with_script(base: Path, text: str) -> Path:
    prefix = make_env(base / "env")
    d = prefix / "etc" / "conda" / "activate.d"
    d.mkdir(parents=True, exist_ok=True)
    (d / "zz-user.sh").write_text(text)
    return prefix


def _all_three(prefix: Path):
    """status's, doctor's later-setter and doctor's foreign-hook reading of the same folder."""
    status = within(activation_scripts.setters, str(prefix), ["CUDA_HOME", "CUDA_PATH"])
    later = within(activation_order.later_setters, str(prefix), "sh")
    foreign = within(doctor.hook_findings, str(prefix))
    return status, later, foreign


@pytest.mark.parametrize("unit", UNITS)
def test_activate_d_readers_are_linear_at_their_size_limit(tmp_path, unit):
    status, later, foreign = _all_three(_env_with_script(tmp_path, _filled(unit)))
    # still reading: the assignment before the filler is found by each
    assert any(s.variable == "CUDA_HOME" and s.value == "/opt/planted" for s in status), status
    assert [s.script for s in later] == [str(tmp_path / "env/etc/conda/activate.d/zz-user.sh")]
    assert "CUDA_HOME" in later[0].variables
    assert [f.code for f in foreign] == ["FOREIGN_CUDA_HOOKS"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(unit=st.text(alphabet=" \t\n;&|\"'=$:-(xsetCUDA_HOMEPexprtdlcn", min_size=1, max_size=12))
def test_activate_d_readers_end_on_any_repeated_text(tmp_path_factory, unit):
    status, later, foreign = _all_three(_env_with_script(tmp_path_factory.mktemp("e"), _filled(unit)))
    assert any(s.value == "/opt/planted" for s in status)
    assert later and foreign


def test_the_three_activate_d_readers_are_one_reader(tmp_path, monkeypatch):
    """status and both doctor checks read activate.d through activation_scripts.scripts (one size limit, no link
    followed): a file larger than its limit is read only up to it by all three."""
    prefix = _env_with_script(tmp_path, "#" * LIMIT + "\nexport CUDA_HOME=/past/the/limit\n")
    status, later, foreign = _all_three(prefix)
    assert (status, later, foreign) == ([], [], [])
    calls = []
    real = activation_scripts.scripts
    monkeypatch.setattr(activation_scripts, "scripts", lambda *a, **k: calls.append(a) or real(*a, **k))
    _all_three(prefix)
    assert len(calls) == 3


def test_a_link_in_activate_d_is_not_read_by_any_of_them(tmp_path):
    prefix = _env_with_script(tmp_path, "# nothing\n")
    secret = tmp_path / "secret.sh"
    secret.write_text(SETS)
    (prefix / "etc/conda/activate.d/zz-link.sh").symlink_to(secret)
    assert _all_three(prefix) == ([], [], [])


DEEP = 100_000


def _deep(prefix: str = "", suffix: str = "") -> str:
    return prefix + "[" * DEEP + "]" * DEEP + suffix


def test_read_json_and_parse_json_refuse_deep_nesting_in_one_line(tmp_path):
    f = tmp_path / "deep.json"
    f.write_text(_deep())
    for call in (lambda: trust.read_json(f), lambda: trust.parse_json(f.read_bytes(), f)):
        with pytest.raises(trust.FileShapeError) as caught:
            within(call)
        assert str(caught.value) == f"{f}: nested too deeply to be a file cudaswitch reads"


def test_a_deep_version_json_is_one_warning_and_the_toolkit_still_found(tmp_path, clean_env):
    root = cudatrees.cuda_11_8(tmp_path / "cuda-11.8")
    (root / "version.json").write_text(_deep('{"cuda": {"version": ', "}}"))
    with pytest.raises(versions.VersionFileError) as caught:
        within(versions.from_version_json, root / "version.json")
    assert "nested too deeply" in str(caught.value) and str(root / "version.json") in str(caught.value)
    env = dict(clean_env, CUDASWITCH_SEARCH_PATH=str(root), PATH="/usr/bin:/bin")
    proc = within(run_cli, ["list"], env)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert "11.8" in proc.stdout and "nested too deeply" in proc.stderr, (proc.stdout, proc.stderr)


def test_a_deep_kernel_json_is_skipped_and_the_others_read(tmp_path):
    for name, text in (("deep", _deep('{"argv": ', "}")), ("good", '{"argv": ["python"], "env": {}}')):
        (tmp_path / "kernels" / name).mkdir(parents=True)
        (tmp_path / "kernels" / name / "kernel.json").write_text(text)
    assert [k.name for k in within(kernelspecs.read_all, [str(tmp_path)])] == ["good"]


def test_a_deep_conda_meta_record_is_skipped_and_the_others_read(tmp_path):
    prefix = make_env(tmp_path / "env")
    (prefix / "conda-meta" / "cuda-nvcc-12.4.131-0.json").write_text(_deep('{"name": "cuda-nvcc", "x": ', "}"))
    (prefix / "conda-meta" / "cuda-cudart-12.4.127-0.json").write_text(
        '{"name": "cuda-cudart", "version": "12.4.127", "files": []}')
    found = within(condaforge.read, str(prefix))
    assert [p.name for p in found.packages] == ["cuda-cudart"]


def test_a_deep_conda_meta_state_is_read_as_no_variables(tmp_path):
    prefix = make_env(tmp_path / "env")
    (prefix / "conda-meta" / "state").write_text(_deep('{"env_vars": {"CUDA_HOME": "/x"}, "y": ', "}"))
    (prefix / "etc" / "conda" / "env_vars.d").mkdir(parents=True)
    (prefix / "etc" / "conda" / "env_vars.d" / "a.json").write_text('{"CUDA_PATH": "/from/env_vars.d"}')
    found = within(activation_scripts.setters, str(prefix), ["CUDA_HOME", "CUDA_PATH"])
    assert [(s.variable, s.value) for s in found] == [("CUDA_PATH", "/from/env_vars.d")]
