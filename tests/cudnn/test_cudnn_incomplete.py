"""An archive without a library the main one loads (libcudnn_graph.so.9, which holds cudnnGetVersion): the files go
in, the load check fails, and install-cudnn says which library is missing and exits 1; uninstall-cudnn undoes it."""

from __future__ import annotations

import json

import pytest

import cudnn_archives as ca
from conftest import run_cli
from cudnn_checks import ok, snap


@pytest.mark.parametrize("lang", ["en_US.UTF-8", "zh_CN.UTF-8"])
def test_an_archive_without_libcudnn_graph_fails_and_names_it(lang, linux_fs, tmp_path):
    fs, env = linux_fs
    env = dict(env, LANG=lang, LC_ALL=lang)
    entries = [e for e in ca.linux_entries("9.10.2.21", "12") if "libcudnn_graph" not in e[0]]
    tmp_path.joinpath("a").mkdir()
    archive = ca.write_tar(tmp_path / "a" / "cudnn-linux-x86_64-9.10.2.21_cuda12-archive.tar.xz", entries)
    before = snap(fs)
    r = run_cli(["install-cudnn", str(archive), "--cuda", "12.9"], env)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    said = {"en_US.UTF-8": "cudaswitch: error: the installed libcudnn.so.9 does not load: libcudnn_graph.so.9 missing;",
            "zh_CN.UTF-8": "cudaswitch: 错误: 安装的 libcudnn.so.9 无法加载：缺少 libcudnn_graph.so.9；"}[lang]
    assert last.startswith(said), r.stderr
    assert "uninstall-cudnn --cuda" in r.stdout  # the undo is still given
    ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env))
    assert snap(fs) == before
    r = run_cli(["install-cudnn", str(archive), "--cuda", "12.9", "--json"], env)
    rec = json.loads(r.stdout)
    assert r.returncode == 1 and rec["verify"]["missing"] == ["libcudnn_graph.so.9"]
    assert "libcudnn_graph.so.9 missing from /usr/local/cuda-12.9/lib" in rec["verify"]["library_error"]
