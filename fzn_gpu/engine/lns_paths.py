"""An LNS step's paths, built on the device from one row of values (or a row a path) and a keep
mask (kernels/lns_paths.cl) instead of in numpy on the host and uploaded decision by decision.
A step's neighbourhoods need not be sent either: the kernel draws each one's released
positions itself from the step's seed (`Draw`), at random or grown through the constraint
graph, where the host's draws (an argsort of random keys, or lns_graph's growth, and the mask
built from them) took longer than the paths had.

A GPU island's step of thousands of neighbourhoods spent longer building and uploading its
decisions than its kernel ran (docs/bench/measurements.md, LNS on every device); the mask is a byte a
position, the values one row. A CPU island's step holds a few dozen paths, cheaper to build on
the host than a launch of their own (PoCL), so the island asks for device paths only past
DEVICE_MIN decisions (`FZN_GPU_DEVICE_PATHS`: 1 always, 0 never, for tests and comparisons)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .. import settings
from ..runtime.kernel_abi import DEC, Op
from ..runtime.kernel_launch import enqueue
from .lns_graph import GROW_TRIES
from .paths import Paths

# decisions from which a step's paths are built on the device (fewer: a fraction of a
# millisecond of numpy, less than a launch)
DEVICE_MIN = 20_000


def on_device(decisions: int) -> bool:
    """Whether paths of this many decisions in all are built on the device."""
    forced = settings.choice("FZN_GPU_DEVICE_PATHS", "")
    if forced:
        return forced == "1"
    return decisions >= DEVICE_MIN


@dataclass(frozen=True, eq=False)
class Draw:
    """Each neighbourhood releases `release` positions drawn on the device from `seed` and its
    row, uniformly, or grown through `graph` (lns_graph.RelatedVariables' CSR arrays, ptr and
    adj over fd's positions, int32) as RelatedVariables.grow grows them; `repeat` consecutive paths (a
    neighbourhood's starts) share a row."""

    release: int
    seed: int
    repeat: int = 1
    graph: tuple[np.ndarray, np.ndarray] | None = None

    def mask(self, n: int, nfd: int) -> np.ndarray:
        """The keep masks (n, nfd) the device draws, drawn here the same way (lns_release_draw
        and lns_release_grow in kernels/lns_paths.cl, lowbias32 in 32-bit arithmetic)."""
        if self.graph is not None:
            return self._grown_mask(n, nfd)
        keep = np.ones((n, nfd), dtype=bool)
        rows = np.arange(n)
        state = _hash(np.uint32(self.seed) ^ _hash((rows // self.repeat).astype(np.uint32)))
        for j in range(nfd - self.release, nfd):
            state = _hash(state + np.uint32(0x9E3779B9))
            t = ((state.astype(np.uint64) * np.uint64(j + 1)) >> np.uint64(32)).astype(np.int64)
            free = keep[rows, t]
            keep[rows[free], t[free]] = False
            keep[rows[~free], j] = False
        return keep

    def _grown_mask(self, n: int, nfd: int) -> np.ndarray:
        """lns_release_grow, a row at a time (the reference the device is tested against)."""
        assert self.graph is not None
        gptr, gadj = (a.tolist() for a in self.graph)
        keep = np.ones((n, nfd), dtype=bool)
        for r in range(n):
            state = int(_hash(np.uint32(self.seed) ^ _hash(np.uint32(r // self.repeat))))

            def below(m: int) -> int:
                nonlocal state
                state = int(_hash(np.uint32((state + 0x9E3779B9) & 0xFFFFFFFF)))
                return (state * m) >> 32

            row = keep[r]
            members = [below(nfd)]
            row[members[0]] = False
            for j in range(1, self.release):
                pick = -1
                for _ in range(GROW_TRIES):
                    m = members[below(j)]
                    deg = gptr[m + 1] - gptr[m]
                    c = below(max(deg, 1))
                    if deg > 0 and row[gadj[gptr[m] + c]]:
                        pick = gadj[gptr[m] + c]
                        break
                if pick < 0:
                    seen = 0
                    for m in members:
                        for e in range(gptr[m], gptr[m + 1]):
                            if row[gadj[e]]:
                                seen += 1
                                if below(seen) == 0:
                                    pick = gadj[e]
                if pick < 0:
                    pick = int(np.flatnonzero(row)[below(nfd - j)])
                members.append(pick)
                row[pick] = False
        return keep


def _hash(value: npt.ArrayLike) -> np.ndarray:
    """lowbias32 on uint32 arrays (kernels/lns_paths.cl's lns_hash)."""
    x: np.ndarray = np.asarray(value, dtype=np.uint32)
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint32(16))
        x = x * np.uint32(0x7FEB352D)
        x = x ^ (x >> np.uint32(15))
        x = x * np.uint32(0x846CA68B)
        return x ^ (x >> np.uint32(16))


@dataclass
class DevicePaths:
    """Path r: fd[j] = values[j] (values[r, j] where values has a row a path) for every j with
    keep[r, j] (every j without a mask, or the positions `draw` keeps), in fd's order. What the
    search kernel reads is made on the device by `to_device`; `to_host` builds the same Paths
    in numpy."""

    fd: np.ndarray  # int32 (nfd,): the variables
    values: np.ndarray  # int32 (nfd,) for every path, or (n, nfd)
    keep: np.ndarray | None  # bool (n, nfd), or None: every position (or the draw's)
    ptr: np.ndarray  # int32 (n + 1,): path r's decisions at data[ptr[r]:ptr[r + 1]]
    draw: Draw | None = None  # released positions drawn on the device (keep is None)

    @staticmethod
    def make(
        fd: np.ndarray, values: np.ndarray, keep: np.ndarray | None, n: int, draw: Draw | None = None
    ) -> DevicePaths:
        if draw is not None:
            if keep is not None or not 0 < draw.release <= len(fd):
                raise ValueError("a drawn release takes no mask and 1..len(fd) positions")
            counts = np.full(n, len(fd) - draw.release, np.int64)
        else:
            counts = np.full(n, len(fd), np.int64) if keep is None else keep.sum(axis=1, dtype=np.int64)
        ptr = np.zeros(n + 1, np.int64)
        np.cumsum(DEC * counts, out=ptr[1:])
        if ptr[-1] >= 2**31:
            raise OverflowError("LNS paths beyond 2^31 entries")
        return DevicePaths(
            np.ascontiguousarray(fd, np.int32),
            np.ascontiguousarray(values, np.int32),
            None if keep is None else np.ascontiguousarray(keep, np.uint8),
            ptr.astype(np.int32),
            draw,
        )

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def max_decisions(self) -> int:
        return int(np.diff(self.ptr).max(initial=0)) // DEC

    def to_host(self) -> Paths:
        """The same paths built here (the reference the device's are tested against)."""
        n, nfd = len(self), len(self.fd)
        decisions = np.zeros((int(self.ptr[-1]) // DEC, DEC), np.int32)
        if self.draw is not None:
            return DevicePaths(self.fd, self.values, self.draw.mask(n, nfd), self.ptr).to_host()
        if self.keep is None:  # whole columns: far quicker than masks for big models
            decisions[:, 0] = np.tile(self.fd, n)
            decisions[:, 2] = np.broadcast_to(self.values, (n, nfd)).ravel()
        else:
            keep = self.keep.view(bool)
            decisions[:, 0] = np.broadcast_to(self.fd, (n, nfd))[keep]
            decisions[:, 2] = np.broadcast_to(self.values, (n, nfd))[keep]
        decisions[:, 1] = Op.EQ
        return Paths(self.ptr.copy(), decisions.ravel())

    def block(self, start: int, stop: int) -> Paths:
        return self.to_host().block(start, stop)

    def to_device(self, cl, queue, kernel, put, data_buffer) -> tuple:
        """(ptr buffer, data buffer) as the search kernel reads them: the inputs go to the
        device by `put(name, array)` (a buffer holding a copy of the array), the data is written
        into `data_buffer(nbytes, name)` (a buffer of at least that size, kept under that name)
        by kernels/lns_paths.cl, enqueued on `queue` ahead of the search; so is a drawn release's
        mask."""
        n = len(self)
        ptr = put("paths_ptr", self.ptr)
        data = data_buffer(4 * max(int(self.ptr[-1]), 1), "paths")
        if n == 0 or len(self.fd) == 0:
            return ptr, data
        draw = self.draw
        if draw is not None:  # the kernel writes each path's mask into the buffer, then reads it
            keep = data_buffer(n * len(self.fd), "paths_drawn")
        else:
            keep = put("paths_keep", self.keep if self.keep is not None else np.zeros(1, np.uint8))
        graph = draw.graph if draw is not None else None
        if graph is not None:
            adj = graph[1] if len(graph[1]) else np.zeros(1, np.int32)  # no relatives at all
            gptr, gadj = put("paths_gptr", graph[0]), put("paths_gadj", adj)
            members = data_buffer(4 * n * draw.release, "paths_members")  # type: ignore[union-attr]
        else:
            gptr = gadj = members = ptr  # not read
        kernel.set_args(
            put("paths_fd", self.fd),
            np.int32(len(self.fd)),
            put("paths_values", self.values),
            np.int32(1 if self.values.ndim == 2 else 0),
            keep,
            np.int32(0 if self.keep is None and draw is None else 1),
            np.int32(draw.release if draw else 0),
            np.uint32(draw.seed if draw else 0),
            np.int32(draw.repeat if draw else 1),
            gptr,
            gadj,
            np.int32(GROW_TRIES if graph is not None else 0),
            members,
            ptr,
            np.int32(n),
            data,
        )
        enqueue(cl, queue, kernel, (n,), None)
        return ptr, data
