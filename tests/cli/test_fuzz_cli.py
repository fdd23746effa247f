"""Issue 9: a property-based search for the next internal error. The real CLI runs in-process (click's CliRunner)
with generated argument lists, selectors, paths (spaces, CJK, quotes, `$`, backticks, `:`), environment variables
and file contents (config, state file, cuDNN archive, redistrib JSON). Whatever is generated: never exit 70, never a
traceback, every stderr line is one message, and nothing outside the example's temporary tree changes.

Sized for every CI run (about a hundred examples, seconds each at most); `CUDASWITCH_FUZZ_EXAMPLES` raises it for a
longer local hunt."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO, make_env
from cudaswitch.cli import main

EXAMPLES = int(os.environ.get("CUDASWITCH_FUZZ_EXAMPLES", "120"))

# characters that break naive quoting or list splitting, in names a user really has
ODD = " 中文路径'\"$`:;%!&()[]{}=#~\\-_."
NAME = st.text(alphabet=st.sampled_from(list("abcXYZ019") + list(ODD)), min_size=1, max_size=12).filter(
    lambda s: s not in (".", "..") and "/" not in s and "\0" not in s)
VERSIONS = st.sampled_from(["11.8", "12.9", "12.9.1", "12.9.86", "12", "13.0", "cu118", "v11.8", "cuda-12.9",
                            "11.8.89", "10.0", "12.x", "", "-1", "1e3", "nan", "99999999999999999999.1"])
JUNK = st.text(min_size=0, max_size=40)
TIMEOUTS = st.sampled_from(["0", "none", "inf", "nan", "-1", "1e300", "abc", "0.5", "3"])
FILE_BYTES = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda t: t.encode("utf-8")),
    st.sampled_from([b"search_paths: [/nonexistent]\n", b"search_path: x\n", b": [\n", b"- a\n- b\n",
                     b"search_paths: {a: 1}\n", b"\xff\xfe\x00s", b"selector: '12.9'\nversion: 12.9.1\n",
                     b"selector: 1\nversion: [1]\nroot: {}\ntime: x\ncudaswitch_version: 0\n",
                     b'{"cudnn": {"linux-x86_64": {"relative_path": "a", "sha256": "z", "size": "big"}}}',
                     b"PK\x03\x04" + b"\x00" * 40, b"\xfd7zXZ\x00" + b"\x00" * 20, b"\x1f\x8b" + b"\x00" * 20]),
)


@pytest.fixture(scope="module")
def world(real_trees):
    """Read-only things the examples may point at, and a fingerprint of what must never change."""
    return {"trees": real_trees}


def _fingerprint(paths):
    """Every entry under each path with its mode; files also with size and mtime. A folder's own mtime is left out:
    a refused install-cudnn opens and rolls back its transaction folder, which leaves the contents as they were."""
    out = []
    for base in paths:
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d not in (".git", "__pycache__", ".pytest_cache", ".hypothesis")]
            for n in [dirpath] + [os.path.join(dirpath, f) for f in filenames]:
                try:
                    s = os.lstat(n)
                except OSError:
                    continue
                out.append((n, s.st_mode) if n == dirpath else (n, s.st_mode, s.st_size, s.st_mtime_ns))
    return sorted(out)


@st.composite
def scenario(draw):
    """(args, env vars, files to write relative to the example's folder, stdin)."""
    path = st.builds(lambda parts: "/".join(parts), st.lists(NAME, min_size=1, max_size=3))
    env_name = draw(path)
    selector = draw(st.one_of(VERSIONS, JUNK, path.map(lambda p: "T/" + p), st.just("TREES/cuda-12.9"),
                              st.just("TREES/cuda-11.8")))
    command = draw(st.sampled_from(["list", "which", "status", "use", "off", "run", "init", "smoke", "doctor",
                                    "recommend", "install-cudnn", "uninstall-cudnn", "--version", "--help", "bogus"]))
    env_opt = draw(st.sampled_from([[], ["-p", "T/" + env_name], ["-n", env_name], ["-p", "T/" + env_name, "-n", "x"],
                                    ["-p", "T/nothing here"]]))
    args = [command]
    if command == "which":
        args += [selector] + draw(st.lists(st.sampled_from(["--bin", "--lib", "--nvcc"]), max_size=2))
    elif command == "use":
        args += draw(st.sampled_from([[selector], [], ["--refresh"], [selector, "--refresh"]])) + env_opt
        args += ["--no-smoke"] + draw(st.lists(st.sampled_from(["-y", "--no-ld-library-path", "--ld-library-path"]),
                                               max_size=2))
        if draw(st.booleans()):
            args += ["--timeout", draw(TIMEOUTS)]
    elif command == "off":
        args += env_opt
    elif command == "run":
        args += [selector] + draw(st.lists(st.sampled_from(["--no-ld-library-path", "--ld-library-path", "--"]),
                                           max_size=2)) + draw(st.sampled_from([[], ["true"], ["no-such-cmd-xyz"]]))
    elif command == "init":
        args += [draw(st.sampled_from(["bash", "zsh", "fish", "tcsh", "powershell", "cmd", "ksh"]))]
        if draw(st.booleans()):
            args += ["--install"] + draw(st.sampled_from([[], ["--rc-file", "T/" + draw(path)], ["--rc-file", "T/rcdir"]]))
    elif command in ("smoke", "doctor"):
        args += env_opt + draw(st.lists(st.sampled_from(["--json", "--cpu-ok"]), max_size=2, unique=True))
        if command == "smoke" and draw(st.booleans()):
            args += ["--timeout", draw(TIMEOUTS)]
    elif command == "recommend":
        for opt in ("--torch", "--python", "--cuda", "--cc"):
            if draw(st.booleans()):
                args += [opt, draw(st.one_of(VERSIONS, JUNK))]
        args += draw(st.sampled_from([[], ["--json"]]))
    elif command == "install-cudnn":
        args += [draw(st.sampled_from(["T/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz", "T/a b.zip",
                                       "T/missing.tar.xz"]))]
        args += draw(st.sampled_from([["--cuda", selector], ["--into-env"] + env_opt, [], ["--cuda", selector,
                                                                                         "--into-env"]]))
        args += draw(st.lists(st.sampled_from(["--dry-run", "--force", "--yes", "--json", "--quiet"]), max_size=3))
        if draw(st.booleans()):
            args += ["--sha256", draw(st.sampled_from(["0" * 64, "abc", "Z" * 64, ""]))]
        if draw(st.booleans()):
            args += ["--redistrib-json", "T/redistrib.json"]
    elif command == "uninstall-cudnn":
        args += draw(st.sampled_from([["--cuda", selector], ["--into-env"] + env_opt, []]))
    elif command == "bogus":
        args += draw(st.lists(JUNK, max_size=3))
    env = {}
    for var in ("CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "CUDASWITCH_SEARCH_PATH", "_CONDA_ROOT"):
        if draw(st.booleans()):
            env[var] = draw(st.sampled_from(["T/" + env_name, "TREES/cuda-11.8", "TREES/cuda-12.9", "TREES",
                                             "T/a:b", "", "relative"]))
    env["PATH_EXTRA"] = draw(st.sampled_from(["", "T/bin", "T/unreadable", "TREES/cuda-12.9/bin"]))
    files = {"config.yaml": draw(FILE_BYTES),
             "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz": draw(FILE_BYTES),
             "a b.zip": draw(FILE_BYTES), "redistrib.json": draw(FILE_BYTES)}
    if draw(st.booleans()):
        files[f"{env_name}/etc/cudaswitch/state.yaml"] = draw(FILE_BYTES)
    stdin = draw(st.sampled_from(["", "y\n", "n\n"]))
    return args, env, files, env_name, stdin


def _materialise(tmp, trees, args, env, files, env_name):
    def sub(s):
        if s.startswith("T/"):
            return os.path.join(tmp, s[2:])
        if s.startswith("TREES"):
            return str(trees) + s[5:]
        return s

    for rel, data in files.items():
        p = Path(tmp, rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    make_env(Path(tmp, env_name), history=None)
    Path(tmp, "rcdir").mkdir(exist_ok=True)
    unreadable = Path(tmp, "unreadable")
    unreadable.mkdir(exist_ok=True)
    unreadable.chmod(0)
    extra = sub(env.pop("PATH_EXTRA"))
    real = {k: sub(v) for k, v in env.items()}
    real["PATH"] = os.pathsep.join([p for p in (extra, "/usr/bin", "/bin") if p])
    real.update(HOME=os.path.join(tmp, "home"), XDG_CONFIG_HOME=os.path.join(tmp, "home", ".config"),
                CUDASWITCH_CONFIG=os.path.join(tmp, "config.yaml"), CONDA_OVERRIDE_CUDA="12.4",
                CUDASWITCH_DEBUG=None)
    if "CUDASWITCH_SEARCH_PATH" not in real:
        real["CUDASWITCH_SEARCH_PATH"] = str(trees)
    for k in os.environ:
        if k.startswith(("CUDA", "CONDA", "_CONDA", "_CUDASWITCH", "MAMBA")) and k not in real:
            real[k] = None
    return [sub(a) for a in args], real


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                          HealthCheck.too_slow])
@given(case=scenario())
def test_no_input_makes_an_internal_error(world, case):
    args, env, files, env_name, stdin = case
    outside = [str(world["trees"]), str(REPO / "cudaswitch"), str(REPO / "templates"), str(REPO / "hooks"),
               str(REPO / "tests")] + [str(p) for p in Path("/usr/local").glob("cuda*")]
    before = _fingerprint(outside)
    tmp = tempfile.mkdtemp(prefix="cudaswitch-fuzz-")
    cwd = os.getcwd()
    try:
        argv, environ = _materialise(tmp, world["trees"], args, env, files, env_name)
        os.chdir(tmp)

        def no_exec(file, argv_, env_):  # `run` would replace this test process; its exec is tested for real
            raise SystemExit(0)

        with mock.patch.object(os, "execvpe", no_exec):
            result = CliRunner().invoke(main, argv, env=environ, input=stdin)
    finally:
        os.chdir(cwd)
        subprocess.run(["chmod", "-R", "u+rwx", tmp], check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    shown = f"args={argv!r}\nexit={result.exit_code}\nstdout={result.stdout!r}\nstderr={result.stderr!r}"
    assert result.exit_code != 70, shown
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        shown + f"\nexception={result.exception!r}")
    assert "Traceback" not in result.stdout + result.stderr, shown
    for line in result.stderr.splitlines():
        assert line.startswith(("cudaswitch: error: ", "warning: ", "note: ")) or not line.strip(), shown
    if result.exit_code not in (0, 141) and argv[0] not in ("smoke", "doctor", "recommend"):
        assert "cudaswitch: error: " in result.stderr, shown  # a failure always says why
    assert _fingerprint(outside) == before, shown
