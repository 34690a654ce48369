#!/usr/bin/env bash
# Start-up through MiniZinc on the GPU machine: `minizinc --solver gpu-fzn` (OpenCL started in a
# thread beside the imports and the model's reading, and without: FZN_GPU_EARLY_OPENCL=0) against
# `minizinc --solver gecode` on small models, REPS runs each, interleaved, wall time of each call
# (MiniZinc's compilation included, as a user sees it). The first fzn-gpu run builds the kernel.
# Usage there: [REPS=7] bash scripts/device_startup.sh OUT [MODEL.mzn ...]
set -uo pipefail
out=${1:?usage: $0 OUT [MODEL.mzn ...]}; shift
models=("$@"); [ ${#models[@]} -gt 0 ] || models=(models/nqueens.mzn models/send_more_money.mzn)
reps=${REPS:-7}
source scripts/device_env.sh >/dev/null 2>&1
mkdir -p "$out"
for m in "${models[@]}"; do minizinc --solver gpu-fzn "$m" >/dev/null 2>&1; done     # builds, once
wall() { local t0=$EPOCHREALTIME; "$@" >/dev/null 2>&1; awk "BEGIN{printf \"%.3f\", $EPOCHREALTIME - $t0}"; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
echo "| model | fzn-gpu, OpenCL started early (median, all) | fzn-gpu, not early | Gecode | early / Gecode |" | tee "$out/startup.md"
echo "|---|---|---|---|---|" | tee -a "$out/startup.md"
for m in "${models[@]}"; do
  early="" late="" gecode=""
  for _ in $(seq "$reps"); do
    early+=" $(wall env FZN_GPU_EARLY_OPENCL=1 minizinc --solver gpu-fzn "$m")"
    late+=" $(wall env FZN_GPU_EARLY_OPENCL=0 minizinc --solver gpu-fzn "$m")"
    gecode+=" $(wall minizinc --solver gecode "$m")"
  done
  e=$(echo "$early" | median); l=$(echo "$late" | median); g=$(echo "$gecode" | median)
  echo "| $(basename "$m") | $e ($early ) | $l ($late ) | $g ($gecode ) | $(awk "BEGIN{printf \"%.1f\", $e / $g}") |" \
    | tee -a "$out/startup.md"
done
