"""Maintainer script: regenerate cudaswitch/data/toolkit_wheels.csv, the exact files `install-toolkit` downloads.

    python tools/update_toolkit_wheels.py [--index https://pypi.org/simple] [--write]   # network: 6 listings

For every CUDA 13.x minor NVIDIA publishes, each of the six component wheels (COMPONENTS_13 of
cudaswitch/discovery/toolkit_install.py) is pinned to its newest release of that minor, as `==X.Y.*` would resolve
it, and to the SHA-256 of every x86_64 Linux file of that release, as the index's PEP 691 JSON listing (what pip
reads) gives them; nothing is downloaded. A minor for which one of the six has no release is left out. Rows are
printed; `--write` replaces the table. Run it when NVIDIA publishes a release; the table is what makes a fake higher
version or a different file on any index in a user's pip configuration fail instead of being installed.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cudaswitch.discovery.toolkit_install import COMPONENTS_13  # noqa: E402

TABLE = REPO / "cudaswitch" / "data" / "toolkit_wheels.csv"
SRC = "S130"
FIELDS = ["cuda", "package", "version", "filename", "sha256", "src"]


def listing(index: str, package: str) -> list:
    req = urllib.request.Request(f"{index.rstrip('/')}/{package}/",
                                 headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)["files"]


def rows(index: str) -> list:
    by_pkg = {}
    for pkg in COMPONENTS_13:
        files = {}
        for f in listing(index, pkg):
            m = re.fullmatch(rf"{pkg.replace('-', '_')}-(\d+)\.(\d+)\.(\d+)-py3-none-(.+)\.whl", f["filename"])
            if m and "x86_64" in m.group(4) and "linux" in m.group(4) and not f.get("yanked"):
                key = tuple(int(x) for x in m.group(1, 2, 3))
                files.setdefault(key, []).append((f["filename"], f["hashes"]["sha256"]))
        by_pkg[pkg] = files
    minors = sorted({v[:2] for v in by_pkg[COMPONENTS_13[0]] if v[0] >= 13})
    out = []
    for minor in minors:
        newest = {pkg: max((v for v in by_pkg[pkg] if v[:2] == minor), default=None) for pkg in COMPONENTS_13}
        if None in newest.values():
            print(f"CUDA {minor[0]}.{minor[1]}: no release of {[p for p, v in newest.items() if v is None]}; left out",
                  file=sys.stderr)
            continue
        for pkg in COMPONENTS_13:
            v = newest[pkg]
            for name, sha in sorted(by_pkg[pkg][v]):
                out.append({"cuda": f"{minor[0]}.{minor[1]}", "package": pkg, "version": ".".join(map(str, v)),
                            "filename": name, "sha256": sha, "src": SRC})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", default="https://pypi.org/simple")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    text = io.StringIO()
    w = csv.DictWriter(text, FIELDS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows(args.index))
    print(text.getvalue(), end="")
    if args.write:
        TABLE.write_text(text.getvalue(), encoding="utf-8")


if __name__ == "__main__":
    main()
