#!/usr/bin/env bash
# Printed enumeration on the GPU machine against the rate at which MiniZinc itself can take
# solutions, in one run. Per instance, every figure the wall seconds of one `minizinc -a` call
# (compilation included) whose solutions are counted from its output:
#   limit      a solver that only replays fzn-gpu's own stream, written to a file beforehand
#              (MiniZinc's solns2out reading it is all that is left);
#   printed    fzn-gpu on every device, then on the GPU alone;
#   counted    fzn-gpu on the GPU alone with --count-only (the search without the stream);
#   old        with OLD=DIR (`git archive REV fzn_gpu kernels grammar mznlib | tar -x -C DIR`),
#              that build printing on the GPU alone;
#   Gecode     -p 16, printed.
# Usage there: [OLD=DIR] bash scripts/device_printing.sh OUT "nqueens:14 ..." [LIMIT_S]
set -uo pipefail
out=${1:?usage: $0 OUT "MODEL:N ..." [LIMIT_S]}; cases=${2:?}; limit=${3:-120}
source scripts/device_env.sh >/dev/null 2>&1
source scripts/opt_instances.sh
opt_setup "$out"
site=${PYTHONPATH}
printf '#!/bin/sh\nexec cat "$REPLAY_FILE"\n' > "$work/replay.sh" && chmod +x "$work/replay.sh"
python3 - "$work" <<'PY'
import json, os, sys
conf = json.load(open(os.path.expanduser("~/.minizinc/solvers/gpu-fzn.msc")))
conf.update(id="org.fzn-gpu.replay", name="replay", executable=sys.argv[1] + "/replay.sh",
            tags=["replay"], extraFlags=[])
json.dump(conf, open(sys.argv[1] + "/replay.msc", "w"))
PY
wall() { awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $1}"; }
# row INSTANCE RUN COMMAND...: one timed minizinc call, its solutions counted from the stream
row() {
  local name=$1 what=$2; shift 2
  local t0=$EPOCHREALTIME
  timeout "$limit" "$@" > "$work/o.txt" 2>"$work/e.txt"
  local s=$(wall "$t0")
  echo "| $name | $what | $s | $(grep -c -- "^----------" "$work/o.txt") | $(grep -q "^==========" "$work/o.txt" && echo complete || echo "not finished") |" \
    | tee -a "$out/printing.md"
}
table_start "$out/printing.md" instance run "wall s" solutions end
for c in $cases; do
  IFS=: read -r m n <<< "$c"
  mzn="models/bench/$m.mzn" f=$work/${m}_$n.fzn
  minizinc -c --solver gpu-fzn "$mzn" -D "n=$n;" --fzn "$f" --ozn "$work/x.ozn" >/dev/null || continue
  python3 -m fzn_gpu --build-only "$f" >/dev/null 2>&1       # every device's kernel, untimed
  python3 -m fzn_gpu --devices gpu -a "$f" > "$work/stream.txt" 2>/dev/null
  REPLAY_FILE=$work/stream.txt row "$m $n" "limit (replayed stream)" minizinc --solver "$work/replay.msc" "$mzn" -D "n=$n;" -a
  row "$m $n" "fzn-gpu printed, all devices" minizinc --solver gpu-fzn "$mzn" -D "n=$n;" -a
  row "$m $n" "fzn-gpu printed, GPU" minizinc --solver gpu-fzn "$mzn" -D "n=$n;" -a --devices gpu
  t0=$EPOCHREALTIME
  timeout "$limit" minizinc --solver gpu-fzn "$mzn" -D "n=$n;" -a --devices gpu --count-only -s > "$work/o.txt" 2>&1
  echo "| $m $n | fzn-gpu counted, GPU | $(wall "$t0") | $(grep -oE "solutions=[0-9]+" "$work/o.txt" | cut -d= -f2) | $(grep -q "^==========" "$work/o.txt" && echo complete || echo "not finished") |" \
    | tee -a "$out/printing.md"
  if [ -n "${OLD:-}" ]; then
    PYTHONPATH=$(realpath "$OLD"):$site python3 -m fzn_gpu --build-only "$f" >/dev/null 2>&1
    PYTHONPATH=$(realpath "$OLD"):$site row "$m $n" "old build printed, GPU" minizinc --solver gpu-fzn "$mzn" -D "n=$n;" -a --devices gpu
  fi
  row "$m $n" "Gecode -p 16 printed" minizinc --solver gecode "$mzn" -D "n=$n;" -a -p 16
done
