#!/usr/bin/env bash
# Where a node's time goes on the GPU (docs/ARCHITECTURE.md "Profiling a node"): all-solution
# counts (n-queens, Costas) under each execution model, and branch and bound on optimisation
# instances (branch and bound alone), each with a profile build (FZN_GPU_PROFILE=1: cycles by phase, `nodeProfile` in
# -s) and without (what the profile costs), kernels built beforehand. GPU alone. Each row says
# the build's registers and spills (NVIDIA's -cl-nv-verbose) and the FZN_GPU_* settings it ran
# under (exported by the caller: FZN_GPU_CL_OPTIONS, FZN_GPU_OUTLINE, ...).
# Usage there: [PROFILES="0 1"] bash scripts/device_profile.sh OUT [LIMIT_S [COUNTS [OPT_REGEX]]]
#   COUNTS: model:n:kernels, e.g. "nqueens:15:group,item costas:13:group"
set -uo pipefail
out=${1:?usage: $0 OUT [LIMIT_S [COUNTS [OPT_REGEX]]]}; limit=${2:-10}
counts=${3:-"nqueens:15:group,item nqueens:16:group costas:13:group,item"}
source scripts/device_env.sh >/dev/null 2>&1
export FZN_GPU_BUCKET=off     # these counts measure the search kernels, not bucket elimination's count
source scripts/opt_instances.sh
opt_setup "$out"
stat() { grep -oE "(solutions|objective|nodes|propagations|passes|kernelTime|hostTime|workItems|recomputedLevels)=[0-9.e+-]+" | tr '\n' ' '; }
# run NAME FZN KERNEL PROFILE ARGS...: one row of the table
run() {
  local name=$1 f=$2 kernel=$3 p=$4; shift 4
  local opts="${FZN_GPU_CL_OPTIONS:-} -cl-nv-verbose"
  FZN_GPU_KERNEL=$kernel FZN_GPU_PROFILE=$p FZN_GPU_CL_OPTIONS="$opts" python3 -m fzn_gpu -v --devices gpu \
    --build-only "$f" > "$work/b.txt" 2>&1
  local res; res=$(grep -oE "Used [0-9]+ registers|[0-9]+ bytes (stack frame|spill stores)|[0-9]+ B private memory" "$work/b.txt" \
    | sort -u | tr '\n' ' ')
  local settings; settings=$(env | grep -oE "^FZN_GPU_(CL_OPTIONS|OUTLINE|LOCAL|ITEMS_PER_CU|SUBS_PER_ITEM|MAX_REGISTERS|NARROW)=.*" | tr '\n' ' ')
  local t0=$EPOCHREALTIME
  FZN_GPU_KERNEL=$kernel FZN_GPU_PROFILE=$p FZN_GPU_CL_OPTIONS="$opts" timeout $((limit + 120)) \
    python3 -m fzn_gpu --devices gpu -s "$@" "$f" \
    > "$work/o.txt" 2>&1
  local wall; wall=$(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}")
  local prof; prof=$(grep -oE 'nodeProfile=.*' "$work/o.txt" | tail -1 | cut -d= -f2- | tr -d '"')
  local kinds; kinds=$(grep -oE 'kindProfile=.*' "$work/o.txt" | tail -1 | cut -d= -f2- | tr -d '"')
  echo "| $name | $kernel $settings| $p | $res | $wall | $(stat < "$work/o.txt") | $prof | $kinds |" | tee -a "$out/profile.md"
}
[ -f "$out/profile.md" ] || table_start "$out/profile.md" instance "kernel, settings" profile registers "wall s" \
  statistics "node profile" "kinds by cycles"
for c in $counts; do
  IFS=: read -r m n kernels <<< "$c"
  f=$work/${m}_$n.fzn
  minizinc -c --solver gpu-fzn "models/bench/$m.mzn" -D "n=$n;" --fzn "$f" --ozn "$work/x.ozn" >/dev/null || continue
  for kernel in ${kernels//,/ }; do
    for p in ${PROFILES:-0 1}; do run "$m $n" "$f" "$kernel" "$p" -a --count-only -t $((limit * 6000)); done
  done
done
if [ -n "${4:-}" ]; then
  opt_cases "$4"
  for c in "${cases[@]}"; do
    f=$(compile_case "$c") || continue
    run "$(basename "$f" .fzn)" "$f" group 1 --engine complete -t $((limit * 1000))
  done
fi
