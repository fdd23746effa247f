"""`cudaswitch use / off / init / run / status` through the real command line, on toolkit trees built from NVIDIA's
wheels (conftest.real_trees), with bash sourcing what `use` wrote."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import cli_on_path, make_env, one_line_error, require_tool, run_cli
from cudaswitch.core.shells import quote_sh

HOOK_FILES = sorted(f"etc/conda/{d}.d/cudaswitch.{e}" for d in ("activate", "deactivate")
                    for e in ("sh", "fish", "csh", "bat", "ps1"))


@pytest.fixture
def env_prefix(tmp_path):
    return make_env(tmp_path / "envs" / "my env (x86)")


@pytest.fixture
def cli_env(clean_env, real_trees):
    return dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))


def _tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_use_outside_an_env_says_what_to_run(cli_env):
    line = one_line_error(run_cli(["use", "11.8"], cli_env), 2)
    assert "cudaswitch use 11.8 -n NAME" in line


def test_use_then_off_is_exact_and_the_hook_really_switches(cli_env, env_prefix, real_trees):
    before = _tree(env_prefix)
    proc = run_cli(["use", "12.9", "-p", str(env_prefix)], cli_env)
    assert proc.returncode == 0, proc.stderr
    tk = str(real_trees / "cuda-12.9")
    assert f"now uses CUDA 12.9.1 ({tk})" in proc.stdout
    assert f"conda activate {quote_sh(str(env_prefix))}" in proc.stdout
    written = sorted(str(p.relative_to(env_prefix)) for p in (env_prefix / "etc" / "conda").rglob("*") if p.is_file())
    assert written == HOOK_FILES
    state = (env_prefix / "etc" / "cudaswitch" / "state.yaml").read_text()
    assert "selector: '12.9'" in state and f"root: {tk}" in state and "version: 12.9.1" in state

    # The written hook, sourced by bash, puts the real nvcc of that tree first and sets both variables.
    hook = env_prefix / "etc" / "conda" / "activate.d" / "cudaswitch.sh"
    out = subprocess.run(["bash", "--noprofile", "--norc", "-c", f'. {quote_sh(str(hook))}; command -v nvcc; '
                          'nvcc --version | grep release; echo "$CUDA_HOME|$CUDA_PATH|$LD_LIBRARY_PATH"'],
                         env=dict(cli_env, PATH="/usr/bin:/bin"), capture_output=True, text=True)
    assert out.stdout.splitlines() == [f"{tk}/bin/nvcc", "Cuda compilation tools, release 12.9, V12.9.86",
                                       f"{tk}|{tk}|{tk}/lib64"], out.stderr

    proc = run_cli(["off", "-p", str(env_prefix)], cli_env)
    assert proc.returncode == 0 and "removed 10 hook files and the state file" in proc.stdout
    assert _tree(env_prefix) == before  # exactly what use wrote, folders it created included


def test_user_hooks_are_never_touched(cli_env, env_prefix):
    act = env_prefix / "etc" / "conda" / "activate.d"
    act.mkdir(parents=True)
    (act / "zz-mine.sh").write_text("export MINE=1\n")
    assert run_cli(["use", "11.8", "-p", str(env_prefix)], cli_env).returncode == 0
    assert run_cli(["off", "-p", str(env_prefix)], cli_env).returncode == 0
    assert (act / "zz-mine.sh").read_text() == "export MINE=1\n"
    assert sorted(os.listdir(act)) == ["zz-mine.sh"]
    # A file with cudaswitch's name that cudaswitch did not write is refused, not replaced.
    (act / "cudaswitch.sh").write_text("echo mine\n")
    line = one_line_error(run_cli(["use", "11.8", "-p", str(env_prefix)], cli_env), 1)
    assert "was not written by cudaswitch" in line
    assert (act / "cudaswitch.sh").read_text() == "echo mine\n"
    assert not (env_prefix / "etc" / "cudaswitch" / "state.yaml").exists()


def test_pip_cuda_wheels_keep_ld_library_path_alone(cli_env, env_prefix, real_trees):
    (env_prefix / "lib" / "python3.11" / "site-packages" / "nvidia_nvjitlink_cu12-12.9.86.dist-info").mkdir(
        parents=True)
    proc = run_cli(["use", "12.9", "-p", str(env_prefix)], cli_env)
    assert proc.returncode == 0 and "LD_LIBRARY_PATH left alone" in proc.stdout and "nvidia-nvjitlink" in proc.stdout
    sh = (env_prefix / "etc" / "conda" / "activate.d" / "cudaswitch.sh").read_text()
    assert "_cs_ld=''" in sh
    proc = run_cli(["use", "12.9", "--ld-library-path", "-p", str(env_prefix)], cli_env)
    assert proc.returncode == 0 and "LD_LIBRARY_PATH gets" in proc.stdout
    assert f"_cs_ld='{real_trees}/cuda-12.9/lib64'" in \
        (env_prefix / "etc" / "conda" / "activate.d" / "cudaswitch.sh").read_text()
    # --refresh keeps the recorded choice, including the LD_LIBRARY_PATH decision
    proc = run_cli(["use", "--refresh", "-p", str(env_prefix)], cli_env)
    assert proc.returncode == 0 and "LD_LIBRARY_PATH gets" in proc.stdout, proc.stderr


def test_refresh_without_a_choice_and_bad_selector_are_one_line_errors(cli_env, env_prefix):
    assert "no cudaswitch choice to refresh" in one_line_error(
        run_cli(["use", "--refresh", "-p", str(env_prefix)], cli_env), 2)
    assert "no CUDA toolkit matches '10.0'" in one_line_error(run_cli(["use", "10.0", "-p", str(env_prefix)], cli_env), 2)
    assert not (env_prefix / "etc").exists()


def test_base_needs_confirmation(cli_env, tmp_path):
    base = make_env(tmp_path / "miniconda3")
    env = dict(cli_env, _CONDA_ROOT=str(base), CONDA_PREFIX=str(base))
    line = one_line_error(run_cli(["use", "11.8"], env, stdin=subprocess.DEVNULL), 2)
    assert "base environment" in line and "--yes" in line
    assert not (base / "etc").exists()
    assert run_cli(["use", "11.8", "--yes", "--no-smoke"], env).returncode == 0
    assert (base / "etc" / "conda" / "activate.d" / "cudaswitch.sh").exists()


def _miniconda(prefix):
    """The files a Miniconda install leaves in its base: conda-meta/history, conda's own package record,
    condabin/conda, envs/."""
    base = make_env(prefix, history="==> 2026-01-01 00:00:00 <==\n", packages=["conda-26.7.1-py311h06a4308_0"])
    (base / "envs").mkdir()
    (base / "condabin").mkdir()
    (base / "condabin" / "conda").write_text("#!/bin/sh\n")
    return base


@pytest.mark.parametrize("how", ["-p", "active"])
def test_base_is_known_by_its_files_without_conda_exe(cli_env, tmp_path, how):
    """conda's variables unset (a shell conda's hook never ran in, a script): the base is still refused."""
    base = _miniconda(tmp_path / "miniconda3")
    env = {k: v for k, v in cli_env.items() if k not in ("CONDA_EXE", "_CONDA_ROOT", "CONDA_PREFIX_1")}
    args = ["use", "12.9", "--no-smoke", "-p", str(base)] if how == "-p" else ["use", "12.9", "--no-smoke"]
    if how == "active":
        env.update(CONDA_PREFIX=str(base), CONDA_DEFAULT_ENV="base")
    line = one_line_error(run_cli(args, env, stdin=subprocess.DEVNULL), 2)
    assert "base environment" in line and "--yes" in line
    assert not (base / "etc").exists()
    r = run_cli([*args, "--yes"], env)
    assert r.returncode == 0 and f"Environment base ({base}) now uses CUDA 12.9.1" in r.stdout


def test_a_prefix_that_may_be_a_base_is_refused_and_an_ordinary_env_is_not(cli_env, tmp_path):
    """envs/ and condabin/ without conda itself (a half-removed install, another tool's root): it cannot tell, so
    it asks; an environment conda created has none of those and is switched at once."""
    unsure = make_env(tmp_path / "root", history="")
    (unsure / "envs").mkdir()
    line = one_line_error(run_cli(["use", "12.9", "--no-smoke", "-p", str(unsure)], cli_env,
                                  stdin=subprocess.DEVNULL), 2)
    assert f"cannot tell whether {unsure} is a base environment (it has conda-meta/history, envs/" in line
    assert "--yes" in line and not (unsure / "etc").exists()
    plain = make_env(tmp_path / "plain", history="")
    assert run_cli(["use", "12.9", "--no-smoke", "-p", str(plain)], cli_env, stdin=subprocess.DEVNULL).returncode == 0


def test_the_real_conda_base_is_recognised_by_its_files(real_conda, tmp_path):
    """The real conda's root (conda installed with pip into it: no condabin/, no envs/) and an environment the real
    conda created."""
    from cudaswitch.discovery.condaenvs import base_by_files

    verdict = base_by_files(str(real_conda.root))
    assert verdict.is_base is True, verdict
    # conda records every environment it creates in $HOME/.conda/environments.txt: a home of the test's own
    home = tmp_path / "home"
    home.mkdir()
    env = real_conda.create(tmp_path / "made", env={k: v for k, v in os.environ.items() if k != "CONDARC"} |
                            {"HOME": str(home)})
    assert base_by_files(str(env)).is_base is False


def test_run_passes_the_toolkit_and_the_exit_code(cli_env, real_trees):
    tk = str(real_trees / "cuda-11.8")
    env = dict(cli_env, PATH=f"/opt/x:{os.environ['PATH']}", CUDA_HOME="/old")
    proc = run_cli(["run", "11.8", "--", "sh", "-c", 'echo "$CUDA_HOME|$CUDA_PATH|${PATH%%:*}"; exit 7'], env)
    assert proc.returncode == 7 and proc.stdout.strip() == f"{tk}|{tk}|{tk}/bin"
    proc = run_cli(["run", "11.8", "--", "no-such-program-xyz"], dict(cli_env, PATH="/usr/bin:/bin"))
    assert one_line_error(proc, 127).endswith("command not found: no-such-program-xyz")


def test_status_shows_the_active_envs_choice(cli_env, env_prefix):
    assert run_cli(["use", "11.8", "-p", str(env_prefix)], cli_env).returncode == 0
    proc = run_cli(["status"], dict(cli_env, CONDA_PREFIX=str(env_prefix)))
    assert proc.returncode == 0
    assert f"Environment my env (x86) ({env_prefix}): cudaswitch selects CUDA 11.8.89" in proc.stdout


def test_init_install_is_idempotent(cli_env, tmp_path):
    rc = tmp_path / ".bashrc"
    rc.write_text("alias ll='ls -l'\n")
    for expected in ("Added one line to", "Already in"):
        proc = run_cli(["init", "bash", "--install", "--rc-file", str(rc)], cli_env)
        assert proc.returncode == 0 and proc.stdout.startswith(expected)
    text = rc.read_text()
    assert text.startswith("alias ll='ls -l'\n") and text.count("cudaswitch init --install") == 1
    assert len(text.splitlines()) == 2
    assert "cudaswitch init cmd" in one_line_error(run_cli(["init", "cmd", "--install"], cli_env), 2)
    for shell in ("zsh", "fish", "tcsh", "powershell", "cmd"):
        assert run_cli(["init", shell], cli_env).stdout.strip()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_init_function_applies_use_and_off_to_the_current_shell(shell, cli_env, env_prefix, real_trees, tmp_path):
    exe = require_tool(shell)
    fn = run_cli(["init", shell], cli_env).stdout
    tk = str(real_trees / "cuda-12.9")
    path = f"{cli_on_path(tmp_path)}:/usr/bin:/bin"
    show = 'echo "[$CUDA_HOME|$PATH]"'
    if shell == "fish":
        script = f"{fn}\ncudaswitch use 12.9 >/dev/null\n{show}\ncudaswitch off >/dev/null\n{show}\n"
        argv = [exe, "--no-config", "-c", script]
    else:
        script = f"{fn}\ncudaswitch use 12.9 >/dev/null\n{show}\ncudaswitch off >/dev/null\n{show}\nenv | grep _CUDASWITCH || true\n"
        argv = [exe, "-c", script] if shell == "bash" else [exe, "-f", "-c", script]
    env = dict(cli_env, PATH=path, CONDA_PREFIX=str(env_prefix))
    out = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"[{tk}|{tk}/bin:{path}]"
    assert lines[1] == f"[|{path}]" and len(lines) == 2, out.stdout


def test_the_shell_function_says_applied_only_for_the_active_environment(cli_env, env_prefix, real_trees, tmp_path):
    """`use -p OTHER` / `off -p OTHER` from the shell function change nothing in this shell, and say so; the active
    environment's are applied, and say that. What the real bash has after each is the proof."""
    exe = require_tool("bash")
    other = make_env(tmp_path / "other", history="")
    fn = run_cli(["init", "bash"], cli_env).stdout
    path = f"{cli_on_path(tmp_path)}:/usr/bin:/bin"
    show = 'echo "[CUDA_HOME=$CUDA_HOME]"'
    script = (f"{fn}\ncudaswitch use 12.9 -p {quote_sh(str(other))} --no-smoke\n{show}\n"
              f"cudaswitch off -p {quote_sh(str(other))}\n{show}\n"
              f"cudaswitch use 12.9 --no-smoke\n{show}\ncudaswitch off\n{show}\n")
    out = subprocess.run([exe, "-c", script], env=dict(cli_env, PATH=path, CONDA_PREFIX=str(env_prefix)),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    blocks = out.stdout.split("[CUDA_HOME=")
    tk = str(real_trees / "cuda-12.9")
    other_use, other_off, own_use, own_off = blocks[:4]
    assert "Applied to this shell" not in other_use and "Takes effect at the next activation" in other_use
    assert f"conda activate {other}" in other_use, other_use
    assert blocks[1].startswith("]") and "Undone in this shell" not in other_off
    assert "Applied to this shell by the cudaswitch shell function." in own_use
    assert blocks[3].startswith(f"{tk}]") and "Undone in this shell by the cudaswitch shell function." in own_off
    assert blocks[4].startswith("]")


def _activated_status(bash, env_prefix, env, activate):
    """`cudaswitch status` in a real bash after `activate` (a shell snippet) ran there."""
    script = f"{activate}\necho \"[CUDA_HOME=$CUDA_HOME]\"\ncudaswitch status\n"
    out = subprocess.run([bash, "-c", script], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _user_script(env_prefix):
    script = env_prefix / "etc" / "conda" / "activate.d" / "env_vars.sh"
    script.write_text("#!/bin/sh\n# my own settings\nexport CUDA_HOME=/opt/my-cuda\nexport MY_DATA=/data\n")
    return script


def test_status_names_the_script_that_set_cuda_home_after_cudaswitch(cli_env, env_prefix, real_trees, tmp_path):
    """A user's env_vars.sh in activate.d sorts after cudaswitch.sh, so conda runs it last and its CUDA_HOME wins:
    status names it instead of suggesting an activation that changes nothing. The activation is conda's order,
    done by a real bash (LC_ALL=C globs sort by byte, as conda's sorted() does)."""
    bash = require_tool("bash")
    assert run_cli(["use", "12.9", "--no-smoke", "-p", str(env_prefix)], cli_env).returncode == 0
    script = _user_script(env_prefix)
    env = dict(cli_env, PATH=f"{cli_on_path(tmp_path)}:/usr/bin:/bin", CONDA_PREFIX=str(env_prefix), LC_ALL="C",
               SHELL=bash)
    activate = f"for f in {quote_sh(str(env_prefix))}/etc/conda/activate.d/*.sh; do . \"$f\"; done"
    out = _activated_status(bash, env_prefix, env, activate)
    assert "[CUDA_HOME=/opt/my-cuda]" in out
    assert (f"  not applied to this shell: {script} sets CUDA_HOME (/opt/my-cuda) and runs after cudaswitch's hook "
            f"(conda runs the activate.d scripts in name order)") in out, out
    assert "conda activate" not in out
    zh = _activated_status(bash, env_prefix, dict(env, CUDASWITCH_LANG="zh_CN"), activate)
    assert f"  未在当前 shell 中生效：{script} 设置了 CUDA_HOME（/opt/my-cuda），而且在 cudaswitch 的激活脚本之后运行" in zh, zh
    # the same environment without that script: the usual hint, which is then true
    script.unlink()
    out = _activated_status(bash, env_prefix, dict(env, CUDA_HOME="/elsewhere"), "true")
    assert "not applied to this shell yet: conda activate" in out, out


def test_status_names_the_script_under_the_real_conda(cli_env, env_prefix, real_conda, tmp_path):
    bash = require_tool("bash")
    assert run_cli(["use", "12.9", "--no-smoke", "-p", str(env_prefix)], cli_env).returncode == 0
    script = _user_script(env_prefix)
    env = dict(cli_env, PATH=f"{cli_on_path(tmp_path)}:/usr/bin:/bin", SHELL=bash, HOME=str(tmp_path))
    hook = real_conda.hook("bash", env=env)
    (tmp_path / "hook.sh").write_text(hook)
    out = _activated_status(bash, env_prefix, env, f". {quote_sh(str(tmp_path / 'hook.sh'))}\n"
                                                   f"conda activate {quote_sh(str(env_prefix))}")
    assert "[CUDA_HOME=/opt/my-cuda]" in out, out
    assert f"  not applied to this shell: {script} sets CUDA_HOME (/opt/my-cuda)" in out, out


def test_the_activation_reader_follows_condas_order(tmp_path):
    """env_vars.d and conda-meta/state first (the state's wins), then activate.d by code point: '~' after
    letters, upper case before lower case."""
    from cudaswitch.discovery.activation_scripts import last_setter, setters

    p = make_env(tmp_path / "e", history="")
    (p / "etc" / "conda" / "env_vars.d").mkdir(parents=True)
    (p / "etc" / "conda" / "env_vars.d" / "cuda-nvcc.json").write_text('{"CUDA_HOME": "/pkg"}')
    (p / "conda-meta" / "state").write_text('{"env_vars": {"CUDA_HOME": "/state", "OTHER": "x"}}')
    ad = p / "etc" / "conda" / "activate.d"
    ad.mkdir()
    (ad / "~cuda-nvcc_activate.sh").write_text('export CUDA_HOME="${CONDA_PREFIX}/targets/x86_64-linux"\n')
    (ad / "Zed.sh").write_text("if [ -d /x ]; then CUDA_HOME=/zed; export CUDA_HOME; fi\n")
    (ad / "a.fish").write_text("set -gx CUDA_HOME /fish\n")
    (ad / "b.sh").write_text("OLD_CUDA_HOME=/no\n# CUDA_HOME=/comment is not run either\n")
    found = [(s.value, os.path.basename(s.source)) for s in setters(str(p), ["CUDA_HOME"], ".sh")]
    assert found == [("/state", "state"), ("/zed", "Zed.sh"),
                     ("${CONDA_PREFIX}/targets/x86_64-linux", "~cuda-nvcc_activate.sh")]
    assert last_setter(str(p), "CUDA_HOME", ".fish").value == "/fish"


def test_init_alias_applies_use_in_tcsh(cli_env, env_prefix, real_trees, tmp_path):
    exe = require_tool("tcsh")
    (tmp_path / "init.csh").write_text(run_cli(["init", "tcsh"], cli_env).stdout)
    script = tmp_path / "s.csh"  # a file, not -c: csh expands aliases per line
    script.write_text(f"source {quote_sh(str(tmp_path / 'init.csh'))}\ncudaswitch use 12.9 > /dev/null\n"
                      'echo "[$CUDA_HOME]"\n')
    env = dict(cli_env, PATH=f"{cli_on_path(tmp_path)}:/usr/bin:/bin", CONDA_PREFIX=str(env_prefix))
    out = subprocess.run([exe, "-f", str(script)], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == f"[{real_trees / 'cuda-12.9'}]", out.stderr


def test_broken_state_file_is_one_line_and_off_still_cleans_up(cli_env, env_prefix):
    assert run_cli(["use", "11.8", "-p", str(env_prefix)], cli_env).returncode == 0
    (env_prefix / "etc" / "cudaswitch" / "state.yaml").write_text(": [\n")
    line = one_line_error(run_cli(["use", "--refresh", "-p", str(env_prefix)], cli_env), 1)
    assert "unreadable state file" in line and "'cudaswitch off' removes it" in line
    proc = run_cli(["off", "-p", str(env_prefix)], cli_env)
    assert proc.returncode == 0 and "removed 10 hook files and the state file" in proc.stdout
    assert not any(p.is_file() for p in (env_prefix / "etc").rglob("*"))


@pytest.mark.parametrize("odd", ["it's", "$(id)", "a`b"])
def test_use_refuses_a_toolkit_path_conda_itself_would_break(cli_env, env_prefix, real_trees, tmp_path, odd):
    """conda exports PATH unescaped ('...' in sh, "..." in csh/fish): such a toolkit path would be executed or
    mangled by `conda deactivate`. `use` says so in one line and writes nothing."""
    import cudatrees

    where = tmp_path / f"cuda {odd}"
    cudatrees.cuda_12_9(where / "cuda-12.9")  # a real tree: discovery resolves symlinks
    before = _tree(env_prefix)
    line = one_line_error(run_cli(["use", "12.9", "-p", str(env_prefix), "--no-smoke"],
                                   dict(cli_env, CUDASWITCH_SEARCH_PATH=str(where))), 1)
    assert "conda's own unescaped PATH export" in line and str(where) in line
    assert _tree(env_prefix) == before


def test_use_says_once_how_to_install_the_reconciler(cli_env, env_prefix):
    """Without the prompt-time reconciler in the user's shell, `use` says in one line how to add it, on an
    environment's first switch only; with it (the init snippet exports CUDASWITCH_RECONCILER=1), nothing."""
    env = dict(cli_env, SHELL="/bin/bash")
    out = run_cli(["use", "12.9", "-p", str(env_prefix), "--no-smoke"], env).stdout
    tips = [ln for ln in out.splitlines() if "cudaswitch init bash --install" in ln]
    assert len(tips) == 1 and "conda#14762" in tips[0], out
    out = run_cli(["use", "12.9", "-p", str(env_prefix), "--no-smoke"], env).stdout
    assert "init bash --install" not in out, out  # once: not again for the same environment
    other = make_env(env_prefix.parent / "other")
    out = run_cli(["use", "12.9", "-p", str(other), "--no-smoke"], dict(env, CUDASWITCH_RECONCILER="1")).stdout
    assert "init bash --install" not in out and "now uses CUDA 12.9" in out, out


def test_init_powershell_install_keeps_a_utf16_profile(cli_env, tmp_path):
    """Windows PowerShell 5.1's `>` writes UTF-16 with a BOM: --install reads it, adds the block, keeps the
    encoding and the user's lines; a second run changes nothing; a file in no known encoding is one line."""
    prof = tmp_path / "profile.ps1"
    prof.write_bytes("# mine: conda init\r\nSet-Alias ll Get-ChildItem\r\n".encode("utf-16"))
    proc = run_cli(["init", "powershell", "--install", "--rc-file", str(prof)], cli_env)
    assert proc.returncode == 0 and "Added one line to" in proc.stdout, proc.stderr
    data = prof.read_bytes()
    assert data.startswith(b"\xff\xfe")
    text = data.decode("utf-16")
    assert text.startswith("# mine: conda init\r\nSet-Alias ll Get-ChildItem\r\n")
    line = text.splitlines()[-1]
    assert line.startswith("if (Test-Path -LiteralPath '") and "# added by 'cudaswitch init --install'" in line
    assert len(text.splitlines()) == 3 and text.endswith("\r\n")  # the profile's own line endings
    loaded = Path(cli_env["XDG_DATA_HOME"]) / "cudaswitch" / "shell" / "init.ps1"
    assert f". '{loaded}'" in line and "function global:prompt" in loaded.read_text(encoding="utf-8-sig")
    assert loaded.read_bytes().startswith(b"\xef\xbb\xbf")  # Windows PowerShell 5.1 reads BOM-less files as ANSI
    again = run_cli(["init", "powershell", "--install", "--rc-file", str(prof)], cli_env)
    assert "Already in" in again.stdout and prof.read_bytes() == data
    bad = tmp_path / "bad.ps1"
    bad.write_bytes(b"\xff\xff\x00bad")
    one_line_error(run_cli(["init", "powershell", "--install", "--rc-file", str(bad)], cli_env), 1)


def test_powershell_profiles_of_every_edition_are_found_as_conda_finds_them(tmp_path):
    """Each PowerShell on PATH is asked for $PROFILE.CurrentUserAllHosts (that follows a Documents folder OneDrive
    redirected), and both editions get the line: pwsh 7 reads Documents\\PowerShell, Windows PowerShell 5.1 (the
    Anaconda PowerShell Prompt) Documents\\WindowsPowerShell. 5.1 ships with Windows, so its file is always
    written; pwsh 7's when pwsh answers or its folder exists."""
    from functools import partial

    from cudaswitch.core.shells import INIT_SHELLS
    from cudaswitch.switching.startup import named_profiles

    powershell_profiles = partial(named_profiles, INIT_SHELLS["powershell"][1])

    asked = []
    # what each edition prints for $PROFILE.CurrentUserAllHosts with Documents in OneDrive
    answers = {"pwsh.exe": "C:\\Users\\li\\OneDrive\\Documents\\PowerShell\\profile.ps1\r\n",
               "powershell.exe": "C:\\Users\\li\\OneDrive\\Documents\\WindowsPowerShell\\profile.ps1\r\n"}

    def run(argv, **kw):
        asked.append(argv)
        return subprocess.CompletedProcess(argv, 0, answers[argv[0].rsplit("\\", 1)[-1]], "")

    both = {"pwsh": r"C:\Program Files\PowerShell\7\pwsh.exe",
            "powershell": r"C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe"}
    got = powershell_profiles(which=both.get, run=run, environ={}, windows=True)
    assert [str(p) for p in got] == [a.strip() for a in answers.values()]
    assert [a[0].rsplit("\\", 1)[-1] for a in asked] == ["pwsh.exe", "powershell.exe"]
    assert all("$PROFILE.CurrentUserAllHosts" in a for a in asked)

    # only 5.1 on PATH (no pwsh installed): its own answer, and no pwsh file in a folder that does not exist
    got = powershell_profiles(which={"powershell": both["powershell"]}.get, run=run, environ={}, windows=True)
    assert [str(p) for p in got] == ["C:\\Users\\li\\OneDrive\\Documents\\WindowsPowerShell\\profile.ps1"]

    # none answers: the OneDrive Documents folder that holds a PowerShell folder; 5.1's file there too
    onedrive = tmp_path / "OneDrive"
    (onedrive / "Documents" / "PowerShell").mkdir(parents=True)
    got = powershell_profiles(which=lambda _: None, run=run, environ={"OneDrive": str(onedrive),
                                                                       "USERPROFILE": str(tmp_path / "home")},
                              windows=True)
    assert got == [onedrive / "Documents" / "PowerShell" / "profile.ps1",
                   onedrive / "Documents" / "WindowsPowerShell" / "profile.ps1"]
    # a plain Windows account without pwsh 7: Windows PowerShell's file only
    got = powershell_profiles(which=lambda _: None, run=run, environ={"USERPROFILE": str(tmp_path / "plain")},
                              windows=True)
    assert got == [tmp_path / "plain" / "Documents" / "WindowsPowerShell" / "profile.ps1"]
    # off Windows, where no pwsh answers: pwsh's own $PROFILE.CurrentUserAllHosts there (about_Profiles)
    got = powershell_profiles(which=lambda _: None, run=run, environ={"XDG_CONFIG_HOME": str(tmp_path / "cfg")},
                              windows=False)
    assert got == [tmp_path / "cfg" / "powershell" / "profile.ps1"]


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_the_shell_function_in_a_pipe_does_not_claim_this_shell(shell, cli_env, env_prefix, real_trees, tmp_path):
    """`cudaswitch use 12.9 | tail` runs the function in a subshell: nothing reaches the shell, and it says so."""
    exe = require_tool(shell)
    fn = run_cli(["init", shell], cli_env).stdout
    path = f"{cli_on_path(tmp_path)}:/usr/bin:/bin"
    script = f"{fn}\ncudaswitch use 12.9 --no-smoke | cat\necho \"[CUDA_HOME=$CUDA_HOME]\"\n"
    argv = [exe, "-c", script] if shell == "bash" else [exe, "-f", "-c", script]
    out = subprocess.run(argv, env=dict(cli_env, PATH=path, CONDA_PREFIX=str(env_prefix)), capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert "Applied to this shell" not in out.stdout and "Takes effect at the next activation" in out.stdout
    assert out.stdout.rstrip().endswith("[CUDA_HOME=]")  # and indeed this shell did not get it
