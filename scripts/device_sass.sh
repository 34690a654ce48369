#!/usr/bin/env bash
# The machine code of the search kernels on the GPU machine: each model's programs (item and
# group, propagators out of line and inlined) built with a run's options, their PTX assembled by
# ptxas for the GPU (registers, stack frame, spills: ptxas -v) and disassembled (cuobjdump
# --dump-sass), so instruction counts and local-memory traffic (LDL/STL) of a propagator can be
# read here afterwards (all in OUT/sass.tgz). Usage there: bash scripts/device_sass.sh OUT MODEL:N...
#   e.g. nqueens:16 costas:14 (models from models/bench; MODEL fzn takes N as a FlatZinc path)
set -uo pipefail
out=${1:?usage: $0 OUT MODEL:N...}; shift
source scripts/device_env.sh >/dev/null 2>&1
mkdir -p "$out/sass"
work=$(mktemp -d)
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
for c in "$@"; do
  IFS=: read -r model n <<<"$c"
  f=$n
  if [ "$model" != fzn ]; then
    f="$work/${model}_$n.fzn"
    minizinc -c --solver gpu-fzn "models/bench/$model.mzn" -D "n=$n;" --fzn "$f" --ozn "$work/x.ozn" >/dev/null
  fi
  python3 tools/kernel_report.py "$f" --devices gpu --models "${MODELS:-group}" --ptx "$work/ptx" 2>&1 | tee -a "$out/sass/report.txt"
done
for p in "$work"/ptx/*.ptx; do
  b=$(basename "$p" .ptx)
  tr -d "\000" < "$p" > "$work/$b.clean.ptx"  # the driver's binary ends in NUL bytes
  ptxas -arch=sm_$arch -v --maxrregcount "${REGS:-64}" "$work/$b.clean.ptx" -o "$work/$b.cubin" > "$out/sass/$b.ptxas.txt" 2>&1
  cuobjdump --dump-sass "$work/$b.cubin" > "$out/sass/$b.sass" 2>&1
  cp "$p" "$out/sass/"
  echo "$b: $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' "$out/sass/$b.sass") SASS instructions, $(grep -cE 'LDL|STL' "$out/sass/$b.sass") LDL/STL"
done | tee -a "$out/sass/report.txt"
tar -C "$out" -czf "$out/sass.tgz" sass && rm -rf "$out/sass"   # many files: one comes back
