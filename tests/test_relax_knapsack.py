"""The knapsack relaxation (fzn_gpu/relax/knapsack.py): its dynamic program against brute force,
its bound on random 0/1 models (signed weights and profits, rows beside the knapsack one) never
past the true optimum and equal to it on many (so a bound one better fails), the row it adds
holding on every solution, and its solution as the first dive's values: a pure knapsack's first
solution is its optimum."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.relax import strengthen
from fzn_gpu.relax.knapsack import knapsack_dp

from helpers import solve_text, stable_rng


@pytest.mark.parametrize("seed", range(200))
def test_dynamic_program_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    w = rng.integers(0, 20, n)
    p = rng.integers(-10, 30, n)
    cap = int(rng.integers(0, max(1, int(w.sum())) + 1))
    value, x = knapsack_dp(w, p, cap)
    best = max(int(p @ np.array(t)) for t in itertools.product((0, 1), repeat=n) if w @ np.array(t) <= cap)
    assert value == best and int(w @ x) <= cap and int(p @ x) == best


def random_model(seed: int) -> tuple[str, int]:
    """0/1 variables, one or two rows with signed coefficients, perhaps an order between two
    variables, a signed objective minimised or maximised: text and the variable count."""
    rng = stable_rng("relax-knapsack-model", seed)
    n = rng.randint(3, 8)
    xs = ", ".join(f"x{i}" for i in range(n))
    lines = [f"var 0..1: x{i};" for i in range(n)]
    for _ in range(rng.randint(1, 2)):
        w = [rng.randint(-4, 9) for _ in range(n)]
        lines.append(f"constraint int_lin_le({w}, [{xs}], {rng.randint(0, 12)});")
    if rng.random() < 0.4:
        a, b = rng.sample(range(n), 2)
        lines.append(f"constraint int_le(x{a}, x{b});")
    p = [rng.randint(-5, 12) for _ in range(n)]
    lines.append("var -1000..1000: obj :: output_var;")
    lines.append(f"constraint int_lin_eq({p + [-1]}, [{xs}, obj], {rng.randint(-3, 3)}) :: defines_var(obj);")
    lines.append(f"solve {rng.choice(['minimize', 'maximize'])} obj;")
    return "\n".join(lines) + "\n", n


def optimum(text: str, n: int) -> int | None:
    checker = Checker(parse_items(text, "t.fzn"))
    model = lower(parse_items(text, "t.fzn"), "t.fzn")
    row = model.tables["int_lin_eq"].row(0)
    coefs, rhs = row[1 : 1 + n], int(row[-1])
    values = []
    for t in itertools.product((0, 1), repeat=n):
        a = {f"x{i}": t[i] for i in range(n)}
        a["obj"] = int(np.dot(coefs, t)) - rhs
        if not checker.check(a):
            values.append(a["obj"])
    if not values:
        return None
    return (min if model.solve.kind == "minimize" else max)(values)


@pytest.mark.parametrize("seed", range(200))
def test_bound_is_sound_on_random_models(seed):
    text, n = random_model(seed)
    model = lower(parse_items(text, "t.fzn"), "t.fzn")
    relaxed = strengthen(model)
    best = optimum(text, n)
    if "knapsack" not in relaxed.added or best is None:
        return
    assert (relaxed.bound >= best) if model.solve.kind == "maximize" else (relaxed.bound <= best), text


def test_taken_often_and_tight_often():
    """A bound one better than it is would fail the test above on the tight ones."""
    taken = tight = 0
    for seed in range(200):
        text, n = random_model(seed)
        model = lower(parse_items(text, "t.fzn"), "t.fzn")
        relaxed = strengthen(model)
        if "knapsack" in relaxed.added:
            taken += 1
            tight += relaxed.bound == optimum(text, n)
    assert taken >= 45 and tight >= 30, (taken, tight)


@pytest.mark.parametrize("seed", range(25))
def test_optimum_with_the_relaxation_equals_brute_force(seed):
    text, n = random_model(seed)
    best = optimum(text, n)
    found, outcome = solve_text(text, relax=True)
    assert outcome.complete
    assert (found[-1]["obj"] if found else None) == best


@pytest.mark.parametrize("seed", range(10))
def test_a_pure_knapsacks_first_solution_is_its_optimum(seed):
    """profit = weight + 10 (the hard kind): the dynamic program's solution is the first dive's
    values (the leftmost leaf: searched in tree order), and its bound proves it at once."""
    rng = stable_rng("relax-knapsack-pure", seed)
    n = rng.randint(8, 14)
    w = [rng.randint(10, 99) for _ in range(n)]
    p = [x + 10 for x in w]
    cap = sum(w) // 2
    ts = ", ".join(f"t{i}" for i in range(n))
    text = "\n".join(f"var 0..1: t{i};" for i in range(n))
    text += f"\nconstraint int_lin_le({w}, [{ts}], {cap});\nvar 0..100000: v :: output_var;\n"
    text += f"constraint int_lin_eq({p + [-1]}, [{ts}, v], 0) :: defines_var(v);\n"
    text += f"solve :: int_search([{ts}], input_order, indomain_min, complete) maximize v;\n"
    best = max(
        sum(pi for pi, t in zip(p, take) if t)
        for take in itertools.product((0, 1), repeat=n)
        if sum(wi for wi, t in zip(w, take) if t) <= cap
    )
    found, outcome = solve_text(text, relax=True, ordered=True, deterministic=True)
    assert outcome.complete and found[0]["v"] == found[-1]["v"] == best and len(found) == 1


def test_a_planted_off_by_one_in_the_dynamic_program_is_caught(monkeypatch):
    """The soundness check above fails once the program's optimum is one too good (an
    off-by-one in the bound): on the random models where the bound is tight."""
    from fzn_gpu.relax import knapsack

    real = knapsack.knapsack_dp
    monkeypatch.setattr(knapsack, "knapsack_dp", lambda w, p, c: (real(w, p, c)[0] - 1, real(w, p, c)[1]))
    caught = 0
    for seed in range(60):
        text, n = random_model(seed)
        model = lower(parse_items(text, "t.fzn"), "t.fzn")
        relaxed = strengthen(model)
        best = optimum(text, n)
        if "knapsack" in relaxed.added and best is not None:
            maximise = model.solve.kind == "maximize"
            caught += not ((relaxed.bound >= best) if maximise else (relaxed.bound <= best))
    assert caught >= 5


def test_bucket_elimination_leaves_the_relaxations_rows_out():
    """The rows the relaxations add are implied (Model.redundant_from): bucket elimination reads
    the model without them, so its objective stays a sum of cost tables (the knapsack bound and
    the Lagrangian cut name the objective, which made it one table over everything) and its
    optimum is the model's."""
    from fzn_gpu.bucket.network import extract

    rng = stable_rng("relax-bucket", 0)
    n = 10
    w = [rng.randint(10, 60) for _ in range(n)]
    p = [rng.randint(5, 40) for _ in range(n)]
    cap = sum(w) // 2
    ts = ", ".join(f"t{i}" for i in range(n))
    text = "\n".join(f"var 0..1: t{i} :: output_var;" for i in range(n))
    text += f"\nconstraint int_lin_le({w}, [{ts}], {cap});\nvar 0..100000: v :: output_var;\n"
    text += f"constraint int_lin_eq({p + [-1]}, [{ts}, v], 0) :: defines_var(v);\nsolve maximize v;\n"
    model = lower(parse_items(text, "t.fzn"), "t.fzn")
    relaxed = strengthen(model)
    assert "knapsack" in relaxed.added and model.redundant_from
    network = extract(model)
    assert network.objective is not None
    best = max(
        sum(pi for pi, t in zip(p, take) if t)
        for take in itertools.product((0, 1), repeat=n)
        if sum(wi for wi, t in zip(w, take) if t) <= cap
    )
    found, outcome = solve_text(text, bucket=True, relax=True)
    assert outcome.complete and found[-1]["v"] == best


def test_build_only_builds_for_the_model_a_run_packs(monkeypatch):
    """`--build-only` adds the relaxations' rows as a run does: their constraint kinds are part
    of the specialised program, and a timed run leaves out a GPU whose program it lacks."""
    import fzn_gpu.engine.pack as pack_module
    import fzn_gpu.engine.runner as runner_module
    from fzn_gpu.engine import build_only
    from fzn_gpu.options import SolveOptions

    packed = []
    real = pack_module.pack
    monkeypatch.setattr(pack_module, "pack", lambda m, o: packed.append(dict(m.redundant_from)) or real(m, o))

    class NoLaunch:
        def __init__(self, *args, **kwargs):
            pass

        def run_phase(self, *args, **kwargs):
            pass

    monkeypatch.setattr(runner_module, "Runner", NoLaunch)
    text, _ = next(
        t
        for t in (random_model(s) for s in range(50))
        if "knapsack" in strengthen(lower(parse_items(t[0], "t.fzn"), "t.fzn")).added
    )
    assert build_only(lower(parse_items(text, "t.fzn"), "t.fzn"), SolveOptions()) == 0
    assert packed and packed[0]  # the rows the relaxations added were there to build for
