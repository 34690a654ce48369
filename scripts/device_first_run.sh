#!/usr/bin/env bash
# A model's first run on a GPU machine, as a user meets it: `fzn-gpu build-kernels` (the
# set-up's generic kernel, timed), then for each case a first run (no specialised kernel built:
# the generic one, `genericKernel` in -s), `--build-only` (the specialised kernel, timed) and the
# same run again. Optimisation: branch and bound alone for LIMIT_S; else all solutions counted.
# Usage there: bash scripts/device_first_run.sh OUT LIMIT_S CASE...   (CASE as device_builds.sh's)
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S CASE...}; limit=${2:?}; shift 2
source scripts/device_env.sh >/dev/null 2>&1
source scripts/opt_instances.sh
opt_setup "$out"
fzn_of() {
  local model=${1%%:*} data=${1##*:} f="$work/$(echo "${1##*:}" | tr -c 'a-zA-Z0-9_\n' _).fzn"
  if [[ $data == *=* ]]; then d=(-D "$data;"); else d=("models/bench/data/$data"); fi
  minizinc -c --solver gpu-fzn "models/bench/$model" "${d[@]}" --fzn "$f" --ozn "$work/x.ozn" >/dev/null
  echo "$f"
}
wall() { local t0=$EPOCHREALTIME; "$@" > "$work/out.txt" 2>&1; awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}"; }
stat() { grep -oE "(nodes|kernelTime|buildTime|solutions|objective|genericKernel)=[0-9.e+-]+" "$work/out.txt" | tr '\n' ' '; }
echo "build-kernels: $(wall fzn-gpu build-kernels) s: $(cat "$work/out.txt")" | tee "$out/first_run.md"
echo | tee -a "$out/first_run.md"
table_start "$out/first_run.table.md" case run "wall s" statistics
for c in "$@"; do
  f=$(fzn_of "$c")
  if grep -qE "^solve .*(minimize|maximize)" "$f"; then how=(--engine complete -t $((limit * 1000))); else how=(-a --count-only); fi
  w=$(wall fzn-gpu --devices gpu -s "${how[@]}" "$f"); echo "| $c | first | $w | $(stat) |" | tee -a "$out/first_run.table.md"
  w=$(wall fzn-gpu --devices gpu --build-only "$f"); echo "| $c | --build-only | $w | |" | tee -a "$out/first_run.table.md"
  w=$(wall fzn-gpu --devices gpu -s "${how[@]}" "$f"); echo "| $c | again | $w | $(stat) |" | tee -a "$out/first_run.table.md"
done
