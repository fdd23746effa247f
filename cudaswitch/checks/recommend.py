"""`cudaswitch recommend`: the inputs (driver, GPU, Python, OS; each from the command line when given, else from
this machine) and the torch release knowledge.recommend picks for them."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import List, Optional

from cudaswitch.checks import driver as drivers
from cudaswitch.data import knowledge
from cudaswitch.checks.driver import Driver
from cudaswitch.discovery.torchenv import torch_installs
from cudaswitch.core.i18n import M, N_
from cudaswitch.core.system import System


@dataclass
class RecommendReport:
    recommendation: knowledge.Recommendation
    driver: Driver
    python: str
    python_source: str  # "--python", "environment NAME", "this interpreter"
    os: str
    capability: Optional[str]
    torch: Optional[str]
    toolkit: Optional[str] = None  # CUDA X.Y of the toolkit to match
    toolkit_source: Optional[str] = None  # "--toolkit", "switched in environment NAME"

    @property
    def exit_code(self) -> int:
        return 0 if self.recommendation.ok else 1

    def to_json(self) -> dict:
        rec = self.recommendation
        return {"recommendation": rec.to_json(), "inputs": {
            "driver_cuda_max": self.driver.cuda_max, "driver_source": self.driver.source,
            "python": self.python, "python_source": self.python_source, "os": self.os,
            "capability": self.capability, "torch": self.torch, "toolkit": self.toolkit,
            "toolkit_source": self.toolkit_source}, "sources": knowledge.cite(rec.src)}


def run_recommend(system: System, name: Optional[str] = None, prefix: Optional[str] = None,
                  torch_version: Optional[str] = None, python_version: Optional[str] = None,
                  cuda_max: Optional[str] = None, capability: Optional[str] = None,
                  toolkit: Optional[str] = None) -> RecommendReport:
    """Python: --python, else the named or active environment's, else this interpreter's. Driver: --cuda, else
    asked (driver.query). Capability: --cc, else the driver's first GPU. Toolkit: --toolkit SELECTOR, else the one
    `use` switched the environment to (when a driver is there to run a CUDA build)."""
    from cudaswitch.core.errors import UsageError
    from cudaswitch.discovery.environment import read_state, resolve_env

    env = None
    if name or prefix or system.environ.get("CONDA_PREFIX"):
        env = resolve_env(system, name, prefix, command="recommend")
    py_source = "--python"
    if not python_version:
        if env is not None:
            python_version = torch_installs(env.prefix).get("python")
            if not python_version:
                from cudaswitch.core.shellquote import for_user

                raise UsageError(M("environment {name} ({prefix}) has no Python installed: install one "
                                   "('{command}'), or give --python X.Y", name=env.name, prefix=env.prefix,
                                   command=for_user(["conda", "install", "-p", env.prefix, "python"], system.environ,
                                                    system.windows)))
            py_source = M("environment {name}", name=env.name)
        else:
            python_version = "%d.%d" % sys.version_info[:2]
            py_source = N_("this interpreter")
    driver = drivers.given(cuda_max) if cuda_max else drivers.query(system)
    capability = capability or driver.capability
    tk_version, tk_source = None, None
    if toolkit:
        from cudaswitch.discovery.toolkits import discover, select

        tk_version, tk_source = select(discover(system), toolkit, system).version, "--toolkit"
    elif env is not None and driver.cuda_max:
        state = read_state(env)
        if state is not None:
            tk_version, tk_source = state.version, M("switched in environment {name}", name=env.name)
    rec = knowledge.recommend(driver.cuda_max, python_version, system.windows, capability, torch_version,
                              tk_version)
    return RecommendReport(rec, driver, python_version, py_source, system.os, capability, torch_version,
                           tk_version, tk_source)


def recommend_lines(report: RecommendReport) -> List[str]:
    """The text `cudaswitch recommend` prints."""
    from cudaswitch.core.i18n import _, tr

    rec = report.recommendation
    lines = [_("driver max CUDA: {cuda} [{source}]; GPU compute capability: {cap}; Python {python} ({python_source}); "
               "{os}").format(cuda=report.driver.cuda_max or _("none"), source=report.driver.source,
                              cap=report.capability or _("unknown"), python=report.python,
                              python_source=tr(report.python_source), os=report.os)]
    if report.toolkit:
        lines.append(_("toolkit to match: CUDA {version} [{source}]").format(version=report.toolkit,
                                                                             source=tr(report.toolkit_source)))
    if rec.ok:
        lines.append(_(", ").join([f"torch {rec.torch}"] + [
            f"{package} {version}" if version else
            _("{package}: none published for torch {torch} (left out of the pip line)").format(
                package=package, torch=rec.torch)
            for package, version in (("torchvision", rec.torchvision), ("torchaudio", rec.torchaudio))])
            + f" ({rec.tag})")
        for r in rec.reasons:
            lines.append(f"  {tr(r)}" if r.startswith("note:") else _("  because {reason}").format(reason=tr(r)))
        lines.append(rec.command)
        # the keys mean nothing to a reader; --json names each source (title, address)
        lines.append(_("table sources: --json lists them in full"))
    else:
        lines.append(_("no torch release fits:"))
        for r in rec.reasons:
            lines.append(f"  {tr(r)}")
    return lines
