"""Whether an archive fits a target: its OS and CPU architecture (never overridden), its CUDA major and the version
its name and header give (overridden by --force, which is then reported)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

from cudaswitch.cudnn.archive import Archive, ArchiveError
from cudaswitch.cudnn.target import Target


def compatibility_problems(archive: Archive, target: Target) -> List[str]:
    """Reasons not to install; --force overrides them, except the OS."""
    problems: List[str] = []
    if archive.full_version and ".".join(archive.full_version.split(".")[:3]) != archive.version:
        problems.append(f"the archive name says cuDNN {archive.full_version} but {archive.header} says "
                        f"{archive.version}")
    if target.cuda is None:
        return problems
    if archive.cuda_major is None:
        problems.append(f"cannot tell which CUDA this cuDNN was built for: {archive.notes[0] if archive.notes else ''}")
    elif archive.cuda_major != target.cuda.major:
        problems.append(f"this cuDNN is built for CUDA {archive.cuda_tag} and {target.label} is CUDA "
                        f"{target.cuda.major}.x (cuDNN builds are per CUDA major; get the _cuda{target.cuda.major} "
                        f"archive)")
    elif archive.cuda_major < 11 and archive.cuda_minor is not None and archive.cuda_minor != target.cuda.minor:
        problems.append(f"this cuDNN is built for CUDA {archive.cuda_tag} and {target.label} is CUDA "
                        f"{target.cuda.short}; before CUDA 11 cuDNN was built per minor release")
    return problems


def os_problem(archive: Archive, target: Target) -> Optional[str]:
    """The archive cannot work there at all (no --force): another OS or another CPU architecture."""
    return platform_problem(Path(archive.path).name, archive.os, archive.arch, target)


def platform_problem(name: str, os_: str, arch: Optional[str], target: Target) -> Optional[str]:
    if os_ != target.os:
        what = {"linux": "a Linux tarball", "windows": "a Windows zip"}[os_]
        return (f"{name} is {what}; {target.label} is a {target.os.capitalize()} install: "
                f"download the cudnn-{target.os}-x86_64-..._cudaNN-archive for {target.os.capitalize()}")
    have = target.arch()
    arch = {"aarch64": "sbsa"}.get(arch or "", arch)
    if arch and have and arch != have:
        return (f"{name} is built for {arch} and {target.label} is an {have} toolkit: download the "
                f"cudnn-{target.os}-{have}-... archive")
    return None


def early_check(archive_path: Path, target: Target, force: bool) -> None:
    """What the archive's name already says, checked before a byte is read or written: OS and CUDA major."""
    from cudaswitch.cudnn.archive import peek_name

    info = peek_name(archive_path)
    if not info:
        return
    problem = platform_problem(Path(archive_path).name, info["os"], info.get("arch"), target)
    if problem:
        raise ArchiveError(problem + "; nothing was changed")
    if target.cuda is not None and info["cuda_major"] != target.cuda.major and not force:
        tag = f"{info['cuda_major']}" + (f".{info['cuda_minor']}" if info["cuda_minor"] is not None else "")
        raise ArchiveError(f"refused: this cuDNN is built for CUDA {tag} and {target.label} is CUDA "
                           f"{target.cuda.major}.x (cuDNN builds are per CUDA major; get the _cuda{target.cuda.major} "
                           f"archive); --force installs it anyway; nothing was changed")


def refuse_incompatible(archive, target: Target, force: bool) -> List[str]:
    """A Linux archive for a Windows toolkit is always refused; a CUDA-major or version mismatch unless --force,
    which returns the problems so the caller can say it overrode them."""
    problem = os_problem(archive, target)
    if problem:
        raise ArchiveError(problem)
    problems = compatibility_problems(archive, target)
    if problems and not force:
        raise ArchiveError("refused: " + "; ".join(problems) + "; --force installs it anyway")
    return problems
