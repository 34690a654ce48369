#!/usr/bin/env bash
# Launch-shape and kernel-build measurements on the GPU machine (see docs/bench/measurements.md):
# the time to build the search kernel (specialised to the model, and whole), then n-queens
# all solutions counted (--count-only) under several FZN_GPU_* settings.
# Usage there: bash scripts/device_tune.sh OUT N [SETTINGS...], each setting as
# LAYOUT:ITEMS_PER_CU:LOCAL:SUBS_PER_ITEM (e.g. interleaved:512:64:50).
set -uo pipefail
out=${1:?usage: $0 OUT N [LAYOUT:ITEMS:LOCAL:SUBS...]}; n=${2:?}; shift 2
source scripts/device_env.sh
export FZN_GPU_BUCKET=off     # these counts measure the search kernels, not bucket elimination's count
mkdir -p "$out"
work=$(mktemp -d)
for q in 8 "$n"; do
  minizinc -c --solver gpu-fzn models/bench/nqueens.mzn -D "n=$q;" --fzn "$work/q$q.fzn" --ozn "$work/q$q.ozn"
done
stat() { grep -oE "(solutions|nodes|initTime|buildTime|splitTime|kernelTime|solveTime|workItems|subSearchSpaces)=[0-9.e+-]+" | tr '\n' ' '; }
t0=$EPOCHREALTIME
fzn-gpu -a --count-only -s "$work/q8.fzn" | stat
echo "| build + 8-queens, specialised kernel | $(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}") s |" | tee -a "$out/tune.md"
for setting in "$@"; do
  IFS=: read -r layout items local subs <<<"$setting"
  t0=$EPOCHREALTIME
  line=$(FZN_GPU_LAYOUT=$layout FZN_GPU_ITEMS_PER_CU=$items FZN_GPU_LOCAL=$local FZN_GPU_SUBS_PER_ITEM=${subs:-50} \
         timeout 120 fzn-gpu -a --count-only -s "$work/q$n.fzn" | stat)
  echo "| $n-queens $layout items/CU=$items local=$local subs/item=${subs:-50} | $(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}") s | $line |" | tee -a "$out/tune.md"
done
