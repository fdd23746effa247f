"""How an activate.d script sets a variable is one fact per shell, its record's `assigns` (core/shells.py): status's
setters and doctor's CUDA_SET_AFTER_SWITCH / FOREIGN_CUDA_HOOKS read every script with the records' patterns. Each
record's pattern reads what real scripts in its language write (conda-forge's activation scripts in
tests/data/activate_d, conda's own activators) and no other record's pattern reads them, so a record that lost its
pattern, or a pattern moved to the wrong record, fails here."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

import condaforge_scripts
from conftest import make_env
from cudaswitch.checks import activation_order, doctor
from cudaswitch.core.shells import SHELLS
from cudaswitch.discovery.activation_scripts import assignments, setters

DATA = Path(__file__).resolve().parents[1] / "data" / "activate_d"

# each real script (a file of DATA, or one of condaforge_scripts), the record whose language it is in, and the CUDA assignments it holds, in its order
REAL = {
    "cupy-activate.sh": ("sh", [("CUDA_PATH", "$CONDA_PREFIX")]),
    "NVCC_WRAPPER_ACTIVATE": ("sh", [("CUDA_HOME", "$(dirname"), ("CUDA_HOME", "${CUDA_HOME}"),
                                      ("CUDA_PATH", "${CUDA_HOME}")]),
    "cupy-activate.bat": ("bat", [("CUDA_PATH", "%CONDA_PREFIX%")]),
    "nvcc-windows-activate.bat": ("bat", [
        ("CUDA_PATH", r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v__PKG_VERSION__"), ("CUDA_PATH", "%%a"),
        ("CUDA_PATH", "%CUDA_PATH%"), ("CUDA_HOME", "%CUDA_PATH%")]),
}


def _read(text, names, monkeypatch, keep):
    """The assignments of `names` in `text` that the patterns of the records in `keep` find, every other record's
    pattern taken out."""
    with monkeypatch.context() as m:
        for key, sh in list(SHELLS.items()):
            if key not in keep:
                m.setitem(SHELLS, key, dataclasses.replace(sh, assigns=None))
        return [(var, value) for _, var, value in assignments(text, names)]


def test_every_record_says_how_its_scripts_set_a_variable():
    assert all(sh.assigns and "{name}" in sh.assigns for sh in SHELLS.values()), [
        k for k, sh in SHELLS.items() if not sh.assigns]


@pytest.mark.parametrize("name", sorted(REAL))
def test_conda_forge_scripts_are_read_by_their_shells_record_alone(name, monkeypatch):
    key, want = REAL[name]
    text = getattr(condaforge_scripts, name, None) or (DATA / name).read_text(encoding="utf-8")
    names = ["CUDA_HOME", "CUDA_PATH"]
    assert _read(text, names, monkeypatch, SHELLS) == want
    assert _read(text, names, monkeypatch, {key}) == want
    assert _read(text, names, monkeypatch, set(SHELLS) - {key}) == []
    # doctor's reading: the CUDA location variables the script sets
    assert activation_order.cuda_variables(text) == sorted({var for var, _ in want})


def test_conda_s_own_activators_are_read_by_their_shells_record_alone(real_conda, monkeypatch):
    """What conda's activator for each shell writes (`conda shell.<name> activate`, in PowerShell `$Env:X = "..."`)
    sets CONDA_PREFIX as that shell's record reads it, and as no other record's pattern does."""
    root = str(real_conda.root)
    for key, sh in SHELLS.items():
        if key == "bat":  # conda's cmd.exe activator prints the path of a file of NAME=VALUE lines, not a script
            continue
        out = real_conda.run([f"shell.{sh.name}", "activate", root], base={"PATH": "/usr/bin:/bin"}).stdout
        assert _read(out, ["CONDA_PREFIX"], monkeypatch, {key}) == [("CONDA_PREFIX", root)], (key, out)
        assert _read(out, ["CONDA_PREFIX"], monkeypatch, set(SHELLS) - {key}) == [], (key, out)


def test_cmd_and_powershell_names_are_read_in_any_case_and_reported_as_asked():
    """cmd.exe and PowerShell read `Cuda_Path` as CUDA_PATH (their records fold case); sh does not."""
    text = 'SET "Cuda_Path=C:\\a"\r\n$ENV:cuda_home = "C:\\b"\nexport cuda_home=/c\n'
    assert [(v, x) for _, v, x in assignments(text, ["CUDA_PATH", "CUDA_HOME"])] == [
        ("CUDA_PATH", "C:\\a"), ("CUDA_HOME", "C:\\b")]


def test_doctor_names_conda_forges_windows_scripts_that_set_cuda(tmp_path):
    """conda-forge's nvcc and cupy scripts for cmd.exe, installed as their recipes name them, are the later setters
    on Windows (CUDA_SET_AFTER_SWITCH) and foreign hooks (FOREIGN_CUDA_HOOKS), and `status` reads their values."""
    prefix = make_env(tmp_path / "env")
    act = prefix / "etc" / "conda" / "activate.d"
    act.mkdir(parents=True)
    shutil.copy(DATA / "nvcc-windows-activate.bat", act / "nvcc_win-64_activate.bat")
    shutil.copy(DATA / "cupy-activate.bat", act / "cupy_activate.bat")
    later = activation_order.later_setters(str(prefix), "bat")
    assert [(Path(s.script).name, s.variables) for s in later] == [
        ("cupy_activate.bat", ["CUDA_PATH"]), ("nvcc_win-64_activate.bat", ["CUDA_HOME", "CUDA_PATH"])]
    found = doctor.hook_findings(str(prefix))
    assert [(f.code, Path(f.details[0]).name) for f in found] == [
        ("FOREIGN_CUDA_HOOKS", "cupy_activate.bat"), ("FOREIGN_CUDA_HOOKS", "nvcc_win-64_activate.bat")]
    assert "sets CUDA_HOME, CUDA_PATH on activation" in str(found[1].cause)
    last = setters(str(prefix), ["CUDA_HOME"], ".bat")[-1]
    assert (last.value, Path(last.source).name) == ("%CUDA_PATH%", "nvcc_win-64_activate.bat")
