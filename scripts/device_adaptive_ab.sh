#!/usr/bin/env bash
# Adaptive Search on the GPU machine, checkouts side by side in one call: "new" (this tree) and
# each other name in BUILDS a folder under .carry holding an older fzn_gpu/, kernels/, grammar/
# and mznlib/ (`git archive REV fzn_gpu kernels grammar mznlib | tar -x -C .carry/old`). Each
# SPECS entry NAME:SEED runs .carry/fzn_ls/NAME.fzn with `--devices gpu --engine adaptive -r
# SEED -s -t 30000` under every build in turn; a run of each build on magic square 100,
# partition 9,600 and the suite's partition 240 first builds its programs (both register caps,
# 32-bit sums or not). Prints wall seconds of the solver, solutions, the walks' iterations and
# kernel seconds (the same seed makes the same walks in every build that keeps them).
# Each run in its own process (FZN_GPU_SERVER=off, device_env.sh's default); SERVER=on hands each
# to a solver server, warm after its build's first run (docs/ARCHITECTURE.md, start-up), as
# MiniZinc's calls find it.
# Usage there: [BUILDS="new old"] [SPECS="ms200:3 p9600:2"] [SERVER=on] bash scripts/device_adaptive_ab.sh
set -uo pipefail
source scripts/device_env.sh >/dev/null 2>&1
run() { # build file seed
  local path=$PWD; [ $1 = new ] || path=$PWD/.carry/$1
  local t0=$EPOCHREALTIME
  (cd $path && FZN_GPU_SERVER=${SERVER:-off} PYTHONPATH=/tmp/site:$path timeout 60 python3 -m fzn_gpu --devices gpu --engine adaptive -r $3 -s -t 30000 $(realpath $OLDPWD/$2) > /tmp/o.txt 2>&1)
  local wall=$(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}")
  echo "| $(basename $2 .fzn) | $1 | $3 | $wall | $(grep -c -- '^----------' /tmp/o.txt) | $(grep -oE 'lsIterations=[0-9]+' /tmp/o.txt | cut -d= -f2) | $(grep -oE 'lsKernelTime=[0-9.]+' /tmp/o.txt | cut -d= -f2) |"
}
for b in ${BUILDS:-new old}; do for w in ms100:1 p9600:3 p240s:1; do run $b .carry/fzn_ls/${w%%:*}.fzn ${w##*:} > /dev/null; done; done   # builds each program
echo "| instance | build | seed | wall s | solutions | iterations | kernel s |"
echo "|---|---|---|---|---|---|---|"
for spec in ${SPECS:-ms100:1 ms200:3 p9600:2}; do
  f=.carry/fzn_ls/${spec%%:*}.fzn; s=${spec##*:}
  for b in ${BUILDS:-new old}; do run $b $f $s; done
done
