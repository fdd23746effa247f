"""CUDA toolkits that Lmod or Environment Modules provide, found by reading modulefiles as text.

A modulefile is a program (Lua for Lmod, Tcl for both systems); cudaswitch never runs one: a site's modulefiles
may load other modules, print, or run shell code, and a `module load` costs 80-240 ms where cudaswitch's hooks cost
about one. The few forms sites really write are evaluated here, statically (docs/design/modules.md): string
literals, `local x = ...` / `set x ...`, `pathJoin(...)` / `[file join ...]`, `..` concatenation, `$x` / `${x}`,
`myModuleVersion()` / `[file tail [module-info name]]`. Anything else that the toolkit's folder depends on (`os.getenv`,
`$::env(...)`, a value set inside an `if`) makes the modulefile unresolvable: it is listed with that reason, never
guessed at and never executed.
"""

from __future__ import annotations

import os
import re
from collections import namedtuple
from pathlib import Path

from cudaswitch.core.i18n import M
from cudaswitch.core.system import System

TYPE_CHECKING = False  # annotations only: importing typing costs every TAB (CONTRIBUTING, imports)
if TYPE_CHECKING:
    from typing import Dict, Iterator, List, Optional, Tuple


class _Pattern:
    """re.compile(*args) at its first use: a TAB answered mostly from kept pieces (pieces.piece) needs few
    of this module's patterns, and compiling them all cost more than the rest of such a TAB."""

    __slots__ = ("_args", "_rx")

    def __init__(self, *args):
        self._args, self._rx = args, None

    def __getattr__(self, name):  # match, search, finditer...: only what a compiled pattern has
        if self._rx is None:
            self._rx = re.compile(*self._args)
        return getattr(self._rx, name)


# The module names sites give CUDA (cuda/12.4, CUDA/12.4, cudatoolkit/12.4, cuda-toolkit/12.4, EasyBuild's
# CUDAcore/11.1.1 behind a hierarchy's CUDA/11.1.1, NVIDIA HPC SDK's nvhpc/24.3 whose PATH holds its CUDA): the
# first part of the name. cudnn, nccl and friends are separate modules and are not toolkits.
_FAMILIES = (r"cuda|cudatoolkit|cuda-toolkit|cuda_toolkit|nvidia-cuda|cudacore|nvhpc|nvhpc-nompi|nvhpc-hpcx|"
             r"nvhpc-hpcx-cuda\d+|nvhpc-byo-compiler")
_CUDA_FAMILY = _Pattern(f"^({_FAMILIES})$", re.IGNORECASE)
# Which variable names a toolkit's root, in the order sites use them (NVIDIA's docs say CUDA_HOME / CUDA_PATH;
# Spack and EasyBuild generate CUDA_HOME, CUDA_ROOT, EBROOTCUDA, EBROOTCUDACORE)
ROOT_VARS = ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_DIR", "CUDATOOLKIT_HOME", "CUDA_INSTALL_PATH", "EBROOTCUDA",
             "EBROOTCUDACORE")
# A modulefile is a few hundred bytes (EasyBuild's with their help text a few KiB); a larger file is not one, and
# this bound keeps every reading of one well under a second whatever its text.
_READ_LIMIT = 64 * 1024
_CACHE_LIMIT = 32 * 1024 * 1024  # a big site's spider cache is a few MiB
LMOD_SYSTEM, ENVMODULES_SYSTEM = "Lmod", "Environment Modules"


# collections' named tuples, not typing's: importing typing costs a TAB (CONTRIBUTING, imports)
ModuleFile = namedtuple("ModuleFile", [
    "name",  # cuda/12.4, as `module load` takes it
    "path",  # the modulefile, displayed
    "syntax",  # "lua" or "tcl"
    "root",  # the toolkit folder it sets up; None when that cannot be read without running it
    "why",  # with root None: what stops a static reading (default None)
    "folder",  # the MODULEPATH folder (or a spider cache's mpath) it is found under (default None)
    "rank",  # that folder's place on MODULEPATH (after every MODULEPATH folder: only a spider cache has it) (0)
    "foreign",  # as root: who else could have written the file, a folder above it or the cache (default None)
], defaults=(None, None, 0, None))

LoadedModule = namedtuple("LoadedModule", "name path")  # path: the modulefile, from _LMFILES_ (or None)


# a modulefile right in a MODULEPATH folder, its version in its name (cuda-8.0: `module load cuda-8.0`)
_CUDA_BARE = _Pattern(f"^({_FAMILIES})[-_]v?\\d[\\w.+-]*$", re.IGNORECASE)


def split_name(name: str) -> Optional[Tuple[str, str]]:
    """(family, version) of a CUDA module name as the module systems split it: cuda/12.4 -> (cuda, 12.4); a
    category folder before the family (compiler/nvhpc/21.9, as sites group modules) belongs to the family; a
    bare file (cuda-8.0) is a family with no version. None: not a CUDA module."""
    parts = name.split("/")
    for i, part in enumerate(parts[:2]):
        if _CUDA_FAMILY.match(part) and (i == 0 or len(parts) > 2):
            return "/".join(parts[:i + 1]), "/".join(parts[i + 1:])
    if len(parts) == 1 and _CUDA_BARE.match(name):
        return name, ""
    return None


def is_cuda_module(name: str) -> bool:
    return split_name(name) is not None


# ---- where modulefiles are ----------------------------------------------------------------------------------------

def module_paths(system: System) -> List[str]:
    """MODULEPATH's folders (both systems use that variable and ':' on every OS they run on)."""
    value = system.environ.get("MODULEPATH") or ""
    return list(dict.fromkeys(p.rstrip("/") or "/" for p in value.split(":") if p))


_LMODRC_BLOCK = _Pattern(r"scDescriptT\s*=\s*\{(.*?)\n\s*\}", re.S)
_LMODRC_DIR = _Pattern(r"""(?:\bdir|\[\s*["']dir["']\s*\])\s*=\s*["']([^"'\n]+)["']""")
# where Lmod keeps a user's cache: ~/.lmod.d/.cache (to 8.7.11), ~/.cache/lmod (8.7.12 on)
_USER_CACHE_DIRS = ((".lmod.d", ".cache"), (".cache", "lmod"))


def _spider_caches(system: System) -> List[str]:
    """Lmod's spider caches in text form: the system ones its lmodrc names (spiderT.lua in each scDescriptT dir),
    then the user's, as Lmod names it: spiderT.<arch>_<os>.lua (its groupName hook's name) before spiderT.lua.
    They list modulefiles under folders that are not on MODULEPATH yet (a hierarchy's compiler or MPI levels)."""
    rcs = [p for p in (system.environ.get("LMOD_RC") or "").split(":") if p] or [
        "/etc/lmod/lmodrc.lua", "/usr/share/lmod/lmod/init/lmodrc.lua"]
    out: List[str] = []
    for rc in rcs:
        text = _read_text(system, rc)
        block = _LMODRC_BLOCK.search(text) if text else None  # most machines have no lmodrc: nothing compiled
        for folder in _LMODRC_DIR.findall(block.group(1)) if block else ():
            out.append(system.join(folder, "spiderT.lua"))
    home = system.environ.get("HOME")
    for parts in _USER_CACHE_DIRS if home else ():
        folder = system.join(home, *parts)
        named = [n for n in _names(system.local(folder)) if n.startswith("spiderT.") and n.endswith(".lua")
                 and not n.startswith("spiderT.old")]
        # Lmod reads the first of its names that exists: the groupName one, else spiderT.lua
        named.sort(key=lambda n: n == "spiderT.lua")
        out += [system.join(folder, n) for n in named[:1]]
    return out


# an entry's fields up to its first nested table (fn and mpath sort before propT and whatis, and string values may
# hold braces); each field on its own line, as Lmod writes it
_SPIDER_ENTRY = _Pattern(r"""\[\s*"((?i:%s)/[^"\n]+)"\s*\]\s*=\s*\{((?:"(?:\\.|[^"\\\n])*"|[^{}"])*)""" % _FAMILIES)
_SPIDER_FIELD = {k: _Pattern(r"""^\s*(?:%s|\[\s*"%s"\s*\])\s*=\s*"([^"\n]*)\"""" % (k, k), re.M)
                 for k in ("fn", "mpath")}


def _from_spider_cache(system: System, cache: str) -> List[Tuple[str, str, Optional[str]]]:
    """(module name, modulefile, its MODULEPATH folder) for the CUDA entries of one cache; keys may be bare
    (`fn = "..."`, as Lmod writes) or quoted (`["fn"] = "..."`)."""
    text = _read_text(system, cache, _CACHE_LIMIT)
    out = []
    for name, body in _SPIDER_ENTRY.findall(text) if text else ():
        fn = _SPIDER_FIELD["fn"].search(body)
        if fn and is_cuda_module(name):
            mpath = _SPIDER_FIELD["mpath"].search(body)
            out.append((name, fn.group(1), mpath.group(1).rstrip("/") if mpath else None))
    return out


def _walk(system: System, folder: str) -> List[Tuple[str, str]]:
    """(module name, modulefile) for the CUDA modules under one MODULEPATH folder: <folder>/cuda/12.4[.lua], and one
    level deeper (<folder>/cuda/12.4/gcc-11) as some sites name builds. A `default` link is the module system's
    marker (read by _marked_default), not a module of its own. A listed folder's entries are listed at their local
    paths joined as text (os.path.join of a listed name is the path system.local gives it, without a Path each)."""
    found: List[Tuple[str, str]] = []
    families: List[Tuple[str, str]] = []  # (family, its local folder)
    base, shown = os.fspath(system.local(folder)), system.join(folder)
    family_match = _CUDA_FAMILY.match
    for entry, is_dir in _entries(base):
        if not is_dir:
            if _CUDA_BARE.match(_strip_lua(entry)):
                found.append((_strip_lua(entry), system.join(shown, entry)))
        elif family_match(entry):
            families.append((entry, os.path.join(base, entry)))
        else:  # a category folder (compiler/nvhpc/21.9): its CUDA families, one level down
            below = os.path.join(base, entry)
            families += [(f"{entry}/{sub}", os.path.join(below, sub)) for sub, sub_dir in _entries(below)
                         if sub_dir and family_match(sub)]
    for family, loc in families:
        top = system.join(shown, family)
        for entry, is_dir in _family_entries(loc):
            path = system.join(top, entry)
            if is_dir:
                for sub in _names(os.path.join(loc, entry)):
                    found.append((f"{family}/{entry}/{_strip_lua(sub)}", system.join(path, sub)))
            else:
                found.append((f"{family}/{_strip_lua(entry)}", path))
    return found


def _walked(system: System, folder: str) -> List[Tuple[str, str]]:
    """_walk, kept between TABs for each MODULEPATH folder while its listings are unchanged (pieces.piece)."""
    from cudaswitch.discovery.pieces import fits, piece

    def decode(value):
        if not fits(value, [[str, str]]):
            raise ValueError(value)
        return [(n, p) for n, p in value]

    return piece(("walk", folder), lambda: _walk(system, folder), lambda v: [[n, p] for n, p in v], decode)


def _listed(loc: "str | Path") -> list:
    """(name, DirEntry) of each entry, sorted, as _names leaves them; none when the folder cannot be listed."""
    try:
        with os.scandir(loc) as it:
            return sorted((e.name, e) for e in it if not e.name.startswith(".") and not e.name.endswith("~"))
    except OSError:
        return []


def _told(e) -> Tuple[Optional[bool], Optional[bool]]:
    """(is a link, is a folder) as the listing tells them, None for what it cannot tell: a link's folder is asked
    through os.path by the caller, since its target's kind can change while the folder's listing does not (the next
    TAB's record must see that stat, selector_cache), and a link into a folder this user may not search is no folder
    to her, not the end of the listing (DirEntry.is_dir raises there); so is an entry of a folder she may list but
    not search (chmod -R 644) whose kind the listing does not carry."""
    try:
        link = e.is_symlink()
        return link, None if link else e.is_dir()
    except OSError:
        return None, None


def _entries(loc: "str | Path") -> List[Tuple[str, bool]]:
    """(name, is a folder) of each entry, as _names leaves them; links are followed, as module systems do."""
    out: List[Tuple[str, bool]] = []
    for name, e in _listed(loc):
        is_dir = _told(e)[1]
        out.append((name, os.path.isdir(e.path) if is_dir is None else is_dir))
    return out


def _family_entries(loc: str) -> List[Tuple[str, bool]]:
    """(name, is a folder) of each entry of a family's folder but a `default` link (the module system's marker,
    read by _marked_default), as _entries gives them."""
    out: List[Tuple[str, bool]] = []
    for name, e in _listed(loc):
        link, is_dir = _told(e)
        if name == "default" and link is not False and (link or os.path.islink(e.path)):
            continue
        out.append((name, os.path.isdir(e.path) if is_dir is None else is_dir))
    return out


def _names(loc: "str | Path") -> List[str]:
    try:
        # dotfiles are the module systems' own (.version, .modulerc): which version is default, not a toolkit
        return sorted(n for n in os.listdir(loc) if not n.startswith(".") and not n.endswith("~"))
    except OSError:
        return []


def _strip_lua(name: str) -> str:
    return name[:-4] if name.endswith(".lua") else name


def _foreign(system: System, path: str) -> Optional[str]:
    """As root (core/trust's rule): who else could have written this file or a folder above it; else None."""
    from cudaswitch.core.trust import euid, path_problem

    if euid() != 0:
        return None
    return path_problem(system.local(path))


def cuda_modules(system: System) -> List[ModuleFile]:
    """Every CUDA modulefile MODULEPATH and Lmod's spider caches lead to, read, never run (a file that is not a
    modulefile, such as a README beside them, is left out). A name found in several folders is the one `module
    load` takes: the first MODULEPATH folder's (a cache entry ranks by its folder's place on MODULEPATH, after
    all of them when it is not on it); whether that one can be read or not, the others are not offered."""
    folders = module_paths(system)
    place = {f: n for n, f in enumerate(folders)}
    lua = module_system(system) != ENVMODULES_SYSTEM  # Environment Modules reads Tcl only: a .lua is no module
    pairs: List[Tuple[int, str, str, str, Optional[str]]] = []  # rank, name, path, folder, foreign (cache)
    for n, folder in enumerate(folders):
        pairs += [(n, name, path, folder, None) for name, path in _walked(system, folder)]
    for c, cache in enumerate(_spider_caches(system)):
        entries = _from_spider_cache(system, cache)
        cache_foreign = _foreign(system, cache) if entries else None
        for name, path, mpath in entries:
            rank = place.get(mpath, len(folders) + c) if mpath else len(folders) + c
            pairs.append((rank, name, path, mpath or os.path.dirname(os.path.dirname(path)),
                          M("its spider cache {cache} {why}", cache=cache, why=cache_foreign) if cache_foreign
                          else None))
    pairs.sort(key=lambda p: p[0])  # stable: within a folder, the walk's order
    if lua:  # Lmod: a copy its own folder marks as the default outranks the same name earlier on MODULEPATH
        marks: Dict[Tuple[str, str], Optional[str]] = {}
        pairs.sort(key=lambda p: not _is_marked(system, p[3], p[1], marks))
    out: List[ModuleFile] = []
    names: Dict[str, int] = {}
    for rank, name, path, folder, cache_foreign in pairs:
        if name in names or not lua and path.endswith(".lua"):  # shadowed by an earlier folder, or the cache
            continue  # naming what MODULEPATH already gave
        mf = _read_one(system, name, path)
        if mf is None:
            continue
        names[name] = len(out)
        out.append(mf._replace(folder=folder, rank=rank, foreign=cache_foreign or mf.foreign))
    return out


def _read_one(system: System, name: str, path: str) -> Optional[ModuleFile]:
    """read_modulefile, with (as root) who else could have written the file: kept between TABs for each file while
    what its reading looked at is unchanged (pieces.piece), so an edited modulefile is the only one read
    again."""
    from cudaswitch.discovery.pieces import piece, plain

    def compute():
        mf = read_modulefile(system, name, path)
        return mf if mf is None else mf._replace(foreign=_foreign(system, path))

    return piece(("modulefile", name, path), compute, plain, lambda v: None if v is None else kept_module_file(v))


_NONE_OR_STR = (str, type(None))
_KEPT = [str, str, str, _NONE_OR_STR, _NONE_OR_STR, _NONE_OR_STR, int, _NONE_OR_STR]  # ModuleFile's fields


def kept_module_file(value) -> ModuleFile:
    """A ModuleFile from its kept form (pieces.plain); ValueError when it has another shape."""
    from cudaswitch.discovery.pieces import fits, unplain

    value = unplain(value)
    if not fits(value, _KEPT):
        raise ValueError(value)
    return ModuleFile(*value)


# ---- reading one ------------------------------------------------------------------------------------------------

def _read_text(system: System, path: str, limit: int = _READ_LIMIT) -> Optional[str]:
    """A file cudaswitch does not own, read as a regular file only (a FIFO there cannot make `list` hang) and
    only up to `limit`: None when it cannot be read (_read_problem says why); links are followed, as module
    systems follow them (cuda/default -> 12.4)."""
    try:
        return _read_or_raise(system, path, limit)
    except OSError:
        return None


def _read_or_raise(system: System, path: str, limit: int = _READ_LIMIT) -> str:
    from cudaswitch.core.trust import read_bytes

    return read_bytes(system.local(path), limit).decode("utf-8", "replace")


def read_modulefile(system: System, name: str, path: str) -> Optional[ModuleFile]:
    """The toolkit folder one modulefile sets up, or None when the file is not a modulefile at all (a README, a
    FIFO, a folder). A modulefile that cannot be read (permission, size) is one, with that reason: a module
    system that can read it would load it."""
    from cudaswitch.core.trust import NotRegularFile, TooLarge

    syntax = "lua" if path.endswith(".lua") else "tcl"
    try:
        text = _read_or_raise(system, path)
    except NotRegularFile:
        return None
    except TooLarge:
        return ModuleFile(name, path, syntax, None, M("it is larger than {size} KiB, which no modulefile is",
                                                      size=_READ_LIMIT // 1024))
    except IsADirectoryError:
        return None
    except OSError as exc:
        return ModuleFile(name, path, syntax, None, M("cudaswitch cannot read it: {error}",
                                                      error=exc.strerror or str(exc)))
    version = (split_name(name) or (name, ""))[1] if "/" in name else ""
    if syntax == "lua":
        env, why = _lua_env(text, name, version)
    elif text.startswith("#%Module"):  # both module systems require this magic cookie on a Tcl modulefile
        env, why = _tcl_env(text, name, version, lambda p, kind: _file_test(system, p, kind))
    else:
        return None
    root, root_why = root_from(env, system)
    return ModuleFile(name, path, syntax, root, None if root else (why or root_why))


def _file_test(system: System, path: str, kind: str) -> Optional[bool]:
    """Tcl's `file isdirectory|exists|isfile PATH`, asked of the file system a load would see (a stat, nothing
    opened)."""
    loc = system.local(path)
    return {"isdirectory": loc.is_dir, "isfile": loc.is_file, "exists": loc.exists}[kind]()


def root_from(env: Dict[str, List[str]], system: Optional[System] = None) -> Tuple[Optional[str], Optional[str]]:
    """The toolkit folder the variables a modulefile sets point at: a root variable; else the parent of the bin on
    PATH where the shell will find nvcc (NVIDIA HPC SDK's puts its compilers' bin before its CUDA's), resolved
    when that bin is a link (the SDK's cuda/bin -> 12.3/bin); else PATH's first bin's parent; else lib64/lib's."""
    import posixpath

    for var in ROOT_VARS:
        values = env.get(var)
        if values and values[0].startswith("/"):
            return posixpath.normpath(values[0]), None
    bins = [posixpath.normpath(v) for v in env.get("PATH", [])]  # Spack writes <root>/./bin
    bins = [b for b in bins if b.rsplit("/", 1)[-1] == "bin" and b.rsplit("/", 1)[0]]
    if system is not None:
        for b in bins:
            loc = system.local(b)
            # os.path's answers: pathlib's raise PermissionError (3.9-3.13) where a folder on the way is closed
            # to this user (a licensed compiler's 0750 folder), and one module must not stop the whole pass
            if os.path.isfile(loc / "nvcc"):
                if os.path.islink(loc):
                    return posixpath.dirname(system.display(Path(os.path.realpath(loc)))), None
                return b.rsplit("/", 1)[0], None
    if bins:
        return bins[0].rsplit("/", 1)[0], None
    for var, leaf in (("LD_LIBRARY_PATH", "lib64"), ("LD_LIBRARY_PATH", "lib")):
        for value in env.get(var, []):
            parts = posixpath.normpath(value).rsplit("/", 1)
            if len(parts) == 2 and parts[1] == leaf and parts[0]:
                return parts[0], None
    return None, M("it sets neither CUDA_HOME (or CUDA_PATH, CUDA_ROOT) nor a bin folder on PATH")


class _Unresolved(Exception):
    """A value the modulefile computes from something only a load knows; args[0] says what (a message)."""


# messages, not marked constants: they are values inside other messages, and `tr` translates those only as M
_CANNOT_READ = M("an expression cudaswitch cannot read without running it")
_IN_CONDITION = M("is set inside a condition")
_SET_TWICE = M("is set twice")


# ---- Lua (Lmod) ---------------------------------------------------------------------------------------------------

# Lua's lexical grammar, scanned by hand in one pass: a long bracket is found with str.find from where it opens, so
# no input (256 KiB of `--[[` or `[[`) makes the reading quadratic; text Lua itself would refuse (an unclosed string
# or long bracket) ends the reading with that reason, as it ends Lmod's load. A quoted string's body is written
# unrolled (a run of plain characters, then an escape and its run, ...): the strings (?:\\.|[^"\\\n])* matches, but
# taken a run at a time instead of one alternation per character, which was a third of the scan of sites' files.
_LUA_LEX = _Pattern(r"""
    --\[(=*)\[.*?\]\1\] | (--[^\n]*) | \[(=*)\[\n?(.*?)\]\3\] | "([^"\\\n]*(?:\\.[^"\\\n]*)*)"
  | '([^'\\\n]*(?:\\.[^'\\\n]*)*)' | ([A-Za-z_][A-Za-z0-9_.:]*) | (\d+(?:\.\d+)?) | (\.\.|==|~=|<=|>=|\S)""",
                    re.S | re.X)
_LUA_LONG_START = _Pattern(r"(?:--)?\[=*\[")
_LUA_MAX_NESTING = 32  # parentheses and calls inside one value: sites write two or three

_LUA_BLOCK_OPEN = {"if", "for", "while", "function", "repeat"}
_LUA_SET = {"setenv": "set", "pushenv": "set", "prepend_path": "prepend", "append_path": "append"}


class _Broken(Exception):
    """Text the language's own parser refuses; args[0] says why (a message)."""


def _lua_tokens(text: str) -> List[Tuple[str, str]]:
    """Lua's tokens, by one regex pass. A long bracket with no close makes its alternative fail after one scan to
    the end; that is Lua's own "unfinished long string/comment", so the reading stops there (never rescanning, so
    no input is quadratic), as Lmod's load stops."""
    out: List[Tuple[str, str]] = []
    append = out.append
    for m in _LUA_LEX.finditer(text):
        kind = m.lastindex  # the commonest first: punctuation, names, quoted strings
        if kind == 9:
            op = m[9]
            if op in "\"'" or op == "[" and _LUA_LONG_START.match(text, m.start()):
                raise _Broken(M("Lua cannot parse it (a string or long bracket opened at byte {pos} is never "
                                "closed)", pos=m.start()))
            append(("op", op))
        elif kind == 7:
            append(("name", m[7]))
        elif kind == 5 or kind == 6:
            value = m[kind]
            append(("str", _lua_unescape(value) if "\\" in value else value))
        elif kind == 4:
            append(("str", m[4]))
        elif kind == 8:
            append(("num", m[8]))
        elif kind == 2:
            if m[2].startswith("--[") and _LUA_LONG_START.match(text, m.start()):
                raise _Broken(M("Lua cannot parse it (a string or long bracket opened at byte {pos} is never "
                                "closed)", pos=m.start()))
    return out


def _lua_unescape(s: str) -> str:
    if "\\" not in s:
        return s
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)


def _lua_env(text: str, name: str, version: str) -> Tuple[Dict[str, List[str]], Optional[str]]:
    try:
        toks = _lua_tokens(text)
    except _Broken as exc:
        return {}, exc.args[0]
    local: Dict[str, Optional[str]] = {}
    reasons: Dict[str, str] = {}  # why a local has no value
    env: Dict[str, List[str]] = {}
    why: Optional[str] = None
    depth = 0
    i = 0
    n = len(toks)

    # `level`: how many values this one is nested in (calls and parentheses); a depth no site writes is refused,
    # never recursed into
    def expr(j: int, level: int) -> Tuple[str, int]:
        """value .. value .. value, up to a ',' or ')'"""
        parts = []
        while True:
            tok = toks[j] if j < n else None
            if tok is not None and (tok[0] == "str" or tok[0] == "num") and level < _LUA_MAX_NESTING:
                v, j = tok[1], j + 1  # primary's commonest case, without the call
            else:
                v, j = primary(j, level)
            if j < n and toks[j] == ("op", ".."):
                parts.append(v)
                j += 1
                continue
            return "".join(parts + [v]) if parts else v, j

    def args(j: int, level: int) -> Tuple[List[str], int]:
        """the arguments of a call whose '(' is at j"""
        vals: List[str] = []
        j += 1
        if j < n and toks[j] == ("op", ")"):
            return vals, j + 1
        while j < n:
            v, j = expr(j, level)
            vals.append(v)
            if j < n:
                tok = toks[j]
                if tok == ("op", ","):
                    j += 1
                    continue
                if tok == ("op", ")"):
                    return vals, j + 1
            raise _Unresolved(_CANNOT_READ)
        raise _Unresolved(_CANNOT_READ)

    def primary(j: int, level: int) -> Tuple[str, int]:
        if level >= _LUA_MAX_NESTING or j >= n:
            raise _Unresolved(_CANNOT_READ)
        kind, value = toks[j]
        if kind == "str" or kind == "num":
            return value, j + 1
        if kind == "name":
            if j + 1 < n and toks[j + 1] == ("op", "("):
                if value in ("myModuleVersion", "myModuleFullName", "myModuleName"):
                    _, k = args(j + 1, level + 1)
                    return {"myModuleVersion": version, "myModuleFullName": name,
                            "myModuleName": name.split("/", 1)[0]}[value], k
                if value != "pathJoin":
                    raise _Unresolved(f"{value}(...)")
                vals, k = args(j + 1, level + 1)
                return "/".join(v.rstrip("/") if p < len(vals) - 1 else v for p, v in enumerate(vals) if v), k
            if value in local:
                if local[value] is None:
                    raise _Unresolved(M("'{name}', which {reason}", name=value,
                                        reason=reasons.get(value, _IN_CONDITION)))
                return local[value], j + 1
            raise _Unresolved(M("'{name}', which it does not set", name=value))
        if value == "(" and kind == "op":
            v, k = expr(j + 1, level + 1)
            if k < n and toks[k] == ("op", ")"):
                return v, k + 1
        raise _Unresolved(_CANNOT_READ)

    while i < n:
        kind, value = toks[i]
        if kind != "name":  # what follows acts on names only
            i += 1
            continue
        if value in _LUA_BLOCK_OPEN:
            depth += 1
        elif value == "end" or value == "until":
            depth = max(0, depth - 1)
        # local x = expr   /   x = expr
        assign = None
        after = toks[i + 1] if i + 1 < n else None
        if value == "local" and i + 2 < n and after[0] == "name" and toks[i + 2] == ("op", "="):
            assign, start = after[1], i + 3
        elif after == ("op", "=") and (i == 0 or toks[i - 1][0] != "op" or toks[i - 1][1] in (";", ")")):
            assign, start = value, i + 2
        if assign is not None:
            try:
                v, i = expr(start, 0)
            except _Unresolved as exc:
                v, i = exc, start + 1
            _assign(local, reasons, assign, v, depth)
            continue
        if value in _LUA_SET and after == ("op", "("):
            try:
                vals, k = args(i + 1, 0)
            except _Unresolved as exc:
                vals, k = None, i + 2
                var = toks[i + 2][1] if i + 2 < n and toks[i + 2][0] == "str" else None
                if var and _matters(var):
                    why = why or M("{var} comes from {what}", var=var, what=exc.args[0])
            if vals and len(vals) >= 2 and _matters(vals[0]):
                if depth:
                    why = why or M("{var} is set inside a condition", var=vals[0])
                else:
                    _record(env, vals[0], vals[1], _LUA_SET[value])
            i = k
            continue
        i += 1
    return env, why


def _assign(local: Dict[str, Optional[str]], reasons: Dict[str, str], key: str, value, depth: int) -> None:
    """A module variable (Lua `local x = ...`, Tcl `set x ...`) keeps a value only when it is set once, at the top
    level, from something readable; otherwise it has none, and `reasons` says why (`value` is then the _Unresolved)."""
    if isinstance(value, _Unresolved):
        local[key], reasons[key] = None, M("comes from {what}", what=value.args[0])
    elif depth or key in local:
        local[key], reasons[key] = None, _IN_CONDITION if depth else _SET_TWICE
    else:
        local[key] = value


def _matters(var: str) -> bool:
    return var in ROOT_VARS or var in ("PATH", "LD_LIBRARY_PATH")


def _record(env: Dict[str, List[str]], var: str, value: str, how: str) -> None:
    if how == "set":
        env[var] = [value]
    else:
        # prepend-path a:b adds two entries, as both systems split a value on ':'
        entries = [e for e in value.split(":") if e]
        env[var] = entries + env.get(var, []) if how == "prepend" else env.get(var, []) + entries


# ---- Tcl (Environment Modules, and Lmod's Tcl support) ------------------------------------------------------------

_TCL_SET = {"setenv": "set", "pushenv": "set", "prepend-path": "prepend", "append-path": "append"}


_TCL_SPECIAL = _Pattern(r"[{}\\]")
_TCL_QUOTE_END = _Pattern(r'["\\]')
_TCL_BRACKET = _Pattern(r"[\[\]\\]")
_TCL_BARE = _Pattern(r"[^\s;\[\\]+")
_TCL_MAX_DEPTH = 16  # blocks inside blocks: sites write one or two levels
# commands whose braced words are scripts run later, in a loop or not at all (if/else are decided below)
_TCL_BODIES = {"proc", "foreach", "while", "for", "switch", "catch", "eval", "uplevel", "namespace", "try",
               "dict", "lmap", "apply"}


class _Braced(str):
    """A braced Tcl word: its text, with no substitution, and where that text starts in the script."""

    at = 0


def _tcl_close(text: str, i: int, pattern, open_c: str, close_c: str, memo: Optional[Dict[int, int]] = None) -> int:
    """The index after the `close_c` that matches the `open_c` at i, found with one regex search per special
    character; a backslash hides the next character. Every pair seen on the way goes into `memo`, so a block
    inside a block is never scanned again (nested braces stay linear)."""
    if memo is not None and i in memo:
        return memo[i]
    opened, j = [i], i + 1
    while True:
        m = pattern.search(text, j)
        if m is None:
            raise _Broken(M("Tcl cannot parse it (a '{char}' opened at byte {pos} is never closed)", char=open_c,
                            pos=i))
        c = m.group(0)
        j = m.end()
        if c == "\\":
            j += 1
        elif c == open_c:
            opened.append(m.start())
        elif c == close_c:
            start = opened.pop()
            if memo is not None:
                memo[start] = j
            if not opened:
                return j


def _tcl_split(text: str, start: int = 0, end: Optional[int] = None,
               memo: Optional[Dict[int, int]] = None) -> Iterator[List[str]]:
    """The words of each command of the Tcl script text[start:end], without entering braces: a newline or ';'
    ends a command, braces group without substitution (a _Braced word), quotes group with substitution left for
    later, [..] stays in its word. One pass, no recursion: a braced script is split when the caller asks.
    Backslash-newlines must already be joined (both systems join them first)."""
    i, n = start, len(text) if end is None else end
    memo = {} if memo is None else memo
    words: List[str] = []
    while i < n:
        c = text[i]
        if c in "\n;":
            if words:
                yield words
                words = []
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "#" and not words:
            nl = text.find("\n", i, n)
            i = n if nl < 0 else nl
            continue
        if c == "{":
            j = _tcl_close(text, i, _TCL_SPECIAL, "{", "}", memo)
            if j > n:
                raise _Broken(M("Tcl cannot parse it (a '{char}' opened at byte {pos} is never closed)", char="{",
                                pos=i))
            word = _Braced(text[i + 1:j - 1])
            word.at = i + 1
            words.append(word)
            i = j
            continue
        if c == '"':
            j = i + 1
            while True:
                m = _TCL_QUOTE_END.search(text, j, n)
                if m is None:
                    raise _Broken(M("Tcl cannot parse it (a '{char}' opened at byte {pos} is never closed)",
                                    char='"', pos=i))
                if m.group(0) == "\\":
                    j = m.end() + 1
                    continue
                break
            words.append(text[i + 1:m.start()])
            i = m.end()
            continue
        begin = i
        while i < n:
            m = _TCL_BARE.match(text, i, n)
            if m:
                i = m.end()
            if i >= n or text[i] in " \t\r\n\f\v;":
                break
            if text[i] == "[":
                i = min(_tcl_close(text, i, _TCL_BRACKET, "[", "]"), n)
            else:  # a backslash: it and the character after it
                i += 2
        words.append(text[begin:i])
    if words:
        yield words


_TCL_FILE_TEST = _Pattern(r"\s*(!?)\s*\[\s*file\s+(isdirectory|exists|isfile)\s+([^\s\[\]]+)\s*\]\s*")


def _tcl_condition(word: str, local, name: str, version: str, reasons, probe) -> Optional[bool]:
    """An `if` condition decided from the file alone, or None: `[file isdirectory PATH]` (its negation, `exists`,
    `isfile`) of a path the file itself names is what the module system will find at load, asked of the same
    file system; anything else (mode(), is-loaded, the environment) only a load knows."""
    m = _TCL_FILE_TEST.fullmatch(word)
    if not m or probe is None:
        return None
    try:
        path = _tcl_subst(m.group(3), local, name, version, reasons)
    except _Unresolved:
        return None
    if not path.startswith("/"):
        return None
    got = probe(path, m.group(2))
    return None if got is None else got != bool(m.group(1))


def _tcl_branches(words: List[str], decide) -> List[Tuple[str, bool]]:
    """The bodies of `if c1 ?then? b1 elseif c2 b2 ... ?else? bn` that a load may run, each with whether it runs
    whenever the module loads (a shape Tcl refuses gives what was read up to there)."""
    out: List[Tuple[str, bool]] = []
    k, certain = 1, True
    while k < len(words):
        if words[k] == "else":
            if k + 1 < len(words):
                out.append((words[k + 1], certain))
            return out
        if k > 1:
            if words[k] != "elseif" or k + 2 >= len(words):
                return out
            k += 1
        cond = words[k]
        k += 1
        if k < len(words) and words[k] == "then":
            k += 1
        if k >= len(words):
            return out
        body = words[k]
        k += 1
        verdict = decide(cond) if certain else None
        if verdict is True:
            out.append((body, True))
            return out
        if verdict is None:
            certain = False
            out.append((body, False))
    return out


def _tcl_subst(word: str, local: Dict[str, Optional[str]], name: str, version: str,
               reasons: Optional[Dict[str, str]] = None) -> str:
    reasons = reasons if reasons is not None else {}
    if isinstance(word, _Braced):
        return str(word)

    def var(m):
        key = m.group(1) or m.group(2)
        if key.startswith("::env(") or key.startswith("env("):
            raise _Unresolved(f"${key}")
        if key not in local:
            raise _Unresolved(M("'{name}', which it does not set", name="$" + key))
        if local[key] is None:
            raise _Unresolved(M("'{name}', which {reason}", name="$" + key,
                                reason=reasons.get(key, _IN_CONDITION)))
        return local[key]

    def command(m):
        inner = m.group(1).split()
        if inner == ["module-info", "name"]:
            return name
        if inner[:2] == ["file", "tail"] and len(inner) == 3:
            return _tcl_subst(inner[2], local, name, version, reasons).rstrip("/").rsplit("/", 1)[-1]
        if inner[:2] == ["file", "join"]:
            return "/".join(_tcl_subst(w, local, name, version, reasons).rstrip("/") for w in inner[2:])
        if inner[:2] == ["file", "dirname"] and len(inner) == 3:
            return _tcl_subst(inner[2], local, name, version, reasons).rsplit("/", 1)[0]
        raise _Unresolved(f"[{m.group(1)}]")

    for _ in range(_TCL_MAX_DEPTH):  # innermost command first: [file tail [module-info name]]
        if "[" not in word:
            break
        new = _TCL_INNERMOST.sub(command, word)
        if new == word:
            break
        word = new
    else:
        if "[" in word:
            raise _Unresolved(_CANNOT_READ)
    return (_TCL_VAR.sub(var, word) if "$" in word else word).replace("\\", "")


_TCL_INNERMOST = _Pattern(r"\[([^\[\]]*)\]")
_TCL_VAR = _Pattern(r"\$\{([^{}]+)\}|\$((?:::)?[A-Za-z_][A-Za-z0-9_]*(?:\([^()]*\))?)")


def _tcl_env(text: str, name: str, version: str, probe=None) -> Tuple[Dict[str, List[str]], Optional[str]]:
    """What a Tcl modulefile sets, in the order a load runs it. Blocks are entered with an explicit stack (never
    recursion): an `if` whose condition the file decides (_tcl_condition) runs its chosen body as the top level
    does; any other block's commands are conditional (depth > 0), and nothing at a depth above 0 is taken as what
    the module always does."""
    local: Dict[str, Optional[str]] = {}
    reasons: Dict[str, str] = {}  # why a variable has no value
    env: Dict[str, List[str]] = {}
    why: Optional[str] = None
    text = text.replace("\\\n", " ")
    memo: Dict[int, int] = {}
    stack: List[Tuple[Iterator[List[str]], int, int]] = [(_tcl_split(text, 0, None, memo), 0, 0)]  # depth, nesting

    def decide(cond: str) -> Optional[bool]:
        return _tcl_condition(cond, local, name, version, reasons, probe)

    def enter(body, depth: int, level: int) -> None:
        nonlocal why
        if level > _TCL_MAX_DEPTH:
            if any(v in body for v in ROOT_VARS + ("PATH",)):
                why = why or M("its blocks nest deeper than {n} levels", n=_TCL_MAX_DEPTH)
            return
        stack.append((_tcl_split(text, body.at, body.at + len(body), memo), depth, level))

    try:
        while stack:
            words = next(stack[-1][0], None)
            if words is None:
                stack.pop()
                continue
            _, depth, level = stack[-1]
            cmd = words[0]
            if cmd == "if":
                for body, always in reversed(_tcl_branches(words, decide)):  # a stack: the first comes out first
                    enter(body, depth if always else depth + 1, level + 1)
                continue
            if cmd in _TCL_BODIES:
                for body in reversed([w for w in words[1:] if isinstance(w, _Braced)]):
                    enter(body, depth + 1, level + 1)
                continue
            if cmd == "set" and len(words) == 3:
                try:
                    value = _tcl_subst(words[2], local, name, version, reasons)
                except _Unresolved as exc:
                    value = exc
                _assign(local, reasons, words[1], value, depth)
                continue
            if cmd in _TCL_SET:
                rest, skip = [], False
                for w in words[1:]:  # --delim X / -d X take a value; --duplicates and friends do not
                    if skip:
                        skip = False
                    elif w in ("-d", "--delim"):
                        skip = True
                    elif not w.startswith("-"):
                        rest.append(w)
                if len(rest) < 2 or not _matters(rest[0]):
                    continue
                if depth:
                    why = why or M("{var} is set inside a condition", var=rest[0])
                    continue
                try:
                    values = [_tcl_subst(w, local, name, version, reasons) for w in rest[1:]]
                except _Unresolved as exc:
                    why = why or M("{var} comes from {what}", var=rest[0], what=exc.args[0])
                    continue
                for value in values if _TCL_SET[cmd] != "set" else values[:1]:
                    _record(env, rest[0], value, _TCL_SET[cmd])
    except _Broken as exc:
        return {}, exc.args[0]
    return env, why


# ---- which module a name loads (defaults) --------------------------------------------------------------------

def module_system(system: System) -> Optional[str]:
    """Which module system owns this shell's MODULEPATH: the one whose own variables its init left (Lmod's LMOD_CMD,
    LMOD_VERSION, LMOD_DIR; Environment Modules' MODULES_CMD), else the one installed where each installs itself
    (Lmod first: on a machine with both, `module` is Lmod's unless the shell says otherwise); None when neither."""
    env = system.environ
    if env.get("LMOD_CMD") or env.get("LMOD_VERSION") or env.get("LMOD_DIR"):
        return LMOD_SYSTEM
    if env.get("MODULES_CMD"):
        return ENVMODULES_SYSTEM
    for path in ("/usr/share/lmod/lmod/libexec/lmod", "/opt/apps/lmod/lmod/libexec/lmod", "/etc/profile.d/lmod.sh",
                 "/etc/profile.d/z00_lmod.sh", "/usr/local/lmod/lmod/libexec/lmod"):
        if system.local(path).exists():
            return LMOD_SYSTEM
    for path in ("/usr/share/modules/libexec/modulecmd.tcl", "/usr/lib/x86_64-linux-gnu/modulecmd.tcl",
                 "/usr/share/Modules/libexec/modulecmd.tcl", "/etc/profile.d/modules.sh"):
        if system.local(path).exists():
            return ENVMODULES_SYSTEM
    return None


_VERSION_FILE = _Pattern(r"""^\s*set\s+ModulesVersion\s+["{]?([^\s"{}]+)""", re.M)
_MODULERC_TCL = _Pattern(r"""^\s*module-version\s+["{]?([^\s"{}]+)["}]?\s+(?:[^\n]*\s)?default\b""", re.M)
_MODULERC_LUA = _Pattern(r"""module_version\s*\(\s*["']([^"']+)["']\s*,\s*["']default["']""")


def _marked_default(system: System, folder: str, family: str) -> Optional[Tuple[str, str]]:
    """The version a folder marks as the family's default, and how: a `default` link, .modulerc.lua or .modulerc
    (`module_version(...)`, `module-version ... default`), .version (`set ModulesVersion`)."""
    top = system.join(folder, family)
    try:
        present = set(os.listdir(system.local(top)))  # one listing instead of four opens that mostly fail
    except OSError:
        return None
    link = system.local(system.join(top, "default")) if "default" in present else None
    if link is not None and os.path.islink(link):
        try:
            target = os.readlink(link)
        except OSError:
            target = ""
        # a relative target (12.4.lua) or an absolute one back into this folder, as sites' links are
        real = os.path.realpath(link)
        if target and os.path.dirname(real) == os.path.realpath(system.local(top)):
            return _strip_lua(os.path.basename(real)), M("the {what} in {folder}", what="default link",
                                                         folder=top)
    for rc, pattern in ((".modulerc.lua", _MODULERC_LUA), (".modulerc", _MODULERC_TCL), (".version", _VERSION_FILE)):
        text = _read_text(system, system.join(top, rc)) if rc in present else None
        m = pattern.search(text) if text else None  # a pattern is compiled only for a file that is there
        if m:
            version = m.group(1)
            version = version.split("/", 1)[1] if version.startswith(family + "/") else version.lstrip("/")
            return version, M("the {what} in {folder}", what=rc, folder=top)
    return None


def _is_marked(system: System, folder: Optional[str], name: str, marks: Dict[Tuple[str, str], Optional[str]]) -> bool:
    """Whether `folder` marks `name` (cuda/12.4) as its family's default (each folder's marker read once)."""
    family, version = split_name(name) or (name, "")
    if folder is None or not version:
        return False
    if (folder, family) not in marks:
        from cudaswitch.discovery.pieces import piece

        got = piece(("default", folder, family), lambda: _marked_default(system, folder, family),
                    lambda got: got and got[0], _kept_default)
        marks[(folder, family)] = got[0] if got else None
    return marks[(folder, family)] == version


def _kept_default(value) -> Optional[Tuple[str, None]]:
    # only the version is kept: how it is marked is read again where that is said (resolve)
    if value is not None and not isinstance(value, str):
        raise ValueError(value)
    return value and (value, None)


def _version_key(version: str):
    """Lmod's and Environment Modules' order of versions: numbers as numbers (12.10 after 12.6)."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.findall(r"\d+|[A-Za-z]+", version)]


def _split(mf: ModuleFile) -> Tuple[str, str]:
    return split_name(mf.name) or (mf.name, "")


# module (ModuleFile); rule: which of the module system's rules chose it (None: the name is the module's own)
Resolution = namedtuple("Resolution", "module rule")


def resolve(system: System, modules: List[ModuleFile], selector: str) -> Optional[Resolution]:
    """The module `module load SELECTOR` would load, by the rules of the module system that owns MODULEPATH; None
    when the selector names no CUDA module family on MODULEPATH at all.

    Measured with Lmod 8.6 and Environment Modules 5.2 on MODULEPATH=A:B (docs/design/modules.md): an exact name
    is the first folder's, except that under Lmod a copy its folder marks as default wins (cuda_modules). A bare
    family (`cuda`) or `cuda/default`: Lmod takes the highest marked default of any folder, else the highest
    version over all folders; Environment Modules looks only in the first folder holding the family: its marked
    default, else its highest version. A partial version (`cuda/12`, the "extended default" both have): the
    highest `12.*` (Lmod: a marked one first), over all folders (Lmod) or in that first folder (Environment
    Modules)."""
    selector = selector.strip().rstrip("/")
    split = split_name(selector) or split_name(selector + "/")
    exact = next((m for m in modules if m.name == selector), None)
    if exact is not None:
        return Resolution(exact, None)
    if split is None:
        return None
    family, version = split
    same = [m for m in modules if _split(m)[0] == family and m.folder is not None]
    if not same:
        return None
    owner = module_system(system) or LMOD_SYSTEM
    lmod = owner == LMOD_SYSTEM
    folders = list(dict.fromkeys(m.folder for m in sorted(same, key=lambda m: m.rank)))
    if not lmod:
        same = [m for m in same if m.folder == folders[0]]
    pool = same if version in ("", "default") else \
        [m for m in same if _split(m)[1].startswith(version + ".")]
    if not pool:
        return None
    marks: Dict[Tuple[str, str], Optional[str]] = {}
    marked = [m for m in pool if _is_marked(system, m.folder, m.name, marks)]
    if lmod and marked or not lmod and version in ("", "default") and marked:
        # Lmod weighs a marked default above every unmarked version, on any MODULEPATH folder; the highest
        # marked one wins (measured: marks in two folders give the higher version)
        best = max(marked, key=lambda m: (_version_key(_split(m)[1]), -m.rank))
        how = _marked_default(system, best.folder, family)
        return Resolution(best, M("{system}'s default: {how}", system=owner, how=how[1] if how else best.path))
    how = M("the highest version") if version in ("", "default") else \
        M("the highest {version}.* version", version=version)
    best = max(pool, key=lambda m: (_version_key(_split(m)[1]), -m.rank))
    where = M("over all of MODULEPATH") if lmod else M("in {folder}, the first MODULEPATH folder holding {family}",
                                                       folder=folders[0], family=family)
    return Resolution(best, M("{system}'s rule: {how} {where}", system=owner, how=how, where=where))


# ---- loaded now ---------------------------------------------------------------------------------------------------

def loaded_cuda_modules(environ) -> List[LoadedModule]:
    """The CUDA modules loaded in this shell: LOADEDMODULES and _LMFILES_, which both module systems keep in step."""
    names = [n for n in (environ.get("LOADEDMODULES") or "").split(":") if n]
    files = [f for f in (environ.get("_LMFILES_") or "").split(":") if f]
    by_name = dict(zip(names, files)) if len(names) == len(files) else {}
    return [LoadedModule(n, by_name.get(n)) for n in names if is_cuda_module(n)]


def unresolved_warning(mf: ModuleFile) -> str:
    return M("module {name} ({path}): its toolkit folder cannot be read from the file without running it ({why}); "
             "cudaswitch never runs modulefiles: give the folder instead (cudaswitch use /path/to/cuda)",
             name=mf.name, path=mf.path, why=mf.why)


# ---- writing one (cudaswitch modulefile) --------------------------------------------------------------------------

LMOD, TCL = "lua", "tcl"


# name (cuda/13.0), syntax, text; path: where it was written (None when printed); unchanged: the same text was there
Export = namedtuple("Export", "name syntax text path unchanged", defaults=(None, False))


def default_syntax(system: System) -> str:
    """Lua where Lmod owns MODULEPATH (it reads both; Lua has family() and pushenv for every Lmod), also in a
    shell that lost Lmod's variables (`env -i`): then Lmod installed on the machine decides (module_system); else
    Tcl, which both module systems read."""
    return LMOD if module_system(system) == LMOD_SYSTEM else TCL


def module_name(tk, name: Optional[str]) -> str:
    if name:
        if name.startswith("/") or ".." in name.split("/") or "/" not in name or name.endswith("/"):
            from cudaswitch.core.errors import UsageError

            raise UsageError(M("--name {name!r}: give NAME/VERSION as 'module load' takes it, such as cuda/12.4",
                               name=name))
        return name
    return f"cuda/{tk.cuda.major}.{tk.cuda.minor}"


def _lua_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _tcl_word(s: str) -> str:
    # braces quote everything in Tcl except an unbalanced brace or a trailing backslash, which no toolkit path has
    if re.fullmatch(r"[A-Za-z0-9_./:+=@%,-]+", s):
        return s
    if "{" in s or "}" in s or s.endswith("\\"):
        from cudaswitch.core.errors import UsageError

        raise UsageError(M("{path}: a folder whose name holds a brace cannot be written into a Tcl modulefile; use "
                           "--lmod", path=s))
    return "{" + s + "}"


def render(tk, syntax: str, name: str) -> str:
    """The modulefile a site admin would keep for `tk`: one family/conflict so that two CUDA modules never stack,
    pushenv so that unloading gives back the CUDA_HOME and CUDA_PATH that were there before
    (docs/guide/clusters.md), PATH and LD_LIBRARY_PATH from the folders cudaswitch found."""
    title = f"CUDA Toolkit {tk.version} ({tk.root})"
    family = name.split("/", 1)[0]
    if syntax == LMOD:
        lines = [f"-- {title}", "-- written by 'cudaswitch modulefile'; its version read from the toolkit's files",
                 f"help([[{title}]])", 'whatis("Name: CUDA Toolkit")', f'whatis("Version: {tk.version}")',
                 f"family({_lua_str(family)})", f"local root = {_lua_str(tk.root)}",
                 'pushenv("CUDA_HOME", root)', 'pushenv("CUDA_PATH", root)']
        lines += [f'prepend_path("PATH", {_lua_str(b)})' for b in reversed(tk.bin_dirs)]
        lines += [f'prepend_path("LD_LIBRARY_PATH", {_lua_str(lib)})' for lib in reversed(tk.lib_dirs)]
    else:
        lines = ["#%Module1.0", f"## {title}", "## written by 'cudaswitch modulefile'; its version read from the "
                 "toolkit's files", "proc ModulesHelp { } {", f"    puts stderr {_tcl_word(title)}", "}",
                 f"module-whatis {_tcl_word(title)}", f"conflict {_tcl_word(family)}",
                 f"set root {_tcl_word(tk.root)}", "pushenv CUDA_HOME $root", "pushenv CUDA_PATH $root"]
        lines += [f"prepend-path PATH {_tcl_word(b)}" for b in reversed(tk.bin_dirs)]
        lines += [f"prepend-path LD_LIBRARY_PATH {_tcl_word(lib)}" for lib in reversed(tk.lib_dirs)]
    return "\n".join(lines) + "\n"


def export(tk, syntax: str, name: str, folder: Optional[Path], force: bool = False) -> Export:
    """Render, and with `folder` write FOLDER/NAME[.lua] atomically (a folder another user could swap is refused,
    as for every write: core/trust). A different file already there is kept unless `force`."""
    from cudaswitch.core.errors import CudaswitchError
    from cudaswitch.core.trust import open_named_dir, read_regular, regular_stat, write_at

    text = render(tk, syntax, name)
    if folder is None:
        return Export(name, syntax, text)
    *subdirs, leaf = name.split("/")
    leaf += ".lua" if syntax == LMOD else ""
    target = folder.joinpath(*subdirs, leaf)
    fd = open_named_dir(folder, subdirs, M("write a modulefile into {folder}", folder=folder),
                        M("give a folder only root can write, reached through no other user's link"), create=True)
    try:
        other = leaf[:-4] if syntax == LMOD else leaf + ".lua"
        if regular_stat(fd, other) is not None and not force:
            # Lmod reads both and would pick one of the two; Environment Modules would list both
            raise CudaswitchError(M("{path} already exists in the other syntax; remove it, or give --force to "
                                    "write this one beside it; nothing was changed", path=target.with_name(other)))
        st = regular_stat(fd, leaf)
        if st is not None:
            old = read_regular(fd, leaf, _READ_LIMIT)
            if old is not None and old.decode("utf-8", "replace") == text:
                return Export(name, syntax, text, str(target), unchanged=True)
            if not force:
                raise CudaswitchError(M("{path} exists and differs; give --force to replace it; nothing was changed",
                                        path=target))
        write_at(fd, leaf, text.encode("utf-8"))
    finally:
        os.close(fd)
    return Export(name, syntax, text, str(target))
