"""Adding variables and constraints to a lowered model.

The relaxations add redundant constraints (implied by the model, so no solution is lost) and
the Aux variables they need, after lowering and before packing. New variables go after the
model's own, so every index the outputs and the solve item hold stays valid; new rows are
encoded by their kind's signature (fzn_gpu.flatzinc.registry), as lowering encodes a FlatZinc
constraint."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..flatzinc.model import INT_LIMIT, ConstraintTable, Model, VarKind
from ..flatzinc.registry import BY_KEY


def add_int_vars(model: Model, names: Sequence[str], lb: Sequence[int], ub: Sequence[int], aux: bool) -> np.ndarray:
    """Append int variables with bounds [lb, ub] (each within the device's range); their
    indices. `aux`: each is defined by a constraint the caller adds (GPU-LNS's Aux)."""
    V = model.vars
    k = len(names)
    lo = np.asarray(lb, dtype=np.int64)
    hi = np.asarray(ub, dtype=np.int64)
    if k and (lo.min() < -INT_LIMIT or hi.max() > INT_LIMIT or np.any(lo > hi)):
        raise ValueError("a relaxation variable outside the device's range or with an empty domain")
    first = len(V)
    V.names.extend(names)
    V.kind = np.concatenate([V.kind, np.full(k, int(VarKind.INT), dtype=np.int8)])
    V.lb = np.concatenate([V.lb, lo])
    V.ub = np.concatenate([V.ub, hi])
    V.flb = np.concatenate([V.flb, np.zeros(k)])
    V.fub = np.concatenate([V.fub, np.zeros(k)])
    V.is_aux = np.concatenate([V.is_aux, np.full(k, aux, dtype=bool)])
    V.is_const = np.concatenate([V.is_const, np.zeros(k, dtype=bool)])
    if V.lines is not None:
        V.lines = np.concatenate([V.lines, np.zeros(k, dtype=np.int32)])
    return np.arange(first, first + k, dtype=np.int64)


def encode(key: str, args: Sequence) -> list[int]:
    """One row of kind `key`: `var` fields are variable indices, `int` fields ints, and the
    array fields lists of either."""
    out: list[int] = []
    for field, value in zip(BY_KEY[key].signature, args, strict=True):
        if field in ("var", "int"):
            out.append(int(value))
        elif field in ("var[]", "int[]"):
            out.append(len(value))
            out.extend(int(v) for v in value)
        else:  # pragma: no cover - the relaxations add int constraints only
            raise AssertionError(f"{key}: field {field} is not written by relax.edit")
    return out


def add_rows(model: Model, key: str, rows: Sequence[Sequence], defines: Sequence[int], line: int) -> None:
    """Append constraints of kind `key` (each row's arguments in signature order); `defines`:
    the variable each defines, or -1; `line`: the FlatZinc line they stand for (the solve
    item's, for a bound on the objective)."""
    if not rows:
        return
    encoded = [encode(key, r) for r in rows]
    lengths = np.array([len(e) for e in encoded], dtype=np.int64)
    data = np.fromiter((x for e in encoded for x in e), dtype=np.int64, count=int(lengths.sum()))
    old = model.tables.get(key)
    model.redundant_from.setdefault(key, len(old) if old is not None else 0)
    if old is None:
        old = ConstraintTable(
            BY_KEY[key],
            np.zeros(1, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int32),
            np.zeros(0, dtype=np.int64),
        )
    model.tables[key] = ConstraintTable(
        old.kind,
        np.concatenate([old.row_ptr, old.row_ptr[-1] + np.cumsum(lengths)]),
        np.concatenate([old.data, data]),
        np.concatenate([old.lines, np.full(len(rows), line, dtype=np.int32)]),
        np.concatenate([old.defines, np.asarray(defines, dtype=np.int64)]),
    )
