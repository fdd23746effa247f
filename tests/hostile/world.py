"""A machine with a hostile second account, for tests/hostile/: the real uid 65534 plants into every input source
cudaswitch declares (core/trust.py INPUT_SOURCES) programs, libraries, .pth files, modules, startup files and links
that leave a line in a root-only marker file if they ever run as root, and files at the readers' size limits; root's
environment names all of them (her folders first on PATH and LD_LIBRARY_PATH, HOME, BASH_ENV, ENV, ZDOTDIR,
XDG_CONFIG_HOME, CONDARC, PIP_CONFIG_FILE, JUPYTER_PATH, MODULEPATH, her environment active), as `sudo -E` leaves
them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List

from other_user import NOBODY, as_user

PY = f"python{sys.version_info.major}.{sys.version_info.minor}"


@dataclass
class World:
    base: Path  # root-owned, world-traversable
    her: Path  # uid 65534's home
    marks: Path  # the file a canary appends to when it runs as root
    root_env: Path  # a root-owned environment root switches
    environ: Dict[str, str] = field(default_factory=dict)
    sources: Dict[str, List[Path]] = field(default_factory=dict)  # registered source -> the paths planted for it

    def ran(self) -> List[str]:
        return self.marks.read_text().split() if self.marks.exists() else []

    def registered(self, path: str) -> bool:
        p = os.path.abspath(path)
        return any(p == str(r) or p.startswith(str(r).rstrip("/") + "/") for rs in self.sources.values() for r in rs)


def sh_canary(w: World, name: str) -> str:
    return f'#!/bin/sh\n[ "$(/usr/bin/id -u)" = 0 ] && echo {name} >> {w.marks}\nexit 0\n'


def py_canary(w: World, name: str) -> str:
    return f"import os\nif os.geteuid() == 0:\n    open({str(w.marks)!r}, 'a').write({name!r} + '\\n')\n"


def pth_canary(w: World, name: str) -> str:
    return f"import os; os.geteuid() == 0 and open({str(w.marks)!r}, 'a').write({name!r} + '\\n')\n"


C_CANARY = r"""
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void canary(void) {
    if (geteuid() == 0) { FILE *f = fopen("%s", "a"); if (f) { fputs("%s\n", f); fclose(f); } }
}
int cuInit(unsigned int flags) { return 0; }
int cuDriverGetVersion(int *v) { *v = 99000; return 0; }
int cudnnGetVersion(void) { return 99000; }
"""


def _program(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


# ---- one planter per registered source --------------------------------------------------------------------------
# Each plants as her (called inside as_user); _SOURCE_PATHS below says which paths each registers, and build() puts
# them in root's environment.

PROGRAMS = ["nvcc", "nvidia-smi", "bash", "sh", "dash", "zsh", "fish", "tcsh", "csh", "conda", "mamba", "pip",
            "python", "python3", PY, "ldconfig", "pwsh", "module", "modulecmd", "lmod", "git", "uname", "gcc"]


def plant_path(w: World):
    for name in PROGRAMS:
        _program(w.her / "bin" / name, sh_canary(w, f"path:{name}"))


def plant_ld_library_path(w: World):
    for lib in ("libcuda.so.1", "libcuda.so", "libnvidia-ml.so.1", "libcudnn.so.9", "libcudart.so.12"):
        (w.her / "lib").mkdir(exist_ok=True)
        shutil.copy(w.base / "canary.so", w.her / "lib" / lib)


def plant_pyvenv(w: World):
    """Links named like the programs cudaswitch starts, to the system's own Python, with a pyvenv.cfg above them:
    started through the link, Python reads her site-packages."""
    real = shutil.which(PY, path="/usr/bin:/bin") or os.path.realpath(sys.executable)
    for name in ("nvidia-smi", "dash", "bash", "zsh", "python3", "nvcc", "ldconfig"):
        (w.her / "pybin").mkdir(exist_ok=True)
        (w.her / "pybin" / name).symlink_to(real)
    (w.her / "pyvenv.cfg").write_text(f"home = {os.path.dirname(real)}\ninclude-system-site-packages = false\n")
    sp = w.her / "lib" / PY / "site-packages"
    sp.mkdir(parents=True)
    (sp / "zz-canary.pth").write_text(pth_canary(w, "pyvenv:pth"))


def _her_env(w: World) -> Path:
    return w.her / "envs" / "hers"


def plant_env_prefix(w: World):
    prefix = _her_env(w)
    for name in ("python", "python3", PY, "nvcc", "nvidia-smi", "pip", "conda"):
        _program(prefix / "bin" / name, sh_canary(w, f"env_prefix:{name}"))
    (prefix / "conda-meta").mkdir(parents=True, exist_ok=True)
    (prefix / "conda-meta" / "history").write_text("")


def plant_site_packages(w: World):
    sp = _her_env(w) / "lib" / PY / "site-packages"
    sp.mkdir(parents=True, exist_ok=True)
    (sp / "zz-canary.pth").write_text(pth_canary(w, "site_packages:pth"))
    for mod in ("sitecustomize", "usercustomize", "json", "ctypes", "subprocess"):
        (sp / f"{mod}.py").write_text(py_canary(w, f"site_packages:{mod}"))
    (sp / "torch").mkdir()
    (sp / "torch" / "__init__.py").write_text(py_canary(w, "site_packages:torch"))
    (sp / "torch" / "version.py").write_text("__version__ = '2.5.0+cu124'\ncuda = '12.4'\n" + "#" * (1 << 20))


def plant_activate_d(w: World):
    etc = _her_env(w) / "etc" / "conda"
    for d in ("activate.d", "deactivate.d"):
        for ext, text in (("sh", sh_canary(w, f"activate_d:{d}")),
                          ("fish", f"test (/usr/bin/id -u) = 0; and echo activate_d:{d}:fish >> {w.marks}\n"),
                          ("csh", f"if ( `/usr/bin/id -u` == 0 ) echo activate_d:{d}:csh >> {w.marks}\n")):
            _program(etc / d / f"zz-canary.{ext}", text)
    # at the readers' size limit, the texts that made them quadratic
    (etc / "activate.d" / "zz-newlines.sh").write_text("export CUDA_HOME=/x\n" + "\n" * (256 << 10))
    (etc / "activate.d" / "zz-flags.fish").write_text("set -" + "x" * (256 << 10))
    (etc / "env_vars.d").mkdir(parents=True)
    (etc / "env_vars.d" / "deep.json").write_text("[" * 100_000 + "]" * 100_000)


def plant_kernelspecs(w: World):
    k = w.her / "share" / "jupyter" / "kernels"
    (k / "hers").mkdir(parents=True)
    (k / "hers" / "kernel.json").write_text(
        '{"argv": ["%s", "-m", "ipykernel"], "env": {"CUDA_HOME": "%s"}}' % (w.her / "bin" / "python3", w.her))
    (k / "deep").mkdir()
    (k / "deep" / "kernel.json").write_text('{"argv": ' + "[" * 100_000 + "]" * 100_000 + "}")


def plant_conda_meta(w: World):
    meta = _her_env(w) / "conda-meta"
    meta.mkdir(parents=True, exist_ok=True)
    (meta / "cuda-nvcc-12.4.131-0.json").write_text('{"name": "cuda-nvcc", "version": "12.4.131", "x": '
                                                   + "[" * 100_000 + "]" * 100_000 + "}")
    (meta / "pytorch-2.5.0-py3.11_cuda12.4_0.json").write_text(
        '{"name": "pytorch", "version": "2.5.0", "build": "py3.11_cuda12.4_0", "files": []}')
    (meta / "state").write_text('{"env_vars": ' + "[" * 100_000 + "]" * 100_000 + "}")


def plant_version_files(w: World):
    tk = w.her / "cuda-12.4"
    (tk / "include").mkdir(parents=True)
    (tk / "version.json").write_text('{"cuda": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (tk / "version.txt").write_text("CUDA Version 12.4.131\n")
    (tk / "include" / "cuda.h").write_text("#define CUDA_VERSION 12040\n" + "/*" * (1 << 18))
    (tk / "include" / "cudnn_version.h").write_text("#define CUDNN_MAJOR 9\n")
    _program(tk / "bin" / "nvcc", sh_canary(w, "version_files:nvcc"))
    (tk / "lib64").mkdir()
    shutil.copy(w.base / "canary.so", tk / "lib64" / "libcudart.so.12")


def plant_condarc(w: World):
    (w.her / ".condarc").write_text(f"envs_dirs:\n  - {w.her / 'envs'}\npkgs_dirs:\n  - {w.her / 'pkgs'}\n")
    (w.her / ".conda").mkdir()
    (w.her / ".conda" / "environments.txt").write_text(f"{_her_env(w)}\n")


def plant_pip_config(w: World):
    # `log`: a pip that reads this as root writes where she points it
    (w.her / "pip.conf").write_text(f"[global]\nfind-links = {w.her / 'wheels'}\nno-index = true\n"
                                    f"log = {w.her / 'pip-as-root.log'}\n")
    (w.her / ".config" / "pip").mkdir(parents=True)
    (w.her / ".config" / "pip" / "pip.conf").write_text("[global]\nno-index = true\n")


def plant_bash_env(w: World):
    _program(w.her / "bashenv", sh_canary(w, "bash_env"))
    (w.her / ".bashrc").write_text(sh_canary(w, "bash_env:bashrc"))
    (w.her / ".bash_profile").write_text(sh_canary(w, "bash_env:bash_profile"))
    (w.her / ".profile").write_text(sh_canary(w, "bash_env:profile"))


def plant_env(w: World):
    _program(w.her / "envrc", sh_canary(w, "env"))


def plant_zdotdir(w: World):
    for f in (".zshenv", ".zshrc", ".zprofile", ".zlogin"):
        _program(w.her / "zdot" / f, sh_canary(w, f"zdotdir:{f}"))


def plant_zshenv(w: World):
    for f in (".zshenv", ".zshrc"):
        (w.her / f).write_text(sh_canary(w, f"zshenv:{f}"))


def plant_fish_conf_d(w: World):
    for base in (w.her / ".config", w.her / "share"):
        d = base / "fish" / "conf.d"
        d.mkdir(parents=True, exist_ok=True)
        (d / "zz.fish").write_text(f"test (/usr/bin/id -u) = 0; and echo fish_conf_d >> {w.marks}\n")
    (w.her / ".config" / "fish" / "config.fish").write_text(
        f"test (/usr/bin/id -u) = 0; and echo fish_config >> {w.marks}\n")


def plant_tcshrc(w: World):
    for f in (".tcshrc", ".cshrc", ".login"):
        (w.her / f).write_text(f"if ( `/usr/bin/id -u` == 0 ) echo tcshrc:{f} >> {w.marks}\n")


def plant_modulepath(w: World):
    mp = w.her / "modulefiles"
    (mp / "cuda").mkdir(parents=True)
    (mp / "cuda" / "12.4.lua").write_text(
        f'os.execute("sh {w.her / "bin" / "nvcc"}")\nprepend_path("PATH", "{w.her / "cuda-12.4" / "bin"}")\n'
        f'setenv("CUDA_HOME", "{w.her / "cuda-12.4"}")\n')
    (mp / "cuda" / "12.3").write_text(f"#%Module\nexec sh {w.her / 'bin' / 'nvcc'}\nsetenv CUDA_HOME {w.her}\n")


def plant_spider_cache(w: World):
    # where Lmod 8.6 keeps a user's cache, and where Lmod 8.7.12 and later do
    for cache in (w.her / ".lmod.d" / ".cache", w.her / ".cache" / "lmod"):
        cache.mkdir(parents=True)
        (cache / "spiderT.lua").write_text(
            'spiderT = {\n["%s"] = {\ncuda = {\nfileT = {\n["cuda/12.4"] = {\nfn = "%s",\n},\n},\n},\n},\n}\n'
            % (w.her / "modulefiles", w.her / "modulefiles" / "cuda" / "12.4.lua"))


PLANTERS: Dict[str, Callable[[World], List[Path]]] = {
    "path": plant_path, "ld_library_path": plant_ld_library_path, "pyvenv": plant_pyvenv,
    "env_prefix": plant_env_prefix, "site_packages": plant_site_packages, "activate_d": plant_activate_d,
    "kernelspecs": plant_kernelspecs, "conda_meta": plant_conda_meta, "version_files": plant_version_files,
    "condarc": plant_condarc, "pip_config": plant_pip_config, "bash_env": plant_bash_env, "env": plant_env,
    "zdotdir": plant_zdotdir, "zshenv": plant_zshenv, "fish_conf_d": plant_fish_conf_d, "tcshrc": plant_tcshrc,
    "modulepath": plant_modulepath, "spider_cache": plant_spider_cache,
}


def build(real_trees: Path) -> World:
    base = Path(tempfile.mkdtemp(prefix="cs-hostile-"))
    base.chmod(0o755)
    her = base / "her"
    her.mkdir()
    os.chown(her, NOBODY, NOBODY)
    root_env = base / "rootenv"
    (root_env / "conda-meta").mkdir(parents=True)
    (root_env / "conda-meta" / "history").write_text("")
    w = World(base, her, base / "marks", root_env)
    src = base / "canary.c"
    src.write_text(C_CANARY % (w.marks, "ld_library_path:lib"))
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(base / "canary.so"), str(src)], check=True)
    (base / "canary.so").chmod(0o755)

    def plant():
        for planter in PLANTERS.values():
            planter(w)
    as_user(plant)
    w.sources = {name: paths(w) for name, paths in _SOURCE_PATHS.items()}
    w.environ = {
        "PATH": f"{her / 'bin'}:{her / 'pybin'}:{_her_env(w) / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "LD_LIBRARY_PATH": f"{her / 'lib'}:{her / 'cuda-12.4' / 'lib64'}",
        "HOME": str(her), "USER": "root", "LOGNAME": "root", "SHELL": "/bin/bash", "LANG": "C.UTF-8",
        "BASH_ENV": str(her / "bashenv"), "ENV": str(her / "envrc"), "ZDOTDIR": str(her / "zdot"),
        "XDG_CONFIG_HOME": str(her / ".config"), "XDG_DATA_DIRS": str(her / "share"),
        "CONDARC": str(her / ".condarc"), "PIP_CONFIG_FILE": str(her / "pip.conf"),
        "JUPYTER_PATH": str(her / "share" / "jupyter"), "JUPYTER_DATA_DIR": str(her / "share" / "jupyter"),
        "MODULEPATH": str(her / "modulefiles"), "LMOD_VERSION": "8.7.37",
        "CONDA_PREFIX": str(_her_env(w)), "CONDA_DEFAULT_ENV": "hers", "CONDA_SHLVL": "1",
        "CUDA_HOME": str(her / "cuda-12.4"),
        "CUDASWITCH_SEARCH_PATH": f"{real_trees}/cuda-12.9:{real_trees}/cuda-11.8:{her / 'cuda-12.4'}",
        "CUDASWITCH_CONFIG": str(base / "no-config.yaml"), "CUDASWITCH_LANG": "en",
        "CUDASWITCH_TOOLKITS_DIR": str(base / "store"),
    }
    return w


_SOURCE_PATHS = {
    "path": lambda w: [w.her / "bin"],
    "ld_library_path": lambda w: [w.her / "lib"],
    "pyvenv": lambda w: [w.her / "pybin", w.her / "pyvenv.cfg", w.her / "lib" / PY],
    "env_prefix": lambda w: [_her_env(w)],
    "site_packages": lambda w: [_her_env(w) / "lib" / PY / "site-packages"],
    "activate_d": lambda w: [_her_env(w) / "etc" / "conda"],
    "kernelspecs": lambda w: [w.her / "share" / "jupyter"],
    "conda_meta": lambda w: [_her_env(w) / "conda-meta"],
    # and the wheel records beside a pip-installed toolkit's root, which discovery reads its version from
    "version_files": lambda w: [w.her / "cuda-12.4", w.her / "dist-info"],
    "condarc": lambda w: [w.her / ".condarc", w.her / ".conda", w.her / "envs"],
    "pip_config": lambda w: [w.her / "pip.conf", w.her / ".config" / "pip"],
    "bash_env": lambda w: [w.her / "bashenv", w.her / ".bashrc", w.her / ".bash_profile", w.her / ".profile"],
    "env": lambda w: [w.her / "envrc"],
    "zdotdir": lambda w: [w.her / "zdot"],
    "zshenv": lambda w: [w.her / ".zshenv", w.her / ".zshrc"],
    "fish_conf_d": lambda w: [w.her / ".config" / "fish", w.her / "share" / "fish"],
    "tcshrc": lambda w: [w.her / ".tcshrc", w.her / ".cshrc", w.her / ".login"],
    "modulepath": lambda w: [w.her / "modulefiles"],
    "spider_cache": lambda w: [w.her / ".lmod.d", w.her / ".cache" / "lmod"],  # Lmod 8.6 and >= 8.7.12
}

