"""An independent verdict on a local-search solution before it is printed: every constraint of
the lowered model evaluated at the solution's values by bucket/evaluate.py (the FlatZinc
meaning of each kind, as the checker reads it; none of it shares code with the kernel), and
every variable within its declared domain. The walk's own error of 0 is not taken on trust."""

from __future__ import annotations

import numpy as np

from ..bucket import evaluate
from ..flatzinc.model import Model, VarKind


def violations(model: Model, values: np.ndarray, limit: int = 1) -> list[str]:
    """What the assignment breaks (at most `limit` descriptions); [] where it is a solution."""
    out: list[str] = []
    V = model.vars
    at = np.asarray(values[: len(V)], dtype=np.int64)
    # each variable within its bounds (a bool's: 0..1 or fixed), then the holes of those that have them
    outside = (at < V.lb) | (at > V.ub) | ((V.kind == VarKind.BOOL) & (at != 0) & (at != 1))
    in_hole = [v for v, holes in V.holes.items() if holes and not outside[v] and int(at[v]) not in holes]
    for v in sorted([*np.flatnonzero(outside).tolist(), *in_hole])[:limit]:
        out.append(f"the domain of {V.names[v]} (value {int(at[v])})")
    if len(out) >= limit:
        return out
    value = lambda v: np.int64(values[v])  # noqa: E731
    for table in model.tables.values():
        kind = table.kind
        if not evaluate.supported(kind):
            out.append(f"{kind.name}, which the verifier cannot evaluate")
            return out
        for r in range(len(table)):
            args = evaluate.decode(kind, table.row(r))
            if kind.key == "fzn_all_different_int":  # distinct values, counted (not pairwise)
                xs = [int(values[x]) for x in args[0].indices]
                holds = len(set(xs)) == len(xs)
            else:
                holds = bool(evaluate.holds(kind, args, value))
            if not holds:
                out.append(f"{kind.name} (line {int(table.lines[r])})")
                if len(out) >= limit:
                    return out
    return out
