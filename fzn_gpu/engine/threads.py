"""Running searches in threads of their own (LNS islands, the portfolio's two engines) while
the main thread stays able to take an interrupt."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .. import settings

if TYPE_CHECKING:  # the engines import this module
    from .incumbent import Outcome
    from .interface import Engine


# How long a thread that wants the GIL waits before the one running Python must hand it over,
# while device threads run side by side. A device's thread gives the GIL up at every kernel wait
# and wants it back as its kernel ends; at CPython's 5 ms it could wait that long each time for
# the other threads' Python work before it could take the slice's results or launch the next
# (docs/bench/measurements.md, LNS on every device: the interpreter's lock handed over within 0.5 ms).
# FZN_GPU_SWITCH_INTERVAL (seconds) sets another.
SWITCH_INTERVAL_S = 0.0005


def switch_interval() -> float:
    """The GIL hand-over interval while device threads run: FZN_GPU_SWITCH_INTERVAL, else
    SWITCH_INTERVAL_S."""
    value = settings.number("FZN_GPU_SWITCH_INTERVAL", SWITCH_INTERVAL_S)
    return value if value > 0 else SWITCH_INTERVAL_S


@contextmanager
def quick_gil_handover() -> Iterator[None]:
    """While device threads run side by side: the GIL changes hands within switch_interval(),
    the interpreter's own interval restored after."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, switch_interval()))
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def run_threads(threads: list[threading.Thread], stop: Callable[[], None]) -> None:
    """Start the threads and wait for them all, in short waits so that the main thread takes
    an interrupt (KeyboardInterrupt, raised again after); at the end, and at an interrupt,
    stop() tells every thread to end at its next slice or step. While they run, the GIL
    changes hands quickly (quick_gil_handover)."""
    with quick_gil_handover():
        for t in threads:
            t.start()
        try:
            while any(t.is_alive() for t in threads):
                for t in threads:
                    t.join(0.05)
        finally:
            stop()
            for t in threads:
                t.join()


def run_engines(
    engines: dict[str, Engine], deadline: float | None, stop: Callable[[], None], verbose: bool = False
) -> dict[str, Outcome]:
    """Each engine's run(deadline) in a thread of its own (the portfolios); an engine that
    proves its answer (its outcome complete) or raises calls stop() for the others. Returns
    each engine's outcome by name, in the order they ended, once all have; an exception is
    raised again here. `verbose` (-v): when each engine ended, on stderr (the run ends with
    the last: an engine slow to see stop() holds the answer back)."""
    from .. import clock

    results: dict[str, Outcome] = {}
    errors: list[BaseException] = []

    def one(name: str, search: Engine) -> None:
        try:
            results[name] = search.run(deadline)
        except BaseException as err:  # raised again below, after every engine has stopped
            errors.append(err)
            stop()
            return
        if verbose:
            proof = " with its proof" if results[name].complete else ""
            print(f"fzn-gpu: {name} ended at {clock.elapsed():.3f} s{proof}", file=sys.stderr)
        if results[name].complete:  # a proof: nothing is left for the others to find
            stop()

    run_threads([threading.Thread(target=one, args=item, daemon=True) for item in engines.items()], stop)
    if errors:
        raise errors[0]
    return results
