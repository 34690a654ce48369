#!/usr/bin/env bash
# The two execution models side by side on the GPU machine: the compiler's report of each search
# kernel (registers, stack, spills), then all-solution counts (--count-only, GPU alone, kernels
# built beforehand) of n-queens and Costas arrays under each setting.
# Usage there: bash scripts/device_kernels.sh OUT LIMIT_S CASE...
# CASE is MODEL:N:KERNEL[:SEARCHES_PER_CU[:GROUP_SIZE[:NAME=VALUE,...]]], e.g. nqueens:16:group:16:32,
# costas:13:item or nqueens:15:group:16:32:FZN_GPU_OUTLINE=0 (more FZN_GPU_* settings, comma-separated);
# MODEL fzn takes N as the path of a FlatZinc file. With OLD=folder (an older checkout's
# fzn_gpu/, kernels/, grammar/, mznlib/: `git archive REV fzn_gpu kernels grammar mznlib | tar -x
# -C .carry/old`, carried along), every case also runs under it, on the line after.
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S CASE...}; limit=${2:?}; shift 2
source scripts/device_env.sh
export FZN_GPU_BUCKET=off     # these counts measure the search kernels, not bucket elimination's count
mkdir -p "$out"
work=$(mktemp -d)
fzn_of() {  # MODEL N -> path of its FlatZinc, compiled once (MODEL fzn: N is a FlatZinc file's path)
  [ "$1" = fzn ] && { echo "$2"; return; }
  local f="$work/$1_$2.fzn"
  [ -f "$f" ] || minizinc -c --solver gpu-fzn "models/bench/$1.mzn" -D "n=$2;" --fzn "$f" --ozn "$work/$1_$2.ozn" >/dev/null
  echo "$f"
}
[ -n "${REPORT:-}" ] && python3 tools/kernel_report.py "$(fzn_of nqueens 16)" --devices gpu 2>&1 | tee "$out/kernel_report.txt"
stat() { grep -oE "(solutions|nodes|propagations|buildTime|splitTime|kernelTime|hostTime|solveTime|workItems|subSearchSpaces|kernelLaunches)=[0-9.e+-]+|nodeProfile=.*" | tr '\n' ' '; }
# fzn-gpu from the checkout at $1 (python -m puts the working folder first on the path)
from() { local path=$1; shift; (cd "$path" && PYTHONPATH=$path:/tmp/site python3 -m fzn_gpu "$@"); }
builds="new"; [ -n "${OLD:-}" ] && builds="new old" && OLD=$(realpath "$OLD")
echo "| case | build | wall s | statistics |" | tee "$out/kernels.md"
echo "|---|---|---|---|" | tee -a "$out/kernels.md"
for c in "$@"; do
  IFS=: read -r model n kernel per group extra <<<"$c"
  f=$(fzn_of "$model" "$n")
  envs=(FZN_GPU_KERNEL="$kernel")
  [ -n "${per:-}" ] && envs+=(FZN_GPU_ITEMS_PER_CU="$per")
  [ -n "${group:-}" ] && envs+=(FZN_GPU_LOCAL="$group")
  [ -n "${extra:-}" ] && IFS=, read -r -a more <<<"$extra" && envs+=("${more[@]}")
  for build in $builds; do
    path=$PWD; [ "$build" = old ] && path=$OLD
    (export "${envs[@]}"; from "$path" --devices gpu --build-only "$f") >/dev/null 2>&1
    t0=$EPOCHREALTIME
    line=$( (export "${envs[@]}"; from "$path" --devices gpu -a --count-only -s -t $((limit * 1000)) "$f") 2>&1 | stat)
    echo "| $c | $build | $(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}") | $line |" | tee -a "$out/kernels.md"
  done
done
