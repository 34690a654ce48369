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

# MiniZinc's own work around a run that its --time-limit does not give the solver: it writes the
# FlatZinc after the flattening it counts, and tears its model down after the solver ends. Both
# grow with the model, about 0.04 s per MB of FlatZinc together (docs/bench/measurements.md, "The
# MiniZinc Challenge at 20 s"); a run that MiniZinc started ends that much before the limit it
# was given, at most a quarter of it, so that MiniZinc's answer comes within the user's limit.
MINIZINC_S_PER_MB = 0.04
MINIZINC_SHARE_MAX = 0.25


def _parent_is_minizinc() -> bool:
    """Whether this process's parent is MiniZinc (its name in /proc; False where unreadable)."""
    try:
        with open(f"/proc/{os.getppid()}/comm") as f:
            return f.read().strip().startswith("minizinc")
    except OSError:
        return False


# whether MiniZinc started this run: the client's own parent (a served run is told by its client)
BY_MINIZINC = _parent_is_minizinc()
AHEAD_S = 0.0  # the seconds this run ends before its -t for MiniZinc's own work (cli.py); -s shows them


def minizinc_share_ms(time_limit_ms: int | None, fzn_path: str) -> int:
    """How many of a run's milliseconds MiniZinc's own work around it takes (see above): 0
    unless MiniZinc started the run under a limit."""
    if not BY_MINIZINC or not time_limit_ms:
        return 0
    try:
        mb = os.path.getsize(fzn_path) / 1e6
    except OSError:
        return 0
    return int(min(MINIZINC_S_PER_MB * mb * 1000.0, MINIZINC_SHARE_MAX * time_limit_ms))


def deadline(time_limit_ms: int | None) -> float | None:
    """The time.monotonic() moment the search must be over, or None without a limit."""
    return STARTED + time_limit_ms / 1000.0 if time_limit_ms else None


def past(moment: float | None) -> bool:
    """Whether a deadline (time.monotonic(); None: none) has come."""
    return moment is not None and time.monotonic() >= moment


def elapsed() -> float:
    return time.monotonic() - STARTED


# where a run's start-up went: (step, seconds since the process started) as each step ends;
# `-s` prints them as startupMarks (initTime is the last step's end), so that a slow start
# says which step took it (a served run's start counts from its client's process)
MARKS: list[tuple[str, float]] = []


def mark(step: str) -> None:
    """Notes that `step` of the start-up has ended now."""
    MARKS.append((step, elapsed()))


def marks_text() -> str:
    """The start-up's marks as one statistic: `step:seconds` in the order they ended."""
    return " ".join(f"{step}:{at:.3f}" for step, at in MARKS)
