# Sourced on the GPU machine (nothing can be downloaded there): installs the carried wheels
# (.whl/) and PoCL (.carry/pocl.tar.xz: `pip download pocl-binary-distribution`, unzipped,
# tar -cJ), unpacks Debian's minizinc + Gecode (.carry/minizinc-gecode.tar.xz, made by
# ../shared/tools/pack-minizinc-for-device.sh), registers NVIDIA's OpenCL ICD and the gpu-fzn
# solver configuration. Leaves PATH/PYTHONPATH set for the caller.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
# PoCL for the 16-core CPU beside the GPU: pip's pocl-binary-distribution wheel repacked as
# tar.xz (58 MB as a wheel would not travel with the rest); it lands in pyopencl/.libs, where
# the ICD loader of pyopencl's wheel looks
[ -f .carry/pocl.tar.xz ] && tar -C /tmp/site -xJf .carry/pocl.tar.xz
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
# every run in a process of its own, as the figures before the solver server were measured;
# the scripts that measure runs through a server say so (scripts/startup.sh, SERVER=1)
export FZN_GPU_SERVER=${FZN_GPU_SERVER:-off}
# bytecode ahead, as pip install and a user's first run leave it: otherwise every process
# there compiled its 136 modules again (0.5 s of each run's start-up, docs/bench/measurements.md)
python3 -m compileall -q -j 0 /tmp/site "$PWD/fzn_gpu" $(ls -d "$PWD"/.carry/old/fzn_gpu 2>/dev/null) >/dev/null 2>&1
mkdir -p /opt/mzn && tar -C /opt/mzn -xJf .carry/minizinc-gecode.tar.xz
export PATH=/opt/mzn/bin:/tmp/fzn-bin:$PATH LD_LIBRARY_PATH=/opt/mzn/lib
mkdir -p /etc/OpenCL/vendors
[ -e /etc/OpenCL/vendors/nvidia.icd ] || echo /usr/lib/libnvidia-opencl.so > /etc/OpenCL/vendors/nvidia.icd
mkdir -p /tmp/fzn-bin
printf '#!/bin/sh\nexec python3 -m fzn_gpu "$@"\n' > /tmp/fzn-bin/fzn-gpu && chmod +x /tmp/fzn-bin/fzn-gpu
python3 -m fzn_gpu install-solver-config >/dev/null
# the benchmark suite's data files (models/bench/data), written from fixed seeds
python3 models/bench/instances.py >/dev/null
python3 -m fzn_gpu --list-devices
