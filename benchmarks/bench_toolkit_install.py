"""`cudaswitch install-toolkit 13.0 --into DIR` vs plain `pip download` of the same six wheels + unzip.

Both take the wheels from the test cache through PIP_FIND_LINKS / PIP_NO_INDEX, so the network does not decide the
figure; pip's own resolution and copying are in both. install-toolkit does more on top (RECORD hash of every file,
layout links, version.json, staging + rename). Runs alternate, the figure is the ratio of medians. Target (issue 12):
ratio <= 1.3. Disk use of both results is printed. Both run with this interpreter, not in userpython.py's
environment: install-toolkit runs pip, which that environment has not, and both take seconds.
Run: python benchmarks/bench_toolkit_install.py [--runs 3]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import nvidia_wheels as nw  # noqa: E402


def du(path: Path) -> int:
    total = 0
    for dirpath, _, names in os.walk(path):
        for n in names:
            p = os.path.join(dirpath, n)
            if not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def baseline(tmp: Path, env) -> float:
    t = time.perf_counter()
    dl = tmp / "dl"
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(dl),
                    *[s.split("==")[0] + "==13.0.*" for s in nw.TOOLKIT_13_0]], env=env, check=True)
    for whl in dl.glob("*.whl"):
        with zipfile.ZipFile(whl) as zf:
            zf.extractall(tmp / "unpacked")
    return time.perf_counter() - t


def cudaswitch(tmp: Path, env) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "cudaswitch", "install-toolkit", "13.0", "-q", "--again", "--into",
                    str(tmp / "cuda-13.0")], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    for spec in nw.TOOLKIT_13_0:
        nw.wheel(spec)
    base, ours, disk = [], [], {}
    for i in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            env = dict(os.environ, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(nw.cache_dir() / "wheels"),
                       PYTHONPATH=str(REPO), CUDASWITCH_TOOLKITS_DIR=str(tmp / "store"))
            order = (baseline, cudaswitch) if i % 2 == 0 else (cudaswitch, baseline)
            for fn in order:
                (base if fn is baseline else ours).append(fn(tmp, env))
            disk["pip download + unzip"] = du(tmp / "unpacked") + du(tmp / "dl")
            disk["install-toolkit"] = du(tmp / "cuda-13.0")
            shutil.rmtree(tmp / "unpacked", ignore_errors=True)
    b, o = statistics.median(base), statistics.median(ours)
    print(f"CUDA 13.0 from 6 NVIDIA wheels, {args.runs} runs each, alternating, median")
    print(f"pip download + unzip:        {b:6.2f} s")
    print(f"cudaswitch install-toolkit:  {o:6.2f} s")
    print(f"ratio: {o / b:.2f}x (target <= 1.3)")
    for k, v in disk.items():
        print(f"disk use, {k}: {v / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
