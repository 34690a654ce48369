"""The typed model that the engines run: a variable table and one constraint table per kind,
both struct-of-arrays in numpy. Nothing here knows FlatZinc text or OpenCL."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from ..search_options import LNS_STRATEGIES, RESTART_KINDS, LnsSpec, RestartSpec  # noqa: F401  (the model's vocabulary)
from .ast import IntSet
from .registry import ConstraintKind

UNBOUNDED = 2**62  # |bound| of an int variable declared without a domain
INT_LIMIT = 2**31 - 2  # |value| of any int variable an engine gives (the device's 32 bits; Gecode's limit too)


class VarKind(IntEnum):
    BOOL = 0
    INT = 1
    FLOAT = 2
    SET = 3


@dataclass
class Variables:
    """One row per variable. For int and bool variables lb/ub are the bounds and `holes` keeps
    the exact value set when the declared domain is not an interval. Set variables keep their
    universe in lb/ub (and `holes`). Float variables keep their bounds in flb/fub."""

    names: list[str]
    kind: np.ndarray  # int8, VarKind
    lb: np.ndarray  # int64
    ub: np.ndarray  # int64
    flb: np.ndarray  # float64
    fub: np.ndarray  # float64
    is_aux: np.ndarray  # bool: is_defined_var and defined by a constraint (GPU-LNS's Aux)
    is_const: np.ndarray  # bool: a constant that appears where a variable may stand
    holes: dict[int, IntSet]
    lines: np.ndarray | None = None  # int32: the line that declared each (a constant: its first use)

    def __len__(self) -> int:
        return len(self.names)

    def domain(self, v: int) -> IntSet:
        return self.holes.get(v) or IntSet.range(int(self.lb[v]), int(self.ub[v]))


@dataclass
class ConstraintTable:
    """All constraints of one kind: row r is data[row_ptr[r]:row_ptr[r+1]], encoded by the
    kind's signature (fzn_gpu.flatzinc.registry); `lines` keeps each one's FlatZinc line."""

    kind: ConstraintKind
    row_ptr: np.ndarray  # int64, n + 1
    data: np.ndarray  # int64
    lines: np.ndarray  # int32
    defines: np.ndarray  # int64: the variable the constraint defines, or -1

    def __len__(self) -> int:
        return len(self.row_ptr) - 1

    def row(self, r: int) -> np.ndarray:
        return self.data[self.row_ptr[r] : self.row_ptr[r + 1]]


@dataclass
class OutputItem:
    """One output_var / output_array: its name, kind, array dims (None for a scalar), and for
    each element either ('var', index) or ('const', value)."""

    name: str
    kind: VarKind
    dims: list[IntSet] | None
    elems: list[tuple[str, object]]


@dataclass
class SearchStep:
    """One int_search / bool_search / set_search / float_search of the solve annotations."""

    kind: str
    vars: list[int]
    var_select: str
    val_select: str
    precision: float | None = None  # float_search's: split a variable until this narrow


@dataclass
class Solve:
    kind: str  # satisfy, minimize, maximize
    objective: tuple[str, object] | None  # ('var', index) or ('const', value)
    search: list[SearchStep] = field(default_factory=list)
    lns: LnsSpec | None = None
    line: int = 0
    restart: RestartSpec | None = None
    # the solver's own steps, searched before the annotations (with -f too): the relaxations'
    # reduced costs as a value hint (fzn_gpu.relax)
    guide: list[SearchStep] = field(default_factory=list)


@dataclass
class Model:
    source: str
    vars: Variables
    tables: dict[str, ConstraintTable]
    outputs: list[OutputItem]
    solve: Solve
    # table key -> the first row the relaxations added to it (fzn_gpu/relax/): rows implied by
    # the others, which an engine that reads the constraints as tables may leave out
    redundant_from: dict[str, int] = field(default_factory=dict)

    def n_constraints(self) -> int:
        return sum(len(t) for t in self.tables.values())

    def domains_used(self) -> set[str]:
        """Which engine families the constraints need (int, float, set)."""
        return {t.kind.domain for t in self.tables.values() if len(t)}
