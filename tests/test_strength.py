"""Propagation strength of every int/bool builtin at the root, against brute force (Gecode's
test/int.hh checks each propagator at its stated consistency level and at a fixpoint; lala-pc's
bounds tests check soundness and completeness). On random small instances, one constraint each:

- sound: every value of a solution survives the root's propagation, and the root fails only
  where there is no solution;
- a fixpoint: declaring the propagated domains and propagating again changes nothing (an
  event-driven engine that missed a wake-up, or a propagator that stopped early, shows here);
- checking: every variable fixed, the root fails exactly where the checker refuses;
- complete where the registry says DOMAIN (registry.ConstraintKind.strength): every value left
  has a support, and a constraint without solutions fails at the root. Completeness is a claim
  about one constraint over distinct variables, so instances naming a variable twice check the
  first three only."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from fzn_gpu.engine.pack import pack
from fzn_gpu.engine.paths import Paths
from fzn_gpu.engine.runner import Runner
from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.flatzinc.registry import STRENGTH_DOMAIN
from fzn_gpu.options import SolveOptions
from fzn_gpu.runtime.device import select_devices

from helpers import brute_force, stable_rng
from test_propagators import INT_KINDS, _decl, instance

INSTANCES = 25


def root_propagated(text: str):
    """(model, packed model, runner) after the root's propagation of `text`."""
    model = lower(parse_items(text, "t.fzn"), "t.fzn")
    dm = pack(model, SolveOptions())
    runner = Runner(select_devices("all")[0], dm, max_items=1)
    runner.run_phase(Paths.root(), 1, True, lambda sols: True, None)
    return model, dm, runner


def assert_root_bounds_are_the_solutions(text: str, domains: dict[str, list[int]], names: str | tuple[str, ...]):
    """Bounds consistency at the root in the named variables: the root fails exactly where the
    checker accepts no assignment of `domains`, and otherwise leaves each named variable's
    bounds at its least and greatest value in some solution. Returns the lowered model."""
    solutions = brute_force(text, domains)
    model, dm, runner = root_propagated(text)
    if not solutions:
        assert runner.root_failed, text
        return model
    assert not runner.root_failed, text
    order = list(domains)
    for v in names:
        k = model.vars.names.index(v)
        values = [s[order.index(v)] for s in solutions]
        got = (int(runner.root_lb[k]), int(runner.root_ub[k]))
        assert got == (min(values), max(values)), f"{v}: {got}\n{text}"
    return model


def root_domains(text: str, names: list[str]) -> dict[str, set[int]] | None:
    """The named variables' domains after the root's propagation (bounds and bitmaps), or None
    where the root fails."""
    model, dm, runner = root_propagated(text)
    if runner.root_failed:
        return None
    index = {n: v for v, n in enumerate(model.vars.names)}
    out = {}
    for name in names:
        v = index[name]
        lo, hi = int(runner.root_lb[v]), int(runner.root_ub[v])
        if dm.bm_off[v] < 0:
            out[name] = set(range(lo, hi + 1))
            continue
        base, off = int(dm.base[v]), int(dm.bm_off[v])
        out[name] = {
            a for a in range(lo, hi + 1) if (int(runner.root_bits[off + ((a - base) >> 5)]) >> ((a - base) & 31)) & 1
        }
    return out


def redeclared(text: str, domains: dict[str, set[int] | list[int]]) -> str:
    """The instance with each named variable declared with the given domain."""
    lines = []
    for line in text.splitlines():
        m = re.match(r"var .*: (\w+);$", line)
        lines.append(_decl(m[1], sorted(domains[m[1]])) if m and m[1] in domains else line)
    return "\n".join(lines) + "\n"


def distinct_variables(text: str) -> bool:
    line = next(line for line in text.splitlines() if line.startswith("constraint"))
    names = re.findall(r"\b([a-z]\w*)\b", line.split("(", 1)[1])
    return len(names) == len(set(names))


def cases(kind) -> list[tuple[str, dict[str, list[int]]]]:
    rng = stable_rng(kind.key, "strength")
    return [instance(kind, rng) for _ in range(INSTANCES)]


@pytest.mark.parametrize("kind", INT_KINDS, ids=lambda k: k.key)
def test_root_propagation_is_sound_a_fixpoint_and_as_strong_as_declared(kind, kernel):
    for text, domains in cases(kind):
        names = list(domains)
        solutions = brute_force(text, domains)
        got = root_domains(text, names)
        if got is None:
            assert not solutions, f"the root failed with {len(solutions)} solutions\n{text}"
            continue
        for i, name in enumerate(names):
            supported = {s[i] for s in solutions}
            assert supported <= got[name], f"{name}: removed {sorted(supported - got[name])}, supported\n{text}"
        again = root_domains(redeclared(text, got), names)
        assert again == got, f"not a fixpoint: {got} then {again}\n{text}"
        if kind.strength == STRENGTH_DOMAIN and distinct_variables(text):
            assert solutions, f"a DOMAIN propagator left a constraint without solutions: {got}\n{text}"
            for i, name in enumerate(names):
                supported = {s[i] for s in solutions}
                assert got[name] == supported, f"{name}: kept {sorted(got[name] - supported)} without support\n{text}"


@pytest.mark.parametrize("kind", INT_KINDS, ids=lambda k: k.key)
def test_every_variable_fixed_the_root_fails_exactly_at_non_solutions(kind, kernel):
    rng = random.Random(stable_rng(kind.key, "fixed").random())
    for text, domains in cases(kind):
        checker = Checker(parse_items(text, "t.fzn"))
        combos = list(itertools.product(*domains.values()))
        for combo in rng.sample(combos, min(3, len(combos))):
            point = dict(zip(domains, combo))
            holds = not checker.check(point)
            got = root_domains(redeclared(text, {n: [v] for n, v in point.items()}), list(domains))
            assert (got is not None) == holds, f"{point}: the root {'failed' if got is None else 'held'}\n{text}"


def test_the_declared_strengths_name_real_kinds_and_some_of_each():
    strengths = {k.strength for k in INT_KINDS}
    assert strengths == {"domain", "sound"}


def _tmod(v: int, d: int) -> int:
    """MiniZinc's mod: the remainder of truncated division, with the dividend's sign."""
    r = abs(v) % abs(d)
    return -r if v < 0 else r


def _least_supported(lo: int, hi: int, d: int, remainders: set[int]) -> int | None:
    """The least v in lo..hi with _tmod(v, d) in `remainders`, by scanning: remainders repeat
    with period |d| on each side of 0, so the first |d| values of each side decide it."""
    found = [
        v
        for start, end in ((lo, min(hi, -1)), (max(lo, 0), hi))
        for v in range(start, min(end, start + abs(d) - 1) + 1)
        if _tmod(v, d) in remainders
    ]
    return min(found) if found else None


@pytest.mark.parametrize("seed", range(3))
def test_a_wide_dividends_bounds_are_supported_by_its_remainder(seed, kernel):
    """int_mod(a, d, c) with a fixed divisor and a dividend of up to 2^31 values (bounds only):
    the root moves a's bounds to the least and greatest values whose remainder c can take, in
    a few propagations. c of one sign with a dividend spanning 0 moved a's far bound by at most
    1,024 values a call, millions of passes (fuzz seed 40909)."""
    rng = stable_rng("wide mod", seed)
    for _ in range(12):
        d = rng.choice([-1, 1, 2, -5, 7, 13, -64, 1000, -3000])
        dd = abs(d)
        lo = rng.choice([-(2**31) + 2, -(10**9), -rng.randint(2000, 10**6), rng.randint(0, 10**6)])
        hi = rng.choice([2**31 - 2, 10**9, lo + rng.randint(1100, 10**6)])
        cl = rng.randint(-(dd - 1), dd - 1)
        cu = rng.randint(cl, dd - 1)
        c_values = list(range(cl, cu + 1))
        if 2 < len(c_values) < 1000 and rng.random() < 0.5:
            c_values.remove(rng.choice(c_values[1:-1]))  # a hole
        text = f"var {lo}..{hi}: a;\n{_decl('c', c_values)}\nconstraint int_mod(a, {d}, c);\nsolve satisfy;\n"
        model, dm, runner = root_propagated(text)
        least = _least_supported(lo, hi, d, set(c_values))
        if least is None:
            assert runner.root_failed, text
            continue
        greatest = -_least_supported(-hi, -lo, d, {-r for r in c_values})
        assert not runner.root_failed, text
        a = model.vars.names.index("a")
        assert (int(runner.root_lb[a]), int(runner.root_ub[a])) == (least, greatest), text
        assert runner.stats.props < 5000, f"{runner.stats.props} propagations\n{text}"


def _mod_domain(rng, lo: int, hi: int) -> list[int]:
    """Values of lo..hi: all of them, or with holes (a run cut out, or scattered values)."""
    values = list(range(lo, hi + 1))
    shape = rng.random()
    if shape < 0.3 or len(values) < 4:
        return values
    if shape < 0.6:
        a = rng.randint(1, len(values) - 2)
        b = rng.randint(a, min(len(values) - 2, a + len(values) // 3))
        return values[:a] + values[b + 1 :]
    kept = [v for v in values if rng.random() < 0.7]
    return kept or values[:1]


@pytest.mark.parametrize("seed", range(4))
def test_a_fixed_divisors_dividend_and_remainder_are_domain_consistent(seed, kernel):
    """int_mod(a, d, c) with a fixed divisor: the root leaves a exactly the values whose
    remainder c holds, and c exactly the remainders some value of a leaves, for dividends of
    either sign or both, intervals or with holes, under one period or many (the remainders'
    arithmetic over an interval, those lacking from an interval c removed a period apart, the
    supports found a period apart: divisors_ending_in_0_to_9's 500 rows took 13 ms a node)."""
    rng = stable_rng("mod domains", seed)
    for _ in range(40):
        d = rng.choice([-1, 2, -3, 5, 7, -10, 13, 40, -97])
        lo = rng.choice([rng.randint(-150, 150), rng.randint(0, 40), rng.randint(-40, 0)])
        a_values = _mod_domain(rng, lo, lo + rng.choice([0, 3, abs(d) - 1, abs(d) + 1, rng.randint(5, 150)]))
        cl = rng.randint(-(abs(d) - 1), abs(d) - 1)
        c_values = _mod_domain(rng, cl, rng.randint(cl, abs(d) - 1))
        text = f"{_decl('a', a_values)}\n{_decl('c', c_values)}\nconstraint int_mod(a, {d}, c);\nsolve satisfy;\n"
        _root_matches_brute_force(text, {"a": a_values, "c": c_values})


def _root_matches_brute_force(text: str, domains: dict[str, list[int]]) -> dict[str, set[int]] | None:
    """The root fails exactly where brute force finds no solution; otherwise each variable
    keeps exactly the values some solution gives it (its bounds, where it has no bitmap).
    Returns the root's domains."""
    names = list(domains)
    solutions = brute_force(text, domains)
    got = root_domains(text, names)
    if not solutions:
        assert got is None, text
        return None
    assert got is not None, text
    model, dm, _ = root_propagated(text)
    for i, name in enumerate(names):
        supported = {s[i] for s in solutions}
        if dm.bm_off[model.vars.names.index(name)] >= 0:
            assert got[name] == supported, f"{name}: {sorted(got[name] ^ supported)} differ\n{text}"
        else:
            assert (min(got[name]), max(got[name])) == (min(supported), max(supported)), f"{name}\n{text}"
    return got


@pytest.mark.parametrize("name, value", [("int_mod", 0), ("int_div", 1)])
def test_a_variable_divided_by_itself_gives_its_value_at_the_root(name, value, kernel):
    """int_mod(a, a, c) and int_div(a, a, c): a is nonzero and c is 0 (1) at the root, as brute
    force finds, where a's values were walked before (fuzz seed 54109: a mod a over 10^8 values
    of a with c's domain lacking 0 ran to the time limit; Gecode fails at once)."""
    rng = stable_rng(name, "itself")
    for _ in range(12):
        a_values = sorted(rng.sample(range(-4, 5), rng.randint(1, 6)))
        c_values = sorted(rng.sample(range(-2, 3), rng.randint(1, 4)))
        text = f"{_decl('a', a_values)}\n{_decl('c', c_values)}\nconstraint {name}(a, a, c);\nsolve satisfy;\n"
        got = _root_matches_brute_force(text, {"a": a_values, "c": c_values})
        if got is not None:
            assert got["c"] == {value}, text
            assert 0 not in got["a"] and got["a"] <= set(a_values), text
    wide = f"var 1000000..100000000: a;\nvar {{-8, 4}}: c;\nconstraint {name}(a, a, c);\nsolve satisfy;\n"
    _, _, runner = root_propagated(wide)
    assert runner.root_failed


def test_all_different_naming_a_variable_twice_fails_at_the_root(kernel):
    """all_different([x1, x2, x2, x2]) holds for no assignment: the root fails, where the
    places taken apart failed only once x2 was fixed, and x1 over 32 bits was labelled first
    (fuzz seed 51452: 154 M nodes in 15 s; Gecode fails at once)."""
    text = (
        "var bool: x0;\nvar -2147483646..2147483646: x1;\nvar 0..1: x2;\n"
        "constraint bool2int(x0, x2);\nconstraint int_le(x2, x1);\n"
        "constraint fzn_all_different_int([x1, x2, x2, x2]);\nsolve satisfy;\n"
    )
    assert not brute_force(
        text.replace("-2147483646..2147483646", "-3..3"), {"x0": [0, 1], "x1": list(range(-3, 4)), "x2": [0, 1]}
    )
    _, _, runner = root_propagated(text)
    assert runner.root_failed


@pytest.mark.parametrize("name", ["int_max", "int_min"])
def test_min_and_max_of_two_are_bounds_consistent(name, kernel):
    """int_max(a, b, c) / int_min(a, b, c) over intervals: the root leaves each variable's
    bounds at the least and greatest values some solution gives it (fails where none exists).
    c's lower bound above b's upper one makes a at least c's lower bound: without that rule a
    wide a went unbounded and was labelled value by value (fuzz seed 41018)."""
    rng = stable_rng(name, "bounds")
    for _ in range(3 * INSTANCES):
        domains = {}
        for v in "abc":
            lo = rng.randint(-6, 5)
            domains[v] = list(range(lo, rng.randint(lo, 6) + 1))
        text = "\n".join(_decl(v, vals) for v, vals in domains.items())
        text += f"\nconstraint {name}(a, b, c);\nsolve satisfy;\n"
        assert_root_bounds_are_the_solutions(text, domains, "abc")


@pytest.mark.parametrize("name", ["int_lin_le", "int_lin_eq"])
def test_a_linear_row_naming_a_variable_twice_is_bounds_consistent_in_it(name, kernel):
    """A row whose terms name one variable several times (-900*x - x <= 1) is posted with each
    variable once, its coefficients summed, as Gecode posts it: the root leaves x's bounds at
    the least and greatest solution, and fails where there is none (x + x = 1). Term by term,
    a term's bound came through the other term's bound of the same variable, a fixpoint far
    from the solutions (fuzz seed 47197: 10.8 M nodes labelling from x >= -2,386,092)."""
    rng = stable_rng(name, "repeated")
    for _ in range(3 * INSTANCES):
        coefs = [rng.choice([-900, -9, -3, -2, -1, 1, 2, 3, 7]) for _ in range(rng.randint(2, 4))]
        c = rng.randint(-20, 20)
        lo = rng.randint(-60, 0)
        domain = list(range(lo, rng.randint(0, 60) + 1))
        text = (
            f"{_decl('x', domain)}\nconstraint {name}({coefs}, [{', '.join('x' * len(coefs))}], {c});\nsolve satisfy;\n"
        )
        model = assert_root_bounds_are_the_solutions(text, {"x": domain}, "x")
        assert model.tables[name].row(0)[0] == 1, "the row keeps one term of x"  # [terms, coefs..., ...]


@pytest.mark.parametrize("sign", [1, -1])
def test_a_remainder_by_divisors_larger_than_the_dividend_is_the_dividend(sign, kernel):
    """int_mod(a, b, c) where every b is larger in magnitude than every a: c = a, so the root
    leaves a and c (intervals) at the least and greatest solution, and fails where they share
    no value. A wide divisor labelled value by value found no answer in 10 s where Gecode
    proves none at once (fuzz seed 47449: -970 mod 10^6..10^8 in -674..1835)."""
    rng = stable_rng("mod by larger", sign)
    for _ in range(3 * INSTANCES):
        a_lo = rng.randint(-30, 30)
        a = list(range(a_lo, rng.randint(a_lo, 30) + 1))
        least = max(abs(a[0]), abs(a[-1])) + rng.randint(1, 5)
        b = [sign * v for v in range(least, least + rng.randint(0, 40) + 1)]
        c_lo = rng.randint(-40, 40)
        c = list(range(c_lo, rng.randint(c_lo, 40) + 1))
        domains = {"a": a, "b": sorted(b), "c": c}
        text = "\n".join(_decl(v, vals) for v, vals in domains.items())
        text += "\nconstraint int_mod(a, b, c);\nsolve satisfy;\n"
        assert_root_bounds_are_the_solutions(text, domains, "ac")


def test_an_element_over_variables_keeps_just_the_indices_whose_entry_can_equal_z(kernel):
    """array_var_int_element(i, [x1..x4], z) over small domains with holes: the root leaves in
    i exactly the indices whose entry's domain meets z's (every entry a bitmap, so each meets
    exactly; z often fixed inside an entry's bounds but outside its domain, the case that left
    lot-sizing's channel unpruned), and fails where no index is left."""
    rng = stable_rng("element over variables", "index")
    for _ in range(3 * INSTANCES):
        domains = {"i": list(range(1, 5))}
        for k in range(1, 5):
            lo = rng.randint(0, 3)
            values = sorted(rng.sample(range(lo, lo + 5), rng.randint(1, 3)))
            domains[f"x{k}"] = values
        zlo = rng.randint(0, 4)
        domains["z"] = [zlo] if rng.random() < 0.6 else sorted(rng.sample(range(zlo, zlo + 4), 2))
        text = "\n".join(_decl(v, vals) for v, vals in domains.items())
        text += "\nconstraint array_var_int_element(i, [x1, x2, x3, x4], z);\nsolve satisfy;\n"
        expected = {k for k in range(1, 5) if set(domains[f"x{k}"]) & set(domains["z"])}
        got = root_domains(text, ["i"])
        if not expected:
            assert got is None, text
        else:
            assert got is not None and got["i"] == expected, f"{got}\n{text}"
