"""A model as a cost-function network: every constraint a table of 0 (allowed) and INF
(forbidden) over the variables it names, and the objective split into tables of costs, whose
sum over a full assignment is the model's objective (sense-adjusted: minimised).

The network is exact or it is not made: every constraint of the model is in it (a kind without
an evaluator, a table too big, float or set variables: `NotDecomposable`, saying why), so the
minimum of the sum is the model's optimum, INF meaning that it has no solution. Two things
keep the tables small:
- the objective, where a linear equation defines it (o = sum a_i x_i + c, as MiniZinc writes
  `var int: total = sum(...)`), becomes one table of costs per term instead of one table over
  all its terms;
- a variable that a constraint defines (defines_var) has its domain cut to the values its
  definition reaches from its inputs' values (a cost looked up in a table, declared 0..1000,
  takes the 25 values the table holds), the definitions taken in the order of their inputs.
Variables fixed to one value are substituted, never part of a scope."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from ..flatzinc.ast import IntSet
from ..flatzinc.model import INT_LIMIT, Model, VarKind
from ..flatzinc.registry import ConstraintKind
from . import evaluate

INF = np.int64(2**60)  # a forbidden assignment's cost; sums saturate there
FACTOR_MAX = 1 << 22  # entries of one constraint's table
DOMAIN_MAX = 1 << 16  # values of a variable that is part of a table


class NotDecomposable(Exception):
    """The model is not one bucket elimination takes; the message says why."""


@dataclass
class Factor:
    scope: tuple[int, ...]  # variables (model indices), one axis of `table` each, in order
    table: np.ndarray  # int64 costs over the scope's domains (network.domains), INF where forbidden


@dataclass
class CostNetwork:
    domains: dict[int, np.ndarray]  # every variable of a scope -> its values (sorted int64)
    factors: list[Factor]
    offset: int = 0  # a constant cost
    fixed: dict[int, int] = field(default_factory=dict)  # variables with one value
    sense: int = 1  # 1 minimise, -1 maximise: the minimum is sense * objective
    objective: int | None = None  # the model's objective variable, if any
    loose: dict[int, int] = field(default_factory=dict)  # constrained variables in no table: their values

    def variables(self) -> list[int]:
        """The variables of the tables, in index order."""
        return sorted({v for f in self.factors for v in f.scope})


@dataclass
class _Row:
    kind: ConstraintKind
    args: list
    line: int
    defines: int


def _values(domain: IntSet) -> np.ndarray:
    """A domain's values, sorted, int64 (ranges made by numpy, not value by value)."""
    parts = [np.arange(lo, hi + 1, dtype=np.int64) for lo, hi in domain.ranges]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


class _Domains:
    """Each variable's values: an array where it has at most DOMAIN_MAX, else its declared set
    (`wide`), until a definition narrows it."""

    def __init__(self, model: Model, named: set[int]) -> None:
        self.values: dict[int, np.ndarray] = {}
        self.wide: dict[int, IntSet] = {}
        self.fixed: dict[int, int] = {}
        device = IntSet.range(-INT_LIMIT, INT_LIMIT)  # every engine's values, a var int's too
        for v in named:
            declared = model.vars.domain(v).intersect(device)
            if sum(hi - lo + 1 for lo, hi in declared.ranges) > DOMAIN_MAX:  # len() of 2^63 overflows
                self.wide[v] = declared
            else:
                self.set(v, _values(declared))

    def set(self, v: int, values: np.ndarray) -> None:
        self.wide.pop(v, None)
        if len(values) == 1:
            self.values.pop(v, None)
            self.fixed[v] = int(values[0])
        else:
            self.values[v] = values

    def restrict(self, v: int, reached: np.ndarray) -> None:
        """v's values, cut to those in `reached` (sorted, unique)."""
        if v in self.wide:
            declared = self.wide[v]
            keep = (
                np.array([x in declared for x in reached.tolist()], dtype=bool) if len(reached) <= DOMAIN_MAX else None
            )
            if keep is None:
                return
            self.set(v, reached[keep])
        elif v in self.values:
            self.set(v, self.values[v][np.isin(self.values[v], reached)])

    def size(self, scope: list[int]) -> int:
        out = 1
        for v in scope:
            out *= len(self.values[v])
        return out

    def grid(self, scope: list[int]):
        """value(v) for evaluate: an axis per variable of `scope`, scalars for fixed ones."""
        k = len(scope)
        axes = {}
        for i, v in enumerate(scope):
            shape = [1] * k
            shape[i] = len(self.values[v])
            axes[v] = self.values[v].reshape(shape)
        return lambda v: axes[v] if v in axes else np.int64(self.fixed[v])


def _rows(model: Model) -> list[_Row]:
    for key, table in model.tables.items():
        if model.redundant_from.get(key, len(table)) and not evaluate.supported(table.kind):
            raise NotDecomposable(
                f"its constraint {table.kind.name} (line {int(table.lines[0])}) has no table form here"
            )
    rows = []
    for key, table in model.tables.items():
        # the relaxations' rows are implied by the others: the optimum is the same without them,
        # and their long rows would only widen the network (fzn_gpu/relax/)
        for r in range(model.redundant_from.get(key, len(table))):
            rows.append(
                _Row(table.kind, evaluate.decode(table.kind, table.row(r)), int(table.lines[r]), int(table.defines[r]))
            )
    return rows


def _allowed(row: _Row, scope: list[int], doms: _Domains) -> np.ndarray:
    """The constraint's truth over the scope's grid (one axis per variable of `scope`)."""
    try:
        ok = evaluate.holds(row.kind, row.args, doms.grid(scope))
    except evaluate.Unsupported as why:
        raise NotDecomposable(f"its constraint {row.kind.name} (line {row.line}): {why}") from None
    return np.broadcast_to(ok, tuple(len(doms.values[v]) for v in scope))


def _objective_terms(model: Model, rows: list[_Row]) -> tuple[int | None, _Row | None]:
    """The objective variable and, where a linear equation defines it with coefficient +-1 and
    no other constraint names it, that equation (its terms become costs)."""
    solve = model.solve
    if solve.kind == "satisfy" or solve.objective is None or solve.objective[0] != "var":
        return None, None
    o = cast(int, solve.objective[1])
    if sum(o in evaluate.variables(row.args) for row in rows) > 1:
        return o, None  # another constraint names it: its definition stays a table
    for row in rows:
        if row.kind.key == "int_lin_eq" and row.defines == o:
            cs, xs, _ = row.args
            if [v for v in xs.indices].count(o) == 1 and sum(c for c, v in zip(cs, xs.indices) if v == o) in (1, -1):
                return o, row
    return o, None


def _definition_order(rows: list[_Row]) -> list[_Row]:
    """The rows that define a variable, each after the definitions of its inputs."""
    defining = {row.defines: row for row in rows if row.defines >= 0}
    done: set[int] = set()
    order: list[_Row] = []

    def visit(v: int, path: set[int]) -> None:
        if v in done or v in path or v not in defining:
            return
        path.add(v)
        for u in evaluate.variables(defining[v].args):
            if u != v:
                visit(u, path)
        path.discard(v)
        done.add(v)
        order.append(defining[v])

    for v in defining:
        visit(v, set())
    return order


def _narrow(row: _Row, doms: _Domains) -> bool:
    """Cut the defined variable's values to those its definition reaches; False where none."""
    y = row.defines
    if y in doms.fixed:
        return True
    inputs = [v for v in dict.fromkeys(evaluate.variables(row.args)) if v != y and v not in doms.fixed]
    if any(v in doms.wide for v in inputs) or doms.size(inputs) > FACTOR_MAX:
        return True
    img = evaluate.image(row.kind, row.args, y, doms.grid(inputs))
    if img is not None:
        values, valid = np.broadcast_arrays(*img)
        doms.restrict(y, np.unique(values[valid]))
    elif y in doms.values and doms.size(inputs) * len(doms.values[y]) <= FACTOR_MAX:
        ok = _allowed(row, inputs + [y], doms)
        doms.set(y, doms.values[y][ok.reshape(-1, len(doms.values[y])).any(axis=0)])
    return y in doms.fixed or y in doms.wide or len(doms.values[y]) > 0


def extract(model: Model, entries_max: int | None = None, stop: Callable[[], bool] | None = None) -> CostNetwork:
    """The model's cost-function network, or NotDecomposable saying why there is none.
    `entries_max`: the most entries its constraints' tables may hold together (the memory at
    hand); `stop()`, asked at every constraint, ends the work early (NotDecomposable: the run
    ended, another engine having answered). Every constraint's scope is checked before any
    table is built, those of the rows that name no defined variable even before the
    definitions narrow the domains (which they cannot change there): otherwise a model's
    thousands of tables were built, gigabytes and seconds of them, before a last constraint
    too big said no (QAP 64: docs/bench/measurements.md, bucket elimination)."""
    V = model.vars
    if {VarKind(int(k)) for k in V.kind} & {VarKind.FLOAT, VarKind.SET}:
        raise NotDecomposable("it has float or set variables")
    rows = _rows(model)
    objective, definition = _objective_terms(model, rows)
    sense = -1 if model.solve.kind == "maximize" else 1
    named = {v for row in rows for v in evaluate.variables(row.args)} | (
        {objective} if objective is not None else set()
    )
    doms = _Domains(model, named)
    defined = {row.defines for row in rows if row.defines >= 0}
    _scopes(model, [row for row in rows if not defined.intersection(evaluate.variables(row.args))], definition, doms)
    for row in _definition_order(rows):
        _stopped(stop)
        if row is not definition and not _narrow(row, doms):
            return _infeasible(doms, sense, objective)
    factors: list[Factor] = []
    kept = 0  # entries of the constraints' tables so far
    for row, scope in _scopes(model, rows, definition, doms):
        _stopped(stop)
        ok = _allowed(row, scope, doms)
        if ok.all():
            continue
        if not ok.any():
            return _infeasible(doms, sense, objective)
        kept += ok.size
        if entries_max is not None and kept > entries_max:
            raise NotDecomposable(
                f"its constraints' tables hold over {entries_max:,} entries (at {row.kind.name}, line "
                f"{row.line}), more than the memory at hand"
            )
        factors.append(Factor(tuple(scope), np.where(ok, np.int64(0), INF)))
    # the objective: sense * o, or sense * the linear terms that define o
    coefs: dict[int, int] = {}
    offset = 0
    if definition is not None:
        cs, xs, c = definition.args
        a_o = sum(k for k, v in zip(cs, xs.indices) if v == objective)
        offset += sense * c * a_o  # a_o * o + sum a_i x_i = c, a_o = +-1
        for k, v in zip(cs, xs.indices):
            if v != objective:
                coefs[v] = coefs.get(v, 0) - sense * k * a_o
    elif objective is not None:
        coefs[objective] = sense
    for v, k in coefs.items():
        if k == 0:
            continue
        if v in doms.fixed:
            offset += k * doms.fixed[v]
            continue
        if v in doms.wide:
            raise NotDecomposable(f"its objective's term {V.names[v]} has over {DOMAIN_MAX:,} values")
        costs = k * doms.values[v]
        base = int(costs.min())  # every table's costs from 0: the sums stay non-negative
        offset += base
        factors.append(Factor((v,), costs - base))
    in_scope = {v for f in factors for v in f.scope}
    loose = {v: len(d) for v, d in doms.values.items() if v not in in_scope and v != objective}
    loose.update({v: -1 for v in doms.wide if v not in in_scope and v != objective})  # too many to count
    return CostNetwork(
        domains={v: d for v, d in doms.values.items() if v in in_scope},
        factors=factors,
        offset=offset,
        fixed=dict(doms.fixed),
        sense=sense,
        objective=objective,
        loose=loose,
    )


def _stopped(stop: Callable[[], bool] | None) -> None:
    if stop is not None and stop():
        raise NotDecomposable("the run ended before its network was made")


def _scopes(model: Model, rows: list[_Row], definition: _Row | None, doms: _Domains) -> list[tuple[_Row, list[int]]]:
    """Each constraint row (but the objective's definition) with its scope, the variables it
    names that are not fixed; NotDecomposable at the first whose table could not be built (a
    variable of too many values, or too many entries)."""
    names = model.vars.names
    out = []
    for row in rows:
        if row is definition:
            continue
        scope = [v for v in dict.fromkeys(evaluate.variables(row.args)) if v not in doms.fixed]
        wide = [names[v] for v in scope if v in doms.wide]
        if wide:
            raise NotDecomposable(
                f"its constraint {row.kind.name} (line {row.line}) names {wide[0]}, of over {DOMAIN_MAX:,} values"
            )
        size = doms.size(scope)
        if size > FACTOR_MAX:
            raise NotDecomposable(
                f"its constraint {row.kind.name} (line {row.line}) spans {len(scope)} "
                f"variables, a table of {size:,} entries"
            )
        out.append((row, scope))
    return out


def _infeasible(doms: _Domains, sense: int, objective: int | None) -> CostNetwork:
    """A network without a solution: one table of INF over no variable."""
    return CostNetwork(
        domains={}, factors=[Factor((), np.array(INF))], fixed=dict(doms.fixed), sense=sense, objective=objective
    )
