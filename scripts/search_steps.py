"""One fzn-gpu complete search with its host time taken apart: a timestamp on stderr (seconds
since this process began, with the thread) at the start (>) and end (<) of the run's main
phases (reading, the devices, packing, each Runner's set-up, the root split's passes, the
search on every device, the end), and at the run's end, per device thread, the seconds and
calls of each step of a phase's slices (engine/phase.py: the launch with its wait, reading the
slice back, the donations with their parts, the solutions' callback, feeding idle searches, the
arguments), what is left of the time between slices, and the balancer's waits for a block
(`WorkPool.take`). Where a count's host time goes (docs/bench/measurements.md,
"Several devices on one search"). Run in the process (FZN_GPU_SERVER=off):
    FZN_GPU_SERVER=off python3 scripts/search_steps.py [fzn-gpu arguments]"""

import collections
import functools
import sys
import threading
import time

import stamps
from stamps import run_fzn_gpu

STEPS: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
CALLS: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)


def stamp(what: str) -> None:
    stamps.stamp(what, with_thread=True)


def add_time(attr: str, seconds: float) -> None:
    thread = threading.current_thread().name
    STEPS[thread][attr] += seconds
    CALLS[thread][attr] += 1


def wrap(module: str, attr: str, timed: bool = False) -> None:
    """`module.attr` (or `module.Class.method`) stamped on entry and exit, or (`timed`) its
    seconds and calls summed per thread."""
    stamps.wrap(module, attr, stamped=not timed, with_thread=True, timed=add_time)


stamp("start")
import fzn_gpu.engine.phase as phase  # noqa: E402

stamp("imported")
for module, attr in [
    ("fzn_gpu.flatzinc.lower", "load"),
    ("fzn_gpu.runtime.device", "select_devices"),
    ("fzn_gpu.engine.pack", "pack"),
    ("fzn_gpu.engine.runner", "Runner.__init__"),
    ("fzn_gpu.engine.complete", "CompleteSearch.run"),
    ("fzn_gpu.engine.complete", "CompleteSearch._search_all"),
]:
    wrap(module, attr)
for attr in ("__init__", "arguments", "launch", "read_slice", "take_donations", "feed_idle", "finish", "run"):
    wrap("fzn_gpu.engine.phase", f"Phase.{attr}", timed=True)
wrap("fzn_gpu.engine.runner", "Runner.pause_after", timed=True)
# inside the donations' step: the paths' host arrays, the upload, the balancer's say
for module, attr in [
    ("fzn_gpu.engine.phase", "Phase.upload"),
    ("fzn_gpu.engine.paths", "Paths.from_records"),
    ("fzn_gpu.engine.paths", "Paths.extend"),
    ("fzn_gpu.engine.paths", "Paths.block"),
    ("fzn_gpu.engine.balance", "WorkPool.shrink"),
    ("fzn_gpu.engine.balance", "WorkPool.take"),
]:
    wrap(module, attr, timed=True)

_run_phase = phase.Phase.run


def run_with_callback_timed(self, on_slice):
    @functools.wraps(on_slice)
    def timed(sols):
        t = time.perf_counter()
        try:
            return on_slice(sols)
        finally:
            add_time("on_slice", time.perf_counter() - t)

    return _run_phase(self, timed)


phase.Phase.run = run_with_callback_timed


def report() -> None:
    stamp("finish")
    for thread, steps in sorted(STEPS.items()):
        inside = ("arguments", "launch", "read_slice", "take_donations", "feed_idle", "on_slice", "pause_after")
        loop = steps["Phase.run"]
        left = loop - sum(steps[f"Phase.{s}"] if s not in ("on_slice",) and s != "pause_after" else 0 for s in inside)
        left -= steps["on_slice"] + steps["Runner.pause_after"]
        parts = ", ".join(f"{name} {sec:.3f} s/{CALLS[thread][name]}" for name, sec in steps.most_common())
        print(f"steps [{thread}] {parts}; the slice loop's own {left:.3f} s", file=sys.stderr, flush=True)


run_fzn_gpu(report)
