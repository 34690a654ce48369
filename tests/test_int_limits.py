"""Integers at the edge of what the solver represents. The device holds 32-bit values (|v| <=
2^31 - 2, as in Gecode) and the host's tables 64-bit ones, with 2^62 standing for "no bound" on
a variable declared without a domain. Every bound a model declares past 2^31 - 2 is refused
with a clear message, whatever its shape (a domain, a constant, a linear constant, a bound that
an alias brings): nothing is narrowed to 32 bits without a word. `var 1..2^62: x; solve
maximize x;` once printed x = 2147483646 as optimal, its bound read as "no bound"."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fzn_gpu.engine.pack import pack
from fzn_gpu.errors import FznError
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.model import INT_LIMIT, UNBOUNDED
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions

from helpers import ROOT, solve_text

EDGES = [2**31 - 1, 2**31, 2**62 - 1, 2**62, 2**62 + 1, 2**63 - 1, 2**63, 2**64]

# each shape puts B (a placeholder for the edge, either sign) where a bound comes from
SHAPES = {
    "domain": "var 1..B: x :: output_var;\n",
    "negative domain": "var -B..-1: x :: output_var;\n",
    "holes": "var {1, 3, B}: x :: output_var;\n",
    "constant": "var int: x :: output_var;\nconstraint int_le(1, x);\nconstraint int_le(x, B);\n",
    "linear constant": "var int: x :: output_var;\nconstraint int_le(1, x);\nconstraint int_lin_le([1], [x], B);\n",
    "alias": "var int: y;\nvar 1..B: x :: output_var = y;\n",
    "array element": "var int: y;\narray [1..1] of var 1..B: a :: output_array([1..1]) = [y];\n"
    "var 1..5: x :: output_var;\nconstraint int_le(x, y);\n",
}
SOLVES = ["solve satisfy;\n", "solve maximize x;\n", "solve minimize x;\n"]


def model_text(shape: str, bound: int, solve: str) -> str:
    return SHAPES[shape].replace("B", str(bound)) + solve


def lowered_and_packed(text: str):
    model = lower(parse_items(text, "edge.fzn"), "edge.fzn")
    return pack(model, SolveOptions())


@pytest.mark.parametrize("solve", SOLVES)
@pytest.mark.parametrize("bound", EDGES)
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_bound_past_the_device_limit_is_refused_with_its_line(shape, bound, solve):
    if shape == "linear constant" and bound == INT_LIMIT + 1:
        pytest.skip("a row's constant may be 2^31 - 1 (the kernels' sums are wider); x <= it bounds nothing")
    with pytest.raises(FznError) as refused:
        lowered_and_packed(model_text(shape, bound, solve))
    err = refused.value
    assert "beyond" in err.message and err.line is not None and err.fix, str(err)


@pytest.mark.parametrize("solve", SOLVES)
@pytest.mark.parametrize("shape", ["domain", "negative domain", "holes", "constant", "linear constant"])
def test_the_last_representable_bound_is_solved_exactly(shape, solve):
    """At 2^31 - 2 the model runs, and an optimum is the bound itself, not a value near it."""
    text = model_text(shape, INT_LIMIT, solve)
    found, outcome = solve_text(text, time_limit_ms=60000)  # every solution checked by solve_text
    assert found and outcome.error is None, outcome
    x = found[-1]["x"]
    if shape == "negative domain":
        best = {"maximize": -1, "minimize": -INT_LIMIT}
    elif shape == "holes":
        best = {"maximize": INT_LIMIT, "minimize": 1}
    else:
        best = {"maximize": INT_LIMIT, "minimize": 1}
    for sense, value in best.items():
        if sense in solve:
            assert outcome.complete and x == value, (x, value)


def test_no_bound_is_the_sentinel_and_never_a_declared_value():
    """A variable declared without a domain is the only one at ±UNBOUNDED (lowered); pack
    narrows it to the device's range, as Gecode does with its own limits."""
    model = lower(parse_items("var int: x :: output_var;\nsolve maximize x;\n", "free.fzn"), "free.fzn")
    assert model.vars.lb[0] == -UNBOUNDED and model.vars.ub[0] == UNBOUNDED
    found, outcome = solve_text("var int: x :: output_var;\nsolve maximize x;\n")
    assert found[-1]["x"] == INT_LIMIT


@pytest.mark.parametrize("shape", ["domain", "linear constant"])
def test_the_command_line_prints_no_solution_for_2_to_the_62(tmp_path, shape):
    path = tmp_path / "edge.fzn"
    path.write_text(model_text(shape, 2**62, "solve maximize x;\n"))
    r = subprocess.run(
        [sys.executable, "-m", "fzn_gpu", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert r.returncode != 0 and "----------" not in r.stdout and "==========" not in r.stdout, r.stdout
    assert "edge.fzn:" in r.stderr and "beyond" in r.stderr and "Traceback" not in r.stderr, r.stderr
