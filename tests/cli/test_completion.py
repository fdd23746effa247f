"""Tab completion as the user meets it: the completion script `init` installs, run by the real bash, zsh and fish,
asking the real command over click's protocol (`_CUDASWITCH_COMPLETE`, COMP_WORDS); PowerShell's side of the same
protocol. Commands, options, toolkit selectors (versions, cuXYZ, module names, folders), environment names and
init's shells."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli_on_path, make_env, require_tool, run_cli
from cudaswitch.core.shells import quote_sh

HERE = Path(__file__).resolve().parent
# this machine's own toolkits (/usr/local/cuda-*, /opt/...) stay out of the answers: each completion runs in a
# private mount namespace with an empty tmpfs over those folders
HIDE = 'mount -t tmpfs none /usr/local && mount -t tmpfs none /opt && exec "$@"'


def _run(argv, env, settle: float = 0):
    """`settle`: seconds to wait between the mounts and the command, so that the fresh empty /usr/local and /opt
    are older than what the completion cache counts as still changing (a folder changed a moment ago is never kept,
    and how long Python takes to start must not decide whether a test's TAB is)."""
    if os.geteuid() != 0:
        pytest.skip("hiding /usr/local and /opt needs root (a private mount namespace), as CI has")
    hide = HIDE.replace("exec", f"sleep {settle} && exec") if settle else HIDE
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", hide, "sh", *argv], env=env,
                          capture_output=True, text=True, timeout=60)


def _spack_lua():
    """The real Spack-generated CUDA modulefile the module tests read (tests/discovery/test_modules.py)."""
    spec = importlib.util.spec_from_file_location("module_texts", HERE.parent / "discovery" / "test_modules.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.SPACK_LUA


@pytest.fixture
def world(tmp_path, clean_env, real_trees):
    """cudaswitch on PATH, the two real toolkits (11.8.89, 12.9.1), a site module cuda/12.9 that loads one, and
    two conda environments in an envs folder."""
    mp = tmp_path / "modulefiles" / "cuda"
    mp.mkdir(parents=True)
    (mp / "12.9.lua").write_text(_spack_lua().format(root=real_trees / "cuda-12.9", version="12.9.1"))
    envs = tmp_path / "envs"
    for name in ("torch-cu118", "demo"):
        make_env(envs / name)
    (tmp_path / "home").mkdir()
    env = dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees), MODULEPATH=str(mp.parent),
               CONDA_ENVS_DIRS=str(envs), HOME=str(tmp_path / "home"), TERM="dumb",
               PATH=f"{cli_on_path(tmp_path)}:/usr/bin:/bin")
    return env, tmp_path


SELECTORS = ["11.8", "11.8.89", "cu118", "12.9", "12.9.1", "cu129", "cuda/12.9"]
CASES = [
    ("cudaswitch u", ["uninstall-cudnn", "uninstall-toolkit", "use"]),
    ("cudaswitch use --no-s", ["--no-smoke"]),
    ("cudaswitch use ", ["auto", *SELECTORS]),
    ("cudaswitch run 12", ["12.9", "12.9.1"]),
    ("cudaswitch which cu", ["cu118", "cu129", "cuda/12.9"]),
    ("cudaswitch doctor -n ", ["demo", "torch-cu118"]),
    ("cudaswitch use 12.9 --name t", ["torch-cu118"]),
    ("cudaswitch init f", ["fish"]),
    ("cudaswitch doctor --fix hooks_s", ["HOOKS_STALE"]),
]


def _bash(world, line, before=""):
    """What the real bash offers for `line`: the completion function `complete -p` names, called as bash's
    programmable completion calls it (COMP_WORDS, COMP_CWORD, the command, the word, the word before)."""
    env, tmp = world
    bash = require_tool("bash")
    script = tmp / "init.bash"
    script.write_text(run_cli(["init", "bash"], env).stdout)
    words = line.split(" ")
    code = (f". {quote_sh(str(script))}\n"
            f"{before}\n"
            f"COMP_WORDS=({' '.join(quote_sh(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
            f"COMP_LINE={quote_sh(line)}; COMP_POINT=${{#COMP_LINE}}\n"
            "spec=$(complete -p cudaswitch); fn=${spec##*-F }; fn=${fn%% *}\n"
            f"\"$fn\" cudaswitch {quote_sh(words[-1])} {quote_sh(words[-2])}\n"
            "printf '%s\\n' \"${COMPREPLY[@]}\"\n"
            "declare -p type value completion response 2>/dev/null | sed 's/^/LEAKED /'\n")
    out = _run([bash, "--norc", "--noprofile", "-c", code], env)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    return [ln for ln in out.stdout.splitlines() if ln]


@pytest.mark.parametrize("line,expected", CASES)
def test_bash_completes(world, line, expected):
    assert _bash(world, line) == expected


def test_bash_completes_a_folder_with_its_own_folder_completion(world):
    """A selector typed as a path is the shell's: bash gets `compopt -o dirnames` and no words of ours."""
    # compopt works only inside a real TAB; here a function shows what it was asked
    stub = "compopt() { printf compopt; printf ' %s' \"$@\"; echo; }"
    assert _bash(world, "cudaswitch use /us", before=stub) == ["compopt -o dirnames"]
    env, _tmp = world
    out = _run(["cudaswitch"], dict(env, COMP_WORDS="cudaswitch use /us", COMP_CWORD="2",
                                     _CUDASWITCH_COMPLETE="bash_complete"))
    assert out.stdout.splitlines() == ["dir,/us"]


def _zsh(world, line):
    """What the real zsh's completion system (compinit) registered for cudaswitch, run for `line`. compadd and
    _describe only work inside a TAB; here they are functions that print what they were given."""
    env, tmp = world
    zsh = require_tool("zsh")
    script = tmp / "init.zsh"
    script.write_text(run_cli(["init", "zsh"], env).stdout)
    words = line.split(" ")
    code = ("autoload -Uz compinit && compinit -u -D\n"
            f"source {quote_sh(str(script))}\n"
            "print -r -- \"REGISTERED $_comps[cudaswitch]\"\n"
            "compadd() { local n=${@[-1]}; print -rl -- ${(P)n} }\n"
            "_describe() { local n=$3; print -rl -- ${(P)n} }\n"
            f"words=({' '.join(quote_sh(w) for w in words)}); CURRENT={len(words)}\n"
            "$_comps[cudaswitch]\n"
            "for v in type key descr; do (( ${+parameters[$v]} )) && print LEAKED $v; done; true\n")
    out = _run([zsh, "-f", "-c", code], env)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "REGISTERED _cudaswitch_completion", out.stdout
    return [ln.split(":", 1)[0] for ln in lines[1:] if ln]


@pytest.mark.parametrize("line,expected", CASES)
def test_zsh_completes(world, line, expected):
    got = _zsh(world, line)
    assert sorted(got) == sorted(expected), got


def test_zsh_without_compinit_starts_silently(world):
    """Sourced from a .zshrc that never loads the completion system, the script prints nothing."""
    env, tmp = world
    script = tmp / "init.zsh"
    script.write_text(run_cli(["init", "zsh"], env).stdout)
    out = subprocess.run([require_tool("zsh"), "-f", "-c", f"source {quote_sh(str(script))}; echo $?"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert (out.stdout, out.stderr) == ("0\n", "")


@pytest.mark.parametrize("line,expected", CASES)
def test_fish_completes(world, line, expected):
    """fish's own completion engine (`complete -C`), with the script `init fish` prints."""
    env, tmp = world
    fish = require_tool("fish")
    script = tmp / "init.fish"
    script.write_text(run_cli(["init", "fish"], env).stdout)
    code = f"source {quote_sh(str(script))}; complete -C {quote_sh(line)}"
    out = _run([fish, "--no-config", "-c", code], env)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    got = [ln.split("\t")[0] for ln in out.stdout.splitlines()]
    assert sorted(got) == sorted(expected), out.stdout


@pytest.mark.parametrize("line,expected", CASES)
def test_powershell_protocol(world, line, expected):
    """The PowerShell completer hands over the line up to the cursor; each answer is `plain<TAB>value`."""
    env, _tmp = world
    out = _run(["cudaswitch"], dict(env, COMP_WORDS=line, _CUDASWITCH_COMPLETE="powershell_complete"))
    assert out.returncode == 0 and out.stderr == ""
    assert [ln.split("\t", 1) for ln in out.stdout.splitlines()] == [["plain", w] for w in expected]


def test_powershell_script_registers_a_native_completer(world):
    env, _tmp = world
    text = run_cli(["init", "powershell"], env).stdout
    assert "Register-ArgumentCompleter -Native -CommandName cudaswitch" in text
    assert "$Env:_CUDASWITCH_COMPLETE = 'powershell_complete'" in text


def test_a_toolkit_installed_after_a_tab_is_offered_at_the_next_tab(world):
    """The selectors are kept between TABs (discovery/selector_cache.py) in the user's cache folder; a toolkit that
    appears afterwards is offered at the very next TAB, through the real command."""
    import time

    from cudaswitch.discovery.selector_cache import NAME, RACY_NS

    env, tmp = world
    real_trees = Path(env["CUDASWITCH_SEARCH_PATH"])
    folder = tmp / "toolkits"
    folder.mkdir()
    (folder / "cuda-11.8").symlink_to(real_trees / "cuda-11.8")
    env = dict(env, CUDASWITCH_SEARCH_PATH=str(folder), MODULEPATH="", COMP_WORDS="cudaswitch use ",
               _CUDASWITCH_COMPLETE="powershell_complete")
    settle = RACY_NS / 1e9 + 0.05  # a tree younger than that is never kept
    time.sleep(settle)
    tab = [sys.executable, "-m", "cudaswitch"]
    env["PYTHONPATH"] = str(HERE.parent.parent)
    first = _run(tab, env, settle)
    assert (first.stdout, first.stderr) == ("plain\tauto\nplain\t11.8\nplain\t11.8.89\nplain\tcu118\n", "")
    assert (tmp / "home" / ".cache" / "cudaswitch" / NAME).is_file()
    (folder / "cuda-12.9").symlink_to(real_trees / "cuda-12.9")
    second = _run(tab, env, settle)
    assert [ln.split("\t")[1] for ln in second.stdout.splitlines()] == ["auto", "11.8", "11.8.89", "cu118", "12.9",
                                                                         "12.9.1", "cu129"]


# ---- the click-free answer (cudaswitch/launch.py) ---------------------------------------------------------------

def _protocol_env(shell, line):
    """What each shell's completion function sets for `line` (the cursor at its end)."""
    words = line.split(" ")
    if shell in ("bash", "zsh"):
        return {"COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)}
    if shell == "fish":
        return {"COMP_WORDS": line, "COMP_CWORD": words[-1]}
    return {"COMP_WORDS": line}


def _click_answer(shell, line, monkeypatch):
    from click.shell_completion import get_completion_class

    import cudaswitch.cli.completion  # noqa: F401
    from cudaswitch.cli import main

    for k, v in _protocol_env(shell, line).items():
        monkeypatch.setenv(k, v)
    return get_completion_class(shell)(main, {}, "cudaswitch", "_CUDASWITCH_COMPLETE").complete()


def _quick_answer(shell, line, monkeypatch):
    from cudaswitch import launch

    monkeypatch.setenv("_CUDASWITCH_COMPLETE", f"{shell}_complete")
    for k, v in _protocol_env(shell, line).items():
        monkeypatch.setenv(k, v)
    lines = launch.answer()
    return None if lines is None else "\n".join(lines)


def _quick_lines():
    from cudaswitch.data.completion_table import OPTIONS

    lines = ["cudaswitch ", "cudaswitch u", "cudaswitch un", "cudaswitch uninstall-c", "cudaswitch x", "cudaswitch -",
             "cudaswitch --", "cudaswitch --v", "cudaswitch -h"]
    for command, options in OPTIONS["bash"].items():
        if command:
            lines += [f"cudaswitch {command} -", f"cudaswitch {command} --"]
            lines += [f"cudaswitch {command} {word[:n]}" for word, _ in options for n in (3, len(word))]
    return list(dict.fromkeys(lines))


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "powershell"])
def test_a_command_or_option_is_answered_without_click_as_click_answers(shell, monkeypatch):
    """Every command name and option, at several lengths, in the shell's own format: the quick answer prints what
    click's completion prints, byte for byte."""
    for line in _quick_lines():
        quick = _quick_answer(shell, line, monkeypatch)
        assert quick is not None, f"{shell}: {line!r} went to click"
        assert quick == _click_answer(shell, line, monkeypatch), f"{shell}: {line!r}"


def _both_answers(shell, world, monkeypatch, lines):
    """line -> the quick answer, each asserted equal to click's, in the world's environment."""
    env, _tmp = world
    for k in ("CUDASWITCH_SEARCH_PATH", "MODULEPATH", "HOME", "CUDASWITCH_CONFIG", "CONDA_ENVS_DIRS"):
        monkeypatch.setenv(k, env[k])
    answers = {}
    for line in lines:
        quick = _quick_answer(shell, line, monkeypatch)
        assert quick is not None, f"{shell}: {line!r} went to click"
        assert quick == _click_answer(shell, line, monkeypatch), f"{shell}: {line!r}"
        answers[line] = quick
    return answers


SELECTOR_LINES = ["cudaswitch use ", "cudaswitch use 1", "cudaswitch use cu", "cudaswitch use a",
                  "cudaswitch which 12.9", "cudaswitch run c", "cudaswitch modulefile cuda/", "cudaswitch use zz", "cudaswitch use /us",
                  "cudaswitch which ./", "cudaswitch run ~/"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "powershell"])
def test_a_toolkit_selector_is_answered_without_click_as_click_answers(shell, world, monkeypatch):
    """`use`, `which`, `run`, `modulefile`, `uninstall-toolkit`: discovery's selectors (and the shell's folder
    completion for a path), as click's completion prints them."""
    answers = _both_answers(shell, world, monkeypatch, SELECTOR_LINES)
    assert answers["cudaswitch use a"].count("auto") == 1 and "auto" not in answers["cudaswitch which 12.9"]
    assert "cuda/12.9" in answers["cudaswitch modulefile cuda/"] and "11.8.89" in answers["cudaswitch use 1"]


VALUE_LINES = ["cudaswitch doctor -n ", "cudaswitch doctor -n d", "cudaswitch use --name ",
               "cudaswitch use 12.9 --name t", "cudaswitch doctor --json --name torch", "cudaswitch doctor --fix hooks_s", "cudaswitch doctor H",
               "cudaswitch doctor -n demo --fix ", "cudaswitch install-cudnn -n ", "cudaswitch install-cudnn --cuda 1",
               "cudaswitch install-cudnn --cuda /us", "cudaswitch doctor -p ./x", "cudaswitch uninstall-cudnn -n t"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "powershell"])
def test_an_environment_name_or_a_finding_code_is_answered_without_click_as_click_answers(shell, world,
                                                                                            monkeypatch):
    """`-n <TAB>`: conda's environment names; `doctor <TAB>`: the finding codes; an option's toolkit or folder."""
    answers = _both_answers(shell, world, monkeypatch, VALUE_LINES)
    assert "demo" in answers["cudaswitch doctor -n "] and "torch-cu118" in answers["cudaswitch doctor -n "]
    assert "HOOKS_STALE" in answers["cudaswitch doctor -n demo --fix "]
    assert "12.9.1" in answers["cudaswitch install-cudnn --cuda 1"]


@pytest.mark.parametrize("line", ["cudaswitch use 12.9 ", "cudaswitch 'u", "cudaswitch use --name=x",
                                  "cudaswitch use 12.9 --n", "cudaswitch init f", "cudaswitch use $HOME",
                                  "cudaswitch doctor --bogus H", "cudaswitch doctor -- H", "cudaswitch init --rc-file ",
                                  "cudaswitch use -n demo "])
def test_what_only_discovery_or_click_can_answer_goes_to_click(line, monkeypatch):
    for shell in ("bash", "zsh", "fish", "powershell"):
        assert _quick_answer(shell, line, monkeypatch) is None, (shell, line)


def test_the_table_of_words_is_what_the_commands_give_now():
    spec = importlib.util.spec_from_file_location("completion_table", HERE.parent.parent / "tools" /
                                                  "completion_table.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.TABLE.read_text(encoding="utf-8") == tool.generate(), "run python tools/completion_table.py"


def test_a_tab_on_a_command_name_does_not_import_click(world):
    """The point of the quick answer: `cudaswitch u<TAB>` runs without click (python -X importtime lists what a
    process imported)."""
    env, _tmp = world
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "cudaswitch"], capture_output=True, text=True,
                         env=dict(env, COMP_WORDS="cudaswitch u", COMP_CWORD="1", _CUDASWITCH_COMPLETE="bash_complete",
                                  PYTHONPATH=str(HERE.parent.parent)), timeout=60)
    assert out.stdout.splitlines() == ["plain,uninstall-cudnn", "plain,uninstall-toolkit", "plain,use"]
    imported = {ln.rsplit("|", 1)[-1].strip() for ln in out.stderr.splitlines() if ln.startswith("import time:")}
    assert "cudaswitch.launch" in imported and "click" not in imported


# what no TAB needs, each of which a TAB once imported: typing for annotations (a third of what a command-name TAB
# added to starting Python, a fifth of a kept selector's), copy, contextlib and fcntl for one call each (about 3.7,
# 3 and 0.4 million instructions of a TAB that computes), threading for threading.local (4.5 million of a TAB as
# root, where the audit hook runs), click and what only installing needs
NOT_FOR_A_TAB = {"typing", "copy", "contextlib", "fcntl", "threading", "click", "tempfile", "shutil", "zipfile",
                 "hashlib"}


def test_no_tab_imports_what_it_does_not_need(world):
    """A TAB imports what it needs: nothing for annotations (the modules a TAB loads import typing only for a type
    checker, their records are collections' named tuples), nothing for one call a few lines replace. Run as pip's
    script runs it (`-c`: `-m` would import contextlib itself, through runpy); `-S`: no startup file of this
    machine's imports anything first."""
    env, tmp = world
    cache = tmp / "tab-cache"
    for line, expect in (("cudaswitch u", "plain,use"), ("cudaswitch use ", "plain,12.9.1"),
                         ("cudaswitch use ", "plain,12.9.1"), ("cudaswitch doctor -n ", "plain,demo")):
        out = subprocess.run([sys.executable, "-S", "-X", "importtime", "-c",
                              "import sys; from cudaswitch.launch import main; sys.exit(main())"],
                             capture_output=True, text=True, timeout=60,
                             env=dict(env, COMP_WORDS=line, COMP_CWORD=str(len(line.split()) - (line[-1] != " ")),
                                      _CUDASWITCH_COMPLETE="bash_complete", XDG_CACHE_HOME=str(cache),
                                      PYTHONPATH=str(HERE.parent.parent)))
        assert expect in out.stdout.splitlines(), (line, out.stdout, out.stderr[-2000:])
        imported = {ln.rsplit("|", 1)[-1].strip() for ln in out.stderr.splitlines() if ln.startswith("import time:")}
        assert "cudaswitch.launch" in imported and not imported & NOT_FOR_A_TAB, (line, imported & NOT_FOR_A_TAB)
    assert (cache / "cudaswitch" / "selectors.marshal").is_file()  # the second selector TAB was answered from it
