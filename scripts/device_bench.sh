#!/usr/bin/env bash
# Runs the benchmark suite on the GPU machine, where nothing can be downloaded. Carried along:
#   .whl/   pyopencl, pytools, platformdirs, siphash24, lark wheels for Python 3.12
#   .carry/ minizinc-gecode.tar.xz from ../shared/tools/pack-minizinc-for-device.sh
# and ../shared/bench copied to .carry/bench. Usage there: bash scripts/device_bench.sh OUT [bench args]
set -euo pipefail
out=${1:?usage: $0 OUT_DIR [python -m fzn_gpu.bench args]}; shift
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD
mkdir -p /opt/mzn && tar -C /opt/mzn -xJf .carry/minizinc-gecode.tar.xz
export PATH=/opt/mzn/bin:/tmp/fzn-bin:$PATH LD_LIBRARY_PATH=/opt/mzn/lib
mkdir -p /etc/OpenCL/vendors
[ -e /etc/OpenCL/vendors/nvidia.icd ] || echo /usr/lib/libnvidia-opencl.so > /etc/OpenCL/vendors/nvidia.icd
mkdir -p /tmp/fzn-bin
printf '#!/bin/sh\nexec python3 -m fzn_gpu "$@"\n' > /tmp/fzn-bin/fzn-gpu && chmod +x /tmp/fzn-bin/fzn-gpu
python3 -m fzn_gpu install-solver-config
python3 -m fzn_gpu --list-devices
minizinc --solvers | grep -E "gpu-fzn|Gecode"
python3 -m fzn_gpu.bench --bench-dir .carry/bench --out "$out" "$@"
