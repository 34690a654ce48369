"""A thread that writes the solution stream while the search goes on.

MiniZinc's solns2out reads a solver's output more slowly than a GPU finds solutions, and a
write into the full pipe blocked the search with no kernel running (docs/bench/measurements.md,
printed enumeration). Here the search hands each batch over and launches its next slice at
once; the thread formats and writes, so the run takes about as long as MiniZinc's reading
alone.

The backlog is bounded (`MAX_PENDING_BYTES`, estimated before formatting): past it the search
waits, so memory stays small on any enumeration, and the text still queued when the run ends
(a time limit, an interrupt) drains in a fraction of a second. Batches are written in order,
and `drain()` returns only once everything handed over is written, so the status line and the
statistics always come after the solutions. A failed write (MiniZinc gone: a broken pipe) is
raised again in the searching thread at its next hand-over or drain.

An optimisation's improvements supersede one another (`put(..., supersedes=True)`): while the
reader is behind, a new one takes the place of those still queued, so the reader gets the best
found next and never works through a backlog of worse ones. MiniZinc reads a large solution
more slowly than a GPU finds improvements: a backlog of them, bounded only by
MAX_PENDING_BYTES, held the best found back past the time limit, and minizinc killed the solver
before it was written (docs/bench/measurements.md, "Branch and bound on the CPU, LNS on the
GPU: the default"). `shrink_pipe` keeps the pipe's own buffer to one page for such a stream,
so that the pipe holds no backlog of its own either."""

from __future__ import annotations

import collections
import os
import stat
import threading
from collections.abc import Callable
from typing import TextIO

MAX_PENDING_BYTES = 1 << 20


def shrink_pipe(out: TextIO) -> bool:
    """Make the pipe behind `out` as small as the system allows (one page), where `out` is a
    pipe and the system can (Linux's F_SETPIPE_SZ); whether it did. The writer's jobs then wait
    in its queue, where a newer improvement replaces them, instead of in the pipe."""
    try:
        import fcntl

        fd = out.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode) or not hasattr(fcntl, "F_SETPIPE_SZ"):
            return False
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, os.sysconf("SC_PAGESIZE"))
        return True
    except (OSError, ValueError, AttributeError, ImportError):  # not a file, or not a pipe here
        return False


class StreamWriter:
    def __init__(self, out: TextIO, max_pending: int = MAX_PENDING_BYTES):
        self.out = out
        self.max_pending = max_pending
        # (text, estimated bytes, solutions, whether a later superseding job replaces it)
        self._jobs: collections.deque[tuple[Callable[[], str], int, int, bool]] = collections.deque()
        self._pending = 0  # estimated bytes handed over and not yet written
        self.superseded = 0  # solutions replaced by a better one before they were written
        self._busy = False  # the thread is formatting or writing a job
        self._error: BaseException | None = None
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def put(self, text: Callable[[], str], size: int, solutions: int = 1, supersedes: bool = False) -> None:
        """Queue a job producing text of about `size` bytes (`solutions` of them); wait while
        the backlog is full (a job bigger than the bound is taken once the backlog is empty).
        `supersedes`: while a write is in progress (the reader is behind), the job replaces the
        superseding jobs still queued (an optimisation's improvements: the newest is the best);
        a reader keeping up gets every one."""
        with self._cond:
            self._raise()
            if supersedes and self._busy:  # the reader is behind: only the newest is worth its time
                kept = [job for job in self._jobs if not job[3]]
                for job in self._jobs:
                    if job[3]:
                        self._pending -= job[1]
                        self.superseded += job[2]
                self._jobs = collections.deque(kept)
            while self._pending and self._pending + size > self.max_pending:
                self._cond.wait()
                self._raise()
            self._jobs.append((text, size, solutions, supersedes))
            self._pending += size
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="fzn-gpu writer", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def drain(self) -> None:
        """Return once every job handed over is written and flushed."""
        with self._cond:
            while self._jobs or self._busy:
                self._raise()
                self._cond.wait()
            self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._jobs:
                    self._cond.wait()
                text, size, _, _ = self._jobs.popleft()
                self._busy = True
            try:
                self.out.write(text())
                self.out.flush()
            except BaseException as err:  # noqa: BLE001 - handed to the searching thread
                with self._cond:
                    self._error = err
                    self._jobs.clear()  # nothing after a failed write can be written
                    self._pending = 0
                    self._busy = False
                    self._cond.notify_all()
                continue
            with self._cond:
                self._pending -= size
                self._busy = False
                self._cond.notify_all()
