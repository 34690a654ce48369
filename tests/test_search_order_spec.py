"""MiniZinc's own search-order spec tests (libminizinc tests/spec/unit/search: int_choice_*,
int_var_select_*, test-ff*, test-med1, test-large1, test-small1: those Gecode passes), restated
here: with --deterministic, fzn-gpu prints the solution Gecode's search of the annotated tree
meets first, and for optimisation the last improving solution of its sequential branch and
bound (the spec's expected answer for Gecode; where it lists two, either). Through MiniZinc,
each solution checked by the independent checker (--check)."""

from __future__ import annotations

import subprocess

import pytest

from helpers import have_minizinc

QUEENS = """int: n = 8;
array [1..n] of var 1..n: q;
constraint forall (i in 1..n, j in i+1..n) (q[i] != q[j] /\\ q[i] + i != q[j] + j /\\ q[i] - i != q[j] - j);
solve :: int_search(q, {select}, {choice}, complete) satisfy;
output ["q = \\(q);\\n"];
"""

FF = """var 1..8: x;
var 1..10: y;
var 1..10: z;
var 1..10: w;
constraint x = 1 -> x < 1;
constraint x > 1 -> y < 5;
constraint x > 1 -> z < 5;
constraint x > 1 -> w < 5;
constraint y = 1 -> x > 4;
{more}
solve :: int_search([x,y,z,w], first_fail, indomain_min, complete) satisfy;
output ["x = \\(x);\\ny = \\(y);\\nz = \\(z);\\nw = \\(w);\\n"];
"""

MED = """var 1..10: x;
var 2..10: y;
constraint x != y;
solve :: int_search([x,y], input_order, indomain_median, complete) satisfy;
output ["x = \\(x);\\ny = \\(y);\\n"];
"""

OPT = {
    "test-ff1": """var 1..8: x;
var 1..10: y;
constraint x > 1 -> y > 7;
constraint x = 1 -> y < 3;
constraint x + y <= 11;
solve :: int_search([y,x], first_fail, indomain_min, complete) maximize x + y;
output ["x = \\(x);\\ny = \\(y);\\n"];
""",
    "test-large1": """var 1..10: x;
var 2..10: y;
constraint 7 < y \\/ y > 6;
constraint x + y <= 13;
solve :: int_search([x,y], largest, indomain_split, complete) maximize x + y;
output ["x = \\(x);\\ny = \\(y);\\n"];
""",
    "test-small1": """var 1..10: x;
var 2..10: y;
constraint x = 1 -> y > 10;
constraint x > 1 -> x > 4;
constraint x + y <= 11;
solve :: int_search([x,y], smallest, indomain_min, complete) maximize x + y;
output ["x = \\(x);\\ny = \\(y);\\n"];
""",
}

CASES = {  # spec test -> (model, accepted answers: the lines printed; an optimisation's last)
    "int_choice_1": (QUEENS.format(select="input_order", choice="indomain_min"), ["q = [1, 5, 8, 6, 3, 7, 2, 4];"]),
    "int_choice_2": (QUEENS.format(select="input_order", choice="indomain_max"), ["q = [8, 4, 1, 3, 6, 2, 7, 5];"]),
    "int_choice_6": (QUEENS.format(select="input_order", choice="indomain_split"), ["q = [1, 5, 8, 6, 3, 7, 2, 4];"]),
    "int_var_select_1": (QUEENS.format(select="input_order", choice="indomain"), ["q = [1, 5, 8, 6, 3, 7, 2, 4];"]),
    "int_var_select_2": (QUEENS.format(select="first_fail", choice="indomain"), ["q = [1, 5, 8, 6, 3, 7, 2, 4];"]),
    "int_var_select_4": (
        QUEENS.format(select="smallest", choice="indomain"),
        ["q = [1, 7, 4, 6, 8, 2, 5, 3];", "q = [1, 7, 5, 8, 2, 4, 6, 3];"],
    ),
    "int_var_select_6": (QUEENS.format(select="input_order", choice="indomain"), ["q = [1, 5, 8, 6, 3, 7, 2, 4];"]),
    "test-ff2": (FF.format(more=""), ["x = 5; y = 1;"]),
    "test-ff3": (FF.format(more="constraint x > 2 -> w > 2;"), ["x = 5; y = 1; z = 1; w = 3;"]),
    "test-med1": (MED, ["x = 5; y = 6;"]),
    "test-ff1": (OPT["test-ff1"], ["x = 3; y = 8;"]),
    "test-large1": (OPT["test-large1"], ["x = 5; y = 8;"]),
    "test-small1": (OPT["test-small1"], ["x = 9; y = 2;"]),
}


@pytest.mark.skipif(not have_minizinc(), reason="needs minizinc with the gpu-fzn solver configuration")
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_spec_answer(tmp_path, name):
    text, accepted = CASES[name]
    mzn = tmp_path / f"{name}.mzn"
    mzn.write_text(text)
    done = subprocess.run(
        ["minizinc", "--solver", "gpu-fzn", "--deterministic", "--check", str(mzn)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    last = done.stdout.split("----------")[-2]  # MiniZinc's answer: the last solution printed
    printed = " ".join(line for line in last.splitlines() if " = " in line)
    assert any(printed.startswith(a) for a in accepted), f"{name}: {printed!r}, the spec accepts {accepted}"


@pytest.mark.skipif(not have_minizinc(), reason="needs minizinc with the gpu-fzn solver configuration")
def test_deterministic_optimisation_prints_the_same_improvements_every_run(tmp_path):
    """Branch and bound with --deterministic is one sequential search: every improving solution,
    in the same order, three runs (and -p 1 the same)."""
    mzn = tmp_path / "ff1.mzn"
    mzn.write_text(OPT["test-ff1"])
    outs = set()
    for flag in ("--deterministic", "--deterministic", "-p1"):
        done = subprocess.run(
            ["minizinc", "--solver", "gpu-fzn", flag, "-a", "--check", str(mzn)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        outs.add(done.stdout)
    assert len(outs) == 1
    out = outs.pop()
    assert out.count("----------") >= 2 and out.rstrip().endswith("==========")
