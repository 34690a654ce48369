#!/usr/bin/env bash
# Whether LNS islands slow each other down through the interpreter they share, or through the
# cores: on each instance, `--engine lns` on the GPU alone and on the CPU alone, then both at
# once as two processes (each with an interpreter of its own, the cores shared), then both as
# islands of one process (`--devices all`). Each run's steps, improvements and best objective
# (-s). Kernels are built by an untimed --build-only first.
# Usage there: bash scripts/device_island_processes.sh OUT LIMIT_S [DATA_REGEX]
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S [REGEX]}; limit=${2:?}
source scripts/device_env.sh >/dev/null 2>&1
source scripts/opt_instances.sh
opt_setup "$out" "${3:-}"
# row NAME LABEL FILE: the run's last objective, then its island statistics
row() {
  echo "| $1 | $2 | $(grep -oE 'objective=[0-9-]+' "$3" | tail -1) $(grep -oE "(lnsSteps|lnsImprovements|d[0-9]_lnsSteps|d[0-9]_lnsImprovements)=[0-9]+" "$3" | tr '\n' ' ') |" | tee -a "$out/processes.md"
}
run() { timeout $((limit + 30)) python3 -m fzn_gpu --devices "$1" -a --engine lns -s -t $((limit * 1000)) "$2" > "$3" 2>&1; }
table_start "$out/processes.md" instance how "statistics (last objective first)"
for c in "${cases[@]}"; do
  f=$(compile_case "$c") || continue
  name=$(basename "$f" .fzn)
  for d in gpu cpu; do python3 -m fzn_gpu --devices $d --build-only "$f" >/dev/null 2>&1; done
  run gpu "$f" "$work/g.txt"; run cpu "$f" "$work/c.txt"
  row "$name" "GPU alone" "$work/g.txt"
  row "$name" "CPU alone" "$work/c.txt"
  run gpu "$f" "$work/g2.txt" & run cpu "$f" "$work/c2.txt"; wait
  row "$name" "GPU, a process beside the CPU's" "$work/g2.txt"
  row "$name" "CPU, a process beside the GPU's" "$work/c2.txt"
  run all "$f" "$work/a.txt"
  row "$name" "both islands in one process" "$work/a.txt"
done
