import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(params=["item", "group"])
def kernel(request, monkeypatch):
    """Run the test under each execution model: a work-item per sub-search space (CPUs'
    default) and a work-group per sub-search space (GPUs' default), both on PoCL here."""
    monkeypatch.setenv("FZN_GPU_KERNEL", request.param)
    return request.param
