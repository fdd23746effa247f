"""The lines of conda-forge's CUDA activation scripts the coexistence tests need, as data, and environments laid out
as conda-forge's packages install them.

Sources (BSD-3-Clause recipes; the lines are quoted, the branches a user's shell does not take are left out):
- CUDA_NVCC_ACTIVATE: conda-forge/cuda-nvcc-feedstock recipe/activate.sh at commit df417b35, installed by
  recipe/build.sh as etc/conda/activate.d/~cuda-nvcc_activate.sh (the `~` makes it run after every other compiler
  activation); the `@cross_target_platform@` test is resolved for linux-64, and the CONDA_BUILD branch is left out.
- NVCC_WRAPPER_ACTIVATE / NVCC_WRAPPER_DEACTIVATE / NVCC_WRAPPER_BIN: conda-forge/nvcc-feedstock
  recipe/linux/activate.sh, deactivate.sh and nvcc.sh at commit 7742c2a1/65f2fb0f, installed by
  recipe/linux/install_nvcc.sh as etc/conda/{de,}activate.d/nvcc_linux-64_{de,}activate.sh and bin/nvcc, with
  __PKG_VERSION__ replaced by the package's version; the conda-build sysroot branch is left out.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

CUDA_NVCC_ACTIVATE = r'''#!/bin/bash

ERROR=false

targetsDir="targets/x86_64-linux"

CUDA_CFLAGS=""
CUDA_LDFLAGS=""
CUDA_CFLAGS="${CUDA_CFLAGS} -I${CONDA_PREFIX}/${targetsDir}/include"
CUDA_LDFLAGS="${CUDA_LDFLAGS} -L${CONDA_PREFIX}/${targetsDir}/lib"
CUDA_LDFLAGS="${CUDA_LDFLAGS} -L${CONDA_PREFIX}/${targetsDir}/lib/stubs"
export CFLAGS="${CFLAGS} ${CUDA_CFLAGS}"
export CPPFLAGS="${CPPFLAGS} ${CUDA_CFLAGS}"
export CXXFLAGS="${CXXFLAGS} ${CUDA_CFLAGS}"
export LDFLAGS="${LDFLAGS} ${CUDA_LDFLAGS}"

if [ -z "${CXX+x}" ]; then
    echo 'cuda-nvcc: Please add the `compiler("c")` and `compiler("cxx")` packages to the environment.'
    ERROR=true
else
    if [[ ! -z "${NVCC_PREPEND_FLAGS+x}" ]]
    then
        export NVCC_PREPEND_FLAGS_BACKUP="${NVCC_PREPEND_FLAGS}"
    fi
    NVCC_PREPEND_FLAGS="${NVCC_PREPEND_FLAGS} -ccbin=${CXX}"
    export NVCC_PREPEND_FLAGS
fi

# Exit with unclean status if there was an error
! $ERROR
'''

NVCC_WRAPPER_ACTIVATE = r'''#!/bin/bash

# Set `CUDA_HOME` in an activation script.

# Backup environment variables (only if the variables are set)
if [[ ! -z "${CUDA_HOME+x}" ]]
then
  export CUDA_HOME_CONDA_NVCC_BACKUP="${CUDA_HOME:-}"
fi

if [[ ! -z "${CUDA_PATH+x}" ]]
then
  export CUDA_PATH_CONDA_NVCC_BACKUP="${CUDA_PATH:-}"
fi

if [[ ! -z "${CMAKE_ARGS+x}" ]]
then
  export CMAKE_ARGS_CONDA_NVCC_BACKUP="${CMAKE_ARGS:-}"
fi

# Default to using $(cuda-gdb) to specify $(CUDA_HOME).
if [[ -z "${CUDA_HOME+x}" ]]
then
    CUDA_GDB_EXECUTABLE=$(which cuda-gdb || exit 0)
    if [[ -n "$CUDA_GDB_EXECUTABLE" ]]
    then
        CUDA_HOME=$(dirname $(dirname $CUDA_GDB_EXECUTABLE))
    else
        echo "Cannot determine CUDA_HOME: cuda-gdb not in PATH"
        return 1
    fi
fi

if [[ ! -d "${CUDA_HOME}" ]]
then
    echo "Directory specified in CUDA_HOME(=${CUDA_HOME}) doesn't exist"
    return 1
fi

if [[ -z "$(${CUDA_HOME}/bin/nvcc --version | grep "Cuda compilation tools, release __PKG_VERSION__")" ]]
then
  if [[ "${CONDA_BUILD}" = "1" ]]
  then
    echo "Error: Version of installed CUDA didn't match package"
    return 1
  else
    echo "Warning: Version of installed CUDA didn't match package"
  fi
fi

export CUDA_HOME="${CUDA_HOME}"

# CMake looks up components in CUDA_PATH, not CUDA_HOME
export CUDA_PATH="${CUDA_HOME}"
# New-style CUDA integrations in CMake
CMAKE_ARGS="${CMAKE_ARGS:-} -DCUDAToolkit_ROOT=${CUDA_HOME}"
# Old-style CUDA integrations in CMake
CMAKE_ARGS+=" -DCUDA_TOOLKIT_ROOT_DIR=${CUDA_HOME}"
export CMAKE_ARGS="${CMAKE_ARGS}"
'''

NVCC_WRAPPER_DEACTIVATE = r'''#!/bin/bash

# Restore environment variables (if there is anything to restore)
if [[ ! -z "${CUDA_HOME_CONDA_NVCC_BACKUP+x}" ]]
then
  export CUDA_HOME="${CUDA_HOME_CONDA_NVCC_BACKUP}"
  unset CUDA_HOME_CONDA_NVCC_BACKUP
fi

if [[ ! -z "${CUDA_PATH_CONDA_NVCC_BACKUP+x}" ]]
then
  export CUDA_PATH="${CUDA_PATH_CONDA_NVCC_BACKUP}"
  unset CUDA_PATH_CONDA_NVCC_BACKUP
fi

if [[ ! -z "${CMAKE_ARGS_CONDA_NVCC_BACKUP+x}" ]]
then
  export CMAKE_ARGS="${CMAKE_ARGS_CONDA_NVCC_BACKUP}"
  unset CMAKE_ARGS_CONDA_NVCC_BACKUP
fi
'''

NVCC_WRAPPER_BIN = r'''#!/bin/bash

for arg in "${@}" ; do
  case ${arg} in -ccbin)
    # If -ccbin argument is already provided, don't add an additional one.
    exec "${CUDA_HOME}/bin/nvcc" "${@}"
  esac
done
exec "${CUDA_HOME}/bin/nvcc" -ccbin "${CXX}" "${@}"
'''


def record(prefix: Path, name: str, version: str, build: str, files=()) -> Path:
    """conda-meta/<name>-<version>-<build>.json in the format conda writes (the fields cudaswitch and conda read)."""
    path = Path(prefix) / "conda-meta" / f"{name}-{version}-{build}.json"
    path.write_text(json.dumps({
        "name": name, "version": version, "build": build, "build_number": 0,
        "channel": "https://conda.anaconda.org/conda-forge/linux-64", "subdir": "linux-64",
        "fn": f"{name}-{version}-{build}.conda", "files": list(files), "requested_spec": ""}, indent=2))
    return path


def _put(prefix: Path, rel: str, text: str, mode: int = 0o644) -> str:
    p = Path(prefix) / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    p.chmod(mode)
    return rel


def cuda_nvcc_13(prefix: Path) -> Path:
    """conda-forge's cuda-nvcc 13.0.88 as its recipe lays it out: the real nvcc 13.0 from NVIDIA's wheel in
    targets/x86_64-linux/bin with bin/nvcc linking to it, the real cuda_runtime.h under targets/x86_64-linux/include,
    the activation script, and the records of cuda-nvcc, cuda-nvcc_linux-64, cuda-cudart-dev and cuda-version."""
    import nvidia_wheels as nw

    prefix = Path(prefix)
    nvcc = nw.extracted("nvidia-cuda-nvcc==13.0.88") / "nvidia" / "cu13"
    runtime = nw.extracted("nvidia-cuda-runtime==13.0.96") / "nvidia" / "cu13"
    target = prefix / "targets" / "x86_64-linux"
    (target / "bin").mkdir(parents=True, exist_ok=True)
    shutil.copytree(nvcc / "bin", target / "bin", dirs_exist_ok=True)
    shutil.copytree(runtime / "include", target / "include", dirs_exist_ok=True)
    (prefix / "bin").mkdir(exist_ok=True)
    os.symlink(target / "bin" / "nvcc", prefix / "bin" / "nvcc")
    script = _put(prefix, "etc/conda/activate.d/~cuda-nvcc_activate.sh", CUDA_NVCC_ACTIVATE)
    record(prefix, "cuda-nvcc", "13.0.88", "0")
    record(prefix, "cuda-nvcc_linux-64", "13.0.88", "h4bc722e_0", [script])
    record(prefix, "cuda-nvcc-tools", "13.0.88", "he02047a_0", ["bin/nvcc", "targets/x86_64-linux/bin/nvcc"])
    record(prefix, "cuda-cudart-dev", "13.0.96", "h5888daf_0", ["targets/x86_64-linux/include/cuda_runtime.h"])
    record(prefix, "cuda-version", "13.0", "3")
    return prefix


def nvcc_wrapper_11_8(prefix: Path) -> Path:
    """conda-forge's nvcc_linux-64 11.8: the wrapper script bin/nvcc and its activation pair, with the record."""
    prefix = Path(prefix)
    files = [_put(prefix, "etc/conda/activate.d/nvcc_linux-64_activate.sh",
                  NVCC_WRAPPER_ACTIVATE.replace("__PKG_VERSION__", "11.8")),
             _put(prefix, "etc/conda/deactivate.d/nvcc_linux-64_deactivate.sh", NVCC_WRAPPER_DEACTIVATE),
             _put(prefix, "bin/nvcc", NVCC_WRAPPER_BIN, 0o755)]
    record(prefix, "nvcc_linux-64", "11.8", "h9852d18_24", files)
    return prefix
