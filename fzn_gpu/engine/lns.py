"""Large Neighbourhood Search (the GPU-LNS paper, ../shared/papers/gpu-large-neighbourhood-search.txt).

After a first solution (the complete engine's dive), each improving step picks T random sets of
FD variables to release and explores them all at once on the device: every neighbourhood, or
every candidate assignment a strategy builds from it, is one path of decisions that the search
kernel replays with propagation (which computes the Aux variables and the objective) and,
for the searching strategies, searches below under a node budget. The kernel keeps the best
objective met below each path (the paper's K1) and writes improving solutions, of which the
host takes the best (K2). H steps per restart, S restarts from the first solution, a time-out.

The strategies, each a way to turn the incumbent and a neighbourhood into paths:
- complete_exploration (CE): the other variables fixed, branch and bound below;
- random_labeling (RL): M random labellings with propagation (CP-built starting points);
- random_permutation (RP): M random permutations of the released variables' values;
- two_exchange (2P): M swaps of two released variables' values;
- icm: iterated conditional modes, one released variable at a time, all its values at once;
- gibbs: Gibbs sampling, the same candidates, the value drawn by its objective.
LNS proves nothing: the run ends with the best found, never `==========`, unless the first
solution's search already explored the whole tree."""

from __future__ import annotations

import math
import sys
import time
from dataclasses import replace

import numpy as np

from ..device import Device
from ..errors import FznError
from ..model import LnsSpec, Model
from ..options import SolveOptions
from .complete import Outcome, report_improvements
from .pack import DeviceModel
from .paths import Paths
from .runner import INT_MAX, CapacityError, Exploration, Runner

OP_EQ = 0
MAX_VALUES = 64          # ICM / Gibbs: values tried per variable and step (sampled beyond)
CE_NODES = 2000          # complete exploration: nodes per neighbourhood and step


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
    branched = [v for v in dict.fromkeys(dm.sg_var.tolist()) if not V.is_aux[v]]
    if not free_search:
        annotated = {v for step in model.solve.search for v in step.vars}
        chosen = [v for v in branched if v in annotated]
        if chosen:
            return np.array(chosen, dtype=np.int32)
    declared = [v for v in branched if not V.names[v].startswith("X_INTRODUCED_")]
    return np.array(declared or branched, dtype=np.int32)


class LnsSearch:
    def __init__(self, model: Model, dm: DeviceModel, devices: list[Device], opts: SolveOptions, report,
                 spec: LnsSpec | None):
        if dm.obj_var < 0:
            raise FznError("LNS needs an objective", fix="solve minimize/maximize, or drop the lns annotation")
        self.dm = dm
        self.opts = opts
        self.report = report
        self.runner = Runner(devices[0], dm, seed=opts.seed, verbose=opts.verbose)
        self.runners = [self.runner]
        self.shares: list = []
        self.settings = lns_settings(spec, opts, self.runner.max_items)
        self.fd = lns_variables(model, dm, opts.free_search)
        self.rng = np.random.default_rng(opts.seed)
        self.outcome = Outcome()
        self.steps_done = 0
        self.improving_steps = 0

    # ------------------------------------------------------------------ the loop
    def run(self, deadline: float | None) -> Outcome:
        s = self.settings
        if s.timeout_s is not None:
            until = time.monotonic() + s.timeout_s
            deadline = until if deadline is None else min(deadline, until)
        try:
            first = self._first_solution(deadline)
            if first is None or self.outcome.complete or not len(self.fd):
                return self.outcome
            for _ in range(s.restarts):
                current = first
                for _ in range(s.steps):
                    if deadline is not None and time.monotonic() >= deadline:
                        return self.outcome
                    better = self._step(current, deadline)
                    self.steps_done += 1
                    if better is not None and better[0] < current[0]:
                        current = better
                        self.improving_steps += 1
        except CapacityError as err:
            self.outcome.error = f"a search thread ran out of {err} capacity"
        return self.outcome

    def _first_solution(self, deadline: float | None):
        """The complete engine's search from the root until its first solution (the best of
        its first slice). If it explores the whole tree, the answer is proven."""
        finished, best = self._run(Paths.root(), deadline, None, first_only=True)
        self.outcome.complete = finished
        return best

    def _offer(self, sols: np.ndarray) -> None:
        report_improvements(self.outcome, sols, self.dm.obj_sense, self.report)

    # ------------------------------------------------------------------ one step
    def _step(self, current, deadline):
        obj, values = current
        releases = self._neighbourhoods()
        strategy = self.settings.strategy
        if strategy in ("icm", "gibbs"):
            return self._conditional_modes(obj, values, releases, deadline, gibbs=strategy == "gibbs")
        m = self.settings.starts
        if strategy == "complete_exploration":
            fixed = ~self._released_mask(releases)
            return self._explore(self._paths(np.tile(values[self.fd], (len(releases), 1)), fixed),
                                 obj, deadline, Exploration(node_limit=CE_NODES))
        if strategy == "random_labeling":
            fixed = np.repeat(~self._released_mask(releases), m, axis=0)
            k = releases.shape[1]
            return self._explore(self._paths(np.tile(values[self.fd], (len(fixed), 1)), fixed), obj, deadline,
                                 Exploration(node_limit=4 * k + 16, random_values=True))
        assign = np.tile(values[self.fd], (len(releases) * m, 1))
        rel = np.repeat(releases, m, axis=0)                      # (T*M, k) positions in fd
        rows = np.arange(len(rel))[:, None]
        if strategy == "random_permutation":
            perm = np.argsort(self.rng.random(rel.shape), axis=1)
            assign[rows, rel] = assign[rows, rel[rows, perm]]
        elif strategy == "two_exchange":
            if rel.shape[1] < 2:
                return None
            pick = np.argsort(self.rng.random(rel.shape), axis=1)[:, :2]
            i, j = rel[rows[:, 0], pick[:, 0]], rel[rows[:, 0], pick[:, 1]]
            r = rows[:, 0]
            assign[r, i], assign[r, j] = assign[r, j], assign[r, i].copy()
        else:
            raise FznError(f"unknown LNS strategy '{strategy}'")
        return self._explore(self._paths(assign, np.ones_like(assign, dtype=bool)), obj, deadline,
                             Exploration(node_limit=len(self.fd) + 16))

    def _conditional_modes(self, obj, values, releases, deadline, gibbs: bool):
        """ICM / Gibbs sampling: T x M chains; at each released position, every value of that
        variable (up to MAX_VALUES) is evaluated in one launch with the others as they are, and
        once more with the released variable that held the value taking the old one (a swap,
        without which no single change keeps a permutation). ICM keeps the best candidate,
        Gibbs draws one by exp(-(objective - best) / temperature)."""
        m = self.settings.starts
        chains = np.tile(values[self.fd], (len(releases) * m, 1))
        rel = np.repeat(releases, m, axis=0)
        lb, ub = self.runner.root_lb, self.runner.root_ub
        temperature = max(1.0, abs(obj) * 0.01)
        best = None
        for col in range(rel.shape[1]):
            if deadline is not None and time.monotonic() >= deadline:
                break
            pos = rel[:, col]
            owner, new = self._candidate_values(self.fd[pos], lb, ub)
            n = len(owner)
            changed = chains[owner]
            old = changed[np.arange(n), pos[owner]].copy()
            changed[np.arange(n), pos[owner]] = new
            swapped = changed.copy()
            holders = rel[owner]                                     # released positions of each chain
            held = (chains[owner[:, None], holders] == new[:, None]) & (holders != pos[owner][:, None])
            r, c = np.nonzero(held)
            swapped[r, holders[r, c]] = old[r]
            assign = np.concatenate([changed, swapped])
            how = Exploration(node_limit=len(self.fd) + 16, prune=False)
            found = self._explore(self._paths(assign, np.ones_like(assign, dtype=bool)), obj, deadline, how,
                                  bound=INT_MAX)
            if found is not None and (best is None or found[0] < best[0]):
                best = found
            plain, swap = how.results[:n], how.results[n:]
            use_swap = swap < plain                                  # the better of plain and swap
            res = np.minimum(plain, swap).astype(np.float64)
            res[res >= INT_MAX] = np.inf
            pick = self._pick(res, owner, len(chains), temperature if gibbs else None)
            ok = pick >= 0
            chains[ok] = np.where(use_swap[pick[ok], None], swapped[pick[ok]], changed[pick[ok]])
        return best

    def _candidate_values(self, variables: np.ndarray, lb: np.ndarray, ub: np.ndarray):
        """(owner, value) per candidate: every value (up to MAX_VALUES) of each chain's variable,
        the chains' candidates contiguous and in chain order."""
        uniq, inv = np.unique(variables, return_inverse=True)
        per_var = [self._values(int(lb[v]), int(ub[v])) for v in uniq]
        lens = np.array([len(x) for x in per_var])
        var_start = np.concatenate([[0], np.cumsum(lens)[:-1]])
        counts = lens[inv]
        owner = np.repeat(np.arange(len(variables)), counts)
        within = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
        return owner, np.concatenate(per_var)[var_start[inv[owner]] + within]

    def _pick(self, res: np.ndarray, owner: np.ndarray, chains: int, temperature: float | None) -> np.ndarray:
        """Per chain, the index of its chosen candidate (-1: none feasible): ICM the best (the
        first of equals), Gibbs one drawn by exp(-(objective - best) / temperature)."""
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        mins = np.minimum.reduceat(res, starts)
        feasible = np.isfinite(mins)
        with np.errstate(invalid="ignore"):                         # inf - inf where none is feasible
            gap = res - mins[owner]
        if temperature is None:
            score = np.where(gap == 0, np.arange(len(res)), len(res))
            pick = np.minimum.reduceat(score, starts)
        else:
            w = np.where(np.isfinite(gap), np.exp(-gap / temperature), 0.0)
            cw = np.cumsum(w)
            before = np.r_[0.0, cw][starts]
            total = np.add.reduceat(w, starts)
            target = before + self.rng.random(len(starts)) * total
            ends = np.r_[starts[1:], len(res)] - 1
            pick = np.minimum(np.searchsorted(cw, target, side="right"), ends)
        out = np.full(chains, -1, dtype=np.int64)
        out[owner[starts][feasible]] = pick[feasible]
        return out

    # ------------------------------------------------------------------ helpers
    def _neighbourhoods(self) -> np.ndarray:
        """T rows of k distinct positions in fd: the variables each neighbourhood releases."""
        n = len(self.fd)
        k = min(n, max(1, math.ceil(self.settings.percent * n / 100)))
        return np.argsort(self.rng.random((self.settings.neighbourhoods, n)), axis=1)[:, :k]

    def _released_mask(self, releases: np.ndarray) -> np.ndarray:
        mask = np.zeros((len(releases), len(self.fd)), dtype=bool)
        mask[np.arange(len(releases))[:, None], releases] = True
        return mask

    def _values(self, lo: int, hi: int) -> np.ndarray:
        if hi - lo + 1 <= MAX_VALUES:
            return np.arange(lo, hi + 1, dtype=np.int64)
        return np.unique(self.rng.integers(lo, hi + 1, MAX_VALUES))

    def _paths(self, assign: np.ndarray, fixed: np.ndarray) -> Paths:
        """One path per row: x = value for the fixed positions, in fd's order."""
        counts = fixed.sum(axis=1)
        ptr = np.zeros(len(assign) + 1, np.int64)
        np.cumsum(3 * counts, out=ptr[1:])
        rows, cols = np.nonzero(fixed)
        triples = np.stack([self.fd[cols], np.full(len(cols), OP_EQ), assign[rows, cols]], axis=1)
        return Paths(ptr.astype(np.int32), triples.astype(np.int32).ravel())

    def _explore(self, paths: Paths, obj: int, deadline, how: Exploration, bound: int | None = None):
        """Run one batch; returns the best (objective, values) that beat `bound` (default: the
        incumbent's objective), or None. how.results holds each path's best objective."""
        self.runner.set_best(obj if bound is None else bound)
        return self._run(paths, deadline, how)[1]

    def _run(self, paths: Paths, deadline, how: Exploration | None, first_only: bool = False):
        """(finished, best (objective, values) among the solutions met, or None); every
        improvement on the best so far is printed at once."""
        rows: list[np.ndarray] = []

        def on_slice(sols) -> bool:
            if sols is not None and len(sols):
                rows.append(sols)
                self._offer(sols)
                return not first_only
            return True

        finished, _ = self.runner.run_phase(paths, 0, True, on_slice, deadline, lns=how)
        if not rows:
            return finished, None
        found = np.concatenate(rows)
        row = found[np.argmin(found[:, 0])]
        return finished, (int(row[0]), row[1:].copy())

    def progress(self) -> Outcome:
        return replace(self.outcome, complete=False)

    def extra_stats(self) -> dict[str, object]:
        s = self.settings
        return {"lnsStrategy": s.strategy, "lnsSteps": self.steps_done, "lnsImprovingSteps": self.improving_steps,
                "lnsNeighbourhoods": s.neighbourhoods, "lnsStarts": s.starts, "lnsPercent": s.percent}
