"""`use` runs every hook it wrote in every real shell of its kind here (switching/verify.py): bash, zsh, dash, fish
and tcsh for real, cmd.exe under wine. A hook with one broken line (the test seam of tests/seams.py) is caught,
named and removed; start states with every kind of record (an earlier switch, "found unset, unset it again") give
what the plan says in every shell; the smoke test runs in the environment the real shell left."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

import winfiles
from conftest import make_env, require_tool, run_cli
from cudaswitch.core.system import System
from cudaswitch.switching import hookfiles, verify
from cudaswitch.switching.activation import Changes
from shell_driver import clean_environ

POSIX = ("bash", "zsh", "dash", "fish", "tcsh")
HOOK_OF = {"bash": "sh", "zsh": "sh", "dash": "sh", "fish": "fish", "tcsh": "csh"}


@pytest.fixture
def cli_env(clean_env, real_trees):
    return dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))


def _hooks(prefix):
    return sorted(str(p.relative_to(prefix)) for p in (Path(prefix) / "etc" / "conda").rglob("cudaswitch.*"))


def test_use_runs_the_hooks_in_every_shell_here(cli_env, tmp_path):
    for sh in POSIX:
        require_tool(sh)
    prefix = make_env(tmp_path / "envs" / "my env (x86)")
    proc = run_cli(["use", "12.9", "-p", str(prefix), "--no-smoke"], cli_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Hooks run in bash, zsh, dash, fish, tcsh: each left what the switch plans" in proc.stdout
    if not shutil.which("pwsh"):
        assert "Not checked (not installed here): pwsh." in proc.stdout
    assert len(_hooks(prefix)) == 10
    quiet = run_cli(["use", "12.9", "-p", str(prefix), "--no-smoke", "--no-verify"], cli_env)
    assert quiet.returncode == 0 and "Hooks not run in any shell (--no-verify)." in quiet.stdout
    assert "Hooks run in" not in quiet.stdout


@pytest.mark.parametrize("key", ["sh", "fish", "csh"])
def test_a_broken_hook_is_named_removed_and_use_fails(cli_env, tmp_path, key):
    """One corrupted line in one shell's hook: `use` names each shell that runs it and the variable, removes that
    kind's two files, keeps the others, and exits non-zero."""
    shells = [s for s, k in HOOK_OF.items() if k == key]
    for sh in shells:
        require_tool(sh)
    prefix = make_env(tmp_path / "envs" / "env")
    proc = run_cli(["use", "12.9", "-p", str(prefix), "--no-smoke"], dict(cli_env, CUDASWITCH_FAULT=f"corrupt@hook:{key}"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    for sh in shells:
        assert f"cudaswitch: error: the {key} hook disagrees with the switch in {sh} after activation: PATH entry 1 " \
               f"is " in proc.stderr, proc.stderr
    assert "-corrupted" in proc.stderr and f"cudaswitch.{key}" in proc.stderr and "removed" in proc.stderr
    left = _hooks(prefix)
    assert not [p for p in left if p.endswith("." + key)] and len(left) == 8
    assert "Hooks run in " in proc.stdout  # the other shells were checked and are named
    assert "Takes effect at the next activation" not in proc.stdout  # not in the shells whose hook is gone
    assert not any(f" {sh}," in proc.stdout.split("Hooks run in")[1].split(":")[0] for sh in shells)


def _posix_system(environ):
    return System(os="linux", environ=environ, python_paths=[])


def _present(names):
    out = []
    for sh in verify.LINUX_SHELLS:
        if sh.name in names:
            out.append((sh, require_tool(sh.program)))
    return out


def _changes(root, ld=True):
    ch = Changes(scalars={"CUDA_PATH": root, "CUDA_HOME": root}, prepend={"PATH": [root + "/bin"]})
    if ld:
        ch.prepend["LD_LIBRARY_PATH"] = [root + "/lib64"]
    return ch


OLD = "/usr/local/cuda-11.3"
# start states a shell may be in when `use` runs (after conda activate): (environment additions, with LD?)
STARTS = {
    "plain": ({}, True),
    "empty-scalars": ({"CUDA_HOME": "", "CUDA_PATH": ""}, True),
    "earlier-switch": ({"PATH": f"{OLD}/bin:ENV/bin:/usr/bin:/bin", "_CUDASWITCH_ADDED_PATH": f"{OLD}/bin",
                        "CUDA_HOME": OLD, "_CUDASWITCH_SAVED_CUDA_HOME": "1", "_CUDASWITCH_OLD_CUDA_HOME": "/mine",
                        "CUDA_PATH": OLD, "_CUDASWITCH_SAVED_CUDA_PATH": "1"}, True),
    # "found unset, unset it again" (HL4): LD_LIBRARY_PATH holds only an earlier hook's entry, which had found it
    # unset; with LD the record stays, without LD the variable goes
    "found-unset-ld": ({"LD_LIBRARY_PATH": f"{OLD}/lib64", "_CUDASWITCH_ADDED_LD_LIBRARY_PATH": f"{OLD}/lib64",
                        "_CUDASWITCH_UNSET_LD_LIBRARY_PATH": "1"}, True),
    "found-unset-no-ld": ({"LD_LIBRARY_PATH": f"{OLD}/lib64", "_CUDASWITCH_ADDED_LD_LIBRARY_PATH": f"{OLD}/lib64",
                           "_CUDASWITCH_UNSET_LD_LIBRARY_PATH": "1"}, False),
    "found-unset-but-user-added": ({"LD_LIBRARY_PATH": f"/mine:{OLD}/lib64",
                                    "_CUDASWITCH_ADDED_LD_LIBRARY_PATH": f"{OLD}/lib64",
                                    "_CUDASWITCH_UNSET_LD_LIBRARY_PATH": "1"}, False),
    "nvidia-installer": ({"PATH": "ENV/bin:/usr/bin:/bin:ROOT/bin:/usr/local/cuda-11.3/bin"}, True),
    "empty-path-entry": ({"PATH": "ENV/bin::/usr/bin:/bin", "LD_LIBRARY_PATH": "/x::/y"}, True),
}


@pytest.mark.parametrize("start", sorted(STARTS))
def test_every_shell_gives_the_plan_from_every_start(tmp_path, start):
    """The model (activation.activated/deactivated) against the real hooks in every POSIX-family shell, records
    included, from starts with every kind of record: the check `use` runs, here with states a user's shell may
    be in."""
    present = _present(POSIX)
    root = str(tmp_path / "cuda 12.9 (x86) & 'q' 环境")
    os.makedirs(root + "/bin")
    prefix = str(make_env(tmp_path / "env A"))
    extra, ld = STARTS[start]
    ch = _changes(root, ld)
    hookfiles.write_hooks(prefix, ch, "12.9")
    env = clean_environ(PATH=f"{prefix}/bin:/usr/bin:/bin", CONDA_PREFIX=prefix)
    env.update({k: v.replace("ENV", prefix).replace("ROOT", root) for k, v in extra.items()})
    result = verify.verify(prefix, ch, env, [prefix + "/bin"], present)
    assert [c.status for c in result.checks] == ["ok"] * len(present), \
        [(c.shell, c.status, c.note, [d.detail for d in c.differences]) for c in result.checks]
    for (sh, _), c in zip(present, result.checks):  # what the smoke test gets is the plan, entry for entry
        assert verify.compare("activate", verify.plan_for(sh, ch, env), c.environ, sh) == []


def test_a_deactivate_hook_that_forgets_a_restore_is_caught(tmp_path):
    """Every variable the activate hook saves must come back on deactivate: a deactivate hook without its
    CUDA_HOME restore (one line gone) is named in each shell."""
    present = _present(POSIX)
    root = str(tmp_path / "cuda")
    os.makedirs(root + "/bin")
    prefix = str(make_env(tmp_path / "env"))
    ch = _changes(root)
    hookfiles.write_hooks(prefix, ch, "12.9")
    for key, line in (("sh", "_cs_restore CUDA_HOME"), ("fish", "__cs_restore CUDA_HOME"),
                      ("csh", '        setenv CUDA_HOME "$_CUDASWITCH_OLD_CUDA_HOME"')):
        hook = hookfiles.hook_path(prefix, "deactivate", hookfiles.SHELLS[key])
        text = hook.read_text()
        assert line in text, (key, text)
        hook.write_text(text.replace(line, "        true" if key == "csh" else "true"))
    env = clean_environ(PATH=f"{prefix}/bin:/usr/bin:/bin", CONDA_PREFIX=prefix, CUDA_HOME="/old")
    result = verify.verify(prefix, ch, env, [prefix + "/bin"], present)
    for c in result.checks:
        assert c.status == "differs" and any(d.phase == "deactivate" and d.var == "CUDA_HOME" for d in c.differences), c
    assert len(result.removed) == 6


def test_shells_not_installed_are_named_and_a_foreign_shell_is_not_run(tmp_path):
    system = _posix_system({"PATH": str(tmp_path)})
    present, missing = verify.shells_here(system)
    assert present == [] and [s.name for s in missing] == [s.name for s in verify.LINUX_SHELLS]
    lines, errors = verify.report_lines(verify.Verification([verify.ShellCheck(s.name, s.hook, "not installed")
                                                             for s in missing]))
    assert errors == [] and [str(x) for x in lines] == [
        "Not checked (not installed here): bash, zsh, dash, fish, tcsh, pwsh."]


def test_the_smoke_environment_is_the_real_shells(tmp_path, monkeypatch):
    """What the smoke test runs in comes from the first shell verified (its own export of every variable), and
    from the first shell that ran when none agreed, so a hook that breaks PATH shows there."""
    present = _present(("bash", "fish"))
    root = str(tmp_path / "cuda")
    os.makedirs(root + "/bin")
    prefix = str(make_env(tmp_path / "env"))
    ch = _changes(root)
    hookfiles.write_hooks(prefix, ch, "12.9")
    env = clean_environ(PATH=f"{prefix}/bin:/usr/bin:/bin", CONDA_PREFIX=prefix)
    good = verify.verify(prefix, ch, env, [prefix + "/bin"], present).environ()
    assert good["PATH"].split(":")[:2] == [root + "/bin", prefix + "/bin"] and good["CUDA_HOME"] == root
    monkeypatch.setenv("CUDASWITCH_FAULT", "corrupt@hook:sh,corrupt@hook:fish")  # the seam conftest turned on
    hookfiles.write_hooks(prefix, ch, "12.9")
    bad = verify.verify(prefix, ch, env, [prefix + "/bin"], present)
    assert not bad.ok and bad.environ()["PATH"].startswith(root + "/bin-corrupted:")


def test_the_smoke_test_fails_in_an_environment_whose_hook_broke_path(tmp_path, real_trees):
    """run_smoke with the environment a real shell left: a PATH without the toolkit in front is a failure
    (SWITCH_NOT_IN_EFFECT), whatever torch does."""
    from cudaswitch.checks.smoke import run_smoke
    from cudaswitch.discovery.environment import CondaEnv
    from cudaswitch.discovery.toolkits import discover

    system = System(os="linux", environ=dict(os.environ, CUDASWITCH_SEARCH_PATH=str(real_trees)), python_paths=[])
    tk = next(t for t in discover(system).toolkits if t.version.startswith("12.9"))
    prefix = make_env(tmp_path / "env")
    (prefix / "bin").mkdir()
    os.symlink(sys.executable, prefix / "bin" / "python")
    env = CondaEnv(name="env", prefix=str(prefix), is_base=False)
    broken = dict(os.environ, PATH=f"{tk.root}/bin-corrupted:/usr/bin", CUDA_HOME=tk.root, CUDA_PATH=tk.root)
    report = run_smoke(env, system, toolkit=tk, environ=broken, cpu_ok=True, timeout=120)
    assert report.status == "fail" and report.code == "SWITCH_NOT_IN_EFFECT", report.to_json()
    fine = dict(broken, PATH=f"{tk.root}/bin:/usr/bin")
    assert run_smoke(env, system, toolkit=tk, environ=fine, cpu_ok=True, timeout=120).code != "SWITCH_NOT_IN_EFFECT"


# ---- cmd.exe under wine -------------------------------------------------------------------------------------------

def z(local) -> str:
    return "Z:" + str(local).replace("/", "\\")


@pytest.fixture(scope="module")
def wine():
    import nvidia_wheels
    import subprocess

    exe = require_tool("wine")
    prefix = nvidia_wheels.cache_dir() / "wineprefix"
    env = clean_environ(WINEDEBUG="-all", WINEPREFIX=str(prefix), WINEDLLOVERRIDES="mscoree,mshtml=")
    server = shutil.which("wineserver")
    if server:
        subprocess.run([server, "-p30"], env=env, check=False)
    return exe, env


def _wine_run(wine_env):
    def run(argv, env, timeout):
        r = winfiles.run_wine(argv, dict(wine_env), timeout=timeout, merged=False)
        import subprocess
        return subprocess.CompletedProcess(argv, r.returncode, r.stdout.encode("latin-1"), r.stderr.encode("latin-1"))
    return run


@pytest.mark.parametrize("corrupt", [False, True], ids=["as-written", "one-line-broken"])
def test_cmd_hook_is_run_by_cmd_under_wine(wine, tmp_path, corrupt, monkeypatch):
    exe, wenv = wine
    tk = tmp_path / "NVIDIA GPU Computing Toolkit" / "CUDA" / "v11.8"
    for sub in ("bin", "libnvvp"):
        (tk / sub).mkdir(parents=True)
    root = z(tk)
    ch = Changes(scalars={"CUDA_PATH": root, "CUDA_HOME": root}, prepend={"PATH": [root + "\\bin", root + "\\libnvvp"]})
    local = make_env(tmp_path / "env A (x86) & co")
    if corrupt:
        monkeypatch.setenv("CUDASWITCH_FAULT", "corrupt@hook:bat")  # the seam conftest turned on
    hookfiles.write_hooks(str(local), ch, "11.8", windows=True)
    prefix = z(local)
    env_bin = prefix + "\\Library\\bin"
    start = {"PATH": f"{env_bin};C:\\windows\\system32;C:\\windows;{root}\\bin", "CONDA_PREFIX": prefix,
             "CUDA_PATH": r"C:\old cuda (x86) & co", "_CUDASWITCH_ADDED_PATH": r"C:\gone\bin\;"[:-1]}
    shell = verify.WINDOWS_SHELLS[0]
    check = verify.check_shell(shell, "cmd", str(local), ch, start, [env_bin], tmp_path, run=_wine_run(wenv),
                               spell=lambda p: z(p) if p.startswith("/") else p, launcher=[exe], timeout=120)
    if not corrupt:
        assert check.status == "ok", (check.note, [d.detail for d in check.differences])
        assert check.environ["PATH"].split(";")[:2] == [root + "\\bin\\", root + "\\libnvvp\\"]
    else:
        assert check.status == "differs" and check.differences[0].var == "PATH", check
        assert "-corrupted" in check.differences[0].detail


def test_without_the_systems_env_a_python_child_dumps(tmp_path, monkeypatch):
    """Where no trusted `env` is found, each shell's state comes from a Python child (JSON): the same result."""
    monkeypatch.setattr(verify, "ENV_PROGRAMS", ())
    present = _present(("bash", "fish", "tcsh"))
    root = str(tmp_path / "cuda")
    os.makedirs(root + "/bin")
    prefix = str(make_env(tmp_path / "env"))
    ch = _changes(root)
    hookfiles.write_hooks(prefix, ch, "12.9")
    env = clean_environ(PATH=f"{prefix}/bin:/usr/bin:/bin", CONDA_PREFIX=prefix, CUDA_HOME="/a 'b' \"c\"")
    result = verify.verify(prefix, ch, env, [prefix + "/bin"], present)
    assert [c.status for c in result.checks] == ["ok"] * 3, [(c.shell, c.note, c.differences) for c in result.checks]


def test_a_hook_the_shell_cannot_run_fails_and_a_shell_others_could_replace_is_not_run(tmp_path):
    """dash stops at a syntax error in a sourced file (bash goes on, with nothing switched: it disagrees)."""
    present = _present(("dash",))
    root = str(tmp_path / "cuda")
    os.makedirs(root + "/bin")
    prefix = str(make_env(tmp_path / "env"))
    ch = _changes(root)
    hookfiles.write_hooks(prefix, ch, "12.9")
    act = hookfiles.hook_path(prefix, "activate", hookfiles.SHELLS["sh"])
    act.write_text(act.read_text().replace("_cs_root=", "if then _cs_root=", 1))  # a syntax error
    env = clean_environ(PATH=f"{prefix}/bin:/usr/bin:/bin", CONDA_PREFIX=prefix)
    result = verify.verify(prefix, ch, env, [prefix + "/bin"], present)
    (check,) = result.checks
    assert check.status == "failed" and "Syntax error" in check.note, check
    _, errors = verify.report_lines(result)
    assert str(errors[0]).startswith("the sh hook failed in dash: it exited with 2 before the hooks had run: ")
    assert not act.exists()
    if os.geteuid() == 0:  # root runs no program another user could have replaced
        shared = tmp_path / "shared"
        shared.mkdir()
        shared.chmod(0o777)
        copy = shared / "bash"
        shutil.copy(present[0][1], copy)
        hookfiles.write_hooks(prefix, ch, "12.9")
        result = verify.verify(prefix, ch, env, [prefix + "/bin"], [(present[0][0], str(copy))])
        assert result.checks[0].status == "refused" and "writable by every user" in result.checks[0].note
        assert result.ok and act.exists()


def test_the_powershell_and_cmd_drivers_are_well_formed():
    """No PowerShell runs here: the script `use` hands powershell.exe and pwsh parses with a real PowerShell
    grammar, dot-sources each hook inside a function (as conda's module does) and passes the dump to Python
    without a double quote, which Windows PowerShell 5.1's argument passing would strip; the
    cmd.exe script follows the batch rules (CRLF, every line `@`, set "X=..." only)."""
    import pwsh_subset

    start = {"PATH": r"C:\envs\A\Library\bin;C:\Windows", "CONDA_PREFIX": r"C:\envs\A", "CUDA_PATH": r"C:\o 100%"}
    after = {"PATH": r"C:\Windows"}
    act, deact = r"C:\envs\A\etc\conda\activate.d\cudaswitch.ps1", r"C:\envs\A\etc\conda\deactivate.d\cudaswitch.ps1"
    ext, data = verify.driver(verify.WINDOWS_SHELLS[1], act, deact, r"C:\Program Files\Py'thon\python.exe", start,
                              after)
    text = data.decode("ascii")
    assert ext == "ps1" and not pwsh_subset.parse(text).has_error
    assert "function __cudaswitch_verify([string]$hook) { . $hook }" in text and f"__cudaswitch_verify '{act}'" in text
    assert '"' not in verify._DUMP and "Py''thon" in text
    ext, data = verify.driver(verify.WINDOWS_SHELLS[0], act.replace("ps1", "bat"), deact.replace("ps1", "bat"), "",
                              start, after)
    lines = data.decode("ascii").split("\r\n")
    assert ext == "bat" and lines[-1] == "" and all(ln.startswith("@") for ln in lines[:-1])
    assert r'@set "CUDA_PATH=C:\o 100%%"' in lines and r'@set "PATH=C:\Windows"' in lines


from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

_E = st.sampled_from(["/a", "/b b", "ROOT/bin", "/o/bin", "", "ROOT/lib64", "/o/lib64"])
# (no empty element in LD_LIBRARY_PATH: where it would be all that is left besides our entry, the sh hooks drop it
# and the csh hook keeps it as '.'; PATH always holds other entries)
_L = st.one_of(st.none(), st.just(""), st.lists(_E.filter(bool), max_size=4).map(":".join))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.lists(_E, max_size=4), ld=_L, rec=st.one_of(st.none(), st.sampled_from(["/o/bin", "ROOT/bin"])),
       ld_rec=st.one_of(st.none(), st.just("/o/lib64")), unset=st.booleans(), with_ld=st.booleans(),
       home=st.one_of(st.none(), st.just(""), st.just("/o")), saved=st.booleans())
def test_the_plan_is_what_every_shell_does_from_any_start(tmp_path_factory, path, ld, rec, ld_rec, unset, with_ld,
                                                           home, saved):
    """Property: from any mix of entries and records, the real hooks leave what activation.activated and
    activation.deactivated say, records included."""
    present = _present(POSIX)
    tmp = tmp_path_factory.mktemp("prop")
    root = str(tmp / "cuda")
    os.makedirs(root + "/bin")
    prefix = str(make_env(tmp / "env"))
    ch = _changes(root, with_ld)
    hookfiles.write_hooks(prefix, ch, "12.9")

    def r(v):
        return v.replace("ROOT", root) if v is not None else None
    env = clean_environ(PATH=":".join([prefix + "/bin"] + [r(e) for e in path] + ["/usr/bin", "/bin"]),
                        CONDA_PREFIX=prefix, LD_LIBRARY_PATH=r(ld), CUDA_HOME=home, _CUDASWITCH_ADDED_PATH=r(rec),
                        _CUDASWITCH_ADDED_LD_LIBRARY_PATH=ld_rec, _CUDASWITCH_UNSET_LD_LIBRARY_PATH="1" if unset else None,
                        _CUDASWITCH_SAVED_CUDA_HOME="1" if saved else None)
    result = verify.verify(prefix, ch, env, [prefix + "/bin"], present)
    assert result.ok, [(c.shell, [(d.phase, d.detail) for d in c.differences], c.note) for c in result.checks]


@pytest.mark.parametrize("var, entry", [("PATH", "/nvvm/bin"), ("LD_LIBRARY_PATH", "/lib64")])
def test_a_wrong_later_entry_or_a_wrong_library_folder_is_caught(tmp_path, var, entry):
    """The check compares every entry of every list the hook edits: an activate hook that spells its second PATH
    entry wrong, or its LD_LIBRARY_PATH entry (a program that loads the wrong libraries), is named in each shell
    with the entry, and its files are removed."""
    present = _present(POSIX)
    root = str(tmp_path / "cuda")
    os.makedirs(root + "/bin")
    prefix = str(make_env(tmp_path / "env"))
    ch = _changes(root)
    ch.prepend["PATH"].append(root + "/nvvm/bin")
    hookfiles.write_hooks(prefix, ch, "12.9")
    for shell in ("sh", "fish", "csh"):
        hook = hookfiles.hook_path(prefix, "activate", hookfiles.SHELLS[shell])
        text = hook.read_text()
        assert root + entry in text, (shell, text)
        hook.write_text(text.replace(root + entry, root + entry + "-wrong"))
    env = clean_environ(PATH=f"{prefix}/bin:/usr/bin:/bin", CONDA_PREFIX=prefix, LD_LIBRARY_PATH="/mine")
    result = verify.verify(prefix, ch, env, [prefix + "/bin"], present)
    n = 2 if var == "PATH" else 1
    for c in result.checks:
        details = [d.detail for d in c.differences if d.phase == "activate" and d.var == var]
        assert c.status == "differs" and details == [f"{var} entry {n} is {root + entry + '-wrong'!r}, expected "
                                                     f"{root + entry!r}"], (c.shell, c.differences)
    assert len(result.removed) == 6
