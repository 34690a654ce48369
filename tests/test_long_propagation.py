"""A propagation longer than a slice: bounds that move by one value a pass on a huge domain
(x < y with y = min([x]), so x < x) take billions of passes to fail. The kernels stop such a
fixpoint when the slice's budget is spent and go on with it in the next slice, as the same node
(kernels/search.cl and search_group.cl, ST_PENDING): a time limit is then honoured by the
search itself, and a fixpoint split across many slices gives the same answers."""

from __future__ import annotations

import io
import time

from fzn_gpu.engine import SolveRun
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions

from helpers import as_tuples, brute_force, solve_text

SLOW_FAIL = (
    "var -2147483646..0: x0 :: output_var;\n"
    "var int: x2 :: output_var :: is_defined_var;\n"
    "constraint array_int_minimum(x2, [x0]) :: defines_var(x2);\n"
    "constraint int_lt(x0, x2);\n"
    "solve satisfy;\n"
)

# b = 1 makes x < y and y <= x contradict, found only after about 2 * 60 passes; b = 0 leaves
# x < y: 1,830 solutions
SPLIT_FIXPOINT = (
    "var 0..1: b :: output_var;\nvar 0..60: x :: output_var;\nvar 0..60: y :: output_var;\n"
    "constraint int_lt(x, y);\nconstraint int_le_imp(y, x, b);\n"
    "solve :: int_search([b, x, y], input_order, indomain_max, complete) satisfy;\n"
)


def test_a_fixpoint_longer_than_the_time_limit_ends_with_it(monkeypatch, kernel_with_clock):
    """In-process, with no watchdog: the search returns at its deadline, incomplete."""
    model = lower(parse_items(SLOW_FAIL, "slow.fzn"), "slow.fzn")
    out = io.StringIO()
    run = SolveRun(model, SolveOptions(all_solutions=True, devices="cpu"), out=out)
    t0 = time.monotonic()
    run.run_until(t0 + 2.0)
    assert time.monotonic() - t0 < 10.0
    assert run.outcome is not None and not run.outcome.complete
    assert "UNSATISFIABLE" not in out.getvalue() and "==========" not in out.getvalue()


def test_a_fixpoint_split_across_slices_gives_every_solution(monkeypatch, kernel_with_clock):
    """Eight units a slice and no floor: the b = 1 branch's failure spans many slices, resumed
    each time."""
    monkeypatch.setenv("FZN_GPU_SLICE_BUDGET", "8")
    monkeypatch.setenv("FZN_GPU_PROPAGATION_FLOOR", "1")
    found, outcome = solve_text(SPLIT_FIXPOINT, all_solutions=True, devices="cpu")
    want = brute_force(SPLIT_FIXPOINT, {"b": [0, 1], "x": list(range(61)), "y": list(range(61))})
    assert outcome.complete and len(want) == 1830
    assert len(found) == len(want) and as_tuples(found, ["b", "x", "y"]) == want
