"""The probe file's own rules: it runs in interpreters cudaswitch does not control."""

import ast
import sys

from cudaswitch.checks import runner

PROBE = runner.PROBE


def test_probe_is_python_3_6_syntax():
    tree = ast.parse(PROBE.read_text(encoding="utf-8"), feature_version=(3, 6))
    assert {"main", "ask_driver", "run_torch"} <= {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_probe_imports_only_the_standard_library_before_torch():
    tree = ast.parse(PROBE.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module.split(".")[0])
    assert names - set(sys.stdlib_module_names) == {"torch"}


def test_the_marker_is_defined_once_in_the_probe():
    """The runner reads the marker from probe.py's text, so the two cannot drift apart."""
    assert runner.MARKER == "CUDASWITCH-PROBE-JSON:"
    assert runner.probe_source().count(f'MARKER = "{runner.MARKER}"') == 1
