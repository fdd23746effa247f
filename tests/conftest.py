import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
# the fake-torch helpers (envs, texts) too, so that a test file importing them runs alone, whatever was collected
sys.path.insert(0, str(Path(__file__).parent / "fake_torch"))

import cudatrees  # noqa: E402
import seams  # noqa: E402

seams.enable()  # with the run-time trust rule of core/audit.py on in every test, whoever runs the suite

from cudaswitch.core import audit  # noqa: E402


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """A test fails when cudaswitch's code broke the trust rule, even where a handler swallowed the stop (in the
    test's own call, so that an xfail covers it); a test that provokes one on purpose takes it with
    audit.take_violations()."""
    audit.take_violations()
    outcome = yield
    left = audit.take_violations()
    if left and outcome.excinfo is None:
        outcome.force_exception(pytest.fail.Exception("the audit hook stopped cudaswitch: " + "; ".join(left),
                                                      pytrace=False))

# the cuDNN tests' fixtures (tests/cudnn/) live in their own module, loaded here once
pytest_plugins = ["cudnn_fixtures"]

# The longest test files (measured with --durations: each several minutes, the first two a third of the suite's
# time together), run first: on the two workers of .ci/run (-n 2 --dist loadfile --no-loadscope-reorder) the others
# then fill in around them, where in collection order one worker ended alone with the last of them.
_LONGEST_FIRST = ("tests/switching/test_hooks_realconda.py", "tests/switching/test_hooks_transitions.py",
                  "tests/checks/test_smoke.py", "tests/cli/test_interrupt_every_step.py",
                  "tests/discovery/test_toolkit_security.py", "tests/discovery/test_toolkit_install.py",
                  "tests/test_docs.py")  # the guide's real cuDNN and toolkit installs: 2-4 minutes, collected last


def pytest_collection_modifyitems(items):
    rank = {f: i for i, f in enumerate(_LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: the rest as collected

IN_CI = bool(os.environ.get("CI"))


# What a contributor's machine sets that no test is about (the second pass of .ci/run sets each one, see
# .ci/gpu-workstation): removed from os.environ for the whole run, so every fixture and every CLI run, in process
# or not, starts from a machine without them. A test about one sets it itself.
_MACHINE_VARS = ("LD_LIBRARY_PATH", "MODULEPATH", "MODULESHOME", "LOADEDMODULES", "_LMFILES_", "PYTHONUSERBASE",
                 "JUPYTER_PATH", "JUPYTER_DATA_DIR", "LANGUAGE", "LC_ALL", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
                 "XDG_CACHE_HOME")
_MACHINE_PREFIXES = ("CUDA", "CONDA", "_CONDA", "_CE_", "MAMBA", "_CUDASWITCH", "LMOD", "__LMOD", "_ModuleTable",
                     "LC_", "BASH_FUNC_module", "BASH_FUNC_ml")
_SUITE_VARS = ("CUDASWITCH_TEST_", "CUDASWITCH_FUZZ_", "CUDASWITCH_LANG")  # the suite's own knobs stay
_HOME = os.path.expanduser("~")
_CACHE = str(cudatrees.nw.cache_dir())  # the test cache stays where it is when HOME moves
_PIP_CONFIGS = (".config/pip/pip.conf", ".pip/pip.conf")  # how pip reaches a package index here: not about CUDA


def _machine_free(environ, home):
    """`environ` without the machine's CUDA, conda, module-system and locale settings, PATH without a folder that
    holds an nvcc (a toolkit's bin, or a wrapper such as /usr/local/bin/nvcc), and HOME an empty folder: what a test
    starts from."""
    env = {k: v for k, v in environ.items()
           if k.startswith(_SUITE_VARS) or not (k in _MACHINE_VARS or k.startswith(_MACHINE_PREFIXES))}
    env["PATH"] = os.pathsep.join(p for p in environ.get("PATH", "").split(os.pathsep)
                                  if p and not os.path.exists(os.path.join(p, "nvcc")))
    env["LANG"] = "C.UTF-8"
    env["HOME"] = _empty_home(home)
    env.setdefault("CUDASWITCH_TEST_CACHE", _CACHE)
    return env


def _empty_home(home):
    """A HOME without ~/.condarc, ~/.conda/environments.txt, a user site, a cudaswitch config or store; pip's own
    settings are copied in, so the test cache's builders reach the index they reach here."""
    for conf in _PIP_CONFIGS:
        if os.path.isfile(os.path.join(_HOME, conf)):
            (home / conf).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(os.path.join(_HOME, conf), home / conf)
    return str(home)


_MACHINE_ENV = dict(os.environ)


@pytest.fixture(autouse=True, scope="session")
def _not_this_machine_session(tmp_path_factory):
    """The suite runs as on a machine without a toolkit, a module system or a conda of its own, session and module
    fixtures included: the machine's variables are scrubbed from os.environ for the whole run, and discovery's
    standard places (/usr/local, /opt, ...) point at a folder that does not exist (tests/seams.py)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(_machine_free(saved, tmp_path_factory.mktemp("home")))
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(autouse=True)
def _not_this_machine(request, monkeypatch, tmp_path_factory):
    """Each test gets a HOME of its own (what one test leaves there is not the next one's machine); a test marked
    `this_machine` gets the machine's environment and its standard places back."""
    if request.node.get_closest_marker("this_machine"):
        for k in [k for k in os.environ if k not in _MACHINE_ENV and not k.startswith(_SUITE_VARS)]:
            monkeypatch.delenv(k)
        for k, v in _MACHINE_ENV.items():
            if not k.startswith(_SUITE_VARS):
                monkeypatch.setenv(k, v)
        monkeypatch.setenv("SUITE_MACHINE_ROOT", "/")
        # a command keeps its discovery for the next TAB in the user's cache folder: not the machine's to keep
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        return
    monkeypatch.setenv("HOME", _empty_home(tmp_path_factory.mktemp("home")))


@pytest.fixture(scope="session")
def real_trees(tmp_path_factory):
    """`/usr/local`-style folder holding cuda-11.8 and cuda-12.9 built from the real NVIDIA wheels."""
    base = tmp_path_factory.mktemp("usr_local")
    cudatrees.cuda_11_8(base / "cuda-11.8")
    cudatrees.cuda_12_9(base / "cuda-12.9")
    return base


@pytest.fixture
def clean_env(tmp_path):
    """os.environ without CUDA/conda settings and with an empty config, for CLI subprocesses."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDA", "CONDA", "_CONDA", "_CUDASWITCH", "_CE_", "MAMBA"))}
    env["CUDASWITCH_CONFIG"] = str(tmp_path / "no-config.yaml")
    # cudaswitch's data folder (the shell integration `init --install` keeps, install-toolkit's toolkits): never the
    # user's own
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg-data")
    return env


def require_tool(name: str) -> str:
    """Path of a real program the test needs: skipped locally when missing, a failure in CI."""
    import shutil

    found = shutil.which(name)
    if not found:
        if IN_CI:
            pytest.fail(f"{name} is not installed; .ci/run must install it")
        pytest.skip(f"{name} not installed")
    return found


REPO = Path(__file__).resolve().parent.parent


def run_cli(args, env=None, *, process=False, cwd=None, input=None, timeout=120, stdin=None):
    """Run the real command line from this checkout with `env` as the COMPLETE environment, `cwd` as the working
    folder and `input` on stdin; returns a CompletedProcess (returncode, stdout, stderr as text).

    In-process through click's CliRunner by default (the suite runs hundreds of commands; a fresh interpreter each
    costs more than most commands do), with os.environ and the working folder replaced for the call and the
    test-only fault seam of tests/seams.py on, as in a subprocess. `process=True` runs `python tests/seams.py ARGS`
    instead, for what only a real process shows: signals, the encoding of a real stdout, another user's uid. Some
    cases always get a real process: `run` (it becomes its command by exec), a `kill@` fault (SIGKILL to its own
    pid), a `sigint@` or `interrupt@` one (SIGINT) would end or interrupt the test runner itself, and a
    PYTHONIOENCODING of the test's own only means something to a new interpreter's stdout."""
    args = [str(a) for a in args]
    environ = dict(os.environ if env is None else env)
    if stdin is not None:  # subprocess.DEVNULL: an empty stdin, at once at its end
        input = "" if input is None else input
    fault = environ.get("CUDASWITCH_FAULT", "")
    if (process or args[:1] == ["run"] or any(f in fault for f in ("kill@", "sigint@", "interrupt@"))
            or environ.get("PYTHONIOENCODING") != os.environ.get("PYTHONIOENCODING")):
        return _run_cli_process(args, environ, cwd=cwd, input=input, timeout=timeout,
                                stdin=None if input is not None else stdin)
    import subprocess
    import traceback

    from click.testing import CliRunner

    from cudaswitch.cli import main
    from cudaswitch.core import i18n

    saved, old_cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(environ)
    try:
        if cwd is not None:
            os.chdir(cwd)
        result = CliRunner().invoke(main, args, input=input, prog_name="cudaswitch")
    finally:
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(saved)
        i18n.set_language(None)  # the language that call chose is not the next test's
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # what the interpreter would have printed had the exception left a real process
        stderr += "".join(traceback.format_exception(*result.exc_info))
    return subprocess.CompletedProcess([sys.executable, seams.ENTRY, *args], result.exit_code, result.stdout, stderr)


def _run_cli_process(args, environ, *, cwd, input, timeout, stdin):
    import subprocess

    environ["PYTHONPATH"] = str(REPO) + (os.pathsep + environ["PYTHONPATH"] if environ.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, seams.ENTRY, *args], env=environ, capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, input=input, stdin=stdin)


def cli_on_path(tmp_path):
    """tmp_path/bin holding a `cudaswitch` program that runs this checkout in a real process (what pip's entry point
    would do, with the suite's seams on: tests/seams.py), for a real shell that calls the command by name. Returns
    that folder."""
    import shlex

    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "cudaswitch"
    exe.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(seams.ENTRY)} \"$@\"\n")
    exe.chmod(0o755)
    return bindir


def make_env(prefix, *, history="", packages=()):
    """A conda environment at `prefix` as conda lays one out: conda-meta/ with its `history` (the file conda itself
    takes as the mark of an environment; None leaves it out, for a folder that only looks like one) and an empty
    record conda-meta/<name>.json per package, e.g. "cuda-nvcc-12.9.86-0". Returns the prefix as a Path."""
    prefix = Path(prefix)
    (prefix / "conda-meta").mkdir(parents=True, exist_ok=True)
    if history is not None:
        (prefix / "conda-meta" / "history").write_text(history)
    for name in packages:
        (prefix / "conda-meta" / f"{name}.json").write_text("{}")
    return prefix


def one_line_error(proc, code):
    """The CLI failed as every failure must: exit `code`, and stderr one `cudaswitch: error: ...` line, neither a
    traceback nor an internal error. Returns that line."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cudaswitch: error: "), proc.stderr
    return lines[0]


@pytest.fixture(scope="session")
def real_conda():
    """A real conda (tests/realconda.py says which): skipped with the reason when there is none, in CI too,
    since no package registry this project installs from serves conda itself."""
    import realconda

    found = realconda.find_conda()
    if found is None:
        pytest.skip("no real conda: set CUDASWITCH_TEST_CONDA to a conda root prefix, its python, or a conda "
                    "executable (or put conda on PATH) to run the real-conda tests")
    return found


@pytest.fixture(scope="session")
def toolkit_13_0(tmp_path_factory):
    """CUDA 13.0 assembled by the real `cudaswitch install-toolkit 13.0` from NVIDIA's wheels, which pip takes from
    the test cache (tests/nvidia_wheels.py) through the user-level pip settings install-toolkit respects."""
    import nvidia_wheels as nw

    for spec in nw.TOOLKIT_13_0:
        nw.wheel(spec)
    store = tmp_path_factory.mktemp("store") / "toolkits"
    env = dict(os.environ, CUDASWITCH_TOOLKITS_DIR=str(store), PIP_NO_INDEX="1",
               PIP_FIND_LINKS=str(nw.cache_dir() / "wheels"), CUDASWITCH_CONFIG=str(store.parent / "none.yaml"))
    r = run_cli(["install-toolkit", "13.0", "--quiet", "--again"], env=env, timeout=900)
    assert r.returncode == 0, r.stderr
    return store / "cuda-13.0"


@pytest.fixture(scope="module")
def cu130_env(tmp_path_factory):
    """A conda env holding the real identity files of PyPI's torch 2.14.1+cu130 (tests/torch_wheel_files.py); one per
    test module, since `use` writes into it."""
    import torch_wheel_files as twf

    return twf.cuda_torch_env(tmp_path_factory.mktemp("e") / "cu130")


@pytest.fixture(scope="module")
def cu132_env(tmp_path_factory):
    """The same for torch 2.15.0+cu132."""
    import torch_wheel_files as twf

    return twf.cuda_torch_env(tmp_path_factory.mktemp("e") / "cu132", "torch==2.15.0")


@pytest.fixture(autouse=True, scope="session")
def _english_messages():
    """The tests read English output whatever the developer's locale is (LANG=zh_CN.UTF-8 would translate it);
    tests/core/test_i18n.py sets the language it tests explicitly."""
    old = os.environ.get("CUDASWITCH_LANG")
    os.environ["CUDASWITCH_LANG"] = "en"
    yield
    if old is None:
        os.environ.pop("CUDASWITCH_LANG", None)
    else:
        os.environ["CUDASWITCH_LANG"] = old


@pytest.fixture(scope="session")
def torch_env():
    """The real torch 2.13.0 CPU environment (created once, cached in the test cache; tests/fake_torch/envs.py)."""
    sys.path.insert(0, str(Path(__file__).parent / "fake_torch"))
    import envs

    try:
        return envs.torch_venv()
    except (envs.EnvUnavailable, OSError) as exc:
        if IN_CI:
            pytest.fail(f"cannot create the torch test environment: {exc}")
        pytest.skip(f"cannot create the torch test environment: {exc}")
