"""The driver record: built from the probe's JSON (the wire format) without loss, from CONDA_OVERRIDE_CUDA, from
nvidia-smi's real output, and by the real query on this machine."""

import os
from pathlib import Path

from cudaswitch.checks import driver
from cudaswitch.checks.driver import Driver, query
from cudaswitch.checks.runner import _parse
from cudaswitch.core.system import System

RECORDS = Path(__file__).parent.parent / "fake_torch" / "records"


def test_the_h200_probe_record_reads_back_unchanged():
    wire = _parse((RECORDS / "h200_driver_only.out").read_text())["driver"]
    d = Driver.from_probe(wire)
    assert (d.source, d.cuda_max, d.driver_version, d.capability) == ("libcuda", "13.0", "580.159.04", "9.0")
    assert d.to_json() == wire and list(d.to_json()) == list(wire)


def test_the_override_wins_and_empty_means_no_driver():
    assert driver.from_override({}) is None
    assert driver.from_override({"CONDA_OVERRIDE_CUDA": "12.4"}).to_json() == {
        "source": "CONDA_OVERRIDE_CUDA", "cuda_max": "12.4", "driver_version": None, "devices": [], "error": None}
    none = driver.resolve({"CONDA_OVERRIDE_CUDA": ""}, {"source": "libcuda", "cuda_max": "13.0"}, System(environ={}))
    assert none.cuda_max is None and none.error == "CONDA_OVERRIDE_CUDA is empty (no driver)"


def test_nvidia_smi_fallback_parses_the_real_output(tmp_path):
    """No libcuda here: the driver query falls back to nvidia-smi (a stand-in printing the H200's real output)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    smi = bindir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\ncat '{RECORDS / 'h200_nvidia-smi.txt'}'\n")
    smi.chmod(0o755)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CONDA")}
    environ["PATH"] = f"{bindir}{os.pathsep}{environ['PATH']}"
    info = query(System(environ=environ), timeout=30).to_json()
    if info["source"] == "libcuda":  # a machine with a real driver answers first
        assert info["cuda_max"]
        return
    assert info == {"source": "nvidia-smi", "cuda_max": "13.0", "driver_version": "580.159.04", "devices": [],
                    "error": None}


def test_driver_query_without_override_runs_and_reports(clean_env):
    """The real query (probe --driver-only in a subprocess): on this machine, a driver or a clean 'none'."""
    info = query(System(environ=dict(clean_env)), timeout=30).to_json()
    assert info["source"] in ("libcuda", "nvidia-smi")
    if info["cuda_max"] is None:
        assert info["error"]
    else:
        major, minor = info["cuda_max"].split(".")
        assert int(major) >= 9
