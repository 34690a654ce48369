"""fzn-gpu: a MiniZinc/FlatZinc solver whose search runs as OpenCL kernels on every device."""

__version__ = "0.1.0"
