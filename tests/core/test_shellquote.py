"""Commands printed for pasting: each line is pasted into the real shell, and the program it starts must receive
exactly the words cudaswitch meant (cudaswitch/core/shellquote.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require_tool, run_cli
from shell_driver import real_argv

from cudaswitch.core import shellquote as q

HARD = ["/tmp/工具 包/cuda 13.0", "it's", "a$b`c`", "x!y", "semi;colon&amp|pipe", "back\\slash", "*glob?[a]", "~home",
        "=zsh", "tab\tin", "new\nline", "{a,b}", "#hash", "", "--opt=v", "(paren)", "<in>", "%PATH%", "'", "\\"]
# the real shells of the records (core/shells.py), started as `use` starts them, given a line with -c
POSIX = {name: real_argv(name)[1:] + ["-c"] for name in ("bash", "dash", "zsh", "fish", "tcsh")}


@pytest.fixture(scope="module")
def printargv(tmp_path_factory):
    """A program that writes the words it was given (as JSON) to $ARGV_OUT."""
    bindir = tmp_path_factory.mktemp("bin")
    exe = bindir / "printargv"
    exe.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                   "open(os.environ['ARGV_OUT'], 'w', encoding='utf-8').write(json.dumps(sys.argv[1:]))\n")
    exe.chmod(0o755)
    return bindir


@pytest.mark.parametrize("shell", sorted(POSIX))
def test_pasted_into_the_real_shell_gives_the_same_words(shell, printargv, tmp_path):
    exe = require_tool(shell)
    family = q.shell_named(shell)
    out = tmp_path / "argv.json"
    env = dict(os.environ, PATH=f"{printargv}{os.pathsep}{os.environ['PATH']}", ARGV_OUT=str(out), LANG="C.UTF-8")
    for word in HARD:
        line = q.command(["printargv", word], family)
        if out.exists():
            out.unlink()
        r = subprocess.run([exe, *POSIX[shell], line], env=env, capture_output=True, text=True, timeout=60)
        assert out.exists() and json.loads(out.read_text(encoding="utf-8")) == [word], (shell, word, line, r.stderr)


def test_typed_at_an_interactive_tcsh_prompt_gives_the_same_words(printargv, tmp_path):
    """At tcsh's prompt history substitution is on, and a `!` inside single quotes is an event ("y: Event not
    found"): each line is typed into an interactive tcsh, where the csh record's quoting must still hold."""
    exe = require_tool("tcsh")
    out = tmp_path / "argv.json"
    env = dict(os.environ, PATH=f"{printargv}{os.pathsep}{os.environ['PATH']}", ARGV_OUT=str(out), LANG="C.UTF-8")
    for word in HARD + ["!!", "a!-1b", "!$"]:
        line = q.command(["printargv", word], q.CSH)
        if out.exists():
            out.unlink()
        r = subprocess.run([exe, "-f", "-i"], input=line + "\n", env=env, capture_output=True, text=True, timeout=60)
        assert out.exists() and json.loads(out.read_text(encoding="utf-8")) == [word], (word, line, r.stderr)

def test_plain_words_stay_as_they_are():
    for shell in (q.SH, q.CSH, q.FISH, q.CMD, q.POWERSHELL, q.WINDOWS):
        assert q.command(["cudaswitch", "use", "12.9", "-p", "C:/envs/x", "--index-url=https://x.org/whl"],
                         shell).startswith("cudaswitch use 12.9 -p ")


def test_cmd_and_powershell_quote_differently_from_sh():
    path = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.9"
    assert q.quote(path, q.CMD) == f'"{path}"'
    assert q.quote(path, q.POWERSHELL) == f"'{path}'"
    assert q.quote(path, q.WINDOWS) == f'"{path}"'  # one form both read as one word
    assert q.quote("C:\\dir with space\\", q.CMD) == '"C:\\dir with space\\\\"'  # \" would be a quote to the runtime
    assert q.quote("it's", q.POWERSHELL) == "'it''s'" and q.quote("a\u2019b", q.POWERSHELL) == "'a\u2019\u2019b'"
    assert q.quote("$HOME", q.WINDOWS) == "'$HOME'"  # PowerShell would expand "$HOME"
    assert q.command(["C:\\my tools\\cudaswitch.exe", "list"], q.POWERSHELL) == "& 'C:\\my tools\\cudaswitch.exe' list"


def test_the_shell_comes_from_cudaswitch_shell_then_shell():
    assert q.user_shell({"SHELL": "/usr/bin/fish"}) == q.FISH
    assert q.user_shell({"SHELL": "/bin/tcsh"}) == q.CSH and q.user_shell({"SHELL": "/bin/zsh"}) == q.SH
    assert q.user_shell({"SHELL": "/bin/bash", "CUDASWITCH_SHELL": "fish"}) == q.FISH
    assert q.user_shell({}) == q.SH and q.user_shell({}, windows=True) == q.WINDOWS
    assert q.user_shell({"CUDASWITCH_SHELL": "pwsh"}, windows=True) == q.POWERSHELL
    assert q.user_shell({"SHELL": "/usr/bin/bash"}, windows=True) == q.SH  # Git Bash


@pytest.fixture(scope="module")
def wine_printargv():
    """printargv as a Windows program (mingw), and wine's environment with the tests' cached prefix."""
    import winfiles

    cc = require_tool("x86_64-w64-mingw32-gcc")
    wine, _, env = winfiles.wine_loader()
    exe = Path(env["WINEPREFIX"]).parent / "printargv.exe"
    src = Path(__file__).resolve().parent.parent / "winloader" / "printargv.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        subprocess.run([cc, "-municode", "-O2", "-o", str(exe), str(src)], check=True)
    return wine, exe, env


def test_cmd_prompt_gives_the_same_words(wine_printargv, tmp_path):
    """Lines typed at cmd.exe's prompt (cmd reading its commands from stdin parses them as typed ones), ASCII: the
    console code page decides other characters. %NAME% of a defined variable is the documented exception."""
    import winfiles

    wine, exe, env = wine_printargv
    words = ["C:\\Program Files (x86)\\NV & Co\\CUDA\\v11.8", "a b", "x!y", "semi;colon", "c,d=e", "^caret",
             "C:\\trailing space\\", "it's", "%NOT_DEFINED_HERE%", "(paren)", "<in>|out"]
    program = winfiles.z(exe)
    lines = [q.command([program, w], shell) for shell in (q.CMD, q.WINDOWS) for w in words]
    typed = tmp_path / "typed.txt"  # a file, not a pipe: the programs cmd starts would share a pipe's buffer
    typed.write_bytes(("\r\n".join(lines) + "\r\nexit\r\n").encode("ascii"))
    with open(typed, "rb") as stdin:
        r = subprocess.run([wine, "cmd", "/d", "/q"], stdin=stdin, env=env, capture_output=True, timeout=300)
    got = [line[1:-1] for line in r.stdout.decode("utf-8", "replace").replace("\r", "").splitlines()
           if line.startswith("[") and line.endswith("]")]
    assert got == words + words, (lines, r.stdout[-2000:])


def test_install_toolkit_hint_is_quoted_for_the_users_shell(monkeypatch, clean_env):
    """The installer itself downloads ~200 MB (tests/discovery/test_toolkit_install.py runs it); here only its
    record is given, to see the line printed after it."""
    from cudaswitch.discovery import toolkit_install

    root = "/tmp/工具 包/cuda 13.0"
    monkeypatch.setattr(toolkit_install, "install", lambda *a, **k: toolkit_install.InstallResult(
        version="13.0.88", root=root))
    for shell, family in (("/bin/bash", q.SH), ("/usr/bin/fish", q.FISH), ("/bin/tcsh", q.CSH)):
        r = run_cli(["install-toolkit", "13.0"], env=dict(clean_env, SHELL=shell))
        # one pasteable command per line
        assert f"\nUse it: cudaswitch use {q.quote(root, family)}\n" in r.stdout, r.stdout
        assert f"\nRemove it: cudaswitch uninstall-toolkit {q.quote(root, family)}\n" in r.stdout, r.stdout


def test_use_prints_a_reactivation_the_users_shell_runs(tmp_path, clean_env, real_trees, printargv):
    """tcsh's history substitution acts on '!' even inside single quotes: sh's quoting breaks there."""
    from conftest import make_env

    tcsh = require_tool("tcsh")
    prefix = make_env(tmp_path / "工具 包" / "env it's !x")
    clean_env.update(SHELL="/bin/tcsh", CUDASWITCH_SEARCH_PATH=str(real_trees))
    r = run_cli(["use", "12.9", "-p", str(prefix), "--no-smoke", "--yes"], env=clean_env)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if "conda activate" in x)
    pasted = line[line.index("conda activate"):].replace("conda", "printargv", 1)
    out = tmp_path / "argv.json"
    run = subprocess.run([tcsh, "-f", "-c", pasted], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PATH=f"{printargv}{os.pathsep}{os.environ['PATH']}", ARGV_OUT=str(out)))
    assert out.exists() and json.loads(out.read_text(encoding="utf-8")) == ["activate", str(prefix)], (line, run.stderr)
