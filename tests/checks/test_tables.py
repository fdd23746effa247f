"""The tables are current with the registry snapshot tools/update_tables.py fetched (real PyPI metadata, committed),
the script's derivation from real Requires-Dist lines, and what commands say past the tables. No network."""

import copy
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO / "tools"))

import update_tables  # noqa: E402

from cudaswitch.data import knowledge  # noqa: E402


@pytest.fixture(scope="module")
def snapshot():
    return json.loads((REPO / "tools" / "registry_snapshot.json").read_text(encoding="utf-8"))


def test_committed_tables_match_the_snapshot(snapshot):
    changes = [c for _, (_, _, cs) in update_tables.plan(snapshot).items() for c in cs if not c.startswith("!")]
    assert changes == [], "run: python tools/update_tables.py apply --write"


def test_default_build_comes_from_requires_dist(snapshot):
    t = snapshot["torch"]
    assert update_tables.default_build(t["2.15.0"]["requires_dist"]) == ("13.2", "9.26.0.51")
    assert update_tables.default_build(t["2.14.1"]["requires_dist"]) == ("13.0", "9.24.0.43")  # cuda-toolkit==13.0.3
    assert update_tables.default_build(t["2.9.0"]["requires_dist"]) == ("12.8", "9.10.2.21")  # nvidia-cuda-runtime-cu12
    assert t["2.15.0"]["requires_python"] == ">=3.11"


def test_tables_reach_what_the_registry_serves(snapshot):
    newest_torch = max(snapshot["torch"], key=knowledge.vtuple)
    assert knowledge.torch_releases()[knowledge.vtuple(newest_torch)[:2]].python[0] == (3, 11)
    assert knowledge.torch_wheels()[0].torch == newest_torch
    newest_cudnn = max(snapshot["nvidia-cudnn-cu13"], key=knowledge.vtuple)
    assert knowledge.cudnn_supports(newest_cudnn, "13.2") == (True, "S120;S43")
    assert knowledge.cudnn_supports("9.19.0", "13.0")[0]  # the H200's cuDNN, 'unknown' before
    assert knowledge.cudnn_supports("9.3.0", "11.8")[0] and not knowledge.cudnn_supports("9.20.0", "11.8")[0]
    newest_nvcc = max(snapshot["nvidia-cuda-nvcc"], key=knowledge.vtuple)
    assert knowledge.table_horizon()["cuda"] == ".".join(newest_nvcc.split(".")[:2])
    assert knowledge.min_driver("13.4") == ("R615", "S120;S41")


def test_every_new_row_cites_a_known_source():
    known = knowledge.sources()
    for name in ("torch_wheels.csv", "torch_release.csv", "cudnn_cuda.csv", "cuda_driver.csv"):
        for row in knowledge.table(name):
            for key in row["src"].split(";"):
                assert key.strip() in known, (name, row)


def test_apply_reports_a_new_release(snapshot):
    snap = copy.deepcopy(snapshot)
    newer = copy.deepcopy(snap["torch"]["2.15.0"])
    newer["requires_dist"] = [d.replace("nvidia-cudnn-cu13==9.26.0.51", "nvidia-cudnn-cu13==9.30.0.1")
                              for d in newer["requires_dist"]]
    snap["torch"]["2.16.0"] = newer
    snap["nvidia-cudnn-cu13"].append("9.30.0.1")
    lines = [c for _, (_, _, cs) in update_tables.plan(snap).items() for c in cs]
    assert "+ torch 2.16: Python >=3.11, <=3.15, default build CUDA 13.2 (cuDNN 9.30.0.1)" in lines
    assert "+ cuDNN 9.30.0: for CUDA 13.x" in lines


def test_past_the_tables_says_how_far_they_go():
    status, detail, _ = knowledge.cudnn_verdict("9.40.0", "13.1")
    assert status == "beyond tables" and "ends at 9.28" in detail and "CUDA 13.x build works with CUDA 13.1" in detail
    assert knowledge.cudnn_verdict("9.19.0", "13.0")[0] == "ok"
    msg = knowledge.python_beyond("2.16.0")
    assert "they end at torch 2.15" in msg and "pip installs a torch wheel only for a Python it supports" in msg
    assert knowledge.python_beyond("2.14.1") is None


def test_companions_are_the_releases_published_with_torch(snapshot):
    # torchvision 0.29.2 requires torch>=2.14.0 but was published with 2.15.0; 0.29.0 pins 2.14.0 and came with it
    assert update_tables._companion(snapshot, "torchvision", "2.14.0") == ("0.29.0", "S131")
    assert update_tables._companion(snapshot, "torchvision", "2.15.0") == ("0.29.2", "S131")
    # no torchaudio was published with torch 2.12: the stable-ABI 2.11 series works with it (S132)
    assert update_tables._companion(snapshot, "torchaudio", "2.12.0") == ("2.11.0", "S132")
    assert update_tables._companion(snapshot, "torchaudio", "2.15.0") == ("2.11.1", "S131")
    # a torch before the series with no companion of its day has none, and the row says so
    snap = copy.deepcopy(snapshot)
    snap["uploaded"]["torch"]["2.16.0"] = "2027-01-01"
    snap["torch"]["2.16.0"] = copy.deepcopy(snap["torch"]["2.15.0"])
    assert update_tables._companion(snap, "torchvision", "2.16.0") == ("", "")
    lines = [c for _, (_, _, cs) in update_tables.plan(snap).items() for c in cs]
    assert any(c.startswith("+ torch 2.16.0:") and "torchvision none" in c for c in lines), lines
