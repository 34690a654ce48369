"""Merging a step's improving neighbourhoods into one solution.

Every neighbourhood of an LNS step starts from the same incumbent, and under the step's one
bound only its best counts: a GPU step that finds hundreds of improving neighbourhoods moves
the objective no further than a CPU step that finds one. Where two improvements change disjoint sets of
decision variables, both can often be applied at once: a grid's cost functions, two swaps of a
permutation, two far parts of a tour. Often, not always (a capacity both spend, two tour
changes that split the circuit in two), so every merge is checked and scored by the device's
kernel like any candidate assignment (the island's evaluation).

The merge is greedy, best improvement first: `disjoint_chain` orders the improvements so that
each changes none of the variables the ones before it change, and `prefix_merges` builds the
incumbent with the first 1, 2, ... of them applied, one candidate each, evaluated in one
launch. The longest prefix whose every addition improved is kept, the addition that did not
is dropped, and the rest is tried again on top of what was kept (`accepted_prefix`)."""

from __future__ import annotations

import numpy as np

MOST = 64  # improvements a merge considers, the best first


def disjoint_chain(base: np.ndarray, found: np.ndarray, objectives: np.ndarray, most: int = MOST) -> np.ndarray:
    """Indices into `found` (rows of decision values; `objectives` theirs, sense-adjusted,
    lower better): the best row, then greedily each next-best one whose changes against
    `base` touch none of the positions the rows chosen before it change. Identical rows count
    once, rows equal to `base` never; the best `most` distinct rows are looked at."""
    order = np.argsort(objectives, kind="stable")
    useful: list[int] = []
    seen: set[bytes] = set()
    # in objective order, a chunk at a time until `most` are found: a GPU step's rows are every
    # neighbourhood's improvements (tens of thousands), and comparing and deduplicating them
    # all (np.unique over rows) took longer than the step's kernel (docs/bench/measurements.md, the
    # host's part of a GPU island's merges)
    start, size = 0, 2 * most
    while start < len(order) and len(useful) < most:
        chunk = order[start : start + size]
        moved = chunk[(found[chunk] != base[None, :]).any(axis=1)]
        # the first row of each distinct hash in the chunk (rows equal to one before it share
        # its hash), then the rows themselves compared: the loop takes distinct rows only
        _, first = np.unique(_row_hashes(found[moved]), return_index=True)
        for i in moved[np.sort(first)].tolist():
            key = found[i].tobytes()
            if key not in seen:
                seen.add(key)
                useful.append(i)
                if len(useful) == most:
                    break
        start, size = start + size, 2 * size
    if not useful:
        return np.zeros(0, dtype=np.int64)
    changed = found[useful] != base[None, :]
    taken = np.zeros(len(base), dtype=bool)
    chain = []
    for row, i in enumerate(useful):  # at most `most` rows: the step's improvements, not its work-items
        if not (changed[row] & taken).any():
            taken |= changed[row]
            chain.append(i)
    return np.asarray(chain, dtype=np.int64)


def _row_hashes(rows: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row (equal rows, equal hashes): the values times fixed odd
    multipliers, summed with wrap-around."""
    mult = np.asarray(np.random.default_rng(0).integers(1, 2**62, size=rows.shape[1]), dtype=np.int64) | 1
    with np.errstate(over="ignore"):
        return (rows.astype(np.int64) * mult[None, :]).sum(axis=1)


def prefix_merges(start: np.ndarray, base: np.ndarray, found: np.ndarray, chain: np.ndarray) -> np.ndarray:
    """(len(chain), n) assignments: row p is `start` with the changes (against `base`, the
    step's incumbent) of found[chain[0..p]] applied. The chain's changes are disjoint from
    each other and from those `start` holds (disjoint_chain)."""
    n = len(base)
    owner = np.full(n, len(chain), dtype=np.int64)  # which chain entry changes each position
    for p, i in enumerate(chain):  # the chain: at most MOST rows
        owner[found[i] != base] = p
    source = found[chain[np.minimum(owner, len(chain) - 1)], np.arange(n)]
    applied = owner[None, :] <= np.arange(len(chain))[:, None]
    return np.where(applied, source[None, :], start[None, :])


def accepted_prefix(start: int, scores: np.ndarray) -> int:
    """How many of the prefix merges to keep: `scores` are their objectives (lower better,
    infeasible ones at or above INT_MAX), `start` the objective they build on. The count of
    leading entries each better than the one before it (0: the first already failed)."""
    previous = np.concatenate([[start], scores[:-1]]).astype(np.int64)
    worse = np.flatnonzero(scores.astype(np.int64) >= previous)
    return int(worse[0]) if len(worse) else len(scores)
