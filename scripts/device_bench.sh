#!/usr/bin/env bash
# Runs the benchmark suite on the GPU machine. Carried along: .whl/ (pyopencl, pytools,
# platformdirs, siphash24, lark wheels for Python 3.12), .carry/minizinc-gecode.tar.xz and
# the suite of models/bench, whose data files the benchmark command writes (instances.py).
# Usage there: bash scripts/device_bench.sh OUT [python -m fzn_gpu.bench args]
set -euo pipefail
out=${1:?usage: $0 OUT_DIR [python -m fzn_gpu.bench args]}; shift
source scripts/device_env.sh
minizinc --solvers | grep -E "gpu-fzn|Gecode"
python3 -m fzn_gpu.bench --bench-dir models/bench --out "$out" "$@"
