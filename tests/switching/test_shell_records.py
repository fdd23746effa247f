"""One record per shell (cudaswitch/core/shells.py): every file a record names exists, and every file of
`templates/` and `hooks/` belongs to a record; every other place that knows a shell (the check in the real shells,
the quoting of pasted commands, the activate.d ending conda runs, the tests' shell drivers) reads the records, so a
shell is added by one record and its files (docs/design/activation.md, "Adding a shell")."""

from __future__ import annotations

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
    """A shell added as one record (here a copy of sh's under the key `nu`) is checked by `use`, quoted for pasting and
    matched to its activate.d ending, with nothing else keyed by shell."""
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
