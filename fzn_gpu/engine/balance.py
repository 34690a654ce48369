"""PHACT's load balancing (../shared/papers/phact-multi-device-load-balancing.txt): the sub-search
spaces of one search handed to several devices in blocks sized by each device's measured speed,
one host thread per device, so that all of them finish together and a slow device never makes
the search slower.

Rules, as in the paper: a first calibration block of one sub-search space per work-item; then
half the remaining work times the device's rank (its share of the total speed); the tail
(less than two blocks' worth of every device's work-items) split by rank so that all finish
together; a GPU that would get fewer sub-search spaces than half its work-items stops and
leaves them to the others; a device predicted to finish everything in under a second takes it
all. A device that fails hands its block back to the pool: nothing is lost."""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field

from ..errors import FznError
from .paths import Paths

ALL_AT_ONCE_S = 1.0


@dataclass
class DeviceShare:
    """One device's part of the search, for the balancer and for `-s`."""
    index: int
    name: str
    is_gpu: bool
    items: int                     # work-items the device runs at once
    subs: int = 0                  # sub-search spaces it finished
    busy_s: float = 0.0
    blocks: int = 0
    done_at: float | None = None   # when it took no more work (time.monotonic)
    failed: str | None = None      # why it dropped out, if it did

    def speed(self) -> float | None:
        return self.subs / self.busy_s if self.subs and self.busy_s > 0 else None


class WorkPool:
    """The sub-search spaces not yet finished: handed out in blocks, taken back on a fault."""

    def __init__(self, paths: Paths, shares: list[DeviceShare]):
        self.paths = paths
        self.next = 0
        self.returned: list[Paths] = []
        self.shares = shares
        self.may_decline = True
        self.lock = threading.Lock()

    def remaining(self) -> int:
        return len(self.paths) - self.next + sum(len(p) for p in self.returned)

    def take(self, share: DeviceShare) -> Paths | None:
        with self.lock:
            if self.returned:                      # work a failed device left: first
                return self.returned.pop()
            size = self._block_size(share)
            if size <= 0:
                return None
            block = self.paths.block(self.next, self.next + size)
            self.next += size
            return block

    def give_back(self, block: Paths) -> None:
        with self.lock:
            self.returned.append(block)

    def _block_size(self, share: DeviceShare) -> int:
        left = len(self.paths) - self.next
        if left <= 0:
            return 0
        speed = share.speed()
        if speed is None:                          # calibration: one per work-item
            return min(left, share.items)
        if left / speed < ALL_AT_ONCE_S:
            return left
        live = [s for s in self.shares if s.failed is None and s.done_at is None]
        known = [s.speed() for s in live if s.speed() is not None]
        rank = speed / sum(known) if known else 1.0
        faster_left = any(s is not share and (s.speed() or 0) > speed for s in live)
        if self.may_decline and faster_left and share.is_gpu and rank * left < share.items / 2:
            return 0                               # too little to fill the GPU: leave it
        tail = left <= 2 * sum(s.items for s in live)
        size = math.ceil(rank * left) if tail else max(share.items, int(rank * left / 2))
        return min(left, max(1, size))


def injected_fault(share: DeviceShare) -> bool:
    """FZN_GPU_FAIL_DEVICE=i:k[,j:l] makes device i fail on its k-th block (tests of fault
    recovery)."""
    for spec in filter(None, os.environ.get("FZN_GPU_FAIL_DEVICE", "").split(",")):
        dev, _, block = spec.partition(":")
        if dev.isdigit() and int(dev) == share.index and share.blocks == int(block or 1):
            return True
    return False


@dataclass
class BalanceResult:
    finished: bool = True          # every sub-search space searched to the end
    shares: list[DeviceShare] = field(default_factory=list)


def balance(paths: Paths, shares: list[DeviceShare], search_block, deadline: float | None) -> BalanceResult:
    """Search every path on every device. `search_block(i, block) -> bool` searches one block
    on device i and says whether it finished (False: time limit or stop); it raises
    DeviceFault when the device failed, which hands the block back to the others."""
    pool = WorkPool(paths, shares)
    stop = threading.Event()
    errors: list[BaseException] = []

    def worker(share: DeviceShare) -> None:
        while not stop.is_set():
            block = pool.take(share)
            if block is None:
                break
            share.blocks += 1
            t0 = time.monotonic()
            try:
                if injected_fault(share):
                    raise DeviceFault(f"fault injected by FZN_GPU_FAIL_DEVICE in block {share.blocks}")
                finished = search_block(share.index, block)
            except DeviceFault as fault:
                share.failed = str(fault)
                pool.give_back(block)
                break
            except BaseException as err:            # a bug or a capacity error: stop everyone
                errors.append(err)
                stop.set()
                break
            share.busy_s += time.monotonic() - t0
            if not finished:
                stop.set()
                break
            share.subs += len(block)
        share.done_at = time.monotonic()

    # rounds: a device that fails after the others ran out of work leaves its block in the
    # pool, and the survivors start again on it
    while pool.remaining() and not stop.is_set():
        live = [s for s in shares if s.failed is None]
        if not live:
            raise FznError("every device failed: " + "; ".join(f"{s.name}: {s.failed}" for s in shares),
                           fix="choose other devices with --devices (see --list-devices)")
        for s in live:
            s.done_at = None
        threads = [threading.Thread(target=worker, args=(s,), name=f"fzn-gpu device {s.index}", daemon=True)
                   for s in live]
        before = pool.remaining()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        if pool.remaining() and pool.remaining() == before:
            pool.may_decline = False               # nobody took the rest: the next round must
    return BalanceResult(finished=not stop.is_set() and not pool.remaining(), shares=shares)


class DeviceFault(Exception):
    """A device could not go on (build or launch failure, lost device): its block goes back."""
