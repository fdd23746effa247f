"""Per-activation cost of cudaswitch's .sh hooks (issue 3, Performance): in one bash process, source the generated
activate + deactivate pair 1000 times, and an empty file twice per round 1000 times, and print the difference.

    python benchmarks/bench_hooks.py [--rounds N] [--shell bash]

Target: under 2 ms per activate/deactivate pair (conda's own activation costs hundreds of ms).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cudaswitch import hooks  # noqa: E402
from cudaswitch.activation import Changes  # noqa: E402
from cudaswitch.shells import quote_sh  # noqa: E402

BASH_TIMER = r"""
_bench() {  # _bench FILE1 FILE2: microseconds for ROUNDS rounds of sourcing both files
  _t0=${EPOCHREALTIME/./}
  _i=0
  while [ $_i -lt $ROUNDS ]; do . "$1"; . "$2"; _i=$((_i + 1)); done
  _t1=${EPOCHREALTIME/./}
  echo $((_t1 - _t0))
}
_bench "$EMPTY" "$EMPTY"
_bench "$ACT" "$DEACT"
_bench "$EMPTY" "$EMPTY"
_bench "$ACT" "$DEACT"
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "cuda-12.9")
        for sub in ("bin", "lib64"):
            os.makedirs(os.path.join(root, sub))
        prefix = os.path.join(tmp, "envs", "torch")
        os.makedirs(os.path.join(prefix, "bin"))
        ch = Changes(scalars={"CUDA_PATH": root, "CUDA_HOME": root},
                     prepend={"PATH": [root + "/bin"], "LD_LIBRARY_PATH": [root + "/lib64"]})
        hooks.write_hooks(prefix, ch, "12.9")
        empty = os.path.join(tmp, "empty.sh")
        Path(empty).write_text("")
        d = os.path.join(prefix, "etc", "conda")
        # A PATH of realistic length with the env active (16 entries).
        path = ":".join([prefix + "/bin"] + [f"/opt/tool{i}/bin" for i in range(12)] + ["/usr/local/bin", "/usr/bin",
                                                                                            "/bin"])
        env = dict(os.environ, ROUNDS=str(args.rounds), EMPTY=empty, CONDA_PREFIX=prefix, PATH=path,
                   ACT=os.path.join(d, "activate.d", "cudaswitch.sh"),
                   DEACT=os.path.join(d, "deactivate.d", "cudaswitch.sh"))
        out = subprocess.run(["bash", "--noprofile", "--norc", "-c", BASH_TIMER], env=env, capture_output=True,
                             text=True, check=True)
        e1, h1, e2, h2 = (int(x) for x in out.stdout.split())
        empty_us, hook_us = min(e1, e2) / args.rounds, min(h1, h2) / args.rounds
    overhead = hook_us - empty_us
    print(f"bash {subprocess.run(['bash', '-c', 'echo $BASH_VERSION'], capture_output=True, text=True).stdout.strip()}, "
          f"{args.rounds} rounds, PATH of 16 entries, best of 2")
    print(f"empty file sourced twice:         {empty_us / 1000:.3f} ms per round")
    print(f"activate + deactivate .sh hooks:  {hook_us / 1000:.3f} ms per round")
    print(f"overhead per activate/deactivate pair: {overhead / 1000:.3f} ms "
          f"({hook_us / empty_us:.0f}x an empty file; target < 2 ms)")


if __name__ == "__main__":
    main()
