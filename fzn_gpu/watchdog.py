"""The time limit and interrupts, honoured even while the main thread waits on a kernel.

Python runs signal handlers only between bytecodes of the main thread, and a kernel slice, a
kernel build or a blocking copy can keep it inside C for seconds. So SIGINT and SIGTERM are
blocked in the main thread and taken by a watcher thread, which also wakes at the hard end of
the time limit. On a signal it first asks the run to wind down (`wind_down(signo)`, installed
by the search): the search stops at its next slice, as at a time limit, and the main thread
ends the stream with every device's counts and statistics; where that does not happen within
a second (a kernel slice that overruns), and at the hard end of the time limit (GRACE_S past
it while a search runs, the limit itself before one does), it calls
`end_early(signo)` (None at the time limit), which prints the best solution so far and the
status and returns the exit code, and the process ends at once (os._exit: waiting for a
running kernel to finish is what the user wanted to avoid); a signal's exit code is 128 + its
number, as a shell reports it (130 for SIGINT, 143 for SIGTERM).

A launcher may start the solver with SIGINT ignored (nohup, `&` in a script, some IDE set-ups),
and an ignored signal is discarded even while blocked: the watchdog takes both signals
whatever their disposition was, as Gecode does, so Stop still stops. And a solver whose parent
(minizinc) is gone has no one to print for: the watcher checks every POLL_S that its parent is
still the one that started it, and ends as if sent SIGTERM when it is not (no orphan left
running at full speed). An early end whose last lines cannot be written within END_WAIT_S
(the stream's reader stopped reading: MiniZinc 2.6, cancelled by minizinc-python, read the
solver's stderr while its stdout pipe stayed full, and both waited for ever) ends without
them, with the same exit code."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable

from . import clock, exiting

SIGNALS = {signal.SIGINT, signal.SIGTERM}
GRACE_S = 0.5  # past the time limit, the watchdog ends the run even inside a kernel slice
POLL_S = 0.5  # how often the watcher checks that the parent process is still there
END_WAIT_S = 5.0  # the most an early end waits to write its last lines (the writer's backlog is bounded)

# A run forked by the solver server (server.py) has the server as its parent, which outlives
# it: its owner is the client on the other end of a socket, and this says when it is gone.
owner_gone: Callable[[], bool] | None = None


class Terminated(KeyboardInterrupt):
    """SIGTERM met in the main thread (a thread started before the watchdog, such as a math
    library's, may take a signal first): an interrupt with SIGTERM's exit code."""


def interrupt_code(exc: BaseException | None = None) -> int:
    """The exit code of a run an interrupt ended: 128 + the signal's number."""
    return signal_code(signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)


def signal_code(signo: int | None) -> int:
    """The exit code of a run a signal ended (0 at the time limit: signo None)."""
    return 128 + int(signo) if signo else 0


def taken(info: signal.struct_siginfo | None) -> int | None:
    """The signal sigtimedwait took, or None where it took none. CPython's sigtimedwait,
    interrupted (EINTR) once its timeout has passed, returns the siginfo its call never filled
    (Modules/signalmodule.c breaks out of its retry loop into fill_siginfo): a process stopped
    and continued for longer than POLL_S (Ctrl-Z then fg, SIGSTOP and SIGCONT, a sampling
    profiler) read a garbage signal number, and its run ended as if signalled, the count cut
    short, with no status line and an exit code such as 160. Only a signal waited for counts."""
    if info is None or info.si_signo not in SIGNALS:
        return None
    return info.si_signo


def unknown_yet(signo: int | None, statistics: Callable[[], dict[str, object]] | None = None) -> int:
    """The early ending before the search has begun (reading a large model, say): UNKNOWN, and
    with `statistics` (-s) what the run had done, so that a user sees where the time went."""
    from .output import format_stats

    sys.stdout.write("=====UNKNOWN=====\n")
    if statistics is not None:
        stats = statistics()
        stats["endedBy"] = "the time limit" if signo is None else signal.Signals(signo).name
        sys.stdout.write(format_stats(stats))
    return signal_code(signo)


class Watchdog:
    """`end_early` may be replaced while the watchdog runs: the search installs its own
    once it has a stream to end."""

    def __init__(self, end_early: Callable[[int | None], int], time_limit_ms: int | None):
        self.end_early = end_early
        # from the search, once it runs: stop at the next slice and let the main thread end the
        # stream; whether it did (SolveRun.wind_down)
        self.wind_down: Callable[[int], bool] | None = None
        limit = clock.deadline(time_limit_ms)
        self.limit = limit
        self.hard_deadline = limit + GRACE_S if limit is not None else None
        # from the run: whether a search runs (SolveRun.searching). Before one does (reading
        # the model, packing it, building programs) nothing has been found and nothing waits
        # to wind down, so the run ends at the limit itself, not GRACE_S after it (a 79 MB model
        # cut short while read overran its limit by the whole grace)
        self.searching: Callable[[], bool] = lambda: False
        self.usable = hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
        self._old_mask: set | None = None
        self._closed = threading.Event()
        parent = os.getppid()
        self._owner_gone = owner_gone or (lambda: os.getppid() != parent)

    def __enter__(self) -> Watchdog:
        if self.usable:
            # threads inherit the mask, so the watcher (started after) has them blocked too,
            # as sigtimedwait requires
            self._old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
            for sig in SIGNALS:  # an ignored signal would be discarded, never waited for
                if signal.getsignal(sig) == signal.SIG_IGN:
                    signal.signal(sig, signal.default_int_handler)
            threading.Thread(target=self._watch, name="fzn-gpu watchdog", daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._closed.set()
        if self.usable and self._old_mask is not None:
            # a signal that arrived meanwhile is ignored: the stream is already complete
            for sig in SIGNALS:
                signal.signal(sig, signal.SIG_IGN)
            signal.pthread_sigmask(signal.SIG_SETMASK, self._old_mask)

    def _end_at(self) -> float | None:
        """When the watcher ends the run: GRACE_S past the limit while a search runs (it stops
        at its next slice by itself), at the limit before one does."""
        if self.limit is None:
            return None
        return self.hard_deadline if self.searching() else self.limit

    def _watch(self) -> None:
        while True:
            end = self._end_at()
            wait = POLL_S if end is None else min(POLL_S, end - time.monotonic())
            signo = taken(signal.sigtimedwait(SIGNALS, wait)) if wait > 0 else None
            end = self._end_at()
            if signo is None and self._owner_gone():
                signo = signal.SIGTERM  # orphaned: the parent (or a server's client) is gone
            elif signo is None and (end is None or time.monotonic() < end):
                continue
            if self._closed.is_set():
                return
            # armed first: winding down and ending early may wait on a stream nobody reads, or on
            # the run's lock held by a thread blocked writing one
            stuck = threading.Timer(END_WAIT_S, exiting.abandon, args=(signal_code(signo),))
            stuck.daemon = True
            stuck.start()
            if signo is not None and self.wind_down is not None and self.wind_down(signo):
                # the main thread ended the stream and ends the process; the timer makes sure
                time.sleep(END_WAIT_S)
                exiting.abandon(signal_code(signo))
            code = 0
            try:
                code = self.end_early(signo)
            finally:
                exiting.finish(code)
