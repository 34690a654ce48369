#!/usr/bin/env bash
# Gecode on every optimisation instance of the suite on the GPU machine, for the figures the
# fzn-gpu runs of the same call stand beside (device_lns.sh): `minizinc --solver gecode -p
# THREADS -a -t LIMIT`, compilation included in the wall time, as a MiniZinc user runs it.
# Best objective, seconds to the first and last solution, and whether it proved the optimum.
# Needs .carry/minizinc-gecode.tar.xz (scripts/device_env.sh).
# Usage there: [THREADS=16] bash scripts/device_gecode_opt.sh OUT LIMIT_S [DATA_REGEX]
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S [REGEX]}; limit=${2:?}
source scripts/device_env.sh >/dev/null 2>&1
source scripts/opt_instances.sh
opt_setup "$out" "${3:-}"
table_start "$out/gecode.md" instance solver best "first s" "best s" proven "wall s"
for c in "${cases[@]}"; do
  model=${c%%:*} data=${c##*:}
  t0=$EPOCHREALTIME
  # MiniZinc's warnings (stderr) would run into its separators' lines
  timed timeout $((limit + 60)) sh -c 'exec "$@" 2>/dev/null' _ minizinc --solver gecode -p "${THREADS:-16}" -a -t $((limit * 1000)) \
    --output-objective "models/bench/$model" "models/bench/data/$data"
  wall=$(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}")
  proven=no; grep -q " ==========$" "$work/run.txt" && proven=yes
  best=$(grep -oE "_objective = -?[0-9]+" "$work/run.txt" | tail -1 | grep -oE -- "-?[0-9]+$")
  echo "| ${data%.dzn} | Gecode -p ${THREADS:-16} | ${best:-none} | $(first) | $(last) | $proven | $wall |" | tee -a "$out/gecode.md"
done
