#!/usr/bin/env bash
# All-solution counts of compiled models on the GPU machine, on given devices under given
# FZN_GPU_* settings, each run repeated: whether a setting changes a count's wall time with
# several devices. Kernels are built by an untimed --build-only first. One row a run on stdout.
# Usage there: bash scripts/device_counts_settings.sh "A.fzn B.fzn" "DEVICES:SETTING ..." [REPEATS]
#   SETTING: FZN_GPU_* without the prefix ("SWITCH_INTERVAL=0.005"), or - for none
set -uo pipefail
models=${1:?usage: $0 "A.fzn ..." "DEVICES:SETTING ..." [REPEATS]}; runs=${2:?}; repeats=${3:-2}
source scripts/device_env.sh >/dev/null 2>&1
export FZN_GPU_BUCKET=off     # the search kernels' counts, not bucket elimination's
echo "| model | devices | setting | wall s | statistics |"
echo "|---|---|---|---|---|"
for f in $models; do
  for run in $runs; do python3 -m fzn_gpu --devices "${run%%:*}" --build-only "$f" >/dev/null 2>&1; done
  for _ in $(seq "$repeats"); do
    for run in $runs; do
      d=${run%%:*} s=${run#*:} setting=()
      [ "$s" = - ] || setting=("FZN_GPU_$s")
      t0=$EPOCHREALTIME
      env "${setting[@]}" timeout 120 python3 -m fzn_gpu --devices "$d" -a --count-only -s "$f" > /tmp/counts_o.txt 2>&1
      w=$(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}")
      echo "| $(basename "$f" .fzn) | $d | $s | $w | $(grep -oE '(solutions|nodes|kernelTime|hostTime)=[^ ]+' /tmp/counts_o.txt | tr '\n' ' ') |"
    done
  done
done
