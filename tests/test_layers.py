"""The house map (CONTRIBUTING.md, "The house") has no arrow running back up: a module imports only from its own
layer or the layers below it, at module level or inside a function. Names imported under `if TYPE_CHECKING:` are
never executed and do not count (as in tests/test_import_cycles.py)."""

from conftest import REPO
from import_scan import statements

PACKAGE = REPO / "cudaswitch"

# bottom to top, as the house map lists the folders; a layer may import its own modules and any layer before it
LAYERS = [
    ("cudaswitch",),  # the package's own __init__ (its version)
    ("core",),
    ("data",),
    ("discovery",),
    ("switching",),
    ("cudnn",),
    ("checks",),
    ("fix",),
    ("cli", "conda_plugin"),  # the two entry points: click's and conda's
    ("launch", "__main__"),  # the program: a TAB's quick answer, else the click group
]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _module_name(path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def upward_imports(name: str, is_package: bool, source: str):
    """(line, imported module) for every import in `source` (module `name`) of a layer above its own."""
    out = []
    for line, base, names in statements(name, is_package, source):
        # `from cudaswitch import cli` imports the layer named after the dot
        for target in [f"{base}.{n}" for n in names] if base == "cudaswitch" else [base]:
            if target.split(".")[0] == "cudaswitch" and RANK.get(_layer(target), -1) > RANK[_layer(name)]:
                out.append((line, target))
    return out


def test_every_folder_has_a_place_in_the_map():
    # a new folder or top-level module must be given its layer here (and its line in the house map)
    layers = {_layer(_module_name(p)) for p in PACKAGE.rglob("*.py")}
    assert layers <= set(RANK), sorted(layers - set(RANK))


def test_no_import_runs_back_up():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module_name(path)
        for line, target in upward_imports(name, path.name == "__init__.py", path.read_text(encoding="utf-8")):
            found.append(f"{path.relative_to(REPO)}:{line} ({_layer(name)}) imports {target} ({_layer(target)})")
    assert found == []


def test_the_check_sees_every_kind_of_import():
    # the slips this test is for: a function-level import, a relative one, `from cudaswitch import <layer>`
    src = ("import os\n"
           "from cudaswitch.core import trust\n"
           "def f():\n"
           "    from cudaswitch.checks.doctor import run\n"
           "    from ..cli import output\n"
           "    from cudaswitch import switching\n"
           "    import cudaswitch.fix.plan\n"
           "from typing import TYPE_CHECKING\n"
           "if TYPE_CHECKING:\n"
           "    from cudaswitch.cli.common import X\n")
    assert [t for _, t in upward_imports("cudaswitch.discovery.x", False, src)] == [
        "cudaswitch.checks.doctor", "cudaswitch.cli", "cudaswitch.switching", "cudaswitch.fix.plan"]
    assert upward_imports("cudaswitch.cli.x", False, src) == []
