"""Bucket elimination (fzn_gpu/bucket/, engine/bucket.py) against brute force: random small
optimisation models written as MiniZinc flattens them (costs looked up in tables through an
index that a linear equation defines, an objective that a linear equation defines, hard
constraints of many kinds, some through defined variables), minimised and maximised, some
without a solution. The optimum must be the brute force's (every FD assignment, its defined
variables computed, through the independent checker), and the solution printed must pass the
checker; UNSATISFIABLE exactly where brute force finds nothing. Also: the join on an OpenCL
device equals numpy's, the plan's width on a grid, the refusal messages, and the default engine
running it beside the portfolio."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from fzn_gpu.bucket import eliminate as E
from fzn_gpu.bucket.network import INF, Factor, NotDecomposable, extract
from fzn_gpu.bucket.plan import best_plan
from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items

from helpers import solve_text, stable_rng
from test_cli import fzn, run


class Net:
    """A random model's FlatZinc and, for brute force, how its defined variables follow from
    the FD ones (in order)."""

    def __init__(self, seed: int):
        rng = stable_rng("bucket", seed)
        self.rng = rng
        self.lines: list[str] = []
        self.domains: dict[str, list[int]] = {}
        self.defs: list[tuple[str, object]] = []  # (name, function of the assignment)
        self.costs: list[tuple[int, str]] = []
        n = rng.randint(3, 6)
        for i in range(n):
            lo = rng.randint(-2, 1)
            values = list(range(lo, lo + rng.randint(2, 4)))
            if len(values) > 2 and rng.random() < 0.3:
                values.remove(rng.choice(values[1:-1]))
            self.domains[f"x{i}"] = values
            self.lines.append(f"var {{{','.join(map(str, values))}}}: x{i} :: output_var;")
        self.xs = list(self.domains)
        for k in range(rng.randint(1, 4)):
            self._table_cost(k)
        for k in range(rng.randint(1, 4)):
            self._hard(k)
        for x in rng.sample(self.xs, rng.randint(0, 2)):
            self.costs.append((rng.choice([-3, -1, 2, 5]), x))
        self.sense = rng.choice(["minimize", "maximize"])
        total_terms = self.costs
        declared = rng.choice(["-1000000..1000000", "int"])  # int: no bounds of its own
        self.lines.append(f"var {declared}: total :: output_var :: is_defined_var;")
        cs = [c for c, _ in total_terms] + [-1]
        vs = [v for _, v in total_terms] + ["total"]
        self.lines.append(f"constraint int_lin_eq({cs}, [{', '.join(vs)}], 0) :: defines_var(total);")
        self.defs.append(("total", lambda a, terms=total_terms: sum(c * a[v] for c, v in terms)))
        if rng.random() < 0.3:  # a constraint on the sum itself: its definition must stay whole
            self.lines.append(f"constraint {rng.choice(['int_le', 'int_ne'])}(total, {rng.randint(-3, 12)});")
        # the objective: the sum (its terms become costs), or a variable whose definition is a
        # table like the others (the sum's maximum with an FD variable), or an FD variable
        self.objective = rng.choice(["total", "total", "top", "x0"])
        if self.objective == "top":
            self.lines.append("var int: top :: output_var :: is_defined_var;")
            self.lines.append("constraint int_max(total, x1, top) :: defines_var(top);")
            self.defs.append(("top", lambda a: max(a["total"], a["x1"])))
        self.lines.append(f"solve {self.sense} {self.objective};")

    def _table_cost(self, k: int) -> None:
        rng = self.rng
        a, b = rng.sample(self.xs, 2)
        da, db = self.domains[a], self.domains[b]
        span_b = max(db) - min(db) + 1
        size = (max(da) - min(da) + 1) * span_b
        table = [rng.choice([0, 1, 3, 7, 20]) for _ in range(size)]
        # idx = (a - min a) * span_b + (b - min b) + 1, as MiniZinc's flattening of cost[a, b]
        const = min(da) * span_b + min(db) - 1
        self.lines.append(f"var 1..{size}: i{k} :: is_defined_var;")
        self.lines.append(f"constraint int_lin_eq([{span_b}, 1, -1], [{a}, {b}, i{k}], {const}) :: defines_var(i{k});")
        self.lines.append(f"var 0..100: c{k} :: is_defined_var;")
        self.lines.append(f"constraint array_int_element(i{k}, {table}, c{k}) :: defines_var(c{k});")
        self.defs.append((f"i{k}", lambda s, a=a, b=b, sb=span_b, c=const: sb * s[a] + s[b] - c))
        self.defs.append((f"c{k}", lambda s, k=k, t=table: t[s[f"i{k}"] - 1]))
        self.costs.append((1, f"c{k}"))

    def _hard(self, k: int) -> None:
        rng = self.rng
        a, b, c = rng.sample(self.xs, 3)
        kind = rng.choice(["ne", "lin_le", "reif", "times", "abs", "alldiff", "max", "set_in", "clause"])
        L = self.lines
        if kind == "ne":
            L.append(f"constraint int_ne({a}, {b});")
        elif kind == "lin_le":
            L.append(
                f"constraint int_lin_le([{rng.choice([1, 2, -1])}, {rng.choice([1, -3])}], [{a}, {b}], {rng.randint(-2, 3)});"
            )
        elif kind == "reif":
            L.append(f"var bool: r{k} :: is_defined_var;")
            L.append(f"constraint int_le_reif({a}, {b}, r{k}) :: defines_var(r{k});")
            L.append(f"var 0..1: n{k} :: is_defined_var;")
            L.append(f"constraint bool2int(r{k}, n{k}) :: defines_var(n{k});")
            self.defs.append((f"r{k}", lambda s, a=a, b=b: s[a] <= s[b]))
            self.defs.append((f"n{k}", lambda s, k=k: int(s[f"r{k}"])))
            self.costs.append((rng.choice([4, -4]), f"n{k}"))
        elif kind == "times":
            L.append(f"var {rng.choice(['-20..20', 'int'])}: p{k} :: is_defined_var;")
            L.append(f"constraint int_times({a}, {b}, p{k}) :: defines_var(p{k});")
            L.append(f"constraint int_le(p{k}, {rng.randint(-1, 4)});")
            self.defs.append((f"p{k}", lambda s, a=a, b=b: s[a] * s[b]))
        elif kind == "abs":
            L.append(f"var 0..9: q{k} :: is_defined_var;")
            L.append(f"constraint int_abs({a}, q{k}) :: defines_var(q{k});")
            L.append(f"constraint int_lin_ne([1, 1], [q{k}, {b}], {rng.randint(0, 2)});")
            self.defs.append((f"q{k}", lambda s, a=a: abs(s[a])))
        elif kind == "alldiff":
            L.append(f"constraint fzn_all_different_int([{a}, {b}, {c}]);")
        elif kind == "max":
            L.append(f"var -9..9: m{k} :: is_defined_var;")
            L.append(f"constraint int_max({a}, {b}, m{k}) :: defines_var(m{k});")
            self.defs.append((f"m{k}", lambda s, a=a, b=b: max(s[a], s[b])))
            self.costs.append((rng.choice([1, -2]), f"m{k}"))
        elif kind == "set_in":
            L.append(f"constraint set_in({a}, {{{','.join(map(str, rng.sample(self.domains[a], 1)))},3}});")
        else:
            value = rng.choice(self.domains[a])
            L.append(f"var bool: r{k} :: is_defined_var;")
            L.append(f"constraint int_eq_reif({a}, {value}, r{k}) :: defines_var(r{k});")
            L.append(
                f"constraint bool_clause([r{k}], []);" if rng.random() < 0.5 else f"constraint bool_clause([], [r{k}]);"
            )
            self.defs.append((f"r{k}", lambda s, a=a, v=value: s[a] == v))

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def brute_force(self) -> int | None:
        """The optimum of the objective over every FD assignment the checker accepts, or None."""
        checker = Checker(parse_items(self.text(), "test.fzn"))
        best = None
        for combo in itertools.product(*(self.domains[x] for x in self.xs)):
            a = dict(zip(self.xs, combo))
            for name, fn in self.defs:
                a[name] = fn(a)
            if checker.check(a):
                continue
            value = a[self.objective]
            if best is None or (value < best if self.sense == "minimize" else value > best):
                best = value
        return best


@pytest.mark.parametrize("seed", range(40))
def test_the_optimum_is_brute_forces(seed):
    net = Net(seed)
    expected = net.brute_force()
    found, outcome = solve_text(net.text(), bucket=True, time_limit_ms=60000)
    assert outcome.complete, net.text()
    if expected is None:
        assert not found, net.text()
    else:
        assert found and found[-1][net.objective] == expected, (expected, found[-1:], net.text())


def test_some_seeds_have_no_solution_and_both_senses_occur():
    """The generator's reach: the property test above sees infeasible models and both senses."""
    nets = [Net(s) for s in range(40)]
    assert any(n.brute_force() is None for n in nets)
    assert {n.sense for n in nets} == {"minimize", "maximize"}
    assert {n.objective for n in nets} == {"total", "top", "x0"}


@pytest.mark.parametrize("seed", range(6))
def test_the_device_join_equals_numpys(seed):
    """kernels/bucket.cl (DeviceJoiner) against join_min, int32 and int64 tables with INF, on
    random buckets of up to five variables (the eliminated one of up to 40 values: the kernel sums
    16 at a time); and join_min a slice at a time against itself whole."""
    import pyopencl as cl

    from fzn_gpu.bucket.device import DeviceJoiner, DeviceTable
    from fzn_gpu.runtime.device import select_devices

    rng = np.random.default_rng(seed)
    device = select_devices("all")[0]
    ctx = cl.Context([device.cl_device])
    joiner = DeviceJoiner(ctx, cl.CommandQueue(ctx), device_min=0)
    scope = tuple(range(rng.integers(1, 6)))
    domains = {v: np.arange(int(rng.integers(1, 5)), dtype=np.int64) for v in scope}
    domains[scope[0]] = np.arange(int(rng.integers(1, 41)), dtype=np.int64)
    for dtype, inf in ((np.int32, E.INF32), (np.int64, int(INF))):
        factors = []
        for _ in range(int(rng.integers(1, 5))):
            sub = tuple(
                sorted(
                    rng.choice(scope, size=int(rng.integers(1, len(scope) + 1)), replace=False).tolist(),
                    key=lambda v: rng.random(),
                )
            )
            if scope[0] not in sub and rng.random() < 0.5:
                sub = (scope[0], *sub[1:]) if len(sub) > 1 else (scope[0],)
            shape = tuple(len(domains[v]) for v in sub)
            table = rng.integers(0, 50, size=shape).astype(dtype)
            table[rng.random(shape) < 0.2] = inf
            factors.append(Factor(sub, table))
        if not any(scope[0] in f.scope for f in factors):
            factors.append(Factor((scope[0],), np.zeros(len(domains[scope[0]]), dtype=dtype)))
        a = E.join_min(factors, scope[0], scope, domains, inf)
        b = joiner(factors, scope[0], scope, domains, inf)
        on_device = b.table.to_host() if isinstance(b.table, DeviceTable) else b.table
        assert a.scope == b.scope and np.array_equal(a.table, on_device)
        chunked = E.CHUNK
        try:
            E.CHUNK = 5  # a slice of the second variable at a time, as big buckets go
            c = E.join_min(factors, scope[0], scope, domains, inf, stop=lambda: False)
        finally:
            E.CHUNK = chunked
        assert np.array_equal(a.table, c.table)


def grid(rows: int, cols: int, dom: int, seed: int) -> str:
    """A weighted CSP on a grid, flattened as MiniZinc flattens ../shared/bench/wcsp_grid.mzn."""
    rng = stable_rng("grid", rows, cols, seed)
    lines = [f"var 1..{dom}: x{i} :: output_var;" for i in range(rows * cols)]
    edges = [(r * cols + c, r * cols + c + 1) for r in range(rows) for c in range(cols - 1)] + [
        (r * cols + c, (r + 1) * cols + c) for r in range(rows - 1) for c in range(cols)
    ]
    for e, (a, b) in enumerate(edges):
        table = [rng.choice([0, 2, 5, 9, 1000]) for _ in range(dom * dom)]
        lines.append(f"var 1..{dom * dom}: i{e} :: is_defined_var;")
        lines.append(f"constraint int_lin_eq([{dom}, 1, -1], [x{a}, x{b}, i{e}], {dom}) :: defines_var(i{e});")
        lines.append(f"var 0..1000: c{e} :: is_defined_var;")
        lines.append(f"constraint array_int_element(i{e}, {table}, c{e}) :: defines_var(c{e});")
    terms = ", ".join(f"c{e}" for e in range(len(edges)))
    lines.append(f"var 0..{1000 * len(edges)}: total :: output_var :: is_defined_var;")
    lines.append(f"constraint int_lin_eq({[1] * len(edges) + [-1]}, [{terms}, total], 0) :: defines_var(total);")
    lines.append("solve minimize total;")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(4))
def test_elimination_with_tables_kept_on_the_device_equals_numpys(seed):
    """The whole elimination with every bucket on the device (DeviceJoiner, device_min 0: the
    results stay there, later buckets copy them in, the backward pass gathers its entries)
    gives numpy's optimum and assignment, on grids and on the random networks above."""
    import pyopencl as cl

    from fzn_gpu.bucket.device import DeviceJoiner
    from fzn_gpu.runtime.device import select_devices

    device = select_devices("all")[0]
    ctx = cl.Context([device.cl_device])
    joiner = DeviceJoiner(ctx, cl.CommandQueue(ctx), device_min=0)
    texts = [grid(3, 4, 3, seed), grid(2, 5, 4, seed + 10)] + [Net(s).text() for s in range(10 * seed, 10 * seed + 10)]
    for text in texts:
        try:
            net = extract(lower(parse_items(text, "t.fzn"), "t.fzn"))
        except NotDecomposable:
            continue
        plan = best_plan(net)
        host = E.eliminate(net, plan)
        dev = E.eliminate(net, plan, join=joiner)
        assert (dev.cost, dev.feasible, dev.assignment) == (host.cost, host.feasible, host.assignment), text
    assert joiner.launches > 0


def test_no_table_is_built_before_every_constraint_is_known_to_fit(monkeypatch):
    """A grid's many small tables and, last, one constraint too big for a table: extract says
    no before it evaluates any table (a model's thousands of tables were built, and held,
    before its last row refused); and tables that together pass the entries allowed are
    refused at the one that passes them."""
    from fzn_gpu.bucket import network

    text = grid(3, 3, 3, 0)
    wide = "".join(f"var 1..12: q{i};\n" for i in range(12))
    wide += "constraint fzn_all_different_int([" + ", ".join(f"q{i}" for i in range(12)) + "]);\n"
    at = text.index("solve")
    model = lower(parse_items(text[:at] + wide + text[at:], "t.fzn"), "t.fzn")
    evaluated: list[int] = []
    allowed = network._allowed
    monkeypatch.setattr(network, "_allowed", lambda row, scope, doms: evaluated.append(1) or allowed(row, scope, doms))
    with pytest.raises(NotDecomposable, match=r"fzn_all_different_int .* spans 12 variables"):
        extract(model)
    assert not evaluated
    small = lower(parse_items(text, "t.fzn"), "t.fzn")
    whole = sum(f.table.size for f in extract(small).factors if len(f.scope) > 1)
    assert extract(small, whole).factors
    with pytest.raises(NotDecomposable, match=r"tables hold over [\d,]+ entries .* more than the memory at hand"):
        extract(small, whole - 1)


def test_a_grid_plans_to_its_width_and_defined_costs_shrink():
    """A 6x6 grid of domain 3: the plan's width is the grid's 6 (min-fill and min-degree alone
    reach more on grids; the model's order is among the orders tried), and the costs, declared
    0..1000, keep only the values their table holds."""
    model = lower(parse_items(grid(6, 6, 3, 0), "g.fzn"), "g.fzn")
    net = extract(model)
    assert all(len(d) <= 9 for d in net.domains.values())
    plan = best_plan(net)
    assert plan.width == 6 and plan.largest == 3**7


def test_a_grid_optimum_against_search(tmp_path):
    """A 3x4 grid's optimum by bucket elimination equals complete branch and bound's."""
    text = grid(3, 4, 3, 1)
    found, outcome = solve_text(text, bucket=True, time_limit_ms=60000)
    bnb, bnb_outcome = solve_text(text, time_limit_ms=120000)
    assert outcome.complete and bnb_outcome.complete
    assert found[-1]["total"] == bnb[-1]["total"]


def test_refusals_are_one_clear_message(tmp_path, monkeypatch):
    """--engine bucket on a model it cannot take says why (the width and the size where the
    tables do not fit the memory), with no traceback and a non-zero exit."""
    monkeypatch.setenv("FZN_GPU_BUCKET_MEMORY", "1000")
    r = run("--engine", "bucket", fzn(tmp_path, grid(3, 3, 3, 0)))
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert re.search(r"induced width \d+, largest table [\d,]+ entries need", r.stderr), r.stderr
    monkeypatch.delenv("FZN_GPU_BUCKET_MEMORY")
    wide = (
        "".join(f"var 1..12: q{i} :: output_var;\n" for i in range(12))
        + "constraint fzn_all_different_int(["
        + ", ".join(f"q{i}" for i in range(12))
        + "]);\nsolve minimize q0;\n"
    )
    r = run("--engine", "bucket", fzn(tmp_path, wide, "w.fzn"))
    assert r.returncode != 0 and "Traceback" not in r.stderr and "spans 12 variables" in r.stderr


def test_the_default_engine_runs_it_beside_the_portfolio(tmp_path):
    """A grid small enough: the default engine proves its optimum with bucket elimination
    beside LNS and branch and bound (-s: bucketWidth); with --bucket off it does not run."""
    path = fzn(tmp_path, grid(4, 4, 3, 2))
    r = run("-s", "--check", "-t", "60000", path)
    assert r.returncode == 0 and "==========" in r.stdout and "bucketWidth=4" in r.stdout, r.stdout[-1500:]
    r = run("-s", "--check", "-t", "60000", "--bucket", "off", path)
    assert r.returncode == 0 and "bucketWidth" not in r.stdout


def test_a_satisfaction_model_is_left_to_search(tmp_path):
    text = "var 1..3: x :: output_var;\nvar 1..3: y :: output_var;\nconstraint int_lt(x, y);\nsolve satisfy;\n"
    r = run("--engine", "bucket", fzn(tmp_path, text))
    assert r.returncode == 0 and "----------" in r.stdout and "bucket elimination solves optimisation" in r.stderr


def _single_rows(text: str):
    """The lowered model of a one-constraint instance, its rows decoded."""
    from fzn_gpu.bucket import evaluate

    model = lower(parse_items(text, "t.fzn"), "t.fzn")
    rows = [(t.kind, evaluate.decode(t.kind, t.row(r))) for t in model.tables.values() for r in range(len(t))]
    return model, rows


def _evaluated_kinds():
    from fzn_gpu.bucket import evaluate
    from fzn_gpu.flatzinc.registry import KINDS

    return [
        pytest.param(k, id=k.key)
        for k in KINDS
        if k.domain == "int" and evaluate.supported(k) and not k.key.startswith("fzn_table")
    ]


@pytest.mark.parametrize("kind", _evaluated_kinds())
def test_every_evaluator_agrees_with_the_checker(kind):
    """bucket/evaluate.py's truth of every kind it tables, on every assignment of random small
    instances (test_propagators' generator: holes, negative values, repeated variables,
    constants), against the independent checker; and for the kinds whose definitions it
    follows (evaluate.image), the value it computes for the last variable is the one value
    the constraint allows there."""
    from fzn_gpu.bucket import evaluate

    from test_propagators import instance

    rng = stable_rng("evaluate", kind.key)
    for _ in range(8):
        text, domains = instance(kind, rng)
        checker = Checker(parse_items(text, "t.fzn"))
        model, rows = _single_rows(text)
        names = list(domains)
        for combo in itertools.product(*(domains[n] for n in names)):
            a = dict(zip(names, combo))

            def value(v, a=a):  # a constant the lowering interned: its declared value
                name = model.vars.names[v]
                return np.int64(a[name]) if name in a else np.int64(model.vars.lb[v])

            ok = all(bool(evaluate.holds(k, args, value)) for k, args in rows)
            assert ok == (not checker.check(a)), (combo, text)
        for k, args in rows:
            scope = evaluate.variables(args)
            if not scope or k.key not in evaluate.IMAGES:
                continue
            y = scope[0] if k.key.startswith("array_int_m") else scope[-1]  # what the kind defines
            inputs = [v for v in dict.fromkeys(scope) if v != y]
            for combo in itertools.product(
                *(domains.get(model.vars.names[v], [int(model.vars.lb[v])]) for v in inputs)
            ):
                given = dict(zip(inputs, combo))
                img = evaluate.image(k, args, y, lambda v: np.int64(given[v]))
                if img is None:
                    break
                ys = domains.get(model.vars.names[y], [int(model.vars.lb[y])])
                allowed = [t for t in ys if evaluate.holds(k, args, lambda v: np.int64(t if v == y else given[v]))]
                got, valid = (int(img[0]), bool(img[1]))
                assert allowed == ([got] if valid and got in ys else []), (k.key, given, allowed, got, valid, text)


@pytest.mark.parametrize("seed", range(12))
def test_counts_equal_brute_force_and_complete_search(seed):
    """-a --count-only of a satisfaction model by bucket elimination (products and sums, times
    the values of the variables outside its tables) equals brute force over the FD variables
    (the defined ones follow) and complete search's count."""
    from fzn_gpu.engine.bucket import BucketCount, count_prepared

    net = Net(seed)
    text = re.sub(r"solve (minimize|maximize) \w+;", "solve satisfy;", net.text())
    checker = Checker(parse_items(text, "test.fzn"))
    expected = 0
    for combo in itertools.product(*(net.domains[x] for x in net.xs)):
        a = dict(zip(net.xs, combo))
        for name, fn in net.defs:
            a[name] = fn(a)
        expected += not checker.check(a)
    model = lower(parse_items(text, "t.fzn"), "t.fzn")
    outcome = BucketCount(model, count_prepared(model, [])).run(None)
    assert outcome.complete and outcome.solutions == expected, text
    _, searched = solve_text(text, all_solutions=True, count_only=True, time_limit_ms=60000)
    assert searched.complete and searched.solutions == expected


def test_the_default_engine_counts_by_buckets_and_prints_no_solution(tmp_path):
    """-a --count-only picks bucket elimination where it fits (-s: bucketWork) and prints the
    count as complete search does; -a alone still prints every solution by search."""
    text = (
        "var 1..3: x :: output_var;\nvar 1..4: y :: output_var;\nvar 1..5: z;\nvar bool: w :: output_var;\n"
        "constraint int_lt(x, y);\nsolve satisfy;\n"
    )
    path = fzn(tmp_path, text)
    r = run("-a", "--count-only", "-s", path)
    assert r.returncode == 0 and "solutions=60" in r.stdout and "bucketWork" in r.stdout
    assert "----------" not in r.stdout and r.stdout.count("==========") == 1
    r = run("-a", "--count-only", "-s", "--bucket", "off", path)
    assert "solutions=60" in r.stdout and "bucketWork" not in r.stdout
    r = run("-a", path)
    assert r.stdout.count("----------") == 60


def test_a_definition_reaching_beyond_32_bits_keeps_to_the_devices_values():
    """A `var int` defined by a sum with a coefficient of 2^30 reaches values beyond the
    device's 32 bits; the network keeps the values every engine gives (|x| <= 2^31 - 2), so
    the optimum's replay through the kernels stays in range and equals branch and bound's
    (the fuzzer's seed 218 crashed the replay when the elimination answered first)."""
    text = (
        "var bool: x0 :: output_var;\nvar {-7,-2,0,3}: x1 :: output_var;\nvar -1..4: x2 :: output_var;\n"
        "var int: x3 :: output_var :: is_defined_var;\nvar {-1,0,3}: x4 :: output_var;\n"
        "var int: x5 :: output_var :: is_defined_var;\n"
        "constraint array_var_int_element(x4, [x2, x2, x2, 195305735], x3) :: defines_var(x3);\n"
        "constraint int_lin_eq([1, -5, 1073741824, 1, -1], [x2, x3, x4, -885, x5], 2) :: defines_var(x5);\n"
        "constraint int_lin_ne_imp([-4], [x2], -3, x0);\nconstraint int_ne_reif(-5, 3, x0);\n"
        "solve minimize x1;\n"
    )
    net = extract(lower(parse_items(text, "t.fzn"), "t.fzn"))
    assert all(abs(int(v)) <= 2**31 - 2 for d in net.domains.values() for v in d)
    found, outcome = solve_text(text, bucket=True, time_limit_ms=60000)
    bnb, bnb_outcome = solve_text(text, time_limit_ms=60000)
    assert outcome.complete and bnb_outcome.complete
    assert [f["x1"] for f in found[-1:]] == [f["x1"] for f in bnb[-1:]]


@pytest.mark.parametrize("seed", range(0, 40, 4))
def test_the_kernel_replay_finds_the_same_optimum_as_the_host_completion(seed, monkeypatch):
    """The optimum's other variables are computed on the host where every one has an image
    (BucketSearch._on_host); the search kernel's replay, which takes over otherwise, gives the
    same optimum through the checker."""
    from fzn_gpu.engine.bucket import BucketSearch

    net = Net(seed)
    host, host_outcome = solve_text(net.text(), bucket=True, time_limit_ms=60000)
    monkeypatch.setattr(BucketSearch, "_on_host", lambda self, assignment: None)
    kernel, kernel_outcome = solve_text(net.text(), bucket=True, time_limit_ms=60000)
    assert host_outcome.complete and kernel_outcome.complete, net.text()
    assert [s[net.objective] for s in host[-1:]] == [s[net.objective] for s in kernel[-1:]], net.text()


def test_a_grid_s_optimum_is_completed_on_the_host_or_else_by_the_kernel(tmp_path, monkeypatch):
    """Through the command line the grid's optimum is completed on the host; with the image of
    its objective's defining sum taken away, the search kernel replays it, to the same optimum."""
    from fzn_gpu.bucket import evaluate
    from fzn_gpu.engine import assignment
    from fzn_gpu.engine.bucket import BucketSearch, forced
    from fzn_gpu.engine.pack import pack
    from fzn_gpu.options import SolveOptions
    from fzn_gpu.runtime.device import select_devices

    text = grid(3, 3, 3, 2)
    r = run("--engine", "bucket", "-s", "--check", fzn(tmp_path, text))
    assert r.returncode == 0 and "==========" in r.stdout and 'bucketCompletedBy="host"' in r.stdout, r.stderr

    def solve() -> tuple[str, list[int]]:
        model = lower(parse_items(text, "g.fzn"), "g.fzn")
        dm, devices, got = pack(model, SolveOptions()), select_devices("all"), []
        checker = Checker(parse_items(text, "g.fzn"))

        def report(values, objective) -> None:
            assert not checker.check(assignment(model, values)), objective  # every solution a solution
            got.append(objective)

        search = BucketSearch(model, dm, devices, SolveOptions(), report, forced(model, devices))
        return (search.completed_by if search.run(None).complete else ""), got

    by, host = solve()
    monkeypatch.delitem(evaluate.IMAGES, "int_lin_eq")
    by_kernel, kernel = solve()
    assert (by, by_kernel) == ("host", "kernel") and host[-1:] == kernel[-1:] and host


def test_an_objective_defined_without_is_defined_var_is_replayed_from_its_definition():
    """FlatZinc written by hand may give `defines_var(v)` without `v :: is_defined_var`: the
    optimum's completion fixed such an objective at its smallest value as if no constraint
    defined it, and the run ended with an internal error instead of the optimum."""
    text = (
        "var 0..1: a :: output_var;\nvar 0..1: b :: output_var;\nvar 0..1: c :: output_var;\n"
        "constraint int_lin_le([4, 5, 6], [a, b, c], 10);\nvar 0..30: v :: output_var;\n"
        "constraint int_lin_eq([5, 6, 8, -1], [a, b, c, v], 0) :: defines_var(v);\nsolve maximize v;\n"
    )
    found, outcome = solve_text(text, bucket=True)
    assert outcome.complete and outcome.error is None and found[-1]["v"] == 13
