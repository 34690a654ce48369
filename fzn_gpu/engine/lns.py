"""Large Neighbourhood Search (the GPU-LNS paper, ../shared/papers/gpu-large-neighbourhood-search.txt).

After a first solution (the complete engine's dive), each improving step picks T random sets of
FD variables to release and explores them all at once on the device: every neighbourhood, or
every candidate assignment a strategy builds from it, is one path of decisions that the search
kernel replays with propagation (which computes the Aux variables and the objective) and,
for the searching strategies, searches below under a node budget. The kernel keeps the best
objective met below each path (the paper's K1) and writes improving solutions, of which the
host takes the best (K2). H steps per restart, S restarts from the first solution, a time-out.
The strategies are in lns_island.py.

On several devices, each runs its own steps (an island, lns_island.py) at its own pace, and
every improvement any of them finds becomes the others' starting point at their next step:
no device waits for another, and the host builds one device's next neighbourhoods while the
others search. The first solution comes from a CPU's single work-item where there is one (a
GPU thread alone is slow: 33 nodes in 5 s on QAP 32), while the other devices build their
kernels. LNS proves nothing: the run ends with the best found, never `==========`, unless the first
solution's search already explored the whole tree."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import replace

import numpy as np

from ..device import Device
from ..errors import FznError
from ..model import LNS_STRATEGIES, LnsSpec, Model, VarKind
from ..options import SolveOptions
from .incumbent import Incumbent, Outcome, Solution
from .lns_graph import RelatedVariables
from .lns_island import Island, run_batch
from .pack import DeviceModel
from .paths import Paths
from .runner import CapacityError, Runner
from .threads import run_threads

DEFAULTS: dict[str, int | None] = {"percent": 20, "steps": 50, "restarts": 1 << 30, "timeout": None}


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
    # set variables take no x = v: a neighbourhood fixes the int and bool ones, sets follow
    branched = [v for v in dict.fromkeys(dm.sg_var.tolist()) if not V.is_aux[v] and V.kind[v] != VarKind.SET]
    if not free_search:
        annotated = {v for step in model.solve.search for v in step.vars}
        chosen = [v for v in branched if v in annotated]
        if chosen:
            return np.array(chosen, dtype=np.int32)
    declared = [v for v in branched if not V.names[v].startswith("X_INTRODUCED_")]
    return np.array(declared or branched, dtype=np.int32)


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
    ):
        """`incumbent`: one shared with another engine (the portfolio's branch and bound), whose
        solutions then become the islands' starting points too; else one of its own, printing
        through report(values, objective)."""
        if dm.obj_var < 0:
            raise FznError("LNS needs an objective", fix="solve minimize/maximize, or drop the lns annotation")
        self.dm = dm
        self.opts = opts
        self.spec = spec
        self.devices = devices
        self.incumbent = incumbent or Incumbent(Outcome(), dm.obj_sense, report)
        self.outcome = self.incumbent.outcome
        self.fd = lns_variables(model, dm, opts.free_search)
        self.related = RelatedVariables.of(model, self.fd)
        self.dive_index = next((i for i, d in enumerate(devices) if not d.is_gpu), 0) if len(devices) > 1 else 0
        self.runner = self._runner(self.dive_index)
        self.settings = lns_settings(spec, opts, self.runner.max_items)  # bad settings: said at once
        self.runners = [self.runner]
        self.islands: list[Island] = []
        self.shares: list = []
        self._bugs: list[BaseException] = []  # unexpected errors of island threads

    def _runner(self, i: int) -> Runner:
        return Runner(self.devices[i], self.dm, seed=self.opts.seed, verbose=self.opts.verbose)

    # ------------------------------------------------------------------ the run
    def run(self, deadline: float | None) -> Outcome:
        s = self.settings
        run_deadline = deadline
        if s.timeout_s is not None:
            until = time.monotonic() + s.timeout_s
            deadline = until if deadline is None else min(deadline, until)
        built: dict[int, Runner | FznError] = {}
        builders = [
            threading.Thread(target=self._build, args=(i, built), daemon=True)
            for i in range(len(self.devices))
            if i != self.dive_index
        ]
        for t in builders:
            t.start()
        try:  # the first solution, unless another engine sharing the incumbent finds one sooner
            finished, first = run_batch(
                self.runner,
                Paths.root(),
                deadline,
                None,
                self.incumbent.offer,
                first_only=True,
                stop=lambda: self.incumbent.stopped or self.incumbent.bound() is not None,
            )
            self.outcome.complete = self.outcome.complete or finished  # shared: another engine may have proved it
        except CapacityError as err:
            self.incumbent.note_error(f"a search thread ran out of {err} capacity")
            first = None
        for t in builders:
            t.join()
        self._keep_built(built)
        if self.incumbent.best is not None:  # its own first solution, or a better one found beside it
            first = self.incumbent.best
        if first is None or self.outcome.complete or self.incumbent.stopped:
            return self.outcome
        if not len(self.fd):
            self.incumbent.note_error(
                "LNS has no decision variables to release (every searched variable is "
                "defined by a constraint); the first solution is not proven optimal"
            )
            return self.outcome
        given = _given(self.spec, self.opts)  # the user's T and percent stay as given
        self.islands = [
            Island(
                i,
                r,
                lns_arms(self.spec, self.opts, r.max_items),
                self.fd,
                self.opts.seed,
                self.incumbent,
                steer_count="neighbourhoods" not in given,
                grow_release="percent" not in given,
                related=self.related,
            )
            for i, r in enumerate(self.runners)
        ]
        self._run_islands(first, deadline)
        if not self.incumbent.stopped and (run_deadline is None or time.monotonic() < run_deadline):
            # LNS proves nothing: an end before the run's time limit is said, not left silent
            if deadline is not None and time.monotonic() >= deadline:
                self.incumbent.note_error(f"LNS reached its time-out of {s.timeout_s:g} s (LNS proves no optimum)")
            else:
                self.incumbent.note_error(
                    f"LNS ended after {s.restarts} restarts of {s.steps} steps (LNS proves no optimum)"
                )
        return self.outcome

    def _build(self, i: int, built: dict) -> None:
        """Another device's runner, built while the first solution is sought."""
        try:
            built[i] = self._runner(i)
        except FznError as err:
            built[i] = err

    def _keep_built(self, built: dict) -> None:
        runners = []
        for i in range(len(self.devices)):
            got = self.runner if i == self.dive_index else built.get(i)
            if isinstance(got, Runner):
                runners.append(got)
            elif got is not None and self.opts.verbose:
                print(f"fzn-gpu: leaving out {self.devices[i].name}: {got}", file=sys.stderr)
        self.runners = runners

    def _run_islands(self, first: Solution, deadline: float | None) -> None:
        if len(self.islands) == 1:
            self._island(self.islands[0], first, deadline)
            self._raise_if_all_failed()
            return
        threads = [
            threading.Thread(target=self._island, args=(isl, first, deadline), daemon=True) for isl in self.islands
        ]
        run_threads(threads, self._stop_islands)
        if self._bugs:  # not a device's failure: a bug, raised where it can be seen
            raise self._bugs[0]
        self._raise_if_all_failed()

    def _stop_islands(self) -> None:
        self.incumbent.stopped = True

    def _island(self, island: Island, first: Solution, deadline: float | None) -> None:
        try:
            island.run(first, deadline)
        except CapacityError as err:
            self.incumbent.note_error(f"a search thread ran out of {err} capacity")
        except FznError as err:  # this device failed; the others go on
            island.failed = err
            if len(self.islands) > 1:
                print(f"fzn-gpu: LNS goes on without {island.runner.device.name}: {err.message}", file=sys.stderr)
        except BaseException as err:  # anything else stops every island
            if len(self.islands) == 1:
                raise
            self._bugs.append(err)
            self.incumbent.stopped = True

    def _raise_if_all_failed(self) -> None:
        failed = [isl.failed for isl in self.islands if isl.failed is not None]
        if failed and len(failed) == len(self.islands):
            raise failed[0]

    def progress(self) -> Outcome:
        return replace(self.outcome, complete=False)

    def extra_stats(self) -> dict[str, object]:
        s = self.settings
        islands = self.islands
        stats: dict[str, object] = {
            "lnsStrategy": s.strategy,
            "lnsSteps": sum(isl.steps for isl in islands),
            "lnsImprovingSteps": sum(isl.improving_steps for isl in islands),
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
                stats[f"d{i}_lnsNeighbourhoods"] = isl.settings.neighbourhoods
                stats[f"d{i}_nodes"] = isl.runner.stats.nodes
        return stats
