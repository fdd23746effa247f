"""`cudaswitch list --json` with 20 toolkits on CUDASWITCH_SEARCH_PATH, and `cudaswitch --help`, vs
`python -c "import click"`: what every command pays before it does anything.

The three commands run interleaved in the same process, so machine noise hits all of them; the figures are ratios of
medians. All three run as a user's machine runs them (userpython.py): cudaswitch through the script pip writes, and
the baseline, in the same fresh virtual environment with no startup file that imports anything. Targets (issue 10):
list <= 1.5, --help <= 1.2. Run with bytecode caching on, as users have it:
env -u PYTHONDONTWRITEBYTECODE python benchmarks/bench_list.py [--runs 30]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from userpython import users_env, users_python


def make_toolkits(base: Path, count: int = 20):
    roots = []
    for i in range(count):
        major, minor = 10 + i // 10, i % 10
        root = base / f"cuda-{major}.{minor}"
        for d in ("bin", "include", "targets/x86_64-linux/lib"):
            (root / d).mkdir(parents=True)
        (root / "lib64").symlink_to("targets/x86_64-linux/lib")
        (root / "bin" / "nvcc").write_text("#!/bin/sh\necho should-not-run\n")
        (root / "bin" / "nvcc").chmod(0o755)
        (root / "include" / "cuda.h").write_text(f"#define CUDA_VERSION {major * 1000 + minor * 10}\n")
        (root / "version.json").write_text(json.dumps({"cuda": {"name": "CUDA SDK", "version": f"{major}.{minor}.1"}}))
        roots.append(str(root))
    return roots


def timed(cmd, env, check=True):
    """Seconds one run of `cmd` takes (the other benchmarks time their commands with this too)."""
    t = time.perf_counter()
    subprocess.run(cmd, env=env, check=check, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   stdin=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        roots = make_toolkits(Path(tmp))
        env = users_env(dict(os.environ, CUDASWITCH_SEARCH_PATH=os.pathsep.join(roots),
                             CUDASWITCH_CONFIG=str(Path(tmp) / "none.yaml"),
                             XDG_CACHE_HOME=str(Path(tmp) / "cache")))  # list keeps its discovery for the next TAB
        python, script = users_python(Path(tmp) / "venv")
        ours = [python, script, "list", "--json"]
        out = json.loads(subprocess.run(ours, env=env, check=True, capture_output=True, text=True).stdout)
        found = [t for t in out["toolkits"] if t["root"].startswith(tmp)]
        assert len(found) == 20, f"expected 20 toolkits, found {len(found)}"
        base = [python, "-c", "import click"]
        helps = [python, script, "--help"]
        a, b, h = [], [], []
        for _ in range(args.runs):
            a.append(timed(ours, env))
            b.append(timed(base, env))
            h.append(timed(helps, env))
    ma, mb, mh = statistics.median(a), statistics.median(b), statistics.median(h)
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("note: PYTHONDONTWRITEBYTECODE is set, so every run compiles cudaswitch again; the figures are not "
              "what users see (run with env -u PYTHONDONTWRITEBYTECODE)")
    print(f"cudaswitch list --json (20 toolkits): median {ma * 1000:.1f} ms over {args.runs} runs")
    print(f"cudaswitch --help:                    median {mh * 1000:.1f} ms")
    print(f"python -c 'import click':             median {mb * 1000:.1f} ms")
    print(f"ratio list: {ma / mb:.2f} (target <= 1.5)")
    print(f"ratio --help: {mh / mb:.2f} (target <= 1.2)")


if __name__ == "__main__":
    main()
