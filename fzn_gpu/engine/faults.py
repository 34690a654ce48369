"""Device faults, shared by every engine that spreads work over devices: the failure that
hands a device's work back to the others (complete search's blocks, LNS's islands). Tests make
them happen on purpose through fzn_gpu/hooks.py."""

from __future__ import annotations


class DeviceFault(Exception):
    """A device could not go on (build or launch failure, lost device): its block goes back."""
