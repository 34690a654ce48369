"""The solver's clock. A time limit counts from the start of the process, as the user and
MiniZinc count it: importing pyopencl, parsing and building kernels all spend the limit."""

from __future__ import annotations

import os
import time


def _started(pid: int | str, oldest_s: float) -> float | None:
    """When process `pid` started, on the time.monotonic() scale, from /proc (Linux); None where
    unreadable or older than `oldest_s` (clocks that disagree)."""
    now = time.monotonic()
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        started_ticks = int(fields[19])  # field 22 of stat(5), counted after `pid (comm)`
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        age = uptime - started_ticks / os.sysconf("SC_CLK_TCK")
        if 0.0 <= age < oldest_s:
            return now - age
    except (OSError, ValueError, IndexError):
        pass
    return None


def _process_start() -> float:
    """When this process started (the interpreter's own start-up included), or the moment this
    module was imported where /proc does not say."""
    started = _started("self", 60.0)
    return time.monotonic() if started is None else started


STARTED = _process_start()

# MiniZinc's --time-limit "includes compilation and solving": MiniZinc 2.6 passes the solver
# `-t` with what is left of it after flattening, but then writes the FlatZinc and starts the
# solver, and tears its model down after the solver ends, outside that count
# (docs/bench/measurements.md, "The MiniZinc Challenge at 20 s"). A run MiniZinc started under
# --time-limit (its parent's command line) therefore counts the user's limit from MiniZinc's own
# start (its parent's, in /proc) and ends before it by MiniZinc's teardown, about 0.03 s per MB
# of FlatZinc (at most a quarter of the limit), so that MiniZinc's answer comes within the
# user's limit. A solver's own `-t` (MiniZinc hands it on as it is) counts from this run's start,
# less the teardown.
MINIZINC_TEARDOWN_S_PER_MB = 0.03
MINIZINC_TEARDOWN_MAX = 0.25


def _parent_is_minizinc() -> bool:
    """Whether this process's parent is MiniZinc (its name in /proc; False where unreadable)."""
    try:
        with open(f"/proc/{os.getppid()}/comm") as f:
            return f.read().strip().startswith("minizinc")
    except OSError:
        return False


def _minizinc_time_limit_ms() -> int | None:
    """The --time-limit MiniZinc was given (its command line in /proc), or None."""
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
            args = f.read().decode(errors="replace").split("\0")
    except OSError:
        return None
    for i, arg in enumerate(args):
        value = args[i + 1] if arg == "--time-limit" and i + 1 < len(args) else None
        if arg.startswith("--time-limit="):
            value = arg.split("=", 1)[1]
        if value is not None:
            try:
                return int(float(value))
            except ValueError:
                return None
    return None


# whether MiniZinc started this run: the client's own parent (a served run is told by its
# client); when MiniZinc started and the --time-limit it was given (None where /proc does not
# say or it had none; then only its teardown is left it)
BY_MINIZINC = _parent_is_minizinc()
MINIZINC_STARTED = _started(os.getppid(), 86400.0) if BY_MINIZINC else None
MINIZINC_LIMIT_MS = _minizinc_time_limit_ms() if BY_MINIZINC else None
AHEAD_S = 0.0  # the seconds this run ends before its -t for MiniZinc's own work (cli.py); -s shows them


def minizinc_share_ms(time_limit_ms: int | None, fzn_path: str) -> int:
    """How many of a run's milliseconds MiniZinc's own work around it takes (see above): under
    MiniZinc's --time-limit, all it spent before this run that it did not count in the `-t` it
    passed, and its teardown after; 0 unless MiniZinc started the run under a limit."""
    if not BY_MINIZINC or not time_limit_ms:
        return 0
    try:
        mb = os.path.getsize(fzn_path) / 1e6
    except OSError:
        mb = 0.0
    teardown = min(MINIZINC_TEARDOWN_S_PER_MB * mb, MINIZINC_TEARDOWN_MAX * time_limit_ms / 1000.0)
    uncounted = 0.0  # MiniZinc's time before this run that the -t it passed does not count
    if MINIZINC_LIMIT_MS is not None and MINIZINC_STARTED is not None:
        left = MINIZINC_LIMIT_MS / 1000.0 - max(0.0, STARTED - MINIZINC_STARTED)  # of the user's limit
        uncounted = max(0.0, time_limit_ms / 1000.0 - left)
    return round((uncounted + teardown) * 1000.0)


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
