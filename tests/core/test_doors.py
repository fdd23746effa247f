"""The doors (docs/design/security.md): every read of a file cudaswitch does not own, every program it starts and
every write into a target goes through cudaswitch/core/trust.py. This test walks the package's syntax tree and fails
on a raw call anywhere else, naming the call and the door to use instead, so a new feature cannot skip the checks
(FIFOs and /dev/zero, size limits, another user's executables and symlinks) by accident."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from conftest import REPO

PACKAGE = REPO / "cudaswitch"
DOORS = "cudaswitch/core/trust.py"  # the doors themselves: the one module allowed raw calls

READ = "trust.read_text / read_bytes / read_json / open_regular (regular files only, never a FIFO or /dev/zero, size limit)"
OWN = "trust.package_text for cudaswitch's own files"
WRITE = "trust.write_file (atomic replace, mode and owner kept, no foreign symlink) or trust.create_new (O_EXCL)"
START = ("trust.run_program (timeout, stdin closed, as root no program another user could have put there) or "
         "trust.run_python (cudaswitch's own Python: -I, from /)")
DOOR_FOR = {
    "open": f"{READ}; to write: {WRITE}",
    "Path.open": READ,
    "read_text": f"{READ}; {OWN}",
    "read_bytes": READ,
    "write_text": WRITE,
    "write_bytes": WRITE,
    "os.open": "trust.open_regular / trust.open_dir / trust.create_new",
    "os.fdopen": "trust.open_regular / trust.create_new",
    "subprocess": START,
    "os.exec": "trust.exec_program (the command the user typed) or trust.run_program",
    "os.spawn": START,
    "os.replace": "trust.move (or trust.write_file to replace a file's content)",
    "shutil.rmtree": "trust.remove_tree",
    "shutil.move": "trust.move",
    "shutil.copy": "trust.write_file with the content read through a door (a copy must not follow a planted link)",
    "os.change": ("trust.make_dirs / make_dir / remove / remove_dir / symlink / chown / set_mode, or the no-follow "
                  "trust.write_at / unlink_at inside a folder another user may control"),
    "Path.change": "the same doors as os.change (trust.make_dirs, trust.remove, ...)",
    "os.fork": f"{START} (a fork or another process pool runs cudaswitch's code beside the doors)",
    "ctypes": "no library is loaded in cudaswitch's own process; a probe loads it in a child (trust.run_python)",
    "tempfile": "trust.private_dir / trust.private_temp_dir",
    "json": "trust.read_json / trust.parse_json (a depth limit, one line for a file nested too deeply)",
    "marshal": "trust.parse_kept (only a cache file of the user's own, read through trust.open_regular)",
    "dynamic": "a plain import and the attribute by name, so that this test can see what is called",
    "archive": "trust.open_regular, then tarfile.open(fileobj=...) / zipfile.ZipFile(the file object)",
}

# (file, function, call) -> why that one raw call is safe by construction: the call is named as this test prints
# it (its first line), so a second raw call in the same function is not let through with it. Keep it short: each
# entry is a door a reviewer must trust.
_PROBE = ("runs inside the environment's own Python and imports nothing of cudaswitch (it cannot use the doors): it "
          "loads the driver library, reads /proc/cpuinfo and writes its record into the private temporary folder "
          "runner.run_probe created for it")
_UNPACK = ("members of a wheel already hashed, written into cudaswitch's own 0700 staging folder with O_NOFOLLOW "
           "after every path was checked not to leave it (zip-slip)")
_RECORDER = "the completion cache's recorder wraps them for one discovery pass and calls them with the same arguments"
ALLOW: Dict[Tuple[str, str, str], str] = {
    # named, not called: discovery's own calls go through its doors as before, and the recorder notes their paths
    ("cudaswitch/discovery/selector_cache.py", "<module>", "os.open"): _RECORDER,
    ("cudaswitch/discovery/selector_cache.py", "<module>", "builtins.open"): _RECORDER,
    ("cudaswitch/discovery/selector_cache.py", "_Recorder.__enter__", "builtins.open"): _RECORDER,
    ("cudaswitch/discovery/selector_cache.py", "_Recorder.__exit__", "builtins.open"): _RECORDER,
    # pip's output is streamed line by line (its retry warnings reach the user as they happen), which run_program,
    # waiting for the end, cannot do; it is started as `python -I -m pip` from "/" with stdin closed
    ("cudaswitch/discovery/toolkit_install.py", "_pip", "subprocess.Popen"): "pip streamed live, isolated",
    ("cudaswitch/discovery/toolkit_install.py", "unpack", "target.parent.mkdir(parents=True, exist_ok=True)"): _UNPACK,
    ("cudaswitch/discovery/toolkit_install.py", "unpack", "zf.open(info)"): _UNPACK,
    ("cudaswitch/discovery/toolkit_install.py", "unpack", "os.open"): _UNPACK,
    ("cudaswitch/discovery/toolkit_install.py", "unpack", "os.fdopen"): _UNPACK,
    ("cudaswitch/discovery/toolkit_install.py", "unpack", "os.chmod"): _UNPACK,
    ("cudaswitch/checks/probe.py", "_load", "ctypes.CDLL"): _PROBE,
    ("cudaswitch/checks/probe.py", "_load", "ctypes.WinDLL"): _PROBE,
    ("cudaswitch/checks/probe.py", "cpu_has_avx2", "ctypes.windll"): _PROBE,
    ("cudaswitch/checks/probe.py", "cpu_has_avx2", 'open("/proc/cpuinfo")'): _PROBE,
    ("cudaswitch/checks/probe.py", "main", 'open(argv[argv.index("--result") + 1], "w")'): _PROBE,
    # Windows only: the UI language from kernel32, a system library the loader takes from System32
    ("cudaswitch/core/i18n.py", "windows_ui_language", "ctypes.windll"): "kernel32's language query",
    # the privilege boundary itself: the child drops to the environment owner's uid before it runs any of the work
    ("cudaswitch/core/asowner.py", "run_as", "os.fork"): "the fork that becomes the owner",
    # Windows only: the console's code page from kernel32, a system library the loader takes from System32
    ("cudaswitch/switching/verify.py", "console_code_pages", "ctypes.windll"): "kernel32's code page query",
    # points stdout at /dev/null after the reader went away: a fixed system path, opened for writing
    ("cudaswitch/cli/common.py", "_silence_stdout", "os.open"): "os.open(os.devnull)",
    # click's HelpFormatter.write_text: text into click's help buffer, not a file
    ("cudaswitch/cli/help_text.py", "TranslatedHelpFormatter.write_text", "super().write_text(text)"):
        "click's formatter method",
}

_SUBPROCESS_STARTS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}
_OS = {"replace": "os.replace", "rename": "os.replace", "renames": "os.replace", "system": "os.spawn",
       "popen": "os.spawn", "fdopen": "os.fdopen", "posix_spawn": "os.spawn", "posix_spawnp": "os.spawn",
       "fork": "os.fork", "forkpty": "os.fork", "open": "os.open"}
_OS_CHANGES = {"unlink", "remove", "rmdir", "removedirs", "symlink", "link", "chmod", "lchmod", "fchmod", "chown",
               "lchown", "fchown", "makedirs", "mkdir", "truncate", "ftruncate", "mkfifo", "mknod"}
_SHUTIL = {"rmtree": "shutil.rmtree", "move": "shutil.move", "copy": "shutil.copy", "copy2": "shutil.copy",
           "copyfile": "shutil.copy", "copytree": "shutil.copy", "copymode": "shutil.copy", "copystat": "shutil.copy",
           "chown": "shutil.copy", "unpack_archive": "shutil.copy", "make_archive": "shutil.copy"}
# Path methods that change the file system (`.replace(x)` with one argument: str.replace takes two)
_PATH_CHANGES = {"rename", "unlink", "symlink_to", "hardlink_to", "link_to", "chmod", "lchmod", "touch", "mkdir",
                 "rmdir"}
_CTYPES = {"CDLL", "PyDLL", "WinDLL", "OleDLL", "LoadLibrary", "cdll", "pydll", "windll", "oledll", "util"}
_ASYNCIO = {"create_subprocess_exec", "create_subprocess_shell"}
_WATCHED_MODULES = {"os", "subprocess", "shutil", "ctypes", "tempfile", "pty", "asyncio", "multiprocessing",
                    "tarfile", "zipfile", "json", "marshal", "io", "importlib", "pathlib", "builtins", "posix",
                    "nt"}


def _os_kind(attr: str):
    if attr.startswith("exec"):
        return "os.exec"
    if attr.startswith("spawn"):
        return "os.spawn"
    if attr in _OS_CHANGES:
        return "os.change"
    return _OS.get(attr)


def _attr_kind(module: str, attr: str):
    """The kind of raw call `module.attr` is, or None (module: the real module a name stands for)."""
    if module in ("os", "posix", "nt"):
        return _os_kind(attr)
    if module == "subprocess":
        return "subprocess" if attr in _SUBPROCESS_STARTS else None
    if module == "shutil":
        return _SHUTIL.get(attr)
    if module == "io":
        return "open" if attr in ("open", "FileIO") else None
    if module == "builtins":
        return "open" if attr == "open" else ("dynamic" if attr == "__import__" else None)
    if module == "pty":
        return "os.spawn" if attr in ("spawn", "fork") else None
    if module == "asyncio":
        return "subprocess" if attr in _ASYNCIO else None
    if module == "multiprocessing":
        return "os.fork"
    if module == "ctypes":
        return "ctypes" if attr in _CTYPES else None
    if module == "tempfile":
        return "tempfile" if attr != "gettempdir" else None
    if module in ("json", "marshal"):
        return module if attr in ("loads", "load") else None
    if module == "importlib":
        return "dynamic" if attr in ("import_module", "__import__") else None
    return None


def _own_module(node) -> bool:
    """importlib.import_module("cudaswitch....") or f"cudaswitch.cli.{name}": one of cudaswitch's own modules."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.startswith("cudaswitch.")
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value).startswith("cudaswitch.")
    return False


class _Finder(ast.NodeVisitor):
    """(line, function, kind, call text) of every raw read, start or write in one module. Names are followed
    through `import x as y` and `from x import f as g`; getattr on a watched module, __import__ and importlib count
    as a way around the names (`dynamic`)."""

    def __init__(self, source: str):
        self.source = source
        self.stack: List[str] = []
        self.hits: List[Tuple[int, str, str, str]] = []
        self.zip_names = set()
        self.door_names = set()  # names bound to what a door returned (a file object tarfile/zipfile may read)
        self.modules: Dict[str, str] = {m: m for m in _WATCHED_MODULES}  # local name -> module
        self.imported: Dict[str, str] = {}  # name bound by `from subprocess import run` -> kind
        self.skip = set()  # ids of attribute nodes already judged as part of their call
        self.trust_names = set()  # names imported from cudaswitch.core.trust
        self.door_helpers = set()  # this module's functions that return only what a door opened

    def hit(self, node, kind):
        text = ast.get_source_segment(self.source, node) or kind
        self.hits.append((node.lineno, ".".join(self.stack) or "<module>", kind, text.splitlines()[0][:90]))

    def visit_Module(self, node):
        for n in ast.walk(node):
            if isinstance(n, ast.ImportFrom) and n.module == "cudaswitch.core.trust":
                self.trust_names.update(a.asname or a.name for a in n.names)
        # a helper whose every return is a door's file object (or the caller's own stream, nullcontext(fh))
        for fn in node.body:
            if isinstance(fn, ast.FunctionDef):
                returns = [n.value for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None]
                if returns and all(self._door_or_passed(r) for r in returns):
                    self.door_helpers.add(fn.name)
        self.generic_visit(node)

    def _door_or_passed(self, value) -> bool:
        calls = [n for n in ast.walk(value) if isinstance(n, ast.Call)]
        return bool(calls) and all(self._door_call(c) or (isinstance(c.func, ast.Attribute)
                                                          and c.func.attr == "nullcontext") for c in calls)

    def _scope(self, node):
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_Import(self, node):
        for alias in node.names:
            root = alias.name.split(".")[0]
            if alias.asname and alias.name in _WATCHED_MODULES | {"os.path", "ctypes.util"}:
                self.modules[alias.asname] = alias.name.split(".")[0] if alias.name != "ctypes.util" else "ctypes"
            elif root in _WATCHED_MODULES:
                self.modules[root] = root

    def visit_ImportFrom(self, node):
        if node.module == "cudaswitch.core.trust":
            self.trust_names.update(a.asname or a.name for a in node.names)
        for alias in node.names:
            local = alias.asname or alias.name
            if node.module in _WATCHED_MODULES and alias.name in _WATCHED_MODULES:
                self.modules[local] = alias.name  # from os import path is not watched; from ctypes import util is
            kind = _attr_kind(node.module or "", alias.name)
            if node.module == "os" and alias.name == "open":
                kind = "os.open"
            if node.module == "tarfile" and alias.name == "open" or node.module == "zipfile" and alias.name == "ZipFile":
                kind = None  # judged at the call, by its arguments
                self.imported[local] = f"{node.module}.{alias.name}"
            if kind:
                self.imported[local] = kind
                self.hit(node, kind)

    def _module_of(self, value):
        return self.modules.get(value.id) if isinstance(value, ast.Name) else None

    def visit_Attribute(self, node):
        # references count, not only calls: `run=subprocess.run` as a default starts a program just the same
        mod = self._module_of(node.value)
        if mod is not None and id(node) not in self.skip:
            kind = _attr_kind(mod, node.attr)
            if kind:
                self.hit(node, kind)
        self.generic_visit(node)

    def _bind(self, target, value):
        if not isinstance(target, ast.Name) or not isinstance(value, ast.Call):
            return
        f = value.func
        if isinstance(f, ast.Attribute) and f.attr == "ZipFile":
            self.zip_names.add(target.id)
        if self._door_call(value):
            self.door_names.add(target.id)

    def _door_call(self, call) -> bool:
        """trust.X(...) or a name imported from trust, or a function of this module that returns one (a small
        helper choosing between the caller's stream and a door's)."""
        f = call.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "trust":
            return True
        return isinstance(f, ast.Name) and (f.id in self.trust_names or f.id in self.door_helpers)

    def visit_With(self, node):
        for item in node.items:
            if item.optional_vars is not None:
                self._bind(item.optional_vars, item.context_expr)
        self.generic_visit(node)

    def visit_Assign(self, node):
        for t in node.targets:
            self._bind(t, node.value)
        self.generic_visit(node)

    def _archive_call(self, node, what):
        """tarfile.open / zipfile.ZipFile: fine on a stream a door opened, raw when given a path."""
        if what == "tarfile.open":
            named = node.args or any(k.arg == "name" for k in node.keywords)
            if named or not any(k.arg == "fileobj" for k in node.keywords):
                self.hit(node, "archive")
        else:
            first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "file"), None)
            if not (isinstance(first, ast.Name) and first.id in self.door_names):
                self.hit(node, "archive")

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Name):
            if f.id == "open":
                self.hit(node, "open")
            elif f.id == "__import__":
                if not (node.args and isinstance(node.args[0], ast.Constant)
                        and str(node.args[0].value).split(".")[0] not in _WATCHED_MODULES):
                    self.hit(node, "dynamic")
            elif f.id == "getattr" and len(node.args) >= 2 and self._module_of(node.args[0]) is not None:
                name = node.args[1]
                if not isinstance(name, ast.Constant):
                    self.hit(node, "dynamic")  # which function it fetches is not written down
                elif _attr_kind(self._module_of(node.args[0]), str(name.value)):
                    self.hit(node, _attr_kind(self._module_of(node.args[0]), str(name.value)))
            elif f.id in self.imported:
                kind = self.imported[f.id]
                if kind in ("tarfile.open", "zipfile.ZipFile"):
                    self._archive_call(node, kind)
                else:
                    self.hit(node, kind)
        elif isinstance(f, ast.Attribute):
            recv = f.value.id if isinstance(f.value, ast.Name) else None
            mod = self._module_of(f.value)
            if recv == "trust":
                pass  # a door
            elif mod == "tarfile" and f.attr == "open" or mod == "zipfile" and f.attr == "ZipFile":
                self._archive_call(node, f"{mod}.{f.attr}")
            elif mod == "importlib" and f.attr == "import_module" and node.args and _own_module(node.args[0]):
                self.skip.add(id(f))  # cudaswitch's own command modules, named by a literal prefix
            elif mod is not None:
                pass  # judged as an attribute
            elif f.attr in ("read_text", "read_bytes", "write_text", "write_bytes"):
                self.hit(node, f.attr)
            elif f.attr in _PATH_CHANGES or (f.attr == "replace" and len(node.args) == 1 and not node.keywords):
                self.hit(node, "Path.change")
            elif f.attr == "open":
                if recv is not None and recv in self.zip_names:
                    pass  # a member of a zip archive opened through a door
                else:
                    self.hit(node, "Path.open")
        self.generic_visit(node)


def raw_calls(root: Path) -> List[Tuple[str, int, str, str, str]]:
    """(file, line, function, kind, text) of every raw call under root/cudaswitch outside the doors."""
    out = []
    for path in sorted((root / "cudaswitch").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == DOORS:
            continue
        source = path.read_text(encoding="utf-8")
        finder = _Finder(source)
        finder.visit(ast.parse(source, filename=rel))
        out.extend((rel, *h) for h in finder.hits)
    return out


def _allowed(hit) -> bool:
    rel, _line, func, _kind, text = hit
    return (rel, func, text) in ALLOW


def test_every_read_start_and_write_goes_through_a_door():
    bad = [h for h in raw_calls(REPO) if not _allowed(h)]
    lines = [f"{rel}:{line} in {func}(): `{text}` is a raw {kind}; use {DOOR_FOR[kind]}"
             for rel, line, func, kind, text in bad]
    assert not bad, ("calls outside the doors of cudaswitch/core/trust.py (docs/design/security.md). Move each through "
                     "the door named; only a call that is safe by construction goes into ALLOW in "
                     "tests/core/test_doors.py, with why:\n  " + "\n  ".join(lines))


def test_every_allow_list_entry_is_still_needed():
    used = {(rel, func, text) for rel, _line, func, _kind, text in raw_calls(REPO)}
    stale = sorted(set(ALLOW) - used)
    assert not stale, f"ALLOW entries that no longer match a raw call (remove them): {stale}"


@pytest.mark.parametrize("snippet, kind", [
    ("open(p)", "open"),
    ("import io\nio.open(p)", "open"),
    ("Path(p).read_text()", "read_text"),
    ("p.read_bytes()", "read_bytes"),
    ("p.write_text('x')", "write_text"),
    ("p.open('rb')", "Path.open"),
    ("import os\nos.open(p, 0)", "os.open"),
    ("import subprocess\nsubprocess.run(['x'])", "subprocess"),
    ("import subprocess\ndef f(run=subprocess.Popen):\n    pass", "subprocess"),
    ("from subprocess import check_output\ncheck_output(['x'])", "subprocess"),
    ("import os\nos.execvpe('x', ['x'], {})", "os.exec"),
    ("import os\nos.system('x')", "os.spawn"),
    ("import os\nos.replace(a, b)", "os.replace"),
    ("import os\nos.rename(a, b)", "os.replace"),
    ("import shutil\nshutil.rmtree(p)", "shutil.rmtree"),
    # names bound another way
    ("import subprocess as sp\nsp.run(['x'])", "subprocess"),
    ("from os import unlink\nunlink(p)", "os.change"),
    ("from os import unlink as u\nu(p)", "os.change"),
    ("from shutil import rmtree as r\nr(p)", "shutil.rmtree"),
    ("import os as o\no.execv('x', ['x'])", "os.exec"),
    # fetched by name
    ("import os\ngetattr(os, 'system')('x')", "os.spawn"),
    ("import os\ngetattr(os, name)('x')", "dynamic"),
    ("__import__('subprocess').run(['x'])", "dynamic"),
    ("import importlib\nimportlib.import_module('subprocess').run(['x'])", "dynamic"),
    ("import importlib\nimportlib.import_module(name)", "dynamic"),
    # more ways to start a program
    ("import pty\npty.spawn(['sh'])", "os.spawn"),
    ("import asyncio\nasyncio.create_subprocess_exec('x')", "subprocess"),
    ("import asyncio\nasyncio.create_subprocess_shell('x')", "subprocess"),
    ("import multiprocessing\nmultiprocessing.Process(target=f).start()", "os.fork"),
    ("import os\nos.fork()", "os.fork"),
    ("import os\nos.posix_spawnp('x', ['x'], {})", "os.spawn"),
    # libraries
    ("import ctypes\nctypes.CDLL('libcuda.so.1')", "ctypes"),
    ("import ctypes\nctypes.cdll.LoadLibrary('libcuda.so.1')", "ctypes"),
    ("from ctypes import CDLL\nCDLL('x')", "ctypes"),
    ("import ctypes.util\nctypes.util.find_library('cuda')", "ctypes"),
    # changes to the file system
    ("import shutil\nshutil.copy(a, b)", "shutil.copy"),
    ("import shutil\nshutil.copy2(a, b)", "shutil.copy"),
    ("import shutil\nshutil.copyfile(a, b)", "shutil.copy"),
    ("import shutil\nshutil.copytree(a, b)", "shutil.copy"),
    ("import shutil\nshutil.chown(p, 'root')", "shutil.copy"),
    ("import shutil\nshutil.move(a, b)", "shutil.move"),
    ("import tempfile\ntempfile.mkstemp()", "tempfile"),
    ("import tempfile\ntempfile.NamedTemporaryFile()", "tempfile"),
    ("import tempfile\ntempfile.TemporaryDirectory()", "tempfile"),
    ("import os\nos.unlink(p)", "os.change"),
    ("import os\nos.remove(p)", "os.change"),
    ("import os\nos.symlink(a, b)", "os.change"),
    ("import os\nos.chmod(p, 0o777)", "os.change"),
    ("import os\nos.chown(p, 0, 0)", "os.change"),
    ("import os\nos.makedirs(p)", "os.change"),
    ("import os\nos.mkdir(p)", "os.change"),
    ("import os\nos.rmdir(p)", "os.change"),
    ("p.replace(q)", "Path.change"),
    ("p.rename(q)", "Path.change"),
    ("p.unlink()", "Path.change"),
    ("p.symlink_to(q)", "Path.change"),
    ("p.chmod(0o777)", "Path.change"),
    ("p.touch()", "Path.change"),
    ("p.mkdir(parents=True)", "Path.change"),
    ("p.write_bytes(b'x')", "write_bytes"),
    # archives given a path, JSON parsed raw
    ("import tarfile\ntarfile.open(name=p)", "archive"),
    ("import tarfile\ntarfile.open(p)", "archive"),
    ("import zipfile\nzipfile.ZipFile(p)", "archive"),
    ("from zipfile import ZipFile\nZipFile(p)", "archive"),
    ("import json\njson.loads(text)", "json"),
    ("import json\njson.load(fh)", "json"),
    ("import marshal\nmarshal.loads(data)", "marshal"),
    ("from marshal import load\nload(fh)", "marshal"),
])
def test_the_walk_finds_each_kind_of_raw_call(snippet, kind):
    finder = _Finder(snippet)
    finder.visit(ast.parse(snippet))
    assert kind in {h[2] for h in finder.hits}, finder.hits


@pytest.mark.parametrize("snippet", [
    "import tarfile\ntarfile.open(fileobj=fh, mode='r|')",
    "import zipfile\nfrom cudaswitch.core import trust\nwith trust.open_regular(p) as fh, zipfile.ZipFile(fh) as zf:\n"
    "    zf.open(info)",
    "import zipfile\nfrom cudaswitch.core.trust import open_regular\nwith open_regular(p) as fh:\n    zipfile.ZipFile(fh)",
    "import importlib\nimportlib.import_module(f'cudaswitch.cli.{name}')",
    "import os\ngetattr(os, 'ST_RDONLY', 1)",
    "__import__('gzip').GzipFile(fileobj=fh)",
    "s = 'a'.replace('a', 'b')",
    "import os.path\nos.path.join(a, b)",
    "import subprocess\ntry:\n    pass\nexcept subprocess.TimeoutExpired:\n    pass",
    "from cudaswitch.core.trust import read_text\nread_text(p)",
    "from cudaswitch.core import trust\ntrust.read_bytes(p)",
])
def test_the_walk_leaves_door_calls_and_archive_members_alone(snippet):
    finder = _Finder(snippet)
    finder.visit(ast.parse(snippet))
    assert finder.hits == []
