"""The knapsack relaxation: the objective over 0/1 variables under one `<=` row of the model,
solved exactly by dynamic programming over the row's capacity.

Dropping every constraint but one knapsack row (`sum(w * x) <= C`, x 0/1, the row's negative
coefficients complemented) leaves a 0/1 knapsack problem whose optimum bounds the model's: its
dynamic program (Bellman; n items by C + 1 capacities, one numpy maximum an item) is exact in
integers and pseudo-polynomial, so it runs where n * (C + 1) is small (MAX_CELLS). It is
stronger than the LP (no fractional item), and its optimal solution is a hint: the search labels
the variables it takes to 1 first, the others to 0 (Solve.guide), so that on a model that is a
knapsack and little else, the first dive meets the relaxation's optimum, which its bound then
proves at once.

What it adds is the bound alone, `obj <= Q*` (maximising) as one int_lin_le row: implied by the
row and the variables' bounds whatever else the model says."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..flatzinc.model import INT_LIMIT, Model, SearchStep
from .assignment import objective_row
from .edit import add_rows
from .linear import LE, LinearSystem

MAX_CELLS = 20_000_000  # items x capacities a dynamic program may fill (bytes of its choice bits)
MAX_ROWS = 32  # knapsack rows tried, the smallest programs first
SECONDS = 0.3  # no row is started after this long


@dataclass
class KnapsackBound:
    bound: int  # on the objective (an upper bound maximising, lower minimising)
    row: int  # the LinearSystem row it relaxed to
    guide: list[SearchStep]


def _objective_terms(model: Model, system: LinearSystem):
    """(objective variable, {x: coefficient in the objective}, constant), where the objective
    is an int_lin_eq over 0/1 variables (after propagation), else None."""
    found = objective_row(model)
    if found is None:
        return None
    o, row = found
    hits = np.nonzero(row.xs == o)[0]
    a_o = int(row.coefs[hits[0]])
    terms: dict[int, int] = {}
    const = a_o * row.rhs  # a_o * obj + sum(a * x) = rhs, a_o = +-1
    for a, x in zip(row.coefs.tolist(), row.xs.tolist()):
        if x == o:
            continue
        lo, hi = int(system.lb[x]), int(system.ub[x])
        if lo == hi:
            const -= a_o * a * lo
        elif lo == 0 and hi == 1:
            terms[x] = terms.get(x, 0) - a_o * a
        else:
            return None
    return o, terms, const


def knapsack_dp(weights: np.ndarray, profits: np.ndarray, capacity: int) -> tuple[int, np.ndarray]:
    """max sum(profits * x) subject to sum(weights * x) <= capacity, x in {0, 1}^n, weights >= 0
    (profits of any sign): the optimum and an optimal x, exact in int64."""
    n = len(weights)
    neg = np.iinfo(np.int64).min // 4
    best = np.zeros(capacity + 1, dtype=np.int64)  # best[c]: the most profit within capacity c
    take = np.zeros((n, capacity + 1), dtype=bool)
    for i in range(n):
        w, p = int(weights[i]), int(profits[i])
        if w > capacity or p <= 0 and w >= 0:
            continue  # never fits, or never worth it
        shifted = np.full(capacity + 1, neg, dtype=np.int64)
        shifted[w:] = best[: capacity + 1 - w] + p
        take[i] = shifted > best
        best = np.maximum(best, shifted)
    x = np.zeros(n, dtype=np.int64)
    c = capacity
    for i in range(n - 1, -1, -1):
        if take[i, c]:
            x[i] = 1
            c -= int(weights[i])
    return int(best[capacity]), x


def _candidates(system: LinearSystem) -> list[int]:
    """The `<=` rows over 0/1 (or fixed) variables whose dynamic program fits MAX_CELLS, the
    smallest first, at most MAX_ROWS of them (a whole-table test first: a big model's rows are
    not walked one by one)."""
    row, col, val = system.row, system.col, system.val
    lb, ub = system.lb[col], system.ub[col]
    ok = np.ones(system.n_rows, dtype=bool)
    np.logical_and.at(ok, row, (lb == ub) | ((lb == 0) & (ub == 1)))
    ok &= system.sense == LE
    free = lb < ub
    # capacity after the fixed terms and the complemented negative weights; the free count
    cap = system.rhs.copy()
    np.subtract.at(cap, row[~free], (val * lb)[~free])
    np.subtract.at(cap, row[free & (val < 0)], val[free & (val < 0)])
    count = np.bincount(row[free], minlength=system.n_rows)
    cells = count.astype(float) * (np.maximum(cap, 0) + 1)
    ok &= (count >= 2) & (cap >= 0) & (cells <= MAX_CELLS)
    rows = np.nonzero(ok)[0]
    return rows[np.argsort(cells[rows], kind="stable")][:MAX_ROWS].tolist()


def add_knapsack_bound(model: Model, system: LinearSystem) -> KnapsackBound | None:
    """The tightest bound over the model's knapsack rows (each solved by knapsack_dp), added to
    the model with its solution as the search's guide; None where no row fits."""
    found = _objective_terms(model, system)
    if found is None or not found[1]:
        return None
    o, terms, const = found
    sense = 1 if model.solve.kind == "maximize" else -1  # maximise sense * obj
    best: tuple[int, int, dict[int, int]] | None = None  # (Q*, row, hint)
    order = np.argsort(system.row, kind="stable")
    starts = np.searchsorted(system.row[order], np.arange(system.n_rows + 1))
    start = time.monotonic()
    for r in _candidates(system):
        if time.monotonic() - start > SECONDS:
            break
        ks = order[starts[r] : starts[r + 1]]
        xs, ws = system.col[ks], system.val[ks]
        lb, ub = system.lb[xs], system.ub[xs]
        free = lb < ub
        if np.any(free & ((lb != 0) | (ub != 1))):
            continue  # a row over other than 0/1 variables
        cap = int(system.rhs[r]) - int((ws[~free] * lb[~free]).sum())
        xs, ws = xs[free], ws[free]
        if len(xs) < 2 or len(set(xs.tolist())) != len(xs):
            continue
        flip = ws < 0  # x = 1 - x': a negative weight becomes a positive one on x'
        cap -= int(ws[flip].sum())
        ws = np.abs(ws)
        if cap < 0 or len(xs) * (cap + 1) > MAX_CELLS:
            continue
        q = np.array([sense * terms.get(int(x), 0) for x in xs], dtype=np.int64)
        base = int(q[flip].sum())  # the profit of x = 1 where x' = 0
        q = np.where(flip, -q, q)
        value, chosen = knapsack_dp(ws, q, cap)
        # the objective's terms outside the row: each at its better value
        outside = sum(max(0, sense * p) for x, p in terms.items() if x not in set(xs.tolist()))
        total = value + base + outside
        if best is None or total < best[0]:
            hint = {int(x): int(1 - c if f else c) for x, c, f in zip(xs, chosen, flip)}
            hint.update({x: int(sense * p > 0) for x, p in terms.items() if x not in hint})
            best = (total, r, hint)
    if best is None:
        return None
    total, r, hint = best
    bound = const + sense * total  # sense * obj <= sense * const + total
    if abs(bound) > INT_LIMIT:
        return None
    known = int(system.ub[o]) if sense == 1 else int(system.lb[o])
    if (bound >= known) if sense == 1 else (bound <= known):
        return None  # nothing that bounds propagation does not already say
    add_rows(model, "int_lin_le", [([sense], [o], sense * bound)], [-1], model.solve.line)
    ones = [x for x, v in hint.items() if v == 1]
    zeros = [x for x, v in hint.items() if v == 0]
    guide = [
        SearchStep("int", ones, "input_order", "indomain_max"),
        SearchStep("int", zeros, "input_order", "indomain_min"),
    ]
    return KnapsackBound(bound, r, [g for g in guide if g.vars])
