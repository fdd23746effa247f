"""Every CUDA modulefile of the corpus (tests/data/modulefiles: eight sites' published files, byte for byte), loaded
by the real Lmod (and, for Tcl, Environment Modules) inside one private root where the folders they name exist;
`cudaswitch which NAME` must give the toolkit that load gives (the folder of the first nvcc on the PATH it leaves),
or, when the load gives no nvcc, refuse in one line saying why. All loads and all cudaswitch runs of the corpus go
in one batch (one namespace, one bash per module system and MODULEPATH), so the whole corpus costs a few seconds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import modulesystems
from modulesystems import NVHPC_CUDA, ROOTS, STUBS

RAAPOI = "/home/software/tools/eb_modulefiles/all"
HOFF_LMOD = modulesystems.CORPUS_PLACES["hoffman2/lmod"]
HOFF_TCL = modulesystems.CORPUS_PLACES["hoffman2/modules"]
# site -> (MODULEPATH as a user of it has it, the module system(s) that load it, the CUDA modules on it). A
# hierarchy's level is on MODULEPATH as its compiler module leaves it (the level first).
SITES = {
    "unibe": ("/software.el7/modulefiles/all", ("lmod",),
              ["CUDA/10.1.105-GCC-8.2.0-2.31.1", "CUDA/10.1.243", "CUDA/8.0.61", "CUDA/9.0.176", "CUDA/9.1.85",
               "CUDA/9.2.88", "CUDA"]),
    "ucla-lmod": (f"{HOFF_LMOD}/gcc/7.2.0:{HOFF_LMOD}/gcc/5.5.0:{HOFF_LMOD}/Core", ("lmod",),
                  ["cuda/8.0.61-xvrfn4v", "cuda/10.0.130-74hupmp", "cuda"]),
    "ucla-tcl": (f"{HOFF_TCL}", ("lmod", "envmodules"),
                 ["cuda/10.0.130-gcc-7.2.0-74hupmp", "cuda/8.0.61-gcc-5.5.0-xvrfn4v"]),
    "csc": ("/appl/spack/v022/modulefiles/gcc/13.2.0:/appl/spack/v022/unsupported/linux-rhel8-x86_64/Core",
            ("lmod",), ["cuda/12.6.0", "nvhpc/24.7"]),
    "unl": ("/util/opt/modulefiles/Core", ("lmod",),
            [f"cuda/{v}" for v in ("6.0", "6.5", "7.5", "8.0", "9.0", "9.1", "9.2", "10.0", "10.2", "11.0", "11.2",
                                   "11.4")] + ["cuda", "compiler/nvhpc/21.9"]),
    "ntu": ("/opt/apps/modules/cuda:/opt/apps/modules/compiler", ("lmod",), ["CUDA/8.0.44-GCC-5.4.0-2.26"]),
    "ntu-sc16": ("/opt/modulefiles", ("lmod", "envmodules"), ["cuda-8.0"]),
    "raapoi": (f"{RAAPOI}/Compiler/GCC/8.3.0:{RAAPOI}/Core", ("lmod",),
               ["CUDA/10.1.243", "CUDA/11.3.1", "CUDA/11.4.1", "CUDAcore/11.1.1"]),
    "fredhutch": ("/app/modules/all", ("lmod",),
                  ["CUDA/10.2.89-GCC-8.3.0", "CUDA/9.2.88-GCC-7.3.0-2.30", "CUDA/11.1.1-GCC-10.2.0",
                   "CUDAcore/11.1.1"]),
    "ucdavis": ("/share/apps/spack/modulefiles/Core:/share/apps/farm/modulefiles", ("lmod",),
                ["cuda/11.7.1", "cuda"]),
    "ucr": ("/opt/hpcc_modules", ("lmod", "envmodules"),
            ["cuda/10.1", "cuda/10.2", "cuda/11.4", "cuda/11.7", "cuda/12.1", "cuda"]),  # cuda: its .version
    "ucsc": ("/usr/local/modulefiles", ("lmod", "envmodules"), ["cuda/10.0", "cuda"]),
    "ucdavis-tcl": ("/share/apps/farm/modulefiles:/share/apps/spack/modulefiles/Core", ("envmodules",),
                    ["cuda/11.7.1", "cuda"]),
}
# the one module of the corpus whose load puts no nvcc on PATH: CSC's Spack-made nvhpc sets up the compilers only
NO_NVCC = {("csc", "nvhpc/24.7")}
CASES = [(site, system, name) for site, (_, systems, names) in SITES.items() for system in systems for name in names]
OWNER = {"lmod": {"LMOD_CMD": str(modulesystems.LMOD)}, "envmodules": {"MODULES_CMD": str(modulesystems.ENVMODULES)}}


class _Run(tuple):
    """(results, where) as the tests unpack it, and the plan (to run more commands in the same layout)."""

    def __new__(cls, out, where, plan):
        self = super().__new__(cls, (out, where))
        self.plan = plan
        return self


@pytest.fixture(scope="module")
def corpus_run(real_trees, tmp_path_factory):
    """One private root, every load and every `cudaswitch which` of CASES, plus `list --json` per site."""
    tmp = tmp_path_factory.mktemp("corpus")
    links = [[str(modulesystems.CORPUS / here), there] for here, there in modulesystems.CORPUS_PLACES.items()]
    for n, (root, version) in enumerate(ROOTS.items()):
        vj = tmp / f"version-{n}.json"
        vj.write_text(json.dumps({"cuda": {"name": "CUDA SDK", "version": version}}))
        links += [[str(real_trees / "cuda-12.9"), root], [str(vj), root + "/version.json"]]
    # NVIDIA HPC SDK's cuda/ as the SDK installs it: cuda/<x.y> and bin, lib64 links into it
    sdk = tmp / "sdk-cuda"
    sdk.mkdir()
    os.symlink(real_trees / "cuda-12.9", sdk / "11.4")
    for d in ("bin", "lib64"):
        os.symlink(f"11.4/{d}", sdk / d)
    links.append([str(sdk), NVHPC_CUDA])
    home = tmp / "home"
    home.mkdir()
    # HPCC_MODULES: UC Riverside's files read it (`set hpcc_modules $::env(HPCC_MODULES)`), as its shells set it
    base = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", "LMOD_RC": str(tmp / "no-lmodrc.lua"),
            "HPCC_MODULES": modulesystems.CORPUS_PLACES["ucr-hpcc"]}
    commands, where = [], {}
    for site, (mp, systems, names) in SITES.items():
        for system in systems:
            where[(site, system, "load")] = len(commands)
            commands.append({"module": system, "steps": [f"load {n}" for n in names], "each": True,
                             "env": dict(base, MODULEPATH=mp)})
            for name in names:
                where[(site, system, name)] = len(commands)
                commands.append({"cli": ["which", name], "env": dict(base, MODULEPATH=mp, **OWNER[system])})
            where[(site, system, "list")] = len(commands)
            commands.append({"cli": ["list", "--json"], "env": dict(base, MODULEPATH=mp, **OWNER[system])})
    plan = {"links": links, "files": STUBS, "commands": commands}
    return _Run(modulesystems.in_private_root(tmp, plan), where, plan)


@pytest.mark.parametrize("site,system,name", CASES, ids=[f"{s}-{m}-{n}" for s, m, n in CASES])
def test_which_gives_the_toolkit_module_load_gives(site, system, name, corpus_run):
    out, where = corpus_run
    load = out[where[(site, system, "load")]]
    assert "nvcc" in load, load
    names = SITES[site][2]
    loaded = load["nvcc"][1 + names.index(name)]
    mine = out[where[(site, system, name)]]
    assert (loaded is None) == ((site, name) in NO_NVCC), (loaded, load["states"][1 + names.index(name)]["PATH"])
    if loaded is None:  # the module gives no nvcc: refused, in one line, naming the module
        assert mine["rc"] != 0 and mine["stdout"] == "", mine
        lines = [ln for ln in mine["stderr"].splitlines() if ln.strip()]
        assert len(lines) == 1 and name in lines[0] and "Traceback" not in mine["stderr"], mine
        return
    assert mine["rc"] == 0, (loaded, mine)
    assert mine["stdout"].strip() == loaded, (loaded, mine)
    if "/" in name and name.split("/")[-1] not in ("", "default"):  # a full name is listed under its toolkit
        rec = json.loads(out[where[(site, system, "list")]]["stdout"])
        (tk,) = [t for t in rec["toolkits"] if t["root"] == loaded] or [None]
        assert tk is not None and name in tk["modules"], (name, loaded, rec["toolkits"])


def test_the_corpus_is_large_and_its_readme_names_every_file():
    """Each file of the corpus has its repository, path and commit in the README; 25+ CUDA modulefiles."""
    readme = (modulesystems.CORPUS / "README.md").read_text()
    files = [p for p in modulesystems.CORPUS.rglob("*") if (p.is_file() or p.is_symlink()) and p.name != "README.md"]
    missing = [str(p.relative_to(modulesystems.CORPUS)) for p in files
               if f"`{p.relative_to(modulesystems.CORPUS)}`" not in readme]
    assert not missing, missing
    cuda = [p for p in files if any(part.lower().startswith(("cuda", "nvhpc")) for part in p.parts[-3:])]
    assert len(cuda) >= 25, len(cuda)


def test_the_real_version_files_change_what_a_bare_name_loads(corpus_run):
    """UC Riverside's cuda/.version names 11.4 beside 12.1: both module systems load 11.4 for `cuda`, not the
    highest version, and cudaswitch's `which cuda` (checked above) follows that mark."""
    out, where = corpus_run
    for system in ("lmod", "envmodules"):
        names = SITES["ucr"][2]
        roots = out[where[("ucr", system, "load")]]["nvcc"]
        bare, highest, marked = (roots[1 + names.index(n)] for n in ("cuda", "cuda/12.1", "cuda/11.4"))
        assert bare == marked != highest, (system, bare, highest)


# names whose family is found only by a rule of its own: a category folder, a bare file, a CUDA module that loads
# CUDAcore, NVIDIA HPC SDK's module (its CUDA only on PATH)
LOADED = [("unl", "lmod", "compiler/nvhpc/21.9"), ("ntu-sc16", "lmod", "cuda-8.0"),
          ("ntu-sc16", "envmodules", "cuda-8.0"), ("fredhutch", "lmod", "CUDA/11.1.1-GCC-10.2.0"),
          ("ucr", "envmodules", "cuda")]


def test_status_names_the_loaded_module_and_its_toolkit(corpus_run, tmp_path):
    """In the shell the real load left (its LOADEDMODULES and _LMFILES_), `status` names the module and the
    toolkit that load gives."""
    out, where = corpus_run
    plan = corpus_run.plan
    commands, wanted = [], []
    for site, system, name in LOADED:
        load = out[where[(site, system, "load")]]
        i = 1 + SITES[site][2].index(name)
        commands.append({"cli": ["status"], "env": dict(load["states"][i], **OWNER[system])})
        shown = name if name != "cuda" else load["states"][i]["LOADEDMODULES"].split(":")[-1]
        wanted.append((shown, load["nvcc"][i]))
    got = modulesystems.in_private_root(tmp_path, dict(plan, commands=commands))
    for (name, root), r in zip(wanted, got):
        lines = [ln for ln in r["stdout"].splitlines() if ln.startswith(f"Module loaded: {name} (")]
        assert lines and root in lines[0], (name, root, r)
