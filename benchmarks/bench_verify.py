"""What `use` pays for running its hooks in the real shells (switching/verify.py), per shell and in all, against
named baselines in the same run:

* per shell: the check of one shell (one process: activate, a dump of the environment, deactivate, a dump, then the
  comparison) against that shell sourcing the same hook pair and nothing else (one process, no dump);
* in all: `cudaswitch use 12.9 --no-smoke` against `use 12.9 --no-smoke --no-verify`, the same command otherwise.

    python benchmarks/bench_verify.py [--rounds N]

Each figure is the median of N rounds. The CLI runs through tests/seams.py with this interpreter, not in
userpython.py's environment: both sides start the same Python, and the figure is the shells' time on top.
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

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cudaswitch.core.system import System  # noqa: E402
from cudaswitch.switching import hookfiles, verify  # noqa: E402
from cudaswitch.switching.activation import Changes  # noqa: E402
from cudaswitch.core.shells import SHELLS  # noqa: E402

SOURCE = {"sh": ". {0}\n. {1}\n", "fish": "source {0}\nsource {1}\n", "csh": "source {0}\nsource {1}\n",
          "ps1": ". {0}\n. {1}\n"}


def _median(fn, rounds):
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tk = Path(tmp, "usr-local", "cuda-12.9")
        (tk / "bin").mkdir(parents=True)
        (tk / "lib64").mkdir()
        (tk / "include").mkdir()
        (tk / "version.json").write_text('{"cuda": {"name": "CUDA SDK", "version": "12.9.1"}}')
        prefix = Path(tmp, "envs", "torch")
        (prefix / "conda-meta").mkdir(parents=True)
        (prefix / "conda-meta" / "history").write_text("")
        root = str(tk)
        ch = Changes(scalars={"CUDA_PATH": root, "CUDA_HOME": root},
                     prepend={"PATH": [root + "/bin"], "LD_LIBRARY_PATH": [root + "/lib64"]})
        hookfiles.write_hooks(str(prefix), ch, "12.9")
        environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONDA", "_CUDASWITCH", "CUDA"))}
        system = System(os="linux", environ=environ, python_paths=[])
        present, missing = verify.shells_here(system)
        start = verify.start_state(environ, str(prefix), "torch", system)
        dirs = verify.conda_dirs(str(prefix), system)
        print(f"{args.rounds} rounds, median; shells here: {', '.join(s.name for s, _ in present)}"
              + (f"; not installed: {', '.join(s.name for s in missing)}" if missing else ""))
        print(f"{'shell':8} {'hook pair alone':>16} {'verification':>13} {'ratio':>6}")
        for sh, program in present:
            act = hookfiles.hook_path(str(prefix), "activate", SHELLS[sh.hook])
            deact = hookfiles.hook_path(str(prefix), "deactivate", SHELLS[sh.hook])
            pair = Path(tmp, f"pair-{sh.program}.{sh.hook}")
            pair.write_text(SOURCE[sh.hook].format(SHELLS[sh.hook].quote(str(act)), SHELLS[sh.hook].quote(str(deact))))
            alone = _median(lambda: subprocess.run([program, *sh.args, str(pair)], env=start, check=True,
                                                   stdout=subprocess.DEVNULL), args.rounds)
            checked = _median(lambda: verify.check_shell(sh, program, str(prefix), ch, start, dirs, Path(tmp)),
                              args.rounds)
            print(f"{sh.name:8} {alone * 1000:13.1f} ms {checked * 1000:10.1f} ms {checked / alone:5.1f}x")
        all_shells = _median(lambda: verify.verify(str(prefix), ch, start, dirs, present, missing), args.rounds)
        print(f"all shells in parallel (verify.verify): {all_shells * 1000:.1f} ms")
        env = dict(environ, CUDASWITCH_SEARCH_PATH=str(tk.parent), CUDASWITCH_CONFIG=str(Path(tmp, "none.yaml")))
        cli = [sys.executable, str(REPO / "tests" / "seams.py"), "use", "12.9", "-p", str(prefix), "--no-smoke"]
        quiet = _median(lambda: subprocess.run(cli + ["--no-verify"], env=env, check=True, capture_output=True),
                        args.rounds)
        loud = _median(lambda: subprocess.run(cli, env=env, check=True, capture_output=True), args.rounds)
        print(f"use --no-smoke --no-verify: {quiet * 1000:.0f} ms; use --no-smoke: {loud * 1000:.0f} ms; "
              f"{loud / quiet:.2f}x, +{(loud - quiet) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
