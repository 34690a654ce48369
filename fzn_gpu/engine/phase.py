"""One phase on one device: a list of sub-search spaces searched in slices of the search kernel
(Runner.run_phase). A `Phase` owns what the phase uploads and keeps between its slices (its
buffers, the paths the device holds, the searches' status rows, the donations asked for), and
splits its work into the steps every slice takes: the kernel's arguments, the launch, what the
slice read back, the re-split of busy searches' paths, ordered printing's pruning, the hand
over of idle searches. The Runner owns the device (context, queue, program, the model's
buffers) and the results a phase leaves on it (phase_solutions and the statistics).

Nothing here imports runner.py: the Runner hands itself in."""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

from .. import settings
from ..errors import FznError
from ..runtime import kernel_abi
from ..runtime.kernel_abi import DEC, SETTING_SLOTS, Cnt, Ctrl, Div, Lv, Results, St, Status
from . import packed, views
from .lns_paths import DevicePaths
from .paths import Paths
from .profile import cnt_row
from .resplit import HANDOVER_RECORDS, RESPLIT_SLACK, Resplit, many_idle

# the settings a phase changes from slice to slice (Phase.arguments), each at its slot
SLICE_SETTINGS = ("budget", "slice_us", "n_sub", "sub_base", "donate", "handover")
SLOT = {name: SETTING_SLOTS[name] for name in SLICE_SETTINGS}
INT_MAX = 2**31 - 1
NEED_SUB, DONE = int(Status.NEED_SUB), int(Status.DONE)


def under_way(status: np.ndarray) -> np.ndarray:
    """The searches neither waiting for a path nor out of work, by their status column: two
    comparisons, where np.isin's sorting was a visible part of a slice's host time."""
    return (status != NEED_SUB) & (status != DONE)


class CapacityError(Exception):
    """A work-item ran out of trail or depth: the search is incomplete (never a wrong answer)."""

    def __init__(self, code: int):
        super().__init__({1: "trail", 2: "depth", 3: "path"}.get(code, "capacity"))
        self.code = code


def path_capacity(paths: Paths | DevicePaths, cutoff: int) -> int:
    """Decisions an expansion pass's paths can reach: the longest input path, up to two per
    level of the cutoff (a right branch and the next left one), and slack."""
    return paths.max_decisions() + 2 * cutoff + 8


def on_host(paths: Paths | DevicePaths) -> Paths:
    """The paths as host arrays (a phase that grows its paths works on them there)."""
    return paths if isinstance(paths, Paths) else paths.to_host()


class Phase:
    """Runner.run_phase's work: `run(on_slice)` searches every sub-search space of `paths`
    (all of it, or to `cutoff` left decisions, emitting the frontier), then `finish` reads
    back the counters and the emitted paths. See Runner.run_phase for the arguments."""

    def __init__(
        self,
        runner: Any,
        paths: Paths | DevicePaths,
        cutoff: int,
        enqueue_all: bool,
        deadline: float | None,
        count_only: bool,
        emit_cap: int,
        resplit: Resplit | None,
        lns: Any,
    ):
        r = self.r = runner
        self.cl, self.dm = r.cl, r.dm
        self.cutoff, self.deadline, self.count_only = cutoff, deadline, count_only
        self.resplit, self.lns = resplit, lns
        self.enqueue_all = enqueue_all or lns is not None
        self.paths = paths
        self.n_sub = len(paths)
        # a search that re-splits runs at the device's full width whatever its paths: idle
        # work-items take the paths busy ones donate. A block of fewer paths than the device's
        # work-items (a slow device's handed-over searches) otherwise ran on that many alone,
        # down to a single path searched by one work-group (docs/bench/measurements.md, "A
        # device whose node rate does not pay leaves")
        wide = resplit is not None and cutoff == 0 and lns is None
        self.n_items = n_items = max(1, r.max_items if wide else min(r.max_items, self.n_sub))
        r.stats.items = max(r.stats.items, n_items)
        self.hands_over = resplit is not None and resplit.may_hand_over and not r.group
        self._shapes(emit_cap)
        self.poison = settings.flag("FZN_GPU_POISON", False)  # debugging: what a kernel reads before writing shows up
        # the events of the copies put() queued: pyopencl's event of a copy that is not done
        # waits for it when dropped, holding the interpreter lock, and PoCL's copy waits for
        # whatever the device runs, another queue's slice too: every thread of the process,
        # the watchdog's among them, stood still until that slice ended (docs/bench/measurements.md,
        # Time limits and the interpreter's lock). So they are kept until the phase's first
        # slice has finished, and dropped once done.
        self.uploads: list = []
        self._buffers()
        self.finished = False
        self.donate, self.hungry, self.handover = 0, False, False
        self.donations: np.ndarray | None = None  # the donated records a slice read back
        self.slice_end: float | None = None
        self.kernel_s = 0.0

    # -- set-up
    def _shapes(self, emit_cap: int) -> None:
        """The longest path the device holds (pcap), a record's (rcap), and the emitted records'
        stride and count."""
        r, paths, resplit, n_items = self.r, self.paths, self.resplit, self.n_items
        if resplit is not None:
            pcap = max(paths.max_decisions(), resplit.longest) + RESPLIT_SLACK
            # at most one donation per item and slice, or a hand-over's records
            emit_cap = n_items * (HANDOVER_RECORDS if self.hands_over else 1)
        else:
            pcap = path_capacity(paths, self.cutoff) if self.cutoff > 0 else 1
            emit_cap = max(emit_cap, 1) if self.cutoff > 0 else 1
        self.emit_stride = 2 + DEC * pcap  # length, decisions, source path
        self.emit_cap = emit_cap
        self.rcap = pcap  # the longest path a record (emitted, donated) holds
        if r.recomputes():  # deeper levels are recomputed from the branch's path
            pcap = max(pcap, max(paths.max_decisions(), resplit.longest if resplit else 0) + r.branch_path())
        self.pcap = pcap

    def zeros(self, nbytes: int):
        cl = self.cl
        nbytes = -(-max(int(nbytes), 4) // 4) * 4  # whole ints (a byte mask's too): a fill's unit
        buf = cl.Buffer(self.r.ctx, cl.mem_flags.READ_WRITE, size=nbytes)
        if self.poison:
            cl.enqueue_fill_buffer(self.r.queue, buf, np.int32(0x5A5A5A5A), 0, nbytes)
        return buf

    def scratch(self, name: str, nbytes: int):
        """A buffer the kernel writes before it reads, kept for the next phase of this size or
        less: an LNS step is a phase, and a GPU's stacks take gigabytes."""
        nbytes = max(int(nbytes), 4)
        held = self.r._scratch.get(name)
        if held is None or held.size < nbytes or self.poison:
            self.r._scratch.pop(name, None)  # freed before its successor is allocated
            held = self.r._scratch[name] = self.zeros(nbytes)
        return held

    def put(self, name: str, a: np.ndarray):
        """A scratch buffer holding a copy of `a`, queued ahead of the launch: a phase's inputs
        take the last phase's buffers instead of new ones (an LNS step is a phase, and a buffer
        made with its data cost an allocation and a wait each)."""
        a = np.ascontiguousarray(a) if a.size else np.zeros(1, a.dtype)
        buf = self.scratch(name, a.nbytes)
        self.uploads.append(self.cl.enqueue_copy(self.r.queue, buf, a, is_blocking=False))
        return buf

    def upload(self, part: Paths | DevicePaths) -> None:
        """The paths the device takes its next sub-search spaces from (SUBP, SUBD)."""
        r, cl = self.r, self.cl
        if isinstance(part, DevicePaths):  # built on the device (engine/lns_paths.py)
            if r.paths_kernel is None:
                r.paths_kernel = cl.Kernel(r.prog, "lns_paths")
            with r.launch_lock:  # PoCL: one launch in flight at a time (device.launch_lock)
                self.SUBP, self.SUBD = part.to_device(
                    cl, r.queue, r.paths_kernel, self.put, lambda n, name: self.scratch(name, n)
                )
                r.queue.finish()
            return
        # the runner's buffers of the last upload, written by queued copies: a re-splitting
        # phase uploads its unstarted paths at every slice that brings donations, and two new
        # buffers each time cost an allocation and a wait on the device's driver
        self.SUBP, self.SUBD = self.put("sub_ptr", part.ptr), self.put("sub_data", part.data)

    def _buffers(self) -> None:
        """Every buffer of the phase, its searches' status rows and counters, the root and the
        control block reset."""
        r, cl, dm, lns, n_items = self.r, self.cl, self.dm, self.lns, self.n_items
        if r.group:  # a node between slices, the stack of nodes, two active lists
            self.CUR = self.scratch("node", 4 * n_items * r.store_ints())
            self.STACK = self.scratch("stack", 4 * n_items * r.stack_levels * r.store_ints())
            self.node_at: dict[str, int] = {}
        else:  # one buffer: domains (float boxes too), trail stamps, trail, queue, queued flags
            self.node_at, nbytes = packed.layout("item", "pk_node", r.node_sizes(n_items))
            self.NODE = self.zeros(nbytes)
            inq = self.node_at["at_INQ"]  # the queued flags start cleared
            cl.enqueue_fill_buffer(r.queue, self.NODE, np.int32(0), inq, nbytes - inq)
        self.LV = self.scratch("levels", 4 * n_items * dm.maxd * len(Lv))
        self.PATH = self.scratch("path", 4 * n_items * self.pcap * DEC)
        self.use_weights = dm.use_weights or bool(lns is not None and lns.div & Div.WDEG)
        self.WEIGHTS = r._weights(n_items if self.use_weights else 0, lns is not None and lns.keep_weights)
        st = self.st = np.zeros((n_items, len(St)), dtype=np.int32)
        self.status = st[:, St.STATUS].copy()  # the host's copy of the column, as of the last slice
        salt = lns.salt if lns is not None else 0
        st[:, St.RNG] = (np.arange(n_items, dtype=np.int64) * 2654435761 + r.seed * 97 + salt * 7919 + 12345) % (
            2**31 - 1
        ) + 1
        if lns is not None and lns.div:  # the search of path 0 follows the plan, the others depart from it
            st[:, St.DIV] = lns.div
            if lns.div & Div.TIES:  # the kernel draws each path's key from this and the path
                st[:, St.TIE] = np.random.default_rng([r.seed, salt]).integers(1, 2**31 - 1, n_items)
        self.ST = self.put("st", st)
        self.cnt = np.zeros((n_items, cnt_row(r.tuning.profile)), dtype=np.int64)
        self.CNT = self.scratch("cnt", self.cnt.nbytes)
        cl.enqueue_fill_buffer(r.queue, self.CNT, np.int32(0), 0, self.cnt.nbytes)
        self.base = 0  # the device holds paths base..n_sub-1; Ctrl.NEXT counts from base
        self.upload(self.paths)
        self.EMIT = self.scratch("emit", 4 * self.emit_cap * self.emit_stride)
        node_limits = lns.limits if lns is not None else None
        self.limits = node_limits is not None
        if node_limits is not None:
            if len(node_limits) != self.n_sub:
                raise ValueError("Exploration.limits needs one node limit per path")
            self.LIMITS = self.put("limits", np.ascontiguousarray(node_limits, np.int32))
        else:
            self.LIMITS = self.scratch("limits", 4)
        if lns is not None:
            # each path's own bound starts at the phase's (Results.OWN), else INT_MAX: none met
            start = int(r.ctrl[Ctrl.BEST]) if lns.mode == Results.OWN else INT_MAX
            lns.results = np.full(max(self.n_sub, 1), start, dtype=np.int32)
            self.RESULTS = self.put("results", lns.results)
        else:
            self.RESULTS = self.scratch("results", 4)
        roots = {"root_lb": r.root_lb, "root_ub": r.root_ub, "root_bits": r.root_bits, "root_fb": r.root_fb}
        root, self.root_at = packed.pack(r.kernel_name, "pk_root", roots)
        self.ROOT = self.put("root", root)
        for k in (Ctrl.NEXT, Ctrl.SOLS, Ctrl.EMIT, Ctrl.OVERFLOW, Ctrl.DONATED):
            r.ctrl[k] = 0
        cl.enqueue_copy(r.queue, r.ctrl_buf, r.ctrl)
        self.local = local = r.phase_local(n_items)
        r.stats.width = max(r.stats.width, local if r.group else 0)
        if r.group:  # a work-group per search
            self.global_size = n_items * local
            if r.store_global:  # the node, changed list and active lists in global memory
                self.ACT = self.scratch("active", 4 * n_items * (2 * dm.nunits + max(dm.nv, 1)))
            else:
                self.ACT = self.zeros(4)
            sizes = r._group_local_sizes(not r.store_global, local)
            parts = kernel_abi.PACKED["group"]["pk_local"]
            self.local_at, nbytes = packed.layout(
                "group", "pk_local", {p.name: n // p.itemsize for p, n in zip(parts, sizes)}
            )
            self.LOCAL = cl.LocalMemory(nbytes)
        else:
            self.global_size = ((n_items + local - 1) // local) * local
            self.local_at = {}
        self.settings_row = self._settings()

    def _settings(self) -> np.ndarray:
        """The settings row of the phase's slices (kernel_abi.SETTINGS): every scalar the kernel
        reads and the packed arrays' offsets; `arguments` sets what changes from slice to slice."""
        r, dm, lns = self.r, self.dm, self.lns
        values = {
            "nv": dm.nv,
            "nc": dm.nc,
            "nwords": dm.nwords,
            "maxd": dm.maxd,
            "pcap": self.pcap,
            "ngroups": r.ngroups,
            "n_items": self.n_items,
            "use_weights": self.use_weights,
            "obj_var": dm.obj_var,
            "obj_sense": dm.obj_sense,
            "count_only": self.count_only,
            "enqueue_all": self.enqueue_all,
            "emit_cap": self.emit_cap,
            "emit_stride": self.emit_stride,
            "cutoff": self.cutoff,
            "sol_cap": r.sol_cap,
            "sol_words": dm.sol_words,
            "node_limit": lns.node_limit if lns else 0,
            "use_limits": self.limits,
            "random_values": bool(lns and lns.random_values),
            "use_results": Results.NONE if lns is None else lns.mode,
            **r.model_at,
            **self.root_at,
            **r.root_out_at,
            **self.node_at,
            **self.local_at,
            **dict.fromkeys(SLICE_SETTINGS, 0),
        }
        if r.group:
            values |= {
                "nunits": dm.nunits,
                "slevels": r.stack_levels,
                "rcap": self.rcap,
                "donate_each": self.resplit.each if self.resplit is not None else 1,
            }
        else:
            values |= {
                "nf": dm.nf,
                "tcap": r.tcap,
                "interleave": r.tuning.interleave,
                "track": self.resplit is not None,
            }
        names = kernel_abi.settings_names(r.kernel_name)
        return packed.settings_row(r.kernel_name, {k: v for k, v in values.items() if k in names})

    # -- a slice
    def arguments(self, budget: int, slice_us: int) -> tuple:
        """The kernel's arguments for the next slice, by name (Runner.kernel_args puts them in
        the order of kernel_abi.SEARCH_PARAMS, from which the kernel's signature is generated),
        and the settings row's scalars that change from slice to slice."""
        r, row = self.r, self.settings_row
        values = (budget, slice_us, self.n_sub - self.base, self.base, self.donate, self.handover)
        for name, value in zip(SLICE_SETTINGS, values):
            row[SLOT[name]] = value
        named = [
            ("pk_model", r.model_buf),
            ("pk_root", self.ROOT),
            ("pk_settings", packed.settings_value(row)),
            ("LV", self.LV),
            ("PATH", self.PATH),
            ("WEIGHTS", self.WEIGHTS),
            ("ST", self.ST),
            ("CNT", self.CNT),
            ("sub_ptr", self.SUBP),
            ("sub_data", self.SUBD),
            ("emit", self.EMIT),
            ("sols", r.sol_buf),
            ("ctrl", r.ctrl_buf),
            ("pk_root_out", r.root_out_buf),
            ("limits", self.LIMITS),
            ("results", self.RESULTS),
        ]
        if r.group:
            named += [("CUR", self.CUR), ("STACK", self.STACK), ("ACT", self.ACT), ("pk_local", self.LOCAL)]
        else:
            named += [("pk_node", self.NODE), ("fbest", r.fbest_buf)]
        return r.kernel_args(named)

    def launch(self, args: tuple, count_nodes: bool = False) -> float:
        """One slice on the device and what every slice reads back, in one wait: the control
        block, the searches' status rows (self.st), a float objective's bound, the donations
        asked for (self.donations) and, with `count_nodes` (the balancer measures node rates),
        the counters (self.cnt). Its seconds. A wait on the device costs a round trip through
        the driver, and a slice's host part, paid hundreds of times in a count, is time the GPU
        stands idle (sliceGapTime)."""
        r, cl = self.r, self.cl
        t0 = time.perf_counter()
        if self.slice_end is not None:
            r.stats.gap_s += t0 - self.slice_end
        try:
            with r.launch_lock:
                r.launch(cl, r.queue, (self.global_size,), (self.local,), args)
                # the copies' events are held until the queue has finished, as `uploads` are
                reads = [
                    cl.enqueue_copy(r.queue, r.ctrl, r.ctrl_buf, is_blocking=False),
                    cl.enqueue_copy(r.queue, self.st, self.ST, is_blocking=False),
                ]
                if count_nodes:
                    reads.append(cl.enqueue_copy(r.queue, self.cnt, self.CNT, is_blocking=False))
                if r.float_objective:  # the bound the slice's solutions set
                    reads.append(cl.enqueue_copy(r.queue, r.fbest, r.fbest_buf, is_blocking=False))
                # the records the slice asked busy searches to donate, as many as were asked:
                # fewer may come, but a wait of their own cost more than the rows (a hand-over's
                # many records are read as written, in take_donations)
                self.donations = None
                if 0 < self.donate <= self.n_items:
                    self.donations = np.empty((self.donate, self.emit_stride), dtype=np.int32)
                    reads.append(cl.enqueue_copy(r.queue, self.donations, self.EMIT, is_blocking=False))
                r.queue.finish()
                r.launch.settle()
                reads.clear()
        except cl.Error as err:
            raise FznError(
                f"the search kernel failed on {r.device.name} with {self.n_items} work-items: {err}",
                fix="fewer work-items (FZN_GPU_ITEMS_PER_CU), another device (--devices), or a smaller model",
            ) from None
        self.slice_end = time.perf_counter()
        self.uploads.clear()  # done: the queue has finished
        dt = self.slice_end - t0
        r.stats.kernel_s += dt
        self.kernel_s += dt
        r.stats.search_s += self.n_items * dt
        r.stats.launches += 1
        return dt

    def read_slice(self) -> np.ndarray | None:
        """The slice's solutions, their folded variables written back (the status rows and a
        float objective's bound came with the launch)."""
        r, cl, dm = self.r, self.cl, self.dm
        nsol = int(r.ctrl[Ctrl.SOLS])
        sols = None
        if nsol:
            sols = np.empty((nsol, r.sol_row), dtype=np.int32)
            cl.enqueue_copy(r.queue, sols, r.sol_buf)
            views.fill(dm.views, sols[:, 1 : 1 + dm.nv])  # variables folded into all_different
            r.ctrl[Ctrl.SOLS] = 0
            cl.enqueue_copy(r.queue, r.ctrl_buf, r.ctrl)
        return sols

    def take_donations(self, started: int) -> None:
        """Re-splitting: the paths busy searches donated this slice, and any handed in from
        outside (a cluster worker's next paths: cluster/worker.py), after the unstarted ones;
        the device then holds the unstarted paths only."""
        r, cl, resplit = self.r, self.cl, self.resplit
        assert resplit is not None
        n_donated = min(int(r.ctrl[Ctrl.DONATED]), self.donate)
        if n_donated:
            if self.donations is not None:  # read with the slice's control block (launch)
                rec = self.donations[:n_donated]
            else:
                rec = np.empty((n_donated, self.emit_stride), dtype=np.int32)
                cl.enqueue_copy(r.queue, rec, self.EMIT)
                r.queue.finish()
            self.paths = on_host(self.paths).prefix(self.n_sub).extend(Paths.from_records(rec))
            self.n_sub = len(self.paths)
            r.stats.donated += n_donated
            resplit.donated(rec[:, -1].copy(), self.paths)
        self.n_sub = max(min(resplit.keep(started, self.n_sub), self.n_sub), started)
        fed = resplit.more()
        if fed is not None:
            self.paths = on_host(self.paths).prefix(self.n_sub).extend(fed)
            self.n_sub = len(self.paths)
        if n_donated or fed is not None:  # the device now holds the unstarted paths only
            self.upload(self.paths.block(started, self.n_sub))
            self.base, r.ctrl[Ctrl.NEXT] = started, 0
        elif r.ctrl[Ctrl.NEXT] > self.n_sub - self.base:
            r.ctrl[Ctrl.NEXT] = self.n_sub - self.base

    def prune(self, started: int, active: np.ndarray) -> None:
        """Ordered printing (its resplit alone has `prune`): what lies right of its last
        solution goes."""
        r, st = self.r, self.st
        pruned = self.resplit.prune(self.paths, started, self.n_sub, r.unfinished[0])  # type: ignore[union-attr]
        if pruned is None:
            return
        self.paths, self.n_sub, stop = pruned
        self.upload(self.paths.block(started, self.n_sub))
        self.base, r.ctrl[Ctrl.NEXT] = started, 0
        rows = np.flatnonzero(active)[stop]
        st[rows, St.STATUS] = self.status[rows] = NEED_SUB
        self.cl.enqueue_copy(r.queue, self.ST, st)

    def feed_idle(self, started: int, keep_going: bool) -> None:
        """Re-splitting: idle searches take the new paths, and the donations (or a hand-over's
        records) the next slice asks of the busy ones."""
        r, cl, st, resplit = self.r, self.cl, self.st, self.resplit
        assert resplit is not None
        idle = self.status == DONE
        n_idle = int(idle.sum())
        self.hungry = many_idle(n_idle, self.n_items)
        if self.n_sub > started and n_idle:  # idle work-items take the new paths
            st[idle, St.STATUS] = self.status[idle] = NEED_SUB
            # queued (the next launch's read of the rows comes after it); its event held until then
            self.uploads.append(cl.enqueue_copy(r.queue, self.ST, st, is_blocking=False))
            n_idle = 0
        wanted = resplit.wanted(n_idle, self.n_sub - started, self.n_items)
        self.donate = min(wanted, self.emit_cap) if keep_going else 0
        self.handover = self.hands_over and keep_going and resplit.hand_over()
        if self.handover:  # every search's records, as many as fit
            self.donate = self.emit_cap
        r.ctrl[Ctrl.DONATED] = 0
        # queued: the launch's read of the control block comes after it, and nothing changes
        # the host's copy before that read; its event is kept until then (`uploads`)
        self.uploads.append(cl.enqueue_copy(r.queue, r.ctrl_buf, r.ctrl, is_blocking=False))

    def verbose_line(self, dt: float, budget: int, nsol: int) -> None:
        r, st = self.r, self.st
        done = int((st[:, St.STATUS] == Status.DONE).sum())
        print(
            f"fzn-gpu: slice {r.stats.launches}: {dt * 1000:.1f} ms, budget {budget}, "
            f"{done}/{self.n_items} items done, next sub-space {self.base + int(r.ctrl[Ctrl.NEXT])}/{self.n_sub}, "
            f"{nsol} solutions, donated {min(int(r.ctrl[Ctrl.DONATED]), self.donate)}, cutoff {self.cutoff}",
            file=sys.stderr,
        )

    def run(self, on_slice) -> bool:
        """Slices until every search is done (True), on_slice(solutions) returns False, the
        deadline passes, or an LNS step's stragglers are left (False)."""
        r, st, n_items, lns, deadline = self.r, self.st, self.n_items, self.lns, self.deadline
        r.budget.begin_phase(n_items)
        while True:
            # many searches idle at the last slice's end: they wait for this slice's donations,
            # or run the few paths just given them, which busy ones may split at the next start
            tail = r.group and self.hungry
            budget = r.budget.for_slice(deadline, tail=tail)
            slice_us = r.budget.clock_us(deadline) if r.tuning.slice_clock else 0
            if slice_us:
                budget = r.budget.CLOCKED
            counting = self.resplit is not None and self.resplit.counting()  # the balancer measures node rates
            dt = self.launch(self.arguments(budget, slice_us), counting)
            # the status column once, contiguous: it is read several times a slice, and each
            # strided pass over the rows was a visible part of the host's time between slices
            status = self.status = st[:, St.STATUS].copy()
            nsol = int(r.ctrl[Ctrl.SOLS])
            sols = self.read_slice()
            # a slice ended by a full solution buffer or by every search running out of work
            # says nothing of how long its budget would have taken
            if not slice_us:
                all_done = bool((status == DONE).all())
                r.budget.after_slice(budget, dt, cut_short=nsol >= r.sol_cap or all_done, tail=tail)
            if r.ctrl[Ctrl.ERR]:
                raise CapacityError(int(r.ctrl[Ctrl.ERR]))
            if r.verbose:
                self.verbose_line(dt, budget, nsol)
            started = self.base + min(int(r.ctrl[Ctrl.NEXT]), self.n_sub - self.base)  # paths taken so far
            if counting:
                self.resplit.searched(int(self.cnt[:, Cnt.NODES].sum()))  # type: ignore[union-attr]
            if self.resplit is not None:
                self.take_donations(started)
            # what is not searched to its end yet, the slice's donations included: the paths
            # running and those not started (ordered printing waits on them: engine/ordered.py)
            active = under_way(status)
            r.unfinished = (st[:n_items, St.SUB][active].copy(), started, self.n_sub)
            keep_going = on_slice(sols)
            r.pause_after(dt, deadline)
            if keep_going and getattr(self.resplit, "prune", None) is not None:
                self.prune(started, active)
            if self.resplit is not None:
                self.feed_idle(started, keep_going)
            done = self.status == DONE  # as feed_idle and prune left it
            if done.all():
                return True
            if (
                lns is not None
                and lns.enough < 1
                and self.base + int(r.ctrl[Ctrl.NEXT]) >= self.n_sub
                and done.mean() >= lns.enough
            ):
                return False  # LNS: the stragglers' neighbourhoods are left unexplored
            if not keep_going or (deadline is not None and time.monotonic() >= deadline):
                return False

    # -- the end
    def finish(self, finished: bool) -> tuple[bool, Paths | None]:
        """The phase's counters into the runner's statistics, the LNS results or the root's
        fixpoint read back; (finished, the emitted frontier or None on overflow)."""
        r, cl, cnt, st, n_items = self.r, self.cl, self.cnt, self.st, self.n_items
        cl.enqueue_copy(r.queue, cnt, self.CNT)
        r.queue.finish()
        r.phase_solutions = int(cnt[:, Cnt.SOLS].sum())
        r.phase_cut = int(cnt[:, Cnt.CUT].sum())
        # paths searched to the end: taken, neither cut at their node limit nor still running
        running = int(under_way(st[:, St.STATUS]).sum())
        r.phase_explored = max(0, int(cnt[:, Cnt.SUBS].sum()) - r.phase_cut - running)
        r.stats.nodes += int(cnt[:, Cnt.NODES].sum())
        r.stats.fails += int(cnt[:, Cnt.FAILS].sum())
        r.stats.props += int(cnt[:, Cnt.PROPS].sum())
        r.stats.subs += int(cnt[:, Cnt.SUBS].sum())
        r.stats.recomputed += int(cnt[:, Cnt.RECOMPUTED].sum())
        r.stats.passes += int(cnt[:, Cnt.PASSES].sum())
        if r.tuning.profile:
            r.stats.cycles += cnt.sum(axis=0)  # a profile build's row: phases, then kinds
            if self.kernel_s > 0.05:  # long enough for launch overheads not to count
                busiest = float(cnt[:n_items, Cnt.T_TOTAL].max(initial=0))
                r.stats.clock_seen_hz = max(r.stats.clock_seen_hz, busiest / self.kernel_s)
        r.root_failed = bool(r.ctrl[Ctrl.ROOT_FAILED])
        if self.lns is not None:
            cl.enqueue_copy(r.queue, self.lns.results, self.RESULTS)
            r.queue.finish()
        elif self.enqueue_all and finished and not r.root_failed:  # the root's fixpoint
            data = np.empty(r.root_out_buf.size, np.uint8)
            cl.enqueue_copy(r.queue, data, r.root_out_buf)
            r.queue.finish()
            roots = {"root_out_lb": r.root_lb, "root_out_ub": r.root_ub, "root_out_bits": r.root_bits}
            packed.unpack_into(r.kernel_name, "pk_root_out", data, r.root_out_at, roots | {"root_out_fb": r.root_fb})
        if self.cutoff <= 0 or not finished or r.ctrl[Ctrl.OVERFLOW]:
            return finished, None
        n_emit = int(r.ctrl[Ctrl.EMIT])
        rec = np.empty((n_emit, self.emit_stride), dtype=np.int32)
        if n_emit:
            cl.enqueue_copy(r.queue, rec, self.EMIT)
            r.queue.finish()
        # in tree order: a search emits its frontier left to right, and the sources are in
        # tree order themselves (the sort is stable)
        return finished, Paths.from_records(rec[np.argsort(rec[:, -1], kind="stable")])
