"""One device's buffers and launches of the search kernel. The host never touches a search
node: it uploads work (paths), launches slices, and reads back counters, emitted paths and
solution slots."""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .. import settings
from ..errors import FznError
from ..flatzinc.arrays import unique
from ..runtime.device import BUILD_LOGS, Device, build, build_key, build_options, choose_program, is_nvidia, launch_lock
from ..runtime.kernel_abi import DEC, PACKED, Ctrl, Lv, Results, St, parameter_names
from . import packed
from .floats import FLOAT_NONE, float_value, to_ord
from .kernel_call import KernelCall
from .lns_paths import DevicePaths
from .pack import DeviceModel
from .paths import Paths
from .phase import INT_MAX, Phase, path_capacity
from .profile import cnt_row
from .resplit import Resplit

STACK_MIN = 8  # a work-group's stack holds at least this many levels (if the branch can be as deep)
BRANCH_PATH_MAX = 1 << 16  # decisions of a branch a group records for recomputation, at most
# the shapes of a work-group program a model may run, (node in global memory, narrow domains),
# a narrow model too big for local memory taking both: the generic program is built ahead in
# each (engine.build_generic)
GROUP_SHAPES = ((False, False), (True, False), (False, True), (True, True))
# a specialised program of at most this many constraint kinds may be inlined when built ahead
# (--build-only on a GPU): its build grows with the kinds' code (docs/bench/measurements.md)
INLINE_MAX_KINDS = 4
SOL_MIN, SOL_MAX_BYTES = 256, 64 << 20  # solution slots per slice: at least, and memory at most
INDEX_MAX = 2**31 - 1  # the kernel indexes per-item arrays with 32-bit ints
# a runner's share of its GPU's wall time, or what says it at each slice (Runner.share_now)
TimeShare = float | Callable[[], float]


@dataclass(frozen=True)
class Tuning:
    """Launch shape. Defaults suit NVIDIA GPUs and PoCL; the FZN_GPU_* environment variables
    override them for tuning runs (see docs/bench/measurements.md)."""

    model: str  # "group": a work-group per sub-search space; "item": a work-item each
    items_per_cu: int  # searches per compute unit (work-items, or work-groups)
    local: int  # the work-group size (group: the work-items sharing one search)
    interleave: bool
    specialise: bool  # build a kernel with only the model's propagators (fast NVIDIA builds)
    subs_per_item: int  # sub-search spaces to split the root into, per work-item (PHACT: 50)
    dive_ms: int  # first, one work-item's dive for a first solution / bound (0: none)
    outline: bool  # keep propagators out of line (-DFZN_OUTLINE): shorter NVIDIA builds
    inline_specialised: bool = False  # a specialised program may be inlined (device.choose_program)
    slice_budget: int = 0  # a fixed work per item and slice (0: steered by SliceBudget)
    profile: bool = False  # time the search's phases in the kernel (kernels/profile.cl)
    max_registers: int = 0  # a work-item's registers, at most (NVIDIA's compiler; 0: its choice)
    propagation_floor: int = 4096  # units a node's propagation may always run in one slice
    slice_clock: bool = False  # a group slice ends by the device's clock (NVIDIA), not by a budget
    wide_local: int = 0  # a phase of fewer searches than the device holds: groups up to this wide

    def build_options(
        self, device: Device, store_global: bool = False, floats: bool = False, narrow: bool = False
    ) -> list[str]:
        """The compiler's options for this tuning's program (device.build_options): one place,
        so the generic program set-up builds is the one a run looks for. `narrow`: a node held
        as one-word bitmaps (DeviceModel.narrow; work-group searches only)."""
        return build_options(
            device,
            self.outline,
            self.model,
            store_global,
            floats=floats,
            narrow=narrow and self.model == "group",
            profile=self.profile,
            max_registers=self.max_registers,
            propagation_floor=self.propagation_floor,
            slice_clock=self.slice_clock,
        )

    @staticmethod
    def for_device(device: Device, floats: bool = False) -> Tuning:
        """`floats`: the model has float variables, which only the work-item model runs."""
        gpu = device.is_gpu
        layout = settings.choice("FZN_GPU_LAYOUT", "interleaved" if gpu else "blocked")
        model = settings.choice("FZN_GPU_KERNEL", "group" if gpu else "item")
        if floats:
            model = "item"
        group = model == "group"
        return Tuning(
            model=model,
            items_per_cu=settings.integer(
                "FZN_GPU_ITEMS_PER_CU", (32 if group else 512) if gpu else (1 if group else 4)
            ),
            local=settings.integer("FZN_GPU_LOCAL", 32 if group else (64 if gpu else 1)),
            interleave=layout == "interleaved",
            specialise=settings.flag("FZN_GPU_SPECIALISE", gpu),
            # with a GPU's tens of thousands of work-items, 2 per item split fastest
            # (docs/bench/measurements.md); PHACT's 50 suits CPUs with a few work-items
            subs_per_item=settings.integer("FZN_GPU_SUBS_PER_ITEM", 2 if gpu else 50),
            # a GPU's throughput comes from tens of thousands of slow threads: one
            # alone reaches a first solution far sooner (docs/bench/measurements.md)
            dive_ms=settings.integer("FZN_GPU_DIVE_MS", 1000 if gpu else 0),
            # NVIDIA builds out of line several times faster, for somewhat slower
            # kernels (docs/bench/measurements.md)
            outline=settings.flag("FZN_GPU_OUTLINE", gpu),
            # --build-only builds a GPU's specialised program inlined, its fastest
            # kernel, where the user did not choose (docs/bench/measurements.md)
            inline_specialised=gpu and not settings.is_set("FZN_GPU_OUTLINE"),
            slice_budget=settings.integer("FZN_GPU_SLICE_BUDGET", 0),
            profile=settings.flag("FZN_GPU_PROFILE", False),
            # NVIDIA: a register cap lets more work-groups stay resident on a
            # multiprocessor; 64 measured fastest (docs/bench/measurements.md)
            max_registers=settings.integer("FZN_GPU_MAX_REGISTERS", 64 if is_nvidia(device) else 0),
            # a propagation longer than the slice's budget and this stops and resumes
            # in the next slice; ordinary nodes stay whole (their order of search with
            # them, which branch and bound's bound sharing is sensitive to)
            propagation_floor=settings.integer("FZN_GPU_PROPAGATION_FLOOR", 4096),
            # FZN_GPU_SLICE_CLOCK=1: a work-group slice ends by NVIDIA's clock, every group
            # within microseconds of the others, instead of after a budget of steps (on
            # PoCL a counter stands in: kernels/profile.cl). Off: reading it every step
            # costs more than the groups' waiting for the slowest saves (docs/bench/measurements.md,
            # slices ended by the clock)
            slice_clock=group and settings.flag("FZN_GPU_SLICE_CLOCK", False),
            # a dive (one search) or an LNS step of a few hundred neighbourhoods left
            # most of a GPU idle with groups of 32: wider groups give each search the
            # lanes the others leave (docs/bench/measurements.md, wider work-groups)
            wide_local=settings.integer("FZN_GPU_WIDE_LOCAL", 1024 if gpu and group else 0),
        )


def searches_hand_over(model: str, floats: bool) -> bool:
    """Whether a kernel's searches can hand all they have left over (balance.py): the work-item
    kernel's (`model`), on a model without float variables."""
    return model == "item" and not floats


def inlining_pays(dm: DeviceModel) -> bool:
    """Whether --build-only builds this model's specialised GPU program inlined: a build of
    about 45 s instead of 10 (NVIDIA), for kernels 20-40 % faster where a node is many short
    propagator calls (n-queens, Costas arrays: each call's overhead out of line is much of its
    cost), and none faster where long rows walked by the whole group fill the passes
    (knapsack, TSP: docs/bench/measurements.md, inlined specialised kernels). So: few kinds, no long
    rows."""
    kinds = unique(dm.ckind[: dm.nc])
    return len(kinds) <= INLINE_MAX_KINDS and not bool((dm.cparts[: dm.nc] < 0).any())


def _round8(nbytes: int) -> int:
    """A local buffer's size, rounded up to a multiple of 8 bytes."""
    return -(-nbytes // 8) * 8


@dataclass
class Stats:
    nodes: int = 0
    fails: int = 0
    props: int = 0
    subs: int = 0
    kernel_s: float = 0.0
    gap_s: float = 0.0  # the host's time between one slice's end and the next launch
    build_s: float = 0.0  # building (or loading from pyopencl's cache) the program
    launches: int = 0
    items: int = 0
    donated: int = 0  # paths re-split off busy work-items (resplit.py)
    recomputed: int = 0  # levels work-groups rebuilt from their paths (search_group.cl)
    passes: int = 0  # propagation passes (groups) or queue runs (items)
    width: int = 0  # the widest work-group a phase ran (Runner.phase_local)
    generic: bool = False  # ran the generic program: the specialised one was not built yet
    inlined: bool = False  # ran the specialised program inlined (built ahead by --build-only)
    search_s: float = 0.0  # searches (work-groups or work-items) launched x slice seconds
    cycles: np.ndarray = field(default_factory=lambda: np.zeros(cnt_row(True), dtype=np.int64))  # T_*, kinds
    # the busiest search's cycles a second of a phase's slices (a profile build): the clock the
    # searches ran at, if one was never idle (the rated clock overstates it under load)
    clock_seen_hz: float = 0.0


class Runner:
    """Holds the model on one device and runs phases (lists of sub-search spaces) on it."""

    def __init__(
        self,
        device: Device,
        dm: DeviceModel,
        seed: int = 0,
        max_items: int | None = None,
        verbose: bool = False,
        specialise_now: bool = False,
    ):
        """`specialise_now`: build the program specialised to the model's kinds even where the
        generic one is at hand (--build-only: a timed run afterwards gets it)."""
        import pyopencl as cl

        self.cl = cl
        self.device = device
        self.dm = dm
        self.stats = Stats()
        # the share of the wall time this runner's launches may take (another engine launches
        # on the same GPU: Runner.pause_after), or what says it at each slice
        self.time_share: TimeShare = 1.0
        self.resume = threading.Event()  # set: a pause ends at once (the search is cancelled)
        t_build = time.perf_counter()
        kinds, options, self.stats.generic, self.stats.inlined = self._choose_program(specialise_now)
        t = self.tuning
        self.ctx, self.prog = build(device, kinds, options, t.model, floats=self.floats)
        # a queue of its own: two engines on one device (the portfolio) run side by side
        self.queue = cl.CommandQueue(self.ctx)
        self.launch_lock = launch_lock(device)
        self.stats.build_s = time.perf_counter() - t_build
        self.kernel = self.cl.Kernel(self.prog, "search_group" if self.group else "search")
        self.launch = KernelCall(self.kernel)
        self.paths_kernel = None  # kernels/lns_paths.cl's, made at its first use
        self.max_group_width = self.kernel.get_work_group_info(
            cl.kernel_work_group_info.WORK_GROUP_SIZE, device.cl_device
        )
        if verbose:
            self._describe_kernel()
        self.seed = seed
        self.verbose = verbose
        mf = cl.mem_flags
        ro = mf.READ_ONLY | mf.COPY_HOST_PTR

        def const(a):
            a = np.ascontiguousarray(a)
            if a.size == 0:
                a = np.zeros(1, a.dtype)
            return cl.Buffer(self.ctx, ro, hostbuf=a)

        # the model's tables and search plan, packed in one buffer (kernel_abi.PACKED)
        model = {p.name: getattr(dm, p.name) for p in PACKED[self.kernel_name]["pk_model"] if p.name != "ubits"}
        model_bytes, self.model_at = packed.pack(self.kernel_name, "pk_model", {**model, "ubits": dm.bits})
        self.model_buf = const(model_bytes)
        self.root_lb, self.root_ub, self.root_bits = dm.lb.copy(), dm.ub.copy(), dm.bits.copy()
        self.root_fb = dm.froot.copy()  # float bounds (ordinals; floats.py)
        self.ngroups = len(dm.sg_ptr) - 1
        self.tcap = self._trail_capacity()
        self.ctrl = np.zeros(len(Ctrl), dtype=np.int32)
        self.ctrl[Ctrl.BEST] = INT_MAX
        self.ctrl_buf = cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=self.ctrl)
        # the root's fixpoint, which a phase that enqueues every constraint writes back
        self.root_out_at, nbytes = packed.layout(self.kernel_name, "pk_root_out", self.root_sizes("root_out_"))
        self.root_out_buf = cl.Buffer(self.ctx, mf.READ_WRITE, size=nbytes)
        # a float objective's bound: the best sense-adjusted value's ordinal (kernels/floats.cl)
        self.fbest = np.array([FLOAT_NONE], dtype=np.int64)
        self.fbest_buf = cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=self.fbest)
        self.float_objective = dm.obj_var >= 0 and dm.fslot[dm.obj_var] >= 0
        self.stack_levels = self._stack_levels() if self.group else 0
        self.max_items = max_items or self._default_items()
        # a solution: the objective, every variable's value, with set variables the bitmap words,
        # with float variables their boxes (two ordinals each, as four ints)
        self.sol_row = dm.nv + 1 + dm.sol_words + 4 * dm.nf
        self.sol_cap = int(max(SOL_MIN, min(2 * self.max_items, SOL_MAX_BYTES // (4 * self.sol_row))))
        self.sol_buf = cl.Buffer(self.ctx, mf.READ_WRITE, size=4 * self.sol_cap * self.sol_row)
        self.budget = SliceBudget(self.tuning.slice_budget)
        self._scratch: dict[str, Any] = {}  # run_phase's per-search buffers, kept between phases
        # after each slice: the phase's paths running, the first not started, and how many
        self.unfinished: tuple[np.ndarray, int, int] = (np.zeros(0, np.int32), 0, 0)
        self.phase_solutions = 0  # the last phase's solutions met,
        self.phase_cut = 0  # and its paths left at their node limit
        self.phase_explored = 0  # and its paths searched to the end
        self.root_failed = False  # the last phase's root failed (Phase.finish)

    def _describe_kernel(self) -> None:
        """-v: what the built kernel costs a work-item (private memory: registers spilled) and
        a group (local memory), and the compiler's log where it said something."""
        cl, dev = self.cl, self.device.cl_device
        info = cl.kernel_work_group_info
        private = self.kernel.get_work_group_info(info.PRIVATE_MEM_SIZE, dev)
        local = self.kernel.get_work_group_info(info.LOCAL_MEM_SIZE, dev)
        print(
            f"fzn-gpu: {self.device.name}: kernel {self.tuning.model}: {private} B private memory a work-item, "
            f"{local} B local memory a group",
            file=sys.stderr,
        )
        for line in BUILD_LOGS.get(id(dev), "").strip().splitlines()[-12:]:
            print(f"fzn-gpu: {self.device.name}: build: {line}", file=sys.stderr)

    # ------------------------------------------------------------------ sizing
    def _trail_capacity(self) -> int:
        """Ints of trail per work-item: the most one branch can need (pack.trail_bound), unless
        that would take over half of the memory a work-item of a full device has; then what
        branches of that many levels typically need, and a branch deeper than that ends the
        search incomplete, said on stderr (CapacityError)."""
        dm, d = self.dm, self.device
        share = int(0.4 * min(d.global_mem, d.max_alloc * 4)) // max(d.compute_units * self.tuning.items_per_cu, 1)
        typical = dm.trail_entry_total * (2 * min(dm.maxd, 64) + 2)
        return int(max(min(dm.trail_bound, max(share // 8, typical)), 64))

    def _choose_program(self, specialise_now: bool) -> tuple[frozenset[int] | None, list[str], bool, bool]:
        """Sets this runner's tuning and node layout (from its device and model alone), and
        returns its program's (kinds, options, generic, inlined): generic, the generic program
        where the specialised one would be a new build on a GPU; inlined, the specialised one
        inlined where --build-only built that (device.choose_program)."""
        device, dm = self.device, self.dm
        self.tuning = t = Tuning.for_device(device, floats=dm.nf > 0)
        self.group = t.model == "group"
        self.kernel_name = t.model  # kernel_abi.SEARCH_PARAMS's key: item or group
        self.floats = dm.nf > 0
        # a node of one-word bitmaps alone (kernels/domain.cl, FZN_NARROW)
        self.narrow = self.group and dm.narrow
        # a node too big for local memory stays in global memory (FZN_GPU_STORE_GLOBAL=1 forces it)
        self.store_global = self.group and (
            self._group_local_bytes(with_store=True) > device.local_mem or settings.flag("FZN_GPU_STORE_GLOBAL", False)
        )
        kinds = frozenset(int(k) for k in unique(dm.ckind)) if t.specialise else None
        options = t.build_options(device, self.store_global, self.floats, self.narrow)
        inlined = None
        if t.inline_specialised and kinds is not None and inlining_pays(dm):
            inlined = replace(t, outline=False).build_options(device, self.store_global, self.floats, self.narrow)
        wanted = kinds
        kinds, options = choose_program(device, kinds, t.model, options, inlined, build_now=specialise_now)
        return kinds, options, wanted is not None and kinds is None, options == inlined

    @classmethod
    def program_of(cls, device: Device, dm: DeviceModel) -> tuple[frozenset[int] | None, str, list[str]]:
        """(kinds, model, options) of the program a Runner on `device` takes for `dm`, found
        without building it."""
        bare = cls.__new__(cls)
        bare.device, bare.dm = device, dm
        kinds, options, _, _ = bare._choose_program(False)
        return kinds, bare.tuning.model, options

    @classmethod
    def program_key(cls, device: Device, dm: DeviceModel) -> str:
        """The build record's name (build_record.py) of the program a Runner on `device` takes
        for `dm`: whether this machine built it before says whether the run may count on it at
        once (engine/warmup.py)."""
        kinds, model, options = cls.program_of(device, dm)
        return build_key(device, kinds, model, options)

    def root_sizes(self, prefix: str = "root_") -> dict[str, int]:
        """The elements of each array of a phase's root (or, prefix root_out_, its fixpoint)."""
        sizes = {"lb": len(self.root_lb), "ub": len(self.root_ub), "bits": len(self.root_bits), "fb": len(self.root_fb)}
        return {f"{prefix}{k}": n for k, n in sizes.items() if not self.group or k != "fb"}

    def node_sizes(self, n_items: int) -> dict[str, int]:
        """The elements of each array of the work-item kernel's node buffer (kernel_abi.PACKED's
        pk_node) for `n_items` searches: domains, float boxes, trail stamps, trail, queue and
        queued flags."""
        dm, nc = self.dm, max(self.dm.nc, 1)
        one = {"LB": dm.nv, "UB": dm.nv, "BITS": dm.nwords, "FB": 2 * dm.nf, "STAMP": dm.nv, "TRAIL": self.tcap}
        return {name: n_items * n for name, n in (one | {"QUEUE": nc, "INQ": nc}).items()}

    def store_ints(self) -> int:
        """One node of a work-group search: lower bounds, upper bounds, bitmap words; a narrow
        model's, its bitmap words alone."""
        return self.dm.nwords if self.narrow else 2 * self.dm.nv + self.dm.nwords

    def _group_local_sizes(self, with_store: bool, width: int | None = None) -> tuple[int, ...]:
        """Bytes of each of search_group.cl's local arguments, in its order: the node, the
        changed and moved sets (a bit per variable each), the queued set, the changed list, the
        two active lists (with_store; else those three live in global memory), the reduction
        words (four longs a work-item of a group `width` wide), the control words. Each is a
        multiple of 8 bytes: NVIDIA lays local arguments end to end, and L_red holds longs."""
        dm = self.dm
        width = width or self.tuning.local
        words = lambda n: 4 * ((n + 31) // 32 + 1)  # noqa: E731
        big = (self.store_ints(), max(dm.nv, 1), 2 * dm.nunits) if with_store else (1, 1, 1)
        return tuple(
            _round8(n)
            for n in (4 * big[0], 2 * words(dm.nv), words(dm.nc), 4 * big[1], 4 * big[2], 8 * 4 * width, 4 * 16)
        )

    def _group_local_bytes(self, with_store: bool, width: int | None = None) -> int:
        """Local memory of one work-group (_group_local_sizes)."""
        return sum(self._group_local_sizes(with_store, width))

    def kernel_args(self, named: list[tuple[str, object]]) -> tuple:
        """The values of `named` (parameter, value), in any order, as the kernel takes them: in
        the order of kernel_abi.SEARCH_PARAMS, from which the kernels' signatures are generated.
        A parameter named twice, or one the kernel has not or lacks, fails by name (an internal
        error: a launch with a buffer missing would search with another's)."""
        want = parameter_names("group" if self.group else "item")
        values = dict(named)
        if len(values) != len(named) or values.keys() != set(want):  # the launch's check, by set: cheap
            given = [name for name, _ in named]
            problems = [f"{name} twice" for name in values if given.count(name) > 1]
            problems += [f"{name} missing" for name in want if name not in values]
            problems += [f"{name} unknown" for name in values if name not in want]
            raise FznError(
                f"the search kernel's arguments: {', '.join(problems)} (an internal error in fzn-gpu: please report it)"
            )
        return tuple(values[name] for name in want)

    def phase_local(self, n_items: int) -> int:
        """A phase's work-group size: the tuned one, doubled while the phase's searches still
        fill no more work-items than a full launch would, up to Tuning.wide_local, the kernel's
        limit and the device's local memory. A phase of one search (a dive) or of a few hundred
        (an LNS step) then has its propagation spread over as many lanes as the device has,
        where groups of 32 left most multiprocessors idle."""
        w = self.tuning.local
        if not self.group:
            return w
        full = self.device.compute_units * self.tuning.items_per_cu * w
        widest = min(self.tuning.wide_local, self.max_group_width)
        while (
            2 * w <= widest
            and n_items * 2 * w <= full
            and self._group_local_bytes(not self.store_global, 2 * w) <= self.device.local_mem
        ):
            w *= 2
        return w

    def recomputes(self) -> bool:
        """Whether a work-group's stack holds fewer levels than a branch can reach (deeper
        levels are recomputed from the path: kernels/search_group.cl)."""
        return self.group and self.stack_levels < self.dm.maxd + 1

    def branch_path(self) -> int:
        """Decisions below a path's root that a recomputing group records."""
        return min(self.dm.max_branch + 8, BRANCH_PATH_MAX)

    def _stack_levels(self) -> int:
        """Levels of a work-group's stack (one node each). The whole depth a branch can reach
        where the device's memory holds it for every group wanted; else as many as fit (at
        least STACK_MIN), and deeper levels are recomputed: the worst case (every variable split
        to a point) of a big model can be thousands of levels of a large node, while its real
        branches are far shallower. FZN_GPU_STACK_LEVELS sets it (tests of recomputation)."""
        dm, d = self.dm, self.device
        full = dm.maxd + 1
        forced = settings.integer("FZN_GPU_STACK_LEVELS", 0)
        if forced > 0:
            return min(forced, full)
        want = max(d.compute_units * self.tuning.items_per_cu, 1)
        node = 4 * self.store_ints()
        if want * full * node <= min(0.4 * d.global_mem, d.max_alloc) and full * self.store_ints() <= INDEX_MAX:
            return full
        other = self.per_item_bytes(self.branch_path() + 64, stack_levels=0)
        fit = min(
            (0.4 * d.global_mem / want - other) / node, d.max_alloc / (want * node), INDEX_MAX / self.store_ints()
        )
        return int(min(full, max(STACK_MIN, fit)))

    def per_item_bytes(self, pcap: int, stack_levels: int | None = None) -> int:
        """Global memory of one search (a work-item's, or a work-group's)."""
        dm = self.dm
        # dom_w_deg's weights: the plan's, or a restart's (engine/restart.py), so always counted
        common = dm.maxd * len(Lv) + pcap * DEC + len(St) + 2 * cnt_row(self.tuning.profile) + dm.nc
        if self.group:
            levels = self.stack_levels if stack_levels is None else stack_levels
            return 4 * (common + (levels + 1) * self.store_ints() + 2 * dm.nunits + dm.nv)
        ints = 3 * dm.nv + dm.nwords + 4 * dm.nf + self.tcap + dm.nc + common
        return 4 * ints + dm.nc

    def _default_items(self) -> int:
        d = self.device
        want = d.compute_units * self.tuning.items_per_cu
        per = self.per_item_bytes(64 + (self.branch_path() if self.recomputes() else 0))
        by_mem = int(0.4 * d.global_mem) // per
        dm = self.dm
        if self.group:  # a group's arrays are reached through 64-bit offsets: only one group's must fit
            path = DEC * (64 + (self.branch_path() if self.recomputes() else 0))
            indexed = max(self.stack_levels * self.store_ints(), dm.maxd * len(Lv))
            biggest = 4 * max(indexed, path)
            by_index = want if indexed <= INDEX_MAX else 0
        else:
            biggest = packed.layout("item", "pk_node", self.node_sizes(1))[1]  # one buffer holds a node
            by_index = INDEX_MAX // max(self.tcap, dm.nv, dm.nwords, dm.nc, dm.maxd * len(Lv), 1)
        by_alloc = int(d.max_alloc) // max(biggest, 1)
        n = max(1, min(want, by_mem, by_alloc, by_index))
        if n < 1 or by_mem < 1 or by_alloc < 1:
            raise FznError(
                f"the model needs {per / 2**20:.0f} MiB per search thread, more than {d.name} holds",
                fix="try a smaller model, or a device with more memory (--devices)",
            )
        return n

    def emit_limit(self, paths: Paths, cutoff: int = 1) -> int:
        """The most paths an expansion pass may emit: its buffer gets a fifth of the memory
        that one allocation may take."""
        room = int(0.2 * min(self.device.max_alloc, self.device.global_mem))
        return max(1024, room // (4 * (1 + DEC * path_capacity(paths, cutoff))))

    # ------------------------------------------------------------------ phases
    def run_phase(
        self,
        paths: Paths | DevicePaths,
        cutoff: int,
        enqueue_all: bool,
        on_slice,
        deadline: float | None,
        count_only: bool = False,
        emit_cap: int = 0,
        resplit: Resplit | None = None,
        lns: Exploration | None = None,
    ):
        """Search every sub-search space in `paths` (all of it, or to `cutoff` left decisions,
        emitting the frontier). Calls on_slice(solutions ndarray) after each slice; it returns
        False to stop. Returns (finished, emitted paths or None on overflow); afterwards
        `phase_solutions` holds how many solutions the kernels met (counted or written).
        With `resplit` (search phases only), the phase's paths change between slices: busy
        work-items donate paths when it asks, and it may give the unstarted rest away.
        With `lns` (lns.py), each path gets a node budget, values may be chosen at random, and
        the best objective met below each path lands in lns.results."""
        phase = Phase(self, paths, cutoff, enqueue_all, deadline, count_only, emit_cap, resplit, lns)
        return phase.finish(phase.run(on_slice))

    def _weights(self, n_items: int, keep: bool):
        """dom_w_deg's failure counts, one per constraint and search (a one-int buffer where no
        search selects by them). `keep`: the counts of the last phase of as many searches go on
        (restarts learn from every round before); otherwise they start at 1."""
        size = max(n_items * self.dm.nc, 1)
        held = self._scratch.get("weights") if keep else None
        if held is not None and held.size == 4 * size:
            return held
        buf = self.cl.Buffer(
            self.ctx,
            self.cl.mem_flags.READ_WRITE | self.cl.mem_flags.COPY_HOST_PTR,
            hostbuf=np.ones(size, dtype=np.int32),
        )
        if keep:
            self._scratch["weights"] = buf
        return buf

    def best(self) -> int | float:
        """The best sense-adjusted objective the kernels have met: INT_MAX (int) or inf (float)
        where none."""
        if self.float_objective:
            return float_value(int(self.fbest[0]))
        return int(self.ctrl[Ctrl.BEST])

    def share_now(self) -> float:
        """This runner's share of its device's wall time now (time_share, asked if callable)."""
        share = self.time_share() if callable(self.time_share) else self.time_share
        return min(1.0, share)

    def pause_after(self, dt: float, deadline: float | None) -> None:
        """After a slice of `dt` seconds, leave the device to the other engine for as long as
        keeps this runner's launches at its share of the wall time (share_now). Two engines
        launching on one GPU (the portfolio on a lone GPU) take turns slice by slice whatever
        their work-groups, so branch and bound's full slices held every LNS launch back
        (docs/bench/measurements.md, the default engines on a GPU alone)."""
        share = self.share_now()
        if share >= 1:
            return
        wait = dt * (1 / share - 1)
        if deadline is not None:
            wait = min(wait, deadline - time.monotonic())
        if wait > 0:
            self.resume.wait(wait)

    def set_best(self, value: int | float) -> None:
        if self.float_objective:
            self.fbest[0] = FLOAT_NONE if value == math.inf else int(to_ord(float(value)))
            self.cl.enqueue_copy(self.queue, self.fbest_buf, self.fbest)
            return
        self.ctrl[Ctrl.BEST] = value
        self.cl.enqueue_copy(self.queue, self.ctrl_buf, self.ctrl)


def share_gpus(runners: list[Runner], share: TimeShare, resume: threading.Event) -> None:
    """The GPU runners of a search that another engine runs beside (the portfolio's LNS on a
    lone GPU) take `share` of the wall time (Runner.pause_after; a callable: the share it
    returns at each slice); `resume` ends a pause."""
    for r in runners:
        if r.device.is_gpu:
            r.time_share, r.resume = share, resume


def other_runners(devices: list, dm: DeviceModel, opts) -> list[Runner]:
    """Runners for the devices beside a search's first (kernel builds included); one that fails
    to build is left out, said on stderr with -v."""
    built = []
    for device in devices:
        try:
            built.append(Runner(device, dm, seed=opts.seed, verbose=opts.verbose))
        except FznError as err:
            if opts.verbose:
                print(f"fzn-gpu: leaving out {device.name}: {err}", file=sys.stderr)
    return built


@dataclass
class Exploration:
    """How an LNS phase searches its paths (neighbourhoods or candidate assignments): at most
    node_limit nodes below each (0: no limit), values at random (random labelling) or by the
    search plan; results[i] is filled with the best objective (sense-adjusted) met below path
    i, INT_MAX where none (with prune, only those better than the bound show; with own_bound,
    each path is bounded by its own best alone, from the bound down, and results[i] stays at
    the bound where it met nothing better). With it, every
    path starts from all constraints queued, and the root fixpoint the kernel writes is not
    kept (a path's first node is not the root). `enough` < 1 ends the batch when that share of
    the work-items has finished and no path is left to start: a GPU thread is slow, and a
    batch waiting for its slowest neighbourhood took seconds, its paths' node counts spread
    from tens to the limit (docs/bench/measurements.md)."""

    node_limit: int = 0
    random_values: bool = False
    prune: bool = True  # False: no bound below the paths, each one's own objective
    own_bound: bool = False  # with prune: each path bounded by its own best, not the phase's
    enough: float = 1.0  # end the batch once this share of work-items is done
    limits: np.ndarray | None = None  # a node limit per path (restarts), over node_limit
    div: int = 0  # Div bits for every search but the first (restarts)
    salt: int = 0  # varies the searches' random choices from one phase to the next
    keep_weights: bool = False  # dom_w_deg's counts go on from the last such phase
    results: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))

    @property
    def mode(self) -> Results:
        """What the kernel records and prunes by (kernel_abi.Results)."""
        if not self.prune:
            return Results.EVALUATE
        return Results.OWN if self.own_bound else Results.PRUNE


class SliceBudget:
    """The work per work-item (nodes plus propagations) of one kernel slice, steered so that a
    slice lasts about TARGET_S: short enough for time limits, new bounds and solutions to act
    quickly, long enough to keep launch overhead small. It moves in proportion to the last
    slice's time, and is cut so a slice predicted to end past the deadline does not start that
    way. Each size of phase (its work-items, by powers of two) keeps a budget of its own: one
    diving item and 67k searching items differ by orders of magnitude per unit, so a phase of
    a new size starts small; a phase of a size met before starts from what that size learnt,
    so an LNS step (whose size follows its strategy) finds its size's budget ready rather than
    spending a GPU step's launches doubling up to its node budget from START."""

    TARGET_S, START, LOWEST, HIGHEST = 0.05, 16, 8, 1 << 22
    # a tail slice's share of a whole one (docs/bench/measurements.md, shorter slices in a search's tail); 1: off
    TAIL_SHARE = 5  # FZN_GPU_TAIL_SHARE for tuning runs
    CLOCKED = 1 << 30  # a slice the device's clock ends: the budget never does

    def __init__(self, fixed: int = 0) -> None:
        self.fixed = fixed
        self.TAIL_SHARE = settings.integer("FZN_GPU_TAIL_SHARE", SliceBudget.TAIL_SHARE)
        self.TARGET_S = settings.number("FZN_GPU_SLICE_S", SliceBudget.TARGET_S)
        self.value = fixed or self.START
        self.size = -1  # the current phase's size: its work-items' bit length
        self.s_per_unit: float | None = None  # the last slice's seconds per unit of budget
        self.learnt: dict[int, tuple[int, float | None]] = {}  # size -> (value, s_per_unit)

    def begin_phase(self, items: int) -> None:
        size = int(items).bit_length()
        if size != self.size and not self.fixed:
            self.learnt[self.size] = (self.value, self.s_per_unit)
            self.size = size
            self.value, self.s_per_unit = self.learnt.get(size, (self.START, None))

    def for_slice(self, deadline: float | None, tail: bool = False) -> int:
        """`tail`: many searches were idle at the last slice's end, waiting for donated paths,
        which reach them only at a slice's start, or running the few just given them: a slice
        TAIL_SHARE times shorter brings them work that much sooner (the budget learnt stays
        that of a whole slice)."""
        value = max(self.LOWEST, self.value // self.TAIL_SHARE) if tail else self.value
        if deadline is not None and self.s_per_unit:
            fits = int(0.8 * (deadline - time.monotonic()) / self.s_per_unit)
            return max(self.LOWEST, min(value, fits))
        return value

    def clock_us(self, deadline: float | None) -> int:
        """A slice's length in microseconds where the device's clock ends it (Tuning.slice_clock):
        the target, shorter before a deadline."""
        seconds = self.TARGET_S
        if deadline is not None:
            seconds = min(seconds, max(0.001, 0.8 * (deadline - time.monotonic())))
        return int(seconds * 1e6)

    def after_slice(self, used: int, seconds: float, cut_short: bool = False, tail: bool = False) -> None:
        """cut_short: the slice may have ended before its budget ran out (a full solution
        buffer, every search done), so it may shrink the budget but never grow it: with -a on
        a model rich in solutions, slices of a millisecond had raised it to the maximum, and
        the first slice with few solutions then ran for a minute, deaf to time limits and
        Ctrl-C. `tail`: a shortened slice (for_slice), read as the whole slice it stands for."""
        if self.fixed:
            return
        if tail:
            used, seconds = used * self.TAIL_SHARE, seconds * self.TAIL_SHARE
        self.s_per_unit = seconds / max(used, 1)
        ratio = self.TARGET_S / max(seconds, 1e-6)
        if cut_short:
            ratio = min(ratio, 1.0)
        self.value = int(min(max(used * min(ratio, 2.0), self.LOWEST), self.HIGHEST))
