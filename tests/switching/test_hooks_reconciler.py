"""The prompt-time reconciler of `cudaswitch init SHELL` in real interactive shells, driven through a
pseudo-terminal (prompts only happen in an interactive shell): after conda switches from a cudaswitch env A to an
env C without hooks, the next prompt leaves nothing of A behind (conda#14762); the user's own prompt hooks keep
running; a toolkit copy the user had on PATH stays. conda's side is tests/conda_model.py, run between the steps as
in test_hooks_transitions.py (checked against a real conda by test_hooks_realconda.py)."""

from __future__ import annotations

import ast
import os
import pty
import select
import subprocess
import sys
import time

import pytest

from conftest import require_tool
from cudaswitch.switching import startup
from cudaswitch.core.shells import quote_sh
from shell_driver import HERE, SHELLS as REAL_SHELLS, Toolkit, World, clean_environ

# the shells with a prompt hook, started interactive so that it runs
ARGV = {s: REAL_SHELLS[s][1] + ["-i"] for s in ("bash", "zsh", "fish", "tcsh")}
Q = {s: REAL_SHELLS[s][2] for s in ARGV}
# the user's own prompt hook, set up before cudaswitch's: it must still run before every prompt
USER_HOOK = {
    "bash": ["PROMPT_COMMAND='echo USER-HOOK-RAN'"],
    "bash-array": ["PROMPT_COMMAND=('echo USER-HOOK-RAN' 'true')"],
    "zsh": ["user_hook() { echo USER-HOOK-RAN; }", "precmd_functions=(user_hook)"],
    "fish": ["function user_hook --on-event fish_prompt; echo USER-HOOK-RAN; end"],
    "tcsh": ["alias precmd 'echo USER-HOOK-RAN'"],
}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    w = World(tmp_path_factory.mktemp("recworld"))
    w.add_env("base", "base", None)
    w.add_env("A", "env A", Toolkit(str(w.root / "toolkits" / "cuda v11.3")))
    w.add_env("C", "env C plain", None)
    return w


# The shell is at its prompt, waiting for the next line, when it sleeps in a read (or a wait for input) on the
# terminal with no child left running: only then is the next line typed, so each line's output is complete before
# the next line's echo (a fixed pause per line lost that order under load, and with it the tests' splits).
# The system calls a shell waits for input in (read, poll, select, pselect6, ppoll, epoll_wait, epoll_pwait(2)), by
# their numbers in /proc/PID/syscall:
_WAITS_FOR_INPUT = {"x86_64": {0, 7, 23, 232, 270, 271, 281, 441},
                    "aarch64": {63, 22, 72, 73, 441}}[os.uname().machine]


def _waiting_for_input(pid) -> bool:
    try:
        stat = open(f"/proc/{pid}/stat").read()
        call = open(f"/proc/{pid}/syscall").read().split()
        children = "".join(open(f"/proc/{pid}/task/{t}/children").read() for t in os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return False
    if stat[stat.rindex(")") + 2] != "S" or children.strip() or not call or call[0] == "running":
        return False
    number = int(call[0])
    if number not in _WAITS_FOR_INPUT:
        return False
    if number in (0, 63):  # a plain read: of the terminal, not of a file being sourced
        try:
            return os.readlink(f"/proc/{pid}/fd/{int(call[1], 16)}").startswith("/dev/pts/")
        except (OSError, ValueError):
            return False
    return True


def interact(argv, lines, env, cwd, timeout=120.0) -> str:
    """Run an interactive shell on a pseudo-terminal, typing `lines` one by one, each once the shell waits for it
    (see _waiting_for_input), then `exit`; all it printed, to its end."""
    pid, fd = pty.fork()
    if pid == 0:  # child: the shell
        os.chdir(cwd)
        os.execvpe(argv[0], argv, env)
    out = bytearray()
    deadline = time.monotonic() + timeout

    def read_some(wait) -> bool:
        """What the shell printed within `wait` seconds; False at its end."""
        r, _, _ = select.select([fd], [], [], wait)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the shell closed the terminal
                return False
            if not chunk:
                return False
            out.extend(chunk)
        return True

    def until_waiting() -> bool:
        while time.monotonic() < deadline:
            if not read_some(0.01):
                return False
            if _waiting_for_input(pid):
                return True
        raise AssertionError(f"the shell never waited for its next line: {out.decode('utf-8', 'replace')}")

    try:
        for line in lines + ["exit"]:
            if not until_waiting():
                break
            os.write(fd, line.encode() + b"\n")
        while read_some(0.1):
            if time.monotonic() > deadline:
                raise AssertionError(f"the shell did not exit: {out.decode('utf-8', 'replace')}")
    finally:
        os.close(fd)
        if os.waitpid(pid, os.WNOHANG) == (0, 0):
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    return out.decode("utf-8", "replace").replace("\r", "")


def _session(world, shell, steps, tmp_path, user_hook=None, initial_path=None):
    flavour = REAL_SHELLS[shell][0]
    q = Q[shell]
    init = tmp_path / f"init.{shell}"
    init.write_text(startup.init_text(shell))
    out = tmp_path / f"conda-out.{shell}"
    model = f"{q(sys.executable)} {q(str(HERE / 'conda_model.py'))} {flavour} {q(str(out))}"
    lines = list(USER_HOOK[user_hook]) if user_hook else []
    lines.append(f"source {q(str(init))}")
    lines.append('echo SOURCED""-INIT')  # the output, not the typed line, holds SOURCED-INIT
    for step in steps:
        args = " ".join(q(world.names.get(a, a)) for a in step)
        lines.append(f"{model} {args}; {'source' if shell != 'posix' else '.'} {q(str(out))}"
                     if shell != "tcsh" else f"{model} {args} ; source {q(str(out))}")
        lines.append(f"{model} dump")  # printed after the prompt that followed the step
    base = world.names["base"]
    env = clean_environ(PATH=initial_path or f"{base}/bin:/usr/bin:/bin", CONDA_PREFIX=base, CONDA_SHLVL="1",
                        TERM="dumb", PS1="$ ", HOME=str(tmp_path))
    text = interact(ARGV[shell], lines, env, tmp_path)
    states = [ast.literal_eval(ln[ln.index("__STATE__ ") + 10:]) for ln in text.splitlines()
              if "__STATE__ {" in ln]
    return states[1::2], text  # each step's model run prints the state before it; the dump after it follows


SHELLS = sorted(ARGV)


@pytest.mark.parametrize("shell", SHELLS)
def test_switch_to_env_without_hooks_is_clean_at_the_next_prompt(world, shell, tmp_path):
    require_tool(ARGV[shell][0])
    a = world.envs[world.names["A"]]
    user_copy = f"{world.names['base']}/bin:/usr/bin:/bin:{a.bin}"  # NVIDIA-installer state: A's bin already there
    states, text = _session(world, shell, [["activate", "A"], ["activate", "C"], ["deactivate"]], tmp_path,
                            initial_path=user_copy)
    assert len(states) == 3, text
    active, in_c, back = states
    assert active["PATH"].split(":")[0] == a.bin and active["CUDA_HOME"] == a.root, text
    # in C: conda re-exported A's entry; the reconciler took our copy out before the prompt, kept the user's
    assert in_c["PATH"].split(":") == [f"{world.names['C']}/bin", "/usr/bin", "/bin", a.bin], text
    assert in_c["CUDA_HOME"] is None and in_c["LD_LIBRARY_PATH"] is None, text
    assert not [k for k in in_c if k.startswith("_CUDASWITCH_")], text
    # deactivate C (conda re-runs A's activate hook, as A is below): A is in effect again, exactly once
    assert back["PATH"].split(":").count(a.bin) == 2 and back["PATH"].split(":")[0] == a.bin, text


@pytest.mark.parametrize("hook", sorted(USER_HOOK))
def test_users_own_prompt_hook_keeps_running(world, hook, tmp_path):
    shell = "bash" if hook.startswith("bash") else hook
    require_tool(ARGV[shell][0])
    states, text = _session(world, shell, [["activate", "A"], ["activate", "C"]], tmp_path, user_hook=hook)
    assert len(states) == 2, text
    assert not [k for k in states[1] if k.startswith("_CUDASWITCH_")], text
    # the user's hook ran before each prompt after cudaswitch's was added (one per typed line, at least)
    after = text.split("SOURCED-INIT", 1)[1]
    assert after.count("USER-HOOK-RAN") >= 4, text


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_installing_twice_adds_the_reconciler_once(shell, tmp_path):
    require_tool(shell)
    init = tmp_path / "init.sh"
    init.write_text(startup.init_text(shell))
    show = 'echo "PC=${PROMPT_COMMAND-}"' if shell == "bash" else 'echo "PF=${precmd_functions[*]}"'
    script = f". {quote_sh(str(init))}; . {quote_sh(str(init))}; {show}"
    out = subprocess.run([shell, "-c", script], env=clean_environ(PATH="/usr/bin:/bin"), capture_output=True,
                         text=True).stdout
    assert out.strip() in ("PC=__cudaswitch_reconcile", "PF=__cudaswitch_reconcile"), out


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_reconciler_spawns_no_process(shell, tmp_path):
    """Before every prompt: no process, whether there is nothing to do or it cleans (strace sees one execve, the
    shell itself, and no fork/clone)."""
    import re

    strace = require_tool("strace")
    exe = require_tool(shell)
    init = tmp_path / "init.sh"
    init.write_text(startup.init_text(shell))
    (tmp_path / "plain" / "bin").mkdir(parents=True)
    script = tmp_path / "s.sh"
    script.write_text(f". {quote_sh(str(init))}\n__cudaswitch_reconcile\n"
                      f"PATH=/cuda/bin:$PATH; _CUDASWITCH_ADDED_PATH=/cuda/bin; export PATH _CUDASWITCH_ADDED_PATH\n"
                      f"__cudaswitch_reconcile\n"
                      f'case ":$PATH:" in *:/cuda/bin:*) exit 3 ;; esac\n'
                      f'[ -z "${{_CUDASWITCH_ADDED_PATH+x}}" ] || exit 4\n')
    log = tmp_path / "trace"
    proc = subprocess.run([strace, "-f", "-e", "trace=execve,clone,clone3,fork,vfork", "-o", str(log), exe,
                           str(script)], env=clean_environ(PATH="/usr/bin:/bin", CONDA_PREFIX=str(tmp_path / "plain")),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    calls = [ln for ln in log.read_text().splitlines() if re.search(r"\b(execve|clone3?|v?fork)\(", ln)]
    assert len(calls) == 1 and "execve(" in calls[0], calls


def _tcsh_with_a_reconciler_that_goes_away(tmp_path, conda_prefix):
    """An interactive tcsh with `cudaswitch init tcsh` whose reconciler file (in cudaswitch's installation) is
    deleted while the shell runs, as when the venv is removed or rebuilt on another Python; a record is set before
    and after. All it printed."""
    require_tool("tcsh")
    installed = tmp_path / "venv" / "shell_hooks"
    installed.mkdir(parents=True)
    real = startup.hooks_dir() / "reconcile.csh"
    (installed / "reconcile.csh").write_text(real.read_text(encoding="utf-8"), encoding="utf-8")
    init = tmp_path / "init.tcsh"
    init.write_text(startup.init_text("tcsh").replace(str(real), str(installed / "reconcile.csh")))
    record = "setenv PATH /cuda/bin:$PATH ; setenv _CUDASWITCH_ADDED_PATH /cuda/bin"
    show = 'if ( $?_CUDASWITCH_ADDED_PATH ) echo RECORD""-KEPT ; echo "PATH=$PATH"'
    lines = [f"source {Q['tcsh'](str(init))}", record, show, f"rm -rf {Q['tcsh'](str(tmp_path / 'venv'))}", record,
             show, "echo one", "echo two", show]
    env = clean_environ(PATH="/usr/bin:/bin", CONDA_PREFIX=str(conda_prefix), TERM="dumb", HOME=str(tmp_path))
    return interact(ARGV["tcsh"], lines, env, tmp_path)


def test_tcsh_reconciler_gone_with_its_installation_says_so_once_and_clears_the_record(tmp_path):
    plain = tmp_path / "plain"  # the active environment has no cudaswitch hooks: the reconciler would act
    (plain / "bin").mkdir(parents=True)
    text = _tcsh_with_a_reconciler_that_goes_away(tmp_path, plain)
    assert "No such file" not in text, text
    before, after = text.split("rm -rf", 1)
    assert "PATH=/usr/bin:/bin" in before and "RECORD-KEPT" not in before, text  # it ran while it was there
    assert after.count("prompt-time reconciler") == 1 and "is gone" in after, text
    assert "RECORD-KEPT" not in after, text


def test_tcsh_reconciler_gone_keeps_the_record_of_a_switched_environment(tmp_path):
    switched = tmp_path / "switched"  # its own deactivate hook removes the entries by that record: keep it
    (switched / "etc" / "conda" / "activate.d").mkdir(parents=True)
    (switched / "etc" / "conda" / "activate.d" / "cudaswitch.csh").write_text("")
    text = _tcsh_with_a_reconciler_that_goes_away(tmp_path, switched)
    assert "No such file" not in text and "is gone" not in text, text
    assert text.split("rm -rf", 1)[1].count("RECORD-KEPT") == 2, text


def _strict_session(shell, tmp_path, before, after):
    """An interactive bash or zsh where `before` runs ahead of `cudaswitch init` and `after` follows it; all it
    printed. A record with no cudaswitch environment active: the reconciler acts at the next prompt."""
    require_tool(shell)
    init = tmp_path / "init.sh"
    init.write_text(startup.init_text(shell))
    (tmp_path / "plain" / "bin").mkdir(parents=True)
    lines = before + [f". {quote_sh(str(init))}", "echo SOURCED''-INIT"] + after
    env = clean_environ(PATH="/usr/bin:/bin", CONDA_PREFIX=str(tmp_path / "plain"), TERM="dumb", HOME=str(tmp_path),
                        PS1="$ ")
    return interact(ARGV[shell], lines, env, tmp_path)


ERREXIT = {"bash": ["set -e"], "zsh": ["setopt ERR_EXIT"]}
NOUNSET = {"bash": ["set -u", "unset PROMPT_COMMAND"], "zsh": ["set -u", "unset precmd_functions"]}
RECORD = "PATH=/cuda/bin:$PATH; _CUDASWITCH_ADDED_PATH=/cuda/bin; export PATH _CUDASWITCH_ADDED_PATH"
SHOW = 'echo "NOW=$PATH"'


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_reconciler_does_not_close_an_errexit_shell_after_an_ignored_failure(shell, tmp_path):
    text = _strict_session(shell, tmp_path, ERREXIT[shell], ["false && true", "echo STILL''-ALIVE", RECORD,
                                                             "false || false && true", SHOW])
    after = text.split("SOURCED-INIT", 1)[1]
    assert "STILL-ALIVE" in after, text
    assert "NOW=/usr/bin:/bin" in after, text  # and it still reconciles


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_reconciler_is_installed_under_nounset_without_a_prompt_hook(shell, tmp_path):
    show = 'echo "HOOKS=${PROMPT_COMMAND-}"' if shell == "bash" else 'echo "HOOKS=${precmd_functions-}"'
    text = _strict_session(shell, tmp_path, NOUNSET[shell], [show, RECORD, SHOW])
    assert "unbound variable" not in text and "parameter not set" not in text, text
    after = text.split("SOURCED-INIT", 1)[1]
    assert "HOOKS=__cudaswitch_reconcile" in after, text
    assert "NOW=/usr/bin:/bin" in after, text


def test_reconciler_keeps_the_exit_status_for_the_users_own_prompt_hook(tmp_path):
    text = _strict_session("bash", tmp_path, ["PROMPT_COMMAND='echo \"RC=$?\"'"], ["false", "true"])
    after = text.split("SOURCED-INIT", 1)[1]
    assert "RC=1" in after and "RC=0" in after, text
