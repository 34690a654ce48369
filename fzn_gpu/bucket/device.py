"""Bucket elimination's join-and-minimise step on an OpenCL device (kernels/bucket.cl): a
bucket's tables go to the device in one buffer, one work-item computes each entry of the
result, and the result comes back for the next bucket and for the backward pass. The same
table as eliminate.join_min's (tests compare them)."""

from __future__ import annotations

import threading

import numpy as np

from ..resources import kernels_dir
from .network import Factor

MAX_VARS = 64            # kernels/bucket.cl's digits: a bucket of at most this many variables

_PROGRAMS: dict[tuple, object] = {}
_LOCK = threading.Lock()


def _program(ctx, dtype: np.dtype, inf: int):
    import pyopencl as cl
    key = (ctx.int_ptr, dtype.str, inf)
    with _LOCK:
        if key not in _PROGRAMS:
            cost = "int" if dtype == np.int32 else "long"
            options = [f"-DCOST={cost}", f"-DINF={inf}{'' if cost == 'int' else 'L'}"]
            prog = cl.Program(ctx, (kernels_dir() / "bucket.cl").read_text()).build(options=options)
            _PROGRAMS[key] = cl.Kernel(prog, "bucket_join_min")
        return _PROGRAMS[key]


class DeviceJoiner:
    """eliminate.Joiner on one OpenCL device: call it as join_min is called."""

    def __init__(self, ctx, queue) -> None:
        self.ctx = ctx
        self.queue = queue
        self.launches = 0

    def __call__(self, factors: list[Factor], var: int, scope: tuple[int, ...], domains: dict[int, np.ndarray],
                 inf: int, stop=None) -> Factor:
        import pyopencl as cl
        m = len(scope) - 1
        if m + 1 > MAX_VARS:
            raise ValueError(f"a bucket of {m + 1} variables (kernels/bucket.cl holds {MAX_VARS})")
        dtype = factors[0].table.dtype
        dims = np.array([len(domains[v]) for v in scope], dtype=np.int32)
        flat, base, stride = [], [], []
        at = 0
        for f in factors:
            table = np.ascontiguousarray(f.table, dtype=dtype)
            steps = np.zeros(m + 1, dtype=np.int64)
            if f.scope:
                own = np.array(table.strides, dtype=np.int64) // table.itemsize
                for axis, v in enumerate(f.scope):
                    steps[scope.index(v)] = own[axis]
            flat.append(table.reshape(-1))
            base.append(at)
            stride.append(steps)
            at += table.size
        tables = np.concatenate(flat)
        n_out = int(np.prod(dims[1:], dtype=np.int64)) if m else 1
        out = np.empty(n_out, dtype=dtype)
        mf = cl.mem_flags
        ro = mf.READ_ONLY | mf.COPY_HOST_PTR
        bufs = [cl.Buffer(self.ctx, ro, hostbuf=a) for a in
                (tables, np.array(base, dtype=np.int64), np.concatenate(stride), dims)]
        out_buf = cl.Buffer(self.ctx, mf.WRITE_ONLY, size=max(out.nbytes, 4))
        kernel = _program(self.ctx, np.dtype(dtype), inf)
        with _LOCK:          # one kernel object: its arguments are set, then it is launched
            kernel.set_args(*bufs, np.int32(len(factors)), np.int32(m), np.int64(n_out), out_buf)
            cl.enqueue_nd_range_kernel(self.queue, kernel, (n_out,), None)
        cl.enqueue_copy(self.queue, out, out_buf)
        self.launches += 1
        return Factor(tuple(scope[1:]), out.reshape(tuple(int(d) for d in dims[1:])))
