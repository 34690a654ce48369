"""Bucket elimination's join-and-minimise step on an OpenCL device (kernels/bucket.cl).

A big bucket is joined on the device, one work-item per entry of the result, and its result
stays there (`DeviceTable`): the next bucket that takes it copies it into its own input on the
device, and the backward pass reads back only the few entries it looks at (`DeviceTable`'s
indexing, a gather kernel): sending each result to the host and back had been most of the
GPU's time, the kernels themselves a small part of it (docs/bench/measurements.md). A small bucket is
joined by numpy on the host (`eliminate.join_min`), since a launch and its transfers cost more
than its work. Both give the same table (tests compare them)."""

from __future__ import annotations

import threading
from typing import cast

import numpy as np

from ..resources import kernels_dir
from ..runtime.kernel_launch import enqueue
from .network import Factor

MAX_VARS = 64  # kernels/bucket.cl's digits: a bucket of at most this many variables
DEVICE_MIN = 1 << 20  # joined entries from which a bucket goes to the device

_PROGRAMS: dict[tuple, object] = {}
_LOCK = threading.Lock()


def _program(ctx, dtype: np.dtype, inf: int):
    """(join kernel, gather kernel) for tables of `dtype` with that INF, built once a context."""
    import pyopencl as cl

    key = (ctx.int_ptr, dtype.str, inf)
    with _LOCK:
        if key not in _PROGRAMS:
            cost = "int" if dtype == np.int32 else "long"
            options = [f"-DCOST={cost}", f"-DINF={inf}{'' if cost == 'int' else 'L'}"]
            prog = cl.Program(ctx, (kernels_dir() / "bucket.cl").read_text()).build(options=options)
            _PROGRAMS[key] = (cl.Kernel(prog, "bucket_join_min"), cl.Kernel(prog, "bucket_gather"))
        return _PROGRAMS[key]


class DeviceTable:
    """A bucket's result kept in device memory: row-major over `shape`, of `dtype`. numpy's
    indexing for what the backward pass asks (integers, and at most one full slice), and
    `to_host` for the whole table."""

    def __init__(self, joiner: DeviceJoiner, buf, shape: tuple[int, ...], dtype: np.dtype, inf: int):
        self.joiner = joiner
        self.inf = inf
        self.buf = buf
        self.shape = shape
        self.dtype = np.dtype(dtype)
        self.size = int(np.prod(shape, dtype=np.int64))
        self.ndim = len(shape)

    def to_host(self) -> np.ndarray:
        import pyopencl as cl

        out = np.empty(self.shape, dtype=self.dtype)
        cl.enqueue_copy(self.joiner.queue, out, self.buf)
        return out

    def __getitem__(self, index: tuple) -> np.ndarray:
        if not isinstance(index, tuple):
            index = (index,)
        if len(index) != self.ndim:
            raise IndexError(f"a DeviceTable of {self.ndim} axes indexed by {len(index)}")
        strides = np.cumprod((1,) + self.shape[:0:-1], dtype=np.int64)[::-1]
        at = np.zeros(1, dtype=np.int64)
        for axis, i in enumerate(index):
            if isinstance(i, slice):
                if i != slice(None):
                    raise IndexError("a DeviceTable takes only whole slices")
                at = (at[:, None] + np.arange(self.shape[axis], dtype=np.int64)[None, :] * strides[axis]).reshape(-1)
            else:
                at = at + int(i) * strides[axis]
        values = self.joiner.gather(self, at)
        n_slices = sum(isinstance(i, slice) for i in index)
        return values if n_slices else values.reshape(())


class DeviceJoiner:
    """eliminate.Joiner on one OpenCL device: call it as join_min is called. Buckets of at
    least `device_min` joined entries run on the device and return a DeviceTable; smaller ones
    run with numpy (their device inputs read back first)."""

    def __init__(self, ctx, queue, device_min: int = DEVICE_MIN) -> None:
        self.ctx = ctx
        self.queue = queue
        self.device_min = device_min
        self.max_alloc = int(ctx.devices[0].max_mem_alloc_size)
        self.launches = 0

    def __call__(
        self,
        factors: list[Factor],
        var: int,
        scope: tuple[int, ...],
        domains: dict[int, np.ndarray],
        inf: int,
        stop=None,
    ) -> Factor:
        from .eliminate import join_min

        dims = np.array([len(domains[v]) for v in scope], dtype=np.int64)
        inputs = sum(int(np.prod(f.table.shape, dtype=np.int64)) for f in factors) * factors[0].table.dtype.itemsize
        if int(np.prod(dims)) < self.device_min or len(scope) > MAX_VARS or inputs > self.max_alloc:
            host = [Factor(f.scope, f.table.to_host()) if isinstance(f.table, DeviceTable) else f for f in factors]
            return join_min(host, var, scope, domains, inf, stop=stop)
        return self._join(factors, scope, dims.astype(np.int32), inf)

    def _join(self, factors: list[Factor], scope: tuple[int, ...], dims: np.ndarray, inf: int) -> Factor:
        import pyopencl as cl

        m = len(scope) - 1
        dtype = np.dtype(factors[0].table.dtype)
        base, stride = [], []
        at = 0
        for f in factors:
            steps = np.zeros(m + 1, dtype=np.int64)
            shape = f.table.shape
            own = np.cumprod((1,) + tuple(shape[:0:-1]), dtype=np.int64)[::-1] if shape else ()
            for axis, v in enumerate(f.scope):
                steps[scope.index(v)] = own[axis]
            base.append(at)
            stride.append(steps)
            at += int(np.prod(shape, dtype=np.int64))
        mf = cl.mem_flags
        tables = cl.Buffer(self.ctx, mf.READ_ONLY, size=max(at, 1) * dtype.itemsize)
        for f, start in zip(factors, base):
            if isinstance(f.table, DeviceTable):
                if f.table.size:
                    cl.enqueue_copy(
                        self.queue,
                        tables,
                        f.table.buf,
                        dst_offset=start * dtype.itemsize,
                        byte_count=f.table.size * dtype.itemsize,
                    )
            else:
                host = np.ascontiguousarray(f.table, dtype=dtype)
                cl.enqueue_copy(self.queue, tables, host, dst_offset=start * dtype.itemsize)
        ro = mf.READ_ONLY | mf.COPY_HOST_PTR
        meta = [
            cl.Buffer(self.ctx, ro, hostbuf=a) for a in (np.array(base, dtype=np.int64), np.concatenate(stride), dims)
        ]
        n_out = int(np.prod(dims[1:], dtype=np.int64)) if m else 1
        out = cl.Buffer(self.ctx, mf.READ_WRITE, size=max(n_out, 1) * dtype.itemsize)
        join, _ = _program(self.ctx, dtype, inf)
        with _LOCK:  # one kernel object: its arguments are set, then it is launched
            join.set_args(tables, *meta, np.int32(len(factors)), np.int32(m), np.int64(n_out), out)
            enqueue(cl, self.queue, join, (n_out,), None)
        # waited for here, without the interpreter's lock: `tables` and `meta` go at the return,
        # and the inputs' device tables once the caller drops them, and pyopencl frees a buffer
        # holding that lock while NVIDIA's driver waits for the device's kernels, which would
        # stop every thread of the run, the watchdog's too (docs/ARCHITECTURE.md, the watchdog)
        self.queue.finish()
        self.launches += 1
        table = DeviceTable(self, out, tuple(int(d) for d in dims[1:]), dtype, inf)
        # a table kept on the device stands in for its array: only this device's joins read it
        return Factor(tuple(scope[1:]), table.to_host() if m == 0 else cast(np.ndarray, table))

    def gather(self, table: DeviceTable, at: np.ndarray) -> np.ndarray:
        """table's entries at the flat positions `at`."""
        import pyopencl as cl

        out = np.empty(len(at), dtype=table.dtype)
        if len(at) == 0:
            return out
        mf = cl.mem_flags
        idx = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(at, dtype=np.int64))
        res = cl.Buffer(self.ctx, mf.WRITE_ONLY, size=out.nbytes)
        _, gather = _program(self.ctx, table.dtype, table.inf)
        with _LOCK:
            gather.set_args(table.buf, idx, np.int64(len(at)), res)
            enqueue(cl, self.queue, gather, (len(at),), None)
        cl.enqueue_copy(self.queue, out, res)
        return out
