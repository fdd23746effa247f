"""install-cudnn and uninstall-cudnn in Simplified Chinese (LANG=zh_CN.UTF-8): every line a user reads is Chinese,
the pasted undo command, paths, versions, `--json` and exit codes stay as they are in English."""

from __future__ import annotations

import json
import os
import re

import cudatrees
import winfiles as wf
from conftest import run_cli
from cudnn_checks import WTOP, ok
from cudaswitch.core import i18n

# English sentences of this area; none may be left in the Chinese output
ENGLISH = ["Dry run", "new,", "overwrite", "identical", "nothing was", "Installed", "Manifest:", "Verified",
           "Checked", "header only", "Undo with", "Removed", "files ->", "restored from backup", "is back", "refused",
           "for CUDA", " at /", "the only", "toolkit", "environment", "already has", "pass --yes", "note:",
           "warning:", "error:", "locked by", "another process", "unexpected folder", "path-traversal",
           "built for", "give one of them", "no such archive", "library"]


def zh(env):
    return dict(env, LANG="zh_CN.UTF-8")


def refused(proc, *needles, code=None):
    """One Chinese error line on stderr (the prefix translated too), a non-zero exit, no traceback."""
    assert proc.returncode != 0, proc.stdout + proc.stderr
    if code is not None:
        assert proc.returncode == code, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("cudaswitch: 错误: "), proc.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def assert_chinese(text):
    """Every non-empty line holds Chinese, and no English sentence of install-cudnn/uninstall-cudnn is left."""
    for line in text.splitlines():
        if line.strip():
            assert re.search(r"[\u4e00-\u9fff]", line), line
    for phrase in ENGLISH:
        assert phrase not in text, (phrase, text)


def test_dry_run_install_and_undo_print_chinese(archives, linux_fs):
    fs, env = linux_fs
    archive = str(archives["linux-9.10-archive"])
    english = ok(run_cli(["install-cudnn", archive, "--dry-run"], env))
    dry = ok(run_cli(["install-cudnn", archive, "--dry-run"], zh(env)))
    head, *plan, total = dry.stdout.splitlines()
    assert head == ("cuDNN 9.10.2.21（适用于 CUDA 12，linux） [cudnn-linux-x86_64-9.10.2.21_cuda12-archive/] -> "
                    "CUDA 12.9.1（/usr/local/cuda-12.9）（唯一已安装的 CUDA 12.x 工具包）")
    assert plan and all(line.startswith("  新增") for line in plan)
    # the plan names the same files in the same order as in English
    assert [line.split()[-1] for line in plan] == [line.split()[-1] for line in english.stdout.splitlines()[1:-1]]
    assert re.fullmatch(r"试运行：新增 \d+ 个，覆盖 0 个，相同 0 个；没有写入任何文件。", total)
    assert_chinese(dry.stdout)

    # scripts see the same record in every language
    j_en = json.loads(ok(run_cli(["install-cudnn", archive, "--dry-run", "--json"], env)).stdout)
    j_zh = json.loads(ok(run_cli(["install-cudnn", archive, "--dry-run", "--json"], zh(env))).stdout)
    assert j_zh == j_en

    done = ok(run_cli(["install-cudnn", archive], zh(env)))
    out = done.stdout
    assert re.search(r"^已安装 cuDNN 9\.10\.2\.21：新增 \d+ 个，替换 0 个（已备份），相同 0 个。$", out, re.M), out
    assert re.search(r"^  include\s+\d+ 个文件 -> /usr/local/cuda-12.9/include$", out, re.M), out
    assert re.search(r"^清单：/usr/local/cuda-12.9/\.cudaswitch/cudnn/\S+/manifest\.yaml$", out, re.M), out
    assert re.search(r"^已(验证|检查)：include/cudnn_version\.h 显示为 9\.10\.2；", out, re.M), out
    # the undo command is pasted as is: never translated
    assert out.splitlines()[-1] == "撤销命令：cudaswitch uninstall-cudnn --cuda /usr/local/cuda-12.9"
    assert_chinese(out.replace("cudaswitch uninstall-cudnn --cuda /usr/local/cuda-12.9", ""))
    assert "Traceback" not in done.stderr

    undo = ok(run_cli(["uninstall-cudnn"], zh(env)))
    assert re.fullmatch(r"已从 CUDA 12\.9\.1（/usr/local/cuda-12\.9）移除 cuDNN 9\.10\.2\.21：删除 \d+ 个文件，从备份恢复 0 个。\n",
                        undo.stdout), undo.stdout
    assert_chinese(undo.stdout)


def test_replacing_another_cudnn_and_undoing_it_print_chinese(archives, linux_fs):
    fs, env = linux_fs
    ok(run_cli(["install-cudnn", str(archives["linux-8.9-archive"])], env))
    en = run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], env)
    line = refused(run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], zh(env)), code=en.returncode)
    assert line.startswith("cudaswitch: 错误: CUDA 12.9.1（/usr/local/cuda-12.9）里已有 cuDNN 8.9.7；加 --yes 才会用 "
                           "9.10.2 替换它（uninstall-cudnn 可撤销）；没有做任何改动"), line
    assert_chinese(line)
    replaced = ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"], zh(env)))
    # 8.x's libcudnn_*_infer/_train files stay: more than six, so the first six are named, listed as Chinese lists
    left = next(ln for ln in replaced.stderr.splitlines() if "仍留在原处" in ln).split("没有替换它们：", 1)[1]
    assert re.fullmatch(r"libcudnn\S+(、libcudnn\S+){5} 等另外 \d+ 个", left), left
    undo = ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], zh(env)))
    assert "从备份恢复" in undo.stdout and "cuDNN 8.9.7 已恢复。" in undo.stdout, undo.stdout
    assert_chinese(undo.stdout)
    # nothing left to undo from cudaswitch's records: the error is Chinese, its exit code the English one
    ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], zh(env)))
    en = run_cli(["uninstall-cudnn", "--cuda", "12.9"], env)
    line = refused(run_cli(["uninstall-cudnn", "--cuda", "12.9"], zh(env)), "没有 cudaswitch 安装的 cuDNN",
                   code=en.returncode)
    assert_chinese(line)


def test_refusals_are_chinese_with_the_english_exit_codes(archives, linux_fs, win_fs, tmp_path):
    fs, env = linux_fs
    cases = [
        (["install-cudnn", str(archives["linux-9.10-archive"]), "--cuda", "11.8"], env,
         "已拒绝：这个 cuDNN 是为 CUDA 12 构建的，而 CUDA 11.8.89（/usr/local/cuda-11.8）是 CUDA 11.x"),
        (["install-cudnn", str(archives["linux-9.10-archive"]), "--cuda", "12.9", "--into-env"], env,
         "--cuda 装进 CUDA 工具包，--into-env/-n/-p 装进 conda 虚拟环境：请只给其中一个"),
        (["install-cudnn", str(tmp_path / "missing.tar.xz")], env, "没有这个压缩包："),
        (["uninstall-cudnn", "--cuda", "12.9", "-p", str(tmp_path)], env, "--cuda 恢复 CUDA 工具包"),
    ]
    # hostile archives: a zip-slip entry and a folder NVIDIA never uses
    import zipfile

    slip = tmp_path / "slip" / f"{WTOP}.zip"
    stray = tmp_path / "stray" / f"{WTOP}.zip"
    for path, member in ((slip, f"{WTOP}/../../Windows/System32/cudnn64_9.dll"),
                         (stray, f"{WTOP}/lib/x64_win/cudnn.lib")):
        path.parent.mkdir()
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr(member, b"MZ")
    wroot, wenv = win_fs
    cases += [(["install-cudnn", str(slip), "--cuda", "12.4"], wenv, "含有 '..'（路径穿越条目）"),
              (["install-cudnn", str(stray), "--cuda", "12.4"], wenv, "意外的文件夹 " + WTOP + "/lib/x64_win/（库文件应在")]
    for args, e, needle in cases:
        en = run_cli(args, e)
        line = refused(run_cli(args, zh(e)), code=en.returncode)
        assert needle in line, line
        assert_chinese(line.replace(str(tmp_path), ""))
        assert en.returncode != 0


def test_a_held_lock_is_reported_in_chinese(archives, linux_fs, monkeypatch):
    import fcntl

    from cudaswitch.cudnn import lock

    monkeypatch.setattr(lock, "LOCK_WAIT", 0.2)
    fs, env = linux_fs
    fd = os.open(fs / "usr/local/cuda-12.9", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        line = refused(run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], zh(env)))
    finally:
        os.close(fd)
    assert "CUDA 12.9.1（/usr/local/cuda-12.9）被另一个进程锁住了（已等待 0.2 秒）" in line and line.endswith("没有做任何改动"), line
    assert_chinese(line)


def test_windows_installer_findings_are_chinese(tmp_path):
    """NVIDIA's exe installer puts ...\\v9.x\\bin on PATH, where no DLL lies: both findings, translated when printed."""
    from cudaswitch.checks.doctor import cudnn_windows_findings
    from cudaswitch.discovery.cudnn_windows import find_installed

    cudatrees.windows_cudnn_installer(tmp_path, cuda="12.9", x64=True)
    system = wf.win_system(tmp_path, path=wf.INSTALLER + r"\bin;C:\Windows\System32")
    findings = cudnn_windows_findings(system, find_installed(system), [])
    assert [f.code for f in findings] == ["CUDNN_BIN_WITHOUT_DLL", "CUDNN_NOT_ON_PATH"]
    english = [(f.cause, f.fix) for f in findings]
    i18n.set_language("zh_CN")
    try:
        texts = [(i18n.tr(f.cause), i18n.tr(f.fix)) for f in findings]
    finally:
        i18n.set_language(None)
    (cause1, fix1), (cause2, fix2) = texts
    assert cause1.startswith("PATH 中有 NVIDIA cuDNN 安装程序添加的 " + wf.INSTALLER + r"\bin，"), cause1
    assert fix1 == "请改为把对应你的 CUDA 版本的文件夹加入 PATH：" + wf.INSTALLER + r"\bin\12.9\x64", fix1
    assert cause2.startswith("PATH 上找不到任何 cudnn64_*.dll"), cause2
    assert fix2 == ("请把对应你的 CUDA 版本、含有 cudnn64_9.dll 的文件夹加入 PATH：" + wf.INSTALLER
                    + r"\bin\12.9\x64（cuDNN 9.10.2，适用于 CUDA 12.9）"), fix2
    # the records themselves stay English (doctor --json)
    assert english[0][0].startswith("PATH holds ") and english[1][1].startswith("put the folder holding cudnn64_9.dll")
