#!/usr/bin/env bash
# Installs everything fzn-gpu needs on a fresh machine (run as root, or with sudo): Debian's
# minizinc + Gecode, a CPU OpenCL runtime, the Python package and fzn-gpu's MiniZinc solver
# configuration; then checks which OpenCL devices build programs. Idempotent.
#
# The CPU runtime: Debian's PoCL (pocl-opencl-icd) where apt-get is. Its "distro" build picks a
# CPU variant it knows for any x86-64 or arm64 processor, where pip's PoCL 3.0 (LLVM 14) fails on
# every CPU newer than its LLVM ("unknown target CPU 'generic'"). pip's is installed only where
# apt-get is not, and removed where Debian's is: one CPU platform, not two.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
extras="test,bench,cluster"
if command -v apt-get >/dev/null; then
  wanted=()
  command -v minizinc >/dev/null && command -v fzn-gecode >/dev/null || wanted+=(minizinc flatzinc)
  dpkg -s pocl-opencl-icd >/dev/null 2>&1 || wanted+=(pocl-opencl-icd)
  if [ ${#wanted[@]} -gt 0 ]; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${wanted[@]}" >/dev/null
  fi
else
  extras="cpu,$extras"
  echo "fzn-gpu set-up: no apt-get here: installing pip's PoCL as the CPU device (install minizinc yourself)" >&2
fi
python3 -m pip install -q --disable-pip-version-check ".[$extras]"
if [[ $extras != cpu,* ]] && python3 -m pip show -q pocl-binary-distribution >/dev/null 2>&1; then
  echo "fzn-gpu set-up: removing pip's PoCL (Debian's serves the CPU)" >&2
  python3 -m pip uninstall -q -y pocl-binary-distribution
fi
fzn-gpu install-solver-config
# a small program built and run on every OpenCL device: which serve (a run leaves out the others)
fzn-gpu check-devices || { echo "fzn-gpu set-up: no OpenCL device builds programs here (see above)" >&2; exit 1; }
# the generic kernels, built once here (on a CPU also launched once: PoCL compiles at the first
# launch), so that no model's first run waits seconds for a build or a compile
fzn-gpu build-kernels || echo "fzn-gpu: the generic kernels were not built ahead; each model's first run builds its own" >&2
minizinc --solvers | grep gpu-fzn >/dev/null || { echo "minizinc does not list gpu-fzn" >&2; exit 1; }
