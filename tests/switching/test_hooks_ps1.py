"""Every PowerShell file cudaswitch writes, parsed by a real PowerShell grammar and run by tests/pwsh_subset.py (no
PowerShell runs on our machines): only the constructs of docs/design/activation.md ("PowerShell constructs"); the
activate hook gives what the Python model gives, on Windows PowerShell 5.1 and PowerShell 7.5, on Windows and
Linux; deactivate gives back the start; the reconciler cleans up after a switch to an env without hooks; and
py-rattler's own PowerShell activation (Linux and win-64) gives the start from which our hook leaves what the plan
says."""

from __future__ import annotations

import json
import pytest

import pwsh_subset as ps
from cudaswitch.switching import hookfiles as hooks
from cudaswitch.switching.activation import Changes, apply, recorded_entries
from cudaswitch.switching.startup import hooks_dir
from cudaswitch.core.system import System

WIN_ROOT = r"C:\Program Files (x86)\NVIDIA & Co\CUDA\v12.1 'q' [x]"
LINUX_ROOT = "/opt/CUDA v11.8 (x86) & 'q' $HOME [x] 环境"
OLD_ROOT = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.3"
KEYS = ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH")
VERSIONS = ("5.1", "7.5")  # an empty environment value: deleted on 5.1, kept on 7.5 (about_Environment_Variables)


def changes(windows: bool, ld: bool = True) -> Changes:
    root = WIN_ROOT if windows else LINUX_ROOT
    sep = "\\" if windows else "/"
    ch = Changes(scalars={"CUDA_PATH": root, "CUDA_HOME": root}, prepend={"PATH": [root + sep + "bin"]})
    if windows:
        ch.prepend["PATH"].append(root + sep + "libnvvp")
    elif ld:
        ch.prepend["LD_LIBRARY_PATH"] = [root + "/lib64"]
    return ch


def rendered(direction: str, windows: bool, ld: bool = True) -> str:
    return hooks.render_hook("ps1", direction, changes(windows, ld), "12.1", windows=windows).decode("utf-8-sig")


RENDERED = [(w, ld, d) for w in (True, False) for ld in ((True,) if w else (True, False)) for d in hooks.DIRECTIONS]


@pytest.mark.parametrize("windows,ld,direction", RENDERED)
def test_every_rendered_hook_uses_only_the_reviewed_constructs(windows, ld, direction):
    assert ps.subset_problems(rendered(direction, windows, ld)) == []


def test_reconciler_and_init_function_use_only_the_reviewed_constructs():
    d = hooks_dir()
    # their functions are the point (the prompt, the wrapper): output is allowed only where it is the purpose
    assert ps.subset_problems((d / "reconcile.ps1").read_text(encoding="utf-8"), hook=False,
                              output_ok=("prompt",)) == []
    assert ps.subset_problems((d / "powershell.ps1").read_text(encoding="utf-8"), hook=False,
                              output_ok=("cudaswitch",)) == []


# Each fault class of the review, in the smallest form: the checker names every one.
FAULTS = {
    "function call inside @( )": "$__cs_x = @(__cs_Split 'PATH')\nRemove-Variable -Name '__cs_x'",
    "return with a value": "function f { return ,@(1) }",
    "unary comma": "$__cs_x = ,@('a')\nRemove-Variable -Name '__cs_x'",
    "statement's output assigned": "$__cs_x = if ($true) { @('a') } else { @() }\nRemove-Variable -Name '__cs_x'",
    "$null on the right": "$__cs_x = $Env:PATH -eq $null\nRemove-Variable -Name '__cs_x'",
    "-split without SimpleMatch": "$__cs_x = $Env:PATH -split ';'\nRemove-Variable -Name '__cs_x'",
    "reaches the pipeline": "$Env:PATH -join ';'",
    "left in conda's scope": "$__cs_x = 1",
    "not named $__cs_": "$x = 1\nRemove-Variable -Name 'x'",
    "does not exist on Windows PowerShell 5.1": "if ($IsWindows) { $Env:A = '1' }",
    "a function in a dot-sourced hook": "function g { $Env:A = '1' }",
    "does not parse": "if ($true) { $Env:A = '1'",
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_the_checker_names_each_fault_class(fault):
    assert any(fault in p for p in ps.subset_problems(FAULTS[fault])), ps.subset_problems(FAULTS[fault])


# The lines of the hook that replaced PATH with `<bin>;<libnvvp>;System.Object[]`, as they were.
OLD_HOOK = r"""function __cs_Split([string]$Name) {
    $v = [Environment]::GetEnvironmentVariable($Name)
    if ($null -eq $v) { return ,@() }
    return ,@($v -split [regex]::Escape([IO.Path]::PathSeparator))
}
$__cs_path = @('C:\cuda\bin', 'C:\cuda\libnvvp')
$Env:PATH = (@($__cs_path) + @(__cs_Split 'PATH')) -join [IO.Path]::PathSeparator
"""


def test_the_interpreter_reproduces_the_fault_it_exists_for():
    """PowerShell's rules as the interpreter applies them give exactly what the review found: so a hook it accepts
    has been run under those rules, not merely read."""
    got = ps.run(OLD_HOOK, {"Path": r"C:\env\Library\bin;C:\Windows\system32"}, windows=True)
    assert got.env["Path"] == r"C:\cuda\bin;C:\cuda\libnvvp;System.Object[]"
    assert ps.subset_problems(OLD_HOOK)  # and the checker refuses it before it is run


def start_states(windows: bool):
    """name -> start environment: conda has activated the env (its folder first on PATH)."""
    sep = ";" if windows else ":"
    env_bin = r"C:\envs\A\Library\bin" if windows else "/envs/A/bin"
    system_path = [r"C:\Windows\system32", r"C:\Windows"] if windows else ["/usr/bin", "/bin"]
    old_bins = [OLD_ROOT + r"\bin", OLD_ROOT + r"\libnvvp"] if windows else ["/usr/local/cuda-11.3/bin"]
    ours = changes(windows).prepend["PATH"]
    base = {"CONDA_PREFIX": r"C:\envs\A" if windows else "/envs/A", "PATH": sep.join([env_bin] + system_path)}
    out = {
        "plain": dict(base),
        "scalars-set": dict(base, CUDA_PATH=OLD_ROOT, CUDA_HOME=""),
        # NVIDIA's installer: every toolkit's folders at the end of PATH, CUDA_PATH the last one installed
        "nvidia-installer": dict(base, PATH=sep.join([env_bin] + system_path + old_bins + ours), CUDA_PATH=OLD_ROOT),
        # an earlier switch recorded its entries and conda re-exported them in front (conda-path-first)
        "earlier-switch": dict(base, PATH=sep.join(old_bins + [env_bin] + system_path),
                               _CUDASWITCH_ADDED_PATH=sep.join(old_bins), CUDA_PATH=OLD_ROOT,
                               _CUDASWITCH_SAVED_CUDA_PATH="1", _CUDASWITCH_OLD_CUDA_PATH=r"C:\mine",
                               _CUDASWITCH_SAVED_CUDA_HOME="1"),
    }
    if not windows:
        # "found unset, unset it again" (HL4): LD_LIBRARY_PATH holds only an earlier hook's entry, and that hook
        # had found it unset
        out["ld-found-unset"] = dict(base, LD_LIBRARY_PATH="/usr/local/cuda-11.3/lib64",
                                     _CUDASWITCH_ADDED_LD_LIBRARY_PATH="/usr/local/cuda-11.3/lib64",
                                     _CUDASWITCH_UNSET_LD_LIBRARY_PATH="1")
        out["ld-set"] = dict(base, LD_LIBRARY_PATH="/opt/x::/opt/y")
    return out


CASES = [(w, name, v) for w in (True, False) for name in start_states(w) for v in VERSIONS]


def _system(windows):
    return System(os="windows" if windows else "linux", environ={}, python_paths=[])


def _norm(env, windows):
    """The four variables as a model compares them (Windows names are case-insensitive)."""
    low = {k.upper() if windows else k: v for k, v in env.items()}
    return {k: low.get(k) for k in KEYS}


@pytest.mark.parametrize("windows,start,version", CASES)
def test_activate_is_the_model_and_deactivate_gives_back_the_start(windows, start, version):
    initial = start_states(windows)[start]
    system = _system(windows)
    for ld in ((True,) if windows else (True, False)):
        ch = changes(windows, ld)
        act = ps.run(rendered("activate", windows, ld), initial, windows, version, isdir=lambda p: True)
        assert act.output == [] and act.stderr == [] and act.variables == {}, act
        want = apply(initial, ch, system, remove=recorded_entries(initial, system))
        assert _norm(act.env, windows) == _norm(want, windows), (start, ld)
        sep = ";" if windows else ":"
        assert act.env["_CUDASWITCH_ADDED_PATH"] == sep.join(ch.prepend["PATH"])
        again = ps.run(rendered("activate", windows, ld), act.env, windows, version, isdir=lambda p: True)
        assert again.env == act.env, "HU5: a second activate changes nothing"
        # conda deactivate: conda has already taken the env's folder off PATH, then runs the hook
        env_bin = r"C:\envs\A\Library\bin" if windows else "/envs/A/bin"
        after_conda = dict(act.env)
        after_conda["PATH"] = sep.join(e for e in act.env["PATH"].split(sep) if e != env_bin)
        after_conda.pop("CONDA_PREFIX")
        deact = ps.run(rendered("deactivate", windows, ld), after_conda, windows, version)
        assert deact.output == [] and deact.variables == {}
        expect = {k: v for k, v in initial.items() if not k.startswith("_CUDASWITCH_") and k != "CONDA_PREFIX"}
        expect["PATH"] = sep.join(e for e in initial["PATH"].split(sep) if e != env_bin)
        for var, entries in recorded_entries(initial, system).items():  # an earlier hook's entries are gone too
            if var in expect and entries:
                kept = [e for e in expect[var].split(sep)]
                for e in entries:
                    kept.remove(e)
                if kept or not initial.get(f"_CUDASWITCH_UNSET_{var}"):
                    expect[var] = sep.join(kept)
                else:
                    expect.pop(var)
        if initial.get("_CUDASWITCH_SAVED_CUDA_PATH"):  # the first writer's backup is what comes back (HS2)
            expect["CUDA_PATH"] = initial.get("_CUDASWITCH_OLD_CUDA_PATH")
            expect["CUDA_HOME"] = initial.get("_CUDASWITCH_OLD_CUDA_HOME")
            expect = {k: v for k, v in expect.items() if v is not None}
        if version == "5.1":
            expect = {k: v for k, v in expect.items() if v != ""}  # 5.1 cannot hold an empty variable
        assert {k.upper() if windows else k: v for k, v in deact.env.items()} == \
            {k.upper() if windows else k: v for k, v in expect.items()}, (start, ld)


@pytest.mark.parametrize("windows", [True, False])
def test_reconciler_cleans_up_a_switch_to_an_env_without_hooks(windows, tmp_path):
    """conda#14762: after A's deactivate hook conda re-exports A's entry; at the next prompt the reconciler takes
    our one copy out, restores the scalars, clears every record, and writes nothing into the prompt text."""
    sep = ";" if windows else ":"
    initial = start_states(windows)["nvidia-installer"]
    act = ps.run(rendered("activate", windows), initial, windows, isdir=lambda p: True)
    leaked = dict(act.env, CONDA_PREFIX=str(tmp_path / "env C"))  # no cudaswitch hook there
    for k in ("_CUDASWITCH_SAVED_CUDA_PATH", "_CUDASWITCH_OLD_CUDA_PATH", "_CUDASWITCH_SAVED_CUDA_HOME", "CUDA_HOME"):
        leaked.pop(k, None)  # A's deactivate hook restored the scalars already; only the PATH entry and record leak
    leaked["CUDA_PATH"] = initial["CUDA_PATH"]
    text = (hooks_dir() / "reconcile.ps1").read_text(encoding="utf-8")
    got = ps.run(text, leaked, windows, call="__cudaswitch_reconcile", isfile=lambda p: False)
    assert got.output == []
    assert got.env["PATH"].split(sep) == initial["PATH"].split(sep)  # the user's own copies of ours stay
    assert not [k for k in got.env if k.startswith("_CUDASWITCH_")]
    # with a full backup left (the switch skipped A's deactivate hook) the scalars come back too
    full = dict(act.env, CONDA_PREFIX=str(tmp_path / "env C"))
    got = ps.run(text, full, windows, call="__cudaswitch_reconcile", isfile=lambda p: False)
    assert _norm(got.env, windows) == _norm(initial, windows)
    # in an env that has its own hook the reconciler leaves everything alone
    got = ps.run(text, full, windows, call="__cudaswitch_reconcile", isfile=lambda p: True)
    assert {k: v for k, v in got.env.items() if k != "CUDASWITCH_RECONCILER"} == full


# rattler's PowerShell script line for a variable, in the one form it writes a value without anything to expand
_RATTLER_SET = r'^\$\{Env:(\w+)\} = "([^"$`]*)"$'


@pytest.mark.parametrize("platform,windows,version", [("linux-64", False, "7.5"), ("win-64", True, "5.1")])
def test_rattler_activation_then_our_hook(tmp_path, platform, windows, version):
    """py-rattler (an independent activator) decides the start our hook runs in, and the Python plan
    (activation.activated) what it must leave; the interpreter only runs our hook, as no PowerShell runs here.
    Compared: rattler's PATH as data (`ActivationResult.path`) against the one PATH line of its script (read by a
    literal pattern, not interpreted), and that every variable it sets comes before it dot-sources our
    activate.d/cudaswitch.ps1 (`. "path"`, the way conda does). What cannot be compared as data: the env's
    env_vars (CUDA_HOME, CUDA_PATH from conda-meta/state), which py-rattler gives only inside the script, so they
    are read from its literal `${Env:NAME} = "value"` lines, refusing any other form. On win-64 rattler spells the
    variable `Path`, as Windows does: the hook must find it whatever its case."""
    import re

    from cudaswitch.switching.activation import activated

    rattler = pytest.importorskip("rattler.shell")
    sep = ";" if windows else ":"
    prefix = tmp_path / "env"
    (prefix / "conda-meta").mkdir(parents=True)
    old = r"C:\old cuda" if windows else "/opt/old"
    (prefix / "conda-meta" / "state").write_text(
        json.dumps({"env_vars": {"CUDA_HOME": old, "CUDA_PATH": old}}), encoding="utf-8")
    hooks.write_hooks(str(prefix), changes(windows), "11.8", windows=windows)
    system = [r"C:\Windows\system32", r"C:\Windows"] if windows else ["/usr/bin", "/bin"]
    av = rattler.ActivationVariables(current_path=system,
                                     path_modification_behavior=rattler.PathModificationBehavior.Replace)
    result = rattler.activate(prefix, av, rattler.Shell.powershell, platform=platform)
    lines = [ln for ln in str(result.script).splitlines() if ln.startswith("${Env:")]
    hook = prefix / "etc" / "conda" / "activate.d" / "cudaswitch.ps1"
    script = str(result.script).splitlines()
    assert script[-1] == f'. "{hook}"'  # dot-sourced last, after every variable rattler sets
    sets = [re.fullmatch(_RATTLER_SET, ln) for ln in lines]
    assert all(sets), lines  # nothing to expand: the values are rattler's literal text
    start = {m.group(1): m.group(2) for m in sets}
    path_name = "Path" if windows else "PATH"
    assert start[path_name] == sep.join(str(p) for p in result.path)  # the script's PATH is rattler's data
    assert start["CUDA_HOME"] == start["CUDA_PATH"] == old and start["CONDA_PREFIX"] == str(prefix)
    got = ps.run(hook.read_text(encoding="utf-8-sig"), start, windows, version, isdir=lambda p: True)
    want = activated({k.upper() if windows else k: v for k, v in start.items()}, changes(windows), sep)
    assert {k.upper() if windows else k: v for k, v in got.env.items()} == want
    assert got.env[path_name].split(sep)[:len(changes(windows).prepend["PATH"])] == changes(windows).prepend["PATH"]
    assert "System.Object[]" not in got.env[path_name] and got.output == [] and got.variables == {}



@pytest.mark.parametrize("windows,start,version", CASES)
def test_every_record_is_what_the_plan_says(windows, start, version):
    """The whole environment, records included, against the plan `use` checks real shells with
    (activation.activated / deactivated): after activate; after deactivate on a switch (the env's folder still on
    PATH: the PATH record stays, HL3) and on `conda deactivate` (it goes)."""
    from cudaswitch.switching.activation import activated, deactivated

    sep = ";" if windows else ":"
    empty = version < "7.5"
    initial = start_states(windows)[start]
    env_bin = r"C:\envs\A\Library\bin" if windows else "/envs/A/bin"

    def same(a, b):
        up = (lambda d: {k.upper(): v for k, v in d.items() if not (empty and v == "")}) if windows else \
            (lambda d: {k: v for k, v in d.items() if not (empty and v == "")})
        return up(a) == up(b)

    for ld in ((True,) if windows else (True, False)):
        act = ps.run(rendered("activate", windows, ld), initial, windows, version, isdir=lambda p: True)
        assert same(act.env, activated(initial, changes(windows, ld), sep, empty)), (start, ld)
        switch = ps.run(rendered("deactivate", windows, ld), act.env, windows, version)
        assert same(switch.env, deactivated(act.env, sep, env_bin, empty))
        assert switch.env.get("_CUDASWITCH_ADDED_PATH")  # kept for the next hook (HL3)
        gone = dict(act.env)
        gone.pop("CONDA_PREFIX")
        gone["PATH"] = sep.join(e for e in act.env["PATH"].split(sep) if e != env_bin)
        off = ps.run(rendered("deactivate", windows, ld), gone, windows, version)
        assert same(off.env, deactivated(gone, sep, env_bin, empty))
        assert not [k for k in off.env if k.startswith("_CUDASWITCH_")]


# ---- the low items: what the sh hooks and the plan do, the PowerShell hooks do too -------------------------------

def _plan(start, windows):
    from cudaswitch.switching.activation import activated

    return activated(start, changes(windows), ";" if windows else ":")


@pytest.mark.parametrize("version", VERSIONS)
def test_a_lone_empty_element_left_after_our_entry_is_dropped(version):
    """LD_LIBRARY_PATH 'ROOT/lib64:' with ROOT/lib64 recorded: once our entry is out one empty element is left; sh
    (and the plan) take that for no list at all, so the result is 'ROOT/lib64', not 'ROOT/lib64:' (the current
    folder searched); deactivate gives back '' the same way."""
    lib = LINUX_ROOT + "/lib64"
    start = {"PATH": "/usr/bin", "LD_LIBRARY_PATH": lib + ":", "_CUDASWITCH_ADDED_LD_LIBRARY_PATH": lib}
    act = ps.run(rendered("activate", False), start, False, version, isdir=lambda p: True)
    assert act.env["LD_LIBRARY_PATH"] == lib == _plan(start, False)["LD_LIBRARY_PATH"]
    back = ps.run(rendered("deactivate", False), act.env, False, version, isdir=lambda p: True)
    assert back.env.get("LD_LIBRARY_PATH", "") == ""


@pytest.mark.parametrize("windows", [True, False])
def test_recorded_entries_compare_without_case_only_on_windows(windows):
    """Windows names a folder in any case (and cmd's substitution ignores it): a record in other case is our entry.
    On Linux /Opt/x and /opt/x are two folders: the user's stays. The plan says the same."""
    root = WIN_ROOT if windows else LINUX_ROOT
    entry = root + ("\\bin" if windows else "/bin")
    sep = ";" if windows else ":"
    start = {"PATH": sep.join([entry.upper(), "C:\\windows" if windows else "/usr/bin"]),
             "_CUDASWITCH_ADDED_PATH": entry}
    act = ps.run(rendered("activate", windows), start, windows, isdir=lambda p: True)
    assert act.env["PATH"] == _plan(start, windows)["PATH"]
    assert (entry.upper() in act.env["PATH"].split(sep)) == (not windows)


def test_constrained_language_mode_says_so_in_one_line_and_changes_nothing():
    """AppLocker/WDAC's ConstrainedLanguage blocks [Environment] and New-Object List[string]: the hooks detect it
    first, warn once, and leave the session as it was (the interpreter raises where PowerShell would)."""
    start = {"PATH": r"C:\windows", "CUDA_PATH": r"C:\old"}
    for direction in hooks.DIRECTIONS:
        r = ps.run(rendered(direction, True), start, True, language="ConstrainedLanguage", isdir=lambda p: True)
        assert r.env == start and r.output == [] and r.stderr == []
        assert r.warnings == ["cudaswitch: this PowerShell does not run in FullLanguage mode (an AppLocker or WDAC "
                              "policy), where its hooks cannot run; CUDA is not switched in this session"]
    with pytest.raises(ps.PsError, match="language mode"):
        ps.run("$x = [Environment]::GetEnvironmentVariable('PATH')", start, True, language="ConstrainedLanguage")


def test_the_interpreter_is_as_strict_as_powershell_where_the_hooks_could_slip():
    """Each leniency the interpreter had, closed or refused: a positional Test-Path is a wildcard pattern; a
    missing Env: item without -ErrorAction is an error; Remove-Variable acts on the current scope only; a
    List[string] in a string is its elements joined with $OFS."""
    env = {"PATH": "/usr/bin"}
    with pytest.raises(ps.Unsupported, match="wildcard"):
        ps.run("$__cs_x = Test-Path '/a[b]/c'", env, False)
    assert ps.subset_problems("$__cs_x = Test-Path $p\nRemove-Variable -Name '__cs_x' -ErrorAction SilentlyContinue")
    with pytest.raises(ps.PsError, match="does not exist"):
        ps.run("Remove-Item Env:NOPE", env, False)
    assert ps.subset_problems("Remove-Item Env:NOPE")
    assert ps.run("Remove-Item Env:NOPE -ErrorAction SilentlyContinue", env, False).env == env
    with pytest.raises(ps.PsError, match="in this scope"):
        ps.run("$v = 1\nfunction f { Remove-Variable -Name 'v' }\nf", env, False)
    r = ps.run("$l = New-Object 'System.Collections.Generic.List[string]'\n$l.Add('a')\n$l.Add('b')\n"
               "$Env:X = \"$l\"", env, False)
    assert r.env["X"] == "a b"


@pytest.mark.parametrize("status", [True, False])
def test_the_prompt_wrapper_keeps_the_last_commands_status(status):
    """starship and oh-my-posh read $? first thing in their prompt function: after the reconciler ran it must still
    say how the user's last command ended (the wrapper reads it first and remakes a failure)."""
    user_prompt = "function global:prompt { if ($?) { 'ok> ' } else { 'failed> ' } }\n"
    text = user_prompt + (hooks_dir() / "reconcile.ps1").read_text(encoding="utf-8")
    got = ps.run(text, {"PATH": "/usr/bin"}, False, call="prompt", status=status)
    assert got.output == ["ok> " if status else "failed> "]


@pytest.mark.parametrize("code", [0, 1])
def test_the_init_function_runs_the_command_and_applies_the_hook(tmp_path, code):
    """hooks/powershell.ps1's `cudaswitch` function, run for real in the interpreter: it finds the program with
    Get-Command | Select-Object, tells it that it applies (CUDASWITCH_APPLIES=1, gone afterwards), dot-sources the
    active environment's activate hook whatever the exit code (`use` exits 1 when its smoke test fails with the switch
    kept) and leaves that exit code in $LASTEXITCODE. (The program is a stand-in: no cudaswitch runs here.)"""
    from conftest import make_env

    root = tmp_path / "cuda-12.1"
    (root / "bin").mkdir(parents=True)
    prefix = make_env(tmp_path / "env")
    ch = Changes(scalars={"CUDA_PATH": str(root), "CUDA_HOME": str(root)}, prepend={"PATH": [str(root / "bin")]})
    hooks.write_hooks(str(prefix), ch, "12.1")
    seen = []

    def program(args, env):
        seen.append((args, env.get("CUDASWITCH_APPLIES")))
        return code

    text = (hooks_dir() / "powershell.ps1").read_text(encoding="utf-8")
    got = ps.run(text, {"PATH": "/usr/bin", "CONDA_PREFIX": str(prefix)}, False, call="cudaswitch",
                 args=["use", "12.1"], programs={"cudaswitch": program})
    assert seen == [(["use", "12.1"], "1")]
    assert got.env["CUDA_HOME"] == str(root) and got.env["PATH"] == f"{root}/bin:/usr/bin"
    assert "CUDASWITCH_APPLIES" not in got.env and got.variables["lastexitcode"] == code
    assert got.output == [] and not [v for v in got.variables if v.startswith("__cs")]
