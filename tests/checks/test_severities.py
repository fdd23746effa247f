"""One severity per finding on every surface: `use`, `smoke`, `doctor`, `conda doctor` and the note after `conda
update` report the same fact with the severity of checks/severities.py, and their results fail exactly when it is
an error. The environments hold the real identity files of PyPI's torch 2.14.1+cu130 and a real NVIDIA wheel's
dist-info; the toolkits are built from NVIDIA's wheels. `conda doctor` and the note are the plugin's own functions
here (CI has no conda); tests/cli/test_conda_plugin.py runs them inside the real conda."""

import ast
import json
import shutil
from pathlib import Path

import pytest

import nvidia_wheels
import torch_wheel_files
from conftest import REPO, make_env, run_cli

from cudaswitch.checks.conda_health import after_change, health, health_lines
from cudaswitch.checks.severities import SEVERITIES, fails, severity
from cudaswitch.core.system import System
from cudaswitch.discovery.environment import CondaEnv, SwitchState, write_state


def _switched(prefix: Path, version: str, root: Path, ld: bool = False) -> Path:
    write_state(CondaEnv(str(prefix), prefix.name, False),
                SwitchState(version, version, str(root), "2026-01-01T00:00:00+00:00", "0.1.0", ld_library_path=ld))
    return prefix


def _with_wheels(prefix: Path) -> Path:
    info = next(nvidia_wheels.extracted("nvidia-cuda-runtime-cu12==12.9.79").glob("*.dist-info"))
    shutil.copytree(info, prefix / "lib" / "python3.11" / "site-packages" / info.name)
    return prefix


# fact -> (code, how the environment gets it: (tmp_path, real_trees) -> (prefix, `use` arguments or None))
def _major_mismatch(tmp_path, trees):
    p = torch_wheel_files.cuda_torch_env(tmp_path / "envs" / "cu130")
    return _switched(p, "11.8.89", trees / "cuda-11.8"), ["use", "11.8", "-p", str(p)]


def _toolkit_missing(tmp_path, trees):
    p = make_env(tmp_path / "envs" / "gone")
    (p / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    return _switched(p, "12.4.1", tmp_path / "removed" / "cuda-12.4"), None  # `use` replaces a missing choice


def _ld_over_wheels(tmp_path, trees):
    p = make_env(tmp_path / "envs" / "wheels")
    (p / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    _with_wheels(p)
    return _switched(p, "12.9.1", trees / "cuda-12.9", ld=True), ["use", "12.9", "--ld-library-path", "-p", str(p)]


FACTS = {"TORCH_TOOLKIT_MAJOR_MISMATCH": _major_mismatch, "TOOLKIT_MISSING": _toolkit_missing,
         "LD_LIBRARY_PATH_OVER_WHEELS": _ld_over_wheels}


def _env(clean_env, trees):
    return dict(clean_env, CUDASWITCH_SEARCH_PATH=str(trees), CONDA_OVERRIDE_CUDA="13.0")


def surface_use(prefix, use_args, env, code):
    r = run_cli([*use_args, "--no-smoke"], env)
    line = next(ln for ln in r.stdout.splitlines() if f" {code}: " in ln)
    return line.split()[0], r.returncode != 0, r


def surface_smoke(prefix, use_args, env, code):
    r = run_cli(["smoke", "--json", "-p", str(prefix)], env)
    rec = json.loads(r.stdout)
    sev = next(f["severity"] for f in rec["findings"] if f["code"] == code)
    assert (rec["status"] == "fail") == (r.returncode == 1), r.stdout
    return sev, r.returncode != 0, r


def surface_doctor(prefix, use_args, env, code):
    r = run_cli(["doctor", "--json", "-p", str(prefix)], env)
    rec = json.loads(r.stdout)
    assert rec["ok"] == (r.returncode == 0)
    return next(f["severity"] for f in rec["findings"] if f["code"] == code), r.returncode != 0, r


def surface_conda_doctor(prefix, use_args, env, code):
    checks = health(str(prefix), System(environ={"PATH": ""}))
    lines = health_lines(checks, "OK", "X")
    return next(c.severity for c in checks if c.code == code), lines[0].startswith("X "), lines


def surface_conda_note(prefix, use_args, env, code):
    line = str(after_change(str(prefix)))
    word = next(w for w in ("error", "warning", "info") if f"{w} {code}:" in line)
    return word, None, line  # a note after conda's own command changes no exit status


SURFACES = {"use": surface_use, "smoke": surface_smoke, "doctor": surface_doctor,
            "conda doctor": surface_conda_doctor, "conda note": surface_conda_note}


# TOOLKIT_MISSING cannot follow a `use`, which switches to a toolkit that is there
CASES = [(code, surface) for code in FACTS for surface in SURFACES
         if not (code == "TOOLKIT_MISSING" and surface == "use")]


@pytest.mark.parametrize("code,surface", CASES)
def test_every_surface_reports_the_tables_severity(code, surface, tmp_path, clean_env, real_trees):
    prefix, use_args = FACTS[code](tmp_path, real_trees)
    sev, failed, shown = SURFACES[surface](prefix, use_args, _env(clean_env, real_trees), code)
    assert sev == severity(code), shown
    if failed is not None and fails(sev):
        assert failed, shown  # an error fails the result: exit 1, FAIL, the cross mark
    if failed is not None and surface in ("use", "conda doctor") and not fails(sev):
        assert not failed, shown  # nothing else is wrong in these environments


def test_a_warning_alone_keeps_use_and_doctor_passing(tmp_path, clean_env, real_trees):
    prefix, use_args = _ld_over_wheels(tmp_path, real_trees)
    env = _env(clean_env, real_trees)
    r = run_cli([*use_args, "--no-smoke"], env)
    assert r.returncode == 0 and "warning  LD_LIBRARY_PATH_OVER_WHEELS: pip CUDA wheels are installed" in r.stdout
    lines = health_lines(health(str(prefix), System(environ={"PATH": ""})), "OK", "X")
    assert lines[0].startswith("OK CUDA (cudaswitch): switched to CUDA 12.9.1")
    assert any(ln.startswith("  warning  LD_LIBRARY_PATH_OVER_WHEELS: ") for ln in lines)


def _codes_in_package():
    """(code, severity name or None, file) for every finding the package builds with a literal code."""
    out = []
    for path in sorted((REPO / "cudaswitch").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            first = node.args[0]
            if name in ("finding", "_f", "Finding", "_check") and isinstance(first, ast.Constant) \
                    and isinstance(first.value, str) and first.value.isupper():
                sev = node.args[1] if len(node.args) > 1 else None
                out.append((first.value, sev.id if isinstance(sev, ast.Name) else None, path.name))
    return out


def test_every_finding_has_one_row_in_the_table():
    found = _codes_in_package()
    assert len(found) > 60
    missing = sorted({c for c, _, _ in found if c not in SEVERITIES})
    assert not missing, f"add these codes to cudaswitch/checks/severities.py: {missing}"
    from cudaswitch.checks.diagnosis import CATALOGUE

    assert not sorted(set(CATALOGUE) - set(SEVERITIES))


def test_no_call_names_another_severity_than_the_tables():
    """A literal ERROR/WARNING/INFO beside a code is what the reader takes for its severity: it must be the table's
    (one of its forms for a fact with two)."""
    names = {"ERROR": "error", "WARNING": "warning", "INFO": "info"}
    wrong = []
    for code, sev, where in _codes_in_package():
        if sev in names and code in SEVERITIES:
            row = SEVERITIES[code]
            allowed = {row[0], *row[1].values()} if isinstance(row, tuple) else {row}
            if names[sev] not in allowed:
                wrong.append((code, sev, where))
    assert not wrong, wrong


def test_status_names_a_missing_toolkit_with_the_tables_severity(tmp_path, clean_env, real_trees):
    prefix, _ = _toolkit_missing(tmp_path, real_trees)
    r = run_cli(["status"], dict(_env(clean_env, real_trees), CONDA_PREFIX=str(prefix), CONDA_DEFAULT_ENV="gone"))
    line = next(ln for ln in r.stdout.splitlines() if "(TOOLKIT_MISSING)" in ln)
    assert line.startswith(f"{severity('TOOLKIT_MISSING')}: CUDA 12.4.1 at "), line
