"""Probe records captured on a real NVIDIA H200 (driver 580.159.04, CUDA 13.0; torch 2.11.0+cu130 from
/opt/torch/.venv), run through the classifier and the renderer. The probe file that produced them is this
repository's cudaswitch/checks/probe.py of record version 1 (sent to the GPU machine verbatim, md5 checked); see
docs/design/checks.md section 1."""

import json
from pathlib import Path

from conftest import make_env
from cudaswitch.data import knowledge
from cudaswitch.checks.diagnosis import ProbeOutcome
from cudaswitch.discovery.environment import CondaEnv
from cudaswitch.checks.runner import MARKER, _parse
from cudaswitch.checks.smoke import report_from_outcome, smoke_lines
from cudaswitch.core.system import System

RECORDS = Path(__file__).parent.parent / "fake_torch" / "records"


def outcome(name):
    text = (RECORDS / name).read_text()
    return ProbeOutcome(_parse(text), 0, text, "cudaswitch-probe: stage done\n", False, "done")


def report(tmp_path, name, environ, cpu_ok=False):
    prefix = make_env(tmp_path / "env")
    return report_from_outcome(outcome(name), CondaEnv(str(prefix), "env", False), environ, System(environ=environ),
                               cpu_ok)


def test_h200_passes(tmp_path):
    r = report(tmp_path, "h200_torch2.11_cu130.out", {})
    assert r.ok and r.status == "pass" and r.code == "OK" and r.result == "gpu"
    assert r.torch["device_name"] == "NVIDIA H200" and r.torch["capability"] == "9.0"
    assert r.driver.cuda_max == "13.0" and r.driver.driver_version == "580.159.04"
    chain = {c["check"]: c["status"] for c in r.chain}
    assert chain["driver vs torch CUDA"] == "ok" and chain["GPU arch vs build"] == "ok"
    text = "\n".join(smoke_lines(r))
    assert "GPU NVIDIA H200 (sm_90)" in text and "result: PASS (OK: torch computes on the GPU; gpu)" in text
    assert "cuDNN 9.19.0" in text


def test_h200_with_cuda_visible_devices_empty(tmp_path):
    r = report(tmp_path, "h200_cuda_visible_devices_empty.out", {"CUDA_VISIBLE_DEVICES": ""})
    assert r.status == "fail" and r.code == "CUDA_VISIBLE_DEVICES_HIDDEN"
    assert r.steps["matmul"]["ok"] and r.steps["matmul"]["detail"]["device"] == "cpu"


def test_h200_driver_record_feeds_recommend():
    rec = _parse((RECORDS / "h200_driver_only.out").read_text())
    d = rec["driver"]
    assert d["cuda_max"] == "13.0" and d["devices"][0]["capability"] == "9.0" and d["cuinit"] == 0
    x = knowledge.recommend(d["cuda_max"], "3.12", False, d["devices"][0]["capability"])
    # the newest release with a CUDA 13.0 build (2.15.0's only build is cu132, which this driver cannot run)
    assert (x.torch, x.tag) == ("2.14.1", "cu130")
    assert any("torch 2.15.0" in s and "cu132" in s for s in x.skipped)


def test_records_are_single_marker_lines():
    for p in RECORDS.glob("*.out"):
        lines = [ln for ln in p.read_text().splitlines() if ln.startswith(MARKER)]
        assert len(lines) == 1 and json.loads(lines[0][len(MARKER):])["probe"] == 1
