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

import sys
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np

from .. import settings
from ..errors import FznError
from ..flatzinc.model import Model
from ..local.network import LsNetwork, NotLocal, build
from ..local.verify import violations
from ..options import SolveOptions
from ..resources import kernels_dir
from ..runtime.device import Device, is_nvidia, launch_lock
from ..runtime.kernel_launch import enqueue
from ..runtime.local_abi import C, H, L, Param, W, header
from .incumbent import Outcome
from .threads import run_threads

SLICE_S = 0.05  # a launch's target length
LOCAL_MIN = 200  # a plateau taken as a local minimum, in 1,000 (Param.LOCAL_MIN)
LOCAL_MIN_LINEAR = 60  # ... in a permutation whose every error is a linear relation's distance
RESET_PERCENT = 25  # the share of the decision variables a reset gives fresh values (percent)
RESET_PERCENT_SHARED = 5  # ... where most variables share their error (LsNetwork.shared_error)
WIDTHS = (32, 64, 128, 256)
ITEMS_PER_CU = 1024  # a GPU's work-items a compute unit (walks x width)
# An NVIDIA GPU's registers a work-item of the adaptive kernel, at most: uncapped, the compiler
# gives it more than 128, so that a multiprocessor holds one walk of 256 work-items at once and
# the walks of a launch run in four waves; at 128, two at once, and the iterations of magic
# squares and partition take far less time; at 64 less still, but the spills slow walks that
# evaluate their moves the general way (Costas, through many invariants), so 64 is for a
# network whose every move is a swap scored from swap terms (LsNetwork.swaps_only), where the
# general evaluation runs once an iteration (docs/bench/measurements.md, Adaptive Search).
REGISTER_CAP = 128
REGISTER_CAP_SWAPS = 64

_PROGRAMS: dict[tuple[int, int, bool], tuple] = {}  # by id of the device's cl_device, and program_variant
_LOCK = threading.Lock()


def walk_params(net: LsNetwork, width: int) -> np.ndarray:
    """The walks' tuning (local_abi.Param), after Adaptive Search's defaults for permutation
    problems: a local minimum freezes its variable until the next move, plateaus are followed
    8 times in 10, a reset gives a quarter of the variables fresh values once about 1.2 sqrt(n)
    variables are frozen. Where every decision variable is in a permutation and every error is
    a linear relation's distance (`LsNetwork.linear_permutation`), plateaus are followed 94
    times in 100, as Adaptive Search's own magic square model does: there a plateau's swaps
    move values between sums without undoing any (magic squares; docs/bench/measurements.md), while
    counting errors (Costas' all_different) and linear models of free variables do better
    leaving plateaus more often. Where most decision variables share their projected error
    (`LsNetwork.shared_error`: number partitioning's first half carries both sums), a reset
    gives 5 % of the variables fresh values rather than a quarter: a quarter's random swaps
    unbalance every shared sum as much as a fresh start does.
    FZN_GPU_LS_PARAMS="RESET_PERCENT=10,LOCAL_MIN=80" overrides them for tuning runs."""
    p = np.zeros(Param.SIZE, dtype=np.int32)
    p[Param.FREEZE_LOCAL_MIN] = 1
    p[Param.FREEZE_SWAP] = 1
    p[Param.RESET_LIMIT] = max(1, round(1.2 * net.ndec**0.5))
    p[Param.RESET_PERCENT] = RESET_PERCENT_SHARED if net.shared_error else RESET_PERCENT
    p[Param.LOCAL_MIN] = LOCAL_MIN_LINEAR if net.linear_permutation else LOCAL_MIN
    p[Param.RESTART_ITERS] = max(10_000, 200 * net.ndec)
    p[Param.EXHAUSTIVE] = 1 << 16
    p[Param.SAMPLE] = 256 if width == 1 else 8 * width  # a GPU's lanes are slow alone: 8 moves each
    p[Param.RESET_PERCENT_WHOLE] = 1
    p[Param.FAST_SWAP] = 1
    for item in filter(None, (settings.text("FZN_GPU_LS_PARAMS") or "").split(",")):
        name, _, value = item.partition("=")
        try:
            p[Param[name.strip().upper()]] = int(value)
        except (KeyError, ValueError):
            raise FznError(
                f"FZN_GPU_LS_PARAMS: {item!r} is not NAME=INT with NAME one of "
                f"{', '.join(m.name for m in Param if m != Param.SIZE)}",
                fix="unset it",
            ) from None
    return p


def build_program(device: Device) -> None:
    """The Adaptive Search programs built on `device` (`fzn-gpu build-kernels`), every variant a
    network may take (program_variant: both register caps on NVIDIA, the swaps-only one also
    with 32-bit swap sums), so that a run's first launch does not wait for the driver's
    compiler."""
    swaps = register_cap(device, True)
    for cap, sums_32 in sorted({(register_cap(device, False), False), (swaps, False), (swaps, True)}):
        _program(device, cap, sums_32)


def program_variant(device: Device, net: LsNetwork) -> tuple[int, bool]:
    """(register cap, 32-bit swap sums) of the program that walks `net` on `device`: the cap
    by register_cap, and swaps scored in 32 bits where the network's sums fit
    (LsNetwork.sums_32, which only a swaps-only network has)."""
    return register_cap(device, net.swaps_only), net.sums_32


def register_cap(device: Device, swaps_only: bool) -> int:
    """The registers a work-item of the program for a network (`swaps_only`: LsNetwork's) may
    take on `device`: 0 (no cap) but on NVIDIA's OpenCL."""
    if not is_nvidia(device):
        return 0
    return REGISTER_CAP_SWAPS if swaps_only else REGISTER_CAP


def program_options(device: Device, cap: int, sums_32: bool = False) -> list[str]:
    """The adaptive program's build options: OpenCL 1.2, the register cap (`cap`, 0: none),
    swaps scored in 32 bits (`sums_32`: LS_SUMS_32), and FZN_GPU_CL_OPTIONS' for tuning runs,
    as for the search kernels (a cap of their own replaces `cap`)."""
    extra = (settings.text("FZN_GPU_CL_OPTIONS") or "").split()
    capped = [] if any("maxrregcount" in o for o in extra) or not cap else [f"-cl-nv-maxrregcount={cap}"]
    return ["-cl-std=CL1.2", *capped, *(["-DLS_SUMS_32"] if sums_32 else []), *extra]


def _program(device: Device, cap: int = 0, sums_32: bool = False):
    """(context, search kernel, rescoring kernel) of the Adaptive Search program on `device`
    with register cap `cap` (register_cap) and 32-bit swap sums or not (program_variant),
    built once a process (the compiled binary cached on disk by pyopencl and the driver)."""
    import pyopencl as cl

    from ..runtime import opencl_start

    key = (id(device.cl_device), cap, sums_32)
    with _LOCK:
        if key not in _PROGRAMS:
            # one context a device, whichever variant its programs are
            ctx = (
                next((built[0] for (d, *_), built in _PROGRAMS.items() if d == key[0]), None)
                or opencl_start.take_context(device.cl_device)
                or cl.Context([cast(Any, device.cl_device)])
            )
            source = header() + (kernels_dir() / "adaptive.cl").read_text()
            try:
                prog = cl.Program(ctx, source).build(options=program_options(device, cap, sums_32))
            except cl.RuntimeError as err:
                raise FznError(
                    f"the adaptive search kernel did not build on {device.name}: {str(err)[-2000:]}",
                    fix="report this with the device name; meanwhile use --engine complete",
                ) from None
            _PROGRAMS[key] = (ctx, cl.Kernel(prog, "adaptive"), cl.Kernel(prog, "adaptive_rescore"))
        return _PROGRAMS[key]


def shape(net: LsNetwork, device: Device) -> tuple[int, int]:
    """(walks, work-items a walk): on a GPU a work-group per walk, as wide as its largest
    neighbourhood can keep busy, and ITEMS_PER_CU work-items a compute unit (a walk's work is
    chains of dependent global loads: it takes many warps on a multiprocessor to hide them);
    on a CPU one work-item a walk, a walk a core. Where most decision variables share their
    projected error (`LsNetwork.shared_error`), a walk's iterations mostly sample the whole
    neighbourhood, 8 moves a work-item, and its width sets only the sample: there the
    narrowest groups, and so the most walks, answer within the time on more seeds (number
    partitioning; docs/bench/measurements.md, more, narrower walks), while walks that move one
    variable at a time need the width (magic square 200). FZN_GPU_LS_WALKS and
    FZN_GPU_LS_WIDTH override them; device memory caps the walks."""
    if device.is_gpu:
        width = next((w for w in WIDTHS if w * 4 >= net.max_candidates), WIDTHS[-1])
        if net.shared_error:
            width = WIDTHS[0]
        walks = device.compute_units * ITEMS_PER_CU // width
    else:
        width, walks = 1, device.compute_units
    width = settings.integer("FZN_GPU_LS_WIDTH", width)
    walks = settings.integer("FZN_GPU_LS_WALKS", walks)
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
    return 3 * net.kmax + _hash_size(net.kmax) + 4 * net.tmax + _hash_size(net.tmax) + net.dmax


def _iterations(sw: np.ndarray) -> np.ndarray:
    """Each walk's iterations in all (its scalars' low and high words)."""
    return sw[:, W.ITERS_LO].astype(np.uint32).astype(np.int64) + (sw[:, W.ITERS_HI].astype(np.int64) << 32)


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
    best: int | None = None  # the least error any walk reached


class DeviceWalks:
    """One device's walks: buffers, launches, and the solution once a walk finds one."""

    def __init__(self, device: Device, net: LsNetwork, seed: int):
        self.device = device
        self.net = net
        self.seed = seed
        self.stats = WalkStats()
        self.ready = False

    def setup(self, walks: int | None = None, width: int | None = None) -> None:
        """The program and the walks' buffers (`walks`, `width`: shape()'s unless given)."""
        import pyopencl as cl

        t0 = time.monotonic()
        ctx, self.kernel, self.rescorer = _program(self.device, *program_variant(self.device, self.net))
        self.stats.build_s = time.monotonic() - t0
        net = self.net
        auto = shape(net, self.device)
        self.walks, self.width = walks or auto[0], width or auto[1]
        # the most work-items a group of this kernel may have on this device (its registers)
        most = self.kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, self.device.cl_device)
        if self.width > most:
            if width is None and settings.is_set("FZN_GPU_LS_WIDTH"):
                raise FznError(
                    f"FZN_GPU_LS_WIDTH={self.width} is more work-items than the adaptive search kernel "
                    f"takes in one group on {self.device.name} ({most})",
                    fix=f"give at most {most}, or unset it",
                )
            narrower = 1 << (most.bit_length() - 1)
            self.walks, self.width = self.walks * self.width // narrower, narrower
        self.stats.walks, self.stats.width = self.walks, self.width
        self.queue = cl.CommandQueue(ctx)
        mf = cl.mem_flags

        def buffer(host: np.ndarray, flags=mf.READ_WRITE) -> cl.Buffer:
            return cl.Buffer(ctx, flags | mf.COPY_HOST_PTR, hostbuf=host if host.size else np.zeros(1, host.dtype))

        def filled(count: int, value) -> cl.Buffer:
            """`count` copies of `value` made on the device: the walks' scratch runs to gigabytes
            on a GPU, which a host array would first build and then copy over
            (docs/bench/measurements.md, Adaptive Search)."""
            buf = cl.Buffer(ctx, mf.READ_WRITE, size=max(count, 1) * value.itemsize)
            cl.enqueue_fill_buffer(self.queue, buf, value, 0, max(count, 1) * value.itemsize)
            return buf

        def replicated(row: np.ndarray, copies: int) -> cl.Buffer:
            """`copies` copies of `row` end to end, made on the device from one upload by
            copies that double what is there: partition 9,600's 4,224 walks of 14,400 values
            are 243 MB, which a host array would first build (np.tile) and then copy over."""
            size = row.size * row.itemsize
            buf = cl.Buffer(ctx, mf.READ_WRITE, size=max(size * copies, 1))
            if size and copies:
                cl.enqueue_copy(self.queue, buf, row, is_blocking=True)
                done = 1
                while done < copies:
                    more = min(done, copies - done)
                    cl.enqueue_copy(self.queue, buf, buf, byte_count=more * size, src_offset=0, dst_offset=done * size)
                    done += more
            return buf

        walks, width = self.walks, self.width
        scalars = np.zeros((walks, W.SIZE), dtype=np.int32)
        rng = np.random.default_rng([self.seed, self.device.index])
        scalars[:, W.RNG] = rng.integers(1, 2**31 - 1, size=walks, dtype=np.int64)
        self.bufs = [
            buffer(net.buffer, mf.READ_ONLY),
            replicated(np.ascontiguousarray(net.buffer[net.buffer[H.LO] :][: net.nv]), walks),  # values: constants set
            filled(walks * net.ndec, np.int32(0)),  # frozen
            filled(walks * net.hist, np.int32(0)),  # histograms
            filled(walks * net.n_soft, np.int64(0)),  # sums
            filled(walks * net.n_soft, np.int64(0)),  # errors
            buffer(scalars),
            filled(walks * L.SIZE, np.int64(0)),
            filled(walks * width * scratch_ints(net), np.int32(-1)),  # hash tables empty
            filled(walks * width * 2 * net.tmax, np.int64(0)),
        ]
        self.queue.finish()
        self.ctl_host = np.zeros(C.SIZE, dtype=np.int32)
        self.ctl = buffer(self.ctl_host)
        self.params = buffer(walk_params(net, width), mf.READ_ONLY)
        self.ready = True

    def launch(self, iters: int) -> bool:
        """Every walk `iters` iterations further (fewer once solved); whether one is solved."""
        import pyopencl as cl

        w = self.width
        self.kernel.set_args(
            *self.bufs,
            self.ctl,
            self.params,
            np.int32(iters),
            cl.LocalMemory(8 * w),
            cl.LocalMemory(4 * w),
            cl.LocalMemory(4 * w),
        )
        with launch_lock(self.device):
            enqueue(cl, self.queue, self.kernel, (self.walks * w,), (w,))
            cl.enqueue_copy(self.queue, self.ctl_host, self.ctl)
        self.stats.launches += 1
        return bool(self.ctl_host[C.FOUND])

    def rescore(self) -> None:
        """Every walk's sums, histograms and errors computed again from its values (tests)."""
        import pyopencl as cl

        w = self.width
        self.rescorer.set_args(*self.bufs, cl.LocalMemory(8 * w))
        with launch_lock(self.device):
            enqueue(cl, self.queue, self.rescorer, (self.walks * w,), (w,))
            self.queue.finish()

    def state(self, parts=("values", "frozen", "sums", "errors", "scalars", "lscalars")) -> dict[str, np.ndarray]:
        """The walks' state, read back: values, frozen marks, sums, errors, scalars (ints and
        longs), or those `parts` of it."""
        import pyopencl as cl

        net, k = self.net, self.walks
        layout = {
            "values": (1, net.nv, np.int32),
            "frozen": (2, net.ndec, np.int32),
            "sums": (4, net.n_soft, np.int64),
            "errors": (5, net.n_soft, np.int64),
            "scalars": (6, W.SIZE, np.int32),
            "lscalars": (7, L.SIZE, np.int64),
        }
        out = {}
        for name in parts:
            buf, width, dtype = layout[name]
            out[name] = np.empty((k, width), dtype)
            if out[name].size:
                cl.enqueue_copy(self.queue, out[name], self.bufs[buf])
        return out

    def solution(self) -> np.ndarray:
        """The answer of the solved walk with the fewest iterations (then the lowest index)."""
        import pyopencl as cl

        sw = self.state(("scalars",))["scalars"]
        solved = np.flatnonzero(sw[:, W.STATUS] == 2)
        best = int(solved[np.lexsort((solved, _iterations(sw)[solved]))[0]])
        out = np.empty(self.net.nv, np.int32)
        cl.enqueue_copy(self.queue, out, self.bufs[1], src_offset=best * self.net.nv * out.itemsize)
        return out

    def run(self, deadline: float | None, stop: threading.Event) -> np.ndarray | None:
        if not self.ready:
            self.setup()
        iters = 4
        try:
            while not stop.is_set():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                t1 = time.monotonic()
                found = self.launch(iters)
                dt = time.monotonic() - t1
                self.stats.kernel_s += dt
                if found:
                    return self.solution()
                # the next launch about SLICE_S long, and not past the deadline
                target = SLICE_S if left is None else max(0.005, min(SLICE_S, left - dt))
                if dt < target / 2:
                    iters = min(iters * 2, 1 << 24)
                elif dt > 2 * target and iters > 1:
                    iters //= 2
            return None
        finally:
            self._read_stats()

    def _read_stats(self) -> None:
        st = self.state(("scalars", "lscalars"))
        sw, sl = st["scalars"], st["lscalars"]
        s = self.stats
        s.iterations = int(_iterations(sw).sum())
        s.moves = int(sw[:, W.MOVES].astype(np.uint32).sum())
        s.resets = int(sw[:, W.RESETS].sum())
        s.restarts = int(sw[:, W.RESTARTS].sum())
        s.skipped = int(sw[:, W.SKIPPED].astype(np.uint32).sum())
        s.best = int(sl[:, L.TOTAL].min()) if len(sl) else None


class AdaptiveSearch:
    def __init__(
        self,
        model: Model,
        devices: list[Device],
        opts: SolveOptions,
        report,
        network: LsNetwork | None = None,
        delay_s: float = 0.0,
    ):
        """report(values, objective) prints one solution; `network`: built already, or None to
        build it in run() after `delay_s` (beside other engines, which may answer first: then
        neither the network nor the kernel is built; a model that is not one for local search
        then ends the engine at once, said with -v)."""
        self.model = model
        self.devices = devices
        self.opts = opts
        self.report = report
        self.net = network
        self.delay_s = delay_s
        self.outcome = Outcome()
        self.cancel = threading.Event()
        self.walkers: list[DeviceWalks] = []
        self.runners: list = []  # no search kernel runs (statistics read `walkers`)
        self.shares: list = []
        self._lock = threading.Lock()

    def run(self, deadline: float | None) -> Outcome:
        if self.delay_s and self.cancel.wait(self.delay_s):
            return replace(self.outcome)
        if self.net is None:
            try:
                self.net = build(self.model)
            except NotLocal as why:
                if self.opts.verbose:
                    print(f"fzn-gpu: no Adaptive Search: {why}", file=sys.stderr)
                return replace(self.outcome)
        self.walkers = [DeviceWalks(d, self.net, self.opts.seed) for d in self.devices]

        failed: list[BaseException] = []

        def one(walker: DeviceWalks) -> None:
            try:
                values = walker.run(deadline, self.cancel)
            except BaseException as err:  # raised again below, once every device has stopped
                failed.append(err)
                self.cancel.set()
                return
            if values is not None:
                self._found(values)

        threads = [threading.Thread(target=one, args=(w,), daemon=True) for w in self.walkers]
        run_threads(threads, self.cancel.set)
        if failed:
            raise failed[0]
        return replace(self.outcome)

    def _found(self, row: np.ndarray) -> None:
        values = row.astype(np.int64)
        bad = violations(self.model, values)
        if bad:  # the kernel's error and the model disagree: said, nothing printed
            with self._lock:
                self.outcome.error = (
                    f"adaptive search's solution violates {bad[0]} (an internal error in "
                    "fzn-gpu: please report it with the model)"
                )
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

    def stop(self) -> None:
        """Ends the search at its next slice, keeping what it found (an interrupt: SolveRun.wind_down)."""
        self.cancel.set()

    def extra_stats(self) -> dict[str, object]:
        if self.net is None or not self.walkers:
            return {}
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
            "lsDevices": "; ".join(f"{w.device.name} ({w.stats.walks} x {w.stats.width})" for w in self.walkers),
        }
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
        raise FznError(
            f"adaptive search cannot solve this model: {why}", fix="use another engine (--engine auto)"
        ) from None
