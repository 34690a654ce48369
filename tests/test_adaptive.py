"""Adaptive Search (fzn_gpu/local/, kernels/adaptive.cl, engine/adaptive.py).

- The error functions against the independent verdict: every assignment of random small
  models' decision variables, loaded into the walks and scored by the kernel, has total error
  0 exactly where it is a solution (the groups' implicit constraints aside).
- What a walk keeps up to date move by move equals a rescoring from its values.
- Moves keep the implicit constraints (permutations stay permutations, chains stay sorted,
  free variables in their domains); no move raises the error; a local minimum freezes its
  variable for FREEZE_LOCAL_MIN moves; RESET_LIMIT frozen variables trigger a reset.
- Every solution printed passes the checker, an unsatisfiable model ends UNKNOWN at the time
  limit, and a seed gives the same answer.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from fzn_gpu.engine import assignment
from fzn_gpu.engine.adaptive import AdaptiveSearch, DeviceWalks, walk_params
from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.local.network import NotLocal, build
from fzn_gpu.local.verify import violations
from fzn_gpu.options import SolveOptions
from fzn_gpu.runtime.device import select_devices
from fzn_gpu.runtime.local_abi import Group, H, L, Param, W

from helpers import stable_rng
from test_cli import fzn, run

SEEDS = range(48)  # the random models the error-function test scores (test_every_form_occurs)


class Net:
    """A random small satisfaction model of the kinds local search takes: int decision variables
    x0.. of small domains (some in an exactly fitting all_different, a permutation group, or a
    chain, a sorted group) and bool ones b0.., Aux variables defined by every invariant form
    (linear, arithmetic, element, extremum, reification, clause, parity, membership, count),
    and soft constraints of every error function (test_every_form_occurs pins the reach)."""

    KINDS = (
        "lin",
        "ne",
        "lt",
        "arith",
        "abs",
        "element",
        "var_element",
        "extremum",
        "reif",
        "reif_soft",
        "imp",
        "clause",
        "bool_fn",
        "xor",
        "set_in",
        "set_in_reif",
        "table",
        "count",
        "count_soft",
        "gcc",
        "alldiff",
        "increasing",
        "arith_soft",
        "constants",
    )

    def __init__(self, seed: int):
        rng = stable_rng("adaptive-net", seed)
        self.rng = rng
        n = rng.randint(3, 5)
        self.xs = [f"x{i}" for i in range(n)]
        self.bs = [f"b{i}" for i in range(rng.randint(1, 2))]
        L_: list[str] = []
        shape = rng.choice(["free", "perm", "chain"])
        for x in self.xs:
            if shape == "perm":
                dom = list(range(1, n + 1))
            elif rng.random() < 0.2:
                dom = sorted(rng.sample(range(-2, 5), rng.randint(2, 4)))
            else:
                lo = rng.randint(-2, 2)
                dom = list(range(lo, lo + rng.randint(2, 4)))
            decl = (
                f"{dom[0]}..{dom[-1]}"
                if dom == list(range(dom[0], dom[-1] + 1))
                else "{" + ",".join(map(str, dom)) + "}"
            )
            L_.append(f"var {decl}: {x} :: output_var;")
        L_ += [f"var bool: {b} :: output_var;" for b in self.bs]
        if shape == "perm":
            L_.append(f"constraint fzn_all_different_int([{', '.join(self.xs)}]);")
        elif shape == "chain":
            strict = rng.random() < 0.5
            for a, b in zip(self.xs, self.xs[1:]):
                L_.append(f"constraint int_lin_le([1, -1], [{a}, {b}], {-1 if strict else 0});")
        L_ += self.constraint(0, "arith")  # every model: two arithmetic definitions, one reading the other
        for k in range(1, rng.randint(3, 6)):  # the first two kinds in turn over the seeds, then at random
            L_ += self.constraint(k, self.KINDS[(3 * seed + k) % len(self.KINDS)] if k <= 2 else rng.choice(self.KINDS))
        L_.append("solve satisfy;")
        self.text = "\n".join(L_) + "\n"

    def pick(self, k: int = 1) -> list[str]:
        return [self.rng.choice(self.xs) for _ in range(k)]

    def pick_b(self, k: int = 1) -> list[str]:
        return [self.rng.choice(self.bs) for _ in range(k)]

    def constraint(self, k: int, kind: str) -> list[str]:
        rng = self.rng
        a, b, c = self.pick(3)
        p, q = self.pick_b(2)
        rel = rng.choice(["eq", "ne", "le", "lt"])
        if kind == "lin":
            cs = [rng.choice([-2, -1, 1, 2]) for _ in range(3)]
            return [
                f"constraint int_lin_{rng.choice(['eq', 'le', 'ne'])}([{', '.join(map(str, cs))}], [{a}, {b}, {c}], "
                f"{rng.randint(-3, 4)});"
            ]
        if kind == "ne":
            return [f"constraint int_ne({a}, {b});"]
        if kind == "lt":
            return [f"constraint int_lt({a}, {b});"]
        if kind in ("arith", "arith_soft"):
            op = rng.choice(["int_times", "int_div", "int_mod", "int_plus", "int_min", "int_max", "int_pow", "int_abs"])
            args = (a,) if op == "int_abs" else (a, b)
            if kind == "arith_soft":  # its result a decision variable: a FUNC soft constraint
                return [f"var -3..6: f{k} :: output_var;", f"constraint {op}({', '.join(args)}, f{k});"]
            op2 = rng.choice(["int_times", "int_div", "int_mod", "int_min", "int_max", "int_pow"])
            return [
                f"var -20..20: t{k} :: is_defined_var;",
                f"var -99..99: u{k} :: is_defined_var;",
                f"constraint {op}({', '.join(args)}, t{k}) :: defines_var(t{k});",  # u reads t: in order
                f"constraint {op2}(t{k}, {c}, u{k}) :: defines_var(u{k});",
                f"constraint int_le(u{k}, {rng.randint(-2, 6)});",
            ]
        if kind == "abs":
            return [
                f"var 0..3: q{k} :: is_defined_var;",
                f"constraint int_abs({a}, q{k}) :: defines_var(q{k});",
                f"constraint int_lin_ne([1, -1], [q{k}, {b}], 0);",
            ]
        if kind == "element":
            arr = [rng.randint(-2, 3) for _ in range(4)]
            return [
                f"var -2..3: e{k} :: is_defined_var;",
                f"constraint array_int_element({a}, [{', '.join(map(str, arr))}], e{k}) :: defines_var(e{k});",
                f"constraint int_ne(e{k}, {rng.randint(-2, 3)});",
            ]
        if kind == "var_element":
            return [
                f"var -3..5: v{k} :: is_defined_var;",
                f"constraint array_var_int_element({a}, [{b}, {c}, {a}], v{k}) :: defines_var(v{k});",
                f"constraint int_le(v{k}, {rng.randint(-1, 4)});",
            ]
        if kind == "extremum":
            which = rng.choice(["maximum", "minimum"])
            return [
                f"var -3..5: m{k} :: is_defined_var;",
                f"constraint array_int_{which}(m{k}, [{a}, {b}, {c}]) :: defines_var(m{k});",
                f"constraint int_le(m{k}, {rng.randint(0, 4)});",
            ]
        if kind == "reif":
            form = rng.choice(
                [
                    f"int_{rel}_reif({a}, {b}, r{k})",
                    f"int_lin_{rng.choice(['eq', 'ne', 'le'])}_reif([1, 2], [{a}, {b}], {rng.randint(-1, 5)}, r{k})",
                    f"bool_{rng.choice(['eq', 'le', 'lt', 'ne'])}_reif({p}, {q}, r{k})",
                ]
            )
            return [
                f"var bool: r{k} :: is_defined_var;",
                f"constraint {form} :: defines_var(r{k});",
                f"constraint bool_clause([r{k}], []);"
                if rng.random() < 0.5
                else f"constraint bool_clause([], [r{k}]);",
            ]
        if kind == "reif_soft":  # its literal a decision variable: a REIF soft constraint
            return [f"constraint int_{rel}_reif({a}, {b}, {p});"]
        if kind == "imp":
            form = rng.choice(
                [
                    f"int_{rel}_imp({a}, {b}, {p})",
                    f"bool_and_imp({q}, {p}, {p})",
                    f"bool_or_imp({q}, {q}, {p})",
                    f"array_bool_and_imp([{q}], {p})",
                    f"bool_clause_imp([{q}], [], {p})",
                    f"set_in_imp({a}, {{0, 2}}, {p})",
                ]
            )
            return [f"constraint {form};"]
        if kind == "clause":
            return [
                f"var bool: cp{k} :: is_defined_var;",
                f"var bool: cn{k} :: is_defined_var;",
                f"constraint int_eq_reif({a}, {rng.randint(0, 2)}, cp{k}) :: defines_var(cp{k});",
                f"constraint int_lt_reif({b}, {c}, cn{k}) :: defines_var(cn{k});",
                f"constraint bool_clause([cp{k}, {p}], [cn{k}]);",
            ]
        if kind == "bool_fn":
            form = rng.choice(
                [
                    f"bool_and({p}, {q}, g{k})",
                    f"bool_or({p}, {q}, g{k})",
                    f"array_bool_and([{p}, {q}], g{k})",
                    f"array_bool_or([{p}, {q}], g{k})",
                    f"bool_clause_reif([{p}], [{q}], g{k})",
                    f"bool_not({p}, g{k})",
                    f"bool2int({p}, g{k})",
                ]
            )
            dom = "0..1" if "bool2int" in form else "bool"
            return [
                f"var {dom}: g{k} :: is_defined_var;",
                f"constraint {form} :: defines_var(g{k});",
                f"constraint int_ne(g{k}, {rng.randint(0, 1)});"
                if dom == "0..1"
                else f"constraint bool_clause([g{k}], []);",
            ]
        if kind == "xor":
            if rng.random() < 0.5:
                return [f"constraint array_bool_xor([{p}, {q}, {self.pick_b()[0]}]);"]
            return [
                f"var bool: z{k} :: is_defined_var;",
                f"constraint bool_xor({p}, {q}, z{k}) :: defines_var(z{k});",
                f"constraint bool_clause([], [z{k}]);",
            ]
        if kind == "set_in":
            return [f"constraint set_in({a}, {{{', '.join(map(str, sorted(set(rng.sample(range(-2, 5), 3)))))}}});"]
        if kind == "set_in_reif":
            return [
                f"var bool: s{k} :: is_defined_var;",
                f"constraint set_in_reif({a}, 1..3, s{k}) :: defines_var(s{k});",
                f"constraint bool_clause([s{k}], []);",
            ]
        if kind == "table":
            rows = [f"{rng.randint(-2, 4)}, {rng.randint(-2, 4)}" for _ in range(rng.randint(2, 5))]
            return [f"constraint fzn_table_int([{a}, {b}], [{', '.join(rows)}]);"]
        if kind == "count":
            return [
                f"var 0..3: k{k} :: is_defined_var;",
                f"constraint fzn_count_eq([{a}, {b}, {c}], {self.pick()[0]}, k{k}) :: defines_var(k{k});",
                f"constraint int_le(k{k}, {rng.randint(0, 2)});",
            ]
        if kind == "count_soft":
            return [f"constraint fzn_count_eq([{a}, {b}, {c}], {self.pick()[0]}, {rng.randint(0, 2)});"]
        if kind == "gcc":
            if rng.random() < 0.5:
                return [
                    f"constraint fzn_global_cardinality_low_up_closed([{a}, {b}, {c}], [0, 1, 2, 3], [0, 0, 1, 0], "
                    f"[2, 3, 2, 3]);"
                ]
            return [
                f"var 0..3: gc{k} :: output_var;",
                f"constraint fzn_global_cardinality([{a}, {b}, {c}], [{rng.randint(0, 3)}], [gc{k}]);",
            ]
        if kind == "constants":  # true, false and numbers where variables stand (interned constants)
            return [
                rng.choice(
                    [
                        f"constraint array_bool_or([{p}, {q}], true);",
                        f"constraint bool_clause([{p}], [true]);",
                        f"constraint array_bool_and([{p}, true], {q});",
                        f"constraint bool_eq({p}, false);",
                    ]
                ),
                f"constraint int_lin_le([1, 1], [{a}, {rng.randint(-2, 3)}], {rng.randint(0, 4)});",
            ]
        if kind == "increasing":
            return [f"constraint fzn_{rng.choice(['increasing', 'decreasing'])}_int([{a}, {b}, {c}]);"]
        return [f"constraint fzn_all_different_int([{a}, {b}, {c}]);"]

    def model(self):
        return lower(parse_items(self.text, "t.fzn"), "t.fzn")


def test_every_form_occurs():
    """The generator's reach: over the seeds the tests use, every soft constraint type, every
    invariant type, every arithmetic operation and every kind of group occur."""
    from fzn_gpu.runtime.local_abi import Arith, Inv, Soft

    soft, inv, arith, groups = set(), set(), set(), set()
    for seed in SEEDS:
        net = build(Net(seed).model())
        b = net.buffer
        soft.update(int(t) for t in b[b[H.SOFT_TYPE] :][: net.n_soft])
        types = b[b[H.INV_TYPE] :][: net.n_inv]
        rows = b[b[H.INV_ROW] :][: net.n_inv]
        inv.update(int(t) for t in types)
        arith.update(int(b[b[H.DATA] + r]) for t, r in zip(types, rows) if t == Inv.ARITH)
        groups.update(kind for kind, _ in _groups(net))
    assert soft == {int(t) for t in Soft}, {Soft(t).name for t in set(map(int, Soft)) - soft}
    assert inv == {int(t) for t in Inv}, {Inv(t).name for t in set(map(int, Inv)) - inv}
    assert arith == {int(t) for t in Arith}, {Arith(t).name for t in set(map(int, Arith)) - arith}
    assert groups == {Group.PERM, Group.SORTED, Group.SORTED_STRICT}


def _decision_vars(net) -> list[int]:
    return [int(v) for v in net.buffer[net.buffer[H.DEC_VAR] :][: net.ndec]]


def _groups(net) -> list[tuple[int, list[int]]]:
    b = net.buffer
    ng = int(b[H.NG])
    types = b[b[H.G_TYPE] :][:ng]
    off = b[b[H.G_OFF] :][: ng + 1]
    mem = b[b[H.G_MEM] :]
    dec = _decision_vars(net)
    return [(int(types[g]), [dec[int(i)] for i in mem[off[g] : off[g + 1]]]) for g in range(ng)]


def _implicit_ok(net, values) -> bool:
    for kind, members in _groups(net):
        vals = [int(values[v]) for v in members]
        if kind == Group.PERM and len(set(vals)) != len(vals):
            return False
        if kind == Group.SORTED_STRICT and any(a >= b for a, b in zip(vals, vals[1:])):
            return False
        if kind == Group.SORTED and any(a > b for a, b in zip(vals, vals[1:])):
            return False
    return True


def _walker(net, walks: int, params: dict[str, int] | None = None, monkeypatch=None) -> DeviceWalks:
    if params:
        monkeypatch.setenv("FZN_GPU_LS_PARAMS", ",".join(f"{k}={v}" for k, v in params.items()))
    walker = DeviceWalks(select_devices("cpu")[0], net, seed=1)
    walker.setup(walks=walks, width=1)
    return walker


def _load(walker: DeviceWalks, rows: np.ndarray) -> None:
    """Decision variables' values written into the walks (one row each), then rescored."""
    import pyopencl as cl

    st = walker.state()
    values = st["values"]
    values[: len(rows)] = rows
    cl.enqueue_copy(walker.queue, walker.bufs[1], values)
    walker.rescore()


@pytest.mark.parametrize("seed", SEEDS)
def test_the_error_is_zero_exactly_on_solutions(seed):
    """Every assignment of the decision variables, loaded into a walk and rescored (the
    invariants computing the Aux variables), has total error 0 exactly where the verifier
    finds no violation and the groups' implicit constraints hold; the verifier agrees with the
    checker."""
    _error_is_zero_exactly_on_solutions(Net(seed).text)


# a coefficient of 2^30 + 3, so that the rows' constants (two or three of them) pass 32 bits and
# take both of a row's words (local_abi.Soft's LIN)
BIG = 2**30 + 3
WIDE_MODELS = [
    "var -2..3: x0 :: output_var;\nvar 0..3: x1 :: output_var;\nvar 1..4: x2 :: output_var;\n"
    f"constraint int_lin_eq([{BIG}, {-BIG}, {BIG}], [x0, x1, x2], {3 * BIG});\nsolve satisfy;\n",
    "var -2..3: x0 :: output_var;\nvar 0..3: x1 :: output_var;\nvar 1..4: x2 :: output_var;\n"
    f"constraint int_lin_le([{BIG}, {BIG}], [x0, x2], {2 * BIG});\n"
    f"constraint int_lin_ne([{BIG}, {-BIG}], [x1, x2], {-2 * BIG});\nsolve satisfy;\n",
    "var -2..3: x0 :: output_var;\nvar 0..3: x1 :: output_var;\nvar bool: b0 :: output_var;\n"
    f"constraint int_lin_le_reif([{BIG}, {-BIG}], [x0, x1], {-2 * BIG}, b0);\n"
    "constraint bool_eq(b0, true);\nsolve satisfy;\n",
    "var -2..3: x0 :: output_var;\nvar 0..3: x1 :: output_var;\nvar -9..9: s :: is_defined_var;\n"
    f"constraint int_lin_eq([{BIG}, {BIG}, {-BIG}], [x0, x1, s], {-4 * BIG}) :: defines_var(s);\n"
    "constraint int_le(s, 1);\nsolve satisfy;\n",
]


@pytest.mark.parametrize("text", WIDE_MODELS)
def test_constants_beyond_32_bits_score_as_the_verdict_says(text):
    """A linear constant beyond 32 bits (number partitioning's sum of squares from n = 2,400 on)
    is kept whole: equalities, inequalities, a reified one and a defined variable's."""
    _error_is_zero_exactly_on_solutions(text)


def _error_is_zero_exactly_on_solutions(text: str) -> None:
    model = lower(parse_items(text, "t.fzn"), "t.fzn")
    try:
        net = build(model)
    except NotLocal as why:
        pytest.fail(f"a model of supported kinds was refused: {why}\n{text}")
    dec = _decision_vars(net)
    combos = list(itertools.product(*(model.vars.domain(v).values() for v in dec)))[:512]
    walker = _walker(net, len(combos))
    walker.launch(0)  # fresh walks: a random start, then our assignments
    base = walker.state()["values"]
    rows = base.copy()
    for i, combo in enumerate(combos):
        rows[i, dec] = combo
    _load(walker, rows)
    st = walker.state()
    checker = Checker(parse_items(text, "t.fzn"))
    for i in range(len(combos)):
        values = st["values"][i].astype(np.int64)
        if not _implicit_ok(net, values):  # the moves never leave these: not scored
            continue
        holds = not violations(model, values)
        assert (st["lscalars"][i, L.TOTAL] == 0) == holds, (combos[i], st["errors"][i], text)
        assert holds == (not checker.check(assignment(model, values))), (combos[i], text)


def test_the_verdict_names_values_outside_their_domains_in_variable_order():
    """The verifier's domain part: a value beyond a variable's bounds, in a hole of its set
    domain, or a bool's beyond 0..1, is named, the first `limit` of them by variable."""
    text = (
        "var {1, 3, 5}: h :: output_var;\nvar bool: b :: output_var;\nvar -2..2: r :: output_var;\n"
        "constraint int_le(r, h);\nsolve satisfy;\n"
    )
    model = lower(parse_items(text, "t.fzn"), "t.fzn")
    index = {name: v for v, name in enumerate(model.vars.names)}

    def verdict(limit=1, **values):
        row = np.zeros(len(model.vars), np.int64)
        for name, x in values.items():
            row[index[name]] = x
        return violations(model, row, limit)

    assert verdict(h=3, b=1, r=-2) == []
    assert verdict(h=2, b=1, r=0) == ["the domain of h (value 2)"]
    assert verdict(h=7, b=0, r=0) == ["the domain of h (value 7)"]
    assert verdict(h=1, b=2, r=0) == ["the domain of b (value 2)"]
    assert verdict(h=1, b=-1, r=3) == ["the domain of b (value -1)"]
    assert verdict(2, h=4, b=1, r=-3) == ["the domain of h (value 4)", "the domain of r (value -3)"]
    assert verdict(h=5, b=1, r=2) == []
    assert verdict(h=1, b=1, r=2) == ["int_le (line 4)"]


@pytest.mark.parametrize("seed", SEEDS)
def test_what_a_walk_keeps_equals_a_rescoring_and_moves_keep_the_groups(seed):
    """After every launch of a few iterations, the errors, sums and totals a walk updated move
    by move equal those computed again from its values; the groups' implicit constraints and
    the free variables' domains hold throughout."""
    net_text = Net(seed)
    model = net_text.model()
    net = build(model)
    walker = _walker(net, 8)
    for _ in range(6):
        walker.launch(int(stable_rng("iters", seed).randint(1, 40)))
        before = walker.state()
        walker.rescore()
        after = walker.state()
        live = before["scalars"][:, W.STATUS] != 0
        assert np.array_equal(before["errors"][live], after["errors"][live]), net_text.text
        assert np.array_equal(before["lscalars"][live, L.TOTAL], after["lscalars"][live, L.TOTAL])
        b = net.buffer
        interval = {
            v: (int(b[b[H.G_LO] + g]), int(b[b[H.G_HI] + g]))
            for g, (kind, members) in enumerate(_groups(net))
            if kind != Group.PERM
            for v in members
        }
        for values in after["values"]:
            assert _implicit_ok(net, values), net_text.text
            for v in _decision_vars(net):  # a chain's interval may hold a member's holes (soft)
                lo, hi = interval.get(v, (None, None))
                x = int(values[v])
                assert (lo <= x <= hi) if lo is not None else x in model.vars.domain(v), (v, x, net_text.text)


def _magic(n: int) -> str:
    """Magic square n as MiniZinc flattens ../shared/bench/magic_square.mzn."""
    cells = [f"m{i}_{j}" for i in range(n) for j in range(n)]
    magic = n * (n * n + 1) // 2
    L_ = [f"var 1..{n * n}: {c} :: output_var;" for c in cells]
    L_.append(f"constraint fzn_all_different_int([{', '.join(cells)}]);")
    lines = [[f"m{i}_{j}" for j in range(n)] for i in range(n)] + [[f"m{i}_{j}" for i in range(n)] for j in range(n)]
    lines += [[f"m{i}_{i}" for i in range(n)], [f"m{i}_{n - 1 - i}" for i in range(n)]]
    for line in lines:
        L_.append(f"constraint int_lin_eq([{', '.join(['1'] * n)}], [{', '.join(line)}], {magic});")
    L_.append("solve satisfy;")
    return "\n".join(L_) + "\n"


@pytest.mark.parametrize("walks", [1, 2, 7, 16])
def test_every_walk_starts_from_the_declared_bounds_copied_on_the_device(walks):
    """The walks' values before their first launch: each walk a copy of the variables' lower
    bounds (the constants' values), made on the device by doubling copies whatever the count."""
    net = build(lower(parse_items(Net(4).text, "n.fzn"), "n.fzn"))
    walker = DeviceWalks(select_devices("cpu")[0], net, seed=1)
    walker.setup(walks=walks, width=1)
    lo = net.buffer[net.buffer[H.LO] :][: net.nv]
    assert (walker.state(("values",))["values"] == np.tile(lo, (walks, 1))).all()


def test_no_move_raises_the_error(monkeypatch):
    """Without resets and restarts, a walk's total error never grows from one iteration to the
    next: a move that would raise it is never taken."""
    net = build(lower(parse_items(_magic(4), "m.fzn"), "m.fzn"))
    walker = _walker(net, 4, {"RESET_LIMIT": 10**6, "RESTART_ITERS": 10**6, "EXHAUSTIVE": 0}, monkeypatch)
    walker.launch(0)
    last = walker.state()["lscalars"][:, L.TOTAL].copy()
    for _ in range(200):
        walker.launch(1)
        st = walker.state()
        total = st["lscalars"][:, L.TOTAL]
        assert (total <= last).all()
        last = total.copy()
    assert st["scalars"][:, W.RESETS].sum() == 0 and st["scalars"][:, W.RESTARTS].sum() == 0


@pytest.mark.parametrize("width", [1, 3, 8])
@pytest.mark.parametrize("model", ["magic5", "partition24"])
def test_the_variable_moved_or_frozen_has_the_highest_error_of_those_not_frozen(model, width, monkeypatch):
    """Each iteration's X (the variable moved, or frozen at a local minimum) has the highest
    projected error (the errors of its constraints, H.INF's list) among the variables not
    frozen, whatever the walk's width: its work-items share the variables out two at a time
    (kernels/adaptive.cl), so widths that leave a pass one variable short are among them."""
    text = {"magic5": _magic(5), "partition24": _partition(24)}[model]
    net = build(lower(parse_items(text, "m.fzn"), "m.fzn"))
    params = {"FREEZE_LOCAL_MIN": 10**6, "FREEZE_SWAP": 10**6, "LOCAL_MIN": 1000, "RESET_LIMIT": 10**6}
    params |= {"RESTART_ITERS": 10**6, "EXHAUSTIVE": 0, "FAST_SWAP": 0}
    monkeypatch.setenv("FZN_GPU_LS_PARAMS", ",".join(f"{k}={v}" for k, v in params.items()))
    walker = DeviceWalks(select_devices("cpu")[0], net, seed=3)
    walker.setup(walks=3, width=width)
    walker.launch(0)
    b = net.buffer
    inf_off = b[b[H.INF_OFF] : b[H.INF_OFF] + net.ndec + 1]
    inf = b[b[H.INF] : b[H.INF] + inf_off[-1]]
    checked = 0
    for _ in range(15):
        before = walker.state()
        walker.launch(1)
        after = walker.state()
        for k in range(3):
            if before["scalars"][k, W.STATUS] == 2 or after["scalars"][k, W.STATUS] == 2:
                continue
            moves = before["scalars"][k, W.MOVES]
            free = before["frozen"][k, : net.ndec] <= moves
            newly = np.flatnonzero(after["frozen"][k, : net.ndec] != before["frozen"][k, : net.ndec])
            if not len(newly) or after["scalars"][k, W.RESETS] != before["scalars"][k, W.RESETS]:
                continue
            err = before["errors"][k]
            e = np.array([err[inf[inf_off[i] : inf_off[i + 1]]].sum() for i in range(net.ndec)])
            top = e[free].max()
            assert any(e[i] == top and free[i] for i in newly), (model, width, k)
            checked += 1
    assert checked >= 10


def test_a_local_minimum_freezes_its_variable_and_enough_frozen_trigger_a_reset(monkeypatch):
    """Every iteration without a move freezes one variable for FREEZE_LOCAL_MIN moves; with a
    tenure no walk reaches, frozen variables add up one per such iteration until RESET_LIMIT
    of them trigger a reset, which thaws them all."""
    net = build(lower(parse_items(_magic(4), "m.fzn"), "m.fzn"))
    limit = 6
    walker = _walker(
        net,
        6,
        {
            "FREEZE_LOCAL_MIN": 10**6,
            "FREEZE_SWAP": 0,
            "RESET_LIMIT": limit,
            "LOCAL_MIN": 1000,
            "RESTART_ITERS": 10**6,
            "EXHAUSTIVE": 0,
        },
        monkeypatch,
    )
    walker.launch(0)
    resets = np.zeros(6, dtype=np.int64)
    for _ in range(300):
        before = walker.state()
        walker.launch(1)
        st = walker.state()
        sw = st["scalars"]
        frozen = (st["frozen"] > sw[:, [W.MOVES]]).sum(axis=1)
        was = (before["frozen"] > before["scalars"][:, [W.MOVES]]).sum(axis=1)
        moved = sw[:, W.MOVES] != before["scalars"][:, W.MOVES]
        reset = sw[:, W.RESETS] != before["scalars"][:, W.RESETS]
        solved = sw[:, W.STATUS] == 2
        for i in range(6):
            if solved[i] or before["scalars"][i, W.STATUS] == 2:
                continue
            if reset[i]:
                assert was[i] + 1 >= limit and frozen[i] == 0
            elif moved[i]:
                assert frozen[i] == was[i]
            else:
                assert frozen[i] == was[i] + 1 < limit
        resets += reset
    assert resets.sum() > 0


def _run_adaptive(text: str, limit_ms: int, seed: int = 0):
    model = lower(parse_items(text, "t.fzn"), "t.fzn")
    checker = Checker(parse_items(text, "t.fzn"))
    found = []

    def report(values, objective):
        a = assignment(model, values)
        assert not checker.check(a), f"a non-solution was printed\n{text}"
        found.append(a)

    import time

    search = AdaptiveSearch(model, select_devices("all"), SolveOptions(seed=seed), report, build(model))
    outcome = search.run(time.monotonic() + limit_ms / 1000)
    return found, outcome


@pytest.mark.parametrize("seed", range(16))
def test_it_finds_a_solution_where_one_exists_and_none_where_none_does(seed):
    """Random small models: a solution where brute force finds one (every one checked), none
    and no claim where there is none."""
    net_text = Net(seed)
    found, outcome = _run_adaptive(net_text.text, 1500 if seed % 4 else 4000, seed)
    assert not outcome.complete
    if _brute_force_satisfiable(net_text):
        assert len(found) == 1, net_text.text
    else:
        assert not found


def _brute_force_satisfiable(net_text: Net) -> bool:
    """Whether some assignment of the decision variables, completed by the kernel's own
    rescoring, is a solution by the verifier (the error test above pins the kernel to it)."""
    model = net_text.model()
    net = build(model)
    dec = _decision_vars(net)
    combos = list(itertools.product(*(model.vars.domain(v).values() for v in dec)))
    walker = _walker(net, len(combos))
    walker.launch(0)
    rows = walker.state()["values"].copy()
    for i, combo in enumerate(combos):
        rows[i, dec] = combo
    _load(walker, rows)
    st = walker.state()
    return any(
        not violations(model, st["values"][i].astype(np.int64)) and _implicit_ok(net, st["values"][i])
        for i in range(len(combos))
    )


def test_the_groups_of_the_papers_models():
    """Magic square: one permutation of its n^2 cells, its sums soft; number partitioning as
    ../shared/bench writes it: its chain x1 < x2 < .. a sorted group, the squares invariants;
    Costas: a permutation, the differences invariants, their all_different rows soft."""
    net = build(lower(parse_items(_magic(4), "m.fzn"), "m.fzn"))
    assert net.groups["perm"] == 1 and net.ndec == 16 and net.n_inv == 0 and net.n_soft == 10
    part = (
        "\n".join(
            [f"var 1..16: a{i} :: output_var;" for i in range(1, 8)]
            + [f"var 1..256: s{i} :: is_defined_var;" for i in range(1, 8)]
            + [f"constraint int_lin_le([1, -1], [a{i}, a{i + 1}], -1);" for i in range(1, 7)]
            + [f"constraint int_times(a{i}, a{i}, s{i}) :: defines_var(s{i});" for i in range(1, 8)]
            + [
                "constraint int_lin_eq([1, 1, 1, 1, 1, 1, 1], [a1, a2, a3, a4, a5, a6, a7], 67);",
                "constraint int_lin_eq([1, 1, 1, 1, 1, 1, 1], [s1, s2, s3, s4, s5, s6, s7], 747);",
                "solve satisfy;",
            ]
        )
        + "\n"
    )
    net = build(lower(parse_items(part, "p.fzn"), "p.fzn"))
    assert net.groups["sorted_strict"] == 1 and net.n_inv == 7
    weights = net.buffer[net.buffer[H.SOFT_WEIGHT] :][: net.n_soft]
    assert sorted(weights)[-1] > 10  # the plain sum scaled up to the sum of squares' terms


def _domain_constraints(net) -> set[str]:
    """The names of the variables that carry a DOMAIN soft constraint in `net`."""
    from fzn_gpu.runtime.local_abi import Soft

    b = net.buffer
    types = b[b[H.SOFT_TYPE] :][: net.n_soft]
    rows = b[b[H.SOFT_ROW] :][: net.n_soft]
    data = b[b[H.DATA] :]
    return {int(data[rows[c]]) for c in range(net.n_soft) if types[c] == Soft.DOMAIN}


def test_an_invariant_s_domain_is_a_constraint_only_where_its_values_can_leave_it():
    """An aux variable's declared domain is a soft constraint where the function defining it
    can leave it, judged from the values its reads can take (a decision variable's domain, or
    its sorted chain's span, wider); not where it cannot (partition's squares, within their
    bounds), whose errors would always be 0."""
    text = (
        "var 1..9: x;\nvar 1..3: a;\nvar 2..6: b;\nvar 4..9: c;\n"
        "var 1..81: sq;\nvar 1..40: narrow;\nvar 0..3: half;\nvar 2..6: twice_a;\nvar 0..1: r;\n"
        "var 0..4: halved;\nvar 0..3: rest;\nvar 0..2: rest2;\nvar -9..9: by_b;\nvar 0..9: by_any;\nvar -1..5: z;\n"
        "constraint int_times(x, x, sq) :: defines_var(sq);\n"  # 1..81: within
        "constraint int_times(x, x, narrow) :: defines_var(narrow);\n"  # up to 81: leaves 1..40
        "constraint int_div(x, 2, half) :: defines_var(half);\n"  # up to 4: leaves 0..3
        "constraint int_div(x, 2, halved) :: defines_var(halved);\n"  # 0..4: within
        "constraint int_mod(x, 4, rest) :: defines_var(rest);\n"  # 0..3: within
        "constraint int_mod(x, 4, rest2) :: defines_var(rest2);\n"  # up to 3: leaves 0..2
        "constraint int_div(x, b, by_b) :: defines_var(by_b);\n"  # b in 2..6 (its chain's 1..9): within
        "constraint int_div(x, z, by_any) :: defines_var(by_any);\n"  # z may be 0: kept
        "constraint int_lin_eq([2, -1], [a, twice_a], 0) :: defines_var(twice_a);\n"  # a: its chain's 1..9
        "constraint int_lt_reif(x, 5, r) :: defines_var(r);\n"  # 0..1: within
        "constraint int_lt(a, b);\nconstraint int_lt(b, c);\n"
        "constraint int_lin_le([1, 1, 1, 1, 1, 1, 1, 1, 1, 1], "
        "[sq, narrow, half, twice_a, r, halved, rest, rest2, by_b, by_any], 200);\n"
        "solve satisfy;\n"
    )
    net = build(lower(parse_items(text, "d.fzn"), "d.fzn"))
    assert [kind for kind, _ in _groups(net)] == [Group.SORTED_STRICT]
    names = lower(parse_items(text, "d.fzn"), "d.fzn").vars.names
    assert {names[v] for v in _domain_constraints(net)} >= {"narrow", "half", "twice_a", "rest2", "by_any"}
    assert not {names[v] for v in _domain_constraints(net)} & {"sq", "r", "halved", "rest", "by_b"}
    partition = build(lower(parse_items(_partition(16), "p.fzn"), "p.fzn"))
    assert partition.n_soft == 2 and not _domain_constraints(partition)


@pytest.mark.parametrize("op", ["DIV", "MOD"])
def test_a_division_s_image_holds_every_value_it_computes(op):
    """network._image of int_div and int_mod over intervals whose divisor excludes 0 (either
    sign, dividends of either sign or both): every value the kernel's truncated division
    computes lies within it, and a division's bounds are attained; a divisor's interval
    holding 0 gives none (undefined there)."""
    from fzn_gpu.local.network import _image, _Inv
    from fzn_gpu.runtime.local_abi import Arith, Inv

    rng = stable_rng("image", op)
    for _ in range(300):
        alo = rng.randint(-30, 30)
        ahi = alo + rng.randint(0, 25)
        blo = rng.choice([rng.randint(1, 9), rng.randint(-9, -1)])
        bhi = blo + rng.randint(0, 6) if blo > 0 else min(-1, blo + rng.randint(0, 6))
        inv = _Inv(Inv.ARITH, 2, [int(Arith[op]), 0, 1], [0, 1])
        got = _image(inv, {0: (alo, ahi), 1: (blo, bhi)})
        values = set()
        for a in range(alo, ahi + 1):
            for b in range(blo, bhi + 1):
                q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
                values.add(q if op == "DIV" else a - b * q)
        assert got is not None and got[0] <= min(values) and max(values) <= got[1], (alo, ahi, blo, bhi, got)
        if op == "DIV":
            assert got == (min(values), max(values)), (alo, ahi, blo, bhi, got)
    inv = _Inv(Inv.ARITH, 2, [int(Arith[op]), 0, 1], [0, 1])
    assert _image(inv, {0: (1, 9), 1: (-2, 3)}) is None


def test_divisions_whose_domains_are_dropped_score_as_the_verdict_says():
    """Divisions and remainders by a divisor that excludes 0, their declared domains dropped
    where the image stays within them and kept where it does not, beside one whose divisor
    may be 0: every assignment scores 0 exactly on solutions."""
    _error_is_zero_exactly_on_solutions(
        "var -4..6: x :: output_var;\nvar 2..3: d :: output_var;\nvar -1..1: e :: output_var;\n"
        "var -3..3: q;\nvar -2..2: r;\nvar 0..2: h;\nvar -9..9: u;\n"
        "constraint int_div(x, d, q) :: defines_var(q);\nconstraint int_mod(x, d, r) :: defines_var(r);\n"
        "constraint int_div(x, 2, h) :: defines_var(h);\nconstraint int_div(x, e, u) :: defines_var(u);\n"
        "constraint int_lin_le([1, 1, 1, -1], [q, r, h, u], 3);\nsolve satisfy;\n"
    )


def test_a_decision_variable_without_bounds_is_refused_by_name():
    """The first decision variable without bounds is named (one that a constraint reads is
    refused earlier, for its unbounded sum)."""
    text = (
        "var 1..5: a :: output_var;\nvar int: free :: output_var;\nvar int: late :: output_var;\n"
        "constraint int_le(a, 3);\nsolve satisfy;\n"
    )
    with pytest.raises(NotLocal, match="its variable free has no bounds"):
        build(lower(parse_items(text, "t.fzn"), "t.fzn"))


def test_a_kind_without_an_error_function_is_one_clear_refusal(tmp_path):
    text = (
        "var 1..3: a :: output_var;\nvar 1..3: b :: output_var;\nvar 1..3: c :: output_var;\n"
        "constraint fzn_gpu_circuit(1, [a, b, c]);\nsolve satisfy;\n"
    )
    r = run("--engine", "adaptive", fzn(tmp_path, text))
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert re.search(r"adaptive search cannot solve this model: .*fzn_gpu_circuit", r.stderr), r.stderr


def test_the_cli_prints_a_checked_solution_and_unknown_at_the_limit(tmp_path):
    r = run("--engine", "adaptive", "--check", "-s", fzn(tmp_path, _magic(4)))
    assert r.returncode == 0 and r.stdout.count("----------") == 1 and "lsIterations" in r.stdout, r.stderr
    unsat = (
        "var 1..3: a :: output_var;\nvar 1..3: b :: output_var;\nconstraint int_lin_eq([1, 1], [a, b], 9);\n"
        "solve satisfy;\n"
    )
    r = run("--engine", "adaptive", "-t", "1500", fzn(tmp_path, unsat, "u.fzn"))
    assert r.returncode == 0 and "----------" not in r.stdout and "=====UNKNOWN=====" in r.stdout, r.stdout
    assert "UNSATISFIABLE" not in r.stdout


def test_an_empty_domain_under_the_flag_is_unsatisfiable_as_complete_search_says(tmp_path):
    """`--engine adaptive` builds no complete-search tables for the run it serves, but a
    variable declared with an empty domain still ends the run as the packed model does."""
    text = "var 1..3: a :: output_var;\nvar 4..3: e :: output_var;\nsolve satisfy;\n"
    r = run("--engine", "adaptive", fzn(tmp_path, text))
    assert r.returncode == 0 and "=====UNSATISFIABLE=====" in r.stdout, (r.stdout, r.stderr)


def test_a_sum_s_bound_is_exact_at_every_size():
    """network.sum_bound (|rhs| plus each |coefficient| times its variable's largest size) the
    same through numpy's int64 as through Python's integers, and beyond 64 bits."""
    from fzn_gpu.local.network import sum_bound

    rng = stable_rng(5)
    # (terms, coefficients' scale, domains' scale): Python's sum, int64's, near its limit, beyond
    for n, big, span in ((3, 10, 2**40), (40, 10, 2**20), (300, 2**10, 2**28), (40, 2**24, 2**21), (50, 2**70, 2**40)):
        lo = np.array([rng.randint(-span, 0) for _ in range(n)], dtype=np.int64)
        hi = lo + np.array([rng.randint(0, span) for _ in range(n)], dtype=np.int64)
        terms = {x: rng.randint(-1000, 1000) * big + 1 for x in range(n)}
        want = 7 + sum(abs(c) * max(abs(int(lo[x])), abs(int(hi[x]))) for x, c in terms.items())
        assert sum_bound(terms, -7, lo, hi) == want
    # a coefficient beyond 64 bits on a variable fixed at 0 adds nothing, and breaks nothing
    lo = hi = np.zeros(40, dtype=np.int64)
    assert sum_bound({x: 2**70 for x in range(40)}, 3, lo, hi) == 3


def test_a_constant_beyond_32_bits_goes_to_adaptive_search_alone_where_it_can(tmp_path):
    """Complete search cannot hold the constant (its tables are 32-bit); for one solution of a
    satisfaction model, Adaptive Search alone runs, says so, and never claims unsatisfiability;
    for all solutions or an objective the refusal stays, naming the line."""
    model = (
        "var 1..9: a :: output_var;\nvar 1..9: b :: output_var;\nvar 1..9: c :: output_var;\n"
        "constraint fzn_all_different_int([a, b, c]);\n"
        f"constraint int_lin_eq([{BIG}, {BIG}, {BIG}], [a, b, c], {{}});\n"
    )
    r = run("--check", "-s", fzn(tmp_path, model.format(20 * BIG) + "solve satisfy;\n"))
    assert r.returncode == 0 and r.stdout.count("----------") == 1 and "lsIterations" in r.stdout, r.stderr
    assert "Adaptive Search alone" in r.stderr
    r = run("-t", "1500", fzn(tmp_path, model.format(30 * BIG) + "solve satisfy;\n", "u.fzn"))  # 9 + 8 + 7 < 30
    assert r.returncode == 0 and "=====UNKNOWN=====" in r.stdout and "UNSATISFIABLE" not in r.stdout, r.stdout
    refused = (
        (["-a"], "solve satisfy;\n"),
        ([], "solve maximize a;\n"),
        (["--engine", "complete"], "solve satisfy;\n"),
    )
    for args, tail in refused:
        r = run(*args, fzn(tmp_path, model.format(20 * BIG) + tail, "r.fzn"))
        assert r.returncode != 0 and "Traceback" not in r.stderr and "r.fzn:5" in r.stderr, r.stderr
        assert "beyond" in r.stderr and "----------" not in r.stdout


def test_a_seed_gives_the_same_answer_and_several_solutions_go_to_complete_search(tmp_path):
    path = fzn(tmp_path, _magic(4))
    first = run("--engine", "adaptive", "--check", "-r", "7", "--devices", "cpu", path)
    again = run("--engine", "adaptive", "--check", "-r", "7", "--devices", "cpu", path)
    assert first.returncode == 0 and first.stdout == again.stdout and "----------" in first.stdout
    many = run("--engine", "adaptive", "--check", "-n", "3", path)
    assert many.stdout.count("----------") == 3 and "several by complete search" in many.stderr


def test_a_solution_the_verifier_rejects_is_never_printed(monkeypatch):
    """Where the kernel's error and the model disagree, the run says so and prints nothing."""
    import fzn_gpu.engine.adaptive as A

    monkeypatch.setattr(A, "violations", lambda model, values: ["int_lin_eq (line 1)"])
    text = _magic(3)
    model = lower(parse_items(text, "t.fzn"), "t.fzn")
    printed = []
    import time

    search = AdaptiveSearch(model, select_devices("all"), SolveOptions(), lambda v, o: printed.append(v), build(model))
    outcome = search.run(time.monotonic() + 20)
    assert not printed and outcome.error and "internal error" in outcome.error


def test_the_parameters_can_be_set_for_tuning_runs(monkeypatch):
    net = build(lower(parse_items(_magic(3), "m.fzn"), "m.fzn"))
    monkeypatch.setenv("FZN_GPU_LS_PARAMS", "LOCAL_MIN=123,RESET_PERCENT=7")
    p = walk_params(net, 1)
    assert p[Param.LOCAL_MIN] == 123 and p[Param.RESET_PERCENT] == 7
    monkeypatch.setenv("FZN_GPU_LS_PARAMS", "NOPE=1")
    from fzn_gpu.errors import FznError

    with pytest.raises(FznError):
        walk_params(net, 1)


def test_plateaus_are_followed_more_in_a_permutation_of_linear_errors():
    """Magic square's and number partitioning's variables are one permutation and their errors
    all distances from linear relations (their all_different is the permutation itself): their
    walks follow plateaus 94 times in 100. Costas-like rows, an all_different over
    differences, count repeated values: there plateaus keep the default, as they do with a
    clause among linear constraints, and with linear constraints over free variables."""
    from fzn_gpu.engine.adaptive import LOCAL_MIN, LOCAL_MIN_LINEAR

    magic = build(lower(parse_items(_magic(4), "m.fzn"), "m.fzn"))
    partition = build(lower(parse_items(_partition(16), "p.fzn"), "p.fzn"))
    costas = "\n".join(
        [f"var 1..4: x{i} :: output_var;" for i in range(4)]
        + [f"var -3..3: d{i} :: is_defined_var;" for i in range(3)]
        + ["constraint fzn_all_different_int([x0, x1, x2, x3]);"]
        + [f"constraint int_lin_eq([1, -1, 1], [d{i}, x{i + 1}, x{i}], 0) :: defines_var(d{i});" for i in range(3)]
        + ["constraint fzn_all_different_int([d0, d1, d2]);", "solve satisfy;", ""]
    )
    clause = (
        "var 0..5: a :: output_var;\nvar 0..5: b :: output_var;\nvar bool: p :: output_var;\n"
        "var bool: q :: output_var;\nconstraint int_lin_le([1, 1], [a, b], 6);\n"
        "constraint bool_clause([p, q], []);\nsolve satisfy;\n"
    )
    free = "var 0..5: a :: output_var;\nvar 0..5: b :: output_var;\nconstraint int_lin_eq([1, 2], [a, b], 7);\nsolve satisfy;\n"
    others = [build(lower(parse_items(t, "c.fzn"), "c.fzn")) for t in (costas, clause, free)]
    assert magic.linear_permutation and partition.linear_permutation
    assert not any(net.linear_permutation for net in others)
    assert LOCAL_MIN_LINEAR < LOCAL_MIN
    assert walk_params(magic, 32)[Param.LOCAL_MIN] == walk_params(partition, 1)[Param.LOCAL_MIN] == LOCAL_MIN_LINEAR
    assert all(walk_params(net, 32)[Param.LOCAL_MIN] == LOCAL_MIN for net in others)


def _same_walks(net, monkeypatch, launches: int = 5, walks: int = 6) -> None:
    """Walks with FAST_SWAP on and off, the same seed, equal in every part of their state after
    each launch."""
    fast = _walker(net, walks, {"FAST_SWAP": 1}, monkeypatch)
    slow = _walker(net, walks, {"FAST_SWAP": 0}, monkeypatch)
    for k in range(launches):
        fast.launch(7 + 5 * k)
        slow.launch(7 + 5 * k)
        a, b = fast.state(), slow.state()
        for part in a:
            assert np.array_equal(a[part], b[part]), (part, k)


@pytest.mark.parametrize("n", [3, 4, 5])
def test_swaps_scored_from_sums_follow_the_same_walk_on_magic_squares(n, monkeypatch):
    """A permutation's swaps scored from the constraints' sums (kernels/adaptive.cl, swap_delta)
    get the general evaluation's scores and null flags: with the same seed, the walks make the
    same moves, resets and restarts."""
    _same_walks(build(lower(parse_items(_magic(n), "m.fzn"), "m.fzn")), monkeypatch)


def test_swaps_scored_from_sums_follow_the_same_walk_where_invariants_and_other_kinds_mix(monkeypatch):
    """On random models whose permutations share variables with invariants and constraints of
    other kinds, the fast scoring falls back move by move, and the walks stay the same."""
    tried = 0
    for seed in SEEDS:
        net = build(Net(seed).model())
        if any(kind == Group.PERM for kind, _ in _groups(net)):
            _same_walks(net, monkeypatch, launches=3, walks=4)
            tried += 1
    assert tried >= 5


def _weighted_sums(n: int, coef: int) -> str:
    """A permutation of 1..n under two weighted sums of half of it each, every coefficient
    `coef` but the last 1 (so that no common factor divides them out), the constant coef n."""
    xs = [f"x{i}" for i in range(n)]
    h = n // 2
    L_ = [f"var 1..{n}: {x} :: output_var;" for x in xs]
    L_.append(f"constraint fzn_all_different_int([{', '.join(xs)}]);")
    coefs = ", ".join([str(coef)] * (h - 1) + ["1"])
    for part in (xs[:h], xs[h:]):
        L_.append(f"constraint int_lin_le([{coefs}], [{', '.join(part)}], {coef * n});")
    L_.append("solve satisfy;")
    return "\n".join(L_) + "\n"


def test_swaps_are_scored_in_32_bits_exactly_where_every_score_fits():
    """LsNetwork.sums_32: a magic square's swaps (sums of ones, all_different) are scored in
    32-bit arithmetic; not where a swap reads an invariant (partition's squares), nor where a
    weighted sum's bound times what a swap adds up could leave 31 bits (the bound's rule: 8 W B
    T below 2^31), on either side of that line; nor outside swaps-only networks."""

    def net(text: str):
        return build(lower(parse_items(text, "s.fzn"), "s.fzn"))

    assert net(_magic(4)).sums_32 and net(_magic(30)).sums_32
    assert not net(_partition(16)).sums_32  # its squares are invariants
    assert not net(_unary_mix(6)).sums_32  # not swaps-only
    # n = 10: B = coef n (the constant) + (4 coef + 1) n, T = 2 x 1 term a variable (its sum;
    # the all_different is the permutation itself): 8 B T < 2^31 up to coef = 2,684,354
    assert 8 * (10 * 2_684_354 + (4 * 2_684_354 + 1) * 10) * 2 < 2**31
    assert 8 * (10 * 2_684_355 + (4 * 2_684_355 + 1) * 10) * 2 >= 2**31
    assert net(_weighted_sums(10, 2_684_354)).sums_32
    assert not net(_weighted_sums(10, 2_684_355)).sums_32
    # and each variable's terms name each constraint once (the 32-bit program scores a
    # partner's term alone): a list naming one twice is refused
    from fzn_gpu.local.network import _sums_fit_32
    from fzn_gpu.runtime.local_abi import SwapTerm

    m = net(_magic(4))
    b = m.buffer.astype(np.int64)
    off = b[b[H.SW_OFF] : b[H.SW_OFF] + m.ndec + 1]
    rows = b[b[H.SW] : b[H.SW] + off[-1] * SwapTerm.SIZE].reshape(-1, SwapTerm.SIZE)
    model = lower(parse_items(_magic(4), "s.fzn"), "s.fzn")
    from fzn_gpu.local.network import _Builder

    builder = _Builder(model)
    builder.constraints()
    softs, lo, hi = builder.softs, builder.lo, builder.hi
    weights = [1] * len(softs)
    assert _sums_fit_32(off, rows.ravel(), softs, weights, lo, hi)
    twice = rows.copy()
    twice[1, SwapTerm.C] = twice[0, SwapTerm.C]  # variable 0's second term on its first's constraint
    assert off[1] >= 2 and not _sums_fit_32(off, twice.ravel(), softs, weights, lo, hi)


@pytest.mark.parametrize("n", [3, 5])
def test_swaps_scored_in_32_bits_follow_the_same_walk_as_in_64(n, monkeypatch):
    """The same network's walks with swaps scored in 32 bits and in 64 (the program built each
    way), the same seed: equal in every part of their state after each launch."""
    from dataclasses import replace

    net = build(lower(parse_items(_magic(n), "m.fzn"), "m.fzn"))
    assert net.sums_32
    narrow, wide = _walker(net, 6), _walker(replace(net, sums_32=False), 6)
    assert narrow.kernel is not wide.kernel
    for k in range(5):
        narrow.launch(7 + 5 * k)
        wide.launch(7 + 5 * k)
        a, b = narrow.state(), wide.state()
        for part in a:
            assert np.array_equal(a[part], b[part]), (part, k)


def _partition(n: int) -> str:
    """Number partitioning as the paper models it (models/local/partition.mzn), flattened as
    MiniZinc does: each square an invariant of its variable alone."""
    h = n // 2
    xs, ys = [f"x{i}" for i in range(n)], [f"y{i}" for i in range(h)]
    L_ = [f"var 1..{n}: {x} :: output_var;" for x in xs] + [f"var 1..{n * n}: {y};" for y in ys]
    L_.append(f"constraint fzn_all_different_int([{', '.join(xs)}]);")
    L_ += [f"constraint int_times(x{i}, x{i}, y{i}) :: defines_var(y{i});" for i in range(h)]
    L_.append(f"constraint int_lin_eq([{', '.join(['1'] * h)}], [{', '.join(xs[:h])}], {n * (n + 1) // 4});")
    L_.append(f"constraint int_lin_eq([{', '.join(['1'] * h)}], [{', '.join(ys)}], {n * (n + 1) * (2 * n + 1) // 12});")
    L_.append("solve satisfy;")
    return "\n".join(L_) + "\n"


def _unary_mix(n: int) -> str:
    """A permutation whose variables wake invariants of one variable each, of every kind the
    swap terms take: a constant array's element (undefined past its end, and a declared
    domain narrower than its values), a division by a constant, a linear definition; and one
    product of two of them, whose variables' swaps are scored the general way."""
    xs = [f"x{i}" for i in range(n)]
    table = ", ".join(str(3 * k - 5) for k in range(1, n))  # x = n is past its end: undefined
    L_ = [f"var 1..{n}: {x} :: output_var;" for x in xs]
    L_ += [f"var -2..{3 * n}: e{i};" for i in range(n)]
    # declared domains the divisions and definitions leave at some values: DOMAIN errors
    L_ += [f"var 0..{n // 3}: d{i};" for i in range(n)] + [f"var -{n // 4}..{n}: l{i};" for i in range(n)]
    L_ += [f"var 1..{n * n}: p;", f"constraint fzn_all_different_int([{', '.join(xs)}]);"]
    for i in range(n):
        L_.append(f"constraint array_int_element(x{i}, [{table}], e{i}) :: defines_var(e{i});")
        L_.append(f"constraint int_div(x{i}, 2, d{i}) :: defines_var(d{i});")
        L_.append(f"constraint int_lin_eq([1, 1], [l{i}, x{i}], {n // 2}) :: defines_var(l{i});")
    L_.append("constraint int_times(x0, x1, p) :: defines_var(p);")
    es, ds = (", ".join(f"{k}{i}" for i in range(n)) for k in "ed")
    L_.append(f"constraint int_lin_le([{', '.join(['1'] * n)}], [{es}], {n});")
    L_.append(f"constraint int_lin_eq([{', '.join(str(1 + i % 3) for i in range(n))}], [{ds}], {n});")
    half = ", ".join(f"l{i}" for i in range(n // 2))
    L_.append(f"constraint int_lin_eq([{', '.join(['1'] * (n // 2))}, 2, -1], [{half}, x2, x3], 1);")
    L_.append(f"constraint int_le(p, {n});")
    L_.append("solve satisfy;")
    return "\n".join(L_) + "\n"


def _random_unary(seed: int) -> str:
    """A random permutation with random invariants of one of its variables each (every
    arithmetic operation with a constant, on either side, or the variable itself (SwapTerm's
    inline form), a constant array's element
    that may end before the variable's values, a linear definition), declared domains that
    their values may leave, and random linear equations, inequalities and disequalities over
    the variables and the invariants'."""
    rng = np.random.default_rng([seed, 17])
    n = int(rng.integers(4, 9))
    xs = [f"x{i}" for i in range(n)]
    L_ = [f"var 1..{n}: {x} :: output_var;" for x in xs]
    defs, ys = [], []
    for k in range(int(rng.integers(n, 2 * n + 1))):
        x, y, c = str(rng.choice(xs)), f"y{k}", int(rng.choice([-3, -2, 2, 3, 5]))
        form = int(rng.integers(10))
        if form < 7:
            op = ["int_times", "int_div", "int_mod", "int_min", "int_max", "int_pow", "int_abs"][form]
            other = x if op == "int_times" and rng.random() < 0.5 else str(abs(c) if op == "int_pow" else c)
            # the constant first now and then (its own stream: the models' others stay)
            a, b = (other, x) if other != x and np.random.default_rng([seed, 18, k]).random() < 0.3 else (x, other)
            defs.append(
                f"constraint {op}({x}, {y}) :: defines_var({y});"
                if op == "int_abs"
                else f"constraint {op}({a}, {b}, {y}) :: defines_var({y});"
            )
        elif form < 9:
            table = ", ".join(str(int(v)) for v in rng.integers(-2 * n, 2 * n, int(rng.integers(n - 2, n + 1))))
            defs.append(f"constraint array_int_element({x}, [{table}], {y}) :: defines_var({y});")
        else:
            defs.append(f"constraint int_lin_eq([1, {c}], [{y}, {x}], {int(rng.integers(-n, n))}) :: defines_var({y});")
        lo = int(rng.integers(-3 * n, 0))
        L_.append(f"var {lo}..{lo + int(rng.integers(n, 6 * n))}: {y};")
        ys.append(y)
    L_.append(f"constraint fzn_all_different_int([{', '.join(xs)}]);")
    L_ += defs
    for _ in range(int(rng.integers(2, 5))):
        terms = rng.choice(xs + ys, size=int(rng.integers(2, 5)), replace=False)
        coefs = rng.choice([-3, -2, -1, 1, 2, 3], size=len(terms))
        kind = str(rng.choice(["int_lin_eq", "int_lin_le", "int_lin_ne"]))
        rhs = int(rng.integers(-2 * n, 4 * n))
        L_.append(f"constraint {kind}([{', '.join(map(str, coefs))}], [{', '.join(terms)}], {rhs});")
    L_.append("solve satisfy;")
    return "\n".join(L_) + "\n"


def _swap_marked(net) -> np.ndarray:
    b = net.buffer
    return b[b[H.SW_OK] :][: net.ndec].astype(bool)


@pytest.mark.parametrize("n", [8, 16])
def test_swaps_scored_from_terms_follow_the_same_walk_through_squares(n, monkeypatch):
    """Number partitioning's squares are invariants of one variable each: its swaps are scored
    from the swap terms (every variable marked), and the walks make the same moves as with
    the general evaluation."""
    net = build(lower(parse_items(_partition(n), "p.fzn"), "p.fzn"))
    assert _swap_marked(net).all()
    _same_walks(net, monkeypatch, launches=4, walks=6)


@pytest.mark.parametrize("n", [6, 9])
def test_swaps_scored_from_terms_follow_the_same_walk_through_unary_invariants(n, monkeypatch):
    """Elements (undefined past the array, a value the general evaluation takes as it is),
    divisions by a constant and linear definitions, each of one variable, with DOMAIN errors on
    their variables: the walks equal the general evaluation's. The permutation's variables
    include two that a product of both reads, so none of them is marked; without it, all are."""
    text = _unary_mix(n)
    net = build(lower(parse_items(text, "u.fzn"), "u.fzn"))
    assert not _swap_marked(net).any()
    _same_walks(net, monkeypatch, launches=4, walks=6)
    lone = build(lower(parse_items(re.sub(r".*(int_times|int_le\(p|: p;).*\n", "", text), "u.fzn"), "u.fzn"))
    assert _swap_marked(lone).all()
    _same_walks(lone, monkeypatch, launches=4, walks=6)


def test_swaps_scored_from_terms_follow_the_same_walk_on_random_unary_invariants(monkeypatch):
    """Random permutations with random invariants of one variable each and random linear
    constraints: their variables carry swap terms (most models: all of them), and the walks
    equal the general evaluation's, launch after launch."""
    marked = 0
    for seed in range(16):
        net = build(lower(parse_items(_random_unary(seed), "r.fzn"), "r.fzn"))
        marked += bool(_swap_marked(net).all())
        _same_walks(net, monkeypatch, launches=3, walks=4)
    assert marked >= 12


class _NarrowKernel:
    """A kernel whose groups may hold `most` work-items at most (a GPU's registers)."""

    def __init__(self, kernel, most: int):
        self.kernel, self.most = kernel, most

    def get_work_group_info(self, what, device):
        return self.most

    def __getattr__(self, name):
        return getattr(self.kernel, name)


def _narrow_program(monkeypatch, most: int) -> None:
    import fzn_gpu.engine.adaptive as adaptive

    real = adaptive._program

    def program(device, cap=0, sums_32=False):
        ctx, kernel, rescorer = real(device, cap, sums_32)
        return ctx, _NarrowKernel(kernel, most), rescorer

    monkeypatch.setattr(adaptive, "_program", program)


def test_the_adaptive_program_caps_an_nvidia_gpu_s_registers(monkeypatch):
    """On NVIDIA's OpenCL the adaptive program is built with REGISTER_CAP registers a work-item
    (more walks resident at once), REGISTER_CAP_SWAPS for a network whose every move is a swap
    scored from swap terms (magic squares and partition, not a product of two permutation
    variables); elsewhere without the option, which other compilers refuse; a cap in
    FZN_GPU_CL_OPTIONS replaces it."""
    from dataclasses import replace

    import fzn_gpu.engine.adaptive as adaptive

    pocl = select_devices("cpu")[0]
    nvidia = replace(pocl, platform="NVIDIA CUDA", is_gpu=True)
    swaps = [build(lower(parse_items(t, "m.fzn"), "m.fzn")) for t in (_magic(4), _partition(16), _unary_mix(6))]
    assert [net.swaps_only for net in swaps] == [True, True, False]
    assert adaptive.register_cap(nvidia, True) == adaptive.REGISTER_CAP_SWAPS
    assert adaptive.register_cap(nvidia, False) == adaptive.REGISTER_CAP
    assert adaptive.register_cap(pocl, True) == adaptive.register_cap(pocl, False) == 0
    monkeypatch.delenv("FZN_GPU_CL_OPTIONS", raising=False)
    assert f"-cl-nv-maxrregcount={adaptive.REGISTER_CAP}" in adaptive.program_options(nvidia, adaptive.REGISTER_CAP)
    assert not any("maxrregcount" in o for o in adaptive.program_options(pocl, 0))
    monkeypatch.setenv("FZN_GPU_CL_OPTIONS", "-cl-nv-maxrregcount=48 -DX")
    assert adaptive.program_options(nvidia, 64) == ["-cl-std=CL1.2", "-cl-nv-maxrregcount=48", "-DX"]
    assert "-DLS_SUMS_32" in adaptive.program_options(pocl, 0, sums_32=True)
    assert adaptive.program_variant(nvidia, swaps[0]) == (adaptive.REGISTER_CAP_SWAPS, True)
    assert adaptive.program_variant(nvidia, swaps[1]) == (adaptive.REGISTER_CAP_SWAPS, False)
    assert adaptive.program_variant(nvidia, swaps[2]) == (adaptive.REGISTER_CAP, False)


def test_a_width_beyond_the_kernel_s_group_limit_is_refused_or_narrowed(monkeypatch):
    """A group wider than the kernel may launch on the device (OUT_OF_RESOURCES on an H100 at
    512 work-items) is refused with a message where FZN_GPU_LS_WIDTH asked for it, and made
    narrower, with more walks, where the shape chose it."""
    import fzn_gpu.engine.adaptive as adaptive
    from fzn_gpu.errors import FznError

    net = build(lower(parse_items(_magic(3), "m.fzn"), "m.fzn"))
    _narrow_program(monkeypatch, 16)
    monkeypatch.setenv("FZN_GPU_LS_WIDTH", "64")
    walker = DeviceWalks(select_devices("cpu")[0], net, seed=1)
    with pytest.raises(FznError, match="FZN_GPU_LS_WIDTH=64.*16"):
        walker.setup()
    monkeypatch.delenv("FZN_GPU_LS_WIDTH")
    monkeypatch.setattr(adaptive, "shape", lambda net, device: (4, 64))
    walker = DeviceWalks(select_devices("cpu")[0], net, seed=1)
    walker.setup()
    assert (walker.walks, walker.width) == (16, 16)
    walker.kernel = walker.kernel.kernel  # the real one, which PoCL launches 16 wide
    walker.launch(3)
    assert walker.state(("scalars",))["scalars"][:, W.ITER].min() > 0  # every narrower walk ran


def test_walks_are_narrowest_where_most_variables_share_their_error():
    """Number partitioning's first half carries the same two sums (each square's DOMAIN is its
    variable's alone), so its walks mostly sample the whole neighbourhood: on a GPU the
    narrowest groups, the most walks. Magic square's cells carry their own row and column, and
    a model with one variable per constraint shares nothing: they keep the width their largest
    neighbourhood keeps busy."""
    from types import SimpleNamespace

    from fzn_gpu.engine.adaptive import ITEMS_PER_CU, WIDTHS, shape
    from fzn_gpu.local.network import _shares_error

    gpu = SimpleNamespace(is_gpu=True, compute_units=4, max_alloc=1 << 34, global_mem=1 << 36)
    partition = build(lower(parse_items(_partition(64), "p.fzn"), "p.fzn"))
    magic = build(lower(parse_items(_magic(12), "m.fzn"), "m.fzn"))
    assert partition.shared_error and not magic.shared_error
    assert shape(partition, gpu) == (4 * ITEMS_PER_CU // WIDTHS[0], WIDTHS[0])
    assert shape(magic, gpu)[1] == next(w for w in WIDTHS if 4 * w >= magic.max_candidates) > WIDTHS[0]
    # and a reset there gives fresh values to a twentieth of them, not a quarter
    from fzn_gpu.engine.adaptive import RESET_PERCENT, RESET_PERCENT_SHARED

    assert walk_params(partition, WIDTHS[0])[Param.RESET_PERCENT] == RESET_PERCENT_SHARED < RESET_PERCENT
    assert walk_params(magic, WIDTHS[-1])[Param.RESET_PERCENT] == RESET_PERCENT
    # the rule itself: a constraint only one variable carries does not tell them apart
    assert _shares_error([[0, 1, 5], [0, 1, 6], [], []])
    assert not _shares_error([[0, 1, 5], [0, 2, 6], [2], []])
    assert not _shares_error([[5], [6], [7]])
    assert not _shares_error([[0]])


def _random_symmetric(seed: int) -> str:
    """A random permutation whose variables fall in blocks that the constraints treat alike:
    each block's variables carry the same coefficients on two random sums and the same
    invariant (a product, division, remainder or square with the block's constant, declared
    wide enough that its domain is dropped, or narrow enough that it stays). Near misses
    beside: a block may have one member whose invariant reads another constant, and two blocks
    may differ only in one coefficient."""
    rng = np.random.default_rng([seed, 23])
    n = int(rng.integers(6, 11))
    nb = int(rng.integers(2, 5))
    block = rng.integers(0, nb, n)
    block[:3] = 0  # one block of three at least
    c1 = rng.integers(-2, 3, nb)
    c2 = rng.integers(-2, 3, nb)
    if nb > 2 and rng.random() < 0.5:  # blocks 1 and 2 apart by one coefficient alone
        c1[2], c2[2] = c1[1] + 1, c2[1]
    forms = [None, "int_times", "int_div", "int_mod", "square"]
    form = [forms[int(rng.integers(len(forms)))] for _ in range(nb)]
    if form[0] in ("int_div", "int_mod"):  # forms whose images the network bounds, so that
        form[0] = (None, "int_times", "square")[int(rng.integers(3))]  # no DOMAIN stays on block 0
    const = rng.integers(2, 5, nb)
    narrow = rng.random(nb) < 0.25
    narrow[0] = False  # so that a class remains whatever the near miss
    odd = int(rng.integers(n)) if rng.random() < 0.5 else -1  # its constant is another
    xs = [f"x{i}" for i in range(n)]
    L_ = [f"var 1..{n}: {x} :: output_var;" for x in xs]
    L_.append(f"constraint fzn_all_different_int([{', '.join(xs)}]);")
    t1, t2 = [], []
    for i in range(n):
        b = int(block[i])
        if c1[b]:
            t1.append((int(c1[b]), xs[i]))
        if form[b] is None:
            continue
        k = int(const[b]) + (1 if i == odd else 0)
        L_.append(f"var {'0..2' if narrow[b] else f'-{4 * n * n}..{4 * n * n}'}: y{i};")
        call = f"int_times(x{i}, x{i}, y{i})" if form[b] == "square" else f"{form[b]}(x{i}, {k}, y{i})"
        L_.append(f"constraint {call} :: defines_var(y{i});")
        if c2[b]:
            t2.append((int(c2[b]), f"y{i}"))
    for terms, kind in ((t1, "int_lin_eq"), (t2, "int_lin_le")):
        if terms:
            coefs, names = zip(*terms)
            rhs = int(rng.integers(-n, 2 * n))
            L_.append(f"constraint {kind}([{', '.join(map(str, coefs))}], [{', '.join(names)}], {rhs});")
    L_.append("solve satisfy;")
    return "\n".join(L_) + "\n"


def _swap_classes(net) -> np.ndarray:
    b = net.buffer
    return b[b[H.SW_CLASS] :][: net.ndec].astype(np.int64)


def _same_terms(net, model) -> list[set[int]]:
    """The decision variables whose swap terms match, found the plain way: each term's
    constraint and coefficient and, through an invariant, the invariant's kind and row read
    with the variable blanked and its constants by value; no DOMAIN or all_different term."""
    from fzn_gpu.local.network import _read_slots
    from fzn_gpu.runtime.local_abi import SWAP_ALLDIFF, SWAP_DOMAIN, Inv, SwapTerm

    b = net.buffer.astype(np.int64)
    lo = b[b[H.LO] :][: net.nv]
    off = b[b[H.SW_OFF] :][: net.ndec + 1]
    rows = b[b[H.SW] :][: off[-1] * SwapTerm.SIZE].reshape(-1, SwapTerm.SIZE)
    ok = b[b[H.SW_OK] :][: net.ndec]
    dec = _decision_vars(net)
    keys: dict[tuple, set[int]] = {}
    for i in range(net.ndec):
        terms = rows[off[i] : off[i + 1]]
        if not ok[i] or any(t[SwapTerm.KIND] in (SWAP_ALLDIFF, SWAP_DOMAIN) for t in terms):
            continue
        key = []
        for t in terms:
            f: tuple = ()
            k = int(t[SwapTerm.INV])
            if k >= 0:
                assert b[b[H.INV_TYPE] + k] == Inv.ARITH  # the generator's invariants: [op, a, b]
                row = [int(x) for x in b[b[H.DATA] + b[b[H.INV_ROW] + k] :][:3]]
                slots = _read_slots(Inv.ARITH, row)
                f = tuple(
                    "v" if p in slots and x == dec[i] else ("c", lo[x]) if p in slots else x for p, x in enumerate(row)
                )
            key.append((int(t[SwapTerm.C]), int(t[SwapTerm.COEF]), f))
        keys.setdefault(tuple(sorted(key, key=repr)), set()).add(i)
    return [s for s in keys.values() if len(s) > 1]


def test_swap_classes_are_the_variables_whose_terms_match():
    """SW_CLASS (network._swap_classes): number partitioning's halves are a class each, a magic
    square's cells none; on random permutations whose blocks the constraints treat alike, the
    classes are exactly the sets of variables whose swap terms match read the plain way, and
    the near misses (another constant, another coefficient, a domain that stays) fall out."""
    part = build(lower(parse_items(_partition(16), "p.fzn"), "p.fzn"))
    cls = _swap_classes(part)
    assert len(set(cls[:8].tolist())) == 1 and len(set(cls[8:].tolist())) == 1 and cls[0] != cls[8] >= 0
    assert (_swap_classes(build(lower(parse_items(_magic(5), "m.fzn"), "m.fzn"))) == -1).all()
    shared = 0
    for seed in range(40):
        model = lower(parse_items(_random_symmetric(seed), "s.fzn"), "s.fzn")
        net = build(model)
        cls = _swap_classes(net)
        found = [set(np.flatnonzero(cls == c).tolist()) for c in set(cls.tolist()) - {-1}]
        assert sorted(map(sorted, found)) == sorted(map(sorted, _same_terms(net, model))), seed
        shared += len(found)
    assert shared >= 40


@pytest.mark.parametrize("seed", range(12))
def test_a_swap_within_a_class_changes_no_constraint(seed):
    """Every swap of two variables of one class, from random permutations, rescored by the
    kernel (invariants computed again): every soft constraint's sum and error as before, so
    the kernel's passing over such partners skips only null moves."""
    text = _random_symmetric(seed)
    net = build(lower(parse_items(text, "s.fzn"), "s.fzn"))
    cls = _swap_classes(net)
    dec = _decision_vars(net)
    pairs = [(i, j) for i in range(net.ndec) for j in range(i + 1, net.ndec) if cls[i] >= 0 and cls[i] == cls[j]]
    assert pairs, text
    rng = np.random.default_rng([seed, 29])
    walker = _walker(net, 1 + len(pairs))
    walker.launch(0)
    rows = walker.state()["values"].copy()
    for start in range(3):
        base = rows[0].copy()
        base[dec] = rng.permutation(net.ndec) + 1
        rows[:] = base
        for r, (i, j) in enumerate(pairs, 1):
            rows[r, dec[i]], rows[r, dec[j]] = base[dec[j]], base[dec[i]]
        _load(walker, rows)
        st = walker.state()
        for part in ("errors", "sums"):
            assert (st[part][1 : 1 + len(pairs)] == st[part][0]).all(), (part, start, text)


def test_walks_passing_over_a_class_s_swaps_follow_the_general_evaluation(monkeypatch):
    """On random permutations with classes, the walks scoring swaps from their terms (passing
    over partners of X's class) and those evaluating every move the general way, the same
    seed: equal in every part of their state after each launch."""
    for seed in range(10):
        net = build(lower(parse_items(_random_symmetric(seed), "s.fzn"), "s.fzn"))
        _same_walks(net, monkeypatch, launches=3, walks=4)
