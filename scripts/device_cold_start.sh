#!/usr/bin/env bash
# First runs on the GPU machine with the kernel caches emptied, against runs after set-up
# (scripts/cold_start.py says what it measures). Carried along: .whl/, .carry/pocl.tar.xz and
# .carry/minizinc-gecode.tar.xz (scripts/device_env.sh says how they are used).
# Usage there: bash scripts/device_cold_start.sh OUT [LIMIT_S]
set -uo pipefail
out=${1:?usage: $0 OUT [LIMIT_S]}
source scripts/device_env.sh >/dev/null 2>&1
python3 scripts/cold_start.py "$out" "${2:-10}"
