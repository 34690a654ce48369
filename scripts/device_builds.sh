#!/usr/bin/env bash
# What a kernel build costs the user on the GPU machine, and what specialising buys: for each
# case, `fzn-gpu --build-only --devices gpu` with no compiler cache at all (pyopencl's and
# NVIDIA's off: a cold build), then twice with pyopencl's cache (filling it, then reading it);
# with SPEED=1, the specialised kernel (the model's kinds only, the default) beside the generic
# one (every kind, FZN_GPU_SPECIALISE=0) in counts and branch and bound: wall, kernel time, nodes.
# Usage there: [SPEED=1] bash scripts/device_builds.sh OUT CASE...   (CASE: MODEL:DATA of
# models/bench, e.g. tsp.mzn:tsp_60.dzn, or nqueens.mzn:n=15 for a model taking -D)
set -uo pipefail
out=${1:?usage: $0 OUT CASE...}; shift
source scripts/device_env.sh >/dev/null 2>&1
source scripts/opt_instances.sh
opt_setup "$out"
fzn_of() {  # MODEL:DATA -> path of its FlatZinc
  local model=${1%%:*} data=${1##*:} f="$work/$(echo "${1##*:}" | tr -c 'a-zA-Z0-9_\n' _).fzn"
  if [[ $data == *=* ]]; then
    minizinc -c --solver gpu-fzn "models/bench/$model" -D "$data;" --fzn "$f" --ozn "$work/x.ozn" >/dev/null
  else
    minizinc -c --solver gpu-fzn "models/bench/$model" "models/bench/data/$data" --fzn "$f" --ozn "$work/x.ozn" >/dev/null
  fi
  echo "$f"
}
ready() { grep -oE "ready on .* in [0-9.]+ s" | grep -oE "[0-9.]+ s$" | tr '\n' ' '; }
wall() { local t0=$EPOCHREALTIME; "$@" > "$work/out.txt" 2>&1; awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}"; }
table_start "$out/builds.md" case kinds "cold s (ready)" "cache filled s" "cached s"
for c in "$@"; do
  f=$(fzn_of "$c")
  kinds=$(grep -oE "^constraint [a-z_0-9]+" "$f" | sort -u | wc -l)
  cold=$(wall env PYOPENCL_NO_CACHE=1 CUDA_CACHE_DISABLE=1 fzn-gpu --devices gpu --build-only "$f"); cr=$(ready < "$work/out.txt")
  fill=$(wall fzn-gpu --devices gpu --build-only "$f")
  warm=$(wall fzn-gpu --devices gpu --build-only "$f"); wr=$(ready < "$work/out.txt")
  echo "| $c | $kinds | $cold ($cr) | $fill | $warm ($wr) |" | tee -a "$out/builds.md"
done
[ "${SPEED:-0}" = 1 ] || exit 0
stat() { grep -oE "(nodes|kernelTime|buildTime|solutions|objective)=[0-9.e+-]+" | tr '\n' ' '; }
table_start "$out/speed.md" case kernel "wall s" statistics
for c in "$@"; do
  f=$(fzn_of "$c")
  if grep -qE "^solve .*(minimize|maximize)" "$f"; then how=(--engine complete -t 10000); else how=(-a --count-only); fi
  for spec in 1 0; do
    FZN_GPU_SPECIALISE=$spec fzn-gpu --devices gpu --build-only "$f" >/dev/null 2>&1
    w=$(wall env FZN_GPU_SPECIALISE=$spec fzn-gpu --devices gpu -s "${how[@]}" "$f")
    echo "| $c | $([ $spec = 1 ] && echo specialised || echo generic) | $w | $(stat < "$work/out.txt") |" | tee -a "$out/speed.md"
  done
done
