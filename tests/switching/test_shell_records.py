"""One record per shell (cudaswitch/core/shells.py): every file a record names exists, and every file of
`templates/` and `hooks/` belongs to a record; every other place that knows a shell (the check in the real shells,
the quoting of pasted commands, the activate.d ending conda runs, the tests' shell drivers) reads the records, so a
shell is added by one record and its files (docs/design/activation.md, "Adding a shell")."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import run_cli
from cudaswitch.switching import hookfiles, startup
from cudaswitch.core.shells import INIT_SHELLS, SHELLS


def _files(folder):
    return {p.name for p in folder.iterdir() if p.is_file() and p.name != "README.md"}


def test_every_template_belongs_to_exactly_one_record_and_exists():
    named = [f for sh in SHELLS.values() for f in sh.template_files()]
    assert len(named) == len(set(named)), named
    assert set(named) == _files(hookfiles.template_dir())


def test_every_init_snippet_belongs_to_a_record_and_exists():
    named = {f for sh in SHELLS.values() for f in sh.hook_files()}
    assert named == _files(startup.hooks_dir())


def test_each_record_is_one_hook_extension_and_its_init_names_are_unique():
    assert all(key == sh.ext for key, sh in SHELLS.items())
    names = [st.name for sh in SHELLS.values() for st in sh.init]
    aliases = [a for sh in SHELLS.values() for st in sh.init for a in st.aliases]
    assert len(set(names + aliases)) == len(names) + len(aliases)
    assert sorted(INIT_SHELLS) == sorted(names)


def test_init_offers_exactly_the_records_init_shells():
    out = run_cli(["init", "--help"]).stdout
    assert "[" + "|".join(sorted(INIT_SHELLS)) + "]" in out, out  # optional: $SHELL's by default


def test_every_shell_use_checks_in_runs_a_hook_that_has_a_record_and_a_driver():
    """`use` runs each new hook in the real shells of switching/verify.py: each names a record of SHELLS, and a hook
    kind with no driver there is an error, never a cmd.exe script handed to another shell."""
    import dataclasses

    import pytest

    from cudaswitch.switching import verify

    for real in verify.LINUX_SHELLS + verify.WINDOWS_SHELLS:
        assert real.hook in SHELLS, real
        ext, script = verify.driver(real, "/a", "/d", "/py", {}, {"PATH": "/bin"})
        assert ext == real.hook and script
    stranger = dataclasses.replace(verify.LINUX_SHELLS[0], name="nushell", hook="nu")
    with pytest.raises(ValueError, match="no verification driver for the 'nu' hooks"):
        verify.driver(stranger, "/a", "/d", "/py", {}, {"PATH": "/bin"})


def test_every_record_holds_its_real_shells_driver_and_names():
    from cudaswitch.core.shells import REAL_SHELLS
    from cudaswitch.switching import verify

    for key, sh in SHELLS.items():
        assert sh.real and all(r.hook == key for r in sh.real), key  # `use` checks every kind of hook somewhere
        assert sh.verify is not None and sh.dump in ("env", "json", "set"), key
        assert sh.program_names(), key  # the paste quoting and activate.d's ending find it by $SHELL
    # verify's tables are the records' real shells, in their order: no shell of its own
    assert verify.LINUX_SHELLS + verify.WINDOWS_SHELLS == tuple(r for r in REAL_SHELLS if not r.windows) + tuple(
        r for r in REAL_SHELLS if r.windows)
    assert {r.hook for r in verify.LINUX_SHELLS} == {k for k, sh in SHELLS.items() if not all(r.windows for r in sh.real)}


def test_a_new_record_alone_is_seen_by_verify_paste_quoting_and_activate_d(monkeypatch):
    """A shell added as one record (here a copy of sh's under the key `nu`) is checked by `use`, quoted for pasting,
    matched to its activate.d ending (on Windows by its session's variable) and given `doctor --fix`'s line for a
    variable of the user's, with nothing else keyed by shell."""
    import dataclasses

    from cudaswitch.core import shellquote
    from cudaswitch.core.shells import RealShell
    from cudaswitch.discovery.activation_scripts import shell_extension
    from cudaswitch.switching import verify

    nu = dataclasses.replace(SHELLS["sh"], key="nu", init=(), names=("nu",), real=(RealShell("nushell", "nu", ()),))
    monkeypatch.setitem(SHELLS, "nu", nu)
    assert nu.real[0].hook == "nu"
    ext, script = verify.driver(nu.real[0], "/a", "/d", "/py", {}, {"PATH": "/bin"})
    assert ext == "nu" and script == verify.driver(verify.LINUX_SHELLS[0], "/a", "/d", "/py", {}, {"PATH": "/bin"})[1]
    env = {"SHELL": "/usr/bin/nu"}
    assert shellquote.user_shell(env) == "nu" and shellquote.for_user(["ls", "a b"], env, windows=False) == "ls 'a b'"
    assert shell_extension(env, windows=False) == ".nu"
    # the line `doctor --fix` gives for setting a variable for good: the record's own, in its startup file
    from cudaswitch.fix.toolkit import user_variable_lines

    assert [str(m) for m in user_variable_lines("CUDA_HOME", "/a b", env, windows=False)] == [
        "in ~/.profile: export 'CUDA_HOME=/a b'"]  # sh's copy, no startup file of its own
    told = dataclasses.replace(nu, export=lambda sh, var, value: f"$env.{var} = {sh.quote(value)}",
                               rc_files=(("nu", "~/.config/nushell/env.nu"),))
    monkeypatch.setitem(SHELLS, "nu", told)
    assert [str(m) for m in user_variable_lines("CUDA_HOME", "/a b", env, windows=False)] == [
        "in ~/.config/nushell/env.nu: $env.CUDA_HOME = '/a b'"]
    # a Windows shell, told by a variable its sessions set, as PowerShell is; cmd.exe's stays the default there
    win = dataclasses.replace(nu, real=(RealShell("nushell", "nu", (), windows=True),), session_vars=("NU_VERSION",))
    monkeypatch.setitem(SHELLS, "nu", win)
    assert shell_extension({"NU_VERSION": "0.99"}, windows=True) == ".nu"
    assert shell_extension({}, windows=True) == ".bat"
    # `doctor --fix`'s setx line on Windows, one per Windows shell whose record shows one, in its quoting
    monkeypatch.setitem(SHELLS, "nu", dataclasses.replace(win, setx="in nu: {command}"))
    assert [str(m) for m in user_variable_lines("CUDA_PATH", "C:\\a b", {}, windows=True)][2:] == [
        "in nu: setx CUDA_PATH 'C:\\a b'"]


def test_every_record_names_the_shells_its_hooks_are_for():
    """`use` lists the shells it wrote hooks for from the records' `shown` (the line the guide replays in both
    languages): each record has its own."""
    shown = [sh.shown for sh in SHELLS.values()]
    assert all(shown) and len(set(shown)) == len(shown), shown


def test_pasted_words_and_hook_values_share_each_shells_quoting():
    """One quoting rule per shell: a word that needs quotes is quoted for pasting exactly as the shell's hooks quote a
    value (cmd.exe's prompt aside: a hook's value sits inside `set "X=..."`, a pasted word is a program's argument)."""
    from cudaswitch.core import shellquote

    words = ["a b", "x!y", "it's", "new\nline", "back\\slash", "$HOME", "工具"]
    for key, sh in SHELLS.items():
        for w in words:
            want = w if sh.plain.fullmatch(w) else (sh.paste or sh.quote)(w)  # a plain word is printed bare
            assert shellquote.quote(w, key) == want, (key, w)
        assert shellquote.quote("a b", key) != "a b", key
    assert [k for k, sh in SHELLS.items() if sh.paste] == ["bat"]
    assert shellquote.quote("x!y", shellquote.CSH) == "'x\\!y'"  # one csh rule: `!` escaped inside the quotes


def test_activate_d_ending_is_the_records_for_every_name_of_the_users_shell():
    from cudaswitch.discovery.activation_scripts import shell_extension

    for sh in SHELLS.values():
        for name in sh.program_names():
            if not all(r.windows for r in sh.real):  # a shell that runs on POSIX: named by $SHELL
                assert shell_extension({"SHELL": f"/usr/bin/{name}"}, windows=False) == "." + sh.ext, name
    assert shell_extension({}, windows=False) == ".sh"
    assert shell_extension({}, windows=True) == ".bat"
    assert shell_extension({"PSExecutionPolicyPreference": "Bypass"}, windows=True) == ".ps1"


def test_the_tests_start_the_records_shells_as_the_records_say():
    """The shell drivers of the tests take their argv from the records: a record's real shell is started the way
    `use` starts it, and a startup file is loaded the way its record starts it."""
    import shell_driver
    from test_init_install import SHELLS as INSTALL

    from cudaswitch.core.shells import REAL_SHELLS

    for real in REAL_SHELLS:
        if real.name in shell_driver.SHELLS:
            assert shell_driver.SHELLS[real.name][1] == [real.program, *real.args]
            assert shell_driver.hook_ext(real.name) == SHELLS[real.hook].ext
    with_file = {st.name: st for sh in SHELLS.values() for st in sh.init if st.under}
    assert all(st.starts for st in with_file.values()), with_file  # how a new shell loads its startup file
    assert {name: argv for name, (_rc, argv, _code) in INSTALL.items()} == {
        name: list(st.starts) for name, st in with_file.items()}


def test_the_lists_a_record_says_its_hooks_prepend_to_are_the_ones_its_hooks_name():
    """The check's plan prepends to the lists of the record's `lists` (cmd.exe's: PATH only): for a switch that
    prepends to every list, they are exactly the lists the rendered hooks name, in both directions (a record that
    lost cmd's PATH-only rule would plan an LD_LIBRARY_PATH its hooks never set)."""
    import re

    from cudaswitch.switching.activation import LISTS, Changes

    ch = Changes(scalars={"CUDA_PATH": "/c", "CUDA_HOME": "/c"}, prepend={v: [f"/c/{v.lower()}"] for v in LISTS})
    for key, sh in SHELLS.items():
        planned = {v for v, entries in sh.hooked(ch).prepend.items() if entries}
        for direction in ("activate", "deactivate"):
            text = hookfiles.render_hook(key, direction, ch, "12.9").decode(sh.encoding)
            named = {v for v in LISTS if re.search(rf"(?<![A-Z_]){v}(?![A-Z_])", text)}
            assert named == planned, (key, direction, named, planned)


def _nu(**fields):
    """A new shell as one record: a copy of sh's under the key `nu`, with the fields given."""
    import dataclasses

    from cudaswitch.core.shells import RealShell

    real = (RealShell("nushell", "nu", (), windows=fields.pop("windows", False)),)
    return dataclasses.replace(SHELLS["sh"], key="nu", init=(), names=("nu",), real=real, **fields)


def test_a_new_records_hook_rules_are_what_the_check_plans(monkeypatch):
    """How a shell's hooks work, as the check models them, is read from its record alone: a new Windows shell whose
    hooks, like cmd.exe's, prepend to PATH only, in their own spelling, take out only a record in it, and run
    inside PowerShell sessions, is planned so; a plain copy of sh's record is planned as sh."""
    from cudaswitch.switching import verify
    from cudaswitch.switching.activation import Changes

    ch = Changes(scalars={"CUDA_PATH": r"C:\t", "CUDA_HOME": r"C:\t"},
                 prepend={"PATH": [r"C:\t\bin"], "LD_LIBRARY_PATH": [r"C:\t\lib"]})
    start = {"PATH": r"C:\e\Library\bin;C:\windows", "CONDA_PREFIX": r"C:\e"}
    plain = _nu()
    monkeypatch.setitem(SHELLS, "nu", plain)
    posix = {"PATH": "/e/bin:/usr/bin", "_CUDASWITCH_ADDED_PATH": "/old/bin"}
    assert verify.plan_for(plain.real[0], ch, posix) == verify.plan_for(verify.LINUX_SHELLS[0], ch, posix)
    assert verify.with_other_windows_records(plain.real[0], ch, start) == start

    nu = _nu(windows=True, lists=("PATH",), spelling=lambda es: [e + "/" for e in es],
             own_record=lambda rec: rec.endswith("/"), runs_inside=("ps1",))
    monkeypatch.setitem(SHELLS, "nu", nu)
    real = nu.real[0]
    plan = verify.plan_for(real, ch, start)
    assert plan["PATH"].split(";")[0] == "C:\\t\\bin/" and plan["_CUDASWITCH_ADDED_PATH"] == "C:\\t\\bin/"
    assert "LD_LIBRARY_PATH" not in plan and "_CUDASWITCH_ADDED_LD_LIBRARY_PATH" not in plan
    # its check starts where PowerShell's hooks ran, as cmd.exe's does
    given = verify.with_other_windows_records(real, ch, start)
    assert given == verify.with_other_windows_records(verify.WINDOWS_SHELLS[0], ch, start)
    assert given["_CUDASWITCH_ADDED_PATH"] == r"C:\t\bin" and given["LD_LIBRARY_PATH"] == r"C:\t\lib"
    # PowerShell's record is not in its spelling: it stays, with PowerShell's entry, and its own goes in front
    assert verify.plan_for(real, ch, given)["PATH"].split(";")[:2] == ["C:\\t\\bin/", r"C:\t\bin"]


def _answer(out: str, err: str = ""):
    import subprocess

    def run(argv, env, timeout):
        return subprocess.CompletedProcess(argv, 0, out.encode(), err.encode())
    return run


def test_a_new_records_refusal_and_giving_up_are_read_from_it(monkeypatch, tmp_path):
    """What the check reads in a shell's output besides the dumps is its record's: the markers of a shell that ran
    no script (a skip with the record's note) and the warning with which its hook left the shell as it was (a skip
    when nothing changed); the same output from a shell whose record has neither is a failure and a difference."""
    import json

    from cudaswitch.core.i18n import M
    from cudaswitch.switching import verify
    from cudaswitch.switching.activation import Changes

    copies = (tmp_path / "a.nu", tmp_path / "d.nu")
    for p in copies:
        p.write_text("")
    ch = Changes(scalars={"CUDA_PATH": "/t", "CUDA_HOME": "/t"}, prepend={"PATH": ["/t/bin"]})
    start = {"PATH": "/e/bin:/usr/bin", "CONDA_PREFIX": "/e"}

    def check(record, run):
        monkeypatch.setitem(SHELLS, "nu", record)
        return verify.check_shell(record.real[0], "nu", "/e", ch, dict(start), ["/e/bin"], tmp_path, run=run,
                                  copies=copies)

    refused = _answer("", "nu: NU-0042 scripts are off")
    told = _nu(dump="json", refusal=("NU-0042",), refusal_note=M("its scripts are off"))
    skipped = check(told, refused)
    assert (skipped.status, str(skipped.note)) == ("skipped", "its scripts are off")
    assert check(_nu(dump="json"), refused).status == "failed"

    same = json.dumps(start)
    unchanged = _answer(f"\n{verify.MARK}{same}\n\n{verify.MARK}{same}\n", "cudaswitch: warning: nu gave up: why\n")
    gave_up = check(_nu(dump="json", gives_up="nu gave up"), unchanged)
    assert gave_up.status == "skipped" and gave_up.note == "cudaswitch: warning: nu gave up: why"
    assert check(_nu(dump="json"), unchanged).status == "differs"


# modules that read every shell from its record: a branch on a shell's name there (`shell.hook == "bat"`) is
# knowledge of one shell outside its record
RECORD_READERS = ("cudaswitch/switching/verify.py", "cudaswitch/switching/switch.py",
                  "cudaswitch/discovery/activation_scripts.py", "cudaswitch/checks/activation_order.py",
                  "cudaswitch/fix/toolkit.py",
                  "cudaswitch/cli/discovery.py", "cudaswitch/cli/switching.py", "cudaswitch/checks/reach.py",
                  # the hooks and conda's PATH export, `init` and its startup files, the completion scripts
                  "cudaswitch/switching/hookfiles.py", "cudaswitch/switching/startup.py",
                  "cudaswitch/switching/completion.py", "tools/completion_table.py")


def test_the_modules_that_read_the_records_name_no_shell():
    import ast
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    names = set(SHELLS)
    for sh in SHELLS.values():
        names |= set(sh.program_names()) | {r.name for r in sh.real} | {r.program for r in sh.real}
    names = {n.lower() for n in names}
    for rel in RECORD_READERS:
        tree = ast.parse((repo / rel).read_text(encoding="utf-8"))
        named = [(n.lineno, n.value) for n in ast.walk(tree)
                 if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.lower() in names]
        assert not named, (rel, named)


def test_the_reconciler_tip_on_windows_names_the_windows_shell_whose_record_has_one(monkeypatch):
    """`use` and `status` suggest `init X --install` for the prompt-time cleanup: X is `$SHELL`'s init name, and on
    Windows (no `$SHELL`) that of the Windows shell whose record has a reconciler (PowerShell's: cmd.exe has none)."""
    import dataclasses
    from types import SimpleNamespace

    from cudaswitch.switching.startup import user_reconciler_missing

    win = SimpleNamespace(windows=True, environ={})
    assert user_reconciler_missing(win) == "powershell"
    assert user_reconciler_missing(SimpleNamespace(windows=True, environ={"CUDASWITCH_RECONCILER": "1"})) is None
    assert user_reconciler_missing(SimpleNamespace(windows=False, environ={"SHELL": "/usr/bin/fish"})) == "fish"
    monkeypatch.setitem(SHELLS, "ps1", dataclasses.replace(SHELLS["ps1"], reconciler=None))
    assert user_reconciler_missing(win) is None


def _breaks_in(argv, line: str, value: str, tmp_path) -> bool:
    """Whether the real shell `argv` running `line` (conda's PATH export, the value spliced in unescaped) leaves PATH
    other than `value`."""
    import subprocess

    script = tmp_path / "export"
    script.write_text(line + "\n/usr/bin/printenv PATH\n", encoding="utf-8")
    out = subprocess.run([*argv, str(script)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                         env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"})
    return out.stdout != value + "\n"


def test_conda_export_is_the_path_line_real_conda_writes_and_its_characters_break_it(real_conda, tmp_path):
    """A record's `conda_export` shows the PATH line the real conda's activator for its shell writes, the value in
    quotes it does not escape, and every record whose conda writes such a line has one (cmd.exe's conda writes a file
    of plain NAME=VALUE lines). In each present real shell of the record, the characters of every record's list that
    break that line (the value no longer comes back as it was put in) are exactly its own list's."""
    import re
    import shutil

    # what quotes, expands or escapes inside a quoted word of sh, fish or csh, and whatever a record lists (`!`, csh's
    # history, is left out: `use` does not refuse it today, though tcsh reads it inside conda's double quotes too)
    candidates = set("'\"$`\\") | {ch for sh in SHELLS.values() if sh.conda_export for ch in sh.conda_export.breaks}
    base = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for key, sh in SHELLS.items():
        out = real_conda.run([f"shell.{sh.name}", "activate", real_conda.root], base=base).stdout
        lines = [ln.rstrip(";") for ln in out.splitlines() if "PATH" in ln and real_conda.root in ln]
        quoted = [ln for ln in lines if re.search(r"""["']""" + re.escape(real_conda.root), ln)]
        export = sh.conda_export
        if export is None:
            assert not quoted, (key, quoted)
            continue
        shown = re.fullmatch(r"[^ ]+ \((.*)\)", export.shown).group(1)
        before, _, after = shown.partition("...")
        assert before[-1] in export.breaks, key  # the quote conda puts around the value
        assert len(quoted) == 1 and re.fullmatch(re.escape(before) + ".*" + re.escape(after), quoted[0]), (key, out)
        for real in sh.real:
            if real.windows or not shutil.which(real.program):
                continue
            argv = [real.program, *real.args]
            assert not _breaks_in(argv, shown.replace("...", "/x/y"), "/x/y", tmp_path), real.name
            broken = {ch for ch in candidates
                      if any(_breaks_in(argv, shown.replace("...", v), v, tmp_path) for v in (f"/x{ch}y", f"/x{ch}"))}
            assert broken == set(export.breaks), (real.name, broken)


def test_a_startup_file_the_shell_names_itself_is_found_from_the_records_editions(monkeypatch, tmp_path):
    """A shell that names its own startup file, as PowerShell does: each of its record's editions on PATH is asked
    with the record's arguments; where none answers, the record's file in each edition's folder below Documents on
    Windows (an edition that ships with Windows always, another where its folder exists), elsewhere below the
    record's config folder. Nothing of PowerShell's is asked or written for it."""
    import dataclasses
    import subprocess

    from cudaswitch.core.shells import Edition

    sh, ps = INIT_SHELLS["powershell"]
    nu = dataclasses.replace(ps, profile="config.nu", ask=("--print", "config"), profile_dir="nushell",
                             editions=(Edition("nu-test-new", "Nu"), Edition("nu-test-old", "NuClassic", ships=True)))
    asked = []

    def run(argv, **kw):
        asked.append(argv)
        return subprocess.CompletedProcess(argv, 0, "banner\nC:\\Users\\li\\Documents\\Nu\\config.nu\n", "")

    got = startup.named_profiles(nu, which={"nu-test-new": r"C:\nu\nu.exe", "pwsh": r"C:\pwsh.exe"}.get, run=run,
                                 environ={"USERPROFILE": str(tmp_path)}, windows=True)
    assert asked == [[r"C:\nu\nu.exe", "--print", "config"]]
    assert [str(p) for p in got] == ["C:\\Users\\li\\Documents\\Nu\\config.nu",
                                     str(Path("C:\\Users\\li\\Documents") / "NuClassic" / "config.nu")]
    (tmp_path / "Documents" / "Nu").mkdir(parents=True)
    none = startup.named_profiles(nu, which=lambda _: None, run=run, environ={"USERPROFILE": str(tmp_path)},
                                  windows=True)
    assert none == [tmp_path / "Documents" / "Nu" / "config.nu", tmp_path / "Documents" / "NuClassic" / "config.nu"]
    # --install's files, off Windows, where no edition is on PATH: the record's folder below XDG_CONFIG_HOME
    monkeypatch.setitem(INIT_SHELLS, "powershell", (sh, nu))
    if sys.platform != "win32":
        assert startup.rc_files("powershell", {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}) == [
            tmp_path / "cfg" / "nushell" / "config.nu"]


def test_a_shell_without_a_startup_file_says_why_from_its_record(monkeypatch, tmp_path):
    """Every `init` shell has a startup file --install writes (its own or one it names itself) or its record's reason
    why not, which --install gives as its one-line refusal; a new record's reason is its own."""
    import dataclasses

    import pytest

    from cudaswitch.core.errors import UsageError

    for name, (_sh, st) in INIT_SHELLS.items():
        assert bool(st.under or st.profile) == bool(st.loads) != bool(st.no_file), name
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
    sh, cmd = INIT_SHELLS["cmd"]
    with pytest.raises(UsageError, match="^cmd.exe has no startup file: .*cudaswitch init cmd > cs.bat"):
        startup.install("cmd", None, env)
    zh = run_cli(["init", "cmd", "--install"], dict(env, PATH="/usr/bin:/bin", CUDASWITCH_LANG="zh_CN"))
    assert zh.returncode == 2 and "cmd.exe 没有启动文件" in zh.stderr, zh.stderr  # the record's message, translated
    monkeypatch.setitem(INIT_SHELLS, "cmd", (sh, dataclasses.replace(cmd, no_file="{shell} reads no file at start")))
    with pytest.raises(UsageError, match="^cmd reads no file at start$"):
        startup.install("cmd", None, env)
    with pytest.raises(UsageError, match="^cmd reads no file at start$"):
        startup.rc_files("cmd", env)
    assert not any(tmp_path.iterdir())


def test_the_completion_script_init_prints_and_click_sources_is_the_records(monkeypatch):
    """Each `init` shell that speaks a completion protocol names its script, and `init` puts that file (its
    placeholders filled) after the shell function; click's `<protocol>_source` answers with the same file. Which
    file is read from the record alone: pointed at another shell's script, both give that one."""
    import dataclasses

    from click.shell_completion import get_completion_class

    import cudaswitch.cli.completion  # noqa: F401 (registers the protocols cudaswitch adds to click's)
    from cudaswitch.cli import main
    from cudaswitch.switching import completion

    for name, (_sh, st) in INIT_SHELLS.items():
        assert bool(st.completion) == bool(st.completion_script), name
        if st.completion:
            script = completion.script(st)
            assert "%(" not in script and "_CUDASWITCH_COMPLETE" in script, name
            assert startup.init_text(name).endswith(script), name
    sh, fish = INIT_SHELLS["fish"]
    ps1 = INIT_SHELLS["powershell"][1]
    monkeypatch.setitem(INIT_SHELLS, "fish", (sh, dataclasses.replace(fish, completion_script=ps1.completion_script)))
    assert startup.init_text("fish").endswith(completion.script(ps1))
    assert "Register-ArgumentCompleter" in get_completion_class("fish")(main, {}, "cudaswitch",
                                                                        "_CUDASWITCH_COMPLETE").source()


def test_powershells_typographic_double_quotes_end_its_strings_for_pasting_and_for_conda():
    """PowerShell's tokenizer takes “ ” „ as double quotes (PowerShell/PowerShell, CharTraits.cs, IsDoubleQuote;
    no PowerShell runs here): a pasted Windows word holding one gets PowerShell's single quotes, not the "..."
    cmd.exe and PowerShell share, and a Windows toolkit path holding one is refused, since conda's own
    `$Env:PATH = "..."` would end at it."""
    from cudaswitch.core import shellquote
    from cudaswitch.switching.activation import Changes

    for ch in "\u201c\u201d\u201e":
        assert shellquote.quote(f"C:\\a b{ch}c", shellquote.WINDOWS) == f"'C:\\a b{ch}c'"
        problem = hookfiles.conda_export_problem(Changes(scalars={}, prepend={"PATH": [f"C:\\a{ch}b\\bin"]}), True)
        assert problem and f"{ch!r}" in problem and "PowerShell ($Env:PATH" in problem, ch
    assert shellquote.quote("C:\\a b", shellquote.WINDOWS) == '"C:\\a b"'
