"""`doctor --fix` killed at every point of its journal (SIGKILL through the suite's fault seam, tests/seams.py),
and `doctor --undo` killed while it restores: each time the environment's files are the old ones, or the new ones
with a journal that `--undo` turns back into the old ones. As root, another user's environment is refused in one
line, with nothing changed."""

from __future__ import annotations

import os

import pytest

from conftest import one_line_error, run_cli
from test_fix_files import _stale_hook, cli_env, fsroot, snapshot, switched  # noqa: F401  (fixtures)

JOURNAL_DIR = ("etc", "cudaswitch", "fix")


def files(prefix):
    """The environment's files, without --fix's own journal folder."""
    skip = os.path.join(prefix, *JOURNAL_DIR)
    return {p: v for p, v in snapshot(prefix).items() if not p.startswith(skip + os.sep)}


@pytest.mark.parametrize("point", ["fix-keep:1", "fix-keep:5", "fix-step:1", "fix-commit:1"])
def test_killed_while_fixing_leaves_old_or_new_and_undo_puts_the_old_back(switched, cli_env, point):
    _stale_hook(switched)
    broken = files(switched)
    killed = run_cli(["doctor", "-p", switched, "--fix", "--yes"], dict(cli_env, CUDASWITCH_FAULT=f"kill@{point}"))
    assert killed.returncode == -9, killed.stdout + killed.stderr
    journal = switched.joinpath(*JOURNAL_DIR, "journal.json")
    if point.startswith("fix-keep"):
        assert files(switched) == broken and not journal.exists()  # nothing changed yet, no journal yet
        return
    again = run_cli(["doctor", "-p", switched, "--fix", "--yes"], cli_env)
    assert "was interrupted" in one_line_error(again, 2) and "doctor --undo" in again.stderr
    undo = run_cli(["doctor", "-p", switched, "--undo"], cli_env)
    assert "Put back" in undo.stdout, undo.stdout + undo.stderr
    assert files(switched) == broken and not journal.exists()


@pytest.mark.parametrize("n", [1, 3])
def test_killed_while_undoing_then_undo_again(switched, cli_env, n):
    _stale_hook(switched)
    broken = files(switched)
    assert run_cli(["doctor", "-p", switched, "--fix", "--yes"], cli_env).returncode in (0, 1)
    assert files(switched) != broken
    killed = run_cli(["doctor", "-p", switched, "--undo"], dict(cli_env, CUDASWITCH_FAULT=f"kill@fix-undo:{n}"))
    assert killed.returncode == -9
    undo = run_cli(["doctor", "-p", switched, "--undo"], cli_env)
    assert undo.returncode in (0, 1) and files(switched) == broken


def test_a_journal_naming_files_elsewhere_is_refused(switched, cli_env, tmp_path):
    _stale_hook(switched)
    assert run_cli(["doctor", "-p", switched, "--fix", "--yes"], cli_env).returncode in (0, 1)
    journal = switched.joinpath(*JOURNAL_DIR, "journal.json")
    victim = tmp_path / "victim"
    victim.write_text("mine\n")
    journal.write_text(journal.read_text().replace(str(switched / "etc" / "conda" / "activate.d" / "cudaswitch.sh"),
                                                   str(victim), 1))
    r = run_cli(["doctor", "-p", switched, "--undo"], cli_env)
    assert "is not a journal cudaswitch wrote" in one_line_error(r, 1) and str(victim) in r.stderr
    assert victim.read_text() == "mine\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the case is root asked to fix another user's environment")
def test_root_refuses_another_users_environment(switched, cli_env):
    from other_user import NOBODY

    _stale_hook(switched)
    for dirpath, dirnames, names in os.walk(switched):
        for n in dirnames + names + ["."]:
            os.lchown(os.path.join(dirpath, n), NOBODY, NOBODY)
    broken = files(switched)
    for args in (["--fix", "--yes"], ["--undo"]):
        r = run_cli(["doctor", "-p", switched, *args], cli_env)
        line = one_line_error(r, 2)
        assert "belongs to nobody" in line and "run it as nobody" in line
    assert files(switched) == broken
