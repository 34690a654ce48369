"""Bucket elimination over a cost-function network, in the plan's order: each variable's bucket
holds the tables that name it and no variable eliminated before it; they are joined (their
costs added, saturating at INF) over the bucket's scope and the variable is minimised out,
giving a table over its neighbours that goes to the bucket of the first of them to go. The last
tables have no variable left: their sum is the optimum. The assignment is then recovered
backwards: each variable takes the value that minimises its bucket's tables given the values of
the variables eliminated after it (those its bucket names), which are already chosen.

The join-and-minimise step (`eliminate_one`) runs on the host with numpy here, or on an OpenCL
device (device.py, kernels/bucket.cl); both give the same table."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .network import INF, CostNetwork, Factor
from .plan import Plan


@dataclass
class Result:
    cost: int  # the minimum of the network's sum (INF: no solution), offset included
    assignment: dict[int, int]  # every variable of the network (and the fixed ones) -> its value
    seconds: float  # the elimination's time
    feasible: bool


def _aligned(f: Factor, scope: tuple[int, ...]) -> np.ndarray:
    """f's table with an axis for every variable of `scope` (length 1 where f lacks it), in
    scope's order, for broadcasting."""
    axes = [f.scope.index(v) for v in scope if v in f.scope]
    table = np.transpose(f.table, axes) if f.scope else f.table
    shape = [table.shape[axes.index(f.scope.index(v))] if v in f.scope else 1 for v in scope]
    return table.reshape(shape)


class Stopped(Exception):
    """stop() said to stop in the middle of a bucket."""


CHUNK = 1 << 22  # entries joined between two looks at stop()


def join_min(
    factors: list[Factor],
    var: int,
    scope: tuple[int, ...],
    domains: dict[int, np.ndarray],
    inf: int = int(INF),
    stop: Callable[[], bool] | None = None,
) -> Factor:
    """The tables of one bucket added up over `scope` (var first), then var minimised out: a
    table over scope[1:]. numpy, in place, in the tables' dtype; sums saturate at `inf` once a
    table holding it is in. A big bucket is joined a slice of its second variable at a time
    (about CHUNK entries each), looking at stop() between slices (Stopped), so that an engine
    beside it that proved the answer does not wait seconds for one bucket."""
    dims = tuple(len(domains[v]) for v in scope)
    aligned = [_aligned(f, scope) for f in factors]
    saturating = [bool((f.table >= inf).any()) for f in factors]
    size = int(np.prod(dims, dtype=np.int64))
    if len(scope) < 2 or size <= CHUNK:
        return Factor(tuple(scope[1:]), _join_block(aligned, saturating, dims, factors[0].table.dtype, inf))
    step = max(1, CHUNK // max(1, size // dims[1]))
    out = np.empty(dims[1:], dtype=factors[0].table.dtype)
    for lo in range(0, dims[1], step):
        if stop is not None and stop():
            raise Stopped
        hi = min(dims[1], lo + step)
        part = [a[:, lo:hi] if a.shape[1] > 1 else a for a in aligned]
        out[lo:hi] = _join_block(part, saturating, (dims[0], hi - lo) + dims[2:], factors[0].table.dtype, inf)
    return Factor(tuple(scope[1:]), out)


def _join_block(
    aligned: list[np.ndarray], saturating: list[bool], dims: tuple[int, ...], dtype, inf: int
) -> np.ndarray:
    total = np.zeros(dims, dtype=dtype)
    clamp = False  # once a table with INF is in, every sum after it is clamped
    for a, sat in zip(aligned, saturating):
        np.add(total, a, out=total)
        clamp = clamp or sat
        if clamp:
            np.minimum(total, inf, out=total)
    return total.min(axis=0)


Joiner = Callable[..., Factor]

INF32 = 2**29  # int32 tables' INF: two of them still fit int32
BOUND32 = 2**28  # int32 where every finite sum stays under this


def _narrowed(net: CostNetwork) -> tuple[list[Factor], int]:
    """The network's tables in int32 where all finite costs together stay under BOUND32 (half
    the memory and time), else int64; and the INF of that type."""
    bound = sum(int(f.table[f.table < INF].max()) if (f.table < INF).any() else 0 for f in net.factors)
    if bound >= BOUND32:
        return list(net.factors), int(INF)
    return [Factor(f.scope, np.where(f.table >= INF, INF32, f.table).astype(np.int32)) for f in net.factors], INF32


def eliminate(
    net: CostNetwork, plan: Plan, join: Joiner | None = None, stop: Callable[[], bool] | None = None
) -> Result | None:
    """Run the plan; `join` does one bucket (numpy by default). None where stop() said to stop
    between two buckets."""
    join = join or join_min
    t0 = time.perf_counter()
    pos = {v: i for i, v in enumerate(plan.order)}
    buckets: list[list[Factor]] = [[] for _ in plan.order]
    factors, inf = _narrowed(net)
    constant = 0
    for f in factors:
        if not f.scope:
            constant = min(constant + int(f.table), inf)
            continue
        buckets[min(pos[v] for v in f.scope)].append(f)
    kept: list[list[Factor]] = []
    for i, var in enumerate(plan.order):
        if stop is not None and stop():
            return None
        bucket = buckets[i]
        kept.append(bucket)
        if not bucket:
            continue
        scope = _bucket_scope(var, bucket, pos)
        try:
            out = join(bucket, var, scope, net.domains, inf, stop=stop)
        except Stopped:
            return None
        if not out.scope:
            constant = min(constant + int(out.table), inf)
        else:
            buckets[min(pos[v] for v in out.scope)].append(out)
    feasible = constant < inf
    assignment = dict(net.fixed)
    if feasible:
        for i in range(len(plan.order) - 1, -1, -1):
            var = plan.order[i]
            assignment[var] = _best_value(var, kept[i], net.domains, assignment, inf)
    cost = constant + net.offset if feasible else int(INF)
    return Result(cost, assignment, time.perf_counter() - t0, feasible)


def _bucket_scope(var: int, bucket: list[Factor], pos: dict[int, int]) -> tuple[int, ...]:
    """var, then the other variables its tables name, latest-eliminated last."""
    others = sorted({v for f in bucket for v in f.scope if v != var}, key=lambda v: pos[v])
    return (var, *others)


def _best_value(
    var: int, bucket: list[Factor], domains: dict[int, np.ndarray], assignment: dict[int, int], inf: int
) -> int:
    """The value of var that minimises its bucket's tables, the others' values chosen (the
    first of equals)."""
    values = domains[var]
    total = np.zeros(len(values), dtype=np.int64)
    for f in bucket:
        index: list[slice | int] = []
        for v in f.scope:
            if v == var:
                index.append(slice(None))
            else:
                index.append(int(np.searchsorted(domains[v], assignment[v])))
        total = np.minimum(total + f.table[tuple(index)], inf)
    return int(values[int(np.argmin(total))])


COUNT_BITS = 62  # counts stay exact in int64 while every assignment together stays under 2^62


def count(net: CostNetwork, plan: Plan, stop: Callable[[], bool] | None = None) -> int | None:
    """The number of assignments of the network's variables that every table allows: the
    same buckets with products instead of sums and sums instead of minimums. Exact in int64
    (the caller checks COUNT_BITS); None where stop() said to stop."""
    pos = {v: i for i, v in enumerate(plan.order)}
    buckets: list[list[Factor]] = [[] for _ in plan.order]
    total = 1
    for f in net.factors:
        ones = (f.table < INF).astype(np.int64)
        if not f.scope:
            total *= int(ones)
            continue
        buckets[min(pos[v] for v in f.scope)].append(Factor(f.scope, ones))
    for i, var in enumerate(plan.order):
        if stop is not None and stop():
            return None
        bucket = buckets[i]
        if not bucket:
            total *= len(net.domains[var])  # no table left names it: any of its values
            continue
        scope = _bucket_scope(var, bucket, pos)
        joined = np.ones(tuple(len(net.domains[v]) for v in scope), dtype=np.int64)
        for f in bucket:
            np.multiply(joined, _aligned(f, scope), out=joined)
        out = Factor(tuple(scope[1:]), joined.sum(axis=0))
        if not out.scope:
            total *= int(out.table)
        else:
            buckets[min(pos[v] for v in out.scope)].append(out)
    return total
