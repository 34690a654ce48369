#!/usr/bin/env bash
# Where the host's time goes in a GPU run (the wall time beside kernelTime): Python's imports,
# the OpenCL platform and context, then a Python profile (cProfile, through fzn_gpu.cli.run) of
# each case's count, GPU alone, kernels built beforehand; -s's sliceGapTime is the host's work
# between slices. Usage there: bash scripts/device_host_profile.sh OUT MODEL:N...
set -uo pipefail
out=${1:?usage: $0 OUT MODEL:N...}; shift
source scripts/device_env.sh >/dev/null 2>&1
export FZN_GPU_BUCKET=off     # these counts measure the search kernels, not bucket elimination's count
mkdir -p "$out"
work=$(mktemp -d)
{
  echo "## imports (python3 -X importtime, the 15 slowest cumulative)"
  python3 -X importtime -c "import fzn_gpu.cli, fzn_gpu.lower, fzn_gpu.engine, pyopencl" 2>&1 | sort -t'|' -k2 -n | tail -15
  for i in 1 2; do
    t0=$EPOCHREALTIME; python3 -c "import fzn_gpu.cli, fzn_gpu.lower, fzn_gpu.engine, pyopencl"
    echo "imports, run $i: $(awk "BEGIN{printf \"%.3f\", $EPOCHREALTIME - $t0}") s"
  done
  python3 - <<'PY'
import time
t0 = time.perf_counter()
import pyopencl as cl
t1 = time.perf_counter()
platforms = cl.get_platforms()
t2 = time.perf_counter()
gpu = [d for p in platforms for d in p.get_devices() if d.type & cl.device_type.GPU]
t3 = time.perf_counter()
ctx = cl.Context(gpu[:1])
t4 = time.perf_counter()
q = cl.CommandQueue(ctx)
t5 = time.perf_counter()
print(f"pyopencl import {t1 - t0:.3f} s, platforms {t2 - t1:.3f} s, devices {t3 - t2:.3f} s, "
      f"context {t4 - t3:.3f} s, queue {t5 - t4:.3f} s")
PY
} 2>&1 | tee "$out/host_startup.txt"
for c in "$@"; do
  IFS=: read -r model n <<<"$c"
  f="$work/${model}_$n.fzn"
  minizinc -c --solver gpu-fzn "models/bench/$model.mzn" -D "n=$n;" --fzn "$f" --ozn "$work/x.ozn" >/dev/null
  python3 -m fzn_gpu --devices gpu --build-only "$f" >/dev/null 2>&1
  t0=$EPOCHREALTIME
  python3 -m fzn_gpu --devices gpu -a --count-only -s "$f" 2>&1 | grep -oE "[a-zA-Z]+(Time|Launches)=[0-9.e+-]+" | tr '\n' ' ' \
    | tee "$out/${model}_$n.stats.txt"
  echo " wall $(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}") s" | tee -a "$out/${model}_$n.stats.txt"
  python3 - "$f" "$out/${model}_$n.profile.txt" <<'PY'
import cProfile, io, pstats, sys
from fzn_gpu import cli
prof = cProfile.Profile()
prof.enable()
cli.run(["--devices", "gpu", "-a", "--count-only", sys.argv[1]])
prof.disable()
s = io.StringIO()
st = pstats.Stats(prof, stream=s)
st.sort_stats("cumulative").print_stats(45)
st.sort_stats("tottime").print_stats(30)
open(sys.argv[2], "w").write(s.getvalue())
PY
done
