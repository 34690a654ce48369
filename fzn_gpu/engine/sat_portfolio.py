"""The default for a satisfaction model asked for one solution: complete search, restarts
(restart.py) and Adaptive Search (adaptive.py, where the model is one for local search) at
the same time, each in a thread of its own, on the same devices.

Complete search splits the tree and searches it all, so it proves unsatisfiability and wins
where solutions are plentiful; a puzzle whose first choices are wrong keeps its threads in
subtrees without a solution for as long as they last. Restarts dive from the root again and
again, each dive different (random tie-breaking, dom_w_deg: complete search follows the
model's plan, and the restarts the portfolio adds select by dom_w_deg whatever the plan says;
restarts the model or --restart asks for follow the plan) and steered by the failures before
(figures: docs/bench/measurements.md, "Restarts beside complete search"). Whichever finds a solution first prints it and stops the other;
either one's proof (complete search exhausting the tree, a restart round finishing under its
limit) ends the run UNSATISFIABLE. Restarts follow the Luby sequence of 100 nodes unless the
model or --restart names another. With GPUs and CPUs both present, complete search runs on
the GPUs and restarts on the CPUs (SPLIT); with one kind, both share every device.

Local search wins where tree search is hopeless (magic squares, number partitioning: a
random start repaired move by move, docs/bench/measurements.md) and proves nothing. It joins after
LOCAL_DELAY_S, so a model the tree searches answer at once never pays for its network or its
kernel, and runs on every device beside the other two (`--local-search off`: never)."""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np

from ..flatzinc.model import Model, RestartSpec
from ..options import SolveOptions
from ..runtime.device import Device
from .complete import CompleteSearch
from .incumbent import Outcome
from .interface import Engine, JoinCluster
from .pack import DeviceModel
from .portfolio import split_devices
from .restart import RestartSearch
from .threads import run_engines

DEFAULT_RESTARTS = RestartSpec("luby", 100)
# with GPUs and CPUs both present: complete search on the GPUs (thousands of subtrees at once),
# restarts on the CPUs, where a node costs microseconds, not a GPU work-group's milliseconds
# (FZN_GPU_COMPLETE_DEVICES, FZN_GPU_RESTARTS_DEVICES: all, gpu or cpu, override it)
SPLIT = {"complete": "gpu", "restarts": "cpu"}
LOCAL_DELAY_S = 0.3


class SatisfactionPortfolio:
    def __init__(
        self,
        model: Model,
        dm: DeviceModel,
        devices: list[Device],
        opts: SolveOptions,
        report,
        spec: RestartSpec | None = None,
        cluster: JoinCluster | None = None,
    ):
        """report(values, objective) prints one solution; `spec`: the restarts' sequence;
        `cluster`: how complete search joins the run's Ray cluster (--cluster)."""
        self.outcome = Outcome()
        self._lock = threading.Lock()
        self._report = report
        complete_devices, restart_devices = split_devices(devices, SPLIT)
        self.complete = CompleteSearch(model, dm, complete_devices, opts, self._first_only, cluster=cluster)
        # the portfolio's own restarts (none asked for) select by dom_w_deg, complete search
        # beside them following the plan; restarts the model or --restart asks for follow it
        self.restarts = RestartSearch(
            model, dm, restart_devices, opts, self._first_only, spec or DEFAULT_RESTARTS, free=spec is None
        )
        self.local = None
        if opts.local_search != "off" and not dm.nf and not len(dm.set_vars):
            from .adaptive import AdaptiveSearch

            self.local = AdaptiveSearch(model, devices, opts, self._first_only, delay_s=LOCAL_DELAY_S)

    def _first_only(self, values: np.ndarray, objective) -> None:
        """The first solution any engine finds is the run's; another's, met in the same
        moment, is dropped."""
        with self._lock:
            if self.outcome.solutions:
                return
            self.outcome.solutions = 1
            self.outcome.stopped = True
        self._report(values, objective)
        self._stop_all()

    @property
    def runners(self) -> list:
        return self.complete.runners + self.restarts.runners

    @property
    def shares(self) -> list:
        return self.complete.shares

    def run(self, deadline: float | None) -> Outcome:
        engines: dict[str, Engine] = {"complete": self.complete, "restarts": self.restarts}
        if self.local is not None:
            engines["local"] = self.local
        results = run_engines(engines, deadline, self._stop_all, verbose=self.complete.opts.verbose)
        done = results["complete"]
        out = replace(self.outcome, expansions=done.expansions, sub_spaces=done.sub_spaces, split_s=done.split_s)
        out.complete = any(r.complete for r in results.values())
        if not (out.complete or out.stopped):
            out.error = done.error or results["restarts"].error or (results["local"].error if self.local else None)
        return out

    def _stop_all(self) -> None:
        self.complete.cancel.set()
        self.restarts.cancel.set()
        if self.local is not None:
            self.local.cancel.set()

    def progress(self) -> Outcome:
        return replace(self.outcome, complete=False, error=None, sub_spaces=self.complete.outcome.sub_spaces)

    def stop(self) -> None:
        """Ends the search at its next slice, keeping what it found (an interrupt: SolveRun.wind_down)."""
        self._stop_all()

    def extra_stats(self) -> dict[str, object]:
        local = self.local.extra_stats() if self.local is not None else {}
        stats: dict[str, object] = {"engine": "complete+restarts" + ("+adaptive" if local else "")}
        stats.update(self.restarts.extra_stats())
        stats.update(local)
        stats["completeDevices"] = "; ".join(r.device.name for r in self.complete.runners)
        stats["restartDevices"] = "; ".join(r.device.name for r in self.restarts.runners)
        return stats
