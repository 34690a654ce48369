"""The assignment relaxation (fzn_gpu/relax/assignment.py): the Hungarian method against brute
force, the identity it adds checked on every solution of small random models (a planted
off-by-one in it is caught), its root bound never past the true optimum, and optima found with
it equal to brute force's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fzn_gpu.engine.pack import search_plan
from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.model import Model
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions
from fzn_gpu.relax import root_bound, strengthen
from fzn_gpu.relax.hungarian import solve_assignment

from helpers import solve_text, stable_rng


@pytest.mark.parametrize("seed", range(200))
def test_hungarian_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    cost = rng.integers(-30, 60, (n, n))
    u, v, col = solve_assignment(cost)
    best = min(sum(int(cost[i, p[i]]) for i in range(n)) for p in itertools.permutations(range(n)))
    assert (cost - u[:, None] - v[None, :]).min() >= 0  # dual feasible
    assert int(u.sum() + v.sum()) == best == int(cost[np.arange(n), col].sum())  # and optimal
    assert sorted(col.tolist()) == list(range(n))


def random_model(seed: int) -> tuple[str, dict[str, list[int]]]:
    """A permutation (circuit, subcircuit or all_different, perhaps offset) whose values pick
    costs through array_int_element, summed with other terms into an objective to minimise or
    maximise: FlatZinc text and the domains of its decision variables."""
    rng = stable_rng("relax-assignment", seed)
    n = rng.randint(2, 5)
    kind = rng.choice(["circuit", "subcircuit", "alldiff"])
    offset = 1 if kind != "alldiff" else rng.choice([1, 1, 2, 3])
    lo, hi = offset, offset + n - 1
    lines = [f"var {lo}..{hi}: x{c};" for c in range(n)]
    lines.append(f"array [1..{n}] of var int: xs :: output_array([1..{n}]) = [{', '.join(f'x{c}' for c in range(n))}];")
    coefs, terms = [], []
    for c in range(n):
        for k in range(rng.choice([1, 1, 2])):
            width = hi if rng.random() < 0.8 else rng.randint(max(lo, 1), hi)  # a short array forbids values
            array = [rng.randint(-9, 20) for _ in range(width)]
            lines.append(f"var -1000..1000: y{c}_{k};")
            lines.append(f"constraint array_int_element(x{c}, {array}, y{c}_{k}) :: defines_var(y{c}_{k});")
            coefs.append(rng.choice([1, 1, 2, -1, -3]))
            terms.append(f"y{c}_{k}")
    domains = {f"x{c}": list(range(lo, hi + 1)) for c in range(n)}
    if rng.random() < 0.5:  # a term the relaxation leaves as it is
        lines.append("var 0..3: z;")
        coefs.append(rng.choice([2, -1]))
        terms.append("z")
        domains["z"] = [0, 1, 2, 3]
    a_o = rng.choice([1, -1])
    rhs = rng.randint(-5, 5)
    lines.append("var -100000..100000: obj :: output_var;")
    lines.append(f"constraint int_lin_eq({coefs + [a_o]}, [{', '.join(terms + ['obj'])}], {rhs}) :: defines_var(obj);")
    xs = f"[{', '.join(f'x{c}' for c in range(n))}]"
    if kind == "circuit":
        lines.insert(0, "predicate fzn_gpu_circuit(int: offset, array [int] of var int: x);")
        lines.append(f"constraint fzn_gpu_circuit({offset}, {xs});")
    elif kind == "subcircuit":
        lines.insert(0, "predicate fzn_gpu_subcircuit(int: offset, array [int] of var int: x);")
        lines.append(f"constraint fzn_gpu_subcircuit({offset}, {xs});")
    else:
        lines.insert(0, "predicate fzn_all_different_int(array [int] of var int: x);")
        lines.append(f"constraint fzn_all_different_int({xs});")
    lines.append(f"solve {rng.choice(['minimize', 'maximize'])} obj;")
    return "\n".join(lines) + "\n", domains


def solutions(text: str, domains: dict[str, list[int]]):
    """Every solution of the model (the checker as the oracle), with each defined variable
    (y, obj) computed from the decisions."""
    checker = Checker(parse_items(text, "test.fzn"))
    model = lower(parse_items(text, "test.fzn"), "test.fzn")
    names = list(domains)
    for combo in itertools.product(*(domains[k] for k in names)):
        a = dict(zip(names, combo))
        if not evaluate_defined(model, a):
            continue
        if not checker.check(a):
            yield a


def evaluate_defined(model: Model, a: dict[str, int]) -> bool:
    """Fill in the variables array_int_element and int_lin_eq define, in table order (False
    where an element's index is outside its array)."""
    V = model.vars
    el = model.tables.get("array_int_element")
    for r in range(len(el) if el is not None else 0):
        row = el.row(r)
        m = int(row[1])
        idx = a[V.names[int(row[0])]]
        if not 1 <= idx <= m:
            return False
        a[V.names[int(row[2 + m])]] = int(row[2 + idx - 1])
    lin = model.tables["int_lin_eq"]
    for r in range(len(lin)):
        if lin.defines[r] < 0:
            continue
        row = lin.row(r)
        n = int(row[0])
        coefs, xs, rhs = row[1 : 1 + n], row[2 + n : 2 + 2 * n], int(row[2 + 2 * n])
        d = int(lin.defines[r])
        k = list(xs).index(d)
        rest = sum(int(c) * a[V.names[int(x)]] for j, (c, x) in enumerate(zip(coefs, xs)) if j != k)
        a[V.names[d]] = (rhs - rest) // int(coefs[k])
    return True


def added_rows_hold(model: Model, before: dict[str, int], a: dict[str, int]) -> bool:
    """Whether the rows the relaxation added (after `before` rows of each table) hold on the
    solution `a`, their new variables computed from it."""
    V = model.vars
    el = model.tables["array_int_element"]
    a = dict(a)
    for r in range(before["array_int_element"], len(el)):
        row = el.row(r)
        m = int(row[1])
        idx = a[V.names[int(row[0])]]
        a[V.names[int(row[2 + m])]] = int(row[2 + idx - 1])
    lin = model.tables["int_lin_eq"]
    for r in range(before["int_lin_eq"], len(lin)):
        row = lin.row(r)
        n = int(row[0])
        total = sum(int(c) * a[V.names[int(x)]] for c, x in zip(row[1 : 1 + n], row[2 + n : 2 + 2 * n]))
        if total != int(row[2 + 2 * n]):
            return False
    return True


def strengthened(text: str) -> tuple[Model, dict[str, int], object]:
    model = lower(parse_items(text, "test.fzn"), "test.fzn")
    before = {k: len(t) for k, t in model.tables.items()}
    relaxed = strengthen(model)
    return model, before, relaxed


@pytest.mark.parametrize("seed", range(120))
def test_identity_holds_on_every_solution_and_bound_is_sound(seed):
    text, domains = random_model(seed)
    model, before, relaxed = strengthened(text)
    sols = list(solutions(text, domains))
    if "assignment" not in relaxed.added:
        return  # no permutation within the domains: nothing added, nothing to check
    for a in sols:
        assert added_rows_hold(model, before, a), f"the added identity fails on {a}\n{text}"
    if sols:
        values = [a["obj"] for a in sols]
        best = min(values) if model.solve.kind == "minimize" else max(values)
        assert relaxed.bound is not None
        assert (relaxed.bound <= best) if model.solve.kind == "minimize" else (relaxed.bound >= best)


def test_the_identity_check_catches_an_off_by_one():
    """The check above fails on the identity's constant moved by one."""
    for seed in range(40):
        text, domains = random_model(seed)
        model, before, relaxed = strengthened(text)
        sols = list(solutions(text, domains))
        if "assignment" in relaxed.added and sols:
            lin = model.tables["int_lin_eq"]
            lin.data[lin.row_ptr[-1] - 1] += 1  # the added row's right-hand side
            assert not any(added_rows_hold(model, before, a) for a in sols)
            return
    pytest.fail("no random model took the relaxation")


def test_most_random_models_take_the_relaxation():
    taken = sum("assignment" in strengthened(random_model(seed)[0])[2].added for seed in range(60))
    assert taken >= 40


@pytest.mark.parametrize("seed", range(30))
def test_optimum_with_the_relaxation_equals_brute_force(seed):
    text, domains = random_model(seed)
    sols = list(solutions(text, domains))
    minimise = "minimize" in text
    found, outcome = solve_text(text, relax=True)
    assert outcome.complete
    if not sols:
        assert not found
        return
    best = (min if minimise else max)(a["obj"] for a in sols)
    assert found and found[-1]["obj"] == best


TSP = """\
predicate fzn_gpu_circuit(int: offset, array [int] of var int: x);
{decls}
array [1..{n}] of var int: succ :: output_array([1..{n}]) = [{succ}];
var 0..100000: length :: output_var;
{elements}
constraint fzn_gpu_circuit(1, [{succ}]);
constraint int_lin_eq([{ones}, -1], [{ds}, length], 0) :: defines_var(length);
solve minimize length;
"""


def tsp(n: int, seed: int) -> tuple[str, list[list[int]]]:
    rng = stable_rng("relax-tsp", n, seed)
    dist = [[0 if i == j else rng.randint(1, 99) for j in range(n)] for i in range(n)]
    decls = "\n".join(f"var 1..{n}: s{i};\nvar 0..99: d{i};" for i in range(n))
    elements = "\n".join(f"constraint array_int_element(s{i}, {dist[i]}, d{i}) :: defines_var(d{i});" for i in range(n))
    succ = ", ".join(f"s{i}" for i in range(n))
    ds = ", ".join(f"d{i}" for i in range(n))
    return TSP.format(decls=decls, n=n, succ=succ, elements=elements, ones=", ".join(["1"] * n), ds=ds), dist


def shortest_tour(dist: list[list[int]]) -> int:
    n = len(dist)
    return min(sum(dist[a][b] for a, b in zip((0, *p), (*p, 0))) for p in itertools.permutations(range(1, n)))


@pytest.mark.parametrize("n,seed", [(5, 0), (6, 1), (7, 2), (8, 3), (8, 4)])
def test_travelling_salesman_optimum(n, seed):
    text, dist = tsp(n, seed)
    found, outcome = solve_text(text, relax=True)
    assert outcome.complete and found[-1]["length"] == shortest_tour(dist)


def test_guide_comes_first_even_with_free_search():
    text, _ = tsp(6, 0)
    model, _, relaxed = strengthened(text)
    assert relaxed.added == ["assignment"]
    guide = model.solve.guide[0]
    for free in (False, True):
        sg_ptr, sg_var, *_ = search_plan(model, SolveOptions(free_search=free))
        assert sg_var[: len(guide.vars)].tolist() == guide.vars


def test_nothing_added_where_the_structure_is_missing():
    for text in (
        "var 1..3: x;\nvar 1..3: y;\nsolve minimize x;\n",
        "var 1..3: x;\nvar 1..3: y;\nconstraint int_lin_eq([1, 1], [x, y], 4);\nsolve satisfy;\n",
    ):
        model, before, relaxed = strengthened(text)
        assert not relaxed.added and model.solve.guide == []
        assert {k: len(t) for k, t in model.tables.items()} == before
    text, _ = tsp(5, 0)
    model = lower(parse_items(text, "test.fzn"), "test.fzn")
    assert strengthen(model, "off").added == []


def test_root_bound_is_the_assignment_bound():
    text, dist = tsp(6, 2)
    model, _, relaxed = strengthened(text)
    cost = np.array(dist) + np.eye(6, dtype=np.int64) * 10**6
    u, v, _ = solve_assignment(cost)
    assert relaxed.bound == root_bound(model) == int(u.sum() + v.sum())


def test_the_servers_warm_up_sample_runs_the_relaxations(monkeypatch):
    """The solver server loads the relaxations' numpy routines on RELAX_SAMPLE (server._preload):
    it must take the assignment and choice relaxations and reach PDHG."""
    from fzn_gpu.relax import lagrangian
    from fzn_gpu.server import RELAX_SAMPLE

    calls = []
    original = lagrangian.solve_dual
    monkeypatch.setattr(lagrangian, "solve_dual", lambda *a, **k: calls.append(1) or original(*a, **k))
    relaxed = strengthen(lower(parse_items(RELAX_SAMPLE, "s.fzn"), "s.fzn"))
    assert {"assignment", "choice"} <= set(relaxed.added) and calls
