"""A search's time by phase, from the cycle counters a profile build keeps (FZN_GPU_PROFILE=1,
kernels/profile.cl): what `-s` prints as `nodeProfile`, so that a design change starts from
where a node's time goes on the device rather than from a guess."""

from __future__ import annotations

import numpy as np

from ..kernel_abi import PROFILE_PARTS, Cnt

PART_NAMES = {Cnt.T_PROPAGATE: "propagate", Cnt.T_SETTLE: "settle", Cnt.T_COPY: "copy",
              Cnt.T_CHOOSE: "choose"}


def node_profile(cycles: np.ndarray, nodes: int, passes: int) -> str | None:
    """One line: a search's cycles per node (a work-group's, or a work-item's: each runs its
    nodes one after another), the share of each phase, the rest as "other" (sub-search spaces
    taken, solutions written, barriers between phases), and passes per node. None where the
    device kept no cycles (no counter, or no profile build)."""
    total = int(cycles[Cnt.T_TOTAL])
    if total <= 0 or nodes <= 0:
        return None
    parts = [(PART_NAMES[k], int(cycles[k])) for k in PROFILE_PARTS]
    other = max(0, total - sum(c for _, c in parts))
    shares = ", ".join(f"{name} {100 * c / total:.0f} %" for name, c in parts + [("other", other)])
    return (f"{total / nodes:,.0f} cycles a node ({shares}); {passes / nodes:.2f} passes, "
            f"{total / max(passes, 1):,.0f} cycles a pass")
