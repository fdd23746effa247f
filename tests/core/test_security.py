"""Issue 14: cudaswitch run as root on a shared machine, against files another user planted.

Each test replays one demonstrated attack: the planted files are created by the unprivileged uid 65534 in a forked
child (as the EACCES test of test_cudnn.py does), then the real command line runs as root against them. Each ends
with a one-line refusal (or a one-line reason for what was skipped) and nothing written outside the intended
folders. The rule these pin is in docs/design/security.md. As root only: that is what CI runs as.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import cudatrees
import cudnn_archives as ca
from conftest import make_env, one_line_error, run_cli
from other_user import NOBODY, as_user, console_script, readable_cli, refused, shared_base, without_working_as

TOP = "cudnn-linux-x86_64-9.10.2.21_cuda12-archive"

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="replays attacks on root: the suite runs as root in CI")


def tree(root: Path) -> dict:
    return ca.snapshot(root)


@pytest.fixture
def shared(clean_env):
    """A world-traversable folder (tmp_path is root-only) holding `attacker/` (owned by uid 65534), a root-only
    `victim/` with a 0600 secret, and a root-owned HOME."""
    base, attacker, victim, home = shared_base("cs-sec-")
    env = dict(clean_env, HOME=str(home))
    yield base, attacker, victim, env
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    return ca.make(tmp_path_factory.mktemp("arch"), "linux-9.10-archive")


def _fs_with_12_9(base: Path, real_trees) -> Path:
    fs = base / "fs"
    (fs / "usr" / "local").mkdir(parents=True)
    shutil.copytree(real_trees / "cuda-12.9", fs / "usr" / "local" / "cuda-12.9", symlinks=True)
    return fs


def _attacker_env(attacker: Path, name: str = "env") -> Path:
    prefix = attacker / name

    def plant():
        make_env(prefix, history=None)
        (prefix / "bin").mkdir()
    as_user(plant)
    return prefix


# ---- 1. manifests and journals ------------------------------------------------------------------------------------

def _manifest(phase: str, ops, created=(), record_created=()) -> str:
    return json.dumps({"schema": 1, "phase": phase, "ops": ops, "created": list(created),
                       "record_created": list(record_created)})


def test_1_uninstall_with_a_journal_in_another_users_env_is_refused(shared, archive):
    base, attacker, victim, env = shared
    prefix = _attacker_env(attacker)
    evil = [{"dest": "../../victim/secret", "role": "lib", "name": "../../../victim/secret", "kind": "file",
             "action": "new", "sha256": "0" * 64},
            {"dest": "../../victim/new", "role": "../../../victim", "name": "new", "kind": None, "action": "new"}]

    def plant():
        tx = prefix / "etc" / "cudaswitch" / "cudnn" / "0001-20250101T000000-1"
        (tx / "stage" / "lib").mkdir(parents=True)
        (tx / "manifest.yaml").write_text(_manifest("uninstalling", evil, created=["../../victim"]))
    as_user(plant)
    before_victim, before_env = tree(victim), tree(prefix)
    for args in (["uninstall-cudnn", "-p", str(prefix)],
                 ["install-cudnn", str(archive), "--into-env", "-p", str(prefix)]):
        line = refused(run_cli(args, env), "belongs to", "sudo -u", "nothing was changed")
        assert str(prefix) in line
    assert tree(victim) == before_victim and tree(prefix) == before_env


EVIL_OPS = {
    "name-with-dotdot": ({"role": "lib", "name": "../../../../victim/secret", "kind": "file", "action": "new",
                          "sha256": "0" * 64}, ()),
    "unknown-role": ({"role": "../../../../victim", "name": "secret", "kind": "file", "action": "overwrite",
                      "sha256": "0" * 64}, ()),
    "kind-null-counts-as-unchanged": ({"role": "lib", "name": "libcudart.so.12", "kind": None, "action": "new"}, ()),
    "created-outside": ({"role": "lib", "name": "libcudnn.so.9", "kind": "symlink", "action": "new",
                         "link": "libcudnn.so.9.10.2"}, ("../../../../victim",)),
}


@pytest.mark.parametrize("phase", ["installed", "committing", "uninstalling"])
@pytest.mark.parametrize("case", sorted(EVIL_OPS))
def test_1_a_journal_cudaswitch_did_not_write_is_never_acted_on(case, phase, shared, real_trees):
    """Even in a record folder only root can write (say, restored from a backup someone edited): destinations are
    recomputed from role and a one-component name, and anything else refuses the whole record."""
    base, _attacker, victim, env = shared
    fs = _fs_with_12_9(base, real_trees)
    op, created = EVIL_OPS[case]
    tx = fs / "usr/local/cuda-12.9/.cudaswitch/cudnn/0001-20250101T000000-1"
    (tx / "stage" / "lib").mkdir(parents=True)
    (tx / "manifest.yaml").write_text(_manifest(phase, [op], created=created))
    env = dict(env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux")
    before_fs, before_victim = tree(fs), tree(victim)
    refused(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env), "not a manifest cudaswitch wrote", "by hand")
    assert tree(fs) == before_fs and tree(victim) == before_victim


def test_1_a_fake_interrupted_install_in_a_group_writable_toolkit_is_refused(shared, real_trees, archive):
    """The toolkit is writable by the attacker's group: their `.cudaswitch` journal would have made root overwrite a
    root-only 0600 file and hand it to them. Root refuses to act on such a toolkit at all."""
    base, _attacker, victim, env = shared
    fs = _fs_with_12_9(base, real_trees)
    for p in (base / "fs", fs / "usr", fs / "usr" / "local"):
        p.chmod(0o755)
    tk = fs / "usr/local/cuda-12.9"
    os.chown(tk, 0, NOBODY)
    tk.chmod(0o775)

    def plant():
        tx = tk / ".cudaswitch" / "cudnn" / "0001-20250101T000000-1"
        (tx / "stage" / "lib").mkdir(parents=True)
        (tx / "stage" / "lib" / "secret").write_bytes(b"attacker's\n")
        (tx / "manifest.yaml").write_text(_manifest("committing", [
            {"dest": "../../../../victim/secret", "role": "lib", "name": "secret", "kind": "file",
             "action": "overwrite", "sha256": "0" * 64}]))
    as_user(plant)
    env = dict(env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux")
    before_fs, before_victim = tree(fs), tree(victim)
    refused(run_cli(["install-cudnn", str(archive), "--cuda", "12.9", "--yes"], env), "writable by group",
            "cuda-12.9", "nothing was changed")
    refused(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env), "writable by group")
    assert tree(fs) == before_fs and tree(victim) == before_victim
    assert (victim / "secret").stat().st_uid == 0


# ---- 2. use / --refresh / off in an environment another user controls -------------------------------------------

@pytest.mark.parametrize("linked", ["etc/conda/activate.d", "etc/cudaswitch", "etc"])
def test_2_use_does_not_write_through_a_linked_folder(linked, shared, real_trees):
    base, attacker, _victim, env = shared
    fs = _fs_with_12_9(base, real_trees)
    profile_d = base / "profile.d"  # stands for /etc/profile.d: every login shell sources what lies there
    profile_d.mkdir()
    prefix = _attacker_env(attacker)

    def plant():
        (prefix / linked).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(profile_d, prefix / linked)
    as_user(plant)
    env = dict(env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux")
    before = tree(prefix)
    # root works as her on her environment (the privilege boundary), and even she does not write through the link
    proc, said = without_working_as(readable_cli(base, ["use", "12.9", "-p", str(prefix), "--no-smoke"], env))
    assert "nobody (uid 65534)" in said
    # her own rights stop it where the link leads (root's profile.d), or the no-follow walk does
    line = refused(proc, str(prefix / linked), "nothing was changed")
    assert "is a symlink" in line or "permission denied" in line, line
    assert list(profile_d.iterdir()) == []
    assert tree(prefix) == before
    proc = readable_cli(base, ["off", "-p", str(prefix)], env)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert list(profile_d.iterdir()) == [] and os.path.islink(prefix / linked)


def test_2_refresh_does_not_take_a_planted_toolkit_root(shared, real_trees):
    base, attacker, _victim, env = shared
    fs = _fs_with_12_9(base, real_trees)
    prefix = _attacker_env(attacker)
    evil = attacker / "evilcuda"

    def plant():
        (evil / "bin").mkdir(parents=True)
        (evil / "include").mkdir()
        (evil / "version.json").write_text('{"cuda": {"version": "12.9.1"}}')
        (evil / "bin" / "ls").write_text("#!/bin/sh\ntouch /tmp/cs-sec-pwned\n")
        (evil / "bin" / "nvcc").write_text("#!/bin/sh\n")
        (prefix / "etc" / "cudaswitch").mkdir(parents=True)
        (prefix / "etc" / "cudaswitch" / "state.yaml").write_text(
            f"selector: '12.9'\nversion: 12.9.1\nroot: {fs / 'usr/local/cuda-12.9'}\ntime: x\n"
            f"cudaswitch_version: '0'\n".replace(str(fs / "usr/local/cuda-12.9"), str(evil)))
    as_user(plant)
    env = dict(env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux")
    before = tree(prefix)
    refused(run_cli(["use", "--refresh", "-p", str(prefix), "--no-smoke"], env), "not a toolkit cudaswitch finds",
            "nothing was changed")
    assert tree(prefix) == before


def test_2_off_removes_no_folder_the_state_file_merely_names(shared):
    base, attacker, _victim, env = shared
    prefix = _attacker_env(attacker)
    keep = base / "important"
    keep.mkdir()

    def plant():
        (prefix / "etc" / "cudaswitch").mkdir(parents=True)
        (prefix / "etc" / "cudaswitch" / "state.yaml").write_text(
            f"selector: '12.9'\nversion: 12.9.1\nroot: /usr/local/cuda-12.9\ntime: x\ncudaswitch_version: '0'\n"
            f"created_dirs: ['../../../important', '{keep}']\nfiles: ['../../../important/x']\n")
    as_user(plant)
    proc = run_cli(["off", "-p", str(prefix)], env)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert keep.is_dir()


# ---- 3. code from the current folder ---------------------------------------------------------------------------------

def _plant_modules(attacker: Path, marker: Path) -> Path:
    proj = attacker / "proj"

    def plant():
        proj.mkdir()
        for mod in ("ctypes", "json", "struct"):
            (proj / f"{mod}.py").write_text(f"open({str(marker)!r}, 'a').write('{mod} ran\\n')\n")
    as_user(plant)
    return proj


def test_3_driver_query_and_probe_do_not_import_from_the_working_folder(shared):
    from cudaswitch.checks.runner import run_probe

    base, attacker, _victim, env = shared
    marker = base / "pwned"
    proj = _plant_modules(attacker, marker)
    env.pop("CONDA_OVERRIDE_CUDA", None)
    proc = subprocess.run(console_script(base) + ["recommend", "--json"], cwd=proj, capture_output=True,
                          text=True, env=env, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert not marker.exists(), marker.read_text()
    # the environment's own Python runs the probe with `-c` in a folder it does not control: the probe drops it
    run_probe(sys.executable, dict(env), 60, ["--driver-only"], cwd=str(proj))
    assert not marker.exists(), marker.read_text()


def test_3_cudnn_load_check_does_not_import_from_the_working_folder(shared, real_trees, archive):
    base, attacker, _victim, env = shared
    marker = base / "pwned"
    proj = _plant_modules(attacker, marker)
    fs = _fs_with_12_9(base, real_trees)
    env = dict(env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux")
    proc = subprocess.run(console_script(base) + ["install-cudnn", str(archive), "--cuda", "12.9", "--yes"],
                          cwd=proj, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Checked:" in proc.stdout or "Verified:" in proc.stdout
    assert not marker.exists(), marker.read_text()


# ---- 4. discovery executes nothing another user could have put there --------------------------------------------

def test_4_list_does_not_run_an_nvcc_planted_in_a_known_env(shared):
    base, attacker, _victim, env = shared
    marker = base / "pwned"
    prefix = _attacker_env(attacker)

    def plant():
        nvcc = prefix / "bin" / "nvcc"
        nvcc.write_text(f"#!/bin/sh\ntouch {marker}\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n")
        nvcc.chmod(0o755)
    as_user(plant)
    (Path(env["HOME"]) / ".conda").mkdir()
    (Path(env["HOME"]) / ".conda" / "environments.txt").write_text(f"{prefix}\n")
    for active in ({}, {"CONDA_PREFIX": str(prefix)}, {"CUDA_HOME": str(prefix)}):
        proc = run_cli(["list"], dict(env, **active))
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
        assert not marker.exists()
    # conda envs are looked at quietly; a folder named by CUDA_HOME says why it was not read
    assert "'nvcc --version' not run" in proc.stderr and "belongs to" in proc.stderr, proc.stderr


# ---- 5. what was hashed is what is unpacked ------------------------------------------------------------------------

def test_5_an_archive_swapped_after_its_sha256_check_is_not_installed(shared, real_trees, archive, monkeypatch):
    import hashlib

    from click.testing import CliRunner

    from cudaswitch.cudnn import archive as cudnn_archive
    from cudaswitch.cli import main

    base, _attacker, _victim, env = shared
    fs = _fs_with_12_9(base, real_trees)
    path = base / archive.name
    shutil.copy(archive, path)
    good = hashlib.sha256(path.read_bytes()).hexdigest()
    (base / "evil").mkdir()
    evil = ca.write_tar(base / "evil" / archive.name, [
        (p, k, b"\x7fELF EVIL payload" if k == "file" and "/lib/libcudnn.so." in p else d)
        for p, k, d in ca.linux_entries("9.10.2.21", "12")])
    real_hash = cudnn_archive.sha256_file

    def hash_then_swap(*a, **kw):
        digest = real_hash(*a, **kw)
        os.replace(evil, path)  # the attacker wins the race: the path now names another file
        return digest
    monkeypatch.setattr(cudnn_archive, "sha256_file", hash_then_swap)
    result = CliRunner().invoke(main, ["install-cudnn", str(path), "--cuda", "12.9", "--sha256", good, "--yes"],
                                env=dict(env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux"))
    assert result.exit_code == 0, result.output
    assert "SHA-256 verified" in result.output
    lib = fs / "usr/local/cuda-12.9/lib64/libcudnn.so.9.10.2"
    assert b"EVIL" not in lib.read_bytes()
    assert hashlib.sha256(path.read_bytes()).hexdigest() != good  # the swap did happen


# ---- 6. use does not run another user's Python ---------------------------------------------------------------------

def test_6_use_runs_the_smoke_test_in_another_users_env_only_as_that_user(shared, real_trees):
    base, attacker, _victim, env = shared
    fs = _fs_with_12_9(base, real_trees)
    marker = attacker / "pwned"
    prefix = _attacker_env(attacker)

    def plant():
        py = prefix / "bin" / "python"
        py.write_text(f"#!/bin/sh\nid -u >> {marker}\n")
        py.chmod(0o755)
    as_user(plant)
    proc = readable_cli(base, ["use", "12.9", "-p", str(prefix)],
                        dict(env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux"))
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "working as nobody (uid 65534)" in proc.stderr, proc.stderr
    # her "python" ran, as the smoke test runs an environment's Python: with her rights, never root's
    assert set(marker.read_text().split()) == {str(NOBODY)}
    # the hooks were written, inside the environment only, and belong to her
    hook = prefix / "etc" / "conda" / "activate.d" / "cudaswitch.sh"
    assert hook.is_file() and not hook.is_symlink() and hook.stat().st_uid == NOBODY


# ---- 7. destinations stay inside the toolkit ---------------------------------------------------------------------

def test_7_a_lib64_linking_out_of_the_toolkit_is_refused(shared, real_trees, archive):
    base, _attacker, victim, env = shared
    fs = _fs_with_12_9(base, real_trees)
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    lib64 = fs / "usr/local/cuda-12.9/lib64"
    lib64.unlink()
    lib64.symlink_to(elsewhere)
    env = dict(env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux")
    before = tree(fs)
    refused(run_cli(["install-cudnn", str(archive), "--cuda", "12.9", "--yes"], env), "lib64", "outside",
            "nothing was changed")
    assert list(elsewhere.iterdir()) == [] and tree(fs) == before


# ---- 8. free space -------------------------------------------------------------------------------------------------

def test_8_an_archive_larger_than_the_free_space_is_refused_before_filling_the_disk(tmp_path, clean_env):
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)]).returncode != 0:
        pytest.fail("cannot mount a tmpfs as root")
    try:
        cudatrees.cuda_10_2(mnt / "usr/local/cuda-10.2")
        env = dict(clean_env, CUDASWITCH_FS_ROOT=str(mnt), CUDASWITCH_OS="linux")
        big = ca.zeros_library_tar(tmp_path / f"{TOP}.tar.gz", 64 << 20)  # 64 MiB of zeros: 64 KB compressed
        assert big.stat().st_size < (1 << 20)
        before = tree(mnt)
        line = refused(run_cli(["install-cudnn", str(big), "--cuda", "10.2", "--force", "--yes"], env),
                       "not enough free space", "nothing was changed")
        assert "64.0 MiB" in line
        assert tree(mnt) == before
        st = os.statvfs(mnt)
        assert st.f_bavail * st.f_frsize > (7 << 20)  # nothing was left staged
    finally:
        subprocess.run(["umount", str(mnt)])


# ---- 9. test seams -------------------------------------------------------------------------------------------------

def test_9_fault_injection_is_not_reachable_from_the_environment(shared, real_trees, archive):
    base, _attacker, _victim, env = shared
    fs = _fs_with_12_9(base, real_trees)
    env = dict(env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux", CUDASWITCH_FAULT="kill@commit:3")
    proc = subprocess.run(console_script(base) + ["install-cudnn", str(archive), "--cuda", "12.9", "--yes"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (fs / "usr/local/cuda-12.9/lib64/libcudnn.so.9").is_symlink()


def test_9_fs_root_of_another_user_is_refused_and_a_relocation_is_announced(shared, real_trees):
    base, attacker, _victim, env = shared
    fake = attacker / "fs"

    def plant():
        (fake / "usr" / "local" / "cuda-12.4" / "bin").mkdir(parents=True)
        (fake / "usr" / "local" / "cuda-12.4" / "version.json").write_text('{"cuda": {"version": "12.4.1"}}')
    as_user(plant)
    cli = console_script(base)
    for args in (["list"], ["uninstall-cudnn", "--cuda", "12.4"]):
        proc = subprocess.run(cli + args, capture_output=True, text=True, timeout=120,
                              env=dict(env, CUDASWITCH_FS_ROOT=str(fake)))
        refused(proc, "CUDASWITCH_FS_ROOT", "belongs to")
        assert "12.4" not in proc.stdout
    fs = _fs_with_12_9(base, real_trees)
    proc = subprocess.run(cli + ["list"], capture_output=True, text=True, timeout=120,
                          env=dict(env, CUDASWITCH_FS_ROOT=str(fs)))
    assert proc.returncode == 0 and "/usr/local/cuda-12.9" in proc.stdout, proc.stderr
    assert "cudaswitch: note: CUDASWITCH_FS_ROOT is set" in proc.stderr and str(fs) in proc.stderr


# ---- 10. the low ones ----------------------------------------------------------------------------------------------

def test_10_a_lock_held_by_another_user_times_out_naming_the_holder(shared, real_trees):
    from cudaswitch.cudnn.lock import locked
    from cudaswitch.cudnn.target import toolkit_target
    from cudaswitch.core.errors import CudaswitchError
    from cudaswitch.core.system import System
    from cudaswitch.discovery.toolkits import discover, select

    base, _attacker, _victim, env = shared
    fs = _fs_with_12_9(base, real_trees)
    tk = fs / "usr/local/cuda-12.9"
    holder = subprocess.Popen(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "flock", str(tk),
                               "sleep", "60"]) if shutil.which("setpriv") and shutil.which("flock") else None
    if holder is None:
        pytest.fail("setpriv and flock (util-linux) are needed")
    try:
        time.sleep(0.5)
        system = System(os="linux", environ={"CUDASWITCH_CONFIG": str(base / "none.yaml")}, root=fs)
        target = toolkit_target(system, select(discover(system), "12.9", system))
        t0 = time.monotonic()
        with pytest.raises(CudaswitchError) as exc:
            with locked(target, wait=1.0):
                pass
        assert time.monotonic() - t0 < 30
        msg = str(exc.value)
        assert "locked by process" in msg and "flock" in msg and "nobody" in msg and "nothing was changed" in msg
    finally:
        holder.kill()
        holder.wait()


def test_10_a_fifo_at_a_hook_path_does_not_hang_use(tmp_path, real_trees, clean_env):
    fs = _fs_with_12_9(tmp_path, real_trees)
    prefix = make_env(tmp_path / "env", history=None)
    (prefix / "etc" / "conda" / "activate.d").mkdir(parents=True)
    os.mkfifo(prefix / "etc" / "conda" / "activate.d" / "cudaswitch.sh")
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux")
    refused(run_cli(["use", "12.9", "-p", str(prefix), "--no-smoke"], env, timeout=60), "not a regular file")
    proc = run_cli(["off", "-p", str(prefix)], env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert (prefix / "etc" / "conda" / "activate.d" / "cudaswitch.sh").exists()  # not ours: left alone


def test_10_terminal_escapes_and_non_utf8_folder_names_are_printed_safely(tmp_path, real_trees, clean_env):
    fs = _fs_with_12_9(tmp_path, real_trees)
    local = fs / "usr" / "local"
    (fs / "opt").mkdir()
    weird = ["cuda-12.9\x1b]0;owned\x07\x1b[2J", os.fsdecode(b"cuda-12.4\xff")]
    for name in weird:
        shutil.copytree(local / "cuda-12.9", fs / "opt" / name, symlinks=True)
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux",
               CUDASWITCH_SEARCH_PATH=":".join(f"/opt/{n}" for n in weird))
    proc = subprocess.run([sys.executable, seams_entry(), "list"], env=env, capture_output=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert b"\x1b" not in out and b"\x07" not in out and b"internal error" not in out
    assert b"\\x1b]0;owned\\x07" in proc.stdout
    proc = subprocess.run([sys.executable, seams_entry(), "list", "--json"], env=env, capture_output=True, timeout=120)
    assert proc.returncode == 0 and b"\x1b" not in proc.stdout
    json.loads(proc.stdout)


def seams_entry() -> str:
    import seams

    return seams.ENTRY


def test_10_unix_socket_or_fifo_in_place_of_version_json_does_not_hang_list(shared):
    base, attacker, _victim, env = shared
    prefix = _attacker_env(attacker)

    def plant():
        os.mkfifo(prefix / "version.json")
    as_user(plant)
    proc = run_cli(["list"], dict(env, CONDA_PREFIX=str(prefix)), timeout=60)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr

