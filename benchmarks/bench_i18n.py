"""What translation costs at start-up: each command run with LANG=en_US.UTF-8 and with LANG=zh_CN.UTF-8,
interleaved in the same loop so machine noise hits both; the figure is the ratio of medians (zh / en).

  - `list --json` (20 toolkits): prints no human text, so it must not read the catalog (target ratio ~1.0);
  - `doctor -p MISSING`: one translated error line, so the catalog is read (the cost of the lazy load);
  - `use --help`: the whole help page, translated by cudaswitch/cli/help_text.py in zh_CN (imported and the catalog
    read only then); in English click's own formatter, untouched.

With `--baseline DIR` (a checkout from before translation, e.g. `git archive 057d576 | tar -x -C DIR`), also
`list --json` of this checkout against DIR's under LANG=zh_CN.UTF-8, interleaved (ratio this / baseline).

Every command runs as a user's machine runs it (userpython.py): through the script pip writes (for DIR, the entry
point DIR's pyproject.toml names), in a fresh virtual environment with no startup file that imports anything.

Run: python benchmarks/bench_i18n.py [--runs 30] [--baseline DIR]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_list import make_toolkits, timed  # noqa: E402
from userpython import users_env, users_python  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--baseline", help="a checkout of cudaswitch without translation")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        roots = make_toolkits(Path(tmp))
        base = {k: v for k, v in os.environ.items()
                if k not in ("CUDASWITCH_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")}
        base.update(CUDASWITCH_SEARCH_PATH=os.pathsep.join(roots), CUDASWITCH_CONFIG=str(Path(tmp) / "none.yaml"))
        base = users_env(base)
        ours = list(users_python(Path(tmp) / "venv"))
        en, zh = dict(base, LANG="en_US.UTF-8"), dict(base, LANG="zh_CN.UTF-8")
        missing = str(Path(tmp) / "没有这个环境")
        check = subprocess.run([*ours, "doctor", "-p", missing], env=zh,
                               capture_output=True, text=True)
        assert "错误" in check.stderr, check.stderr  # the zh run really prints Chinese
        check = subprocess.run([*ours, "use", "--help"], env=zh, capture_output=True,
                               text=True)
        assert check.stdout.startswith("用法："), check.stdout
        for label, cmd in (("list --json", ["list", "--json"]),
                           ("doctor -p MISSING (error line)", ["doctor", "-p", missing]),
                           ("use --help", ["use", "--help"])):
            full = [*ours, *cmd]
            a, b = [], []
            for _ in range(args.runs):
                a.append(timed(full, en, check=False))
                b.append(timed(full, zh, check=False))
            ma, mb = statistics.median(a), statistics.median(b)
            print(f"{label:<32} en {ma * 1000:6.1f} ms   zh_CN {mb * 1000:6.1f} ms   ratio zh/en {mb / ma:.2f}"
                  f"   ({args.runs} runs)")
        if args.baseline:
            full = [*ours, "list", "--json"]
            old = [*users_python(Path(tmp) / "venv-baseline", Path(args.baseline).resolve()), "list", "--json"]
            a, b = [], []
            for _ in range(args.runs):
                a.append(timed(full, zh, check=False))
                b.append(timed(old, zh, check=False))
            ma, mb = statistics.median(a), statistics.median(b)
            print(f"{'list --json, zh_CN, vs baseline':<32} this {ma * 1000:6.1f} ms   baseline {mb * 1000:6.1f} ms   "
                  f"ratio {ma / mb:.2f}   ({args.runs} runs)")


if __name__ == "__main__":
    main()
