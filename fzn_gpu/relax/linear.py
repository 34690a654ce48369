"""The model's linear part as a sparse system over its int and bool variables, with the bounds
that propagation over it implies, and its big-M rows tightened.

Rows are `sum(a * x) <= b` or `sum(a * x) = b` in exact int64 (the model's int_lin_le/eq,
int_le/lt/eq, bool2int, bool_lin_le/eq, never a reified one). Everything here is exact integer
arithmetic: the rows feed the Lagrangian cut (lagrangian.py), which must be implied by the
model, so a tightened bound or coefficient is derived only by reasoning that holds for every
solution (Harvey and Schimpf's bounds consistency for the bounds; Savelsbergh's coefficient
reduction for the rows: a binary's big-M shrinks to what the other terms can reach)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import INT_LIMIT, Model, VarKind

LE, EQ = 0, 1
MAX_ENTRIES = 400_000  # the largest linear part relaxed (its arithmetic is numpy, per entry)
PROPAGATION_ROUNDS = 20
SAFE = 1 << 61  # |activity| past which a row's int64 arithmetic is not trusted: left out


@dataclass
class LinearSystem:
    """Rows in COO form over the model's variable indices: row[k], col[k], val[k]; rhs and
    sense (LE or EQ) per row; lb/ub per variable (the model's, tightened)."""

    row: np.ndarray
    col: np.ndarray
    val: np.ndarray
    rhs: np.ndarray
    sense: np.ndarray
    lb: np.ndarray
    ub: np.ndarray

    @property
    def n_rows(self) -> int:
        return len(self.rhs)

    def activity_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Each row's least and greatest sum(a * x) over the box (exact int64; rows whose
        terms are unbounded get +-SAFE)."""
        lo_t = np.minimum(self.val * self.lb[self.col], self.val * self.ub[self.col])
        hi_t = np.maximum(self.val * self.lb[self.col], self.val * self.ub[self.col])
        lo = np.zeros(self.n_rows, dtype=np.int64)
        hi = np.zeros(self.n_rows, dtype=np.int64)
        np.add.at(lo, self.row, lo_t)
        np.add.at(hi, self.row, hi_t)
        return lo, hi


def _rows_of(model: Model):
    """(coefs, vars, rhs, sense) for every linear row of the model."""
    T = model.tables
    for key, sense in (("int_lin_le", LE), ("int_lin_eq", EQ), ("bool_lin_le", LE)):
        table = T.get(key)
        if table is None:
            continue
        for r in range(len(table)):
            row = table.row(r)
            n = int(row[0])
            yield row[1 : 1 + n], row[2 + n : 2 + 2 * n], int(row[2 + 2 * n]), sense
    table = T.get("bool_lin_eq")  # sum(a * b) = y, y a variable
    for r in range(len(table) if table is not None else 0):
        assert table is not None
        row = table.row(r)
        n = int(row[0])
        yield np.append(row[1 : 1 + n], -1), np.append(row[2 + n : 2 + 2 * n], row[2 + 2 * n]), 0, EQ
    for key, (a, b, rhs, sense) in {
        "int_le": (1, -1, 0, LE),
        "int_lt": (1, -1, -1, LE),
        "int_eq": (1, -1, 0, EQ),
        "bool2int": (-1, 1, 0, EQ),
        "bool_le": (1, -1, 0, LE),
        "bool_eq": (1, -1, 0, EQ),
    }.items():
        table = T.get(key)
        if table is None or not len(table):
            continue
        pairs = table.data.reshape(-1, 2)  # two var fields a row
        for x, y in pairs:
            yield np.array([a, b]), np.array([x, y]), rhs, sense


def linear_system(model: Model) -> LinearSystem | None:
    """The model's linear rows over finite int/bool variables, or None where there are none or
    too many (MAX_ENTRIES) or their sums may not fit in int64."""
    V = model.vars
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    rhs: list[int] = []
    sense: list[int] = []
    entries = 0
    for coefs, xs, b, s in _rows_of(model):
        if np.any((V.kind[xs] != VarKind.INT) & (V.kind[xs] != VarKind.BOOL)):
            continue
        rows.append(np.full(len(xs), len(rhs), dtype=np.int64))
        cols.append(np.asarray(xs, dtype=np.int64))
        vals.append(np.asarray(coefs, dtype=np.int64))
        rhs.append(b)
        sense.append(s)
        entries += len(xs)
        if entries > MAX_ENTRIES:
            return None
    if not rhs:
        return None
    val = np.concatenate(vals)
    lb = np.maximum(V.lb, -INT_LIMIT - 1).astype(np.int64)  # the device's range bounds every int
    ub = np.minimum(V.ub, INT_LIMIT + 1).astype(np.int64)
    if np.abs(val).max(initial=0) * (INT_LIMIT + 1) * max(len(c) for c in cols) >= SAFE:
        return None
    return LinearSystem(
        np.concatenate(rows), np.concatenate(cols), val, np.array(rhs, np.int64), np.array(sense, np.int8), lb, ub
    )


def propagate_bounds(system: LinearSystem, rounds: int = PROPAGATION_ROUNDS) -> bool:
    """Tighten lb/ub to bounds consistency of the rows (a few rounds, each over every row at
    once); False if some domain empties (the model has no solution)."""
    row, col, val = system.row, system.col, system.val
    # an equality is also sum(-a * x) <= -b; a <= row as itself
    eq = system.sense[row] == EQ
    r2 = np.concatenate([row, row[eq] + system.n_rows])
    c2 = np.concatenate([col, col[eq]])
    v2 = np.concatenate([val, -val[eq]])
    b2 = np.concatenate([system.rhs, -system.rhs])
    lb, ub = system.lb, system.ub
    m = 2 * system.n_rows
    for _ in range(rounds):
        lo_t = np.minimum(v2 * lb[c2], v2 * ub[c2])
        lo = np.zeros(m, dtype=np.int64)
        np.add.at(lo, r2, lo_t)
        slack = b2[r2] - (lo[r2] - lo_t)  # a_k * x_k <= slack
        pos, neg = v2 > 0, v2 < 0
        new_ub = np.full(len(c2), INT_LIMIT + 1, dtype=np.int64)
        new_lb = np.full(len(c2), -INT_LIMIT - 1, dtype=np.int64)
        new_ub[pos] = np.floor_divide(slack[pos], v2[pos])
        new_lb[neg] = -np.floor_divide(slack[neg], -v2[neg])  # a < 0: x >= ceil(slack / a)
        old_lb, old_ub = lb.copy(), ub.copy()
        np.minimum.at(ub, c2, new_ub)
        np.maximum.at(lb, c2, new_lb)
        if np.any(lb > ub):
            return False
        if np.array_equal(lb, old_lb) and np.array_equal(ub, old_ub):
            break
    return True


def add_cardinality_cuts(system: LinearSystem) -> int:
    """For each `<=` row over 0/1 variables with positive coefficients (a knapsack), the row
    `sum(x) <= k`, k the most items that fit (the lightest first), where k is below the row's
    length: implied by the row on every integer point, and what closes a knapsack's LP bound
    when profits follow weights (profit = weight + c: the LP takes a fraction of one more item).
    How many rows were added."""
    row, col, val = system.row, system.col, system.val
    lb, ub = system.lb[col], system.ub[col]
    zero_one = (lb >= 0) & (ub <= 1) & (val > 0)  # 0/1, or fixed at 0 or 1
    fits = np.ones(system.n_rows, dtype=bool)
    np.logical_and.at(fits, row, zero_one)
    new_rows: list[int] = []
    new_cols: list[np.ndarray] = []
    order = np.argsort(row, kind="stable")
    bounds = np.searchsorted(row[order], np.arange(system.n_rows + 1))
    for r in np.nonzero(fits & (system.sense == LE))[0]:
        ks = order[bounds[r] : bounds[r + 1]]
        free = ks[lb[ks] < ub[ks]]
        room = int(system.rhs[r]) - int(val[ks[lb[ks] == 1]].sum())  # the items fixed in take room
        weights = np.sort(val[free])
        k = int(np.searchsorted(np.cumsum(weights), room, side="right"))
        if 1 < len(free) and k < len(free):
            new_rows.append(k)
            new_cols.append(col[free])
    if not new_rows:
        return 0
    first = system.n_rows
    system.row = np.concatenate([row] + [np.full(len(c), first + i, dtype=np.int64) for i, c in enumerate(new_cols)])
    system.col = np.concatenate([col, *new_cols])
    system.val = np.concatenate([val, np.ones(sum(len(c) for c in new_cols), dtype=np.int64)])
    system.rhs = np.concatenate([system.rhs, np.array(new_rows, dtype=np.int64)])
    system.sense = np.concatenate([system.sense, np.full(len(new_rows), LE, dtype=np.int8)])
    return len(new_rows)


def tighten_big_m(system: LinearSystem, model: Model) -> int:
    """Coefficient reduction on `<=` rows: a binary x_j with a_j < 0 whose 1 makes the row
    slacker than the other terms can ever use gets a_j raised to b - max(rest), and a binary
    with a_j > 0 that the rest leaves room for likewise (the row's own b shrinks with it).
    Valid on every integer point, stronger in the relaxation (ship <= M * open: M becomes
    what ship can reach). How many coefficients changed."""
    V = model.vars
    _, hi = system.activity_bounds()
    row, col, val = system.row, system.col, system.val
    binary = (
        (system.lb[col] == 0) & (system.ub[col] == 1) & ((V.kind[col] == VarKind.BOOL) | (V.kind[col] == VarKind.INT))
    )
    le = system.sense[row] == LE
    changed = 0
    # a_j < 0: rest <= b + |a_j| x_j, and the greatest activity has x_j = 0
    cand = np.nonzero(le & binary & (val < 0))[0]
    for k in cand:
        r = row[k]
        rest_max = int(hi[r])
        b = int(system.rhs[r])
        if b < rest_max < b - int(val[k]):
            val[k] = -(rest_max - b)
            changed += 1
    # a_j > 0: rest + a_j x_j <= b with rest_max = b - delta <= b: the row binds only at
    # x_j = 1, and rest + (a_j - delta) x_j <= b - delta holds on exactly the same points
    _, hi = system.activity_bounds()
    cand = np.nonzero(le & binary & (val > 0))[0]
    for k in cand:
        r = row[k]
        a = int(val[k])
        rest_max = int(hi[r]) - a
        b = int(system.rhs[r])
        delta = b - rest_max
        if 0 < delta < a:
            val[k] = a - delta
            system.rhs[r] = b - delta
            hi[r] -= delta  # this term's greatest contribution fell by delta
            changed += 1
    return changed
