"""Benchmarks side by side with Gecode (`python -m fzn_gpu.bench`)."""
