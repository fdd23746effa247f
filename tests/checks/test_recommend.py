"""`cudaswitch recommend` and the knowledge tables behind it (cudaswitch/data/*.csv, sources in sources.csv)."""

import csv
import json
from pathlib import Path

import pytest

from conftest import make_env, one_line_error, run_cli

from cudaswitch.data import knowledge

DATA = Path(knowledge.__file__).parent / "data"


def recommend(env, *args):
    r = run_cli(["recommend", "--json", *args], env=env)
    assert "Traceback" not in r.stderr
    return r, json.loads(r.stdout)


def test_every_table_row_has_a_known_source():
    keys = knowledge.sources()
    assert "S40" in keys and "docs.nvidia.com" in keys["S40"]
    for path in sorted(DATA.glob("*.csv")):
        if path.name == "sources.csv":
            continue
        rows = list(csv.DictReader(path.open(encoding="utf-8")))
        assert rows, path
        for row in rows:
            cited = [k for k in row["src"].replace(";", " ").split() if k.startswith("S")]
            assert cited, (path.name, row)
            for k in cited:
                assert k.strip("(),") in keys, (path.name, k)


def test_driver_table_values():
    assert knowledge.min_driver("12.4") == ("550.54.14", "S40")
    assert knowledge.min_driver("11.3", windows=True) == ("465.89", "S40")
    assert knowledge.major_min_driver(12) == ("525.60.13", "S43;S44")
    assert knowledge.driver_runs("12.2", "12.1").status == "ok"
    assert knowledge.driver_runs("12.0", "12.4").status == "minor-compat"
    assert knowledge.driver_runs("11.4", "12.1").status == "too-old"


def test_cudnn_and_arch_tables():
    assert knowledge.cudnn_supports("8.2.1", "11.3")[0] is True
    assert knowledge.cudnn_supports("8.2.1", "12.1")[0] is False
    assert knowledge.cudnn_supports("9.10.2", "12.9")[0] is True
    assert knowledge.cudnn_number(91002) == "9.10.2" and knowledge.cudnn_number(8902) == "8.9.2"
    assert knowledge.arch_in_list("8.6", ["sm_80", "sm_90"]) is True  # same major, binary compatible
    assert knowledge.arch_in_list("12.0", ["sm_80", "sm_90"]) is False
    assert knowledge.arch_in_list("12.0", ["sm_90", "compute_90"]) is True  # PTX JIT
    assert knowledge.arch_supported("2.8.0", "cu128", "6.1") == (False, "S113")


def test_python_range_from_the_release_matrix():
    assert knowledge.python_ok("1.12.1", "3.13") == (False, "Python 3.7-3.10", "S98")
    assert knowledge.python_ok("2.13.0", "3.11")[0] is True


def test_driver_12_2_python_3_10(clean_env):
    r, rec = recommend(clean_env, "--cuda", "12.2", "--python", "3.10", "--cc", "8.6")
    assert r.returncode == 0
    x = rec["recommendation"]
    assert (x["torch"], x["torchvision"], x["torchaudio"], x["tag"]) == ("2.7.1", "0.22.1", "2.7.1", "cu118")
    assert x["command"] == ("pip install torch==2.7.1 torchvision==0.22.1 torchaudio==2.7.1 "
                            "--index-url https://download.pytorch.org/whl/cu118")
    assert rec["inputs"]["driver_source"] == "--cuda"
    assert "S98" in rec["sources"] or "S107" in rec["sources"]


def test_old_driver_and_python_3_8_get_torch_1_12(clean_env):
    r, rec = recommend(clean_env, "--cuda", "11.4", "--python", "3.8")
    x = rec["recommendation"]
    assert (x["torch"], x["tag"]) == ("1.12.1", "cu113")
    assert "--extra-index-url https://download.pytorch.org/whl/cu113" in x["command"]


def test_requested_release_with_a_python_it_has_no_wheel_for(clean_env):
    r, rec = recommend(clean_env, "--cuda", "12.4", "--python", "3.13", "--torch", "1.12")
    assert r.returncode == 1 and rec["recommendation"]["ok"] is False
    assert "no wheel for Python 3.13" in rec["recommendation"]["reasons"][0]


def test_gpu_architecture_decides_the_build(clean_env):
    r, rec = recommend(clean_env, "--cuda", "12.8", "--python", "3.12", "--torch", "2.8", "--cc", "6.1")
    x = rec["recommendation"]
    assert (x["torch"], x["tag"]) == ("2.8.0", "cu126")  # cu128/cu129 dropped Pascal (torch_arch.csv, sources.csv S113)
    assert any("compute capability 6.1" in s for s in x["skipped"])


def test_very_old_torch_uses_the_find_links_form(clean_env):
    r, rec = recommend(clean_env, "--cuda", "11.1", "--python", "3.8", "--torch", "1.9.1")
    assert rec["recommendation"]["command"] == (
        "pip install torch==1.9.1+cu111 torchvision==0.10.1+cu111 torchaudio==0.9.1+cu111 "
        "-f https://download.pytorch.org/whl/torch_stable.html")


def test_no_driver_gets_the_cpu_build(clean_env):
    clean_env["CONDA_OVERRIDE_CUDA"] = ""
    r, rec = recommend(clean_env, "--python", "3.11")
    x = rec["recommendation"]
    assert r.returncode == 0 and x["tag"] == "cpu" and x["index_url"].endswith("/whl/cpu")
    assert rec["inputs"]["driver_source"] == "CONDA_OVERRIDE_CUDA"


def test_python_from_the_environment(tmp_path, clean_env):
    prefix = make_env(tmp_path / "env", packages=["python-3.8.18-hd12c33a_0_cpython"])
    r, rec = recommend(clean_env, "-p", str(prefix), "--cuda", "11.4")
    assert rec["inputs"]["python"] == "3.8" and rec["recommendation"]["torch"] == "1.12.1"


def test_text_output(clean_env):
    r = run_cli(["recommend", "--cuda", "12.2", "--python", "3.10"], env=clean_env)
    assert r.returncode == 0
    assert "pip install torch==2.7.1" in r.stdout and "because driver supports CUDA 12.2" in r.stdout


@pytest.mark.parametrize("lang, note", [
    ("C.UTF-8", "under minor-version compatibility (no PTX JIT); pass --cuda 13.2 to choose them"),
    ("zh_CN.UTF-8", "（不支持 PTX JIT）也能在 CUDA 13.x 且 >= 580 的显卡驱动上运行；加上 --cuda 13.2 可选用它们")])
def test_the_text_names_no_source_key_and_json_keeps_them(clean_env, lang, note):
    """A key of sources.csv ("[S43;S41;S45]") means nothing to a reader: the printed reasons, notes and the
    sources line leave the keys out, in both languages; --json keeps each key where it was and names the
    table's sources in full."""
    import re

    args = ["--cuda", "13.0", "--cc", "9.0", "--python", "3.12"]
    text = run_cli(["recommend", *args], env=dict(clean_env, LANG=lang)).stdout
    assert note in text and not re.search(r"\bS\d+\b", text), text
    _, rec = recommend(clean_env, *args)
    reasons = rec["recommendation"]["reasons"]
    assert "its kernels cover GPU compute capability 9.0 [S98]" in reasons, reasons
    assert any("(no PTX JIT) [S43;S41;S45]; pass --cuda 13.2" in r for r in reasons), reasons
    assert rec["sources"].startswith("[S119] PyPI metadata of the torch"), rec["sources"]


@pytest.mark.parametrize("args", [["--torch", "abc"], ["--cuda", "twelve"], ["--python", "3.x"]])
def test_bad_versions_are_usage_errors(args, clean_env):
    one_line_error(run_cli(["recommend", *args], env=clean_env), 2)


def test_majors_compare_as_numbers():
    assert knowledge.same_major("12.4", "12.8") is True and knowledge.same_major("13.0", "12.9") is False
    assert knowledge.same_major("r12.4", "12.1") is True and knowledge.same_major("1.2", "12.1") is False
    assert knowledge.same_major(None, "12.1") is None and knowledge.same_major("none", "12.1") is None


# ---- complete sets (every row of the tables) and --toolkit --------------------------------------------------------

def _row_cases():
    """(torch, tag or None for the CPU build, a Python the row supports) for every build of every table row."""
    for w in knowledge.torch_wheels():
        lo, hi = w.python
        python = knowledge.vstr(lo or hi)
        for tag in [None, *w.tags]:
            yield w.torch, tag, python


@pytest.mark.parametrize("torch,tag,python", list(_row_cases()))
def test_every_row_prints_a_complete_set_and_installs_it_together(torch, tag, python):
    from cudaswitch.checks.driver import Driver
    from cudaswitch.checks.recommend import RecommendReport, recommend_lines

    driver = knowledge.vstr(knowledge.tag_cuda(tag)) if tag else None
    rec = knowledge.recommend(driver, python, torch=torch)
    assert rec.ok and rec.torch == torch and rec.tag == (tag or "cpu"), rec.reasons
    lines = recommend_lines(RecommendReport(rec, Driver("--cuda", driver), python, "--python",
                                            "linux", None, torch))
    text = "\n".join(lines)
    assert "?" not in text, text
    # published together: both companions named, and one pip line installs all three
    assert rec.torchvision and rec.torchaudio, (torch, rec.torchvision, rec.torchaudio)
    pip = [line for line in lines if line.startswith("pip install ")]
    assert len(pip) == 1
    for package, version in (("torch", rec.torch), ("torchvision", rec.torchvision), ("torchaudio", rec.torchaudio)):
        assert f" {package}=={version}" in pip[0], pip[0]


def test_companion_columns_hold_a_version_or_none():
    for row in knowledge.table("torch_wheels.csv"):
        for column in ("torchvision", "torchaudio"):
            assert row[column] == "none" or knowledge._first_version(row[column]) == row[column].split(" ")[0], row


def test_the_issue_examples_have_no_hole(clean_env):
    clean_env["CONDA_OVERRIDE_CUDA"] = ""
    r = run_cli(["recommend", "--python", "3.12"], env=clean_env)
    assert r.returncode == 0 and "?" not in r.stdout
    assert "pip install torch==2.15.0 torchvision==0.29.2 torchaudio==2.11.1 --index-url " in r.stdout
    r = run_cli(["recommend", "--cuda", "13.0", "--cc", "9.0", "--python", "3.12"], env=clean_env)
    assert r.returncode == 0 and "?" not in r.stdout
    assert "torch 2.14.1, torchvision 0.29.1, torchaudio 2.11.0 (cu130)" in r.stdout


def test_a_package_without_a_build_is_named_and_left_out(monkeypatch):
    from cudaswitch.checks.driver import Driver
    from cudaswitch.checks.recommend import RecommendReport, recommend_lines

    rows = knowledge.torch_wheels()
    monkeypatch.setattr(knowledge, "torch_wheels", lambda: [
        knowledge.TorchWheel(w.torch, w.torchvision, None if w.torch == "2.15.0" else w.torchaudio, w.tags, w.python,
                             w.src, w.confidence) for w in rows])
    rec = knowledge.recommend(None, "3.12", torch="2.15.0")
    lines = recommend_lines(RecommendReport(rec, Driver("--cuda", None), "3.12", "--python", "linux",
                                            None, "2.15.0"))
    assert "torchaudio: none published for torch 2.15.0 (left out of the pip line)" in lines[1]
    assert "torchaudio" not in rec.command and "torchvision==0.29.2" in rec.command


@pytest.fixture(scope="module")
def toolkit_11_3(tmp_path_factory):
    """A CUDA 11.3 Update 1 tree: the real CUDA 11 runtime files of NVIDIA's wheel, with 11.3.1's version.json."""
    import cudatrees

    base = tmp_path_factory.mktemp("tk")
    cudatrees.cuda_11_8(base / "cuda-11.3", version_json={
        "cuda": {"name": "CUDA SDK", "version": "11.3.20210513"},
        "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "11.3.109"}})
    return base


def test_toolkit_selector_matches_its_build(clean_env, toolkit_11_3):
    clean_env["CUDASWITCH_SEARCH_PATH"] = str(toolkit_11_3)
    r, rec = recommend(clean_env, "--toolkit", "11.3", "--cuda", "12.4", "--python", "3.9")
    x = rec["recommendation"]
    assert r.returncode == 0 and (x["torch"], x["tag"]) == ("1.12.1", "cu113")
    assert x["command"] == ("pip install torch==1.12.1+cu113 torchvision==0.13.1+cu113 torchaudio==0.12.1+cu113 "
                            "--extra-index-url https://download.pytorch.org/whl/cu113")
    assert rec["inputs"]["toolkit"].startswith("11.3") and rec["inputs"]["toolkit_source"] == "--toolkit"
    r = run_cli(["recommend", "--toolkit", "cu113", "--cuda", "12.4", "--python", "3.9"], env=clean_env)
    assert "Python 3.9 is in torch 1.12.1's range (3.7-3.10)" in r.stdout
    assert "its build matches the toolkit: CUDA 11.3 (cu113)" in r.stdout
    # a Python no cu113 build has: says so instead of another major's build
    r, rec = recommend(clean_env, "--toolkit", "11.3", "--cuda", "12.4", "--python", "3.12")
    assert r.returncode == 1 and "fits the toolkit" in rec["recommendation"]["reasons"][0]


def test_toolkit_defaults_to_the_environments_switch(clean_env, toolkit_11_3, tmp_path):
    from cudaswitch.checks.recommend import run_recommend
    from cudaswitch.core.system import System
    from cudaswitch.discovery.environment import CondaEnv, SwitchState, write_state

    prefix = make_env(tmp_path / "env", packages=["python-3.9.18-h955ad1f_0"])
    write_state(CondaEnv(str(prefix), "env", False), SwitchState("11.3", "11.3.1", str(toolkit_11_3 / "cuda-11.3"),
                                                          "2026-12-01T00:00:00", "0"))
    system = System.current()
    system.environ = dict(clean_env, CUDASWITCH_SEARCH_PATH=str(toolkit_11_3))
    report = run_recommend(system, prefix=str(prefix), cuda_max="12.4")
    assert (report.recommendation.torch, report.recommendation.tag) == ("1.12.1", "cu113")
    assert report.toolkit_source == "switched in environment env"
    report = run_recommend(system, prefix=str(prefix), cuda_max="12.4", toolkit=None, python_version="3.9")
    assert report.recommendation.tag == "cu113"


def test_environment_without_python_says_so(tmp_path, clean_env):
    prefix = make_env(tmp_path / "bare")
    line = one_line_error(run_cli(["recommend", "-p", str(prefix), "--cuda", "12.4"], env=clean_env), 2)
    assert "has no Python installed" in line and str(prefix) in line
