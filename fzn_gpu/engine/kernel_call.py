"""A kernel launched slice after slice with mostly the same arguments: each launch sets only the
arguments that changed since the one before. pyopencl's call sets every one at every launch,
each a call into the driver, and an LNS step launches the search kernel once or twice, ICM and
Gibbs once a position (what it saves: docs/bench/measurements.md, LNS on every device)."""

from __future__ import annotations

import numpy as np

from ..runtime.kernel_launch import enqueue


class KernelCall:
    """Launches of one cl.Kernel object, owned by one thread (a Runner's)."""

    def __init__(self, kernel, launch=enqueue) -> None:
        self.kernel = kernel
        self.enqueue = launch  # kernel_launch.enqueue: the interpreter's lock released
        self.last: tuple = ()  # the arguments as set for the last launch
        self.retired: tuple = ()  # the launch before's, kept until settle()

    def __call__(self, cl, queue, global_size: tuple, local_size: tuple, args: tuple) -> None:
        last, self.last = self.last, ()  # unknown until every argument is set and the launch queued
        for i, value in enumerate(args):
            if i >= len(last) or not same(last[i], value):
                self.kernel.set_arg(i, value)
        self.enqueue(cl, queue, self.kernel, global_size, local_size)
        self.last = args
        # the buffers only the launch before held are freed at settle(), not here: freeing
        # device memory waits for the device's kernels to end (NVIDIA's, as CUDA's cuMemFree
        # does), and pyopencl frees a buffer holding the interpreter lock, so a buffer dropped
        # just after this launch stopped every thread of the process for the whole slice
        # (docs/bench/measurements.md, Time limits and the interpreter's lock)
        self.retired = last

    def settle(self) -> None:
        """After the launch has finished: the buffers only the launch before used may go."""
        self.retired = ()


def same(a, b) -> bool:
    """The same buffer or local-memory object, or equal scalars of one type: setting it again
    would change nothing. (A buffer made anew is another object, even where its size is the same.)"""
    if a is b:
        return True
    return isinstance(a, np.generic) and isinstance(b, np.generic) and a.dtype == b.dtype and bool(a == b)
