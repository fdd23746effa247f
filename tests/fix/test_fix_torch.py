"""`doctor --fix` for the torch build itself, with real pip and a local index laid out as the PyTorch index
(tests/fix/torch_index.py), in environments broken as users break them:

* DRIVER_TOO_OLD: the newest line from pytorch.org (`pip install torch torchvision torchaudio --index-url
  .../cu130`) on a driver for CUDA 12.9. The fix installs the set `recommend` names (torch 2.14.1, torchvision
  0.29.1, torchaudio 2.11.0 from cu126) in one pip call; undo gives the cu130 set back without the index, byte for
  byte.
* CPU_ONLY_BUILD: the CPU build of that same release on a machine with a GPU: the plan names the same set (pinned
  to the build, which a bare `torch==2.14.1` the CPU build satisfies would not replace).
* TORCH_MIXED_INSTALL: a second torch in the user site (`pip install --user torch`), imported first: the default
  way turns the user site off for the environment (conda-meta/state), the other removes the user-site copy with
  pip; both undone byte for byte.

The wheels are small ones shaped as the PyTorch index's (name, local version, tags, RECORD; torchvision requires
its torch): the real CUDA builds are gigabytes. Their torch hands over to the suite's real CPU torch and says the
build it stands for (version, torch.version.cuda), so the re-check runs the real smoke test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fake_torch"))
import envs  # noqa: E402
import torch_index  # noqa: E402
from test_fix_files import cli_env, fsroot, snapshot  # noqa: E402,F401  (fixtures)
from test_fix_packages import pip_env, pip_template  # noqa: E402,F401  (fixture)

TORCH = '''"""torch {version}, as far as a test can tell: the real CPU torch, saying the build it stands for."""
import importlib.util
import os
import sys

_spec = importlib.util.spec_from_file_location("torch", os.path.join({real!r}, "__init__.py"),
                                               submodule_search_locations=[{real!r}])
_mod = importlib.util.module_from_spec(_spec)
sys.modules["torch"] = _mod
_spec.loader.exec_module(_mod)
_mod.__version__ = {version!r}
_mod.version.__version__ = {version!r}
_mod.version.cuda = {cuda!r}
'''

# (torch, torchvision, torchaudio, CUDA) per index folder
SETS = {"cu130": ("2.12.1", "0.27.1", "2.11.0", "13.0"), "cu126": ("2.14.1", "0.29.1", "2.11.0", "12.6"),
        "cpu": ("2.14.1", "0.29.1", "2.11.0", None)}  # the same release: only the build differs


@pytest.fixture(scope="module")
def index(tmp_path_factory, torch_env):
    real = str(envs.site_packages(torch_env) / "torch")
    wheels = tmp_path_factory.mktemp("wheels")
    tags = {}
    for tag, (torch, vision, audio, cuda) in SETS.items():
        t = f"{torch}+{tag}"
        tags[tag] = [
            torch_index.shaped_wheel(wheels, "torch", t, {
                "torch/__init__.py": TORCH.format(version=t, real=real, cuda=cuda),
                "torch/version.py": f"__version__ = {t!r}\ncuda = {cuda!r}\n",
                # one file only this build has: the real builds' file lists differ from one CUDA to the next
                f"torch/_build_{tag}.py": f"TAG = {tag!r}\n"}),
            torch_index.shaped_wheel(wheels, "torchvision", f"{vision}+{tag}",
                                     {"torchvision/__init__.py": f"__version__ = '{vision}+{tag}'\n"},
                                     [f"torch=={torch}"]),
            torch_index.shaped_wheel(wheels, "torchaudio", f"{audio}+{tag}",
                                     {"torchaudio/__init__.py": f"__version__ = '{audio}+{tag}'\n"},
                                     [f"torch=={torch}"])]
    root = torch_index.lay_out(tmp_path_factory.mktemp("index"), tags)
    with torch_index.serving(root) as url:
        yield url


def pip_install(prefix, index, tag, *extra, env=None):
    py = str(prefix / "bin" / "python")
    subprocess.run([py, "-m", "pip", "--isolated", "install", *extra, "--index-url", f"{index}/{tag}", "torch",
                    "torchvision", "torchaudio"], check=True, capture_output=True, cwd="/", env=env)


@pytest.fixture
def cu130_env(tmp_path, index, pip_template):
    prefix = pip_env(tmp_path / "envs", "newest-line", pip_template)
    pip_install(prefix, index, "cu130")
    return prefix


def test_torch_for_a_newer_cuda_than_the_driver(cu130_env, cli_env, index):
    env = dict(cli_env, CUDASWITCH_TORCH_INDEX=index)
    site = envs.site_packages(cu130_env)
    broken = snapshot(cu130_env)
    plan = run_cli(["doctor", "-p", cu130_env, "--fix", "--dry-run"], env)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert " 1. DRIVER_TOO_OLD: " in plan.stdout
    for line in ("package torch: 2.12.1+cu130 -> 2.14.1+cu126", "package torchvision: 0.27.1+cu130 -> 0.29.1+cu126",
                 "package torchaudio: 2.11.0+cu130 -> 2.11.0+cu126", f"from the index {index}/cu126",
                 f"-m pip install torch==2.14.1+cu126 torchvision==0.29.1+cu126 torchaudio==2.11.0+cu126 "
                 f"--index-url {index}/cu126"):
        assert line in plan.stdout, plan.stdout
    assert snapshot(cu130_env) == broken
    r = run_cli(["doctor", "-p", cu130_env, "--fix", "--yes"], env)
    assert "step 1 cleared DRIVER_TOO_OLD" in r.stdout, r.stdout + r.stderr
    assert {p.name for p in site.glob("torch*.dist-info")} == {
        "torch-2.14.1+cu126.dist-info", "torchvision-0.29.1+cu126.dist-info", "torchaudio-2.11.0+cu126.dist-info"}
    # undo with the index gone: the cu130 set comes back from the journal
    u = run_cli(["doctor", "-p", cu130_env, "--undo"], dict(env, CUDASWITCH_TORCH_INDEX="http://127.0.0.1:9/whl"))
    assert "Put back" in u.stdout, u.stdout + u.stderr
    assert snapshot(cu130_env) == broken


def test_cpu_build_on_a_machine_with_a_gpu(tmp_path, cli_env, index, pip_template):
    prefix = pip_env(tmp_path / "envs", "cpu-torch", pip_template)
    pip_install(prefix, index, "cpu")
    env = dict(cli_env, CUDASWITCH_TORCH_INDEX=index)
    broken = snapshot(prefix)
    plan = run_cli(["doctor", "-p", prefix, "--fix", "CPU_ONLY_BUILD", "--dry-run"], env)
    assert " 1. CPU_ONLY_BUILD: " in plan.stdout, plan.stdout + plan.stderr
    assert "package torch: 2.14.1+cpu -> 2.14.1+cu126" in plan.stdout and f"{index}/cu126" in plan.stdout
    # no driver: a CUDA build cannot help, the CPU build is left alone
    none = run_cli(["doctor", "-p", prefix, "--fix", "--dry-run"], {k: v for k, v in env.items()
                                                                    if k != "CONDA_OVERRIDE_CUDA"})
    assert "CPU_ONLY_BUILD" not in none.stdout.split("Advice only")[0], none.stdout
    # the index out of reach: the finding stays advice, the plan is still shown
    dead = run_cli(["doctor", "-p", prefix, "--fix", "--dry-run"], dict(env, CUDASWITCH_TORCH_INDEX="http://127.0.0.1:9/whl"))
    assert "Traceback" not in dead.stderr and " - CPU_ONLY_BUILD: " in dead.stdout, dead.stdout + dead.stderr
    assert snapshot(prefix) == broken


def test_major_mismatch_is_fixed_only_when_asked(monkeypatch):
    """TORCH_TOOLKIT_MAJOR_MISMATCH stays advice unless its code is named: torch runs, only extension builds need
    the toolkit's major."""
    from cudaswitch.checks.diagnosis import Finding
    from cudaswitch.fix import plan as planning
    from cudaswitch.fix import torchset

    monkeypatch.setattr(planning, "FIXERS", ("torchset",))
    monkeypatch.setattr(torchset, "plan", lambda mine, *a: planning.Step("torchset", [f.code for f in mine],
                                                                         ["c"], [], "cmd"))
    found = [Finding("TORCH_TOOLKIT_MAJOR_MISMATCH", "error", "torch is built with CUDA 13.0 ...", "-", [])]
    env = type("Env", (), {"prefix": "/e", "name": "e"})()
    assert planning.build_plan(found, env, None).steps == []
    assert [s.codes for s in planning.build_plan(found, env, None, ["torch_toolkit_major_mismatch"]).steps] == [
        ["TORCH_TOOLKIT_MAJOR_MISMATCH"]]


@pytest.fixture
def user_site_env(tmp_path, index, pip_template, cli_env):
    """The environment's torch 2.14.1+cu126, and `pip install --user torch` (the cu130 set) in the user site."""
    prefix = pip_env(tmp_path / "envs", "user-site", pip_template)
    pip_install(prefix, index, "cu126")
    pip_install(prefix, index, "cu130", "--user", "--ignore-installed", "--no-deps", env=dict(cli_env, PATH="/usr/bin:/bin"))
    home = Path(cli_env["HOME"])
    assert list(home.glob(".local/lib/python*/site-packages/torch-2.12.1+cu130.dist-info"))
    return prefix


def test_second_torch_in_the_user_site_default_turns_the_user_site_off(user_site_env, cli_env, index):
    env = dict(cli_env, CUDASWITCH_TORCH_INDEX=index)
    home = Path(cli_env["HOME"])
    broken = snapshot(user_site_env, home)
    plan = run_cli(["doctor", "-p", user_site_env, "--fix", "--dry-run"], env)
    assert " 1. TORCH_MIXED_INSTALL: " in plan.stdout, plan.stdout + plan.stderr
    assert "variable PYTHONNOUSERSITE: unset -> 1" in plan.stdout
    assert "[chosen] nousersite:" in plan.stdout and "[or] remove:" in plan.stdout
    r = run_cli(["doctor", "-p", user_site_env, "--fix", "--yes"], env)
    assert "step 1 cleared TORCH_MIXED_INSTALL" in r.stdout, r.stdout + r.stderr
    state = json.loads((user_site_env / "conda-meta" / "state").read_text())
    assert state["env_vars"] == {"PYTHONNOUSERSITE": "1"}
    assert list(home.glob(".local/lib/python*/site-packages/torch")), "the user-site copy stays"
    u = run_cli(["doctor", "-p", user_site_env, "--undo"], env)
    assert "Put back" in u.stdout, u.stdout + u.stderr
    assert snapshot(user_site_env, home) == broken


def test_second_torch_in_the_user_site_removed_by_choice(user_site_env, cli_env, index):
    """The other way, picked at the prompt (a real terminal): pip removes the user-site set; undo puts it back."""
    import pty

    env = dict(cli_env, CUDASWITCH_TORCH_INDEX=index)
    home = Path(cli_env["HOME"])
    broken = snapshot(user_site_env, home)
    out = run_in_terminal(["doctor", "-p", str(user_site_env), "--fix"], env, ["remove", "y"], pty)
    assert "Step 1: which way?" in out and "package torch (" in out, out
    assert "step 1 cleared TORCH_MIXED_INSTALL" in out, out
    assert not list(home.glob(".local/lib/python*/site-packages/torch*"))
    assert not (user_site_env / "conda-meta" / "state").exists()
    u = run_cli(["doctor", "-p", user_site_env, "--undo"], env)
    assert "Put back" in u.stdout, u.stdout + u.stderr
    assert snapshot(user_site_env, home) == broken


def run_in_terminal(args, env, answers, pty):
    """The CLI on a pseudo-terminal, each answer typed when the line before it asks; everything it printed."""
    import os

    repo = str(Path(__file__).resolve().parents[2])
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir("/")
        os.execve(sys.executable, [sys.executable, "-m", "cudaswitch", *args],
                  dict(env, PYTHONPATH=repo, COLUMNS="200"))
    out = b""
    pending = list(answers)
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        tail = out.decode(errors="replace").rstrip()
        if pending and (tail.endswith("]:") or tail.endswith("[y/N]:")):
            os.write(fd, (pending.pop(0) + "\n").encode())
    os.waitpid(pid, 0)
    return out.decode(errors="replace")


@pytest.mark.parametrize("point", ["fix-step:1", "fix-commit:1"])
def test_torch_set_killed_before_or_after_pip_then_undone(cu130_env, cli_env, index, point):
    """SIGKILL before pip starts and after it has replaced the cu130 set with the cu126 one (the journal still
    `pending`): the next --fix names the interrupted one, and --undo gives the cu130 set back as it was, without
    the index."""
    env = dict(cli_env, CUDASWITCH_TORCH_INDEX=index)
    site = envs.site_packages(cu130_env)
    broken = snapshot(cu130_env)
    killed = run_cli(["doctor", "-p", cu130_env, "--fix", "--yes"], dict(env, CUDASWITCH_FAULT=f"kill@{point}"))
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert (site / "torch-2.14.1+cu126.dist-info").is_dir() == (point == "fix-commit:1")
    again = run_cli(["doctor", "-p", cu130_env, "--fix", "--yes"], env)
    assert again.returncode == 2 and "was interrupted" in again.stderr, again.stdout + again.stderr
    u = run_cli(["doctor", "-p", cu130_env, "--undo"], dict(env, CUDASWITCH_TORCH_INDEX="http://127.0.0.1:9/whl"))
    assert "Put back" in u.stdout, u.stdout + u.stderr
    journal_dir = str(cu130_env / "etc" / "cudaswitch" / "fix")
    assert {p: v for p, v in snapshot(cu130_env).items() if not p.startswith(journal_dir)} == broken


CU130 = ("torch-2.12.1+cu130.dist-info", "torchvision-0.27.1+cu130.dist-info", "torchaudio-2.11.0+cu130.dist-info")
CU126 = ("torch-2.14.1+cu126.dist-info", "torchvision-0.29.1+cu126.dist-info", "torchaudio-2.11.0+cu126.dist-info")


def _in_the_middle(site, point):
    """What the kill left, as pip's own work had it at that point (so the kill is known to have landed there)."""
    infos = {p.name for p in site.iterdir() if p.name.endswith(".dist-info")}
    if point in ("uninstalled:1", "writing:1"):  # the old torch moved aside, nothing of the new one's dist-info
        return not infos & {CU130[0], CU126[0]} and CU130[1] in infos
    if point == "writing:4":  # the new torch's files in, its dist-info half-written: no RECORD yet
        return CU126[0] in infos and not (site / CU126[0] / "RECORD").exists() and CU130[1] in infos
    n = int(point.split(":")[1])  # installed:n: the first n of the set are the new ones, the rest the old
    return {CU126[0], CU126[1]}.issubset(infos) == (n == 2) and CU126[0] in infos and CU130[2] in infos


@pytest.mark.parametrize("point", ["uninstalled:1", "writing:1", "writing:4", "installed:1", "installed:2"])
def test_torch_set_killed_inside_pip_then_undone(cu130_env, cli_env, index, point):
    """SIGKILL of cudaswitch and pip together at a point of pip's own work (tests/fix/pip_kill.py): after it moved
    the old torch aside, half-way through a file of the new one, with its dist-info half-written, after the new
    torch is in but torchvision still the old one, after two of the three. The journal is pending: the next --fix
    refuses, --undo (without the index) gives the cu130 set back byte for byte, RECORD hashes as before, and
    nothing of pip's half-done work (the old torch it had moved aside, the new build's own files) is left."""
    import pip_kill
    from test_fix_packages import record_mismatches

    env = dict(cli_env, CUDASWITCH_TORCH_INDEX=index)
    site = envs.site_packages(cu130_env)
    name, n = point.split(":")
    pip_kill.arm(site, name, int(n))
    broken = snapshot(cu130_env)
    hashes = {d: record_mismatches(site, d) for d in CU130}
    killed = run_cli(["doctor", "-p", cu130_env, "--fix", "--yes"], env, process=True)  # pip kills this process
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert _in_the_middle(site, point), sorted(p.name for p in site.iterdir())
    again = run_cli(["doctor", "-p", cu130_env, "--fix", "--yes"], env)
    assert again.returncode == 2 and "was interrupted" in again.stderr, again.stdout + again.stderr
    u = run_cli(["doctor", "-p", cu130_env, "--undo"], dict(env, CUDASWITCH_TORCH_INDEX="http://127.0.0.1:9/whl"))
    assert "Put back" in u.stdout, u.stdout + u.stderr
    assert snapshot(cu130_env) == broken
    assert {d: record_mismatches(site, d) for d in CU130} == hashes


def test_pip_killed_alone_half_way_cudaswitch_puts_it_back(cu130_env, cli_env, index):
    """pip alone dies half-way through the new torch's dist-info (the OOM killer, a kill of pip's pid): cudaswitch
    sees it, puts the cu130 set back itself from the journal and says so; nothing is pending."""
    import pip_kill
    from test_fix_packages import record_mismatches

    env = dict(cli_env, CUDASWITCH_TORCH_INDEX=index)
    site = envs.site_packages(cu130_env)
    pip_kill.arm(site, "writing", 4, alone=True)
    broken = snapshot(cu130_env)
    hashes = {d: record_mismatches(site, d) for d in CU130}
    r = run_cli(["doctor", "-p", cu130_env, "--fix", "--yes"], env)
    assert r.returncode == 1 and "pip exited -9" in r.stderr and "was put back" in r.stderr, r.stdout + r.stderr
    assert snapshot(cu130_env) == broken
    assert {d: record_mismatches(site, d) for d in CU130} == hashes


def test_a_pending_journal_owning_a_folder_outside_the_site_is_refused(cu130_env, cli_env, index, tmp_path):
    """The journal lies in the environment: one whose `owned` folder climbs out of the site (where undo would remove
    whatever it did not list) is refused in one line, that folder untouched; the real one then undoes."""
    import pip_kill

    env = dict(cli_env, CUDASWITCH_TORCH_INDEX=index)
    site = envs.site_packages(cu130_env)
    pip_kill.arm(site, "uninstalled", 1)
    broken = snapshot(cu130_env)
    killed = run_cli(["doctor", "-p", cu130_env, "--fix", "--yes"], env, process=True)
    assert killed.returncode == -9, killed.stdout + killed.stderr
    path = cu130_env / "etc" / "cudaswitch" / "fix" / "journal.json"
    real = path.read_text()
    data = json.loads(real)
    data["packages"][0]["owned"].append("../../../..")
    path.write_text(json.dumps(data))
    kept = snapshot(cu130_env.parent)
    r = run_cli(["doctor", "-p", cu130_env, "--undo"], env)
    assert r.returncode != 0 and "is not a journal cudaswitch wrote" in r.stderr, r.stdout + r.stderr
    assert snapshot(cu130_env.parent) == kept
    path.write_text(real)
    assert "Put back" in run_cli(["doctor", "-p", cu130_env, "--undo"], env).stdout
    assert snapshot(cu130_env) == broken


def test_user_site_removal_with_pip_killed_half_way_is_put_back(user_site_env, cli_env, index):
    """The `remove` way, pip killed after it moved the user-site torch aside (`~orch`) and before it deleted it: the
    user site comes back byte for byte, without pip's moved-aside copy, RECORD hashes as before."""
    import pty

    import pip_kill
    from test_fix_packages import record_mismatches

    env = dict(cli_env, CUDASWITCH_TORCH_INDEX=index)
    home = Path(cli_env["HOME"])
    (user,) = home.glob(".local/lib/python*/site-packages")
    pip_kill.arm(envs.site_packages(user_site_env), "uninstalled", 1, alone=True)
    broken = snapshot(user_site_env, home)
    hashes = {d: record_mismatches(user, d) for d in CU130}
    out = run_in_terminal(["doctor", "-p", str(user_site_env), "--fix"], env, ["remove", "y"], pty)
    assert "pip exited -9" in out and "was put back" in out, out
    assert snapshot(user_site_env, home) == broken
    assert {d: record_mismatches(user, d) for d in CU130} == hashes
