#!/usr/bin/env bash
# Installs everything fzn-gpu needs on a fresh Debian/Ubuntu machine (run as root, or with sudo):
# Debian's minizinc + Gecode, the Python package with a CPU OpenCL device (PoCL from pip), and
# fzn-gpu's MiniZinc solver configuration. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! command -v minizinc >/dev/null || ! command -v fzn-gecode >/dev/null; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq minizinc flatzinc >/dev/null
fi
python3 -m pip install -q --disable-pip-version-check ".[cpu,test,bench,cluster]"
fzn-gpu install-solver-config
# on a machine with a GPU: the generic kernel, built once here, so that no model's first run
# waits seconds for its kernel build (nothing to do without a GPU)
fzn-gpu build-kernels || echo "fzn-gpu: the generic GPU kernel was not built ahead; each model's first run builds its own" >&2
minizinc --solvers | grep gpu-fzn >/dev/null || { echo "minizinc does not list gpu-fzn" >&2; exit 1; }
