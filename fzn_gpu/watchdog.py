"""The time limit and interrupts, honoured even while the main thread waits on a kernel.

Python runs signal handlers only between bytecodes of the main thread, and a kernel slice, a
kernel build or a blocking copy can keep it inside C for seconds. So SIGINT and SIGTERM are
blocked in the main thread and taken by a watcher thread, which also wakes at the hard end of
the time limit. Either way it calls `end_early(interrupted)`, which prints the best solution so
far and the status and returns the exit code, and the process ends at once (os._exit: waiting
for a running kernel to finish is what the user wanted to avoid)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Callable

from . import clock

SIGNALS = {signal.SIGINT, signal.SIGTERM}
GRACE_S = 0.5   # past the time limit, the watchdog ends the run even inside a kernel slice


def unknown_yet(interrupted: bool) -> int:
    """The early ending before the search has begun (parsing a large model, say)."""
    sys.stdout.write("=====UNKNOWN=====\n")
    return 130 if interrupted else 0


class Watchdog:
    """`end_early` may be replaced while the watchdog runs: the search installs its own
    once it has a stream to end."""

    def __init__(self, end_early: Callable[[bool], int], time_limit_ms: int | None):
        self.end_early = end_early
        limit = clock.deadline(time_limit_ms)
        self.hard_deadline = limit + GRACE_S if limit is not None else None
        self.usable = hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
        self._old_mask: set | None = None
        self._closed = threading.Event()

    def __enter__(self) -> "Watchdog":
        if self.usable:
            # threads inherit the mask, so the watcher (started after) has them blocked too,
            # as sigtimedwait requires
            self._old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
            threading.Thread(target=self._watch, name="fzn-gpu watchdog", daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._closed.set()
        if self.usable and self._old_mask is not None:
            # a signal that arrived meanwhile is ignored: the stream is already complete
            for sig in SIGNALS:
                signal.signal(sig, signal.SIG_IGN)
            signal.pthread_sigmask(signal.SIG_SETMASK, self._old_mask)

    def _watch(self) -> None:
        while True:
            if self.hard_deadline is None:
                info = signal.sigwaitinfo(SIGNALS)
            else:
                left = self.hard_deadline - time.monotonic()
                info = signal.sigtimedwait(SIGNALS, left) if left > 0 else None
                if info is None and time.monotonic() < self.hard_deadline:
                    continue
            if self._closed.is_set():
                return
            code = self.end_early(info is not None)
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
