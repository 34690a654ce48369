"""The independent checker: every FlatZinc builtin, one satisfied and one violated case each.
Cases are (constraint arguments, a satisfying assignment, a violating one) over the variables
declared in DECLS: ints a b c, bools p q r, floats f g h, sets s t u."""

import math

import pytest

from fzn_gpu.flatzinc.check import BUILTINS, Checker
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.flatzinc.registry import KINDS

DECLS = """var int: a; var int: b; var int: c;
var bool: p; var bool: q; var bool: r;
var float: f; var float: g; var float: h;
var set of 0..9: s; var set of 0..9: t; var set of 0..9: u;
"""

# name -> (args, sat, viol): assignments give only the variables they change
CASES = {
    "int_eq": ("a, b", dict(a=2, b=2), dict(a=2, b=3)),
    "int_ne": ("a, b", dict(a=2, b=3), dict(a=2, b=2)),
    "int_le": ("a, b", dict(a=2, b=2), dict(a=3, b=2)),
    "int_lt": ("a, b", dict(a=1, b=2), dict(a=2, b=2)),
    "int_lin_eq": ("[2, -1], [a, b], 3", dict(a=2, b=1), dict(a=2, b=2)),
    "int_lin_ne": ("[2, -1], [a, b], 3", dict(a=2, b=2), dict(a=2, b=1)),
    "int_lin_le": ("[2, -1], [a, b], 3", dict(a=2, b=1), dict(a=3, b=1)),
    "int_plus": ("a, b, c", dict(a=2, b=3, c=5), dict(a=2, b=3, c=6)),
    "int_times": ("a, b, c", dict(a=-2, b=3, c=-6), dict(a=2, b=3, c=5)),
    "int_div": ("a, b, c", dict(a=-7, b=2, c=-3), dict(a=-7, b=2, c=-4)),
    "int_mod": ("a, b, c", dict(a=-7, b=2, c=-1), dict(a=-7, b=2, c=1)),
    "int_min": ("a, b, c", dict(a=4, b=2, c=2), dict(a=4, b=2, c=4)),
    "int_max": ("a, b, c", dict(a=4, b=2, c=4), dict(a=4, b=2, c=2)),
    "int_pow": ("a, b, c", dict(a=2, b=-1, c=0), dict(a=2, b=-1, c=1)),
    "int_abs": ("a, b", dict(a=-3, b=3), dict(a=-3, b=-3)),
    "array_int_element": ("a, [5, 6, 7], b", dict(a=2, b=6), dict(a=4, b=7)),
    "array_var_int_element": ("a, [b, c], c", dict(a=2, c=1), dict(a=1, b=1, c=2)),
    "array_bool_element": ("a, [true, false], p", dict(a=1, p=True), dict(a=2, p=True)),
    "array_var_bool_element": ("a, [p, q], r", dict(a=2, q=True, r=True), dict(a=1, p=False, r=True)),
    "array_int_maximum": ("a, [b, c]", dict(a=5, b=5, c=1), dict(a=4, b=5, c=1)),
    "array_int_minimum": ("a, [b, c]", dict(a=1, b=5, c=1), dict(a=5, b=5, c=1)),
    "set_in": ("a, {1, 3}", dict(a=3), dict(a=2)),
    "fzn_all_different_int": ("[a, b, c]", dict(a=1, b=2, c=3), dict(a=1, b=2, c=1)),
    "fzn_table_int": ("[a, b], [1, 2, 3, 4]", dict(a=3, b=4), dict(a=1, b=4)),
    "fzn_table_bool": ("[p, q], [true, false, false, true]", dict(p=True), dict(p=True, q=True)),
    "fzn_gpu_circuit": ("0, [a, b, c]", dict(a=2, b=0, c=1), dict(a=1, b=0, c=2)),
    "fzn_gpu_subcircuit": ("1, [a, b, c]", dict(a=3, b=2, c=1), dict(a=2, b=1, c=1)),
    "fzn_diffn": ("[a, b], [0, 0], [2, 1], [1, 1]", dict(a=0, b=2), dict(a=0, b=1)),
    "fzn_gpu_inverse": ("[a, b], 0, [c, 0], 1", dict(a=2, b=1, c=1), dict(a=1, b=2, c=1)),
    "fzn_gpu_regular": ("[a, b], 2, 2, [2, 0, 0, 2], 1, {2}", dict(a=1, b=2), dict(a=2, b=1)),
    "fzn_global_cardinality": ("[a, b], [1, 2], [c, 1]", dict(a=1, b=2, c=1), dict(a=1, b=1, c=2)),
    "fzn_global_cardinality_closed": ("[a, b], [1, 2], [c, 1]", dict(a=1, b=2, c=1), dict(a=3, b=2, c=0)),
    "fzn_global_cardinality_low_up": ("[a, b, c], [1], [1], [2]", dict(a=1, b=2, c=3), dict(a=1, b=1, c=1)),
    "fzn_global_cardinality_low_up_closed": ("[a, b], [1, 2], [1, 0], [2, 1]", dict(a=1, b=2), dict(a=1, b=3)),
    "fzn_alldifferent_except": ("[a, b, c], {0}", dict(a=0, b=0, c=1), dict(a=1, b=0, c=1)),
    "fzn_cumulative": ("[a, b], [2, 2], [1, 1], c", dict(a=0, b=1, c=2), dict(a=0, b=1, c=1)),
    "fzn_count_eq": ("[a, b, 1], c, 2", dict(a=1, b=2, c=1), dict(a=1, b=1, c=1)),
    "fzn_among": ("a, [b, c, 5], {1, 3, 4}", dict(a=2, b=1, c=4), dict(a=2, b=1, c=2)),
    "fzn_lex_lesseq_int": ("[a, b], [c, 0]", dict(a=-1, b=0, c=-1), dict(a=0, b=1, c=0)),
    "fzn_lex_less_int": ("[a, b], [c]", dict(a=0, c=1), dict(a=1, c=1)),
    "fzn_lex_lesseq_bool": ("[p, q], [r]", dict(p=False, r=True), dict(p=True, r=True)),
    "fzn_lex_less_bool": ("[p], [q]", dict(q=True), dict(p=True, q=True)),
    "fzn_nvalue": ("a, [b, c, 1]", dict(a=2, b=1, c=2), dict(a=3, b=1, c=1)),
    "fzn_increasing_int": ("[a, b, c]", dict(a=1, b=1, c=2), dict(a=1, b=2, c=1)),
    "fzn_increasing_bool": ("[p, q]", dict(q=True), dict(p=True)),
    "fzn_decreasing_int": ("[a, b, c]", dict(a=2, b=1, c=1), dict(a=1, b=2, c=1)),
    "fzn_decreasing_bool": ("[p, q]", dict(p=True), dict(q=True)),
    "fzn_gpu_bin_packing_load": ("[a, b], 1, [c, 2], [3, 4]", dict(a=3, b=4, c=1), dict(a=0, b=7, c=1)),
    "bool2int": ("p, a", dict(p=True, a=1), dict(p=True, a=0)),
    "bool_eq": ("p, q", dict(p=True, q=True), dict(p=True, q=False)),
    "bool_le": ("p, q", dict(p=False, q=True), dict(p=True, q=False)),
    "bool_lt": ("p, q", dict(p=False, q=True), dict(p=True, q=True)),
    "bool_not": ("p, q", dict(p=True, q=False), dict(p=True, q=True)),
    "bool_ne": ("p, q", dict(p=True, q=False), dict(p=False, q=False)),
    "bool_and": ("p, q, r", dict(p=True, q=True, r=True), dict(p=True, q=False, r=True)),
    "bool_or": ("p, q, r", dict(p=False, q=True, r=True), dict(p=False, q=False, r=True)),
    "bool_xor": ("p, q, r", dict(p=False, q=True, r=True), dict(p=True, q=True, r=True)),
    "array_bool_and": ("[p, q], r", dict(p=True, q=True, r=True), dict(p=True, q=False, r=True)),
    "array_bool_or": ("[p, q], r", dict(p=True, q=False, r=True), dict(p=False, q=False, r=True)),
    "array_bool_xor": ("[p, q, r]", dict(p=True, q=False, r=False), dict(p=True, q=True, r=False)),
    "bool_clause": ("[p], [q]", dict(p=False, q=False), dict(p=False, q=True)),
    "bool_lin_eq": ("[2, 3], [p, q], a", dict(p=True, q=True, a=5), dict(p=True, q=False, a=5)),
    "bool_lin_le": ("[2, 3], [p, q], 3", dict(p=False, q=True), dict(p=True, q=True)),
    "float_eq": ("f, g", dict(f=1.5, g=1.5), dict(f=1.5, g=1.6)),
    "float_ne": ("f, g", dict(f=1.5, g=1.6), dict(f=1.5, g=1.5)),
    "float_le": ("f, g", dict(f=1.4, g=1.5), dict(f=1.6, g=1.5)),
    "float_lt": ("f, g", dict(f=1.4, g=1.5), dict(f=1.6, g=1.5)),
    "float_lin_eq": ("[2.0, 1.0], [f, g], 3.0", dict(f=1.0, g=1.0), dict(f=1.0, g=2.0)),
    "float_lin_ne": ("[2.0, 1.0], [f, g], 3.0", dict(f=1.0, g=2.0), dict(f=1.0, g=1.0)),
    "float_lin_le": ("[2.0, 1.0], [f, g], 3.0", dict(f=1.0, g=0.5), dict(f=1.0, g=2.0)),
    "float_lin_lt": ("[2.0, 1.0], [f, g], 3.0", dict(f=1.0, g=0.5), dict(f=1.0, g=2.0)),
    "float_plus": ("f, g, h", dict(f=1.0, g=2.0, h=3.0), dict(f=1.0, g=2.0, h=4.0)),
    "float_times": ("f, g, h", dict(f=1.5, g=2.0, h=3.0), dict(f=1.0, g=2.0, h=3.0)),
    "float_div": ("f, g, h", dict(f=3.0, g=2.0, h=1.5), dict(f=3.0, g=0.0, h=1.5)),
    "float_min": ("f, g, h", dict(f=1.0, g=2.0, h=1.0), dict(f=1.0, g=2.0, h=2.0)),
    "float_max": ("f, g, h", dict(f=1.0, g=2.0, h=2.0), dict(f=1.0, g=2.0, h=1.0)),
    "float_pow": ("f, g, h", dict(f=2.0, g=0.5, h=math.sqrt(2)), dict(f=2.0, g=2.0, h=5.0)),
    "int2float": ("a, f", dict(a=2, f=2.0), dict(a=2, f=2.5)),
    "float_in": ("f, 0.0, 1.0", dict(f=0.5), dict(f=1.5)),
    "float_dom": ("f, [0.0, 1.0, 2.0, 3.0]", dict(f=2.5), dict(f=1.5)),
    "array_float_element": ("a, [0.5, 1.5], f", dict(a=2, f=1.5), dict(a=1, f=1.5)),
    "array_var_float_element": ("a, [f, g], h", dict(a=2, g=1.0, h=1.0), dict(a=1, f=2.0, h=1.0)),
    "array_float_maximum": ("f, [g, h]", dict(f=2.0, g=2.0, h=1.0), dict(f=1.0, g=2.0, h=1.0)),
    "array_float_minimum": ("f, [g, h]", dict(f=1.0, g=2.0, h=1.0), dict(f=2.0, g=2.0, h=1.0)),
    "set_eq": ("s, t", dict(s={1, 2}, t={1, 2}), dict(s={1}, t={1, 2})),
    "set_ne": ("s, t", dict(s={1}, t={1, 2}), dict(s={1, 2}, t={1, 2})),
    "set_le": ("s, t", dict(s={1, 2}, t={1, 3}), dict(s={1, 3}, t={1, 2})),
    "set_lt": ("s, t", dict(s={1, 2}, t={1, 3}), dict(s={1, 2}, t={1, 2})),
    "set_subset": ("s, t", dict(s={1}, t={1, 2}), dict(s={3}, t={1, 2})),
    "set_superset": ("s, t", dict(s={1, 2}, t={1}), dict(s={1}, t={1, 2})),
    "set_union": ("s, t, u", dict(s={1}, t={2}, u={1, 2}), dict(s={1}, t={2}, u={1})),
    "set_intersect": ("s, t, u", dict(s={1, 2}, t={2}, u={2}), dict(s={1}, t={2}, u={1})),
    "set_diff": ("s, t, u", dict(s={1, 2}, t={2}, u={1}), dict(s={1, 2}, t={2}, u={2})),
    "set_symdiff": ("s, t, u", dict(s={1, 2}, t={2, 3}, u={1, 3}), dict(s={1}, t={1}, u={1})),
    "set_card": ("s, a", dict(s={1, 5}, a=2), dict(s={1}, a=2)),
    "array_set_element": ("a, [{1}, {2, 3}], s", dict(a=2, s={2, 3}), dict(a=1, s={2})),
    "array_var_set_element": ("a, [s, t], u", dict(a=2, t={4}, u={4}), dict(a=1, s={1}, u={4})),
}
UNARY_FLOAT = {
    "abs": (-2.0, 2.0),
    "sqrt": (4.0, 2.0),
    "exp": (0.0, 1.0),
    "ln": (1.0, 0.0),
    "log10": (100.0, 2.0),
    "log2": (8.0, 3.0),
    "sin": (0.0, 0.0),
    "cos": (0.0, 1.0),
    "tan": (0.0, 0.0),
    "asin": (0.0, 0.0),
    "acos": (1.0, 0.0),
    "atan": (0.0, 0.0),
    "sinh": (0.0, 0.0),
    "cosh": (0.0, 1.0),
    "tanh": (0.0, 0.0),
    "asinh": (0.0, 0.0),
    "acosh": (1.0, 0.0),
    "atanh": (0.0, 0.0),
}
for fn, (x, y) in UNARY_FLOAT.items():
    CASES[f"float_{fn}"] = ("f, g", dict(f=x, g=y), dict(f=x, g=y + 0.5))

BASE = dict(a=0, b=0, c=0, p=False, q=False, r=False, f=0.0, g=0.0, h=0.0, s=set(), t=set(), u=set())
RELATIONS = {
    "int_eq",
    "int_ne",
    "int_le",
    "int_lt",
    "int_lin_eq",
    "int_lin_ne",
    "int_lin_le",
    "set_in",
    "bool_eq",
    "bool_le",
    "bool_lt",
    "float_eq",
    "float_ne",
    "float_le",
    "float_lt",
    "float_lin_eq",
    "float_lin_ne",
    "float_lin_le",
    "float_lin_lt",
    "float_in",
    "set_eq",
    "set_ne",
    "set_le",
    "set_lt",
    "set_subset",
    "set_superset",
}


def verdict(name, args, values):
    text = DECLS + f"constraint {name}({args});\nsolve satisfy;\n"
    return Checker(parse_items(text, "c.fzn")).check({**BASE, **values})


def _all_cases():
    for name, (args, sat, viol) in CASES.items():
        yield name, args, sat, viol
        if name in RELATIONS:
            # reified: r <-> c;  half-reified: r -> c
            yield name + "_reif", args + ", r", {**sat, "r": True}, {**sat, "r": False}
            yield name + "_reif", args + ", r", {**viol, "r": False}, {**viol, "r": True}
            yield name + "_imp", args + ", r", {**viol, "r": False}, {**viol, "r": True}
    yield "bool_clause_reif", "[p], [q], r", dict(p=True, r=True), dict(p=False, q=True, r=True)
    yield "bool_clause_imp", "[p], [q], r", dict(p=False, q=True, r=False), dict(p=False, q=True, r=True)
    yield "bool_ne_reif", "p, q, r", dict(p=True, q=False, r=True), dict(p=True, q=True, r=True)
    yield "bool_and_imp", "p, q, r", dict(p=False, r=False), dict(p=False, r=True)
    yield "bool_or_imp", "p, q, r", dict(p=True, r=True), dict(p=False, q=False, r=True)
    yield "bool_xor_imp", "p, q, r", dict(p=True, r=True), dict(p=True, q=True, r=True)
    yield "bool_xor", "p, q", dict(p=True), dict(p=True, q=True)
    yield "array_bool_and_imp", "[p, q], r", dict(r=False), dict(p=True, r=True)
    yield "array_bool_or_imp", "[p, q], r", dict(p=True, r=True), dict(r=True)


@pytest.mark.parametrize(
    "name, args, sat, viol", list(_all_cases()), ids=lambda v: v if isinstance(v, str) and "(" not in v else None
)
def test_builtin_satisfied_and_violated(name, args, sat, viol):
    assert verdict(name, args, sat) == [], f"{name} rejects a solution"
    bad = verdict(name, args, viol)
    assert len(bad) == 1 and name in bad[0].what and bad[0].line == 5


def test_float_relations_hold_within_the_tolerance_both_ways():
    """A printed float is a box's shortest decimal: at a boundary, a relation and its negation
    both pass; beyond the tolerance, or the search's coarser precision, one fails."""
    assert verdict("float_lt", "f, g", dict(f=1.5, g=1.5)) == []
    assert verdict("float_le_reif", "f, g, r", dict(f=1.5, g=1.5, r=False)) == []
    assert verdict("float_lt", "f, g", dict(f=1.5 + 1e-3, g=1.5)) != []
    text = (
        DECLS
        + "constraint float_lt(f, g);\nsolve :: float_search([f, g], 0.01, input_order, indomain_split) satisfy;\n"
    )
    coarse = Checker(parse_items(text, "c.fzn"))
    assert coarse.check({**BASE, "f": 1.5 + 1e-3, "g": 1.5}) == []
    assert coarse.check({**BASE, "f": 1.6, "g": 1.5}) != []


def test_every_registered_builtin_has_a_case():
    covered = {c[0] for c in _all_cases()}
    assert {k.name for k in KINDS} <= covered
    assert {k.name for k in KINDS} <= set(BUILTINS)


def test_domains_and_definitions_are_checked():
    text = "var 1..3: x;\nvar {2,4}: y;\nvar int: z = x;\nsolve satisfy;\n"
    checker = Checker(parse_items(text, "d.fzn"))
    assert checker.check(dict(x=2, y=4)) == []
    assert "outside its domain" in checker.check(dict(x=4, y=4))[0].what
    assert "outside its domain" in checker.check(dict(x=2, y=3))[0].what
    assert "declared" in checker.check(dict(x=2, y=4, z=3))[0].what
