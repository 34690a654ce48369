#!/usr/bin/env bash
# Bucket elimination on the GPU machine, beside Gecode in one run: the suite's weighted CSPs
# (or the optimisation instances whose data file matches REGEX) by `--engine bucket` on the GPU
# (kernels/bucket.cl) and on the host (numpy, `--devices cpu`), by the default engine through
# MiniZinc on every device, and by Gecode -p 16 through MiniZinc; wall seconds, the answer,
# whether it was proven, and the engine's statistics. With OLD (a folder holding an older
# fzn_gpu/, kernels/, grammar/ and mznlib/: `git archive REV fzn_gpu kernels grammar mznlib |
# tar -x -C .carry/old`), that build's `--engine bucket` on the GPU runs too.
# Usage there: [OLD=DIR] bash scripts/device_bucket.sh OUT LIMIT_S [DATA_REGEX]
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S [REGEX]}; limit=${2:?}
source scripts/device_env.sh >/dev/null 2>&1
source scripts/opt_instances.sh
opt_setup "$out" "${3:-wcsp}"
stat() { grep -oE "(objective|bucketWidth|bucketLargestTable|bucketWork|bucketPlanTime|bucketTime|improvementsBy)=[^ ]+|bucketDevice=\"[^\"]*\"" | tr '\n' ' '; }
from=(bash -c 'cd "$0" && PYTHONPATH=$0:/tmp/site exec python3 -m fzn_gpu "$@"')
wall() { awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $1}"; }
row() {   # row NAME SOLVER START OUTPUT: one line of the table
  local proven=no
  grep -q "^==========" "$4" && proven=yes
  echo "| $1 | $2 | $(wall "$3") | $(grep -oE "objective = -?[0-9]+|objective=-?[0-9]+" "$4" | tail -1 | grep -oE -- "-?[0-9]+$") | $proven | $(stat < "$4") |" \
    | tee -a "$out/bucket.md"
}
table_start "$out/bucket.md" instance solver "wall s" best proven statistics
for c in "${cases[@]}"; do
  f=$(compile_case "$c") || continue
  name=$(basename "$f" .fzn)
  model=${c%%:*} data=${c##*:}
  runs=("engine bucket, GPU|$PWD|gpu" "engine bucket, host numpy|$PWD|cpu")
  [ -n "${OLD:-}" ] && runs+=("engine bucket, GPU, before|$(realpath "$OLD")|gpu")
  for r in "${runs[@]}"; do
    IFS='|' read -r label path devs <<< "$r"
    t0=$EPOCHREALTIME
    timeout $((limit + 30)) "${from[@]}" "$path" --engine bucket --devices "$devs" -s -t $((limit * 1000)) "$f" > "$work/o.txt" 2>&1
    row "$name" "$label" "$t0" "$work/o.txt"
  done
  t0=$EPOCHREALTIME
  timeout $((limit + 30)) minizinc --solver gpu-fzn --output-objective -s -t $((limit * 1000)) "models/bench/$model" "models/bench/data/$data" > "$work/o.txt" 2>&1
  row "$name" "fzn-gpu default (MiniZinc)" "$t0" "$work/o.txt"
  t0=$EPOCHREALTIME
  timeout $((limit + 30)) minizinc --solver gecode --output-objective -p 16 -t $((limit * 1000)) "models/bench/$model" "models/bench/data/$data" > "$work/o.txt" 2>&1
  row "$name" "Gecode -p 16 (MiniZinc)" "$t0" "$work/o.txt"
done
