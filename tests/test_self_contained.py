"""The repository explains itself: the product, its tests, benchmarks and READMEs cite only what a user has.

No citation of material outside the repository (the development notes a checkout does not ship), and every rule
tag a comment cites (HL1-HL5, HS1-HS2, HU1-HU6, HC1-HC10) is defined in docs/design/, every `[Sxx]` or
`sources.csv Sxx` key exists in cudaswitch/data/sources.csv. Every file of the repository that the product's
comments point to (`docs/design/activation.md#hl3`, `tests/seams.py`) exists, with its anchor.
"""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCOPE = ["cudaswitch", "templates", "hooks", "tests", "benchmarks", "tools", "README.md", "README.zh-CN.md",
         "CONTRIBUTING.md", "mkdocs.yml", "docs/index.md", "docs/index.zh.md", "docs/guide"]
SELF = Path(__file__).resolve()

# Material outside the repository, and the rule tags that were defined only there.
FORBIDDEN = [
    # spelled in pieces so that this file, the one place that must name them, does not match a plain grep itself
    (r"\.\./" + "shared" + r"\b", "the background folder beside the repository"),
    (r"\b" + "shared" + r"/(?:" + "reference|seeds" + r")\b", "the background folder's notes or articles"),
    (r"\b(?:conda-activation|cuda-data|anchors)\.md\b", "a reference file outside the repository"),
    (r"\bseeds? 0\d{2}\b", "a seed article"),
    (r"\bseed articles?\b", "the seed articles"),
    (r"\b[RBF]\d{1,2}\b", "a rule tag not defined in the repository (R1-R13, B1-B10, F1-F5)"),
]
TAG = re.compile(r"\bH[LSUC]\d{1,2}\b")
SRC_BRACKET = re.compile(r"\[(S\d+)\]")
SRC_AFTER = re.compile(r"sources\.csv,? ((?:S\d+(?:-S\d+)?)(?:, S\d+(?:-S\d+)?)*)")


def _files():
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", *SCOPE], cwd=ROOT, capture_output=True, check=True)
        names = [n for n in out.stdout.decode("utf-8", "replace").split("\0") if n]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (an sdist): walk the folders
        names = [str(p.relative_to(ROOT)) for s in SCOPE for p in ([ROOT / s] if (ROOT / s).is_file()
                                                                   else (ROOT / s).rglob("*")) if p.is_file()]
    for name in names:
        path = ROOT / name
        if path.resolve() == SELF or not path.is_file():
            continue
        # other people's files, kept byte for byte (a site's F77 compiler variable): their words, not citations of
        # ours; the README beside them, which says where each comes from, is ours and is read
        if name.startswith("tests/data/") and path.name != "README.md":
            continue
        data = path.read_bytes()
        if b"\0" in data:  # binary
            continue
        yield name, data.decode("utf-8", "replace")


def _hits(regex):
    rx = re.compile(regex)
    return [(name, n, line.strip()) for name, text in _files() for n, line in enumerate(text.splitlines(), 1)
            for _ in [0] if rx.search(line)]


@pytest.mark.parametrize("regex,what", FORBIDDEN, ids=[w for _, w in FORBIDDEN])
def test_no_citation_of_material_outside_the_repository(regex, what):
    hits = _hits(regex)
    assert not hits, f"{what} cited:\n" + "\n".join(f"{f}:{n}: {line}" for f, n, line in hits)


def _design_tags():
    tags = set()
    for md in (ROOT / "docs" / "design").glob("*.md"):
        text = md.read_text(encoding="utf-8")
        tags |= {m.upper() for m in re.findall(r'<a id="(h[lsuc]\d{1,2})"></a>', text)}
    return tags


def test_every_cited_rule_tag_is_defined_in_docs_design():
    defined = _design_tags()
    assert {"HL1", "HL5", "HS1", "HS2", "HU1", "HU6", "HC1", "HC10"} <= defined
    missing = [(f, line) for f, text in _files() for line in text.splitlines() for tag in TAG.findall(line)
               if tag not in defined]
    assert not missing, "tags cited but not defined in docs/design/:\n" + "\n".join(f"{f}: {l.strip()}"
                                                                                 for f, l in missing)


def test_every_cited_source_key_exists():
    keys = {line.split(",", 1)[0] for line in (ROOT / "cudaswitch" / "data" / "sources.csv")
            .read_text(encoding="utf-8").splitlines()[1:] if line.strip()}
    missing = []
    for name, text in _files():
        cited = SRC_BRACKET.findall(text)
        for group in SRC_AFTER.findall(text):
            cited += re.findall(r"S\d+", group)  # both ends of a range S46-S82
        missing += [(name, k) for k in cited if k not in keys]
    assert not missing, missing


# A path into the repository (not a user's data folder such as ~/.local/share/cudaswitch/toolkits), with an extension
REPO_PATH = re.compile(r"(?<![\w/~.$-])((?:cudaswitch|tests|templates|hooks|docs|benchmarks|scripts)/[\w./-]*\w"
                       r"\.(?:py|md|sh|csv|json|yaml|fish|csh|ps1|bat|po|txt))(?:#([\w-]+))?")


# A glob a README gives to run a group of tests, such as tests/switching/test_hooks*.py
REPO_GLOB = re.compile(r"(?<![\w/~.$-])((?:tests|benchmarks)/[\w./*-]*\*[\w./*-]*\.py)")


def _anchors(md: Path):
    text = md.read_text(encoding="utf-8")
    ids = set(re.findall(r'<a id="([\w-]+)"></a>', text))
    for heading in re.findall(r"^#+\s+(.*)$", text, flags=re.M):  # GitHub's heading anchors
        ids.add(re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", heading.strip().lower())))
    return ids


def test_every_repository_file_the_product_cites_exists():
    """What cudaswitch/, templates/ and hooks/ point a reader to is in this checkout (the data tables are left out:
    sources.csv names other projects' files next to their URLs)."""
    missing = []
    for name, text in _files():
        if not name.startswith(("cudaswitch/", "templates/", "hooks/")) or name.startswith("cudaswitch/data/"):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            for path, anchor in REPO_PATH.findall(line):
                target = ROOT / path
                if not target.is_file():
                    missing.append(f"{name}:{n}: {path}")
                elif anchor and path.endswith(".md") and anchor not in _anchors(target):
                    missing.append(f"{name}:{n}: {path}#{anchor} (no such anchor)")
    assert not missing, "cited but not in the repository:\n" + "\n".join(missing)


def test_the_path_check_sees_a_citation_and_a_missing_file():
    assert REPO_PATH.findall("see docs/design/activation.md#hl3 and tests/seams.py.") == [
        ("docs/design/activation.md", "hl3"), ("tests/seams.py", "")]
    assert REPO_PATH.findall("~/.local/share/cudaswitch/toolkits/x.json, $HOME/cudaswitch/a.py") == []
    assert "hl3" in _anchors(ROOT / "docs" / "design" / "activation.md")
    assert not (ROOT / "cudaswitch" / "cudnn_install.py").exists()  # a flat module of before the house
    assert REPO_GLOB.findall("python -m pytest tests/test_hooks*.py tests/*/test_*_zh.py -q") == [
        "tests/test_hooks*.py", "tests/*/test_*_zh.py"]
    assert not any(ROOT.glob("tests/test_hooks*.py")) and any(ROOT.glob("tests/*/test_*_zh.py"))


DOCS = ["README.md", "README.zh-CN.md", "CONTRIBUTING.md", "templates/README.md", "hooks/README.md", "docs/index.md",
        "docs/index.zh.md"]


def test_every_repository_file_the_documentation_and_tests_cite_exists():
    """The READMEs, the guide, CONTRIBUTING.md, the design notes and the tests name test files and modules by path;
    after a file moves every such path must still lead somewhere."""
    docs = [ROOT / d for d in DOCS] + sorted((ROOT / "docs" / "design").glob("*.md")) + sorted(
        (ROOT / "docs" / "guide").glob("*.md"))
    texts = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in docs if p.is_file()]
    texts += [(name, text) for name, text in _files() if name.startswith(("tests/", "benchmarks/"))]
    missing = []
    for name, text in texts:
        for n, line in enumerate(text.splitlines(), 1):
            for path, _anchor in REPO_PATH.findall(line):
                if not (ROOT / path).exists() and "/activation/conftest.py" not in path:  # virtualenv's, named as such
                    missing.append(f"{name}:{n}: {path}")
            missing += [f"{name}:{n}: {pattern} (matches nothing)" for pattern in REPO_GLOB.findall(line)
                        if not any(ROOT.glob(pattern))]
    assert not missing, "cited but not in the repository:\n" + "\n".join(missing)
