"""Issue 9: every failure a user can cause or meet ends in one clear line; shared environments work for every user;
`run` behaves like the command run directly. Through the real command line, on the real toolkit trees."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest

from conftest import REPO, require_tool, run_cli
from cudaswitch.shells import quote_sh

OTHER_UID = 65534  # nobody


def _one_line_error(proc, code):
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cudaswitch: error: "), proc.stderr
    return lines[0]


@pytest.fixture
def cli_env(clean_env, real_trees):
    return dict(clean_env, CUDASWITCH_SEARCH_PATH=str(real_trees))


@pytest.fixture
def shared(tmp_path):
    """A folder every user may enter (pytest's own tmp folder is root's 0700 one)."""
    d = tempfile.mkdtemp(prefix="cudaswitch-shared-")
    os.chmod(d, 0o755)
    yield d
    subprocess.run(["chmod", "-R", "u+rwx", d], check=False)
    shutil.rmtree(d, ignore_errors=True)


def _env(folder, name="proj"):
    p = os.path.join(folder, name)
    os.makedirs(os.path.join(p, "conda-meta"))
    os.chmod(p, 0o755)
    return p


def _give_away(path):
    """Make `path` someone else's: chown to nobody as root; as a normal user it already is (no chown possible)."""
    if os.geteuid() == 0:
        for dirpath, dirnames, filenames in os.walk(path):
            for n in [dirpath] + [os.path.join(dirpath, f) for f in dirnames + filenames]:
                os.lchown(n, OTHER_UID, OTHER_UID)
    else:
        pytest.skip("needs root to hand a folder to another user")


def _as_someone_else(argv):
    """Run as a user without root's override rights (uid 0 keeps its own files: the interpreter under /root)."""
    if os.geteuid() != 0:
        return argv
    return [require_tool("setpriv"), "--inh-caps=-all", "--bounding-set=-all", *argv]


def _cli_as_someone_else(args, env, **kw):
    env = dict(env, PYTHONPATH=str(REPO))
    return subprocess.run(_as_someone_else([sys.executable, "-m", "cudaswitch", *args]), env=env,
                          capture_output=True, text=True, timeout=120, **kw)


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


# ---- shared and read-only places ------------------------------------------------------------------------------

def test_written_files_get_the_umask_mode_and_keep_a_replaced_files_mode_and_owner(cli_env, shared):
    env = _env(shared)
    proc = subprocess.run(["sh", "-c", f'umask 022; exec "$@"', "sh", sys.executable, "-m", "cudaswitch", "use",
                           "12.9", "-p", env, "--no-smoke"], env=dict(cli_env, PYTHONPATH=str(REPO)),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    hooks = [os.path.join(env, "etc", "conda", f"{d}.d", f"cudaswitch.{e}") for d in ("activate", "deactivate")
             for e in ("sh", "fish", "csh", "bat", "ps1")]
    state = os.path.join(env, "etc", "cudaswitch", "state.yaml")
    assert {_mode(p) for p in hooks + [state]} == {0o644}
    os.chmod(state, 0o640)
    os.chmod(hooks[0], 0o664)
    if os.geteuid() == 0:
        os.chown(hooks[0], OTHER_UID, OTHER_UID)
    assert run_cli(["use", "11.8", "-p", env, "--no-smoke"], cli_env).returncode == 0
    assert "version: 11.8.89" in open(state).read()
    assert _mode(state) == 0o640 and _mode(hooks[0]) == 0o664
    if os.geteuid() == 0:
        assert os.stat(hooks[0]).st_uid == OTHER_UID


def test_an_environment_switched_by_root_activates_for_another_user(cli_env, shared, real_trees):
    env = _env(shared)
    tk = os.path.join(shared, "cuda-12.9")  # where every user can see it, as /usr/local is
    shutil.copytree(real_trees / "cuda-12.9", tk, symlinks=True, copy_function=os.link)
    assert run_cli(["use", tk, "-p", env, "--no-smoke"], cli_env).returncode == 0
    hook = os.path.join(env, "etc", "conda", "activate.d", "cudaswitch.sh")
    if os.geteuid() != 0:
        pytest.skip("needs root to switch as one user and activate as another")
    bash = require_tool("bash")
    out = subprocess.run([require_tool("setpriv"), f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups",
                          bash, "-c", f". {quote_sh(hook)} && echo \"$CUDA_HOME\""],
                         capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0 and out.stdout.strip() == tk, out.stderr


def test_someone_elses_environment_is_a_one_line_refusal_and_nothing_changes(cli_env, shared):
    env = _env(shared)
    assert run_cli(["use", "12.9", "-p", env, "--no-smoke"], cli_env).returncode == 0
    before = sorted(os.walk(env))
    _give_away(env)
    for args in (["use", "11.8", "-p", env, "--no-smoke"], ["off", "-p", env]):
        line = _one_line_error(_cli_as_someone_else(args, cli_env), 1)
        assert line.startswith(f"cudaswitch: error: cannot write to {env}/etc/") and "nothing was changed" in line
    assert sorted(os.walk(env)) == before
    assert "version: 12.9.1" in open(os.path.join(env, "etc", "cudaswitch", "state.yaml")).read()
    rc_dir = os.path.join(shared, "home")
    os.makedirs(rc_dir)
    _give_away(rc_dir)
    line = _one_line_error(_cli_as_someone_else(
        ["init", "bash", "--install", "--rc-file", os.path.join(rc_dir, ".bashrc")], cli_env), 1)
    assert f"cannot write to {rc_dir} (permission denied)" in line
    assert os.listdir(rc_dir) == []


def test_init_install_writes_through_a_symlinked_rc_file_and_keeps_its_mode(cli_env, tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "bashrc"
    real.write_text("alias ll='ls -l'\n")
    real.chmod(0o644)
    link = tmp_path / ".bashrc"
    link.symlink_to(real)
    proc = run_cli(["init", "bash", "--install", "--rc-file", str(link)], cli_env)
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text().startswith("alias ll='ls -l'\n") and ">>> cudaswitch init >>>" in real.read_text()
    assert _mode(real) == 0o644
    assert sorted(p.name for p in dotfiles.iterdir()) == ["bashrc"]


def test_an_unreadable_folder_on_path_is_skipped(cli_env, shared, real_trees, tmp_path):
    secret = os.path.join(shared, "root-only-bin")
    os.makedirs(secret)
    os.chmod(secret, 0o700)
    _give_away(secret)
    env = _env(shared)
    cli_env = dict(cli_env, PATH=f"{secret}:{os.environ['PATH']}")
    for args in (["list"], ["status"], ["use", "12.9", "-p", env, "--no-smoke"], ["which", "12.9", "--nvcc"]):
        proc = _cli_as_someone_else(args, cli_env)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and "error" not in proc.stderr
    archive = tmp_path / "cudnn.tar.xz"
    archive.write_bytes(b"not an archive")
    proc = _cli_as_someone_else(["install-cudnn", str(archive), "--cuda", "12.9", "--dry-run"], cli_env)
    assert "not a .zip, .tar.xz or .tar.gz archive" in _one_line_error(proc, 1)


# ---- prompts ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("answer", [b"n\n", b"\n", b"\x04", "Ctrl-C"])
def test_no_at_the_base_question_is_aborted_not_an_internal_error(cli_env, tmp_path, answer):
    import pty

    base = tmp_path / "miniconda3"
    (base / "conda-meta").mkdir(parents=True)
    env = dict(cli_env, _CONDA_ROOT=str(base), CONDA_PREFIX=str(base), PYTHONPATH=str(REPO))
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "cudaswitch", "use", "11.8"], stdin=slave, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)
    os.close(slave)
    proc.stdout.read1(200)  # the question has been asked
    if answer == "Ctrl-C":  # what the terminal sends the foreground process on Ctrl-C
        import signal

        import time

        time.sleep(0.3)  # readline, waiting for the answer, loses a signal that lands while it sets itself up
        for _ in range(20):
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(3)
                break
            except subprocess.TimeoutExpired:
                continue
    else:
        os.write(master, answer)
    out, err = proc.communicate(timeout=60)
    os.close(master)
    assert proc.returncode == 1, err
    assert err.decode().strip().splitlines()[-1] == "cudaswitch: error: aborted; nothing was changed"
    assert not (base / "etc").exists()


# ---- inputs that crash or mislead ----------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["list"], ["--help"], ["init", "bash"]])
def test_output_to_a_full_disk_is_one_line(cli_env, args):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "cudaswitch", *args], stdout=full, stderr=subprocess.PIPE,
                              text=True, env=dict(cli_env, PYTHONPATH=str(REPO)))
    assert _one_line_error(proc, 1) == "cudaswitch: error: cannot write the output: No space left on device"
