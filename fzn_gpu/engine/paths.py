"""Sub-search spaces as decision paths, held in CSR form (one offsets array, one data array)
so that millions of them cost a few numpy operations on the host, never a Python loop."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..runtime.kernel_abi import DEC, complementary

GROWTH = 4  # Paths.extend's room: the paths it holds, times this


@dataclass
class _Room:
    """Arrays with spare room at their end, shared by the Paths that `Paths.extend` made from
    one another: the paths in use are ptr[:n + 1] and data[:m]; beyond is free."""

    ptr: np.ndarray
    data: np.ndarray
    n: int
    m: int


@dataclass
class Paths:
    """Path i is data[ptr[i]:ptr[i + 1]]: decisions from the root, DEC ints each (variable, op,
    value, the value's high word: fzn_gpu.runtime.kernel_abi). Never changed once made: operations
    return new Paths (views of the same arrays where they can)."""

    ptr: np.ndarray  # int32, one more entry than there are paths
    data: np.ndarray  # int32
    _room: _Room | None = field(default=None, repr=False, compare=False)

    def extend(self, more: Paths) -> Paths:
        """These paths, then `more`. A search's donations arrive a few hundred at a time while
        it holds tens of thousands of paths (re-splitting, every slice): the result is written
        into spare room at the end of these paths' arrays where they are the newest paths made
        from them, so a slice costs the new paths, not all of them again (an earlier concat
        took 7 ms a slice for 16-queens' 36,000 paths)."""
        n, m = len(self), int(self.ptr[-1])
        k, d = len(more), int(more.ptr[-1])
        if m + d >= 2**31:
            raise OverflowError("sub-search space paths beyond 2^31 entries")
        room = self._room
        if room is None or room.n != n or room.m != m or len(room.ptr) < n + k + 1 or len(room.data) < m + d:
            # room for GROWTH times as many: each move copies every path held into memory the
            # process touches for the first time, at twice a large part of a long count's host
            # time on the H200 machine (docs/bench/measurements.md, "One call with the final
            # lines; the host's part of a slice"); room never written is never touched
            room = _Room(np.empty(GROWTH * (n + k) + 2, np.int32), np.empty(GROWTH * (m + d) + DEC, np.int32), n, m)
            room.ptr[: n + 1] = self.ptr
            room.data[:m] = self.data
        room.ptr[n + 1 : n + k + 1] = more.ptr[1:] + m
        room.data[m : m + d] = more.data
        room.n, room.m = n + k, m + d
        return Paths(room.ptr[: n + k + 1], room.data[: m + d], room)

    def prefix(self, k: int) -> Paths:
        """Paths 0..k-1. Where these are the newest paths made in `extend`'s spare room, the
        prefix keeps that room, and the room's paths from k on are free for the next `extend`
        to write over: a phase whose block another device took part of extends its first
        paths at each slice with donations, and a copy of every path it held each time was most
        of a float count's host time on a GPU (docs/bench/measurements.md, "A count where the
        CPU pays"). So whoever keeps paths from the end of such a block (the
        balancer: what a device gives away, what its searches donated) keeps a `copy`."""
        n = len(self)
        if k >= n:
            return self
        room = self._room
        if room is None or room.n != n or room.m != int(self.ptr[-1]) or not np.shares_memory(self.ptr, room.ptr):
            return self.block(0, k)
        room.n, room.m = k, int(self.ptr[k])
        return Paths(room.ptr[: k + 1], room.data[: room.m], room)

    def copy(self) -> Paths:
        """These paths in arrays of their own (no view of another's, no spare room)."""
        return Paths(self.ptr.copy(), self.data.copy())

    @staticmethod
    def root() -> Paths:
        """The single empty path: the whole search space."""
        return Paths(np.zeros(2, np.int32), np.zeros(0, np.int32))

    @staticmethod
    def roots(n: int) -> Paths:
        """n empty paths: the whole search space, n times (restarts)."""
        return Paths(np.zeros(n + 1, np.int32), np.zeros(0, np.int32))

    @staticmethod
    def from_records(records: np.ndarray) -> Paths:
        """Paths from the kernel's emit records: row = [decisions, their DEC entries each, then
        anything (padding, the emitted path's source)]."""
        n = len(records)
        lens = DEC * records[:, 0].astype(np.int64) if n else np.zeros(0, np.int64)
        ptr = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=ptr[1:])
        total = int(ptr[-1])
        if total >= 2**31:
            raise OverflowError("sub-search space paths beyond 2^31 entries")
        # only the columns the longest record fills (a record's room is the phase's longest
        # path, most far shorter): masking the whole width took much of a GPU's host time a
        # slice; a gather by int64 indices took longer than the mask on the H200 machine's host
        width = int(lens.max()) if n else 0
        keep = np.arange(width)[None, :] < lens[:, None]
        return Paths(ptr.astype(np.int32), np.ascontiguousarray(records[:, 1 : 1 + width][keep], dtype=np.int32))

    def block(self, start: int, stop: int) -> Paths:
        """Paths start..stop-1 as a Paths of their own (offsets rebased)."""
        lo, hi = int(self.ptr[start]), int(self.ptr[stop])
        return Paths((self.ptr[start : stop + 1] - lo).astype(np.int32), self.data[lo:hi])

    def take(self, indices: np.ndarray) -> Paths:
        """The paths at `indices`, in that order (vectorised: no loop over paths)."""
        indices = np.asarray(indices, np.int64)
        starts = self.ptr[:-1].astype(np.int64)[indices]
        lens = np.diff(self.ptr).astype(np.int64)[indices]
        ptr = np.zeros(len(indices) + 1, np.int64)
        np.cumsum(lens, out=ptr[1:])
        gather = np.repeat(starts - ptr[:-1], lens) + np.arange(int(ptr[-1]), dtype=np.int64)
        return Paths(ptr.astype(np.int32), self.data[gather].astype(np.int32))

    @staticmethod
    def concat(parts: list[Paths]) -> Paths:
        ptrs, base = [np.zeros(1, np.int64)], 0
        for p in parts:
            ptrs.append(p.ptr[1:].astype(np.int64) + base)
            base += int(p.ptr[-1])
        return Paths(
            np.concatenate(ptrs).astype(np.int32),
            np.concatenate([p.data for p in parts]) if parts else np.zeros(0, np.int32),
        )

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def max_decisions(self) -> int:
        return int(np.diff(self.ptr).max()) // DEC if len(self) else 0

    @staticmethod
    def from_list(rows: list[np.ndarray]) -> Paths:
        lens = np.array([len(r) for r in rows], np.int64)
        ptr = np.zeros(len(rows) + 1, np.int64)
        np.cumsum(lens, out=ptr[1:])
        data = np.concatenate(rows).astype(np.int32) if rows else np.zeros(0, np.int32)
        return Paths(ptr.astype(np.int32), data)

    def path(self, i: int) -> np.ndarray:
        return self.data[self.ptr[i] : self.ptr[i + 1]]

    def without(self, sources: np.ndarray, given: Paths) -> Paths:
        """Paths covering exactly what these cover less the donated paths `given` (given[j] was
        split off the search of path sources[j]: its decisions extend that path's, and its last
        one negates a decision that search took, or, handed over, leads to the node the search was
        at). For a failed device: what it kept is searched again, but not what it gave away.
        Along each donated path, the branch not taken at every decision stays; the donated path
        itself goes (a path handed over at its root goes whole)."""
        by_source: dict[int, list[int]] = {}
        for j, s in enumerate(np.asarray(sources).tolist()):
            by_source.setdefault(s, []).append(j)
        out: list[np.ndarray] = []
        for i in range(len(self)):
            root = self.path(i)
            if i not in by_source:
                out.append(root)
                continue
            trie: dict = {}
            for j in by_source[i]:
                d = given.path(j)
                if len(d) < len(root) or not np.array_equal(d[: len(root)], root):
                    raise ValueError(f"donated path {j} does not extend path {i}")
                if len(d) == len(root):  # handed over at its root: nothing of it stays
                    trie = {None: True}
                    break
                node = trie
                for decision in map(tuple, d[len(root) :].reshape(-1, DEC).tolist()):
                    node = node.setdefault(decision, {})
                node[None] = True  # given away whole
            _complement(root.reshape(-1, DEC).tolist(), trie, out)
        return Paths.from_list(out)


def _complement(prefix: list, node: dict, out: list[np.ndarray]) -> None:
    if node.get(None):
        if len(node) > 1:
            raise ValueError("a donated path has donations below it from the same search")
        return
    edges = list(node)
    if len(edges) == 2:
        (v1, op1, x1, h1), (v2, op2, x2, h2) = edges
        if (v1, x1, h1) != (v2, x2, h2) or not complementary(op1, op2):
            raise ValueError("donated paths branch on different decisions at one node")
    elif len(edges) == 1:
        v, op, x, h = edges[0]
        out.append(np.array(prefix + [[v, op ^ 1, x, h]], np.int32).ravel())
    for edge in edges:
        _complement(prefix + [list(edge)], node[edge], out)
