#!/usr/bin/env bash
# Large neighbourhood search per device on the GPU machine: every optimisation instance of the
# suite, fzn-gpu alone on the GPU, alone on the CPU (PoCL) and on both, with one LNS strategy
# and -s, so that each device's steps and improvements can be compared. Kernels are built by an
# untimed --build-only first; each run's best objective and statistics go to OUT/lns.md. With
# OLD (a folder holding an older fzn_gpu/, kernels/, grammar/ and mznlib/: `git archive REV
# fzn_gpu kernels grammar mznlib | tar -x -C .carry/old`), that build runs too, on OLD_DEVS.
# With VARIANTS (FZN_GPU_* settings without the prefix, "-" for none: "GROUP_ROW_MIN=0 -"),
# this build also runs under each setting on VAR_DEVS (default gpu), labelled by the setting.
# STRATEGY "adaptive" runs `--engine lns` with no strategy named (the bandit over all six),
# "auto" the default engine (the portfolio) with no LNS flag.
# With GENERIC=1, each build's generic kernel is built once (`fzn-gpu build-kernels`, as the
# set-up does) instead of a specialised one per run, and every run takes it, as a model's first
# run on a GPU does: one build per checkout rather than one per instance and checkout.
# With SEEDS ("1 2 3"), each run is repeated with each seed (-r), labelled build/rSEED.
# Usage there: [DEVS="gpu cpu all"] [SEEDS="1 2 3"] [OLD=DIR OLD_DEVS=gpu] [VARIANTS=... VAR_DEVS=gpu] [GENERIC=1] bash scripts/device_lns.sh OUT LIMIT_S [STRATEGY] [DATA_REGEX]
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S [STRATEGY] [REGEX]}; limit=${2:?}; strategy=${3:-complete_exploration}
source scripts/device_env.sh >/dev/null 2>&1
source scripts/opt_instances.sh
opt_setup "$out" "${4:-}"
case $strategy in
  adaptive) how=(--engine lns) ;;
  auto) how=() ;;
  *) how=(--lns-strategy "$strategy") ;;
esac
stat() { grep -oE "(objective|nodes|kernelTime|hostTime|genericKernel|lnsSteps|lnsImprovingSteps|lnsMergedSteps|lnsMergingSteps|bnbImprovements|lnsImprovements|d[0-9]_lnsSteps|d[0-9]_lnsImprovements|d[0-9]_lnsGain)=[0-9.e+-]+|lnsNodeBudget=\"?[0-9 ;]+|lnsMostReleased=\"?[0-9 ;]+|lnsPacedNeighbourhoods=\"?[0-9 ;]+|lnsModesNeighbourhoods=\"?[0-9 ;-]+|lnsStrategySteps=\"[a-z_:0-9/ ;]+" | tr '\n' ' '; }
# fzn-gpu from the checkout at $1 (python -m puts the working folder first on the path), under
# `timeout` (which runs programs, not shell functions)
from=(bash -c 'cd "$0" && PYTHONPATH=$0:/tmp/site exec python3 -m fzn_gpu "$@"')
builds="new"; [ -n "${OLD:-}" ] && builds="new old"
for v in ${VARIANTS:-}; do builds+=" $v"; done
if [ -n "${GENERIC:-}" ]; then
  "${from[@]}" "$PWD" build-kernels >/dev/null 2>&1
  [ -n "${OLD:-}" ] && "${from[@]}" "$(realpath "$OLD")" build-kernels >/dev/null 2>&1
fi
table_start "$out/lns.md" instance build devices best "first s" "best s" statistics
for c in "${cases[@]}"; do
  f=$(compile_case "$c") || continue
  name=$(basename "$f" .fzn)
  for build in $builds; do
    path=$PWD; devs=${DEVS:-gpu cpu all}; setting=()
    [ $build = old ] && { path=$(realpath "$OLD"); devs=${OLD_DEVS:-gpu}; }
    case $build in new|old) ;; -) devs=${VAR_DEVS:-gpu} ;; *) devs=${VAR_DEVS:-gpu}; setting=("FZN_GPU_$build") ;; esac
    for d in $devs; do
      [ -n "${GENERIC:-}" ] || env "${setting[@]}" "${from[@]}" "$path" --devices "$d" --build-only "$f" >/dev/null 2>&1
      for seed in ${SEEDS:--}; do
        seeded=(); label=$build
        [ "$seed" = - ] || { seeded=(-r "$seed"); label="$build/r$seed"; }
        timed timeout $((limit + 30)) env "${setting[@]}" "${from[@]}" "$path" --devices "$d" -a "${how[@]}" "${seeded[@]}" -s -t $((limit * 1000)) "$f"
        echo "| $name | $label | $d | $(best) | $(first) | $(last) | $(cut -d' ' -f2- "$work/run.txt" | stat) |" | tee -a "$out/lns.md"
      done
    done
  done
done
