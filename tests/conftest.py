import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


KERNELS = ["item", "group", "group-clock"]


def use_kernel(monkeypatch, name: str) -> None:
    """One of KERNELS: a work-item per sub-search space (CPUs' default), a work-group per
    sub-search space, and a work-group whose slices end by the clock (GPUs' default: on PoCL a
    counter of clock readings stands in for NVIDIA's clock, kernels/profile.cl)."""
    monkeypatch.setenv("FZN_GPU_KERNEL", name.split("-")[0])
    monkeypatch.setenv("FZN_GPU_SLICE_CLOCK", "1" if name.endswith("-clock") else "0")


@pytest.fixture(params=KERNELS)
def kernel(request, monkeypatch):
    """Run the test under each execution model (use_kernel), all on PoCL here."""
    use_kernel(monkeypatch, request.param)
    return request.param
