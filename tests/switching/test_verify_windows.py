"""`use`'s check of the cmd.exe hooks (switching/verify.py) as Windows users have it, under wine's real cmd.exe:

- a Chinese Windows (zh_CN, code page 936) with a Chinese account name on PATH: cmd writes `set` in the console's
  code page, not UTF-8; the check must read it so and keep the hooks;
- a Western Windows (wine: batch files read in the OEM code page 850, pipes written in the ANSI 1252) with a
  non-ASCII start value: the driver is written in the code page cmd reads it in;
- `chcp 65001` in the console: cmd's output comes back in UTF-8 (wine needs a console for chcp: a pty);
- cmd started inside a PowerShell session (`conda run`, a build .bat): the start holds PowerShell's records, spelled
  as the NVIDIA installer spells its own adjacent `vX\\bin;vX\\libnvvp` entries, which must stay.

The code pages are passed in as the console of each case has them (verify.console_code_pages() reads them from the
console on Windows); what is tested is that the check writes and reads cmd's bytes in them."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import winfiles
from conftest import make_env, require_tool
from cudaswitch.switching import hookfiles, verify
from cudaswitch.switching.activation import Changes
from test_verify import _wine_run, wine, z  # noqa: F401 (wine: the module's fixture, shared)


def _spell(p: str) -> str:
    return z(p) if p.startswith("/") else p


def _locale(wine_env, lang):
    """wine's Windows locale follows the Unix one: zh_CN gives code page 936, de_DE 850 (OEM) / 1252 (ANSI)."""
    if subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.lower().find(
            lang.lower().replace("utf-8", "utf8")) < 0:
        pytest.fail(f"locale {lang} is not installed (.ci/run makes it with localedef)")
    return dict(wine_env, LANG=lang, LC_ALL=lang)


def _in_console_with_chcp(wine_env, codepage):
    """cmd in a console (a pty: wine's chcp needs one) that ran `chcp N` first, the driver's output redirected to
    files as a pipe would take it."""
    def run(argv, env, timeout):
        with tempfile.TemporaryDirectory(prefix="chcp-") as tmp:
            out, err, outer = Path(tmp) / "out", Path(tmp) / "err", Path(tmp) / "outer.bat"
            outer.write_bytes(f'@chcp {codepage} >nul\r\n@call "{argv[-1]}" >"{z(out)}" 2>"{z(err)}"\r\n'.encode())
            inner = " ".join(f"'{a}'" for a in [*argv[:-1], z(outer)])
            proc = subprocess.run(["script", "-qec", inner, "/dev/null"], env=dict(wine_env), timeout=timeout,
                                  stdin=subprocess.DEVNULL, capture_output=True, check=False)
            return subprocess.CompletedProcess(argv, proc.returncode, out.read_bytes() if out.exists() else b"",
                                               err.read_bytes() if err.exists() else b"")
    return run


def _toolkit(base: Path):
    tk = base / "NVIDIA GPU Computing Toolkit" / "CUDA" / "v11.8"
    for sub in ("bin", "libnvvp"):
        (tk / sub).mkdir(parents=True)
    root = z(tk)
    return root, Changes(scalars={"CUDA_PATH": root, "CUDA_HOME": root},
                         prepend={"PATH": [root + "\\bin", root + "\\libnvvp"]})


def _verify(tmp_path, start_path, run, codepages, env_name="env A", extra=None, ld=False):
    """verify.verify (the code `use` runs) on cmd.exe alone, for hooks written into a fresh environment; `ld`: the
    switch also prepends to LD_LIBRARY_PATH."""
    root, ch = _toolkit(tmp_path)
    if ld:
        ch.prepend["LD_LIBRARY_PATH"] = [root + "\\lib\\x64"]
    local = make_env(tmp_path / env_name)
    hookfiles.write_hooks(str(local), ch, "11.8", windows=True)
    prefix = z(local)
    env_bin = prefix + "\\Library\\bin"
    start = {"PATH": f"{env_bin};" + start_path.replace("ROOT", root), "CONDA_PREFIX": prefix, **(extra or {})}
    result = verify.verify(str(local), ch, start, [env_bin], [(verify.WINDOWS_SHELLS[0], "cmd")], run=run,
                           spell=_spell, launcher=[require_tool("wine")], timeout=180, codepages=codepages)
    hooks = [hookfiles.hook_path(str(local), phase, hookfiles.SHELLS["bat"]) for phase in ("activate", "deactivate")]
    return result, root, hooks


def _ok(result, hooks):
    (check,) = result.checks
    assert check.status == "ok", (check.note, [d.detail for d in check.differences])
    assert result.ok and not result.removed and all(h.exists() for h in hooks)
    out, err = verify.report_lines(result)
    assert not err and str(out[0]).startswith("Hooks run in cmd.exe: each left what the switch plans")
    return check


CHINESE_PATH = r"C:\Users\张三\AppData\Local\Microsoft\WindowsApps;C:\windows\system32;C:\windows"


def test_a_chinese_account_on_path_is_verified_and_the_hooks_are_kept(wine, tmp_path):
    """zh_CN: `set` prints 张三 as D5 C5 C8 FD (code page 936); read as UTF-8 it would differ and the hooks go."""
    exe, wenv = wine
    result, root, hooks = _verify(tmp_path, CHINESE_PATH, _wine_run(_locale(wenv, "zh_CN.UTF-8")), (936, 936),
                                  env_name="用户 张三 env")
    check = _ok(result, hooks)
    assert r"C:\Users\张三\AppData\Local\Microsoft\WindowsApps" in check.environ["PATH"].split(";")
    assert check.environ["PATH"].split(";")[:2] == [root + "\\bin\\", root + "\\libnvvp\\"]


def test_read_as_utf8_the_chinese_output_differs(wine, tmp_path):
    """The same run decoded as the check did before (UTF-8): the account name is U+FFFD and the check disagrees —
    the proof that the test above depends on the code page."""
    exe, wenv = wine
    result, _, hooks = _verify(tmp_path, CHINESE_PATH, _wine_run(_locale(wenv, "zh_CN.UTF-8")), (936, 65001))
    (check,) = result.checks
    assert check.status == "differs" and "\ufffd" in check.differences[0].detail
    assert result.removed == hooks


def test_a_western_console_with_a_non_ascii_start_value(wine, tmp_path):
    """de_DE under wine: batch files read in 850, output in 1252. CUDA_PATH and a PATH entry hold ü and é."""
    exe, wenv = wine
    extra = {"CUDA_PATH": r"C:\Programme\Jürgen's CUDA", "CUDA_HOME": r"C:\Café"}
    result, root, hooks = _verify(tmp_path, r"C:\Users\Jürgen\bin;C:\windows", _wine_run(_locale(wenv, "de_DE.UTF-8")),
                                  (850, 1252), extra=extra)
    check = _ok(result, hooks)
    assert check.environ["_CUDASWITCH_OLD_CUDA_PATH"] == r"C:\Programme\Jürgen's CUDA"
    assert r"C:\Users\Jürgen\bin" in check.environ["PATH"].split(";")


def test_after_chcp_65001_the_output_is_read_as_utf8(wine, tmp_path):
    """A console switched to UTF-8 (`chcp 65001`): cmd writes `set` in UTF-8 (wine still reads the batch file in
    the OEM code page, 850)."""
    exe, wenv = wine
    if not shutil.which("script"):
        pytest.fail("util-linux's script (a pty for wine's console) is missing")
    result, _, hooks = _verify(tmp_path, r"C:\Users\Jürgen\bin;C:\windows",
                               _in_console_with_chcp(_locale(wenv, "de_DE.UTF-8"), 65001), (850, 65001))
    check = _ok(result, hooks)
    assert r"C:\Users\Jürgen\bin" in check.environ["PATH"].split(";")


def test_cmd_inside_powershell_keeps_nvidias_adjacent_entries(wine, tmp_path):
    """The NVIDIA installer puts `vX\\bin;vX\\libnvvp` on PATH; a PowerShell session that activated the env put the
    same text in front and recorded it. cmd started there (verify's start holds PowerShell's records) keeps the
    installer's copies and takes out only its own."""
    exe, wenv = wine
    result, root, hooks = _verify(tmp_path, r"C:\windows\system32;ROOT\bin;ROOT\libnvvp;C:\windows", _wine_run(wenv),
                                  (437, 1252))
    check = _ok(result, hooks)
    path = check.environ["PATH"].split(";")
    assert path[:2] == [root + "\\bin\\", root + "\\libnvvp\\"]
    assert path.count(root + "\\bin") == 2 and path.count(root + "\\libnvvp") == 2  # PowerShell's and NVIDIA's
    assert check.environ["_CUDASWITCH_ADDED_PATH"] == f"{root}\\bin\\;{root}\\libnvvp\\"


def test_cmd_hooks_prepend_to_path_only_and_the_check_plans_so(wine, tmp_path):
    """A switch that also prepends to LD_LIBRARY_PATH: cmd.exe's hooks take PATH only (its record's `lists`) and
    leave the list as the PowerShell session it started in left it; the check, planning the same, keeps them (a
    plan in which cmd's hooks edited LD_LIBRARY_PATH would disagree with cmd)."""
    exe, wenv = wine
    result, root, hooks = _verify(tmp_path, r"C:\windows\system32;C:\windows", _wine_run(wenv), (437, 1252), ld=True)
    check = _ok(result, hooks)
    assert check.environ["PATH"].startswith(root + "\\bin\\;")
    assert check.environ["LD_LIBRARY_PATH"] == check.environ["_CUDASWITCH_ADDED_LD_LIBRARY_PATH"] == root + "\\lib\\x64"


def test_cmd_near_the_line_limit_leaves_path_alone_and_the_check_skips(wine, tmp_path):
    """PATH near cmd's 8191-character line limit: the hook warns and leaves the window as it was (the warning is
    its record's `gives_up`); the check reports that warning as a skip and keeps the hooks, instead of calling them
    broken."""
    from cudaswitch.core.shells import CMD_LINE_LIMIT, SHELLS

    exe, wenv = wine
    # the PATH cmd's hook meets (the environment's own entry, then PowerShell's record that the check starts from)
    # exactly 60 characters over the length above which it gives up (the record's values: the limit less twice
    # our entries less 400), whatever the length of the test's folder. Far over it, cmd itself cuts the PATH it is
    # given; a few characters under it the hook goes on, and wine's cmd.exe stops on a page fault (exit 5) before
    # the hooks report, a fault of wine's that made this test depend on the length of its folder.
    root = z(tmp_path / "NVIDIA GPU Computing Toolkit" / "CUDA" / "v11.8")
    ch = Changes(scalars={"CUDA_PATH": root, "CUDA_HOME": root}, prepend={"PATH": [root + "\\bin", root + "\\libnvvp"]})
    bat = SHELLS["bat"]
    longest = int(bat.values(bat, ch, ch.prepend["PATH"], [])["MAXLEN"])
    assert longest == CMD_LINE_LIMIT - 2 * len(f"{root}\\bin\\;{root}\\libnvvp\\") - 400

    def met(path):  # the PATH cmd's hook meets for a start PATH of `path`
        start = {"PATH": z(tmp_path / "env A") + "\\Library\\bin;" + path, "CONDA_PREFIX": z(tmp_path / "env A")}
        return verify.with_other_windows_records(verify.WINDOWS_SHELLS[0], ch, start)["PATH"]

    entries = [rf"C:\some rather long tool folder\number {i:04d}" for i in range(longest // 44)]
    long_path = ";".join(entries) + ";C:\\windows"
    while len(met(long_path)) > longest + 50:
        entries.pop()
        long_path = ";".join(entries) + ";C:\\windows"
    long_path += ";C:\\" + "x" * (longest + 60 - len(met(long_path)) - 4)
    assert len(met(long_path)) == longest + 60
    result, root, hooks = _verify(tmp_path, long_path, _wine_run(wenv), (437, 1252))
    (check,) = result.checks
    assert check.status == "skipped", (check.note, [d.detail for d in check.differences])
    assert check.note.startswith("cudaswitch: warning: PATH left as it is: ")
    assert result.ok and not result.removed and all(h.exists() for h in hooks)
    # the window as the PowerShell session it started in left it: PowerShell's entries and record, none of cmd's
    assert not [e for e in check.environ["PATH"].split(";") if e.endswith("\\")]
    assert check.environ["_CUDASWITCH_ADDED_PATH"] == f"{root}\\bin;{root}\\libnvvp"


def test_every_windows_start_holds_the_other_shells_records(tmp_path):
    """cmd's check starts where PowerShell's hook ran, PowerShell's where cmd's ran; a POSIX shell's as given."""
    root = r"C:\CUDA\v11.8"
    ch = Changes(scalars={"CUDA_PATH": root, "CUDA_HOME": root}, prepend={"PATH": [root + "\\bin"]})
    start = {"PATH": r"C:\envs\A\Library\bin;C:\windows", "CONDA_PREFIX": r"C:\envs\A"}
    cmd, ps, pwsh = verify.WINDOWS_SHELLS
    for_cmd = verify.with_other_windows_records(cmd, ch, start)
    assert for_cmd["_CUDASWITCH_ADDED_PATH"] == root + "\\bin" and for_cmd["PATH"].startswith(root + "\\bin;")
    for sh in (ps, pwsh):
        got = verify.with_other_windows_records(sh, ch, start)
        assert got["_CUDASWITCH_ADDED_PATH"] == root + "\\bin\\" and got["_CUDASWITCH_SAVED_CUDA_PATH"] == "1"
    assert verify.with_other_windows_records(verify.LINUX_SHELLS[0], ch, start) == start
    # cmd's plan from PowerShell's record: that record stays unremoved (it cannot be told from NVIDIA's text)
    plan = verify.plan_for(cmd, ch, for_cmd)
    assert plan["PATH"].split(";") == [root + "\\bin\\", root + "\\bin", r"C:\envs\A\Library\bin", r"C:\windows"]


def test_the_code_pages_name_pythons_codecs():
    assert verify.codec(936) == "gbk" and verify.codec(65001) == "utf-8" and verify.codec(850) == "cp850"
    assert verify.codec(1252) == "cp1252" and verify.codec(99999) == "utf-8"


@pytest.mark.parametrize("code", [0, 1])
def test_the_cmd_wrapper_applies_the_hook_whatever_use_exits_with(wine, tmp_path, code):
    """hooks/cmd.bat (`init cmd`'s wrapper) after `use` exits 0 or 1 (its smoke test failed with the switch kept:
    it has said "Applied to this shell"): the window holds the switch, the exit code is use's, no helper is left.
    (The real command cannot run under wine: a cudaswitch.bat stands in for it, exiting with `code`.)"""
    exe, wenv = wine
    root, ch = _toolkit(tmp_path)
    local = make_env(tmp_path / "env A")
    hookfiles.write_hooks(str(local), ch, "11.8", windows=True)
    repo = Path(__file__).resolve().parents[2]
    shutil.copy(repo / "hooks" / "cmd.bat", tmp_path / "cs.bat")
    stand_in = tmp_path / "bin"
    stand_in.mkdir()
    (stand_in / "cudaswitch.bat").write_bytes(f"@echo use ran with %CUDASWITCH_APPLIES%\r\n@exit /b {code}\r\n"
                                              .encode())
    drv = tmp_path / "drive.bat"
    drv.write_bytes((f'@set "PATH={z(stand_in)};C:\\windows\\system32;C:\\windows"\r\n'
                     f'@set "CONDA_PREFIX={z(local)}"\r\n'
                     f'@call "{z(tmp_path / "cs.bat")}" use 11.8\r\n'
                     '@echo [rc=%ERRORLEVEL%^|%CUDA_PATH%^|%_CS_RC%^|%CUDASWITCH_APPLIES%]\r\n').encode())
    r = winfiles.run_wine([exe, "cmd", "/d", "/c", z(drv)], dict(wenv), timeout=180)
    assert "use ran with 1" in r.stdout, r.stdout
    assert r.stdout.strip().splitlines()[-1] == f"[rc={code}|{root}||]", r.stdout


# ---- PowerShell, in the interpreter (no PowerShell runs here) -----------------------------------------------------

def _interpreted(version, windows, banner=True):
    """A runner that does what the PowerShell driver does, with tests/pwsh_subset.py running the real hook files:
    print the version line (as $PSVersionTable gives it), dot-source activate, dump, set PATH as the driver does,
    drop CONDA_PREFIX, dot-source deactivate, dump."""
    import json
    import re

    import pwsh_subset

    def run(argv, env, timeout):
        script = Path(argv[-1][2:].replace("\\", "/") if argv[-1].startswith("Z:") else argv[-1]).read_text(
            encoding="utf-8-sig")
        act, deact = re.findall(r"^__cudaswitch_verify '((?:[^']|'')*)'$", script, re.M)
        path = re.search(r"^\$Env:PATH = '((?:[^']|'')*)'$", script, re.M).group(1).replace("''", "'")
        def hook(p):
            p = p.replace("''", "'")
            return Path(p[2:].replace("\\", "/") if p.startswith("Z:") else p).read_text(encoding="utf-8-sig")

        first = pwsh_subset.run(hook(act), dict(env), windows, version, isdir=lambda p: True)
        second_env = dict(first.env, PATH=path)
        second_env.pop("CONDA_PREFIX", None)
        second = pwsh_subset.run(hook(deact), second_env, windows, version, isdir=lambda p: True)
        out = (f"{verify.PSVERSION} {version}\n" if banner else "") + \
            f"\n{verify.MARK}{json.dumps(first.env)}\n\n{verify.MARK}{json.dumps(second.env)}\n"
        return subprocess.CompletedProcess(argv, 0, out.encode(), b"")
    return run


def _ps_env(tmp_path, windows):
    local = make_env(tmp_path / "env")
    root = r"C:\CUDA\v11.8" if windows else str(tmp_path / "cuda")
    sep = "\\" if windows else "/"
    ch = Changes(scalars={"CUDA_PATH": root, "CUDA_HOME": root}, prepend={"PATH": [root + sep + "bin"]})
    hookfiles.write_hooks(str(local), ch, "11.8", windows=windows)
    return local, root, ch


@pytest.mark.parametrize("version", ["7.4", "7.5"])
def test_the_pwsh_check_models_the_running_version(tmp_path, version):
    """pwsh 7.0-7.4 delete a variable set to '' (7.5 keeps it): a start with an empty CUDA_HOME gives a different
    record, and the check reads which pwsh ran from $PSVersionTable instead of taking every pwsh for 7.5."""
    local, root, ch = _ps_env(tmp_path, windows=False)
    bindir = str(local / "bin")
    start = {"PATH": f"{bindir}:/usr/bin", "CONDA_PREFIX": str(local), "CUDA_HOME": ""}
    shell = verify.LINUX_SHELLS[-1]
    check = verify.check_shell(shell, "pwsh", str(local), ch, start, [bindir], tmp_path,
                               run=_interpreted(version, False))
    assert check.status == "ok", [d.detail for d in check.differences]
    assert ("_CUDASWITCH_OLD_CUDA_HOME" in check.environ) == (version == "7.5")
    if version == "7.4":  # without the version line the check would take it for 7.5, and disagree
        blind = verify.check_shell(shell, "pwsh", str(local), ch, start, [bindir], tmp_path,
                                   run=_interpreted(version, False, banner=False))
        assert blind.status == "differs" and blind.differences[0].var == "_CUDASWITCH_OLD_CUDA_HOME"


@pytest.mark.parametrize("which", [1, 2], ids=["Windows PowerShell", "pwsh"])
def test_powershell_from_a_cmd_start_takes_out_only_cmds_copies(tmp_path, which):
    """PowerShell started from cmd.exe: the start holds cmd's records (entries with a trailing backslash) and the
    NVIDIA installer's own copy of the same folder; the hook takes out cmd's copy, the installer's stays."""
    local, root, ch = _ps_env(tmp_path, windows=True)
    prefix = z(local)
    env_bin = prefix + "\\Library\\bin"
    start = {"PATH": f"{env_bin};C:\\windows;{root}\\bin", "CONDA_PREFIX": prefix}
    shell = verify.WINDOWS_SHELLS[which]
    given = verify.with_other_windows_records(shell, ch, start)
    assert given["PATH"].startswith(root + "\\bin\\;") and given["_CUDASWITCH_ADDED_PATH"] == root + "\\bin\\"
    check = verify.check_shell(shell, "pwsh", str(local), ch, start, [env_bin], tmp_path, spell=_spell,
                               run=_interpreted("5.1" if which == 1 else "7.5", True), codepages=(437, 437))
    assert check.status == "ok", [d.detail for d in check.differences]
    assert check.environ["PATH"].split(";") == [root + "\\bin", env_bin, "C:\\windows", root + "\\bin"]


# ---- what a Chinese Windows writes on stderr (code page 936), through the check's own reading -------------------

# PowerShell's refusal under the Restricted policy, as a Chinese Windows prints it: the sentence is translated, the
# help topic, the exception type and the error id are not (PowerShell writes CategoryInfo and FullyQualifiedErrorId
# from the error record's untranslated names).
POLICY_ZH = ("无法加载文件 C:\\Users\\张三\\AppData\\Local\\Temp\\verify-powershell.ps1，因为在此系统上禁止运行脚本。"
             "有关详细信息，请参阅 https:/go.microsoft.com/fwlink/?LinkID=135170 中的 about_Execution_Policies。\r\n"
             "    + CategoryInfo          : SecurityError: (:) []，ParentContainsErrorRecordException\r\n"
             "    + FullyQualifiedErrorId : UnauthorizedAccess\r\n")


def _answering(stderr: bytes, code: int = 1):
    def run(argv, env, timeout):
        return subprocess.CompletedProcess(argv, code, b"", stderr)
    return run


def test_a_chinese_execution_policy_refusal_is_a_skip_not_a_failure(tmp_path):
    """Windows PowerShell on a Chinese account, scripts disabled: nothing ran, so the check skips (the hooks stay)
    and says why, from markers PowerShell does not translate, read in the console's code page."""
    local, root, ch = _ps_env(tmp_path, windows=True)
    prefix = z(local)
    start = {"PATH": prefix + "\\Library\\bin;C:\\windows", "CONDA_PREFIX": prefix}
    check = verify.check_shell(verify.WINDOWS_SHELLS[1], "powershell", str(local), ch, start,
                               [prefix + "\\Library\\bin"], tmp_path, spell=_spell,
                               run=_answering(POLICY_ZH.encode("gbk")), codepages=(936, 936))
    assert (check.status, str(check.note)) == ("skipped", "its execution policy lets no script run")


def test_a_chinese_error_line_is_quoted_as_cmd_wrote_it(tmp_path):
    """cmd.exe stops before the hooks with a Chinese message (code page 936): the check's note quotes it legibly."""
    local, root, ch = _ps_env(tmp_path, windows=True)
    prefix = z(local)
    start = {"PATH": prefix + "\\Library\\bin;C:\\windows", "CONDA_PREFIX": prefix}
    check = verify.check_shell(verify.WINDOWS_SHELLS[0], "cmd", str(local), ch, start, [prefix + "\\Library\\bin"],
                               tmp_path, spell=_spell, run=_answering("系统找不到指定的路径。\r\n".encode("gbk")),
                               codepages=(936, 936))
    assert check.status == "failed" and str(check.note).endswith("before the hooks had run: 系统找不到指定的路径。")


def test_a_value_the_console_code_page_cannot_hold_is_a_skip_not_a_crash(tmp_path):
    """A Chinese account name on PATH in a Western console (850): cmd could not be handed the value, so the check
    does not start it and says why, instead of failing on the encoding."""
    local, root, ch = _ps_env(tmp_path, windows=True)
    prefix = z(local)
    start = {"PATH": prefix + "\\Library\\bin;" + CHINESE_PATH, "CONDA_PREFIX": prefix}

    def never(argv, env, timeout):
        raise AssertionError("cmd was started")
    check = verify.check_shell(verify.WINDOWS_SHELLS[0], "cmd", str(local), ch, start, [prefix + "\\Library\\bin"],
                               tmp_path, spell=_spell, run=never, codepages=(850, 1252))
    assert (check.status, str(check.note)) == ("skipped", "a value cannot be written in this console's code page")
