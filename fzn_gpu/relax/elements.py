"""Which variables the model defines as a constant array's entry chosen by an index variable
(`array_int_element(idx, array, y)`): the terms the assignment and choice relaxations read
through their index."""

from __future__ import annotations

import numpy as np

from ..flatzinc.model import Model


def element_terms(model: Model, ys: np.ndarray) -> dict[int, tuple[int, np.ndarray]]:
    """y -> (index variable, constant array) for every array_int_element(idx, array, y) whose
    y is one of `ys` (the table searched at once)."""
    table = model.tables.get("array_int_element")
    out: dict[int, tuple[int, np.ndarray]] = {}
    if table is None or not len(table):
        return out
    start = table.row_ptr[:-1]
    m = table.data[start + 1]
    y = table.data[start + 2 + m]
    for r in np.nonzero(np.isin(y, ys))[0].tolist():
        row = table.row(r)
        k = int(row[1])
        out.setdefault(int(row[2 + k]), (int(row[0]), row[2 : 2 + k]))
    return out
