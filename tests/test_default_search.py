"""The search a model gets where its annotations leave variables out (engine/pack.search_plan):
decision variables with a bitmap domain labelled by value, the wide ones (bounds only) by
halves. A wide variable labelled by value from its lower bound took a node a value."""

from __future__ import annotations

import numpy as np

from fzn_gpu.engine.pack import BITMAP_MAX_SPAN, search_plan
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions
from fzn_gpu.runtime.codegen import val_select_code, var_select_code

from helpers import solve_text

# a fuzzer's model (tools/fuzz.py, seed 30883): x0's -10^9..10^9 has to be 3 or 4, which
# only x4's element ties it to; labelled by value it met no solution in 6 s
WIDE = """var -1000000000..1000000000: x0 :: output_var;
var bool: x1 :: output_var;
var -5..-3: x2 :: output_var;
var int: x3 :: output_var :: is_defined_var;
var {0,1,2,3,4,5}: x4 :: output_var;
constraint array_var_int_element(x4, [2147483645, x2, x0, x0], x3) :: defines_var(x3);
constraint int_lin_le_reif([588808640, 688, -2, 4], [x3, x4, 2, x2], -4, x1);
constraint int_abs(x4, x3);
constraint array_bool_or([x1, x1], false);
solve SOLVE;
"""


def plan_of(text: str) -> list[tuple[list[str], int, int]]:
    model = lower(parse_items(text, "t.fzn"), "t.fzn")
    ptr, var, sel, _, _ = search_plan(model, SolveOptions())
    names = model.vars.names
    return [
        ([names[v] for v in var[ptr[g] : ptr[g + 1]]], int(sel[2 * g]), int(sel[2 * g + 1]))
        for g in range(len(ptr) - 1)
    ]


def test_wide_decision_variables_are_split_and_narrow_ones_labelled_by_value():
    plan = plan_of(WIDE.replace("SOLVE", "satisfy"))
    first_fail = var_select_code("first_fail")
    assert (["x1", "x2", "x4"], first_fail, val_select_code("indomain_min")) in plan
    assert (["x0"], first_fail, val_select_code("indomain_split")) in plan
    groups = [g[0] for g in plan]
    assert groups.index(["x1", "x2", "x4"]) < groups.index(["x0"])  # the narrow ones first
    span = np.int64(BITMAP_MAX_SPAN)
    assert plan_of(f"var 0..{span - 1}: a :: output_var;\nsolve satisfy;\n")[0][2] == val_select_code("indomain_min")
    assert plan_of(f"var 0..{span}: a :: output_var;\nsolve satisfy;\n")[0][2] == val_select_code("indomain_split")


def test_a_wide_variable_that_few_values_fit_is_found_and_the_search_ends():
    """Every solution (x4 in 3..4 with x0 equal to it, any x2) and the proven optimum, each
    solution checked by solve_text, well within the limit."""
    found, outcome = solve_text(WIDE.replace("SOLVE", "satisfy"), all_solutions=True, time_limit_ms=30000)
    assert outcome.complete and len(found) == 6
    assert {(s["x0"], s["x4"]) for s in found} == {(3, 3), (4, 4)}
    found, outcome = solve_text(WIDE.replace("SOLVE", "maximize x4"), time_limit_ms=30000)
    assert outcome.complete and found[-1]["x4"] == 4


# x in 1..3 by two reified bounds (b <-> x >= 1, b <-> x <= 3), which bound nothing until b is
# decided: labelled by value from its better end, the objective crept through 10^9 failing
# values (a fuzzer's model of this shape: seed 32529)
TIED = """var -1000000000..1000000000: x :: output_var;
var bool: b :: output_var :: is_defined_var;
constraint int_lin_le_reif([-1], [x], -1, b) :: defines_var(b);
constraint int_lin_le_reif([1], [x], 3, b);
solve SOLVE x;
"""


def test_a_wide_objective_is_split_towards_better_values(kernel):
    for sense, halves, best in (("minimize", "indomain_split", 1), ("maximize", "indomain_reverse_split", 3)):
        text = TIED.replace("SOLVE", sense)
        assert (["x"], var_select_code("input_order"), val_select_code(halves)) in plan_of(text)
        found, outcome = solve_text(text, time_limit_ms=30000)
        assert outcome.complete and found[-1]["x"] == best, (sense, outcome)
