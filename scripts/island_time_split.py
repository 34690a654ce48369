"""One fzn-gpu LNS run, in the process (FZN_GPU_SERVER=off), with each island's step time
split at the end (stderr): wall seconds of its steps, its thread's CPU seconds in them, the
seconds its runner waited on kernel slices (launch to finish, the interpreter's lock taken
back included), and the rest (host work, and waiting for the interpreter's lock or a core). Whether a GPU island's steps are slower beside a CPU island than alone because
of its own host work or because it waits for the other thread (docs/bench/measurements.md, LNS on
every device):
    FZN_GPU_SERVER=off python3 scripts/island_time_split.py --engine lns --devices all -s -t 10000 F.fzn
"""

import sys
import threading
import time

from fzn_gpu import exiting
from fzn_gpu.engine import lns_island

totals: dict[int, list[float]] = {}  # island -> [steps, wall, cpu, kernel]
_lock = threading.Lock()
_step = lns_island.Island.step


def _timed_step(self, current, deadline):
    w0, c0, k0 = time.perf_counter(), time.thread_time(), self.runner.stats.kernel_s
    try:
        return _step(self, current, deadline)
    finally:
        row = (1, time.perf_counter() - w0, time.thread_time() - c0, self.runner.stats.kernel_s - k0)
        with _lock:
            acc = totals.setdefault(self.index, [0.0, 0.0, 0.0, 0.0])
            for i, v in enumerate(row):
                acc[i] += v


lns_island.Island.step = _timed_step
_finish = exiting.finish


def _report(code):
    for index, (steps, wall, cpu, kernel) in sorted(totals.items()):
        print(
            f"island {index}: {int(steps)} steps, wall {wall:.2f} s ({1000 * wall / max(steps, 1):.2f} ms a step), "
            f"thread CPU {cpu:.2f} s, kernel waits {kernel:.2f} s, outside them {wall - kernel:.2f} s",
            file=sys.stderr,
        )
    _finish(code)


exiting.finish = _report
sys.argv = ["fzn-gpu"] + sys.argv[1:]
from fzn_gpu.launch import main  # noqa: E402

main()
