"""The assignment problem with its dual: the Hungarian method (Kuhn-Munkres, the shortest
augmenting path form of Jonker and Volgenant), its inner loop over columns in numpy.

The potentials are what the relaxations use: for an n x n integer cost matrix, integers u, v
with cost[i, j] - u[i] - v[j] >= 0 everywhere and sum(u) + sum(v) the least cost of an
assignment (LP duality, exact in integers since every step adds a difference of costs)."""

from __future__ import annotations

import numpy as np


def solve_assignment(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(u, v, col_of_row): potentials and an optimal assignment of the square int64 `cost`.
    The costs must leave room for their sums in 64 bits (callers bound them)."""
    n = cost.shape[0]
    if cost.shape != (n, n):
        raise ValueError("the assignment problem needs a square cost matrix")
    big = np.iinfo(np.int64).max // 4
    u = np.zeros(n + 1, dtype=np.int64)  # index 0: the virtual row/column of the method
    v = np.zeros(n + 1, dtype=np.int64)
    row_of = np.zeros(n + 1, dtype=np.int64)  # row_of[j]: the row (1-based) column j serves, 0 if free
    way = np.zeros(n + 1, dtype=np.int64)
    padded = np.zeros((n + 1, n + 1), dtype=np.int64)
    padded[1:, 1:] = cost
    for i in range(1, n + 1):
        row_of[0] = i
        j0 = 0
        minv = np.full(n + 1, big, dtype=np.int64)
        used = np.zeros(n + 1, dtype=bool)
        while True:
            used[j0] = True
            i0 = row_of[j0]
            free = ~used
            free[0] = False
            cur = padded[i0] - u[i0] - v
            better = free & (cur < minv)
            minv[better] = cur[better]
            way[better] = j0
            candidates = np.where(free, minv, big)
            j1 = int(np.argmin(candidates))
            delta = candidates[j1]
            u[row_of[used]] += delta
            v[used] -= delta
            minv[free] -= delta
            j0 = j1
            if row_of[j0] == 0:
                break
        while j0:  # augment along the path found
            j1 = way[j0]
            row_of[j0] = row_of[j1]
            j0 = j1
    col_of_row = np.zeros(n, dtype=np.int64)
    col_of_row[row_of[1:] - 1] = np.arange(n)
    return u[1:], v[1:], col_of_row
