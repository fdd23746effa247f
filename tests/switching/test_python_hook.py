"""The Python startup file `use` writes (cudaswitch/switching/pythonhook.py): a Python of the environment started
without activation gets the switch; an activated one, or one whose user set the variables, is left alone; `-I` still
runs it, `-S` does not; a venv inside the prefix gets one copy of each entry; `off` leaves nothing; a Python upgrade
is followed by `use --refresh` and flagged by `doctor`.

The environment is a prefix laid out as conda's python package lays one out, holding this interpreter
(tests/fake_torch/envs.py python_prefix: not a venv, so a venv made from it reads its site-packages as one made from a
conda environment does); the toolkit is the CUDA 12.9 tree built from NVIDIA's wheels
(conftest.real_trees), whose bin holds the real ptxas (and nvcc, a link to it); the real CUDA 13.0 under /usr/local,
when present, is first on PATH, as on a lab server whose .bashrc puts it there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import one_line_error, run_cli

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fake_torch"))
import envs  # noqa: E402

from cudaswitch.switching import pythonhook  # noqa: E402
from startup_probe import SHOW, SYSTEM_CUDA_BIN, outside as bare  # noqa: E402

@pytest.fixture
def cli_env(clean_env, real_trees):
    return dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))


@pytest.fixture
def py_env(tmp_path):
    return envs.python_prefix(tmp_path / "envs", "work")


def show(python, *flags, env=None, cwd=None):
    r = subprocess.run([str(python), *flags, "-c", SHOW], env=bare() if env is None else env, capture_output=True,
                       text=True, timeout=60, cwd=cwd)
    assert r.returncode == 0 and not r.stderr, r.stderr
    return json.loads(r.stdout)


def site(prefix):
    return envs.site_packages(prefix)


def test_bare_python_of_the_env_gets_the_switch(cli_env, py_env, real_trees):
    tk = real_trees / "cuda-12.9"
    r = run_cli(["use", "12.9", "-p", py_env, "--no-smoke"], cli_env)
    assert r.returncode == 0, r.stderr
    assert f"Python startup file: {site(py_env) / '_cudaswitch_cuda.pth'}" in r.stdout
    got = show(py_env / "bin" / "python")
    assert got["CUDA_HOME"] == got["CUDA_PATH"] == str(tk)
    assert got["PATH"].split(":") == [str(tk / "bin"), SYSTEM_CUDA_BIN, "/usr/bin", "/bin"]
    assert got["LD_LIBRARY_PATH"] == str(tk / "lib64")
    assert got["nvcc"] == str(tk / "bin" / "nvcc") and got["ptxas"] == str(tk / "bin" / "ptxas")
    # a child process (what a JIT build starts) runs the toolkit's own compiler
    assert got["release"] == ["Cuda compilation tools, release 12.9, V12.9.86"]
    assert got["cudaswitch_imported"] is False  # constants only: the module imports nothing of cudaswitch
    state = (py_env / "etc" / "cudaswitch" / "state.yaml").read_text()
    assert "python_hook: true" in state and "lib/python3" in state
    st = run_cli(["status", "--json"], dict(cli_env, CONDA_PREFIX=str(py_env)))
    assert json.loads(st.stdout)["env"]["python_hook"]["in_place"] is True


def test_isolated_mode_runs_it_no_site_does_not(cli_env, py_env, real_trees):
    """-I (isolated: no user site, no PYTHON* variables) still processes site-packages' .pth files; -S skips the
    site module, so nothing happens there: the documented way to start the environment's Python untouched."""
    assert run_cli(["use", "12.9", "-p", py_env, "--no-smoke"], cli_env).returncode == 0
    assert show(py_env / "bin" / "python", "-I")["CUDA_HOME"] == str(real_trees / "cuda-12.9")
    got = show(py_env / "bin" / "python", "-S")
    assert got["CUDA_HOME"] is None and got["PATH"].split(":")[0] == SYSTEM_CUDA_BIN


def test_activated_or_user_set_variables_are_left_alone(cli_env, py_env, real_trees):
    tk = real_trees / "cuda-12.9"
    assert run_cli(["use", "12.9", "-p", py_env, "--no-smoke"], cli_env).returncode == 0
    py = py_env / "bin" / "python"
    mine = show(py, env=bare({"CUDA_HOME": "/opt/my-cuda"}))
    assert mine["CUDA_HOME"] == "/opt/my-cuda" and mine["CUDA_PATH"] is None
    assert mine["PATH"].split(":")[0] == SYSTEM_CUDA_BIN and mine["LD_LIBRARY_PATH"] is None
    assert show(py, env=bare({"CUDA_PATH": "/opt/my-cuda"}))["CUDA_HOME"] is None
    # the real activate hook, sourced by bash, then the environment's Python: one copy of the entry, the hook's
    hook = py_env / "etc" / "conda" / "activate.d" / "cudaswitch.sh"
    r = subprocess.run(["bash", "--noprofile", "--norc", "-c", f'. "$1"; unset CUDA_HOME CUDA_PATH; exec "$2" -c "$3"',
                        "bash", str(hook), str(py), SHOW], env=bare(), capture_output=True, text=True, timeout=60)
    got = json.loads(r.stdout)
    # the user unset both after activation: the hook's records say the environment was activated, so nothing is set
    assert got["CUDA_HOME"] is None and got["PATH"].split(":").count(str(tk / "bin")) == 1


def test_a_venv_inside_the_prefix_gets_one_copy(cli_env, py_env, real_trees):
    """A venv made from the environment's Python, inside its prefix, with the prefix's site-packages visible: the
    startup file runs there, and a second run in the same process (CPython 3.11 processed site-packages twice in
    such a venv) adds nothing."""
    tk = real_trees / "cuda-12.9"
    assert run_cli(["use", "12.9", "-p", py_env, "--no-smoke"], cli_env).returncode == 0
    inner = py_env / "venvs" / "inner"
    subprocess.run([str(py_env / "bin" / "python"), "-m", "venv", "--without-pip", "--system-site-packages",
                    str(inner)], check=True, capture_output=True, env=bare())
    got = show(inner / "bin" / "python")
    assert got["CUDA_HOME"] == str(tk)
    assert got["PATH"].split(":").count(str(tk / "bin")) == 1
    assert got["LD_LIBRARY_PATH"].split(":") == [str(tk / "lib64")]
    # the module executed again (a second site-packages pass, another .pth naming it): nothing more is added
    again = ("import runpy, sys, os, json; import _cudaswitch_cuda as m\n"
             "runpy.run_path(m.__file__); os.environ.pop('_CUDASWITCH_PYTHON_HOOK')\n"
             "os.environ.pop('CUDA_HOME'); os.environ.pop('CUDA_PATH'); runpy.run_path(m.__file__)\n"
             "print(json.dumps([os.environ['PATH'], os.environ['LD_LIBRARY_PATH']]))")
    r = subprocess.run([str(inner / "bin" / "python"), "-c", again], env=bare(), capture_output=True, text=True)
    path, ld = json.loads(r.stdout)
    assert path.split(":").count(str(tk / "bin")) == 1 and ld.split(":") == [str(tk / "lib64")], r.stderr


def test_a_child_python_leaves_what_its_parent_set(cli_env, py_env, real_trees):
    assert run_cli(["use", "12.9", "-p", py_env, "--no-smoke"], cli_env).returncode == 0
    py = str(py_env / "bin" / "python")
    code = f"import subprocess, sys; subprocess.run([{py!r}, '-c', {SHOW!r}])"
    r = subprocess.run([py, "-c", code], env=bare(), capture_output=True, text=True, timeout=60)
    got = json.loads(r.stdout)
    assert got["PATH"].split(":").count(str(real_trees / "cuda-12.9" / "bin")) == 1
    assert got["LD_LIBRARY_PATH"].split(":") == [str(real_trees / "cuda-12.9" / "lib64")]


def _tree(root):
    return sorted(str(p.relative_to(root)) for p in Path(root).rglob("*"))


def test_off_leaves_nothing_behind(cli_env, py_env):
    before = _tree(py_env)
    assert run_cli(["use", "12.9", "-p", py_env, "--no-smoke"], cli_env).returncode == 0
    show(py_env / "bin" / "python")  # the interpreter writes its bytecode cache of the module
    assert list((site(py_env) / "__pycache__").glob("_cudaswitch_cuda.*.pyc"))
    r = run_cli(["off", "-p", py_env], cli_env)
    assert r.returncode == 0 and "removed 10 hook files, the Python startup file and the state file." in r.stdout, r.stdout
    assert _tree(py_env) == before
    assert show(py_env / "bin" / "python")["CUDA_HOME"] is None


def test_no_python_hook_and_the_base_default(cli_env, py_env, tmp_path):
    assert run_cli(["use", "12.9", "-p", py_env, "--no-smoke"], cli_env).returncode == 0
    r = run_cli(["use", "12.9", "-p", py_env, "--no-smoke", "--no-python-hook"], cli_env)
    assert r.returncode == 0 and "no Python startup file (--no-python-hook)" in r.stdout
    assert not list(site(py_env).glob("_cudaswitch_cuda*")) and show(py_env / "bin" / "python")["CUDA_HOME"] is None
    # --refresh keeps the recorded choice
    r = run_cli(["use", "--refresh", "-p", py_env, "--no-smoke"], cli_env)
    assert r.returncode == 0 and not list(site(py_env).glob("_cudaswitch_cuda*")), r.stdout
    # base: conda's own Python runs every conda command; the startup file only when asked for
    base = envs.make_env(tmp_path, "root")
    env = dict(cli_env, _CONDA_ROOT=str(base))
    r = run_cli(["use", "12.9", "-n", "base", "--yes", "--no-smoke"], env)
    assert r.returncode == 0 and "the default in base; --python-hook writes it" in r.stdout, r.stdout + r.stderr
    assert not list(site(base).glob("_cudaswitch_cuda*"))
    assert run_cli(["use", "12.9", "-n", "base", "--yes", "--no-smoke", "--python-hook"], env).returncode == 0
    assert (site(base) / "_cudaswitch_cuda.pth").is_file()


def test_a_file_of_that_name_that_is_not_ours_is_refused(cli_env, py_env):
    mine = site(py_env) / "_cudaswitch_cuda.py"
    mine.write_text("print('mine')\n")
    line = one_line_error(run_cli(["use", "12.9", "-p", py_env, "--no-smoke"], cli_env), 1)
    assert "was not written by cudaswitch" in line and "--no-python-hook" in line
    assert mine.read_text() == "print('mine')\n"
    assert not (py_env / "etc" / "conda").exists()  # refused before any hook was written


def test_a_replaced_file_keeps_its_mode(cli_env, py_env):
    assert run_cli(["use", "12.9", "-p", py_env, "--no-smoke"], cli_env).returncode == 0
    pth = site(py_env) / "_cudaswitch_cuda.pth"
    pth.chmod(0o640)
    assert run_cli(["use", "11.8", "-p", py_env, "--no-smoke"], cli_env).returncode == 0
    assert pth.stat().st_mode & 0o777 == 0o640


def test_python_upgrade_is_followed_by_refresh_and_flagged_by_doctor(cli_env, py_env, real_trees):
    """conda upgrading Python 3.11 to 3.12 removes bin/python3.11 and what it installed in lib/python3.11, not our
    files: the copy there is read by no interpreter. The layout after the upgrade is made by hand (the venv's
    python3.12 is a link to this interpreter; only the file names matter, nothing is run)."""
    assert run_cli(["use", "12.9", "-p", py_env, "--no-smoke"], cli_env).returncode == 0
    old = site(py_env)
    old_name = old.parent.name
    new_site = py_env / "lib" / "python3.99" / "site-packages"
    new_site.mkdir(parents=True)
    (py_env / "bin" / old_name).unlink()
    (py_env / "bin" / "python3.99").symlink_to(sys.executable)
    st = pythonhook.status(str(py_env), windows=False)
    assert st.live == "lib/python3.99/site-packages" and not st.in_place and st.stale == [f"lib/{old_name}/site-packages"]
    doc = run_cli(["doctor", "-p", py_env, "--json"], cli_env)
    codes = {f["code"]: f for f in json.loads(doc.stdout)["findings"]}
    assert "PYTHON_HOOK_STALE" in codes and "use --refresh" in codes["PYTHON_HOOK_STALE"]["fix"]
    r = run_cli(["use", "--refresh", "-p", py_env, "--no-smoke"], cli_env)
    assert r.returncode == 0, r.stderr
    assert f"removed {old / '_cudaswitch_cuda.pth'}" in r.stdout
    assert (new_site / "_cudaswitch_cuda.pth").is_file() and not list(old.glob("_cudaswitch_cuda*"))
    doc = run_cli(["doctor", "-p", py_env, "--json"], cli_env)
    assert "PYTHON_HOOK_STALE" not in {f["code"] for f in json.loads(doc.stdout)["findings"]}


def test_live_place_from_the_files(tmp_path):
    """Which site-packages the environment's Python reads, without running it."""
    p = tmp_path / "env"
    for v in ("3.10", "3.12", "3.13t"):
        (p / "lib" / f"python{v}" / "site-packages").mkdir(parents=True)
    (p / "bin").mkdir()
    assert pythonhook.live_place(str(p), windows=False) is None  # no interpreter: no Python in this environment
    (p / "bin" / "python3.13t").write_text("")
    assert pythonhook.live_place(str(p), windows=False).rel == "lib/python3.13t/site-packages"
    (p / "bin" / "python3.12").write_text("")
    (p / "bin" / "python").symlink_to("python3.12")
    assert pythonhook.live_place(str(p), windows=False).rel == "lib/python3.12/site-packages"
    w = tmp_path / "win"
    (w / "Lib" / "site-packages").mkdir(parents=True)
    assert pythonhook.live_place(str(w), windows=True) is None
    (w / "python.exe").write_bytes(b"MZ")
    assert pythonhook.live_place(str(w), windows=True).rel == "Lib/site-packages"


def test_of_two_live_interpreters_bin_python_does_not_name_the_newest_is_chosen(tmp_path):
    """After an upgrade that left the old interpreter in place, with bin/python a wrapper that names neither: the
    newest Python (3.10, not 3.9 as the folder names sort) gets the startup file."""
    p = tmp_path / "env"
    for v in ("3.9", "3.10"):
        (p / "lib" / f"python{v}" / "site-packages").mkdir(parents=True)
        (p / "bin").mkdir(exist_ok=True)
        (p / "bin" / f"python{v}").write_text("")
    (p / "bin" / "python").write_text("#!/bin/sh\nexec \"$(dirname \"$0\")/python3.10\" \"$@\"\n")
    assert pythonhook.live_place(str(p), windows=False).rel == "lib/python3.10/site-packages"


def test_windows_module_adds_dll_directories_and_switches_away_from_the_installer_default(tmp_path):
    """The module written for Windows, executed here against a dict standing for os.environ and a stand-in for
    os.add_dll_directory (Linux has none): NVIDIA's installer default CUDA_PATH is switched away from, a CUDA_PATH
    the user set is not."""
    root = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.9"
    src = pythonhook.render_module(r"C:\envs\work", root, "12.9.1", [root + r"\bin"], [], windows=True)
    added = []

    import ntpath

    class FakePath:  # Windows' rules for names; the toolkit is there
        normcase = staticmethod(ntpath.normcase)
        isdir = staticmethod(lambda p: True)

    class FakeOs:
        environ = {}
        path = FakePath

        @staticmethod
        def add_dll_directory(p):
            added.append(p)
            return p

    def run(environ):
        ns = {}
        code = src.decode().replace("import os as _os\n", "")
        FakeOs.environ = environ
        exec(compile(code, "_cudaswitch_cuda.py", "exec"), dict(ns, _os=FakeOs))
        return environ

    old = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v13.0"
    got = run({"CUDA_PATH": old, "CUDA_PATH_V13_0": old, "PATH": old + r"\bin;C:\Windows"})
    assert got["CUDA_PATH"] == got["CUDA_HOME"] == root
    assert got["PATH"].split(";") == [root + r"\bin", old + r"\bin", r"C:\Windows"]
    assert added == [root + r"\bin"] and "LD_LIBRARY_PATH" not in got
    added.clear()
    mine = run({"CUDA_PATH": r"D:\my-cuda", "CUDA_PATH_V13_0": old, "PATH": r"C:\Windows"})
    assert mine["CUDA_PATH"] == r"D:\my-cuda" and "CUDA_HOME" not in mine and added == []


def test_ld_library_path_reaches_children_not_the_process_itself(cli_env, py_env, real_trees):
    """What the design says the in-process change cannot do: the loader read LD_LIBRARY_PATH when the process
    started, so the toolkit's real libcudart.so.12 is not found by a dlopen in the same Python; a child finds it."""
    assert run_cli(["use", "12.9", "-p", py_env, "--no-smoke"], cli_env).returncode == 0
    code = ("import ctypes, subprocess, sys\n"
            "try:\n    ctypes.CDLL('libcudart.so.12'); print('in-process: loaded')\n"
            "except OSError:\n    print('in-process: not found')\n"
            "sys.stdout.flush()\n"
            "subprocess.run([sys.executable, '-c', \"import ctypes; ctypes.CDLL('libcudart.so.12'); "
            "print('child: loaded')\"])\n")
    r = subprocess.run([str(py_env / "bin" / "python"), "-c", code], env=bare(), capture_output=True, text=True,
                       timeout=60)
    assert r.stdout.splitlines() == ["in-process: not found", "child: loaded"], r.stdout + r.stderr


def test_the_path_based_branch_windows_takes(cli_env, py_env, real_trees, monkeypatch):
    """Windows has no O_NOFOLLOW and cannot open a folder as a descriptor: there the files are written, found and
    removed through paths (trust.POSIX false). The same use/off, through that branch, on this machine."""
    from cudaswitch.core import trust

    before = _tree(py_env)
    monkeypatch.setattr(trust, "POSIX", False)
    assert run_cli(["use", "12.9", "-p", py_env, "--no-smoke"], cli_env).returncode == 0
    assert show(py_env / "bin" / "python")["CUDA_HOME"] == str(real_trees / "cuda-12.9")
    assert pythonhook.status(str(py_env), windows=False).in_place
    assert run_cli(["off", "-p", py_env], cli_env).returncode == 0
    assert _tree(py_env) == before


def test_a_flag_is_remembered_by_later_switches(cli_env, py_env):
    assert run_cli(["use", "12.9", "-p", py_env, "--no-smoke", "--no-python-hook"], cli_env).returncode == 0
    assert run_cli(["use", "11.8", "-p", py_env, "--no-smoke"], cli_env).returncode == 0
    assert not list(site(py_env).glob("_cudaswitch_cuda*"))
    assert run_cli(["use", "11.8", "-p", py_env, "--no-smoke", "--python-hook"], cli_env).returncode == 0
    assert (site(py_env) / "_cudaswitch_cuda.pth").is_file()


def test_the_bytecode_cache_is_written_at_use_time(cli_env, py_env):
    """An environment its users cannot write never gets a .pyc from Python itself (here: PYTHONDONTWRITEBYTECODE):
    `use` writes it when its interpreter is the environment's Python version (python_prefix copied this one), and the
    environment's interpreter loads it instead of compiling the module."""
    assert run_cli(["use", "12.9", "-p", py_env, "--no-smoke"], cli_env).returncode == 0
    pyc = site(py_env) / "__pycache__" / f"_cudaswitch_cuda.{sys.implementation.cache_tag}.pyc"
    assert pyc.is_file()
    r = subprocess.run([str(py_env / "bin" / "python"), "-v", "-c", "pass"], env=bare({"PYTHONDONTWRITEBYTECODE": "1"}),
                       capture_output=True, text=True, timeout=60)
    assert f"# code object from '{pyc}'" in r.stderr, r.stderr[-2000:]


def test_the_module_never_raises():
    """An os.environ that refuses every change (a sandboxed interpreter, an embedded one): the module swallows it and
    the interpreter starts as without it."""
    src = pythonhook.render_module("/env", "/opt/cuda", "12.9.1", ["/opt/cuda/bin"], [], windows=False).decode()

    class Refusing(dict):
        def __setitem__(self, key, value):
            raise OSError("environment is read-only")

    class FakeOs:
        environ = Refusing(PATH="/usr/bin")

    ns = {"_os": FakeOs}
    exec(compile(src.replace("import os as _os\n", ""), "_cudaswitch_cuda.py", "exec"), ns)
    assert ns["APPLIED"] is False and dict(FakeOs.environ) == {"PATH": "/usr/bin"}


def test_a_deleted_toolkit_is_refused_with_the_hooks_warning(cli_env, py_env, real_trees, tmp_path):
    """As the shell hooks do: the toolkit the switch names is gone, so the startup file says so on stderr and sets
    no CUDA_HOME pointing at nothing."""
    import shutil

    gone = tmp_path / "apps" / "cuda-12.9"
    shutil.copytree(real_trees / "cuda-12.9", gone, symlinks=True)
    env = dict(cli_env, CUDASWITCH_SEARCH_PATH=str(gone.parent))
    assert run_cli(["use", str(gone), "-p", py_env, "--no-smoke"], env).returncode == 0
    assert show(py_env / "bin" / "python")["CUDA_HOME"] == str(gone)
    shutil.rmtree(gone)
    r = subprocess.run([str(py_env / "bin" / "python"), "-c", SHOW], env=bare(), capture_output=True, text=True,
                       timeout=60)
    got = json.loads(r.stdout)
    assert got["CUDA_HOME"] is None and got["CUDA_PATH"] is None and str(gone) not in got["PATH"]
    assert r.stderr == (f"cudaswitch: warning: CUDA 12.9.1 is gone from {gone}; this environment keeps the CUDA "
                        "settings it had (run 'cudaswitch use' again)\n")


def test_records_of_another_environment_do_not_stop_the_startup_file(cli_env, py_env, real_trees):
    """A process started where another switched environment was active (its startup file's record, or its shell
    hook's records and CONDA_PREFIX): this environment's Python takes its own switch; its own records stop it."""
    tk = real_trees / "cuda-12.9"
    assert run_cli(["use", "12.9", "-p", py_env, "--no-smoke"], cli_env).returncode == 0
    py = py_env / "bin" / "python"
    old = str(real_trees / "cuda-11.8")
    theirs = {"CUDA_HOME": old, "CUDA_PATH": old}
    got = show(py, env=bare({**theirs, pythonhook.RECORD: "/elsewhere/envs/other"}))
    assert got["CUDA_HOME"] == str(tk)
    hooked = bare({**theirs, "CONDA_PREFIX": "/elsewhere/envs/other", "_CUDASWITCH_ADDED_PATH": f"{old}/bin",
                   "_CUDASWITCH_SAVED_CUDA_HOME": "1"})
    hooked["PATH"] = f"{old}/bin:" + hooked["PATH"]
    got = show(py, env=hooked)
    assert got["CUDA_HOME"] == str(tk) and got["PATH"].split(":")[0] == str(tk / "bin")
    assert f"{old}/bin" not in got["PATH"].split(":")
    # its own: left as they are
    assert show(py, env=bare({**theirs, pythonhook.RECORD: str(py_env)}))["CUDA_HOME"] == old
    assert show(py, env=dict(hooked, CONDA_PREFIX=str(py_env)))["CUDA_HOME"] == old
