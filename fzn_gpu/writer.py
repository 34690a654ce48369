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
raised again in the searching thread at its next hand-over or drain."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import TextIO

MAX_PENDING_BYTES = 1 << 20


class StreamWriter:
    def __init__(self, out: TextIO, max_pending: int = MAX_PENDING_BYTES):
        self.out = out
        self.max_pending = max_pending
        self._jobs: collections.deque[tuple[Callable[[], str], int]] = collections.deque()
        self._pending = 0  # estimated bytes handed over and not yet written
        self._busy = False  # the thread is formatting or writing a job
        self._error: BaseException | None = None
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def put(self, text: Callable[[], str], size: int) -> None:
        """Queue a job producing text of about `size` bytes; wait while the backlog is full
        (a job bigger than the bound is taken once the backlog is empty)."""
        with self._cond:
            self._raise()
            while self._pending and self._pending + size > self.max_pending:
                self._cond.wait()
                self._raise()
            self._jobs.append((text, size))
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
                text, size = self._jobs.popleft()
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
