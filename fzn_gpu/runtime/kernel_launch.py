"""Kernel launches with Python's interpreter lock released.

pyopencl calls clEnqueueNDRangeKernel holding the lock, and NVIDIA's driver may wait inside
that call: a launch on one queue waited there for a slice another queue of the same context
was running (the portfolio on a GPU alone: branch and bound's launch behind LNS's slice), and
every thread of the run, the watchdog's among them, stood still meanwhile (docs/bench/measurements.md,
Time limits and the interpreter's lock). ctypes releases the lock around a foreign call, so
the same entry point, called through the ICD loader pyopencl uses, blocks only its own thread.
"""

from __future__ import annotations

import ctypes
import gc
from functools import cache

from .opencl_start import loader_path

# the codes after which pyopencl collects garbage and tries once more (buffers the collector
# frees may be what the launch was short of)
_OUT_OF_MEMORY = (-4, -5, -6)  # CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY


@cache
def _native():
    """clEnqueueNDRangeKernel of pyopencl's ICD loader, typed; None where it cannot be loaded
    (then launches go through pyopencl)."""
    path = loader_path()
    try:
        fn = ctypes.CDLL(path).clEnqueueNDRangeKernel if path else None
    except (OSError, AttributeError):
        return None
    if fn is None:
        return None
    size_p = ctypes.POINTER(ctypes.c_size_t)
    fn.restype = ctypes.c_int32
    # queue, kernel, work_dim, global offset, global size, local size, waits, wait list, event
    fn.argtypes = [
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_void_p,
        size_p,
        size_p,
        ctypes.c_uint32,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    return fn


def enqueue(cl, queue, kernel, global_size: tuple, local_size: tuple | None) -> None:
    """Queue `kernel` over `global_size` in work-groups of `local_size` (None: the driver's
    choice), the lock released; no event is made (callers wait on the queue). A failure
    raises cl.Error, as pyopencl's launch does."""
    fn = _native()
    if fn is None:
        cl.enqueue_nd_range_kernel(queue, kernel, global_size, local_size)
        return
    dims = len(global_size)
    sizes = (ctypes.c_size_t * dims)(*(int(n) for n in global_size))
    groups = (ctypes.c_size_t * dims)(*(int(n) for n in local_size)) if local_size is not None else None
    code = fn(queue.int_ptr, kernel.int_ptr, dims, None, sizes, groups, 0, None, None)
    if code in _OUT_OF_MEMORY:
        gc.collect()
        code = fn(queue.int_ptr, kernel.int_ptr, dims, None, sizes, groups, 0, None, None)
    if code:
        raise cl.RuntimeError(f"clEnqueueNDRangeKernel failed: {cl.status_code.to_string(code)}")
