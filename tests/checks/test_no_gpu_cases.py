"""torch has CUDA but no GPU: the cases told apart (cudaswitch/checks/diagnosis.py no_gpu_finding), from the probe
record captured on the real H200 with every device hidden (tests/fake_torch/records: the driver answered, torch saw
no device) and its real nvidia-smi output. What differs per case is only what the driver said: nothing (no
driver), cuInit's CUDA_ERROR_NO_DEVICE (the laptop on its integrated GPU gets the same answer as the hidden H200),
a device list, or an nvidia-smi header without a CUDA version (an old driver)."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from cudaswitch.checks import driver as drivers
from cudaswitch.checks.diagnosis import ProbeOutcome, classify
from cudaswitch.checks.runner import _parse
from cudaswitch.core.system import System

RECORDS = Path(__file__).parent.parent / "fake_torch" / "records"


def _record(**driver):
    """The H200 record of torch 2.11.0+cu130 seeing no device, with the driver's answer replaced and nothing
    hiding the devices (CUDA_VISIBLE_DEVICES unset), as on a machine where the GPU itself is not seen."""
    rec = _parse((RECORDS / "h200_cuda_visible_devices_empty.out").read_text())
    assert rec["torch"]["is_available"] is False and rec["driver"]["cuda_max"] == "13.0"
    rec["cuda_visible_devices"] = None
    rec["driver"].update(driver)
    return rec


def _classify(rec, windows=True):
    outcome = ProbeOutcome(rec, 0, "", "cudaswitch-probe: stage done\n", False, "done")
    return classify(outcome, "/x", {}, windows, False, drivers.Driver.from_probe(rec["driver"]))[0]


@pytest.mark.parametrize("windows", [True, False])
def test_a_driver_that_sees_no_gpu_is_not_told_to_install_a_driver(windows):
    f = _classify(_record(cuinit=100, devices=[]), windows)
    assert f.code == "NO_GPU"
    assert "the NVIDIA driver 580.159.04 is installed (CUDA 13.0) but sees no GPU (cuInit: CUDA_ERROR_NO_DEVICE)" \
        in f.cause
    assert "install the NVIDIA driver" not in f.fix
    if windows:
        assert "hybrid or discrete" in f.fix and "Device Manager" in f.fix
    else:
        assert "--gpus all" in f.fix and "prime-select" in f.fix


def test_no_driver_at_all_is_told_to_install_one():
    f = _classify(_record(cuda_max=None, driver_version=None, library=None,
                          error="no NVIDIA driver library (nvcuda.dll)"))
    assert f.code == "NO_GPU" and "no NVIDIA driver was found (no NVIDIA driver library (nvcuda.dll))" in f.cause
    assert f.fix.startswith("install the NVIDIA driver (https://www.nvidia.com/Download/index.aspx)")


def test_a_driver_that_lists_the_gpu_points_at_the_torch_build():
    f = _classify(_record(cuinit=0, devices=[{"index": 0, "name": "NVIDIA H200", "capability": "9.0"}]))
    assert f.code == "NO_GPU" and "sees no GPU although the driver supports CUDA 13.0" in f.cause
    assert "reinstall torch from a CUDA index" in f.fix and "install the NVIDIA driver" not in f.fix


def test_a_driver_too_old_to_name_a_cuda_version_is_too_old_not_missing(tmp_path):
    """nvidia-smi's real header without its `CUDA Version:` field (old drivers print none): the driver is there,
    and older than torch's CUDA 13.0 needs."""
    text = (RECORDS / "h200_nvidia-smi.txt").read_text().replace("CUDA Version: 13.0", "")
    smi = tmp_path / "bin" / "nvidia-smi"  # a program of this user's, so trust's PATH walk takes it
    smi.parent.mkdir()
    smi.write_text("#!/bin/sh\n")
    smi.chmod(0o755)
    system = System(os="linux", environ={"PATH": str(smi.parent)}, run=lambda *a, **k: SimpleNamespace(stdout=text))
    drv = drivers.resolve({}, {"source": "libcuda", "cuda_max": None, "error": "cuDriverGetVersion returned 3"},
                          system)
    assert drv.source == "nvidia-smi" and drv.cuda_max is None and drv.driver_version == "580.159.04"
    rec = _record(**drv.to_json())
    outcome = ProbeOutcome(rec, 0, "", "", False, "done")
    f = classify(outcome, "/x", {}, False, False, drv)[0]
    assert f.code == "DRIVER_TOO_OLD" and "the installed NVIDIA driver 580.159.04 is too old to name a CUDA version" \
        in f.cause
    assert f.fix.startswith("update the NVIDIA driver to >= 580.65.06 (CUDA 13.0)")


def test_doctor_names_an_installed_driver_without_cuda_version_as_too_old():
    from cudaswitch.checks.doctor import driver_findings

    drv = drivers.Driver("nvidia-smi", None, "580.159.04", error=drivers.NO_CUDA_VERSION)
    (f,) = driver_findings(drv, [], System(os="linux", environ={}))
    assert f.code == "DRIVER_TOO_OLD" and "NVIDIA driver 580.159.04 is installed but names no CUDA version" in f.cause
    (f,) = driver_findings(drivers.Driver("libcuda", None, error="no NVIDIA driver library (libcuda)"), [],
                           System(os="linux", environ={}))
    assert f.code == "NO_DRIVER"


STUB_DRIVER = r"""
/* A driver library that answers as NVIDIA's does on a machine whose GPU is switched off: it knows its CUDA version
   (cuDriverGetVersion needs no device) and cuInit fails with CUDA_ERROR_NO_DEVICE (100). */
int cuDriverGetVersion(int *v) { *v = 12040; return 0; }
int cuInit(unsigned int flags) { (void)flags; return 100; }
int cuDeviceGetCount(int *n) { *n = 0; return 100; }
"""


def test_the_real_probe_asks_the_driver_after_torch_sees_no_gpu(tmp_path, clean_env):
    """The real probe in the environment's real Python, torch 2.13.0 patched to be a CUDA 12.4 build that sees no
    GPU (tests/fake_torch), and a driver library that cannot run here stubbed by its C API: after torch's answer the
    probe asks cuInit itself and records CUDA_ERROR_NO_DEVICE, and smoke says the GPU is off, not that a driver is
    missing."""
    import json
    import subprocess
    import sys

    from conftest import require_tool, run_cli

    sys.path.insert(0, str(Path(__file__).parent.parent / "fake_torch"))
    import envs

    cc = require_tool("cc")
    lib = tmp_path / "driver"
    lib.mkdir()
    (lib / "stub.c").write_text(STUB_DRIVER)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib / "libcuda.so.1"), str(lib / "stub.c")], check=True)
    env = envs.make_env(tmp_path)
    envs.fake_cuda(env, "no_device")
    r = run_cli(["smoke", "-p", str(env), "--json"], env=dict(clean_env, LD_LIBRARY_PATH=str(lib)))
    rec = json.loads(r.stdout)
    assert rec["driver"]["cuda_max"] == "12.4" and rec["driver"]["cuinit"] == 100, rec["driver"]
    assert r.returncode == 1 and rec["code"] == "NO_GPU"
    assert "is installed (CUDA 12.4) but sees no GPU (cuInit: CUDA_ERROR_NO_DEVICE)" in rec["cause"]
    assert "install the NVIDIA driver" not in rec["fix"] and "nvidia-smi" in rec["fix"]


def test_doctor_and_smoke_give_one_verdict_for_a_cuda_torch_without_a_driver(tmp_path, clean_env):
    """The same CUDA build of torch on a machine with no driver: smoke's NO_GPU is doctor's, with its severity and
    its exit status, not an informational NO_DRIVER beside `result: OK`."""
    import json
    import sys

    from conftest import run_cli

    sys.path.insert(0, str(Path(__file__).parent.parent / "fake_torch"))
    import envs

    env = envs.make_env(tmp_path)
    envs.fake_cuda(env, "no_device")  # imports as 2.5.1+cu124 and sees no GPU
    dist = envs.site_packages(env) / "torch-2.5.1+cu124.dist-info"  # what doctor reads, from the files
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+cu124\n")
    (dist / "INSTALLER").write_text("pip\n")
    cli = dict(clean_env, CONDA_OVERRIDE_CUDA="")  # no driver, as conda's own override spells it
    smoke = run_cli(["smoke", "-p", str(env), "--json"], cli)
    rec = json.loads(smoke.stdout)
    assert smoke.returncode == 1 and rec["code"] == "NO_GPU", smoke.stdout
    doc = run_cli(["doctor", "-p", str(env), "--json"], cli)
    found = {f["code"]: f for f in json.loads(doc.stdout)["findings"]}
    assert found["NO_GPU"]["severity"] == "error" and "NO_DRIVER" not in found, found
    assert found["NO_GPU"]["cause"].startswith("torch 2.5.1+cu124 has CUDA 12.4 but no NVIDIA driver was found")
    assert doc.returncode == 1
    text = run_cli(["doctor", "-p", str(env)], cli).stdout
    assert "error    NO_GPU:" in text and "result: OK" not in text, text
