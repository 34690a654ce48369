#!/usr/bin/env bash
# The default engine (branch and bound for optimisation) on every optimisation instance of the
# suite, this checkout beside an older one, in one run on the GPU machine: best objective,
# whether it was proven, when the best came, how long its --build-only took, nodes and searches in flight. OLD is a folder
# holding the older fzn_gpu/, kernels/, grammar/ and mznlib/ (`git archive REV fzn_gpu kernels
# grammar mznlib | tar -x -C .carry/old`, carried along).
# Usage there: [DEVS=gpu] bash scripts/device_compare.sh OUT LIMIT_S OLD [DATA_REGEX]
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S OLD [REGEX]}; limit=${2:?}; old=$(realpath "${3:?}")
source scripts/device_env.sh >/dev/null 2>&1
source scripts/opt_instances.sh
opt_setup "$out" "${4:-}"
stat() { grep -oE "(objective|nodes|workItems|recomputedLevels)=[0-9.e+-]+" | tr '\n' ' '; }
# fzn-gpu from the checkout at $1 (python -m puts the working folder first on the path)
from() { local path=$1; shift; (cd "$path" && PYTHONPATH=$path:/tmp/site python3 -m fzn_gpu "$@"); }
table_start "$out/compare.md" instance build "build-only s" best proven "best s" statistics
for c in "${cases[@]}"; do
  f=$(compile_case "$c") || continue
  name=$(basename "$f" .fzn)
  for build in new old; do
    path=$PWD; [ $build = old ] && path=$old
    t0=$EPOCHREALTIME
    from "$path" --devices "${DEVS:-gpu}" --build-only "$f" >/dev/null 2>&1
    built=$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $t0}")
    timed from "$path" --devices "${DEVS:-gpu}" -a -s -t $((limit * 1000)) "$f"
    proven=$(grep -qE " ==========$" "$work/run.txt" && echo yes || echo no)
    echo "| $name | $build | $built | $(best) | $proven | $(last) | $(cut -d' ' -f2- "$work/run.txt" | stat) |" | tee -a "$out/compare.md"
  done
done
