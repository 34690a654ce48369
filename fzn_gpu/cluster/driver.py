"""The driver's side of a search on a Ray cluster (docs/ARCHITECTURE.md, "A search on a Ray
cluster"): the process MiniZinc started parses, lowers and splits the root as on one machine,
then hands blocks of sub-search spaces to workers (cluster/worker.py), one per GPU of each
node and one per node without a GPU, through the same PHACT balancer that shares a search
between the devices of one machine (engine/balance.py): each worker counts as one device whose
work-items are those of its node's devices, and a worker that dies hands its block back to the
others.

Between a block's start and its end the driver polls its worker every poll_s(): an
optimisation's improving solutions come back and print through the run's incumbent, the best
bound goes out to the worker, which prunes with it at its next slice, and a block whose
unstarted paths run low is fed more from the pool (WorkPool.feed), so that the worker's device
never drains before the pool is empty."""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import exiting, hooks, settings
from ..engine.balance import DeviceShare, WorkPool, balance
from ..engine.faults import DeviceFault
from ..engine.incumbent import Incumbent
from ..errors import FznError
from ..flatzinc.model import Model
from ..options import SolveOptions
from . import access
from .worker import ClusterWorker, WorkerInfo

if TYPE_CHECKING:
    from ..engine.complete import CompleteSearch
    from ..engine.pack import DeviceModel
    from ..engine.paths import Paths

# the driver polls each running block this often (FZN_GPU_CLUSTER_POLL_MS for tests and tuning)
POLL_MS = 50


def poll_s() -> float:
    return settings.integer("FZN_GPU_CLUSTER_POLL_MS", POLL_MS) / 1000.0


INT_MAX = 2**31 - 1  # a runner's best() where it has none
INSTALL_FIX = "install it with `pip install 'fzn-gpu[cluster]'`, then start a cluster with `ray start --head`"
REACH_FIX = (
    "start a cluster with `ray start --head` (and `ray start --address HEAD:6379` on the other nodes), "
    "or give --cluster auto for a private Ray instance on this machine"
)


def import_ray() -> Any:
    """Ray, or the error that says how to install it (an optional extra)."""
    _token_auth_where_a_token_is()  # read once, as Ray loads
    try:
        import ray
    except ImportError:
        raise FznError("--cluster needs Ray, which is not installed", fix=INSTALL_FIX) from None
    return ray


def connect(ray: Any, address: str) -> None:
    """Join the cluster at `address` (`auto`: this user's own cluster on this machine, else a
    private Ray instance started here for this run; cluster/access.py says how each is
    trusted). The connection ends with the run (`exiting`), and with it the run's workers and a
    private instance."""
    if ray.is_initialized():
        return
    private = None
    try:
        own = access.own_cluster_address() if address == "auto" else address
        if own is not None:
            access.join(ray, own)
        else:
            private = access.start_private(ray)
    except FznError:
        raise
    except Exception as err:  # noqa: BLE001 - Ray reports an unreachable cluster in several ways
        raise FznError(f"cannot join the Ray cluster at {address}: {err}", fix=REACH_FIX) from None

    _keep_stdout_for_solutions()

    def leave(_code: int) -> None:
        ray.shutdown()

    exiting.on_exit(leave)
    if private is not None:
        access.remove_later(private)


def _token_auth_where_a_token_is() -> None:
    """A cluster started by `ray start` on a machine with a Ray token (RAY_AUTH_TOKEN,
    RAY_AUTH_TOKEN_PATH, ~/.ray/auth_token) requires it, but a driver joining it by address sends
    it only in token mode: the mode `ray start` itself takes where a token exists, unless
    RAY_AUTH_MODE says otherwise (read once, as Ray loads)."""
    if not settings.is_set("RAY_AUTH_MODE") and access.token_present():
        settings.export("RAY_AUTH_MODE", "token")


def _keep_stdout_for_solutions() -> None:
    """Ray prints the cluster's error messages (a worker that died, say) on the driver's
    standard output, which is the FlatZinc solution stream MiniZinc reads: they go to standard
    error instead. Ray has no setting for it; its printer is a module function, wrapped here
    where this Ray has it (tests/test_cluster.py compares the printed stream with one process's)."""
    try:
        from ray._private import worker as ray_worker
    except ImportError:
        return
    printer = getattr(ray_worker, "print_to_stdstream", None)
    if printer is None or getattr(printer, "to_stderr", False):
        return

    def to_stderr(data: dict, ignore_prefix: bool) -> None:
        printer(dict(data, is_err=True), ignore_prefix)

    to_stderr.to_stderr = True  # type: ignore[attr-defined]
    ray_worker.print_to_stdstream = to_stderr


def worker_slots(nodes: list[dict]) -> list[tuple[str, int]]:
    """(node id, GPUs) of each worker: one per GPU of a node, one for a node without GPUs."""
    slots: list[tuple[str, int]] = []
    for node in nodes:
        if not node.get("Alive", True):
            continue
        gpus = int(node.get("Resources", {}).get("GPU", 0))
        slots += [(node["NodeID"], 1)] * gpus if gpus else [(node["NodeID"], 0)]
    return slots


_RUN: Cluster | None = None  # the run's cluster (a run is one process), which its engines share


def cluster_for(model: Model, dm: DeviceModel, opts: SolveOptions) -> Cluster:
    """The run's workers, started by the first engine that asks (one worker per GPU: a second
    set would wait for GPUs the first holds)."""
    global _RUN
    if _RUN is None:
        _RUN = Cluster(opts.cluster or "auto", model, dm, opts)
    return _RUN


class Cluster:
    """The run's workers on the cluster: started at once (their kernels build while the driver
    splits the root), then handed blocks by `search`, or running LNS islands (`lns`)."""

    def __init__(self, address: str, model: Model, dm: DeviceModel, opts: SolveOptions):
        t0 = time.monotonic()
        ray = self.ray = import_ray()
        connect(ray, address)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.verbose = opts.verbose
        slots = worker_slots(ray.nodes())
        if not slots:
            raise FznError(f"the Ray cluster at {address} has no live node", fix=REACH_FIX)
        fail = hooks.failing_workers()
        remote = ray.remote(ClusterWorker)
        model_ref, dm_ref = ray.put(model), ray.put(dm)
        worker_opts = _worker_options(opts)
        self.handles = [
            remote.options(
                num_cpus=0,
                num_gpus=gpus,
                max_concurrency=4,  # poll and cancel answer while a block runs
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
            ).remote(model_ref, dm_ref, worker_opts, i, fail.get(i, 0))
            for i, (node, gpus) in enumerate(slots)
        ]
        self._infos = [h.info.remote() for h in self.handles]
        self.join_s = time.monotonic() - t0  # joining the cluster and asking for the workers
        self.wait_s = 0.0  # the split done, waiting for the workers to be ready
        self.infos: list[WorkerInfo | None] = []
        self.shares: list[DeviceShare] = []
        self.nodes: list[int] = [0] * len(self.handles)
        self.fed: list[int] = [0] * len(self.handles)  # paths fed to running blocks
        self.best: int | None = None  # the best objective (sense-adjusted) any worker sent
        self.shares_by_index: dict[int, DeviceShare] = {}
        self.longest = 0  # decisions of the longest path of the split (sizes the workers' buffers)
        self.lns_steps: list[int] = []  # LNS steps of each worker's islands (lns)
        self.lns_improvements: list[int] = []  # improvements they printed
        self.lns_failed: list[bool] = []  # whose LNS failed
        self._lock = threading.Lock()

    def ready(self) -> list[WorkerInfo | None]:
        """Each worker's devices once they are ready (None: it failed to start, said with -v)."""
        if not self.infos:
            t0 = time.monotonic()
            for i, ref in enumerate(self._infos):
                try:
                    self.infos.append(self.ray.get(ref))
                except Exception as err:  # noqa: BLE001 - a worker that cannot start is left out
                    self.infos.append(None)
                    if self.verbose:
                        print(f"fzn-gpu: cluster worker {i} did not start: {_reason(err)}", file=sys.stderr)
            self.wait_s = time.monotonic() - t0
            if not any(self.infos):
                raise FznError("no cluster worker started", fix="run with -v to see why; " + REACH_FIX)
        return self.infos

    def target(self) -> int:
        """Sub-search spaces the root split should make for every worker together."""
        return sum(info.target for info in self.ready() if info is not None)

    def search(self, search: CompleteSearch, paths: Paths, deadline: float | None) -> bool:
        """Every path searched by the workers, `search` taking their solutions and counts as
        its devices' (its lock, its solution limit, its incumbent); True when all were searched
        to the end."""
        infos = self.ready()
        self.shares = [
            DeviceShare(i, f"{info.host}: {', '.join(info.devices)}", info.is_gpu, info.items)
            for i, info in enumerate(infos)
            if info is not None
        ]
        self.shares_by_index = {s.index: s for s in self.shares}
        r = search.runner
        root = (r.root_lb, r.root_ub, r.root_bits, r.root_fb)
        # in a random order: the split lists neighbouring subtrees together, and their sizes
        # run in streaks (n-queens' heavy middle rows), so a run of paths measured a worker's
        # speed wrongly and the worker holding the heaviest streak kept the others waiting
        # (docs/bench/measurements.md, a search on a Ray cluster); a sample of the whole is a fair one
        paths = paths.take(np.random.default_rng(search.opts.seed).permutation(len(paths)))
        self.longest = paths.max_decisions()
        best = r.best() if search.optimising else None
        self.best = int(best) if best is not None and best < INT_MAX else None
        try:
            return balance(
                paths,
                self.shares,
                lambda i, block, split: self._block(search, i, block, split.pool, root, deadline),
                lead_all=False,  # a running block cannot give paths up (it is fed instead)
            )
        except FznError:
            if all(s.failed for s in self.shares):  # the cluster is gone: the search ends with what it has
                search.outcome.error = "every cluster worker failed: " + "; ".join(
                    f"{s.name}: {s.failed}" for s in self.shares
                )
                return False
            raise

    def _bound(self, search: CompleteSearch) -> int | None:
        with self._lock:
            best = self.best
        shared = search.incumbent.bound() if search.incumbent is not None else None
        if shared is not None and (best is None or shared < best):
            best = shared
        return best

    def _block(
        self, search: CompleteSearch, i: int, block: Paths, pool: WorkPool, root, deadline: float | None
    ) -> bool:
        """One block on worker i, polled until it ends and fed more paths from the pool while
        it runs (its device never drains between blocks); a worker that dies is a DeviceFault
        (the balancer hands the block, with what was fed to it, to the others)."""
        ray, handle = self.ray, self.handles[i]
        with search._lock:
            limit = None if search.limit is None else search.limit - search.outcome.solutions
        if limit is not None and limit <= 0:
            return False
        seconds = None if deadline is None else deadline - time.monotonic()
        ref = handle.search_block.remote(block.ptr, block.data, root, seconds, limit, self._bound(search), self.longest)
        low_water = max(1, self.shares_by_index[i].items // 2)
        cancelled = False
        chunk: Paths | None = None
        try:
            while True:
                done, _ = ray.wait([ref], timeout=poll_s())
                rows, unstarted = ray.get(handle.poll.remote(self._bound(search)))
                if rows is not None and len(rows):
                    with self._lock:
                        low = int(rows[:, 0].min())
                        self.best = low if self.best is None else min(self.best, low)
                    search._take(rows)
                if done:
                    break
                late = deadline is not None and time.monotonic() > deadline
                if not cancelled and (late or not search._more()):
                    handle.cancel.remote()
                    cancelled = True
                if not cancelled and unstarted is not None and unstarted < low_water:
                    chunk = pool.feed(i)
                    if chunk is not None:
                        if ray.get(handle.feed.remote(chunk.ptr, chunk.data)):
                            pool.fed(i, chunk)
                            self.fed[i] += len(chunk)
                        else:
                            pool.unfed(chunk)
                        chunk = None
            result = ray.get(ref)
        except ray.exceptions.RayError as err:
            if chunk is not None:  # taken from the pool, never confirmed: back to it
                pool.unfed(chunk)
            raise DeviceFault(f"cluster worker {i} failed: {_reason(err)}") from None
        with search._lock:
            if result.rows is not None:
                search._take_locked(result.rows)
            if search.count_only:
                search.counted += result.counted
            if result.error:
                search.outcome.error = search.outcome.error or result.error
        self.nodes[i] += result.nodes
        return result.finished and search._more()

    def lns(self, incumbent: Incumbent, deadline: float | None, stop: threading.Event) -> list[threading.Thread]:
        """LNS islands on every worker (ClusterWorker.lns), each in a driver thread that polls
        it every poll_s(): the worker's improvements print through the run's `incumbent`, and the
        run's best goes out to the worker whenever it improved, to step from. They end at the
        deadline, when `stop` is set or the incumbent stopped; a worker that fails is said on
        stderr and the others go on. The threads, started."""
        infos = self.ready()
        self.lns_steps = [0] * len(self.handles)
        self.lns_improvements = [0] * len(self.handles)
        self.lns_failed = [False] * len(self.handles)
        threads = [
            threading.Thread(target=self._island, args=(i, incumbent, deadline, stop), daemon=True)
            for i, info in enumerate(infos)
            if info is not None
        ]
        for t in threads:
            t.start()
        return threads

    def _island(self, i: int, incumbent: Incumbent, deadline: float | None, stop: threading.Event) -> None:
        ray, handle = self.ray, self.handles[i]
        seconds = None if deadline is None else deadline - time.monotonic()
        ref = handle.lns.remote(seconds)
        sent = -1  # the incumbent's stamp last sent
        stopped = False
        try:
            while True:
                done, _ = ray.wait([ref], timeout=poll_s())
                best, stamp = incumbent.best, incumbent.stamp()
                row = None
                if best is not None and stamp != sent:
                    row, sent = np.concatenate([[best[0]], best[1]]).astype(np.int32), stamp
                rows = ray.get(handle.lns_poll.remote(row))
                if rows is not None and len(rows):
                    self.lns_improvements[i] += incumbent.offer(rows, "lns")
                if done:
                    break
                late = deadline is not None and time.monotonic() > deadline
                if not stopped and (late or stop.is_set() or incumbent.stopped):
                    handle.lns_stop.remote()
                    stopped = True
            result = ray.get(ref)
            self.lns_steps[i] = result["steps"]
            if result["complete"]:  # its dive explored the whole tree: the run's best is optimal
                rows = ray.get(handle.lns_poll.remote(None))  # its last improvements first
                if rows is not None and len(rows):
                    self.lns_improvements[i] += incumbent.offer(rows, "lns")
                incumbent.outcome.complete = True
                incumbent.stopped = True
        except ray.exceptions.RayError as err:
            self.lns_failed[i] = True
            print(f"fzn-gpu: LNS goes on without cluster worker {i}: {_reason(err)}", file=sys.stderr)

    def lns_all_failed(self) -> bool:
        """Every worker's LNS failed (the driver's devices then take the search over)."""
        return bool(self.lns_failed) and all(
            self.lns_failed[i] for i, info in enumerate(self.infos) if info is not None
        )

    def stats(self) -> dict[str, object]:
        """`-s`: each worker's node and devices, blocks, sub-search spaces (those fed to its
        running blocks among them), nodes and busy time (`wN_...`); the nodes of them all
        (`clusterNodes`), the time to join the cluster and start the workers
        (`clusterJoinTime`), and the time the split root waited for them (`clusterWaitTime`)."""
        out: dict[str, object] = {
            "clusterWorkers": len(self.handles),
            "clusterNodes": sum(self.nodes),
            "clusterJoinTime": self.join_s,
            "clusterWaitTime": self.wait_s,
        }
        for i, steps in enumerate(self.lns_steps):  # LNS islands on the workers
            out[f"w{i}_lnsSteps"] = steps
            out[f"w{i}_lnsImprovements"] = self.lns_improvements[i]
        for share in self.shares:
            p = f"w{share.index}_"
            out[p + "worker"] = share.name
            out[p + "blocks"] = share.blocks
            out[p + "subSearchSpaces"] = share.subs
            out[p + "fedPaths"] = self.fed[share.index]
            out[p + "nodes"] = self.nodes[share.index]
            out[p + "busyTime"] = share.busy_s
            if share.failed:
                out[p + "failed"] = share.failed
        return out


def _worker_options(opts: SolveOptions) -> SolveOptions:
    from dataclasses import replace

    return replace(opts, cluster=None, verbose=False, statistics=False, check=False)


def _reason(err: BaseException) -> str:
    """The first line of a Ray error (its tracebacks run to pages)."""
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
