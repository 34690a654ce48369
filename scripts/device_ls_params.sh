#!/usr/bin/env bash
# Adaptive Search's tuning on the GPU machine: each FlatZinc, each setting WALKS/PARAMS
# (FZN_GPU_LS_WALKS and FZN_GPU_LS_PARAMS; "-" for the default, e.g. "264/LOCAL_MIN=60" or
# "-/-"), each seed, `--engine adaptive` on the GPU alone; wall seconds of the
# solver, the walks' iterations and kernel seconds. The program is built by a first run before
# the timed ones.
# Usage there: bash scripts/device_ls_params.sh OUT LIMIT_S "FZN ..." "SEEDS" "WALKS/PARAMS ..."
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S "FZN ..." "SEEDS" "WALKS/PARAMS ..."}; limit=${2:?}; files=${3:?}; seeds=${4:?}; settings=${5:?}
source scripts/device_env.sh >/dev/null 2>&1
mkdir -p "$out"
report=$out/ls_params.md
first=${files%% *}
timeout 120 python3 -m fzn_gpu --devices gpu --engine adaptive -t 60000 "$first" > /dev/null 2>&1   # builds the program
echo "| instance | params | seed | wall s | answer | iterations | kernel s |" | tee "$report"
echo "|---|---|---|---|---|---|---|" | tee -a "$report"
for f in $files; do
  for p in $settings; do
    for s in $seeds; do
      t0=$EPOCHREALTIME
      walks=${p%%/*} params=${p#*/}
      [ "$walks" = - ] && walks=
      [ "$params" = - ] && params=
      env ${walks:+FZN_GPU_LS_WALKS=$walks} ${params:+FZN_GPU_LS_PARAMS=$params} timeout $((limit + 30)) python3 -m fzn_gpu --devices gpu --engine adaptive -r "$s" -s \
        -t $((limit * 1000)) "$f" > "$out/o.txt" 2>&1
      wall=$(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}")
      answer=none; grep -q -- "^----------" "$out/o.txt" && answer=solution
      it=$(grep -oE "lsIterations=[0-9]+" "$out/o.txt" | cut -d= -f2)
      kt=$(grep -oE "lsKernelTime=[0-9.]+" "$out/o.txt" | cut -d= -f2)
      echo "| $(basename "$f" .fzn) | ${p} | $s | $wall | $answer | $it | $kt |" | tee -a "$report"
    done
  done
done
