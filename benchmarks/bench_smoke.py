"""Benchmark: `cudaswitch smoke --cpu-ok` against `python -c "import torch"` in the same environment, one run each.

The smoke test starts one Python (the env's own) that imports torch and runs a 2048x2048 matmul, a Conv2d forward and
an autocast step; the target is a ratio <= 1.5 (docs/guide/performance.md records the figure). cudaswitch runs with
this interpreter, not in userpython.py's environment: the baseline is the environment's own Python importing torch
(seconds); this interpreter's startup files, if anything, slow cudaswitch's side.

    python benchmarks/bench_smoke.py [--prefix ENV]   # default: the test suite's cached torch environment
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET = 1.5


def timed(cmd, env):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    return time.perf_counter() - t0, r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", help="conda environment (or venv with a conda-meta folder) holding torch")
    args = ap.parse_args()
    if args.prefix:
        prefix = Path(args.prefix)
    else:
        sys.path.insert(0, str(REPO / "tests" / "fake_torch"))
        import envs

        prefix = envs.torch_venv()
    python = prefix / ("python.exe" if os.name == "nt" else "bin/python")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONDA", "_CONDA"))}
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    timed([str(python), "-c", "import torch"], env)  # warm the file cache once, not measured
    t_import, r = timed([str(python), "-c", "import torch"], env)
    if r.returncode != 0:
        print(f"import torch failed in {prefix}: {r.stderr.strip()[-300:]}")
        return 1
    t_smoke, r = timed([sys.executable, "-m", "cudaswitch", "smoke", "-p", str(prefix), "--cpu-ok"], env)
    last = (r.stdout.strip().splitlines() or ["?"])[-1]
    ratio = t_smoke / t_import
    print(f"environment:          {prefix}")
    print(f"python -c 'import torch': {t_import:.2f} s")
    print(f"cudaswitch smoke --cpu-ok: {t_smoke:.2f} s  (exit {r.returncode}; {last})")
    print(f"ratio: {ratio:.2f} (target <= {TARGET}) -> {'OK' if ratio <= TARGET else 'over target'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
