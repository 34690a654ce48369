"""Adaptive Search as an engine (the GPU adaptive search paper; kernels/adaptive.cl,
fzn_gpu/local/): constraint-based local search for one solution of a satisfaction model,
many walks at once on every device (multi-walk), a work-group's work-items evaluating its
walk's moves side by side.

Each device runs its walks in a thread of its own, launch after launch (about 50 ms each, the
walks' state staying on the device between them), until a walk reaches error 0, another
device or engine has answered, or the time runs out. The first solution is verified against
the model (local/verify.py) before it is printed. Local search proves nothing: it never says
UNSATISFIABLE, and a run that finds nothing ends at its time limit with UNKNOWN. `--engine
adaptive` runs it alone; by default it runs beside complete search and restarts for one
solution of a satisfaction model (sat_portfolio.py), where the model is one for it."""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field, replace

import numpy as np

from ..device import Device, launch_lock
from ..errors import FznError
from ..local.network import LsNetwork, NotLocal, build
from ..local.verify import violations
from ..local_abi import C, L, Param, W, header
from ..model import Model
from ..options import SolveOptions
from ..resources import kernels_dir
from .incumbent import Outcome
from .threads import run_threads

SLICE_S = 0.05          # a launch's target length
WIDTHS = (32, 64, 128, 256)

_PROGRAMS: dict[tuple, tuple] = {}
_LOCK = threading.Lock()


def walk_params(net: LsNetwork, width: int) -> np.ndarray:
    """The walks' tuning (local_abi.Param), after Adaptive Search's defaults for permutation
    problems: a local minimum freezes its variable until the next move, plateaus are followed
    94 times in 100, a reset gives a share of the variables fresh values once about 1.2 sqrt(n)
    variables are frozen. FZN_GPU_LS_PARAMS="RESET_PERCENT=10,LOCAL_MIN=80" overrides them for
    tuning runs."""
    p = np.zeros(Param.SIZE, dtype=np.int32)
    p[Param.FREEZE_LOCAL_MIN] = 1
    p[Param.FREEZE_SWAP] = 1
    p[Param.RESET_LIMIT] = max(1, round(1.2 * net.ndec ** 0.5))
    p[Param.RESET_PERCENT] = 25
    p[Param.LOCAL_MIN] = 200
    p[Param.RESTART_ITERS] = max(10_000, 200 * net.ndec)
    p[Param.EXHAUSTIVE] = 1 << 16
    p[Param.SAMPLE] = 256 * width
    p[Param.RESET_PERCENT_WHOLE] = 1
    for item in filter(None, os.environ.get("FZN_GPU_LS_PARAMS", "").split(",")):
        name, _, value = item.partition("=")
        try:
            p[Param[name.strip().upper()]] = int(value)
        except (KeyError, ValueError):
            raise FznError(f"FZN_GPU_LS_PARAMS: {item!r} is not NAME=INT with NAME one of "
                           f"{', '.join(m.name for m in Param if m != Param.SIZE)}", fix="unset it") from None
    return p


def _program(device: Device):
    """(context, kernel) of the Adaptive Search program on `device`, built once a process (the
    compiled binary cached on disk by pyopencl and the driver)."""
    import pyopencl as cl
    from .. import opencl_start
    key = id(device.cl_device)
    with _LOCK:
        if key not in _PROGRAMS:
            ctx = opencl_start.take_context(device.cl_device) or cl.Context([device.cl_device])
            source = header() + (kernels_dir() / "adaptive.cl").read_text()
            try:
                prog = cl.Program(ctx, source).build(options=["-cl-std=CL1.2"])
            except cl.RuntimeError as err:
                raise FznError(f"the adaptive search kernel did not build on {device.name}: {str(err)[-2000:]}",
                               fix="report this with the device name; meanwhile use --engine complete") from None
            _PROGRAMS[key] = (ctx, cl.Kernel(prog, "adaptive"))
        return _PROGRAMS[key]


def shape(net: LsNetwork, device: Device) -> tuple[int, int]:
    """(walks, work-items a walk): on a GPU a work-group per walk, as wide as its largest
    neighbourhood can keep busy, two walks a compute unit; on a CPU one work-item a walk, a
    walk a core. FZN_GPU_LS_WALKS and FZN_GPU_LS_WIDTH override them; device memory caps the
    walks."""
    env = os.environ
    if device.is_gpu:
        width = next((w for w in WIDTHS if w * 4 >= net.max_candidates), WIDTHS[-1])
        walks = 2 * device.compute_units
    else:
        width, walks = 1, device.compute_units
    width = int(env.get("FZN_GPU_LS_WIDTH", width))
    walks = int(env.get("FZN_GPU_LS_WALKS", walks))
    per_walk = walk_bytes(net, width)
    budget = min(device.max_alloc, device.global_mem // 4) if device.is_gpu else min(device.global_mem // 8, 2 << 30)
    walks = max(1, min(walks, budget // max(1, per_walk)))
    return walks, width


def _hash_size(n: int) -> int:
    h = 1
    while h < 2 * n:
        h <<= 1
    return h


def scratch_ints(net: LsNetwork) -> int:
    """A work-item's scratch ints (kernels/adaptive.cl, Move)."""
    return 3 * net.kmax + _hash_size(net.kmax) + net.tmax + _hash_size(net.tmax) + net.dmax


def walk_bytes(net: LsNetwork, width: int) -> int:
    ints = net.nv + net.ndec + net.hist + W.SIZE + width * scratch_ints(net)
    longs = 2 * net.n_soft + L.SIZE + width * 2 * net.tmax
    return 4 * ints + 8 * longs


@dataclass
class WalkStats:
    walks: int = 0
    width: int = 0
    iterations: int = 0
    moves: int = 0
    resets: int = 0
    restarts: int = 0
    skipped: int = 0
    launches: int = 0
    kernel_s: float = 0.0
    build_s: float = 0.0
    best: int | None = None          # the least error any walk reached


@dataclass
class DeviceWalks:
    """One device's walks: buffers, launches, and the solution when one walk finds it."""
    device: Device
    net: LsNetwork
    seed: int
    stats: WalkStats = field(default_factory=WalkStats)

    def run(self, deadline: float | None, stop: threading.Event) -> np.ndarray | None:
        import pyopencl as cl
        t0 = time.monotonic()
        ctx, kernel = _program(self.device)
        self.stats.build_s = time.monotonic() - t0
        net = self.net
        walks, width = shape(net, self.device)
        self.stats.walks, self.stats.width = walks, width
        queue = cl.CommandQueue(ctx)
        mf = cl.mem_flags

        def zeros(n: int, dtype) -> cl.Buffer:
            host = np.zeros(max(1, n), dtype=dtype)
            return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)

        model = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=net.buffer)
        vals = zeros(walks * net.nv, np.int32)
        frozen = zeros(walks * net.ndec, np.int32)
        hists = zeros(walks * net.hist, np.int32)
        sums = zeros(walks * net.n_soft, np.int64)
        errs = zeros(walks * net.n_soft, np.int64)
        scalars_host = np.zeros((walks, W.SIZE), dtype=np.int32)
        rng = np.random.default_rng([self.seed, self.device.index])
        scalars_host[:, W.RNG] = rng.integers(1, 2 ** 31 - 1, size=walks, dtype=np.int64)
        scalars = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=scalars_host)
        lscalars = zeros(walks * L.SIZE, np.int64)
        scratch_host = np.full(walks * width * scratch_ints(net), -1, dtype=np.int32)
        scratch = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=scratch_host)
        lscratch = zeros(walks * width * 2 * net.tmax, np.int64)
        ctl_host = np.zeros(C.SIZE, dtype=np.int32)
        ctl = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=ctl_host)
        solution = zeros(net.nv, np.int32)
        params = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=walk_params(net, width))
        local_long = cl.LocalMemory(8 * width)
        local_int = cl.LocalMemory(4 * width)
        iters = 4
        while not stop.is_set():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            kernel.set_args(model, vals, frozen, hists, sums, errs, scalars, lscalars, scratch, lscratch, ctl,
                            solution, params, np.int32(iters), local_long, local_int, local_int)
            t1 = time.monotonic()
            with launch_lock(self.device):
                cl.enqueue_nd_range_kernel(queue, kernel, (walks * width,), (width,))
                cl.enqueue_copy(queue, ctl_host, ctl)
            dt = time.monotonic() - t1
            self.stats.launches += 1
            self.stats.kernel_s += dt
            if ctl_host[C.FOUND]:
                out = np.empty(net.nv, dtype=np.int32)
                cl.enqueue_copy(queue, out, solution)
                self._read_stats(queue, scalars, lscalars, walks)
                return out
            # the next launch about SLICE_S long, and not past the deadline
            target = SLICE_S if left is None else max(0.005, min(SLICE_S, left - dt))
            if dt < target / 2:
                iters = min(iters * 2, 1 << 24)
            elif dt > 2 * target and iters > 1:
                iters //= 2
        self._read_stats(queue, scalars, lscalars, walks)
        return None

    def _read_stats(self, queue, scalars, lscalars, walks: int) -> None:
        import pyopencl as cl
        sw = np.empty((walks, W.SIZE), dtype=np.int32)
        sl = np.empty((walks, L.SIZE), dtype=np.int64)
        cl.enqueue_copy(queue, sw, scalars)
        cl.enqueue_copy(queue, sl, lscalars)
        s = self.stats
        s.iterations = int((sw[:, W.ITERS_LO].astype(np.uint32).astype(np.int64)
                            + (sw[:, W.ITERS_HI].astype(np.int64) << 32)).sum())
        s.moves = int(sw[:, W.MOVES].astype(np.uint32).sum())
        s.resets = int(sw[:, W.RESETS].sum())
        s.restarts = int(sw[:, W.RESTARTS].sum())
        s.skipped = int(sw[:, W.SKIPPED].astype(np.uint32).sum())
        s.best = int(sl[:, L.TOTAL].min()) if walks else None


class AdaptiveSearch:
    def __init__(self, model: Model, devices: list[Device], opts: SolveOptions, report,
                 network: LsNetwork | None = None):
        """report(values, objective) prints one solution; `network`: built already (else
        built here; NotLocal where the model is not one for local search)."""
        self.model = model
        self.devices = devices
        self.opts = opts
        self.report = report
        self.net = network if network is not None else build(model)
        self.outcome = Outcome()
        self.cancel = threading.Event()
        self.walkers = [DeviceWalks(d, self.net, opts.seed) for d in devices]
        self.runners: list = []      # no search kernel runs (statistics read `walkers`)
        self.shares: list = []
        self._lock = threading.Lock()
        self.rejected = 0

    def run(self, deadline: float | None) -> Outcome:
        def one(walker: DeviceWalks) -> None:
            try:
                values = walker.run(deadline, self.cancel)
            except FznError:
                raise
            if values is not None:
                self._found(values)

        threads = [threading.Thread(target=one, args=(w,), daemon=True) for w in self.walkers]
        run_threads(threads, self.cancel.set)
        return replace(self.outcome)

    def _found(self, row: np.ndarray) -> None:
        values = row.astype(np.int64)
        bad = violations(self.model, values)
        if bad:          # the kernel's error and the model disagree: said, nothing printed
            with self._lock:
                self.rejected += 1
                self.outcome.error = (f"adaptive search's solution violates {bad[0]} (an internal error in "
                                      "fzn-gpu: please report it with the model)")
            print(f"fzn-gpu: {self.outcome.error}", file=sys.stderr)
            self.cancel.set()
            return
        with self._lock:
            if self.outcome.solutions:
                return
            self.outcome.solutions = 1
            self.outcome.stopped = True
        self.report(row, None)
        self.cancel.set()

    def progress(self) -> Outcome:
        return replace(self.outcome, complete=False)

    def extra_stats(self) -> dict[str, object]:
        ws = [w.stats for w in self.walkers]
        stats: dict[str, object] = {
            "lsNetwork": self.net.describe(),
            "lsWalks": sum(s.walks for s in ws),
            "lsIterations": sum(s.iterations for s in ws),
            "lsMoves": sum(s.moves for s in ws),
            "lsResets": sum(s.resets for s in ws),
            "lsRestarts": sum(s.restarts for s in ws),
            "lsKernelTime": max((s.kernel_s for s in ws), default=0.0),
            "lsBuildTime": max((s.build_s for s in ws), default=0.0),
            "lsDevices": "; ".join(f"{w.device.name} ({w.stats.walks} x {w.stats.width})" for w in self.walkers)}
        best = [s.best for s in ws if s.best is not None]
        if best:
            stats["lsLeastError"] = min(best)
        if any(s.skipped for s in ws):
            stats["lsSkippedMoves"] = sum(s.skipped for s in ws)
        return stats


def forced(model: Model) -> LsNetwork:
    """--engine adaptive: the network, or a clear error saying why the model is not one for it."""
    try:
        return build(model)
    except NotLocal as why:
        raise FznError(f"adaptive search cannot solve this model: {why}",
                       fix="use another engine (--engine auto)") from None
