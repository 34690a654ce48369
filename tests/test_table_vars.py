"""pack.table_vars, every row of a table at once, lists the variable occurrences that walking
each row by its kind's signature lists (pack._var_positions), in the same order: for every
constraint kind, on random rows (empty arrays, long arrays, sets among the fields)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fzn_gpu.engine.pack import _var_positions, table_vars
from fzn_gpu.flatzinc.model import ConstraintTable
from fzn_gpu.flatzinc.registry import KINDS


def random_row(rng: random.Random, signature: tuple[str, ...]) -> list[int]:
    row: list[int] = []
    for f in signature:
        if f == "var":
            row.append(rng.randrange(1000))
        elif f in ("int", "float"):
            row.append(rng.randint(-9, 9))
        elif f in ("var[]", "int[]", "float[]"):
            n = rng.choice((0, 1, 2, 5, 40))
            row.append(n)
            row.extend(rng.randrange(1000) if f == "var[]" else rng.randint(-9, 9) for _ in range(n))
        elif f == "set":
            k = rng.randint(0, 3)
            row.append(k)
            row.extend(v for _ in range(k) for v in sorted((rng.randint(-5, 5), rng.randint(-5, 5))))
        elif f == "set[]":
            m = rng.randint(0, 3)
            row.append(m)
            for _ in range(m):
                row.extend(random_row(rng, ("set",)))
    return row


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.key)
def test_every_rows_occurrences_in_the_row_by_row_order(kind):
    rng = random.Random(kind.key)
    rows = [random_row(rng, kind.signature) for _ in range(rng.choice((0, 1, 7, 60)))]
    ptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    data = np.array([v for r in rows for v in r], dtype=np.int64)
    table = ConstraintTable(kind, ptr, data, np.zeros(len(rows), np.int32), np.full(len(rows), -1, np.int64))
    want_rows = [r for r in range(len(rows)) for _ in _var_positions(kind, table.row(r))]
    want_vars = [v for r in range(len(rows)) for v in _var_positions(kind, table.row(r))]
    got_rows, got_vars = table_vars(table)
    assert got_rows.dtype == np.int64 and got_vars.dtype == np.int64
    assert got_rows.tolist() == want_rows and got_vars.tolist() == want_vars
