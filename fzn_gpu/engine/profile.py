"""A search's time by phase, from the cycle counters a profile build keeps (FZN_GPU_PROFILE=1,
kernels/profile.cl): what `-s` prints as `nodeProfile`, so that a design change starts from
where a node's time goes on the device rather than from a guess."""

from __future__ import annotations

import numpy as np

from ..flatzinc.registry import KINDS
from ..runtime.kernel_abi import PROFILE_PARTS, Cnt

PART_NAMES = {
    Cnt.T_PROPAGATE: "propagate",
    Cnt.T_SETTLE: "settle",
    Cnt.T_COPY: "copy",
    Cnt.T_CHOOSE: "choose",
    Cnt.T_FIXPOINT: "fixpoint",
    Cnt.T_BRANCH: "branch",
    Cnt.T_BACKTRACK: "backtrack",
    Cnt.T_CLOCK: "clock",
}
BASE_PARTS = PROFILE_PARTS[:4]  # printed always; the work-group's bookkeeping parts where timed


def node_profile(
    cycles: np.ndarray, nodes: int, passes: int, search_s: float = 0.0, clock_mhz: int = 0, clock_seen_hz: float = 0.0
) -> str | None:
    """One line: a search's cycles per node (a work-group's, or a work-item's: each runs its
    nodes one after another), the share of each phase (a work-group's bookkeeping phases too:
    a fixpoint's own rounds, a branch's and a backtrack's, the slice's clock), the rest as
    "other" (sub-search spaces taken, solutions written), and passes per node. None where the
    device kept no cycles (no counter, or no profile build). With `search_s` (searches launched
    x slice seconds) and the device's clock, also how busy the searches were: the share of
    their launched time spent inside a slice's loop, the rest waiting for the launch's last
    search to finish, or for the host (an estimate: the clock under load is not the rated one).
    With `clock_seen_hz` (the busiest search's cycles a second of slices), also the same share
    at that clock, which is the clock under load where some search never idled: the two bracket
    how busy the searches were."""
    total = int(cycles[Cnt.T_TOTAL])
    if total <= 0 or nodes <= 0:
        return None
    parts = [(PART_NAMES[k], int(cycles[k])) for k in PROFILE_PARTS if k in BASE_PARTS or cycles[k] > 0]
    other = max(0, total - sum(c for _, c in parts))
    shares = ", ".join(f"{name} {100 * c / total:.0f} %" for name, c in parts + [("other", other)])
    busy = f"; busy {100 * total / (search_s * clock_mhz * 1e6):.0f} %" if search_s > 0 and clock_mhz > 0 else ""
    if busy and clock_seen_hz > 0:
        busy += (
            f" at the rated {clock_mhz:,} MHz, {100 * total / (search_s * clock_seen_hz):.0f} % at the "
            f"busiest search's {clock_seen_hz / 1e6:,.0f} MHz"
        )
    return (
        f"{total / nodes:,.0f} cycles a node ({shares}); {passes / nodes:.2f} passes, "
        f"{total / max(passes, 1):,.0f} cycles a pass{busy}"
    )


def cnt_row(profile: bool) -> int:
    """A search's counters on the device: Cnt's, and in a profile build two per constraint kind
    (its propagator's calls, the cycles inside them: kernels/profile.cl, CNT_ROW)."""
    return len(Cnt) + (2 * len(KINDS) if profile else 0)


def kind_profile(row: np.ndarray, nodes: int, top: int = 6) -> str | None:
    """One line: the constraint kinds whose propagators took the most cycles (summed over the
    work-items that ran them; a work-group's pass lasts as long as its slowest call), each with
    its share, its calls a node and its cycles a call; by calls where the device kept no
    cycles (PoCL). None without a profile build's row or any call."""
    if len(row) < cnt_row(True) or nodes <= 0:
        return None
    calls, cycles = row[len(Cnt) :: 2][: len(KINDS)], row[len(Cnt) + 1 :: 2][: len(KINDS)]
    if calls.sum() <= 0:
        return None
    timed = cycles.sum() > 0
    order = np.argsort(-(cycles if timed else calls), kind="stable")[:top]
    parts = []
    for k in order:
        if calls[k] <= 0:
            break
        per_node = f"{calls[k] / nodes:.2f} calls a node"
        if timed:
            parts.append(
                f"{KINDS[k].key} {100 * cycles[k] / cycles.sum():.0f} % ({per_node}, "
                f"{cycles[k] / calls[k]:,.0f} cycles a call)"
            )
        else:
            parts.append(f"{KINDS[k].key} ({per_node})")
    return "; ".join(parts)
