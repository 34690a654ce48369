"""Device faults, shared by every engine that spreads work over devices: the failure that
hands a device's work back to the others (complete search's blocks, LNS's islands), and the
faults tests inject (FZN_GPU_FAIL_DEVICE) to check that nothing is lost when one happens."""

from __future__ import annotations

from .. import settings


class DeviceFault(Exception):
    """A device could not go on (build or launch failure, lost device): its block goes back."""


def injected_fault(device: int, block: int, slice_no: int = 0) -> bool:
    """FZN_GPU_FAIL_DEVICE=i:k[:s][,...] makes device i fail on its k-th block (LNS: its k-th
    step), before it starts (s = 0, the default) or after its s-th slice, when its searches
    may have donated paths already; k = 0: in complete search's dive or root split, before any
    block (tests of fault recovery)."""
    for spec in filter(None, (settings.text("FZN_GPU_FAIL_DEVICE") or "").split(",")):
        parts = spec.split(":")
        dev, at_block, at = (parts + ["1", "0"][len(parts) - 1 :])[:3]
        if dev.isdigit() and int(dev) == device and block == int(at_block or 1) and int(at or 0) == slice_no:
            return True
    return False
