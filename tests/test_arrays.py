"""fzn_gpu.flatzinc.arrays gives what np.unique gives, on random int arrays of every size met."""

from __future__ import annotations

import numpy as np
import pytest

from fzn_gpu.flatzinc.arrays import unique, unique_first, unique_pairs


@pytest.mark.parametrize("seed", range(30))
def test_the_same_as_np_unique(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([0, 1, 2, 17, 1000, 100_000]))
    hi = int(rng.choice([1, 5, 1000, 2**40]))
    a = rng.integers(-hi if seed % 2 else 0, hi, n)
    assert np.array_equal(unique(a), np.unique(a)) and unique(a).dtype == a.dtype
    values, first = unique_first(a)
    want_values, want_first = np.unique(a, return_index=True)
    assert np.array_equal(values, want_values) and np.array_equal(first, want_first)
    b = rng.integers(0, int(rng.choice([1, 7, 10**6])), n)
    a = np.abs(a)
    want = np.unique(np.stack([a, b], axis=1), axis=0) if n else np.zeros((0, 2), np.int64)
    assert np.array_equal(unique_pairs(a, b), want)
