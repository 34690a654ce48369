"""Constraints and variables lowered straight from their text (Lowering.fast_constraint and
fast_var, what `load` does) give the model that parsing each item and lowering it gives,
exactly: the same tables (rows, lines, defined variables), the same variables (constants
created in the same order), and on a faulty item the same error, file, line and column. Checked on MiniZinc-style generated
models, on every edge of the shape the fast reading takes or leaves, on random mutations of
those, and on the benchmark suite's FlatZinc."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from fzn_gpu.bench.frontend import generate_mix
from fzn_gpu.errors import FznError
from fzn_gpu.flatzinc import ast
from fzn_gpu.flatzinc.lower import Lowering, lower
from fzn_gpu.flatzinc.parser import parse_items, parse_items_raw, parse_raw

from test_parser import _bench_fzn


def same(a, b) -> bool:
    """Deep equality of models: dataclasses field by field, numpy arrays element by element."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def outcome(text: str, raw: bool):
    """The model, or the error's type and message (file, line and column included)."""
    try:
        return lower((parse_items_raw if raw else parse_items)(text, "m.fzn"), "m.fzn")
    except FznError as err:
        return (type(err).__name__, str(err))


def assert_same_lowering(text: str) -> None:
    fast, item_by_item = outcome(text, True), outcome(text, False)
    assert same(fast, item_by_item), (text, fast if isinstance(fast, tuple) else "model", item_by_item)


HEAD = """\
predicate fzn_all_different_int(array [int] of var int: x);
array [1..3] of int: c = [2,-1,3];
array [1..1] of int: one = [7];
int: k = 4;
bool: t = true;
set of int: s = 1..3;
var 1..9: x;
var 1..9: y;
var 0..20: z:: output_var;
var bool: b;
var bool: d:: is_defined_var;
array [1..3] of var int: xs = [x,y,z];
array [1..2] of var bool: bs = [b,d];
"""

EDGES = [
    "constraint int_lin_le(c,[x,y,z],10);",
    "constraint int_lin_le([2,-1,3],[x,y,z],10);",
    "constraint int_lin_le(c,xs,10);",
    "constraint int_lin_le([1,1,1],[x,x,y],10);",  # a repeated variable: terms merged
    "constraint int_lin_eq([1,-1,1],[x,x,x],0);",  # merged to one term
    "constraint int_lin_le([1,2],[x,3],10);",  # a constant among the variables
    "constraint int_lin_le([1],[x],k);",
    "constraint int_lin_le(one,[xs[2]],k);",
    "constraint int_le(x,5);",
    "constraint int_le(5,x);",
    "constraint int_le(xs[1],xs[3]);",
    "constraint int_le(x,xs[4]);",  # index out of range
    "constraint int_le(x,c);",  # wrong form
    "constraint int_le(x,w);",  # undeclared
    "constraint int_le(x);",  # too few arguments
    "constraint int_le(x,y,z);",
    "constraint no_such_predicate(x,y);",
    "constraint int_le_reif(x,y,d):: defines_var(d);",
    "constraint int_le_reif(x,y,d) :: defines_var(d) :: domain;",
    "constraint int_le_reif(x,y,d):: domain:: defines_var(d);",
    "constraint int_le_reif(x,y,d):: defines_var(k);",  # a parameter: defines nothing
    "constraint int_le_reif(x,y,d):: defines_var(q);",  # undeclared
    "constraint int_le_reif(x,y,d):: defines_var(true);",
    "constraint int_le_reif(x,y,true);",
    "constraint bool_clause([b,d],[]);",
    "constraint bool_clause([b,true],[false]);",
    "constraint bool_clause(bs,[]);",
    "constraint bool_clause([],[]);",
    "constraint bool_clause([bs],[]);",  # an array inside an array
    "constraint array_bool_or([b,d],t);",
    "constraint fzn_all_different_int([x,y,z]);",
    "constraint fzn_all_different_int([x,y,x]);",  # a repeat: no assignment holds it
    "constraint fzn_all_different_int([x,3,3]);",
    "constraint fzn_all_different_int(xs);",
    "constraint array_int_element(x,c,z);",
    "constraint array_int_element(x,[1,2,3,4,5,6,7,8,9],z);",
    "constraint array_var_int_element(x,[x,y,z,x,y,z,x,y,z],z);",
    "constraint set_in(x,s);",
    "constraint set_in(x,1..5);",
    "constraint set_in(x,{1,3,5});",
    "constraint int_lin_le([1, 1],[x, y],10);",  # white space: read item by item
    "constraint int_lin_le([1,1],[x,y],10) ;",
    "constraint int_le(x,y); constraint int_le(y,z);",
    "constraint int_le(\nx,y);",
    "constraint int_le(x,y); % a comment\n",
    'constraint int_le(x,y) :: mzn_path("a;b");',
    "constraint int_lin_le([1,1],[x,y],99999999999999999999);",  # beyond 64 bits
    "constraint int_lin_le([1,1],[x,y],999999999999999999);",
    "constraint int_lin_le([1,1],[x,y],-0);",
    "constraint int_lin_le([+1,1],[x,y],0);",
    "constraint int_lin_le([1,1],[x,y],1.5);",
    "constraint int_lin_le([1,1],[x,y],10",
    "constraint int_lin_le([1,1],[x,y],10));",
    "constraint int_lin_le([1,1],[x,y]],10);",
    "constraint int_lin_le([1,1][x,y],10);",
    "constraint int_lin_le([1,,1],[x,y],10);",
    "constraint int_lin_le([1,1],[x,y],);",
    "constraint int_lin_le([1,1],[x,y],10)x;",
    "constraint int_lin_le([1,1],[x,var],10);",
    "constraint int_lin_le([1,1],[x,constraint],10);",
    "constraint int_le(x,y):: defines_var(x,y);",
    "constraint int_le(x,y)::;",
    "constraint(x,y);",
    "constraintint_le(x,y);",
    "constraint int_le(x,y)",  # the last item without ';'
]


VAR_EDGES = [
    "var 1..9: v;",
    "var 1..9: v:: output_var;",
    "var 1..9: v :: output_var :: is_defined_var;",
    "var bool: v:: var_is_introduced:: is_defined_var;",
    "var bool: v:: output_var;",
    "var int: v;",
    "var -3..-1: v;",
    "var 5..1: v;",  # empty
    "var 0..0: v;",
    "var -0..007: v;",
    "var 1..999999999999999999: v;",
    "var 1..99999999999999999999: v;",  # beyond 64 bits
    "var 1..4611686018427387904: v;",
    "var 1..9: x;",  # declared twice
    "var {1,3,5}: v;",
    "var 1..9: v = 3;",
    "var 1..9: v = x;",
    "var float: v;",
    "var 0.0..1.0: v;",
    "var set of 1..3: v;",
    "var 1..9: var;",
    "var 1..9: v:: var;",
    "var 1..9: v:: output_array([1..1]);",
    "var 1..9: v:: mzn_path(x);",
    "var 1..9: v::;",
    "var 1..9 v;",
    "var 1 .. 9 : v ;",
    "var bool: true;",
    "var 1..9: v",
]


@pytest.mark.parametrize("item", VAR_EDGES)
def test_every_declaration_edge_lowers_as_its_parsed_item(item):
    assert_same_lowering(f"{HEAD}{item}\nconstraint int_le(x,y);\nsolve minimize z;\n")


@pytest.mark.parametrize("item", EDGES)
def test_every_edge_lowers_as_its_parsed_item(item):
    assert_same_lowering(f"{HEAD}{item}\nconstraint int_le(x,y);\nsolve minimize z;\n")


def test_mutated_items_lower_as_their_parsed_items():
    """Characters deleted, doubled or swapped in the edge items: whatever the fast reading
    takes must be what the parser reads, and what it leaves the parser reports."""
    rng = random.Random(20261129)
    alphabet = "[](),:;xyz0123456789-. \n"
    for _ in range(1500):
        item = rng.choice(EDGES + VAR_EDGES)
        i = rng.randrange(len(item))
        move = rng.randrange(3)
        if move == 0:
            item = item[:i] + item[i + 1 :]
        elif move == 1:
            item = item[:i] + rng.choice(alphabet) + item[i:]
        else:
            item = item[:i] + item[i:][::-1][:1] + item[i + 1 :]
        assert_same_lowering(f"{HEAD}{item}\nconstraint int_le(x,y);\nsolve satisfy;\n")


@pytest.mark.parametrize("seed", range(4))
def test_generated_challenge_like_models_lower_alike(tmp_path, seed):
    path = tmp_path / "m.fzn"
    generate_mix(path, 0.2, seed)
    assert_same_lowering(Path(path).read_text())


def test_the_bench_suites_flatzinc_lowers_alike():
    texts = _bench_fzn()
    if not texts:
        pytest.skip("needs minizinc")
    for text in texts:
        assert_same_lowering(text)


def test_most_of_a_minizinc_style_model_takes_the_fast_reading(tmp_path):
    """Not a speed test: that the generated model's constraints and variables are read from
    their text (a change that sent them all back to the parser would pass every test above)."""
    path = tmp_path / "m.fzn"
    generate_mix(path, 0.2, 1)
    low = Lowering("m.fzn")
    taken: Counter[str] = Counter()
    left = 0
    for item in parse_items_raw(path.read_text(), "m.fzn"):
        if type(item) in (ast.RawConstraint, ast.RawVar):
            low.line = item.line
            fast = low.fast_constraint if type(item) is ast.RawConstraint else low.fast_var
            if fast(item.text):
                taken[type(item).__name__] += 1
                continue
            left += 1
            item = parse_raw(item, "m.fzn")
        low.add(item)
    assert taken["RawConstraint"] > 500 and taken["RawVar"] > 500 and left == 0, (taken, left)
