#!/usr/bin/env bash
# A search on a Ray cluster against one process, on a machine of two GPUs (the device tool's
# nvidia-h200-x2 or nvidia-h100-x2): a Ray head started here with both GPUs, so that fzn-gpu
# --cluster starts one worker per GPU, against `fzn-gpu --devices gpu` (one process, PHACT
# between its two GPUs) and one GPU alone, counting all solutions of the FlatZinc files in
# .carry/fzn (compiled beforehand with `minizinc --solver gpu-fzn -c`: n-queens 16-18 of
# models/bench/nqueens.mzn, Costas 14 of costas.mzn). Needs .whl/ with the device's Python
# (3.12) wheels of lark, pyopencl, pytools, platformdirs, siphash24, msgpack, click, jsonschema
# (and its referencing, rpds-py, attrs, jsonschema-specifications) and ray, ray's repacked
# without ray/jars and ray/dashboard/client (79 MB as it comes, over the 64 MiB a call carries).
# The generic kernels are built first (`fzn-gpu build-kernels`), untimed. LNS=1: LNS instead
# (`--engine lns -t 10000`, TSP 60, QAP 32 and WCSP 10x10 of models/bench, compiled to
# .carry/fzn/tsp_60.fzn, qap_32.fzn, wcsp_10x10.fzn), each instance twice in turn.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 FZN_GPU_SERVER=off FZN_GPU_BUCKET=off RAY_USAGE_STATS_ENABLED=0
mkdir -p /etc/OpenCL/vendors; [ -e /etc/OpenCL/vendors/nvidia.icd ] || echo /usr/lib/libnvidia-opencl.so > /etc/OpenCL/vendors/nvidia.icd
nvidia-smi -L
python3 -m compileall -q -j 0 /tmp/site "$PWD/fzn_gpu" >/dev/null 2>&1
python3 -m fzn_gpu --list-devices
python3 -c "import ray; print('ray', ray.__version__)"
t0=$(date +%s.%N); python3 -m fzn_gpu build-kernels; echo "build-kernels $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s"
python3 -m ray.scripts.scripts stop --force >/dev/null 2>&1; python3 -m ray.scripts.scripts start --head --port 6379 --num-gpus 2 --include-dashboard=false --disable-usage-stats 2>&1 | tail -3
python3 -m ray.scripts.scripts status 2>&1 | tail -12
run() {  # label, args...
  local label=$1; shift
  local t0=$(date +%s.%N)
  python3 -m fzn_gpu -a --count-only -s --engine complete "$@" > /tmp/out.txt 2> /tmp/err.txt
  local rc=$?
  local t1=$(date +%s.%N)
  echo "== $label rc=$rc wall=$(python3 -c "print(round($t1 - $t0, 2))") s: $*"
  grep -E "solutions=|solveTime|kernelTime|splitTime|subSearchSpaces=|clusterNodes|clusterJoin|clusterWait|w[0-9]_|^%%%mzn-stat: nodes=|d[0-9]_(device|subSearchSpaces|busyTime|idleAtEnd|nodes)" /tmp/out.txt | tr '\n' ' '; echo
  tail -3 /tmp/err.txt
}
if [ "${LNS:-0}" = 1 ]; then
  lns() {  # label, args...
    local label=$1; shift
    local t0=$(date +%s.%N)
    python3 -m fzn_gpu --engine lns -t 10000 -s "$@" > /tmp/out.txt 2> /tmp/err.txt
    local rc=$?
    echo "== $label rc=$rc wall=$(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s: $*"
    grep -E "objective=|lnsSteps=|clusterJoin|clusterWait|w[0-9]_(lnsSteps|lnsImprovements|worker)|d[0-9]_(device|lnsSteps|lnsImprovements)" /tmp/out.txt | tr '\n' ' '; echo
    tail -2 /tmp/err.txt
  }
  for round in 1 2; do
    for m in tsp_60 qap_32 wcsp_10x10; do
      lns "$m both GPUs, one process" --devices gpu .carry/fzn/$m.fzn
      lns "$m Ray, two workers" --cluster 127.0.0.1:6379 --devices gpu .carry/fzn/$m.fzn
    done
  done
  python3 -m ray.scripts.scripts stop --force >/dev/null 2>&1
  exit 0
fi
for m in q16 costas14 q17 q18; do
  f=.carry/fzn/$m.fzn
  run "$m both GPUs, one process" --devices gpu $f
  run "$m Ray, two workers" --cluster 127.0.0.1:6379 --devices gpu $f
  case $m in q17|q18) ;; *) run "$m one GPU" --devices 0 $f;; esac
  [ $m = q18 ] && continue
  run "$m both GPUs, one process, again" --devices gpu $f
  run "$m Ray, two workers, again" --cluster 127.0.0.1:6379 --devices gpu $f
done
python3 -m ray.scripts.scripts stop --force >/dev/null 2>&1
