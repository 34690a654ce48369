"""PHACT's load balancing (../shared/papers/phact-multi-device-load-balancing.txt): the sub-search
spaces of one search shared by several devices, one host thread per device, so that all of
them finish together and a slow device never makes the search slower.

The device with the most work-items (the GPU) starts on the whole pool; the others take parts
of its unstarted rest between its slices. Part sizes follow the paper's rules: a first
calibration part of one sub-search space per work-item; then half the remaining work times
the device's rank (its share of the total speed); the tail (less than two parts' worth of every
device's work-items) split by rank so that all finish together. Fresh blocks from the pool
(once the lead device is gone) follow them too, and there a GPU that would get fewer sub-search
spaces than half its work-items leaves them to a faster device, and a device predicted to finish
everything in under a second takes it all. A device that fails hands what it kept back to
the pool: nothing is lost.

When no unstarted sub-search space is left anywhere, an idle device's wish reaches the busy one,
whose work-items re-split their searches (resplit.py): the donated paths go to the idle device.
Where the idle device is HAND_OVER_SPEEDUP times faster than the busy one and the busy one runs
the work-item kernel, the busy one hands over instead: each of its searches gives away all it
has left (every open level's right branch and the node it is at) and stops, and the device
leaves the search. A CPU beside a GPU took as long on a path as a GPU work-group, so its last
paths, given away one branch a search and slice, outlasted the GPU's whole share
(docs/bench/measurements.md, a slow device hands its search over). A failed device's block goes back
less what it gave away, so nothing is searched twice.

A device whose share of the search's node rate stays under MIN_NODE_SHARE once every device
has searched RATE_AFTER_S hands over the same way, busy or idle the others: a share of zero
in PHACT's ranking (a device whose searches cannot hand over gives its unstarted paths away
and ends the searches it runs). Beside a CPU a GPU's kernel ran slower for the same nodes, by
more than the few per cent of the nodes the CPU expanded on most counts, so there the CPU cost
more than it gave; on a count where it expands a tenth of them it pays; node rates
are known after a slice, where a device's first finished path can take seconds
(docs/bench/measurements.md, "A device whose node rate does not pay leaves", and "A slow
device hands its search over")."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .. import hooks, settings
from ..errors import FznError
from .faults import DeviceFault
from .paths import Paths
from .resplit import DONATE_EACH, RESPLIT_SLACK, idle_wish
from .threads import quick_gil_handover

ALL_AT_ONCE_S = 1.0
# a device under this share of all live devices' node rate hands its search over: a CPU kept to
# the end slows the GPU's kernel, and costs its start and its tail besides; the line is where
# counts with the CPU kept stopped being faster (docs/bench/measurements.md, "A count where the
# CPU pays")
MIN_NODE_SHARE = 0.10
# the same for a device whose searches cannot hand over (a float model's): its last blocks hold
# the search's end, and a float count with the CPU kept over the line above was slower (same)
MIN_NODE_SHARE_HELD = 0.25
RATE_AFTER_S = 0.25  # a device's node rate is judged once it and every other has searched this long
# an idle device this many times faster takes all a busy one has left (FZN_GPU_HAND_OVER_SPEEDUP
# for tests and tuning runs; 0: any idle device)
HAND_OVER_SPEEDUP = 4


@dataclass
class DeviceShare:
    """One device's part of the search, for the balancer and for `-s`."""

    index: int
    name: str
    is_gpu: bool
    items: int  # work-items the device runs at once
    subs: int = 0  # sub-search spaces it finished
    busy_s: float = 0.0
    blocks: int = 0
    done_at: float | None = None  # when it took no more work (time.monotonic)
    failed: str | None = None  # why it dropped out, if it did
    can_hand_over: bool = False  # its searches can give all they have left away (the work-item kernel)
    retired: bool = False  # it handed its work over to a faster device and takes no more
    done_nodes: int = 0  # nodes of its finished blocks, as reported while the balancer counted them
    block_nodes: int = 0  # nodes of its running block so far (BlockSplit.searched)
    # when it first reported its nodes (the end of its first slice, time.monotonic), and how many
    rate_at: float | None = None
    rate_base: int = 0
    node_share: float | None = None  # its share of the node rate when judged (MIN_NODE_SHARE)

    def speed(self) -> float | None:
        return self.subs / self.busy_s if self.subs and self.busy_s > 0 else None

    def searched(self, nodes: int, now: float) -> None:
        """Its running block's nodes so far, after a slice."""
        self.block_nodes = nodes
        if self.rate_at is None:
            self.rate_at, self.rate_base = now, self.done_nodes + nodes

    def node_rate(self, now: float) -> float | None:
        """Nodes a second since the end of its first slice, once that is RATE_AFTER_S ago. Not
        from its first block's start: a CPU's first launch may spend seconds in PoCL's compile
        (a float model's whose program was not launched ahead), and a rate over them judged a
        CPU that paid afterwards at 0, a verdict then kept for RECHECK_RUNS searches."""
        if self.rate_at is None or now - self.rate_at < RATE_AFTER_S:
            return None
        return (self.done_nodes + self.block_nodes - self.rate_base) / (now - self.rate_at)


@dataclass
class RunningBlock:
    """A block on a device: it keeps its first `n` paths; work-items have taken `started`."""

    paths: Paths
    n: int
    started: int = 0
    wanted: DeviceShare | None = None  # an idle device asking for part of the unstarted rest
    promised: int = 0  # donations asked for it at the last slice
    t0: float = field(default_factory=time.monotonic)
    sources: list[np.ndarray] = field(default_factory=list)  # donations: which path gave each
    given: list[Paths] = field(default_factory=list)
    unpaid: bool = False  # it hands over because its node rate does not pay (WorkPool._does_not_pay)
    handing: bool = False  # its searches hand all their work over (WorkPool.shrink)

    def kept(self) -> Paths:
        return self.paths if self.n == len(self.paths) else self.paths.block(0, self.n)

    def left_to_search(self) -> Paths:
        """What the block holds less what its searches gave away (for a failed device)."""
        if not self.sources:
            return self.kept()
        return self.kept().without(np.concatenate(self.sources), Paths.concat(self.given))


class WorkPool:
    """The sub-search spaces not yet finished: handed out in blocks, taken back on a fault.
    When none are left, an idle device takes a rank-sized part of the unstarted paths of a
    running block (the owner gives them up at its next slice): sub-search spaces differ in size
    by orders of magnitude, so speeds measured on early blocks mislead, and without this the
    fast device waits for the slow one's last block."""

    def __init__(
        self, paths: Paths, shares: list[DeviceShare], stop: threading.Event | None = None, lead_all: bool = True
    ):
        """`lead_all`: the lead device starts on the whole pool (_lead); False where running
        blocks cannot give paths up between slices (a cluster's workers: fzn_gpu/cluster/)."""
        self.paths = paths
        self.lead_all = lead_all
        self.next = 0
        self.returned: list[Paths] = []
        # what a device whose node rate does not pay handed over: fed into a busy device's
        # running block at its next slice (BlockSplit.more), taken as a block otherwise
        self.handed: list[Paths] = []
        self.shares = shares
        self.may_decline = True
        self.hand_over_speedup = settings.integer("FZN_GPU_HAND_OVER_SPEEDUP", HAND_OVER_SPEEDUP)
        self.counts_nodes = len(shares) > 1
        self.running: dict[int, RunningBlock] = {}
        self.stop = stop or threading.Event()
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)

    def remaining(self) -> int:
        return len(self.paths) - self.next + sum(len(p) for p in self.returned + self.handed)

    def take(self, share: DeviceShare) -> RunningBlock | None:
        with self.lock:
            while not self.stop.is_set():
                block = self._fresh(share)
                if block is False:
                    return None  # declined
                if block is None:  # nothing left: ask a running block for its rest
                    owners = [rb for i, rb in self.running.items() if i != share.index]
                    if not owners:
                        return None
                    owner = max(owners, key=lambda rb: rb.n - rb.started)
                    if owner.wanted is None:
                        owner.wanted = share  # it gives unstarted paths, or re-splits
                    self.changed.wait(timeout=0.25)
                    continue
                rb = RunningBlock(block, len(block))
                self.running[share.index] = rb
                return rb
            return None

    def _fresh(self, share: DeviceShare) -> Paths | None | Literal[False]:
        if self.returned:  # work given back (fault, or for an idle device)
            return self.returned.pop()
        if self.handed:
            return self.handed.pop()
        left = len(self.paths) - self.next
        if left <= 0:
            return None
        size = self._block_size(share)
        if size <= 0:
            return False
        block = self.paths.block(self.next, self.next + size)
        self.next += size
        return block

    def shrink(self, index: int, started: int) -> int:
        """Between two slices of device `index`: how many of its block's paths it keeps. An
        idle device gets the donations asked for it, or a PHACT-sized part of the unstarted rest."""
        with self.lock:
            rb = self.running[index]
            rb.started = started
            unstarted = rb.n - started
            size = 0
            holder = next(s for s in self.shares if s.index == index)
            if rb.wanted is not None and not rb.handing and self._hands_over(holder, rb.wanted):
                rb.handing = holder.retired = True
            if not rb.handing and holder.node_share is None and self._does_not_pay(holder):
                rb.handing = rb.unpaid = holder.retired = True
            if rb.handing:  # all it holds goes: unstarted paths, and each hand-over's records
                size = unstarted
            elif rb.wanted is not None and rb.promised and unstarted:
                size = min(rb.promised, unstarted)
            elif rb.wanted is not None and unstarted >= 2:
                size = self._steal_size(rb.wanted, unstarted)
            rb.promised = 0
            if size:
                keep = rb.n - size
                # a copy: the phase's next donations are written where these lay (Paths.prefix)
                (self.handed if rb.unpaid else self.returned).append(rb.paths.block(keep, rb.n).copy())
                rb.n = keep
                rb.wanted = None
                self.changed.notify_all()
            return rb.n

    def take_handed(self, index: int, longest: int) -> Paths | None:
        """For device `index`'s running block, between its slices: what a device that did not
        pay handed over, the blocks of at most `longest` decisions (what its phase's buffers
        hold; a longer one waits to be taken as a block). Its searches start on them after its
        unstarted paths, as part of the block (a failed device gives them back too); a block of
        their own would start narrow, a few hundred searches on a GPU of thousands."""
        with self.lock:
            rb = self.running.get(index)
            fits = [p for p in self.handed if p.max_decisions() <= longest]
            if rb is None or rb.handing or not fits:
                return None
            self.handed = [p for p in self.handed if p.max_decisions() > longest]
            block = Paths.concat(fits)
            rb.paths = rb.kept().extend(block)
            rb.n = len(rb.paths)
            return block

    def handing(self, index: int) -> bool:
        with self.lock:
            return self.running[index].handing

    def _hands_over(self, holder: DeviceShare, thief: DeviceShare) -> bool:
        """The holder's searches give all they have left to the idle thief, and it leaves the
        search: it can, and the thief is HAND_OVER_SPEEDUP times faster (both measured)."""
        if not holder.can_hand_over:
            return False
        mine, theirs = self._live_speed(holder), self._live_speed(thief)
        return mine is not None and theirs is not None and theirs >= self.hand_over_speedup * mine

    def judging(self) -> bool:
        """Whether some device still awaits its node-rate verdict, beside another still
        searching: until then every device reports its nodes after each slice (a read of its
        counters)."""
        live = [s for s in self.shares if s.failed is None and not s.retired and s.done_at is None]
        return self.counts_nodes and len(live) > 1 and any(s.node_share is None for s in live)

    def _does_not_pay(self, holder: DeviceShare) -> bool:
        """Whether the holder's share of the live devices' node rate, measured once every one
        has searched RATE_AFTER_S, is under MIN_NODE_SHARE (MIN_NODE_SHARE_HELD where its
        searches cannot hand over). Sets `holder.node_share` once judged: the verdict is taken
        once. One that does not pay gives its unstarted paths away and takes no more (shrink);
        its searches hand what they have left over too where they can (the work-item kernel
        without float points), and otherwise end where they are (beside a GPU's work-item
        kernel, a float model's CPU searching to the end of its blocks held the count's end:
        docs/bench/measurements.md)."""
        now = time.monotonic()
        live = [s for s in self.shares if s.failed is None and not s.retired and s.done_at is None]
        if len(live) < 2:
            return False
        rates = [s.node_rate(now) for s in live]
        if any(r is None for r in rates):
            return False
        total = sum(rates)  # type: ignore[arg-type]
        mine = holder.node_rate(now) or 0.0
        holder.node_share = mine / total if total > 0 else 1.0
        return holder.node_share < node_share_line(holder.can_hand_over)

    def donations_wanted(self, index: int, idle_items: int, unstarted: int, items: int) -> int:
        """Donations device `index` asks of its busy work-items: for its own idle ones, and one
        per work-item of an idle device waiting on it."""
        with self.lock:
            rb = self.running[index]
            own = idle_wish(idle_items, unstarted, items)
            if rb.wanted is not None and unstarted < 2:
                rb.promised = rb.wanted.items
            return own + rb.promised

    def donated(self, index: int, sources: np.ndarray, paths: Paths) -> None:
        """Device `index`'s block grew by donations (the tail of `paths`)."""
        with self.lock:
            rb = self.running[index]
            rb.sources.append(sources)
            rb.given.append(paths.block(rb.n, len(paths)).copy())  # as shrink's: Paths.prefix
            rb.paths, rb.n = paths, len(paths)

    def lead_share(self) -> DeviceShare:
        with self.lock:
            return self._lead()

    def _lead(self) -> DeviceShare:
        """The device with the most work-items (the GPU): it takes the whole pool and pulls
        sub-search spaces one by one through its kernel's counter, with no block ends where
        its tens of thousands of work-items would drain; the others take rank-sized parts of
        its unstarted rest between its slices."""
        live = [s for s in self.shares if s.failed is None]
        return max(live, key=lambda s: (s.items, -s.index))

    def _live_speed(self, share: DeviceShare) -> float | None:
        """Sub-search spaces per second, the running block's progress included."""
        rb = self.running.get(share.index)
        if rb is None:
            return share.speed()
        busy = share.busy_s + time.monotonic() - rb.t0
        done = share.subs + rb.started
        return done / busy if done and busy > 0 else share.speed()

    def _steal_size(self, thief: DeviceShare, unstarted: int) -> int:
        """PHACT's block rules applied to the unstarted rest of a running block: one per
        work-item to calibrate, then half of it times the thief's rank, and in the tail the
        thief's rank of it, so both finish together."""
        speed = thief.speed()
        if speed is None:
            return max(1, min(thief.items, unstarted // 2))
        live = [s for s in self.shares if s.failed is None]
        total = sum(v for v in map(self._live_speed, live) if v)
        rank = speed / total if total else 0.5
        return max(1, min(unstarted - 1, by_rank(rank, unstarted, live)))

    def feed(self, index: int) -> Paths | None:
        """Fresh paths for device `index`'s running block, which can take them while it runs (a
        cluster worker: fzn_gpu/cluster/): paths given back first, else one per work-item while
        many are left, and a share of the rest when few are (the rest over twice the live
        devices, guided self-scheduling: the last paths go out in small parts, so all finish
        together). None: none left. The caller confirms with `fed`, or gives them back."""
        with self.lock:
            if self.returned:
                return self.returned.pop()
            left = len(self.paths) - self.next
            if left <= 0:
                return None
            share = next(s for s in self.shares if s.index == index)
            live = sum(1 for s in self.shares if s.failed is None and s.done_at is None)
            size = max(1, min(share.items, math.ceil(left / (2 * max(live, 1)))))
            block = self.paths.block(self.next, self.next + size)
            self.next += size
            return block

    def fed(self, index: int, block: Paths) -> None:
        """Device `index`'s running block took `block` (feed): it is searched there, and goes
        back to the pool with the rest of the block if the device fails."""
        with self.lock:
            rb = self.running[index]
            rb.paths = rb.kept().extend(block)  # into spare room: feeds come a few a second
            rb.n = len(rb.paths)

    def unfed(self, block: Paths) -> None:
        """Paths from `feed` that no block took: back to the pool."""
        with self.lock:
            self.returned.append(block)
            self.changed.notify_all()

    def finish(self, index: int) -> RunningBlock:
        with self.lock:
            rb = self.running.pop(index)
            self.changed.notify_all()
            return rb

    def give_back(self, index: int) -> None:
        """The device failed: what it kept of its block goes back to the others."""
        with self.lock:
            rb = self.running.pop(index)
            left = rb.left_to_search()
            if len(left):
                self.returned.append(left)
            self.changed.notify_all()

    def _block_size(self, share: DeviceShare) -> int:
        left = len(self.paths) - self.next
        if left <= 0:
            return 0
        speed = share.speed()
        if self.next == 0 and self.lead_all and self._lead() is share:
            return left  # the lead device starts on everything
        if speed is None:  # calibration: one per work-item
            return min(left, share.items)
        if left / speed < ALL_AT_ONCE_S:
            return left
        live = [s for s in self.shares if s.failed is None and s.done_at is None]
        known = [v for v in (s.speed() for s in live) if v is not None]
        rank = speed / sum(known) if known else 1.0
        faster_left = any(s is not share and (s.speed() or 0) > speed for s in live)
        if self.may_decline and faster_left and share.is_gpu and rank * left < share.items / 2:
            return 0  # too little to fill the GPU: leave it
        size = by_rank(rank, left, live)
        if not in_tail(left, live):
            size = max(share.items, size)  # a block fills the device at least once
        return min(left, max(1, size))


def node_share_line(can_hand_over: bool) -> float:
    """The share of the node rate under which a device does not pay (FZN_GPU_MIN_NODE_SHARE,
    where set, for every device)."""
    if settings.is_set("FZN_GPU_MIN_NODE_SHARE"):
        return settings.number("FZN_GPU_MIN_NODE_SHARE", MIN_NODE_SHARE)
    return MIN_NODE_SHARE if can_hand_over else MIN_NODE_SHARE_HELD


def in_tail(left: int, live: list[DeviceShare]) -> bool:
    """Under two parts' worth of every live device's work-items are left."""
    return left <= 2 * sum(s.items for s in live)


def by_rank(rank: float, left: int, live: list[DeviceShare]) -> int:
    """PHACT's part for a device of this rank: half the remaining work times the rank, or in
    the tail its rank of it all, so that every device finishes together."""
    return math.ceil(rank * left) if in_tail(left, live) else int(rank * left / 2)


def balance(
    paths: Paths,
    shares: list[DeviceShare],
    search_block,
    lead_all: bool = True,
    join: Callable[[DeviceShare], bool] | None = None,
) -> bool:
    """Search every path on every device; True when every one was searched to the end (not
    stopped by the time limit or the solution limit). `search_block(i, paths, resplit) -> bool` searches
    one block on device i, with a BlockSplit as its Resplit between slices (runner.run_phase), and
    says whether it finished (False: time limit or stop); it raises DeviceFault when the
    device failed, which hands the block back to the others. `lead_all`: as WorkPool's.
    `join(share)`, on each device's thread before its first block, readies a device that joins
    late (its runner built behind the split: joining.py); False leaves it out (`share.failed`
    says why), and the others search without it."""
    stop = threading.Event()
    pool = WorkPool(paths, shares, stop, lead_all)
    errors: list[BaseException] = []

    def worker(share: DeviceShare) -> None:
        if share.blocks == 0 and join is not None:
            try:
                joined = join(share)
            except BaseException as err:  # a bug: stop everyone
                errors.append(err)
                stop.set()
                joined = False
            if not joined:
                share.done_at = time.monotonic()
                with pool.lock:
                    pool.changed.notify_all()
                return
        while not stop.is_set():
            rb = pool.take(share)
            if rb is None:
                break
            share.blocks += 1
            t0 = time.monotonic()
            try:
                if hooks.device_fails(share.index, share.blocks):
                    raise DeviceFault(f"fault injected by a test in block {share.blocks}")
                finished = search_block(share.index, rb.paths, BlockSplit(pool, share))
            except DeviceFault as fault:
                share.failed = str(fault)
                pool.give_back(share.index)
                break
            except BaseException as err:  # a bug or a capacity error: stop everyone
                errors.append(err)
                stop.set()
                break
            share.busy_s += time.monotonic() - t0
            share.subs += pool.finish(share.index).n
            share.done_nodes, share.block_nodes = share.done_nodes + share.block_nodes, 0
            if not finished:
                stop.set()
                break
            if share.retired:
                break
        share.done_at = time.monotonic()
        with pool.lock:
            pool.changed.notify_all()

    # rounds: a device that fails after the others ran out of work leaves its block in the
    # pool, and the survivors start again on it
    while pool.remaining() and not stop.is_set():
        live = [s for s in shares if s.failed is None]
        if live and all(s.retired for s in live):  # the devices it handed over to failed
            for s in live:
                s.retired = False
        live = [s for s in live if not s.retired]
        if not live:
            raise FznError(
                "every device failed: " + "; ".join(f"{s.name}: {s.failed}" for s in shares),
                fix="choose other devices with --devices (see --list-devices)",
            )
        for s in live:
            s.done_at = None
        threads = [
            threading.Thread(target=worker, args=(s,), name=f"fzn-gpu device {s.index}", daemon=True) for s in live
        ]
        before = pool.remaining()
        with quick_gil_handover():
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        if errors:
            raise errors[0]
        if pool.remaining() and pool.remaining() == before:
            pool.may_decline = False  # nobody took the rest: the next round must
    return not stop.is_set() and not pool.remaining()


class BlockSplit:
    """The balancer's say over device i's running block between its slices (a Resplit)."""

    def __init__(self, pool: WorkPool, share: DeviceShare) -> None:
        self.pool, self.share, self.index = pool, share, share.index
        self.slices = 0
        self.each = DONATE_EACH
        self.may_hand_over = share.can_hand_over
        # the lead's phase may be fed what a slow device hands over: its records, at most a
        # phase's donated paths deep (RESPLIT_SLACK) below the pool's longest path
        lead = pool.counts_nodes and share is pool.lead_share()
        self.longest = pool.paths.max_decisions() + RESPLIT_SLACK if lead else 0

    def more(self) -> Paths | None:
        return self.pool.take_handed(self.index, self.longest) if self.longest else None

    def hand_over(self) -> bool:
        return self.pool.handing(self.index)

    def keep(self, started: int, n: int) -> int:
        self.slices += 1
        if hooks.device_fails(self.share.index, self.share.blocks, self.slices):
            raise DeviceFault(f"fault injected by a test after slice {self.slices} of block {self.share.blocks}")
        return self.pool.shrink(self.index, started)

    def wanted(self, idle_items: int, unstarted: int, items: int) -> int:
        return self.pool.donations_wanted(self.index, idle_items, unstarted, items)

    def donated(self, sources: np.ndarray, paths: Paths) -> None:
        self.pool.donated(self.index, sources, paths)

    def counting(self) -> bool:
        return self.pool.judging()

    def searched(self, nodes: int) -> None:
        self.share.searched(nodes, time.monotonic())
