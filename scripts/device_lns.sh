#!/usr/bin/env bash
# Large neighbourhood search per device on the GPU machine: every optimisation instance of the
# suite, fzn-gpu alone on the GPU, alone on the CPU (PoCL) and on both, with one LNS strategy
# and -s, so that each device's steps and improvements can be compared. Kernels are built by an
# untimed --build-only first; each run's best objective and statistics go to OUT/lns.md.
# Usage there: [DEVS="gpu cpu all"] bash scripts/device_lns.sh OUT LIMIT_S [STRATEGY] [DATA_REGEX]
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S [STRATEGY] [FILTER]}; limit=${2:?}; strategy=${3:-complete_exploration}
filter=${4:-}
source scripts/device_env.sh >/dev/null 2>&1
mkdir -p "$out"
work=$(mktemp -d)
mapfile -t cases < <(python3 - "$filter" <<'EOF'
import json, re, sys
for i in json.load(open(".carry/bench/suite.json"))["instances"]:
    if i["mode"] == "opt" and re.search(sys.argv[1], i.get("data", "")):
        print(i["model"] + ":" + i.get("data", ""))
EOF
)
stat() { grep -oE "(objective|nodes|lnsSteps|lnsImprovingSteps|d[0-9]_lnsSteps|d[0-9]_lnsImprovements|buildTime)=[0-9.e+-]+" | tr '\n' ' '; }
echo "| instance | devices | best | first s | best s | statistics |" | tee "$out/lns.md"
echo "|---|---|---|---|---|---|" | tee -a "$out/lns.md"
for c in "${cases[@]}"; do
  IFS=: read -r model data <<<"$c"
  f="$work/${data%.dzn}.fzn"
  minizinc -c --solver gpu-fzn ".carry/bench/$model" ".carry/bench/data/$data" --fzn "$f" --ozn "$work/x.ozn" >/dev/null || continue
  for d in ${DEVS:-gpu cpu all}; do
    fzn-gpu --devices "$d" --build-only "$f" >/dev/null 2>&1
    t0=$EPOCHREALTIME
    timeout $((limit + 30)) fzn-gpu --devices "$d" -a --lns-strategy "$strategy" -s -t $((limit * 1000)) "$f" \
      2>&1 | while IFS= read -r line; do printf '%s %s\n' "$(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}")" "$line"; done \
      > "$work/run.txt"
    best=$(grep -oE "objective=[0-9-]+" "$work/run.txt" | tail -1 | cut -d= -f2)
    first=$(grep -E " ----------$" "$work/run.txt" | head -1 | cut -d' ' -f1)
    last=$(grep -E " ----------$" "$work/run.txt" | tail -1 | cut -d' ' -f1)
    echo "| ${data%.dzn} | $d | $best | $first | $last | $(cut -d' ' -f2- "$work/run.txt" | stat) |" | tee -a "$out/lns.md"
  done
done
