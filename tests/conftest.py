import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

# Every solver process the tests start runs on its own, as before the solver server existed
# (and no test leaves a server behind); tests/test_server.py runs through a server of its own.
os.environ["FZN_GPU_SERVER"] = "off"


KERNELS = ["item", "group"]


def use_kernel(monkeypatch, name: str) -> None:
    """One of KERNELS: a work-item per sub-search space (CPUs' default) or a work-group per
    sub-search space (GPUs' default)."""
    monkeypatch.setenv("FZN_GPU_KERNEL", name)


@pytest.fixture(params=KERNELS)
def kernel(request, monkeypatch):
    """Run the test under each execution model (use_kernel), all on PoCL here."""
    use_kernel(monkeypatch, request.param)
    return request.param
