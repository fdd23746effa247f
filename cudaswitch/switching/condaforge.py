"""conda-forge's CUDA packages in an environment, read from its `conda-meta/*.json` records, and what they mean for
a switch.

conda-forge ships CUDA as packages: `cuda-nvcc` (12.x/13.x: nvcc in `$PREFIX/bin`, headers and libraries in
`$PREFIX/targets/<arch>/`, and `etc/conda/activate.d/~cuda-nvcc_activate.sh`, which adds
`-I$CONDA_PREFIX/targets/<arch>/include` to CFLAGS/CPPFLAGS/CXXFLAGS and `-ccbin=$CXX` to NVCC_PREPEND_FLAGS,
conda-forge/cuda-nvcc-feedstock recipe/activate.sh), `cuda-cudart-dev`, `cuda-toolkit`, and the older wrapper
`nvcc_linux-64` (11.x and before: `$PREFIX/bin/nvcc` is a script running `$CUDA_HOME/bin/nvcc -ccbin $CXX`, and its
`nvcc_linux-64_activate.sh` takes CUDA_HOME as it finds it, warns "Version of installed CUDA didn't match package"
and sets CUDA_PATH and CMAKE_ARGS=-DCUDAToolkit_ROOT from it, conda-forge/nvcc-feedstock recipe/linux/activate.sh).

conda runs activate.d scripts in code-point order (`cudaswitch.sh` before `nvcc_linux-64_activate.sh` before
`~cuda-nvcc_activate.sh`) after putting `$PREFIX/bin` first on PATH; cudaswitch's hook then puts the toolkit's bin
in front of it. So a toolkit with its own nvcc shadows conda-forge's while conda-forge's flags still name its own
headers: `use` refuses that without --force, and `doctor` says which one each consumer takes (docs/guide/reach.md).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

from cudaswitch.core.i18n import Listed, M, N_

COMPILER, WRAPPER, HEADERS, RUNTIME, VERSION = "compiler", "wrapper", "headers", "runtime", "version"
# a record file is `<name>-<version>-<build>.json`; only these names are opened
_INTEREST = re.compile(r"(cuda-|nvcc_|cudatoolkit)")
_PROVIDES = {
    COMPILER: N_("the nvcc compiler"),
    WRAPPER: N_("an nvcc wrapper that runs $CUDA_HOME/bin/nvcc"),
    HEADERS: N_("CUDA headers and libraries to build against"),
    RUNTIME: N_("CUDA runtime libraries"),
    VERSION: N_("the CUDA version the environment's packages are pinned to"),
}


def kind(name: str) -> Optional[str]:
    if name in ("cuda-nvcc", "cuda-nvcc-impl", "cuda-nvcc-tools", "cuda-compiler", "cuda-toolkit") \
            or name.startswith("cuda-nvcc_"):
        return COMPILER
    if name.startswith("nvcc_"):
        return WRAPPER
    if name.startswith(("cuda-cudart-dev", "cuda-libraries-dev", "cuda-driver-dev")):
        return HEADERS
    if name in ("cuda-cudart", "cuda-runtime", "cuda-libraries", "cudatoolkit") or name.startswith("cuda-cudart_"):
        return RUNTIME
    if name == "cuda-version":
        return VERSION
    return None


@dataclass
class Package:
    name: str
    version: str
    kind: str
    scripts: List[str] = field(default_factory=list)  # its etc/conda/activate.d files (relative to the prefix)

    def to_json(self) -> dict:
        return {"name": self.name, "version": self.version, "kind": self.kind, "scripts": self.scripts}


@dataclass
class CondaCuda:
    prefix: str
    packages: List[Package]
    nvcc: Optional[str] = None  # the environment's own nvcc ($PREFIX/bin/nvcc, Library\bin\nvcc.exe), if present

    def of(self, *kinds: str) -> List[Package]:
        return [p for p in self.packages if p.kind in kinds]

    @property
    def compiler(self) -> Optional[Package]:
        """The package that puts an nvcc of conda-forge's into the environment (the metapackage's name first)."""
        found = self.of(COMPILER, WRAPPER)
        return next((p for p in found if p.name in ("cuda-nvcc", "cuda-toolkit")), found[0] if found else None)

    @property
    def cuda(self) -> Optional[str]:
        """The CUDA major.minor conda-forge's packages are for."""
        for p in self.of(VERSION) + self.of(COMPILER, WRAPPER, HEADERS, RUNTIME):
            m = re.match(r"(\d+)\.(\d+)", p.version)
            if m:
                return f"{m.group(1)}.{m.group(2)}"
        return None

    @property
    def flag_scripts(self) -> List[str]:
        return [s for p in self.packages for s in p.scripts]

    def to_json(self) -> dict:
        return {"packages": [p.to_json() for p in self.packages], "nvcc": self.nvcc, "cuda": self.cuda}


def read(prefix: str, windows: bool = False) -> CondaCuda:
    """The CUDA packages conda's records say are installed. A record that cannot be read or parsed is skipped: the
    environment is conda's, and a broken record is conda's to report."""
    from cudaswitch.core import readin, trust

    packages: List[Package] = []
    for fname in readin.names(Path(prefix), ["conda-meta"]):
        if not (fname.endswith(".json") and _INTEREST.match(fname)) or kind(fname[:-5].rsplit("-", 2)[0]) is None:
            continue
        raw = readin.read(Path(prefix), ["conda-meta"], fname, 4 << 20)
        try:
            rec = trust.parse_json(raw, f"{prefix}/conda-meta/{fname}") if raw else None
        except (UnicodeDecodeError, ValueError):
            rec = None
        if not isinstance(rec, dict):
            continue
        name, version = rec.get("name"), rec.get("version", "")
        k = kind(name) if isinstance(name, str) else None
        if k is None or not isinstance(version, str):
            continue
        files = rec.get("files") if isinstance(rec.get("files"), list) else []
        scripts = [f for f in files if isinstance(f, str) and f.replace("\\", "/").startswith("etc/conda/activate.d/")]
        packages.append(Package(name, version, k, scripts))
    exe = os.path.join(prefix, "Library", "bin", "nvcc.exe") if windows else os.path.join(prefix, "bin", "nvcc")
    return CondaCuda(prefix, packages, exe if packages and os.path.exists(exe) else None)


def _same_minor(a: Optional[str], b: Optional[str]) -> bool:
    return bool(a and b) and a.split(".")[:2] == b.split(".")[:2]


def provides_lines(cc: CondaCuda) -> List[str]:
    """One line per package, for `use`: what it provides."""
    out = []
    for p in cc.packages:
        scripts = Listed(os.path.basename(s) for s in p.scripts)
        out.append(M("{name} {version}: {what}{scripts}", name=p.name, version=p.version, what=M(_PROVIDES[p.kind]),
                     scripts=M(" (activation: {files})", files=scripts) if scripts else ""))
    return out


def conflict(cc: CondaCuda, tk) -> Optional[str]:
    """Why switching to `tk` would silently mix two CUDA toolkits in the environment, or None."""
    pkg = cc.compiler
    if pkg is None or not getattr(tk, "nvcc", None):
        return None
    if pkg.kind == WRAPPER and _same_minor(pkg.version, tk.version):
        return None  # the wrapper is built to run the CUDA_HOME it finds, and this one is its version
    where = cc.nvcc or os.path.join(cc.prefix, "bin", "nvcc")
    if pkg.kind == WRAPPER:
        return M("this environment has conda-forge's {name} {version}, a wrapper that runs $CUDA_HOME/bin/nvcc and "
                 "expects CUDA {version}: with CUDA {cuda} its activation warns \"Version of installed CUDA didn't "
                 "match package\" and nvcc on PATH becomes {nvcc}, without the wrapper's -ccbin $CXX", name=pkg.name,
                 version=pkg.version, cuda=tk.version, nvcc=tk.nvcc)
    return M("this environment has conda-forge's CUDA {cf} compiler ({name} {version}, nvcc at {where}); CUDA {cuda}'s "
             "nvcc ({nvcc}) would come first on PATH while conda-forge's activation keeps its own headers ({include}) "
             "in CFLAGS/CXXFLAGS: two CUDA versions in one build", cf=cc.cuda or pkg.version, name=pkg.name,
             version=pkg.version, where=where, cuda=tk.version, nvcc=tk.nvcc, include=targets_include(cc.prefix))


def refusal(cc: CondaCuda, tk) -> Optional[str]:
    why = conflict(cc, tk)
    if why is None:
        return None
    names = " ".join(p.name for p in cc.of(COMPILER, WRAPPER))
    return M("{why}; remove them ('conda remove -p {prefix} {names}') to use CUDA {cuda} from cudaswitch, or run 'cudaswitch "
             "off' to use conda-forge's, or add --force to switch anyway; nothing was changed", why=why,
             prefix=cc.prefix, names=names, cuda=tk.version)


@dataclass
class Consumer:
    who: str  # what reads the CUDA location
    takes: str  # which toolkit it takes, in words
    where: str  # the path


def consumers(cc: CondaCuda, root: str, nvcc: Optional[str]) -> List[Consumer]:
    """Which toolkit each consumer takes in the activated environment, with cudaswitch's switch to `root` (nvcc: its
    nvcc, or None when the toolkit has none) beside conda-forge's packages: activation order as in the module
    docstring."""
    ours, theirs = M("cudaswitch's toolkit"), M("conda-forge's packages")
    own_nvcc = cc.nvcc or os.path.join(cc.prefix, "bin", "nvcc")
    out = [Consumer(N_("nvcc on PATH"), ours if nvcc else theirs, nvcc or own_nvcc),
           # cudaswitch's hook sets it; nvcc_linux-64's activation keeps the CUDA_HOME it finds, cuda-nvcc's sets none
           Consumer(N_("CUDA_HOME (torch's cpp_extension: CUDA_HOME/bin/nvcc, CUDA_HOME/include)"), ours, root)]
    wrapper = cc.of(WRAPPER)
    out.append(Consumer(N_("CMake's CUDAToolkit_ROOT"), ours,
                        M("{root} (-DCUDAToolkit_ROOT in CMAKE_ARGS, from {name}'s activation)", root=root,
                          name=wrapper[0].name) if wrapper else
                        M("{root} (found from nvcc on PATH; nothing sets CUDAToolkit_ROOT)", root=root) if nvcc else
                        own_nvcc))
    if cc.of(COMPILER):
        out.append(Consumer(N_("host compiler flags (CFLAGS, CPPFLAGS, CXXFLAGS)"), theirs, targets_include(cc.prefix)))
    return out


def targets_include(prefix: str) -> str:
    """The include folder conda-forge's activation puts into the flags: $PREFIX/targets/<arch>/include."""
    found = sorted(Path(prefix, "targets").glob("*/include"))
    return str(found[0]) if found else os.path.join(prefix, "targets", "<arch>", "include")
