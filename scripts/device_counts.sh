#!/usr/bin/env bash
# All-solution counts on the GPU machine, fzn-gpu beside Gecode in one run: fzn-gpu on the GPU
# alone (--count-only, kernel built beforehand, -s: nodes, kernel time, the device that ran)
# and fzn-gecode with 16 threads (-a -p 16, solutions written to a file and counted), each
# model compiled with its solver's library. Wall seconds per run. SERVER=1 adds two runs of
# each through a warm solver server (fzn_gpu/server.py: the first loads the model's program,
# the second finds it loaded by the spare); NO_GECODE=1 leaves Gecode out.
# Usage there: [SERVER=1] [NO_GECODE=1] bash scripts/device_counts.sh OUT "nqueens:14 costas:13 ..." [LIMIT_S]
set -uo pipefail
out=${1:?usage: $0 OUT "MODEL:N ..." [LIMIT_S]}; counts=${2:?}; limit=${3:-120}
source scripts/device_env.sh >/dev/null 2>&1
export FZN_GPU_BUCKET=off     # these counts measure the search kernels, not bucket elimination's count
source scripts/opt_instances.sh
opt_setup "$out"
stat() { grep -oE "(solutions|nodes|kernelTime|hostTime|workItems)=[^ ]+|device=\"[^\"]*\"" | tr '\n' ' '; }
wall() { awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $1}"; }
table_start "$out/counts.md" instance solver "wall s" solutions statistics
for c in $counts; do
  IFS=: read -r m n <<< "$c"
  f=$work/${m}_$n.fzn g=$work/${m}_${n}_gecode.fzn
  minizinc -c --solver gpu-fzn "models/bench/$m.mzn" -D "n=$n;" --fzn "$f" --ozn "$work/x.ozn" >/dev/null || continue
  minizinc -c --solver gecode "models/bench/$m.mzn" -D "n=$n;" --fzn "$g" --ozn "$work/y.ozn" >/dev/null || continue
  python3 -m fzn_gpu --devices gpu --build-only "$f" >/dev/null 2>&1
  t0=$EPOCHREALTIME
  timeout "$limit" python3 -m fzn_gpu --devices gpu -a --count-only -s "$f" > "$work/o.txt" 2>&1
  echo "| $m $n | fzn-gpu (GPU) | $(wall "$t0") | $(grep -oE "solutions=[0-9]+" "$work/o.txt" | cut -d= -f2) | $(stat < "$work/o.txt") |" \
    | tee -a "$out/counts.md"
  if [ "${SERVER:-0}" = 1 ]; then
    if [ -z "${FZN_GPU_SERVER_DIR:-}" ]; then   # a server of this run's own, started and warm
      export FZN_GPU_SERVER_DIR; FZN_GPU_SERVER_DIR=$(mktemp -d)
      FZN_GPU_SERVER=on python3 -m fzn_gpu --devices gpu "$f" >/dev/null 2>&1
      for _ in $(seq 100); do ls "$FZN_GPU_SERVER_DIR"/*.sock >/dev/null 2>&1 && break; sleep 0.2; done
      sleep 2
    fi
    for k in 1 2; do
      t0=$EPOCHREALTIME
      FZN_GPU_SERVER=require timeout "$limit" python3 -m fzn_gpu --devices gpu -a --count-only -s "$f" > "$work/o.txt" 2>&1
      echo "| $m $n | fzn-gpu (GPU), server run $k | $(wall "$t0") | $(grep -oE "solutions=[0-9]+" "$work/o.txt" | cut -d= -f2) | $(stat < "$work/o.txt") $(grep -oE "(initTime|buildTime)=[^ ]+" "$work/o.txt" | tr '\n' ' ')|" \
        | tee -a "$out/counts.md"
      sleep 1
    done
  fi
  [ "${NO_GECODE:-0}" = 1 ] && continue
  t0=$EPOCHREALTIME
  timeout "$limit" fzn-gecode -a -p 16 "$g" > "$work/g.txt" 2>&1
  echo "| $m $n | Gecode -p 16 | $(wall "$t0") | $(grep -c -- "^----------" "$work/g.txt") | $(grep -q "^==========" "$work/g.txt" && echo complete || echo "not finished") |" \
    | tee -a "$out/counts.md"
done
