"""Lowering: aliases, constants, arrays, domains with holes, FD vs Aux variables, search and
lns annotations, constraint rows encoded by signature, and errors on bad input."""

import numpy as np
import pytest

from fzn_gpu.errors import FznError, Unsupported
from fzn_gpu.flatzinc.ast import IntSet
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.model import VarKind
from fzn_gpu.flatzinc.parser import parse_items


def low(text):
    return lower(parse_items(text, "m.fzn"), "m.fzn")


def test_aliases_constants_and_arrays():
    m = low("""
int: k = 4;
array [1..2] of int: a = [2, 3];
var 1..9: x;
var 2..5: y :: output_var = x;
var 1..9: z :: output_var = 7;
array [1..3] of var int: xs :: output_array([1..3]) = [x, y, 5];
constraint int_lin_le(a, [x, y], k);
solve satisfy;
""")
    V = m.vars
    x = V.names.index("x")
    assert (V.lb[x], V.ub[x]) == (2, 5)  # the alias narrowed x
    out = {o.name: o for o in m.outputs}
    assert out["y"].elems == [("var", x)]
    assert out["xs"].elems[2] == ("const", 5)
    z = out["z"].elems[0][1]
    assert V.is_const[z] and V.lb[z] == V.ub[z] == 7
    t = m.tables["int_lin_le"]
    assert t.row(0).tolist() == [1, 5, 1, x, 4]  # 2*x + 3*y with y = x: one term, 5*x


def test_holes_aux_and_search():
    m = low("""
var {1,3,5}: x;
var 0..10: y :: is_defined_var;
var 0..10: w;
constraint int_plus(x, w, y) :: defines_var(y);
solve :: int_search([w, x], dom_w_deg, indomain_split, complete) maximize y;
""")
    V = m.vars
    assert V.holes[0].values() == [1, 3, 5]
    assert V.is_aux.tolist() == [False, True, False]
    step = m.solve.search[0]
    assert step.vars == [2, 0] and step.var_select == "dom_w_deg" and step.val_select == "indomain_split"
    assert m.solve.objective == ("var", 1) and m.solve.kind == "maximize"


def test_constants_in_variable_positions_are_fixed_variables():
    m = low("var 1..3: x;\nconstraint int_le(x, 2);\nconstraint int_ne(3, x);\nsolve satisfy;\n")
    row = m.tables["int_le"].row(0)
    c = int(row[1])
    assert m.vars.is_const[c] and m.vars.lb[c] == 2 and m.vars.names[c].startswith("_const_")


def test_lns_annotation():
    m = low("var 1..3: x;\nsolve :: lns(20, 32, 16, 50, random_labeling, 5, 8) minimize x;\n")
    lns = m.solve.lns
    assert (lns.percent, lns.neighbourhoods, lns.starts, lns.steps, lns.strategy, lns.restarts, lns.timeout_s) == (
        20,
        32,
        16,
        50,
        "random_labeling",
        5,
        8.0,
    )


def test_float_and_set_variables_lower():
    m = low(
        "var 0.0..1.0: f;\nvar set of 1..4: s;\nconstraint float_le(f, 0.5);\nconstraint set_card(s, 2);\nsolve satisfy;\n"
    )
    assert m.vars.kind.tolist() == [VarKind.FLOAT, VarKind.SET, VarKind.FLOAT, VarKind.INT]
    assert m.domains_used() == {"float", "set"}


OUT = "var 1..3: x;\narray [1..1] of var int: a :: output_array({}) = [x];\nsolve satisfy;\n"


@pytest.mark.parametrize(
    "text, words, line",
    [
        ("var 1..3: x;\nconstraint no_such_thing(x);\nsolve satisfy;\n", "unknown constraint 'no_such_thing'", 2),
        ("var 1..3: x;\nconstraint int_le(x, y);\nsolve satisfy;\n", "'y' is used before it is declared", 2),
        ("var 1..3: x;\nconstraint int_le(x);\nsolve satisfy;\n", "wrong form", 2),
        ("var 1..3: x;\n", "no solve item", None),
        ("var 1..3: x;\nvar 1..3: x;\nsolve satisfy;\n", "declared twice", 2),
        # malformed input that MiniZinc never writes and Gecode rejects: a clear error, never a
        # traceback nor a silent reading
        (
            "var 1..3: x;\nconstraint int_le(x, 99999999999999999999);\nsolve satisfy;\n",
            "the constant 99999999999999999999 is beyond",
            2,
        ),
        ("var 1..3: x;\nconstraint int_le(x, " + "9" * 5000 + ");\nsolve satisfy;\n", "too long to read", 2),
        (
            "var 1..3: x;\nconstraint int_le(x, " + "[" * 20000 + "1" + "]" * 20000 + ");\nsolve satisfy;\n",
            "nested too deeply",
            2,
        ),
        ("var 1..3: x;\nconstraint int_lin_eq([], [x], 5);\nsolve satisfy;\n", "differ in length", 2),
        ("var 1..3: x;\nconstraint int_lin_le([1, 2], [x], 5);\nsolve satisfy;\n", "differ in length", 2),
        ("array [1..3] of int: a = [1, 2];\nsolve satisfy;\n", "declared with 3 elements but given 2", 1),
        ("array [1..2] of int: a = [1, {2, 3}];\nsolve satisfy;\n", "element 2 of array a (a set)", 1),
        ("array [1..2] of int: a = [1, true];\nsolve satisfy;\n", "element 2 of array a (true)", 1),
        ("var 1..3: x;\narray [1..2] of var int: y = [x, 1.5];\nsolve satisfy;\n", "element 2 of array y (1.5)", 2),
        ("var bool: b;\narray [1..2] of var int: y = [b, 1];\nsolve satisfy;\n", "(a variable) is not of its type", 2),
        ("var 1..3: x = {1, 2};\nsolve satisfy;\n", "variable x is given a set", 1),
        ("var int: x = [1, 2];\nsolve satisfy;\n", "variable x is given an array", 1),
        ("var int: x;\nconstraint int_lin_eq([1, 2]3, [x, x], 1);\nsolve satisfy;\n", "syntax error", 2),
        # output_array's index sets must describe the array: printed otherwise, a billion indices
        # on one element, or `array0d(, [1])`, which MiniZinc cannot read back
        (OUT.format("[1..1000000000]"), "has 1 elements but its output_array's index sets give 1000000000", 2),
        (OUT.format("[1..1, 1..2]"), "has 1 elements but its output_array's index sets give 2", 2),
        (OUT.format("[]"), "needs a list of one to six index sets", 2),
        (OUT.format("b"), "needs a list of one to six index sets", 2),
        (OUT.format("[{1, 3}]"), "an index set that is not a range", 2),
        (OUT.format("[1..1], [1..1]"), "needs a list of one to six index sets", 2),
        (OUT.format("[s]"), "'s' is used before it is declared", 2),
    ],
)
def test_bad_models_say_where_and_why(text, words, line):
    with pytest.raises(FznError) as err:
        low(text)
    assert words in err.value.message and err.value.file == "m.fzn"
    if line:
        assert err.value.line == line


def test_unknown_constraint_is_unsupported():
    with pytest.raises(Unsupported):
        low("var 1..3: x;\nconstraint foo(x);\nsolve satisfy;\n")


def test_lowering_is_linear_and_compact():
    n = 20000
    text = "".join(f"var 0..9: x{i};\n" for i in range(n))
    text += "".join(f"constraint int_lin_le([1, 2], [x{i}, x{i + 1}], 12);\n" for i in range(n - 1))
    text += "solve satisfy;\n"
    m = low(text)
    t = m.tables["int_lin_le"]
    assert len(t) == n - 1 and t.data.dtype == np.int64 and t.data.size == 7 * (n - 1)


def test_bool_constants_are_fixed():
    m = low(
        "var bool: a;\nvar bool: t = true;\nconstraint array_bool_or([a, a], true);\nconstraint bool_eq(a, false);\nsolve satisfy;\n"
    )
    V = m.vars
    for v in range(len(V)):
        if V.is_const[v]:
            assert V.lb[v] == V.ub[v]
    t = V.names.index("t")
    assert V.lb[t] == V.ub[t] == 1


@pytest.mark.parametrize("xs", ["[x, y, x]", "[y, 3, x, 3]"])
def test_all_different_naming_a_variable_or_constant_twice_is_the_empty_clause(xs):
    m = low(f"var 1..3: x;\nvar -2147483646..2147483646: y;\nconstraint fzn_all_different_int({xs});\nsolve satisfy;\n")
    assert "fzn_all_different_int" not in m.tables
    assert m.tables["bool_clause"].row(0).tolist() == [0, 0]  # no positive, no negative literal


def test_all_different_of_distinct_variables_stays():
    m = low("var 1..3: x;\nvar 1..3: y;\nconstraint fzn_all_different_int([x, y, 2]);\nsolve satisfy;\n")
    assert "bool_clause" not in m.tables
    assert m.tables["fzn_all_different_int"].row(0)[0] == 3


def test_output_array_over_a_named_range_or_no_element_is_read():
    m = low(
        "set of int: s = 1..2;\nvar 1..3: x;\narray [1..2] of var int: a :: output_array([s]) = [x, x];\nsolve satisfy;\n"
    )
    assert m.outputs[0].dims == [IntSet.range(1, 2)]
    m = low("array [1..0] of var int: a :: output_array([1..0]) = [];\nsolve satisfy;\n")
    assert m.outputs[0].dims == [IntSet.range(1, 0)] and m.outputs[0].elems == []
