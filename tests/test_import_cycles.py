"""Every cudaswitch module imports on its own, and no two modules import each other, directly or around a circle.
Imports inside functions count: a function-level import that closes a circle is a cycle kept loadable, not broken.
Only names imported under `if TYPE_CHECKING:` (annotations, never executed) do not."""

import importlib
import importlib.util

from conftest import REPO
from import_scan import statements

PACKAGE = REPO / "cudaswitch"


def _modules():
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name, path, known):
    """The cudaswitch modules `name` imports anywhere in its text (module level or in a function)."""
    found = set()
    for _line, base, names in statements(name, path.name == "__init__.py", path.read_text(encoding="utf-8")):
        # `from pkg import mod` imports the submodule; `from mod import name` the module
        targets = [f"{base}.{n}" if f"{base}.{n}" in known else base for n in names] or [base]
        found |= {t for t in targets if t in known and t != name}
    return found


def _circles(graph):
    """The strongly connected components with more than one module: each is one or more import circles."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                on.discard(w)
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(frozenset(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out




def test_every_module_imports():
    skip = {"cudaswitch.__main__"}  # runs the CLI when imported
    if importlib.util.find_spec("conda") is None:
        skip.add("cudaswitch.conda_plugin")  # conda's plugin, loaded by conda's own Python
    names = [n for n in _modules() if n not in skip]
    assert "cudaswitch.checks.driver" in names
    for name in names:
        importlib.import_module(name)


def test_no_import_cycle_among_cudaswitch_modules():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert graph["cudaswitch.checks.smoke"], "the scan finds no imports: it reads the source wrongly"
    assert "cudaswitch.checks.driver" in graph["cudaswitch.checks.doctor"]
    circles = _circles(graph)
    assert not circles, circles


def test_the_scan_sees_a_cycle_made_of_function_level_imports(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("def f():\n    from pkg import b\n")
    b.write_text("import pkg.a\n")
    known = {"pkg.a": a, "pkg.b": b}
    graph = {n: _imports(n, p, known) for n, p in known.items()}
    assert _circles(graph) == [frozenset({"pkg.a", "pkg.b"})]
