"""Where an install goes: a CUDA toolkit's folders or a conda environment's (`Target`), and which one the user
meant (`resolve_target`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional, Tuple

from cudaswitch.core.errors import CudaswitchError, UsageError
from cudaswitch.core.i18n import Listed, M
from cudaswitch.core.system import System
from cudaswitch.core.versions import CudaVersion, cudnn_version_in
from cudaswitch.cudnn.journal import RECORD_ENV, RECORD_TOOLKIT, records


@dataclass
class Target:
    kind: str  # "toolkit" or "env"
    root: str  # displayed
    os: str
    label: str
    dirs: Dict[str, str]  # role -> displayed destination folder
    local_dirs: Dict[str, Path]
    record_base: Path  # local
    local_root: Path
    cuda: Optional[CudaVersion] = None
    selector: str = ""  # how to name it again for uninstall
    system: Optional[System] = field(default=None, repr=False)

    def display(self, p: Path) -> str:
        return self.system.display(p) if self.system else str(p)

    def arch(self) -> Optional[str]:
        """x86_64 or sbsa for a Linux toolkit with a targets/<arch>-linux folder; x86_64 on Windows; else None."""
        if self.os == "windows":
            return "x86_64"
        try:
            names = os.listdir(self.local_root / "targets")
        except OSError:
            return None
        arches = {{"x86_64-linux": "x86_64", "sbsa-linux": "sbsa", "aarch64-linux": "sbsa",
                   "ppc64le-linux": "ppc64le"}.get(n) for n in names} - {None}
        return arches.pop() if len(arches) == 1 else None

    def existing_cudnn(self) -> Optional[str]:
        return cudnn_version_in(self.local_dirs["include"])

    def to_json(self) -> dict:
        return {"kind": self.kind, "root": self.root, "os": self.os, "label": self.label, "dirs": self.dirs,
                "cuda": str(self.cuda) if self.cuda else None}


def toolkit_target(system: System, tk) -> Target:
    """Destination folders in a CUDA toolkit: `bin` (13.x: `bin\\x64`), `include`, `lib\\x64` on Windows, `lib64`
    on Linux (sources.csv S1, S3, S47, S70)."""
    from cudaswitch.discovery.toolkits import TOOLKIT

    if tk.kind != TOOLKIT:
        advice = {"pip-wheels": M("install cuDNN with pip (pip install nvidia-cudnn-cu12) instead"),
                  "conda": M("use --into-env to install into the conda environment"),
                  "debian": M("install cuDNN with apt instead")}.get(tk.kind, "")
        raise UsageError(M("CUDA {version} at {root} is a {kind} install, not a toolkit folder; {advice}",
                           version=tk.version, root=tk.root, kind=tk.kind, advice=advice))
    j = system.join
    if system.windows:
        bin_x64 = j(tk.root, "bin", "x64")
        bindir = bin_x64 if tk.cuda.major >= 13 else j(tk.root, "bin")
        dirs = {"bin": bindir, "include": j(tk.root, "include"), "lib": j(tk.root, "lib", "x64")}
    else:
        lib = j(tk.root, "lib64")
        if not system.local(lib).is_dir() and tk.lib_dirs:
            lib = tk.lib_dirs[0]
        dirs = {"bin": j(tk.root, "bin"), "include": tk.include_dir or j(tk.root, "include"), "lib": lib}
    local_root = system.local(tk.root)
    label = M("CUDA {version} at {root}", version=tk.version, root=tk.root)
    _check_inside(local_root, {k: system.local(v) for k, v in dirs.items()}, label, system.display)
    return Target(kind="toolkit", root=tk.root, os=system.os, label=label, dirs=dirs,
                  local_dirs={k: system.local(v) for k, v in dirs.items()},
                  record_base=local_root.joinpath(*RECORD_TOOLKIT), local_root=local_root, cuda=tk.cuda,
                  selector=tk.root, system=system)


def env_target(system: System, env, cuda: Optional[CudaVersion]) -> Target:
    """A conda environment: Library\\bin, Library\\include, Library\\lib (Windows); lib, include (Linux)."""
    prefix = Path(env.prefix)
    if system.windows:
        lib = prefix / "Library"
        dirs = {"bin": lib / "bin", "include": lib / "include", "lib": lib / "lib"}
    else:
        dirs = {"bin": prefix / "bin", "include": prefix / "include", "lib": prefix / "lib"}
    label = M("conda environment {name} ({prefix})", name=env.name, prefix=prefix)
    _check_inside(prefix, dirs, label, str)
    return Target(kind="env", root=str(prefix), os=system.os, label=label,
                  dirs={k: str(v) for k, v in dirs.items()}, local_dirs=dirs,
                  record_base=prefix.joinpath(*RECORD_ENV), local_root=prefix, cuda=cuda,
                  selector=str(prefix), system=None)


def _inside(path: Path, root: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _check_inside(root: Path, dirs: Dict[str, Path], label: str, display) -> None:
    """Every destination folder, symlinks resolved, lies inside the resolved toolkit or environment: a `lib64`
    linking elsewhere would make the install write there while the output names lib64."""
    for role in ("bin", "include", "lib"):
        d = dirs[role]
        if not _inside(d, root):
            raise CudaswitchError(M("{folder} leads to {real}, outside {label}; cudaswitch installs only inside the "
                                    "toolkit or environment folder; fix that link or install with --into-env; nothing "
                                    "was changed", folder=display(d), real=display(Path(os.path.realpath(d))),
                                    label=label))


def _env_state(system: System):
    from cudaswitch.discovery.environment import read_state, resolve_env

    if not system.environ.get("CONDA_PREFIX"):
        return None, None
    try:
        env = resolve_env(system)
    except CudaswitchError:
        return None, None
    return env, read_state(env)


def resolve_target(system: System, archive_path: Optional[Path], cuda: Optional[str] = None, into_env: bool = False,
                   name: Optional[str] = None, prefix: Optional[str] = None, uninstalling: bool = False
                   ) -> Tuple[Target, str]:
    """(target, why it was chosen): --cuda; --into-env; the toolkit the active environment uses
    (`cudaswitch use`); the single toolkit matching the archive's CUDA major; else an error listing candidates."""
    from cudaswitch.cudnn.archive import peek_name
    from cudaswitch.discovery.environment import read_state, resolve_env
    from cudaswitch.discovery.toolkits import TOOLKIT, discover, select
    from cudaswitch.core.versions import parse_dotted

    command = "uninstall-cudnn --into-env" if uninstalling else "install-cudnn ARCHIVE --into-env"
    if (name or prefix) and not into_env:
        into_env = True
    if into_env:
        env = resolve_env(system, name, prefix, command=command)
        cuda_v = None
        if cuda:
            cuda_v = select(discover(system), cuda, system).cuda
        else:
            state = read_state(env)
            if state:
                cuda_v = parse_dotted(state.version)
            else:  # unswitched: the CUDA its torch was built with (and its nvidia-* wheels), from torch's files
                from cudaswitch.discovery.torchenv import torch_installs

                built = torch_installs(env.prefix).get("cuda")
                cuda_v = parse_dotted(built) if built else None
        return env_target(system, env, cuda_v), "--into-env"
    found = discover(system)
    if cuda:
        return toolkit_target(system, select(found, cuda, system)), f"--cuda {cuda}"
    env, state = _env_state(system)
    if state is not None:
        tk = select(found, state.root, system)
        return toolkit_target(system, tk), M("the toolkit environment {name} uses (cudaswitch use)", name=env.name)
    toolkits = [t for t in found.toolkits if t.kind == TOOLKIT]
    listing = Listed(f"{t.version} ({t.root})" for t in toolkits) or M("none")
    if uninstalling:
        # a toolkit with any transaction folder counts: an interrupted one is finished by this command
        having = [t for t in toolkits if records(toolkit_target(system, t).record_base)]
        if len(having) == 1:
            return toolkit_target(system, having[0]), M("the only toolkit with a cuDNN installed by cudaswitch")
        if not having:
            raise CudaswitchError(M("no toolkit has a cuDNN installed by cudaswitch (toolkits: {listing})",
                                    listing=listing))
        raise UsageError(M("more than one toolkit has a cuDNN installed by cudaswitch: {toolkits}; choose one with "
                           "--cuda", toolkits=Listed(f"{t.version} ({t.root})" for t in having)))
    info = peek_name(archive_path) if archive_path else None
    if not info and archive_path:
        from cudaswitch.cudnn.archive import sniff

        try:  # a file that is no archive at all is told so first: no --cuda would make it one
            sniff(Path(archive_path))
        except OSError:
            pass  # unreadable: said where it is opened
    if not info:
        raise UsageError(M("cannot tell from {name} which CUDA it is for; choose the toolkit with --cuda (installed: "
                           "{listing})", name=Path(archive_path).name if archive_path else M("the archive"),
                           listing=listing))
    major = info["cuda_major"]
    matching = [t for t in toolkits if t.cuda.major == major]
    if len(matching) == 1:
        return toolkit_target(system, matching[0]), M("the only CUDA {major}.x toolkit installed", major=major)
    # an old-style name (cudnn-11.3-windows-x64-v8.2.1.32.zip) or a _cuda12.4 folder names the minor too
    minor = info.get("cuda_minor")
    exact = [t for t in matching if minor is not None and t.cuda.minor == minor]
    if len(exact) == 1:
        return toolkit_target(system, exact[0]), M("the CUDA {major}.{minor} toolkit the archive's name says it is "
                                                   "for", major=major, minor=minor)
    if not matching:
        raise UsageError(M("no CUDA {major}.x toolkit is installed for this cuDNN (built for CUDA {major}); "
                           "installed: {listing}; install one, or give --cuda / --into-env", major=major,
                           listing=listing))
    raise UsageError(M("more than one CUDA {major}.x toolkit is installed: {toolkits}; choose one with --cuda",
                       major=major, toolkits=Listed(f"{t.version} ({t.root})" for t in matching)))
