"""Complete search: split the tree on the device into sub-search spaces (expansion passes),
then search them all in bounded slices; branch and bound for optimisation. Decides the final
status honestly: `==========` and UNSATISFIABLE only when every sub-search space was exhausted
without a capacity error."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import replace

import numpy as np

from .. import hooks, settings
from ..errors import FznError
from ..flatzinc.model import Model
from ..options import SolveOptions
from ..runtime.device import Device
from . import ranking
from .balance import DeviceShare, balance
from .faults import DeviceFault
from .floats import objective_keys
from .incumbent import Incumbent, Outcome, report_improvements
from .interface import JoinCluster
from .joining import RunnersBehind
from .ordered import OrderedSolutions
from .pack import DeviceModel
from .paths import Paths
from .phase import INT_MAX, CapacityError
from .resplit import Resplit, SelfSplit
from .restart import plan_dive
from .runner import Runner, TimeShare, other_runners, searches_hand_over, share_gpus

MAX_EXPANSIONS = 12


BNB_DIVE_WAIT_MS = 100  # the plan dive's wait for another engine's first solution (_wait_for_solution)


class CompleteSearch:
    def __init__(
        self,
        model: Model,
        dm: DeviceModel,
        devices: Device | list[Device],
        opts: SolveOptions,
        report,
        report_batch=None,
        incumbent: Incumbent | None = None,
        ordered: bool = False,
        cluster: JoinCluster | None = None,
    ):
        """report(values: np.ndarray[int32 per variable], objective or None) prints one solution;
        report_batch(rows), when given, prints many solutions of a satisfaction problem at once.
        With several devices, the first splits the root and all of them search the sub-search
        spaces together (balance.py). `incumbent` (optimisation, int objective): one shared
        with another engine running beside this one (the portfolio's LNS): improvements go
        through it, and its best bounds this search at every slice. `cancel`, once set, ends
        the search at the next slice, incomplete. `ordered` (satisfaction with a solution
        limit): solutions print in the order of the search tree, as a sequential search meets
        them (engine/ordered.py), whatever the devices and work-items. `cluster`: how to join
        the run's Ray cluster, whose workers then search the sub-search spaces (--cluster)."""
        self.model = model
        self.dm = dm
        self.opts = opts
        self.report = report
        self.report_batch = report_batch or (lambda rows: [report(row, None) for row in rows])
        self.devices = devices if isinstance(devices, list) else [devices]
        self.runner = Runner(self.devices[0], dm, seed=opts.seed, verbose=opts.verbose)
        self.runners = [self.runner]
        self.others_started = False  # _start_other_devices ran
        # the other devices' runners, built behind the root split (joining.py): those not yet
        # joined, by their index in `behind`
        self.behind: RunnersBehind | None = None
        self.pending: list[int] = []
        # devices a recent search on the same devices judged not paying (ranking.py): left out
        # of this one from the start, name -> why; `ranked` the devices as given, the record's key
        self.ranked_out: dict[str, str] = {}
        self.ranked = list(self.devices)
        self.model_key = ranking.model_key(dm)  # the model's name in the ranking's record
        self.gpu_time_share: TimeShare = 1.0  # of each GPU's wall time (share_gpus)
        self._shares: list[DeviceShare] = []  # the balancer's, joined or not (`shares`)
        self._share_of: dict[int, DeviceShare] = {}  # id(runner) -> its share
        self.by_share: dict[int, Runner] = {}  # the balancer's share index -> its runner
        self._lock = threading.RLock()  # device threads report solutions and counts
        self.optimising = dm.obj_var >= 0
        self.limit = opts.solution_limit(self.optimising)
        self.outcome = Outcome()
        self.count_only = opts.count_only and opts.all_solutions and not self.optimising
        self.counted = 0
        self.incumbent = incumbent if self.optimising and not self.runner.float_objective else None
        self.cancel = threading.Event()
        self.dive = True  # a first solution by one work-item first, on a GPU (tuning.dive_ms)
        # a first solution by one work-item in the plan's order before the split, on a device
        # without a timed dive (the portfolio's branch and bound on a CPU beside LNS on GPUs)
        self.plan_dive = False
        self.ordered = ordered and not self.optimising and self.limit is not None and not self.count_only
        # optimisation, deterministic: one search from the root to the end, a sequential branch
        # and bound whose improving solutions come in the same order every run (Gecode's, where
        # propagation and branching agree)
        self.sequential = ordered and self.optimising
        self.held = OrderedSolutions()
        self.cluster = self._join_cluster(cluster) if cluster is not None and opts.cluster else None

    def _join_cluster(self, join: JoinCluster):
        """The Ray cluster's workers that search the sub-search spaces (fzn_gpu/cluster/), or
        None where this search keeps to this machine's devices, said on stderr: solutions in
        tree order and a sequential branch and bound need one device, and a float objective's
        bound is shared between the devices of one machine only."""
        why = None
        if self.ordered or self.sequential:
            why = "--deterministic searches on one device"
        elif self.optimising and self.runner.float_objective:
            why = "a float objective is searched on this machine's devices"
        if why is not None:
            print(f"fzn-gpu: not on the cluster: {why}", file=sys.stderr)
            return None
        return join(self.model, self.dm, self.opts)

    def share_gpus(self, share: TimeShare) -> None:
        """Another engine runs on the same GPUs (the portfolio's LNS on a lone GPU): this
        search's launches on a GPU take at most `share` of the wall time (Runner.pause_after;
        a callable says it at each slice)."""
        self.gpu_time_share = share
        share_gpus(self.runners, share, self.cancel)

    # -- solutions of one slice, in the order to print them
    def _take(self, sols: np.ndarray | None) -> bool:
        with self._lock:
            return self._take_locked(sols)

    def _take_locked(self, sols: np.ndarray | None) -> bool:
        if sols is None or not len(sols):
            return self._more()
        if self.incumbent is not None:
            self.outcome.solutions += self.incumbent.offer(sols, "bnb")
            self.outcome.best = self.incumbent.bound()
        elif self.optimising:
            keys = objective_keys(self.dm, sols) if self.runner.float_objective else None
            report_improvements(self.outcome, sols, self.dm.obj_sense, self.report, keys)
        else:
            if self.limit is not None:
                sols = sols[: max(0, self.limit - self.outcome.solutions)]
            self.outcome.solutions += len(sols)
            if len(sols):
                self.report_batch(sols[:, 1:])
        return self._more()

    def stop(self) -> None:
        """Ends the search at its next slice, keeping what it found (an interrupt: SolveRun.wind_down)."""
        self.cancel.set()

    def _more(self) -> bool:
        if self.limit is not None and self.outcome.solutions >= self.limit:
            self.outcome.stopped = True
            return False
        return not self.cancel.is_set()

    def _on_slice(self, runner: Runner):
        """After a slice of `runner` (in its thread): take the solutions, then tighten its bound
        to the best any device or engine has found."""

        def on_slice(sols) -> bool:
            more = self._take(sols)
            if self.optimising:
                self._share_bound(runner)
            return more

        return on_slice

    def _dive(self, deadline: float | None, whole: bool = False) -> bool | None:
        """One work-item searches the whole tree from the root for a while: on a GPU it finds a
        first solution (and a bound for branch and bound) long before tens of thousands of
        threads would. True: it explored everything; False: stop (solution limit); None: go on
        with the parallel search, which may meet the dive's solutions again, so it runs only
        for optimisation (only improvements are printed) and for one solution. `whole`: the
        dive is the search, to the end or the deadline (deterministic optimisation)."""
        r = self.runner
        if not whole and hooks.device_fails(r.device.index, 0):
            raise FznError("fault injected by a test in the dive")
        until = deadline if whole else time.monotonic() + r.tuning.dive_ms / 1000.0
        if deadline is not None and until is not None:
            until = min(until, deadline)
        finished, _ = r.run_phase(Paths.root(), 0, True, self._on_slice(r), until, count_only=False)
        if finished:
            return True
        return None if self._more() else False

    def _solved(self) -> bool:
        """Another engine has a solution (the incumbent)."""
        return self.incumbent is not None and self.incumbent.bound() is not None

    def _wait_for_solution(self, deadline: float | None) -> bool:
        """Whether another engine has a solution, waiting FZN_GPU_BNB_DIVE_WAIT_MS
        (BNB_DIVE_WAIT_MS) for one. LNS's restarts on a GPU find a small model's first solution
        within tens of milliseconds: branch and bound then starts its split with that bound and
        proves sooner than after a dive of its own, and the GPU finds the improvements
        (docs/bench/measurements.md, "Branch and bound's dive on a CPU")."""
        if self.incumbent is None:  # no engine beside this one
            return False
        wait_s = settings.integer("FZN_GPU_BNB_DIVE_WAIT_MS", BNB_DIVE_WAIT_MS) / 1000.0
        until = time.monotonic() + wait_s if deadline is None else min(deadline, time.monotonic() + wait_s)
        while not self._solved() and not self.cancel.is_set() and time.monotonic() < until:
            time.sleep(0.002)
        return self._solved()

    def _plan_dive(self, deadline: float | None) -> bool:
        """restart.plan_dive on this search's first device, until the first solution (its own,
        or another engine's: the incumbent). The root split that follows expands every path a
        level at a time, which on a model of slow nodes reaches no leaf for seconds
        (docs/bench/measurements.md, "Branch and bound's dive on a CPU"); a dive reaches one
        through as many nodes as the model has decisions. True: the dive explored the whole
        tree under the bound and met no solution there (nothing better exists)."""
        r = self.runner
        if hooks.device_fails(r.device.index, 0):
            raise FznError("fault injected by a test in the dive")
        met = False

        def on_slice(sols) -> bool:
            nonlocal met
            met = met or (sols is not None and len(sols) > 0)
            more = self._take(sols)
            self._share_bound(r)
            return more and not (met or self._solved())

        return plan_dive(r, on_slice, deadline) is True and not met

    def run(self, deadline: float | None) -> Outcome:
        r = self.runner
        try:
            if self.sequential:  # the dive is the whole search: `whole` (None: time limit)
                return self._finish(bool(self._dive(deadline, whole=True)))
            if self.cluster is None:
                self._leave_out_by_rank()
                self._start_others_behind()  # built while this device dives and splits
            if r.tuning.dive_ms and self.dive and (self.optimising or self.limit == 1) and not self.count_only:
                try:
                    dived = self._dive(deadline)
                except FznError as err:  # its device fails: the split and search go on without it
                    self._start_other_devices()
                    r = self._split_elsewhere(r, DeviceFault(err.message))
                    dived = None
                if dived is not None:
                    return self._finish(dived)
                if deadline is not None and time.monotonic() >= deadline:
                    return self._finish(False)
            elif self.plan_dive and self.optimising and self.cluster is None and not self._wait_for_solution(deadline):
                try:
                    if self._plan_dive(deadline):
                        return self._finish(True)
                except FznError as err:  # its device fails: the split and search go on without it
                    self._start_other_devices()
                    r = self._split_elsewhere(r, DeviceFault(err.message))
                if deadline is not None and time.monotonic() >= deadline:
                    return self._finish(False)
            paths = Paths.root()
            t_split = time.perf_counter()
            if self.cluster is not None:  # this machine splits the root; the workers search
                target = self.cluster.target()
            else:
                self._start_others_behind()
                target = sum(x.tuning.subs_per_item * x.max_items for x in self.runners)
                target += self.behind.split_target() if self.behind is not None else 0
            first = True
            # expansion passes: each turns every path into its children `cutoff` levels down
            while first or (len(paths) < target and self.outcome.expansions < MAX_EXPANSIONS):
                if self.incumbent is not None:
                    self._share_bound(r)
                best_before = r.best()
                room = r.emit_limit(paths)
                emit_cap = min(max(4 * target, 64 * len(paths), 1024), room)
                while True:  # one level deeper per pass; on overflow retry with more room
                    pending: list[np.ndarray] = []

                    def hold(sols):
                        if sols is not None:
                            pending.append(sols)
                        return True

                    try:
                        finished, emitted = self._split_pass(r, paths, first, hold, deadline, emit_cap)
                    except DeviceFault as fault:  # the pass again, from the same paths, elsewhere
                        r = self._split_elsewhere(r, fault)
                        room = r.emit_limit(paths)
                        emit_cap = min(max(4 * target, 64 * len(paths), 1024), room)
                        continue
                    if finished and pending and self.ordered:
                        # solutions above the frontier have no place among its paths: search the
                        # paths as they are, where they come again in order
                        emitted = None
                        pending.clear()
                        break
                    if not finished or emitted is not None or emit_cap > 64 * target or emit_cap >= room:
                        break
                    r.set_best(best_before)  # forget the pass: its solutions come again
                    emit_cap = min(emit_cap * 8, room)
                if not finished:  # time limit: report what this pass found; the search is incomplete
                    self._take(np.concatenate(pending) if pending else None)
                    self.counted += r.phase_solutions if self.count_only else 0
                    return self._finish(False)
                if emitted is None:  # no room even so: forget the pass, search `paths` as they are
                    r.set_best(best_before)
                    break
                self._take(np.concatenate(pending) if pending else None)
                self.counted += r.phase_solutions if self.count_only else 0
                if first and r.root_failed:
                    return self._finish(True)
                first = False
                self.outcome.expansions += 1
                paths = emitted
                if not paths or not self._more():
                    return self._finish(not paths)
            self.outcome.sub_spaces = len(paths)
            self.outcome.split_s = time.perf_counter() - t_split
            finished = self._search_all(paths, deadline)
            return self._finish(finished and not self.outcome.stopped)
        except CapacityError as err:
            self.outcome.error = f"a search thread ran out of {err} capacity"
            return self._finish(False)

    # -- the root split
    def _split_pass(self, r: Runner, paths: Paths, first: bool, hold, deadline: float | None, emit_cap: int):
        """One expansion pass of the root split on runner r: run_phase's (finished, emitted).
        A failure of its device is a DeviceFault (a test injects one: hooks.device_fails)."""
        if hooks.device_fails(r.device.index, 0):
            raise DeviceFault("fault injected by a test in the root split")
        try:
            return r.run_phase(paths, 1, first, hold, deadline, emit_cap=emit_cap, count_only=self.count_only)
        except FznError as err:
            raise DeviceFault(err.message) from None

    def _split_elsewhere(self, failed: Runner, fault: DeviceFault) -> Runner:
        """The runner that takes the root split over from `failed`, whose device is left out
        of the rest of the search. Nothing is lost or printed twice: the pass it failed in
        held its solutions until its end, and the next device runs that pass again from the
        same paths (the passes before it are done: their solutions printed, their frontier
        kept). With no other device, the run ends in an error."""
        self._start_other_devices()  # those still building: the split goes on on one of them
        others = [x for x in self.runners if x is not failed]
        if not others:
            raise FznError(f"every device failed: {failed.device.name}: {fault}")
        print(f"fzn-gpu: the root split goes on without {failed.device.name}: {fault}", file=sys.stderr)
        self.runners = others
        self.runner = others[0]
        self._share_bound(self.runner)
        return self.runner

    # -- several devices
    @property
    def shares(self) -> list[DeviceShare]:
        """Each runner's share of the work, in the order of `runners` (a device whose runner
        never joined has none)."""
        with self._lock:
            return [self._share_of[id(x)] for x in self.runners if id(x) in self._share_of]

    def _others_unstarted(self) -> bool:
        """Whether other devices may still join this search and none has started: an ordered
        search runs on the first device alone (engine/ordered.py keeps one device's paths in order)."""
        return not (self.ordered or self.others_started or len(self.devices) < 2 or self.behind is not None)

    def _leave_out_by_rank(self) -> None:
        """The devices a recent search on the same devices judged not paying stay out of this
        one (ranking.py), said on stderr with -v and under -s."""
        if not self._others_unstarted():
            return
        self.ranked_out = ranking.left_out(self.devices, self.dm.nf > 0, self.model_key)
        if self.ranked_out:
            self.devices = [d for d in self.devices if d.name not in self.ranked_out]
            if self.opts.verbose:
                for name, why in self.ranked_out.items():
                    print(f"fzn-gpu: leaving out {name}: {why}", file=sys.stderr)

    def _start_others_behind(self) -> None:
        """The other devices' runners start building, each on a thread of its own (joining.py),
        while this one splits the root; they join the search as they become ready (_join)."""
        if not self._others_unstarted():
            return
        self.behind = RunnersBehind(self.devices[1:], self.dm, self.opts)
        self.pending = list(range(len(self.devices) - 1))

    def _start_other_devices(self) -> None:
        """Runners for the other devices (kernel builds included), waited for; one that fails to
        build is left out, said on stderr with -v. An ordered search runs on the first device
        alone (engine/ordered.py keeps one device's paths in order)."""
        if self.ordered or self.others_started:
            return
        self.others_started = True
        if self.behind is None:
            self.runners += other_runners(self.devices[1:], self.dm, self.opts)
        else:
            pending, self.pending = self.pending, []
            self.runners += [x for x in map(self.behind.wait, pending) if x is not None]
        self.share_gpus(self.gpu_time_share)

    def _search_all(self, paths: Paths, deadline: float | None) -> bool:
        r = self.runner
        if self.cluster is not None:
            return self.cluster.search(self, paths, deadline)
        if self.ordered:
            order = self.held.start(len(paths))
            finished, _ = r.run_phase(paths, 0, False, self._ordered_slice(r), deadline, resplit=order)
            with self._lock:
                self._release(None)
            return finished
        if len(self.runners) == 1 and not self.pending:
            finished, _ = r.run_phase(
                paths, 0, False, self._on_slice(r), deadline, count_only=self.count_only, resplit=SelfSplit()
            )
            self.counted += r.phase_solutions if self.count_only else 0
            return finished
        if hooks.join_ready():  # a test's: every device searches from the start
            self._start_other_devices()
        self.others_started = True
        for other in self.runners[1:]:
            self._take_root(other)
        # a work-item search can hand all it has left over (balance.py); float points stay put
        shares = [
            DeviceShare(
                i,
                x.device.name,
                x.device.is_gpu,
                x.max_items,
                can_hand_over=searches_hand_over(x.kernel_name, x.floats),
            )
            for i, x in enumerate(self.runners)
        ]
        self._share_of = {id(x): s for x, s in zip(self.runners, shares)}
        self.by_share = dict(enumerate(self.runners))
        waiting: dict[int, int] = {}  # share index -> the device's index in `behind`
        assert self.behind is not None or not self.pending
        for k in self.pending:
            device = self.behind.devices[k]  # type: ignore[union-attr]
            waiting[len(shares)] = k
            items, hands = self.behind.estimated_items(k), self.behind.hands_over(k)  # type: ignore[union-attr]
            shares.append(DeviceShare(len(shares), device.name, device.is_gpu, items, can_hand_over=hands))
        self._shares = shares

        def join(share: DeviceShare) -> bool:
            """On the device's own thread, before its first block: its runner, once built,
            takes the root as the first device propagated it and the best bound."""
            if share.index not in waiting or share.index in self.by_share:  # joined (a later round)
                return True
            runner = self.behind.wait(waiting[share.index])  # type: ignore[union-attr]
            if runner is None:
                share.failed = "its program did not build"
                return False
            self._take_root(runner)
            with self._lock:
                self.pending.remove(waiting[share.index])
                share.items = runner.max_items
                share.can_hand_over = searches_hand_over(runner.kernel_name, runner.floats)
                self.by_share[share.index] = runner
                self._share_of[id(runner)] = share
                self.runners = self.runners + [runner]
                share_gpus([runner], self.gpu_time_share, self.cancel)
            return True

        finished = balance(
            paths, shares, lambda i, block, resplit: self._search_block(i, block, resplit, deadline), join=join
        )
        if not self.ranked_out:  # every device of the record's set searched: their verdicts
            verdicts = {s.name: (s.node_share, s.can_hand_over) for s in shares if s.node_share is not None}
            ranking.record(self.ranked, self.dm.nf > 0, self.model_key, verdicts)  # type: ignore[arg-type]
        return finished

    def _take_root(self, other: Runner) -> None:
        """The root as propagated by the first device, and its bound."""
        r = self.runner
        other.root_lb, other.root_ub, other.root_bits = r.root_lb.copy(), r.root_ub.copy(), r.root_bits.copy()
        other.root_fb = r.root_fb.copy()
        other.set_best(r.best())

    def _search_block(self, i: int, block: Paths, resplit: Resplit, deadline: float | None) -> bool:
        """One block on device i. Satisfaction solutions are held until the block is done, so
        that a device failing midway (its block searched again elsewhere) prints nothing
        twice; improvements of an optimisation print at once (a repeat is no improvement)."""
        runner = self.by_share[i]
        held: list[np.ndarray] = []

        def on_slice(sols) -> bool:
            if self.optimising:
                self._share_bound(runner)
                return self._take(sols)
            if sols is not None and len(sols):
                held.append(sols)
            with self._lock:
                if held and self.limit is not None and self.outcome.solutions + sum(map(len, held)) >= self.limit:
                    self._take_locked(np.concatenate(held))  # enough to stop everyone
                    held.clear()
                return self._more()

        try:
            finished, _ = runner.run_phase(
                block, 0, False, on_slice, deadline, count_only=self.count_only, resplit=resplit
            )
        except FznError as err:
            raise DeviceFault(str(err)) from None
        with self._lock:
            if held:
                self._take_locked(np.concatenate(held))
            self.counted += runner.phase_solutions if self.count_only else 0
        return finished and self._more()

    def _ordered_slice(self, runner: Runner):
        """After a slice of an ordered search: hold its solutions, print those no unfinished
        path is left of."""

        def on_slice(sols) -> bool:
            with self._lock:
                self.held.add(sols)
                return self._release(runner.unfinished)

        return on_slice

    def _release(self, unfinished) -> bool:
        """Print the held solutions no unfinished path lies left of (`unfinished`: the runner's
        after a slice; None: all of them), in tree order; whether to go on."""
        ready = self.held.take(unfinished)
        more = self._take_locked(ready) if ready is not None else self._more()
        self.held.set_cut(None if self.limit is None else self.limit - self.outcome.solutions)
        return more

    def _share_bound(self, runner: Runner) -> None:
        """A bound found on any device, or by an engine beside this one, reaches every device
        at its next slice."""
        with self._lock:
            best = min(x.best() for x in self.runners)
        shared = self.incumbent.bound() if self.incumbent is not None else None
        if shared is not None and shared < best:
            best = shared
        if runner.best() > best:
            runner.set_best(best)

    def extra_stats(self) -> dict[str, object]:
        stats = self.cluster.stats() if self.cluster is not None else {}
        if self.ranked_out:  # left out by a recent search's node-rate verdict (ranking.py)
            stats["devicesRankedOut"] = "; ".join(f"{name}: {why}" for name, why in self.ranked_out.items())
        return stats

    def progress(self) -> Outcome:
        """The outcome so far, for a run cut short (interrupt, time limit): never complete. An
        ordered search prints what it holds first, leftmost first: solutions all the same."""
        if self.ordered:
            with self._lock:
                self._release(None)
        snapshot = replace(self.outcome, complete=False)
        if self.count_only:
            snapshot.solutions = self.counted
        return snapshot

    def _finish(self, complete: bool) -> Outcome:
        if self.ordered:  # a time limit: what is held still prints, leftmost first
            with self._lock:
                self._release(None)
        if self.count_only:
            self.outcome.solutions = self.counted
        if complete and self.outcome.error is None:
            self.outcome.error = self._lost_solution()
        self.outcome.complete = complete and self.outcome.error is None
        return self.outcome

    def _lost_solution(self) -> str | None:
        """Why a search that ended is no proof, where a device's bound is better than the best
        solution printed. A device's bound falls only by a solution it reports or by the best
        printed (`_share_bound`), so such a bound means a solution found on the device never
        reached the stream, and the end of the search (which pruned below that bound) proves
        nothing: the run says so rather than claim the optimum. (Cluster workers' bounds are
        theirs; a float objective's bound is compared in its own order.)"""
        if not self.optimising or self.runner.float_objective or self.cluster is not None:
            return None
        with self._lock:
            device = min(x.best() for x in self.runners)
        if device == INT_MAX:
            return None
        printed = self.incumbent.bound() if self.incumbent is not None else self.outcome.best
        if printed is not None and device >= printed:
            return None
        return (
            f"a device's bound ({device * self.dm.obj_sense}) is better than the best solution printed "
            f"({'none' if printed is None else printed * self.dm.obj_sense}): a solution was lost, so the "
            "search's end proves nothing"
        )
