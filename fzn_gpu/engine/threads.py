"""Running searches in threads of their own (LNS islands, the portfolio's two engines) while
the main thread stays able to take an interrupt."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the engines import this module
    from .incumbent import Outcome
    from .interface import Engine


def run_threads(threads: list[threading.Thread], stop: Callable[[], None]) -> None:
    """Start the threads and wait for them all, in short waits so that the main thread takes
    an interrupt (KeyboardInterrupt, raised again after); at the end, and at an interrupt,
    stop() tells every thread to end at its next slice or step."""
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


def run_engines(engines: dict[str, Engine], deadline: float | None, stop: Callable[[], None]) -> dict[str, Outcome]:
    """Each engine's run(deadline) in a thread of its own (the portfolios); an engine that
    proves its answer (its outcome complete) or raises calls stop() for the others. Returns
    each engine's outcome by name, once all have ended; an exception is raised again here."""
    results: dict[str, Outcome] = {}
    errors: list[BaseException] = []

    def one(name: str, search: Engine) -> None:
        try:
            results[name] = search.run(deadline)
        except BaseException as err:  # raised again below, after every engine has stopped
            errors.append(err)
            stop()
            return
        if results[name].complete:  # a proof: nothing is left for the others to find
            stop()

    run_threads([threading.Thread(target=one, args=item, daemon=True) for item in engines.items()], stop)
    if errors:
        raise errors[0]
    return results
