"""One severity for each finding, whichever command reports it: `use`, `smoke`, `doctor`, `conda doctor` and the
note after `conda install/update/remove` all take it from `SEVERITIES`, so the same fact never is an error in one
and a warning in another (docs/design/checks.md section 6).

A result fails when one of its findings is an error: exit 1 for `use`, `smoke` (FAIL) and `doctor` ("problems
found"), the cross mark of `conda doctor`. A warning is printed and the result still passes; information is a fact.

Some facts have two forms whose weight differs, and the form is named, not the severity: `when="cpu_ok"` (the user
said a CPU-only result is fine), `when="same_major"` (a driver one minor behind a toolkit runs it under NVIDIA's
minor-version compatibility). This module imports nothing, so every checks module can use it.
"""

from __future__ import annotations

from typing import Dict, Optional

ERROR, WARNING, INFO = "error", "warning", "info"

# code -> severity, or (severity, {form: severity})
SEVERITIES: Dict[str, object] = {
    # the environment's own switch (checks/switched.py: every surface reports these from the same function)
    "TOOLKIT_MISSING": ERROR,  # its hooks name a toolkit that is gone: every activation warns, no CUDA is set
    "TORCH_TOOLKIT_MAJOR_MISMATCH": ERROR,  # torch.utils.cpp_extension refuses every extension build
    "LD_LIBRARY_PATH_OVER_WHEELS": WARNING,  # breaks torch when the toolkit's libraries are older than the wheels'
    "STATE_UNREADABLE": ERROR,
    "SWITCH_NOT_IN_EFFECT": ERROR,  # the shell the hooks really produced does not have the toolkit first
    "HOOKS_STALE": WARNING,
    "NOT_SWITCHED": INFO,
    "TOOLKIT": INFO,
    "HOOKS": INFO,
    # the shell
    "CUDA_PATH_MISSING": ERROR,
    "CUDA_PATH_NOT_TOOLKIT": WARNING,
    "PATH_FOLDER_UNSEARCHABLE": INFO,  # skipped, and the rest of PATH is checked
    "CUDA_VARS_DISAGREE": WARNING,
    "MULTIPLE_CUDA_ON_PATH": WARNING,
    "MULTIPLE_CUDA_ON_LD_LIBRARY_PATH": WARNING,
    "LDCONF_PINS_CUDA": WARNING,
    "FOREIGN_CUDA_HOOKS": WARNING,
    "CUDA_MODULE_LOADED": WARNING,
    "PROGRAM_NOT_RUN": WARNING,  # as root, a program another user could have put on PATH is skipped, and said  # a module's toolkit beside the switch: the later of the two wins (checks/modules.py)
    # how far the switch reaches (checks/reach.py)
    "PYTHON_HOOK": INFO,
    "PYTHON_HOOK_STALE": WARNING,
    "JUPYTER_KERNELS": INFO,
    "KERNEL_WITHOUT_SWITCH": WARNING,
    "KERNELSPEC_SETS_CUDA": WARNING,
    "CONDA_FORGE_CUDA": INFO,
    "CONDA_FORGE_CUDA_MIX": WARNING,
    "CUDA_SET_AFTER_SWITCH": WARNING,
    # the machine
    "NO_DRIVER": INFO,
    "DRIVER_BELOW_TOOLKIT": (ERROR, {"same_major": WARNING}),
    "DRIVER_TOO_OLD": ERROR,
    "DRIVER_MINOR_COMPAT": INFO,
    "TORCH_DRIVER": INFO,
    "WSL2": INFO,
    "WSL2_LINUX_LIBCUDA": ERROR,
    "PREFIX_NON_ASCII": WARNING,
    "PREFIX_HAS_SPACES": WARNING,
    "VCRUNTIME_MISSING": ERROR,
    "VCRUNTIME_TOO_OLD": ERROR,  # the copy the loader takes first is older than torch needs: c10.dll fails (1114)
    "MSVC_NOT_ON_PATH": WARNING,  # no cl.exe: extension builds cannot start, torch itself runs
    "CUDNN_DLL_MISSING": ERROR,  # cuDNN ends the process when a DLL it loads at run time is missing
    "CUDNN_TOOLKIT_MISMATCH": WARNING,
    "CUDNN_BIN_WITHOUT_DLL": WARNING,
    "CUDNN_NOT_ON_PATH": WARNING,
    "TABLES_BEHIND": INFO,
    # torch, as installed and as it runs
    "TORCH_NOT_INSTALLED": INFO,
    "PYTHON_MISSING": INFO,
    "PYTHON_FOREIGN": INFO,
    "PYTHON_32BIT": ERROR,
    # torch imported and computed, so a Python the tables do not list for the release is a fact, not a failure
    "PYTHON_UNSUPPORTED": WARNING,
    "CPU_ONLY_BUILD": (ERROR, {"cpu_ok": WARNING}),
    "NO_GPU": (ERROR, {"cpu_ok": WARNING}),
    "CUDA_VISIBLE_DEVICES_HIDDEN": ERROR,
    "NO_KERNEL_IMAGE": ERROR,
    "DLL_INIT_FAILED": ERROR,
    "DLL_NOT_FOUND": ERROR,
    "NUMPY_ABI": ERROR,
    "OPENMP_DUPLICATE": ERROR,
    "LIB_SHADOWED": ERROR,
    "TORCH_MIXED_INSTALL": ERROR,
    "NO_AVX2": ERROR,
    "ILLEGAL_INSTRUCTION": ERROR,
    "PROBE_TIMEOUT": ERROR,
    "PROBE_CRASHED": ERROR,
    "IMPORT_FAILED": ERROR,
    "LIB_NOT_FOUND": ERROR,  # `import torch`: the loader finds no libcudnn.so.8 / libcudart.so.12 torch links to
    "CUDNN_FAILED": ERROR,
    "COMPUTE_FAILED": ERROR,
    # extension builds
    "BUILD_TOOLKIT_MAJOR": ERROR,  # the same fact as TORCH_TOOLKIT_MAJOR_MISMATCH, for the shell's build toolkit
    "BUILD_TOOLKIT_MINOR": WARNING,
    "HOST_COMPILER_TOO_NEW": ERROR,
    "HOST_COMPILER_TOO_OLD": ERROR,
    "ARCH_LIST_UNSUPPORTED": ERROR,
    "ARCH_LIST_MISSES_GPU": ERROR,
    "NINJA_MISSING": INFO,
}


def severity(code: str, when: Optional[str] = None, default: Optional[str] = None) -> str:
    """The severity of `code` in its form `when`. `default` serves a code not in the table yet (a new check from
    another change; tests/checks/test_severities.py fails until the table has it)."""
    row = SEVERITIES.get(code)
    if row is None:
        if default is None:
            raise KeyError(code)
        return default
    if isinstance(row, tuple):
        base, forms = row
        return forms.get(when, base) if when else base
    return row


def fails(sev: str) -> bool:
    """Whether a finding of this severity fails the result it is in."""
    return sev == ERROR
