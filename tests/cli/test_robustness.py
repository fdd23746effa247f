"""Issue 9: every failure a user can cause or meet ends in one clear line; shared environments work for every user;
`run` behaves like the command run directly. Through the real command line, on the real toolkit trees."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest

import seams
from conftest import REPO, cli_on_path, make_env, one_line_error, require_tool, run_cli
from cudaswitch.core.shells import quote_sh

OTHER_UID = 65534  # nobody


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
    make_env(p, history=None)
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
    return subprocess.run(_as_someone_else([sys.executable, seams.ENTRY, *args]), env=env,
                          capture_output=True, text=True, timeout=120, **kw)


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


# ---- shared and read-only places ------------------------------------------------------------------------------

def test_written_files_get_the_umask_mode_and_keep_a_replaced_files_mode_and_owner(cli_env, shared):
    env = _env(shared)
    old = os.umask(0o022)  # the umask the CLI reads is the process's, in-process this one's
    try:
        proc = run_cli(["use", "12.9", "-p", env, "--no-smoke"], cli_env)
    finally:
        os.umask(old)
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
        line = one_line_error(_cli_as_someone_else(args, cli_env), 1)
        if os.geteuid() == 0:  # uid 0 without its capabilities: it cannot become the owner, and does not act as 0
            assert line.startswith("cudaswitch: error: refused to work as nobody (uid 65534)"), line
        else:
            assert line.startswith(f"cudaswitch: error: cannot write to {env}/etc/"), line
        assert "nothing was changed" in line
    assert sorted(os.walk(env)) == before
    assert "version: 12.9.1" in open(os.path.join(env, "etc", "cudaswitch", "state.yaml")).read()
    rc_dir = os.path.join(shared, "home")
    os.makedirs(rc_dir)
    _give_away(rc_dir)
    line = one_line_error(_cli_as_someone_else(
        ["init", "bash", "--install", "--rc-file", os.path.join(rc_dir, ".bashrc")], cli_env), 1)
    if os.geteuid() == 0:  # uid 0 with another user's rc folder: hers to change, refused before anything is read
        assert line.startswith(f"cudaswitch: error: refused to install the shell integration: {rc_dir} belongs to "
                               "nobody"), line
    else:
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
    assert real.read_text().startswith("alias ll='ls -l'\n") and "cudaswitch init --install" in real.read_text()
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
    assert "not a .zip, .tar.xz or .tar.gz archive" in one_line_error(proc, 1)


def test_smoke_of_a_python_linked_into_a_folder_you_cannot_enter_says_so(cli_env, shared):
    """The environment's bin/python is a link into another user's 0700 folder: it is there, only not for you."""
    private = os.path.join(shared, "theirs")
    os.makedirs(os.path.join(private, "bin"))
    real = os.path.join(private, "bin", "python3.11")
    shutil.copy2(sys.executable, real)
    os.chmod(private, 0o700)
    _give_away(private)
    env = _env(shared)
    os.makedirs(os.path.join(env, "bin"))
    os.symlink(real, os.path.join(env, "bin", "python"))
    proc = _cli_as_someone_else(["smoke", "--json", "-p", env], cli_env)
    rec = json.loads(proc.stdout)
    f = rec["findings"][0]
    assert proc.returncode == 0 and rec["status"] == "skip" and f["severity"] == "info", proc.stdout
    assert f["cause"] == f"{env}/bin/python cannot be read by you: {private} does not let root (uid 0) in", f
    assert "does not exist" not in proc.stdout
    assert f["fix"] == f"run it as a user who may read it: sudo -u nobody cudaswitch smoke -p {env}"
    zh = _cli_as_someone_else(["smoke", "-p", env], dict(cli_env, CUDASWITCH_LANG="zh_CN"))
    assert f"{env}/bin/python 你读不到：{private} 不允许 root (uid 0) 进入" in zh.stdout, zh.stdout
    # and for a Python that truly is not there, the old words stay true
    os.unlink(os.path.join(env, "bin", "python"))
    proc = _cli_as_someone_else(["smoke", "--json", "-p", env], cli_env)
    assert json.loads(proc.stdout)["findings"][0]["cause"] == f"{env}/bin/python does not exist"


# ---- prompts ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("answer", [b"n\n", b"\n", b"\x04", "Ctrl-C"])
def test_no_at_the_base_question_is_aborted_not_an_internal_error(cli_env, tmp_path, answer):
    import pty

    base = tmp_path / "miniconda3"
    make_env(base, history=None)
    env = dict(cli_env, _CONDA_ROOT=str(base), CONDA_PREFIX=str(base), PYTHONPATH=str(REPO))
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, seams.ENTRY, "use", "11.8"], stdin=slave, stdout=subprocess.PIPE,
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
    with open("/dev/full", "w") as full:  # a real process: CliRunner's stdout is a buffer that never fills
        proc = subprocess.run([sys.executable, seams.ENTRY, *args], stdout=full, stderr=subprocess.PIPE,
                              text=True, env=dict(cli_env, PYTHONPATH=str(REPO)))
    assert one_line_error(proc, 1) == "cudaswitch: error: cannot write the output: No space left on device"


# ---- run: signals and exit status as if the command ran directly ----------------------------------------------

CHILD = r"""
import os, signal, sys, time
open(sys.argv[1] + ".pid", "w").write(str(os.getpid()))
try:
    time.sleep(60)
except KeyboardInterrupt:
    open(sys.argv[1], "w").write("checkpoint")
    sys.exit(3)
"""


def _start_child(cli_env, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(CHILD)
    mark = tmp_path / "ckpt"
    proc = subprocess.Popen([sys.executable, seams.ENTRY, "run", "12.9", "--", sys.executable, str(script),
                             str(mark)], env=dict(cli_env, PYTHONPATH=str(REPO)), start_new_session=True,
                            stderr=subprocess.PIPE, text=True)
    import time

    for _ in range(600):
        if os.path.exists(f"{mark}.pid") and os.path.getsize(f"{mark}.pid"):
            return proc, mark, int(open(f"{mark}.pid").read())
        time.sleep(0.05)
    proc.kill()
    pytest.fail("the command never started")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return open(f"/proc/{pid}/stat").read().split()[2] != "Z"


def test_ctrl_c_in_run_reaches_the_command_which_decides(cli_env, tmp_path):
    import signal

    proc, mark, _child = _start_child(cli_env, tmp_path)
    os.killpg(proc.pid, signal.SIGINT)  # what the terminal does: the whole foreground process group
    proc.wait(60)
    assert mark.read_text() == "checkpoint"  # its KeyboardInterrupt handler ran to the end
    assert proc.returncode == 3 and proc.stderr.read() == ""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_sigterm_to_run_stops_the_command_too(cli_env, tmp_path, sig):
    import signal

    proc, mark, child = _start_child(cli_env, tmp_path)
    proc.send_signal(getattr(signal, sig))  # to cudaswitch's own pid, as a batch system or `kill` does
    proc.wait(60)
    assert proc.returncode == -getattr(signal, sig)  # what the command run directly reports
    assert not _alive(child)


def test_run_takes_its_own_options_before_the_command_and_refuses_a_colon_path(cli_env, real_trees, shared):
    proc = run_cli(["run", "12.9", "--no-ld-library-path", "--", "sh", "-c", 'echo "[$LD_LIBRARY_PATH]"'],
                   dict(cli_env, LD_LIBRARY_PATH="/x"))
    assert proc.returncode == 0 and proc.stdout.strip() == "[/x]", proc.stderr
    proc = run_cli(["run", "12.9", "--ld-library-path", "--", "sh", "-c", 'echo "[${LD_LIBRARY_PATH%%:*}]"'], cli_env)
    assert proc.stdout.strip() == f"[{real_trees / 'cuda-12.9' / 'lib64'}]", proc.stderr
    odd = os.path.join(shared, "a:b", "cuda-12.9")
    shutil.copytree(real_trees / "cuda-12.9", odd, symlinks=True, copy_function=os.link)
    line = one_line_error(run_cli(["run", odd, "--", "true"], cli_env), 1)
    assert "contains ':', the PATH separator" in line


# ---- wrong answers ---------------------------------------------------------------------------------------------

def test_a_toolkit_without_nvcc_says_so_in_use_run_and_status(cli_env, real_trees, tmp_path):
    other = str(real_trees / "cuda-12.9" / "bin")
    env = _env(str(tmp_path))
    cli_env = dict(cli_env, PATH=f"{other}:/usr/bin:/bin")
    want = f"has no nvcc (no-nvcc, runtime-only); 'nvcc' is {other}/nvcc, from another toolkit"
    proc = run_cli(["use", "11.8", "-p", env, "--no-smoke"], cli_env)
    assert proc.returncode == 0 and want in proc.stderr
    proc = run_cli(["run", "11.8", "--", "sh", "-c", "command -v nvcc"], cli_env)
    assert proc.stdout.strip() == f"{other}/nvcc" and want in proc.stderr
    tk = real_trees / "cuda-11.8"
    proc = run_cli(["status"], dict(cli_env, CUDA_HOME=str(tk), PATH=f"{tk}/bin:{cli_env['PATH']}"))
    assert want in proc.stdout


def test_a_deleted_toolkit_is_reported_by_status_and_doctor(cli_env, real_trees, tmp_path):
    tk = tmp_path / "cuda-12.9"
    shutil.copytree(real_trees / "cuda-12.9", tk, symlinks=True, copy_function=os.link)
    env = _env(str(tmp_path))
    assert run_cli(["use", str(tk), "-p", env, "--no-smoke"], cli_env).returncode == 0
    shutil.rmtree(tk)
    proc = run_cli(["status"], dict(cli_env, CONDA_PREFIX=env))
    assert f"CUDA 12.9.1 at {tk}, which this environment uses, is gone" in proc.stdout
    assert "not applied to this shell yet" not in proc.stdout
    proc = run_cli(["doctor", "-p", env], cli_env)
    assert "TOOLKIT_MISSING" in proc.stdout and str(tk) in proc.stdout


def test_use_on_an_env_outside_condas_folders_prints_an_activate_command_that_works(cli_env, tmp_path):
    env = _env(str(tmp_path / "projects"), "proj")
    proc = run_cli(["use", "12.9", "-p", env, "--no-smoke"], cli_env)
    assert f"To apply it to this shell now: conda activate {env}" in proc.stdout
    root = tmp_path / "miniconda3"
    named = _env(str(root / "envs"), "torch")
    make_env(root, history=None)
    proc = run_cli(["use", "12.9", "-p", named, "--no-smoke"], dict(cli_env, _CONDA_ROOT=str(root)))
    assert "To apply it to this shell now: conda activate torch" in proc.stdout


def test_recommend_holds_the_oldest_release_to_a_python_range_and_claims_no_unmade_arch_check(clean_env):
    for py in ("2.7", "3.5"):
        proc = run_cli(["recommend", "--python", py, "--cuda", "12.4"], clean_env)
        assert proc.returncode == 1 and "no torch release fits" in proc.stdout and "1.8.2" not in proc.stdout
    proc = run_cli(["recommend", "--cc", "12.0", "--cuda", "12.8", "--torch", "2.5", "--python", "3.11"], clean_env)
    assert proc.returncode == 0
    assert "because GPU compute capability" not in proc.stdout
    assert "GPU compute capability 12.0 was NOT checked" in proc.stdout


def test_the_active_toolkit_is_cuda_home_before_cuda_path(cli_env, real_trees):
    env = dict(cli_env, CUDA_HOME=str(real_trees / "cuda-11.8"), CUDA_PATH=str(real_trees / "cuda-12.9"),
               PATH="/usr/bin:/bin")
    import json

    active = [t["version"] for t in json.loads(run_cli(["list", "--json"], env).stdout)["toolkits"] if t["active"]]
    assert active == ["11.8.89"]
    assert f"Active: CUDA 11.8.89 ({real_trees / 'cuda-11.8'})" in run_cli(["status"], env).stdout


# ---- smoke -----------------------------------------------------------------------------------------------------

def test_a_module_printing_without_a_newline_does_not_break_the_probe(torch_env, clean_env, tmp_path):
    import json

    import envs

    prefix = envs.real_torch_env(tmp_path)
    # what a chatty site module does at every interpreter start: stdout, no newline
    (envs.site_packages(prefix) / "chatty.pth").write_text("import sys; sys.stdout.write('loading plugins...')\n")
    proc = run_cli(["smoke", "-p", str(prefix), "--json", "--cpu-ok"], clean_env, timeout=300)
    rec = json.loads(proc.stdout)
    assert proc.returncode == 0 and rec["status"] == "pass", rec["findings"]


@pytest.mark.parametrize("value", ["nan", "-inf", "1e300", "-1", "soon"])
@pytest.mark.parametrize("command", ["smoke", "use 12.9"])
def test_a_bad_timeout_is_a_usage_error(cli_env, command, value, tmp_path):
    line = one_line_error(run_cli([*command.split(), "-p", _env(str(tmp_path)), "--timeout", value], cli_env), 2)
    assert "--timeout" in line


@pytest.mark.parametrize("value", ["0", "none", "inf"])
def test_timeout_zero_or_none_means_no_limit(clean_env, tmp_path, value):
    import json

    import envs

    prefix = envs.make_env(tmp_path)  # no torch: the probe runs to its end and reports a skip
    proc = run_cli(["smoke", "-p", str(prefix), "--json", "--timeout", value], clean_env)
    assert proc.returncode == 0 and json.loads(proc.stdout)["status"] == "skip", proc.stderr


def _smoke_on_a_terminal(prefix, env, *extra):
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, seams.ENTRY, "smoke", "-p", str(prefix), "--cpu-ok", *extra],
                            stdout=subprocess.PIPE, stderr=slave, env=dict(env, PYTHONPATH=str(REPO)))
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    out, _ = proc.communicate(timeout=300)
    os.close(master)
    return proc.returncode, out.decode(), seen.decode()


def test_smoke_shows_progress_on_a_terminal_only(torch_env, clean_env):
    rc, out, tty = _smoke_on_a_terminal(torch_env, clean_env)
    assert rc == 0 and "smoke test running (" in tty and "result: PASS" in out
    assert tty.endswith("\r\x1b[K")  # the status line is wiped before the result is printed
    rc, out, tty = _smoke_on_a_terminal(torch_env, clean_env, "--json")
    assert rc == 0 and tty == "" and out.startswith("{")
    proc = run_cli(["smoke", "-p", str(torch_env), "--cpu-ok"], clean_env, timeout=300)  # a pipe
    assert proc.returncode == 0 and proc.stderr == ""


def test_classifying_a_flood_of_stderr_is_bounded_and_still_finds_the_error():
    code = (
        "from cudaswitch.checks.diagnosis import classify\n"
        "from cudaswitch.checks.diagnosis import ProbeOutcome\n"
        "noise = 'x.so.1' * 40000 + '\\n' + 'Error loading ' * 20000 + '\\n'\n"
        "line = '/env/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister, version libnccl.so.2'\n"
        "out = ProbeOutcome(None, 1, '', noise + 'ImportError: ' + line + '\\n', False, 'import_torch')\n"
        "fs = classify(out, '/env', {}, False, False, {})\n"
        "print(fs[0].code, fs[0].cause)\n")
    # liveness, not speed: before, this did not finish in minutes
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "undefined symbol ncclCommRegister" in proc.stdout


# ---- inputs that crash or mislead --------------------------------------------------------------------------

def test_a_config_that_is_not_utf8_is_an_error_line_and_a_misspelled_key_a_warning(cli_env, tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_bytes("search_paths: ['/opt/cuda-é']\n".encode("latin-1"))
    proc = run_cli(["list"], dict(cli_env, CUDASWITCH_CONFIG=str(cfg)))
    assert one_line_error(proc, 1).startswith(f"cudaswitch: error: {cfg}: not UTF-8 text")
    assert "11.8.89" in proc.stdout  # the other toolkits are still listed
    cfg.write_text("search_path: [/opt/cuda-12.1]\n")
    proc = run_cli(["list"], dict(cli_env, CUDASWITCH_CONFIG=str(cfg)))
    assert proc.returncode == 0
    assert (f"warning: {cfg}: unknown key 'search_path' is ignored; did you mean 'search_paths'? known keys: "
            f"search_paths") in proc.stderr


def test_a_regular_file_on_the_search_path_is_called_a_file(cli_env, tmp_path):
    f = tmp_path / "cuda-12.1.tar"
    f.write_text("x")
    proc = run_cli(["list"], dict(cli_env, CUDASWITCH_SEARCH_PATH=f"{f}:{cli_env['CUDASWITCH_SEARCH_PATH']}"))
    assert f"warning: {f}: a file, not a folder" in proc.stderr and "permission denied" not in proc.stderr
    assert "is a file, not a toolkit folder" in one_line_error(run_cli(["which", str(f)], cli_env), 2)


@pytest.mark.parametrize("args, what", [
    (["which", "12.9", "--bin", "--lib"], "--bin and --lib"),
    (["install-cudnn", "ARCHIVE", "--into-env", "-p", "ENV", "--cuda", "12.9"], "--cuda installs into a toolkit"),
    (["uninstall-cudnn", "--into-env", "-p", "ENV", "--cuda", "12.9"], "--cuda restores a toolkit"),
    (["install-cudnn", "ARCHIVE", "--cuda", "12.9", "--sha256", "abc"], "'abc' is not a SHA-256"),
])
def test_contradictory_or_malformed_options_are_refused(cli_env, tmp_path, args, what):
    env = _env(str(tmp_path))
    archive = tmp_path / "cudnn.tar.xz"
    archive.write_bytes(b"x")
    args = [str(archive) if a == "ARCHIVE" else env if a == "ENV" else a for a in args]
    assert what in one_line_error(run_cli(args, cli_env), 2)
    assert sorted(os.listdir(env)) == ["conda-meta"]


def test_the_nvcc_component_version_selects_its_toolkit(cli_env, real_trees):
    proc = run_cli(["which", "12.9.86"], cli_env)  # `nvcc --version` in 12.9.1 prints V12.9.86
    assert proc.returncode == 0 and proc.stdout.strip() == str(real_trees / "cuda-12.9")
    assert "no CUDA toolkit matches '12.9.87'" in one_line_error(run_cli(["which", "12.9.87"], cli_env), 2)


@pytest.mark.parametrize("form", ['eval "`cudaswitch init tcsh`"', "eval `cudaswitch init tcsh`"])
def test_tcsh_init_works_through_eval(cli_env, tmp_path, real_trees, form):
    exe = require_tool("tcsh")
    env_prefix = _env(str(tmp_path))
    bindir = cli_on_path(tmp_path)
    script = tmp_path / "s.csh"
    script.write_text(f"{form}\ncudaswitch use 12.9 --no-smoke > /dev/null\necho \"[$CUDA_HOME]\"\n")
    env = dict(cli_env, PATH=f"{bindir}:/usr/bin:/bin", CONDA_PREFIX=env_prefix)
    out = subprocess.run([exe, "-f", str(script)], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == f"[{real_trees / 'cuda-12.9'}]", out.stderr


def test_a_read_only_file_system_is_a_one_line_refusal(cli_env, tmp_path):
    unshare = require_tool("unshare")
    ro = tmp_path / "ro"
    env = _env(str(ro))
    assert run_cli(["use", "12.9", "-p", env, "--no-smoke"], cli_env).returncode == 0
    probe = subprocess.run([unshare, "-m", "sh", "-c", f"mount --bind {quote_sh(str(ro))} {quote_sh(str(ro))} && "
                            f"mount -o remount,bind,ro {quote_sh(str(ro))}"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a read-only mount here (needs CAP_SYS_ADMIN): {probe.stderr.strip()}")
    cli = f"{quote_sh(sys.executable)} {quote_sh(seams.ENTRY)}"
    for args in (f"use 11.8 -p {quote_sh(env)} --no-smoke", f"off -p {quote_sh(env)}",
                 f"init bash --install --rc-file {quote_sh(str(ro / '.bashrc'))}"):
        proc = subprocess.run([unshare, "-m", "sh", "-c", f"mount --bind {quote_sh(str(ro))} {quote_sh(str(ro))} && "
                               f"mount -o remount,bind,ro {quote_sh(str(ro))} && exec {cli} {args}"],
                              env=cli_env, capture_output=True, text=True)
        line = one_line_error(proc, 1)
        assert "it is on a read-only file system" in line and "nothing was changed" in line
    assert "version: 12.9.1" in (ro / "proj" / "etc" / "cudaswitch" / "state.yaml").read_text()


@pytest.mark.parametrize("umask, want", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_write_gives_a_new_file_what_open_would(tmp_path, umask, want):
    """Every writer (hooks, state file, cuDNN manifest, rc files) goes through atomic_write."""
    from cudaswitch.core.fsutil import atomic_write, dump_yaml

    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "hook.sh", "x")
        dump_yaml(tmp_path / "manifest.yaml", {"a": 1})
        with open(tmp_path / "plain", "w"):
            pass
    finally:
        os.umask(old)
    assert _mode(tmp_path / "plain") == want
    assert _mode(tmp_path / "hook.sh") == want and _mode(tmp_path / "manifest.yaml") == want


@pytest.mark.parametrize("lang", ["en_US.UTF-8", "zh_CN.UTF-8"])
def test_a_path_folder_this_user_cannot_search_is_skipped_and_said_once(cli_env, real_trees, tmp_path, lang):
    """`su user` without `-` keeps root's PATH (/root/.cargo/bin): list, status and doctor skip that folder, say so
    in one line, and report the rest, a toolkit on PATH after it included."""
    if os.geteuid() != 0:
        pytest.skip("needs root to make a folder another user owns")
    private = tmp_path / "private"
    (private / "bin").mkdir(parents=True)
    _give_away(private)
    os.chmod(private, 0o700)
    tk = real_trees / "cuda-12.9"
    env = dict(cli_env, PATH=os.pathsep.join([str(private / "bin"), f"{tk}/bin", "/usr/bin", "/bin"]), LANG=lang,
               LC_ALL=lang)
    said = {"en_US.UTF-8": f"skipped 1 folder(s) on PATH that this user cannot search: {private / 'bin'}",
            "zh_CN.UTF-8": f"跳过了 PATH 中当前用户无权查看的 1 个文件夹：{private / 'bin'}"}[lang]
    for args in (["list"], ["status"], ["doctor"], ["list", "--json"], ["status", "--json"]):
        r = _cli_as_someone_else(args, env)
        out = r.stdout + r.stderr
        assert r.returncode == 0, (args, out)
        assert "Traceback" not in out and "Permission denied" not in out, (args, out)
        if args[-1] == "--json":
            data = json.loads(r.stdout)
            shown = data["warnings"] if args[0] == "list" else data["shell"]["warnings"]
            # JSON is English whatever the language
            assert shown.count(f"skipped 1 folder(s) on PATH that this user cannot search: {private / 'bin'}") == 1, \
                (args, shown)
        else:
            assert out.count(said) == 1, (args, out)
        assert "12.9" in out, (args, out)  # the rest of PATH was read: its toolkit is reported
