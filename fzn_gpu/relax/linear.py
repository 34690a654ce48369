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

from ..flatzinc.model import INT_LIMIT, Model, VarKind

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


# kinds of two var fields read as a row a*x + b*y (<= or =) rhs
PAIRS = {
    "int_le": (1, -1, 0, LE),
    "int_lt": (1, -1, -1, LE),
    "int_eq": (1, -1, 0, EQ),
    "bool2int": (-1, 1, 0, EQ),
    "bool_le": (1, -1, 0, LE),
    "bool_eq": (1, -1, 0, EQ),
}


def lin_rows(table) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A table of rows [n, coefs(n), n, vars(n), last] decoded at once: (row of each entry,
    coefficient, variable, each row's last field, each row's n)."""
    start = table.row_ptr[:-1]
    n = table.data[start]
    row = np.repeat(np.arange(len(start)), n)
    offset = np.arange(len(row)) - np.repeat(np.cumsum(n) - n, n)  # the entry's place in its row
    coef = table.data[np.repeat(start, n) + 1 + offset]
    var = table.data[np.repeat(start + n, n) + 2 + offset]
    return row, coef, var, table.data[start + 2 + 2 * n], n


def _rows_of(model: Model):
    """(row of each entry, coefficient, variable, rhs per row, sense per row) for each table of
    linear rows of the model, all rows of a table at once."""
    T = model.tables
    for key, sense in (("int_lin_le", LE), ("int_lin_eq", EQ), ("bool_lin_le", LE)):
        table = T.get(key)
        if table is not None and len(table):
            row, coef, var, last, _ = lin_rows(table)
            yield row, coef, var, last, np.full(len(table), sense, dtype=np.int8)
    table = T.get("bool_lin_eq")  # sum(a * b) = y, y a variable: sum(a * b) - y = 0
    if table is not None and len(table):
        row, coef, var, last, _ = lin_rows(table)
        k = len(table)
        yield (
            np.concatenate([row, np.arange(k)]),
            np.concatenate([coef, np.full(k, -1)]),
            np.concatenate([var, last]),
            np.zeros(k, dtype=np.int64),
            np.full(k, EQ, dtype=np.int8),
        )
    for key, (a, b, rhs, sense) in PAIRS.items():
        table = T.get(key)
        if table is None or not len(table):
            continue
        pairs = table.data.reshape(-1, 2)  # two var fields a row
        k = len(pairs)
        yield (
            np.repeat(np.arange(k), 2),
            np.tile(np.array([a, b], dtype=np.int64), k),
            pairs.reshape(-1),
            np.full(k, rhs, dtype=np.int64),
            np.full(k, sense, dtype=np.int8),
        )


def _entries(model: Model) -> int:
    """How many entries the linear rows have (read from the tables' sizes alone)."""
    total = 0
    for key in ("int_lin_le", "int_lin_eq", "bool_lin_le", "bool_lin_eq"):
        table = model.tables.get(key)
        if table is not None:
            total += (len(table.data) - 3 * len(table)) // 2
    return total + sum(len(model.tables[k].data) for k in PAIRS if k in model.tables)


def linear_system(model: Model) -> LinearSystem | None:
    """The model's linear rows over int/bool variables, or None where there are none or too
    many (MAX_ENTRIES) or their sums may not fit in int64. Whole tables at a time (numpy)."""
    if _entries(model) > MAX_ENTRIES:
        return None
    V = model.vars
    rows, cols, vals, rhs, sense = [], [], [], [], []
    first = 0
    for row, coef, var, last, kinds in _rows_of(model):
        # a row over float or set variables is left out whole
        bad = np.zeros(len(last), dtype=bool)
        np.logical_or.at(bad, row, (V.kind[var] != VarKind.INT) & (V.kind[var] != VarKind.BOOL))
        keep_row = ~bad
        renumber = np.cumsum(keep_row) - 1 + first
        keep = keep_row[row]
        rows.append(renumber[row[keep]])
        cols.append(var[keep].astype(np.int64))
        vals.append(coef[keep].astype(np.int64))
        rhs.append(last[keep_row].astype(np.int64))
        sense.append(kinds[keep_row])
        first += int(keep_row.sum())
    if not first:
        return None
    val = np.concatenate(vals)
    row_all = np.concatenate(rows)
    lb = np.maximum(V.lb, -INT_LIMIT - 1).astype(np.int64)  # the device's range bounds every int
    ub = np.minimum(V.ub, INT_LIMIT + 1).astype(np.int64)
    longest = int(np.bincount(row_all).max(initial=1))
    if int(np.abs(val).max(initial=0)) * (INT_LIMIT + 1) * longest >= SAFE:  # Python ints: no wrap
        return None
    return LinearSystem(row_all, np.concatenate(cols), val, np.concatenate(rhs), np.concatenate(sense), lb, ub)


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
    fits &= system.sense == LE
    free = fits[row] & (lb < ub)
    room = system.rhs.copy()  # the items fixed at 1 take room
    np.subtract.at(room, row[fits[row] & (lb == 1)], val[fits[row] & (lb == 1)])
    # the free items of each row by weight, lightest first: k = how many prefix sums fit
    ks = np.nonzero(free)[0]
    ks = ks[np.lexsort((val[ks], row[ks]))]
    r_of = row[ks]
    total = np.cumsum(val[ks])
    first_of = np.searchsorted(r_of, r_of)  # each entry's row's first place in ks
    before = np.where(first_of > 0, total[first_of - 1], 0)
    inside = (total - before) <= room[r_of]  # the prefix up to this item fits
    k = np.bincount(r_of, weights=inside, minlength=system.n_rows).astype(np.int64)
    length = np.bincount(r_of, minlength=system.n_rows)
    cut = (length > 1) & (k < length)
    new_rows: list[int] = k[cut].tolist()
    chosen = ks[cut[r_of]]  # grouped by row, in row order
    ends = np.cumsum(length[cut])[:-1]
    new_cols: list[np.ndarray] = np.split(col[chosen], ends) if cut.any() else []
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
