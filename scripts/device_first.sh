#!/usr/bin/env bash
# One solution of the suite's first-solution instances on the GPU machine (every device): the
# default (a model naming its search: complete search alone, printing in tree order), the
# portfolio of complete search and restarts (--restart luby: the default before ordered
# printing), and Gecode; wall seconds and the status line (`----------`: a solution). The generic
# kernel is built first (fzn-gpu build-kernels), so no run waits for a build. Then a model in
# input order five times: the solutions printed (one line each, all alike when ordered).
# Usage there: bash scripts/device_first.sh OUT LIMIT_S
set -uo pipefail
out=${1:?usage: $0 OUT LIMIT_S}; limit=${2:?}
source scripts/device_env.sh >/dev/null 2>&1
python3 -m fzn_gpu build-kernels >/dev/null 2>&1
mkdir -p "$out"; work=$(mktemp -d)
secs() { awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $1}"; }
status() { grep -E "^(----------|=====|==========)" "$1" | tail -1; }
echo "| instance | default (ordered complete) | portfolio (--restart luby) | Gecode |" | tee "$out/first.md"
echo "|---|---|---|---|" | tee -a "$out/first.md"
for c in magic_square:6 magic_square:10 partition:64 partition:240 langford:23; do
  IFS=: read -r m n <<< "$c"
  f=$work/${m}_$n.fzn; g=$work/${m}_$n.gecode.fzn
  minizinc -c --solver gpu-fzn "models/bench/$m.mzn" -D "n=$n;" --fzn "$f" --ozn "$work/x.ozn" >/dev/null 2>&1
  minizinc -c --solver gecode "models/bench/$m.mzn" -D "n=$n;" --fzn "$g" --ozn "$work/y.ozn" >/dev/null 2>&1
  row="| $m $n"
  for flags in "" "--restart luby"; do
    t0=$EPOCHREALTIME
    timeout $((limit + 30)) python3 -m fzn_gpu --check -t $((limit * 1000)) $flags "$f" > "$work/o.txt" 2>&1
    row="$row | $(secs "$t0") s $(status "$work/o.txt")"
  done
  t0=$EPOCHREALTIME
  timeout $((limit + 30)) fzn-gecode -time $((limit * 1000)) "$g" > "$work/g.txt" 2>&1
  echo "$row | $(secs "$t0") s $(status "$work/g.txt") |" | tee -a "$out/first.md"
done
echo | tee -a "$out/first.md"
for i in 1 2 3 4 5; do
  echo "nqueens_io run $i: $(minizinc --solver gpu-fzn models/nqueens.mzn 2>/dev/null | head -1)" | tee -a "$out/first.md"
done
echo "Gecode: $(minizinc --solver gecode models/nqueens.mzn 2>/dev/null | head -1)" | tee -a "$out/first.md"
