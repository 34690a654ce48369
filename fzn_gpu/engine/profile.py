"""A search's time by phase, from the cycle counters a profile build keeps (FZN_GPU_PROFILE=1,
kernels/profile.cl): what `-s` prints as `nodeProfile`, so that a design change starts from
where a node's time goes on the device rather than from a guess."""

from __future__ import annotations

import numpy as np

from ..kernel_abi import PROFILE_PARTS, Cnt

PART_NAMES = {Cnt.T_PROPAGATE: "propagate", Cnt.T_SETTLE: "settle", Cnt.T_COPY: "copy",
              Cnt.T_CHOOSE: "choose"}


def node_profile(cycles: np.ndarray, nodes: int, passes: int, search_s: float = 0.0, clock_mhz: int = 0) -> str | None:
    """One line: a search's cycles per node (a work-group's, or a work-item's: each runs its
    nodes one after another), the share of each phase, the rest as "other" (sub-search spaces
    taken, solutions written, barriers between phases), and passes per node. None where the
    device kept no cycles (no counter, or no profile build). With `search_s` (searches launched
    x slice seconds) and the device's clock, also how busy the searches were: the share of
    their launched time spent inside a slice's loop, the rest waiting for the launch's last
    search to finish, or for the host (an estimate: the clock under load is not the rated one)."""
    total = int(cycles[Cnt.T_TOTAL])
    if total <= 0 or nodes <= 0:
        return None
    parts = [(PART_NAMES[k], int(cycles[k])) for k in PROFILE_PARTS]
    other = max(0, total - sum(c for _, c in parts))
    shares = ", ".join(f"{name} {100 * c / total:.0f} %" for name, c in parts + [("other", other)])
    busy = f"; busy {100 * total / (search_s * clock_mhz * 1e6):.0f} %" if search_s > 0 and clock_mhz > 0 else ""
    return (f"{total / nodes:,.0f} cycles a node ({shares}); {passes / nodes:.2f} passes, "
            f"{total / max(passes, 1):,.0f} cycles a pass{busy}")
