"""What the run-time trust rule (cudaswitch/core/audit.py) costs: `list --json` (20 toolkits), `use 11.9 --no-smoke
--no-verify` and `doctor -p ENV`, each with the audit hook judging every start, load and write (as root, or forced
for an ordinary user) against the same command with the hook left out, interleaved in the same run; the figures are
ratios of medians. The commands run as a user's machine runs them (userpython.py): in a fresh virtual environment
with no startup file that imports anything, whose Python starts the CLI's entry point with the hook on or left out.
Also the test suite's side: a test file run with the hook on for every command (as the suite runs) against the same
file with it off, with this interpreter (the one that has pytest).

    env -u PYTHONDONTWRITEBYTECODE python benchmarks/bench_audit.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_list import make_toolkits, timed  # noqa: E402
from userpython import REPO, users_env, users_python  # noqa: E402

# the CLI as its entry point runs it, with the hook forced on (an ordinary user's run) or left out
_ENTRY = ("import sys\nsys.path[0] = {repo!r}\nfrom cudaswitch.core import audit\n{switch}\n"
          "from cudaswitch.cli import main\nmain(prog_name='cudaswitch')\n")
ON = "audit.force()"
OFF = "audit.wanted = lambda: False"
# the hook on, with the time spent judging summed and printed at exit: a share of the same run, which the load of a
# shared machine slows alike (the with/without ratios above swing with it)
SPENT = ("audit.force()\nimport atexit, time\nspent = [0.0, 0]\n_judge = audit._judge\n"
         "def judge(event, args):\n    t = time.perf_counter()\n    try:\n        return _judge(event, args)\n"
         "    finally:\n        spent[0] += time.perf_counter() - t\n        spent[1] += 1\n"
         "audit._judge = judge\nstart = time.perf_counter()\n"
         "atexit.register(lambda: sys.stderr.write(f'AUDIT {spent[0]} {spent[1]} {time.perf_counter() - start}\\n'))")
# the suite with the hook off: a plugin loaded after conftest switches it back off
_SUITE_OFF = ("import pytest\n\n@pytest.hookimpl(trylast=True)\ndef pytest_configure(config):\n"
              "    from cudaswitch.core import audit\n    audit.wanted = lambda: False\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--suite-runs", type=int, default=3)
    ap.add_argument("--suite-file", default="tests/switching/test_hooks_cli.py")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        roots = make_toolkits(base / "tk")
        prefix = base / "envs" / "torch"
        (prefix / "conda-meta").mkdir(parents=True)
        (prefix / "conda-meta" / "history").write_text("")
        env = users_env(dict(os.environ, CUDASWITCH_SEARCH_PATH=os.pathsep.join(roots),
                             CUDASWITCH_CONFIG=str(base / "none.yaml")))
        python, _script = users_python(base / "venv")
        entries = {}
        for name, switch in (("on", ON), ("off", OFF)):
            entries[name] = base / f"entry-{name}.py"
            entries[name].write_text(_ENTRY.format(repo=str(REPO), switch=switch))
        commands = {"list": ["list", "--json"], "use": ["use", "11.9", "-p", str(prefix), "--no-smoke", "--no-verify"],
                    "doctor": ["doctor", "-p", str(prefix)]}
        times = {(c, m): [] for c in commands for m in entries}
        for c, argv in commands.items():  # once each first: bytecode written, the env switched, each one succeeds
            for m in entries:
                timed([python, str(entries[m]), *argv], env)
        for _ in range(args.runs):
            for c, argv in commands.items():
                for m in entries:
                    times[(c, m)].append(timed([python, str(entries[m]), *argv], env, check=False))
        spent_entry = base / "entry-spent.py"
        spent_entry.write_text(_ENTRY.format(repo=str(REPO), switch=SPENT))
        shares = {c: [] for c in commands}
        events = {}
        for _ in range(args.runs):
            for c, argv in commands.items():
                err = subprocess.run([python, str(spent_entry), *argv], env=env, capture_output=True,
                                     text=True).stderr
                line = next(ln for ln in err.splitlines() if ln.startswith("AUDIT "))
                judged, count, wall = line.split()[1:]
                shares[c].append(float(judged) / float(wall))
                events[c] = int(count)
        plugin = base / "suite_off.py"
        plugin.write_text(_SUITE_OFF)
        suite = {"on": [], "off": []}
        for _ in range(args.suite_runs):
            for m in ("on", "off"):
                extra = ["-p", "suite_off"] if m == "off" else []
                t = time.perf_counter()
                subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra,
                                args.suite_file], cwd=REPO, env=dict(os.environ, PYTHONPATH=str(base)),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                suite[m].append(time.perf_counter() - t)
    for c in commands:
        on, off = statistics.median(times[(c, "on")]), statistics.median(times[(c, "off")])
        print(f"{c:7s} with the hook {on * 1000:7.1f} ms, without {off * 1000:7.1f} ms, ratio {on / off:.3f}; "
              f"judging {events[c]} events took {statistics.median(shares[c]) * 100:.2f}% of the command")
    on, off = statistics.median(suite["on"]), statistics.median(suite["off"])
    print(f"suite   {args.suite_file}: with the hook {on:.1f} s, without {off:.1f} s, ratio {on / off:.3f}")


if __name__ == "__main__":
    main()
