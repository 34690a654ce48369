#!/usr/bin/env bash
# Restarts on the GPU beside complete search and Gecode, one solution of satisfaction puzzles
# (FlatZinc compiled here: NAME.fzn with fzn-gpu's library, NAME.gecode.fzn with Gecode's).
# Each model: the default (complete search and restarts together), complete search alone
# (--restart none), restarts alone (Luby, 100 nodes), each with --check, and
# fzn-gecode; wall seconds, the status line, restarts made (DEVICES=all: the GPU and the CPU
# beside it, each engine on its kind; default gpu). Kernels are built first
# (--build-only), so build time is not in the figures.
# Usage there: bash scripts/device_restarts.sh OUT FZN_DIR [LIMIT_MS]
set -uo pipefail
out=${1:?usage: $0 OUT FZN_DIR [LIMIT_MS]}; dir=${2:?}; limit=${3:-10000}; devices=${DEVICES:-gpu}
source scripts/device_env.sh >/dev/null 2>&1
mkdir -p "$out"
secs() { awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $1}"; }
status() { grep -E "^(----------|=====|==========)" "$1" | tail -1; }
echo "| model | default | complete alone | restarts alone | Gecode |" | tee "$out/results.md"
echo "|---|---|---|---|---|" | tee -a "$out/results.md"
for f in "$dir"/*.fzn; do
  case "$f" in *.gecode.fzn) continue;; esac
  name=$(basename "$f" .fzn)
  python3 -m fzn_gpu --devices "$devices" --build-only "$f" 2>/dev/null
  row="| $name"
  for flags in "" "--restart none" "--engine restart --restart luby"; do
    t0=$EPOCHREALTIME
    timeout $((limit / 1000 + 30)) python3 -m fzn_gpu --devices "$devices" --check -s -t "$limit" $flags "$f" > "$out/o.txt" 2>&1
    row="$row | $(secs "$t0") s $(status "$out/o.txt") $(grep -oE "restarts=[0-9]+" "$out/o.txt")"
    cp "$out/o.txt" "$out/$name.$(echo "$flags" | tr -d ' -' | cut -c1-20).txt"
  done
  t0=$EPOCHREALTIME
  timeout $((limit / 1000 + 30)) fzn-gecode -time "$limit" "$dir/$name.gecode.fzn" > "$out/g.txt" 2>&1
  row="$row | $(secs "$t0") s $(status "$out/g.txt") |"
  echo "$row" | tee -a "$out/results.md"
done
