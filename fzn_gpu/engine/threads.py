"""Running searches in threads of their own (LNS islands, the portfolio's two engines) while
the main thread stays able to take an interrupt."""

from __future__ import annotations

import threading
from typing import Callable


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
