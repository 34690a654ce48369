"""The root split's expansion passes (engine/complete.py, kernels/search*.cl): a pass whose
frontier overflows the room the host gave it is dropped whole (the host widens the frontier
or searches the pass's paths as they are), so the kernel stops it there. The work-group kernel
compacts a path's right branches on one variable, so a pass that kept going walked a
bounds-only domain labelled by value one value at a time to its end: an objective over
-(2^31 - 2)..0 labelled by its best value first met no end in 8 s (a fuzzer's model,
tools/fuzz.py seed 30455)."""

from __future__ import annotations

import pytest

from helpers import solve_stats

MODEL = """var -3..3: x2 :: output_var;
var LO..HI: x3 :: output_var;
constraint int_ne(x2, x3);
solve SOLVE x3;
"""


@pytest.mark.parametrize("sense, lo, hi, best", [("maximize", -2147483646, 0, 0), ("minimize", 0, 2147483646, 0)])
def test_an_objective_over_a_huge_domain_is_proven_by_either_kernel(kernel, sense, lo, hi, best):
    text = MODEL.replace("LO", str(lo)).replace("HI", str(hi)).replace("SOLVE", sense)
    found, outcome, fails = solve_stats(text, devices="cpu", time_limit_ms=60000)
    assert outcome.complete and outcome.error is None, outcome
    assert found and found[-1]["x3"] == best and found[-1]["x2"] != best  # each solution checked by solve_stats
    assert fails < 100_000
