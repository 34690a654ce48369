#!/usr/bin/env bash
# How long an LNS step's node takes on the GPU (docs/bench/measurements.md, "LNS on every device"):
# `--engine lns` on the GPU alone, once with the profile build (FZN_GPU_PROFILE=1: cycles a
# node by phase and by constraint kind, `nodeProfile` / `kindProfile` in -s) and once without,
# under each work-group width cap in WIDTHS (FZN_GPU_WIDE_LOCAL; 1024 is the default), with -v
# so that every step's neighbourhoods, nodes and milliseconds are kept. Kernels are built by an
# untimed --build-only first. Rows go to OUT/latency.md, the step lines to OUT/steps_*.txt.
# EXTRA: more fzn-gpu arguments for every run ("--lns-neighbourhoods 264": a step of few
# neighbourhoods, where a node's latency is not shared with other groups on its multiprocessor).
# Usage there: [WIDTHS="1024 32"] [PROFILES="1 0"] [STRATEGY=complete_exploration] [EXTRA=...]
#   bash scripts/device_lns_latency.sh OUT LIMIT_S FZN...
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S FZN...}; limit=${2:?}; shift 2
source scripts/device_env.sh >/dev/null 2>&1
source scripts/opt_instances.sh
opt_setup "$out"
stat() { grep -oE "(objective|nodes|passes|kernelTime|hostTime|lnsSteps|lnsImprovingSteps|groupWidth)=[0-9.e+-]+|lnsNodeBudget=\"?[0-9 ;]+|lnsPacedNeighbourhoods=\"?[0-9 ;]+" | tr '\n' ' '; }
# steps.awk: the steps' count, mean milliseconds, mean neighbourhoods and nodes, from -v lines
# "lns island 0 step K at T s: STRATEGY SHAPE xN nodes B, M ms, ..."
steps() { awk '/ step [0-9]+ at /{for(i=1;i<=NF;i++){if($i ~ /^x[0-9]+$/) n+=substr($i,2); if($i=="ms,") ms+=$(i-1)}; k++}
  END{if(k) printf "%d steps, %.1f ms a step, %.0f neighbourhoods a step", k, ms/k, n/k}' "$1"; }
table_start "$out/latency.md" instance arguments "width cap" profile wall statistics steps "node profile" "kinds by cycles"
for f in "$@"; do
  name=$(basename "$f" .fzn)
  for w in ${WIDTHS:-1024 32}; do
    for p in ${PROFILES:-1 0}; do
      FZN_GPU_WIDE_LOCAL=$w FZN_GPU_PROFILE=$p python3 -m fzn_gpu --devices gpu --build-only "$f" >/dev/null 2>&1
      t0=$EPOCHREALTIME
      FZN_GPU_WIDE_LOCAL=$w FZN_GPU_PROFILE=$p timeout $((limit + 60)) python3 -m fzn_gpu --devices gpu -v -s \
        --engine lns --lns-strategy "${STRATEGY:-complete_exploration}" ${EXTRA:-} -t $((limit * 1000)) "$f" > "$work/o.txt" 2>&1
      wall=$(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}")
      grep -E " step [0-9]+ at " "$work/o.txt" > "$out/steps_${name}_w${w}_p$p.txt"
      prof=$(grep -oE 'nodeProfile=.*' "$work/o.txt" | tail -1 | cut -d= -f2- | tr -d '"')
      kinds=$(grep -oE 'kindProfile=.*' "$work/o.txt" | tail -1 | cut -d= -f2- | tr -d '"')
      echo "| $name | ${EXTRA:-} | $w | $p | $wall | $(stat < "$work/o.txt") | $(steps "$out/steps_${name}_w${w}_p$p.txt") | $prof | $kinds |" \
        | tee -a "$out/latency.md"
    done
  done
done
