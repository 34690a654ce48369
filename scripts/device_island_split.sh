#!/usr/bin/env bash
# Each LNS island's step time split (scripts/island_time_split.py) on the GPU machine: the
# suite's optimisation instances whose data file matches REGEX, `--engine lns`, on each of
# DEVS (default "gpu cpu all"), with -v, so that a GPU island's steps alone and beside the CPU
# island can be compared (its wall, thread CPU and kernel-wait seconds). Kernels are built by
# an untimed --build-only first. OUT/split.md: one row a run; OUT/NAME_DEV[_rSEED].txt: its stderr.
# Usage there: [DEVS=...] [SEEDS="1 2"] bash scripts/device_island_split.sh OUT LIMIT_S [REGEX]
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S [REGEX]}; limit=${2:?}
source scripts/device_env.sh >/dev/null 2>&1
source scripts/opt_instances.sh
opt_setup "$out" "${3:-}"
table_start "$out/split.md" instance devices seed best islands
for c in "${cases[@]}"; do
  f=$(compile_case "$c") || continue
  name=$(basename "$f" .fzn)
  for d in ${DEVS:-gpu cpu all}; do
    python3 -m fzn_gpu --devices "$d" --build-only "$f" >/dev/null 2>&1
    for seed in ${SEEDS:--}; do
      seeded=(); tag="${name}_$d"
      [ "$seed" = - ] || { seeded=(-r "$seed"); tag+="_r$seed"; }
      timeout $((limit + 30)) python3 scripts/island_time_split.py --devices "$d" --engine lns -s -v "${seeded[@]}" \
        -t $((limit * 1000)) "$f" > "$out/$tag.out" 2> "$out/$tag.txt"
      best=$(grep -oE "objective=[0-9-]+" "$out/$tag.out" | tail -1 | cut -d= -f2)
      islands=$(grep -E "^island [0-9]" "$out/$tag.txt" | tr '\n' ' ')
      improv=$(grep -oE "d[0-9]_lnsImprovements=[0-9]+" "$out/$tag.out" | tr '\n' ' ')
      echo "| $name | $d | $seed | $best | $islands $improv |" | tee -a "$out/split.md"
    done
  done
done
