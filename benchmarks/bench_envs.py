"""`cudaswitch envs --json` vs `conda env list --json` over the same 50 environments.

50 environments in an envs dir named by a temporary .condarc (HOME isolated): every one a conda environment
(conda-meta/history), every second one with torch's files (dist-info + torch/version.py) and nvidia-* wheel
dist-infos, every third one switched by cudaswitch (state file). Both commands run interleaved, same
environment, so machine noise hits both; the figure is the ratio of medians. Target (issue 11): <= 0.5.

cudaswitch runs twice: as a user's machine runs it (userpython.py: the script pip writes, in a fresh virtual
environment holding only cudaswitch and its three dependencies, with no startup file that imports anything; the
figure the target is read from), and from this interpreter as it is (whose site-packages may run .pth start-up hooks
that have nothing to do with cudaswitch). conda runs with its own Python.

The real conda is found as the tests find it (CUDASWITCH_TEST_CONDA, else conda on PATH); without one the
comparison is skipped with a message and only cudaswitch's time is printed.
Run: CUDASWITCH_TEST_CONDA=/opt/conda-base python benchmarks/bench_envs.py [--runs 15]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
from bench_list import timed  # noqa: E402
from userpython import users_env, users_python  # noqa: E402


def make_envs(base: Path, count: int = 50) -> Path:
    envs = base / "envs"
    for i in range(count):
        p = envs / f"env{i:02d}"
        (p / "conda-meta").mkdir(parents=True)
        (p / "conda-meta" / "history").write_text("==> 2026-01-01 00:00:00 <==\n")
        (p / "conda-meta" / "python-3.11.9-h1_0_cpython.json").write_text('{"name": "python", "version": "3.11.9"}')
        sp = p / "lib" / "python3.11" / "site-packages"
        sp.mkdir(parents=True)
        if i % 2 == 0:
            (sp / "torch-2.8.0+cu129.dist-info").mkdir()
            (sp / "torch-2.8.0+cu129.dist-info" / "INSTALLER").write_text("pip\n")
            (sp / "torch").mkdir()
            (sp / "torch" / "version.py").write_text("__version__ = '2.8.0+cu129'\ncuda: Optional[str] = '12.9'\n")
            for w in ("nvidia_cudnn_cu12-9.10.2.21", "nvidia_cuda_runtime_cu12-12.9.79", "nvidia_cublas_cu12-12.9.1.4"):
                (sp / f"{w}.dist-info").mkdir()
        if i % 3 == 0:
            (p / "etc" / "cudaswitch").mkdir(parents=True)
            (p / "etc" / "cudaswitch" / "state.yaml").write_text(
                "selector: '12.9'\nversion: 12.9.1\nroot: /usr/local/cuda-12.9\ntime: '2026-01-01T00:00:00+00:00'\n"
                "cudaswitch_version: 0.1.0\nsmoke_status: pass\nsmoke_code: OK\n"
                "smoke_time: '2026-01-01T00:01:00+00:00'\n")
    return envs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    import realconda

    conda = realconda.find_conda()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        envs = make_envs(tmp)
        home = tmp / "home"
        home.mkdir()
        (home / ".condarc").write_text(f"envs_dirs:\n  - {envs}\n")
        # PYTHONDONTWRITEBYTECODE would make every run compile cudaswitch from source; an installed package has
        # its .pyc files (pip writes them), as conda's own modules do
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CONDA", "_CONDA")) and k not in ("CONDARC", "PYTHONDONTWRITEBYTECODE")}
        env.update(HOME=str(home), PYTHONPATH=str(REPO), CONDA_SOLVER="classic", CUDASWITCH_CONFIG=str(tmp / "n.yaml"))
        if conda is not None:
            env["CONDA_EXE"] = os.path.join(conda.root, "bin", "conda")
        ours = [sys.executable, "-m", "cudaswitch", "envs", "--json"]
        clean = [*users_python(tmp / "venv"), "envs", "--json"]
        clean_env = users_env(env)
        out = json.loads(subprocess.run(clean, env=clean_env, check=True, capture_output=True, text=True).stdout)
        mine = [e for e in out["envs"] if e["prefix"].startswith(str(envs))]
        assert len(mine) == 50, f"expected 50 environments, found {len(mine)}"
        if conda is not None:
            theirs = json.loads(subprocess.run([*conda.argv, "env", "list", "--json"], env=env, check=True,
                                               capture_output=True, text=True).stdout)
            assert sorted(p for p in theirs["envs"] if p.startswith(str(envs))) == sorted(e["prefix"] for e in mine)
        a, c, b = [], [], []
        for _ in range(args.runs):
            a.append(timed(clean, clean_env))
            c.append(timed(ours, env))
            if conda is not None:
                b.append(timed([*conda.argv, "env", "list", "--json"], env))
    ma, mc = statistics.median(a), statistics.median(c)
    print(f"cudaswitch envs --json (50 envs), clean venv:       median {ma * 1000:.1f} ms over {args.runs} runs")
    print(f"cudaswitch envs --json (50 envs), this interpreter: median {mc * 1000:.1f} ms")
    if conda is None:
        print("conda env list --json: skipped, no real conda (set CUDASWITCH_TEST_CONDA or put conda on PATH)")
        return
    mb = statistics.median(b)
    print(f"conda env list --json (50 envs):                    median {mb * 1000:.1f} ms ({' '.join(conda.argv)})")
    print(f"ratio: {ma / mb:.2f} clean venv, {mc / mb:.2f} this interpreter (target <= 0.5)")


if __name__ == "__main__":
    main()
