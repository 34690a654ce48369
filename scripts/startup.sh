#!/usr/bin/env bash
# Start-up through MiniZinc: `minizinc --solver gpu-fzn` through a warm solver server (the
# default once a first run has started one: fzn_gpu/launch.py), in a process of its own
# (FZN_GPU_SERVER=off), and `minizinc --solver gecode`, on small models, REPS runs each,
# interleaved; wall time of each call (MiniZinc's compilation included, as a user sees it), the
# median first. Runs on this machine or, sourcing scripts/device_env.sh, on the GPU machine.
# Usage: [REPS=9] bash scripts/startup.sh OUT [MODEL.mzn ...]
set -uo pipefail
out=${1:?usage: $0 OUT [MODEL.mzn ...]}; shift
models=("$@"); [ ${#models[@]} -gt 0 ] || models=(models/nqueens.mzn models/send_more_money.mzn)
reps=${REPS:-9}
[ -e /usr/lib/libnvidia-opencl.so ] && source scripts/device_env.sh >/dev/null 2>&1
export FZN_GPU_SERVER=on
mkdir -p "$out"
export FZN_GPU_SERVER_DIR; FZN_GPU_SERVER_DIR=$(mktemp -d)   # a server of this run's own
for m in "${models[@]}"; do FZN_GPU_SERVER=off minizinc --solver gpu-fzn "$m" >/dev/null 2>&1; done  # builds, once
minizinc --solver gpu-fzn "${models[0]}" >/dev/null 2>&1    # starts the server
for _ in $(seq 50); do ls "$FZN_GPU_SERVER_DIR"/*.sock >/dev/null 2>&1 && break; sleep 0.2; done
sleep 1                                                     # its first spare warm
wall() { local t0=$EPOCHREALTIME; "$@" >/dev/null 2>&1; awk "BEGIN{printf \"%.3f\", $EPOCHREALTIME - $t0}"; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
{
  echo "| model | fzn-gpu, warm server (median; all) | fzn-gpu, own process | Gecode | server / Gecode | own process / Gecode |"
  echo "|---|---|---|---|---|---|"
} | tee "$out/startup.md"
for m in "${models[@]}"; do
  warm="" own="" gecode=""
  for _ in $(seq "$reps"); do
    warm+=" $(wall minizinc --solver gpu-fzn "$m")"
    own+=" $(wall env FZN_GPU_SERVER=off minizinc --solver gpu-fzn "$m")"
    gecode+=" $(wall minizinc --solver gecode "$m")"
  done
  w=$(echo "$warm" | median); o=$(echo "$own" | median); g=$(echo "$gecode" | median)
  echo "| $(basename "$m") | $w ($warm ) | $o | $g | $(awk "BEGIN{printf \"%.1f\", $w / $g}") | $(awk "BEGIN{printf \"%.1f\", $o / $g}") |" \
    | tee -a "$out/startup.md"
done
for pid in "$FZN_GPU_SERVER_DIR"/*.pid; do [ -f "$pid" ] && kill "$(cat "$pid")" 2>/dev/null; done
