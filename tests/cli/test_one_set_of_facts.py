"""What `use`, `off` and `which` say is what they did: `use SELECTOR --json` is the same dry run for every selector,
`off` names the startup file apart from the hook files, `--no-ld-library-path` is said, a folder that is no toolkit
is told so once; in English and in Chinese."""

from __future__ import annotations

import json

import pytest

from conftest import make_env, one_line_error, run_cli
from cudnn_checks import snap


@pytest.fixture
def cli_env(clean_env, real_trees):
    return dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))


@pytest.fixture
def py_env(tmp_path):
    """An environment with a Python in it (bin/python3.11 and its site-packages), so `use` writes the startup file."""
    prefix = make_env(tmp_path / "envs" / "work")
    (prefix / "lib/python3.11/site-packages").mkdir(parents=True)
    (prefix / "bin").mkdir()
    (prefix / "bin/python3.11").write_bytes(b"")
    return prefix


def zh(env):
    return dict(env, LANG="zh_CN.UTF-8", LC_ALL="zh_CN.UTF-8")


@pytest.mark.parametrize("selector", ["12.9", "cuda-12.9", "PATH"])
def test_use_json_is_a_dry_run_for_every_selector(selector, cli_env, py_env, real_trees):
    root = str(real_trees / "cuda-12.9")
    sel = root if selector == "PATH" else selector
    before = snap(py_env)
    for env in (cli_env, zh(cli_env)):
        r = run_cli(["use", sel, "-p", str(py_env), "--json"], env)
        assert r.returncode == 0, r.stderr
        rec = json.loads(r.stdout)  # nothing but the record on stdout, in either language
        assert rec["dry_run"] is True and rec["selector"] == sel
        assert rec["toolkit"] == {"version": "12.9.1", "root": root}
        assert rec["environment"] == {"name": "work", "prefix": str(py_env)}
        assert snap(py_env) == before  # nothing written: no hook, no state file
    en = run_cli(["use", sel, "-p", str(py_env), "--json"], cli_env).stdout
    assert run_cli(["use", sel, "-p", str(py_env), "--json"], zh(cli_env)).stdout == en


def test_off_names_the_startup_file_apart_from_the_hook_files(cli_env, py_env):
    for env, said in ((cli_env, "removed 10 hook files, the Python startup file and the state file."),
                      (zh(cli_env), "已删除 10 个激活脚本文件、Python 启动文件和状态文件。")):
        assert run_cli(["use", "12.9", "-p", str(py_env), "--no-smoke", "--no-verify"], env).returncode == 0
        r = run_cli(["off", "-p", str(py_env)], env)
        assert r.returncode == 0 and said in r.stdout, r.stdout


def test_no_ld_library_path_is_said(cli_env, tmp_path):
    prefix = make_env(tmp_path / "envs" / "plain")
    for env, said in ((cli_env, "LD_LIBRARY_PATH left alone (--no-ld-library-path)"),
                      (zh(cli_env), "未改动 LD_LIBRARY_PATH（--no-ld-library-path）")):
        r = run_cli(["use", "12.9", "-p", str(prefix), "--no-smoke", "--no-verify", "--no-ld-library-path"], env)
        assert r.returncode == 0 and said in r.stdout, r.stdout
        assert "LD_LIBRARY_PATH gets" not in r.stdout
        r = run_cli(["use", "12.9", "-p", str(prefix), "--no-smoke", "--no-verify"], env)
        assert r.returncode == 0 and "LD_LIBRARY_PATH left alone" not in r.stdout and "未改动" not in r.stdout


def test_a_folder_that_is_no_toolkit_is_told_so_once(cli_env, tmp_path):
    folder = tmp_path / "home" / "x"
    folder.mkdir(parents=True)
    prefix = make_env(tmp_path / "envs" / "plain")
    for args in (["use", str(folder), "-p", str(prefix), "--no-smoke"], ["which", str(folder)]):
        line = one_line_error(run_cli(args, cli_env), 2)
        assert line.count("not a CUDA toolkit") == 1, line
        assert f"{folder} is not a CUDA toolkit (no version.json, version.txt, cuda.h or nvcc found)" in line
        r = run_cli(args, zh(cli_env))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        line = r.stderr.strip()
        assert line.startswith("cudaswitch: 错误: ") and line.count("不是 CUDA 工具包") == 1 and "没有找到 version.json、version.txt、cuda.h 或 nvcc" in line, line


def _made_by_install_toolkit(src, store):
    """A copy of a real toolkit tree with the record install-toolkit leaves in what it made."""
    import os
    import shutil

    dest = store / "cuda-12.9"
    shutil.copytree(src, dest, symlinks=True)
    files = []
    for dirpath, dirs, names in os.walk(dest):
        for n in names + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            files.append(os.path.relpath(os.path.join(dirpath, n), dest).replace(os.sep, "/"))
    (dest / ".cudaswitch-toolkit.json").write_text(json.dumps({"version": "12.9.1", "files": files + [
        ".cudaswitch-toolkit.json"]}))
    return dest


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_uninstall_toolkit_force_names_the_environments_it_broke(lang, clean_env, real_trees, tmp_path):
    store = tmp_path / "store"
    tk = _made_by_install_toolkit(real_trees / "cuda-12.9", store)
    prefix = make_env(tmp_path / "envs" / "work")
    # conda finds it in an envs folder of its search path (CONDA_ENVS_DIRS), as uninstall-toolkit asks it
    env = dict(clean_env, CUDASWITCH_TOOLKITS_DIR=str(store), CONDA_ENVS_DIRS=str(prefix.parent))
    env = zh(env) if lang == "zh" else env
    assert run_cli(["use", str(tk), "-p", str(prefix), "--no-smoke", "--no-verify"], env).returncode == 0
    r = run_cli(["uninstall-toolkit", str(tk), "--force"], env)
    assert r.returncode == 0 and not tk.exists(), r.stderr
    said = {"en": f"warning: 1 conda environment(s) are still switched to {tk}, which is gone: {prefix}; ",
            "zh": f"警告: 仍有 1 个 conda 虚拟环境切换到已经不存在的 {tk}：{prefix}；"}[lang]
    assert r.stderr.startswith(said) and len(r.stderr.splitlines()) == 1, r.stderr


def test_one_answer_to_which_toolkit_a_wrapper_nvcc_is(cli_env, real_trees, tmp_path):
    """`nvcc` on PATH is a wrapper script (as /usr/local/bin/nvcc often is): status, doctor and conda doctor all
    name the toolkit it runs, so CUDA_HOME set to that toolkit agrees with it everywhere."""
    from cudaswitch.checks import conda_health
    from cudaswitch.core.system import System

    tk, other = real_trees / "cuda-12.9", real_trees / "cuda-11.8"
    bindir = tmp_path / "usr-local-bin"
    bindir.mkdir()
    (bindir / "nvcc").write_text(f'#!/bin/sh\nexec {tk}/bin/nvcc "$@"\n')
    (bindir / "nvcc").chmod(0o755)
    env = dict(cli_env, PATH=f"{bindir}:/usr/bin:/bin", CUDA_HOME=str(tk))
    shell = json.loads(run_cli(["status", "--json"], env).stdout)["shell"]
    nvcc = next(e for e in shell["entries"] if e["variable"] == "nvcc")
    assert nvcc["value"] == str(bindir / "nvcc") and nvcc["toolkit_root"] == str(tk)
    assert not shell["warnings"]
    codes = {f["code"] for f in json.loads(run_cli(["doctor", "--json"], env).stdout)["findings"]}
    assert "CUDA_VARS_DISAGREE" not in codes
    assert conda_health._shell_agreement(System(os="linux", environ=env)) == []
    # and a real disagreement is still one, on every surface
    env["CUDA_HOME"] = str(other)
    (found,) = conda_health._shell_agreement(System(os="linux", environ=env))
    assert found.code == "CUDA_VARS_DISAGREE" and f"nvcc={tk}" in found.message, found.message
    codes = {f["code"] for f in json.loads(run_cli(["doctor", "--json"], env).stdout)["findings"]}
    assert "CUDA_VARS_DISAGREE" in codes


def test_every_install_toolkit_the_guide_shows_is_one_the_tool_takes():
    """The guide's commands are pasted as they are: an `install-toolkit X.Y` it shows must not be refused (only
    CUDA 13.x can be assembled from NVIDIA's wheels)."""
    import re
    from pathlib import Path

    from cudaswitch.discovery.toolkit_install import parse_request, requirements

    guide = Path(__file__).resolve().parents[2] / "docs" / "guide"
    # a `$ ` line is a transcript, whose output right below it may well show the refusal
    shown = {(page.name, m.group(1)) for page in guide.glob("*.md")
             for line in page.read_text(encoding="utf-8").splitlines() if not line.startswith("$ ")
             for m in re.finditer(r"cudaswitch install-toolkit (\d+\.\d+)\b", line)}
    assert ("clusters.md", "13.0") in shown and ("clusters.zh.md", "13.0") in shown
    for page, version in sorted(shown):
        assert requirements(*parse_request(version)), (page, version)  # raises UsageError for a refused one


def test_envs_shows_the_torch_version_torch_reports(cu130_env, clean_env, tmp_path):
    """PyPI's torch 2.14.1+cu130 (its real files): its dist-info says 2.14.1, torch/version.py 2.14.1+cu130, which
    is what torch.__version__ and doctor say; envs says it too."""
    env = dict(clean_env, HOME=str(tmp_path / "home"), CONDA_ENVS_DIRS=str(cu130_env.parent))
    rows = json.loads(run_cli(["envs", "--json"], env).stdout)["envs"]
    (row,) = [r for r in rows if r["prefix"] == str(cu130_env)]
    assert row["torch"]["version"] == "2.14.1+cu130" and row["torch"]["cuda"] == "13.0"
    text = run_cli(["envs"], env).stdout
    assert "2.14.1+cu130 (CUDA 13.0" in text, text
    doc = run_cli(["doctor", "-p", str(cu130_env)], env).stdout
    assert "torch (from its files): 2.14.1+cu130" in doc


def test_a_file_that_is_no_archive_is_told_so_before_asking_for_cuda(linux_fs, tmp_path):
    fs, env = linux_fs
    notes = tmp_path / "cudnn-notes.txt"
    notes.write_text("not an archive\n")
    for e, said in ((env, "cudnn-notes.txt: not a .zip, .tar.xz or .tar.gz archive"),
                    (zh(env), "cudnn-notes.txt：不是 .zip、.tar.xz 或 .tar.gz 压缩包")):
        r = run_cli(["install-cudnn", str(notes)], e)
        assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert said in r.stderr and "--cuda" not in r.stderr, r.stderr


def test_a_cuda12_cudnn_into_an_unswitched_cuda13_torch_environment_is_refused(cu130_env, archives, clean_env):
    """No switch says which CUDA the environment has, but its torch 2.14.1+cu130 (real files) does."""
    before = snap(cu130_env)
    archive = archives["linux-9.10-archive"]
    for env, said in ((clean_env, "this cuDNN is built for CUDA 12 and conda environment cu130"), (zh(clean_env), "这个 cuDNN 是为 CUDA 12 构建的，而 conda 虚拟环境 cu130")):
        r = run_cli(["install-cudnn", str(archive), "-p", str(cu130_env)], env)
        assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert said in r.stderr and "_cuda13" in r.stderr and "--force" in r.stderr, r.stderr
    assert snap(cu130_env) == before
