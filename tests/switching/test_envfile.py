"""The CUDA toolkit declared in environment.yml (`variables: CUDASWITCH_CUDA`): `use --save` changes exactly the
one entry and no other byte; `conda env create`/`export` (real conda) carry it; `use` without a selector applies it."""

from __future__ import annotations

import json
import stat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cudaswitch.switching.envfile import updated_text
from conftest import make_env, one_line_error, run_cli
from cudaswitch.core.errors import UsageError

# Shaped like environment files found in real projects: a header comment, channel pins, an anchor, a pip:
# subsection with its own comments, odd quoting and blank lines.
PROJECT = """\
# Environment for training.  Create with:
#   conda env create -f environment.yml
name: detector   # keep in sync with docs/guide/conda.md

channels:
  - pytorch
  - nvidia
  - conda-forge   # last

dependencies:
  - python=3.10
  - &np numpy>=1.24,<2
  - 'pytorch-cuda=11.8'
  - pip
  - pip:
      # from PyPI only
      - --extra-index-url https://download.pytorch.org/whl/cu118
      - torch==2.1.2+cu118
      - "opencv-python-headless"

"""

INSERTED = '\nvariables:\n  CUDASWITCH_CUDA: "11.8"\n'


def test_appends_variables_and_keeps_every_other_byte():
    new, changed = updated_text(PROJECT, "11.8")
    assert changed and new == PROJECT + INSERTED[1:]


def test_crlf_file_stays_crlf_and_identical():
    crlf = PROJECT.replace("\n", "\r\n")
    new, _ = updated_text(crlf, "11.8")
    assert new == crlf + INSERTED[1:].replace("\n", "\r\n")
    assert "\n" not in new.replace("\r\n", "")


def test_bom_and_missing_final_newline():
    new, _ = updated_text("\ufeffname: x\ndependencies: [python]", "12.4")
    assert new == '\ufeffname: x\ndependencies: [python]\nvariables:\n  CUDASWITCH_CUDA: "12.4"\n'


def test_existing_value_is_replaced_in_place_with_its_quote_style_and_comment():
    text = PROJECT + "variables:\n  WANDB_MODE: offline  # no network\n  CUDASWITCH_CUDA: '12.1'   # was 12.1\n"
    new, changed = updated_text(text, "11.8")
    assert changed and new == text.replace("'12.1'   # was", "'11.8'   # was")
    assert updated_text(new, "11.8") == (new, False)  # idempotent: the same value changes nothing


def test_added_into_an_existing_block_or_flow_mapping():
    block = "name: x\nvariables:\n    WANDB_MODE: offline\ndependencies: []\n"
    assert updated_text(block, "11.8")[0] == (
        'name: x\nvariables:\n    CUDASWITCH_CUDA: "11.8"\n    WANDB_MODE: offline\ndependencies: []\n')
    flow = "name: x\nvariables: {WANDB_MODE: offline}  # c\ndependencies: []\n"
    assert updated_text(flow, "11.8")[0] == (
        'name: x\nvariables: {CUDASWITCH_CUDA: "11.8", WANDB_MODE: offline}  # c\ndependencies: []\n')
    assert updated_text("name: x\nvariables: {}\n", "11.8")[0] == 'name: x\nvariables: {CUDASWITCH_CUDA: "11.8"}\n'


@pytest.mark.parametrize("text", ["- a\n- b\n", "foo: bar\n", "just text\n", "name: [x\n", "name: x\nvariables: [a]\n"])
def test_not_an_environment_file_is_refused(text):
    with pytest.raises(UsageError) as exc:
        updated_text(text, "11.8", "f.yml")
    assert "not changed" in str(exc.value)


def _env(tmp_path, name="e"):
    return make_env(tmp_path / "envs" / name)


def test_use_save_writes_the_file_keeping_mode(tmp_path, clean_env, real_trees):
    prefix = _env(tmp_path)
    f = tmp_path / "environment.yml"
    f.write_text(PROJECT)
    f.chmod(0o640)
    env = dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))
    r = run_cli(["use", "11.8", "-p", str(prefix), "--no-smoke", "--save"], env, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert 'environment.yml: now declares variables: CUDASWITCH_CUDA: "11.8"' in r.stdout
    assert f.read_text() == PROJECT + INSERTED[1:]
    assert stat.S_IMODE(f.stat().st_mode) == 0o640
    r = run_cli(["use", "cu118", "-p", str(prefix), "--no-smoke", "--save", str(f)], env)
    assert r.returncode == 0 and "already declares" in r.stdout


def test_use_save_into_a_non_environment_file_changes_nothing(tmp_path, clean_env, real_trees):
    prefix = _env(tmp_path)
    f = tmp_path / "settings.yml"
    f.write_bytes(b"lr: 0.001\nbatch: 64\n")
    env = dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))
    r = run_cli(["use", "11.8", "-p", str(prefix), "--no-smoke", "--save", str(f)], env)
    assert one_line_error(r, 2) == (
        f"cudaswitch: error: {f} is not a conda environment file (expected a mapping with 'dependencies:' or "
        f"'channels:'); not changed")
    assert f.read_bytes() == b"lr: 0.001\nbatch: 64\n"
    assert not (prefix / "etc").exists()  # and the environment was not switched either
    r = run_cli(["use", "11.8", "-p", str(prefix), "--no-smoke", "--save"], env, cwd=str(tmp_path))
    assert "no environment file environment.yml" in one_line_error(r, 2)


def test_declared_version_not_installed_says_what_is_needed(tmp_path, clean_env, real_trees):
    prefix = _env(tmp_path)
    (prefix / "conda-meta" / "state").write_text(json.dumps({"env_vars": {"CUDASWITCH_CUDA": "10.2"}}))
    env = dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))
    r = run_cli(["use", "-p", str(prefix), "--no-smoke"], env)
    line = one_line_error(r, 2)
    assert "no CUDA toolkit matches '10.2'" in line and "this environment declares CUDA 10.2" in line
    assert "https://developer.nvidia.com/cuda-toolkit-archive" in line
    r = run_cli(["use", "-p", str(_env(tmp_path, "bare")), "--no-smoke"], env)
    assert "missing SELECTOR" in one_line_error(r, 2)


def test_round_trip_through_real_conda_create_export_and_use(tmp_path, clean_env, real_trees, real_conda):
    """--save writes the file; real `conda env create` stores the entry in conda-meta/state; `use` without a
    selector applies it; `conda env export` writes it back."""
    home = tmp_path / "home"
    home.mkdir()
    cenv = {k: v for k, v in clean_env.items() if k != "CONDARC"}
    cenv.update(HOME=str(home), CONDA_SOLVER="classic", CUDASWITCH_SEARCH_PATH=str(real_trees))
    f = tmp_path / "environment.yml"
    original = "# demo project\nname: demo\nchannels:\n  - conda-forge  # only\ndependencies: []\n"
    f.write_text(original)
    scratch = _env(tmp_path, "scratch")
    r = run_cli(["use", "11.8", "-p", str(scratch), "--no-smoke", "--save", str(f)], cenv)
    assert r.returncode == 0, r.stderr
    assert f.read_text() == original + 'variables:\n  CUDASWITCH_CUDA: "11.8"\n'
    prefix = tmp_path / "made"
    real_conda.run(["env", "create", "-f", str(f), "-p", str(prefix), "--offline"], env=cenv)
    state = json.loads((prefix / "conda-meta" / "state").read_text())
    assert state["env_vars"]["CUDASWITCH_CUDA"] == "11.8"
    r = run_cli(["use", "-p", str(prefix), "--no-smoke"], cenv)
    assert r.returncode == 0, r.stderr
    assert "Using CUDA 11.8: this environment declares CUDA 11.8" in r.stdout
    assert f"now uses CUDA 11.8.89 ({real_trees / 'cuda-11.8'})" in r.stdout
    exported = real_conda.run(["env", "export", "-p", str(prefix)], env=cenv).stdout
    assert "variables:\n  CUDASWITCH_CUDA: '11.8'\n" in exported
    # the exported file is an environment file --save accepts, and it already declares 11.8
    g = tmp_path / "exported.yml"
    g.write_text(exported)
    r = run_cli(["use", "11.8", "-p", str(prefix), "--no-smoke", "--save", str(g)], cenv)
    assert r.returncode == 0 and "already declares" in r.stdout and g.read_text() == exported


# ---- property: whatever the file looks like, at most one of its lines changes -----------------------------------


_comment = st.sampled_from(["", "  # pinned", "   # 注释 comment", "  #!final"])
_value = st.sampled_from(["offline", "'1'", '"a b"', "x:y", "12.1"])
_name = st.sampled_from(["WANDB_MODE", "OMP_NUM_THREADS", "HF_HOME", "CUDASWITCH_CUDA"])


@st.composite
def env_files(draw):
    lines = [draw(st.sampled_from(["# project env", "", "---"]))]
    lines.append("name: demo" + draw(_comment))
    if draw(st.booleans()):
        lines += ["channels:", "  - conda-forge" + draw(_comment)]
    deps = ["dependencies:", "  - python=3.11", "  - &np numpy" + draw(_comment)]
    if draw(st.booleans()):
        deps += ["  - pip", "  - pip:", "      - torch==2.1.2+cu118" + draw(_comment)]
    style = draw(st.sampled_from(["none", "block", "flow", "empty"]))
    variables = []
    if style == "block":
        names = draw(st.lists(_name, min_size=1, max_size=3, unique=True))
        indent = draw(st.sampled_from([2, 4]))
        variables = ["variables:" + draw(_comment)]
        variables += [f"{' ' * indent}{n}: {draw(_value)}{draw(_comment)}" for n in names]
    elif style == "flow":
        names = draw(st.lists(_name, max_size=2, unique=True))
        variables = ["variables: {" + ", ".join(f"{n}: {draw(_value)}" for n in names) + "}" + draw(_comment)]
    elif style == "empty":
        variables = ["variables:"]
    blocks = [deps, variables] if draw(st.booleans()) else [variables, deps]
    for b in blocks:
        lines += b
        if draw(st.booleans()):
            lines.append("")
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    return nl.join(lines) + (nl if draw(st.booleans()) else "")


@settings(max_examples=150, deadline=None)
@given(env_files(), st.sampled_from(["11.8", "12.4", "13.0"]))
def test_any_environment_file_changes_in_at_most_one_place(text, version):
    import difflib

    from ruamel.yaml import YAML

    new, changed = updated_text(text, version)
    assert YAML(typ="safe").load(new)["variables"]["CUDASWITCH_CUDA"] == version
    old_lines, new_lines = text.splitlines(keepends=True), new.splitlines(keepends=True)
    ops = [op for op in difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False).get_opcodes()
           if op[0] != "equal"]
    removed = sum(i2 - i1 for _, i1, i2, _, _ in ops)
    added = sum(j2 - j1 for _, _, _, j1, j2 in ops)
    # one line rewritten in place, or one or two lines added (plus the final line break a file without one gets)
    assert removed <= 1 and added <= 2 + (not text.endswith("\n")), (text, new)
    if "\r\n" in text:
        assert "\n" not in new.replace("\r\n", "")
    assert updated_text(new, version) == (new, False)
