"""Every import statement of a module's text, for the import tests (tests/test_import_cycles.py, tests/test_layers.py):
at module level or inside a function, relative ones resolved. Names imported under `if TYPE_CHECKING:` are left out:
they serve annotations and never execute."""

import ast


def statements(name: str, is_package: bool, source: str):
    """(line, module, imported names) per import: `import a.b` gives ("a.b", []), `from a import b, c` ("a", ["b",
    "c"])."""
    package = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(source)
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and getattr(block.test, "id", getattr(block.test, "attr", None)) == "TYPE_CHECKING"
                   for stmt in block.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            yield node.lineno, base, [a.name for a in node.names]
