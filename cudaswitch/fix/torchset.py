"""torch built for a CUDA the driver cannot run (DRIVER_TOO_OLD), a CPU-only torch on a machine with a GPU
(CPU_ONLY_BUILD) and, when the user names it, a torch whose CUDA major is not the switched toolkit's
(TORCH_TOOLKIT_MAJOR_MISMATCH): the complete set `cudaswitch recommend` names for this environment (torch,
torchvision and torchaudio published together, from the index of that build), in one call of the environment's own
pip. Which set and which index are `recommend`'s (data/knowledge.py's table), never chosen here. Every
distribution pip replaces is kept, file by file, in the journal, so undo needs no network."""

from __future__ import annotations

from typing import List, Optional

from cudaswitch.fix.plan import Change, Step

CODES = ("DRIVER_TOO_OLD", "CPU_ONLY_BUILD", "TORCH_TOOLKIT_MAJOR_MISMATCH")
# a torch whose major differs from the toolkit's runs; only extension builds refuse it: changed when asked for
ASKED = ("TORCH_TOOLKIT_MAJOR_MISMATCH",)


def requirements(rec) -> List[str]:
    """The set, pinned to the build's local version (`torch==2.5.1+cu124`): a bare `torch==2.5.1` is satisfied by
    the CPU build of the same release, which pip would keep."""
    return [f"{name}=={version}+{rec.tag}" for name, version in
            (("torch", rec.torch), ("torchvision", rec.torchvision), ("torchaudio", rec.torchaudio)) if version]


def plan(mine: List, env, system, findings) -> Optional[Step]:
    from cudaswitch.checks.recommend import run_recommend
    from cudaswitch.discovery.torchenv import torch_installs
    from cudaswitch.core.shellquote import for_user
    from cudaswitch.fix import pip

    installs = torch_installs(env.prefix)
    if installs["conda"] or len(installs["dist_infos"]) != 1:
        return None  # conda's torch is conda's to replace; two torches are TORCH_MIXED_INSTALL's to sort out first
    report = run_recommend(system, prefix=env.prefix)
    rec = report.recommendation
    # no driver that names a CUDA: a driver upgrade is the fix, not another build; the oldest releases' indexes
    # (--extra-index-url, -f pages) are not reinstalled mechanically
    if not report.driver.cuda_max or not rec.ok or rec.tag == "cpu" or "--index-url" not in (rec.command or ""):
        return None
    url = pip.index_url(rec.tag, system.environ)
    reqs = requirements(rec)
    from cudaswitch.core.errors import CudaswitchError

    try:
        coming = pip.would_install(env, reqs, url, system)
    except CudaswitchError:
        return None  # the index cannot be reached or lacks the set: the finding stays advice (recommend's line)
    if not coming:
        return None  # already the set recommend names
    packages, paths, now = pip.replaced(env.prefix, [name for name, _ in coming])
    changes = [Change("package", name, now.get(name) or "-", version) for name, version in coming]
    changes.append(Change("index", url))
    words = [env.python, "-m", "pip", "install", *reqs, "--index-url", url]
    return Step("torchset", [f.code for f in mine], [f.cause for f in mine], changes,
                for_user(words, system.environ, system.windows),
                {"requirements": reqs, "url": url, "packages": packages}, paths)


def apply(step: Step, env, system) -> None:
    from cudaswitch.fix import pip

    pip.run(env, ["install", "--index-url", step.data["url"], *step.data["requirements"]], system)
