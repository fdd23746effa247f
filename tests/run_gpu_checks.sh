#!/usr/bin/env bash
# The checks that need a real NVIDIA GPU, as one short script for a machine that has one (CI has none):
# the gpu-marked tests, and the real output of the commands on that machine. Results go to $OUT (default
# /tmp/cudaswitch-gpu). Wheels of missing run-time dependencies may be put in .whl/ beforehand.
set -u
OUT=${OUT:-/tmp/cudaswitch-gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/cs-site .whl/*.whl && export PYTHONPATH=/tmp/cs-site
fi
cs() { echo "\$ cudaswitch $*"; python3 -m cudaswitch "$@"; echo "(exit status $?)"; }
{
  nvidia-smi -L
  cs list
  cs status
  cs doctor
  cs recommend
  # A conda-like environment whose Python sees this machine's own CUDA torch.
  env=/tmp/cs-gpu-env
  python3 -m venv --without-pip "$env" && mkdir -p "$env/conda-meta"
  python3 -c "import site; print('\n'.join(site.getsitepackages()))" > "$(echo "$env"/lib/python3*/site-packages)/zz_machine_torch.pth"
  sel=$(python3 -m cudaswitch list --json | python3 -c "import json,sys; t=json.load(sys.stdin)['toolkits']; print(next((x['root'] for x in t if x['nvcc'] and x['kind']=='toolkit'), t[0]['root'] if t else ''))")
  cs use "$sel" -p "$env" --no-ld-library-path
  cs smoke -p "$env" --json
  cs use "$sel" -p "$env" --ld-library-path
} > "$OUT/commands.txt" 2>&1
python3 -m pytest -p no:cacheprovider -m gpu tests/checks/test_smoke_gpu.py tests/cudnn/test_cudnn_gpu.py -v -s > "$OUT/pytest-gpu.txt" 2>&1
echo "pytest exit: $?" >> "$OUT/pytest-gpu.txt"
tail -n 5 "$OUT/pytest-gpu.txt"
