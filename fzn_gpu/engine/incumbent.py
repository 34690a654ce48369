"""What every engine of a run shares: how a search ended (`Outcome`), the printing of
improving solutions (`report_improvements`), and the best solution found so far by any of
several searches running at once (`Incumbent`: LNS islands, and branch and bound beside them
in the portfolio), which keeps the printed stream a strictly improving sequence."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

Solution = tuple[int, np.ndarray]  # (sense-adjusted objective, values of every variable)


@dataclass
class Outcome:
    complete: bool = False  # the whole space was explored
    solutions: int = 0  # solutions reported (printed or counted)
    best: int | None = None  # best objective (sense-adjusted) so far
    error: str | None = None  # why the search stopped incomplete, if it did
    stopped: bool = False  # stopped by the solution limit
    expansions: int = 0
    sub_spaces: int = 0
    split_s: float = 0.0  # wall time of the expansion passes (splitting the root)


def report_improvements(
    outcome: Outcome, sols: np.ndarray, obj_sense: int, report, keys: np.ndarray | None = None
) -> None:
    """Print the rows that improve on the best so far, worst first, so the stream is a sequence
    of improvements. A row's sense-adjusted objective is its first int, or keys[i] (a float
    objective's, floats.objective_keys)."""
    keys = sols[:, 0] if keys is None else keys
    better = np.flatnonzero(keys < outcome.best) if outcome.best is not None else np.arange(len(keys))
    # each distinct objective below the best once (its first row), worst first: a slice's
    # rows can be thousands (every LNS neighbourhood's own improvements), its prints few
    distinct, first = np.unique(keys[better], return_index=True)
    for obj, i in zip(distinct[::-1].tolist(), better[first[::-1]].tolist()):
        outcome.best = obj
        outcome.solutions += 1
        report(sols[i, 1:], obj * obj_sense)


class Incumbent:
    """The best solution any search of the run has found. Every solution passes through
    offer(), which prints those that improve on all found so far (one lock: one stream), and
    records which engine found each printed one (`sources`)."""

    def __init__(self, outcome: Outcome, obj_sense: int, report):
        self._lock = threading.Lock()
        # `sources` has a lock of its own, taken with nothing else held and calling out to
        # nothing: offer() holds _lock while it prints (the solver's stream lock), and the
        # watchdog ending the stream holds the stream lock while it reads found_by() for the
        # statistics; one lock for both deadlocked the two.
        self._sources_lock = threading.Lock()
        self.outcome = outcome
        self.obj_sense = obj_sense
        self.report = report
        self.best: Solution | None = None
        self._stamp = 0  # how many times best has improved
        self.started = time.monotonic()  # the search's start (PortfolioSearch.run sets it)
        self.improved_at: float | None = None  # time.monotonic() of the last improvement
        self.stopped = False  # set to end every LNS island at its next step or slice
        self.sources: list[list] = []  # [engine, improvements] runs, in the order printed

    def offer(self, sols: np.ndarray, source: str = "lns") -> int:
        """Prints the improvements among `sols` (rows: objective, values); returns how many
        it printed."""
        return self.offer_gain(sols, source)[0]

    def offer_gain(self, sols: np.ndarray, source: str = "lns") -> tuple[int, int]:
        """offer(), and how far (sense-adjusted) these improvements moved the best objective
        (0 for the first solution): several searches' counts of improvements alone favour
        the one taking many small steps, each printing its own."""
        with self._lock:
            before = self.outcome.solutions
            best_before = self.best[0] if self.best is not None else None
            report_improvements(self.outcome, sols, self.obj_sense, self.report)
            i = int(np.argmin(sols[:, 0]))
            if self.best is None or sols[i, 0] < self.best[0]:
                self.best = (int(sols[i, 0]), sols[i, 1:].copy())
                self._stamp += 1
                self.improved_at = time.monotonic()
            printed = self.outcome.solutions - before
            gain = best_before - self.best[0] if best_before is not None and self.best is not None else 0
            if printed:
                with self._sources_lock:
                    if self.sources and self.sources[-1][0] == source:
                        self.sources[-1][1] += printed
                    else:
                        self.sources.append([source, printed])
            return printed, gain

    def bound(self) -> int | None:
        """The best sense-adjusted objective so far (None: no solution yet)."""
        best = self.best
        return None if best is None else best[0]

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

    def found_by(self) -> str:
        """Which engine found the printed improvements, in order: "lns:3 bnb:1 lns:12"."""
        with self._sources_lock:
            return " ".join(f"{source}:{n}" for source, n in self.sources)

    def improvements_by(self) -> dict[str, int]:
        """How many printed improvements each engine found."""
        by = {"bnb": 0, "lns": 0}
        with self._sources_lock:
            for source, n in self.sources:
                by[source] = by.get(source, 0) + n
        return by
