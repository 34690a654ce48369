"""What the scripts that take a run's host time apart share (phase_stamps.py, search_steps.py):
timestamps since the process began, a module's function replaced by a wrapper, a report at the
run's end, and the run itself in this process (FZN_GPU_SERVER=off)."""

import functools
import importlib
import sys
import threading
import time
from collections.abc import Callable

T0 = time.monotonic()


def stamp(what: str, with_thread: bool = False) -> None:
    """`what` on stderr after the seconds since this process began (and the thread's name)."""
    thread = f" [{threading.current_thread().name}]" if with_thread else ""
    print(f"phase {time.monotonic() - T0:7.3f}{thread} {what}", file=sys.stderr, flush=True)


def replace(module: str, attr: str, make: Callable[[Callable], Callable]) -> None:
    """`module.attr` (or `module.Class.method`) replaced by `make(the original)`."""
    owner = importlib.import_module(module)
    name = attr
    if "." in attr:
        cls, name = attr.split(".")
        owner = getattr(owner, cls)
    setattr(owner, name, make(getattr(owner, name)))


def wrap(
    module: str,
    attr: str,
    stamped: bool = True,
    with_thread: bool = False,
    timed: Callable[[str, float], None] | None = None,
) -> None:
    """`module.attr` (or `module.Class.method`) stamped on entry (>) and exit (<), and, with
    `timed`, its seconds handed to `timed(attr, seconds)` at each call's end."""

    def make(fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            if stamped:
                stamp(f"> {attr}", with_thread)
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                if timed is not None:
                    timed(attr, time.perf_counter() - t)
                if stamped:
                    stamp(f"< {attr}", with_thread)

        return wrapped

    replace(module, attr, make)


def run_fzn_gpu(at_finish: Callable[[], None]) -> None:
    """fzn-gpu with this script's arguments, `at_finish()` called as the run ends."""
    from fzn_gpu import exiting

    finish = exiting.finish

    def finishing(code):
        at_finish()
        finish(code)

    exiting.finish = finishing
    sys.argv = ["fzn-gpu", *sys.argv[1:]]
    from fzn_gpu.launch import main

    main()
