"""Related variables for LNS: neighbourhoods grown through the constraint graph.

A neighbourhood of variables drawn at random from a grid, a graph or a schedule seldom holds
two that a constraint ties together, so its search can change none of them without breaking
what the fixed ones around them decide: the step's work is spent where nothing can move. A
neighbourhood grown from one variable through the constraints it shares with others (Shaw's
relatedness; "propagation-guided LNS", Perron, Shaw and Furnon, CP 2004) releases a patch
whose values can change together. Neither shape is best everywhere (a covering model gains
from scattered cells), so an island's bandit chooses each step's (lns_island.Island).

Two decision variables are related when a small constraint names both, or one names the first
and an Aux variable that another small constraint names with the second (an element's index
computed from two cells, then read by the table). Constraints over many variables (the
objective's sum, an all_different of the whole model) relate everything a little and are left
out, as are Aux variables in many constraints."""

from __future__ import annotations

import math

import numpy as np

from ..flatzinc.arrays import unique, unique_first
from ..flatzinc.model import Model
from .pack import table_vars

MAX_PAIRS = 4_000_000  # relations gathered at most (the graph is built once, at LNS's start)
GROW_TRIES = 16  # random relatives of random members drawn at once before the exact frontier


def small_arity(n_fd: int) -> int:
    """The most variables a constraint may name and still relate them: a row or a column of a
    square grid of n_fd cells (2 sqrt(n)), and never fewer than 16."""
    return max(16, int(2 * math.isqrt(max(n_fd, 1))))


def _pairs_by_key(ka: np.ndarray, va: np.ndarray, kb: np.ndarray, vb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (x, y), x of va and y of vb, whose keys are equal (a join of two lists of pairs)."""
    ob = np.argsort(kb, kind="stable")
    kb, vb = kb[ob], vb[ob]
    start = np.searchsorted(kb, ka, "left")
    count = np.searchsorted(kb, ka, "right") - start
    total = int(count.sum())
    if total == 0 or total > MAX_PAIRS:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    within = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
    return np.repeat(va, count), vb[np.repeat(start, count) + within]


class RelatedVariables:
    """The related decision variables of each position of `fd` (CSR: ptr, adj), and the growth
    of neighbourhoods through them."""

    def __init__(self, ptr: np.ndarray, adj: np.ndarray):
        self.ptr = ptr
        self.adj = adj
        self.n = len(ptr) - 1

    @classmethod
    def of(cls, model: Model, fd: np.ndarray) -> RelatedVariables | None:
        """The graph of `fd`'s positions, or None where no two of them are related (nothing to
        grow through: every neighbourhood stays random) or nearly all are (the same)."""
        n = len(fd)
        if n < 3:
            return None
        cap = small_arity(n)
        pos = np.full(len(model.vars), -1, np.int64)
        pos[fd] = np.arange(n)
        cons, vs, base = [], [], 0
        for table in model.tables.values():
            if len(table) and table.kind.domain == "int":
                rows, v = table_vars(table)
                cons.append(rows + base)
                vs.append(v)
            base += len(table)
        if not cons:
            return None
        nv = max(len(model.vars), 1)
        occ = unique(np.concatenate(cons) * nv + np.concatenate(vs))  # (constraint, variable), sorted
        c, v = occ // nv, occ % nv
        arity = np.bincount(c, minlength=base)
        small = arity[c] <= cap
        c, v = c[small], v[small]
        is_fd = pos[v] >= 0
        fc, fp = c[is_fd], pos[v[is_fd]]
        ac, av = c[~is_fd], v[~is_fd]
        keep = np.bincount(av, minlength=len(model.vars))[av] <= cap  # no hub Aux variables
        ac, av = ac[keep], av[keep]
        p1, q1 = _pairs_by_key(fc, fp, fc, fp)  # a small constraint names both
        fa_p, fa_a = _pairs_by_key(fc, fp, ac, av)  # ... or each, an Aux variable between
        p2, q2 = _pairs_by_key(fa_a, fa_p, fa_a, fa_p)
        p, q = np.concatenate([p1, p2]), np.concatenate([q1, q2])
        differ = p != q
        edges = unique(p[differ] * n + q[differ])
        if len(edges) == 0 or len(edges) > 0.5 * n * (n - 1):
            return None
        src = edges // n
        ptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
        return cls(ptr, (edges % n).astype(np.int64))

    def grow(self, rng: np.random.Generator, count: int, k: int) -> np.ndarray:
        """`count` neighbourhoods of k distinct positions, each grown from a random one by
        adding a random relative of a random member (tried GROW_TRIES times, then one drawn
        from all the members' relatives outside it); a neighbourhood whose members have no
        relative left outside (a small component) takes a random position instead."""
        n = self.n
        k = min(k, n)
        rows = np.arange(count)
        out = np.empty((count, k), np.int64)
        out[:, 0] = rng.integers(n, size=count)
        inside = np.zeros((count, n), bool)
        inside[rows, out[:, 0]] = True
        for j in range(1, k):
            pick = np.full(count, -1, np.int64)
            member = out[rows[:, None], rng.integers(j, size=(count, GROW_TRIES))]  # GROW_TRIES draws at once
            degree = self.ptr[member + 1] - self.ptr[member]
            cand = self.adj[
                np.minimum(self.ptr[member] + (rng.random(member.shape) * degree).astype(np.int64), len(self.adj) - 1)
            ]
            fresh = (degree > 0) & ~inside[rows[:, None], cand]
            hit = fresh.any(axis=1)
            pick[hit] = cand[hit, fresh[hit].argmax(axis=1)]
            open_ = pick < 0
            if open_.any():  # every relative of every member, one of those outside
                r = rows[open_]
                members = out[r, :j].reshape(-1)
                degree = self.ptr[members + 1] - self.ptr[members]
                owner = np.repeat(np.repeat(r, j), degree)
                start = np.repeat(self.ptr[members], degree)
                cand = self.adj[start + np.arange(len(start)) - np.repeat(np.cumsum(degree) - degree, degree)]
                fresh = ~inside[owner, cand]
                owner, cand = owner[fresh], cand[fresh]
                order = rng.permutation(len(owner))
                first_rows, first = unique_first(owner[order])
                pick[first_rows] = cand[order][first]
            while (open_ := pick < 0).any():  # none outside: at random, among those not inside
                r = rows[open_]
                cand = rng.integers(n, size=len(r))
                fresh = ~inside[r, cand]
                pick[r[fresh]] = cand[fresh]
            out[:, j] = pick
            inside[rows, pick] = True
        return out
