#!/usr/bin/env bash
# The default engine (branch and bound for optimisation) on every optimisation instance of the
# suite, this checkout beside an older one, in one run on the GPU machine: best objective,
# whether it was proven, when the best came, nodes and searches in flight. OLD is a folder
# holding the older fzn_gpu/, kernels/, grammar/ and mznlib/ (`git archive REV fzn_gpu kernels
# grammar mznlib | tar -x -C .carry/old`, carried along).
# Usage there: [DEVS=gpu] bash scripts/device_compare.sh OUT LIMIT_S OLD [DATA_REGEX]
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S OLD [REGEX]}; limit=${2:?}; old=$(realpath "${3:?}"); filter=${4:-}
source scripts/device_env.sh >/dev/null 2>&1
mkdir -p "$out"
work=$(mktemp -d)
mapfile -t cases < <(python3 - "$filter" <<'PY'
import json, re, sys
for i in json.load(open(".carry/bench/suite.json"))["instances"]:
    if i["mode"] == "opt" and re.search(sys.argv[1], i.get("data", "")):
        print(i["model"] + ":" + i.get("data", ""))
PY
)
stat() { grep -oE "(objective|nodes|workItems|recomputedLevels)=[0-9.e+-]+" | tr '\n' ' '; }
echo "| instance | build | best | proven | best s | statistics |" | tee "$out/compare.md"
echo "|---|---|---|---|---|---|" | tee -a "$out/compare.md"
for c in "${cases[@]}"; do
  IFS=: read -r model data <<<"$c"
  f="$work/${data%.dzn}.fzn"
  minizinc -c --solver gpu-fzn ".carry/bench/$model" ".carry/bench/data/$data" --fzn "$f" --ozn "$work/x.ozn" >/dev/null || continue
  for build in new old; do
    path=$PWD; [ $build = old ] && path=$old
    (cd "$path" && PYTHONPATH=$path:/tmp/site python3 -m fzn_gpu --devices "${DEVS:-gpu}" --build-only "$f" >/dev/null 2>&1)
    t0=$EPOCHREALTIME
    (cd "$path" && PYTHONPATH=$path:/tmp/site timeout $((limit + 30)) python3 -m fzn_gpu --devices "${DEVS:-gpu}" -a -s \
      -t $((limit * 1000)) "$f" 2>&1) | while IFS= read -r line; do
        printf '%s %s\n' "$(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}")" "$line"; done > "$work/run.txt"
    best=$(grep -oE "objective=[0-9-]+" "$work/run.txt" | tail -1 | cut -d= -f2)
    proven=$(grep -qE " ==========$" "$work/run.txt" && echo yes || echo no)
    last=$(grep -E " ----------$" "$work/run.txt" | tail -1 | cut -d' ' -f1)
    echo "| ${data%.dzn} | $build | $best | $proven | $last | $(cut -d' ' -f2- "$work/run.txt" | stat) |" | tee -a "$out/compare.md"
  done
done
