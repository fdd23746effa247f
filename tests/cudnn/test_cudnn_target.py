"""Where an install goes (cudaswitch/cudnn/target.py): every layout NVIDIA shipped lands in the folders its
instructions name and is undone byte for byte; conda environments; which toolkit is chosen."""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import make_env, run_cli
from cudnn_checks import WIN_BASE, sha256_of, snap, ok, refused



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
            assert not dest.is_symlink() and sha256_of(dest) == value, dest
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
        prefix = make_env(tmp_path / f"env-{os_}")
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
    prefix = make_env(tmp_path / "envs" / "dl")
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


def test_target_is_the_toolkit_the_archive_name_names_when_its_major_has_several(archives, win_fs):
    """cudnn-11.3-windows-x64-v8.2.1.32.zip with CUDA 11.3 and 11.8 installed: the name says 11.3, so no --cuda is
    needed; the output says why that toolkit was taken. A major with two toolkits and no minor in the name still
    asks for --cuda (test_target_is_the_single_toolkit_of_the_archives_cuda_major)."""
    import cudatrees

    fs, env = win_fs
    cudatrees.windows_real_toolkit(fs, "11.8")  # NVIDIA's cudart64_110.dll 11.8.89: read from its version resource
    out = ok(run_cli(["install-cudnn", str(archives["win-8.2-cuda-wrapper"]), "--dry-run"], env)).stdout
    assert "-> CUDA 11.3.0 at" in out and "the CUDA 11.3 toolkit the archive's name says it is for" in out
    assert "v11.8" not in out
