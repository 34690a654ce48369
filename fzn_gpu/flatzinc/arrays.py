"""Distinct values of big int arrays, by sorting.

numpy 2.3+'s np.unique takes a hash-table path for a 1-D array that is far slower than a sort
on the millions of keys a big model's setup makes, and its return_index path is slow too
(docs/bench/measurements.md, "Front end"). These give what np.unique gives, sorted, for 1-D int
arrays."""

from __future__ import annotations

import numpy as np


def unique(a: np.ndarray) -> np.ndarray:
    """np.unique(a): the sorted distinct values."""
    s = np.sort(np.asarray(a).ravel())
    if len(s) == 0:
        return s
    keep = np.empty(len(s), bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def unique_first(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(a, return_index=True): the sorted distinct values and where each first occurs."""
    a = np.asarray(a).ravel()
    order = np.argsort(a, kind="stable")  # equal values keep their order: the first comes first
    s = a[order]
    if len(s) == 0:
        return s, order.astype(np.intp)
    keep = np.empty(len(s), bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep], order[keep].astype(np.intp)


def unique_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.unique(np.stack([a, b], axis=1), axis=0) for non-negative int arrays: the distinct
    (a, b) pairs, sorted by a then b, as an (n, 2) int64 array."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    if len(a) == 0:
        return np.zeros((0, 2), np.int64)
    width = int(b.max()) + 1
    keys = unique(a * width + b)
    return np.stack([keys // width, keys % width], axis=1)
