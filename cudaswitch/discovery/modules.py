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
from pathlib import Path
from typing import Dict, Iterable, List, NamedTuple, Optional, Tuple

from cudaswitch.core.i18n import M
from cudaswitch.core.system import System

# The module names sites give CUDA (cuda/12.4, CUDA/12.4, cudatoolkit/12.4, cuda-toolkit/12.4): the first part of
# the name. cudnn, nccl and friends are separate modules and are not toolkits.
_CUDA_FAMILY = re.compile(r"^(cuda|cudatoolkit|cuda-toolkit|cuda_toolkit|nvidia-cuda)$", re.IGNORECASE)
# Which variable names a toolkit's root, in the order sites use them (NVIDIA's docs say CUDA_HOME / CUDA_PATH;
# Spack and EasyBuild generate CUDA_HOME, CUDA_ROOT, EBROOTCUDA)
ROOT_VARS = ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_DIR", "CUDATOOLKIT_HOME", "CUDA_INSTALL_PATH", "EBROOTCUDA")
_READ_LIMIT = 256 * 1024  # a modulefile is a few hundred bytes; a larger file is not one


class ModuleFile(NamedTuple):
    name: str  # cuda/12.4, as `module load` takes it
    path: str  # the modulefile, displayed
    syntax: str  # "lua" or "tcl"
    root: Optional[str]  # the toolkit folder it sets up; None when that cannot be read without running it
    why: Optional[str] = None  # with root None: what stops a static reading


class LoadedModule(NamedTuple):
    name: str
    path: Optional[str]  # the modulefile, from _LMFILES_


def is_cuda_module(name: str) -> bool:
    return bool(_CUDA_FAMILY.match(name.split("/", 1)[0]))


# ---- where modulefiles are ----------------------------------------------------------------------------------------

def module_paths(system: System) -> List[str]:
    """MODULEPATH's folders (both systems use that variable and ':' on every OS they run on)."""
    value = system.environ.get("MODULEPATH") or ""
    return list(dict.fromkeys(p for p in value.split(":") if p))


def _spider_caches(system: System) -> List[str]:
    """Lmod's spider caches in text form (spiderT.lua): the system ones its lmodrc names, then the user's. They list
    modulefiles under folders that are not on MODULEPATH yet (a hierarchy's compiler or MPI levels)."""
    rcs = [p for p in (system.environ.get("LMOD_RC") or "").split(":") if p] or [
        "/etc/lmod/lmodrc.lua", "/usr/share/lmod/lmod/init/lmodrc.lua"]
    out: List[str] = []
    for rc in rcs:
        text = _read_text(system, rc)
        block = re.search(r"scDescriptT\s*=\s*\{(.*?)\n\s*\}", text or "", re.S)
        for folder in re.findall(r"""dir\s*=\s*["']([^"']+)["']""", block.group(1) if block else ""):
            out.append(system.join(folder, "spiderT.lua"))
    home = system.environ.get("HOME")
    if home:
        out.append(system.join(home, ".lmod.d", ".cache", "spiderT.lua"))
    return out


_SPIDER_ENTRY = re.compile(r"""\[\s*"([^"]+)"\s*\]\s*=\s*\{[^{}]*?\bfn\s*=\s*"([^"]+)\"""")


def _from_spider_cache(system: System, cache: str) -> List[Tuple[str, str]]:
    text = _read_text(system, cache)
    if not text:
        return []
    return [(name, fn) for name, fn in _SPIDER_ENTRY.findall(text) if is_cuda_module(name)]


def _walk(system: System, folder: str) -> List[Tuple[str, str]]:
    """(module name, modulefile) for the CUDA modules under one MODULEPATH folder: <folder>/cuda/12.4[.lua], and one
    level deeper (<folder>/cuda/12.4/gcc-11) as some sites name builds."""
    found: List[Tuple[str, str]] = []
    for family in _names(system.local(folder)):
        if not _CUDA_FAMILY.match(family):
            continue
        top = system.join(folder, family)
        for entry in _names(system.local(top)):
            path = system.join(top, entry)
            if system.local(path).is_dir():
                for sub in _names(system.local(path)):
                    found.append((f"{family}/{entry}/{_strip_lua(sub)}", system.join(path, sub)))
            else:
                found.append((f"{family}/{_strip_lua(entry)}", path))
    return found


def _names(loc: Path) -> List[str]:
    try:
        # dotfiles are the module systems' own (.version, .modulerc): which version is default, not a toolkit
        return sorted(n for n in os.listdir(loc) if not n.startswith(".") and not n.endswith("~"))
    except OSError:
        return []


def _strip_lua(name: str) -> str:
    return name[:-4] if name.endswith(".lua") else name


def cuda_modules(system: System) -> List[ModuleFile]:
    """Every CUDA modulefile MODULEPATH and Lmod's spider caches lead to, read, never run (a file that is not a
    modulefile, such as a README beside them, is left out)."""
    seen: Dict[str, int] = {}
    out: List[ModuleFile] = []
    pairs: List[Tuple[str, str]] = []
    for folder in module_paths(system):
        pairs += _walk(system, folder)
    for cache in _spider_caches(system):
        pairs += _from_spider_cache(system, cache)
    for name, path in pairs:
        loc = system.local(path)
        real = os.path.realpath(loc)
        if real in seen:  # cuda/default -> 12.4, or the cache naming a file MODULEPATH already gave
            continue
        mf = read_modulefile(system, name, path)
        if mf is None:
            continue
        seen[real] = len(out)
        out.append(mf)
    return out


# ---- reading one ------------------------------------------------------------------------------------------------

def _read_text(system: System, path: str) -> Optional[str]:
    """A file cudaswitch does not own, read as a regular file only (a FIFO there cannot make `list` hang) and only
    its first 256 KiB (core/trust's reading door); links are followed, as module systems follow them (cuda/default ->
    12.4)."""
    from cudaswitch.core.trust import read_bytes

    try:
        data = read_bytes(system.local(path), _READ_LIMIT, truncate=True)
    except OSError:
        return None
    return data.decode("utf-8", "replace")


def read_modulefile(system: System, name: str, path: str) -> Optional[ModuleFile]:
    """The toolkit folder one modulefile sets up, or None when the file is not a modulefile at all."""
    text = _read_text(system, path)
    if text is None:
        return None
    version = name.split("/", 1)[1] if "/" in name else ""
    if path.endswith(".lua"):
        env, why = _lua_env(text, name, version)
        syntax = "lua"
    elif text.startswith("#%Module"):  # both module systems require this magic cookie on a Tcl modulefile
        env, why = _tcl_env(text, name, version)
        syntax = "tcl"
    else:
        return None
    root, root_why = root_from(env)
    return ModuleFile(name, path, syntax, root, None if root else (why or root_why))


def root_from(env: Dict[str, List[str]]) -> Tuple[Optional[str], Optional[str]]:
    """The toolkit folder the variables a modulefile sets point at: a root variable, else PATH's bin's parent."""
    import posixpath

    for var in ROOT_VARS:
        values = env.get(var)
        if values and values[0].startswith("/"):
            return posixpath.normpath(values[0]), None
    for var, leaf in (("PATH", "bin"), ("LD_LIBRARY_PATH", "lib64"), ("LD_LIBRARY_PATH", "lib")):
        for value in env.get(var, []):
            parts = posixpath.normpath(value).rsplit("/", 1)  # Spack writes <root>/./bin
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

_LUA_TOKEN = re.compile(r"""
    (?P<comment>--\[(?P<eq>=*)\[.*?\](?P=eq)\]|--[^\n]*)
  | (?P<long>\[(?P<eq2>=*)\[.*?\](?P=eq2)\])
  | (?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<name>[A-Za-z_][A-Za-z0-9_.:]*)
  | (?P<num>\d+(?:\.\d+)?)
  | (?P<op>\.\.|==|~=|<=|>=|[(){}\[\],=;<>+\-*/#])
  | (?P<ws>\s+)
""", re.S | re.X)

_LUA_BLOCK_OPEN = {"if", "for", "while", "function", "repeat"}
_LUA_SET = {"setenv": "set", "pushenv": "set", "prepend_path": "prepend", "append_path": "append"}


def _lua_tokens(text: str) -> List[Tuple[str, str]]:
    out: List[Tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _LUA_TOKEN.match(text, pos)
        if not m:
            out.append(("op", text[pos]))
            pos += 1
            continue
        pos = m.end()
        kind = m.lastgroup
        if kind in ("comment", "ws"):
            continue
        if kind == "eq" or kind == "eq2":
            kind = "long" if m.group("long") else "comment"
            if kind == "comment":
                continue
        value = m.group(0)
        if kind == "str":
            value = _lua_unescape(value[1:-1])
        elif kind == "long":
            value = re.sub(r"^\[=*\[\n?|\]=*\]$", "", value)
            kind = "str"
        out.append((kind, value))
    return out


def _lua_unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)


def _lua_env(text: str, name: str, version: str) -> Tuple[Dict[str, List[str]], Optional[str]]:
    toks = _lua_tokens(text)
    local: Dict[str, Optional[str]] = {}
    reasons: Dict[str, str] = {}  # why a local has no value
    env: Dict[str, List[str]] = {}
    why: Optional[str] = None
    depth = 0
    i = 0

    def expr(j: int) -> Tuple[str, int]:
        """value .. value .. value, up to a ',' or ')'"""
        parts = []
        while True:
            v, j = primary(j)
            parts.append(v)
            if j < len(toks) and toks[j] == ("op", ".."):
                j += 1
                continue
            return "".join(parts), j

    def args(j: int) -> Tuple[List[str], int]:
        """the arguments of a call whose '(' is at j"""
        vals: List[str] = []
        j += 1
        if j < len(toks) and toks[j] == ("op", ")"):
            return vals, j + 1
        while j < len(toks):
            v, j = expr(j)
            vals.append(v)
            if j < len(toks) and toks[j] == ("op", ","):
                j += 1
                continue
            if j < len(toks) and toks[j] == ("op", ")"):
                return vals, j + 1
            raise _Unresolved(_CANNOT_READ)
        raise _Unresolved(_CANNOT_READ)

    def primary(j: int) -> Tuple[str, int]:
        if j >= len(toks):
            raise _Unresolved(_CANNOT_READ)
        kind, value = toks[j]
        if kind in ("str", "num"):
            return value, j + 1
        if kind == "name":
            if j + 1 < len(toks) and toks[j + 1] == ("op", "("):
                vals, k = args(j + 1)
                if value == "pathJoin":
                    return "/".join(v.rstrip("/") if n < len(vals) - 1 else v for n, v in enumerate(vals) if v), k
                if value in ("myModuleVersion", "myModuleFullName", "myModuleName"):
                    return {"myModuleVersion": version, "myModuleFullName": name,
                            "myModuleName": name.split("/", 1)[0]}[value], k
                raise _Unresolved(f"{value}(...)")
            if value in local:
                if local[value] is None:
                    raise _Unresolved(M("'{name}', which {reason}", name=value,
                                        reason=reasons.get(value, _IN_CONDITION)))
                return local[value], j + 1
            raise _Unresolved(M("'{name}', which it does not set", name=value))
        if (kind, value) == ("op", "("):
            v, k = expr(j + 1)
            if k < len(toks) and toks[k] == ("op", ")"):
                return v, k + 1
        raise _Unresolved(_CANNOT_READ)

    while i < len(toks):
        kind, value = toks[i]
        if kind == "name" and value in _LUA_BLOCK_OPEN:
            depth += 1
        elif kind == "name" and value == "end" or (kind, value) == ("name", "until"):
            depth = max(0, depth - 1)
        # local x = expr   /   x = expr
        assign = None
        if kind == "name" and value == "local" and i + 2 < len(toks) and toks[i + 1][0] == "name" \
                and toks[i + 2] == ("op", "="):
            assign, start = toks[i + 1][1], i + 3
        elif kind == "name" and i + 1 < len(toks) and toks[i + 1] == ("op", "=") and \
                (i == 0 or toks[i - 1][0] != "op" or toks[i - 1][1] in (";", ")")):
            assign, start = value, i + 2
        if assign is not None:
            try:
                v, i = expr(start)
            except _Unresolved as exc:
                v, i = exc, start + 1
            _assign(local, reasons, assign, v, depth)
            continue
        if kind == "name" and value in _LUA_SET and i + 1 < len(toks) and toks[i + 1] == ("op", "("):
            try:
                vals, k = args(i + 1)
            except _Unresolved as exc:
                vals, k = None, i + 2
                var = toks[i + 2][1] if i + 2 < len(toks) and toks[i + 2][0] == "str" else None
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


def _tcl_commands(text: str, depth: int = 0) -> Iterable[Tuple[int, List[str]]]:
    """(depth, words) for each command: a newline or ';' ends one, braces group (and nest) without substitution,
    quotes group with substitution left for later, a backslash-newline joins lines. A braced word that spans lines
    is a body (of if, else, proc, foreach): its commands come out too, one level deeper, and nothing at a depth
    above 0 is taken as what the module always does."""
    text = text.replace("\\\n", " ")
    words: List[str] = []
    word = ""
    in_word = False
    i, n = 0, len(text)
    at_start = True
    while i < n:
        c = text[i]
        if at_start and c in " \t":
            i += 1
            continue
        if at_start and c == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        at_start = False
        if c in "\n;":
            if in_word:
                words.append(word)
            if words:
                yield depth, words
            words, word, in_word, at_start = [], "", False, True
            i += 1
            continue
        if c in " \t":
            if in_word:
                words.append(word)
                word, in_word = "", False
            i += 1
            continue
        if c == "{" and not in_word:
            j, level = i + 1, 1
            while j < n and level:
                if text[j] == "\\":
                    j += 2
                    continue
                level += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            body = text[i + 1:j - 1]
            if "\n" in body:
                yield from _tcl_commands(body, depth + 1)
            words.append("\x00" + body)  # braced: no substitution
            i = j
            continue
        if c == '"' and not in_word:
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            word, in_word = text[i + 1:j], True
            i = j + 1
            continue
        if c == "[":
            j, level = i + 1, 1
            while j < n and level:
                level += {"[": 1, "]": -1}.get(text[j], 0)
                j += 1
            word += text[i:j]
            in_word = True
            i = j
            continue
        word += c
        in_word = True
        i += 1
    if in_word:
        words.append(word)
    if words:
        yield depth, words


def _tcl_subst(word: str, local: Dict[str, Optional[str]], name: str, version: str,
               reasons: Optional[Dict[str, str]] = None) -> str:
    reasons = reasons if reasons is not None else {}
    if word.startswith("\x00"):
        return word[1:]

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

    while "[" in word:  # innermost command first: [file tail [module-info name]]
        new = re.sub(r"\[([^\[\]]*)\]", command, word)
        if new == word:
            break
        word = new
    return re.sub(r"\$\{([^}]+)\}|\$((?:::)?[A-Za-z_][A-Za-z0-9_]*(?:\([^)]*\))?)", var, word).replace("\\", "")


def _tcl_env(text: str, name: str, version: str) -> Tuple[Dict[str, List[str]], Optional[str]]:
    local: Dict[str, Optional[str]] = {}
    reasons: Dict[str, str] = {}  # why a variable has no value
    env: Dict[str, List[str]] = {}
    why: Optional[str] = None
    for depth, words in _tcl_commands(text):
        cmd = words[0]
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
    return env, why


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


class Export(NamedTuple):
    name: str  # cuda/13.0
    syntax: str
    text: str
    path: Optional[str] = None  # where it was written; None when printed
    unchanged: bool = False  # the same text was already there


def default_syntax(environ) -> str:
    """Lua where Lmod runs this shell (it reads both; Lua has family() and pushenv for every Lmod), else Tcl, which
    both module systems read."""
    return LMOD if (environ.get("LMOD_CMD") or environ.get("LMOD_VERSION")) else TCL


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
