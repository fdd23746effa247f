"""The two real module systems, driven the way a user's shell drives them: `module` is a shell function that
evals what the module command prints for bash (Lmod's `lmod bash load X`, Environment Modules' `modulecmd.tcl
bash load X`; both systems' own init scripts define it so).

Lmod comes from Debian's `lmod` package. Environment Modules comes from Debian's `environment-modules`, which
conflicts with `lmod`, so .ci/run unpacks it with `dpkg -x` into /opt/environment-modules (or point
CUDASWITCH_TEST_ENVMODULES at a modulecmd.tcl); its modulecmd.tcl runs under the system's tclsh from there.
CUDASWITCH_TEST_LMOD points at another Lmod's libexec/lmod (a newer one built from TACC/Lmod's source, to repeat
the corpus comparison with it by hand; CI has Debian's only).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Optional

import pytest

IN_CI = bool(os.environ.get("CI"))
LMOD = Path(os.environ.get("CUDASWITCH_TEST_LMOD") or "/usr/share/lmod/lmod/libexec/lmod")
ENVMODULES = Path(os.environ.get("CUDASWITCH_TEST_ENVMODULES") or "/opt/environment-modules/usr/lib/modulecmd.tcl")


def _missing(what: str) -> None:
    if IN_CI:
        pytest.fail(f"{what} is not installed; .ci/run must install it")
    pytest.skip(f"{what} not installed (see tests/modulesystems.py)")


def command(system: str) -> List[str]:
    """The module command of 'lmod' or 'envmodules', as argv before the shell name."""
    if system == "lmod":
        if not LMOD.is_file():
            _missing("Lmod (Debian package lmod)")
        return [str(LMOD)]
    tclsh = shutil.which("tclsh")
    if not ENVMODULES.is_file() or not tclsh:
        _missing("Environment Modules (Debian package environment-modules, unpacked)")
    return [tclsh, str(ENVMODULES)]


def run(system: str, steps: List[str], env: Dict[str, str], extra: Optional[Dict[str, str]] = None,
        each: bool = False) -> List[Dict[str, str]]:
    """Run `module STEP` for each step in one real bash and return the environment after each (index 0: before the
    first step); with `each`, every step starts from the first environment (a subshell each, as many users' fresh
    shells). A failing `module` command fails the test with what it printed. The environment is dumped by `env -0`
    (a Python per dump cost more than the module systems themselves)."""
    import shlex

    argv = " ".join(shlex.quote(a) for a in command(system))
    dump = "printf '\\036'; env -0"
    lines = [f'module() {{ eval "$({argv} bash "$@")"; }}', dump]
    for step in steps:
        lines += [f"( module {step} || exit 9; {dump} ) || exit 9" if each else f"module {step} || exit 9; {dump}"]
    full = dict(env, **(extra or {}))
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", "\n".join(lines)], env=full, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, (steps, r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    states = [dict(item.partition("=")[::2] for item in block.split("\0") if "=" in item)
              for block in r.stdout.split("\036")[1:]]
    assert len(states) == len(steps) + 1, (r.stdout, r.stderr)
    return states


# ---- a private root: modulefiles and toolkits at the absolute folders real sites' files name -------------------

CORPUS = Path(__file__).parent / "data" / "modulefiles"

# Where the corpus lives inside the private root (tests/data/modulefiles/README.md says why each).
CORPUS_PLACES = {
    "ucdavis-franklin/Core": "/share/apps/spack/modulefiles/Core",
    "ucdavis-farm/core": "/share/apps/farm/modulefiles",
    "fredhutch/all": "/app/modules/all",
    "raapoi/all": "/home/software/tools/eb_modulefiles/all",
    "unibe/all": "/software.el7/modulefiles/all",
    "hoffman2/lmod": "/u/local/spack/0.12/share/spack/lmod/linux-centos7-x86_64",
    "hoffman2/modules": "/u/local/spack/0.12/share/spack/modules/linux-centos7-x86_64",
    "csc/modulefiles": "/appl/spack/v022/modulefiles",
    "csc/unsupported": "/appl/spack/v022/unsupported/linux-rhel8-x86_64",
    "unl-crane": "/util/opt/modulefiles",
    "ntuhpc": "/opt/apps/modules",
    "ntuhpc-sc16": "/opt/modulefiles",
    "ucr-hpcc": "/opt/hpcc_modules",
    "shawfdong": "/usr/local/modulefiles",
}

SW = "/software.el7/software/CUDA"
UCLA = "/u/local/spack/0.12/opt/spack/linux-centos7-x86_64"
CSC = "/appl/spack/v022/install-tree/gcc-13.2.0/cuda-12.6.0-y4hqsn"
EB = "/home/software/EasyBuild/software"
NVHPC_CUDA = "/util/opt/nvidia-hpc-sdk/2021.219/Linux_x86_64/21.9/cuda"

# the toolkit folders the corpus names, each with the version its module claims (the tests bind a toolkit tree of
# NVIDIA's files at each, its version.json saying this version)
ROOTS = {
    **{f"{SW}/{v}": v.split("-")[0] for v in ("10.1.105-GCC-8.2.0-2.31.1", "10.1.243", "8.0.61", "9.0.176",
                                            "9.1.85", "9.2.88")},
    f"{UCLA}/gcc-5.5.0/cuda-8.0.61-xvrfn4veaenoq6kbpjyfnspvubfczxab": "8.0.61",
    f"{UCLA}/gcc-7.2.0/cuda-10.0.130-74hupmpee6unwibsq2p2mqb3dmmbzrab": "10.0.130",
    CSC: "12.6.0",
    **{f"/util/opt/cuda/{v}": v for v in ("6.0", "6.5", "7.5", "8.0", "9.0", "9.1", "9.2", "10.0", "10.2", "11.0",
                                          "11.2", "11.4")},
    "/opt/apps/software/CUDA/8.0.44-GCC-5.4.0-2.26": "8.0.44",
    "/opt/cuda-8.0": "8.0",
    **{f"/opt/linux/{os_}/8.x/x86_64/pkgs/cuda/{v}": v for os_, v in (("rhel", "10.1"), ("rhel", "10.2"),
                                                                       ("rhel", "11.4"), ("centos", "11.7"),
                                                                       ("centos", "12.1"))},
    "/usr/local/cuda-10.0": "10.0",
    f"{EB}/CUDA/11.3.1": "11.3.1",
    f"{EB}/CUDA/11.4.1": "11.4.1",
    f"{EB}/CUDA/10.1.243-GCC-8.3.0": "10.1.243",
    f"{EB}/CUDAcore/11.1.1": "11.1.1",
    "/share/apps/spack/spack-v0.19/opt/spack/linux-ubuntu22.04-x86_64_v3/gcc-11.3.0/"
    "cuda-11.7.1-pkcc5ttbgrknfycfjj3v2lezjcdnlth4": "11.7.1",
    "/share/apps/22.04/spack/spack-v0.19.1/opt/spack/linux-ubuntu22.04-x86_64_v2/gcc-11.3.0/"
    "cuda-11.7.1-lrt2o3uaa7iok75tlym5boeyepehbyij": "11.7.1",
    "/app/software/CUDA/10.2.89-GCC-8.3.0": "10.2.89",
    "/app/software/CUDA/9.2.88-GCC-7.3.0-2.30": "9.2.88",
    "/app/software/CUDAcore/11.1.1": "11.1.1",
}
# the modules the corpus loads that no site published beside it: empty stubs (Lmod refuses a load without them)
STUBS = {
    "/software.el7/modulefiles/all/GCC/8.2.0-2.31.1.lua": "",
    "/opt/apps/modules/compiler/GCC/5.4.0-2.26.lua": "",
    "/app/modules/all/GCC/8.3.0.lua": "", "/app/modules/all/GCC/10.2.0.lua": "",
    "/app/modules/all/GCC/7.3.0-2.30.lua": "",
    "/home/software/tools/eb_modulefiles/all/Core/GCCcore/10.2.0.lua": "",
    "/home/software/tools/eb_modulefiles/all/Core/binutils/2.35.lua": "",
}

# Builds the private root: a tmpfs holding a bind of every top-level folder of / plus the new ones (/app,
# /share, ...), then chroot into it; /opt and /usr/local are each a tmpfs of their own holding a bind of each of
# their folders, so that /opt/cuda-8.0 and /usr/local/cuda-10.0 can be laid out beside them. Nothing is created
# on the machine: the tmpfs and the binds vanish with the namespace when the driver ends.
_PRIVATE_ROOT = r"""
set -e
R="$1"; shift
mount -t tmpfs tmpfs "$R"
for d in /*; do
  n="${d#/}"
  if [ -L "$d" ]; then cp -P "$d" "$R/$n"
  elif [ "$n" = opt ]; then
    mkdir "$R/opt"; mount -t tmpfs tmpfs "$R/opt"
    for o in /opt/*; do [ -d "$o" ] && [ ! -L "$o" ] && mkdir "$R$o" && mount --rbind "$o" "$R$o"; done
  elif [ -d "$d" ]; then mkdir "$R/$n"; mount --rbind "$d" "$R/$n"
  fi
done
[ -d "$R/usr/local" ] && mount -t tmpfs tmpfs "$R/usr/local"
for o in /usr/local/*; do
  if [ -L "$o" ]; then cp -P "$o" "$R$o"; elif [ -d "$o" ]; then mkdir "$R$o" && mount --rbind "$o" "$R$o"; fi
done
for top in app share software.el7 u appl util; do [ -e "$R/$top" ] || mkdir "$R/$top"; done
mount -t tmpfs tmpfs "$R/home"
exec chroot "$R" "$@"
"""


def in_private_root(tmp_path: Path, plan: dict) -> List[dict]:
    """Run `plan` (see _drive) as root inside a private mount namespace whose / has the folders real sites'
    modulefiles name; returns one result per command. Needs root and unshare (CI runs as root on Debian)."""
    import json
    import sys

    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("chroot"):
        if IN_CI:
            pytest.fail("the corpus tests need root, unshare and chroot")
        pytest.skip("needs root, unshare and chroot")
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="private-", dir=tmp_path))  # one per call: a test may call it twice
    root = work / "root"
    root.mkdir()
    plan_file, out = work / "plan.json", work / "results.json"
    plan_file.write_text(json.dumps(dict(plan, copies=str(work / "copies"))))
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", _PRIVATE_ROOT, "sh", str(root),
                        sys.executable, str(Path(__file__).resolve()), str(plan_file), str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    return json.loads(out.read_text())


_CLI = []


def _forked_cli(args: List[str], env: Dict[str, str]) -> dict:
    """`cudaswitch ARGS` (with the suite's seams, as tests/seams.py starts it) in a child forked from this driver,
    which imported the CLI once: a fresh process per command, the environment exactly `env`, without paying
    Python's start and the CLI's imports each time (the corpus runs some hundred commands)."""
    import sys
    import tempfile

    if not _CLI:
        os.environ.clear()
        os.environ.update(env)  # what the imports may read (language), as the first command has it
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        import seams

        seams.enable()
        from cudaswitch.cli import main

        _CLI.append(main)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # the child: never returns into the driver
            code = 70
            try:
                os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                os.environ.clear()
                os.environ.update(env)
                try:
                    _CLI[0](args=list(args), prog_name="cudaswitch")
                    code = 0
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        return {"rc": os.waitstatus_to_exitcode(status), "stdout": out.read().decode(errors="replace"),
                "stderr": err.read().decode(errors="replace")}


def nvcc_root(state: Dict[str, str]) -> Optional[str]:
    """The toolkit a shell with this environment compiles with: the folder above the first nvcc on its PATH, links
    followed (NVIDIA HPC SDK's cuda/bin is a link into cuda/<version>/bin); None when no nvcc is on it."""
    for entry in state.get("PATH", "").split(":"):
        if entry and os.path.isfile(os.path.join(entry, "nvcc")):
            return os.path.dirname(os.path.realpath(entry))
    return None


def _drive(plan: dict) -> List[dict]:
    """Inside the private root: lay out `plan["links"]` (bind a prepared folder or file at an absolute path),
    `plan["files"]` (write text), then run each of `plan["commands"]`: {"cli": [args], "env": {...}} runs
    cudaswitch, {"module": "lmod"|"envmodules", "steps": [...], "env": {...}} the real module system."""
    import json
    import sys

    work = Path(plan["copies"])  # beside the plan, in the test's own tmp_path
    work.mkdir()
    for src, dst in plan.get("links", []):
        if Path(src).resolve().is_relative_to(CORPUS.resolve()):  # stubs written beside it must not reach the repo
            copy = work / str(len(list(work.iterdir())))
            shutil.copytree(src, copy, symlinks=True)
            src = str(copy)
        dst_p = Path(dst)
        if Path(src).is_dir():
            dst_p.mkdir(parents=True, exist_ok=True)
        else:
            dst_p.parent.mkdir(parents=True, exist_ok=True)
            dst_p.touch()
        subprocess.run(["mount", "--bind", src, dst], check=True)
    for dst, text in plan.get("files", {}).items():
        Path(dst).parent.mkdir(parents=True, exist_ok=True)
        Path(dst).write_text(text)
    for dst, target in plan.get("symlinks", {}).items():
        Path(dst).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, dst)
    results = []
    for cmd in plan["commands"]:
        if "cli" in cmd:
            results.append(_forked_cli(cmd["cli"], cmd["env"]))
        else:
            try:
                states = run(cmd["module"], cmd["steps"], cmd["env"], each=cmd.get("each", False))
                results.append({"states": states, "nvcc": [nvcc_root(st) for st in states]})
            except AssertionError as exc:
                results.append({"failed": str(exc)[-2000:]})
    return results


if __name__ == "__main__":
    import json
    import sys

    Path(sys.argv[2]).write_text(json.dumps(_drive(json.loads(Path(sys.argv[1]).read_text()))))
