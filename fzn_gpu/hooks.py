"""Faults that tests make happen on purpose, to check that a run recovers from them: a device
failing in the middle of complete search or LNS, a cluster worker dying mid-block, a server's
spare hanging in OpenCL's start.

The code at each fault point asks `PLAN`, an object, never the environment. A test sets it in
its own process (`inject`); a test running the solver in another process hands it
FZN_GPU_TEST_HOOKS, which the solver's entry points read once into PLAN (`load`: cli.main, the
server's start). A run without that variable has the empty plan: no fault point fires.

FZN_GPU_TEST_HOOKS: items separated by ';', each NAME=VALUE:
  device=i:k[:s],...  device i fails on its k-th block (LNS: its k-th step), before it starts
                      (s = 0, the default) or after its s-th slice, when its searches may have
                      donated paths already; k = 0: in complete search's dive or root split
  worker=i:b,...      cluster worker i exits in the middle of its b-th block
  spare=hang          the solver server's spares never get ready
  exit=linger:S       a run's process lingers S seconds after its last step, before it
                      ends (a driver's teardown of a GPU's context, made long)
  join=ready          complete search waits for every device's runner before it searches
                      (they are built behind the root split and join when ready otherwise)
  join=late:S         the runners built behind the root split start S seconds late
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from . import settings
from .errors import FznError

VARIABLE = "FZN_GPU_TEST_HOOKS"


@dataclass(frozen=True)
class Plan:
    """The faults of one run."""

    devices: frozenset[tuple[int, int, int]] = frozenset()  # (device, block, slice) that fail
    workers: tuple[tuple[int, int], ...] = ()  # (worker, block) that exit mid-block
    spare_hangs: bool = False
    exit_linger_s: float = 0.0
    join_ready: bool = False
    join_late_s: float = 0.0

    @classmethod
    def parse(cls, text: str) -> Plan:
        """The plan FZN_GPU_TEST_HOOKS describes (module docstring); a malformed item is one
        FznError naming it."""
        devices: set[tuple[int, int, int]] = set()
        workers: list[tuple[int, int]] = []
        spare_hangs = False
        exit_linger_s = 0.0
        join_ready, join_late_s = False, 0.0
        for item in filter(None, (part.strip() for part in text.split(";"))):
            name, _, value = item.partition("=")
            try:
                if name == "device":
                    for spec in filter(None, value.split(",")):
                        parts = [int(p) for p in spec.split(":")]
                        if not 2 <= len(parts) <= 3:
                            raise ValueError(spec)
                        devices.add((parts[0], parts[1], parts[2] if len(parts) == 3 else 0))
                elif name == "worker":
                    for spec in filter(None, value.split(",")):
                        i, b = (int(p) for p in spec.split(":"))
                        workers.append((i, b))
                elif name == "spare" and value == "hang":
                    spare_hangs = True
                elif name == "exit" and value.startswith("linger:"):
                    exit_linger_s = float(value.removeprefix("linger:"))
                elif name == "join" and value == "ready":
                    join_ready = True
                elif name == "join" and value.startswith("late:"):
                    join_late_s = float(value.removeprefix("late:"))
                else:
                    raise ValueError(item)
            except ValueError:
                raise FznError(
                    f"{VARIABLE}: {item!r} is not a fault this solver knows",
                    fix="device=i:k[:s],...; worker=i:b,...; spare=hang; exit=linger:S; join=ready; join=late:S "
                    "(fzn_gpu/hooks.py)",
                ) from None
        return cls(frozenset(devices), tuple(workers), spare_hangs, exit_linger_s, join_ready, join_late_s)


PLAN = Plan()


def load() -> None:
    """PLAN from FZN_GPU_TEST_HOOKS where it is set (a test's run in a process of its own);
    left as it is otherwise (a test that set it in this process, or the empty plan)."""
    global PLAN
    text = settings.text("FZN_GPU_TEST_HOOKS")
    if text:
        PLAN = Plan.parse(text)


@contextlib.contextmanager
def inject(plan: Plan) -> Iterator[Plan]:
    """PLAN for the duration of a `with` block (tests in this process)."""
    global PLAN
    before, PLAN = PLAN, plan
    try:
        yield plan
    finally:
        PLAN = before


def device_fails(device: int, block: int, slice_no: int = 0) -> bool:
    """Device `device` fails here: at its `block`-th block (0: the dive or the root split),
    after its `slice_no`-th slice of it (0: before it starts)."""
    return (device, block, slice_no) in PLAN.devices


def failing_workers() -> dict[int, int]:
    """Cluster worker -> the block in the middle of which it exits."""
    return dict(PLAN.workers)


def spare_hangs() -> bool:
    """The solver server's spares never get ready."""
    return PLAN.spare_hangs


def exit_linger_s() -> float:
    """How long a run's process waits after its last step before it ends."""
    return PLAN.exit_linger_s


def join_ready() -> bool:
    """Complete search waits for every device's runner before it searches."""
    return PLAN.join_ready


def join_late_s() -> float:
    """How late the runners built behind the root split start."""
    return PLAN.join_late_s
