"""Which OpenCL calls made during a running kernel stop every Python thread, device by device.

A kernel of about 1.5 s runs on a queue of the first device of each platform while one call
is made; a thread that sleeps 20 ms at a time reports how long it went without running (the
interpreter's lock held through the call). The calls: pyopencl's launch and a ctypes launch
(kernel_launch.enqueue) each followed by a blocking read; a non-blocking copy whose event is
dropped at once, on the kernel's queue and on another; a buffer made from host memory; a
set_arg; a launch and a blocking read on another queue. What this found on the H100 machine
and here: docs/bench/measurements.md, Time limits and the interpreter's lock.

Usage: python3 scripts/interpreter_stalls.py
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pyopencl as cl

from fzn_gpu.runtime.kernel_launch import enqueue

SOURCE = """__kernel void spin(__global long *a, long n) {
    long s = get_global_id(0);
    for (long i = 0; i < n; i++) s = s * 6364136223846793005L + i;
    a[get_global_id(0)] = s;
}"""
ITEMS = 64
gaps: list[float] = []


def ticker() -> None:
    last = time.monotonic()
    while True:
        time.sleep(0.02)
        now = time.monotonic()
        if now - last > 0.3:
            gaps.append(round(now - last, 2))
        last = now


def measure(device) -> None:
    ctx = cl.Context([device])
    queue, other = cl.CommandQueue(ctx), cl.CommandQueue(ctx)
    prog = cl.Program(ctx, SOURCE).build()
    kernel, second = cl.Kernel(prog, "spin"), cl.Kernel(prog, "spin")
    out = np.zeros(ITEMS, np.int64)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, out.nbytes)
    big = np.ones(1 << 20, np.int32)
    buf2 = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, big.nbytes)
    kernel.set_arg(0, buf)
    second.set_args(buf2, np.int64(10))
    n = 1 << 16
    while True:  # loop counts until a launch takes 0.15 s, then scaled to about 1.5 s
        kernel.set_arg(1, np.int64(n))
        start = time.monotonic()
        enqueue(cl, queue, kernel, (ITEMS,), (1,))
        queue.finish()
        took = time.monotonic() - start
        if took > 0.15:
            break
        n *= 4
    loops = np.int64(int(n * 1.5 / took))
    kernel.set_arg(1, loops)

    def launch() -> None:
        enqueue(cl, queue, kernel, (ITEMS,), (1,))
        time.sleep(0.05)

    def blocking_read_after_pyopencl_launch() -> None:
        cl.enqueue_nd_range_kernel(queue, kernel, (ITEMS,), (1,))
        cl.enqueue_copy(queue, out, buf)

    def blocking_read_after_ctypes_launch() -> None:
        launch()
        cl.enqueue_copy(queue, out, buf)

    def copy_dropped_on(q) -> None:
        launch()
        cl.enqueue_copy(q, buf2, big, is_blocking=False)  # its event dropped at once
        queue.finish()

    def buffer_from_host() -> None:
        launch()
        cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=big)
        queue.finish()

    def set_arg() -> None:
        launch()
        kernel.set_arg(1, loops)  # the same value, set again while the kernel runs
        queue.finish()

    def launch_on_other() -> None:
        launch()
        cl.enqueue_nd_range_kernel(other, second, (ITEMS,), (1,))
        other.finish()
        queue.finish()

    def read_on_other() -> None:
        launch()
        cl.enqueue_copy(other, big, buf2)
        queue.finish()

    cases = {
        "pyopencl launch, blocking read": blocking_read_after_pyopencl_launch,
        "ctypes launch, blocking read": blocking_read_after_ctypes_launch,
        "non-blocking copy on the kernel's queue, event dropped": lambda: copy_dropped_on(queue),
        "non-blocking copy on another queue, event dropped": lambda: copy_dropped_on(other),
        "buffer made from host memory": buffer_from_host,
        "set_arg of the running kernel": set_arg,
        "pyopencl launch on another queue": launch_on_other,
        "blocking read on another queue": read_on_other,
    }
    for name, case in cases.items():
        gaps.clear()
        start = time.monotonic()
        case()
        took = time.monotonic() - start
        time.sleep(0.1)
        print(f"| {device.name.strip()[:32]} | {name} | {took:.2f} | {max(gaps, default=0):.2f} |", flush=True)


def main() -> None:
    threading.Thread(target=ticker, daemon=True).start()
    print("| device | call made while a kernel runs | seconds | longest stall of the other threads |")
    print("|---|---|---|---|")
    for platform in cl.get_platforms():
        measure(platform.get_devices()[0])


if __name__ == "__main__":
    main()
