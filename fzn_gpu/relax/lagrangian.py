"""The linear relaxation's bound as one implied linear constraint: a Lagrangian cut.

For rows A x <= b / A x = b (linear.py, big-M rows tightened) and multipliers Y (Y >= 0 on the
`<=` rows), every solution satisfies the surrogate

    sum_i Y_i * (a_i . x) <= sum_i Y_i * b_i,      i.e.  W . x <= beta,  W = A^T Y, beta = b . Y

whatever Y is. With Y the LP dual (pdhg.py) scaled by K and rounded to integers, and the
multiplier of the objective's defining row set so that W's objective coefficient is exactly
-K (minimising; +K maximising), bounds propagation on W . x <= beta gives

    K * obj >= sum_{j != obj} min(W_j * lb_j, W_j * ub_j) - beta

the Lagrangian bound under the node's domains, and once branch and bound caps the objective,
each variable loses the values its reduced cost W_j rules out (reduced-cost fixing) -- on the
device, at every node, by the linear propagator that already runs there. W and beta are
computed in exact integers from the integer Y, so no floating-point error can make the cut
wrong: validity rests only on Y >= 0 for the `<=` rows, which is checked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from ..flatzinc.model import INT_LIMIT, Model
from .edit import add_rows
from .linear import EQ, LE, LinearSystem, add_cardinality_cuts, linear_system, propagate_bounds, tighten_big_m
from .pdhg import solve_dual

LP_DEVICE_ENTRIES = 200_000  # nonzeros from which a GPU runs PDHG's iterations (pdhg_cl.py)


def scales(system: LinearSystem, y: np.ndarray, obj: int) -> list[int]:
    """The multipliers' scales K to try, largest first: the largest that keeps the cut's
    numbers within 32 bits by a float estimate, then smaller ones (rounding makes the estimate
    approximate; each candidate is checked exactly)."""
    w = np.zeros(int(system.col.max()) + 1)
    np.add.at(w, system.col, y[system.row] * system.val)
    size = max(float(np.abs(w).max(initial=0.0)), float(abs(system.rhs @ y)), 1.0)
    top = max(int(0.5 * INT_LIMIT / size), 1)
    out: list[int] = []
    while top >= 1 and len(out) < 12:
        out.append(top)
        top //= 4
    return out


@dataclass
class LagrangianCut:
    coefs: list[int]
    xs: list[int]
    beta: int
    scale: int
    bound: int  # the objective's bound at the root under the bounds propagation implies
    lp_bound: float  # the LP dual's own estimate
    iterations: int
    tightened: int  # big-M coefficients reduced
    device: str  # the OpenCL device that ran PDHG's iterations ("": numpy on the host)


def integer_cut(system: LinearSystem, y: np.ndarray, obj: int, obj_row: int | None, sense: int, scale: int):
    """(W, beta) for multipliers round(scale * y) (>= 0 on `<=` rows); where the objective has a
    defining row (`obj_row`, an equality with obj's coefficient +-1), its multiplier adjusted so
    that W[obj] = -sense * scale exactly. Exact integers; None if the cut's numbers do not fit
    the device's 32 bits or W[obj] does not bound the objective (the wrong sign, or 0)."""
    Y = np.rint(y * scale)
    Y[system.sense == LE] = np.maximum(Y[system.sense == LE], 0.0)
    uses = np.bincount(system.col).max(initial=1)
    if np.abs(Y).max(initial=0) * np.abs(system.val).max(initial=1) * uses >= 2.0**60:
        return None  # the products would not stay exact in int64
    Yi = Y.astype(np.int64)
    if obj_row is not None:
        entries = np.nonzero(system.row == obj_row)[0]
        a_o = int(system.val[entries[system.col[entries] == obj][0]])
        own = int((Yi[system.row] * system.val)[system.col == obj].sum())
        Yi[obj_row] += (-sense * scale - own) * a_o  # a_o is +-1: W[obj] lands on the target
        if abs(float(Yi[obj_row])) * np.abs(system.val).max(initial=1) * uses >= 2.0**60:
            return None
    Wv = np.zeros(int(system.col.max()) + 1, dtype=np.int64)
    np.add.at(Wv, system.col, Yi[system.row] * system.val)
    W = {int(j): int(Wv[j]) for j in np.nonzero(Wv)[0]}
    Y = Yi.tolist()
    if obj_row is not None and system.sense[obj_row] != EQ and Y[obj_row] < 0:
        return None
    beta = sum(yi * int(bi) for yi, bi in zip(Y, system.rhs.tolist()) if yi)
    if sense * W.get(obj, 0) >= 0:
        return None  # bounds nothing on the objective's side
    if max(map(abs, W.values()), default=0) > INT_LIMIT or abs(beta) > INT_LIMIT:
        return None
    return W, beta


def lp_device(system: LinearSystem, devices):
    """The GPU (with fp64) to run a big LP's iterations on, or None: numpy on the host, faster
    below LP_DEVICE_ENTRIES entries, where a launch costs more than an iteration's work."""
    if len(system.val) < LP_DEVICE_ENTRIES:
        return None
    from .pdhg_cl import has_fp64

    return next((d for d in devices if d.is_gpu and has_fp64(d)), None)


def prepared_system(model: Model) -> tuple[LinearSystem, int] | None:
    """The model's linear rows with the bounds propagation implies, big-M rows tightened and
    knapsack rows' cardinality cuts added, and how many coefficients were tightened; None
    where there are none, or no solution (the search says so)."""
    system = linear_system(model)
    if system is None or not propagate_bounds(system):
        return None
    tightened = tighten_big_m(system, model)
    add_cardinality_cuts(system)
    return system, tightened


def add_lagrangian_cut(
    model: Model, seconds: float = 0.25, devices=(), prepared: tuple[LinearSystem, int] | None = None
) -> LagrangianCut | None:
    """Solve the model's linear relaxation's dual for at most `seconds` and add its cut; None
    (the model untouched) where there is no linear objective row or the cut proves nothing
    beyond what the bounds already say. `prepared`: prepared_system's, where made already."""
    objective = model.solve.objective
    if model.solve.kind == "satisfy" or not objective or objective[0] != "var":
        return None
    obj = cast(int, objective[1])
    prepared = prepared or prepared_system(model)
    if prepared is None:
        return None
    system, tightened = prepared
    if not np.any(system.col == obj):
        return None  # no row bounds the objective
    # the row that defines the objective (coefficient +-1, an equality), where there is one
    candidates = np.nonzero((system.col == obj) & (np.abs(system.val) == 1) & (system.sense[system.row] == EQ))[0]
    obj_row = int(system.row[candidates[0]]) if len(candidates) else None
    sense = 1 if model.solve.kind == "minimize" else -1
    c = np.zeros(len(model.vars))
    c[obj] = sense
    device = lp_device(system, devices)
    dual = solve_dual(system, c, seconds, device=device)
    for scale in scales(system, dual.y, obj):
        cut = integer_cut(system, dual.y, obj, obj_row, sense, scale)
        if cut is None:
            continue
        W, beta = cut
        # the root bound the cut gives: W[obj] * obj <= beta - rest_min, with a = |W[obj]|:
        # sense * a * obj >= rest_min - beta, over the bounds propagation implies (those the
        # device's root propagation reaches too)
        lb, ub = system.lb, system.ub
        rest = sum(min(w * int(lb[j]), w * int(ub[j])) for j, w in W.items() if j != obj)
        a = abs(W[obj])
        bound = sense * -(-(rest - beta) // a)  # ceil, in the objective's own sign
        known = int(lb[obj]) if sense == 1 else int(ub[obj])
        if (bound <= known) if sense == 1 else (bound >= known):
            return None  # nothing that bounds propagation does not already say
        xs = list(W)
        add_rows(model, "int_lin_le", [([W[j] for j in xs], xs, beta)], [-1], model.solve.line)
        return LagrangianCut(
            [W[j] for j in xs],
            xs,
            beta,
            scale,
            bound,
            dual.bound,
            dual.iterations,
            tightened,
            device.name if device else "",
        )
    return None
