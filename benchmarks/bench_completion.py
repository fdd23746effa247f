"""Tab completion: what a TAB costs, against `python -c pass` (the interpreter's own start, which no completion
written in Python can avoid), in the same run.

The completions, each the protocol a shell's completion function speaks (click's `_CUDASWITCH_COMPLETE`):
a command name (`cudaswitch u<TAB>`), an option (`cudaswitch use --n<TAB>`), both answered without importing
click (cudaswitch/launch.py); a toolkit selector (`cudaswitch use <TAB>`) on a cluster-like machine: 20 toolkits in a
/usr/local-like folder on CUDASWITCH_SEARCH_PATH and the ten-site module tree of bench_modules.py (18 MODULEPATH
folders, 400 other modules) on MODULEPATH, answered from the kept selectors (discovery/selector_cache.py) and, as
the first TAB after a change is, by a whole discovery pass (a cache folder that cannot be written keeps nothing);
an environment name (`cudaswitch doctor -n <TAB>`, 30 environments in an envs folder) and a finding code
(`cudaswitch doctor --fix H<TAB>`). `python -c "import click"` runs in the same loop, to show what click alone
costs. The commands run interleaved, so machine noise hits all of them; the figures are medians and the time a
completion adds to `python -c pass`. Budget: a completion adds under 50 ms. Run with bytecode caching on, as users
have it:
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
from bench_modules import make_tree  # noqa: E402

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


CASES = {"command": "cudaswitch u", "option": "cudaswitch use --n", "selector (kept)": "cudaswitch use ",
         "selector (first TAB after a change)": "cudaswitch use ", "environment name": "cudaswitch doctor -n ",
         "finding code": "cudaswitch doctor --fix H"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        roots = make_toolkits(Path(tmp) / "usr-local")
        modulepath = make_tree(Path(tmp) / "site", make_toolkits(Path(tmp) / "apps", 6))
        for n in range(30):
            (Path(tmp) / "envs" / f"env-{n}" / "conda-meta").mkdir(parents=True)
            (Path(tmp) / "envs" / f"env-{n}" / "conda-meta" / "history").write_text("")
        base_env = dict(os.environ, CUDASWITCH_SEARCH_PATH=os.pathsep.join(roots), HOME=tmp,
                        MODULEPATH=":".join(modulepath), CONDA_ENVS_DIRS=str(Path(tmp) / "envs"),
                        XDG_CACHE_HOME=str(Path(tmp) / "cache"),
                        CUDASWITCH_CONFIG=str(Path(tmp) / "none.yaml"), PYTHONPATH=str(REPO))
        ours = [sys.executable, "-m", "cudaswitch"]
        envs = {k: dict(base_env, COMP_WORDS=line, _CUDASWITCH_COMPLETE="powershell_complete")
                for k, line in CASES.items()}
        (Path(tmp) / "not-a-folder").write_text("")
        envs["selector (first TAB after a change)"]["XDG_CACHE_HOME"] = str(Path(tmp) / "not-a-folder" / "cache")
        time.sleep(0.2)  # the tree older than the pass that keeps what it read (selector_cache.RACY_NS)
        answers = {}
        for k in CASES:
            got = subprocess.run(ours, env=envs[k], check=True, capture_output=True, text=True).stdout
            answers[k] = got.splitlines()
        assert answers["selector (kept)"] == answers["selector (first TAB after a change)"], answers
        assert "plain\tcu118" in answers["selector (kept)"], answers  # the completion really ran discovery
        assert "plain\tCUDA/11.1.1" not in answers["selector (kept)"]  # (no spider cache: Lmod's own, not here)
        assert sum("cuda/" in a.lower() for a in answers["selector (kept)"]) >= 10, answers  # and the module tree
        assert (Path(tmp) / "cache" / "cudaswitch" / "selectors.json").is_file()
        assert len(answers["environment name"]) == 30, answers
        assert "plain\tHOOKS_STALE" in answers["finding code"], answers
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
            print(f"  {k}, {line!r}<TAB>: {med * 1000:.1f} ms, +{(med - base) * 1000:.1f} ms over python -c pass "
                  f"(ratio {med / base:.2f}); budget +50 ms")


if __name__ == "__main__":
    main()
