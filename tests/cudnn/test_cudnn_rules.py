"""docs/design/cudnn-install.md and the code hold together: every rule a comment of the cuDNN code cites is defined
there, every rule defined there is cited by the code that follows it, and every test named as its evidence exists."""

from __future__ import annotations

import re

from conftest import REPO

DOC = REPO / "docs" / "design" / "cudnn-install.md"
CODE = sorted((REPO / "cudaswitch" / "cudnn").glob("*.py")) + [REPO / "cudaswitch" / "cli" / "cudnn.py"]


def _rules():
    return set(re.findall(r'<a id="(cudnn-[a-z-]+)"></a>', DOC.read_text(encoding="utf-8")))


def test_every_rule_the_code_cites_is_defined_and_every_rule_is_cited():
    rules = _rules()
    assert {"cudnn-stage-first", "cudnn-commit-point", "cudnn-journal", "cudnn-recover-by-phase",
            "cudnn-undo-restores", "cudnn-modes-owners"} <= rules
    cited = {}
    for path in CODE:
        for name in re.findall(r"\bcudnn-[a-z]+(?:-[a-z0-9]+)*\b", path.read_text(encoding="utf-8")):
            if name != "cudnn-install":  # the note's own file name
                cited.setdefault(name, path.name)
    undefined = {n: f for n, f in cited.items() if n not in rules}
    assert not undefined, f"cited but not defined in {DOC.name}: {undefined}"
    assert rules - set(cited) == set(), f"defined but cited by no code: {rules - set(cited)}"


def test_every_test_named_as_evidence_exists():
    text = DOC.read_text(encoding="utf-8")
    files = set(re.findall(r"`(tests/[\w/]+\.py)`", text))
    assert len(files) >= 8
    defined = {}
    for f in files:
        assert (REPO / f).is_file(), f
        defined[f] = set(re.findall(r"^def (test_\w+)", (REPO / f).read_text(encoding="utf-8"), re.M))
    everywhere = set().union(*defined.values())
    named = set(re.findall(r"`(test_\w+)`", text))
    assert len(named) >= 15
    assert not named - everywhere, f"tests named in {DOC.name} that do not exist: {named - everywhere}"
