"""The standing hostile user: a real second account (uid 65534) plants canaries into every input source cudaswitch
declares (tests/hostile/world.py, core/trust.py INPUT_SOURCES) and root runs every command against that machine.
A test fails when a canary ran as root (its line in the marker file), when the audit hook stopped or saw a start,
load or write there (conftest's audit fixture), when root read one of her files outside the registered sources, or
when a command took past the harness's time limit on her adversarial-size files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

import cudatrees
import cudnn_archives
import world as hostile
from bounded import within
from conftest import require_tool, run_cli
from other_user import NOBODY, as_user

from cudaswitch.core import audit, trust



@pytest.fixture(scope="module")
def world(real_trees):
    require_tool("gcc")
    w = hostile.build(real_trees)
    yield w
    shutil.rmtree(w.base, ignore_errors=True)


@pytest.fixture
def fresh(world):
    if world.marks.exists():
        world.marks.unlink()
    yield world


def test_every_registered_source_is_planted():
    """A new input source in core/trust.py gets a planter here, or this fails."""
    assert set(hostile.PLANTERS) == set(trust.INPUT_SOURCES) == set(hostile._SOURCE_PATHS)


def test_the_canaries_leave_their_mark_when_root_runs_them(fresh):
    """The harness can fail: each kind of canary, run as root on purpose (outside any command), leaves its line."""
    w = fresh
    subprocess.run([str(w.her / "bin" / "nvcc")], check=True)
    subprocess.run([sys.executable, "-I", "-c", f"import ctypes; ctypes.CDLL({str(w.her / 'lib' / 'libcuda.so.1')!r})"],
                   check=True)
    subprocess.run([str(w.her / "pybin" / "nvidia-smi"), "-c", "pass"], check=True)
    subprocess.run(["bash", "-c", "true"], env={"BASH_ENV": str(w.her / "bashenv"), "PATH": "/usr/bin:/bin"},
                   check=True)
    assert set(w.ran()) == {"path:nvcc", "ld_library_path:lib", "pyvenv:pth", "bash_env"}
    w.marks.unlink()
    as_user(lambda: subprocess.run([str(w.her / "bin" / "nvcc")], check=True))  # as her: no mark
    assert w.ran() == []


def test_the_hook_tells_the_harness_every_read_and_listing(fresh):
    """The unregistered-read check can fail: a file of hers outside every source, read or listed during a command,
    is reported; a registered one is recognised as such."""
    w = fresh
    notes = w.her / "notes"
    as_user(lambda: (notes.mkdir(exist_ok=True), (notes / "todo.txt").write_text("x")))
    reads = []
    audit.ON_READ = reads.append
    try:
        with audit.active():
            (notes / "todo.txt").read_bytes()
            os.listdir(notes)
    finally:
        audit.ON_READ = None
    assert [r for r in reads if r.startswith(str(notes))] == [str(notes / "todo.txt"), str(notes)]
    assert not w.registered(str(notes / "todo.txt")) and w.registered(str(w.her / "bin" / "nvcc"))


COMMANDS = {
    "list": ["list"],
    "list --json": ["list", "--json"],
    "status": ["status"],
    "doctor": ["doctor"],
    "doctor -p ROOTENV": ["doctor", "-p", "{root_env}"],
    "which": ["which", "12.9"],
    "envs": ["envs"],
    "use -p ROOTENV": ["use", "12.9", "-p", "{root_env}", "--no-smoke"],
    "off -p ROOTENV": ["off", "-p", "{root_env}"],
    "smoke -p ROOTENV": ["smoke", "-p", "{root_env}", "--cpu-ok"],
    "recommend": ["recommend"],
    "modulefile": ["modulefile", "12.9", "{base}/modules/cuda"],
    "run": ["run", "12.9", "--", "/bin/true"],
    # on her environment root works as her (core/asowner.py): what she planted runs, if at all, with her rights
    "use -p HERENV": ["use", "12.9", "-p", "{her_env}", "--no-smoke"],
    "smoke -p HERENV": ["smoke", "-p", "{her_env}", "--cpu-ok"],
    "off -p HERENV": ["off", "-p", "{her_env}"],
    # pip starts as root with her PIP_CONFIG_FILE in the environment (an index offering nothing: it fails fast)
    "install-toolkit": ["install-toolkit", "13.0", "--into", "{base}/new-toolkit"],
    "uninstall-toolkit": ["uninstall-toolkit", "13.0"],
    # root's HOME is hers (su without '-'): the rc files and profiles there are hers to swap
    "init bash --install": ["init", "bash", "--install"],
    "init powershell --install": ["init", "powershell", "--install"],
    "install-cudnn --into-env -p HERENV": ["install-cudnn", "{archive}", "--into-env", "-p", "{her_env}", "--yes"],
    "use auto -p ROOTENV": ["use", "auto", "-p", "{root_env}", "--no-smoke"],
    # the system's own shells found first: the hook check runs them, with her BASH_ENV and ENV in root's environment
    "use -p ROOTENV, system shells": ["use", "12.9", "-p", "{root_env}", "--no-smoke"],
    # TAB after `cudaswitch use ` and `-n `: completion runs discovery and reads the environments list
    "complete use": [],
    "complete -n": [],
    # last, in this order: the fix changes ROOTENV and the undo puts it back for what follows
    "doctor --fix --dry-run -p ROOTENV": ["doctor", "-p", "{root_env}", "--fix", "--dry-run"],
    "doctor --fix --yes -p ROOTENV": ["doctor", "-p", "{root_env}", "--fix", "--yes"],
    "doctor --undo -p ROOTENV": ["doctor", "-p", "{root_env}", "--undo"],
    # her own environment: root's --fix works there as her (core/asowner.py), so what she planted runs as her
    "doctor --fix --yes -p HERENV": ["doctor", "-p", "{her}/envs/hers", "--fix", "--yes"],
}
EXTRA_ENV = {"install-toolkit": {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "{base}/no-wheels"},
             "use -p ROOTENV, system shells": {"PATH": "/usr/bin:/bin"},
             "complete use": {"_CUDASWITCH_COMPLETE": "bash_complete", "COMP_WORDS": "cudaswitch use ",
                              "COMP_CWORD": "2"},
             "complete -n": {"_CUDASWITCH_COMPLETE": "bash_complete", "COMP_WORDS": "cudaswitch use 12.9 -n ",
                             "COMP_CWORD": "4"}}


def _archive(w):
    """A cuDNN archive of root's (NVIDIA's layout and names, stand-in libraries), made once per world."""
    folder = w.base / "archives"
    found = sorted(folder.glob("*.tar.xz")) if folder.is_dir() else []
    return found[0] if found else cudnn_archives.make(folder, "linux-9.10-archive")


def _run(w, args, extra=None):
    reads = []
    audit.ON_READ = reads.append
    try:
        proc = within(run_cli, args, dict(w.environ, **(extra or {})), limit=120)
    finally:
        audit.ON_READ = None
    return proc, reads


@pytest.mark.parametrize("name", list(COMMANDS))
def test_root_runs_nothing_she_planted(fresh, name):
    w = fresh
    values = dict(root_env=w.root_env, base=w.base, her_env=hostile._her_env(w), her=w.her,
                  archive=_archive(w))
    args = [a.format(**values) for a in COMMANDS[name]]
    proc, reads = _run(w, args, {k: v.format(**values) for k, v in EXTRA_ENV.get(name, {}).items()})
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert w.ran() == [], (w.ran(), proc.stdout, proc.stderr)
    assert not (w.her / "pip-as-root.log").exists(), "pip read her settings as root"
    if name == "complete use":  # completion really ran discovery (not an empty answer to an unknown protocol)
        assert "plain,12.9" in proc.stdout.splitlines(), proc.stdout
    her = str(w.her) + "/"
    stray = sorted({r for r in reads if r.startswith(her) and not w.registered(r)})
    assert stray == [], f"root read her files outside every registered source: {stray}"


def test_init_install_as_root_with_her_home_is_refused_before_reading_anything(fresh):
    """Root run with her HOME: her .bashrc (which she may turn into a link to a file of root's) is hers to change.
    One line names the file and the command to run as her; her files are as they were."""
    w = fresh
    before = (w.her / ".bashrc").read_bytes()
    proc, _reads = _run(w, ["init", "bash", "--install"])
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("cudaswitch: error: refused to install the shell integration: ") and \
        "sudo -u nobody cudaswitch init bash --install" in proc.stderr, proc.stderr
    assert (w.her / ".bashrc").read_bytes() == before
    assert not (w.her / ".local" / "share" / "cudaswitch").exists()


def test_install_and_uninstall_cudnn_as_root_run_and_load_nothing_of_hers(fresh):
    """install-cudnn into a root-owned toolkit, with her LD_LIBRARY_PATH (a libcudnn.so.9 canary), her PATH and her
    Python links in root's environment: the post-install load check loads the toolkit's own libcudnn by path, and
    the undo removes exactly what the install wrote."""
    w = fresh
    tk = cudatrees.cuda_12_9(w.base / "tk-cudnn")
    archive = _archive(w)
    before = cudnn_archives.snapshot(tk)
    her = str(w.her) + "/"
    for args in (["install-cudnn", str(archive), "--cuda", str(tk), "--yes"], ["uninstall-cudnn", "--cuda", str(tk)]):
        proc, reads = _run(w, args)
        # the archive's libraries are stand-ins that do not load: install-cudnn says so (its exit status for that
        # is the cuDNN tests' business)
        assert proc.returncode in ((0, 1) if args[0] == "install-cudnn" else (0,)), (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert w.ran() == [], (args, w.ran(), proc.stderr)
        assert sorted({r for r in reads if r.startswith(her) and not w.registered(r)}) == [], args
        if args[0] == "install-cudnn":
            assert (tk / "include" / "cudnn_version.h").is_file(), proc.stdout
            assert f"{tk / 'lib64' / 'libcudnn.so.9'}: wrong ELF class" in proc.stdout + proc.stderr
    assert cudnn_archives.snapshot(tk) == before


def _linked_toolkit(w, name):
    """A root-owned toolkit without version files (so `list` asks its nvcc) whose bin/nvcc links into her folder."""
    tk = w.base / name
    (tk / "bin").mkdir(parents=True)
    (tk / "include").mkdir()
    (tk / "bin" / "nvcc").symlink_to(w.her / name / "nvcc")
    return tk


def test_a_link_through_her_folder_to_a_trusted_program_is_not_started(fresh):
    """Her folder on the way to /bin/true: the check walks every link on the way, as the audit hook does, so the
    toolkit's nvcc is refused before anything starts, and `list` says why instead of stopping."""
    w = fresh
    tk = _linked_toolkit(w, "cuda-via-her")

    def plant():
        (w.her / "cuda-via-her").mkdir()
        (w.her / "cuda-via-her" / "nvcc").symlink_to("/bin/true")
    as_user(plant)
    proc = run_cli(["list"], dict(w.environ, CUDASWITCH_SEARCH_PATH=str(tk)))
    assert proc.returncode == 0 and w.ran() == [], (proc.stdout, proc.stderr)
    assert f"{tk / 'bin' / 'nvcc'}: 'nvcc --version' not run: {w.her} belongs to" in proc.stderr, proc.stderr
    assert audit.take_violations() == []  # refused by the check, not left to the net below it


def _race_nvcc(w):
    tk = _linked_toolkit(w, "race-nvcc")
    return ["list"], {"CUDASWITCH_SEARCH_PATH": str(tk)}


def _race_on_path(name, args):
    """A root-owned folder first on PATH whose `name` links into her folder."""
    def setup(w):
        folder = w.base / f"rbin-{name}"
        folder.mkdir()
        (folder / name).symlink_to(w.her / f"race-{name}" / name)
        return [a.format(root_env=w.root_env) for a in args], {"PATH": f"{folder}:/usr/bin:/bin"}
    return setup


# one per door that starts a program found through a link: discovery's nvcc, the driver query's nvidia-smi, the
# hook check's shells
RACES = {
    "nvcc": ("nvcc", "/bin/true", _race_nvcc),
    "nvidia-smi": ("nvidia-smi", "/bin/true", _race_on_path("nvidia-smi", ["doctor"])),
    "dash": ("dash", "/bin/dash", _race_on_path("dash", ["use", "12.9", "-p", "{root_env}", "--no-smoke"])),
}


@pytest.mark.parametrize("door", list(RACES))
def test_a_racing_link_never_runs_her_program_as_root(fresh, door):
    """A link in a root-owned folder leads to her link, which she flips between a trusted program and her script
    as fast as she can while root runs the command five times: whichever it meets, the check refuses her link
    itself, so her script never runs as root and the audit hook never has to stop a start the check let through
    (a second resolution after the check would meet the flip)."""
    w = fresh
    name, trusted, setup = RACES[door]
    args, extra = setup(w)
    race = w.her / f"race-{name}"
    stop = w.base / "stop-race"

    def flip():
        race.mkdir(exist_ok=True)
        (race / "script").write_text(hostile.sh_canary(w, f"race:{name}"))
        (race / "script").chmod(0o755)
        deadline = time.monotonic() + 120
        while not stop.exists() and time.monotonic() < deadline:
            for src in (trusted, str(race / "script")):
                tmp = race / f".{name}"
                try:
                    tmp.unlink()
                except FileNotFoundError:
                    pass
                tmp.symlink_to(src)
                os.replace(tmp, race / name)
    child = threading.Thread(target=as_user, args=(flip,))
    child.start()
    try:
        while not (race / name).exists():
            time.sleep(0.01)
        env = dict(w.environ, **extra)
        for _ in range(5):
            proc = within(run_cli, args, env, limit=60)
            assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    finally:
        stop.write_text("")
        child.join()
        stop.unlink()
    assert w.ran() == []
    assert audit.take_violations() == []
    # the check saw her link (not a silent pass because nothing looked)
    assert f"{w.her} belongs to" in proc.stdout + proc.stderr, (proc.stdout, proc.stderr)


@pytest.mark.parametrize("command", ["complete use", "list"])
def test_a_tab_as_root_with_her_home_reads_and_writes_no_selector_cache_of_hers(fresh, command):
    """The kept selectors (discovery/selector_cache.py) live in the user's cache folder, which is hers when root's
    HOME is hers: root neither reads the record she planted there (a listing she wrote would decide root's answers)
    nor writes one of its own, and answers from a discovery of its own; nor does a command such as `list`, which keeps
    its discovery for the next TAB."""
    from cudaswitch.core.trust import kept_bytes
    from cudaswitch.discovery import selector_cache

    w = fresh
    cache = w.her / ".cache" / "cudaswitch"
    planted = cache / selector_cache.NAME
    record = {"format": selector_cache.FORMAT, "env": {}, "extra": {}, "paths": {}, "words": ["her-planted"]}
    as_user(lambda: (cache.mkdir(parents=True, exist_ok=True), planted.write_bytes(kept_bytes(record))))
    before = planted.read_bytes()
    try:
        if command == "list":
            proc, reads = _run(w, ["list"])
            assert "12.9" in proc.stdout and "her-planted" not in proc.stdout, proc.stdout
        else:
            proc, reads = _run(w, [], {k: v.format(base=w.base) for k, v in EXTRA_ENV[command].items()})
            assert "plain,12.9" in proc.stdout.splitlines() and "her-planted" not in proc.stdout, proc.stdout
        assert "Traceback" not in proc.stderr and w.ran() == [], (w.ran(), proc.stdout, proc.stderr)
        assert str(planted) not in reads and not w.registered(str(planted)), reads
        assert sorted(p.name for p in cache.iterdir()) == [selector_cache.NAME] and planted.read_bytes() == before
    finally:
        shutil.rmtree(w.her / ".cache" / "cudaswitch", ignore_errors=True)


def test_smoke_in_a_root_owned_environment_with_a_python_loads_no_library_of_hers(fresh):
    """The smoke probe runs the environment's own Python, which loads libcuda.so.1 by name: with her folder first
    on root's LD_LIBRARY_PATH (and PATH), the loader would take her libcuda. The probe starts without her folders."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fake_torch"))
    import envs

    w = fresh
    prefix = envs.python_prefix(w.base / "py-envs", "rootpy")
    (prefix / "conda-meta").mkdir(exist_ok=True)
    (prefix / "conda-meta" / "history").write_text("")
    for command in (["smoke", "-p", str(prefix), "--cpu-ok"], ["doctor", "-p", str(prefix)]):
        proc, _reads = _run(w, command)
        assert "Traceback" not in proc.stderr and w.ran() == [], (command, w.ran(), proc.stdout, proc.stderr)
        assert "torch" in proc.stdout + proc.stderr, (command, proc.stdout, proc.stderr)


def test_fix_of_a_conda_and_pip_torch_runs_not_her_conda(fresh):
    """A root-owned environment with conda's pytorch and pip's torch over it, and CONDA_EXE naming the `conda` she
    planted: the plan's default step is `conda remove`, and root refuses to start her conda; one line, nothing
    changed, no canary ran."""
    import json

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fake_torch"))
    import envs

    w = fresh
    prefix = envs.python_prefix(w.base / "mixed-envs", "mixed")
    (prefix / "conda-meta" / "history").write_text("")
    site = envs.site_packages(prefix)
    rel = os.path.relpath(site, prefix)
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("")
    (site / "torch" / "version.py").write_text("__version__ = '2.12.1+cpu'\ncuda = None\n")
    dist = site / "torch-2.12.1+cpu.dist-info"
    dist.mkdir()
    (dist / "INSTALLER").write_text("pip\n")
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.12.1+cpu\n")
    (dist / "RECORD").write_text("torch/__init__.py,,\ntorch/version.py,,\n"
                                 "torch-2.12.1+cpu.dist-info/RECORD,,\n")
    (prefix / "conda-meta" / "pytorch-2.11.0-cpu_py_0.json").write_text(json.dumps(
        {"name": "pytorch", "version": "2.11.0", "build": "cpu_py_0", "channel": "pytorch",
         "files": [f"{rel}/torch/__init__.py", f"{rel}/torch/version.py"]}))
    before = {p: p.read_bytes() for p in prefix.rglob("*") if p.is_file() and "__pycache__" not in str(p)}
    conda = hostile._her_env(w) / "bin" / "conda"
    proc, _reads = _run(w, ["doctor", "-p", str(prefix), "--fix", "TORCH_MIXED_INSTALL", "--yes"],
                        {"CONDA_EXE": str(conda)})
    assert "Traceback" not in proc.stderr and w.ran() == [], (w.ran(), proc.stdout, proc.stderr)
    assert " 1. TORCH_MIXED_INSTALL: " in proc.stdout and "[chosen] conda:" in proc.stdout, proc.stdout
    assert proc.returncode != 0 and proc.stderr.count("\n") == 1 and str(conda) in proc.stderr, proc.stderr
    after = {p: p.read_bytes() for p in prefix.rglob("*") if p.is_file() and "__pycache__" not in str(p)}
    assert after == before
