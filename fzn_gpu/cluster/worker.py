"""One fzn-gpu worker of a Ray cluster (docs/ARCHITECTURE.md, "A search on a Ray cluster"): a
long-lived process on a node that searches the blocks of sub-search spaces the driver hands it,
on that node's devices, through the same complete search and PHACT balancer as one machine.

The driver (cluster/driver.py) makes this class a Ray actor; nothing here imports Ray, so the
worker runs, and is tested, as a plain object as well. A block's satisfaction solutions and
its count come back together at the block's end: a worker that dies midway returns nothing,
and its block is searched again elsewhere, so nothing is counted twice or lost. Improving
solutions of an optimisation stream out through `poll`, which also brings the best bound any
node has found (a repeat of an improvement is no improvement, so nothing waits)."""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass, replace

import numpy as np

from ..engine.complete import CompleteSearch
from ..engine.incumbent import Incumbent, Outcome
from ..engine.pack import DeviceModel
from ..engine.paths import Paths
from ..engine.resplit import SelfSplit
from ..flatzinc.model import Model
from ..options import SolveOptions

FAIL_EXIT = 71  # the exit status of a worker that a test stops (hooks: worker=i:b)


@dataclass
class WorkerInfo:
    """What a worker tells the driver once its devices and kernels are ready."""

    host: str
    devices: list[str]
    is_gpu: bool
    items: int  # work-items its devices run at once
    target: int  # sub-search spaces it wants for its share of the root split


@dataclass
class BlockResult:
    """A searched block: whether it was searched to the end (False: the time limit, the
    solution limit or a cancel), its solutions (satisfaction; rows as the kernels write them),
    how many it counted (--count-only) and the nodes it took."""

    finished: bool
    rows: np.ndarray | None
    counted: int
    nodes: int
    error: str | None = None


class _FedSplit(SelfSplit):
    """A worker's one device searching a block that its driver extends while it runs (`feed`):
    the paths fed in join the phase at its next slice, so the device never drains between
    blocks; between slices it notes how many paths wait unstarted, for the driver to feed more
    before they run out."""

    def __init__(self, longest: int, unstarted: int) -> None:
        super().__init__()
        self.longest = longest
        self._lock = threading.Lock()
        self._fed: list[Paths] = []
        self.unstarted = unstarted
        self.closed = False

    def feed(self, paths: Paths) -> bool:
        """Whether the block took `paths` (not once it has ended: `close`)."""
        with self._lock:
            if self.closed:
                return False
            self._fed.append(paths)
            self.unstarted += len(paths)
            return True

    def close(self) -> Paths | None:
        """At the end of a phase: the paths fed in after its last slice, to search in one
        more phase; or, where none came, None, and the block takes no more."""
        with self._lock:
            fed, self._fed = self._fed, []
            self.closed = not fed
        return Paths.concat(fed) if fed else None

    def more(self) -> Paths | None:
        with self._lock:
            fed, self._fed = self._fed, []
        return Paths.concat(fed) if fed else None

    def keep(self, started: int, n: int) -> int:
        with self._lock:
            self.unstarted = n - started + sum(map(len, self._fed))
        return n


class _NodeSearch(CompleteSearch):
    """Complete search over blocks handed in from outside, on this node's devices. Solutions
    are kept for the driver instead of printed: a satisfaction block's until its end, an
    optimisation's improvements in an outbox that `poll` empties."""

    def __init__(self, model: Model, dm: DeviceModel, devices, opts: SolveOptions):
        super().__init__(model, dm, devices, opts, report=lambda values, objective: None)
        self.incumbent = None  # the driver's incumbent prints; here only the bound it sends counts
        self.remote_bound: int | None = None
        self.block_rows: list[np.ndarray] = []  # a satisfaction block's solutions
        self.outbox: list[np.ndarray] = []
        self.fail_at_slice = False
        self.split: _FedSplit | None = None  # the running block's, where one device searches it

    def _search_all(self, paths: Paths, deadline: float | None) -> bool:
        """One device: a phase that the driver can extend (_FedSplit); several: PHACT's balancer
        between them, over the block as it came."""
        if len(self.runners) > 1 or self.split is None:
            return super()._search_all(paths, deadline)
        r, split = self.runner, self.split
        while True:
            finished, _ = r.run_phase(
                paths, 0, False, self._on_slice(r), deadline, count_only=self.count_only, resplit=split
            )
            self.counted += r.phase_solutions if self.count_only else 0
            if not finished:  # the time or solution limit, or a cancel: the search ends here
                split.close()
                return False
            late = split.close()  # paths fed in after the phase's last slice
            if late is None:
                return True
            paths = late

    def _take_locked(self, sols: np.ndarray | None) -> bool:
        if sols is not None and len(sols):
            if self.optimising:
                self.outbox.append(sols)
            else:
                if self.limit is not None:
                    sols = sols[: max(0, self.limit - self.outcome.solutions)]
                self.outcome.solutions += len(sols)
                if len(sols):
                    self.block_rows.append(sols)
        return self._more()

    def _more(self) -> bool:
        if self.fail_at_slice:  # a test's fault (hooks: worker=i:b): the process dies in the middle of a block
            os._exit(FAIL_EXIT)
        return super()._more()

    def _share_bound(self, runner) -> None:
        super()._share_bound(runner)
        bound = self.remote_bound
        if bound is not None and runner.best() > bound:
            runner.set_best(bound)


class _NodeIncumbent(Incumbent):
    """A worker's LNS incumbent: the improvements its islands find wait in an outbox for the
    driver (`lns_poll`), which prints them through the run's incumbent; the run's best, sent
    back by the driver (source "driver"), becomes its islands' starting point like any other
    improvement, and is not sent back."""

    def __init__(self, obj_sense: int):
        super().__init__(Outcome(), obj_sense, report=lambda values, objective: None)
        self.outbox: list[np.ndarray] = []

    def offer_gain(self, sols: np.ndarray, source: str = "lns") -> tuple[int, int]:
        """Incumbent.offer_gain (offer() goes through it too), the improvements into the outbox."""
        before = self.bound()
        printed, gain = super().offer_gain(sols, source)
        if printed and source != "driver":
            better = sols if before is None else sols[sols[:, 0] < before]
            with self._sources_lock:
                self.outbox.append(better.copy())
        return printed, gain

    def take(self) -> np.ndarray | None:
        with self._sources_lock:
            rows, self.outbox = self.outbox, []
        return np.concatenate(rows) if rows else None


class ClusterWorker:
    """A Ray actor's body: the model, its devices' runners, and one block at a time. `poll`,
    `cancel` and `info` answer while a block runs (the actor takes several calls at once)."""

    def __init__(self, model: Model, dm: DeviceModel, opts: SolveOptions, index: int, fail_block: int = 0):
        """`fail_block` > 0: the process exits after the first slice of its block of that
        number (hooks: worker=i:b, for tests of a worker dying mid-search)."""
        from ..runtime.device import select_devices

        self.index = index
        self.fail_block = fail_block
        self.blocks = 0
        self._lock = threading.Lock()
        self.model, self.dm, self.opts = model, dm, opts
        self.devices = devices = select_devices(_device_spec(opts.devices), None)
        self.search = _NodeSearch(model, dm, devices, replace(opts, verbose=False))
        self.lns_incumbent: _NodeIncumbent | None = None
        self.lns_stopped = False
        self.search._start_other_devices()
        runners = self.search.runners
        self._info = WorkerInfo(
            host=socket.gethostname(),
            devices=[r.device.name for r in runners],
            is_gpu=any(r.device.is_gpu for r in runners),
            items=sum(r.max_items for r in runners),
            target=sum(r.tuning.subs_per_item * r.max_items for r in runners),
        )

    def info(self) -> WorkerInfo:
        return self._info

    def search_block(
        self,
        ptr: np.ndarray,
        data: np.ndarray,
        root: tuple[np.ndarray, ...],
        seconds: float | None,
        limit: int | None,
        bound: int | None,
        longest: int = 0,
    ) -> BlockResult:
        """Search the paths (CSR arrays) from the driver's propagated root, for at most
        `seconds`, stopping at `limit` solutions (satisfaction), with the best bound so far.
        Paths fed in while it runs (`feed`, at most `longest` decisions each) join the block."""
        s = self.search
        with self._lock:
            block = Paths(ptr, data)
            s.split = _FedSplit(max(longest, block.max_decisions()), len(block)) if len(s.runners) == 1 else None
            self.blocks += 1
            s.outcome = Outcome()
            s.counted = 0
            s.block_rows = []
            s.limit = limit
            s.remote_bound = bound
            s.cancel.clear()
            s.fail_at_slice = self.fail_block == self.blocks
        for r in s.runners:
            r.root_lb, r.root_ub, r.root_bits, r.root_fb = (a.copy() for a in root)
        nodes_before = sum(r.stats.nodes for r in s.runners)
        deadline = None if seconds is None else time.monotonic() + max(0.0, seconds)
        finished = s._search_all(block, deadline)
        with s._lock:
            rows = np.concatenate(s.block_rows) if s.block_rows else None
            s.block_rows = []
            return BlockResult(
                finished=finished and not s.outcome.stopped and not s.cancel.is_set(),
                rows=rows,
                counted=s.counted,
                nodes=sum(r.stats.nodes for r in s.runners) - nodes_before,
                error=s.outcome.error,
            )

    def poll(self, bound: int | None) -> tuple[np.ndarray | None, int | None]:
        """An optimisation's improving solutions since the last poll (rows), after taking in
        the best bound any node has found; and how many paths of the running block wait
        unstarted (None: the block cannot take more, its devices being several)."""
        s = self.search
        with s._lock:
            if bound is not None and (s.remote_bound is None or bound < s.remote_bound):
                s.remote_bound = bound
            rows = np.concatenate(s.outbox) if s.outbox else None
            s.outbox = []
        split = s.split
        return rows, (split.unstarted if split is not None else None)

    def feed(self, ptr: np.ndarray, data: np.ndarray) -> bool:
        """More paths for the running block; False where it cannot take them (its devices are
        several, or it has ended): the driver then keeps them for another block."""
        split = self.search.split
        return split is not None and split.feed(Paths(ptr, data))

    def lns(self, seconds: float | None) -> dict[str, int]:
        """LNS islands on this worker's devices (engine/lns.py, each device diving for a first
        solution, then stepping from the best any node has found) for at most `seconds`, or
        until `lns_stop`; its steps, improving steps, and whether its dive explored the whole
        tree (`complete`: the best it holds is optimal, or none exists). Each worker draws from
        a seed of its own, so that the nodes' islands explore different neighbourhoods."""
        from ..engine.lns import LnsSearch

        with self._lock:
            incumbent = self.lns_incumbent = _NodeIncumbent(self.dm.obj_sense)
            incumbent.stopped = self.lns_stopped
        opts = replace(self.opts, seed=self.opts.seed * 7919 + self.index + 1)
        lns = LnsSearch(self.model, self.dm, self.devices, opts, None, self.model.solve.lns, incumbent=incumbent)
        lns.run(None if seconds is None else time.monotonic() + max(0.0, seconds))
        return {
            "steps": sum(isl.steps for isl in lns.islands),
            "improving": sum(isl.improving_steps for isl in lns.islands),
            "complete": int(lns.outcome.complete),
        }

    def lns_poll(self, best: np.ndarray | None) -> np.ndarray | None:
        """The improvements this worker's islands found since the last poll (rows: objective,
        values), after taking in the run's best (a row) where the driver sends one."""
        incumbent = self.lns_incumbent
        if incumbent is None:
            return None
        if best is not None:
            incumbent.offer(best[None, :], "driver")
        return incumbent.take()

    def lns_stop(self) -> None:
        """The islands end at their next step or slice (or at once, if they have not begun)."""
        with self._lock:
            self.lns_stopped = True
            if self.lns_incumbent is not None:
                self.lns_incumbent.stopped = True

    def cancel(self) -> None:
        """The running block ends at its next slice (the driver has what it needs)."""
        self.search.cancel.set()


def _device_spec(spec: str) -> str:
    """The devices a worker opens: those the run names, or, where Ray gave this worker GPUs of
    its node (one worker per GPU), those GPUs alone, by their place among the node's OpenCL GPUs
    (NVIDIA's OpenCL also lists only the CUDA_VISIBLE_DEVICES that Ray sets)."""
    ids = _ray_gpu_ids()
    if not ids:
        return spec
    from ..runtime.device import all_devices

    everything = list(all_devices())
    gpus = [i for i, d in enumerate(everything) if d.is_gpu]
    if len(gpus) <= len(ids):
        return "gpu"
    return ",".join(str(gpus[int(g)]) for g in ids if int(g) < len(gpus)) or "gpu"


def _ray_gpu_ids() -> list:
    try:
        import ray

        return list(ray.get_gpu_ids()) if ray.is_initialized() else []
    except ImportError:
        return []
