"""Every float builtin (registry kinds of domain "float"), on random instances built around a
witness: values that satisfy the constraint, computed in Python doubles.

- sound: with every variable's box around the witness, the engine finds a solution (no
  propagator may cut a witness off, whatever its rounding), and every solution it reports
  passes the independent checker (solve_text checks each);
- sound on points: with every variable fixed at the witness, a solution (outward rounding
  keeps the exact result however the device's library rounds);
- strong on points: with the inputs fixed and the result (or a reified truth) moved off the
  witness, UNSATISFIABLE: a propagator decides a constraint once its inputs are points.

Then known answers: optimisation against Gecode's optima, float_search's precision, output.
"""

from __future__ import annotations

import math
import random

import pytest

from fzn_gpu.flatzinc.registry import KINDS

from helpers import solve_text, stable_rng

FLOAT_KINDS = [k for k in KINDS if k.domain == "float"]

# the function of each functional kind, and where its witness's input is drawn
UNARY = {
    "float_abs": (abs, (-5, 5)),
    "float_sqrt": (math.sqrt, (0.1, 9)),
    "float_exp": (math.exp, (-3, 3)),
    "float_ln": (math.log, (0.1, 9)),
    "float_log10": (math.log10, (0.1, 9)),
    "float_log2": (math.log2, (0.1, 9)),
    "float_sin": (math.sin, (-4, 4)),
    "float_cos": (math.cos, (-4, 4)),
    "float_tan": (math.tan, (-1.2, 1.2)),
    "float_asin": (math.asin, (-0.9, 0.9)),
    "float_acos": (math.acos, (-0.9, 0.9)),
    "float_atan": (math.atan, (-5, 5)),
    "float_sinh": (math.sinh, (-3, 3)),
    "float_cosh": (math.cosh, (-3, 3)),
    "float_tanh": (math.tanh, (-3, 3)),
    "float_asinh": (math.asinh, (-5, 5)),
    "float_acosh": (math.acosh, (1.1, 9)),
    "float_atanh": (math.atanh, (-0.9, 0.9)),
    "int2float": (float, (-5, 5)),
}
BINARY = {
    "float_plus": (lambda a, b: a + b, (-5, 5), (-5, 5)),
    "float_times": (lambda a, b: a * b, (-5, 5), (-5, 5)),
    "float_div": (lambda a, b: a / b, (-5, 5), (0.5, 4)),
    "float_min": (min, (-5, 5), (-5, 5)),
    "float_max": (max, (-5, 5), (-5, 5)),
    "float_pow": (math.pow, (0.5, 3), (-2, 2)),
}
RELATIONS = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "le": lambda a, b: a <= b, "lt": lambda a, b: a < b}


def lit(v: float) -> str:
    """A float literal that parses back to the same double."""
    return repr(float(v))


class Instance:
    """Variables (name -> witness value and whether an int), the constraint's argument text,
    and for a reified kind its truth at the witness."""

    def __init__(self) -> None:
        self.values: dict[str, float] = {}
        self.ints: set[str] = set()
        self.args: list[str] = []
        self.truth: bool | None = None
        self.result: str | None = None  # the variable a functional kind computes
        self.boundary = False  # a linear sum exactly at its bound

    def var(self, name: str, value: float, is_int: bool = False) -> str:
        self.values[name] = value
        if is_int:
            self.ints.add(name)
        return name

    def model(self, kind: str, boxes: dict[str, tuple[float, float]], extra: str = "") -> str:
        decls = []
        for n in self.values:
            lo, hi = boxes[n]
            if n in self.ints:
                decls.append(f"var {math.floor(lo)}..{math.ceil(hi)}: {n};")
            elif n == "r":
                decls.append(f"var {int(lo)}..{int(hi)}: r;" if lo == hi else "var bool: r;")
            else:
                decls.append(f"var {lit(lo)}..{lit(hi)}: {n};")
        return "\n".join(decls) + f"\nconstraint {kind}({', '.join(self.args)});\n{extra}solve satisfy;\n"


def witness(kind: str, rng: random.Random, holds: bool = True) -> Instance:
    """A random instance of `kind` and values that satisfy it (a plain relation: that satisfy
    it or, with holds=False, violate it; a reified one: either, with its literal to match)."""
    w = Instance()
    u = lambda lo, hi: round(rng.uniform(lo, hi), rng.choice([1, 2, 6, 15]))  # noqa: E731
    base = kind.removesuffix("_reif").removesuffix("_imp")
    reified = base != kind
    if base in UNARY:
        f, (lo, hi) = UNARY[base]
        a = float(rng.randint(int(lo), int(hi))) if base == "int2float" else u(lo, hi)
        w.args = [w.var("a", a, base == "int2float"), w.var("b", f(a))]
        w.result = "b"
    elif base in BINARY:
        f, ra, rb = BINARY[base]
        a, b = u(*ra), u(*rb)
        w.args = [w.var("a", a), w.var("b", b), w.var("c", f(a, b))]
        w.result = "c"
    elif base.removeprefix("float_") in RELATIONS:
        rel = RELATIONS[base.removeprefix("float_")]
        a = u(-5, 5)
        b = a if rng.random() < 0.4 else u(-5, 5)
        if not reified and rel(a, b) != holds:
            b = {
                "float_eq": a if holds else a + 1.0,
                "float_ne": a + 1.0 if holds else a,
                "float_le": a + 1.0 if holds else a - 1.0,
                "float_lt": a + 1.0 if holds else a,
            }[base]
        w.args = [w.var("a", a), w.var("b", b)]
        w.truth = rel(a, b)
    elif base.startswith("float_lin_"):
        rel = RELATIONS[base.removeprefix("float_lin_")]
        n = rng.randint(1, 3)
        cs = [rng.choice([-2.5, -1.0, 0.5, 1.0, 3.0]) for _ in range(n)]
        xs = [u(-5, 5) for _ in range(n)]
        total = math.fsum(c * x for c, x in zip(cs, xs))
        c = total if rng.random() < 0.4 else total + rng.choice([-1.5, -0.25, 0.25, 1.5])
        if not reified and rel(total, c) != holds:
            c = {
                "float_lin_eq": total if holds else total + 1.0,
                "float_lin_ne": total - 1.0 if holds else total,
                "float_lin_le": total + 1.0 if holds else total - 1.0,
                "float_lin_lt": total + 1.0 if holds else total - 1.0,
            }[base]
        names = [w.var(f"x{i}", x) for i, x in enumerate(xs)]
        w.args = [f"[{', '.join(map(lit, cs))}]", f"[{', '.join(names)}]", lit(c)]
        w.truth = rel(total, c)
        w.boundary = total == c
    elif base == "float_in":
        a, lo = u(-5, 5), u(-5, 5)
        hi = lo + abs(u(0, 4))
        if not reified and (lo <= a <= hi) != holds:
            lo, hi = (min(lo, a), max(hi, a)) if holds else (a + 0.5, a + 1.5)
        w.args = [w.var("a", a), lit(lo), lit(hi)]
        w.truth = lo <= a <= hi
    elif base == "float_dom":
        a = u(-5, 5)
        lo1 = a - abs(u(0, 2))
        pairs = [lo1, a + abs(u(0, 2)), a + 3, a + 4] if rng.random() < 0.5 else [a - 4, a - 3, lo1, a + 0.5]
        w.args = [w.var("a", a), f"[{', '.join(map(lit, pairs))}]"]
    elif base == "array_float_element":
        arr = [u(-5, 5) for _ in range(rng.randint(1, 4))]
        i = rng.randint(1, len(arr))
        w.args = [w.var("i", i, True), f"[{', '.join(map(lit, arr))}]", w.var("v", arr[i - 1])]
        w.result = "v"
    elif base == "array_var_float_element":
        xs = [u(-5, 5) for _ in range(rng.randint(1, 3))]
        i = rng.randint(1, len(xs))
        names = [w.var(f"x{k}", x) for k, x in enumerate(xs)]
        w.args = [w.var("i", i, True), f"[{', '.join(names)}]", w.var("v", xs[i - 1])]
        w.result = "v"
    elif base in ("array_float_maximum", "array_float_minimum"):
        xs = [u(-5, 5) for _ in range(rng.randint(1, 4))]
        names = [w.var(f"x{k}", x) for k, x in enumerate(xs)]
        w.args = [w.var("m", (max if "maximum" in base else min)(xs)), f"[{', '.join(names)}]"]
        w.result = "m"
    else:
        raise AssertionError(f"no witness for {kind}: add one here")
    if reified:
        w.args.append(w.var("r", 1.0 if w.truth else 0.0, True))
    return w


def box(rng: random.Random, v: float, is_int: bool) -> tuple[float, float]:
    if is_int:
        return (v - rng.randint(0, 2), v + rng.randint(0, 2))
    return (v - rng.choice([0.0, 0.001, 0.5, 2.0]), v + rng.choice([0.0, 0.001, 0.5, 2.0]))


@pytest.mark.parametrize("kind", FLOAT_KINDS, ids=[k.key for k in FLOAT_KINDS])
def test_float_propagator_keeps_witnesses(kind):
    rng = stable_rng(kind.key, "float")
    for _ in range(6):
        w = witness(kind.name, rng)
        boxes = {n: box(rng, v, n in w.ints) for n, v in w.values.items()}
        if "r" in w.values:
            boxes["r"] = (w.values["r"], w.values["r"]) if rng.random() < 0.5 else (0, 1)
        text = w.model(kind.name, boxes)
        found, _ = solve_text(text, num_solutions=1)
        assert found, f"a witness {w.values} was cut off\n{text}"
        points = {n: (v, v) for n, v in w.values.items()}
        text = w.model(kind.name, points)
        found, _ = solve_text(text, num_solutions=1)
        assert found, f"the witness {w.values} itself was refuted\n{text}"


def off(v: float) -> tuple[float, float]:
    """A box clear of v by a thousandth of its size (at least 1e-3)."""
    gap = max(1e-3, abs(v) * 1e-3)
    return (v + gap, v + 2 * gap)


DECIDED_KINDS = [
    k
    for k in FLOAT_KINDS
    if not k.name.endswith("_imp") and k.name.removesuffix("_reif") not in ("float_dom", "float_ne", "float_lin_ne")
]


@pytest.mark.parametrize("kind", DECIDED_KINDS, ids=[k.key for k in DECIDED_KINDS])
def test_float_propagator_decides_points(kind):
    """Inputs fixed, the result (or the reified truth) off the witness: no solution. Left out:
    float_ne and float_lin_ne (they hold within the checker's tolerance, so a near miss refutes
    nothing), float_dom (no result), the _imp kinds (a false literal satisfies them), and a
    linear sum exactly at its bound (outward rounding cannot decide a strict bound there)."""
    rng = stable_rng(kind.key, "points")
    tried = 0
    for _ in range(40):  # draws until 6 refutable cases: some draws decide nothing
        if tried == 6:
            break
        w = witness(kind.name, rng, holds=False)
        boxes = {n: (v, v) for n, v in w.values.items()}
        if w.result is not None:
            boxes[w.result] = off(w.values[w.result])
        elif w.boundary:
            continue
        elif "r" in w.values:
            boxes["r"] = (1 - w.values["r"],) * 2
        elif w.truth:
            continue  # true at the witness: nothing to refute
        tried += 1
        text = w.model(kind.name, boxes)
        found, outcome = solve_text(text, num_solutions=1)
        assert not found and outcome.complete, f"not refuted at points {boxes}\n{text}"
    assert tried >= 2


def test_optimum_of_a_nonlinear_model_agrees_with_gecode():
    """maximize x + y subject to x + 2y <= 7.5 and xy >= 2: Gecode 6.2 finds x = 6.92214438511238,
    y = 0.28892780744381; branch and bound halves the objective's range, so it takes a handful of
    improving solutions, not one per ulp."""
    text = (
        "var 0.0..10.0: x :: output_var;\nvar 0.0..10.0: y :: output_var;\nvar 0.0..20.0: s :: output_var;\n"
        "var 0.0..100.0: p;\nconstraint float_lin_le([1.0, 2.0], [x, y], 7.5);\n"
        "constraint float_times(x, y, p);\nconstraint float_le(2.0, p);\n"
        "constraint float_lin_eq([1.0, 1.0, -1.0], [x, y, s], 0.0);\nsolve maximize s;\n"
    )
    found, outcome = solve_text(text, all_solutions=True)
    assert outcome.complete and 1 <= len(found) <= 50
    best = found[-1]
    assert abs(best["x"] - 6.92214438511238) < 1e-6 and abs(best["y"] - 0.28892780744381) < 1e-6
    assert abs(best["s"] - 7.21107219255619) < 1e-6


def test_root_of_an_ill_conditioned_polynomial():
    """Wilkinson's perturbed polynomial (hakank's wilkinson.mzn, x^19 term 2^-23): its smallest
    real root, -20.8469081014822 (Gecode), found and proven by a few hundred nodes: Aux floats
    (here the 58 partial products) are settled to a coarse relative width, never split to dust."""
    lines = ["var -100.0..10.0: x :: output_var;"]
    cons = []
    for k in range(1, 20):  # t_k = 2^-23 x^k, as MiniZinc flattens it
        lines.append(f"var float: t{k} :: is_defined_var;")
        cons.append(
            f"constraint float_lin_eq([{lit(2.0**-23)}, -1.0], [x, t1], 0.0) :: defines_var(t1);"
            if k == 1
            else f"constraint float_times(t{k - 1}, x, t{k}) :: defines_var(t{k});"
        )
    for k in range(1, 21):  # f_k = x + k, g_k = f_1 ... f_k
        lines.append(f"var float: f{k} :: is_defined_var;")
        cons.append(f"constraint float_lin_eq([1.0, -1.0], [x, f{k}], {lit(-float(k))}) :: defines_var(f{k});")
    for k in range(2, 21):
        lines.append(f"var float: g{k} :: is_defined_var;")
        cons.append(f"constraint float_times({'f1' if k == 2 else f'g{k - 1}'}, f{k}, g{k}) :: defines_var(g{k});")
    cons.append("constraint float_lin_eq([1.0, 1.0], [g20, t19], 0.0);")
    text = "\n".join(lines + cons) + "\nsolve minimize x;\n"
    found, outcome = solve_text(text)
    assert outcome.complete and found
    assert abs(found[-1]["x"] - -20.8469081014822) < 1e-6


def test_float_search_precision_sets_the_width():
    """float_search's precision is the width a variable is split down to: the printed value is
    the shortest decimal of a box that wide, and the checker allows that much."""
    text = (
        "var 0.0..1.0: x :: output_var;\nconstraint float_times(x, x, 0.3);\n"
        "solve :: float_search([x], 0.01, input_order, indomain_split, complete) satisfy;\n"
    )
    found, outcome = solve_text(text, all_solutions=True)
    assert outcome.complete and found
    assert all(abs(s["x"] - math.sqrt(0.3)) <= 0.01 for s in found)


def test_unsatisfiable_and_point_answers():
    assert solve_text("var 0.0..1.0: x;\nconstraint float_le(2.0, x);\nsolve satisfy;\n")[0] == []
    found, outcome = solve_text(
        "var 0.0..10.0: x :: output_var;\nvar 0.0..10.0: y :: output_var;\n"
        "constraint float_lin_eq([1.0, 1.0], [x, y], 20.0);\nsolve satisfy;\n"
    )
    assert found[0]["x"] == 10.0 and found[0]["y"] == 10.0


@pytest.mark.parametrize("square, root", [(0.25, 0.5), (0.3, math.sqrt(0.3))])
def test_all_solutions_list_each_root_once(square, root):
    """-a on x * x = c lists -sqrt(c) and sqrt(c) once each: a point found below an FPOINT
    decision is not found again in its box (the FACCEPT branch), as Gecode lists them."""
    text = f"var -1.0..1.0: x :: output_var;\nconstraint float_times(x, x, {lit(square)});\nsolve satisfy;\n"
    found, outcome = solve_text(text, all_solutions=True)
    assert outcome.complete and len(found) == 2
    xs = sorted(f["x"] for f in found)  # -a prints in the order the work-items meet them
    assert abs(xs[0] + root) < 1e-7 and abs(xs[1] - root) < 1e-7


def test_values_near_zero_are_exact_to_their_own_scale():
    """A base near 0 under a negative exponent: a^b = 2.459 holds at a = 1e-155, b = -0.0025, and
    at no a in a box [0, 1e-8] printed as 0 (found on the H100, whose search met such a box).
    The default precision is relative to the value itself, and boxes touching 0 are split at
    their ordinal midpoint, so the search reaches such a value within its depth (a lone
    [0, 2.5] too, which halving towards 1e-154 had taken past it)."""
    text = (
        "var 0.0..2.5: a :: output_var;\nvar -1.0298159999999998..0.970184: b :: output_var;\n"
        "var 1.4590904398357654..2.4590904398357654: c :: output_var;\nconstraint float_pow(a, b, c);\n"
        "solve satisfy;\n"
    )
    found, outcome = solve_text(text, num_solutions=1)
    assert found and outcome.error is None
    found, outcome = solve_text("var 0.0..2.5: a :: output_var;\nsolve satisfy;\n", num_solutions=1)
    assert found and outcome.error is None


def test_a_base_that_may_be_negative_under_two_integer_exponents():
    """a^b = c with a in [-1.5, 0.5] and b in [-3.6, -1.1]: on a negative base b must be an
    integer, and with two in b's box the propagator bounds nothing there (a = -0.57, b = -2 is a
    solution). Splitting a down to its precision first walked every such box of a (millions of
    nodes, no answer in 10 s); the default search splits the variable widest relative to its
    magnitude, so b is narrowed to one integer early and a follows by propagation."""
    text = (
        "var -1.5..0.5: a :: output_var;\nvar -3.6..-1.1: b :: output_var;\n"
        "var 2.5314331330207964..3.0324331330207963: c :: output_var;\n"
        "constraint float_pow(a, b, c);\nsolve satisfy;\n"
    )
    found, outcome = solve_text(text, num_solutions=1, time_limit_ms=20000)
    assert found and outcome.error is None
