"""Restart-based search: MiniZinc's restart annotations (restart_luby, restart_geometric,
restart_linear, restart_constant), or `--restart`.

A restart is a path from the root (an empty path) with a node limit, a term of the
annotation's sequence times its scale (MiniZinc counts a restart's cutoff in nodes); every
search follows the sequence on its own. A phase hands a device the next terms, each once per
search, as root paths with a limit each; a search that reaches its limit takes its next path
at once, inside the launch (`Exploration.limits`; no search waits for another's restart to
end), and phases double in length while they are short. The
searches differ so that a device makes many different restarts at once (kernel_abi.Div): the
search of a phase's first path follows the search plan as written; the others break the
variable selection's ties by a random key of their own per path, and where the model leaves
the search to the solver (no annotation on its int variables, or -f) select by dom_w_deg.
Each search keeps its dom_w_deg counts from restart to restart and phase to phase
(Runner._weights), so what failed before steers the next dive, as in Gecode's restart-based
search. Random choices change from phase to phase (Exploration.salt).

Proofs: a restart that finished its tree under its limit explored everything (every path is
the root), so the run ends complete: UNSATISFIABLE, or an optimum proven by branch and bound,
whose bound every restart keeps. The limits grow without end in every sequence but
constant's, so the search stays complete in the limit; restart_constant proves only what fits
in its limit, as in Gecode.

Satisfaction: solutions found again by a later restart are printed once. With -a the tree is
searched without restarts (complete.py): restarts would only find the same solutions again.
Several devices each run their own phases in a thread of their own (salts apart), sharing the
solution stream."""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Iterator

import numpy as np

from ..errors import FznError
from ..flatzinc.model import Model, RestartSpec
from ..options import SolveOptions
from ..runtime.device import Device
from ..runtime.kernel_abi import Div
from .incumbent import Incumbent, Outcome
from .pack import DeviceModel
from .paths import Paths
from .phase import CapacityError
from .runner import Exploration, Runner, TimeShare, other_runners, share_gpus
from .threads import run_threads

MAX_LIMIT = 1 << 30  # node limits stop growing here (the kernel counts in int)
PHASE_S = 0.5  # a phase (one launch sequence) shorter than this doubles the next one's restarts
FIRST_PER_SEARCH, MAX_PER_SEARCH = 8, 1024  # restarts per search in the first phase, and at most


def luby(i: int) -> int:
    """The i-th term (from 1) of the Luby sequence 1 1 2 1 1 2 4 1 1 2 1 1 2 4 8..."""
    k = 1
    while (1 << k) - 1 < i:
        k += 1
    while True:
        if i == (1 << k) - 1:
            return 1 << (k - 1)
        i -= (1 << (k - 1)) - 1
        k = 1
        while (1 << k) - 1 < i:
            k += 1


def node_limits(spec: RestartSpec) -> Iterator[int]:
    """The node limit of each restart, as the annotation's sequence gives it."""
    i = 0
    while True:
        i += 1
        if spec.kind == "luby":
            limit = spec.scale * luby(i)
        elif spec.kind == "geometric":
            limit = math.ceil(spec.scale * spec.base ** (i - 1)) if i < 4096 else MAX_LIMIT
        elif spec.kind == "linear":
            limit = spec.scale * i
        else:
            limit = spec.scale
        yield int(min(limit, MAX_LIMIT))


def restart_phases(
    runner: Runner,
    spec: RestartSpec,
    div: int,
    on_slice,
    deadline: float | None,
    go_on,
    salt,
    first_width: int | None = None,
) -> bool:
    """Phases of restarts on `runner` following `spec`, until one ends early or go_on() (asked
    before each phase) says no. Every search follows the sequence on its own, as the workers
    of a parallel portfolio do: a phase holds the next terms, each once per search, in layers
    (searches take paths in order, so each takes about one of each layer), and a search that
    reaches its limit takes its next path at once, within the launch. (One sequence spread
    over all of a GPU's searches handed a few of them restarts millions of nodes long, and the
    phase waited for those: docs/bench/measurements.md.) `first_width`: the first phase's
    searches (all of the runner's otherwise), four times as many each phase shorter than
    PHASE_S up to all; then phases double while shorter than PHASE_S. `div`: the searches' Div
    bits; salt(phase): that phase's random salt. True where a restart finished its tree under
    its limit (it explored everything below the root); False where go_on() said no or a phase
    ended early (on_slice returned False, the deadline)."""
    sequence = node_limits(spec)
    per_search = FIRST_PER_SEARCH
    width = runner.max_items if first_width is None else max(1, min(first_width, runner.max_items))
    for phase in itertools.count():
        if not go_on():
            return False
        terms = np.fromiter(itertools.islice(sequence, per_search), np.int64, per_search)
        limits = np.repeat(terms, width)  # layer k: every search's k-th restart
        n = len(limits)
        explore = Exploration(
            limits=np.minimum(limits, MAX_LIMIT).astype(np.int32), div=div, salt=salt(phase), keep_weights=True
        )
        t0 = time.monotonic()
        finished, _ = runner.run_phase(Paths.roots(n), 0, True, on_slice, deadline, lns=explore)
        if not finished:
            return False
        if runner.phase_cut < n:
            return True
        if time.monotonic() - t0 < PHASE_S:
            if width < runner.max_items:
                width = min(4 * width, runner.max_items)
            elif per_search < MAX_PER_SEARCH:
                per_search *= 2
    return False


FIRST_SOLUTION_RESTARTS = RestartSpec("luby", 100)  # first_solution_restarts' sequence
PLAN_DIVE_NODES = 1000  # first_solution_restarts' dive in the plan's order, before the restarts


def plan_dive(runner: Runner, on_slice, deadline: float | None) -> bool | None:
    """One search from the root in the plan's order, for PLAN_DIVE_NODES nodes at most, calling
    on_slice(solutions) after each slice (False stops it): None where on_slice or the deadline
    stopped it, True where it explored the whole tree, False where its node limit cut it.
    LNS's first-solution search and the portfolio's branch and bound on a CPU
    (CompleteSearch.plan_dive) begin with it."""
    plan = Exploration(limits=np.array([PLAN_DIVE_NODES], np.int32), keep_weights=True)
    finished, _ = runner.run_phase(Paths.root(), 0, True, on_slice, deadline, lns=plan)
    return runner.phase_cut < 1 if finished else None


def first_solution_restarts(
    runner: Runner, deadline: float | None, offer, stop, salt: int = 0, dive_first: bool = True
) -> bool:
    """A first solution on `runner` (the optimisation portfolio's LNS devices, beside branch and
    bound, which follows the model's plan): with `dive_first`, one search in the plan's order
    for PLAN_DIVE_NODES nodes; then restarts (Luby, 100 nodes) whose searches select by
    dom_w_deg, ties at random, each phase's first path following the plan. A plan that leads
    into a part of the tree without solutions kept the single dive that this replaces there as
    long as branch and bound (docs/bench/measurements.md, "The optimisation portfolio's first
    solution by free restarts"). The dive first where branch and bound shares the device:
    restarts from the start slowed a model whose plan dives straight to a solution through slow
    nodes (QAP 64) on a CPU that branch and bound's dive shared; on a GPU whose branch and
    bound dives on the CPU, restarts at once (a GPU's lone dive is slow), one search a compute
    unit in the first phase (restart_phases' first_width). Every solution met goes to offer(),
    and the search ends at the first one, at `stop()` (checked after every slice: another
    engine's solution) or at the deadline. True where the dive or a restart finished its tree
    without a solution: the model has none."""
    if stop():
        return False
    found = False

    def dived(sols) -> bool:
        nonlocal found
        if sols is not None and len(sols):
            offer(sols)
            found = True
            return False
        return not stop()

    if dive_first:
        explored = plan_dive(runner, dived, deadline)
        if found or explored is None:
            return False
        if explored:  # the dive explored the whole tree and met no solution
            return True
    explored = restart_phases(
        runner,
        FIRST_SOLUTION_RESTARTS,
        int(Div.TIES | Div.WDEG),
        dived,
        deadline,
        lambda: not (found or stop()),
        lambda phase: salt + phase,
        # on a GPU, a search a compute unit at first: every restart begins at the root with
        # every constraint queued, and a GPU's every search doing that on a model of slow
        # nodes made a first launch too long for LNS ever to start (docs/bench/measurements.md,
        # "Branch and bound's dive on a CPU")
        first_width=runner.device.compute_units if runner.device.is_gpu else None,
    )
    return explored and not found  # a solution met in a phase that also finished is no proof of none


def plan_is_free(model: Model, opts: SolveOptions) -> bool:
    """Whether the model leaves the choice of int variables to the solver: no int or bool
    search annotation, or -f."""
    return opts.free_search or not any(step.kind in ("int", "bool") for step in model.solve.search)


class RestartSearch:
    def __init__(
        self,
        model: Model,
        dm: DeviceModel,
        devices: list[Device],
        opts: SolveOptions,
        report,
        spec: RestartSpec,
        incumbent: Incumbent | None = None,
        free: bool = False,
    ):
        """report(values, objective) prints one solution. `incumbent` (optimisation): one shared
        with LNS beside this search (the portfolio), as CompleteSearch takes it. `free`: every
        search but a phase's first selects by dom_w_deg even where the model's plan names its
        int variables' order: the satisfaction portfolio's own restarts, beside complete search,
        which follows the plan. Restarts on the plan's order (ties broken at random) searched
        where complete search did, and a plan that leads into a hard part of the tree kept both
        there (docs/bench/measurements.md, "The satisfaction portfolio's restarts free")."""
        self.model = model
        self.dm = dm
        self.opts = opts
        self.report = report
        self.spec = spec
        self.devices = devices
        self.optimising = dm.obj_var >= 0
        self.limit = opts.solution_limit(self.optimising)
        self.runner = Runner(devices[0], dm, seed=opts.seed, verbose=opts.verbose)
        if self.runner.float_objective:
            raise FznError("restarts work with int objectives", fix="drop the restart annotation (or --restart none)")
        self.runners = [self.runner]
        self.gpu_time_share: TimeShare = 1.0  # of each GPU's wall time (share_gpus)
        self.shares: list = []
        self.outcome = Outcome()
        self.incumbent = incumbent if self.optimising else None
        self.cancel = threading.Event()
        self.dive = False  # the portfolio's setting for branch and bound; no dive here
        self.div = Div.TIES | (Div.WDEG if free or plan_is_free(model, opts) else 0)
        self._lock = threading.Lock()
        self._seen: set[bytes] = set()  # satisfaction solutions printed, so none prints twice
        self._errors: list[BaseException] = []

    def share_gpus(self, share: TimeShare) -> None:
        """Another engine runs on the same GPUs (the portfolio's LNS on a lone GPU): this
        search's launches on a GPU take at most `share` of the wall time (Runner.pause_after;
        a callable says it at each slice)."""
        self.gpu_time_share = share
        share_gpus(self.runners, share, self.cancel)

    # -- solutions
    def _take(self, sols: np.ndarray | None) -> bool:
        with self._lock:
            if sols is not None and len(sols):
                if self.incumbent is not None:
                    self.outcome.solutions += self.incumbent.offer(sols, "bnb")
                    self.outcome.best = self.incumbent.bound()
                elif self.optimising:
                    from .incumbent import report_improvements

                    report_improvements(self.outcome, sols, self.dm.obj_sense, self.report)
                else:
                    for row in sols[:, 1:]:
                        if self.limit is not None and self.outcome.solutions >= self.limit:
                            break
                        key = row.tobytes()
                        if key not in self._seen:
                            self._seen.add(key)
                            self.outcome.solutions += 1
                            self.report(row, None)
            if self.limit is not None and self.outcome.solutions >= self.limit:
                self.outcome.stopped = True
            return not (self.outcome.stopped or self.outcome.complete or self.cancel.is_set())

    def _bound(self, runner: Runner) -> None:
        """The best objective any device or engine has found bounds this device's next slice."""
        best = min(x.best() for x in self.runners)
        shared = self.incumbent.bound() if self.incumbent is not None else None
        if shared is not None:
            best = min(best, shared)
        if runner.best() > best:
            runner.set_best(best)

    # -- the run
    def run(self, deadline: float | None) -> Outcome:
        self.runners += other_runners(self.devices[1:], self.dm, self.opts)
        self.share_gpus(self.gpu_time_share)
        if len(self.runners) == 1:
            self._phases(0, deadline)
        else:
            threads = [
                threading.Thread(target=self._phases, args=(i, deadline), daemon=True) for i in range(len(self.runners))
            ]
            run_threads(threads, self.cancel.set)
        if self._errors and not self.outcome.complete:
            raise self._errors[0]
        return self.outcome

    def _phases(self, index: int, deadline: float | None) -> None:
        """Device `index`'s phases (restart_phases) until a proof, the solution limit, a stop or
        the deadline."""
        runner = self.runners[index]

        def go_on() -> bool:
            if not self._take(None):
                return False
            if self.optimising:
                self._bound(runner)
            return True

        def on_slice(sols) -> bool:
            more = self._take(sols)
            if self.optimising:
                self._bound(runner)
            return more

        def salt(phase: int) -> int:
            return phase * len(self.runners) + index

        try:
            if restart_phases(runner, self.spec, int(self.div), on_slice, deadline, go_on, salt):
                # a search explored the whole tree, found all below
                with self._lock:
                    self.outcome.complete = True
                self.cancel.set()
        except CapacityError as err:
            with self._lock:
                self.outcome.error = self.outcome.error or f"a search thread ran out of {err} capacity"
            self.cancel.set()
        except BaseException as err:  # raised again by run(), after every device stopped
            self._errors.append(err)
            self.cancel.set()

    def progress(self) -> Outcome:
        from dataclasses import replace

        return replace(self.outcome, complete=False)

    def stop(self) -> None:
        """Ends the search at its next slice, keeping what it found (an interrupt: SolveRun.wind_down)."""
        self.cancel.set()

    def extra_stats(self) -> dict[str, object]:
        return {
            "restarts": sum(r.stats.subs for r in self.runners),
            "restartKind": self.spec.kind,
            "restartOrder": "dom_w_deg" if self.div & Div.WDEG else "the plan's",
        }


def restart_spec(model: Model, opts: SolveOptions) -> RestartSpec | None:
    """The restarts this run makes: --restart over the model's annotation; None for none."""
    spec = opts.restart or model.solve.restart
    return None if spec is None or spec.kind == "none" else spec
