"""The one way a run ends: streams flushed, whoever waits for the run told its exit code, then
os._exit.

A run ends with os._exit, not a return through the interpreter's shutdown: tearing down the
OpenCL contexts takes 0.3 s on PoCL, and the watchdog ends a run from its own thread while the
main thread may be inside a kernel launch. A run that a solver server forked (server.py) has a
client waiting on a socket for the code: `on_exit` registers the hook that sends it."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import NoReturn

from . import hooks

_hooks: list[Callable[[int], None]] = []


def on_exit(hook: Callable[[int], None]) -> None:
    """Call `hook(code)` when the run ends, after its output is flushed."""
    _hooks.append(hook)


def finish(code: int) -> NoReturn:
    """Flush stdout and stderr, run the hooks, and end the process with `code`."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass
    abandon(code)


def abandon(code: int) -> NoReturn:
    """Run the hooks and end the process with `code`, flushing nothing: called directly where
    what is left to write cannot be written (nobody reads the stream), so waiting for it
    would never end."""
    for hook in _hooks:
        try:
            hook(code)
        except Exception:  # noqa: BLE001 - the process ends with its code whatever a hook meets
            pass
    linger = hooks.exit_linger_s()
    if linger > 0:
        time.sleep(linger)
    os._exit(code)
