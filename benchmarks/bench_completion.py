"""Tab completion: what a TAB costs, against `python -c pass` (the interpreter's own start, which no completion
written in Python can avoid), in the same run.

Three completions, each the protocol a shell's completion function speaks (click's `_CUDASWITCH_COMPLETE`):
a command name (`cudaswitch u<TAB>`), an option (`cudaswitch use --n<TAB>`), both answered without importing
click (cudaswitch/launch.py), and a toolkit selector (`cudaswitch use <TAB>`, which runs discovery over 20 toolkits
on CUDASWITCH_SEARCH_PATH, through click). `python -c "import click"` runs in the same loop, to show what click
alone costs. The commands run
interleaved, so machine noise hits all of them; the figures are medians and the time a completion adds to
`python -c pass`. Budget: a completion adds under 50 ms. Run with bytecode caching on, as users have it:
env -u PYTHONDONTWRITEBYTECODE python benchmarks/bench_completion.py [--runs 30]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_list import make_toolkits  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def timed(cmd, env):
    """(wall, CPU) seconds of one run; the CPU time (user + system, from wait4) is what a loaded machine
    distorts least."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, cmd
    return time.perf_counter() - t, usage.ru_utime + usage.ru_stime


CASES = {"command": "cudaswitch u", "option": "cudaswitch use --n", "selector": "cudaswitch use "}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        roots = make_toolkits(Path(tmp))
        base_env = dict(os.environ, CUDASWITCH_SEARCH_PATH=os.pathsep.join(roots), HOME=tmp,
                        CUDASWITCH_CONFIG=str(Path(tmp) / "none.yaml"), PYTHONPATH=str(REPO))
        base_env.pop("MODULEPATH", None)
        ours = [sys.executable, "-m", "cudaswitch"]
        envs = {k: dict(base_env, COMP_WORDS=line, _CUDASWITCH_COMPLETE="powershell_complete")
                for k, line in CASES.items()}
        got = subprocess.run(ours, env=envs["selector"], check=True, capture_output=True, text=True).stdout
        assert "plain\tcu118" in got.splitlines(), got  # the completion really ran discovery
        baseline = [sys.executable, "-c", "pass"]
        click = [sys.executable, "-c", "import click"]
        times = {k: [] for k in ["python -c pass", "import click", *CASES]}
        for _ in range(args.runs):
            times["python -c pass"].append(timed(baseline, base_env))
            times["import click"].append(timed(click, base_env))
            for k in CASES:
                times[k].append(timed(ours, envs[k]))
    for i, what in ((0, "wall"), (1, "CPU")):
        base = statistics.median(t[i] for t in times["python -c pass"])
        print(f"{what}: python -c pass {base * 1000:.1f} ms (median of {args.runs})")
        med = statistics.median(t[i] for t in times["import click"])
        print(f"  python -c 'import click': {med * 1000:.1f} ms, +{(med - base) * 1000:.1f} ms (ratio {med / base:.2f})")
        for k, line in CASES.items():
            med = statistics.median(t[i] for t in times[k])
            print(f"  {line!r}<TAB>: {med * 1000:.1f} ms, +{(med - base) * 1000:.1f} ms over python -c pass "
                  f"(ratio {med / base:.2f}); budget +50 ms")


if __name__ == "__main__":
    main()
