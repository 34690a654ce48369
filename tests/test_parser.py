"""The FlatZinc grammar: every item form MiniZinc 2.6 emits, and syntax errors located."""

import random
import subprocess

import pytest

from fzn_gpu.errors import FznError
from fzn_gpu.flatzinc import ast
from fzn_gpu.flatzinc.parser import parse_items

FULL = """\
predicate fzn_all_different_int(array [int] of var int: x);
predicate my_pred(var set of int: s, array [int] of var bool: b, float: f);
bool: t = true;
int: n = -3;
float: f = 1.5e-3;
set of int: s = {1,3,5};
set of int: r = 2..4;
array [1..3] of int: c = [1, -2, 0x1F];
array [1..2] of set of int: ss = [{}, 1..2];
var 1..3: x :: output_var;
var bool: b :: output_var;
var {1,3,5}: y;
var int: z :: is_defined_var :: var_is_introduced;
var float: fl;
var 0.5..1.5: g;
var set of 1..5: sv :: output_var;
array [1..2] of var int: xs :: output_array([1..2]) = [x, y];
% a comment; with a semicolon
constraint int_lin_eq([1, -1], [z, x], 0) :: defines_var(z);
constraint set_in(x, 1..2) :: domain;
constraint bool_clause([b], []);
solve :: seq_search([int_search(xs, first_fail, indomain_min, complete),
                     bool_search([b], input_order, indomain_max, complete)]) minimize z;
"""


def test_every_item_form_parses():
    items = list(parse_items(FULL, "full.fzn"))
    kinds = [type(i).__name__ for i in items]
    assert kinds.count("PredicateDecl") == 2
    assert kinds.count("ConstraintItem") == 3
    assert isinstance(items[-1], ast.SolveItem) and items[-1].kind == "minimize"
    decl = {i.name: i for i in items if isinstance(i, ast.Decl)}
    assert decl["c"].value == [1, -2, 31]
    assert decl["s"].value == ast.IntSet.of([1, 3, 5])
    assert decl["r"].value == ast.IntSet.range(2, 4)
    assert decl["ss"].value == [ast.IntSet(()), ast.IntSet.range(1, 2)]
    assert decl["f"].value == pytest.approx(1.5e-3)
    assert decl["y"].type.domain == ast.IntSet.of([1, 3, 5])
    assert decl["g"].type.domain == ast.FloatRange(0.5, 1.5)
    assert decl["sv"].type.base == "set" and decl["sv"].type.domain == ast.IntSet.range(1, 5)
    assert decl["xs"].type.dims == ((1, 2),)
    assert ast.annotation(decl["z"].annotations, "is_defined_var") is not None
    seq = items[-1].annotations[0]
    assert seq.name == "seq_search" and seq.args[0][1].name == "bool_search"
    assert items[-1].line == 22


def test_line_numbers_follow_the_file():
    items = list(parse_items(FULL, "full.fzn"))
    lines = {i.name: i.line for i in items if isinstance(i, ast.Decl)}
    assert lines["x"] == 10 and lines["xs"] == 17


@pytest.mark.parametrize(
    "text, line, col, words",
    [
        ("var 1..3: x;\nconstraint int_le(x 3);\n", 2, 21, "unexpected '3'"),
        ("var 1..3 x;\n", 1, 10, "unexpected 'x'"),
        ("var 1..3: x;\nsolve satisfy\n", 2, None, "no closing ';'"),
        ("var 1..3: x;\nconstraint int_le(x, $);\n", 2, 22, "unexpected character '$'"),
    ],
)
def test_syntax_errors_name_file_line_and_column(text, line, col, words):
    with pytest.raises(FznError) as err:
        list(parse_items(text, "bad.fzn"))
    e = err.value
    assert e.file == "bad.fzn" and e.line == line and words in e.message
    if col is not None:
        assert e.column == col
    assert f"bad.fzn:{line}" in str(e) and e.fix


def _lark_only(text: str, monkeypatch) -> list:
    """The same text through the grammar alone (the int-array fast path switched off)."""
    import fzn_gpu.flatzinc.parser as parser

    monkeypatch.setattr(parser, "_INT_ARRAY", __import__("re").compile(r"(?!)"))
    return list(parse_items(text, "f.fzn"))


ARRAYS = """\
array [1..5] of int: d = [ 0, -89,124 ,\n 34, 7 ];
array [1..2] of int: h = [0x1F, 2];
var 1..5: x;
var 0..200: y;
constraint array_int_element(x, [3, 1, 4, 1, 5], y) :: defines_var(y);
constraint int_lin_le([1, -1], [x, y], 0);
constraint int_lin_eq([2, 3], [x, y], d[2]);
constraint set_in(x, {1, 3});
constraint int_le(x, 5) :: mention("[1,2]");
"""


def test_int_arrays_read_fast_as_the_grammar_reads_them(monkeypatch):
    fast = list(parse_items(ARRAYS, "f.fzn"))
    assert isinstance(fast[0].value, ast.IntList) and fast[0].value == [0, -89, 124, 34, 7]
    assert fast[0].value.packed().tolist() == [0, -89, 124, 34, 7]
    assert fast[4].args[1] == [3, 1, 4, 1, 5] and isinstance(fast[4].args[1], ast.IntList)
    assert fast[1].value == [31, 2]  # hex: the grammar reads it
    assert [i.line for i in fast] == [1] + list(range(3, 11))
    assert fast == _lark_only(ARRAYS, monkeypatch)


def test_a_syntax_error_beside_an_int_array_points_into_the_text_as_written():
    with pytest.raises(FznError) as err:
        list(parse_items("var 1..3: x;\nconstraint int_lin_le([1, 2, 3], [x, x, x] 3);\n", "bad.fzn"))
    assert err.value.line == 2 and err.value.column == 44 and "unexpected '3'" in err.value.message


def test_a_name_like_the_placeholder_stays_a_name():
    items = list(
        parse_items(
            "var 1..3: __fzn_gpu_int_array_0;\n"
            "constraint int_lin_le([1, 2], [__fzn_gpu_int_array_0, __fzn_gpu_int_array_0], 3);\n"
        )
    )
    assert items[1].args[1] == [ast.Ident("__fzn_gpu_int_array_0")] * 2 and items[1].args[0] == [1, 2]


QUICK_EDGES = """\
var bool: b :: output_var;
var int: z ::var_is_introduced :: is_defined_var;
var -5 .. 5 : w;
array [1..2] of var int: xs = [z, w];
constraint bool_clause([b, true], [false]);
constraint int_lin_eq([1, -1], [z, w], 0) :: defines_var(z);
constraint array_var_int_element(w, xs, xs[1]);
constraint int_le(w, -3) :: domain;
constraint int_le(-3 , w);
constraint bool_clause([], []);
constraint my_call(1..3, w);
constraint my_call(1.5, w);
constraint my_call({1, 2}, w) :: mention(x, y);
constraint int_le(var, true);
var 1..3: int;
array [1..3] of var int: ys :: output_array([1..3]) = [z, w, xs[2]];
array [1..2] of var -3..4: zs ::var_is_introduced :: output_array([1 .. 1, -1..0]) = [w, 3];
array [1..2] of var bool: bs :: output_array([1..2]) :: var_is_introduced = [b, true];
array [1..0] of var int: none :: output_array([1..0]) = [];
array [1..2] of var int: ws :: mention(x) = [ z , w ];
array [1..1] of var int: array = [z];
array [1..1] of var int: qs :: output_array([1..1]) = [int];
solve :: int_search(xs, input_order, indomain_min, complete) satisfy;
"""


def _bench_fzn() -> list[str]:
    """FlatZinc of a few of the benchmark suite's models (models/bench), compiled with fzn-gpu's library."""
    from fzn_gpu.bench.__main__ import with_data

    from helpers import ROOT, have_minizinc

    if not have_minizinc():
        return []
    bench = with_data(ROOT / "models" / "bench")
    texts = []
    for model, data in [
        ("qap", "qap_12"),
        ("tsp", "tsp_10"),
        ("mkcp", "mkcp_20"),
        ("coins_grid", "coins_grid_8"),
        ("knapsack", "knapsack_50"),
        ("transportation", "transportation"),
    ]:
        r = subprocess.run(
            [
                "minizinc",
                "-c",
                "--solver",
                "gpu-fzn",
                str(bench / f"{model}.mzn"),
                str(bench / "data" / f"{data}.dzn"),
                "--fzn",
                "/dev/stdout",
                "--ozn",
                "/dev/null",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 0, r.stderr
        texts.append(r.stdout)
    return texts


def _grammar_only(monkeypatch) -> None:
    """Every item read by the grammar: the quick readings off."""
    import fzn_gpu.flatzinc.parser as parser

    monkeypatch.setattr(parser, "quick_item", lambda *args: None)
    monkeypatch.setattr(parser, "quick_var_at", lambda *args: None)


def test_quick_shapes_read_as_the_grammar_reads_them(monkeypatch):
    texts = [FULL, ARRAYS, QUICK_EDGES] + _bench_fzn()
    quick = [list(parse_items(t, "f.fzn")) for t in texts]
    _grammar_only(monkeypatch)
    assert quick == [list(parse_items(t, "f.fzn")) for t in texts]


def _random_plain_vars(rng: random.Random, n: int) -> str:
    """Plain variable declarations with random spacing, line breaks, comments between them,
    base types, annotations and names, among other items (a constraint, a parameter), as
    MiniZinc writes them and a little past that."""

    def sp() -> str:
        return rng.choice(["", " ", "  ", "\n", "\n\n  ", "\t"])

    items = []
    for k in range(n):
        shape = rng.randrange(10)
        if shape == 0:
            items.append(f"{sp()}% a comment; with a semicolon\n")
            continue
        if shape == 1:
            items.append(f"{sp()}int: p{k} = {rng.randint(-9, 9)};")
            continue
        if shape == 2 and k:
            items.append(f"{sp()}constraint int_le(v{rng.randrange(k)},{sp()}{rng.randint(-3, 3)});")
            continue
        base = rng.choice(["int", "bool", f"{rng.randint(-9, 0)}{sp()}..{sp()}{rng.randint(0, 9)}"])
        anns = "".join(
            f"{sp()}::{sp()}{rng.choice(['output_var', 'is_defined_var', 'var_is_introduced', 'mention(v0)'])}"
            for _ in range(rng.randint(0, 2))
        )
        items.append(f"{sp()}var{rng.choice([' ', '  ', chr(10)])}{base}{sp()}:{sp()}v{k}{anns}{sp()};")
    return "".join(items) + "\nsolve satisfy;\n"


def test_quick_plain_variables_read_as_the_grammar_reads_them(monkeypatch):
    """Runs of plain variables read straight from the text (quick_var_at): the same items, on
    the same lines, as the grammar reads; and most of them read so (else this would test the
    grammar against itself)."""
    import fzn_gpu.flatzinc.parser as parser

    rng = random.Random(11)
    texts = [_random_plain_vars(rng, 60) for _ in range(40)]
    taken = []
    quick_var_at = parser.quick_var_at
    monkeypatch.setattr(parser, "quick_var_at", lambda *args: taken.append(quick_var_at(*args)) or taken[-1])
    quick = [[(item, item.line) for item in parse_items(t, "f.fzn")] for t in texts]
    read_quickly = sum(t is not None for t in taken)
    _grammar_only(monkeypatch)
    assert quick == [[(item, item.line) for item in parse_items(t, "f.fzn")] for t in texts]
    assert read_quickly > 1000


@pytest.mark.parametrize(
    "text, col, words",
    [
        ("constraint int_le(x, 3,);\n", 24, "unexpected ')'"),
        ("constraint int_le(x, [3, y,]);\n", 28, "unexpected ']'"),
        ("var 1..3: x :: ;\n", 13, "unexpected end of item"),
    ],
)
def test_quick_shapes_leave_errors_to_the_grammar(text, col, words):
    with pytest.raises(FznError) as err:
        list(parse_items(text, "bad.fzn"))
    assert err.value.line == 1 and err.value.column == col and words in err.value.message


def test_a_plain_variable_with_a_bound_of_thousands_of_digits_is_one_located_error():
    """Read among plain variables straight from the text or not, a bound too long for Python's
    int() is the item's error, with its line: never a traceback."""
    text = "var 1..3: a;\nvar 1..3: b;\nvar 1.." + "9" * 5000 + ": c;\nvar 1..3: d;\n"
    with pytest.raises(FznError) as err:
        list(parse_items(text, "long.fzn"))
    assert err.value.line == 3 and "too long" in err.value.message


def _random_var_array(rng: random.Random, k: int) -> str:
    """One array-of-variables declaration with random spacing, base type, annotations and
    elements (names, ints, booleans), as MiniZinc writes them and a little past that."""

    def sp() -> str:
        return rng.choice(["", " ", "  ", "\n"])

    n = rng.randint(0, 5)
    base = rng.choice(["int", "bool", f"{rng.randint(-9, 0)}{sp()}..{sp()}{rng.randint(0, 9)}"])
    anns = []
    for _ in range(rng.randint(0, 3)):
        kind = rng.randrange(3)
        if kind == 0:
            anns.append(rng.choice(["var_is_introduced", "output_var", "is_defined_var"]))
        elif kind == 1:
            anns.append(f"mention({sp()}v{rng.randint(0, 3)}{sp()})")
        else:
            dims = ", ".join(f"{rng.randint(-2, 1)}{sp()}..{sp()}{rng.randint(0, 4)}" for _ in range(rng.randint(1, 3)))
            anns.append(f"output_array({sp()}[{sp()}{dims}{sp()}]{sp()})")
    elems = [rng.choice([f"v{rng.randint(0, 3)}", str(rng.randint(-5, 5)), "true", "false"]) for _ in range(n)]
    ann_text = "".join(f"{sp()}::{sp()}{a}" for a in anns)
    return f"array [1..{n}] of var {base}:{sp()}a{k}{ann_text}{sp()}={sp()}[{sp()}{f',{sp()}'.join(elems)}{sp()}];\n"


def test_quick_var_arrays_read_as_the_grammar_reads_them(monkeypatch):
    """Random arrays of variables: the quick reading and the grammar's agree, and the quick
    one takes most of them (else this would test the grammar against itself)."""
    import fzn_gpu.flatzinc.parser as parser

    rng = random.Random(7)
    decls = "".join(f"var int: v{i};\n" for i in range(4)) + "".join(_random_var_array(rng, k) for k in range(300))
    taken = []
    quick_item = parser.quick_item
    monkeypatch.setattr(parser, "quick_item", lambda *args: taken.append(quick_item(*args)) or taken[-1])
    quick = list(parse_items(decls, "f.fzn"))
    _grammar_only(monkeypatch)
    assert quick == list(parse_items(decls, "f.fzn"))
    assert sum(isinstance(t, ast.Decl) and t.type.dims is not None for t in taken) > 200
