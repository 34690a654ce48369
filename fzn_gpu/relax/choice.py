"""The choice relaxation: linear rows over constants that shared index variables choose, seen
together through one Lagrangian surrogate.

A model that picks one option per item (a mode per activity, a machine per job, a size per
order) flattens each attribute of the choice to an element of its own, `y_k = T_k[m]` for the
item's index variable m, and bounds the attributes in linear rows: `sum_i y_{k,i} <= b_k` for
each non-renewable resource k. Each row is propagated alone, so every item may look cheap in
one resource through one option and in the next resource through another: the rows can admit
no choice together (a multi-choice, multi-dimensional knapsack) while each alone is easy, and
search must enumerate the choices to find out (3^30 for a 30-activity, 3-mode project).

With multipliers lambda_k >= 0 on the rows (an equality is two rows), every solution satisfies

    sum_m W_m[m] + sum_j C_j * x_j <= beta,
    W_m[v] = sum_k lambda_k * (sum of a * T[v] over row k's terms y = T[m]),
    C_j = sum_k lambda_k * a_kj (the rows' other terms), beta = sum_k lambda_k * b_k,

added to the model as Aux variables `w_m = W_m[m]` (array_int_element) and one int_lin_le row.
Its bounds propagation is, under each node's domains, the Lagrangian relaxation of the rows'
LP over the choices (each w_m takes its least weight over m's remaining values), event-driven
like any constraint. The multipliers come from mirror ascent on the root's Lagrangian over the
simplex (it is homogeneous in lambda: the rows' LP has no solution exactly where some lambda
makes it positive); they are scaled to integers and the surrogate computed in exact integers,
so a poor lambda weakens it and never makes it wrong. Where the choices' LP has no solution,
root propagation fails at once: the model is proved unsatisfiable without a search."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..flatzinc.model import INT_LIMIT, Model
from .edit import add_int_vars, add_rows
from .elements import element_terms
from .linear import lin_rows

MAX_ROWS = 256  # coupled rows combined (the Lagrangian's dimension)
MAX_VALUES = 512  # an index variable's values listed; a wider index's terms stay plain
ITERATIONS = 600  # mirror-ascent steps (each a few numpy operations over the listed values)
MAX_ENTRIES = 4_000_000  # rows x (listed values + plain variables) of the dense Lagrangian, at most


@dataclass
class ChoiceSurrogate:
    rows: int  # model rows combined (an equality counts twice)
    indices: int  # index variables whose choices the surrogate weighs
    slack: int  # beta minus the surrogate's least left-hand side at the root: < 0, no solution


@dataclass
class _Row:
    origin: int  # the model row it comes from (an equality's two halves share it)
    rhs: int
    plain: dict[int, int]  # variable -> coefficient, terms not chosen through an index
    chosen: dict[int, dict[int, int]]  # index variable -> {value: sum of a * T[value]}


def _element_defined(model: Model) -> np.ndarray:
    """The variables some array_int_element(idx, array, y) defines as y (its last field)."""
    table = model.tables.get("array_int_element")
    if table is None or not len(table):
        return np.zeros(0, dtype=np.int64)
    return table.data[table.row_ptr[1:] - 1]


def _rows(model: Model) -> list[_Row]:
    """Each int_lin_le / int_lin_eq row (an equality as <= and >=) with at least two terms
    that index variables choose, its terms grouped by index."""
    V = model.vars
    defined = _element_defined(model)
    if not len(defined):
        return []
    raw: list[tuple[np.ndarray, np.ndarray, int, bool]] = []
    for key, equality in (("int_lin_le", False), ("int_lin_eq", True)):
        table = model.tables.get(key)
        if table is None or not len(table):
            continue
        row, coef, var, last, n = lin_rows(table)
        # rows with two terms or more that an element defines, found at once (numpy): a big
        # model's many short rows never reach the loop below
        chosen_terms = np.bincount(row[np.isin(var, defined)], minlength=len(n))
        ends = np.cumsum(n)
        for r in np.nonzero(chosen_terms >= 2)[0].tolist():
            raw.append((coef[ends[r] - n[r] : ends[r]], var[ends[r] - n[r] : ends[r]], int(last[r]), equality))
    if not raw:
        return []
    elements = element_terms(model, np.unique(np.concatenate([xs for _, xs, _, _ in raw])))
    listed: dict[int, list[int] | None] = {}

    def values(idx: int, array: np.ndarray) -> list[int] | None:
        if idx not in listed:
            lo, hi = int(V.lb[idx]), int(V.ub[idx])
            listed[idx] = V.domain(idx).values() if hi - lo < MAX_VALUES else None
        vs = listed[idx]
        return None if vs is None else [v for v in vs if 1 <= v <= len(array)]

    out: list[_Row] = []
    for origin, (coefs, xs, rhs, equality) in enumerate(raw):
        chosen: dict[int, dict[int, int]] = {}
        plain: dict[int, int] = {}
        for a, x in zip(coefs.tolist(), xs.tolist()):
            hit = elements.get(x)
            vs = values(*hit) if hit is not None else None
            if hit is None or vs is None:
                plain[x] = plain.get(x, 0) + a
                continue
            idx, array = hit
            if idx not in chosen:
                chosen[idx] = {v: a * int(array[v - 1]) for v in vs}
            else:  # a value another of idx's elements forbids is in no solution: dropped
                allowed = set(vs)
                chosen[idx] = {v: w + a * int(array[v - 1]) for v, w in chosen[idx].items() if v in allowed}
        if len(chosen) < 2:
            continue
        out.append(_Row(origin, rhs, plain, chosen))
        if equality:
            out.append(
                _Row(
                    origin,
                    -rhs,
                    {x: -a for x, a in plain.items()},
                    {m: {v: -w for v, w in c.items()} for m, c in chosen.items()},
                )
            )
    return out


def _coupled(rows: list[_Row]) -> list[_Row]:
    """The rows that share an index variable with another model row (a row, or an
    equality's two halves, gains nothing from a surrogate of itself), at most MAX_ROWS."""
    users: dict[int, set[int]] = {}
    for r in rows:
        for m in r.chosen:
            users.setdefault(m, set()).add(r.origin)
    kept = [r for r in rows if any(len(users[m]) > 1 for m in r.chosen)]
    return kept[:MAX_ROWS]


class _Lagrangian:
    """L(lambda) = sum_m min_v W_m[v] + sum_j min(C_j lb_j, C_j ub_j) - beta over the rows, as
    dense numpy arrays: one column per (index, value) and per plain variable."""

    def __init__(self, rows: list[_Row], lb: np.ndarray, ub: np.ndarray):
        self.indices = sorted({m for r in rows for m in r.chosen})
        self.values = {m: sorted({v for r in rows for v in r.chosen.get(m, {})}) for m in self.indices}
        # a value some row's elements forbid is in no solution
        for m in self.indices:
            for r in rows:
                if m in r.chosen:
                    self.values[m] = [v for v in self.values[m] if v in r.chosen[m]]
        self.empty = any(not self.values[m] for m in self.indices)
        self.too_big = False
        if self.empty:
            return  # the elements themselves fail at the root
        self.plain = sorted({x for r in rows for x in r.plain})
        K = len(rows)
        widths = [len(self.values[m]) for m in self.indices]
        self.too_big = K * (sum(widths) + len(self.plain)) > MAX_ENTRIES
        if self.too_big:
            return  # its dense arrays would not be cheap: the relaxation is left out
        self.starts = (
            np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64) if widths else np.zeros(0, np.int64)
        )
        E = np.zeros((K, int(sum(widths))))
        P = np.zeros((K, len(self.plain)))
        col = {x: j for j, x in enumerate(self.plain)}
        place = dict(zip(self.indices, self.starts.tolist()))
        for k, r in enumerate(rows):
            for m, weights in r.chosen.items():
                s = place[m]
                for j, v in enumerate(self.values[m]):
                    E[k, s + j] = weights[v]
            for x, a in r.plain.items():
                P[k, col[x]] = a
        self.E, self.P = E, P
        self.b = np.array([r.rhs for r in rows], dtype=float)
        self.lb = lb[self.plain].astype(float)
        self.ub = ub[self.plain].astype(float)

    def value_and_step(self, lam: np.ndarray) -> tuple[float, np.ndarray]:
        """L(lambda) and a supergradient."""
        w = lam @ self.E
        g = -self.b.copy()
        total = -float(lam @ self.b)
        if len(self.indices):
            least = np.minimum.reduceat(w, self.starts)
            total += float(least.sum())
            # the first column of each index at its least weight
            at = np.repeat(least, np.diff(np.append(self.starts, len(w))))
            hits = np.nonzero(w <= at)[0]
            first = hits[np.searchsorted(hits, self.starts)]
            g += self.E[:, first].sum(axis=1)
        if len(self.plain):
            c = lam @ self.P
            x = np.where(c >= 0, self.lb, self.ub)
            total += float(c @ x)
            g += self.P @ x
        return total, g


def _ascend(lag: _Lagrangian, K: int) -> np.ndarray:
    """Multipliers on the simplex that make L largest (mirror ascent; stops once L > 0)."""
    lam = np.full(K, 1.0 / K)
    best, best_value = lam, -np.inf
    scale = max(float(np.abs(lag.E).max(initial=0.0)), float(np.abs(lag.P).max(initial=0.0)), 1.0)
    for t in range(ITERATIONS):
        value, g = lag.value_and_step(lam)
        if value > best_value:
            best, best_value = lam, value
        if value > 0:
            break
        step = 2.0 / np.sqrt(t + 1) / scale
        lam = lam * np.exp(np.clip(step * g, -30.0, 30.0))
        lam = np.maximum(lam / lam.sum(), 1e-12)
        lam /= lam.sum()
    return best


def _integer_surrogate(rows: list[_Row], lag: _Lagrangian, lam: np.ndarray):
    """(W per index as {value: weight}, C per plain variable, beta) in exact integers for the
    largest scale of lambda whose numbers fit the device's 32 bits, or None."""
    for digits in (6, 4, 3, 2, 1):
        Y = [int(y) for y in np.rint(lam / lam.max() * 10**digits)]
        W: dict[int, dict[int, int]] = {m: {v: 0 for v in lag.values[m]} for m in lag.indices}
        C: dict[int, int] = {}
        beta = 0
        for y, r in zip(Y, rows):
            if not y:
                continue
            beta += y * r.rhs
            for m, weights in r.chosen.items():
                if m in W:
                    for v in W[m]:
                        W[m][v] += y * weights[v]
            for x, a in r.plain.items():
                C[x] = C.get(x, 0) + y * a
        C = {x: a for x, a in C.items() if a}
        numbers = [abs(beta), *map(abs, C.values())] + [abs(w) for c in W.values() for w in c.values()]
        if max(numbers, default=0) <= INT_LIMIT // max(len(W) + len(C), 1):
            return W, C, beta
    return None


def add_choice_surrogate(model: Model) -> ChoiceSurrogate | None:
    """Add the surrogate of the rows coupled through shared index variables; None (the model
    untouched) where no two such rows share an index."""
    rows = _coupled(_rows(model))
    if len({r.origin for r in rows}) < 2:
        return None
    V = model.vars
    lag = _Lagrangian(rows, V.lb, V.ub)
    if lag.empty or lag.too_big:
        return None
    lam = _ascend(lag, len(rows))
    found = _integer_surrogate(rows, lag, lam)
    if found is None:
        return None
    W, C, beta = found
    lo = [min(W[m].values()) for m in lag.indices]
    hi = [max(W[m].values()) for m in lag.indices]
    names = [f"_relax_choice_{V.names[m]}" for m in lag.indices]
    ws = add_int_vars(model, names, lo, hi, aux=True)
    elements = []
    for m, w, filler in zip(lag.indices, ws.tolist(), hi):
        table = [filler] * max(W[m])  # at an index no solution takes: any value in range
        for v, weight in W[m].items():
            table[v - 1] = weight
        elements.append((m, table, w))
    add_rows(model, "array_int_element", elements, ws.tolist(), model.solve.line)
    xs = ws.tolist() + list(C)
    add_rows(model, "int_lin_le", [([1] * len(ws) + list(C.values()), xs, beta)], [-1], model.solve.line)
    least = sum(lo) + sum(min(a * int(V.lb[x]), a * int(V.ub[x])) for x, a in C.items())
    return ChoiceSurrogate(len(rows), len(lag.indices), beta - least)
