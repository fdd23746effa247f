"""Maintainer script: regenerate the rows of cudaswitch/data/*.csv that the package registry itself can tell.

    python tools/update_tables.py fetch [--since 2.9] [-o tools/registry_snapshot.json]   # asks pip; network
    python tools/update_tables.py apply [tools/registry_snapshot.json] [--write]          # no network

`fetch` asks pip only (so the maintainer's index, proxy and certificates apply): `pip index versions` for the
release lists (torch per Python version, torchvision, torchaudio, nvidia-cudnn-cu11/-cu12/-cu13, nvidia-cuda-nvcc[-cu12]),
and `pip install --dry-run --report` for each torch / torchvision / torchaudio release, which reads the index's
metadata files (PEP 658) instead of downloading wheels: the default Linux torch wheel's `Requires-Dist` names its CUDA
(`cuda-toolkit==13.2.2` or `nvidia-cuda-runtime-cu12==12.8.90`) and cuDNN (`nvidia-cudnn-cu13==9.26.0.51`). The one
thing pip cannot tell is when a release was published: PyTorch publishes torch, torchvision and torchaudio together,
on one day, so the day of each release comes from PyPI's JSON API (`/pypi/NAME/json`, the files' `upload_time`). The
result is a JSON snapshot, committed, so `apply` and the tests never need the network.

`apply` prints every row it would add or change; `--write` rewrites the CSV files. Rows from richer sources (e.g.
the alternative CUDA builds on download.pytorch.org, which PyPI does not carry) are never overwritten: for those it
only checks that the PyPI default build agrees and says so when it does not.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

DATA = Path(__file__).resolve().parent.parent / "cudaswitch" / "data"
SNAPSHOT = Path(__file__).resolve().parent / "registry_snapshot.json"
PYTHONS = ["3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15"]
PLATFORM = "manylinux_2_28_x86_64"
SRC_PYPI = "S119"  # PyPI metadata of torch/torchvision/torchaudio wheels (this script)
SRC_PYPI_NVIDIA = "S120"  # PyPI release lists of NVIDIA's wheels (this script)
SRC_PYPI_DATES = "S131"  # PyPI JSON API: the day each torch / torchvision / torchaudio release was uploaded
# torchaudio 2.11 is built against torch's stable ABI and "works with PyTorch 2.11 and with every future PyTorch
# release" (its compatibility matrix, S132); its 2.11.0 wheels declare no torch requirement at all, so the registry
# cannot tell this and it is written here. {package: (series, first torch it works with, source)}
STABLE_ABI = {"torchaudio": ("2.11", "2.11", "S132")}
# CUDA 13.x minor -> driver branch (sources.csv S41 names where from); PyPI cannot tell drivers.
DRIVER_BRANCH = {(13, 3): "R610", (13, 4): "R615"}


def vt(text: str) -> Tuple[int, ...]:
    m = re.match(r"(\d+(?:\.\d+)*)", text or "")
    return tuple(int(p) for p in m.group(1).split(".")) if m else ()


# ---- fetch (network, through pip) -------------------------------------------------------------------------------

def _pip_env() -> Dict[str, str]:
    # A site-wide constraints file (e.g. 'torch<=2.14.1') must not hide newer releases from a metadata query.
    return dict(os.environ, PIP_CONSTRAINT="/dev/null", PIP_DISABLE_PIP_VERSION_CHECK="1")


def index_versions(name: str, python: Optional[str] = None) -> List[str]:
    cmd = [sys.executable, "-m", "pip", "index", "versions", name]
    if python:
        cmd += ["--python-version", python, "--platform", PLATFORM, "--only-binary=:all:"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=_pip_env(), timeout=300)
    m = re.search(r"Available versions:\s*(.*)", r.stdout)
    # local builds (2.13.0+cpu from a find-links folder) are not registry releases
    return [v.strip() for v in m.group(1).split(",") if v.strip() and "+" not in v] if m else []


def metadata(spec: str, python: str) -> Optional[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "r.json"
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--report", str(report),
                            "--no-deps", "--ignore-installed", "--only-binary=:all:", "--platform", PLATFORM,
                            "--python-version", python, "--target", str(Path(tmp) / "t"), spec],
                           capture_output=True, text=True, env=_pip_env(), timeout=600)
        if r.returncode != 0 or not report.exists():
            return None
        item = json.loads(report.read_text())["install"][0]
    md = item["metadata"]
    return {"version": md["version"], "requires_python": md.get("requires_python"),
            "requires_dist": md.get("requires_dist", []), "url": item["download_info"]["url"]}


def upload_days(name: str) -> Dict[str, str]:
    """{version: 'YYYY-MM-DD'} of the first file of each release, from PyPI's JSON API."""
    import urllib.request

    with urllib.request.urlopen(f"https://pypi.org/pypi/{name}/json", timeout=120) as r:  # noqa: S310 (fixed URL)
        releases = json.loads(r.read().decode("utf-8"))["releases"]
    return {v: min(f["upload_time"] for f in files)[:10] for v, files in releases.items() if files and "+" not in v}


def fetch(since: str) -> dict:
    floor = vt(since)
    torch_all = [v for v in index_versions("torch") if vt(v) >= floor]
    per_python = {py: [v for v in index_versions("torch", py) if vt(v) >= floor] for py in PYTHONS}
    torch = {}
    for v in torch_all:
        pys = [py for py in PYTHONS if v in per_python[py]]
        md = metadata(f"torch=={v}", pys[-1] if pys else "3.12")
        torch[v] = {"pythons": pys, **(md or {})}
        print(f"torch {v}: Python {', '.join(pys)}", file=sys.stderr)
    companions = {}
    for name in ("torchvision", "torchaudio"):
        companions[name] = {}
        for v in sorted(index_versions(name), key=vt, reverse=True):  # newest first, stop below the floor
            md = metadata(f"{name}=={v}", "3.12") or metadata(f"{name}=={v}", "3.11")
            # 'torch==2.8.0' up to torchvision 0.23, 'torch (>=2.14.0)' since the stable-ABI releases
            pin = next((m.group(1) for m in (re.match(r"torch\s*\(?\s*(?:==|>=)\s*([\d.]+)", d)
                                              for d in (md or {}).get("requires_dist", [])) if m), None)
            if pin and vt(pin) < floor:
                break
            if pin:
                companions[name][v] = pin
                print(f"{name} {v}: torch {pin}", file=sys.stderr)
    uploaded = {name: {v: day for v, day in upload_days(name).items()
                       if v in torch or v in companions.get(name, {}) or _in_stable_series(name, v)}
                for name in ("torch", "torchvision", "torchaudio")}
    return {"since": since, "platform": PLATFORM, "torch": torch, **companions, "uploaded": uploaded,
            "nvidia-cudnn-cu11": index_versions("nvidia-cudnn-cu11"),
            "nvidia-cudnn-cu12": index_versions("nvidia-cudnn-cu12"),
            "nvidia-cudnn-cu13": index_versions("nvidia-cudnn-cu13"),
            "nvidia-cuda-nvcc": index_versions("nvidia-cuda-nvcc"),
            "nvidia-cuda-nvcc-cu12": index_versions("nvidia-cuda-nvcc-cu12")}


# ---- apply (no network) -----------------------------------------------------------------------------------------

def default_build(requires_dist: List[str]) -> Tuple[Optional[str], Optional[str]]:
    """(CUDA X.Y, cuDNN) of the default Linux wheel, from its Requires-Dist lines."""
    cuda = cudnn = None
    for d in requires_dist:
        m = re.match(r"cuda-toolkit(?:\[[^\]]*\])?\s*==\s*(\d+\.\d+)", d) or \
            re.match(r"nvidia-cuda-runtime(?:-cu\d+)?\s*==\s*(\d+\.\d+)", d)
        if m and not cuda:
            cuda = m.group(1)
        m = re.match(r"nvidia-cudnn-cu\d+\s*==\s*([\d.]+)", d)
        if m:
            cudnn = m.group(1)
    return cuda, cudnn


# A companion column's value when PyTorch published no such package for that torch: recommend says so and leaves it
# out of the pip line (an empty cell would read as 'not looked up').
NONE = "none"


def _join_src(*keys: str) -> str:
    out: List[str] = []
    for part in keys:
        for k in (part or "").split(";"):
            if k.strip() and k.strip() not in out:
                out.append(k.strip())
    return ";".join(out)


def _py_range(pys: List[str]) -> str:
    return f">={pys[0]}, <={pys[-1]}" if pys else ""


def _read(name: str) -> Tuple[List[str], List[Dict[str, str]]]:
    text = (DATA / name).read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text))
    return list(reader.fieldnames or []), list(reader)


def _write(name: str, fields: List[str], rows: List[Dict[str, str]]) -> None:
    """Unchanged rows keep their exact original line (quoting included), so a regeneration diff shows only what
    the registry changed."""
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    original = {}
    for line in lines[1:]:
        for values in csv.reader([line]):
            original[tuple(values)] = line
    out = [lines[0]]
    for row in rows:
        key = tuple(row.get(f, "") for f in fields)
        if key in original:
            out.append(original[key])
        else:
            buf = io.StringIO()
            csv.writer(buf, lineterminator="").writerow(key)
            out.append(buf.getvalue())
    (DATA / name).write_text("\n".join(out) + "\n", encoding="utf-8")


def _in_stable_series(name: str, version: str) -> bool:
    series = STABLE_ABI.get(name)
    return bool(series) and vt(version)[:2] == vt(series[0])[:2]


def _companion(snapshot: dict, name: str, torch: str) -> Tuple[str, str]:
    """(version, source) of the torchvision or torchaudio published for this torch release; ('', '') when none.

    First the release uploaded on torch's own day whose torch requirement admits it (PyTorch publishes the three
    together; a later torchvision pinned 'torch>=2.14.0' also admits 2.14.0 but was published with 2.15.0). Then,
    for a torch with no companion of its own that day, the newest release of a stable-ABI series (STABLE_ABI)
    published by that day."""
    days = snapshot.get("uploaded", {})
    day = days.get("torch", {}).get(torch)
    pins = snapshot.get(name, {})
    mine = days.get(name, {})
    same_day = [v for v, d in mine.items() if day and d == day and vt(pins.get(v, torch)) <= vt(torch)]
    if same_day:
        return max(same_day, key=vt), SRC_PYPI_DATES
    exact = [v for v, pin in pins.items() if pin == torch and not mine]
    if exact:  # a snapshot without upload days: the exact pin
        return max(exact, key=vt), SRC_PYPI
    series = STABLE_ABI.get(name)
    if series and day and vt(torch)[:2] >= vt(series[1])[:2]:
        stable = [v for v, d in mine.items() if _in_stable_series(name, v) and d <= day]
        if stable:
            return max(stable, key=vt), series[2]
    return "", ""


def plan(snapshot: dict) -> Dict[str, Tuple[List[str], List[Dict[str, str]], List[str]]]:
    """{csv name: (fields, new rows, change lines)}: the tables as the snapshot says they should be."""
    result = {}
    torch = snapshot["torch"]

    # torch_wheels.csv: one row per release; PyPI's default build fills pypi_default_linux. A new row takes its
    # wheel tags from torch_release.csv's builds for that minor when that row exists.
    _, releases = _read("torch_release.csv")
    builds = {vt(r["torch"])[:2]: (re.findall(r"(\d+)\.(\d+)\s*(?:\(|;|$)", r["stable_cuda (cudnn)"]), r["src"])
              for r in releases}
    fields, rows = _read("torch_wheels.csv")
    changes = []
    by_torch = {r["torch"].split(" ")[0]: r for r in rows}
    for v in sorted(torch, key=vt, reverse=True):
        cuda, cudnn = default_build(torch[v].get("requires_dist", []))
        default = f"cu{cuda.replace('.', '')} (cuDNN {cudnn})" if cuda else "cpu"
        row = by_torch.get(v)
        if row is None:
            known, known_src = builds.get(vt(v)[:2], ([], ""))
            tags = sorted({f"cu{a}{b}" for a, b in known} | ({f"cu{cuda.replace('.', '')}"} if cuda else set()),
                          key=lambda t: int(t[2:]))
            tag_text = ", ".join(tags) if known else (f"{tags[0]} (PyPI default; other builds on "
                                                      "download.pytorch.org not listed)" if tags else "")
            vision, vision_src = _companion(snapshot, "torchvision", v)
            audio, audio_src = _companion(snapshot, "torchaudio", v)
            row = {"torch": v, "torchvision": vision or NONE, "torchaudio": audio or NONE,
                   "cuda_wheel_tags (Linux+Windows)": tag_text,
                   "pypi_default_linux": default, "python (torchvision README)": _py_range(torch[v]["pythons"]),
                   "confidence": "high (PyPI metadata)" + ("; tags from torch_release.csv" if known else
                                                          "; default build only"),
                   "src": _join_src(SRC_PYPI, known_src if known else "", vision_src, audio_src)}
            rows.append(row)
            by_torch[v] = row
            changes.append(f"+ torch {v}: default {default}, Python {row['python (torchvision README)']}, "
                           f"torchvision {row['torchvision'] or '-'}, torchaudio {row['torchaudio'] or '-'}")
        else:
            if row["pypi_default_linux"] != default:
                changes.append(f"~ torch {v}: pypi_default_linux {row['pypi_default_linux']!r} -> {default!r}")
                row["pypi_default_linux"] = default
                row["src"] = _join_src(row["src"], SRC_PYPI)
            for name in ("torchvision", "torchaudio"):
                found, src = _companion(snapshot, name, v)
                if (found or NONE) != row[name]:
                    changes.append(f"~ torch {v}: {name} {row[name]!r} -> {found or NONE!r}")
                    row[name] = found or NONE
                    row["src"] = _join_src(row["src"], src)
    rows.sort(key=lambda r: vt(r["torch"]), reverse=True)
    result["torch_wheels.csv"] = (fields, rows, changes)

    # torch_release.csv: a row per minor; existing rows (with their wheel-index builds) are only checked
    fields, rows = _read("torch_release.csv")
    changes = []
    have = {vt(r["torch"])[:2]: r for r in rows}
    minors: Dict[Tuple[int, ...], List[str]] = {}
    for v in torch:
        minors.setdefault(vt(v)[:2], []).append(v)
    for minor in sorted(minors, reverse=True):
        newest = max(minors[minor], key=vt)
        cuda, cudnn = default_build(torch[newest].get("requires_dist", []))
        pys = sorted({p for v in minors[minor] for p in torch[v]["pythons"]}, key=vt)
        label = ".".join(map(str, minor))
        if minor in have:
            row = have[minor]
            if cuda and not re.search(rf"(^|;\s*){re.escape(cuda)}\b", row["stable_cuda (cudnn)"]):
                changes.append(f"! torch {label}: PyPI default build CUDA {cuda} is not among the stable builds "
                               f"{row['stable_cuda (cudnn)']!r} (kept; check the release notes)")
            continue
        row = {f: "" for f in fields}
        row.update({"torch": label, "python": _py_range(pys), "stable_cuda (cudnn)": f"{cuda} ({cudnn})" if cuda
                    else "", "experimental_cuda (cudnn)": "--", "confidence": "med (PyPI default build only)",
                    "src": SRC_PYPI})
        rows.append(row)
        changes.append(f"+ torch {label}: Python {row['python']}, default build CUDA {cuda} (cuDNN {cudnn})")
    rows.sort(key=lambda r: vt(r["torch"]), reverse=True)
    result["torch_release.csv"] = (fields, rows, changes)

    # cudnn_cuda.csv: every cuDNN 9.x minor with wheels; the CUDA majors are those it has wheels for
    fields, rows = _read("cudnn_cuda.csv")
    changes = []
    sys.path.insert(0, str(DATA.parent.parent))
    from cudaswitch.data import knowledge

    groups: Dict[Tuple[int, int], Dict[str, List[str]]] = {}
    for major in ("11", "12", "13"):
        for v in snapshot.get(f"nvidia-cudnn-cu{major}", []):
            if vt(v)[0] == 9:
                groups.setdefault(vt(v)[:2], {}).setdefault(major, []).append(".".join(v.split(".")[:3]))
    for minor in sorted(groups):
        probe = ".".join(map(str, minor)) + ".0"
        if any(_covers(knowledge, r["cudnn_version"], probe) for r in rows):
            continue
        majors = sorted(groups[minor], reverse=True)
        vers = sorted({v for m in majors for v in groups[minor][m]}, key=vt)
        span = vers[0] if len(vers) == 1 else f"{vers[0]}-{vers[-1]}"
        row = {f: "" for f in fields}
        row.update({"cudnn_version": span, "build_tag": " ; ".join(f"for CUDA {m}.x" for m in majors),
                    "supported_cuda_toolkits": " ; ".join(f"{m}.x" for m in majors),
                    "min_driver_linux": " ; ".join({"13": "580.65.06", "12": "525.60.13", "11": "450.80.02"}[m]
                                                   for m in majors),
                    "min_driver_windows": " ; ".join({"13": "N/A", "12": "527.41", "11": "452.39"}[m]
                                                     for m in majors),
                    "notes": "CUDA majors from the wheels NVIDIA publishes (nvidia-cudnn-cu12/-cu13); drivers are "
                             "the majors' minimums", "confidence": "med", "src": f"{SRC_PYPI_NVIDIA};S43"})
        rows.append(row)
        changes.append(f"+ cuDNN {span}: for CUDA {' and '.join(m + '.x' for m in majors)}")
    result["cudnn_cuda.csv"] = (fields, rows, changes)

    # cuda_driver.csv: CUDA 13.x minors NVIDIA publishes compiler wheels for, with the driver branch where known
    fields, rows = _read("cuda_driver.csv")
    changes = []
    have_minor = {vt(r["cuda_version"])[:2] for r in rows}
    for minor in sorted({vt(v)[:2] for v in snapshot.get("nvidia-cuda-nvcc", []) if vt(v)[0] >= 13}, reverse=True):
        if minor in have_minor:
            continue
        nvcc = max((v for v in snapshot["nvidia-cuda-nvcc"] if vt(v)[:2] == minor), key=vt)
        label = ".".join(map(str, minor))
        branch = DRIVER_BRANCH.get(minor, "")
        rows.insert(0, {"cuda_release": f"CUDA {label} (nvidia-cuda-nvcc {nvcc} on PyPI)", "cuda_version": f"{label}.0",
                        "linux_min_driver": branch, "windows_min_driver": branch,
                        "src": f"{SRC_PYPI_NVIDIA};S41" if branch else SRC_PYPI_NVIDIA})
        changes.append(f"+ CUDA {label}: driver {branch or 'not published per minor (13.x minimum applies)'}")
    rows.sort(key=lambda r: vt(r["cuda_version"]), reverse=True)
    result["cuda_driver.csv"] = (fields, rows, changes)
    return result


def _covers(knowledge, text: str, version: str) -> bool:
    span = knowledge._cudnn_span(text)
    if not span:
        return False
    lo, hi = span
    v = vt(version)
    n = max(len(lo), len(hi))
    if text.split(" ")[0].endswith(".x"):
        return v[:len(lo)] == lo
    return lo[:n] <= v[:n] <= hi + (99,) * (n - len(hi)) or v[:2] == hi[:2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="ask the registry (through pip) and write a snapshot")
    f.add_argument("--since", default="2.9")
    f.add_argument("-o", "--output", default=str(SNAPSHOT))
    a = sub.add_parser("apply", help="update the CSV rows from a snapshot; prints what changes")
    a.add_argument("snapshot", nargs="?", default=str(SNAPSHOT))
    a.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    if args.cmd == "fetch":
        snap = fetch(args.since)
        Path(args.output).write_text(json.dumps(snap, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {args.output}: torch {', '.join(sorted(snap['torch'], key=vt))}")
        return 0
    snap = json.loads(Path(args.snapshot).read_text(encoding="utf-8"))
    total = 0
    for name, (fields, rows, changes) in plan(snap).items():
        for line in changes:
            print(f"{name}: {line}")
        total += len([c for c in changes if not c.startswith("!")])
        if args.write and changes:
            _write(name, fields, rows)
    print(f"{total} row changes" + (" written" if args.write else " (run with --write to apply)") if total else
          "tables are up to date with the snapshot")
    return 0


if __name__ == "__main__":
    sys.exit(main())
