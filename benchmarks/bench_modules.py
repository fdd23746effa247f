"""`cudaswitch list --json` on a cluster's MODULEPATH as real sites lay it out, against Lmod's `module spider cuda`
(with the site's system spider cache, as Lmod runs on a cluster, and without it) and Lmod's and Environment
Modules' `module avail`, on the same tree.

The tree: the eight sites' real modulefiles of tests/data/modulefiles (Spack Lua and Tcl with a `default` link,
EasyBuild flat and hierarchical with CUDAcore, hand-written Lua and Tcl, NVIDIA HPC SDK modules, the GCC module that
opens a Compiler level), their absolute paths moved under a temporary folder, on every MODULEPATH folder the corpus
test gives its sites (tests/discovery/test_module_corpus.py); beside them OTHER_MODULES EasyBuild-style modules of
other software (a site has hundreds: compilers, MPI, libraries), a `.version` and a `.modulerc`; and a system spider
cache Lmod's own `spider` wrote for the whole tree, named by an lmodrc in EESSI's `["dir"] = ...` form. The toolkit
folders are real toolkit trees (bench_list.make_toolkits). The commands run interleaved, so machine noise hits all
of them alike; the figures are ratios of medians. cudaswitch runs as a user's machine runs it (userpython.py): the
script pip writes, in a fresh virtual environment with no startup file that imports anything; Lmod and Environment
Modules are not Python. Goal: `list` no slower than `module spider cuda`.
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

from bench_list import make_toolkits, timed
from userpython import REPO, users_env, users_python

LMOD = "/usr/share/lmod/lmod/libexec/lmod"
ENVMODULES = os.environ.get("CUDASWITCH_TEST_ENVMODULES") or "/opt/environment-modules/usr/lib/modulecmd.tcl"
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "discovery")]
# where the tests lay the corpus out, the toolkit folders it names, the modules it loads that no site published
from modulesystems import CORPUS, CORPUS_PLACES as PLACES, NVHPC_CUDA, ROOTS, STUBS  # noqa: E402
from test_module_corpus import SITES  # noqa: E402  every site's MODULEPATH

# every site's MODULEPATH, in the corpus test's order, on one MODULEPATH (a cluster with several sites' styles)
MODULEPATH = list(dict.fromkeys(f.lstrip("/") for mp, _, _ in SITES.values() for f in mp.split(":")))
OTHERS = ["GCC", "OpenMPI", "Python", "CMake", "HDF5", "FFTW", "Boost", "netCDF", "OpenBLAS", "SciPy-bundle"]
OTHER_MODULES = 400
EB_OTHER = """help([==[

Description
===========
{name} is one of the site's software packages, built by EasyBuild.
]==])

whatis([==[Description: {name}]==])

local root = "{root}"

conflict("{name}")

if not ( isloaded("GCCcore/10.2.0") ) then
    load("GCCcore/10.2.0")
end

prepend_path("CMAKE_PREFIX_PATH", root)
prepend_path("LD_LIBRARY_PATH", pathJoin(root, "lib"))
prepend_path("PATH", pathJoin(root, "bin"))
setenv("EBROOT{upper}", root)
-- Built with EasyBuild version 4.3.4
"""


def make_tree(base: Path, toolkits):
    """The corpus at its places under `base`, its absolute paths moved there; the toolkit folders it names linked
    to real toolkit trees; other software's modules; a .version, a .modulerc; returns MODULEPATH."""
    tops = sorted({"/" + p.split("/")[1] + "/" for p in [*PLACES.values(), *ROOTS, NVHPC_CUDA, *STUBS]})
    move = {a: f"{base}{a}" for a in tops}
    for here, there in PLACES.items():
        for src in sorted((CORPUS / here).rglob("*")):
            dst = base / there.lstrip("/") / src.relative_to(CORPUS / here)
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_symlink():
                target = os.readlink(src)
                for a, b in move.items():
                    target = target.replace(a, b) if target.startswith(a) else target
                os.symlink(target, dst)
            elif src.is_file():
                text = src.read_text()
                for a, b in move.items():
                    text = text.replace(f'"{a}', f'"{b}').replace(f" {a}", f" {b}")
                dst.write_text(text)
    for n, root in enumerate(ROOTS):
        (base / root.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(toolkits[n % len(toolkits)], base / root.lstrip("/"))
    sdk = base / NVHPC_CUDA.lstrip("/")
    sdk.mkdir(parents=True)
    os.symlink(toolkits[0], sdk / "11.4")
    os.symlink("11.4/bin", sdk / "bin")
    for m in STUBS:
        (base / m.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (base / m.lstrip("/")).write_text("")
    levels = [base / "app/modules/all", base / "home/software/tools/eb_modulefiles/all/Core",
              base / "home/software/tools/eb_modulefiles/all/Compiler/GCC/10.2.0"]
    for i in range(OTHER_MODULES):
        name = OTHERS[i % len(OTHERS)]
        folder = levels[i % len(levels)] / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{i // len(OTHERS)}.{i % 7}.0.lua").write_text(
            EB_OTHER.format(name=name, upper=name.upper().replace("-", "MINUS"),
                            root=f"{base}/software/{name}/{i}"))
    (levels[0] / "Python" / ".version").write_text('#%Module\nset ModulesVersion "3.0.0"\n')
    (levels[1] / "CMake" / ".modulerc.lua").write_text('module_version("CMake/4.1.0", "default")\n')
    return [str(base / p) for p in MODULEPATH]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        toolkits = make_toolkits(base / "apps", 6)
        mp = make_tree(base / "site", toolkits)
        home = base / "home"
        home.mkdir()
        env = users_env(dict(os.environ, MODULEPATH=":".join(mp), HOME=str(home),
                             CUDASWITCH_CONFIG=str(base / "none.yaml"), LMOD_CMD=LMOD))
        env.pop("LMOD_IGNORE_CACHE", None)
        cmds = {}
        if os.path.isfile(LMOD):
            cache = base / "cache"
            cache.mkdir()
            hierarchy = mp + [str(base / "site/home/software/tools/eb_modulefiles/all/Compiler/GCC/10.2.0")]
            spider = subprocess.run([str(Path(LMOD).parent / "spider"), "-o", "spiderT", ":".join(hierarchy)],
                                    env=env, check=True, capture_output=True, text=True)
            (cache / "spiderT.lua").write_text(spider.stdout)
            (base / "lmodrc.lua").write_text('scDescriptT = {\n  {\n    ["dir"] = "%s",\n    ["timestamp"] = '
                                             '"%s/timestamp",\n  },\n}\n' % (cache, cache))
            (cache / "timestamp").write_text("")
            env["LMOD_RC"] = str(base / "lmodrc.lua")
        python, script = users_python(base / "venv")
        ours = [python, script, "list", "--json"]
        out = json.loads(subprocess.run(ours, env=env, check=True, capture_output=True, text=True).stdout)
        names = sorted(m for t in out["toolkits"] for m in t["modules"])
        assert len(names) >= 30 and "CUDA/11.1.1" in names, names  # the Compiler level, only the cache knows it
        cmds["cudaswitch list --json"] = ours
        # what every cudaswitch command pays before it reads a file: Python's start and the CLI's imports
        cmds["cudaswitch --version (start only)"] = [python, script, "--version"]
        if os.path.isfile(LMOD):
            cmds["Lmod: module spider cuda (system cache)"] = [LMOD, "bash", "spider", "cuda"]
            cmds["Lmod: module spider cuda (no cache)"] = ["env", "LMOD_IGNORE_CACHE=1", LMOD, "bash", "spider",
                                                           "cuda"]
            cmds["Lmod: module avail"] = [LMOD, "bash", "avail"]
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
    print(f"tree: {len(names)} CUDA module names, {OTHER_MODULES} other modules, {len(mp)} MODULEPATH folders and "
          "a hierarchy level only the spider cache names")
    for k, v in med.items():
        print(f"{k:42s} median {v * 1000:7.1f} ms over {args.runs} runs")
    ours_t = med["cudaswitch list --json"]
    for k, v in med.items():
        if k != "cudaswitch list --json":
            print(f"ratio list / {k}: {ours_t / v:.2f}")
    start = med["cudaswitch --version (start only)"]
    print(f"list beyond its start: {(ours_t - start) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
