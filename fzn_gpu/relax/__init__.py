"""Relaxations: bounds on the objective from relaxations of the model, added to it as redundant
constraints before the engines run (docs/RELAXATION.md).

A relaxation's dual solution gives an identity or inequality that every solution satisfies
(a combination of the model's own constraints with integer multipliers), so adding it loses no
solution, whatever the quality of the dual: a poor dual weakens the bound, never makes it
wrong. The devices' own propagators then use it at every node of branch and bound, event-driven
like any constraint: the bound under the node's domains prunes the subtree, and once the
objective is bounded by an incumbent, each variable loses the values whose reduced cost exceeds
the gap (reduced-cost filtering). The reduced costs also order the search (Solve.guide).

Relaxations in this package, each tried where the model has the structure it needs:
  assignment   an objective that sums costs chosen by a permutation (circuit, subcircuit,
               all_different): the Hungarian method's potentials (assignment.py)
  knapsack     an objective over 0/1 variables under one knapsack row: its optimum by dynamic
               programming, its solution as the search's first values (knapsack.py)
  linear       the linear constraints and the objective (big-M rows tightened): a Lagrangian
               cut from the LP's dual by PDHG, in exact integers (linear.py, pdhg.py,
               lagrangian.py)
  choice       linear rows over constants that shared index variables choose (a mode's
               resources in several rows): one Lagrangian surrogate over each index's
               choices, for satisfaction too (choice.py)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from ..flatzinc.model import UNBOUNDED, Model

LP_SECONDS = 0.2  # the LP dual's least budget at the root (pdhg.py keeps its best dual when it runs out)
LP_SHARE = 0.03  # of a time limit, the LP dual's budget where that is more (at most LP_SECONDS_MAX)
LP_SECONDS_MAX = 2.0


def lp_budget(time_limit_ms: int | None) -> float:
    """Seconds the LP's dual may take: PDHG stops sooner where it converges or stalls."""
    if time_limit_ms is None:
        return LP_SECONDS
    return min(LP_SECONDS_MAX, max(LP_SECONDS, LP_SHARE * time_limit_ms / 1000.0))


@dataclass
class Relaxed:
    """What the relaxations added: their names, the objective's bound at the root from them
    (None where it stays open), and the time they took (for `-s`)."""

    added: list[str] = field(default_factory=list)
    bound: int | None = None
    seconds: float = 0.0
    lp_iterations: int = 0
    lp_device: str = ""  # the OpenCL device that ran the LP's iterations ("" : numpy here)
    choice_slack: int | None = None  # the choice surrogate's room at the root (< 0: no solution)

    def stats(self) -> dict[str, object]:
        if not self.added:
            return {}
        out: dict[str, object] = {"relaxation": " ".join(self.added), "relaxationTime": self.seconds}
        if self.bound is not None:
            out["relaxationBound"] = self.bound
        if self.lp_iterations:
            out["lpIterations"] = self.lp_iterations
        if self.lp_device:
            out["lpDevice"] = self.lp_device
        if self.choice_slack is not None:
            out["choiceSlack"] = self.choice_slack
        return out


def strengthen(model: Model, mode: str = "auto", seconds: float = LP_SECONDS, devices=()) -> Relaxed:
    """Add every relaxation that fits the model (none with mode 'off'; only the choice
    relaxation for satisfaction);
    `seconds`: the most the LP's dual may take; `devices`: the run's (a GPU among them runs a
    big LP's iterations: lagrangian.LP_DEVICE_ENTRIES)."""
    from .assignment import add_assignment_bound
    from .choice import add_choice_surrogate
    from .knapsack import add_knapsack_bound
    from .lagrangian import add_lagrangian_cut, prepared_system

    out = Relaxed()
    if mode == "off":
        return out
    start = time.monotonic()
    choice = add_choice_surrogate(model)
    if choice is not None:
        out.added.append("choice")
        out.choice_slack = choice.slack
    if model.solve.kind == "satisfy":
        out.seconds = time.monotonic() - start
        return out
    assignment = add_assignment_bound(model)
    if assignment is not None:
        out.added.append("assignment")
        model.solve.guide.append(assignment.guide)
    objective = model.solve.objective
    prepared = prepared_system(model) if objective and objective[0] == "var" else None
    knapsack = add_knapsack_bound(model, prepared[0]) if prepared is not None else None
    if knapsack is not None:
        out.added.append("knapsack")
        model.solve.guide.extend(knapsack.guide)
    cut = add_lagrangian_cut(model, seconds, devices, prepared) if prepared is not None else None
    if cut is not None:
        out.added.append("linear")
        out.lp_iterations = cut.iterations
        out.lp_device = cut.device
    if out.added:
        each = (root_bound(model), cut.bound if cut else None, knapsack.bound if knapsack else None)
        bounds = [b for b in each if b is not None]
        if bounds:
            out.bound = max(bounds) if model.solve.kind == "minimize" else min(bounds)
    out.seconds = time.monotonic() - start
    return out


def root_bound(model: Model) -> int | None:
    """The best objective value that interval reasoning over the objective's int_lin_eq rows
    allows with the declared bounds: the relaxations' bound at the root, for `-s`."""
    from .assignment import int_lin_eq_rows

    obj = model.solve.objective
    if not obj or obj[0] != "var":
        return None
    o = cast(int, obj[1])
    V = model.vars
    best = None
    minimise = model.solve.kind == "minimize"
    for row in int_lin_eq_rows(model, o):
        hits = np.nonzero(row.xs == o)[0]
        if len(hits) != 1 or abs(int(row.coefs[hits[0]])) != 1:
            continue
        a_o = int(row.coefs[hits[0]])
        others = np.ones(len(row.xs), dtype=bool)
        others[hits[0]] = False
        a, xs = row.coefs[others].astype(object), row.xs[others]
        lb, ub = V.lb[xs].astype(object), V.ub[xs].astype(object)
        if len(xs) and (np.any(lb <= -UNBOUNDED) or np.any(ub >= UNBOUNDED)):
            continue
        lo = sum(min(p, q) for p, q in zip(a * lb, a * ub))  # of sum(a * x) over the others
        hi = sum(max(p, q) for p, q in zip(a * lb, a * ub))
        # a_o * obj = rhs - sum(a * x)
        if a_o == 1:
            bounds = (row.rhs - hi, row.rhs - lo)
        else:
            bounds = (lo - row.rhs, hi - row.rhs)
        side = int(bounds[0] if minimise else bounds[1])
        if best is None or (side > best if minimise else side < best):
            best = side
    return best
