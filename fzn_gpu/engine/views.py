"""Offset views for all_different: an introduced y = x + c folded into the constraint.

MiniZinc flattens `all_different([q[i] + i | i in 1..n])` into an introduced variable per term,
defined by `int_lin_eq([1, -1], [y_i, q_i], i)` (or its mirror image), and an all_different over
the y_i. Gecode posts such a constraint on offset views of q, with no variable for y_i; so does
the device: its all_different row is [n, x_1..x_n, c_1..c_n], the values x_i + c_i all distinct
(kernels/prop_alldifferent.cl). On n-queens that leaves 16 variables and 3 constraints of the 48 and
35 flattened, and a node's propagation runs the three all_different alone.

A y folds when it is an introduced int variable whose only constraints are its definition and
all_different, and that no output, search annotation or objective names. Its defining row goes,
x's root domain narrows to dom(y) - c (what that row enforced), y is fixed at the root (so no
search labels it), and the host writes y = x + c into every solution it reads back
(`fill`), so printing, the checker and LNS see the model's own values."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import cast

import numpy as np

from .. import settings
from ..flatzinc.model import Model, VarKind
from ..runtime.kernel_abi import ALLDIFF_WORDS

ALLDIFF = "fzn_all_different_int"
LIN_EQ = "int_lin_eq"


def wanted() -> bool:
    """FZN_GPU_OFFSET_VIEWS=0 keeps every variable and row as flattened (to measure the fold)."""
    return settings.flag("FZN_GPU_OFFSET_VIEWS", True)


@dataclass
class OffsetViews:
    """y = x + c for the folded variables (arrays of equal length), and the model with their
    defining rows dropped and domains narrowed."""

    y: np.ndarray
    x: np.ndarray
    c: np.ndarray
    model: Model

    def triples(self) -> np.ndarray:
        """(y, x, c) rows, int64: what DeviceModel keeps for `fill`."""
        return np.stack([self.y, self.x, self.c], axis=1).astype(np.int64)


def _occurrences(model: Model, table_vars) -> tuple[np.ndarray, np.ndarray]:
    """How often each variable appears in all_different rows, and in any other row."""
    nv = len(model.vars)
    in_alldiff = np.zeros(nv, dtype=np.int64)
    elsewhere = np.zeros(nv, dtype=np.int64)
    for key, table in model.tables.items():
        if len(table):
            _, vs = table_vars(table)
            np.add.at(in_alldiff if key == ALLDIFF else elsewhere, vs, 1)
    return in_alldiff, elsewhere


def _named(model: Model) -> np.ndarray:
    """Variables an output, a search annotation or the objective names."""
    named = np.zeros(len(model.vars), dtype=bool)
    for item in model.outputs:
        for what, v in item.elems:
            if what == "var":
                named[cast(int, v)] = True
    for step in model.solve.search:
        named[list(step.vars)] = True
    objective = model.solve.objective
    if objective and objective[0] == "var":
        named[cast(int, objective[1])] = True
    return named


def find(model: Model, table_vars) -> OffsetViews | None:
    """The variables that fold into all_different as offset views, or None when none does.
    `table_vars(table) -> (row ids, variable ids)` lists a table's variable occurrences."""
    lin, alldiff = model.tables.get(LIN_EQ), model.tables.get(ALLDIFF)
    if lin is None or alldiff is None or not len(lin) or not len(alldiff):
        return None
    V = model.vars
    start = lin.row_ptr[:-1]
    pairs = np.flatnonzero((np.diff(lin.row_ptr) == 7) & (lin.data[start] == 2))  # [2, a0, a1, 2, v0, v1, c]
    if not len(pairs):
        return None
    s = start[pairs]
    a0, a1, v0, v1, c = (lin.data[s + k] for k in (1, 2, 4, 5, 6))
    d = lin.defines[pairs]
    unit = (a0 == -a1) & (np.abs(a0) == 1) & (v0 != v1) & ((d == v0) | (d == v1))
    y = np.where(d == v0, v0, v1)
    x = np.where(d == v0, v1, v0)
    a_y = np.where(d == v0, a0, a1)
    in_alldiff, elsewhere = _occurrences(model, table_vars)
    named = _named(model)
    int_var = (V.kind == VarKind.INT) & ~V.is_const
    ok = unit & int_var[y] & int_var[x] & V.is_aux[y] & ~named[y] & (in_alldiff[y] > 0) & (elsewhere[y] == 1)
    if not ok.any():
        return None
    rows, y, x = pairs[ok], y[ok], x[ok]
    off = (c[ok] * a_y[ok]).astype(np.int64)  # a_y (y - x) = c with a_y = ±1
    # the narrowed model: x within dom(y) - c, y fixed, the defining rows gone
    lb, ub, holes = V.lb.copy(), V.ub.copy(), dict(V.holes)
    for yi, xi, ci in zip(y.tolist(), x.tolist(), off.tolist()):
        dom = V.domain(xi).intersect(V.domain(yi).shifted(-ci))
        holes.pop(xi, None)
        if dom.is_empty():
            lb[xi], ub[xi] = 1, 0
            continue
        lb[xi], ub[xi] = dom.lo, dom.hi
        if len(dom.ranges) > 1:
            holes[xi] = dom
    folded = set(y.tolist())
    holes = {v: h for v, h in holes.items() if v not in folded}
    lb[y] = ub[y] = np.minimum(lb[y], ub[y])
    keep = np.ones(len(lin), dtype=bool)
    keep[rows] = False
    tables = dict(model.tables)
    tables[LIN_EQ] = _rows(lin, keep)
    variables = dataclasses.replace(V, lb=lb, ub=ub, holes=holes)
    redundant = dict(model.redundant_from)  # the relaxations' first row, counted in kept rows
    if LIN_EQ in redundant:
        redundant[LIN_EQ] = int(keep[: redundant[LIN_EQ]].sum())
    return OffsetViews(
        y=y.astype(np.int64),
        x=x.astype(np.int64),
        c=off,
        model=dataclasses.replace(model, vars=variables, tables=tables, redundant_from=redundant),
    )


def _rows(table, keep: np.ndarray):
    """The table with only the rows `keep` marks."""
    lens = np.diff(table.row_ptr)
    mask = np.repeat(keep, lens)
    new_lens = lens[keep]
    row_ptr = np.concatenate([[0], np.cumsum(new_lens)]).astype(table.row_ptr.dtype)
    return dataclasses.replace(
        table, row_ptr=row_ptr, data=table.data[mask], lines=table.lines[keep], defines=table.defines[keep]
    )


def alldiff_rows(table, views: OffsetViews | None, lb: np.ndarray, ub: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The device's all_different rows, [n, x..., c..., base, words] (c = 0 where nothing
    folded), and their lengths (a model row [n, y...] is 1 + n long, a device row 2n + 3).
    base and words: the root hull of the values x + c (lb, ub: the root domains) as a bitmask of
    `words` words from `base`, which the kernel fills with the fixed values (0 words: a hull
    wider than ALLDIFF_WORDS words, value by value)."""
    lens = np.diff(table.row_ptr).astype(np.int64)
    n = lens - 1
    starts = table.row_ptr[:-1].astype(np.int64)
    # every row's variables in one array, each with its row
    row_of = np.repeat(np.arange(len(table)), n)
    k = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)  # position within its row
    xs = table.data[starts[row_of] + 1 + k].astype(np.int64)
    cs = np.zeros_like(xs)
    if views is not None and len(views.y):
        order = np.argsort(views.y)
        hit = np.searchsorted(views.y[order], xs).clip(max=len(order) - 1)
        folded = views.y[order][hit] == xs
        cs[folded] = views.c[order][hit[folded]]
        xs[folded] = views.x[order][hit[folded]]
    base = np.zeros(len(table), dtype=np.int64)
    top = np.zeros(len(table), dtype=np.int64)
    if len(xs):
        lows, highs = lb[xs].astype(np.int64) + cs, ub[xs].astype(np.int64) + cs
        base = np.full(len(table), np.iinfo(np.int64).max)
        top = np.full(len(table), np.iinfo(np.int64).min)
        np.minimum.at(base, row_of, lows)
        np.maximum.at(top, row_of, highs)
    words = (top - base + 32) // 32
    narrow = (n > 0) & (words <= ALLDIFF_WORDS) & (np.abs(base) <= 2**31 - 1)
    new_lens = 2 * n + 3
    out = np.zeros(int(new_lens.sum()), dtype=np.int64)
    new_starts = np.cumsum(new_lens) - new_lens
    out[new_starts] = n
    out[new_starts[row_of] + 1 + k] = xs
    out[new_starts[row_of] + 1 + n[row_of] + k] = cs
    out[new_starts + 1 + 2 * n] = np.where(narrow, base, 0)
    out[new_starts + 2 + 2 * n] = np.where(narrow, words, 0)
    return out, new_lens


def fill(triples: np.ndarray, values: np.ndarray) -> None:
    """Write y = x + c into solution rows (the variables along the last axis)."""
    if len(triples):
        values[..., triples[:, 0]] = values[..., triples[:, 1]] + triples[:, 2]
