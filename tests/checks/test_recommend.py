"""`cudaswitch recommend` and the knowledge tables behind it (cudaswitch/data/*.csv, sources in sources.csv)."""

import csv
import json
from pathlib import Path

import pytest

from conftest import make_env, one_line_error, run_cli

from cudaswitch.checks import knowledge

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


@pytest.mark.parametrize("args", [["--torch", "abc"], ["--cuda", "twelve"], ["--python", "3.x"]])
def test_bad_versions_are_usage_errors(args, clean_env):
    one_line_error(run_cli(["recommend", *args], env=clean_env), 2)


def test_majors_compare_as_numbers():
    assert knowledge.same_major("12.4", "12.8") is True and knowledge.same_major("13.0", "12.9") is False
    assert knowledge.same_major("r12.4", "12.1") is True and knowledge.same_major("1.2", "12.1") is False
    assert knowledge.same_major(None, "12.1") is None and knowledge.same_major("none", "12.1") is None
