"""What a kernel launch costs the host on each OpenCL device, through pyopencl: an empty kernel
launched and waited for, with a 256 B read back, a buffer made from 64 KB of host memory, and
a kernel of 60 arguments (pyopencl sets every argument at every launch), each 300 times.
Usage: python3 scripts/launch_cost.py (docs/bench/measurements.md, LNS on every device)."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pyopencl as cl

SRC = (
    "__kernel void empty(__global int *a) { if (get_global_id(0) == 0) a[0] += 1; }\n"
    "__kernel void many("
    + ", ".join(f"__global int *a{i}" for i in range(40))
    + ", "
    + ", ".join(f"int s{i}" for i in range(20))
    + ") { if (get_global_id(0) == 0) a0[0] += s0; }\n"
)


def microseconds(queue: cl.CommandQueue, f: Callable[[], object], n: int = 300) -> float:
    f()
    queue.finish()
    t0 = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t0) / n * 1e6


def costs(dev: cl.Device) -> dict[str, float]:
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SRC).build()
    empty, many = cl.Kernel(prg, "empty"), cl.Kernel(prg, "many")
    mf = cl.mem_flags
    host = np.zeros(64, np.int32)
    a = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)
    big = np.zeros(16384, np.int32)
    wide = (4224 * 32,), (32,)
    return {
        "launch + finish": microseconds(q, lambda: (empty(q, *wide, a), q.finish())),
        "launch + read 256 B + finish": microseconds(
            q, lambda: (empty(q, *wide, a), cl.enqueue_copy(q, host, a), q.finish())
        ),
        "buffer from 64 KB": microseconds(q, lambda: cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=big)),
        "60 arguments + launch + finish": microseconds(
            q, lambda: (many(q, (32,), (32,), *([a] * 40), *([np.int32(1)] * 20)), q.finish())
        ),
    }


if __name__ == "__main__":
    for platform in cl.get_platforms():
        for device in platform.get_devices():
            print(device.name, {k: f"{v:.0f} us" for k, v in costs(device).items()})
