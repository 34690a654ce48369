#!/usr/bin/env bash
# Large neighbourhood search per device on the GPU machine: every optimisation instance of the
# suite, fzn-gpu alone on the GPU, alone on the CPU (PoCL) and on both, with one LNS strategy
# and -s, so that each device's steps and improvements can be compared. Kernels are built by an
# untimed --build-only first; each run's best objective and statistics go to OUT/lns.md.
# Usage there: [DEVS="gpu cpu all"] bash scripts/device_lns.sh OUT LIMIT_S [STRATEGY] [DATA_REGEX]
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S [STRATEGY] [REGEX]}; limit=${2:?}; strategy=${3:-complete_exploration}
source scripts/device_env.sh >/dev/null 2>&1
source scripts/opt_instances.sh
opt_setup "$out" "${4:-}"
stat() { grep -oE "(objective|nodes|lnsSteps|lnsImprovingSteps|d[0-9]_lnsSteps|d[0-9]_lnsImprovements|buildTime)=[0-9.e+-]+" | tr '\n' ' '; }
table_start "$out/lns.md" instance devices best "first s" "best s" statistics
for c in "${cases[@]}"; do
  f=$(compile_case "$c") || continue
  name=$(basename "$f" .fzn)
  for d in ${DEVS:-gpu cpu all}; do
    fzn-gpu --devices "$d" --build-only "$f" >/dev/null 2>&1
    timed timeout $((limit + 30)) fzn-gpu --devices "$d" -a --lns-strategy "$strategy" -s -t $((limit * 1000)) "$f"
    echo "| $name | $d | $(best) | $(first) | $(last) | $(cut -d' ' -f2- "$work/run.txt" | stat) |" | tee -a "$out/lns.md"
  done
done
