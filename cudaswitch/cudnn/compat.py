"""Whether an archive fits a target: its OS and CPU architecture (never overridden), its CUDA major and the version
its name and header give (overridden by --force, which is then reported)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

from cudaswitch.core.i18n import M
from cudaswitch.cudnn.archive import Archive, ArchiveError
from cudaswitch.cudnn.target import Target


def joined(items: List[str], sep: str = "; ") -> str:
    """`items` joined into one message whose parts are each translated when printed (a template made of
    placeholders only has no catalog entry; `tr` fills it with the translated parts)."""
    parts = {"p%d" % i: item for i, item in enumerate(items)}
    return M(sep.join("{%s}" % k for k in parts), **parts)


def compatibility_problems(archive: Archive, target: Target) -> List[str]:
    """Reasons not to install; --force overrides them, except the OS."""
    problems: List[str] = []
    if archive.full_version and ".".join(archive.full_version.split(".")[:3]) != archive.version:
        problems.append(M("the archive name says cuDNN {full} but {header} says {version}",
                          full=archive.full_version, header=archive.header, version=archive.version))
    if target.cuda is None:
        return problems
    if archive.cuda_major is None:
        problems.append(M("cannot tell which CUDA this cuDNN was built for: {note}",
                          note=archive.notes[0] if archive.notes else ""))
    elif archive.cuda_major != target.cuda.major:
        problems.append(M("this cuDNN is built for CUDA {tag} and {target} is CUDA {major}.x (cuDNN builds are per "
                          "CUDA major; get the _cuda{major} archive)", tag=archive.cuda_tag, target=target.label,
                          major=target.cuda.major))
    elif archive.cuda_major < 11 and archive.cuda_minor is not None and archive.cuda_minor != target.cuda.minor:
        problems.append(M("this cuDNN is built for CUDA {tag} and {target} is CUDA {short}; before CUDA 11 cuDNN was "
                          "built per minor release", tag=archive.cuda_tag, target=target.label,
                          short=target.cuda.short))
    return problems


def os_problem(archive: Archive, target: Target) -> Optional[str]:
    """The archive cannot work there at all (no --force): another OS or another CPU architecture."""
    return platform_problem(Path(archive.path).name, archive.os, archive.arch, target)


def platform_problem(name: str, os_: str, arch: Optional[str], target: Target) -> Optional[str]:
    if os_ != target.os:
        what = {"linux": M("a Linux tarball"), "windows": M("a Windows zip")}[os_]
        return M("{name} is {what}; {target} is a {os} install: download the cudnn-{os_name}-x86_64-..._cudaNN-archive "
                 "for {os}", name=name, what=what, target=target.label, os=target.os.capitalize(), os_name=target.os)
    have = target.arch()
    arch = {"aarch64": "sbsa"}.get(arch or "", arch)
    if arch and have and arch != have:
        return M("{name} is built for {arch} and {target} is an {have} toolkit: download the "
                 "cudnn-{os_name}-{have}-... archive", name=name, arch=arch, target=target.label, have=have,
                 os_name=target.os)
    return None


def early_check(archive_path: Path, target: Target, force: bool) -> None:
    """What the archive's name already says, checked before a byte is read or written: OS and CUDA major."""
    from cudaswitch.cudnn.archive import peek_name

    info = peek_name(archive_path)
    if not info:
        return
    problem = platform_problem(Path(archive_path).name, info["os"], info.get("arch"), target)
    if problem:
        raise ArchiveError(M("{problem}; nothing was changed", problem=problem))
    if target.cuda is not None and info["cuda_major"] != target.cuda.major and not force:
        tag = f"{info['cuda_major']}" + (f".{info['cuda_minor']}" if info["cuda_minor"] is not None else "")
        raise ArchiveError(M("refused: this cuDNN is built for CUDA {tag} and {target} is CUDA {major}.x (cuDNN "
                             "builds are per CUDA major; get the _cuda{major} archive); --force installs it anyway; "
                             "nothing was changed", tag=tag, target=target.label, major=target.cuda.major))


def refuse_incompatible(archive, target: Target, force: bool) -> List[str]:
    """A Linux archive for a Windows toolkit is always refused; a CUDA-major or version mismatch unless --force,
    which returns the problems so the caller can say it overrode them."""
    problem = os_problem(archive, target)
    if problem:
        raise ArchiveError(problem)
    problems = compatibility_problems(archive, target)
    if problems and not force:
        raise ArchiveError(M("refused: {problems}; --force installs it anyway", problems=joined(problems)))
    return problems
