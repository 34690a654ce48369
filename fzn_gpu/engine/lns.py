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
from ..model import LnsSpec, Model, VarKind
from ..options import SolveOptions
from .complete import Outcome, report_improvements
from .lns_island import Island, Solution, run_batch
from .pack import DeviceModel
from .paths import Paths
from .runner import CapacityError, Runner


DEFAULTS = {"percent": 20, "steps": 50, "restarts": 1 << 30, "timeout": None}


def lns_settings(spec: LnsSpec | None, opts: SolveOptions, items: int) -> LnsSpec:
    """lns(P, T, M, H, STRATEGY, S, TIMEOUT): the annotation's values, the command line's over
    them; what neither gives is the paper's example, with T x M filling the device (about one
    path per work-item a step). timeout_s None: the run's time limit alone."""
    given = dict(zip(("percent", "neighbourhoods", "starts", "steps", "strategy", "restarts", "timeout"),
                     (spec.percent, spec.neighbourhoods, spec.starts, spec.steps, spec.strategy, spec.restarts,
                      spec.timeout_s))) if spec else {}
    given.update(opts.lns or {})
    strategy = given.get("strategy", "complete_exploration")
    starts = given.get("starts", 1 if strategy == "complete_exploration" else 16)
    if given.get("timeout") is not None and given["timeout"] <= 0:
        given["timeout"] = None                      # lns(..., 0): no time-out of its own
    value = lambda key: given.get(key, DEFAULTS.get(key))   # noqa: E731
    settings = LnsSpec(value("percent"), given.get("neighbourhoods", max(1, items // max(starts, 1))), starts,
                       value("steps"), strategy, value("restarts"), value("timeout"))
    for name in ("percent", "neighbourhoods", "starts", "steps", "restarts"):
        if getattr(settings, name) < 1:
            raise FznError(f"lns {name} must be at least 1, not {getattr(settings, name)}",
                           fix="give lns(P, T, M, H, STRATEGY, S, TIMEOUT) positive numbers")
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


class Incumbent:
    """The best solution any island has found. Every island's solutions pass through offer(),
    which prints those that improve on all found so far (one lock: one stream)."""

    def __init__(self, outcome: Outcome, obj_sense: int, report):
        self._lock = threading.Lock()
        self.outcome = outcome
        self.obj_sense = obj_sense
        self.report = report
        self.best: Solution | None = None
        self._stamp = 0              # how many times best has improved
        self.stopped = False         # set to end every island at its next step

    def offer(self, sols: np.ndarray) -> int:
        """Prints the improvements among `sols`; returns how many it printed."""
        with self._lock:
            before = self.outcome.solutions
            report_improvements(self.outcome, sols, self.obj_sense, self.report)
            i = int(np.argmin(sols[:, 0]))
            if self.best is None or sols[i, 0] < self.best[0]:
                self.best = (int(sols[i, 0]), sols[i, 1:].copy())
                self._stamp += 1
            return self.outcome.solutions - before

    def stamp(self) -> int:
        with self._lock:
            return self._stamp

    def better_since(self, mark: int, current: Solution) -> Solution:
        """The best found since stamp() read `mark`, if it beats `current`; else `current`."""
        with self._lock:
            if self.best is not None and self._stamp > mark and self.best[0] < current[0]:
                return self.best
        return current

    def note_error(self, message: str) -> None:
        with self._lock:
            self.outcome.error = self.outcome.error or message


class LnsSearch:
    def __init__(self, model: Model, dm: DeviceModel, devices: list[Device], opts: SolveOptions, report,
                 spec: LnsSpec | None):
        if dm.obj_var < 0:
            raise FznError("LNS needs an objective", fix="solve minimize/maximize, or drop the lns annotation")
        self.dm = dm
        self.opts = opts
        self.spec = spec
        self.devices = devices
        self.outcome = Outcome()
        self.incumbent = Incumbent(self.outcome, dm.obj_sense, report)
        self.fd = lns_variables(model, dm, opts.free_search)
        self.dive_index = next((i for i, d in enumerate(devices) if not d.is_gpu), 0) if len(devices) > 1 else 0
        self.runner = self._runner(self.dive_index)
        self.settings = lns_settings(spec, opts, self.runner.max_items)      # bad settings: said at once
        self.runners = [self.runner]
        self.islands: list[Island] = []
        self.shares: list = []
        self._bugs: list[BaseException] = []      # unexpected errors of island threads

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
        builders = [threading.Thread(target=self._build, args=(i, built), daemon=True)
                    for i in range(len(self.devices)) if i != self.dive_index]
        for t in builders:
            t.start()
        try:
            finished, first = run_batch(self.runner, Paths.root(), deadline, None, self.incumbent.offer,
                                        first_only=True)
            self.outcome.complete = finished
        except CapacityError as err:
            self.incumbent.note_error(f"a search thread ran out of {err} capacity")
            first = None
        for t in builders:
            t.join()
        self._keep_built(built)
        if first is None or self.outcome.complete:
            return self.outcome
        if not len(self.fd):
            self.incumbent.note_error("LNS has no decision variables to release (every searched variable is "
                                      "defined by a constraint); the first solution is not proven optimal")
            return self.outcome
        self.islands = [Island(i, r, lns_settings(self.spec, self.opts, r.max_items), self.fd, self.opts.seed,
                               self.incumbent) for i, r in enumerate(self.runners)]
        self._run_islands(first, deadline)
        if not self.incumbent.stopped and (run_deadline is None or time.monotonic() < run_deadline):
            # LNS proves nothing: an end before the run's time limit is said, not left silent
            if deadline is not None and time.monotonic() >= deadline:
                self.incumbent.note_error(f"LNS reached its time-out of {s.timeout_s:g} s (LNS proves no optimum)")
            else:
                self.incumbent.note_error(f"LNS ended after {s.restarts} restarts of {s.steps} steps "
                                          "(LNS proves no optimum)")
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
        threads = [threading.Thread(target=self._island, args=(isl, first, deadline), daemon=True)
                   for isl in self.islands]
        for t in threads:
            t.start()
        try:
            while any(t.is_alive() for t in threads):    # short waits: the main thread takes interrupts
                for t in threads:
                    t.join(0.05)
        finally:                       # an interrupt: every island ends at its next step
            self.incumbent.stopped = True
            for t in threads:
                t.join()
        if self._bugs:                 # not a device's failure: a bug, raised where it can be seen
            raise self._bugs[0]
        self._raise_if_all_failed()

    def _island(self, island: Island, first: Solution, deadline: float | None) -> None:
        try:
            island.run(first, deadline)
        except CapacityError as err:
            self.incumbent.note_error(f"a search thread ran out of {err} capacity")
        except FznError as err:        # this device failed; the others go on
            island.failed = err
            if len(self.islands) > 1:
                print(f"fzn-gpu: LNS goes on without {island.runner.device.name}: {err.message}", file=sys.stderr)
        except BaseException as err:   # anything else stops every island
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
            "lnsStrategy": s.strategy, "lnsSteps": sum(isl.steps for isl in islands),
            "lnsImprovingSteps": sum(isl.improving_steps for isl in islands),
            "lnsNeighbourhoods": sum(isl.settings.neighbourhoods for isl in islands) or s.neighbourhoods,
            "lnsStarts": s.starts, "lnsPercent": s.percent}
        if len(islands) > 1:
            for i, isl in enumerate(islands):
                stats[f"d{i}_device"] = isl.runner.device.name
                stats[f"d{i}_lnsSteps"] = isl.steps
                stats[f"d{i}_lnsImprovements"] = isl.improvements
                stats[f"d{i}_lnsNeighbourhoods"] = isl.settings.neighbourhoods
                stats[f"d{i}_nodes"] = isl.runner.stats.nodes
        return stats
