"""CUDA toolkits that Lmod and Environment Modules provide: found by reading modulefiles as text (never by running
them), selected by module name, warned about when loaded beside a switch, and exported as modulefiles that the
real module systems load and unload.

The modulefiles below are written the way sites write them; each names the public example it is modelled on. Their
folders point at toolkit trees built from NVIDIA's real wheels (tests/cudatrees.py), so the version cudaswitch
reports is read from real files, and every static reading is checked against what the real module system sets
when it loads the same file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import modulesystems
from conftest import make_env, one_line_error, require_tool, run_cli

# Spack's generated Lmod modulefile (modelled on ucdavis/spack-ucdavis, modulefiles/hpccf/franklin/Core/cuda/
# 11.7.1.lua): absolute strings everywhere, a `/./bin` on PATH, the ':' separator given, CUDA_HOME set.
SPACK_LUA = """-- -*- lua -*-
-- Module file created by spack (https://github.com/spack/spack) on 2023-06-05 16:40:44.165068
--
-- cuda@{version}%gcc@11.3.0~allow-unsupported-compilers~dev build_system=generic arch=linux-ubuntu22.04-x86_64_v3
--

whatis([[Name : cuda]])
whatis([[Version : {version}]])
help([[CUDA is a parallel computing platform and programming model invented by
NVIDIA. setenv("CUDA_HOME", "/not/this/one") inside help text is only text.]])

prepend_path("LD_LIBRARY_PATH", "{root}/lib64", ":")
prepend_path("CPATH", "{root}/include", ":")
prepend_path("PATH", "{root}/./bin", ":")
prepend_path("CMAKE_PREFIX_PATH", "{root}/./", ":")
setenv("CUDA_HOME", "{root}")
"""

# EasyBuild's generated Lmod modulefile (modelled on vuw-research-computing/raapoi-tools,
# eb_modulefiles/all/Compiler/GCC/8.3.0/CUDA/10.1.243.lua): `local root`, pathJoin, [==[ ]==] long strings,
# conflict(), EBROOTCUDA, and a conditional load of another module.
EASYBUILD_LUA = """help([==[

Description
===========
CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA.
]==])

whatis([==[Description: CUDA]==])
whatis([==[Homepage: https://developer.nvidia.com/cuda-toolkit]==])

local root = "{root}"

conflict("CUDA")

if not ( isloaded("GCCcore/12.2.0") ) then
    load("GCCcore/12.2.0")
end

prepend_path("CMAKE_PREFIX_PATH", root)
prepend_path("CPATH", pathJoin(root, "include"))
prepend_path("LD_LIBRARY_PATH", pathJoin(root, "lib64"))
prepend_path("PATH", pathJoin(root, "bin"))
setenv("EBROOTCUDA", root)
setenv("EBVERSIONCUDA", "{version}")
setenv("CUDA_HOME", root)
setenv("CUDA_ROOT", root)
setenv("CUDA_PATH", root)
-- Built with EasyBuild version 4.7.1
"""

# A hand-written site module (the common template of cluster documentation: the version taken from the file's
# own name, a family so that two CUDA modules never stack).
SITE_LUA = """help([[
This module provides the environment for NVIDIA CUDA {version}.
]])
whatis("Name: CUDA")
whatis("Version: " .. myModuleVersion())
family("cuda")
local version = myModuleVersion()
local base    = pathJoin("{parent}", "cuda-" .. version)
setenv("CUDA_HOME", base)
setenv("CUDA_VERSION", version)
prepend_path("PATH",            pathJoin(base, "bin"))
prepend_path("LD_LIBRARY_PATH", pathJoin(base, "lib64"))
"""

# EasyBuild's Tcl modulefile (the same generator's Tcl form: ModulesHelp proc, braces, $root), as Environment
# Modules sites keep them.
EASYBUILD_TCL = """#%Module

proc ModulesHelp {{ }} {{
    puts stderr {{   CUDA (formerly Compute Unified Device Architecture) is a parallel
  computing platform and programming model created by NVIDIA. - Homepage: https://developer.nvidia.com/cuda-toolkit
}}
}}

module-whatis {{Description: CUDA}}

set root {root}

conflict CUDA

prepend-path	CPATH		$root/include
prepend-path	LD_LIBRARY_PATH		$root/lib64
prepend-path	PATH		$root/bin
setenv	EBROOTCUDA		"$root"
setenv	EBVERSIONCUDA		"{version}"
setenv	CUDA_HOME		"$root"
"""

# A hand-written Tcl module (Environment Modules' documentation style: the version from the module's own name,
# `set` with [file join]). `[module-info version]` is not that: it resolves a symbolic version given to it.
SITE_TCL = """#%Module1.0
##
## cuda modulefile
##
proc ModulesHelp {{ }} {{
        puts stderr "\\tAdds NVIDIA CUDA [module-info name] to your environment"
}}
module-whatis   "NVIDIA CUDA Toolkit"
conflict        cuda
set             version         [file tail [module-info name]]
set             topdir          [file join {parent} cuda-$version]
setenv          CUDA_HOME       $topdir
prepend-path    PATH            $topdir/bin
prepend-path    LD_LIBRARY_PATH $topdir/lib64
"""

# Two that cannot be read without running them: the folder comes from the environment at load time.
GETENV_LUA = """local base = pathJoin(os.getenv("SOFTROOT"), "cuda-12.1")
setenv("CUDA_HOME", base)
prepend_path("PATH", pathJoin(base, "bin"))
"""
ENV_TCL = """#%Module1.0
set root $::env(SOFTROOT)/cuda-12.1
setenv CUDA_HOME $root
prepend-path PATH $root/bin
"""


@pytest.fixture(scope="module")
def trees(real_trees):
    """/usr/local-style folder with cuda-11.8 and cuda-12.9 built from NVIDIA's real wheels (11.8.89, 12.9.1)."""
    return real_trees


def _modulepath(tmp_path: Path, trees: Path) -> Path:
    """A MODULEPATH folder as a site lays it out: cuda/ with Lua and Tcl files, a README, a .version, a default
    link, and other software's modules beside it."""
    mp = tmp_path / "modulefiles"
    (mp / "cuda").mkdir(parents=True)
    (mp / "CUDA").mkdir()
    (mp / "gcc").mkdir()
    (mp / "cudnn").mkdir()
    (mp / "cuda" / "12.9.lua").write_text(SPACK_LUA.format(root=trees / "cuda-12.9", version="12.9.1"))
    (mp / "cuda" / "11.8").write_text(SITE_TCL.format(parent=trees))
    (mp / "cuda" / "12.1.lua").write_text(GETENV_LUA)
    (mp / "cuda" / "README").write_text("Modules for CUDA. Ask the admins for new versions.\n")
    (mp / "cuda" / ".version").write_text('#%Module\nset ModulesVersion "12.9"\n')
    os.symlink("12.9.lua", mp / "cuda" / "default")
    (mp / "CUDA" / "11.8.0.lua").write_text(EASYBUILD_LUA.format(root=trees / "cuda-11.8", version="11.8.0"))
    (mp / "gcc" / "12.2.lua").write_text('prepend_path("PATH", "/opt/gcc/12.2/bin")\n')
    (mp / "cudnn" / "9.1.lua").write_text('setenv("CUDNN_HOME", "/opt/cudnn/9.1")\n')
    _gcccore(mp)
    return mp


def _env(clean_env, mp, **extra):
    env = {k: v for k, v in clean_env.items() if k not in ("LOADEDMODULES", "_LMFILES_", "MODULEPATH", "LMOD_CMD")}
    env.update(MODULEPATH=str(mp), PATH="/usr/bin:/bin", HOME=str(mp.parent / "home"), **extra)
    (mp.parent / "home").mkdir(exist_ok=True)
    return env


# ---- the static reading agrees with the real module system -------------------------------------------------------

READINGS = {
    "spack-lua": ("lmod", "cuda/12.9.lua", SPACK_LUA, "cuda-12.9"),
    "easybuild-lua": ("lmod", "CUDA/11.8.0.lua", EASYBUILD_LUA, "cuda-11.8"),
    "site-lua": ("lmod", "cuda/11.8.lua", SITE_LUA, "cuda-11.8"),
    "easybuild-tcl-under-lmod": ("lmod", "cuda/11.8", EASYBUILD_TCL, "cuda-11.8"),
    "site-tcl-under-lmod": ("lmod", "cuda/12.9", SITE_TCL, "cuda-12.9"),
    "easybuild-tcl": ("envmodules", "cuda/11.8", EASYBUILD_TCL, "cuda-11.8"),
    "site-tcl": ("envmodules", "cuda/12.9", SITE_TCL, "cuda-12.9"),
}


def _gcccore(mp: Path) -> None:
    """The compiler module EasyBuild's CUDA module loads (a site has it; Lmod refuses the load without it)."""
    (mp / "GCCcore").mkdir(parents=True, exist_ok=True)
    (mp / "GCCcore" / "12.2.0.lua").write_text('prepend_path("PATH", "/opt/gcc/12.2.0/bin")\n')


@pytest.mark.parametrize("system,file,text,folder", READINGS.values(), ids=READINGS.keys())
def test_reading_a_modulefile_finds_the_folder_the_real_module_system_sets(system, file, text, folder, trees,
                                                                           tmp_path, clean_env):
    """cudaswitch reads the toolkit folder from the modulefile's text; the real module system, loading the same
    file, sets CUDA_HOME to that folder and puts its bin first on PATH."""
    from cudaswitch.core.system import System
    from cudaswitch.discovery.modules import read_modulefile

    mp = tmp_path / "mf"
    path = mp / file
    path.parent.mkdir(parents=True)
    version = re.sub(r"\.lua$", "", file.split("/", 1)[1])
    path.write_text(text.format(root=trees / folder, parent=trees, version=version))
    _gcccore(mp)
    name = re.sub(r"\.lua$", "", file)
    mf = read_modulefile(System(os="linux", environ={}), name, str(path))
    assert mf is not None and mf.why is None
    assert os.path.normpath(mf.root) == str(trees / folder)
    before, after = modulesystems.run(system, [f"load {name}"], _env(clean_env, mp))
    assert after["CUDA_HOME"] == str(trees / folder)
    assert os.path.normpath(after["PATH"].split(":")[0]) == str(trees / folder / "bin")


# what a site's whatis/help lines may quote: code, in strings whose escaped quotes do not end them (both quote kinds)
QUOTED_LUA = """setenv("CUDA_HOME", "{root}")
prepend_path("PATH", pathJoin("{root}", "bin"))
whatis("Description: \\" setenv('CUDA_HOME', '/opt/not-it') --")
help('it\\'s setenv("CUDA_HOME", "/opt/not-it") --')
whatis("ends in a backslash \\\\") whatis('') whatis("")
"""


def test_an_escaped_quote_does_not_end_a_lua_string(trees, tmp_path, clean_env):
    """The code a whatis or help string quotes is text: cudaswitch reads the folder real Lmod sets, not the one
    inside the strings (a string that ended at an escaped quote would make it the last setenv)."""
    from cudaswitch.core.system import System
    from cudaswitch.discovery.modules import read_modulefile

    mp = tmp_path / "mf"
    (mp / "cuda").mkdir(parents=True)
    (mp / "cuda" / "12.9.lua").write_text(QUOTED_LUA.format(root=trees / "cuda-12.9"))
    mf = read_modulefile(System(os="linux", environ={}), "cuda/12.9", str(mp / "cuda" / "12.9.lua"))
    assert (mf.root, mf.why) == (str(trees / "cuda-12.9"), None)
    before, after = modulesystems.run("lmod", ["load cuda/12.9"], _env(clean_env, mp))
    assert after["CUDA_HOME"] == mf.root
    assert after["PATH"].split(":")[0] == mf.root + "/bin"


def test_the_walk_takes_links_and_build_folders_as_lmod_loads_them(trees, tmp_path, clean_env):
    """A family folder's entries as Lmod follows them: a build folder one level down (cuda/12.4/gcc-11), a link to
    such a folder (cuda/12.8 -> 12.4), a link to a file (cuda/12.5.lua -> 12.6.lua), and the `default` link
    (-> 12.7), which is the marker, not a module: every name cudaswitch finds loads under real Lmod to the folder
    it reads."""
    from cudaswitch.core.system import System
    from cudaswitch.discovery.modules import cuda_modules

    mp = tmp_path / "mf"
    (mp / "cuda" / "12.4").mkdir(parents=True)
    (mp / "cuda" / "12.6.lua").write_text(SPACK_LUA.format(root=trees / "cuda-12.9", version="12.9.1"))
    (mp / "cuda" / "12.4" / "gcc-11.lua").write_text(SPACK_LUA.format(root=trees / "cuda-11.8", version="11.8.89"))
    os.symlink("12.4", mp / "cuda" / "12.8")
    os.symlink("12.6.lua", mp / "cuda" / "12.5.lua")
    _tcl_module(mp / "cuda" / "12.7", trees / "cuda-11.8")
    os.symlink("12.7", mp / "cuda" / "default")  # a Tcl file: read as a module of its own if not passed over
    env = _env(clean_env, mp, **LMOD_ENV)
    found = {mf.name: mf.root for mf in cuda_modules(System(os="linux", environ=env))}
    assert sorted(found) == ["cuda/12.4/gcc-11", "cuda/12.5", "cuda/12.6", "cuda/12.7", "cuda/12.8/gcc-11"]
    states = modulesystems.run("lmod", [f"load {name}" for name in found], env, each=True)
    assert [s["CUDA_HOME"] for s in states[1:]] == list(found.values())
    assert set(found.values()) == {str(trees / "cuda-12.9"), str(trees / "cuda-11.8")}


@pytest.mark.parametrize("text,file,why", [
    (GETENV_LUA, "12.1.lua", "os.getenv(...)"),
    (ENV_TCL, "12.1", "$::env(SOFTROOT)"),
    ('if (mode() == "load") then\n  setenv("CUDA_HOME", "/opt/cuda-12.1")\nend\n', "12.1.lua", "inside a condition"),
    ("#%Module1.0\nif {[is-loaded gcc]} {\n  setenv CUDA_HOME /opt/cuda-12.1\n}\n", "12.1", "inside a condition"),
    ('setenv("CUDA_VERSION", "12.1")\n', "12.1.lua", "neither CUDA_HOME"),
    # a variable is read only when set once, at the top level: one set inside a condition, or set twice (the load
    # takes whichever ran last), could be another folder than the one read
    ("#%Module1.0\nif {[is-loaded gcc]} {\n  set root /opt/cuda-12.1\n}\nsetenv CUDA_HOME $root\n", "12.1",
     "'$root', which is set inside a condition"),
    ('if (mode() == "load") then\n  local root = "/opt/cuda-12.1"\nend\nsetenv("CUDA_HOME", root)\n', "12.1.lua",
     "'root', which is set inside a condition"),
    ("#%Module1.0\nset root /opt/cuda-11.8\nset root /opt/cuda-12.1\nsetenv CUDA_HOME $root\n", "12.1",
     "'$root', which is set twice"),
    ('local root = "/opt/cuda-11.8"\nroot = "/opt/cuda-12.1"\nsetenv("CUDA_HOME", root)\n', "12.1.lua",
     "'root', which is set twice"),
])
def test_a_modulefile_that_depends_on_its_load_is_not_guessed(text, file, why, tmp_path):
    from cudaswitch.core.system import System
    from cudaswitch.discovery.modules import read_modulefile

    (tmp_path / file).write_text(text)
    mf = read_modulefile(System(os="linux", environ={}), "cuda/12.1", str(tmp_path / file))
    assert mf.root is None and why in mf.why, mf


@pytest.mark.parametrize("system", ["lmod", "envmodules"])
def test_a_folder_joined_from_three_parts_is_the_one_the_module_system_sets(system, trees, tmp_path, clean_env):
    """pathJoin (Lua) and [file join] (Tcl) of three parts, one with a trailing '/': cudaswitch reads the folder
    the real module system sets."""
    from cudaswitch.core.system import System
    from cudaswitch.discovery.modules import read_modulefile

    top, name = os.path.split(str(trees))
    mp = tmp_path / "mf"
    (mp / "cuda").mkdir(parents=True)
    if system == "lmod":
        path = mp / "cuda" / "12.9.lua"
        path.write_text(f'local root = pathJoin("{top}", "{name}/", "cuda-12.9")\nsetenv("CUDA_HOME", root)\n'
                        'prepend_path("PATH", pathJoin(root, "bin"))\n')
    else:
        path = mp / "cuda" / "12.9"
        path.write_text(f"#%Module1.0\nset root [file join {top} {name}/ cuda-12.9]\nsetenv CUDA_HOME $root\n"
                        "prepend-path PATH $root/bin\n")
    mf = read_modulefile(System(os="linux", environ={}), "cuda/12.9", str(path))
    assert mf is not None and mf.why is None and mf.root == str(trees / "cuda-12.9"), mf
    _, after = modulesystems.run(system, ["load cuda/12.9"], _env(clean_env, mp))
    assert after["CUDA_HOME"] == mf.root


def test_files_that_are_not_modulefiles_are_left_out(tmp_path):
    """A Tcl modulefile must start with #%Module (both systems refuse one without); a FIFO is never opened."""
    from cudaswitch.core.system import System
    from cudaswitch.discovery.modules import read_modulefile

    (tmp_path / "README").write_text("set root /opt/cuda-12.1\nsetenv CUDA_HOME $root\n")
    os.mkfifo(tmp_path / "12.4")
    system = System(os="linux", environ={})
    assert read_modulefile(system, "cuda/README", str(tmp_path / "README")) is None
    assert read_modulefile(system, "cuda/12.4", str(tmp_path / "12.4")) is None


# ---- list, which, use ---------------------------------------------------------------------------------------------

def test_list_shows_module_toolkits_with_exact_versions_and_runs_nothing(trees, tmp_path, clean_env):
    """On a machine whose only CUDA comes from modulefiles, `list` finds each toolkit with the version its own
    files give, names the module as its source, warns about the one it cannot read, and starts no process
    (strace: the one execve is Python itself)."""
    strace = require_tool("strace")
    import seams

    mp = _modulepath(tmp_path, trees)
    env = _env(clean_env, mp)
    env["PYTHONPATH"] = str(Path(seams.ENTRY).resolve().parent.parent)
    log = tmp_path / "trace"
    r = subprocess.run([strace, "-f", "-e", "trace=execve,clone,clone3,fork,vfork", "-o", str(log), sys.executable,
                        seams.ENTRY, "list", "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    calls = [ln for ln in log.read_text().splitlines() if re.search(r"\b(execve|clone3?|v?fork)\(", ln)
             and "CLONE_THREAD" not in ln and "resumed>" not in ln]
    assert len(calls) == 1 and "execve(" in calls[0], calls
    rec = json.loads(r.stdout)
    mine = {t["root"]: t for t in rec["toolkits"] if t["root"].startswith(str(trees))}
    assert {(t["version"], tuple(sorted(t["modules"]))) for t in mine.values()} == {
        ("12.9.1", ("cuda/12.9",)), ("11.8.89", ("CUDA/11.8.0", "cuda/11.8"))}
    assert "module cuda/12.9" in mine[str(trees / "cuda-12.9")]["sources"]
    unread = [w for w in rec["warnings"] if "cuda/12.1" in w]
    assert len(unread) == 1 and "os.getenv(...)" in unread[0] and "never runs modulefiles" in unread[0]
    assert not any("README" in w or "gcc" in w or "cudnn" in w for w in rec["warnings"]), rec["warnings"]

    human = run_cli(["list"], env)
    assert re.search(r"12\.9\.1 .*module cuda/12\.9", human.stdout), human.stdout
    assert "warning: module cuda/12.1" in human.stderr


def test_without_modulepath_no_module_is_looked_for(trees, tmp_path, clean_env):
    mp = _modulepath(tmp_path, trees)
    env = _env(clean_env, mp)
    del env["MODULEPATH"]
    rec = json.loads(run_cli(["list", "--json"], env).stdout)
    assert not [t for t in rec["toolkits"] if t["root"].startswith(str(trees))]


def test_lmod_spider_cache_leads_to_modules_off_modulepath(trees, tmp_path, clean_env):
    """A hierarchy's deeper levels are not on MODULEPATH until their parent is loaded; Lmod's spider cache (written
    here by Lmod's own `spider` program) lists them, and cudaswitch reads it as text."""
    if not modulesystems.LMOD.is_file():
        modulesystems.command("lmod")
    deep = tmp_path / "Compiler" / "gcc12"
    (deep / "cuda").mkdir(parents=True)
    (deep / "cuda" / "12.9.lua").write_text(SPACK_LUA.format(root=trees / "cuda-12.9", version="12.9.1"))
    spider = modulesystems.LMOD.parent / "spider"
    home = tmp_path / "home"
    cache = home / ".lmod.d" / ".cache"
    cache.mkdir(parents=True)
    out = subprocess.run([str(spider), "-o", "spiderT", str(deep)], capture_output=True, text=True, timeout=120,
                         env=dict(clean_env, HOME=str(home)))
    assert out.returncode == 0 and 'fn = "' in out.stdout, out.stderr
    (cache / "spiderT.lua").write_text(out.stdout)
    empty = tmp_path / "empty"
    empty.mkdir()
    env = dict(_env(clean_env, empty), HOME=str(home), LMOD_RC=str(tmp_path / "no-lmodrc.lua"))
    rec = json.loads(run_cli(["list", "--json"], env).stdout)
    (tk,) = [t for t in rec["toolkits"] if t["root"] == str(trees / "cuda-12.9")]
    assert tk["modules"] == ["cuda/12.9"] and tk["version"] == "12.9.1"


def test_which_and_run_take_a_module_name(trees, tmp_path, clean_env):
    mp = _modulepath(tmp_path, trees)
    env = _env(clean_env, mp)
    assert run_cli(["which", "cuda/12.9"], env).stdout.strip() == str(trees / "cuda-12.9")
    assert run_cli(["which", "CUDA/11.8.0", "--lib"], env).stdout.strip().startswith(str(trees / "cuda-11.8"))
    r = run_cli(["run", "cuda/12.9", "--", "sh", "-c", 'echo "$CUDA_HOME"; command -v nvcc'], env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(trees / "cuda-12.9"), str(trees / "cuda-12.9" / "bin" / "nvcc")]


def test_module_names_that_give_no_toolkit_say_why_in_one_line(trees, tmp_path, clean_env):
    mp = _modulepath(tmp_path, trees)
    env = _env(clean_env, mp)
    line = one_line_error(run_cli(["which", "cuda/12.1"], env), 2)
    assert "cannot be read without running it" in line and "os.getenv" in line
    line = one_line_error(run_cli(["use", "cuda/10.0", "-p", str(make_env(tmp_path / "e")), "--no-smoke"], env), 2)
    assert "no CUDA module 'cuda/10.0' on MODULEPATH" in line and "cuda/12.9" in line


def test_use_with_a_module_name_switches_and_the_real_shell_gets_it(trees, tmp_path, clean_env):
    """`use cuda/12.9` resolves the module once; the hooks it writes are plain shell, and a real bash running them
    gets the module's toolkit with no module system involved."""
    mp = _modulepath(tmp_path, trees)
    prefix = make_env(tmp_path / "env")
    env = _env(clean_env, mp)
    r = run_cli(["use", "cuda/12.9", "-p", str(prefix), "--no-smoke"], env)
    assert r.returncode == 0, r.stderr
    hooks = sorted((prefix / "etc" / "conda" / "activate.d").glob("*.sh"))
    assert hooks and "module" not in hooks[0].read_text()
    script = f'. "{hooks[0]}"; echo "$CUDA_HOME"; command -v nvcc'
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "CONDA_PREFIX": str(prefix), "HOME": str(tmp_path)})
    assert out.stdout.splitlines() == [str(trees / "cuda-12.9"), str(trees / "cuda-12.9" / "bin" / "nvcc")], out


# ---- a module loaded beside a switch ------------------------------------------------------------------------------

@pytest.mark.parametrize("system", ["lmod", "envmodules"])
def test_doctor_and_status_name_a_cuda_module_loaded_beside_the_switch(system, trees, tmp_path, clean_env):
    """The environment is switched to 12.9 and activated; then the user loads cuda/11.8 with the real module
    system. doctor and status say that the module is loaded and which toolkit nvcc, CUDA_HOME and
    LD_LIBRARY_PATH now give."""
    mp = _modulepath(tmp_path, trees)
    prefix = make_env(tmp_path / "env")
    env = _env(clean_env, mp)
    assert run_cli(["use", "12.9", "-p", str(prefix), "--no-smoke"], env).returncode == 0
    tk = trees / "cuda-12.9"
    activated = dict(env, CONDA_PREFIX=str(prefix), CUDA_HOME=str(tk), CUDA_PATH=str(tk),
                     PATH=f"{tk}/bin:/usr/bin:/bin", LD_LIBRARY_PATH=f"{tk}/lib64")
    shell = modulesystems.run(system, ["load cuda/11.8"], activated)[-1]
    assert "cuda/11.8" in shell["LOADEDMODULES"]
    doc = json.loads(run_cli(["doctor", "-p", str(prefix), "--json"], shell).stdout)
    (f,) = [f for f in doc["findings"] if f["code"] == "CUDA_MODULE_LOADED"]
    assert f["severity"] == "warning"
    old = trees / "cuda-11.8"
    assert f"nvcc on PATH is {tk / 'bin' / 'nvcc'}" not in f["cause"]  # 11.8 has no nvcc: PATH's nvcc stays 12.9
    assert f"CUDA_HOME is CUDA 11.8.89 ({old})" in f["cause"]
    assert f"LD_LIBRARY_PATH's first toolkit is CUDA 11.8.89 ({old})" in f["cause"]
    assert "module unload cuda/11.8" in f["fix"]
    st = run_cli(["status"], shell)
    assert f"Module loaded: cuda/11.8 (CUDA 11.8.89 at {old})" in st.stdout
    assert "CUDA_HOME is CUDA 11.8.89" in st.stdout + st.stderr

    unloaded = modulesystems.run(system, ["load cuda/11.8", "unload cuda/11.8"], activated)[-1]
    doc = json.loads(run_cli(["doctor", "-p", str(prefix), "--json"], unloaded).stdout)
    assert not [f for f in doc["findings"] if f["code"] == "CUDA_MODULE_LOADED"]


# ---- export ---------------------------------------------------------------------------------------------------

NVIDIA_INSTALLER_STATE = {  # what NVIDIA's installer tells users to put in ~/.bashrc, for another toolkit
    "PATH": "/usr/local/cuda-13.0/bin:/usr/local/bin:/usr/bin:/bin",
    "LD_LIBRARY_PATH": "/usr/local/cuda-13.0/lib64",
    "CUDA_HOME": "/usr/local/cuda-13.0",
}


@pytest.mark.parametrize("system,syntax", [("lmod", "lmod"), ("envmodules", "tcl")])
def test_an_exported_modulefile_loads_and_unloads_exactly_under_the_real_module_system(system, syntax, trees,
                                                                                       tmp_path, clean_env):
    """`cudaswitch modulefile 12.9 --SYNTAX DIR` writes what a site admin keeps; the real module system loads it
    (CUDA_HOME, CUDA_PATH, nvcc and the libraries are 12.9's) and unloads it back to the shell it started from,
    entry for entry, from the state NVIDIA's installer leaves; cudaswitch reads the file back as the same
    toolkit."""
    out = tmp_path / "site-modules"
    out.mkdir()
    env = _env(clean_env, out, CUDASWITCH_SEARCH_PATH=str(trees))
    r = run_cli(["modulefile", "12.9", f"--{syntax}", str(out)], env)
    assert r.returncode == 0, r.stderr
    written = out / "cuda" / ("12.9.lua" if syntax == "lmod" else "12.9")
    assert f"Wrote {written}" in r.stdout
    start = dict(env, **NVIDIA_INSTALLER_STATE)
    start.pop("CUDA_PATH", None)
    extra = {"LMOD_DUPLICATE_PATHS": "yes"} if system == "lmod" else {}
    before, loaded, after = modulesystems.run(system, ["load cuda/12.9", "unload cuda/12.9"], start, extra)
    tk = trees / "cuda-12.9"
    assert loaded["CUDA_HOME"] == loaded["CUDA_PATH"] == str(tk)
    assert loaded["PATH"].split(":")[0] == str(tk / "bin")
    assert loaded["LD_LIBRARY_PATH"].split(":")[0] == str(tk / "lib64")
    for var in ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH"):
        assert after.get(var) == before.get(var), var
    rec = json.loads(run_cli(["list", "--json"], dict(env, CUDASWITCH_SEARCH_PATH="")).stdout)
    (again,) = [t for t in rec["toolkits"] if t["root"] == str(tk)]
    assert again["modules"] == ["cuda/12.9"] and again["version"] == "12.9.1"


def test_export_keeps_what_is_there_and_refuses_what_it_should(trees, tmp_path, clean_env):
    out = tmp_path / "mods"
    out.mkdir()
    env = _env(clean_env, out, CUDASWITCH_SEARCH_PATH=str(trees))
    assert run_cli(["modulefile", "12.9", "--tcl", str(out)], env).returncode == 0
    again = run_cli(["modulefile", "12.9", "--tcl", str(out)], env)
    assert again.returncode == 0 and "nothing was changed" in again.stdout
    (out / "cuda" / "12.9").write_text("#%Module1.0\n# the admin's own edits\n")
    line = one_line_error(run_cli(["modulefile", "12.9", "--tcl", str(out)], env), 1)
    assert "exists and differs" in line and "--force" in line
    assert (out / "cuda" / "12.9").read_text().endswith("own edits\n")
    line = one_line_error(run_cli(["modulefile", "12.9", "--lmod", str(out)], env), 1)
    assert "other syntax" in line and not (out / "cuda" / "12.9.lua").exists()
    assert run_cli(["modulefile", "12.9", "--tcl", "--force", str(out)], env).returncode == 0
    assert "pushenv CUDA_HOME" in (out / "cuda" / "12.9").read_text()
    umask = os.umask(0)
    os.umask(umask)
    assert (out / "cuda" / "12.9").stat().st_mode & 0o777 == 0o666 & ~umask  # a file of the admin's, not 0600
    line = one_line_error(run_cli(["modulefile", "12.9", str(tmp_path / "nowhere")], env), 2)
    assert "no such folder" in line
    line = one_line_error(run_cli(["modulefile", "12.9", "--name", "../x", str(out)], env), 2)
    assert "NAME/VERSION" in line


def test_export_without_a_folder_prints_the_modulefile(trees, tmp_path, clean_env):
    env = _env(clean_env, tmp_path, CUDASWITCH_SEARCH_PATH=str(trees), LMOD_CMD=str(modulesystems.LMOD))
    r = run_cli(["modulefile", "12.9"], env)
    assert r.stdout.startswith("-- CUDA Toolkit 12.9.1") and 'family("cuda")' in r.stdout  # Lmod: Lua by default
    del env["LMOD_CMD"]
    # a shell that lost Lmod's variables (env -i) on a machine where Lmod is installed: still Lua, which Lmod
    # unloads right (the Tcl form is the one whose pushenv Lmod restores wrongly)
    assert modulesystems.LMOD.is_file() or modulesystems.command("lmod")
    assert run_cli(["modulefile", "12.9"], env).stdout.startswith("-- CUDA Toolkit 12.9.1")
    env["MODULES_CMD"] = str(modulesystems.ENVMODULES)  # Environment Modules' init says it owns this shell
    assert run_cli(["modulefile", "12.9"], env).stdout.startswith("#%Module1.0")  # Tcl, read by both


# ---- real sites' modulefiles (tests/data/modulefiles), at the folders they name ---------------------------------

def _version_json(version: str) -> str:
    return json.dumps({"cuda": {"name": "CUDA SDK", "version": version}})


CORPUS_ROOTS, CORPUS_STUBS = modulesystems.ROOTS, modulesystems.STUBS
FRANKLIN, FARM = "/share/apps/spack/modulefiles/Core", "/share/apps/farm/modulefiles"
FREDHUTCH, RAAPOI = "/app/modules/all", "/home/software/tools/eb_modulefiles/all/Core"
PKCC, LRT = (r for r in CORPUS_ROOTS if "/cuda-11.7.1-" in r)


def _corpus_plan(trees: Path, tmp_path: Path, clean_env) -> dict:
    links = [[str(modulesystems.CORPUS / here), there] for here, there in modulesystems.CORPUS_PLACES.items()]
    files = dict(CORPUS_STUBS)
    for n, (root, version) in enumerate(CORPUS_ROOTS.items()):
        vj = tmp_path / f"version-{n}.json"
        vj.write_text(_version_json(version))
        links += [[str(trees / "cuda-12.9"), root], [str(vj), root + "/version.json"]]
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    base = {k: v for k, v in clean_env.items() if not k.startswith(("LMOD", "MODULE", "LOADEDMODULES", "_LMFILES_"))}
    base.update(PATH="/usr/bin:/bin", HOME=str(home), LMOD_RC=str(tmp_path / "no-lmodrc.lua"))
    return {"links": links, "files": files, "commands": [], "base": base}


def _cli(plan, args, **env):
    plan["commands"].append({"cli": args, "env": dict(plan["base"], **env)})
    return len(plan["commands"]) - 1


def _module(plan, system, steps, **env):
    plan["commands"].append({"module": system, "steps": steps, "env": dict(plan["base"], **env)})
    return len(plan["commands"]) - 1


def _nvcc_root(state) -> str:
    """The toolkit the shell the module system left gets: the folder of the first nvcc on its PATH."""
    for entry in state["PATH"].split(":"):
        if os.path.isfile(os.path.join(entry, "nvcc")) or entry.endswith("/bin") and entry.startswith(("/app",
                                                                                                        "/share",
                                                                                                        "/home")):
            return os.path.dirname(os.path.normpath(entry))
    return ""


LMOD_ENV = {"LMOD_CMD": str(modulesystems.LMOD)}
ALL_FOUR = ":".join([FRANKLIN, FARM, FREDHUTCH, RAAPOI])
# every name on ALL_FOUR, with the folder `module load` takes it from (the first MODULEPATH folder that has it)
CORPUS_NAMES = {
    "cuda/11.7.1": PKCC,  # franklin's Lua; farm's Tcl of the same name comes later on MODULEPATH
    "CUDA/10.2.89-GCC-8.3.0": "/app/software/CUDA/10.2.89-GCC-8.3.0",
    "CUDA/9.2.88-GCC-7.3.0-2.30": "/app/software/CUDA/9.2.88-GCC-7.3.0-2.30",
    "CUDA/11.1.1-GCC-10.2.0": "/app/software/CUDAcore/11.1.1",
    "CUDAcore/11.1.1": "/app/software/CUDAcore/11.1.1",  # fredhutch's, before raapoi's Core
    "CUDA/11.4.1": "/home/software/EasyBuild/software/CUDA/11.4.1",
}


def test_real_sites_modulefiles_resolve_as_lmod_loads_them(trees, tmp_path, clean_env):
    """Spack Lua and Tcl, EasyBuild flat and hierarchical, CUDAcore, a default link: for each CUDA module on a
    MODULEPATH of four sites' trees, `cudaswitch which NAME` is the folder real Lmod's `module load NAME` gives
    (CUDA_HOME, and the nvcc first on PATH), names found twice are the first folder's as for Lmod, `list` gives
    each toolkit its version with no false "misnamed" warning for EasyBuild's VERSION-TOOLCHAIN folders."""
    plan = _corpus_plan(trees, tmp_path, clean_env)
    listed = _cli(plan, ["list", "--json"], MODULEPATH=ALL_FOUR, **LMOD_ENV)
    checks = {name: (_cli(plan, ["which", name], MODULEPATH=ALL_FOUR, **LMOD_ENV),
                     _module(plan, "lmod", [f"load {name}"], MODULEPATH=ALL_FOUR))
              for name in CORPUS_NAMES}
    default = (_cli(plan, ["which", "cuda"], MODULEPATH=FRANKLIN, **LMOD_ENV),
               _module(plan, "lmod", ["load cuda"], MODULEPATH=FRANKLIN))
    out = modulesystems.in_private_root(tmp_path, plan)

    rec = json.loads(out[listed]["stdout"])
    mine = {t["root"]: t for t in rec["toolkits"]}
    for name, root in CORPUS_NAMES.items():
        assert name in mine[root]["modules"], (name, mine.get(root))
        assert mine[root]["version"] == CORPUS_ROOTS[root]
        which, load = checks[name]
        assert out[which]["rc"] == 0, out[which]
        after = out[load]["states"][-1]
        assert out[which]["stdout"].strip() == root == after["CUDA_HOME"], (name, out[which], after["CUDA_HOME"])
        assert os.path.isabs(after["PATH"].split(":")[0])
    assert LRT not in mine  # farm's cuda/11.7.1 is shadowed by franklin's, as `module load cuda/11.7.1` shows
    assert not any("misnamed" in t["flags"] for t in mine.values()), [(t["root"], t["warnings"]) for t in
                                                                      mine.values()]
    assert not [w for w in rec["warnings"] if "folder name says" in w], rec["warnings"]
    which, load = default
    assert out[which]["stdout"].strip() == PKCC == out[load]["states"][-1]["CUDA_HOME"]
    assert "default link" in out[which]["stderr"] or out[which]["rc"] == 0


def test_real_sites_tcl_modulefile_under_environment_modules(trees, tmp_path, clean_env):
    """Spack's Tcl file (farm) before Spack's Lua file of the same name (franklin) on MODULEPATH: Environment
    Modules loads the Tcl one (first folder wins); Lmod loads franklin's, because franklin's `default` link marks
    it (Lmod weighs a marked default above the same name earlier on MODULEPATH). cudaswitch, told by MODULES_CMD
    or LMOD_CMD which system owns MODULEPATH, gives what each loads."""
    plan = _corpus_plan(trees, tmp_path, clean_env)
    mp = f"{FARM}:{FRANKLIN}"
    env = {"MODULES_CMD": str(modulesystems.ENVMODULES)}
    which = _cli(plan, ["which", "cuda/11.7.1"], MODULEPATH=mp, **env)
    load = _module(plan, "envmodules", ["load cuda/11.7.1"], MODULEPATH=mp)
    lmod_which = _cli(plan, ["which", "cuda/11.7.1"], MODULEPATH=mp, **LMOD_ENV)
    lmod_load = _module(plan, "lmod", ["load cuda/11.7.1"], MODULEPATH=mp)
    out = modulesystems.in_private_root(tmp_path, plan)
    assert "states" in out[load], out[load]
    got = (out[which]["stdout"].strip(), out[load]["states"][-1]["CUDA_HOME"], out[lmod_which]["stdout"].strip(),
           out[lmod_load]["states"][-1]["CUDA_HOME"])
    assert got == (LRT, LRT, PKCC, PKCC), got


def test_hierarchy_after_module_load_gcc_and_lmods_own_user_cache(trees, tmp_path, clean_env):
    """raapoi's hierarchy: CUDA/11.1.1 lives under Compiler/GCC/10.2.0, which GCC/10.2.0 puts on MODULEPATH. Before
    that, Lmod's user cache (written here by the real Lmod, under the name Lmod gives it) leads cudaswitch to it;
    after `module load GCC/10.2.0` (the real MODULEPATH Lmod leaves) `which CUDA/11.1.1` is what `module load
    CUDA/11.1.1` sets."""
    plan = _corpus_plan(trees, tmp_path, clean_env)
    loaded = _module(plan, "lmod", ["load GCC/10.2.0", "load CUDA/11.1.1"], MODULEPATH=RAAPOI)
    cache_home = tmp_path / "cache-home"
    cache_home.mkdir()
    writes_cache = _module(plan, "lmod", ["avail"], MODULEPATH=RAAPOI, HOME=str(cache_home), LMOD_SHORT_TIME="0")
    out = modulesystems.in_private_root(tmp_path, plan)
    gcc_state, cuda_state = out[loaded]["states"][1:]
    assert "Compiler/GCC/10.2.0" in gcc_state["MODULEPATH"]
    assert "states" in out[writes_cache], out[writes_cache]
    caches = sorted(p.name for p in (cache_home / ".lmod.d" / ".cache").iterdir())
    assert any(re.fullmatch(r"spiderT\..+_.+\.lua", n) for n in caches), caches  # spiderT.<arch>_<os>.lua

    plan["commands"] = []
    after_gcc = {k: v for k, v in gcc_state.items() if k in ("MODULEPATH", "LOADEDMODULES", "_LMFILES_")}
    which = _cli(plan, ["which", "CUDA/11.1.1"], **after_gcc, **LMOD_ENV)
    cached = _cli(plan, ["list", "--json"], MODULEPATH=RAAPOI, HOME=str(cache_home), **LMOD_ENV)
    out = modulesystems.in_private_root(tmp_path, plan)
    want = "/home/software/EasyBuild/software/CUDAcore/11.1.1"
    assert out[which]["stdout"].strip() == want == cuda_state["CUDA_HOME"], out[which]
    rec = json.loads(out[cached]["stdout"])
    (tk,) = [t for t in rec["toolkits"] if t["root"] == want]
    assert "CUDA/11.1.1" in tk["modules"]  # only the cache names the Compiler level before GCC is loaded


# ---- which module a name loads: precedence and defaults, as each module system decides -------------------------

def _tcl_module(path: Path, root: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#%Module1.0\nsetenv CUDA_HOME {root}\nprepend-path PATH {root}/bin\n")


@pytest.fixture(scope="module")
def versioned_trees(tmp_path_factory):
    """Toolkit trees of NVIDIA's real runtime files whose version.json says each version below, one folder each,
    so that every default rule below picks a folder of its own."""
    import cudatrees

    base = tmp_path_factory.mktemp("versions")
    return {v: cudatrees.cuda_11_8(base / f"cuda-{v}", {"cuda": {"name": "CUDA SDK", "version": v + ".0"}})
            for v in ("11.2", "11.8", "12.4", "12.6", "12.10", "13.0")}


# MODULEPATH=A:B; A has cuda/11.8, 12.4; B has cuda/11.2, 12.6, 12.10. Each layout adds a marker; each selector
# is loaded by both real module systems (measured, docs/design/modules.md): the folder each gives.
DEFAULT_CASES = {
    "none": ({}, {"cuda": ("12.10", "12.4"), "cuda/12": ("12.10", "12.4"), "cuda/11": ("11.8", "11.8")}),
    "link-in-B": ({"B/cuda/default": "12.6"}, {"cuda": ("12.6", "12.4"), "cuda/default": ("12.6", "12.4")}),
    "version-in-A": ({"A/cuda/.version": '#%Module\nset ModulesVersion "11.8"\n'}, {"cuda": ("11.8", "11.8")}),
    "modulerc-in-B": ({"B/cuda/.modulerc": "#%Module\nmodule-version cuda/11.2 default\n"},
                      {"cuda": ("11.2", "12.4")}),
    "modulerc-lua-in-B": ({"B/cuda/.modulerc.lua": 'module_version("cuda/11.2", "default")\n'},
                          {"cuda": ("11.2", "12.4")}),
}


@pytest.mark.parametrize("case", DEFAULT_CASES, ids=DEFAULT_CASES.keys())
def test_defaults_resolve_as_the_module_system_that_owns_modulepath(case, versioned_trees, tmp_path, clean_env):
    """`which cuda`, `which cuda/12`, `which cuda/default`: the folder real Lmod's `module load` gives when Lmod
    owns the shell (LMOD_CMD), and Environment Modules' when it does (MODULES_CMD); the rule that chose is said."""
    markers, selectors = DEFAULT_CASES[case]
    for folder, versions in (("A", ("11.8", "12.4")), ("B", ("11.2", "12.6", "12.10"))):
        for v in versions:
            _tcl_module(tmp_path / folder / "cuda" / v, versioned_trees[v])
    for rel, text in markers.items():
        if rel.endswith("/default"):
            os.symlink(text, tmp_path / rel)
        else:
            (tmp_path / rel).write_text(text)
    mp = f"{tmp_path / 'A'}:{tmp_path / 'B'}"
    env = dict(_env(clean_env, tmp_path / "A"), MODULEPATH=mp)
    for selector, (lmod_v, envmod_v) in selectors.items():
        for system, owner, want in (("lmod", {"LMOD_CMD": str(modulesystems.LMOD)}, lmod_v),
                                    ("envmodules", {"MODULES_CMD": str(modulesystems.ENVMODULES)}, envmod_v)):
            loaded = modulesystems.run(system, [f"load {selector}"], env)[-1]["CUDA_HOME"]
            assert loaded == str(versioned_trees[want]), (system, selector, loaded)
            r = run_cli(["which", selector], dict(env, **owner))
            assert r.returncode == 0, r.stderr
            assert r.stdout.strip() == loaded, (system, selector, r.stdout, r.stderr)
            assert ("Lmod" if system == "lmod" else "Environment Modules") in r.stderr, r.stderr


def _spack_lua(path: Path, root: Path, version: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SPACK_LUA.format(root=root, version=version))


def test_a_hierarchy_level_loaded_later_wins_as_module_load_gives(trees, tmp_path, clean_env):
    """cuda/12.9 under Core and under the gcc/13 level (with different folders); before `module load gcc/13` the
    Core one, after it (the MODULEPATH real Lmod leaves: the gcc level first) the gcc level's, as Lmod's own load
    gives; a system spider cache listing the gcc level does not outrank Core before gcc is loaded."""
    core, deep = tmp_path / "Core", tmp_path / "Compiler" / "gcc" / "13"
    _spack_lua(core / "cuda" / "12.9.lua", trees / "cuda-12.9", "12.9.1")
    _spack_lua(deep / "cuda" / "12.9.lua", trees / "cuda-11.8", "12.9.1")
    (core / "gcc").mkdir()
    (core / "gcc" / "13.lua").write_text(f'prepend_path("MODULEPATH", "{deep}")\n')
    spider = subprocess.run([str(modulesystems.LMOD.parent / "spider"), "-o", "spiderT", str(deep)],
                            capture_output=True, text=True, timeout=120)
    assert spider.returncode == 0, spider.stderr
    cachedir = tmp_path / "syscache"
    cachedir.mkdir()
    (cachedir / "spiderT.lua").write_text(spider.stdout)
    lmodrc = tmp_path / "lmodrc.lua"
    lmodrc.write_text(f'scDescriptT = {{\n  {{\n    ["dir"] = "{cachedir}",\n    ["timestamp"] = "{cachedir}/ts",'
                      f'\n  }},\n}}\n')  # EESSI's generated form: quoted keys
    env = _env(clean_env, core, LMOD_CMD=str(modulesystems.LMOD), LMOD_RC=str(lmodrc))
    before, gcc, cuda = modulesystems.run("lmod", ["load gcc/13", "load cuda/12.9"], env)
    assert gcc["MODULEPATH"].split(":")[0] == str(deep)
    assert cuda["CUDA_HOME"] == str(trees / "cuda-11.8")
    assert run_cli(["which", "cuda/12.9"], env).stdout.strip() == str(trees / "cuda-12.9")
    after = dict(env, MODULEPATH=gcc["MODULEPATH"])
    r = run_cli(["which", "cuda/12.9"], after)
    assert r.returncode == 0 and r.stdout.strip() == cuda["CUDA_HOME"], (r.stdout, r.stderr)
    # the cache's entry was read (a name only it knows is offered), and ranks after MODULEPATH's folders
    _spack_lua(deep / "cuda" / "12.8.lua", trees / "cuda-11.8", "12.8")
    spider = subprocess.run([str(modulesystems.LMOD.parent / "spider"), "-o", "spiderT", str(deep)],
                            capture_output=True, text=True, timeout=120)
    (cachedir / "spiderT.lua").write_text(spider.stdout)
    assert run_cli(["which", "cuda/12.8"], env).stdout.strip() == str(trees / "cuda-11.8")


def test_an_unreadable_module_that_comes_first_is_refused_not_passed_over(trees, tmp_path, clean_env):
    """MODULEPATH=A:B, A's cuda/11.8 takes its folder from $::env(SOFTROOT): both module systems load A's, so
    `which`/`use` refuse in one line naming A's file and why, rather than switch to B's."""
    a, b = tmp_path / "A", tmp_path / "B"
    (a / "cuda").mkdir(parents=True)
    (a / "cuda" / "11.8").write_text("#%Module1.0\nsetenv CUDA_HOME $::env(SOFTROOT)/cuda-11.8\n"
                                     "prepend-path PATH $::env(SOFTROOT)/cuda-11.8/bin\n")
    _tcl_module(b / "cuda" / "11.8", trees / "cuda-12.9")
    env = dict(_env(clean_env, a), MODULEPATH=f"{a}:{b}")
    for system in ("lmod", "envmodules"):
        got = modulesystems.run(system, ["load cuda/11.8"], env, {"SOFTROOT": str(trees)})[-1]["CUDA_HOME"]
        assert got == str(trees / "cuda-11.8")
    line = one_line_error(run_cli(["which", "cuda/11.8"], env), 2)
    assert str(a / "cuda" / "11.8") in line and "$::env(SOFTROOT)" in line
    prefix = make_env(tmp_path / "env")
    line = one_line_error(run_cli(["use", "cuda/11.8", "-p", str(prefix), "--no-smoke"], env), 2)
    assert str(a / "cuda" / "11.8") in line


# ---- what the reading decides from the file alone, and what it refuses to guess ----------------------------------

@pytest.mark.parametrize("system", ["lmod", "envmodules"])
def test_a_tcl_file_test_around_path_is_decided_and_a_one_line_if_is_conditional(system, trees, tmp_path,
                                                                                 clean_env):
    """`if { [file isdirectory $prefix/bin] } { prepend-path PATH $prefix/bin }` is what the load will find on
    the same file system: read as the real load runs it. A one-line `if { ... } { set root /elsewhere }` makes
    root depend on the load: not guessed."""
    from cudaswitch.core.system import System
    from cudaswitch.discovery.modules import read_modulefile

    mp = tmp_path / "mf"
    (mp / "cuda").mkdir(parents=True)
    tk = trees / "cuda-12.9"
    (mp / "cuda" / "12.9").write_text(f"#%Module1.0\nset prefix {tk}\n"
                                      "if { [file isdirectory $prefix/bin] } { prepend-path PATH $prefix/bin }\n"
                                      "if { ![file isdirectory $prefix/nowhere] } {\n  setenv CUDA_HOME $prefix\n}\n")
    (mp / "cuda" / "11.8").write_text(f"#%Module1.0\nset root {trees / 'cuda-11.8'}\n"
                                      "if { [info exists env(SITE_CUDA)] } { set root /elsewhere }\n"
                                      "setenv CUDA_HOME $root\n")
    sysm = System(os="linux", environ={})
    mf = read_modulefile(sysm, "cuda/12.9", str(mp / "cuda" / "12.9"))
    assert mf.root == str(tk) and mf.why is None, mf
    state = modulesystems.run(system, ["load cuda/12.9"], _env(clean_env, mp))[-1]
    assert state["CUDA_HOME"] == mf.root and state["PATH"].split(":")[0] == str(tk / "bin")
    other = read_modulefile(sysm, "cuda/11.8", str(mp / "cuda" / "11.8"))
    assert other.root is None and "inside a condition" in other.why, other
    elsewhere = modulesystems.run(system, ["load cuda/11.8"], _env(clean_env, mp), {"SITE_CUDA": "1"})[-1]
    assert elsewhere["CUDA_HOME"] == "/elsewhere"  # what a static guess of the first `set` would have missed


ADVERSARIAL = {  # each at the reader's own size limit (64 KiB): once 49-87 s or a RecursionError
    "lua-long-comments": ("x.lua", "--[[" * 16384),
    "lua-long-strings": ("x.lua", "[[" * 32768),
    "lua-long-comment-lines": ("x.lua", "--[==[\n" * 9362),
    "lua-parens": ("x.lua", 'setenv("CUDA_HOME", ' + "(" * 65000),
    "lua-calls": ("x.lua", "setenv(" * 9362),
    "lua-quotes": ("x.lua", '"\\' * 32768),
    "tcl-braces": ("x", "#%Module\n" + "{" * 65000),
    "tcl-nested-ifs": ("x", "#%Module\n" + "if 1 {\n" * 4000 + "setenv CUDA_HOME /x\n" + "}\n" * 4000),
    "tcl-brackets": ("x", "#%Module\nset a " + "[" * 32000 + "]" * 32000),
    "tcl-vars": ("x", "#%Module\nsetenv CUDA_HOME " + "${" * 32000),
    "tcl-array-vars": ("x", "#%Module\nsetenv CUDA_HOME " + "$a(" * 21000),
}


def test_adversarial_modulefiles_end_in_a_value_or_one_clear_reason(tmp_path):
    """Every shape that once took a minute or ended in RecursionError: read (in a child with a time limit far
    above what a linear reader needs, so a quadratic one fails) to a ModuleFile with a root or a reason."""
    for key, (name, text) in ADVERSARIAL.items():
        (tmp_path / f"{key}-{name}").write_text(text)
    script = (
        "import json, os, sys\n"
        "from cudaswitch.core.system import System\n"
        "from cudaswitch.discovery.modules import read_modulefile\n"
        "out = {}\n"
        "for f in sorted(os.listdir(sys.argv[1])):\n"
        "    mf = read_modulefile(System(os='linux', environ={}), 'cuda/1', os.path.join(sys.argv[1], f))\n"
        "    out[f] = mf and [mf.root, mf.why]\n"
        "print(json.dumps(out))\n")
    r = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=60,
                       env={"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)
    assert len(got) == len(ADVERSARIAL)
    for f, value in got.items():
        assert value is not None and (value[0] or value[1]), (f, value)
        assert value[0] is None or f.startswith("tcl-nested") is False, (f, value)
    assert "never closed" in got["lua-long-comments-x.lua"][1]
    assert "never closed" in got["tcl-braces-x"][1]
    assert "nest deeper" in got["tcl-nested-ifs-x"][1] or "inside a condition" in got["tcl-nested-ifs-x"][1]


def test_any_text_reads_to_a_value_or_a_reason(tmp_path):
    """Property: whatever bytes a file holds, the reader ends in a ModuleFile, None (not a modulefile), never an
    exception."""
    import hypothesis
    from hypothesis import strategies as st

    from cudaswitch.core.system import System
    from cudaswitch.discovery.modules import read_modulefile

    alphabet = st.sampled_from(list('#%Module\n{}[]()"\'\\$;: -=.,setenv prepend-path CUDA_HOME PATH if else '
                                    'local pathJoin --[[ ]] [==[ ]==] /opt/cuda'))
    sysm = System(os="linux", environ={})

    @hypothesis.settings(max_examples=300, deadline=None, database=None)
    @hypothesis.given(st.lists(alphabet, max_size=200).map("".join), st.booleans())
    def prop(text, lua):
        path = tmp_path / ("p.lua" if lua else "p")
        path.write_text(("" if lua else "#%Module\n") + text)
        mf = read_modulefile(sysm, "cuda/1", str(path))
        assert mf is None or mf.root or mf.why

    prop()


# ---- as root, another user's modulefile decides nothing ----------------------------------------------------------

def test_as_root_a_module_another_user_could_write_never_chooses_the_toolkit(trees, tmp_path, clean_env):
    """Her folder on root's MODULEPATH, her cuda/12.4 naming her copy of a toolkit: root's `list` shows it with
    that fact, `which 12.9`, `which cuda/12.4` and `use 12.9 -p ROOTENV` never pick it (one line saying why, the
    environment untouched); given by its folder, root may still use it."""
    import shutil

    import other_user

    if os.geteuid() != 0:
        pytest.skip("replays an attack on root")
    base, attacker, _, _ = other_user.shared_base("cs-mod-")
    try:
        mine = attacker / "cuda-12.4"
        shutil.copytree(trees / "cuda-12.9", mine, symlinks=True)
        for dirpath, dirnames, filenames in os.walk(mine):
            for n in dirnames + filenames + ["."]:
                os.lchown(os.path.join(dirpath, n), other_user.NOBODY, other_user.NOBODY)

        def plant():
            _spack_lua(attacker / "modules" / "cuda" / "12.4.lua", mine, "12.4")

        other_user.as_user(plant)
        env = _env(clean_env, attacker / "modules", LMOD_CMD=str(modulesystems.LMOD))
        rec = json.loads(run_cli(["list", "--json"], env).stdout)
        (tk,) = [t for t in rec["toolkits"] if t["root"] == str(mine)]
        assert "untrusted-module" in tk["flags"]
        assert any(str(mine) in w and "another user" in w for w in rec["warnings"]), rec["warnings"]
        line = one_line_error(run_cli(["which", "cuda/12.4"], env), 2)
        assert "another user" in line and str(attacker / "modules") in line
        assert run_cli(["which", "12.9"], env).stdout.strip() != str(mine)
        prefix = make_env(tmp_path / "rootenv")
        r = run_cli(["use", "12.9", "-p", str(prefix), "--no-smoke"], env)
        assert str(mine) not in (r.stdout + "".join(p.read_text() for p in (prefix / "etc").rglob("*.sh"))
                                 if (prefix / "etc").exists() else r.stdout)
        assert run_cli(["which", str(mine)], env).stdout.strip() == str(mine)  # her folder, named explicitly
    finally:
        shutil.rmtree(base, ignore_errors=True)


# NVIDIA HPC SDK's own modulefile (modulefiles/nvhpc/<version> as the SDK installs it; the text as NSCC's copy
# publishes it, trimmed to the lines that matter here): the compilers' bin goes before the CUDA bin on PATH, and no
# CUDA_HOME is set.
NVHPC_TCL = """#%Module1.0

conflict nvidia
conflict nvhpc
conflict nvhpc-nompi
conflict nvhpc-byo-compiler

set nvhome {nvhome}
set target Linux_x86_64
set version 24.3

set nvcudadir $nvhome/$target/$version/cuda
set nvcompdir $nvhome/$target/$version/compilers
set nvmathdir $nvhome/$target/$version/math_libs
set nvcommdir $nvhome/$target/$version/comm_libs

setenv NVHPC $nvhome
setenv NVHPC_ROOT $nvhome/$target/$version
setenv CC $nvcompdir/bin/nvc

prepend-path PATH $nvcudadir/bin
prepend-path PATH $nvcompdir/bin
prepend-path PATH $nvcommdir/mpi/bin
prepend-path PATH $nvcompdir/extras/qd/bin

prepend-path LD_LIBRARY_PATH $nvcudadir/lib64
prepend-path LD_LIBRARY_PATH $nvcompdir/lib
prepend-path LD_LIBRARY_PATH $nvmathdir/lib64

module-whatis "Nvidia HPC Compilers"
"""


@pytest.mark.parametrize("system", ["lmod", "envmodules"])
def test_nvidia_hpc_sdk_module_gives_its_cuda(system, trees, tmp_path, clean_env):
    """nvhpc/24.3: listed and usable as the toolkit whose nvcc its PATH gives (the SDK's cuda/bin links into
    cuda/12.x), and named by doctor and status when loaded beside a switch."""
    nvhome = tmp_path / "hpc_sdk"
    sdk = nvhome / "Linux_x86_64" / "24.3"
    (sdk / "cuda").mkdir(parents=True)
    os.symlink(trees / "cuda-12.9", sdk / "cuda" / "12.9")
    os.symlink("12.9/bin", sdk / "cuda" / "bin")
    os.symlink("12.9/lib64", sdk / "cuda" / "lib64")
    (sdk / "compilers" / "bin").mkdir(parents=True)
    (sdk / "compilers" / "bin" / "nvc").write_text("#!/bin/sh\n")
    mp = tmp_path / "modulefiles"
    (mp / "nvhpc").mkdir(parents=True)
    (mp / "nvhpc" / "24.3").write_text(NVHPC_TCL.format(nvhome=nvhome))
    env = _env(clean_env, mp)
    state = modulesystems.run(system, ["load nvhpc/24.3"], env)[-1]
    nvcc = subprocess.run(["sh", "-c", "command -v nvcc"], env=state, capture_output=True, text=True).stdout.strip()
    got = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    assert got == str(trees / "cuda-12.9")
    assert run_cli(["which", "nvhpc/24.3"], env).stdout.strip() == got
    rec = json.loads(run_cli(["list", "--json"], env).stdout)
    (tk,) = [t for t in rec["toolkits"] if t["root"] == got]
    assert tk["modules"] == ["nvhpc/24.3"]
    prefix = make_env(tmp_path / "env")
    assert run_cli(["use", str(trees / "cuda-11.8"), "-p", str(prefix), "--no-smoke"], env).returncode == 0
    shell = dict(state, CONDA_PREFIX=str(prefix), CUDASWITCH_SEARCH_PATH=str(trees))  # where 11.8 is found
    doc = json.loads(run_cli(["doctor", "-p", str(prefix), "--json"], shell).stdout)
    (f,) = [f for f in doc["findings"] if f["code"] == "CUDA_MODULE_LOADED"]
    assert "nvhpc/24.3" in f["cause"]
    assert "Module loaded: nvhpc/24.3" in run_cli(["status"], shell).stdout


def test_spider_cache_entries_with_quoted_keys_and_strings_holding_braces(tmp_path):
    """A cache written with quoted keys (`["fn"] = ...`, as some generators write Lua tables) reads like Lmod's
    own bare keys; a help string holding braces or a fake `fn = ` does not end or fool an entry."""
    from cudaswitch.core.system import System
    from cudaswitch.discovery.modules import _from_spider_cache

    cache = tmp_path / "spiderT.lua"
    cache.write_text('spiderT = {\n  ["/mp"] = {\n    cuda = {\n      fileT = {\n'
                     '        ["cuda/12.4"] = {\n          ["canonical"] = "12.4",\n'
                     '          ["fn"] = "/mp/cuda/12.4.lua",\n          ["help"] = "a { brace and fn = \\"/evil\\"",\n'
                     '          ["mpath"] = "/mp",\n          whatis = {\n            "Name : cuda",\n          },\n'
                     '        },\n        ["cuda/11.8"] = {\n          fn = "/mp/cuda/11.8",\n'
                     '          help = "}",\n          mpath = "/mp/",\n        },\n'
                     '        ["cudnn/9.1"] = {\n          fn = "/mp/cudnn/9.1.lua",\n        },\n      },\n    },\n'
                     '  },\n}\n')
    got = _from_spider_cache(System(os="linux", environ={}), str(cache))
    assert got == [("cuda/12.4", "/mp/cuda/12.4.lua", "/mp"), ("cuda/11.8", "/mp/cuda/11.8", "/mp")]


def test_a_loaded_module_is_the_file_that_was_loaded_not_what_its_name_means_now(trees, tmp_path, clean_env):
    """cuda/12.9 loaded from B; then A (with its own cuda/12.9) comes first on MODULEPATH: status names the toolkit
    of the file Lmod loaded (_LMFILES_), not the one the name would mean now."""
    a, b = tmp_path / "A", tmp_path / "B"
    _spack_lua(a / "cuda" / "12.9.lua", trees / "cuda-12.9", "12.9.1")
    _spack_lua(b / "cuda" / "12.9.lua", trees / "cuda-11.8", "12.9.1")
    env = dict(_env(clean_env, b), CUDASWITCH_SEARCH_PATH=str(trees))
    shell = modulesystems.run("lmod", ["load cuda/12.9"], env)[-1]
    assert shell["CUDA_HOME"] == str(trees / "cuda-11.8")
    shell = dict(shell, MODULEPATH=f"{a}:{b}")
    assert run_cli(["which", "cuda/12.9"], shell).stdout.strip() == str(trees / "cuda-12.9")
    st = run_cli(["status"], shell)
    assert f"Module loaded: cuda/12.9 (CUDA 11.8.89 at {trees / 'cuda-11.8'})" in st.stdout, st.stdout


def test_the_user_cache_where_newer_lmod_keeps_it(trees, tmp_path, clean_env):
    """Lmod 8.7.12 and later keep the user's cache in ~/.cache/lmod. The file here is the one Lmod 9.2.9 (built from
    TACC/Lmod's source) wrote there over raapoi's hierarchy (tests/data/modulefiles/README.md): with it, `list`
    offers CUDA/11.1.1 of the Compiler/GCC/10.2.0 level before GCC is loaded, and without it does not."""
    cache = modulesystems.CORPUS / "lmod-9.2.9-cache" / "spiderT.x86_64_Linux.lua"
    plan = _corpus_plan(trees, tmp_path, clean_env)
    homes = {}
    for kind in ("with", "without"):
        home = tmp_path / f"home-{kind}"
        (home / ".cache" / "lmod").mkdir(parents=True)
        if kind == "with":
            (home / ".cache" / "lmod" / cache.name).write_bytes(cache.read_bytes())
        homes[kind] = _cli(plan, ["list", "--json"], MODULEPATH=RAAPOI, HOME=str(home), **LMOD_ENV)
    out = modulesystems.in_private_root(tmp_path, plan)
    want = "/home/software/EasyBuild/software/CUDAcore/11.1.1"
    got = {kind: [t for t in json.loads(out[i]["stdout"])["toolkits"] if t["root"] == want]
           for kind, i in homes.items()}
    assert "CUDA/11.1.1" in got["with"][0]["modules"], got
    assert not any("CUDA/11.1.1" in t["modules"] for t in got["without"]), got


def test_as_root_a_spider_cache_another_user_could_write_chooses_nothing(trees, tmp_path, clean_env):
    """A system cache folder the lmodrc names, but hers: its entries (here naming a modulefile of root's that is
    not on MODULEPATH) are listed with that fact and never chosen by root."""
    import shutil

    import other_user

    if os.geteuid() != 0:
        pytest.skip("replays an attack on root")
    base, attacker, _, _ = other_user.shared_base("cs-cache-")
    try:
        deep = tmp_path / "Compiler" / "gcc12"
        _spack_lua(deep / "cuda" / "12.9.lua", trees / "cuda-12.9", "12.9.1")
        spider = subprocess.run([str(modulesystems.LMOD.parent / "spider"), "-o", "spiderT", str(deep)],
                                capture_output=True, text=True, timeout=120)
        assert spider.returncode == 0, spider.stderr

        def plant():
            (attacker / "spiderT.lua").write_text(spider.stdout)

        other_user.as_user(plant)
        lmodrc = tmp_path / "lmodrc.lua"
        lmodrc.write_text(f'scDescriptT = {{\n  {{\n    dir = "{attacker}",\n  }},\n}}\n')
        empty = tmp_path / "empty"
        empty.mkdir()
        env = dict(_env(clean_env, empty), LMOD_RC=str(lmodrc), LMOD_CMD=str(modulesystems.LMOD))
        rec = json.loads(run_cli(["list", "--json"], env).stdout)
        (tk,) = [t for t in rec["toolkits"] if t["root"] == str(trees / "cuda-12.9")]
        assert "untrusted-module" in tk["flags"]
        line = one_line_error(run_cli(["which", "cuda/12.9"], env), 2)
        assert "spider cache" in line and str(attacker) in line
    finally:
        shutil.rmtree(base, ignore_errors=True)
