#!/usr/bin/env bash
# Counts (all solutions, `--count-only`) on one device set against another, interleaved, through a
# warm server (the default for users) and then each run in a process of its own: wall seconds
# as MiniZinc's caller sees them, with the run's -s figures (solutions, initTime, solveTime,
# kernelTime, sliceGapTime, kernelLaunches, splitTime, devices, devicesRankedOut). One line a
# run, in OUT/counts.txt. The figures of
# docs/bench/measurements.md, "Devices joining behind the split, every device judged, verdicts
# kept between runs", "A count where the CPU pays" and "One call with the final lines", came
# from it:
#   one H200:  bash scripts/every_device_counts.sh OUT                        (GPU alone, every device)
#   two H200s: A=0 B=gpu OWN=0 INSTANCES="nqueens:17 nqueens:18 costas:14" bash scripts/every_device_counts.sh OUT
# A and B are --devices values (default gpu and all); ROUNDS (3) rounds after a warm-up of each,
# A first in odd rounds and B first in even ones (a run straight after a short one may wait for
# the server's next spare: neither side always comes second),
# whose first every-device run records the devices' ranking (engine/ranking.py); OWN (2) rounds in
# processes of their own on OWN_INSTANCES; NORANK=1 adds a run of B with FZN_GPU_RANKING=0 each
# (a server of its own answers those settings: the first such run pays a solver process's start).
# B_ENV: settings for B's runs (e.g. "FZN_GPU_MIN_NODE_SHARE=0 FZN_GPU_RANKING=0": the CPU
# searches to the end, as when screening counts for one where its share pays); WARM=0 skips
# the warm-up; TIME_LIMIT (ms) bounds each run; PAUSE (s, 0) before each run lets the server's
# next spare start (a run straight after a short one waits for it). An instance is model:n, the
# model's name under models/bench/, or its path under models/ without .mzn.
# On the GPU machine it sources scripts/device_env.sh and builds the kernels first (BUILD=0: the
# warm-up's runs build what they take).
set -uo pipefail
out=${1:?usage: $0 OUT}
a=${A:-gpu} b=${B:-all} rounds=${ROUNDS:-3} own=${OWN:-2}
instances=${INSTANCES:-nqueens:15 nqueens:16 costas:14 nqueens:17 all_interval:14 all_interval:15 nqueens_float:15}
own_instances=${OWN_INSTANCES:-nqueens:15 nqueens:16}
mkdir -p "$out"
if [ -e /usr/lib/libnvidia-opencl.so ]; then
  source scripts/device_env.sh > "$out/env.txt" 2>&1
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv >> "$out/counts.txt" 2>&1
  [ "${BUILD:-1}" = 1 ] && python3 -m fzn_gpu build-kernels > "$out/build.txt" 2>&1
fi
one() {  # label devices model:n [env ...]
  local label=$1 devs=$2 m=${3%%:*} n=${3##*:}; shift 3
  sleep "${PAUSE:-0}"  # a run straight after a short one waits for the server's next spare
  local s=$EPOCHREALTIME o w st
  local mzn="models/bench/$m.mzn"; [[ $m == */* ]] && mzn="models/$m.mzn"
  o=$(env "$@" minizinc --solver gpu-fzn -a --count-only -s ${TIME_LIMIT:+--time-limit "$TIME_LIMIT"} --devices "$devs" "$mzn" -D "n=$n" 2>&1)
  w=$(awk "BEGIN{printf \"%.3f\", $EPOCHREALTIME - $s}")
  st=$(echo "$o" | grep -oE "mzn-stat: (solutions|initTime|solveTime|kernelTime|sliceGapTime|kernelLaunches|splitTime|devices|devicesRankedOut|d[0-9]_(nodes|nodeRateShare|handedOver|busyTime))=.*" | sed 's/mzn-stat: //' | tr '\n' ' ')
  echo "$label $devs ${m##*/}$n wall=$w $st" | tee -a "$out/counts.txt"
  echo "$o" | grep -iE "error" | head -3 | tee -a "$out/counts.txt"
}
export FZN_GPU_SERVER=on FZN_GPU_SERVER_DIR; FZN_GPU_SERVER_DIR=$(mktemp -d)   # a server of this run's own
read -r -a b_env <<< "${B_ENV:-}"
if [ "${WARM:-1}" = 1 ]; then for i in $instances; do one warm "$a" "$i"; one warm "$b" "$i" "${b_env[@]}"; done; fi
for r in $(seq "$rounds"); do
  for i in $instances; do
    if ((r % 2)); then one "served$r" "$a" "$i"; one "served$r" "$b" "$i" "${b_env[@]}"
    else one "served$r" "$b" "$i" "${b_env[@]}"; one "served$r" "$a" "$i"; fi
  done
done
if [ "${NORANK:-1}" = 1 ]; then for i in $instances; do one norank "$b" "$i" FZN_GPU_RANKING=0; done; fi
for pid in "$FZN_GPU_SERVER_DIR"/*.pid; do [ -f "$pid" ] && kill "$(cat "$pid")" 2>/dev/null; done
export FZN_GPU_SERVER=off
for r in $(seq "$own"); do
  for i in $own_instances; do one "own$r" "$a" "$i"; one "own$r" "$b" "$i" "${b_env[@]}"; done
done
