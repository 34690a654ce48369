"""Re-splitting on the fly (the GPU backtracking paper's second cut-off, decided from the
measured tree rather than a fixed depth): when work-items of a device sit idle with no
unstarted sub-search space left, busy ones give away the right branch of their shallowest open
level as a new path. A `Resplit` is the say over one phase's paths between two slices: how
many to keep (the rest goes to another device), how many donations to ask for, and a record
of those that came in (a failed device's work is then handed back without them)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from .paths import Paths

# Ask for donations once a 32nd of the work-items are idle, and for a reserve of a quarter of
# the work-items beyond them: a donation is taken at the start of a slice and searched from the
# one after, so work-items falling idle meanwhile find an unstarted path waiting instead of
# idling two slices (measured against an eighth and no reserve: docs/bench/measurements.md,
# all_different shared out over a work-group).
IDLE_SHARE = 32
RESERVE_SHARE = 4
# The most paths one work-group search gives away in a slice: the right branches of its open
# levels, shallowest first. One each left a search's tail to the few searches still busy, each
# giving one path a slice to thousands of idle groups; several each fill them in a slice or two
# (docs/bench/measurements.md). Ordered printing takes one each (its keys order one donation per
# path and slice).
DONATE_EACH = 64
# The most records one work-item search gives in a hand-over (the right branch of each open
# level and its node): one that needs more searches on and hands over at a later slice.
HANDOVER_RECORDS = 64
RESPLIT_SLACK = 32  # decisions a donated path may add to the longest path of its phase


class Resplit(Protocol):
    # paths one work-group search may give away in one slice (the work-item kernel: one)
    each: int
    # whether this phase's work-item searches may be asked to hand all their work over
    # (hand_over), which sizes the records a slice can bring back
    may_hand_over: bool
    # the longest path (decisions) that `more` may hand in (0: none come), which sizes the
    # phase's path buffers
    longest: int

    def more(self) -> Paths | None:
        """Paths handed in from outside the phase, to search after its unstarted ones (a
        cluster worker's next paths from its driver: fzn_gpu/cluster/), or None."""

    def hand_over(self) -> bool:
        """Whether every work-item search gives all it has left away at the next slice and
        stops (the balancer's, for a much faster device waiting on this one)."""

    def keep(self, started: int, n: int) -> int:
        """How many of the phase's n paths to keep (at least `started`, those already taken)."""

    def wanted(self, idle_items: int, unstarted: int, items: int) -> int:
        """How many paths busy work-items should donate at the start of the next slice."""

    def donated(self, sources: np.ndarray, paths: Paths) -> None:
        """Donations came in: `paths` is the phase's whole list now (the new ones at its end),
        sources[j] the index of the path whose search gave away new path j."""

    def counting(self) -> bool:
        """Whether the phase reports its nodes after each slice (`searched`): the balancer
        measures the devices' node rates (balance.py, MIN_NODE_SHARE)."""

    def searched(self, nodes: int) -> None:
        """The phase's nodes so far, after a slice, while `counting`."""


def idle_wish(idle_items: int, unstarted: int, items: int) -> int:
    """The device's own need: one path per idle work-item, and a reserve for those that fall
    idle before the next donations, less the unstarted paths, once enough of them are idle
    for a slice of donations to pay (many_idle)."""
    if not many_idle(idle_items, items):
        return 0
    return max(0, idle_items + items // RESERVE_SHARE - unstarted)


def many_idle(idle_items: int, items: int) -> bool:
    """A 32nd of the work-items or more idle: a work-group device's next slice is a short one
    (runner.SliceBudget's tail), so that they get work sooner."""
    return idle_items >= max(1, items // IDLE_SHARE)


class SelfSplit:
    """One device alone: donations feed its own idle work-items."""

    may_hand_over = False
    longest = 0

    def __init__(self) -> None:
        self.count = 0
        self.each = DONATE_EACH

    def more(self) -> Paths | None:
        return None

    def hand_over(self) -> bool:
        return False

    def keep(self, started: int, n: int) -> int:
        return n

    def wanted(self, idle_items: int, unstarted: int, items: int) -> int:
        return idle_wish(idle_items, unstarted, items)

    def donated(self, sources: np.ndarray, paths: Paths) -> None:
        self.count += len(sources)

    def counting(self) -> bool:
        return False

    def searched(self, nodes: int) -> None:
        pass
