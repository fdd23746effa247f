"""cudaswitch's PowerShell hooks in the context conda really runs them in: conda's own module (Conda.psm1, byte for
byte in tests/data/conda_psm1) calls `conda shell.powershell activate` (the real conda) and passes its text to
`Invoke-Expression` inside `Enter-CondaEnvironment`, a function of the module, so the hook's variables land in that
function's scope (whose parent is the module's scope, then the global one), not the caller's. What the hooks must
keep from activate to deactivate therefore has to live in `$Env:`; tests/pwsh_subset.py's `Session` models that
scoping (and refuses `$script:`/`$private:` in a hook, whose meaning depends on it), and here runs activate and
deactivate through conda's two functions from a prompt that holds user variables of the hooks' names."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import pwsh_subset as ps
from cudaswitch.switching import hookfiles as hooks
from cudaswitch.switching.activation import Changes, activated, deactivated
from cudaswitch.switching.startup import hooks_dir

PSM1 = (Path(__file__).resolve().parents[1] / "data" / "conda_psm1" / "Conda.psm1").read_text(encoding="utf-8")
ROOT = "/opt/CUDA v11.8 'q' [x] 环境"
CHANGES = Changes(scalars={"CUDA_PATH": ROOT, "CUDA_HOME": ROOT},
                  prepend={"PATH": [ROOT + "/bin"], "LD_LIBRARY_PATH": [ROOT + "/lib64"]})
# the user's own variables at the prompt, named as the hooks' and the integration's are
USER = {"__cs_root": "mine", "__cs_sep": "mine", "name": "mine", "sep": "mine"}


class _Conda(dict):
    """Every program the module starts is the real conda (`$Env:CONDA_EXE $Env:_CE_M $Env:_CE_CONDA`, whichever
    CONDA_EXE conda's own output set): its stdout, line by line."""

    def __init__(self, conda, extra):
        super().__init__()
        self.conda, self.extra, self.calls = conda, extra, []

    def __contains__(self, name):
        return True

    def __getitem__(self, name):
        def run(args, env):
            args = args[2:] if args[:2] == ["-m", "conda"] else args
            proc = subprocess.run([*self.conda.argv, *args], env=self.conda.env(self.extra, env.as_dict()),
                                  capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
            assert proc.returncode == 0, proc.stderr
            self.calls.append((args, proc.stdout))
            return 0, proc.stdout.splitlines()
        return run


def _conda_lines(text):
    """conda's PowerShell output as (name, value-or-None) assignments around the one dot-sourced hook, read as
    conda's PowerShellActivator writes them (`$Env:X = "v"`, `$Env:X = $null`, `. "hook"`)."""
    before, after, hook = [], [], None
    for line in text.splitlines():
        m = re.fullmatch(r'\$Env:(\w+) = (?:"(.*)"|\$null)', line)
        if m:
            (after if hook else before).append((m.group(1), m.group(2)))
        elif line.startswith(". "):
            hook = line[3:-1]
    return before, hook, after


def _apply(env, lines, empty_is_unset):
    out = dict(env)
    for k, v in lines:
        if v is None or (v == "" and empty_is_unset):
            out.pop(k, None)
        else:
            out[k] = v
    return out


@pytest.fixture(scope="module")
def conda_env(real_conda, tmp_path_factory):
    """One real conda environment with cudaswitch's hooks, HOME and CONDARC in the test's folder."""
    base = tmp_path_factory.mktemp("condamodule")
    (base / "home").mkdir()
    (base / "condarc").write_text("auto_activate_base: false\nchangeps1: false\nnotify_outdated_conda: false\n")
    extra = {"HOME": str(base / "home"), "CONDARC": str(base / "condarc"), "CONDA_SOLVER": "classic"}
    prefix = str(real_conda.create(base / "envs" / "A", env=extra))
    hooks.write_hooks(prefix, CHANGES, "11.8")
    return real_conda, prefix, extra


@pytest.mark.parametrize("version", ["5.1", "7.5"])
def test_the_hooks_run_inside_condas_module_function(conda_env, version):
    real_conda, prefix, extra = conda_env
    empty = version < "7.5"
    exe = real_conda.argv
    start = {"PATH": "/usr/bin:/bin", "CUDA_PATH": "/opt/old cuda", "CONDA_EXE": exe[0], **extra}
    if exe[1:] == ["-m", "conda"]:
        start.update(_CE_M="-m", _CE_CONDA="conda")
    conda = _Conda(real_conda, extra)
    session = ps.Session(start, windows=False, version=version, variables=USER, programs=conda,
                         isdir=lambda p: True)
    session.import_module("Conda", PSM1)

    assert session.call("Conda", "Enter-CondaEnvironment", Name=prefix) == []  # nothing printed
    ((args, text),) = conda.calls
    assert args == ["shell.powershell", "activate", prefix]
    before, hook, after = _conda_lines(text)
    assert hook == f"{prefix}/etc/conda/activate.d/cudaswitch.ps1" and not after
    want = activated(_apply(start, before, empty), CHANGES, ":", empty)
    assert session.env == want
    assert session.env["PATH"].split(":")[:2] == [ROOT + "/bin", prefix + "/bin"]
    # the hook's variables were in Enter-CondaEnvironment's scope and are gone; conda's own are as conda set them;
    # the module's scope and the user's prompt are untouched
    assert sorted(session.last_scope) == ["activatecommand", "args", "help", "name", "stack"]
    assert session.last_scope["name"] == prefix
    assert session.modules["Conda"][0] == {}
    assert {k: v for k, v in session.variables.items() if k != "lastexitcode"} == USER

    activated_env = session.env
    assert session.call("Conda", "Exit-CondaEnvironment") == []
    args, text = conda.calls[-1]
    # then $Arg, unbound: '', which 7.3+ passes and 5.1 drops
    assert args == ["shell.powershell", "deactivate"] + ([""] if version >= "7.3" else [])
    before, hook, after = _conda_lines(text)
    assert hook == f"{prefix}/etc/conda/deactivate.d/cudaswitch.ps1"
    mid = _apply(activated_env, before, empty)
    want = _apply(deactivated(mid, ":", prefix + "/bin", empty), after, empty)
    assert session.env == want
    # back where the user was: conda's own PATH without our entry (conda keeps its condabin), the scalars, no record
    conda_path = dict(before)["PATH"].split(":")
    assert ROOT + "/bin" in conda_path  # conda computed it from the PATH it found, our entry included
    assert session.env["PATH"].split(":") == [e for e in conda_path if e != ROOT + "/bin"]
    assert session.env["CUDA_PATH"] == "/opt/old cuda"
    assert "CUDA_HOME" not in session.env and not [k for k in session.env if k.startswith("_CUDASWITCH_")]
    assert sorted(session.last_scope) == ["arg", "args", "deactivatecommand", "help"]
    assert {k: v for k, v in session.variables.items() if k != "lastexitcode"} == USER


def test_a_hook_that_kept_its_state_in_a_variable_loses_it_in_condas_scope(tmp_path):
    """The model is what makes the difference: a hook that remembered the old CUDA_PATH in `$script:` (conda's
    module scope, shared by every env and hook) or in a plain variable (Enter-CondaEnvironment's scope, gone at
    return) is refused by the checker, and run as conda runs it, the plain one is gone for the deactivate hook."""
    act = tmp_path / "act.ps1"
    act.write_text("$__cs_old = $Env:CUDA_PATH\n$Env:CUDA_PATH = 'new'\n", encoding="utf-8")
    deact = tmp_path / "deact.ps1"
    deact.write_text("$Env:CUDA_PATH = $__cs_old\n", encoding="utf-8")
    session = ps.Session({"CUDA_PATH": "old"}, windows=True)
    session.import_module("M", "function Enter {\n  param([string]$Hook)\n  begin { Invoke-Expression -Command \". '$Hook'\" }\n}")
    session.call("M", "Enter", Hook=str(act))
    assert session.env == {"CUDA_PATH": "new"} and session.last_scope["__cs_old"] == "old"
    with pytest.raises(ps.PsError, match="__cs_old is read before it is assigned"):
        session.call("M", "Enter", Hook=str(deact))
    # dot-sourced at the prompt instead, both would have shared the global scope and "worked"
    flat = ps.Session({"CUDA_PATH": "old"}, windows=True)
    flat.run(f". '{act}'\n. '{deact}'")
    assert flat.env == {"CUDA_PATH": "old"}
    for qualified in ("$script:__cs_old = 1", "$private:__cs_old = 1", "$global:__cs_old = 1"):
        text = qualified + "\nRemove-Variable -Name '__cs_old' -ErrorAction SilentlyContinue"
        assert any("scope qualifier" in p for p in ps.subset_problems(text)), qualified


def test_the_integration_loaded_from_a_function_still_defines_its_functions(tmp_path):
    """A profile that loads the integration file inside a function of its own (`function Init { . $file }; Init`):
    `cudaswitch`, the reconciler and the prompt wrapper are defined global:, so they outlive that function."""
    d = hooks_dir()
    integration = tmp_path / "cudaswitch.ps1"
    integration.write_text((d / "powershell.ps1").read_text(encoding="utf-8") + "\n" +
                           (d / "reconcile.ps1").read_text(encoding="utf-8"), encoding="utf-8")
    session = ps.Session({"PATH": "/usr/bin"}, windows=False)
    session.run(f"function Init {{ if (Test-Path -LiteralPath '{integration}') {{ . '{integration}' }} }}\nInit")
    assert {"cudaswitch", "prompt", "__cudaswitch_reconcile", "__cudaswitch_prompt_before"} <= \
        set(session.it.fscopes[0]), sorted(session.it.fscopes[0])
    assert session.env.get("CUDASWITCH_RECONCILER") == "1"


def test_the_checker_refuses_what_depends_on_the_scope_the_integration_is_loaded_in():
    assert any("not defined global:" in p for p in ps.subset_problems("function cudaswitch { }", hook=False))
    assert any("Set-Item of a function not global:" in p
               for p in ps.subset_problems("Set-Item Function:\\before { 1 }", hook=False))
    assert any("scope qualifier script:" in p for p in ps.subset_problems("$script:x = 1", hook=False))
    assert ps.subset_problems("function global:f { $global:LASTEXITCODE = 1 }", hook=False) == []
