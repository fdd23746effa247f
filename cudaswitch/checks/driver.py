"""The driver record: the highest CUDA version the NVIDIA driver runs, its version, its GPUs, and where that came
from. Built in this module only. probe.py reports the driver as a JSON object (it runs in the environment's own
Python and cannot import cudaswitch): that object is the wire format, and `Driver.from_probe` reads it.

Where the record comes from, first hit wins (docs/design/checks.md section 2): CONDA_OVERRIDE_CUDA (conda's
own override; empty means no driver), else cuDriverGetVersion in a probe subprocess with a timeout, else
`nvidia-smi`. `recommend --cuda X.Y` gives the value on the command line.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from cudaswitch.checks.runner import run_probe
from cudaswitch.core.i18n import M, N_
from cudaswitch.core.system import System

# probe.py's fixed error texts (it runs in the environment's Python and marks nothing): listed here so the printed
# line can be translated; the record keeps them in English
PROBE_ERRORS = (N_("no NVIDIA driver library (libcuda)"), N_("no NVIDIA driver library (nvcuda.dll)"))
NO_CUDA_VERSION = N_("nvidia-smi shows a driver but no CUDA version (old drivers print none)")


@dataclass
class Driver:
    source: Optional[str]  # "libcuda", "nvidia-smi", "CONDA_OVERRIDE_CUDA", "--cuda", or None: not asked
    cuda_max: Optional[str] = None  # "13.0"; None: no driver found
    driver_version: Optional[str] = None
    devices: List[Dict] = field(default_factory=list)  # {"index", "name", "capability"}
    error: Optional[str] = None
    library: Optional[str] = None  # the probe's libcuda / nvcuda.dll
    cuinit: Optional[int] = None
    load_errors: Optional[List[str]] = None
    # the JSON the record came as (the probe's driver object, kept key for key): scripts read `smoke --json`'s
    # "driver" exactly as the probe wrote it, including the keys a failed or partial probe leaves out
    wire: Optional[Dict] = field(default=None, repr=False, compare=False)

    @classmethod
    def from_probe(cls, wire: Dict) -> "Driver":
        return cls(wire.get("source"), wire.get("cuda_max"), wire.get("driver_version"),
                   list(wire.get("devices") or []), wire.get("error"), wire.get("library"), wire.get("cuinit"),
                   wire.get("load_errors"), wire=dict(wire))

    @property
    def capability(self) -> Optional[str]:
        """The first GPU's compute capability, when the driver was asked for its devices."""
        return self.devices[0].get("capability") if self.devices else None

    def to_json(self) -> dict:
        if self.wire is not None:
            return dict(self.wire)
        return {"source": self.source, "cuda_max": self.cuda_max, "driver_version": self.driver_version,
                "devices": self.devices, "error": self.error}


def given(cuda_max: str) -> Driver:
    """`recommend --cuda X.Y`: the user says what the driver runs."""
    return Driver("--cuda", cuda_max)


def from_override(environ: Dict[str, str]) -> Optional[Driver]:
    if "CONDA_OVERRIDE_CUDA" not in environ:
        return None
    value = environ["CONDA_OVERRIDE_CUDA"].strip()
    return Driver("CONDA_OVERRIDE_CUDA", value or None,
                  error=None if value else N_("CONDA_OVERRIDE_CUDA is empty (no driver)"))


def from_nvidia_smi(system: System, timeout: float) -> Optional[Driver]:
    from cudaswitch.core.errors import CudaswitchError
    from cudaswitch.core.trust import find_program

    # as root, an nvidia-smi in a folder on PATH that another user could write would run as root
    exe, skipped = find_program(system, "nvidia-smi")
    if not exe:
        return Driver("nvidia-smi", None, error=skipped) if skipped else None
    try:
        proc = system.run([exe], timeout=timeout)
    except (OSError, subprocess.SubprocessError, CudaswitchError):
        return None
    m = re.search(r"CUDA Version:\s*(\d+\.\d+)", proc.stdout or "")
    d = re.search(r"Driver Version:\s*([\d.]+)", proc.stdout or "")
    if not m and d:  # a driver is installed, one so old that nvidia-smi prints no CUDA version
        return Driver("nvidia-smi", None, d.group(1), error=NO_CUDA_VERSION)
    if not m:
        return None
    return Driver("nvidia-smi", m.group(1), d.group(1) if d else None)


def resolve(environ: Dict[str, str], wire: Optional[Dict], system: System, timeout: float = 20.0) -> Driver:
    """The record from what a probe reported (`wire`, None when it reported nothing): the override wins, and a
    probe that found no libcuda is asked of nvidia-smi before giving up."""
    drv = from_override(environ) or Driver.from_probe(wire or {})
    if drv.source == "libcuda" and not drv.cuda_max:
        smi = from_nvidia_smi(system, timeout)
        if smi is not None and smi.cuda_max is None and not smi.driver_version:
            # not run: the probe's record, with the reason why (a driver_version says it ran: a driver too old to
            # name a CUDA version)
            from dataclasses import replace

            smi = replace(drv, error=smi.error)
        drv = smi or drv
    return drv


def quick(system: System) -> Driver:
    """Without running anything: the override, or an unknown driver."""
    return from_override(system.environ) or Driver.from_probe({"source": None, "cuda_max": None})


# where conda's __cuda looks after the loader's own search (docs/design/checks.md section 2), WSL last
LIBCUDA_FOLDERS = ("/usr/lib64/nvidia", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                   "/usr/lib/wsl/lib")


def trusted_libraries(environ):
    """(the probe's environment, the libcuda files it may load) as root: LD_LIBRARY_PATH keeps only folders nobody
    else could have written (the loader would take libcuda, and every library it or Python needs, from the first
    folder that has one), and libcuda is named by absolute path in those folders and the system's, never by the
    bare name a planted folder could answer. An ordinary user's own settings are theirs: unchanged, no list."""
    import os

    from cudaswitch.core import trust

    if not trust.POSIX or trust.euid() != 0:
        return dict(environ), []
    environ, _dropped = trust.trusted_search_folders(environ, ("LD_LIBRARY_PATH",))
    kept = [d for d in environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    libraries = []
    for folder in kept + [d for d in LIBCUDA_FOLDERS if d not in kept]:
        for name in ("libcuda.so.1", "libcuda.so"):
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                final, why = trust.trusted_program(path)  # checked and loaded as one file: no second resolution
                if not why:
                    libraries.append(final)
                    break
    return environ, libraries


def query(system: System, timeout: float = 20.0) -> Driver:
    """For doctor and recommend: probe.py's --driver-only mode in a subprocess of cudaswitch's own Python
    (isolated), unless the override says it."""
    over = from_override(system.environ)
    if over:
        return over
    environ, libraries = trusted_libraries(system.environ)
    args = ["--driver-only"] + [a for lib in libraries for a in ("--libcuda", lib)]
    outcome = run_probe(sys.executable, environ, timeout, args, isolated=True)
    wire = (outcome.record or {}).get("driver")
    if not wire:
        wire = {"source": "libcuda", "cuda_max": None, "devices": [],
                "error": N_("driver query timed out") if outcome.timed_out
                else M("driver query failed (exit {code})", code=outcome.returncode)}
    return resolve({}, wire, system, timeout)
