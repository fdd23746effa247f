"""The user documentation stays true: the README's and the guide's marked output blocks are what the commands print
now, every page exists in English and Chinese with the same sections and is in the navigation, every link leads to a
file of this repository, the command reference covers every command, and no user page carries an issue number.

A block marked real output is a transcript right after the line `<!-- output: SCENARIO -->`: `$ command` lines, each
followed by what it prints (stdout, then stderr) and, when it is not 0, `(exit N)`; a command ending in `> /dev/null`
shows only its stderr, a line `...` stands for lines the page leaves out, and an empty line may set the next command
apart. The test builds the scenario (below), runs each command through the real CLI and compares line for line;
`/tmp/demo` in the text stands for the scenario's folder (`/home/li/miniconda3` in the torch scenarios, a user's
conda base), a time (`2026-11-30T00:11:02+00:00`, when `use` chose; an install-cudnn record's
`0001-20261130T000540-31094`) for any time, and a smoke step's seconds and GFLOP/s for any number. The conda page's
blocks run against the real conda (the REAL_CONDA scenarios below). A block whose commands are all
`[VAR=value ...] cudaswitch ...` runs in-process, in the scenario's folder; one with anything else (a pipe, `;`,
`eval "$(cudaswitch init bash)"`, `echo`) runs in one real bash, with this checkout's `cudaswitch` on PATH. The
English and Chinese blocks of a ONE_RUN scenario (a real cuDNN, read and written once) are one run of their commands
(`_lockstep`). Every block with `$ ` lines carries that marker or `<!-- example: what it needs -->` (a GPU, conda, a
download): none goes unchecked unseen.
"""

import platform
import re
import shlex
import sys
from pathlib import Path

import pytest

import cudatrees
from conftest import REPO, make_env, run_cli

DOCS = REPO / "docs"
GUIDE = DOCS / "guide"
PLACEHOLDER = "/tmp/demo"
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")  # the moment a command ran: any moment
# an install-cudnn record's folder, `0001-20261130T000540-31094`: its number, moment and process; any moment and process
INSTALL_ID = re.compile(r"\b(\d{4})-\d{8}T\d{6}-\d+\b")
# how long a smoke step took and how fast it computed (`matmul     pass  0.3521s on cpu  69.6 GFLOP/s`, in Chinese
# `0.766 秒，设备 cpu`): any number there, the rest of the line as written
TIMING = re.compile(r"\b\d+(?:\.\d+)?(?=s on | 秒，设备 | GFLOP/s\b)")
PYTHON_SHOWN = "3.11.7"  # a torch page's Python: the suite's own (its torch environment's), whichever 3.11 it is
DAY = re.compile(r"\b\d{4}-\d\d-\d\d$")  # the day a smoke test ran, as `envs` shows it at a row's end
MARKER = re.compile(r"^<!-- output: ([\w-]+) -->$")
EXAMPLE = re.compile(r"^<!-- example: [^<>]+ -->$")  # a transcript no machine without it can replay: says what it needs


def _user_pages():
    return [REPO / "README.md", REPO / "README.zh-CN.md", DOCS / "index.md", DOCS / "index.zh.md",
            *sorted(GUIDE.glob("*.md"))]


def _blocks():
    """(file, line, scenario, transcript lines) of every marked block."""
    out = []
    for page in _user_pages():
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            m = MARKER.match(line.strip())  # indented too: a block inside a list item
            if not m:
                continue
            indent = len(line) - len(line.lstrip())
            assert i + 1 < len(lines) and lines[i + 1].lstrip().startswith("```"), \
                f"{page.name}:{i + 1}: marker without a block"
            end = next(j for j in range(i + 2, len(lines)) if lines[j].lstrip().startswith("```"))
            out.append((page.relative_to(REPO).as_posix(), i + 1, m.group(1), [ln[indent:] for ln in lines[i + 2:end]]))
    return out


# ---- scenarios -------------------------------------------------------------------------------------------------

def _demo(folder: Path) -> dict:
    """A Linux `/` (CUDASWITCH_FS_ROOT) with NVIDIA's CUDA 11.8 runtime and a CUDA 12.9 toolkit under /usr/local,
    built from NVIDIA's wheels, no nvcc on PATH; an empty conda environment at /tmp/demo/envs/torch. A transcript that
    runs a driver check says `CONDA_OVERRIDE_CUDA=` itself (no driver, on every machine)."""
    root = folder / "root"
    cudatrees.cuda_11_8(root / "usr" / "local" / "cuda-11.8")
    cudatrees.cuda_12_9(root / "usr" / "local" / "cuda-12.9")
    make_env(folder / "envs" / "torch")
    return {"PATH": "/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8", "CUDASWITCH_FS_ROOT": str(root),
            "CUDASWITCH_CONFIG": str(folder / "no-config.yaml")}


def _clusters(folder: Path) -> dict:
    """A cluster's `/` (CUDASWITCH_FS_ROOT): the real toolkits under /apps as EasyBuild and Spack lay them out, and
    a MODULEPATH folder holding the real EasyBuild and Spack modulefiles for them plus a site's modulefile whose
    folder only a real load knows (tests/discovery/test_modules.py holds the texts and where they come from)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("module_texts", REPO / "tests" / "discovery" / "test_modules.py")
    texts = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(texts)
    root = folder / "root"
    make_env(folder / "envs" / "torch")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8", "CUDASWITCH_FS_ROOT": str(root),
           "CUDASWITCH_CONFIG": str(folder / "no-config.yaml")}
    cudatrees.cuda_11_8(root / "apps" / "software" / "CUDA" / "11.8.0")
    cudatrees.cuda_12_9(root / "apps" / "spack" / "cuda-12.9.1-xyz")
    mp = root / "apps" / "modulefiles"
    (mp / "CUDA").mkdir(parents=True)
    (mp / "cuda").mkdir()
    (mp / "CUDA" / "11.8.0.lua").write_text(texts.EASYBUILD_LUA.format(root="/apps/software/CUDA/11.8.0",
                                                                        version="11.8.0"))
    (mp / "cuda" / "12.9.lua").write_text(texts.SPACK_LUA.format(root="/apps/spack/cuda-12.9.1-xyz", version="12.9.1"))
    (mp / "cuda" / "12.1.lua").write_text(texts.GETENV_LUA)
    return dict(env, MODULEPATH="/apps/modulefiles")


def _pipenv(folder: Path) -> dict:
    """The demo machine, whose folder is also a conda base (`conda-meta/` with conda's own package record, `envs/`),
    plus an environment `pipenv` holding NVIDIA's real nvidia-cuda-runtime-cu12 12.9.79 wheel as pip lays it out."""
    env = _demo(folder)
    make_env(folder, packages=["conda-26.7.1-py311h06a4308_0"])
    _pip_cuda_runtime(make_env(folder / "envs" / "pipenv"))
    return env


def _pip_cuda_runtime(prefix: Path) -> None:
    """NVIDIA's real nvidia-cuda-runtime-cu12 12.9.79 wheel in the environment, as pip lays it out."""
    import shutil

    import nvidia_wheels

    shutil.copytree(nvidia_wheels.extracted("nvidia-cuda-runtime-cu12==12.9.79"),
                    prefix / "lib" / "python3.11" / "site-packages", ignore=shutil.ignore_patterns(".complete"),
                    dirs_exist_ok=True)


def _shell(folder: Path) -> dict:
    """A real shell's view, no CUDASWITCH_FS_ROOT (the shell runs what the hooks put on PATH): NVIDIA's CUDA 12.9
    (tests/cudatrees.py, its `bin/nvcc` the real ptxas, which prints nvcc's release lines) at
    /tmp/demo/cuda/cuda-12.9 on CUDASWITCH_SEARCH_PATH, an activated conda environment /tmp/demo/envs/torch. The
    machine's own toolkits stay hidden (tests/seams.py's SUITE_MACHINE_ROOT, as for every command of the suite)."""
    cudatrees.cuda_12_9(folder / "cuda" / "cuda-12.9")
    make_env(folder / "envs" / "torch")
    return {"PATH": "/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8", "SHELL": "/bin/bash",
            "CONDA_PREFIX": str(folder / "envs" / "torch"), "CONDA_DEFAULT_ENV": "torch",
            "CUDASWITCH_SEARCH_PATH": str(folder / "cuda"),
            "CUDASWITCH_CONFIG": str(folder / "no-config.yaml"), "XDG_DATA_HOME": str(folder / "xdg-data")}


def _windows(folder: Path) -> dict:
    """A Windows machine's drives (CUDASWITCH_OS=windows, CUDASWITCH_FS_ROOT): CUDA 11.8, 12.9 and 13.0 in the
    installer's layout from NVIDIA's real win_amd64 wheels, no version.json, and cuDNN 9.10 for CUDA 12.9 as NVIDIA's
    exe installer lays it out (tests/cudatrees.py)."""
    drives = folder / "drives"
    for version in ("11.8", "12.9", "13.0"):
        cudatrees.windows_real_toolkit(drives, version)
    cudatrees.windows_cudnn_installer(drives, cuda="12.9", x64=True)
    return {"PATH": "/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8", "CUDASWITCH_FS_ROOT": str(drives),
            "CUDASWITCH_OS": "windows", "CUDASWITCH_CONFIG": str(folder / "no-config.yaml")}


def _copies(folder: Path) -> dict:
    """The shell scenario with a second copy of the same CUDA 12.9 at /tmp/demo/cuda/cuda-12.9-lab."""
    cudatrees.cuda_12_9(folder / "cuda" / "cuda-12.9-lab")
    return _shell(folder)


def _workstation(folder: Path) -> dict:
    """A Linux `/` (CUDASWITCH_FS_ROOT) whose CUDA 13.0 was assembled from NVIDIA's cu13 wheels (their files and
    dist-info folders, no version.json) at /usr/local/cuda-13.0, with the `/usr/local/cuda` link and a two-line
    wrapper script `/usr/local/bin/nvcc` on PATH; the demo's CUDA 11.8 and 12.9 lie in /tmp/demo, for
    CUDASWITCH_SEARCH_PATH."""
    import nvidia_wheels as nw

    root = folder / "root"
    cuda = root / "usr" / "local" / "cuda-13.0"
    for spec in nw.TOOLKIT_13_0:
        wheel = nw.extracted(spec)
        cudatrees._copytree(wheel / "nvidia" / "cu13", cuda)
        for info in wheel.glob("*.dist-info"):
            cudatrees._copytree(info, cuda / "dist-info" / info.name)
    (cuda / "lib64").symlink_to("lib")
    (root / "usr" / "local" / "cuda").symlink_to("cuda-13.0")
    (root / "usr" / "local" / "bin").mkdir()
    wrapper = root / "usr" / "local" / "bin" / "nvcc"
    wrapper.write_text('#!/bin/sh\nexec /usr/local/cuda-13.0/bin/nvcc "$@"\n')
    wrapper.chmod(0o755)
    here = root / "tmp" / "demo"  # the page's /tmp/demo, literally (AS_WRITTEN)
    cudatrees.cuda_11_8(here / "cuda-11.8")
    cudatrees.cuda_12_9(here / "cuda-12.9")
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8",
            "CUDASWITCH_FS_ROOT": str(root), "CUDASWITCH_CONFIG": str(folder / "no-config.yaml")}


def _workstation_torch(folder: Path) -> dict:
    """The workstation and environments (paths of this machine, as `-p` takes them) holding the files by which the
    PyPI wheels of torch identify themselves: /tmp/demo/envs/cu130 and torch214 torch 2.14.1 (CUDA 13.0),
    /tmp/demo/envs/flash torch 2.15.0 (CUDA 13.2)."""
    from torch_wheel_files import cuda_torch_env

    env = _workstation(folder)
    cuda_torch_env(folder / "envs" / "cu130")
    cuda_torch_env(folder / "envs" / "torch214")
    cuda_torch_env(folder / "envs" / "flash", "torch==2.15.0")
    return env


def _fake_torch():
    """tests/fake_torch/envs.py: the suite's real torch environment and the environments built around it."""
    sys.path.insert(0, str(REPO / "tests" / "fake_torch"))
    try:
        import envs
    finally:
        sys.path.remove(str(REPO / "tests" / "fake_torch"))
    return envs


def _workstation_cpu(folder: Path) -> dict:
    """The workstation with the loader pin its installer left (`/etc/ld.so.conf.d/zz-cuda-13-0.conf`, as on the
    machine it was copied from) and an environment /tmp/demo/envs/torch holding the real CPU build torch 2.13.0's
    identity files (torch/version.py, its dist-info), copied from the suite's real torch environment."""
    env = _workstation(folder)
    conf = Path(env["CUDASWITCH_FS_ROOT"]) / "etc" / "ld.so.conf.d"
    conf.mkdir(parents=True)
    (conf / "zz-cuda-13-0.conf").write_text("/usr/local/cuda-13.0/lib\n")
    _cpu_torch_identity(make_env(folder / "envs" / "torch"))
    return env


def _real_torch_python(prefix: Path) -> None:
    """The environment gets this interpreter laid out as conda's python package lays it out, which imports the
    suite's real CPU torch (tests/fake_torch/envs.py); conda's own record of the environment stays as conda wrote it."""
    envs = _fake_torch()
    history = (prefix / "conda-meta" / "history").read_bytes()
    try:
        envs.python_prefix(prefix.parent, prefix.name)
    except envs.EnvUnavailable as e:
        pytest.skip(str(e))
    (prefix / "conda-meta" / "history").write_bytes(history)
    envs.link_real_torch(prefix)


def _cpu_torch_identity(prefix: Path) -> None:
    """torch/version.py and the dist-info of the real CPU build torch 2.13.0 (the suite's real torch environment),
    by which an environment's files say it holds that torch."""
    import shutil

    envs = _fake_torch()
    real = envs.torch_venv() / "lib" / "python3.11" / "site-packages"
    site = prefix / "lib" / "python3.11" / "site-packages"
    (site / "torch").mkdir(parents=True)
    shutil.copy2(real / "torch" / "version.py", site / "torch" / "version.py")
    for info in real.glob("torch-*.dist-info"):
        shutil.copytree(info, site / info.name)


def _cpu_torch_env(prefix: Path) -> Path:
    """A new environment holding the real CPU build torch 2.13.0's identity files."""
    _cpu_torch_identity(make_env(prefix))
    return prefix


# ---- with the real conda (tests/realconda.py; skipped as every real-conda test is where there is none) ------------
# The user's `/` is the scenario's folder `root`: a page shows every path under it as the user's own (`/home/li`,
# `/usr/local/cuda-12.9`), and the page's `conda` is the real one, with cudaswitch installed into its Python as
# tests/realconda.py's plugin_site does. Its environments are made by that conda, in the envs dir `~/.condarc`
# names.

CONDARC = "envs_dirs:\n  - ~/conda-envs\n"
ENVIRONMENT_YML = 'name: detector\ndependencies: []\nvariables:\n  CUDASWITCH_CUDA: "11.8"\n'


def _conda(folder: Path, conda) -> dict:
    """/home/li's `~/.condarc` names ~/conda-envs; there the real conda made the empty environment e2 and, from an
    environment file declaring CUDA 10.2, `old`; ~/environment.yml declares CUDA 11.8; CUDA 11.8 and 12.9 lie in
    /usr/local."""
    import realconda

    root = folder / "root"
    home = root / "home" / "li"
    home.mkdir(parents=True)
    cudatrees.cuda_11_8(root / "usr" / "local" / "cuda-11.8")
    cudatrees.cuda_12_9(root / "usr" / "local" / "cuda-12.9")
    (home / ".condarc").write_text(CONDARC)
    (home / "environment.yml").write_text(ENVIRONMENT_YML)
    bindir = folder / "bin"
    bindir.mkdir()
    site = realconda.plugin_site(folder)
    (bindir / "conda").write_text(f"#!/bin/sh\nPYTHONPATH={shlex.quote(f'{REPO}:{site}')} exec "
                                  f"{shlex.join(conda.argv)} \"$@\"\n")
    (bindir / "conda").chmod(0o755)
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
           "CUDASWITCH_SEARCH_PATH": str(root / "usr" / "local"), "CUDASWITCH_CONFIG": str(folder / "no-config.yaml"),
           "XDG_DATA_HOME": str(folder / "xdg-data"), "CONDA_SOLVER": "classic", "CONDA_NUMBER_CHANNEL_NOTICES": "0",
           "CONDA_EXE": str(Path(conda.root) / "bin" / "conda")}  # as conda's shell hook exports it
    conda.run(["create", "-n", "e2", "--offline", "--yes", "--quiet"], env=env, base={})
    old = folder / "old.yml"
    old.write_text(ENVIRONMENT_YML.replace("detector", "old").replace("11.8", "10.2"))
    conda.run(["env", "create", "-f", str(old), "--offline", "--quiet"], env=env, base={})
    return env


def _conda_use(env: dict, *args) -> None:
    r = run_cli(["use", *args, "--no-smoke"], env=env)
    assert r.returncode == 0, r.stderr


def _conda_doctor(folder: Path, conda) -> dict:
    """The conda scenario after `use 12.9 -n e2`, and an environment `torch` switched to CUDA 11.8 whose toolkit
    was deleted since, with a hook file as the previous cudaswitch wrote it (its version line says 0.0.9)."""
    from cudaswitch import __version__

    env = _conda(folder, conda)
    conda.run(["create", "-n", "torch", "--offline", "--yes", "--quiet"], env=env, base={})
    _conda_use(env, "12.9", "-n", "e2")
    _conda_use(env, "11.8", "-n", "torch")
    hook = Path(env["HOME"]) / "conda-envs" / "torch" / "etc" / "conda" / "activate.d" / "cudaswitch.sh"
    hook.write_bytes(hook.read_bytes().replace(f"generated by cudaswitch {__version__}".encode(),
                                               b"generated by cudaswitch 0.0.9"))
    import shutil

    shutil.rmtree(folder / "root" / "usr" / "local" / "cuda-11.8")
    return env


def _conda_pip(folder: Path, conda) -> dict:
    """The conda scenario after `use 12.9 -n e2`, and then pip put NVIDIA's CUDA runtime wheel into e2."""
    env = _conda(folder, conda)
    _conda_use(env, "12.9", "-n", "e2")
    _pip_cuda_runtime(Path(env["HOME"]) / "conda-envs" / "e2")
    return env


def _conda_envs(folder: Path, conda) -> dict:
    """The conda scenario where the real conda also made environments holding the identity files of real torch
    wheels, `cpu` torch 2.13.0+cpu and `cu130` torch 2.14.1+cu130; e2 holds NVIDIA's
    nvidia-cuda-runtime-cu12 wheel; `use` switched e2 and cpu to CUDA 12.9 and `torch` to CUDA 11.8, since deleted."""
    import shutil

    import torch_wheel_files

    env = _conda(folder, conda)
    home = Path(env["HOME"])
    for name in ("cpu", "cu130", "torch"):
        conda.run(["create", "-n", name, "--offline", "--yes", "--quiet"], env=env, base={})
    _real_torch_python(home / "conda-envs" / "cpu")
    _cpu_torch_identity(home / "conda-envs" / "cpu")
    site = home / "conda-envs" / "cu130" / "lib" / "python3.11" / "site-packages"
    shutil.copytree(torch_wheel_files.torch_identity(), site, ignore=shutil.ignore_patterns(".complete"))
    _pip_cuda_runtime(home / "conda-envs" / "e2")
    for name, version in (("e2", "12.9"), ("cpu", "12.9"), ("torch", "11.8")):
        _conda_use(env, version, "-n", name)
    r = run_cli(["smoke", "-n", "cpu", "--cpu-ok"], env=env, timeout=600)  # the real torch computes on the CPU
    assert r.returncode == 0, r.stdout + r.stderr
    shutil.rmtree(folder / "root" / "usr" / "local" / "cuda-11.8")
    # li is no administrator: root's conda (and cudaswitch) would list every account's environments.txt, which
    # other runs on this machine change; CUDASWITCH_FS_ROOT=/ is the machine's own `/` seen as a user sees it
    return dict(env, CUDASWITCH_FS_ROOT="/")


REAL_CONDA = {"conda": _conda, "conda-doctor": _conda_doctor, "conda-pip": _conda_pip, "conda-envs": _conda_envs}


# scenarios whose /tmp/demo is that folder of their own `/` (CUDASWITCH_FS_ROOT): the text is run as written, so a
# table's columns line up as on the page (a longer real folder would widen them)
AS_WRITTEN = {"workstation"}


def _no_driver_here():
    """The torch pages show a machine without an NVIDIA driver: the probe asks the real one (libcuda, in the env's
    own Python), so a machine with a driver prints another driver line. CI has none."""
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return
    pytest.skip("this machine has an NVIDIA driver (libcuda.so.1): the page shows one without")


def _plain_env(folder: Path) -> dict:
    return {"PATH": "/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8",
            "CUDASWITCH_CONFIG": str(folder / "no-config.yaml")}


def _torch_cpu(folder: Path) -> dict:
    """A user's conda base (/home/li/miniconda3 on the page) with an environment envs/torch whose own Python imports
    the real CPU build torch 2.13.0 of the suite's torch environment (tests/fake_torch/envs.py `real_torch_env`),
    on a machine without an NVIDIA driver."""
    _no_driver_here()
    _fake_torch().real_torch_env(folder / "envs", "torch")
    return _plain_env(folder)


def _torch_failures(folder: Path) -> dict:
    """The same base with one environment per failure, each a real venv holding a fake torch that fails with a real
    failure's text (tests/fake_torch/texts.py, where each comes from): envs/pytorch raises Windows' WinError 1114 for
    c10.dll, envs/mkl prints the OpenMP runtime's Error #15 and aborts, with libiomp5md.dll both in the env's
    Library/bin and in torch's lib; envs/cu124 and envs/rtx5090 import the real CPU torch patched to be torch
    2.5.1+cu124 on a driver too old for it (torch's own warning) and on an RTX 5090 its build has no kernels for."""
    _no_driver_here()
    envs = _fake_torch()
    base = folder / "envs"
    envs.fake_import_failure(envs.make_env(base, "pytorch"), "win1114")
    envs.fake_cuda(envs.make_env(base, "cu124"), "driver_old")
    mkl = envs.make_env(base, "mkl")
    envs.fake_import_failure(mkl, "omp15")
    envs.openmp_files(mkl)
    envs.fake_cuda(envs.make_env(base, "rtx5090"), "sm120")
    return _plain_env(folder)


# scenarios whose folder stands for a user's conda base, as the pages about torch show it (`/tmp/demo` for the rest)
AS_USER = {"torch-cpu": "/home/li/miniconda3", "torch-failures": "/home/li/miniconda3"}

def _wheelhouse(folder: Path) -> dict:
    """The shell scenario where pip takes NVIDIA's CUDA 13.0 wheels from a folder of them (the suite's wheel cache,
    through pip's own PIP_NO_INDEX / PIP_FIND_LINKS), as they would come from the index."""
    import nvidia_wheels as nw

    for spec in nw.TOOLKIT_13_0:
        nw.wheel(spec)
    return dict(_shell(folder), PIP_NO_INDEX="1", PIP_FIND_LINKS=str(nw.cache_dir() / "wheels"))


def _wheelhouse_torch(folder: Path) -> dict:
    """The wheelhouse with environments holding the files by which PyPI's torch wheels identify themselves:
    /tmp/demo/envs/torch214 torch 2.14.1 (CUDA 13.0), /tmp/demo/envs/cpu the real CPU build torch 2.13.0; the home
    folder is /tmp/demo, so install-toolkit's store is /tmp/demo/.local/share/cudaswitch/toolkits."""
    from torch_wheel_files import cuda_torch_env

    env = _wheelhouse(folder)
    cuda_torch_env(folder / "envs" / "torch214")
    _cpu_torch_env(folder / "envs" / "cpu")
    return {k: v for k, v in env.items() if k != "XDG_DATA_HOME"}


def _cudnn(folder: Path) -> dict:
    """The demo machine (CUDA 11.8 and 12.9 under /usr/local) with NVIDIA's cuDNN 9.10.2.21 Linux tarball in the
    current folder: the real libraries and headers of the nvidia-cudnn-cu12 wheel in NVIDIA's tarball layout
    (tests/cudnn_archives.py, real_linux_tarball: 572 MB, built once per machine)."""
    import cudnn_archives as ca

    env = _demo(folder)
    tarball = ca.real_linux_tarball()
    (folder / tarball.name).symlink_to(tarball)
    return env


def _windows_cudnn(folder: Path) -> dict:
    """The Windows machine with NVIDIA's cuDNN zips in the current folder (tests/cudnn_archives.py): 8.9.5.29 for
    CUDA 11 (NVIDIA's real cudnn64_8.dll, headers and import libraries; small stand-ins with the real names for the
    six sub-library DLLs of 300+ MB) and 9.10.2.21 for CUDA 11 (the real DLLs and headers); and two zips made of
    8.9.5's real members as an attacker or a repacker leaves them: slip/ with one more member that climbs out to
    `Windows/System32`, stray/ with the import libraries in `lib/x64_win/`."""
    import zipfile

    import cudnn_archives as ca
    import nvidia_wheels as nw

    env = _windows(folder)
    old = ca.real_windows_8_zip(nw.WIN_CUDNN_8_CU11)
    for archive in (old, ca.real_windows_zip()):
        (folder / archive.name).symlink_to(archive)
    with zipfile.ZipFile(old) as real:
        members = [(i.filename, "file", real.read(i)) for i in real.infolist() if not i.is_dir()]
    top = members[0][0].split("/")[0]
    dll = next(data for name, _, data in members if name.endswith("/bin/cudnn64_8.dll"))
    for bad in ("slip", "stray"):
        (folder / bad).mkdir()
    ca.write_zip(folder / "slip" / old.name, members + [(f"{top}/../../Windows/System32/cudnn64_8.dll", "file", dll)])
    ca.write_zip(folder / "stray" / old.name, [(n.replace("/lib/x64/", "/lib/x64_win/"), k, d) for n, k, d in members])
    return env


SCENARIOS = {"copies": _copies, "demo": _demo, "clusters": _clusters, "pipenv": _pipenv, "shell": _shell, "windows": _windows,
             "workstation": _workstation, "workstation-torch": _workstation_torch,
             "workstation-cpu": _workstation_cpu, "wheelhouse-torch": _wheelhouse_torch, "torch-cpu": _torch_cpu,
             "torch-failures": _torch_failures, "cudnn": _cudnn, "windows-cudnn": _windows_cudnn}

# Scenarios whose blocks in the two languages are one run (`_one_run`): the real cuDNN is read twice (the dry run,
# the install) and written once, not twice each (its xz alone takes 45 s of CPU a read).
ONE_RUN = {"cudnn", "windows-cudnn"}


def _transcript(lines):
    """[(command line, expected output lines, expected exit status)]"""
    steps = []
    for i, line in enumerate(lines):
        if not line and lines[i + 1:i + 2] and lines[i + 1].startswith("$ "):
            continue  # the blank line that sets the next command apart
        if line.startswith("$ "):
            steps.append([line[2:], [], 0])
        else:
            assert steps, f"output before any command: {line!r}"
            m = re.fullmatch(r"\(exit (\d+)\)", line)
            if m:
                steps[-1][2] = int(m.group(1))
            else:
                steps[-1][1].append(line)
    return steps


def _trimmed(lines):
    while lines and not lines[-1]:
        lines = lines[:-1]
    return lines


def _same(expected, printed) -> bool:
    """Line for line, where a line `...` (indented or not) on the page stands for any lines, none included, that
    the page leaves out."""
    if not expected:
        return not printed
    if expected[0].strip() == "...":
        return any(_same(expected[1:], printed[k:]) for k in range(len(printed) + 1))
    return bool(printed) and expected[0] == printed[0] and _same(expected[1:], printed[1:])


def _normal(line: str) -> str:
    """A page's or a command's line with what varies from run to run (a moment, an install record's process, a
    step's timing) made one."""
    return INSTALL_ID.sub(r"\1-<time>", TIMING.sub("<n>", TIME.sub("<time>", line))).rstrip()


def _pairs(scenario: str, folder: Path, env: dict):
    """(the machine's text, the page's text) pairs a scenario's transcripts are read through."""
    if scenario in REAL_CONDA:  # the user's `/`, and conda's root as conda's Docker images place it
        return [(str(folder / "root"), ""), (str(Path(env["CONDA_EXE"]).parent.parent), "/opt/conda")]
    if scenario in AS_USER:  # a user's conda base, and the suite's own Python as the page's
        return [(str(folder), AS_USER[scenario]), (platform.python_version(), PYTHON_SHOWN)]
    return [(str(Path(PLACEHOLDER) if scenario in AS_WRITTEN else folder), PLACEHOLDER)]


def _on_machine(command: str, pairs) -> str:
    for real, page in pairs:
        command = command.replace(page, real) if page else command
    return command


def _on_page(line: str, pairs) -> str:
    for real, page in pairs:
        line = line.replace(real, page)
    return _normal(line)


def _run(command: str, env: dict, folder: Path, pairs=None, cwd=None):
    pairs = pairs or [(str(folder), PLACEHOLDER)]
    words = shlex.split(_on_machine(command, pairs), comments=True)  # `# why` ends a line
    quiet = words[-2:] == [">", "/dev/null"]
    words = words[:-2] if quiet else words
    env = dict(env)
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    assert words[:1] == ["cudaswitch"], f"not a cudaswitch command: {command}"
    r = run_cli(words[1:], env=env, cwd=cwd, timeout=900)
    err = _without_relocation_note(r.stderr.splitlines(), env)
    shown = ([] if quiet else r.stdout.splitlines()) + err
    return [_on_page(ln, pairs) for ln in shown], r.returncode


def _without_relocation_note(lines, env: dict):
    """stderr without the note every command prints under CUDASWITCH_FS_ROOT (naming it and the folder), and only
    that: any other line stays compared."""
    root = env.get("CUDASWITCH_FS_ROOT")
    return [ln for ln in lines if not (root and "CUDASWITCH_FS_ROOT" in ln and str(Path(root)) in ln)]


def _plain(command: str) -> bool:
    """`[VAR=value ...] cudaswitch ... [> /dev/null]`: what the in-process runner (`_run`) replays."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return False
    if words[-2:] == [">", "/dev/null"]:
        words = words[:-2]
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        words.pop(0)
    shell = set("|;&<>`$()")
    return words[:1] == ["cudaswitch"] and not any(set(w) & shell for w in words[1:])


def _run_in_bash(commands, env: dict, folder: Path, pairs=None):
    """The commands of one block in ONE real bash, in order (a shell function `eval "$(cudaswitch init bash)"`
    defines, a variable `use` sets, stay for the next command), `cudaswitch` being this checkout on PATH; each
    command's stdout, then its stderr, and its exit status, as `_run` gives them."""
    import subprocess

    from conftest import cli_on_path

    pairs = pairs or [(str(folder), PLACEHOLDER)]
    out = folder / ".runner"
    out.mkdir()
    bindir = cli_on_path(out)
    script = []
    for k, command in enumerate(commands):
        script.append(f"{{ {_on_machine(command, pairs)}\n}} >{out}/{k}.out 2>{out}/{k}.err; "
                      f"echo $? >{out}/{k}.rc")
    env = dict(env, PATH=f"{bindir}:{env['PATH']}", PYTHONPATH=str(REPO))
    # in the user's home, where a new terminal starts (every scenario's HOME but conda's is its folder)
    subprocess.run(["bash", "--norc", "--noprofile", "-c", "\n".join(script)], env=env, cwd=env["HOME"], check=True,
                   timeout=300, stdin=subprocess.DEVNULL)
    results = []
    for k in range(len(commands)):
        err = _without_relocation_note((out / f"{k}.err").read_text().splitlines(), env)
        shown = (out / f"{k}.out").read_text().splitlines() + err
        results.append(([_on_page(ln, pairs) for ln in shown], int((out / f"{k}.rc").read_text())))
    return results


class _Played:
    """One run of the same commands in several languages, step by step in one folder: for the first language the
    cuDNN core (`planned`, what it told, the plan's outcome; `undo_latest`) runs and is kept; for the others that
    command's CLI is given those records instead and prints them in its language, as it prints its own. What a
    command prints comes from those records (M() messages, translated when printed), so it is what the command
    prints running alone (test_the_other_language_prints_from_one_run_what_it_prints_alone)."""

    def __init__(self):
        self.kept, self.step, self.first, self.cursor = {}, 0, True, 0

    def at(self, step: int, first: bool) -> None:
        """The next command is step `step`, of the first language or not."""
        self.step, self.first, self.cursor = step, first, 0

    def patches(self):
        from unittest import mock

        import cudaswitch.cudnn.install as install
        import cudaswitch.cudnn.uninstall as uninstall

        return [mock.patch.object(install, "planned", self._planned(install.planned)),
                mock.patch.object(uninstall, "undo_latest", self._undo(uninstall.undo_latest))]

    def _planned(self, real):
        import contextlib

        played = self

        class Plan:
            def __init__(self, plan, kept):
                self._plan, self._kept = plan, kept

            def __getattr__(self, name):
                return getattr(self._plan, name)

            def carry_out(self, *args):
                if "outcome" not in self._kept:
                    try:
                        self._kept["outcome"] = (True, self._plan.carry_out(*args))
                    except Exception as exc:
                        self._kept["outcome"] = (False, exc)
                done, value = self._kept["outcome"]
                if not done:
                    raise value
                return value

        @contextlib.contextmanager
        def planned(*args, tell, **kw):
            kept = played._next()
            if played.first:
                kept["told"] = []

                def telling(kind, text):
                    kept["told"].append((kind, text))
                    tell(kind, text)
                try:
                    with real(*args, tell=telling, **kw) as plan:
                        kept["plan"] = plan
                        yield Plan(plan, kept)
                    return
                except Exception as exc:
                    kept.setdefault("error", exc)
                    raise
            for kind, text in kept["told"]:
                tell(kind, text)
            if "plan" not in kept:
                raise kept["error"]
            yield Plan(kept["plan"], kept)

        return planned

    def _undo(self, real):
        def undo_latest(*args, **kw):
            kept = self._next()
            if self.first:
                try:
                    kept["outcome"] = (True, real(*args, **kw))
                except Exception as exc:
                    kept["outcome"] = (False, exc)
            done, value = kept["outcome"]
            if not done:
                raise value
            return value

        return undo_latest

    def _next(self) -> dict:
        """The record of this call: a fresh one for the first language, else the first language's in its order."""
        calls = self.kept.setdefault(self.step, [])
        if self.first:
            calls.append({})
        self.cursor += 1
        return calls[self.cursor - 1]


def _lockstep(transcripts, env: dict, folder: Path):
    """The commands of several transcripts, the same but for a leading `LANG=...` and their `# comment`, run as
    `_Played` says: step k of each, then step k+1 of each. [[(printed, exit status)] per transcript]."""
    bare = [[[w for w in shlex.split(c, comments=True) if not w.startswith("LANG=")] for c, _, _ in steps]
            for steps in transcripts]
    assert all(b == bare[0] for b in bare), f"not the same commands: {bare}"
    played = _Played()
    results = [[] for _ in transcripts]
    patches = played.patches()
    for patch in patches:
        patch.start()
    try:
        for k in range(len(bare[0])):
            for t, steps in enumerate(transcripts):
                played.at(k, first=t == 0)
                results[t].append(_run(steps[k][0], env, folder, cwd=folder))
    finally:
        for patch in patches:
            patch.stop()
    return results


BLOCKS = _blocks()


def _transcript_blocks():
    """(file, line, the line before the fence) of every fenced block holding a `$ command` line."""
    out = []
    for page in _user_pages():
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            if lines[i].lstrip().startswith("```"):
                end = next(j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith("```"))
                if any(ln.lstrip().startswith("$ ") for ln in lines[i + 1:end]):
                    out.append((page.relative_to(REPO).as_posix(), i + 1, lines[i - 1].strip() if i else ""))
                i = end + 1
            else:
                i += 1
    return out


def test_every_transcript_is_replayed_or_says_what_it_needs():
    """A reader copies a command and expects what the page shows: every block with `$ ` lines is either replayed
    (`<!-- output: SCENARIO -->`) or marked `<!-- example: what it needs -->`, so none is left unchecked unseen."""
    unmarked = [f"{p}:{n}" for p, n, before in _transcript_blocks()
                if not (MARKER.match(before) or EXAMPLE.match(before))]
    assert not unmarked, "transcripts without <!-- output: SCENARIO --> or <!-- example: ... -->:\n" + "\n".join(unmarked)
    examples = [f"{p}:{n}" for p, n, before in _transcript_blocks() if EXAMPLE.match(before)]
    assert len(examples) <= len(BLOCKS), examples  # replaying is the rule, an example the exception


# The torch scenarios are built once, for the English and the Chinese page alike, and each of their smoke probes runs
# once: a command whose probe already ran (the same Python, folder and variables, the language aside) is diagnosed
# and printed anew from that run's outcome. `--cpu-ok` changes the verdict, not the probe. A real torch probe takes
# seconds; the blocks' eight commands need three.
SHARED = set(AS_USER)
_BUILT = {}
_PROBES = {}
LANGUAGE = {"LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "CUDASWITCH_LANG"}


def _probe_once(real, done: dict):
    """checks/runner.py's run_probe, run by `real` once per Python, folder, arguments and variables (the language
    aside) and kept in `done`: each caller gets its own copy of the outcome."""
    import copy

    def run_probe(python, environ, timeout, args=None, cwd=None, isolated=False, progress=False):
        key = (python, cwd, tuple(args or ()), isolated,
               tuple(sorted((k, v) for k, v in environ.items() if k not in LANGUAGE)))
        if key not in done:
            done[key] = real(python, environ, timeout, args, cwd=cwd, isolated=isolated, progress=progress)
        return copy.deepcopy(done[key])
    return run_probe


_ONE_RUNS: dict = {}


def _one_run(scenario: str, tmp_path_factory):
    """{(page, line): results} of every block of a ONE_RUN scenario, run once a session (`_lockstep`)."""
    import shutil

    if scenario not in _ONE_RUNS:
        blocks = [(p, n, _transcript(t)) for p, n, s, t in BLOCKS if s == scenario]
        folder = tmp_path_factory.mktemp("one-run") / "demo"
        folder.mkdir()
        try:
            results = _lockstep([steps for _, _, steps in blocks], SCENARIOS[scenario](folder), folder)
            _ONE_RUNS[scenario] = {(p, n): r for (p, n, _), r in zip(blocks, results)}
        except Exception as exc:  # every block of the scenario fails with it, none runs it again
            _ONE_RUNS[scenario] = exc
        finally:
            shutil.rmtree(folder.parent, ignore_errors=True)  # a real cuDNN is a GB
    if isinstance(_ONE_RUNS[scenario], Exception):
        raise _ONE_RUNS[scenario]
    return _ONE_RUNS[scenario]


@pytest.mark.parametrize("page,line,scenario,text", BLOCKS, ids=[f"{p}:{n}" for p, n, _, _ in BLOCKS])
def test_a_marked_output_block_is_what_the_commands_print_now(page, line, scenario, text, tmp_path, request,
                                                               tmp_path_factory, monkeypatch):
    known = {**SCENARIOS, **REAL_CONDA}
    assert scenario in known, f"{page}:{line}: unknown scenario {scenario!r} (known: {sorted(known)})"
    if scenario in SHARED:
        from cudaswitch.checks import smoke

        if scenario not in _BUILT:
            folder = tmp_path_factory.mktemp(scenario) / "demo"
            folder.mkdir()
            _BUILT[scenario] = folder, SCENARIOS[scenario](folder)
        folder, env = _BUILT[scenario]
        monkeypatch.setattr(smoke, "run_probe", _probe_once(smoke.run_probe, _PROBES))
    elif scenario not in ONE_RUN:  # a ONE_RUN scenario is built by _one_run, once for all its blocks
        folder = tmp_path / "demo"
        folder.mkdir()
        if scenario in REAL_CONDA:  # the suite's real conda, or the skip every real-conda test makes without one
            env = REAL_CONDA[scenario](folder, request.getfixturevalue("real_conda"))
        else:
            env = SCENARIOS[scenario](folder)
    steps = _transcript(text)
    pairs = _pairs(scenario, folder, env) if scenario not in ONE_RUN else None
    if scenario in ONE_RUN:
        results = _one_run(scenario, tmp_path_factory)[(page, line)]
    elif all(_plain(command) for command, _, _ in steps):
        results = [_run(command, env, folder, pairs, cwd=folder) for command, _, _ in steps]
    else:
        results = _run_in_bash([command for command, _, _ in steps], env, folder, pairs)
    # a real-conda table is compared cell by cell (the machine's longer folders, shown shorter, widen its columns),
    # and its SMOKE day stands for any day, as a time does
    cells = (lambda ln: DAY.sub("<day>", re.sub(r"(\S)  +", r"\1  ", ln))) if scenario in REAL_CONDA else (lambda ln: ln)
    for (command, expected, status), (printed, code) in zip(steps, results):
        # an empty line before the next `$` sets it apart on the page, so an output's trailing empty lines count not
        assert _same(_trimmed([cells(_normal(e)) for e in expected]), _trimmed([cells(ln) for ln in printed])), \
            f"{page}:{line}: `{command}` prints now:\n" + "\n".join(printed)
        assert code == status, f"{page}:{line}: `{command}` exits {code}, the page says {status}"


def test_both_readmes_carry_real_output_the_suite_checks():
    pages = {p for p, _, _, _ in BLOCKS}
    assert {"README.md", "README.zh-CN.md"} <= pages, pages
    assert sum(len(_transcript(t)) for _, _, _, t in BLOCKS) >= 6


def test_the_transcript_check_sees_a_changed_line(tmp_path):
    """What the marked blocks rely on: a line the command no longer prints is a difference."""
    folder = tmp_path / "demo"
    folder.mkdir()
    env = _demo(folder)
    printed, code = _run("cudaswitch which cu118", env, folder)
    assert (printed, code) == (["/usr/local/cuda-11.8"], 0)
    printed, code = _run(f"LANG=zh_CN.UTF-8 cudaswitch which 10.2 -p {PLACEHOLDER}/envs", env, folder)
    assert code == 2 and printed != ["/usr/local/cuda-11.8"]


def test_the_other_language_prints_from_one_run_what_it_prints_alone(tmp_path):
    """What ONE_RUN relies on: the Chinese commands given the English run's records print what they print when they
    run themselves (a refusal, a dry run, an install, one over another, the undo, a failed undo), and not English."""
    import cudnn_archives as ca

    archive = ca.make(tmp_path / "archives", "linux-9.10-archive").name
    commands = ["list", f"install-cudnn {archive} --cuda 11.8", f"install-cudnn {archive} --dry-run",
                f"install-cudnn {archive}", f"install-cudnn {archive}", "uninstall-cudnn", "uninstall-cudnn"]
    english = [(f"cudaswitch {c}", [], 0) for c in commands]
    chinese = [(f"LANG=zh_CN.UTF-8 cudaswitch {c}", [], 0) for c in commands]
    runs = []
    for name, transcripts in (("one", [english, chinese]), ("alone", [chinese])):
        folder = tmp_path / name / "demo"
        folder.mkdir(parents=True)
        env = _demo(folder)
        (folder / archive).symlink_to(tmp_path / "archives" / archive)
        runs.append(_lockstep(transcripts, env, folder))
    (played_en, played_zh), (alone,) = runs
    assert played_zh == alone
    assert [code for _, code in alone] == [0, 1, 0, 0, 0, 0, 1]
    assert all(en != zh for (en, _), (zh, _) in zip(played_en[1:], played_zh[1:]))  # in its own language


def test_a_left_out_part_stands_for_lines_but_the_lines_shown_must_be_there():
    printed = ["smoke test: torch", "  python 3.11", "  torch 2.13.0", "result: PASS"]
    assert _same(["smoke test: torch", "...", "result: PASS"], printed)
    assert _same(["...", "result: PASS"], printed) and _same(printed + ["..."], printed)
    assert _same(["smoke test: torch", "  ...", "result: PASS"], printed)
    assert not _same(["smoke test: torch", "...", "result: FAIL"], printed)
    assert not _same(["smoke test: torch", "...", "  torch 2.14.1", "...", "result: PASS"], printed)
    assert not _same(["smoke test: torch", "result: PASS"], printed)  # no line is skipped unless the page says so


def test_a_timing_stands_for_any_number_but_the_rest_of_the_line_must_be_there():
    shown = "  matmul     pass  1.0089s on cpu  23.2 GFLOP/s"
    printed = [_normal("  matmul     pass  0.3521s on cpu  69.6 GFLOP/s")]
    assert _same([_normal(shown)], printed)
    assert _same([_normal("  conv2d     通过  0.766 秒，设备 cpu")], [_normal("  conv2d     通过  0.0436 秒，设备 cpu")])
    for changed in ("  matmul     FAIL  1.0089s on cpu  23.2 GFLOP/s", "  matmul     pass  1.0089s on cuda  23.2 GFLOP/s",
                    "  conv2d     pass  1.0089s on cpu  23.2 GFLOP/s", "  matmul     pass  1.0089s on cpu",
                    "  matmul     pass  1.0089s on cpu  23.2 GFLOP/s  RuntimeError: CUDA error"):
        assert not _same([_normal(changed)], printed), changed
    # a number that is no step's timing is compared as written
    for line in ("  python     3.11.7 (64-bit) /home/li/miniconda3/envs/torch/bin/python",
                 "  torch      2.13.0+cpu  CUDA none (CPU build)  cuDNN -", "  probe      exit -6 at stage import_torch",
                 "  cuda       is_available=False  devices=0  GPU none", "smoke test running (12 s of at most 180 s)..."):
        assert _normal(line) == line


def test_a_shared_probe_runs_once_per_python_and_variables_the_language_aside():
    calls, done = [], {}

    def real(python, environ, timeout, args=None, cwd=None, isolated=False, progress=False):
        calls.append((python, dict(environ)))
        return {"record": {"python": python}}

    run = _probe_once(real, done)
    english = run("/e/bin/python", {"PATH": "/e/bin", "LANG": "C.UTF-8"}, 180, cwd="/e")
    chinese = run("/e/bin/python", {"PATH": "/e/bin", "LANG": "zh_CN.UTF-8"}, 180, cwd="/e")
    assert len(calls) == 1 and english == chinese and english is not chinese
    run("/e/bin/python", {"PATH": "/e/bin", "LANG": "C.UTF-8", "CONDA_OVERRIDE_CUDA": "11.4"}, 180, cwd="/e")
    run("/f/bin/python", {"PATH": "/e/bin", "LANG": "C.UTF-8"}, 180, cwd="/f")
    assert len(calls) == 3


def test_the_shell_replay_keeps_the_shell_and_sees_a_changed_line(tmp_path):
    """A block with a pipe, `;` or `eval` runs in one real bash: the function `init` defines and the variables `use`
    sets reach the next command, each command's own output and status are told apart, and a difference shows."""
    folder = tmp_path / "demo"
    folder.mkdir()
    env = _shell(folder)
    assert not _plain('echo "$CUDA_HOME"') and not _plain("cudaswitch run 12.9 -- nvcc --version | tail -1")
    assert _plain("LANG=C cudaswitch which 12.9 > /dev/null")
    results = _run_in_bash(['eval "$(cudaswitch init bash)"',
                            "cudaswitch use 12.9 --no-smoke --no-verify > /dev/null",
                            'echo "CUDA_HOME=$CUDA_HOME"', "sh -c 'echo to-stderr >&2; exit 3'"], env, folder)
    assert results[0] == ([], 0) and results[1] == ([], 0)
    assert results[2] == ([f"CUDA_HOME={PLACEHOLDER}/cuda/cuda-12.9"], 0)  # not the path's unchanged default
    assert results[3] == (["to-stderr"], 3)


# ---- English and Chinese pages -----------------------------------------------------------------------------------

def _sections(path: Path):
    out, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            out.append(line)
    return out


def _english_pages():
    return [p for p in [DOCS / "index.md", *sorted(GUIDE.glob("*.md"))] if not p.name.endswith(".zh.md")]


def test_every_page_has_its_chinese_page_with_as_many_sections():
    english = _english_pages()
    assert len(english) >= 15, english
    for page in english:
        chinese = page.with_name(page.stem + ".zh.md")
        assert chinese.is_file(), f"{page.relative_to(REPO)} has no {chinese.name}"
        assert len(_sections(chinese)) == len(_sections(page)), (
            f"{page.name}: {len(_sections(page))} sections, {chinese.name}: {len(_sections(chinese))}")
    orphans = [p.name for p in GUIDE.glob("*.zh.md") if not p.with_name(p.name[:-len(".zh.md")] + ".md").is_file()]
    assert not orphans, f"Chinese pages without an English one: {orphans}"


def _nav_pages(nav):
    for item in nav:
        for value in (item.values() if isinstance(item, dict) else [item]):
            if isinstance(value, list):
                yield from _nav_pages(value)
            else:
                yield value


def test_every_page_is_in_the_navigation_and_every_navigation_entry_exists():
    from ruamel.yaml import YAML

    config = YAML(typ="safe").load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = set(_nav_pages(config["nav"]))
    pages = {p.relative_to(DOCS).as_posix() for p in _english_pages()}
    assert pages - listed == set(), f"pages missing from mkdocs.yml's nav: {sorted(pages - listed)}"
    assert listed - pages == set(), f"nav entries without a page: {sorted(listed - pages)}"
    assert {"guide/troubleshooting.md", "guide/verification.md", "guide/reach.md", "guide/clusters.md"} <= listed


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_link_of_the_user_docs_leads_to_a_file_of_the_repository():
    bad = []
    for page in _user_pages() + [REPO / "CONTRIBUTING.md"]:
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target) or target.startswith("#"):
                    continue
                path = (page.parent / target.split("#", 1)[0]).resolve()
                if not path.exists() or REPO.resolve() not in path.parents:
                    bad.append(f"{page.relative_to(REPO)}:{n}: {target}")
    assert not bad, "links that lead nowhere in this repository:\n" + "\n".join(bad)


def test_no_user_page_names_an_issue_of_this_project():
    rx = re.compile(r"\bissues? #?\d+|\bissue #\d+", re.I)
    hits = [f"{p.relative_to(REPO)}:{n}: {line.strip()}" for p in _user_pages()
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if rx.search(line)]
    assert not hits, "\n".join(hits)


def test_no_user_page_shows_a_key_of_the_sources_table():
    """"[S43]" or "S119;S131" means nothing to a reader (the tool prints no such key either): a page names the
    source itself."""
    rx = re.compile(r"\[S\d+[;\]]|\bS\d+;S\d+")
    hits = [f"{p.relative_to(REPO)}:{n}: {line.strip()}" for p in _user_pages()
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if rx.search(line)]
    assert not hits, "\n".join(hits)


def test_the_readmes_stay_a_front_door():
    for name in ("README.md", "README.zh-CN.md"):
        text = (REPO / name).read_text(encoding="utf-8")
        assert len(text.splitlines()) <= 300, name
        first_screen = "\n".join(text.splitlines()[:60])
        assert "cudaswitch use" in first_screen and "bash .ci/run" in first_screen, name


def test_ci_runs_the_readme_test_command_and_builds_the_guide_strictly():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "bash .ci/run" in (REPO / "README.md").read_text(encoding="utf-8")
    assert "python3 -m pytest -q" in ci and "mkdocs build --strict" in ci


def test_the_command_reference_shows_every_command_in_both_languages():
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import mkdocs_cli_reference as ref
    finally:
        sys.path.remove(str(REPO / "tools"))
    import click

    from cudaswitch.cli import main

    names = main.list_commands(click.Context(main, info_name="cudaswitch"))
    english, chinese = ref.reference("en"), ref.reference("zh_CN")
    for name in names:
        assert f"### `cudaswitch {name}`" in english and f"### `cudaswitch {name}`" in chinese, name
    assert "Usage: cudaswitch use" in english and "用法：cudaswitch use" in chinese
    assert '<a id="use--name"></a>[`-n, --name NAME`](#use--name)' in english  # an anchor per option
    for language, page in ref.PAGES.items():
        # the reference is in the page itself (GitHub shows it), exactly as the commands give it now
        text = page.read_text(encoding="utf-8")
        assert text == ref.page_text(language, text), f"{page.name}: run python tools/mkdocs_cli_reference.py"


CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"  # Han and CJK/full-width punctuation


def _prose_lines(page: Path):
    """(number, line) of a page's lines outside code fences."""
    fence = False
    for i, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if not fence:
            yield i, line


@pytest.mark.parametrize("page", [REPO / "README.zh-CN.md", *sorted(DOCS.rglob("*.zh.md"))], ids=lambda p: p.name)
def test_no_line_break_between_two_chinese_characters(page):
    """A browser (and GitHub) shows a line break inside a paragraph as a space: between two Chinese characters it
    is a stray space ("还会读 注册表"). Such lines are joined."""
    lines = list(_prose_lines(page))
    bad = [n for (n, a), (m, b) in zip(lines, lines[1:])
           if m == n + 1 and re.search(f"[{CJK}]$", a) and re.match(f"\\s*[{CJK}]", b)]
    assert not bad, f"{page.name}: lines {bad} end in a Chinese character and the next starts with one: join them"


@pytest.mark.parametrize("page", _user_pages(), ids=lambda p: p.name)
def test_code_and_text_inside_numbered_steps_are_indented_four_spaces(page):
    """Python-Markdown (MkDocs) keeps a fence or a paragraph inside a numbered step only when it is indented 4
    spaces; at 3 the list ends there and the steps render as "1. 1. 1.", as GitHub would not show."""
    in_step = False
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if re.match(r"\d+\. ", line):
            in_step = True
        elif line and not line.startswith(" "):
            in_step = False
        elif in_step and line.strip():
            indent = len(line) - len(line.lstrip(" "))
            assert indent >= 4, f"{page.name}:{n}: indented {indent} spaces inside a numbered step: {line.strip()!r}"
