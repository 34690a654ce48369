"""PDHG's iterations on an OpenCL device (kernels/pdhg.cl): the matrix stays on the device by
columns and by rows, and a restart period's iterations are pairs of launches with nothing read
back until the period ends (pdhg.solve_dual keeps the restarts, step sizes and bounds)."""

from __future__ import annotations

import numpy as np

from ..resources import kernels_dir

WORK_GROUP = 64


def has_fp64(device) -> bool:
    return device.cl_device is not None and "cl_khr_fp64" in device.cl_device.extensions


class OpenCLSteps:
    """The same iterations as pdhg.NumpySteps, on `device` (a fzn_gpu.runtime.device.Device)."""

    def __init__(self, device, rows, cols, A, m, n, cs, bs, lbs, ubs, le):
        import pyopencl as cl

        self.cl, self.m, self.n = cl, m, n
        self.ctx = cl.Context([device.cl_device])  # a context of its own: no search program needed
        self.queue = cl.CommandQueue(self.ctx)
        self.program = cl.Program(self.ctx, (kernels_dir() / "pdhg.cl").read_text()).build()
        by_col = np.lexsort((rows, cols))
        by_row = np.lexsort((cols, rows))
        cptr = np.searchsorted(cols[by_col], np.arange(n + 1)).astype(np.int32)
        rptr = np.searchsorted(rows[by_row], np.arange(m + 1)).astype(np.int32)
        mf = cl.mem_flags

        self.keep: list = []  # every buffer the kernels hold (a kernel argument keeps no reference)

        def buf(a, flags=mf.READ_ONLY):
            a = np.ascontiguousarray(a)
            b = cl.Buffer(self.ctx, flags | mf.COPY_HOST_PTR, hostbuf=a if a.size else np.zeros(1, a.dtype))
            self.keep.append(b)
            return b

        rw = mf.READ_WRITE
        self.x = buf(np.clip(np.zeros(n), lbs, ubs), rw)
        self.xbar = buf(np.zeros(n), rw)
        self.y = buf(np.zeros(m), rw)
        self.x_sum = buf(np.zeros(n), rw)
        self.y_sum = buf(np.zeros(m), rw)
        self.zeros_n, self.zeros_m = np.zeros(n), np.zeros(m)
        self.primal = self.program.pdhg_primal
        self.primal.set_args(
            np.int32(n),
            buf(cptr),
            buf(rows[by_col].astype(np.int32)),
            buf(A[by_col]),
            buf(cs),
            buf(lbs),
            buf(ubs),
            self.y,
            self.x,
            self.xbar,
            self.x_sum,
            np.float64(0.0),
        )
        self.dual = self.program.pdhg_dual
        self.dual.set_args(
            np.int32(m),
            buf(rptr),
            buf(cols[by_row].astype(np.int32)),
            buf(A[by_row]),
            buf(bs),
            buf(le.astype(np.uint8)),
            self.xbar,
            self.y,
            self.y_sum,
            np.float64(0.0),
        )

    def _size(self, k: int) -> tuple[int]:
        return (max(WORK_GROUP, -(-k // WORK_GROUP) * WORK_GROUP),)

    def run(self, count: int, tau: float, sigma: float) -> None:
        self.primal.set_arg(11, np.float64(tau))
        self.dual.set_arg(9, np.float64(sigma))
        for _ in range(count):
            self.cl.enqueue_nd_range_kernel(self.queue, self.primal, self._size(self.n), (WORK_GROUP,))
            self.cl.enqueue_nd_range_kernel(self.queue, self.dual, self._size(self.m), (WORK_GROUP,))

    def _read(self, b, k: int) -> np.ndarray:
        out = np.empty(k)
        self.cl.enqueue_copy(self.queue, out, b)
        return out

    def state(self, count: int):
        x, y = self._read(self.x, self.n), self._read(self.y, self.m)
        xs, ys = self._read(self.x_sum, self.n), self._read(self.y_sum, self.m)
        self.cl.enqueue_copy(self.queue, self.x_sum, self.zeros_n)
        self.cl.enqueue_copy(self.queue, self.y_sum, self.zeros_m)
        return x, y, xs / count, ys / count

    def restart(self, x, y) -> None:
        self.cl.enqueue_copy(self.queue, self.x, np.ascontiguousarray(x))
        self.cl.enqueue_copy(self.queue, self.y, np.ascontiguousarray(y))
