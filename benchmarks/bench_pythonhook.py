"""What the Python startup file (cudaswitch/switching/pythonhook.py) costs every interpreter start of an environment:
`python -c pass` in two fresh virtual environments made from this interpreter, one holding the startup file and one
without, started alternately in the same run (same caches, same load), with CUDA_HOME unset so the module does its
work. Wall-clock starts on a shared machine vary by more than the difference, so the figure the goal is read from is
`-X importtime`'s cumulative time of `site` (which processes every .pth file and imports sitecustomize), best of N,
with against without: the first import through the path finders, which the module pays, is otherwise paid by
sitecustomize's. Also the module's own import time with the bytecode cache `use` writes (when cudaswitch runs the
environment's Python version) and without one (an environment its users cannot write, switched by a cudaswitch
running another Python version, compiles it at every start).

    python benchmarks/bench_pythonhook.py [--rounds N]

Goal: under 1 ms per interpreter start. Its two virtual environments are already fresh and hold no other startup
file; cudaswitch is not started, so userpython.py's environment is not needed.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cudaswitch.switching import pythonhook  # noqa: E402


def _venv(where: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, capture_output=True)
    return where


def _starts(python: Path, env: dict, rounds: int) -> list:
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        subprocess.run([str(python), "-c", "pass"], env=env, check=True)
        out.append(time.perf_counter() - t0)
    return out


def _importtime(python: Path, env: dict, module: str = pythonhook.MODULE) -> int:
    """Microseconds `-X importtime` reports for `module` (cumulative: the module and what it imports)."""
    r = subprocess.run([str(python), "-X", "importtime", "-c", "pass"], env=env, capture_output=True, text=True,
                       check=True)
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|\s+(\S+)", line)
        if m and m.group(3) == module:
            return int(m.group(2))
    raise SystemExit(f"{module} was not imported: {r.stderr[-500:]}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain = _venv(Path(tmp) / "plain")
        hooked = _venv(Path(tmp) / "hooked")
        place = pythonhook.live_place(str(hooked), windows=os.name == "nt")
        root = "/opt/cuda-12.9"
        module = pythonhook.render_module(str(hooked), root, "12.9.1", [root + "/bin"], [root + "/lib64"],
                                          windows=os.name == "nt")
        pythonhook.write(str(hooked), place, module)
        py = "Scripts/python.exe" if os.name == "nt" else "bin/python"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA", "_CUDASWITCH", "PYTHON"))}
        check = subprocess.run([str(hooked / py), "-c", "import os; print(os.environ.get('CUDA_HOME'))"], env=env,
                               capture_output=True, text=True, check=True).stdout.strip()
        assert check == root, check  # the module ran
        # Python itself writes no cache here: the one measured is the one `use` wrote
        with_cache = min(_importtime(hooked / py, dict(env, PYTHONDONTWRITEBYTECODE="1")) for _ in range(20))
        without = []
        for _ in range(20):
            for pyc in (hooked / place.rel / "__pycache__").glob(pythonhook.MODULE + ".*.pyc"):
                pyc.unlink()
            without.append(_importtime(hooked / py, dict(env, PYTHONDONTWRITEBYTECODE="1")))
        pythonhook.write(str(hooked), place, module)  # its bytecode cache back, as `use` leaves it
        site_plain, site_hooked = [], []
        for _ in range(args.rounds // 2):
            site_plain.append(_importtime(plain / py, env, "site"))
            site_hooked.append(_importtime(hooked / py, env, "site"))
        _starts(plain / py, env, 5)
        _starts(hooked / py, env, 5)  # warm both
        a, b = [], []
        for _ in range(args.rounds // 10):
            a += _starts(plain / py, env, 10)
            b += _starts(hooked / py, env, 10)
    med_a, med_b = statistics.median(a), statistics.median(b)
    print(f"python -c pass, median of {len(a)} starts each:")
    print(f"  without the startup file  {med_a * 1e3:8.2f} ms")
    print(f"  with the startup file     {med_b * 1e3:8.2f} ms   ratio {med_b / med_a:.3f}   "
          f"difference {(med_b - med_a) * 1e3:+.2f} ms")
    print(f"site (all .pth files and sitecustomize), -X importtime, best of {len(site_plain)}: "
          f"{min(site_plain)} us without, {min(site_hooked)} us with: {min(site_hooked) - min(site_plain):+d} us, "
          f"ratio {min(site_hooked) / min(site_plain):.3f}")
    print(f"-X importtime of {pythonhook.MODULE} (best of 20): {with_cache} us with its bytecode cache, "
          f"{min(without)} us compiled at every start (no cache)")


if __name__ == "__main__":
    main()
