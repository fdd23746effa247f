"""Discovery of installed CUDA toolkits: one `Toolkit` record per install, with its exact version and folders.

Layouts and version sources: sources.csv S1-S36 (NVIDIA's install guides, PyTorch CI, NVIDIA cuda-pathfinder).
Version files are read in a fixed order and `nvcc --version` is run only when no file answers, so `cudaswitch list` spawns no process on a normal
machine.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from pathlib import Path
from stat import S_ISDIR, S_ISLNK, S_ISREG

from cudaswitch.core import versions
from cudaswitch.core.errors import UsageError
from cudaswitch.core.i18n import Listed, M, N_
from cudaswitch.core.record import Record
from cudaswitch.core.system import System, under
from cudaswitch.core.trust import read_bytes, read_json, read_text
from cudaswitch.core.versions import CudaVersion, VersionFileError, VersionReading

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import Dict, Iterable, List, Optional, Tuple

# a folder given as a toolkit that is none: its reasons are what `use PATH` repeats, not the verdict
NOT_A_TOOLKIT = N_("{root}: not a CUDA toolkit ({why})")

LINUX_ARCHES = ("x86_64-linux", "sbsa-linux", "aarch64-linux", "ppc64le-linux")

# kinds of install, which decide the layout
TOOLKIT, CONDA, PIP_WHEELS, DEBIAN = "toolkit", "conda", "pip-wheels", "debian"


class Toolkit(Record):
    """One installed CUDA toolkit. Paths are spelled as the user's OS spells them. `cuda` (the version as numbers)
    is neither compared nor shown: `version` says it."""

    _fields = ("version", "root", "sources", "version_source", "kind", "nvcc", "bin_dirs", "lib_dirs", "include_dir",
               "cudnn", "aliases", "modules", "flags", "warnings")

    def __init__(self, version: str, root: str, sources: List[str], version_source: str, kind: str = TOOLKIT,
                 nvcc: Optional[str] = None, bin_dirs: Optional[List[str]] = None,
                 lib_dirs: Optional[List[str]] = None, include_dir: Optional[str] = None, cudnn: Optional[str] = None,
                 aliases: Optional[List[str]] = None, modules: Optional[List[str]] = None,
                 flags: Optional[List[str]] = None, warnings: Optional[List[str]] = None,
                 cuda: CudaVersion = CudaVersion(0, 0)) -> None:
        self.version = version
        self.root = root
        self.sources = sources
        self.version_source = version_source
        self.kind = kind
        self.nvcc = nvcc
        self.bin_dirs = [] if bin_dirs is None else bin_dirs
        self.lib_dirs = [] if lib_dirs is None else lib_dirs
        self.include_dir = include_dir
        self.cudnn = cudnn
        self.aliases = [] if aliases is None else aliases
        self.modules = [] if modules is None else modules  # module names that load it (cuda/12.4): selectors too
        self.flags = [] if flags is None else flags
        self.warnings = [] if warnings is None else warnings
        self.cuda = cuda

    def to_json(self) -> dict:
        # copies, messages as their English text (what dataclasses.asdict gave)
        data = {f: [str(x) for x in v] if isinstance(v, list) else v for f in self._fields for v in [getattr(self, f)]}
        data["major"], data["minor"], data["patch"] = self.cuda.major, self.cuda.minor, self.cuda.patch
        return data


class Discovery(Record):
    _fields = ("toolkits", "warnings", "config_errors", "cudnn_installs", "modules")

    def __init__(self, toolkits: List[Toolkit], warnings: List[str], config_errors: Optional[List[str]] = None,
                 cudnn_installs: Optional[List] = None, modules: Optional[List] = None) -> None:
        self.toolkits = toolkits
        self.warnings = warnings  # problems that did not stop discovery: each names the file and what to do
        self.config_errors = [] if config_errors is None else config_errors
        # cudnn_windows.CudnnInstall: NVIDIA's exe installer
        self.cudnn_installs = [] if cudnn_installs is None else cudnn_installs
        self.modules = [] if modules is None else modules  # modules.ModuleFile: every CUDA modulefile read


class _Candidate(Record):
    _fields = ("path", "source", "kind", "quiet", "site", "module")

    def __init__(self, path: str, source: str, kind: str = TOOLKIT, quiet: bool = False, site: Optional[str] = None,
                 module: Optional[str] = None) -> None:
        self.path = path  # displayed path
        self.source = source
        self.kind = kind
        self.quiet = quiet  # children of a search folder: not being a toolkit is no news
        self.site = site  # pip wheels: the site-packages folder holding the dist-infos
        self.module = module  # the module name (cuda/12.4) whose modulefile names this folder


# ---- looking at the disk ------------------------------------------------------------------------------------------
# A pass asks about thousands of paths: these take the local path as text (System.local_text), stat it once, and
# build a Path only where a reader needs one. The predicates are os.path's (False wherever the stat fails), not
# pathlib's: those raise PermissionError on Python 3.9-3.13 where a folder on the way cannot be searched by this user
# (an admin's targets/ of mode 0700), and what she cannot reach she cannot use; one such folder must not stop the
# whole pass.

_CLOSED = (errno.EACCES, errno.EPERM)  # a stat's failure where a folder on the way is closed to this user
_is_dir, _is_file, _exists, _is_link = os.path.isdir, os.path.isfile, os.path.exists, os.path.islink


def _mode(local: str) -> Optional[int]:
    """st_mode at `local` (one stat); None where this user finds nothing there."""
    try:
        return os.stat(local).st_mode
    except (OSError, ValueError):
        return None


def _names(local: str) -> List[str]:
    """The names in a folder, in the order of sorted(Path(local).iterdir()); none when it cannot be listed."""
    if os.name == "nt":  # WindowsPath orders without case
        return [p.name for p in _listdir(Path(local))]
    try:
        return sorted(os.listdir(local))
    except OSError:
        return []


def _entries(local: str, keep) -> List[Path]:
    """The Paths of _listdir(Path(local)) whose name `keep` accepts, built only for those."""
    names = [n for n in _names(local) if keep(n)]
    if not names:
        return []
    folder = Path(local)
    return [folder / n for n in names]


# ---- where to look -----------------------------------------------------------------------------------------------

def _children(system: System, folder: str, pattern: str) -> List[str]:
    loc = system.local_text(folder)
    try:
        names = sorted(os.listdir(loc))
    except OSError:
        return []
    rx = re.compile(pattern)
    return [system.join(folder, n) for n in names if rx.match(n)]


def _linux_candidates(system: System) -> List[_Candidate]:
    out: List[_Candidate] = []
    for path in _children(system, system.machine_place("/usr/local"), r"^cuda(-[\d.]+)?$"):
        out.append(_Candidate(path, "/usr/local"))
    for path in _children(system, system.machine_place("/opt"), r"^cuda"):
        out.append(_Candidate(path, "/opt"))
    debian = system.machine_place("/usr/lib/nvidia-cuda-toolkit")
    if _is_dir(system.local_text(debian)):
        out.append(_Candidate(debian, "debian-package", kind=DEBIAN))
    return out


def _windows_candidates(system: System) -> List[_Candidate]:
    out: List[_Candidate] = []
    program_files = system.environ.get("ProgramFiles") or system.environ.get("PROGRAMFILES") or r"C:\Program Files"
    base = system.join(program_files, "NVIDIA GPU Computing Toolkit", "CUDA")
    for path in _children(system, base, r"^v\d+\.\d+$"):
        out.append(_Candidate(path, "Program Files"))
    for name in sorted(system.environ):
        if re.fullmatch(r"CUDA_PATH_V\d+_\d+", name, flags=re.IGNORECASE):
            out.append(_Candidate(system.environ[name], name.upper()))
    try:
        entries = system.registry()
    except OSError:
        entries = []
    for key, install_dir in entries:
        out.append(_Candidate(install_dir.rstrip("\\"), f"registry {key}"))
    return out


def _env_candidates(system: System) -> List[_Candidate]:
    out: List[_Candidate] = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if system.environ.get(var):
            out.append(_Candidate(system.environ[var], var))
    nvcc = system.which("nvcc")
    if nvcc:
        out.append(_Candidate(nvcc_root(system, nvcc), "nvcc on PATH"))
    prefixes = [system.environ.get("CONDA_PREFIX") or ""] + _known_conda_envs(system)
    for prefix in dict.fromkeys(p for p in prefixes if p):
        out.append(_Candidate(prefix, "conda env", kind=CONDA, quiet=True))
    return out


def _known_conda_envs(system: System) -> List[str]:
    """Prefixes conda has recorded in ~/.conda/environments.txt (every `conda create` appends one)."""
    home = system.environ.get("HOME") or system.environ.get("USERPROFILE")
    if not home:
        return []
    try:
        text = read_text(system.local(system.join(home, ".conda", "environments.txt")))
    except (OSError, UnicodeDecodeError):
        return []
    return [line.strip() for line in text.splitlines() if line.strip()]


def _pip_candidates(system: System) -> List[_Candidate]:
    out: List[_Candidate] = []
    for site in system.pip_sites():
        nvidia = system.join(site, "nvidia")
        if not _is_dir(system.local_text(nvidia)):
            continue
        if _is_dir(system.local_text(system.join(nvidia, "cu13"))):
            out.append(_Candidate(system.join(nvidia, "cu13"), "pip wheels", kind=PIP_WHEELS, quiet=True, site=site))
        if _is_dir(system.local_text(system.join(nvidia, "cuda_runtime"))):
            out.append(_Candidate(nvidia, "pip wheels", kind=PIP_WHEELS, quiet=True, site=site))
    return out


def _search_path_candidates(system: System, roots: Iterable[str], source: str = "search path") -> List[_Candidate]:
    out: List[_Candidate] = []
    for root in roots:
        loc = system.local_text(root)
        if _looks_like_root(loc):
            out.append(_Candidate(root, source))
        elif _is_dir(loc):
            # the store's hidden folders are install-toolkit's own staging and trash (`.cuda-13.0.partial-*`,
            # `.removing-*`): never a toolkit, and not the business of a `list` run meanwhile
            for child in _children(system, root, r"[^.]" if source == "install-toolkit" else r"."):
                local = system.local_text(child)
                if _is_dir(local) or _is_link(local):
                    out.append(_Candidate(child, source, quiet=not _claims_cuda(child)))
        else:
            out.append(_Candidate(root, source))
    return out


def _claims_cuda(path: str) -> bool:
    name = _last_name(path).lower()
    return "cuda" in name or versions.version_from_name(name) is not None


def _last_name(path: str) -> str:
    """The last name of a path in either spelling (what follows its last / or \\), trailing ones dropped."""
    path = path.rstrip("\\/")
    return path[max(path.rfind("/"), path.rfind("\\")) + 1:]


def _looks_like_root(loc: str) -> bool:
    return any(_exists(under(loc, marker)) for marker in ("version.json", "version.txt", "bin", "include", "dist-info"))


# ---- nvcc ---------------------------------------------------------------------------------------------------------

_EXEC_LINE = r"""exec\s+["']?([^"'\s]+nvcc(?:\.exe)?)["']?"""


def resolve_nvcc(system: System, nvcc: str) -> str:
    """The real nvcc behind a symlink or a small wrapper script such as `/usr/local/bin/nvcc`."""
    loc = system.local(nvcc)
    real = Path(os.path.realpath(loc))
    try:
        if real.stat().st_size < 4096:
            head = read_bytes(real, limit=4096, truncate=True)
            if head.startswith(b"#!"):
                m = re.search(_EXEC_LINE, head.decode("utf-8", "replace"))
                if m:
                    return system.realpath(m.group(1))
    except OSError:
        pass
    return system.display(real)


def nvcc_root(system: System, nvcc: str) -> str:
    """The folder of the toolkit an nvcc belongs to (above the bin of the real nvcc behind links and wrapper
    scripts): the one answer to "which toolkit is this nvcc" that list, status, doctor and conda doctor give."""
    return str(system.pure(resolve_nvcc(system, nvcc)).parent.parent)


def nvcc_owner(toolkits: List["Toolkit"], nvcc: str, system: System) -> Optional["Toolkit"]:
    """The discovered toolkit of an nvcc: by its own path (a link below a toolkit's alias), else by the toolkit it
    resolves to (nvcc_root)."""
    return owner_of(toolkits, nvcc, system) or owner_of(toolkits, nvcc_root(system, nvcc), system)


# ---- inspecting one candidate -------------------------------------------------------------------------------------

class _Layout(Record):
    _fields = ("bin_dirs", "lib_dirs", "include_dir", "nvcc", "dist_info_dirs", "conda_meta")

    def __init__(self, bin_dirs: List[str], lib_dirs: List[str], include_dir: Optional[str], nvcc: Optional[str],
                 dist_info_dirs: List[Path], conda_meta: Optional[Path] = None) -> None:
        self.bin_dirs = bin_dirs
        self.lib_dirs = lib_dirs
        self.include_dir = include_dir
        self.nvcc = nvcc
        self.dist_info_dirs = dist_info_dirs
        self.conda_meta = conda_meta


def _first_dir(system: System, root: str, options: Iterable[Tuple[str, ...]]) -> Optional[str]:
    for parts in options:
        cand = system.join(root, *parts)
        if _is_dir(system.local_text(cand)):
            return cand
    return None


def _layout(system: System, cand: _Candidate, root: str) -> _Layout:
    j = system.join
    exe = ".exe" if system.windows else ""
    loc = system.local_text(root)
    if cand.kind == PIP_WHEELS:
        site = system.local_text(cand.site or str(system.pure(root).parent))
        infos = _entries(site, lambda n: n.startswith("nvidia_") and n.endswith(".dist-info"))
        # cu11/cu12 wheels carry a -cuNN suffix and share nvidia/; cu13 wheels have none and live in nvidia/cu13.
        suffixed = [p for p in infos if re.search(r"_cu1[0-2]-", p.name)]
        infos = [p for p in infos if p not in suffixed] if root.endswith("cu13") else suffixed
        if root.endswith("cu13"):
            lib = j(root, "bin", "x86_64") if system.windows else j(root, "lib")
            return _Layout(_existing(system, [j(root, "bin")]), _existing(system, [lib]),
                           _dir_or_none(system, j(root, "include")), _file_or_none(system, j(root, "bin", "nvcc" + exe)),
                           infos)
        sub = "bin" if system.windows else "lib"
        comps = [n for n in _names(loc) if n != "cu13" and _is_dir(under(loc, n, sub))]
        return _Layout(_existing(system, [j(root, "cuda_nvcc", "bin")]), [j(root, c, sub) for c in comps],
                       _dir_or_none(system, j(root, "cuda_runtime", "include")),
                       _file_or_none(system, j(root, "cuda_nvcc", "bin", "nvcc" + exe)), infos)
    if system.windows:
        base = j(root, "Library") if cand.kind == CONDA else root
        bins = _existing(system, [j(base, "bin"), j(base, "libnvvp"), j(base, "bin", "x64")])
        libs = _existing(system, [j(base, "lib", "x64") if cand.kind != CONDA else j(base, "lib"), j(base, "bin", "x64")])
        return _Layout(bins, libs, _dir_or_none(system, j(base, "include")),
                       _file_or_none(system, j(base, "bin", "nvcc.exe")), _dist_infos(loc),
                       Path(loc, "conda-meta") if cand.kind == CONDA else None)
    if cand.kind == DEBIAN:
        include = "/usr/include" if _exists(system.local_text("/usr/include/cuda.h")) else None
        libs = _existing(system, ["/usr/lib/x86_64-linux-gnu"]) if include else []
        return _Layout(_existing(system, [j(root, "bin")]), libs, include,
                       _file_or_none(system, j(root, "bin", "nvcc")), [])
    arch_lib = [("targets", a, "lib") for a in LINUX_ARCHES]
    arch_inc = [("targets", a, "include") for a in LINUX_ARCHES]
    if cand.kind == CONDA:
        lib = _first_dir(system, root, arch_lib)
        include = _first_dir(system, root, arch_inc)
    else:
        lib = _first_dir(system, root, [("lib64",), *arch_lib, ("lib",)])
        include = _first_dir(system, root, [("include",), *arch_inc])
    return _Layout(_existing(system, [j(root, "bin")]), [lib] if lib else [], include,
                   _file_or_none(system, j(root, "bin", "nvcc")), _dist_infos(loc),
                   Path(loc, "conda-meta") if cand.kind == CONDA else None)


def _listdir(loc: Path) -> List[Path]:
    try:
        return sorted(loc.iterdir())
    except OSError:
        return []


def _dist_info(name: str) -> bool:
    return name.endswith(".dist-info")


def _dist_infos(loc: str) -> List[Path]:
    return _entries(loc, _dist_info) + _entries(under(loc, "dist-info"), _dist_info)


def _existing(system: System, paths: Iterable[Optional[str]]) -> List[str]:
    return [p for p in paths if p and _is_dir(system.local_text(p))]


def _dir_or_none(system: System, path: str) -> Optional[str]:
    return path if _is_dir(system.local_text(path)) else None


def _file_or_none(system: System, path: str) -> Optional[str]:
    return path if _is_file(system.local_text(path)) else None


_CONDA_PKG = r"^(cuda-version|cuda-nvcc|cuda-cudart|cudatoolkit)-(\d+\.\d+(?:\.\d+)?)-"


def _from_conda_meta(meta: Path) -> Optional[Tuple[CudaVersion, Path]]:
    found: Dict[str, Tuple[CudaVersion, Path]] = {}
    for p in _listdir(meta):
        m = re.match(_CONDA_PKG, p.name)
        if m and p.suffix == ".json":
            v = versions.parse_dotted(m.group(2))
            if v:
                found[m.group(1)] = (v, p)
    for name in ("cuda-nvcc", "cuda-cudart", "cudatoolkit", "cuda-version"):
        if name in found:
            return found[name]
    return None


def read_version(system: System, root: str, layout: _Layout, warnings: List[str]) -> Optional[VersionReading]:
    """Version from files in the documented order; nvcc only when no file answers."""
    loc = system.local_text(root)
    for name, reader in (("version.json", versions.from_version_json), ("version.txt", versions.from_version_txt)):
        local = under(loc, name)
        m = _mode(local)
        there = m is not None
        regular, folder = there and S_ISREG(m), there and S_ISDIR(m)
        if there and not regular and not folder:
            # a FIFO planted there would make every `list` hang on open
            warnings.append(M("{path}: not a regular file (a FIFO or device); not read", path=system.display(local)))
            continue
        if regular:
            path = Path(local)
            try:
                v = reader(path)
                if v:
                    return VersionReading(v, name, system.display(path))
            except VersionFileError as exc:
                warnings.append(_display_error(system, exc, path))
    hit = versions.from_dist_infos(layout.dist_info_dirs)
    if hit:
        return VersionReading(hit[0], "dist-info", system.display(hit[1]))
    if layout.conda_meta is not None:
        hit = _from_conda_meta(layout.conda_meta)
        if hit:
            return VersionReading(hit[0], "conda-meta", system.display(hit[1]))
    # NVIDIA's Windows binaries name their exact release in their version resource: read, never run, on any host.
    for binary in _pe_binaries(system, layout):
        try:
            v = versions.from_pe(system.local(binary))
            if v:
                return VersionReading(v, "pe-resource", binary)
        except VersionFileError as exc:
            warnings.append(_display_error(system, exc, system.local(binary)))
    if layout.include_dir:
        local = system.local_text(system.join(layout.include_dir, "cuda.h"))
        if _is_file(local):
            cuda_h = Path(local)
            try:
                v = versions.from_cuda_h(cuda_h)
                if v:
                    return VersionReading(v, "cuda.h", system.display(cuda_h))
            except VersionFileError as exc:
                warnings.append(_display_error(system, exc, cuda_h))
    if layout.nvcc and not _foreign_binary(system, layout.nvcc):
        from cudaswitch.core.trust import executable_problem

        why = executable_problem(system.local(layout.nvcc))
        if why:
            # discovery looks into every env in ~/.conda/environments.txt and the active prefix: as root, a bin/nvcc
            # planted there would run as root (docs/design/security.md)
            warnings.append(M("{nvcc}: 'nvcc --version' not run: {why}; cudaswitch runs no program another "
                              "user could have put there", nvcc=layout.nvcc, why=why))
            return None
        try:
            proc = system.run([str(system.local(layout.nvcc)), "--version"], timeout=20)
            v = versions.from_nvcc_output(proc.stdout or "")
            if v:
                return VersionReading(v, "nvcc", layout.nvcc)
        except (OSError, ValueError) as exc:
            warnings.append(M("{nvcc}: could not run 'nvcc --version' ({error})", nvcc=layout.nvcc, error=exc))
        except Exception as exc:  # subprocess.TimeoutExpired and friends
            warnings.append(M("{nvcc}: 'nvcc --version' failed ({error})", nvcc=layout.nvcc, error=type(exc).__name__))
    return None


def _pe_binaries(system: System, layout: _Layout) -> List[str]:
    """nvcc.exe, then the CUDA runtime DLLs (cudart64_12.dll, cudart64_110.dll), where the layout has them."""
    out = [layout.nvcc] if layout.nvcc and layout.nvcc.lower().endswith(".exe") else []
    for folder in layout.bin_dirs + layout.lib_dirs:
        for name in _names(system.local_text(folder)):
            if re.fullmatch(r"cudart64_\d+\.dll", name, flags=re.IGNORECASE):
                out.append(system.join(folder, name))
    return list(dict.fromkeys(out))


def _foreign_binary(system: System, nvcc: str) -> bool:
    """A Windows nvcc.exe seen from a Linux host (CUDASWITCH_FS_ROOT, a mounted drive): running it can only fail."""
    from cudaswitch.core import pe

    return not sys.platform.startswith("win") and pe.is_pe(system.local(nvcc))


def _display_error(system: System, exc: Exception, local: Path) -> str:
    message = exc.args[0] if exc.args else str(exc)
    if isinstance(message, M):  # still translatable, with the path as the user knows it
        return M(message.template, **{k: system.display(local) if str(v) == str(local) else v
                                      for k, v in message.values.items()})
    return str(exc).replace(str(local), system.display(local), 1)


def _cudnn_version(system: System, include_dir: Optional[str]) -> Optional[str]:
    return versions.cudnn_version_in(system.local_text(include_dir)) if include_dir else None


_CUDNN_WHEEL = r"^nvidia_cudnn_cu\d+-(\d+(?:\.\d+)+)\.dist-info$"


def _wheel_cudnn(layout: _Layout) -> Optional[str]:
    """The nvidia-cudnn-cuNN wheel's version in a pip-wheel toolkit (its headers live outside cuda_runtime)."""
    for p in layout.dist_info_dirs:
        m = re.match(_CUDNN_WHEEL, p.name) if p.name.startswith("nvidia_cudnn_cu") else None
        if m:
            return m.group(1)
    return None


def _dll_cudnn(system: System, layout: _Layout) -> Optional[str]:
    """cuDNN copied into a Windows toolkit without its headers (only bin\\cudnn64_N.dll, as many setup guides say):
    the DLL's version resource, read without running anything."""
    if not system.windows:
        return None
    from cudaswitch.discovery.cudnn_windows import dll_in

    dlls = [d for d in (dll_in(system, b) for b in layout.bin_dirs) if d]
    return versions.cudnn_from_pe(system.local(dlls[0])) if dlls else None


_LINKED = (("bin",), ("lib64",), ("lib",), ("include",), ("bin", "nvcc"))


def _broken_links(loc: str) -> List[str]:
    return [os.path.join(*parts) for parts in _LINKED
            for local in [under(loc, *parts)] if _is_link(local) and _leads_nowhere(local)]


def _leads_nowhere(link: str) -> bool:
    # a link into a folder this user may not search is not broken: it is the folder _unsearchable names
    try:
        os.stat(link)
    except OSError as exc:
        return exc.errno not in _CLOSED
    except ValueError:
        return True
    return False


def _unsearchable(loc: str, conda: bool) -> Optional[Tuple[str, ...]]:
    """The first folder of a toolkit's Linux layout that this user may not search (an admin's targets/ of mode
    0700), as names below the root: discovery uses none of the libraries and headers below it, and the warning says
    why; None when there is none."""
    folders = [("targets",), *(("targets", a) for a in LINUX_ARCHES)]
    folders += [] if conda else [("lib64",), ("include",), ("lib",)]
    for parts in folders:  # a parent before its children: the one to open is named
        local = under(loc, *parts)
        try:
            m = os.stat(local).st_mode
        except PermissionError:  # a link into a folder she may not search
            return parts
        except (OSError, ValueError):
            continue
        if S_ISDIR(m) and not os.access(local, os.X_OK):
            return parts
    return None


def inspect(system: System, cand: _Candidate, root: str) -> Tuple[Optional[Toolkit], List[str]]:
    """A Toolkit for `root` (already resolved), or None with the reason when it is not one."""
    warnings: List[str] = []
    loc = system.local_text(root)
    if not _is_dir(loc):
        return None, [M("{root}: a file, not a folder; list toolkit folders (or folders holding them) there",
                        root=root)]
    if not os.access(loc, os.R_OK | os.X_OK):
        return None, [M("{root}: permission denied; run as a user who can read it, or remove it from the search path",
                        root=root)]
    layout = _layout(system, cand, root)
    reading = read_version(system, root, layout, warnings)
    has_runtime = bool(layout.lib_dirs) or layout.include_dir is not None
    unknown = reading is None and layout.nvcc is not None and not cand.quiet
    if unknown:
        # An nvcc whose version nothing answers (a Windows nvcc.exe without a version resource seen from Linux):
        # still a toolkit the user has, so it is listed rather than silently dropped.
        # one reason stays a message of its own, translated when printed
        why = (warnings[0] if len(warnings) == 1 else "; ".join(warnings)) if warnings else M(
            "no version file and nvcc cannot be run here")
        warnings[:] = [M("{root}: version unknown ({why})", root=root, why=why)]
        reading = VersionReading(CudaVersion(0, 0), "none", layout.nvcc)
    if not system.windows and cand.kind in (TOOLKIT, CONDA) and not (layout.lib_dirs and layout.include_dir):
        closed = _unsearchable(loc, cand.kind == CONDA)
        if closed:
            warnings.append(M("{folder}: this user cannot search it, so cudaswitch uses no library or header below "
                              "it; its owner can open it with chmod a+rX", folder=system.join(root, *closed)))
    # A conda env with only a `cuda-version` pin and bin/ (every env has one) is not a toolkit.
    if reading is None or not (layout.nvcc or has_runtime):
        if not cand.quiet:
            why = "; ".join(warnings) if warnings else M("no version.json, version.txt, cuda.h or nvcc found")
            warnings = [M(NOT_A_TOOLKIT, root=root, why=why)]
        return None, warnings if not cand.quiet else []
    v = reading.version
    flags: List[str] = ["unknown-version"] if unknown else []
    if not layout.nvcc:
        flags.append("no-nvcc")
        bin_has_compiler = any(
            _exists(system.local_text(system.join(b, n))) for b in layout.bin_dirs for n in ("ptxas", "ptxas.exe")
        )
        if not bin_has_compiler:
            flags.append("runtime-only")
    broken = _broken_links(loc)
    if broken:
        flags.append("broken-symlink")
        warnings.append(M("{root}: broken symlink(s) {links}; reinstall the toolkit or fix the link", root=root,
                          links=Listed(broken)))
    for p in [cand.path, root] if not unknown else []:
        claimed = versions.version_from_name(_last_name(p))
        if claimed and claimed != (v.major, v.minor):
            flags.append("misnamed")
            warnings.append(
                M("{folder}: folder name says {claimed} but {source} says {version}; cudaswitch uses {version}",
                  folder=p, claimed=".".join(map(str, claimed)), source=reading.source, version=v)
            )
            break
    tk = Toolkit(
        version="unknown" if unknown else str(v), root=root, sources=[cand.source], version_source=reading.source,
        kind=cand.kind,
        nvcc=layout.nvcc, bin_dirs=layout.bin_dirs, lib_dirs=layout.lib_dirs, include_dir=layout.include_dir,
        cudnn=_cudnn_version(system, layout.include_dir) or _wheel_cudnn(layout) or _dll_cudnn(system, layout),
        flags=flags, warnings=warnings,
        cuda=v,
    )
    return tk, []


# ---- the whole pass -----------------------------------------------------------------------------------------------

def discover(system: Optional[System] = None) -> Discovery:
    """Every toolkit reachable from the standard places, the environment and the configured search roots."""
    from cudaswitch.core import config

    system = system or System.current()
    warnings: List[str] = []
    roots, config_errors = config.search_roots(system, warnings)
    from cudaswitch.discovery.toolkit_store import discovery_roots

    cands = _search_path_candidates(system, roots) + _env_candidates(system)
    cands += _search_path_candidates(system, discovery_roots(system), "install-toolkit")
    cands += _windows_candidates(system) if system.windows else _linux_candidates(system)
    cands += _pip_candidates(system)
    module_files = _module_files(system, warnings)
    cands += [_Candidate(mf.root, f"module {mf.name}", module=mf.name) for mf in module_files if mf.root]
    by_real: Dict[str, Toolkit] = {}
    failed: Dict[str, List[str]] = {}
    for cand in cands:
        what, real = _where(system, cand.path)
        if what == "broken":
            if not cand.quiet:
                warnings.append(M("{path}: broken symlink to {target}; remove it or point it at a toolkit",
                                  path=cand.path, target=real))
            continue
        if what == "missing":
            if not cand.quiet:
                warnings.append(M("{path} ({source}): no such folder; fix or remove that setting", path=cand.path,
                                  source=cand.source))
            continue
        if what == "denied":
            if not cand.quiet:
                warnings.append(M("{path} ({source}): this user cannot reach it (a folder on the way may not be "
                                  "searched); run as a user who can, or fix or remove that setting", path=cand.path,
                                  source=cand.source))
            continue
        key = real.lower() if system.windows else real
        if key in by_real:
            _merge(by_real[key], cand, real)
            continue
        if key in failed:
            continue
        tk, problems = _inspected(system, cand, real)
        if tk is None:
            failed[key] = problems
            warnings.extend(problems)
            continue
        _merge(tk, cand, real)
        by_real[key] = tk
    toolkits = sorted(by_real.values(), key=lambda t: (t.cuda.major, t.cuda.minor, t.cuda.patch or 0, t.root))
    for tk in toolkits:
        _distrust_module_only(tk, module_files)
        warnings.extend(tk.warnings)
    cudnn_installs = []
    if system.windows:  # the cuDNN installer exists only there; elsewhere its module need not even load
        from cudaswitch.discovery.cudnn_windows import find_installed

        cudnn_installs = find_installed(system)
    return Discovery(toolkits, _unique(warnings), config_errors, cudnn_installs, module_files)


def _where(system: System, path: str) -> Tuple[str, str]:
    """("broken", the link's target), ("missing", path), ("denied", path) or ("real", the folder it resolves to);
    kept between TABs for each path while the links on its way are unchanged (pieces.piece)."""
    from cudaswitch.discovery.pieces import fits, piece

    def compute():
        loc = system.local_text(path)
        try:
            os.stat(loc)
        except OSError as exc:
            # a folder on the way this user may not search: whether anything is there is not hers to know
            if exc.errno in _CLOSED:
                return "denied", path
            return ("broken", os.readlink(loc)) if _is_link(loc) else ("missing", path)
        except ValueError:
            return "missing", path
        return "real", system.display(Path(os.path.realpath(loc)))

    def decode(value):
        if not fits(value, [str, str]) or value[0] not in ("broken", "missing", "denied", "real"):
            raise ValueError(value)
        return tuple(value)

    return piece(("where", path), compute, list, decode)


# Toolkit._fields, then cuda: the shape of a kept toolkit (pieces.fits)
_KEPT_TOOLKIT = [str, str, [str], str, str, (str, type(None)), [str], [str], (str, type(None)), (str, type(None)),
                 [str], [str], [str], [str], [int, int, (int, type(None))]]


def _inspected(system: System, cand: _Candidate, real: str) -> Tuple[Optional[Toolkit], List[str]]:
    """inspect(), kept between TABs for each folder while what it read there is unchanged (pieces.piece):
    a toolkit added beside twenty others is the only one read again."""
    from cudaswitch.discovery.pieces import fits, piece, plain, unplain

    def encode(result):
        tk, problems = result
        fields = None if tk is None else [plain(getattr(tk, f)) for f in Toolkit._fields] + [list(tk.cuda)]
        return [fields, plain(problems)]

    def decode(value):
        tk, problems = unplain(value)
        if not fits(problems, [str]) or tk is not None and not fits(tk, _KEPT_TOOLKIT):
            raise ValueError(value)
        return None if tk is None else Toolkit(*tk[:-1], cuda=CudaVersion(*tk[-1])), problems

    key = ("inspect", cand.path, cand.source, cand.kind, cand.quiet, cand.site, cand.module, real)
    return piece(key, lambda: inspect(system, cand, real), encode, decode)


def _distrust_module_only(tk: Toolkit, module_files: list) -> None:
    """As root, a toolkit that only modulefiles another user could write lead to is listed with that fact and
    never chosen by a version or module name (core/trust's rule: no decision from her files)."""
    mine = [mf for mf in module_files if mf.name in tk.modules]
    if not mine or any(not s.startswith("module ") for s in tk.sources) or not all(mf.foreign for mf in mine):
        return
    tk.flags.append(UNTRUSTED_MODULE)
    tk.warnings.append(M("{root}: found only through module {name}, whose file another user could have written "
                         "({why}); as root cudaswitch does not choose it by version or module name: give the folder "
                         "to use it", root=tk.root, name=mine[0].name, why=mine[0].foreign))


def _module_files(system: System, warnings: List[str]) -> list:
    """The CUDA modulefiles of this shell's module system, read as text, never run (discovery/modules.py)."""
    if not system.environ.get("MODULEPATH"):
        return []  # no module system initialised in this shell: not even a stat of its caches
    from cudaswitch.discovery.modules import cuda_modules, kept_module_file, unresolved_warning
    from cudaswitch.discovery.pieces import piece, plain

    # kept between TABs while the module tree is unchanged; within it each modulefile's reading is kept too
    found = piece(("modules",), lambda: cuda_modules(system), plain,
                  lambda v: [kept_module_file(m) for m in v])
    warnings.extend(unresolved_warning(mf) for mf in found if mf.root is None)
    return found


def _merge(tk: Toolkit, cand: _Candidate, real: str) -> None:
    if cand.source not in tk.sources:
        tk.sources.append(cand.source)
    if cand.module and cand.module not in tk.modules:
        tk.modules.append(cand.module)
    path = cand.path.rstrip("\\/") or cand.path
    if path != real and path not in tk.aliases and not path.lower() == real.lower():
        tk.aliases.append(path)


def _unique(items: List[str]) -> List[str]:
    seen = set()
    return [i for i in items if not (i in seen or seen.add(i))]


# ---- selecting ----------------------------------------------------------------------------------------------------

INSTALLED_TAG, SYSTEM_TAG = "installed", "system"  # `13.0.88@installed`: the copy install-toolkit made, or not


def _made_here(tk: Toolkit) -> bool:
    return "install-toolkit" in tk.sources


def selector_words(found: Discovery, incomplete: str, auto: bool = False) -> List[str]:
    """The selectors a TAB offers for the toolkits discovery found, that start with `incomplete`: X.Y, the full
    version, cuXYZ (as pip's and PyTorch's indexes name a CUDA), a module name that loads it; `auto` first where
    the command takes it."""
    words: List[str] = ["auto"] if auto else []
    for tk in found.toolkits:
        words += [f"{tk.cuda.major}.{tk.cuda.minor}", tk.version, f"cu{tk.cuda.major}{tk.cuda.minor}", *tk.modules]
    return [w for w in dict.fromkeys(words) if w.startswith(incomplete)]


def select(found: Discovery, selector: str, system: Optional[System] = None, prefer: Optional[str] = None,
           notes: Optional[List[str]] = None) -> Toolkit:
    """The one toolkit a selector names; a UsageError listing what is installed otherwise.

    Two toolkits of the very same version (install-toolkit's copy beside /usr/local/cuda-13.0) are one choice to a
    user: `prefer` (the folder the environment already records) wins, else the one install-toolkit did not make,
    and `notes` hears which was chosen and how to name the other (its folder, or VERSION@installed /
    VERSION@system)."""
    system = system or System.current()
    # a module name (cuda/12.4) is looked up before the selector is read as a folder: module names are relative
    # and the user typed what `module avail` shows
    by_module = _by_module(found, selector.strip(), system, notes)
    if by_module is not None:
        return by_module
    _refuse_unknown_module(found, selector.strip(), system)
    tag = None
    base, at, rest = selector.rpartition("@")
    if at and rest.lower() in (INSTALLED_TAG, SYSTEM_TAG) and base and not any(c in base for c in "/\\"):
        selector, tag = base, rest.lower()
    sel = versions.parse_selector(selector)
    installed = versions.describe([f"{t.version} ({t.root})" for t in found.toolkits])
    if sel.path is not None:
        path = os.path.expanduser(sel.path)
        loc = system.local(path)
        real = system.display(Path(os.path.realpath(loc)))
        for tk in found.toolkits:
            if _same(system, tk.root, real) or any(_same(system, a, path) for a in tk.aliases):
                return tk
        if loc.is_dir():
            tk, problems = inspect(system, _Candidate(path, "command line"), real)
            if tk is not None:
                return tk
            # the folder's own verdict is this message's: only its reasons are repeated
            reasons = [p.values["why"] if isinstance(p, M) and p.template == NOT_A_TOOLKIT else p for p in problems]
            raise UsageError(M("{path} is not a CUDA toolkit ({problems}); installed: {installed}", path=path,
                               problems=reasons[0] if len(reasons) == 1 else "; ".join(reasons), installed=installed))
        if loc.exists():
            raise UsageError(M("{path} is a file, not a toolkit folder; installed: {installed}", path=path,
                               installed=installed))
        raise UsageError(M("no such folder: {path}; installed: {installed}", path=path, installed=installed))
    pool = [t for t in found.toolkits if UNTRUSTED_MODULE not in t.flags]  # as root, only by its folder
    pool = pool if tag is None else [t for t in pool if _made_here(t) == (tag == INSTALLED_TAG)]
    hits = [t for t in pool if t.cuda.matches(sel.parts)]
    if not hits and len(sel.parts) == 3:
        # `nvcc --version` prints the compiler's own version (12.9.86 in toolkit 12.9.1): users copy it from there
        hits = [t for t in pool if t.cuda.matches(sel.parts[:2])
                and _nvcc_component(system, t) == CudaVersion(*sel.parts)]
    if not hits:
        raise UsageError(M("no CUDA toolkit matches {selector!r}; installed: {installed}",
                           selector=selector + (f"@{tag}" if tag else ""), installed=installed))
    if len(hits) > 1 and len({t.version for t in hits}) == 1:
        return _one_of_twins(hits, prefer, notes, system)
    if len(hits) > 1:
        names = Listed(f"{t.version} ({t.root})" for t in hits)
        raise UsageError(M("{selector!r} is ambiguous: it matches {names}; give a longer version or the folder",
                           selector=selector, names=names))
    return hits[0]


UNTRUSTED_MODULE = "untrusted-module"  # as root: found only through modulefiles another user could write


def _by_module(found: Discovery, selector: str, system: System, notes: Optional[List[str]]) -> Optional[Toolkit]:
    """The toolkit a module name loads, as the module system owning MODULEPATH resolves it (modules.resolve:
    exact names, defaults, partial versions); None when the selector names no CUDA module."""
    from cudaswitch.discovery.modules import resolve

    hit = resolve(system, found.modules, selector)
    if hit is None:
        return None
    mf = hit.module
    if mf.root is None:
        raise UsageError(M("module {name} ({path}) cannot be read without running it ({why}); give its toolkit "
                           "folder instead", name=mf.name, path=mf.path, why=mf.why))
    tk = next((t for t in found.toolkits if mf.name in t.modules), None)
    if tk is None:
        raise UsageError(M("module {name} ({path}) names {root}, which is not a CUDA toolkit here", name=mf.name,
                           path=mf.path, root=mf.root))
    if UNTRUSTED_MODULE in tk.flags:
        raise UsageError(M("module {name} ({path}) could have been written by another user ({why}); as root "
                           "cudaswitch takes no toolkit from it: give the folder ({root}) if you trust it",
                           name=mf.name, path=mf.path, why=mf.foreign, root=tk.root))
    if hit.rule and notes is not None:
        notes.append(M("{selector} is module {name} ({rule})", selector=selector, name=mf.name, rule=hit.rule))
    return tk


def _refuse_unknown_module(found: Discovery, selector: str, system: System) -> None:
    """`cuda/12.4` that is no folder here: say what the module system offers instead of "no such folder"."""
    from cudaswitch.discovery.modules import is_cuda_module

    if "/" not in selector or selector.startswith(("/", ".", "~")) or not is_cuda_module(selector) or \
            system.local(os.path.expanduser(selector)).exists():
        return
    for mf in found.modules:
        if mf.name == selector and mf.root is None:
            raise UsageError(M("module {name} ({path}) cannot be read without running it ({why}); give its toolkit "
                               "folder instead", name=mf.name, path=mf.path, why=mf.why))
    names = versions.describe(sorted(mf.name for mf in found.modules if mf.root))
    raise UsageError(M("no CUDA module {selector!r} on MODULEPATH; CUDA modules cudaswitch can read: {names}",
                       selector=selector, names=names))
def _one_of_twins(hits: List[Toolkit], prefer: Optional[str], notes: Optional[List[str]], system: System) -> Toolkit:
    """The rule for toolkits of the same version (docstring of select)."""
    version = hits[0].version
    chosen, why = None, None
    if prefer:
        chosen = next((t for t in hits if _same(system, t.root, prefer) or any(_same(system, a, prefer)
                                                                                for a in t.aliases)), None)
        why = M("the one this environment already uses")
    if chosen is None:
        system_ones = [t for t in hits if not _made_here(t)]
        if len(system_ones) == 1:
            chosen, why = system_ones[0], M("not the copy install-toolkit made")
    if chosen is None:
        raise UsageError(M("CUDA {version} is installed more than once ({folders}); give the folder", version=version,
                           folders=Listed(t.root for t in hits)))
    others = [t for t in hits if t is not chosen]
    if notes is not None:
        tags = {f"{version}@{INSTALLED_TAG if _made_here(t) else SYSTEM_TAG}" for t in others}
        hint = M("{folders} or {tag}", folders=others[0].root, tag=sorted(tags)[0]) \
            if len(others) == 1 and _made_here(chosen) != _made_here(others[0]) else Listed(t.root for t in others)
        notes.append(M("CUDA {version} is installed {count} times; chose {root} ({why}); for another give {hint}",
                       version=version, count=len(hits), root=chosen.root, why=why, hint=hint))
    return chosen


def _nvcc_component(system: System, tk: Toolkit) -> Optional[CudaVersion]:
    """The nvcc component's version: version.json's cuda_nvcc entry, else an nvidia_cuda_nvcc dist-info name."""
    loc = system.local_text(tk.root)
    try:
        comp = read_json(Path(loc, "version.json"), encoding="utf-8-sig").get("cuda_nvcc") or {}
        v = versions.parse_dotted(str(comp.get("version", ""))) if isinstance(comp, dict) else None
        if v:
            return v
    except (OSError, ValueError, AttributeError):
        pass
    for info in _dist_infos(loc):
        m = re.match(r"nvidia_cuda_nvcc(?:_cu\d+)?-(\d+\.\d+\.\d+)", info.name)
        if m:
            return versions.parse_dotted(m.group(1))
    return None


def _same(system: System, a: str, b: str) -> bool:
    a, b = a.rstrip("\\/"), b.rstrip("\\/")
    return a.lower() == b.lower() if system.windows else a == b


def owner_of(toolkits: List[Toolkit], path: str, system: System) -> Optional[Toolkit]:
    """The toolkit a path (a PATH entry, CUDA_HOME, an nvcc) lies in, through its root or an alias."""
    norm = (lambda s: s.lower()) if system.windows else (lambda s: s)
    p = norm(path.rstrip("\\/"))
    try:
        real = norm(system.realpath(path).rstrip("\\/")) if system.local(path).exists() else p
    except OSError:  # below a folder this user cannot search (root's, left on PATH by `su`): taken as written
        real = p
    best: Optional[Toolkit] = None
    best_len = -1
    for tk in toolkits:
        for base in [tk.root, *tk.aliases]:
            b = norm(base.rstrip("\\/"))
            for cand in (p, real):
                if (cand == b or cand.startswith(b + ("\\" if system.windows else "/"))) and len(b) > best_len:
                    best, best_len = tk, len(b)
    return best
