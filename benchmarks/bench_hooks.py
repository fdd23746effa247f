"""Per-activation cost of cudaswitch's .sh hooks (issue 3, Performance): in one bash process, source the generated
activate + deactivate pair 1000 times, and an empty file twice per round 1000 times, and print the difference.
Also the prompt-time reconciler of `cudaswitch init bash` (issue 8): its cost per prompt when there is nothing to
do (no record) and when it cleans (a record set, $CONDA_PREFIX without hooks), each against an empty function,
which is what an empty PROMPT_COMMAND function costs, in the same run.

    python benchmarks/bench_hooks.py [--rounds N] [--shell bash]

Target: under 2 ms per activate/deactivate pair (conda's own activation costs hundreds of ms). Times bash alone, no
Python start, so it needs no userpython.py environment.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cudaswitch.switching import hookfiles as hooks  # noqa: E402
from cudaswitch.switching.activation import Changes  # noqa: E402

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
. "$RECONCILE"
_empty_prompt_fn() { :; }
_prompt() {  # _prompt FN CLEAN: microseconds for ROUNDS prompts running FN; with CLEAN, each round first leaves
  # the state conda#14762 leaves (our entry in front, its record set), restoring it costs the same for both FNs
  _t0=${EPOCHREALTIME/./}
  _i=0
  while [ $_i -lt $ROUNDS ]; do
    if [ -n "$2" ]; then PATH=$LEAK_PATH; _CUDASWITCH_ADDED_PATH=$ENTRY; fi
    "$1"
    _i=$((_i + 1))
  done
  _t1=${EPOCHREALTIME/./}
  echo $((_t1 - _t0))
}
CONDA_PREFIX=$PLAIN
for _r in 1 2; do
  _prompt _empty_prompt_fn ""; _prompt __cudaswitch_reconcile ""
  _prompt _empty_prompt_fn 1; _prompt __cudaswitch_reconcile 1
done
PATH=$LEAK_PATH
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
        plain = os.path.join(tmp, "envs", "plain")  # an env without cudaswitch hooks
        os.makedirs(os.path.join(plain, "bin"))
        leak = root + "/bin:" + path.replace(prefix, plain)
        env = dict(os.environ, ROUNDS=str(args.rounds), EMPTY=empty, CONDA_PREFIX=prefix, PATH=path,
                   ACT=os.path.join(d, "activate.d", "cudaswitch.sh"),
                   DEACT=os.path.join(d, "deactivate.d", "cudaswitch.sh"),
                   RECONCILE=str(Path(__file__).resolve().parent.parent / "hooks" / "reconcile.sh"),
                   PLAIN=plain, LEAK_PATH=leak, ENTRY=root + "/bin")
        out = subprocess.run(["bash", "--noprofile", "--norc", "-c", BASH_TIMER], env=env, capture_output=True,
                             text=True, check=True)
        e1, h1, e2, h2, *rec = (int(x) for x in out.stdout.split())
        empty_us, hook_us = min(e1, e2) / args.rounds, min(h1, h2) / args.rounds
        # per prompt: empty function / reconciler, nothing to do; empty function / reconciler, cleaning
        fn_idle, rc_idle, fn_clean, rc_clean = (min(rec[i], rec[i + 4]) / args.rounds for i in range(4))
    overhead = hook_us - empty_us
    print(f"bash {subprocess.run(['bash', '-c', 'echo $BASH_VERSION'], capture_output=True, text=True).stdout.strip()}, "
          f"{args.rounds} rounds, PATH of 16 entries, best of 2")
    print(f"empty file sourced twice:         {empty_us / 1000:.3f} ms per round")
    print(f"activate + deactivate .sh hooks:  {hook_us / 1000:.3f} ms per round")
    print(f"overhead per activate/deactivate pair: {overhead / 1000:.3f} ms "
          f"({hook_us / empty_us:.0f}x an empty file; target < 2 ms)")
    print(f"prompt-time reconciler, nothing to do:  {rc_idle:.1f} us per prompt "
          f"(empty PROMPT_COMMAND function {fn_idle:.1f} us; {rc_idle / fn_idle:.1f}x, +{rc_idle - fn_idle:.1f} us)")
    print(f"prompt-time reconciler, cleaning:       {rc_clean:.1f} us per prompt "
          f"(empty function with the same state reset {fn_clean:.1f} us; +{rc_clean - fn_clean:.1f} us)")


if __name__ == "__main__":
    main()
