"""`smoke`, `doctor`, `recommend` and the conda plugin in Chinese (LANG=zh_CN.UTF-8): every line a user reads is
Chinese, the values in it (paths, versions, codes, commands) are the same, and `--json` and the exit codes are the
same bytes in both languages."""

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "fake_torch"))

import cudatrees  # noqa: E402
import texts  # noqa: E402
from conftest import run_cli  # noqa: E402
from cudaswitch.checks.diagnosis import classify  # noqa: E402
from cudaswitch.checks.driver import Driver  # noqa: E402
from cudaswitch.checks.runner import ProbeOutcome  # noqa: E402
from cudaswitch.core import i18n  # noqa: E402

ZH = {"LANG": "zh_CN.UTF-8"}
RECORDS = Path(__file__).parent.parent / "fake_torch" / "records"
CJK = re.compile(r"[\u4e00-\u9fff]")
# English sentences of these commands: none may be left in a Chinese line
ENGLISH = ["smoke test:", "result:", "max CUDA", "fix:", "is a CPU-only build", "  because ", "note:",
           "driver supports", "no torch release", "does not exist", "for every process", "problems found",
           "no NVIDIA driver", "computes on", "CPU build", "is not in torch", "no problems", "table sources",
           "(from its files)", "shell toolkit", "environment:", " on cpu", "switched to", "hook files",
           "was built for", "is built for", "wheels are now installed", "with an installed toolkit"]


@pytest.fixture(autouse=True)
def _fresh_language():
    i18n.set_language(None)
    yield
    i18n.set_language(None)


def _env(clean_env, **extra):
    env = {k: v for k, v in clean_env.items() if k not in ("CUDASWITCH_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES",
                                                           "LANG", "PYTHONIOENCODING")}
    env.update(extra)
    return env


def assert_chinese(text):
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert lines, text
    left = [(e, ln) for ln in lines for e in ENGLISH if e in ln]
    assert not left, left
    # every line but a bare command (the pip line) or a value-only line is Chinese
    plain = [ln for ln in lines if not CJK.search(ln) and not ln.startswith(("pip ", "torch ", "  python ",
                                                                               "  torch ", "  cuda "))]
    assert not plain, plain


def _timeless(rec):
    """A smoke record without what a second run measures differently."""
    rec = json.loads(json.dumps(rec))
    rec.pop("seconds", None)
    for step in rec.get("steps", {}).values():
        step.pop("seconds", None)
        (step.get("detail") or {}).pop("gflops", None)
    return rec


# ---- smoke ------------------------------------------------------------------------------------------------

def test_smoke_of_the_real_cpu_torch_reads_in_chinese_and_its_json_does_not_change(torch_env, clean_env):
    zh = run_cli(["smoke", "-p", str(torch_env)], env=_env(clean_env, **ZH))
    assert zh.returncode == 1, zh.stderr
    out = zh.stdout
    assert f"冒烟测试：{torch_env.name}（{torch_env}）" in out
    assert "torch      2.13.0+cpu  CUDA 无（CPU 版）" in out
    assert "matmul     通过" in out and "秒，设备 cpu" in out
    assert "错误       CPU_ONLY_BUILD: torch 2.13.0+cpu 是 CPU 版（torch.version.cuda 为 None）" in out
    assert "解决: 从 CUDA 版的下载源（index）重新安装 torch" in out
    assert "结果：失败（CPU_ONLY_BUILD: torch 2.13.0+cpu 是 CPU 版（torch.version.cuda 为 None）；没有 GPU）" in out
    assert_chinese(out)
    en = run_cli(["smoke", "-p", str(torch_env), "--json", "--cpu-ok"], env=_env(clean_env, LANG="en_US.UTF-8"))
    zh = run_cli(["smoke", "-p", str(torch_env), "--json", "--cpu-ok"], env=_env(clean_env, **ZH))
    assert zh.returncode == en.returncode == 0
    assert _timeless(json.loads(zh.stdout)) == _timeless(json.loads(en.stdout))
    rec = json.loads(zh.stdout)
    assert rec["cause"] == "torch computes on the CPU" and rec["result"] == "no GPU"
    assert rec["findings"][0]["cause"] == ("torch 2.13.0+cpu is a CPU-only build (torch.version.cuda is None): "
                                           "no GPU test (--cpu-ok)")


def test_a_gpu_record_reads_in_chinese(tmp_path):
    """The H200 record (a real probe run) through the renderer: GPU, chain and verdict lines."""
    from cudaswitch.checks.runner import _parse
    from cudaswitch.checks.smoke import report_from_outcome, smoke_lines
    from cudaswitch.core.system import System
    from cudaswitch.discovery.environment import CondaEnv

    text = (RECORDS / "h200_torch2.11_cu130.out").read_text()
    prefix = tmp_path / "env"
    (prefix / "conda-meta").mkdir(parents=True)
    report = report_from_outcome(ProbeOutcome(_parse(text), 0, text, "", False, "done"),
                                 CondaEnv(str(prefix), "env", False), {}, System(environ={}))
    english = smoke_lines(report)
    i18n.set_language("zh_CN")
    lines = "\n".join(smoke_lines(report))
    assert "  显卡驱动   最高支持 CUDA 13.0（显卡驱动 580.159.04） [libcuda]" in lines
    assert "  架构列表   sm_75 sm_80 sm_86 sm_90 sm_100 sm_120" in lines
    assert ("  依赖链     显卡驱动 vs torch 的 CUDA：正常（显卡驱动最高支持 CUDA 13.0；CUDA 13.0 的构建可以运行"
            "（CUDA 13.0 在 Linux 上需要显卡驱动 >= 580.65.06））") in lines
    assert "  依赖链     GPU 架构 vs 构建：正常（sm_90 vs sm_75 sm_80 sm_86 sm_90 sm_100 sm_120）" in lines
    assert lines.endswith("结果：通过（OK: torch 能在 GPU 上计算；gpu）")
    assert_chinese(lines)
    assert report.chain[0]["detail"].startswith("driver supports up to CUDA 13.0")  # the record stays English
    i18n.set_language("en")
    assert smoke_lines(report) == english


def _failed_import(message, **extra):
    rec = {"python": {"version": "3.10.11", "bits": 64, "platform": "win32"},
           "import": {"ok": False, "error": {"type": "OSError", "message": message}}}
    rec.update(extra)
    return ProbeOutcome(rec, 0, "", "", False, "import_torch")


@pytest.mark.parametrize("name, outcome", [
    ("DLL_INIT_FAILED", _failed_import(texts.WINERROR_1114)),
    ("DLL_NOT_FOUND", _failed_import(texts.WINERROR_126)),
    ("IMPORT_FAILED", _failed_import("DLL load failed while importing _C")),
    ("PROBE_TIMEOUT", ProbeOutcome(None, None, "", "", True, "matmul")),
    ("PROBE_CRASHED", ProbeOutcome(None, -11, "", "Segmentation fault\n", False, "import_torch")),
])
def test_causes_with_values_are_translated_and_stay_english_in_the_record(tmp_path, name, outcome):
    findings = classify(outcome, str(tmp_path), {}, True, False, Driver("libcuda", None))
    f = next(f for f in findings if f.code == name)
    english = f.to_json()
    i18n.set_language("zh_CN")
    cause, fix = i18n.tr(f.cause), i18n.tr(f.fix)
    assert CJK.search(cause) and CJK.search(fix), (cause, fix)
    assert f.to_json() == english and not CJK.search(english["cause"] + english["fix"])


# ---- doctor -------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fsroot(tmp_path_factory):
    """A `/` holding CUDA 12.9 (real NVIDIA wheel files), pinned by /etc/ld.so.conf.d."""
    return _pinned(tmp_path_factory.mktemp("root"), "/usr/local/cuda-12.9/targets/x86_64-linux/lib")


def _pinned(root, *folders):
    """`root` holding CUDA 12.9 (real NVIDIA wheel files) and an /etc/ld.so.conf.d file naming `folders`."""
    cudatrees.cuda_12_9(root / "usr" / "local" / "cuda-12.9")
    conf = root / "etc" / "ld.so.conf.d"
    conf.mkdir(parents=True)
    (conf / "988_cuda-12.conf").write_text("".join(f"{f}\n" for f in folders))
    return root


def test_doctor_reads_in_chinese_and_its_json_does_not_change(fsroot, clean_env, tmp_path):
    prefix = tmp_path / "实验室"
    (prefix / "conda-meta").mkdir(parents=True)
    base = dict(clean_env, CUDASWITCH_FS_ROOT=str(fsroot), CONDA_OVERRIDE_CUDA="12.4",
                CUDA_HOME="/usr/local/cuda-12.9", CUDA_PATH="/usr/local/cuda-12.1")
    args = ["doctor", "-p", str(prefix)]
    zh = run_cli(args, env=_env(base, **ZH))
    assert zh.returncode == 1, zh.stderr
    out = zh.stdout
    assert out.startswith("依赖链：显卡驱动 → CUDA 工具包 → cuDNN → PyTorch → Python\n")  # the chain first
    assert "\n显卡驱动：最高支持 CUDA 12.4 [CONDA_OVERRIDE_CUDA]\n" in out
    assert f"虚拟环境：实验室（{prefix}）" in out
    assert "错误     CUDA_PATH_MISSING: CUDA_PATH=/usr/local/cuda-12.1 不存在" in out
    assert "解决: 把 CUDA_PATH 指向一个已安装的工具包（见 `cudaswitch list`），或删除这个环境变量" in out
    assert "LDCONF_PINS_CUDA: /etc/ld.so.conf.d/988_cuda-12.conf 把 /usr/local/cuda-12.9/targets/x86_64-linux/lib" in out
    assert "放进了动态链接器缓存：除非 LD_LIBRARY_PATH 或程序自己的 RPATH 指向另一份" in out
    assert "停用 /etc/ld.so.conf.d/988_cuda-12.conf 并运行 `sudo ldconfig`" in out
    assert ("DRIVER_BELOW_TOOLKIT: 显卡驱动支持 CUDA 12.4，但 shell 当前的工具包是 CUDA 12.9.1（/usr/local/cuda-12.9）："
            "用它编译的程序只能在次版本兼容模式下运行") in out
    assert out.rstrip().endswith("结果：发现问题")
    assert_chinese(out)
    en = run_cli(args + ["--json"], env=_env(base, LANG="en_US.UTF-8"))
    zh = run_cli(args + ["--json"], env=_env(base, **ZH))
    assert zh.returncode == en.returncode == 1 and zh.stdout == en.stdout
    causes = {f["code"]: f["cause"] for f in json.loads(zh.stdout)["findings"]}
    assert causes["CUDA_PATH_MISSING"] == "CUDA_PATH=/usr/local/cuda-12.1 does not exist"


def test_a_finding_lists_its_folders_as_a_chinese_reader_lists(tmp_path, clean_env):
    """A finding naming two folders: 、 between them in Chinese; the record (--json) keeps ', '."""
    root = _pinned(tmp_path / "root", "/usr/local/cuda-12.9/targets/x86_64-linux/lib", "/usr/local/cuda/lib64")
    base = dict(clean_env, CUDASWITCH_FS_ROOT=str(root), CONDA_OVERRIDE_CUDA="12.9")
    folders = ("/usr/local/cuda-12.9/targets/x86_64-linux/lib (CUDA 12.9.1)", "/usr/local/cuda/lib64")
    zh = run_cli(["doctor"], env=_env(base, **ZH))
    assert f"LDCONF_PINS_CUDA: /etc/ld.so.conf.d/988_cuda-12.conf 把 {'、'.join(folders)} 放进了动态链接器缓存" \
        in zh.stdout, zh.stdout
    en = run_cli(["doctor", "--json"], env=_env(base, LANG="en_US.UTF-8"))
    assert run_cli(["doctor", "--json"], env=_env(base, **ZH)).stdout == en.stdout
    cause = next(f["cause"] for f in json.loads(en.stdout)["findings"] if f["code"] == "LDCONF_PINS_CUDA")
    assert cause.startswith(f"/etc/ld.so.conf.d/988_cuda-12.conf puts {', '.join(folders)} in the loader cache")


def test_doctor_without_driver_or_problems_reads_in_chinese(tmp_path, clean_env):
    root = tmp_path / "root"
    root.mkdir()
    env = _env(clean_env, CUDASWITCH_FS_ROOT=str(root), CONDA_OVERRIDE_CUDA="", **ZH)
    r = run_cli(["doctor"], env=env)
    assert r.returncode == 0, r.stderr
    assert "提示     NO_DRIVER: 没有找到 NVIDIA 显卡驱动（CONDA_OVERRIDE_CUDA 为空（视为没有显卡驱动））：只能用 CPU" in r.stdout
    assert r.stdout.rstrip().endswith("结果：正常")
    assert_chinese(r.stdout)


# ---- recommend ----------------------------------------------------------------------------------------------

def test_recommend_reads_in_chinese_and_its_json_does_not_change(clean_env):
    args = ["recommend", "--cuda", "12.2", "--cc", "8.6", "--python", "3.10"]
    zh = run_cli(args, env=_env(clean_env, **ZH))
    assert zh.returncode == 0, zh.stderr
    out = zh.stdout
    assert "显卡驱动最高支持 CUDA：12.2 [--cuda]；GPU 算力：8.6；Python 3.10（--python）；linux" in out
    assert "  理由：显卡驱动支持 CUDA 12.2 >= 11.8（cu118）" in out
    assert "  理由：Python 3.10 在 torch 2.7.1 支持的范围内" in out
    assert "  注意：更新的构建（如 torch " in out and "加上 --cuda 12.6 可选用它们" in out
    assert ("pip install torch==2.7.1 torchvision==0.22.1 torchaudio==2.7.1 --index-url "
            "https://download.pytorch.org/whl/cu118") in out.splitlines()
    assert_chinese(out)
    en = run_cli(args + ["--json"], env=_env(clean_env, LANG="en_US.UTF-8"))
    zh = run_cli(args + ["--json"], env=_env(clean_env, **ZH))
    assert zh.returncode == en.returncode == 0 and zh.stdout == en.stdout
    # nothing fits: the reason in Chinese, exit 1 in both languages, the same JSON
    args = ["recommend", "--torch", "9.9", "--cuda", "12.2", "--python", "3.10"]
    zh = run_cli(args, env=_env(clean_env, **ZH))
    assert zh.returncode == 1 and "没有合适的 torch 版本：" in zh.stdout
    assert "cudaswitch 的数据表里没有 torch 9.9（已知版本：" in zh.stdout
    assert_chinese(zh.stdout)
    en = run_cli(args + ["--json"], env=_env(clean_env, LANG="en_US.UTF-8"))
    zh = run_cli(args + ["--json"], env=_env(clean_env, **ZH))
    assert zh.returncode == en.returncode == 1 and zh.stdout == en.stdout


# ---- conda plugin ----------------------------------------------------------------------------------------------

def test_conda_doctor_and_the_note_after_an_update_read_in_chinese(tmp_path, clean_env, real_conda, real_trees):
    import nvidia_wheels
    from conftest import REPO, run_cli
    from realconda import plugin_prefix as _prefix, plugin_site as _plugin_dir

    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in _env(clean_env, **ZH).items() if k not in ("CONDARC", "PYTHONPATH")}

    # realconda merges os.environ, where the test session forces English: empty, LANG decides again
    env.update(HOME=str(home), CONDA_SOLVER="classic", CUDASWITCH_SEARCH_PATH=str(real_trees), CUDASWITCH_LANG="",
               PYTHONPATH=os.pathsep.join([str(REPO), str(_plugin_dir(tmp_path))]))
    p = _prefix(tmp_path)
    assert run_cli(["use", "12.9", "-p", str(p), "--no-smoke"], env).returncode == 0
    r = real_conda.run(["doctor", "-p", str(p), "cudaswitch"], env=env, check=False)
    out = r.stdout
    assert "✅ CUDA（cudaswitch）：已切换到 CUDA 12.9.1" in out and "个激活脚本文件，来自 cudaswitch" in out, out
    ok_line = next(line for line in out.splitlines() if line.startswith("✅"))
    assert "；" in ok_line and "; " not in ok_line, ok_line  # the checks joined full-width (glossary.md)
    # torch built for another CUDA major: a problem with its fix
    sp = p / "lib" / "python3.11" / "site-packages"
    (sp / "torch").mkdir()
    (sp / "torch" / "version.py").write_text("__version__ = '2.8.0+cu118'\ncuda: Optional[str] = '11.8'\n")
    (sp / "torch-2.8.0+cu118.dist-info").mkdir()
    r = real_conda.run(["doctor", "-p", str(p), "cudaswitch"], env=env, check=False)
    out = r.stdout
    assert "❌ CUDA（cudaswitch）：" in out
    assert ("错误     TORCH_TOOLKIT_MAJOR_MISMATCH: torch 2.8.0+cu118 是为 CUDA 11.8 编译的，但该虚拟环境使用 CUDA "
            "12.9.1：torch.utils.cpp_extension 拒绝用另一个 CUDA 主版本编译扩展") in out, out
    assert f"解决: cudaswitch use 11.8 -p {p}" in out
    shutil.rmtree(sp / "torch")
    shutil.rmtree(sp / "torch-2.8.0+cu118.dist-info")
    # pip CUDA wheels next to hooks that put the toolkit's lib first: one Chinese line after `conda update`
    info = next(nvidia_wheels.extracted("nvidia-cuda-runtime-cu12==12.9.79").glob("*.dist-info"))
    shutil.copytree(info, sp / info.name)
    r = real_conda.run(["update", "--all", "-p", str(p), "--offline", "--yes"], env=env)
    lines = [line for line in r.stderr.splitlines() if line.startswith("cudaswitch")]
    assert lines == [f"cudaswitch: 警告 LD_LIBRARY_PATH_OVER_WHEELS：装有 pip 的 CUDA wheel 包（nvidia-cuda-runtime-cu12），"
                     f"而激活脚本把 CUDA 12.9.1 的 lib 文件夹放在 LD_LIBRARY_PATH 最前面：torch 会加载该工具包的 CUDA 库而"
                     f"不是 wheel 包里的，工具包的库较旧时 torch 就会出错（'undefined symbol __nvJitLink...'）；解决："
                     f"cudaswitch use --refresh --no-ld-library-path -p {p}"], r.stderr


def test_conda_health_records_stay_english(tmp_path):
    from cudaswitch.checks.conda_health import health
    from cudaswitch.core.system import System

    p = tmp_path / "p"
    (p / "conda-meta").mkdir(parents=True)
    env = {"CUDA_HOME": str(tmp_path / "a"), "CUDA_PATH": str(tmp_path / "b"), "PATH": ""}
    checks = health(str(p), System(environ=env))
    assert [c.code for c in checks] == ["NOT_SWITCHED", "CUDA_VARS_DISAGREE"]
    i18n.set_language("zh_CN")
    assert i18n.tr(checks[0].message) == "cudaswitch 没有在这个虚拟环境里切换 CUDA"
    assert i18n.tr(checks[1].message).startswith("当前 shell 的 CUDA 设置互相矛盾：CUDA_HOME=")
    assert i18n.tr(checks[1].fix).startswith("重新 conda activate 该虚拟环境")
    assert checks[1].message.startswith("this shell's CUDA settings disagree: CUDA_HOME=")
