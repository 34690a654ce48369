import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

# Every solver process the tests start runs on its own, as before the solver server existed
# (and no test leaves a server behind); tests/test_server.py runs through a server of its own.
os.environ["FZN_GPU_SERVER"] = "off"
# nor leaves a device out for a verdict an earlier test's search recorded (engine/ranking.py):
# tests/test_ranking.py turns it on, over a cache of its own
os.environ["FZN_GPU_RANKING"] = "0"


KERNELS = ["item", "group"]
# with the work-group kernel's slices ended by the clock (NVIDIA's default; on PoCL a counter of
# clock readings stands in: kernels/profile.cl), for the tests of what a slice's end touches
CLOCKED_KERNELS = [*KERNELS, "group-clock"]


def use_kernel(monkeypatch, name: str) -> None:
    """One of CLOCKED_KERNELS: a work-item per sub-search space (CPUs' default), a work-group
    per sub-search space (GPUs'), a work-group whose slices end by the clock (NVIDIA's)."""
    monkeypatch.setenv("FZN_GPU_KERNEL", name.split("-")[0])
    if name.startswith("group"):
        # PoCL's optimiser spends tens of seconds on each variant of the work-group kernel, a
        # tenth of that without it (docs/bench/measurements.md, the tests on a fresh machine): with an
        # empty cache a timed test that was the first to run its variant spent its whole limit
        # in the compile. Users run this kernel on GPUs, built by their own compilers; here the
        # tests check what it computes.
        monkeypatch.setenv("FZN_GPU_CL_OPTIONS", "-cl-opt-disable")
    else:  # a test that switches kernels builds the work-item kernel as users get it
        monkeypatch.delenv("FZN_GPU_CL_OPTIONS", raising=False)
    monkeypatch.setenv("FZN_GPU_SLICE_CLOCK", "1" if name.endswith("-clock") else "0")


def add_cl_options(monkeypatch, options: str) -> None:
    """Compiler options for a test's kernel beside those use_kernel set (PoCL's optimiser off
    for the work-group kernel), which replacing them would undo."""
    given = os.environ.get("FZN_GPU_CL_OPTIONS", "")
    monkeypatch.setenv("FZN_GPU_CL_OPTIONS", f"{given} {options}".strip())


@pytest.fixture(params=KERNELS)
def kernel(request, monkeypatch):
    """Run the test under each execution model (use_kernel), all on PoCL here."""
    use_kernel(monkeypatch, request.param)
    return request.param


@pytest.fixture(params=CLOCKED_KERNELS)
def kernel_with_clock(request, monkeypatch):
    """`kernel`, and the work-group kernel with clocked slices too."""
    use_kernel(monkeypatch, request.param)
    return request.param
