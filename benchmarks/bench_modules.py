"""`cudaswitch list --json` on a cluster's MODULEPATH (50 modulefiles, 10 of them CUDA, in Lua and Tcl), against
Lmod's `module avail` and `module spider cuda` and Environment Modules' `module avail` on the same tree.

cudaswitch reads the CUDA modulefiles as text and inspects each toolkit folder they name; the module systems
evaluate their modulefiles (spider and avail walk the whole tree). The commands run interleaved, so machine noise
hits all of them alike; the figures are ratios of medians. Goal: `list` no slower than `module spider cuda`.
Run with bytecode caching on, as users have it:
env -u PYTHONDONTWRITEBYTECODE python benchmarks/bench_modules.py [--runs 20]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_list import REPO, make_toolkits, timed

LMOD = "/usr/share/lmod/lmod/libexec/lmod"
ENVMODULES = os.environ.get("CUDASWITCH_TEST_ENVMODULES") or "/opt/environment-modules/usr/lib/modulecmd.tcl"
OTHERS = ["gcc", "openmpi", "python", "cmake", "hdf5", "fftw", "boost", "netcdf"]


def make_tree(base: Path, roots):
    """10 CUDA modulefiles (Lua for even minors, Tcl for odd, as a site that moved to Lmod keeps both) and 40
    others."""
    mp = base / "modulefiles"
    for root in roots:
        version = Path(root).name.split("-", 1)[1]
        (mp / "cuda").mkdir(parents=True, exist_ok=True)
        if int(version.split(".")[1]) % 2 == 0:
            (mp / "cuda" / f"{version}.lua").write_text(
                f'family("cuda")\nlocal base = "{root}"\nsetenv("CUDA_HOME", base)\n'
                f'prepend_path("PATH", pathJoin(base, "bin"))\n'
                f'prepend_path("LD_LIBRARY_PATH", pathJoin(base, "lib64"))\n')
        else:
            (mp / "cuda" / version).write_text(
                f"#%Module1.0\nconflict cuda\nset root {root}\nsetenv CUDA_HOME $root\nprepend-path PATH $root/bin\n"
                "prepend-path LD_LIBRARY_PATH $root/lib64\n")
    for i in range(40):
        name = OTHERS[i % len(OTHERS)]
        (mp / name).mkdir(parents=True, exist_ok=True)
        (mp / name / f"{i}.0.lua").write_text(f'prepend_path("PATH", "/opt/{name}/{i}.0/bin")\n')
    return mp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        roots = make_toolkits(Path(tmp) / "apps", 10)
        mp = make_tree(Path(tmp), roots)
        home = Path(tmp) / "home"
        home.mkdir()
        env = dict(os.environ, MODULEPATH=str(mp), HOME=str(home), CUDASWITCH_CONFIG=str(Path(tmp) / "none.yaml"),
                   PYTHONPATH=str(REPO), LMOD_IGNORE_CACHE="1")
        ours = [sys.executable, "-m", "cudaswitch", "list", "--json"]
        out = json.loads(subprocess.run(ours, env=env, check=True, capture_output=True, text=True).stdout)
        found = [t for t in out["toolkits"] if t["modules"]]
        assert len(found) == 10, f"expected 10 toolkits from modules, found {len(found)}"
        cmds = {"cudaswitch list --json": ours}
        if os.path.isfile(LMOD):
            cmds["Lmod: module avail"] = [LMOD, "bash", "avail"]
            cmds["Lmod: module spider cuda"] = [LMOD, "bash", "spider", "cuda"]
        if os.path.isfile(ENVMODULES) and shutil.which("tclsh"):
            cmds["Environment Modules: module avail"] = ["tclsh", ENVMODULES, "bash", "avail"]
        times = {k: [] for k in cmds}
        for _ in range(args.runs):
            for k, cmd in cmds.items():
                times[k].append(timed(cmd, env, check=False))
    med = {k: statistics.median(v) for k, v in times.items()}
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("note: PYTHONDONTWRITEBYTECODE is set, so every run compiles cudaswitch again (run with "
              "env -u PYTHONDONTWRITEBYTECODE)")
    for k, v in med.items():
        print(f"{k:36s} median {v * 1000:7.1f} ms over {args.runs} runs")
    ours_t = med["cudaswitch list --json"]
    for k, v in med.items():
        if k != "cudaswitch list --json":
            print(f"ratio list / {k}: {ours_t / v:.2f}")


if __name__ == "__main__":
    main()
