#!/usr/bin/env bash
# Optimisation with --deterministic (one sequential branch and bound) against the default (the
# portfolio of LNS and branch and bound), every device, LIMIT_S each, the generic kernel built
# first: the best objective printed and its time. Usage there: bash scripts/device_deterministic.sh OUT LIMIT_S
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S}; limit=${2:?}
source scripts/device_env.sh >/dev/null 2>&1
python3 -m fzn_gpu build-kernels >/dev/null 2>&1
mkdir -p "$out"; work=$(mktemp -d)
echo "| instance | default: best (status) | --deterministic: best (status), improvements |" | tee "$out/deterministic.md"
echo "|---|---|---|" | tee -a "$out/deterministic.md"
for c in knapsack:knapsack_100 tsp:tsp_20 qap:qap_15 mkcp:mkcp_67; do
  IFS=: read -r m d <<< "$c"
  f=$work/$d.fzn
  minizinc -c --solver gpu-fzn "models/bench/$m.mzn" "models/bench/data/$d.dzn" --fzn "$f" --ozn "$work/x.ozn" >/dev/null 2>&1
  row="| $d"
  for flags in "" "--deterministic"; do
    timeout $((limit + 30)) python3 -m fzn_gpu -a -s -t $((limit * 1000)) $flags "$f" > "$work/o.txt" 2>&1
    best=$(grep -oE "objective=-?[0-9]+" "$work/o.txt" | tail -1 | cut -d= -f2)
    st=$(grep -E "^(==========|=====UNKNOWN=====)" "$work/o.txt" | tail -1)
    row="$row | $best ${st:-(limit)}, $(grep -c -- '----------' "$work/o.txt") solutions"
  done
  echo "$row |" | tee -a "$out/deterministic.md"
done
