"""An LNS step's paths, built on the device from one row of values (or a row a path) and a keep
mask (kernels/lns_paths.cl) instead of in numpy on the host and uploaded decision by decision.

A GPU island's step of thousands of neighbourhoods spent longer building and uploading its
decisions than its kernel ran (docs/BENCHMARKS.md, LNS on every device); the mask is a byte a
position, the values one row. A CPU island's step holds a few dozen paths, cheaper to build on
the host than a launch of their own (PoCL), so the island asks for device paths only past
DEVICE_MIN decisions (`FZN_GPU_DEVICE_PATHS`: 1 always, 0 never, for tests and comparisons)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..kernel_abi import DEC, Op
from .paths import Paths

# decisions from which a step's paths are built on the device (fewer: a fraction of a
# millisecond of numpy, less than a launch)
DEVICE_MIN = 20_000


def on_device(decisions: int) -> bool:
    """Whether paths of this many decisions in all are built on the device."""
    forced = os.environ.get("FZN_GPU_DEVICE_PATHS", "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    return decisions >= DEVICE_MIN


@dataclass
class DevicePaths:
    """Path r: fd[j] = values[j] (values[r, j] where values has a row a path) for every j with
    keep[r, j] (every j without a mask), in fd's order. What the search kernel reads is made on
    the device by `to_device`; `to_host` builds the same Paths in numpy."""

    fd: np.ndarray  # int32 (nfd,): the variables
    values: np.ndarray  # int32 (nfd,) for every path, or (n, nfd)
    keep: np.ndarray | None  # bool (n, nfd), or None: every position
    ptr: np.ndarray  # int32 (n + 1,): path r's decisions at data[ptr[r]:ptr[r + 1]]

    @staticmethod
    def make(fd: np.ndarray, values: np.ndarray, keep: np.ndarray | None, n: int) -> DevicePaths:
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
        )

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def max_decisions(self) -> int:
        return int(np.diff(self.ptr).max(initial=0)) // DEC

    def to_host(self) -> Paths:
        """The same paths built here (the reference the device's are tested against)."""
        n, nfd = len(self), len(self.fd)
        decisions = np.zeros((int(self.ptr[-1]) // DEC, DEC), np.int32)
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
        into `data_buffer(nbytes)` (a buffer of at least that size) by kernels/lns_paths.cl,
        enqueued on `queue` ahead of the search."""
        n = len(self)
        ptr = put("paths_ptr", self.ptr)
        data = data_buffer(4 * max(int(self.ptr[-1]), 1))
        if n == 0 or len(self.fd) == 0:
            return ptr, data
        keep = self.keep if self.keep is not None else np.zeros(1, np.uint8)
        kernel.set_args(
            put("paths_fd", self.fd),
            np.int32(len(self.fd)),
            put("paths_values", self.values),
            np.int32(1 if self.values.ndim == 2 else 0),
            put("paths_keep", keep),
            np.int32(0 if self.keep is None else 1),
            ptr,
            np.int32(n),
            data,
        )
        cl.enqueue_nd_range_kernel(queue, kernel, (n,), None)
        return ptr, data
