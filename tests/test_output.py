"""Golden tests of the solution stream: every form MiniZinc's solns2out reads."""

import numpy as np

from fzn_gpu.flatzinc.ast import IntSet
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.model import VarKind
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.output import (
    ERROR,
    SEARCH_COMPLETE,
    SOLUTION_END,
    UNKNOWN,
    UNSATISFIABLE,
    SolutionTemplate,
    format_set,
    format_solution,
    format_stats,
    format_value,
)


def test_status_lines():
    assert SOLUTION_END == "----------"
    assert SEARCH_COMPLETE == "=========="
    assert UNSATISFIABLE == "=====UNSATISFIABLE====="
    assert UNKNOWN == "=====UNKNOWN====="
    assert ERROR == "=====ERROR====="


def test_values():
    assert format_value(VarKind.BOOL, 1) == "true"
    assert format_value(VarKind.BOOL, False) == "false"
    assert format_value(VarKind.INT, -7) == "-7"
    assert format_value(VarKind.FLOAT, 0.5) == "0.5"
    assert format_set(IntSet.of([1, 3])) == "{1,3}"
    assert format_set(IntSet.range(2, 5)) == "2..5"
    assert format_set(IntSet(())) == "{}"
    assert format_set(IntSet.of([4])) == "{4}"


BLOCK = """
var 1..9: x :: output_var;
var bool: b :: output_var;
array [1..2] of var 0..5: y;
array [1..6] of var 0..9: m :: output_array([1..2, 1..3]) = [x, x, 1, 2, 3, x];
array [1..2] of var bool: bs :: output_array([1..2]) = [b, true];
array [1..1] of var 1..9: one :: output_array([1..1]) = [x];
solve satisfy;
"""


def test_solution_block():
    model = lower(parse_items(BLOCK, "t.fzn"), "t.fzn")
    values = {0: 4, 1: 1}
    got = format_solution(
        model, lambda v: values.get(v, 0) if model.vars.kind[v] != VarKind.BOOL else bool(values.get(v, 0))
    )
    assert got == (
        "x = 4;\n"
        "b = true;\n"
        "m = array2d(1..2, 1..3, [4, 4, 1, 2, 3, 4]);\n"
        "bs = array1d(1..2, [true, true]);\n"
        "one = array1d(1..1, [4]);\n"
        "----------\n"
    )


def test_batch_template_prints_what_format_solution_prints():
    """The fast path for many solutions must write exactly the reference text."""
    model = lower(parse_items(BLOCK, "t.fzn"), "t.fzn")
    rng = np.random.default_rng(3)
    rows = rng.integers(0, 2, size=(5, len(model.vars))).astype(np.int32)
    rows[:, 0] = rng.integers(1, 10, size=5)
    expected = "".join(
        format_solution(model, lambda v, r=r: bool(r[v]) if model.vars.kind[v] == VarKind.BOOL else int(r[v]))
        for r in rows
    )
    assert SolutionTemplate(model).format(rows) == expected
    assert SolutionTemplate(model).format(rows[:0]) == ""


def test_statistics_block():
    got = format_stats({"nodes": 12, "solveTime": 0.25, "device": "CPU"})
    assert got == '%%%mzn-stat: nodes=12\n%%%mzn-stat: solveTime=0.25\n%%%mzn-stat: device="CPU"\n%%%mzn-stat-end\n'
