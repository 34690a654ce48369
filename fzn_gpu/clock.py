"""The solver's clock. A time limit counts from the start of the process, as the user and
MiniZinc count it: importing pyopencl, parsing and building kernels all spend the limit."""

from __future__ import annotations

import os
import time


def _process_start() -> float:
    """When this process started, on the time.monotonic() scale: from /proc on Linux (the
    interpreter's own start-up included), else the moment this module was imported."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        started_ticks = int(fields[19])  # field 22 of stat(5), counted after `pid (comm)`
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        age = uptime - started_ticks / os.sysconf("SC_CLK_TCK")
        if 0.0 <= age < 60.0:  # a sane reading; clocks that disagree fall back
            return now - age
    except (OSError, ValueError, IndexError):
        pass
    return now


STARTED = _process_start()


def deadline(time_limit_ms: int | None) -> float | None:
    """The time.monotonic() moment the search must be over, or None without a limit."""
    return STARTED + time_limit_ms / 1000.0 if time_limit_ms else None


def past(moment: float | None) -> bool:
    """Whether a deadline (time.monotonic(); None: none) has come."""
    return moment is not None and time.monotonic() >= moment


def elapsed() -> float:
    return time.monotonic() - STARTED
