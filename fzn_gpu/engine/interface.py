"""What every engine implements: the one interface SolveRun (engine/__init__.py) drives, so an
engine is chosen in one place (`SolveRun._engine`) and run, stopped early and reported on the
same way. Complete search, restarts, LNS, the portfolios, Adaptive Search and bucket
elimination implement it; tests/test_engine_interface.py checks each against it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from .incumbent import Outcome

# how an engine joins the run's Ray cluster: (model, device model, options) -> the workers
# (cluster/driver.cluster_for). Handed to the engines by SolveRun where --cluster asks for one,
# so that no engine imports cluster/, which imports the engines to run them on its workers.
JoinCluster = Callable[[Any, Any, Any], Any]


@runtime_checkable
class Engine(Protocol):
    """An engine solves one model on the devices it was given. It prints solutions as it finds
    them, through the report callback it was built with (or an Incumbent shared with the other
    engines of a portfolio); `run` returns how the search ended."""

    @property
    def runners(self) -> list:
        """The engine.runner.Runner of each device it searches on (statistics, profiles)."""
        ...

    @property
    def shares(self) -> list:
        """Each runner's share of the work, for the per-device statistics."""
        ...

    def run(self, deadline: float | None) -> Outcome:
        """Search until done, stopped (Incumbent.stopped) or `deadline` (time.monotonic()).
        Outcome.complete only where the search space was exhausted: proven optimal, all
        solutions printed, or unsatisfiable."""
        ...

    def progress(self) -> Outcome:
        """The outcome so far, never complete: what an interrupt or a time limit prints."""
        ...

    def stop(self) -> None:
        """End the search at its next slice, as a time limit would: `run` then returns with
        what every device found, counted to its last slice (an interrupt, SolveRun.wind_down)."""
        ...

    def extra_stats(self) -> dict[str, object]:
        """The engine's own statistics for `-s` (name -> value)."""
        ...
