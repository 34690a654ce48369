"""The assignment relaxation: a bound on an objective that sums costs chosen by a permutation.

A model such as a travelling salesman's `circuit(succ)` with `length = sum(c)(dist[c, succ[c]])`
flattens to one `array_int_element(succ[c], row_c, y_c)` per term, an `int_lin_eq` defining the
objective over the y_c, and a constraint that makes the succ[c] a permutation (circuit,
subcircuit, or all_different over exactly as many values as variables). Whatever else the model
says, the objective's terms are then an assignment problem's cost: solving that problem (the
Hungarian method) gives integer potentials u, v with rc[c, j] = cost[c, j] - u[c] - v[j] >= 0,
and for EVERY permutation x

    sum_c cost[c, x_c] = sum(u) + sum(v) + sum_c rc[c, x_c]

(each value j is taken exactly once, so the v[j] sum to sum(v) whatever x is). The module adds
that identity to the model: new Aux variables r_c = rc[c, x_c] (array_int_element) and the
objective's row with its assignment terms replaced by the r_c. It is implied by the model, so
no solution is lost, and it holds for any integers u, v, so a wrong dual would weaken it, never
make it wrong. Propagated by the device's own linear and element propagators at every node it
is cost-based filtering (Focacci, Lodi and Milano, CP 1999): the objective's bound is the
assignment bound under the node's domains, and once branch and bound bounds the objective,
every x_c loses the values whose reduced cost would exceed the gap.

The reduced costs also guide the search (`guide`): labelling each r_c to its least value first
takes the arcs of the assignment optimum, the relaxation's solution as a hint, where the
annotation's own order may meet a good tour late."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from ..flatzinc.model import INT_LIMIT, Model, SearchStep, VarKind
from .edit import add_int_vars, add_rows
from .elements import element_terms
from .hungarian import solve_assignment
from .linear import lin_rows

MAX_N = 2000  # the largest permutation the Hungarian method runs on here (O(n^3) at worst)
MAX_VALUE = 1 << 31  # |cost| past which the bound is not attempted (the potentials, at most
# n times the largest cost, stay far inside 64 bits)


@dataclass
class LinearRow:
    """An int_lin_eq row: sum(coefs * xs) = rhs; `index` its row in the table."""

    index: int
    coefs: np.ndarray
    xs: np.ndarray
    rhs: int


@dataclass
class AssignmentBound:
    """What `add_assignment_bound` added: the bound at the root (on the objective's sum of
    assignment terms), the Aux variables (r_c) and their guiding search step."""

    bound: int
    n: int
    reduced: np.ndarray
    guide: SearchStep


def int_lin_eq_rows(model: Model, containing: int):
    """The int_lin_eq rows in which variable `containing` appears, decoded (the table searched
    at once: a big model's rows are not walked one by one)."""
    table = model.tables.get("int_lin_eq")
    if table is None or not len(table):
        return
    row, _, var, _, _ = lin_rows(table)
    for r in np.unique(row[var == containing]).tolist():
        data = table.row(r)
        n = int(data[0])
        yield LinearRow(r, data[1 : 1 + n], data[2 + n : 2 + 2 * n], int(data[2 + 2 * n]))


def objective_row(model: Model) -> tuple[int, LinearRow] | None:
    """(objective variable, the int_lin_eq row that defines it) where the objective is a
    variable with coefficient +-1 in such a row, the defining one first."""
    obj = model.solve.objective
    if model.solve.kind == "satisfy" or not obj or obj[0] != "var":
        return None
    o = cast(int, obj[1])
    table = model.tables.get("int_lin_eq")
    if table is None:
        return None
    fallback = None
    for row in int_lin_eq_rows(model, o):
        hits = np.nonzero(row.xs == o)[0]
        if len(hits) == 1 and abs(int(row.coefs[hits[0]])) == 1:
            if table.defines[row.index] == o:
                return o, row
            fallback = fallback or (o, row)
    return fallback


def _permutations(model: Model) -> list[tuple[str, int, np.ndarray]]:
    """(kind, index offset, variables) for each array that every solution makes a permutation
    of its domains' union (given that the domains hold exactly as many values)."""
    V = model.vars
    out = []
    for key in ("fzn_gpu_circuit", "fzn_gpu_subcircuit", "fzn_all_different_int"):
        table = model.tables.get(key)
        if table is None:
            continue
        for r in range(len(table)):
            row = table.row(r)
            xs = row[2:] if key != "fzn_all_different_int" else row[1:]
            if len(xs) < 2 or np.any(V.kind[xs] != VarKind.INT):
                continue
            out.append((key, int(row[0]) if key != "fzn_all_different_int" else 0, xs.copy()))
    return out


def add_assignment_bound(model: Model) -> AssignmentBound | None:
    """Add the assignment relaxation's identity for the first permutation that carries
    objective terms; None (the model untouched) where none fits."""
    found = objective_row(model)
    if found is None:
        return None
    o, row = found
    elements = element_terms(model, row.xs)
    if not elements:
        return None
    V = model.vars
    for key, offset, xs in _permutations(model):
        n = len(xs)
        if n > MAX_N:
            continue
        position = {int(x): c for c, x in enumerate(xs)}
        if len(position) != n:
            continue
        values = (
            sorted({v for x in xs for v in V.domain(int(x)).values()}) if (V.ub[xs] - V.lb[xs]).max() < 4 * n else []
        )
        if len(values) != n or values[0] < 1:
            continue  # not a permutation of its values (or domains too wide to list, or an
            # index below 1, which the bound's element tables cannot take)
        if key != "fzn_all_different_int" and values != list(range(offset, offset + n)):
            continue
        column = {v: j for j, v in enumerate(values)}
        # the objective's terms a * y with y = array[x_c] for a variable x_c of this permutation
        taken = np.zeros(len(row.xs), dtype=bool)
        allowed = np.zeros((n, n), dtype=bool)
        for c, x in enumerate(xs):
            for v in V.domain(int(x)).values():
                allowed[c, column[v]] = True
        if key == "fzn_gpu_circuit":
            allowed[np.arange(n), [column[offset + c] for c in range(n)]] = False  # no self-loop
        cost = np.zeros((n, n), dtype=object)
        for k, (a, y) in enumerate(zip(row.coefs, row.xs)):
            hit = elements.get(int(y))
            if hit is None or hit[0] not in position or int(y) == o:
                continue
            idx, array = hit
            c = position[idx]
            for v in values:
                if 1 <= v <= len(array):
                    cost[c, column[v]] += int(a) * int(array[v - 1])
                else:  # the element constraint forbids this index
                    allowed[c, column[v]] = False
            taken[k] = True
        if not taken.any():
            continue
        bound = _add(model, o, row, taken, xs, values, allowed, cost)
        if bound is not None:
            return bound
    return None


def _add(model, o, row, taken, xs, values, allowed, cost) -> AssignmentBound | None:
    n = len(xs)
    sign = 1 if int(row.coefs[list(row.xs).index(o)]) * (1 if model.solve.kind == "minimize" else -1) < 0 else -1
    # a_o * obj + sum(a * y) + rest = rhs: minimising obj with a_o = -1 minimises sum(a * y)
    # (sign = 1), otherwise the assignment terms are to be maximised (sign = -1)
    signed = cost * sign
    if not allowed.any(axis=1).all() or not allowed.any(axis=0).all():
        return None
    span = max((abs(int(x)) for x in signed[allowed]), default=0)
    if span > MAX_VALUE:
        return None
    big = (span + 1) * (n + 1)  # dearer than any assignment of allowed arcs
    matrix = np.where(allowed, signed, big).astype(np.int64)
    u, v, col_of_row = solve_assignment(matrix)
    if not allowed[np.arange(n), col_of_row].all():
        return None  # no permutation within the domains: leave it to the model's own propagation
    rc = matrix - u[:, None] - v[None, :]  # >= 0 on every arc
    exact = matrix.astype(object) - u.astype(object)[:, None] - v.astype(object)[None, :]
    if not np.array_equal(exact, rc.astype(object)):
        return None  # an int64 sum wrapped: the identity would not hold
    # back in the objective's own sign: sum_c cost[c, x_c] = sign * (sum(u) + sum(v)) + sum_c r_c
    reduced = sign * rc
    constant = sign * (sum(u.tolist()) + sum(v.tolist()))  # Python ints: no wrap
    lo = np.where(allowed, reduced, np.iinfo(np.int64).max).min(axis=1)
    hi = np.where(allowed, reduced, np.iinfo(np.int64).min).max(axis=1)
    if max(abs(int(lo.min())), abs(int(hi.max())), abs(constant)) > INT_LIMIT // max(n, 1):
        return None
    names = [f"_relax_assignment_{model.vars.names[int(x)]}_{c}" for c, x in enumerate(xs)]
    rs = add_int_vars(model, names, lo, hi, aux=True)
    elements = []
    for c, x in enumerate(xs):
        top = values[-1]
        table = np.full(top, int(hi[c]), dtype=np.int64)  # an index no solution takes: any value
        for j, val in enumerate(values):
            if allowed[c, j]:
                table[val - 1] = reduced[c, j]
        elements.append((int(x), table.tolist(), int(rs[c])))
    add_rows(model, "array_int_element", elements, [int(r) for r in rs], model.solve.line)
    keep = ~taken
    coefs = [int(a) for a in row.coefs[keep]] + [1] * n
    xs_row = [int(x) for x in row.xs[keep]] + [int(r) for r in rs]
    add_rows(model, "int_lin_eq", [(coefs, xs_row, row.rhs - constant)], [-1], model.solve.line)
    better = "indomain_min" if sign == 1 else "indomain_max"
    guide = SearchStep("int", [int(r) for r in rs], "smallest" if sign == 1 else "largest", better)
    return AssignmentBound(constant, n, reduced, guide)
