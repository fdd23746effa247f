"""The chain a user's mental model is made of: driver -> CUDA toolkit -> cuDNN -> PyTorch -> Python.

`doctor` starts with it and `smoke` ends with it: one record per link (its version, where that came from, a status),
built from the reports those commands already make, with each finding attached to the link it is about. The CLI
draws it (cudaswitch/cli/chainview.py); `--json` keeps its schema and carries none of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from cudaswitch.checks.diagnosis import ERROR, WARNING, Finding, message
from cudaswitch.core.i18n import M, N_

OK, BROKEN, DOUBT, ABSENT = "ok", "broken", "warning", "absent"

DRIVER, TOOLKIT, CUDNN, TORCH, PYTHON = "driver", "toolkit", "cudnn", "torch", "python"
LINKS = (DRIVER, TOOLKIT, CUDNN, TORCH, PYTHON)
NAMES = {DRIVER: N_("driver"), TOOLKIT: N_("CUDA toolkit"), CUDNN: "cuDNN", TORCH: "PyTorch", PYTHON: "Python"}

# The link each finding is about: the one a user has to fix (LIB_SHADOWED: the toolkit's lib64 in front of torch's
# own libraries, so the toolkit's link; VCRUNTIME_MISSING: torch's DLLs need it). A code not listed here is placed
# by the word it carries (a code another check adds later still lands somewhere sensible), else on no link.
_LINK_OF = {
    DRIVER: ("NO_DRIVER", "NO_GPU", "DRIVER_TOO_OLD", "DRIVER_BELOW_TOOLKIT", "DRIVER_MINOR_COMPAT", "TORCH_DRIVER",
             "WSL2", "WSL2_LINUX_LIBCUDA", "CUDA_VISIBLE_DEVICES_HIDDEN"),
    TOOLKIT: ("MULTIPLE_CUDA_ON_PATH", "MULTIPLE_CUDA_ON_LD_LIBRARY_PATH", "CUDA_VARS_DISAGREE", "CUDA_PATH_MISSING",
              "CUDA_PATH_NOT_TOOLKIT", "PATH_FOLDER_UNSEARCHABLE", "LDCONF_PINS_CUDA", "TOOLKIT_MISSING", "FOREIGN_CUDA_HOOKS", "HOOKS_STALE",
              "BUILD_TOOLKIT_MAJOR", "BUILD_TOOLKIT_MINOR", "TORCH_TOOLKIT_MAJOR_MISMATCH", "TORCH_CUDA_MAJOR",
              "HOST_COMPILER_TOO_NEW", "HOST_COMPILER_TOO_OLD", "ARCH_LIST_UNSUPPORTED", "ARCH_LIST_MISSES_GPU",
              "NINJA_MISSING", "LIB_SHADOWED", "NOT_SWITCHED", "CUDA_MODULE_LOADED"),
    CUDNN: ("CUDNN_TOOLKIT_MISMATCH", "CUDNN_BIN_WITHOUT_DLL", "CUDNN_NOT_ON_PATH", "CUDNN_FAILED"),
    TORCH: ("TORCH_NOT_INSTALLED", "CPU_ONLY_BUILD", "TORCH_MIXED_INSTALL", "NO_KERNEL_IMAGE", "DLL_INIT_FAILED",
            "DLL_NOT_FOUND", "IMPORT_FAILED", "COMPUTE_FAILED", "NUMPY_ABI", "OPENMP_DUPLICATE", "NO_AVX2",
            "ILLEGAL_INSTRUCTION", "PROBE_TIMEOUT", "PROBE_CRASHED", "TABLES_BEHIND", "VCRUNTIME_MISSING"),
    PYTHON: ("PYTHON_MISSING", "PYTHON_32BIT", "PYTHON_UNSUPPORTED", "PYTHON_FOREIGN", "PREFIX_NON_ASCII",
             "PREFIX_HAS_SPACES"),
}
_BY_CODE = {code: link for link, codes in _LINK_OF.items() for code in codes}
_BY_WORD = (("CUDNN", CUDNN), ("DRIVER", DRIVER), ("TORCH", TORCH), ("PYTHON", PYTHON), ("TOOLKIT", TOOLKIT),
            ("CUDA", TOOLKIT), ("ZLIB", CUDNN), ("DLL", TORCH))


def link_of(code: str) -> Optional[str]:
    if code in _BY_CODE:
        return _BY_CODE[code]
    return next((link for word, link in _BY_WORD if word in code), None)


@dataclass
class Link:
    key: str  # one of LINKS
    version: Optional[str]  # None: not found
    origin: str  # where the version was read (a marked message or a path)
    findings: List[Finding] = field(default_factory=list)  # errors and warnings about this link

    @property
    def name(self) -> str:
        return NAMES[self.key]

    @property
    def status(self) -> str:
        if any(f.severity == ERROR for f in self.findings):
            return BROKEN
        if self.findings:
            return DOUBT
        return OK if self.version else ABSENT


@dataclass
class Chain:
    links: List[Link]

    @property
    def broken(self) -> Optional[Link]:
        """The first link that fails: where the chain breaks."""
        return next((link for link in self.links if link.status == BROKEN), None)


def _attach(links: Dict[str, Link], findings: List[Finding]) -> None:
    for f in findings:
        if f.severity not in (ERROR, WARNING):
            continue
        key = link_of(f.code)
        if key and all(f.code != g.code for g in links[key].findings):
            links[key].findings.append(f)


def _driver_link(driver) -> Link:
    if driver.driver_version or driver.cuda_max:
        version = M("{version}, max CUDA {cuda}", version=driver.driver_version, cuda=driver.cuda_max) \
            if driver.driver_version else M("max CUDA {cuda}", cuda=driver.cuda_max)
        return Link(DRIVER, version, driver.source or N_("not asked"))
    return Link(DRIVER, None, driver.error or driver.source or N_("not asked"))


def _toolkit_link(toolkit: Optional[Dict], why: str, none: str) -> Link:
    if not toolkit:
        return Link(TOOLKIT, None, none)
    return Link(TOOLKIT, toolkit.get("version"), M("{root} ({why})", root=toolkit.get("root"), why=message(why)))


def _cudnn_link(torch: Dict, toolkit: Optional[Dict]) -> Link:
    """The cuDNN torch loads (its own wheel's or conda's) when the files say so, else the toolkit's."""
    if torch.get("cudnn"):
        return Link(CUDNN, str(torch["cudnn"]), torch.get("cudnn_source") or "torch")
    if toolkit and toolkit.get("cudnn"):
        return Link(CUDNN, str(toolkit["cudnn"]), M("in {root}", root=toolkit.get("root")))
    return Link(CUDNN, None, "")


def _torch_version(version: Optional[str], cuda: Optional[str]) -> Optional[str]:
    if not version:
        return None
    return M("{version} (CUDA {cuda})", version=version, cuda=cuda) if cuda else M("{version} (CPU)", version=version)


def from_doctor(report) -> Chain:
    """doctor reads files only: torch as its dist-info, conda record or torch/version.py says."""
    t = report.torch or {}
    toolkit = report.selected_toolkit or report.active_toolkit
    why = N_("the environment's choice") if report.selected_toolkit else N_("this shell's toolkit")
    where = (t.get("version_py") or next((d.get("path") for d in t.get("dist_infos") or []), None)
             or next((c.get("file") for c in t.get("conda") or []), None))
    env = report.env or {}
    links = {
        DRIVER: _driver_link(report.driver),
        TOOLKIT: _toolkit_link(toolkit, why, N_("none selected or on PATH")),
        CUDNN: _cudnn_link(t, toolkit),
        TORCH: Link(TORCH, _torch_version(t.get("build_version") or t.get("version"), t.get("cuda")),
                    where or (N_("no environment given") if report.env is None else N_("not installed"))),
        PYTHON: Link(PYTHON, t.get("python"), env.get("prefix") or N_("no environment given")),
    }
    _attach(links, report.findings)
    return Chain([links[k] for k in LINKS])


def from_smoke(report) -> Chain:
    """smoke asked torch itself: the versions are what the environment's Python printed."""
    from cudaswitch.data import knowledge

    t, py = report.torch or {}, report.python or {}
    links = {
        DRIVER: _driver_link(report.driver),
        TOOLKIT: _toolkit_link(report.toolkit, N_("the environment's choice"), N_("the environment selects none")),
        CUDNN: (Link(CUDNN, knowledge.cudnn_number(t["cudnn"]), "torch.backends.cudnn") if t.get("cudnn")
                else _cudnn_link({}, report.toolkit)),
        TORCH: Link(TORCH, _torch_version(t.get("version"), t.get("cuda")),
                    "import torch" if t else N_("not imported")),
        PYTHON: Link(PYTHON, M("{version} ({bits}-bit)", version=py.get("version"), bits=py.get("bits"))
                     if py.get("version") else None, py.get("executable") or N_("not found")),
    }
    _attach(links, report.findings)
    return Chain([links[k] for k in LINKS])
