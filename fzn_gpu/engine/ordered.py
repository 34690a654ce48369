"""Solutions printed in the order of the search tree (PHACT's ordering of sub-search spaces):
`--deterministic` (or -p 1) prints the solutions of a satisfaction model in the order a
sequential search of the annotated tree meets them, whatever the work-items and the paths the
tree is split into and re-split into on the way.

Why it holds. An expansion pass emits each search's frontier left to right and the runner sorts
the records by their source, so a phase's paths start in tree order; a search meets the
solutions below its path left to right. A busy search gives away the right branch of its
shallowest open level (resplit.py): that region lies right of everything the search still
holds, and each later donation of the same search lies deeper, so left of the one before, and
all of them inside the source's region. So a path's place in the tree is a key, a sequence of
numbers compared lexicographically: path i of the phase's start has (i + 1), and the j-th
donation of the path with key K has K + (2^31 - j). A solution's key is its path's (the kernel
writes the path's index in a satisfaction solution's first column). A held solution prints
once no path with a smaller key is unfinished (running, or not started); a path still running
may print the solutions already met below it, since the rest of its region lies to their right.
Keys are rows of a matrix of uint32, zero-padded: every component is at least 1, so a key
before its extensions and lexicographic order is numpy's lexsort over the columns.
"""

from __future__ import annotations

import numpy as np

from .paths import Paths
from .resplit import idle_wish

LAST = 2**31  # the j-th donation of a path gets component LAST - j: later ones are to the left


class TreeOrder:
    """The keys of a phase's paths, kept through re-splitting (a resplit.Resplit: one device
    alone, donations feeding its own idle searches, as resplit.SelfSplit)."""

    def __init__(self, n: int) -> None:
        self.keys = (np.arange(n, dtype=np.uint32) + 1)[:, None]  # one component each
        self.lens = np.ones(n, np.int32)
        self.given = np.zeros(n, np.int64)  # donations made by each path
        self.each = 1  # a path's donations of one slice would share one key (donated())
        self.count = 0  # donations, for -s
        # the key of the last solution a limited run can print (OrderedSolutions.cut): paths
        # right of it can only hold solutions after the ones it prints
        self.cut: np.ndarray | None = None
        self.pruned = 0  # paths dropped right of it

    # -- resplit.Resplit
    may_hand_over = False
    longest = 0

    def more(self) -> Paths | None:
        return None

    def hand_over(self) -> bool:
        return False

    def keep(self, started: int, n: int) -> int:
        return n

    def wanted(self, idle_items: int, unstarted: int, items: int) -> int:
        return idle_wish(idle_items, unstarted, items)

    def counting(self) -> bool:
        return False

    def searched(self, nodes: int) -> None:
        pass

    def donated(self, sources: np.ndarray, paths: Paths) -> None:
        sources = np.asarray(sources, np.int64)
        if len(np.unique(sources)) != len(sources):
            raise AssertionError("a path donated twice in one slice: its donations' order is lost")
        assert len(paths) == len(self.keys) + len(sources)
        self.given[sources] += 1
        depth = self.lens[sources]
        if depth.max(initial=0) >= self.keys.shape[1]:  # one component more
            self.keys = np.pad(self.keys, ((0, 0), (0, 1)))
        rows = self.keys[sources].copy()
        rows[np.arange(len(sources)), depth] = LAST - self.given[sources]
        self.keys = np.concatenate([self.keys, rows])
        self.lens = np.concatenate([self.lens, depth + 1])
        self.given = np.concatenate([self.given, np.zeros(len(sources), np.int64)])
        self.count += len(sources)

    def prune(self, paths: Paths, started: int, n: int, running: np.ndarray) -> tuple[Paths, int, np.ndarray] | None:
        """With a cut: the paths not started yet that lie right of it go, and those left of it
        come first, leftmost first (the search of the leftmost regions is what printing waits
        for); the searches running right of it are to stop (the mask returned, over `running`,
        the phase's index of each search's path). (paths, n, stop) where anything changes,
        else None. The started paths keep their indices: solutions and searches refer to them."""
        if self.cut is None:
            return None
        stop = ~self.up_to(np.asarray(running, np.int64), self.cut)
        rest = np.arange(started, n, dtype=np.int64)
        left = rest[self.up_to(rest, self.cut)]
        if len(left) == len(rest) and not stop.any():
            return None
        rows = self.keys[left]
        left = left[np.lexsort(rows.T[::-1])]
        keep = np.concatenate([np.arange(started, dtype=np.int64), left])
        self.keys, self.lens, self.given = self.keys[keep], self.lens[keep], self.given[keep]
        self.pruned += len(rest) - len(left)
        head = paths.block(0, started) if started else Paths(np.zeros(1, np.int32), np.zeros(0, np.int32))
        return Paths.concat([head, paths.take(left)]), started + len(left), stop

    # -- order
    def frontier(self, running: np.ndarray, unstarted_from: int, n: int) -> np.ndarray | None:
        """The smallest key of the unfinished paths (running, or unstarted_from..n-1); None
        where every path is finished."""
        idx = np.concatenate([np.asarray(running, np.int64), np.arange(unstarted_from, n, dtype=np.int64)])
        if not len(idx):
            return None
        rows = self.keys[idx]
        return rows[np.lexsort(rows.T[::-1])[0]]

    def sort(self, subs: np.ndarray) -> np.ndarray:
        """The order of solutions found below paths `subs` (stable: a path's own as found)."""
        rows = self.keys[subs]
        return np.lexsort((np.arange(len(subs)),) + tuple(rows.T[::-1]))

    def up_to(self, subs: np.ndarray, frontier: np.ndarray | None) -> np.ndarray:
        """Whether each path of `subs` has a key at most `frontier` (None: all of them)."""
        if frontier is None:
            return np.ones(len(subs), bool)
        rows = self.keys[subs]
        frontier = np.pad(frontier, (0, rows.shape[1] - len(frontier)))  # keys grew a component since
        differ = rows != frontier[None, :]
        first = differ.argmax(axis=1)
        return ~differ.any(axis=1) | (rows[np.arange(len(rows)), first] < frontier[first])


class OrderedSolutions:
    """Satisfaction solutions (rows whose first column is their path's index) held until no
    unfinished path lies to their left."""

    def __init__(self) -> None:
        self.rows: np.ndarray | None = None
        self.order: TreeOrder | None = None

    def start(self, n: int) -> TreeOrder:
        """A new phase of n paths in tree order; what is held from before stays held (a
        phase's paths are searched from scratch: those solutions are met again, and a time
        limit prints them)."""
        self.order = TreeOrder(n)
        return self.order

    def add(self, sols: np.ndarray | None) -> None:
        if sols is None or not len(sols):
            return
        self.rows = sols if self.rows is None else np.concatenate([self.rows, sols])

    def set_cut(self, needed: int | None) -> None:
        """The run prints `needed` more solutions at most (None: no limit): once that many are
        held, paths right of the last of them can add nothing it prints (TreeOrder.prune)."""
        if self.order is None or needed is None or self.rows is None or len(self.rows) < needed or needed < 1:
            return
        subs = self.rows[:, 0].astype(np.int64)
        last = subs[self.order.sort(subs)[needed - 1]]
        self.order.cut = self.order.keys[last].copy()

    def take(self, unfinished: tuple[np.ndarray, int, int] | None) -> np.ndarray | None:
        """The held rows no unfinished path lies left of (unfinished: runner.unfinished; None:
        all of them), in tree order; the rest stay held. None where there are none."""
        if self.rows is None:
            return None
        if self.order is None:
            ready, rows = np.ones(len(self.rows), bool), self.rows
        else:
            subs = self.rows[:, 0].astype(np.int64)
            rows = self.rows[self.order.sort(subs)]
            frontier = self.order.frontier(*unfinished) if unfinished is not None else None
            ready = self.order.up_to(rows[:, 0].astype(np.int64), frontier)
        n = int(ready.argmin()) if not ready.all() else len(rows)  # ready is a prefix of the order
        self.rows = rows[n:] if n < len(rows) else None
        return rows[:n] if n else None
