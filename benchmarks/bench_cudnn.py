#!/usr/bin/env python3
"""Benchmark (issue 4): `cudaswitch install-cudnn` of the real >= 300 MB cuDNN tarball vs the plain baseline
`tar -xf` + `cp -a`, into two copies of the same toolkit, in one run.

    python benchmarks/bench_cudnn.py [--archive PATH] [--repeat N]

The archive defaults to the real cuDNN 9.10.2.21 (nvidia-cudnn-cu12 wheel repacked into NVIDIA's Linux tarball
layout, built and cached by tests/cudnn_archives.py). The toolkit is CUDA 12.9 built from NVIDIA's wheels
(tests/cudatrees.py). cudaswitch's time includes everything it does: streaming decompression, SHA-256 of every
file, fsync of every staged file, the YAML manifest, the renames and the post-install check (header + loading
libcudnn.so.9 with ctypes in a subprocess). Peak RSS is the child's ru_maxrss from wait4() (it includes the
check subprocess). Targets: ratio <= 1.3, peak RSS < 150 MB. cudaswitch runs with this interpreter, not in
userpython.py's environment: the install takes seconds against a start of tens of milliseconds, and the baseline is
not a Python start.
"""

from __future__ import annotations

import argparse
import json
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import cudatrees  # noqa: E402
import cudnn_archives  # noqa: E402


def run(cmd, env=None, cwd=None):
    """(wall seconds, peak RSS in MiB, CompletedProcess-like stdout) of one child, via wait4."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed ({proc.returncode}): {err.decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024.0, out.decode()


def tree_hashes(*dirs: Path) -> dict:
    out = {}
    for d in dirs:
        for p in sorted(d.iterdir()):
            if p.name.startswith("."):
                continue
            if p.is_symlink():
                out[p.name] = "-> " + os.readlink(p)
            elif p.is_file():
                h = hashlib.sha256()
                with open(p, "rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        h.update(chunk)
                out[p.name] = h.hexdigest()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--archive", type=Path, help="a Linux cuDNN tarball (default: the real 9.10.2.21, cached)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each (the best time of each is compared)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--hostile-members", type=int, default=100_000, help="members of the hostile archive timed last")
    args = ap.parse_args()

    archive = args.archive or cudnn_archives.real_linux_tarball()
    size_mb = archive.stat().st_size / 1e6
    top = archive.name.split(".tar")[0]
    work = Path(tempfile.mkdtemp(prefix="bench-cudnn-"))
    template = work / "template" / "usr" / "local" / "cuda-12.9"
    cudatrees.cuda_12_9(template)
    with open(archive, "rb") as fh:  # same page-cache state for both contenders
        while fh.read(1 << 24):
            pass

    env = dict(os.environ)
    env.update(PYTHONPATH=str(REPO), CUDASWITCH_OS="linux", CUDASWITCH_CONFIG=str(work / "no-config.yaml"))
    for k in [k for k in env if k.startswith(("CUDA_", "CONDA"))]:
        env.pop(k)

    ours, base = [], []
    rss = []
    for i in range(args.repeat):
        fs_a = work / f"fs-a{i}"
        fs_b = work / f"fs-b{i}"
        for fs in (fs_a, fs_b):
            (fs / "usr" / "local").mkdir(parents=True)
            shutil.copytree(template, fs / "usr" / "local" / "cuda-12.9", symlinks=True)
        tk_a = fs_a / "usr" / "local" / "cuda-12.9"
        tk_b = fs_b / "usr" / "local" / "cuda-12.9"

        def ours_run():
            wall, peak, out = run([sys.executable, "-m", "cudaswitch", "install-cudnn", str(archive), "--cuda", "12.9",
                                   "--quiet", "--json"], env=dict(env, CUDASWITCH_FS_ROOT=str(fs_a)))
            res = json.loads(out)
            assert res["installed"], res
            ours.append(wall)
            rss.append(peak)
            return res

        extract = work / f"extract{i}"
        extract.mkdir()

        def base_run():
            t0 = time.perf_counter()
            run(["tar", "-xf", str(archive), "-C", str(extract)])
            src = extract / top
            run(["cp", "-a", f"{src}/include/.", f"{tk_b}/include/"])
            run(["cp", "-a", f"{src}/lib/.", f"{tk_b}/lib64/"])
            base.append(time.perf_counter() - t0)

        # alternate which one goes first, so that neither always meets a cold or a busy machine
        if i % 2 == 0:
            res = ours_run()
            base_run()
        else:
            base_run()
            res = ours_run()

        same = tree_hashes(tk_a / "include", tk_a / "lib64") == tree_hashes(tk_b / "include", tk_b / "lib64")
        print(f"run {i + 1}: cudaswitch {ours[-1]:.1f} s (peak RSS {rss[-1]:.0f} MiB, verify: header "
              f"{res['verify']['header']}, cudnnGetVersion() {res['verify']['library']}); "
              f"tar -xf + cp -a {base[-1]:.1f} s; ratio {ours[-1] / base[-1]:.2f}; same files: {same}")
        if not same:
            print("error: the two installs differ", file=sys.stderr)
            return 1
        for p in (fs_a, fs_b, extract):
            shutil.rmtree(p, ignore_errors=True)

    best_ours, best_base = min(ours), min(base)
    ratio = best_ours / best_base
    peak = max(rss)
    print(f"archive: {archive.name} ({size_mb:.0f} MB compressed)")
    print(f"cudaswitch install-cudnn: {best_ours:.1f} s   baseline tar -xf + cp -a: {best_base:.1f} s   (best of "
          f"{len(ours)} each)")
    print(f"ratio: {ratio:.2f} (target <= 1.3)   peak RSS: {peak:.0f} MiB (target < 150 MB)")
    # issue 14: the hostile archive of 100,000 empty members (130 KB) took 1 min 53 s and 1.25 GB before the member
    # limit; it must now be refused at once, in the memory of a normal run
    hostile = work / f"{top}.tar.xz"
    # built in a child: tarfile holds every header of what it writes, and a forked child's ru_maxrss starts from the
    # parent's memory before its exec
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import cudnn_archives; "
                    "cudnn_archives.many_members_tar(__import__('pathlib').Path(sys.argv[2]), int(sys.argv[3]))",
                    str(REPO / "tests"), str(hostile), str(args.hostile_members)], check=True)
    fs_h = work / "fs-hostile"
    (fs_h / "usr" / "local").mkdir(parents=True)
    shutil.copytree(template, fs_h / "usr" / "local" / "cuda-12.9", symlinks=True)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "cudaswitch", "install-cudnn", str(hostile), "--cuda", "12.9",
                             "--quiet"], env=dict(env, CUDASWITCH_FS_ROOT=str(fs_h)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.read()
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    h_wall = time.perf_counter() - t0
    refused = os.waitstatus_to_exitcode(status) != 0 and b"members" in err
    print(f"hostile: {hostile.stat().st_size / 1e3:.0f} KB tar.xz with {args.hostile_members:,} extra members: "
          f"{'refused' if refused else 'NOT refused'} in {h_wall:.2f} s, peak RSS {usage.ru_maxrss / 1024:.0f} MiB")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ratio <= 1.3 and peak < 150 and refused else 1


if __name__ == "__main__":
    sys.exit(main())
