#!/usr/bin/env bash
# Adaptive Search (local search) on the GPU machine, beside Gecode in one run: each instance
# compiled once per solver's library, then fzn-gpu --engine adaptive on the GPU alone (and on
# the CPU alone with CPU=1), the default engine (complete search, restarts and Adaptive Search
# together) on every device, and fzn-gecode -p 16, each with the same limit on the FlatZinc;
# wall seconds of the solver (compilation apart; MiniZinc's compile time in its own column).
# INSTANCES: "file.mzn:n ..." for models/local/ (the paper's formulations), "suite/file.mzn:n"
# for the suite's (models/bench). With DEFAULT=1 the default engine runs too.
# GECODE_LIMIT_S 0: no Gecode run.
# Usage there: [CPU=1] [DEFAULT=1] bash scripts/device_adaptive.sh OUT LIMIT_S "INSTANCES" [GECODE_LIMIT_S]
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S "INSTANCES" [GECODE_LIMIT_S]}; limit=${2:?}; instances=${3:?}; glimit=${4:-$2}
source scripts/device_env.sh >/dev/null 2>&1
source scripts/opt_instances.sh
opt_setup "$out"
[ -n "${DEFAULT:-}" ] && python3 -m fzn_gpu build-kernels 2>&1 | tail -1    # the default engine's search kernels
stat() { grep -oE "(lsIterations|lsWalks|lsRestarts|lsResets|lsLeastError|lsBuildTime|lsKernelTime|engine)=[^ ]+|lsDevices=\"[^\"]*\"" | tr '\n' ' '; }
wall() { awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $1}"; }
row() {   # row NAME SOLVER START OUTPUT
  local answer="none"
  grep -q -- "^----------" "$4" && answer="solution"
  grep -q "UNSATISFIABLE" "$4" && answer="UNSATISFIABLE"
  echo "| $1 | $2 | $(wall "$3") | $answer | $(stat < "$4") |" | tee -a "$out/adaptive.md"
}
table_start "$out/adaptive.md" instance solver "wall s" answer statistics
for item in $instances; do
  IFS=: read -r file n <<< "$item"
  src=models/local/$file where=paper
  [ "${file#suite/}" != "$file" ] && { src=models/bench/${file#suite/}; where=suite; }
  name="$(basename "$file" .mzn) $n ($where)"
  f=$work/a.fzn g=$work/g.fzn
  t0=$EPOCHREALTIME
  minizinc -c --solver gpu-fzn "$src" -D "n=$n;" --fzn "$f" --ozn "$work/a.ozn" >/dev/null || continue
  echo "| $name | MiniZinc compile (gpu-fzn) | $(wall "$t0") | | |" | tee -a "$out/adaptive.md"
  runs=("adaptive, GPU|--devices gpu --engine adaptive")
  [ -n "${CPU:-}" ] && runs+=("adaptive, CPU|--devices cpu --engine adaptive")
  [ -n "${DEFAULT:-}" ] && runs+=("default engine, all devices|")
  for r in "${runs[@]}"; do
    IFS='|' read -r label flags <<< "$r"
    t0=$EPOCHREALTIME
    # shellcheck disable=SC2086
    timeout $((limit + 30)) python3 -m fzn_gpu $flags -s -t $((limit * 1000)) "$f" > "$work/o.txt" 2>&1
    row "$name" "fzn-gpu $label" "$t0" "$work/o.txt"
  done
  # Gecode's library compiles big all_different models for minutes (magic square 200: over
  # 5 minutes and 12 GB; partition 9600: over 10 minutes): its compile gets the limit too
  if [ "$glimit" -gt 0 ]; then
    t0=$EPOCHREALTIME
    if timeout "$glimit" minizinc -c --solver gecode "$src" -D "n=$n;" --fzn "$g" --ozn "$work/g.ozn" >/dev/null 2>&1; then
      echo "| $name | MiniZinc compile (gecode) | $(wall "$t0") | | |" | tee -a "$out/adaptive.md"
      t0=$EPOCHREALTIME
      timeout $((glimit + 30)) fzn-gecode -p 16 -t $((glimit * 1000)) "$g" > "$work/o.txt" 2>&1
      row "$name" "Gecode -p 16" "$t0" "$work/o.txt"
    else
      echo "| $name | Gecode -p 16 | | MiniZinc's compile unfinished in $glimit s | |" | tee -a "$out/adaptive.md"
    fi
  fi
done
