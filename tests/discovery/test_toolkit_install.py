"""`cudaswitch install-toolkit` / `uninstall-toolkit`: a real CUDA 13.0 toolkit assembled from NVIDIA's wheels
(cached in the test cache and handed to pip through PIP_FIND_LINKS / PIP_NO_INDEX, the user-level pip settings the
command respects), compiled with and switched to; refusals and a damaged wheel through the same real pip."""

import json
import os
import shutil
import subprocess
import zipfile

import pytest

import nvidia_wheels as nw
from conftest import cli_on_path, make_env, one_line_error, require_tool, run_cli

from cudaswitch.core.errors import CudaswitchError
from cudaswitch.core.system import System
from cudaswitch.discovery.toolkit_install import MANIFEST, install

KERNEL = r"""
#include <cstdio>
__global__ void add_one(int *a) { a[threadIdx.x] += 1; }
int main() {
    int *d = nullptr;
    cudaError_t e = cudaMalloc(&d, 4 * sizeof(int));
    if (e != cudaSuccess) { printf("no GPU: %s\n", cudaGetErrorString(e)); return 0; }
    add_one<<<1, 4>>>(d);
    printf("kernel: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
"""


def offline_env(clean_env, store):
    for spec in nw.TOOLKIT_13_0:
        nw.wheel(spec)
    return dict(clean_env, CUDASWITCH_TOOLKITS_DIR=str(store), PIP_NO_INDEX="1",
                PIP_FIND_LINKS=str(nw.cache_dir() / "wheels"))


def test_layout_version_and_list(toolkit_13_0, clean_env):
    root = toolkit_13_0
    for rel in ("bin/nvcc", "bin/cudafe++", "bin/ptxas", "nvvm/bin/cicc", "include/cuda_runtime.h",
                "include/crt/host_config.h", "include/cccl/cuda/std/version", "include/nvrtc.h",
                "lib64/libcudart_static.a", "lib64/libcudart.so", "targets/x86_64-linux/include/cuda.h"):
        assert (root / rel).exists(), rel
    assert os.access(root / "bin" / "nvcc", os.X_OK)
    vj = json.loads((root / "version.json").read_text())
    assert vj["cuda"]["version"] == "13.0.88" and vj["cuda_cudart"]["version"] == "13.0.96"
    env = dict(clean_env, CUDASWITCH_TOOLKITS_DIR=str(root.parent))
    r = run_cli(["list", "--json"], env=env)
    tk = next(t for t in json.loads(r.stdout)["toolkits"] if t["root"] == str(root))
    assert tk["version"] == "13.0.88" and tk["nvcc"] == str(root / "bin" / "nvcc")
    assert tk["sources"] == ["install-toolkit"] and tk["version_source"] == "version.json"


def test_compiles_and_links_a_cu_file_with_its_own_nvcc(toolkit_13_0, tmp_path):
    require_tool("g++")
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    nvcc = str(toolkit_13_0 / "bin" / "nvcc")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no other CUDA anywhere in reach
    r = subprocess.run([nvcc, "-c", str(src), "-o", str(tmp_path / "k.o")], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([nvcc, str(tmp_path / "k.o"), "-o", str(tmp_path / "k")], env=env, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    run = subprocess.run([str(tmp_path / "k")], capture_output=True, text=True)
    # without a GPU the runtime says so; with one the kernel runs (the GPU check covers that)
    assert run.returncode == 0 and (run.stdout.startswith("no GPU:") or run.stdout.startswith("kernel: no error"))


def test_use_switches_to_it(toolkit_13_0, tmp_path, clean_env):
    prefix = make_env(tmp_path / "env", history=None)
    env = dict(clean_env, CUDASWITCH_TOOLKITS_DIR=str(toolkit_13_0.parent))
    # the source tag names install-toolkit's copy even where /usr/local/cuda-13.0 is the same version
    r = run_cli(["use", "13.0.88@installed", "-p", str(prefix), "--no-smoke"], env=env)
    assert r.returncode == 0, r.stderr
    assert f"now uses CUDA 13.0.88 ({toolkit_13_0})" in r.stdout
    hook = (prefix / "etc" / "conda" / "activate.d" / "cudaswitch.sh").read_text()
    assert str(toolkit_13_0 / "bin") in hook


def test_refuses_majors_without_nvcc_wheels_and_unknown_minors(tmp_path, clean_env):
    env = offline_env(clean_env, tmp_path / "store")
    line = one_line_error(run_cli(["install-toolkit", "12.9"], env=env), 2)
    assert "nvidia-cuda-nvcc-cu12 (12.0-12.9) ships ptxas and libnvvm only, no nvcc" in line
    # what is downloaded is pinned by version and SHA-256 (cudaswitch/data/toolkit_wheels.csv): an unknown release
    # is refused before pip runs, whatever an index offers
    r = run_cli(["install-toolkit", "13.9", "-q"], env=env, timeout=300)
    assert one_line_error(r, 2) == ("cudaswitch: error: cudaswitch knows the wheels of CUDA 13.0, 13.1, 13.2 (pinned "
                                    "by version and SHA-256), not CUDA 13.9; a newer cudaswitch knows newer releases")
    # a bare major is its newest minor the table knows: pip is asked for exactly those files (none are here)
    line = one_line_error(run_cli(["install-toolkit", "13", "-q", "--again"], env=env, timeout=300), 1)
    assert "the package index offers no nvidia-cuda-" in line and "==13.2." in line
    assert "is not a CUDA version" in one_line_error(run_cli(["install-toolkit", "thirteen"], env=env), 2)
    line = one_line_error(run_cli(["install-toolkit", "13.0.5"], env=env), 2)
    assert line.endswith("NVIDIA's wheels make CUDA 13.0 as 13.0.88, not 13.0.5; give '13.0'")
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("spelling", ["cu130", "13.0.88", "cuda-13.0", "v13.0", "13.0"])
def test_every_spelling_of_a_version_other_commands_take_and_already_installed(spelling, toolkit_13_0, clean_env):
    """install-toolkit takes a version as `use`/`which` do; a toolkit of the same version already there is named
    first and nothing is downloaded (no index is reachable here: a download would fail)."""
    env = dict(clean_env, CUDASWITCH_TOOLKITS_DIR=str(toolkit_13_0.parent), PIP_NO_INDEX="1", PIP_FIND_LINKS="")
    before = sorted(p.name for p in toolkit_13_0.parent.iterdir())
    r = run_cli(["install-toolkit", spelling, "--json"], env=env)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)["installed"]
    assert rec["version"] == "13.0.88" and rec["already"] == rec["root"] and rec["wheels"] == []
    listed = {t["root"]: t["version"] for t in json.loads(run_cli(["list", "--json"], env=env).stdout)["toolkits"]}
    assert listed[rec["root"]] == "13.0.88"
    r = run_cli(["install-toolkit", spelling], env=env)
    assert r.returncode == 0 and r.stdout.splitlines() == [
        f"CUDA 13.0.88 is already installed at {rec['root']}; nothing was downloaded.",
        f"Use it: cudaswitch use {rec['root']}", "Another copy: add --again"]  # one pasteable command per line
    assert sorted(p.name for p in toolkit_13_0.parent.iterdir()) == before


def test_damaged_wheel_installs_nothing(tmp_path, clean_env):
    """A wheel whose payload no longer matches its RECORD (so its SHA-256 is not NVIDIA's): refused, and no half
    toolkit is left for `list`."""
    env = offline_env(clean_env, tmp_path / "store")
    links = tmp_path / "links"
    links.mkdir()
    for spec in nw.TOOLKIT_13_0:
        src = nw.wheel(spec)
        if "nvidia_cuda_crt" not in src.name:
            os.link(src, links / src.name)
            continue
        with zipfile.ZipFile(src) as zin, zipfile.ZipFile(links / src.name, "w") as zout:
            for item in zin.infolist():
                data = zin.read(item.filename)
                if item.filename.endswith("crt/host_config.h"):
                    data += b"\n/* tampered */\n"
                zout.writestr(item, data)
    env["PIP_FIND_LINKS"] = str(links)
    r = run_cli(["install-toolkit", "13.0", "-q", "--again"], env=env, timeout=600)
    # pip refuses it against the SHA-256 NVIDIA published (the table's), and says which file, in one line
    line = one_line_error(r, 1)
    assert line.startswith("cudaswitch: error: the package index served a file for nvidia-cuda-crt 13.0.88 that "
                           "is not NVIDIA's: its SHA-256 is ")
    assert "NVIDIA's is 2c8043c7c9e02492716426e9919fc78d2c5b3b2a7a768a88e952676b08aa55a4 (file://" in line
    assert line.endswith("nothing was installed")
    store = tmp_path / "store"
    assert not (store / "cuda-13.0").exists()
    assert not list(tmp_path.glob("**/*.partial-*"))
    lst = run_cli(["list", "--json"], env=env)
    assert not any(str(store) in t["root"] for t in json.loads(lst.stdout)["toolkits"])


def test_into_and_uninstall_remove_exactly_what_was_made(tmp_path, clean_env):
    env = offline_env(clean_env, tmp_path / "data" / "toolkits")
    dest = tmp_path / "mine" / "cuda-13.0"
    r = run_cli(["install-toolkit", "13.0", "--again", "--into", str(dest), "--json"], env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)["installed"]
    assert rec["root"] == str(dest) and rec["version"] == "13.0.88"
    assert {w["name"] for w in rec["wheels"]} == {s.split("==")[0] for s in nw.TOOLKIT_13_0}
    assert all(len(w["sha256"]) == 64 for w in rec["wheels"])
    listed = json.loads(run_cli(["list", "--json"], env=env).stdout)["toolkits"]
    assert any(t["root"] == str(dest) for t in listed)  # found through the registry, not a search path
    # a file the user put there stops the removal; nothing is lost
    (dest / "notes.txt").write_text("mine")
    r = run_cli(["uninstall-toolkit", str(dest)], env=env)
    assert r.returncode == 1 and "notes.txt" in r.stderr and (dest / "bin" / "nvcc").exists()
    (dest / "notes.txt").unlink()
    r = run_cli(["uninstall-toolkit", "13.0"], env=env)
    assert r.returncode == 0, r.stderr
    assert not dest.exists() and (tmp_path / "mine").is_dir()
    listed = json.loads(run_cli(["list", "--json"], env=env).stdout)["toolkits"]
    assert not any(t["root"] == str(dest) for t in listed)
    # a toolkit cudaswitch did not make is never removed
    r = run_cli(["uninstall-toolkit", str(tmp_path)], env=env)
    assert f"no {MANIFEST}" in one_line_error(r, 2)


def test_modes_follow_the_umask_of_a_shared_server(tmp_path, clean_env):
    """With a lab server's umask 027 the toolkit is the group's to read and run and nobody else's, and no file is
    writable beyond its owner: the umask is read once, before the wheels unpack side by side (read inside a thread it
    is 0 for every other thread for a moment)."""
    env = offline_env(clean_env, tmp_path / "data" / "toolkits")
    env["PATH"] = f"{cli_on_path(tmp_path)}:{env['PATH']}"
    dest = tmp_path / "cuda-13.0"
    r = subprocess.run(["sh", "-c", 'umask 027; exec cudaswitch install-toolkit 13.0 -q --again --into "$1"', "sh", str(dest)],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    modes = {p.relative_to(dest).as_posix(): (p.is_dir(), p.stat().st_mode & 0o7777)
             for p in [dest, *dest.rglob("*")] if not p.is_symlink()}
    assert {m for d, m in modes.values() if d} == {0o750}
    assert {m for d, m in modes.values() if not d} == {0o640, 0o750}
    assert modes["bin/nvcc"] == (False, 0o750) and modes["nvvm/bin/cicc"] == (False, 0o750)
    assert modes["include/cuda_runtime.h"] == (False, 0o640) and modes["version.json"] == (False, 0o640)


def test_a_file_where_the_folder_should_be_is_one_line(tmp_path, clean_env):
    """The line names the file that is in the way (not "File exists"), before anything is downloaded."""
    env = offline_env(clean_env, tmp_path / "data" / "toolkits")
    env["PIP_FIND_LINKS"] = str(tmp_path / "no-wheels-here")
    (tmp_path / "notes").write_text("mine")
    dest = tmp_path / "notes" / "sub" / "cuda-13.0"
    r = run_cli(["install-toolkit", "13.0", "-q", "--again", "--into", str(dest)], env=env)
    line = one_line_error(r, 2)
    assert line == (f"cudaswitch: error: {tmp_path / 'notes'} is a file, not a folder: cudaswitch cannot install "
                    f"into {dest}; choose another --into folder")
    assert (tmp_path / "notes").read_text() == "mine" and sorted(os.listdir(tmp_path)) == ["notes"]


def test_a_disk_that_fills_while_unpacking_is_one_line_and_leaves_nothing(tmp_path, clean_env):
    """300 MB holds the 195 MB of wheels pip downloads but not the 506 MB toolkit: the unpack runs out of space."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300m", "tmpfs", str(mnt)]).returncode != 0:
        pytest.fail("cannot mount a tmpfs as root")
    try:
        env = offline_env(clean_env, tmp_path / "data" / "toolkits")
        r = run_cli(["install-toolkit", "13.0", "-q", "--again", "--into", str(mnt / "cuda-13.0")], env=env, timeout=600)
        line = one_line_error(r, 1)
        assert "No space left on device" in line and line.endswith("nothing was installed")
        assert list(mnt.iterdir()) == []  # the staging folder went with the error
        assert str(mnt) not in run_cli(["list", "--json"], env=env).stdout  # nor registered
    finally:
        subprocess.run(["umount", str(mnt)])


def test_pip_failure_is_one_line(tmp_path):
    def broken_pip(args, show):
        return subprocess.CompletedProcess(args, 1, "", "ERROR: Could not install: [Errno 28] No space left on device\n")

    with pytest.raises(CudaswitchError, match=r"pip download failed \(exit 1\): ERROR: .*No space left"):
        install("13.0", System(os="linux", environ={"CUDASWITCH_TOOLKITS_DIR": str(tmp_path / "t")}),
                runner=broken_pip, again=True)
    assert not any(p.name.startswith(".cuda-13.0.partial") for p in tmp_path.rglob("*"))
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_two_toolkits_of_the_same_version_are_one_choice_with_a_rule_said_once(toolkit_13_0, tmp_path, clean_env):
    """install-toolkit's 13.0.88 beside a system 13.0.88 (NVIDIA's own /usr/local/cuda-13.0 where the machine has
    it, else a copy on the search path): every selector picks the system one and says so once, on stderr; the other
    is named by folder or by the source tag; an environment that already uses one keeps it."""
    env = dict(clean_env, CUDASWITCH_TOOLKITS_DIR=str(toolkit_13_0.parent))
    system_root = "/usr/local/cuda-13.0"
    listed = {t["root"]: t for t in json.loads(run_cli(["list", "--json"], env=env).stdout)["toolkits"]}
    if listed.get(system_root, {}).get("version") != "13.0.88":
        system_root = str(shutil.copytree(toolkit_13_0, tmp_path / "sys" / "cuda-13.0", symlinks=True,
                                          copy_function=os.link))
        env["CUDASWITCH_SEARCH_PATH"] = str(tmp_path / "sys")
    mine = str(toolkit_13_0)
    note = (f"note: CUDA 13.0.88 is installed 2 times; chose {system_root} (not the copy install-toolkit made); for "
            f"another give {mine} or 13.0.88@installed")
    for sel in ("13.0", "13", "13.0.88", "cu130"):  # `which 13`: any installed 13.x, as ever
        r = run_cli(["which", sel], env=env)
        assert (r.returncode, r.stdout, r.stderr.strip()) == (0, system_root + "\n", note), (sel, r.stderr)
    for sel, want in (("13.0.88@installed", mine), ("13@installed", mine), ("13.0@system", system_root)):
        r = run_cli(["which", sel], env=env)
        assert (r.returncode, r.stdout, r.stderr) == (0, want + "\n", ""), (sel, r.stderr)
    prefix = make_env(tmp_path / "env", history=None)
    assert run_cli(["use", "13.0.88@installed", "-p", str(prefix), "--no-smoke"], env=env).returncode == 0
    r = run_cli(["use", "13.0", "-p", str(prefix), "--no-smoke"], env=env)
    assert r.returncode == 0 and f"now uses CUDA 13.0.88 ({mine})" in r.stdout, r.stderr
    assert f"chose {mine} (the one this environment already uses)" in r.stderr


def test_the_unpack_shows_one_progress_bar_on_a_terminal_and_none_for_json(tmp_path, clean_env):
    """At a terminal: the destination is named first, then pip's own progress, then one bar for the unpack, all on
    stderr; stdout is only the result. With --json (a script reading stdout) no bar is drawn."""
    from terminal import stderr_on_a_terminal

    env = offline_env(clean_env, tmp_path / "data" / "toolkits")
    env["PATH"] = f"{cli_on_path(tmp_path)}:{env['PATH']}"
    dest = tmp_path / "cuda-13.0"
    code, out, tty = stderr_on_a_terminal(["cudaswitch", "install-toolkit", "13.0", "--again", "--into", str(dest)],
                                          env)
    assert code == 0, tty
    assert out.startswith(f"Installed CUDA 13.0.88 at {dest} from 6 NVIDIA wheels")
    assert tty.startswith(f"Installing CUDA 13.0.88 into {dest}...")
    assert tty.count("Unpacking") >= 1 and "100%" in tty.rsplit("Unpacking", 1)[1]
    assert tty.index("Installing CUDA") < tty.index("Unpacking")
    dest2 = tmp_path / "cuda-13.0-b"
    code, out, tty = stderr_on_a_terminal(["cudaswitch", "install-toolkit", "13.0", "--again", "--json", "--into",
                                           str(dest2)], env)
    assert code == 0 and json.loads(out)["installed"]["root"] == str(dest2)
    assert "Unpacking" not in tty and "Installing" not in tty, tty


def test_list_during_an_install_does_not_see_its_staging_folder(toolkit_13_0, tmp_path, clean_env):
    """The staging folder lies in the store itself (hidden, 0700): `list` run meanwhile neither lists nor warns
    about it, and still lists the store's toolkits."""
    store = tmp_path / "toolkits"
    store.mkdir()
    os.symlink(toolkit_13_0, store / "cuda-13.0")
    stage = store / ".cuda-13.1.partial-abc123"
    (stage / "root" / "bin").mkdir(parents=True)
    (stage / "wheels").mkdir()
    stage.chmod(0o700)
    r = run_cli(["list", "--json"], env=dict(clean_env, CUDASWITCH_TOOLKITS_DIR=str(store)))
    rec = json.loads(r.stdout)
    assert str(toolkit_13_0) in [t["root"] for t in rec["toolkits"]]
    assert "partial" not in r.stdout + r.stderr
