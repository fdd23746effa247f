"""`cudaswitch init SHELL --install` as conda and direnv do it: one guarded line in the real startup file of each
real shell, which sources the integration file cudaswitch keeps current; a new shell then has the function and the
completion, and a shell whose integration file is gone starts exactly as it would without the line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import cli_on_path, make_env, one_line_error, require_tool, run_cli
from cudaswitch.core.shells import INIT_SHELLS
from cudaswitch.switching import startup

# CODE that shows the function, for each shell its record starts with its startup file (Startup.starts)
SHOWS = {"bash": "type -t cudaswitch; complete -p cudaswitch", "zsh": "whence -w cudaswitch",
         "fish": "functions -q cudaswitch; and echo function", "tcsh": "alias cudaswitch"}
# shell -> (its startup file below HOME, argv of a new shell that reads it and runs CODE, CODE), from the records of
# cudaswitch/core/shells.py, each as the shell really starts (bash and zsh read their rc file when interactive)
SHELLS = {name: (str(Path(st.base_default, st.under)), list(st.starts), SHOWS[name])
          for name, (_sh, st) in INIT_SHELLS.items() if st.starts}


@pytest.fixture
def home(tmp_path, clean_env):
    """A user's home with the real shells' own startup files absent, cudaswitch on PATH, and nothing of the
    machine's settings (XDG folders below this home)."""
    h = tmp_path / "home"
    h.mkdir()
    env = {k: v for k, v in clean_env.items() if not k.startswith(("XDG_", "ZDOTDIR", "BASH_ENV", "ENV"))}
    env.update(HOME=str(h), PATH=f"{cli_on_path(tmp_path)}:/usr/bin:/bin", TERM="dumb")
    return h, env


def _start(shell, env, code):
    exe = require_tool(shell)
    argv = [exe, *SHELLS[shell][1][1:], code]
    return subprocess.run(argv, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_install_writes_one_line_a_new_shell_loads_and_a_gone_file_is_silent(shell, home):
    h, env = home
    rc_name, _argv, code = SHELLS[shell]
    rc = h / rc_name
    rc.parent.mkdir(parents=True, exist_ok=True)
    rc.write_text("# my own settings\n")
    before_line = _start(shell, env, "true")  # the shell as it starts without cudaswitch: the reference
    proc = run_cli(["init", shell, "--install"], env)
    assert proc.returncode == 0, proc.stderr
    loaded = h / ".local" / "share" / "cudaswitch" / "shell" / f"init.{shell}"
    assert proc.stdout.startswith(f"Added one line to {rc} that loads {loaded};"), proc.stdout
    lines = rc.read_text().splitlines()
    assert lines[0] == "# my own settings" and len(lines) == 2, lines
    assert lines[1] == startup.load_line(shell, env) and str(loaded) in lines[1]
    assert loaded.read_text() == startup.init_text(shell)

    shown = _start(shell, env, code)
    assert shown.returncode == 0, shown.stderr
    # bash: "function"; zsh: "cudaswitch: function"; fish: "function"; tcsh: the alias's text
    first = shown.stdout.splitlines()[0] if shown.stdout else ""
    assert ("cudaswitch !*" in first) if shell == "tcsh" else first.endswith("function"), shown.stdout
    if shell == "bash":
        assert "complete -o nosort -F _cudaswitch_completion cudaswitch" in shown.stdout, shown.stdout
    # a second --install changes nothing and says so
    again = run_cli(["init", shell, "--install"], env)
    assert again.stdout.startswith(f"Already in {rc}") and rc.read_text().splitlines() == lines

    # the user deletes the integration file (or the data folder): the next shell starts as it did before the line
    loaded.unlink()
    after = _start(shell, env, "true")
    assert (after.returncode, after.stdout, after.stderr) == (0, before_line.stdout, before_line.stderr)
    gone = _start(shell, env, code)
    assert "_cudaswitch_completion" not in gone.stdout and "\\cudaswitch" not in gone.stdout


def _old_block(shell):
    """What an earlier build's --install pasted: the whole integration between the marker lines."""
    return f"{startup.BEGIN}\n{startup.init_text(shell).rstrip()}\n{startup.END}\n"


def test_install_replaces_an_earlier_builds_block_by_the_line_in_place(home):
    h, env = home
    rc = h / ".bashrc"
    rc.write_text("export A=1\n" + _old_block("bash") + "export B=2\n")
    assert len(rc.read_text().splitlines()) > 80
    proc = run_cli(["init", "bash", "--install"], env)
    assert proc.returncode == 0 and proc.stdout.startswith(f"Replaced the cudaswitch block in {rc} by one line"), \
        proc.stdout
    assert rc.read_text().splitlines() == ["export A=1", startup.load_line("bash", env), "export B=2"]
    shown = _start("bash", env, "type -t cudaswitch")
    assert shown.stdout.strip() == "function", shown.stderr


def test_the_integration_file_is_kept_current_by_use_and_init_and_a_removed_one_stays_removed(home, real_trees,
                                                                                            tmp_path):
    h, env = home
    env = dict(env, CUDASWITCH_SEARCH_PATH=str(real_trees))
    assert run_cli(["init", "zsh", "--install"], env).returncode == 0
    loaded = h / ".local" / "share" / "cudaswitch" / "shell" / "init.zsh"
    current = loaded.read_bytes()
    loaded.write_text("# what an earlier build wrote\ncudaswitch() { echo old; }\n")
    prefix = make_env(tmp_path / "envs" / "demo")
    proc = run_cli(["use", "12.9", "-p", str(prefix), "--no-smoke", "--no-verify"], env)
    assert proc.returncode == 0, proc.stderr
    assert loaded.read_bytes() == current  # use rewrote it: the upgrade reaches every new shell
    loaded.write_text("stale\n")
    assert run_cli(["init", "bash"], env).returncode == 0  # printing the function refreshes it too
    assert loaded.read_bytes() == current
    # bash's file was never installed, so none appears; zsh's removed by the user is not brought back
    assert not (loaded.parent / "init.bash").exists()
    loaded.unlink()
    assert run_cli(["use", "12.9", "-p", str(prefix), "--no-smoke", "--no-verify"], env).returncode == 0
    assert not loaded.exists()


def test_an_integration_file_that_cannot_be_refreshed_costs_use_nothing_but_a_warning(home, real_trees, tmp_path):
    h, env = home
    env = dict(env, CUDASWITCH_SEARCH_PATH=str(real_trees))
    assert run_cli(["init", "bash", "--install"], env).returncode == 0
    loaded = h / ".local" / "share" / "cudaswitch" / "shell" / "init.bash"
    # a folder where the file should be: reading it fails with a real OS error (EISDIR)
    loaded.unlink()
    loaded.mkdir()
    prefix = make_env(tmp_path / "envs" / "demo")
    proc = run_cli(["use", "12.9", "-p", str(prefix), "--no-smoke", "--no-verify"], env)
    assert proc.returncode == 0 and "now uses CUDA 12.9" in proc.stdout
    assert "could not refresh the shell integration cudaswitch keeps" in proc.stderr, proc.stderr
    assert len([ln for ln in proc.stderr.splitlines() if "refresh" in ln]) == 1


def test_init_cmd_refuses_any_startup_file_and_says_which_shell_to_redirect_from(home):
    h, env = home
    bat = h / "x.bat"
    line = one_line_error(run_cli(["init", "cmd", "--install", "--rc-file", str(bat)], env), 2)
    assert "cmd.exe has no startup file" in line and "(in cmd.exe: cudaswitch init cmd > cs.bat)" in line
    assert not bat.exists() and not (h / ".local").exists()


def test_powershell_install_writes_every_editions_profile(home, monkeypatch):
    """Both profiles get the line, each once, and they load the one integration file."""
    h, env = home
    pwsh7 = h / "Documents" / "PowerShell" / "profile.ps1"
    ps51 = h / "Documents" / "WindowsPowerShell" / "profile.ps1"
    monkeypatch.setattr(startup, "named_profiles", lambda start, environ: [pwsh7, ps51])
    done = startup.install("powershell", None, env)
    assert done == [(pwsh7, "added"), (ps51, "added")]
    for prof in (pwsh7, ps51):
        assert prof.read_text().splitlines() == [startup.load_line("powershell", env)]
    assert startup.install("powershell", None, env) == [(pwsh7, "kept"), (ps51, "kept")]
    assert Path(startup.integration_file("powershell", env)).read_bytes() == startup.integration_bytes("powershell")
