"""What the conda plugin costs conda: the same conda commands with and without cudaswitch's entry point.

1. `conda info --json`: every conda command loads every plugin module; this is that cost.
2. `conda update --all -p ENV --offline --yes` in an environment cudaswitch switched (with pip CUDA wheel
   dist-infos and torch's files, so the post-command hook reads the state file, the wheels and torch's build; it
   prints its one line to stderr):
   the post-command hook's cost on top of a real conda command.

cudaswitch is put into conda's Python as the tests do (tests/cli/test_conda_plugin.py): a dist-info with the entry
point on PYTHONPATH, conda's prefix untouched. Runs are interleaved; the figure is the ratio of medians (target:
no measurable difference, i.e. within run-to-run noise). Needs a real conda (CUDASWITCH_TEST_CONDA or conda on
PATH); without one it says so and exits. Both sides start conda's own Python, not userpython.py's environment.
Run: CUDASWITCH_TEST_CONDA=/opt/conda-base python benchmarks/bench_plugin.py [--runs 8]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO))
from bench_list import timed  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=8)
    args = ap.parse_args()
    import click
    import platformdirs
    import realconda

    from cudaswitch import __version__

    conda = realconda.find_conda()
    if conda is None:
        print("skipped: no real conda (set CUDASWITCH_TEST_CONDA or put conda on PATH)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        site = tmp / "site"
        info = site / f"cudaswitch-{__version__}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: cudaswitch\nVersion: {__version__}\n")
        (info / "entry_points.txt").write_text("[conda]\ncudaswitch = cudaswitch.conda_plugin\n")
        deps = tmp / "deps"
        deps.mkdir()
        for mod in (click, platformdirs):
            (deps / mod.__name__).symlink_to(Path(mod.__file__).parent)
        prefix = tmp / "envs" / "switched"
        (prefix / "conda-meta").mkdir(parents=True)
        (prefix / "conda-meta" / "history").write_text("")
        sp = prefix / "lib" / "python3.11" / "site-packages"
        sp.mkdir(parents=True)
        for w in ("nvidia_cuda_runtime_cu12-12.9.79", "nvidia_cudnn_cu12-9.10.2.21", "torch-2.8.0+cu129"):
            (sp / f"{w}.dist-info").mkdir()
        (sp / "torch").mkdir()
        (sp / "torch" / "version.py").write_text("__version__ = '2.8.0+cu129'\ncuda: Optional[str] = '12.9'\n")
        (prefix / "etc" / "cudaswitch").mkdir(parents=True)
        (prefix / "etc" / "cudaswitch" / "state.yaml").write_text(
            "selector: '12.9'\nversion: 12.9.1\nroot: /usr/local/cuda-12.9\ntime: '2026-01-01T00:00:00+00:00'\n"
            "cudaswitch_version: 0.1.0\nld_library_path: true\n")
        home = tmp / "home"
        home.mkdir()
        # bytecode allowed: an installed cudaswitch has its .pyc files, as conda's own modules do
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("CONDA", "_CONDA")) and k not in ("CONDARC", "PYTHONDONTWRITEBYTECODE")}
        base.update(HOME=str(home), CONDA_SOLVER="classic")
        without = dict(base, PYTHONPATH=os.pathsep.join([str(REPO), str(deps)]))
        with_plugin = dict(base, PYTHONPATH=os.pathsep.join([str(REPO), str(deps), str(site)]))
        check = subprocess.run([*conda.argv, "cuda", "--version"], env=with_plugin, capture_output=True, text=True)
        assert check.returncode == 0, f"plugin not loaded: {check.stderr}"
        update = [*conda.argv, "update", "--all", "-p", str(prefix), "--offline", "--yes"]
        out = subprocess.run(update, env=with_plugin, capture_output=True, text=True)
        assert "cudaswitch: pip CUDA wheels" in out.stderr, out.stderr
        for label, cmd in (("conda info --json", [*conda.argv, "info", "--json"]),
                           ("conda update --all (switched env)", update)):
            a, b = [], []
            for _ in range(args.runs):
                a.append(timed(cmd, without))
                b.append(timed(cmd, with_plugin))
            ma, mb = statistics.median(a), statistics.median(b)
            spread = (statistics.quantiles(a, n=4)[2] - statistics.quantiles(a, n=4)[0]) if len(a) >= 4 else 0
            print(f"{label}: without plugin {ma * 1000:.0f} ms, with plugin {mb * 1000:.0f} ms "
                  f"(ratio {mb / ma:.3f}; interquartile spread without plugin {spread * 1000:.0f} ms), "
                  f"{args.runs} runs each")
        probe = ("import time, conda.plugins.types\nt = time.perf_counter()\nimport cudaswitch.conda_plugin\n"
                 "print((time.perf_counter() - t) * 1000)")
        py = os.path.join(conda.root, "bin", "python")
        if os.path.exists(py):
            ms = float(subprocess.run([py, "-c", probe], env=with_plugin, capture_output=True, text=True,
                                      check=True).stdout)
            print(f"loading the plugin module inside conda's Python: {ms:.2f} ms")
        from cudaswitch.checks.conda_health import after_change  # the hook's own work, in-process

        after_change(str(prefix))  # imports once, as the first call in conda's process does
        print(f"post-command hook's own work: {_per_call(lambda: after_change(str(prefix)), 200) * 1e3:.2f} ms "
              f"in a switched environment, {_per_call(lambda: after_change(str(home))) * 1e6:.1f} us in one "
              f"cudaswitch does not switch")


def _per_call(fn, n=2000):
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


if __name__ == "__main__":
    main()
