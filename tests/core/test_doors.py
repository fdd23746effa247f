"""The doors (docs/design/security.md): every read of a file cudaswitch does not own, every program it starts and
every write into a target goes through cudaswitch/core/trust.py. This test walks the package's syntax tree and fails
on a raw call anywhere else, naming the call and the door to use instead, so a new feature cannot skip the checks
(FIFOs and /dev/zero, size limits, another user's executables and symlinks) by accident."""

from __future__ import annotations

import ast
import fnmatch
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
}

# (file, function) -> why the raw calls there are safe by construction. Function names are qualified
# (Class.method, outer.inner) and may be fnmatch patterns. Keep it short: each entry is a door a reviewer must trust.
ALLOW: Dict[Tuple[str, str], str] = {
    # pip's output is streamed line by line (its retry warnings reach the user as they happen), which run_program,
    # waiting for the end, cannot do; it is started as `python -I -m pip` from "/" with stdin closed
    ("cudaswitch/discovery/toolkit_install.py", "_pip"): "pip streamed live, isolated, from a neutral folder",
    # members of a wheel already hashed, written into cudaswitch's own 0700 staging folder with O_NOFOLLOW after
    # every path was checked not to leave it (zip-slip)
    ("cudaswitch/discovery/toolkit_install.py", "unpack"): "archive members into the private staging folder",
    # runs inside the environment's own Python and imports nothing of cudaswitch (it cannot use the doors): it reads
    # /proc/cpuinfo and writes its record into the private temporary folder runner.run_probe created for it
    ("cudaswitch/checks/probe.py", "*"): "the probe is a standalone script",
    # points stdout at /dev/null after the reader went away: a fixed system path, opened for writing
    ("cudaswitch/cli/common.py", "_silence_stdout"): "os.open(os.devnull)",
    # click's HelpFormatter.write_text: text into click's help buffer, not a file
    ("cudaswitch/cli/help_text.py", "*.write_text"): "click's formatter method",
}

_SUBPROCESS_STARTS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}
_OS = {"replace": "os.replace", "rename": "os.replace", "renames": "os.replace", "system": "os.spawn",
       "popen": "os.spawn", "fdopen": "os.fdopen", "posix_spawn": "os.spawn", "posix_spawnp": "os.spawn"}


def _os_kind(attr: str):
    if attr.startswith("exec"):
        return "os.exec"
    if attr.startswith("spawn"):
        return "os.spawn"
    return _OS.get(attr)


class _Finder(ast.NodeVisitor):
    """(line, function, kind, call text) of every raw read, start or write in one module."""

    def __init__(self, source: str):
        self.source = source
        self.stack: List[str] = []
        self.hits: List[Tuple[int, str, str, str]] = []
        self.zip_names = set()
        self.imported: Dict[str, str] = {}  # name bound by `from subprocess import run` -> kind

    def hit(self, node, kind):
        text = ast.get_source_segment(self.source, node) or kind
        self.hits.append((node.lineno, ".".join(self.stack) or "<module>", kind, text.splitlines()[0][:90]))

    def _scope(self, node):
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_ImportFrom(self, node):
        for alias in node.names:
            kind = None
            if node.module == "subprocess" and alias.name in _SUBPROCESS_STARTS:
                kind = "subprocess"
            elif node.module == "os" and (_os_kind(alias.name) or alias.name == "open"):
                kind = _os_kind(alias.name) or "os.open"
            elif node.module == "shutil" and alias.name in ("rmtree", "move"):
                kind = f"shutil.{alias.name}"
            elif node.module == "io" and alias.name == "open":
                kind = "open"
            if kind:
                self.imported[alias.asname or alias.name] = kind
                self.hit(node, kind)

    def visit_Attribute(self, node):
        # references count, not only calls: `run=subprocess.run` as a default starts a program just the same
        if isinstance(node.value, ast.Name):
            mod, attr = node.value.id, node.attr
            if mod == "subprocess" and attr in _SUBPROCESS_STARTS:
                self.hit(node, "subprocess")
            elif mod == "os" and _os_kind(attr):
                self.hit(node, _os_kind(attr))
            elif mod == "shutil" and attr in ("rmtree", "move"):
                self.hit(node, f"shutil.{attr}")
        self.generic_visit(node)

    def _bind_zip(self, target, value):
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "ZipFile"
                and isinstance(target, ast.Name)):
            self.zip_names.add(target.id)

    def visit_With(self, node):
        for item in node.items:
            if item.optional_vars is not None:
                self._bind_zip(item.optional_vars, item.context_expr)
        self.generic_visit(node)

    def visit_Assign(self, node):
        for t in node.targets:
            self._bind_zip(t, node.value)
        self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Name):
            if f.id == "open":
                self.hit(node, "open")
            elif f.id in self.imported:
                self.hit(node, self.imported[f.id])
        elif isinstance(f, ast.Attribute):
            recv = f.value.id if isinstance(f.value, ast.Name) else None
            if recv == "trust":
                pass  # a door
            elif f.attr in ("read_text", "read_bytes", "write_text", "write_bytes"):
                self.hit(node, f.attr)
            elif f.attr == "open":
                if recv == "os":
                    self.hit(node, "os.open")
                elif recv == "io":
                    self.hit(node, "open")
                elif recv == "tarfile" and not node.args:
                    pass  # tarfile.open(fileobj=...): a stream some door opened
                elif recv is not None and recv in self.zip_names:
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


def _allowed(rel: str, func: str) -> bool:
    return any(rel == f and fnmatch.fnmatchcase(func, pattern) for f, pattern in ALLOW)


def test_every_read_start_and_write_goes_through_a_door():
    bad = [h for h in raw_calls(REPO) if not _allowed(h[0], h[2])]
    lines = [f"{rel}:{line} in {func}(): `{text}` is a raw {kind}; use {DOOR_FOR[kind]}"
             for rel, line, func, kind, text in bad]
    assert not bad, ("calls outside the doors of cudaswitch/core/trust.py (docs/design/security.md). Move each through "
                     "the door named; only a call that is safe by construction goes into ALLOW in "
                     "tests/core/test_doors.py, with why:\n  " + "\n  ".join(lines))


def test_every_allow_list_entry_is_still_needed():
    used = {(rel, pattern) for rel, _line, func, _kind, _text in raw_calls(REPO)
            for f, pattern in ALLOW if rel == f and fnmatch.fnmatchcase(func, pattern)}
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
])
def test_the_walk_finds_each_kind_of_raw_call(snippet, kind):
    finder = _Finder(snippet)
    finder.visit(ast.parse(snippet))
    assert kind in {h[2] for h in finder.hits}, finder.hits


@pytest.mark.parametrize("snippet", [
    "import tarfile\ntarfile.open(fileobj=fh, mode='r|')",
    "import zipfile\nwith zipfile.ZipFile(fh) as zf:\n    zf.open(info)",
    "import subprocess\ntry:\n    pass\nexcept subprocess.TimeoutExpired:\n    pass",
    "from cudaswitch.core.trust import read_text\nread_text(p)",
    "from cudaswitch.core import trust\ntrust.read_bytes(p)",
])
def test_the_walk_leaves_door_calls_and_archive_members_alone(snippet):
    finder = _Finder(snippet)
    finder.visit(ast.parse(snippet))
    assert finder.hits == []
