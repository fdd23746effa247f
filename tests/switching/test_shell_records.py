"""One record per shell (cudaswitch/core/shells.py): every file a record names exists, and every file of
`templates/` and `hooks/` belongs to a record, so a shell is added by one record and its files
(docs/design/activation.md, "Adding a shell")."""

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
