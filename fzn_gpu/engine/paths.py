"""Sub-search spaces as decision paths, held in CSR form (one offsets array, one data array)
so that millions of them cost a few numpy operations on the host, never a Python loop."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Paths:
    """Path i is data[ptr[i]:ptr[i + 1]]: (variable, op, value) triples from the root."""
    ptr: np.ndarray      # int32, one more entry than there are paths
    data: np.ndarray     # int32

    @staticmethod
    def root() -> "Paths":
        """The single empty path: the whole search space."""
        return Paths(np.zeros(2, np.int32), np.zeros(0, np.int32))

    @staticmethod
    def from_records(records: np.ndarray) -> "Paths":
        """Paths from the kernel's emit records: row = [decisions, triples..., padding]."""
        n = len(records)
        lens = 3 * records[:, 0].astype(np.int64) if n else np.zeros(0, np.int64)
        ptr = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=ptr[1:])
        if ptr[-1] >= 2 ** 31:
            raise OverflowError("sub-search space paths beyond 2^31 entries")
        body = records[:, 1:]
        keep = np.arange(body.shape[1])[None, :] < lens[:, None]
        return Paths(ptr.astype(np.int32), np.ascontiguousarray(body[keep], dtype=np.int32))

    def block(self, start: int, stop: int) -> "Paths":
        """Paths start..stop-1 as a Paths of their own (offsets rebased)."""
        lo, hi = int(self.ptr[start]), int(self.ptr[stop])
        return Paths((self.ptr[start:stop + 1] - lo).astype(np.int32), self.data[lo:hi])

    @staticmethod
    def concat(parts: list["Paths"]) -> "Paths":
        ptrs, base = [np.zeros(1, np.int64)], 0
        for p in parts:
            ptrs.append(p.ptr[1:].astype(np.int64) + base)
            base += int(p.ptr[-1])
        return Paths(np.concatenate(ptrs).astype(np.int32),
                     np.concatenate([p.data for p in parts]) if parts else np.zeros(0, np.int32))

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def max_decisions(self) -> int:
        return int(np.diff(self.ptr).max()) // 3 if len(self) else 0
