"""`doctor --fix` killed at every point of its journal (SIGKILL through the suite's fault seam, tests/seams.py),
and `doctor --undo` killed while it restores: each time the environment's files are the old ones, or the new ones
with a journal that `--undo` turns back into the old ones. As root, another user's environment is fixed as that
user, or refused in one line where cudaswitch cannot become its owner."""

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
def test_root_fixes_another_users_environment_as_its_owner(cli_env, tmp_path):
    """Root's `doctor --fix` on nobody's environment runs as nobody: the files it writes, the journal among them,
    stay hers, and `--undo` (as root too) puts them back byte for byte. An owner cudaswitch cannot become (a uid
    no account has) is refused in one line, nothing changed."""
    import shutil
    import subprocess
    import sys

    from other_user import NOBODY, readable_cli, shared_base, without_working_as

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fake_torch"))
    import cudatrees
    import envs
    from conftest import make_env

    base, _attacker, _victim, home = shared_base("cudaswitch-fix-owner-")
    try:
        root = base / "root"
        cudatrees.cuda_12_9(root / "usr" / "local" / "cuda-12.9")
        env = dict(cli_env, CUDASWITCH_FS_ROOT=str(root), HOME=str(home), JUPYTER_DATA_DIR=str(home / "jupyter"),
                   JUPYTER_PATH=str(home / "jupyter"))
        prefix = envs.python_prefix(base, "hers")
        make_env(prefix)
        assert run_cli(["use", "12.9", "-p", prefix, "--no-smoke", "--no-verify"], env).returncode == 0
        _stale_hook(prefix)

        def give(uid):
            for dirpath, dirnames, names in os.walk(prefix):
                for n in dirnames + names + ["."]:
                    os.lchown(os.path.join(dirpath, n), uid, uid)

        give(4242424)
        broken = files(prefix)
        r = readable_cli(base, ["doctor", "-p", prefix, "--fix", "--yes"], env)
        notes_off = subprocess.CompletedProcess(r.args, r.returncode, r.stdout, "".join(
            ln for ln in r.stderr.splitlines(keepends=True) if not ln.startswith("cudaswitch: note: ")))
        assert "is no user on this machine" in one_line_error(notes_off, 1), r.stdout + r.stderr
        assert files(prefix) == broken
        give(NOBODY)
        broken = files(prefix)
        r = readable_cli(base, ["doctor", "-p", prefix, "--fix", "--yes"], env)
        rest, said = without_working_as(r)
        assert "nobody" in said and "step 1 cleared HOOKS_STALE" in rest.stdout, r.stdout + r.stderr
        journal = prefix.joinpath(*JOURNAL_DIR, "journal.json")
        hook = prefix / "etc" / "conda" / "activate.d" / "cudaswitch.sh"
        assert os.stat(journal).st_uid == NOBODY and os.stat(hook).st_uid == NOBODY
        assert files(prefix) != broken
        u = readable_cli(base, ["doctor", "-p", prefix, "--undo"], env)
        assert "Put back" in u.stdout, u.stdout + u.stderr
        assert files(prefix) == broken
    finally:
        shutil.rmtree(base)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the case is root undoing a fix through another user's link")
def test_undo_refuses_a_link_planted_in_a_folder_above_a_kept_file(cli_env, tmp_path):
    """After root's --fix of a kernelspec, the kernels folder becomes writable by nobody (a shared Jupyter folder),
    who swaps the kernel's folder for a link to a root-only folder. --undo would write the kept kernel.json through
    that link, as root: it is refused in one line before anything changes (the audit hook stops the write itself,
    but only after the undo has put back the files before it), and nothing changes, her link's target least of
    all."""
    import shutil
    import sys

    from conftest import make_env
    from other_user import NOBODY, as_user, shared_base
    from test_fix_files import KERNEL

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fake_torch"))
    import envs

    base, _attacker, victim, home = shared_base("cudaswitch-undo-link-")
    try:
        data = base / "jupyter"
        env = dict(cli_env, JUPYTER_DATA_DIR=str(data), JUPYTER_PATH=str(data), HOME=str(home))
        prefix = envs.python_prefix(tmp_path / "envs", "work")
        make_env(prefix)
        assert run_cli(["use", "12.9", "-p", prefix, "--no-smoke", "--no-verify"], env).returncode == 0
        kernels = data / "kernels"
        spec = kernels / "work" / "kernel.json"
        spec.parent.mkdir(parents=True)
        spec.write_bytes(KERNEL.replace(b"PY", str(prefix / "bin" / "python").encode()))
        _stale_hook(prefix)  # a second kept file, in the environment, which the old undo put back before stopping
        fixed = run_cli(["doctor", "-p", prefix, "--fix", "--yes"], env)
        assert "cleared HOOKS_STALE" in fixed.stdout and "cleared KERNELSPEC_SETS_CUDA" in fixed.stdout, \
            fixed.stdout + fixed.stderr
        (victim / "kernel.json").write_bytes(b"root's own\n")
        os.chown(kernels, NOBODY, NOBODY)

        def plant():
            os.rename(kernels / "work", kernels / "work.old")
            os.symlink(victim, kernels / "work")

        as_user(plant)
        after_fix = files(prefix), snapshot(data)
        r = run_cli(["doctor", "-p", prefix, "--undo"], env)
        line = one_line_error(r, 1)
        assert line.startswith("cudaswitch: error: refused to undo the last 'doctor --fix': ") and \
            f"{kernels} belongs to nobody" in line and line.endswith("; nothing was changed"), line
        assert (victim / "kernel.json").read_bytes() == b"root's own\n"
        assert sorted(os.listdir(victim)) == ["kernel.json", "secret"]
        assert (files(prefix), snapshot(data)) == after_fix
        assert prefix.joinpath(*JOURNAL_DIR, "journal.json").is_file()  # the undo can still be made, as the owner
    finally:
        shutil.rmtree(base)


def test_fix_refuses_what_its_undo_could_not_put_back(switched, cli_env):
    """The folder of the stale hook became another user's after `use` wrote it: as root, --fix would write there
    (and its undo would be refused), so the fix is refused in one line before anything is kept or changed."""
    from other_user import NOBODY

    _stale_hook(switched)
    folder = switched / "etc" / "conda" / "activate.d"
    plan = run_cli(["doctor", "-p", switched, "--fix", "--dry-run"], cli_env)
    assert "HOOKS_STALE" in plan.stdout, plan.stdout + plan.stderr
    os.chown(folder, NOBODY, NOBODY)
    before = snapshot(switched)
    r = run_cli(["doctor", "-p", switched, "--fix", "--yes"], cli_env)
    line = one_line_error(r, 1)
    assert line.startswith("cudaswitch: error: refused to apply 'doctor --fix': ") and \
        f"{folder} belongs to nobody" in line and line.endswith("its undo could not put them back either; nothing "
                                                                   "was changed"), line
    assert snapshot(switched) == before and not switched.joinpath(*JOURNAL_DIR).exists()
