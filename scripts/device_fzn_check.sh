#!/usr/bin/env bash
# GPU-only bugs in FlatZinc files compiled here (carried in a folder): the kernels of every
# constraint kind built for the GPU (item and group models: a propagator NVIDIA's compiler
# refuses shows here, whichever models use it), then each file on the GPU alone with --check:
# sat models counted with -a, optimisation models to their final status. Wall seconds per run.
# Usage there: bash scripts/device_fzn_check.sh OUT FZN_DIR [LIMIT_S]
set -uo pipefail
out=${1:?usage: $0 OUT FZN_DIR [LIMIT_S]}; dir=${2:?}; limit=${3:-60}
source scripts/device_env.sh >/dev/null 2>&1
mkdir -p "$out"
python3 - <<'PY' 2>&1 | tee "$out/build.txt"
import time
from fzn_gpu.device import build, select_devices
gpu = select_devices("gpu")[0]
for model in ("item", "group"):
    t0 = time.time()
    build(gpu, None, model=model)
    print(f"every kind, {model} kernel: built on {gpu.name} in {time.time() - t0:.1f} s")
PY
for f in "$dir"/*.fzn; do
  if grep -q "^solve.*satisfy" "$f"; then flags="-a --count-only"; else flags=""; fi
  t0=$EPOCHREALTIME
  timeout "$limit" python3 -m fzn_gpu --devices gpu --check -s $flags "$f" > "$out/o.txt" 2>&1
  rc=$?
  echo "| $(basename "$f" .fzn) | rc $rc | $(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}") s | $(grep -oE "solutions=[0-9]+|objective=[-0-9]+" "$out/o.txt" | tail -1) | $(grep -E "^(=====|==========)" "$out/o.txt" | tail -1) | $(grep -iE "error|violat" "$out/o.txt" | head -1) |" | tee -a "$out/results.md"
done
