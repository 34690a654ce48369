"""The elimination order and what it costs, known before anything runs: min-fill on the
network's primal graph (two variables adjacent when a table names both), the induced width
(the most neighbours a variable has when it is eliminated) and the entries of each bucket's
table (its variable and those neighbours), so that the engine is chosen only where the
largest table fits the memory it has."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .network import CostNetwork

VARIABLES_MAX = 50_000  # min-fill's bookkeeping is Python sets: beyond this, no plan


@dataclass
class Plan:
    order: list[int]  # variables in the order they are eliminated
    scopes: list[tuple[int, ...]]  # each one's bucket: the variable, then its neighbours then
    width: int  # induced width: the most neighbours at an elimination
    largest: int  # entries of the largest bucket table
    total: int  # entries of all bucket tables together (the work)
    kept: int  # entries of the tables each bucket passes on, all kept
    # for the backward pass

    def describe(self) -> str:
        return f"induced width {self.width}, largest table {self.largest:,} entries"


def _graph(net: CostNetwork) -> dict[int, set[int]]:
    adj: dict[int, set[int]] = {v: set() for v in net.domains}
    for f in net.factors:
        for u in f.scope:
            adj[u].update(w for w in f.scope if w != u)
    return adj


def _fill(adj: dict[int, set[int]], v: int) -> int:
    """Edges eliminating v would add between its neighbours."""
    nb = list(adj[v])
    missing = 0
    for i, a in enumerate(nb):
        row = adj[a]
        for b in nb[i + 1 :]:
            if b not in row:
                missing += 1
    return missing


def _greedy(net: CostNetwork, key) -> Plan:
    """Eliminate, each time, the variable with the least key(u, adj, fill, size)."""
    adj = _graph(net)
    size = {v: len(d) for v, d in net.domains.items()}
    order: list[int] = []
    scopes: list[tuple[int, ...]] = []
    width = largest = total = kept = 0
    fill = {v: _fill(adj, v) for v in adj}
    while adj:
        v = min(adj, key=lambda u: key(u, adj, fill, size))
        nb = sorted(adj[v])
        entries = _entries(v, nb, size)
        order.append(v)
        scopes.append((v, *nb))
        width = max(width, len(nb))
        largest = max(largest, entries)
        total += entries
        kept += entries // size[v]
        touched = set(nb)
        for a in nb:
            adj[a].discard(v)
            for b in nb:
                if b != a and b not in adj[a]:
                    adj[a].add(b)
                    touched.update(adj[a])
        del adj[v]
        del fill[v]
        for u in touched:
            if u in adj:
                fill[u] = _fill(adj, u)
    return Plan(order, scopes, width, largest, total, kept)


# Orders tried (the one with the smallest largest table, then the least work, is kept): greedy
# min-fill and min-degree, and the variables' own order (index, and reversed) after every
# variable whose elimination adds no edge (a cost or a definition hanging off its inputs):
# on a 10x10 grid min-fill and min-degree reach width 13 (tables of 5^14 entries), the model's
# row by row order 10.
HEURISTICS = {
    "min-fill": lambda u, adj, fill, size: (fill[u], len(adj[u]), _entries(u, adj[u], size), u),
    "min-degree": lambda u, adj, fill, size: (len(adj[u]), fill[u], _entries(u, adj[u], size), u),
    "model order": lambda u, adj, fill, size: (fill[u] > 0, u),
    "model order reversed": lambda u, adj, fill, size: (fill[u] > 0, -u),
}


def best_plan(net: CostNetwork) -> Plan | None:
    """The cheapest of the HEURISTICS' orders (each plan is the same every run); None for
    networks too big to plan."""
    if len(net.domains) > VARIABLES_MAX:
        return None
    plans = [_greedy(net, key) for key in HEURISTICS.values()]
    return min(plans, key=lambda p: (p.largest, p.total))


def _entries(v: int, nb, size: dict[int, int]) -> int:
    out = size[v]
    for u in nb:
        out *= size[u]
    return out


def bucket_of(plan: Plan) -> dict[int, int]:
    """Each variable's position in the order."""
    return {v: i for i, v in enumerate(plan.order)}


def table_bytes(entries: int, itemsize: int = np.dtype(np.int64).itemsize) -> int:
    return entries * itemsize
