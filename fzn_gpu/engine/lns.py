"""Large Neighbourhood Search (the GPU-LNS paper, ../shared/papers/gpu-large-neighbourhood-search.txt).

After a first solution (the complete engine's dive), each improving step picks T random sets of
FD variables to release and explores them all at once on the device: every neighbourhood, or
every candidate assignment a strategy builds from it, is one path of decisions that the search
kernel replays with propagation (which computes the Aux variables and the objective) and,
for the searching strategies, searches below under a node budget. The kernel keeps the best
objective met below each path (the paper's K1) and writes improving solutions, of which the
host takes the best (K2). H steps per restart (by default: until STALL_STEPS steps in a row
have not improved), S restarts from the first solution, a time-out.
The strategies are in lns_island.py.

On several devices, each runs its own steps (an island, lns_island.py) at its own pace, and
every improvement any of them finds becomes the others' starting point at their next step:
no device waits for another, and the host builds one device's next neighbourhoods while the
others search. Each device also dives for the first solution as soon as its kernel is ready
(in the portfolio, beside branch and bound's search in the model's order, by restarts that
select by dom_w_deg: restart.first_solution_restarts), and every dive ends when any device
has one: a CPU's single work-item is quick where the GPU's dive is slow
(docs/bench/measurements.md), a GPU ready while PoCL still compiles the CPU's kernel at its
first launch is first, and no device waits for another to start its steps. LNS proves
nothing: the run ends with the best found, never `==========`, unless the first solution's
search already explored the whole tree."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import replace

import numpy as np

from ..errors import FznError
from ..flatzinc.arrays import unique_first
from ..flatzinc.model import LNS_STRATEGIES, LnsSpec, Model, VarKind
from ..options import SolveOptions
from ..runtime.device import Device
from .incumbent import Incumbent, Outcome, Solution
from .interface import JoinCluster
from .lns_graph import RelatedVariables
from .lns_island import Island, run_batch
from .pack import DeviceModel
from .paths import Paths
from .phase import CapacityError
from .restart import first_solution_restarts
from .runner import Runner
from .threads import run_threads

DEFAULTS: dict[str, int | None] = {"percent": 20, "steps": 50, "restarts": 1 << 30, "timeout": None}
# Where the user gives no H, a descent restarts from the first solution once this many of its
# steps in a row have not improved it, not after a fixed H, which restarts descents whether
# they still improve or stalled long before (docs/bench/measurements.md, LNS descents restarted when
# they stall)
STALL_STEPS = 10


ADAPTIVE = "adaptive"  # no strategy named: each step's is chosen by lns_island.StrategyBandit


def _given(spec: LnsSpec | None, opts: SolveOptions) -> dict:
    """The settings the annotation and the command line name (the command line's over)."""
    given = (
        dict(
            zip(
                ("percent", "neighbourhoods", "starts", "steps", "strategy", "restarts", "timeout"),
                (
                    spec.percent,
                    spec.neighbourhoods,
                    spec.starts,
                    spec.steps,
                    spec.strategy,
                    spec.restarts,
                    spec.timeout_s,
                ),
            )
        )
        if spec
        else {}
    )
    given.update(opts.lns or {})
    return given


def lns_arms(spec: LnsSpec | None, opts: SolveOptions, items: int) -> list[LnsSpec]:
    """The settings of each strategy an island may use: the one named, else all six, for the
    bandit to choose among by their recent improvements."""
    if "strategy" in _given(spec, opts):
        return [lns_settings(spec, opts, items)]
    return [lns_settings(spec, opts, items, strategy) for strategy in LNS_STRATEGIES]


def lns_settings(spec: LnsSpec | None, opts: SolveOptions, items: int, arm: str | None = None) -> LnsSpec:
    """lns(P, T, M, H, STRATEGY, S, TIMEOUT): the annotation's values, the command line's over
    them; what neither gives is the paper's example, with T x M filling the device (about one
    path per work-item a step). timeout_s None: the run's time limit alone. `arm`: that
    strategy's settings (the bandit's arms); with no strategy named anywhere, the strategy is
    ADAPTIVE, with complete exploration's numbers."""
    given = _given(spec, opts)
    named = given.get("strategy")
    strategy = arm or named or "complete_exploration"
    starts = given.get("starts", 1 if strategy == "complete_exploration" else 16)
    if given.get("timeout") is not None and given["timeout"] <= 0:
        given["timeout"] = None  # lns(..., 0): no time-out of its own

    def count(key: str) -> int:
        """An integer setting: given, else its default."""
        v = given.get(key)
        return int(v if v is not None else DEFAULTS[key] or 0)

    settings = LnsSpec(
        count("percent"),
        given.get("neighbourhoods", max(1, items // max(starts, 1))),
        starts,
        count("steps"),
        strategy,
        count("restarts"),
        given.get("timeout"),
    )
    if arm is None and named is None:
        settings = replace(settings, strategy=ADAPTIVE)
    for name in ("percent", "neighbourhoods", "starts", "steps", "restarts"):
        if getattr(settings, name) < 1:
            raise FznError(
                f"lns {name} must be at least 1, not {getattr(settings, name)}",
                fix="give lns(P, T, M, H, STRATEGY, S, TIMEOUT) positive numbers",
            )
    if settings.percent > 100:
        raise FznError(f"lns percent {settings.percent} is over 100", fix="release at most 100 percent")
    return settings


def lns_variables(model: Model, dm: DeviceModel, free_search: bool) -> np.ndarray:
    """The FD variables a neighbourhood releases or fixes (the paper's: the model's decision
    variables, never Aux ones): those of the search annotations; without any, the variables the
    model declared itself (not MiniZinc's X_INTRODUCED_ ones, which fixing breaks: a QAP's
    element indices); else every searched non-Aux variable."""
    V = model.vars
    searched = np.asarray(dm.sg_var, dtype=np.int64)
    _, first = unique_first(searched)
    branched = searched[np.sort(first)]  # each once, in the search plan's order
    # set variables take no x = v: a neighbourhood fixes the int and bool ones, sets follow
    branched = branched[~V.is_aux[branched].astype(bool) & (V.kind[branched] != VarKind.SET)]
    if not free_search:
        annotated = np.fromiter((v for step in model.solve.search for v in step.vars), dtype=np.int64)
        chosen = branched[np.isin(branched, annotated)]
        if len(chosen):
            return chosen.astype(np.int32)
    names = V.names
    declared = branched[
        np.fromiter((not names[v].startswith("X_INTRODUCED_") for v in branched.tolist()), bool, len(branched))
    ]
    return (declared if len(declared) else branched).astype(np.int32)


class LnsSearch:
    def __init__(
        self,
        model: Model,
        dm: DeviceModel,
        devices: list[Device],
        opts: SolveOptions,
        report,
        spec: LnsSpec | None,
        incumbent: Incumbent | None = None,
        cluster: JoinCluster | None = None,
        free_dive: bool = False,
        shared: list[Device] | None = None,
    ):
        """`incumbent`: one shared with another engine (the portfolio's branch and bound), whose
        solutions then become the islands' starting points too; else one of its own, printing
        through report(values, objective). `cluster`: how to join the run's Ray cluster, whose
        workers then run the islands instead (opts.cluster; fzn_gpu/cluster/), sharing the
        incumbent through it. `free_dive`: each device looks for the first solution by restarts
        that select by dom_w_deg (restart.first_solution_restarts) instead of one search in the
        plan's order: the portfolio, whose branch and bound follows the plan beside LNS; on the
        devices in `shared` (branch and bound's too) they begin with a dive in the plan's
        order, elsewhere at once."""
        if dm.obj_var < 0:
            raise FznError("LNS needs an objective", fix="solve minimize/maximize, or drop the lns annotation")
        self.dm = dm
        self.opts = opts
        self.spec = spec
        self.devices = devices
        self.incumbent = incumbent or Incumbent(Outcome(), dm.obj_sense, report)
        self.outcome = self.incumbent.outcome
        self.free_dive = free_dive and not opts.deterministic
        self.shared = list(shared or [])
        self.fd = lns_variables(model, dm, opts.free_search)
        self.related = RelatedVariables.of(model, self.fd)
        self.dive_index = next((i for i, d in enumerate(devices) if not d.is_gpu), 0) if len(devices) > 1 else 0
        self.runner = self._runner(self.dive_index)
        self.settings = lns_settings(spec, opts, self.runner.max_items)  # bad settings: said at once
        self._runners: list[Runner | None] = [
            self.runner if i == self.dive_index else None for i in range(len(devices))
        ]
        self._islands: list[Island | None] = [None] * len(devices)
        self.shares: list = []
        self._bugs: list[BaseException] = []  # unexpected errors of device threads
        self._left_out: list[FznError] = []  # devices whose runner could not be built
        self.cluster = None
        if cluster is not None and opts.cluster:
            self.cluster = cluster(model, dm, opts)

    @property
    def runners(self) -> list[Runner]:
        """The devices' runners built so far, in the devices' order."""
        return [r for r in self._runners if r is not None]

    @property
    def islands(self) -> list[Island]:
        """The devices' islands, each made once its runner is built (before its dive), in the
        devices' order."""
        return [isl for isl in self._islands if isl is not None]

    def _runner(self, i: int) -> Runner:
        return Runner(self.devices[i], self.dm, seed=self.opts.seed, verbose=self.opts.verbose)

    # ------------------------------------------------------------------ the run
    def run(self, deadline: float | None) -> Outcome:
        """On one device: its dive for a first solution, then its island. On several, each
        device in a thread of its own: its runner built (the dive's device has it already),
        then its own dive, which ends as soon as any device (or another engine sharing the
        incumbent) has a first solution, then its island from the best so far. No device waits
        for another: a CPU whose first launch compiles the kernel (PoCL, seconds on a model's
        first run) or a GPU whose program is still being built leaves the first solution and
        the first steps to the others."""
        s = self.settings
        run_deadline = deadline
        if s.timeout_s is not None:
            until = time.monotonic() + s.timeout_s
            deadline = until if deadline is None else min(deadline, until)
        stop = threading.Event()
        remote = self.cluster.lns(self.incumbent, deadline, stop) if self.cluster is not None else []
        try:
            # on a cluster the workers' islands are the search (this machine's GPUs are a
            # node's too, and a worker's there); this machine's devices step in only where
            # every worker failed
            while any(t.is_alive() for t in remote):
                for t in remote:
                    t.join(0.05)
            if not remote or (self.cluster is not None and self.cluster.lns_all_failed()):
                self._local(deadline)
        finally:
            stop.set()
            for t in remote:
                t.join()
        self._raise_if_all_failed()
        if self.incumbent.best is None or self.outcome.complete or self.incumbent.stopped:
            return self.outcome
        if not len(self.fd):
            self.incumbent.note_error(
                "LNS has no decision variables to release (every searched variable is "
                "defined by a constraint); the first solution is not proven optimal"
            )
        elif run_deadline is None or time.monotonic() < run_deadline:
            # LNS proves nothing: an end before the run's time limit is said, not left silent
            if deadline is not None and time.monotonic() >= deadline:
                self.incumbent.note_error(f"LNS reached its time-out of {s.timeout_s:g} s (LNS proves no optimum)")
            else:
                self.incumbent.note_error(
                    f"LNS ended after its {s.restarts} descents from the first solution (S, "
                    "--lns-restarts; LNS proves no optimum)"
                )
        return self.outcome

    def _local(self, deadline: float | None) -> None:
        """The islands of this machine's devices, each device in a thread of its own."""
        if len(self.devices) == 1:
            self._device(0, deadline)
        else:
            threads = [
                threading.Thread(target=self._device, args=(i, deadline), daemon=True) for i in range(len(self.devices))
            ]
            run_threads(threads, self._stop_islands)
        if self._bugs:  # not a device's failure: a bug, raised where it can be seen
            raise self._bugs[0]

    def _first_found(self) -> bool:
        """Whether the dives can end: a solution is in, the space is explored, or the run is over."""
        return self.incumbent.stopped or self.outcome.complete or self.incumbent.bound() is not None

    def _device(self, i: int, deadline: float | None) -> None:
        """Device i's part of the run: runner, dive, island. Its failure leaves the others going
        (said on stderr where there are others); anything but a device's failure stops them all
        and is raised again by run()."""
        try:
            runner = self._runners[i]
            if runner is None:
                try:
                    runner = self._runners[i] = self._runner(i)
                except FznError as err:
                    self._left_out.append(err)
                    if self.opts.verbose:
                        print(f"fzn-gpu: leaving out {self.devices[i].name}: {err}", file=sys.stderr)
                    return
            # the island exists from here, so that what its device's dive prints counts as its own
            island = self._islands[i] = self._island_on(i, runner) if len(self.fd) else None
            if not self._first_found():
                offer = island.offer if island is not None else self.incumbent.offer
                try:
                    if self.free_dive:
                        shared = self.devices[i] in self.shared
                        finished = first_solution_restarts(runner, deadline, offer, self._first_found, i, shared)
                    else:
                        finished, _ = run_batch(
                            runner, Paths.root(), deadline, None, offer, first_only=True, stop=self._first_found
                        )
                except CapacityError as err:
                    self.incumbent.note_error(f"a search thread ran out of {err} capacity")
                    return
                self.outcome.complete = self.outcome.complete or finished  # shared: another engine may have proved it
            first = self.incumbent.best
            if first is None or island is None or self.outcome.complete or self.incumbent.stopped:
                return
            if deadline is None or time.monotonic() < deadline:
                self._island(island, first, deadline)
        except BaseException as err:  # a bug: every device stops, run() raises it
            self._bugs.append(err)
            self.incumbent.stopped = True

    def _island_on(self, i: int, runner: Runner) -> Island:
        given = _given(self.spec, self.opts)  # the user's T and percent stay as given
        return Island(
            i,
            runner,
            lns_arms(self.spec, self.opts, runner.max_items),
            self.fd,
            self.opts.seed,
            self.incumbent,
            steer_count="neighbourhoods" not in given,
            grow_release="percent" not in given,
            related=self.related,
            stall=None if "steps" in given else STALL_STEPS,
        )

    def _stop_islands(self) -> None:
        self.incumbent.stopped = True

    def _island(self, island: Island, first: Solution, deadline: float | None) -> None:
        try:
            island.run(first, deadline)
        except CapacityError as err:
            self.incumbent.note_error(f"a search thread ran out of {err} capacity")
        except FznError as err:  # this device failed; the others go on
            island.failed = err
            if len(self.devices) > 1:
                print(f"fzn-gpu: LNS goes on without {island.runner.device.name}: {err.message}", file=sys.stderr)

    def _raise_if_all_failed(self) -> None:
        """Every device failed (its build, or its island): the first failure is the run's."""
        failed = self._left_out + [isl.failed for isl in self.islands if isl.failed is not None]
        if failed and len(failed) == len(self.devices):
            raise failed[0]

    def progress(self) -> Outcome:
        return replace(self.outcome, complete=False)

    def stop(self) -> None:
        """Ends the search at its next slice, keeping what it found (an interrupt: SolveRun.wind_down)."""
        self._stop_islands()

    def extra_stats(self) -> dict[str, object]:
        stats = self._island_stats()
        if self.cluster is not None:  # the workers' islands: theirs, and in the totals
            stats.update(self.cluster.stats())
            stats["lnsSteps"] = int(stats["lnsSteps"]) + sum(self.cluster.lns_steps)  # type: ignore[call-overload]
        return stats

    def _island_stats(self) -> dict[str, object]:
        s = self.settings
        islands = self.islands
        stats: dict[str, object] = {
            "lnsStrategy": s.strategy,
            "lnsSteps": sum(isl.steps for isl in islands),
            "lnsImprovingSteps": sum(isl.improving_steps for isl in islands),
            "lnsRestarts": sum(isl.restarts for isl in islands),
            "lnsMergingSteps": sum(isl.merging_steps for isl in islands),
            "lnsMergedSteps": sum(isl.merged_steps for isl in islands),
            "lnsNeighbourhoods": sum(isl.settings.neighbourhoods for isl in islands) or s.neighbourhoods,
            "lnsStarts": s.starts,
            "lnsPercent": s.percent,
        }
        if islands:
            stats["lnsNodeBudget"] = " ; ".join(str(isl.pace.nodes) for isl in islands)
            stats["lnsPacedNeighbourhoods"] = " ; ".join(str(isl.pace.count) for isl in islands)
            stats["lnsMostReleased"] = " ; ".join(str(isl.most_released) for isl in islands)
            if any(isl.modes_pace for isl in islands):
                stats["lnsModesNeighbourhoods"] = " ; ".join(
                    str(isl.modes_pace.count) if isl.modes_pace else "-" for isl in islands
                )
        if islands and s.strategy == ADAPTIVE:
            stats["lnsStrategySteps"] = " ; ".join(isl.strategy_steps() for isl in islands)
        if islands and self.related is not None:
            stats["lnsShapeSteps"] = " ; ".join(isl.shape_steps() for isl in islands)
        if len(islands) > 1:
            for i, isl in enumerate(islands):
                stats[f"d{i}_device"] = isl.runner.device.name
                stats[f"d{i}_lnsSteps"] = isl.steps
                stats[f"d{i}_lnsImprovements"] = isl.improvements
                stats[f"d{i}_lnsGain"] = isl.gain
                stats[f"d{i}_lnsNeighbourhoods"] = isl.settings.neighbourhoods
                stats[f"d{i}_nodes"] = isl.runner.stats.nodes
        return stats
