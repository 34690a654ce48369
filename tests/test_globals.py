"""The native globals (registry.GLOBALS, kernels/globals.cl) against brute force: on random
small instances, with holes, bounds-only domains and values outside the constraint's range,
the engine reports exactly the assignments the independent checker accepts, under both
execution models; and each propagator's stated strength: table and regular leave no failure
in a search of their own, cumulative and circuit prune at the root what their doc comments
promise. mznlib's declarations and the kernel's limits agree."""

from __future__ import annotations

import math
import random
import re

import pytest

from fzn_gpu.engine import pack as pack_module
from fzn_gpu.errors import FznError
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.flatzinc.registry import GLOBALS, REGULAR_WORDS, SHARED_BY_GROUP

from conftest import use_kernel
from helpers import ROOT, as_tuples, brute_force, solve_stats, solve_text, stable_rng

MAX_ASSIGNMENTS = 4000  # brute force's budget per instance


def _values(rng: random.Random, lo: int, hi: int) -> list[int]:
    """A random domain within lo..hi, most often nearly all of it, sometimes with a hole."""
    if rng.random() < 0.6:
        a, b = lo + (rng.random() < 0.3), hi - (rng.random() < 0.3)
        a, b = (a, b) if a <= b else (lo, hi)
    else:
        a = rng.randint(lo, hi)
        b = rng.randint(a, hi)
    vals = list(range(a, b + 1))
    if len(vals) > 2 and rng.random() < 0.3:
        vals.remove(rng.choice(vals[1:-1]))
    return vals


def _decl(name: str, values: list[int]) -> str:
    if values == list(range(values[0], values[-1] + 1)):
        return f"var {values[0]}..{values[-1]}: {name};"
    return f"var {{{','.join(map(str, values))}}}: {name};"


def _ints(values) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


def _set(values) -> str:
    return "{" + ",".join(map(str, sorted(set(values)))) + "}"


class Instance:
    """Variables with their domains, and one constraint over them."""

    def __init__(self):
        self.domains: dict[str, list[int]] = {}

    def var(self, rng: random.Random, lo: int, hi: int, prefix: str = "x") -> str:
        name = f"{prefix}{len(self.domains)}"
        self.domains[name] = _values(rng, lo, hi)
        return name

    def vars(self, rng, n: int, lo: int, hi: int, prefix: str = "x") -> str:
        return _ints(self.var(rng, lo, hi, prefix) for _ in range(n))

    def text(self, constraint: str) -> str:
        decls = "\n".join(_decl(n, v) for n, v in self.domains.items())
        return f"{decls}\nconstraint {constraint};\nsolve satisfy;\n"


def _table(rng, boolean: bool) -> str:
    inst = Instance()
    n = rng.randint(1, 3)
    lo, hi = (0, 1) if boolean else (-2, 3)
    xs = inst.vars(rng, n, lo, hi)
    rows = [[rng.randint(lo, hi) for _ in range(n)] for _ in range(rng.randint(0, 9))]
    flat = [v for r in rows for v in r]
    if boolean:
        return inst, inst.text(f"fzn_table_bool({xs}, [{', '.join('true' if v else 'false' for v in flat)}])")
    return inst, inst.text(f"fzn_table_int({xs}, {_ints(flat)})")


def _circuit(rng) -> str:
    inst = Instance()
    n, off = rng.randint(1, 5), rng.randint(-1, 2)
    xs = inst.vars(rng, n, off - 1, off + n)
    return inst, inst.text(f"fzn_gpu_circuit({off}, {xs})")


def _subcircuit(rng) -> str:
    inst = Instance()
    n, off = rng.randint(1, 5), rng.randint(-1, 2)
    xs = inst.vars(rng, n, off - 1, off + n)
    return inst, inst.text(f"fzn_gpu_subcircuit({off}, {xs})")


def _diffn(rng) -> str:
    """Two or three rectangles; each coordinate and size a variable or a constant, sizes
    sometimes zero or negative (MiniZinc's definition still applies)."""
    inst = Instance()
    n = rng.randint(1, 3)

    def term(lo, hi, prefix):
        return inst.var(rng, lo, hi, prefix) if rng.random() < 0.5 else str(rng.randint(lo, hi))

    xs = [term(0, 3, "x") for _ in range(n)]
    ys = [term(0, 2, "y") for _ in range(n)]
    low = -1 if rng.random() < 0.15 else 0
    dxs = [term(low, 2, "w") for _ in range(n)]
    dys = [term(low, 2, "h") for _ in range(n)]
    arrays = ", ".join("[" + ", ".join(a) + "]" for a in (xs, ys, dxs, dys))
    return inst, inst.text(f"fzn_diffn({arrays})")


def _inverse(rng) -> str:
    inst = Instance()
    n = rng.randint(1, 3)
    m = n if rng.random() < 0.8 else rng.randint(1, 3)
    of, og = rng.randint(0, 2), rng.randint(0, 2)
    f = inst.vars(rng, n, og - 1, og + m, "f")
    g = inst.vars(rng, m, of - 1, of + n, "g")
    return inst, inst.text(f"fzn_gpu_inverse({f}, {of}, {g}, {og})")


def _regular(rng) -> str:
    inst = Instance()
    q, s = rng.randint(1, 4), rng.randint(1, 3)
    xs = inst.vars(rng, rng.randint(0, 4), 0, s + 1)
    d = [0 if rng.random() < 0.2 else rng.randint(1, q) for _ in range(q * s)]
    final = rng.sample(range(1, q + 1), rng.randint(1, q))
    return inst, inst.text(f"fzn_gpu_regular({xs}, {q}, {s}, {_ints(d)}, {rng.randint(1, q)}, {_set(final)})")


def _gcc(rng, key: str) -> str:
    inst = Instance()
    n = rng.randint(1, 4)
    xs = inst.vars(rng, n, 0, 3)
    k = rng.randint(1, 4)
    cover = [rng.randint(-1, 3) for _ in range(k)] if rng.random() < 0.2 else rng.sample(range(-1, 4), k)
    if key.endswith("low_up") or key.endswith("low_up_closed"):
        low = [rng.randint(0, 1) for _ in range(k)]
        up = [lo + rng.randint(0, 3) - (rng.random() < 0.1) for lo in low]
        return inst, inst.text(f"{key}({xs}, {_ints(cover)}, {_ints(low)}, {_ints(up)})")
    counts = inst.vars(rng, k, 0, n, "c")
    return inst, inst.text(f"{key}({xs}, {_ints(cover)}, {counts})")


def _except(rng) -> str:
    inst = Instance()
    xs = inst.vars(rng, rng.randint(1, 4), -1, 3)
    return inst, inst.text(f"fzn_alldifferent_except({xs}, {_set(rng.sample(range(-1, 4), rng.randint(0, 2)) or [9])})")


def _cumulative(rng) -> str:
    inst = Instance()
    n = rng.randint(1, 3)
    s = inst.vars(rng, n, 0, 4, "s")
    d = _ints(rng.randint(0, 3) for _ in range(n)) if rng.random() < 0.5 else inst.vars(rng, n, 0, 2, "d")
    r = _ints(rng.randint(0, 2) for _ in range(n)) if rng.random() < 0.5 else inst.vars(rng, n, 0, 2, "r")
    b = inst.var(rng, -1, 3, "b")
    return inst, inst.text(f"fzn_cumulative({s}, {d}, {r}, {b})")


def _count_eq(rng) -> str:
    inst = Instance()
    xs = inst.vars(rng, rng.randint(0, 4), -1, 2)
    y = inst.var(rng, -1, 2, "y")
    c = inst.var(rng, -1, 4, "c")
    return inst, inst.text(f"fzn_count_eq({xs}, {y}, {c})")


def _among(rng) -> str:
    inst = Instance()
    xs = inst.vars(rng, rng.randint(0, 4), -1, 3)
    n = inst.var(rng, -1, 5, "n")
    values = sorted(rng.sample(range(-2, 5), rng.randint(0, 4)))
    return inst, inst.text(f"fzn_among({n}, {xs}, {_set(values)})")


def _lex(rng, key: str) -> str:
    inst = Instance()
    lo, hi = (0, 1) if key.endswith("bool") else (-1, 2)
    n = rng.randint(0, 3)
    m = n if rng.random() < 0.7 else rng.randint(0, 3)
    xs, ys = inst.vars(rng, n, lo, hi, "x"), inst.vars(rng, m, lo, hi, "y")
    return inst, inst.text(f"{key}({xs}, {ys})")


def _nvalue(rng) -> str:
    inst = Instance()
    n = inst.var(rng, -1, 4, "n")
    return inst, inst.text(f"fzn_nvalue({n}, {inst.vars(rng, rng.randint(0, 4), -1, 3)})")


def _monotone(rng, key: str) -> str:
    inst = Instance()
    lo, hi = (0, 1) if key.endswith("bool") else (-1, 3)
    return inst, inst.text(f"{key}({inst.vars(rng, rng.randint(0, 4), lo, hi)})")


def _bin_packing_load(rng) -> str:
    inst = Instance()
    nb, n, first = rng.randint(1, 3), rng.randint(0, 3), rng.randint(-1, 2)
    loads = inst.vars(rng, nb, 0, 5, "l")
    bins = inst.vars(rng, n, first - 1, first + nb, "b")
    w = [rng.randint(0, 3) for _ in range(n)]
    return inst, inst.text(f"fzn_gpu_bin_packing_load({loads}, {first}, {bins}, {_ints(w)})")


GENERATORS = {
    "fzn_gpu_bin_packing_load": _bin_packing_load,
    **{key: (lambda k: lambda rng: _monotone(rng, k))(key) for key in GLOBALS if "creasing" in key},
    "fzn_count_eq": _count_eq,
    "fzn_among": _among,
    "fzn_nvalue": _nvalue,
    **{key: (lambda k: lambda rng: _lex(rng, k))(key) for key in GLOBALS if key.startswith("fzn_lex")},
    "fzn_table_int": lambda rng: _table(rng, False),
    "fzn_table_bool": lambda rng: _table(rng, True),
    "fzn_gpu_circuit": _circuit,
    "fzn_gpu_subcircuit": _subcircuit,
    "fzn_diffn": _diffn,
    "fzn_gpu_inverse": _inverse,
    "fzn_gpu_regular": _regular,
    "fzn_alldifferent_except": _except,
    "fzn_cumulative": _cumulative,
    **{key: (lambda k: lambda rng: _gcc(rng, k))(key) for key in GLOBALS if key.startswith("fzn_global_cardinality")},
}


def test_every_global_has_a_generator():
    assert set(GENERATORS) == set(GLOBALS)


def _instances(key: str, seed: object, count: int):
    rng = stable_rng(key, seed)
    made = 0
    while made < count:
        inst, text = GENERATORS[key](rng)
        if math.prod(len(v) for v in inst.domains.values()) <= MAX_ASSIGNMENTS:
            made += 1
            yield inst, text


def _global_layouts() -> list:
    """Every global under the work-item kernel (with bitmaps and with bounds alone) and the
    work-group kernel; those a group walks together (registry.SHARED_BY_GROUP) walked so
    however short (group-rows) as well as by one work-item (group)."""
    return [
        pytest.param(key, layout, id=f"{layout}-{key}")
        for key in sorted(GLOBALS)
        for layout in ("item", "item-bounds", "group", "group-rows")
        if layout != "group-rows" or key in SHARED_BY_GROUP
    ]


def use_layout(monkeypatch, layout: str) -> None:
    """The kernel of `layout`; group-rows: a work-group walking every row of
    registry.SHARED_BY_GROUP's kinds together, group: none (one work-item a row)."""
    use_kernel(monkeypatch, layout.split("-")[0])
    if layout.startswith("group"):
        monkeypatch.setenv("FZN_GPU_GROUP_ROW_MIN", "1" if layout == "group-rows" else "0")


@pytest.mark.parametrize("key,layout", _global_layouts())
def test_global_matches_brute_force(key, layout, monkeypatch):
    use_layout(monkeypatch, layout)
    if layout.endswith("bounds"):
        monkeypatch.setattr(pack_module, "BITMAP_MAX_SPAN", 0)
    for inst, text in _instances(key, layout, 12):
        expected = brute_force(text, inst.domains)
        found, outcome = solve_text(text, all_solutions=True)
        assert outcome.complete, text
        got = as_tuples(found, list(inst.domains))
        assert got == expected, f"missing {sorted(expected - got)[:3]}, extra {sorted(got - expected)[:3]}\n{text}"
        assert len(found) == len(got), f"a solution reported twice\n{text}"


@pytest.mark.parametrize("key", ["fzn_table_int", "fzn_gpu_regular"])
def test_domain_consistent_globals_search_without_failing(key, monkeypatch):
    """Domain consistency on the only constraint of a model: every value left has a solution,
    so enumerating them all never fails a node."""
    use_kernel(monkeypatch, "item")
    for _inst, text in _instances(key, "strength", 10):
        found, outcome, fails = solve_stats(text, all_solutions=True)
        assert outcome.complete
        assert fails == 0 or not found and fails <= 1, text


def test_cumulative_pushes_starts_past_a_full_profile():
    """Task 1 surely runs over 0..2 using the whole capacity: task 2 starts at 3 at the
    earliest, task 3 (latest start 2, duration 2) cannot fit before and fails the model."""
    text = (
        "var 0..0: s1; var 0..9: s2; var 1..2: b;\n"
        "constraint fzn_cumulative([s1, s2], [3, 2], [2, 1], b);\nsolve satisfy;\n"
    )
    found, outcome, fails = solve_stats(text, all_solutions=True)
    assert sorted(s["s2"] for s in found) == list(range(3, 10)) and fails == 0
    text = (
        "var 0..0: s1; var 0..2: s2; var 2..2: b;\n"
        "constraint fzn_cumulative([s1, s2], [3, 2], [2, 1], b);\nsolve satisfy;\n"
    )
    found, outcome, fails = solve_stats(text, all_solutions=True)
    assert found == [] and outcome.complete and fails <= 1


def test_cumulative_limits_an_open_usage():
    """Task 1 surely runs over 0..2 using one of two: task 2, whose latest start is 1, surely
    runs over 1..2 and may use at most one (its usage 0..2 becomes 0..1); task 3, which cannot
    start before 3 with a usage of one (capacity 1 in the second model), takes none. Both at
    the root: every solution found without a failure."""
    text = (
        "var 0..0: s1; var 0..1: s2; var 0..2: r2;\n"
        "constraint fzn_cumulative([s1, s2], [3, 2], [1, r2], 2);\nsolve satisfy;\n"
    )
    found, outcome, fails = solve_stats(text, all_solutions=True)
    assert outcome.complete and sorted({s["r2"] for s in found}) == [0, 1] and fails == 0
    text = (
        "var 0..0: s1; var 0..2: s3; var 0..1: r3;\n"
        "constraint fzn_cumulative([s1, s3], [3, 2], [1, r3], 1);\nsolve satisfy;\n"
    )
    found, outcome, fails = solve_stats(text, all_solutions=True)
    assert outcome.complete and {s["r3"] for s in found} == {0} and len(found) == 3 and fails == 0


def _optional_tasks(rng) -> tuple[Instance, str]:
    """Cumulatives whose usages are open (optional tasks on a machine), fixed durations."""
    inst = Instance()
    n = rng.randint(2, 4)
    s = inst.vars(rng, n, 0, 3, "s")
    d = _ints(rng.randint(1, 3) for _ in range(n))
    r = inst.vars(rng, n, 0, 2, "r")
    return inst, inst.text(f"fzn_cumulative({s}, {d}, {r}, {rng.randint(0, 2)})")


@pytest.mark.parametrize("layout", ["item", "group"])
def test_cumulative_with_open_usages_matches_brute_force(layout, monkeypatch):
    use_layout(monkeypatch, layout)
    rng = stable_rng("optional tasks", layout)
    made = 0
    while made < 25:
        inst, text = _optional_tasks(rng)
        if math.prod(len(v) for v in inst.domains.values()) > MAX_ASSIGNMENTS:
            continue
        made += 1
        expected = brute_force(text, inst.domains)
        found, outcome = solve_text(text, all_solutions=True)
        assert outcome.complete and as_tuples(found, list(inst.domains)) == expected, text
        assert len(found) == len(expected), text


def test_circuit_closes_no_sub_tour():
    """0 -> 1 fixed: 1 -> 0 would close a sub-tour of two nodes in a circuit of four, so the
    propagator removes it at the root; every solution is a full tour, found without failing."""
    text = (
        "var 1..1: a; var 0..3: b; var 0..3: c; var 0..3: d;\n"
        "constraint fzn_gpu_circuit(0, [a, b, c, d]);\nsolve satisfy;\n"
    )
    found, outcome, fails = solve_stats(text, all_solutions=True)
    assert len(found) == 2 and fails == 0


def _big_circuit(rng: random.Random, n: int) -> tuple[dict[str, list[int]], str]:
    """A tour of n nodes (numbered from 1) with a few successors left open, each to a handful
    of values (its tour successor among them, or not); the others fixed to the tour, sometimes
    with two of them swapped, which may close a sub-tour among the fixed nodes (or name a node
    twice)."""
    order = list(range(1, n + 1))
    rng.shuffle(order)
    succ = {order[i]: order[(i + 1) % n] for i in range(n)}
    if rng.random() < 0.3:
        a, b = rng.sample(range(1, n + 1), 2)
        succ[a], succ[b] = succ[b], succ[a]
    opened = rng.sample(range(1, n + 1), rng.randint(1, 4))
    domains = {f"x{i}": [succ[i]] for i in range(1, n + 1)}
    for i in opened:
        values = set(rng.sample(range(1, n + 1), 4)) | ({succ[i]} if rng.random() < 0.8 else set())
        domains[f"x{i}"] = sorted(values)
    decls = "\n".join(_decl(name, values) for name, values in domains.items())
    xs = _ints(f"x{i}" for i in range(1, n + 1))
    return domains, f"{decls}\nconstraint fzn_gpu_circuit(1, {xs});\nsolve satisfy;\n"


@pytest.mark.parametrize("layout", ["item", "group", "group-rows"])
@pytest.mark.parametrize("n", [40, 300])
def test_big_circuit_matches_brute_force(n, layout, monkeypatch):
    """Circuits past one word of successors (40 nodes) and past one window of the propagator's
    bits (300 nodes: kernels/globals.cl gathers CIRCUIT_VALUES at a time), nearly all fixed:
    the tours reported are exactly those the checker accepts over the open successors, and a
    sub-tour closed by fixed nodes, or a node named twice, leaves none. group-rows: the whole
    work-group walks the circuit (kernels/propagators_group.cl), group: one work-item."""
    use_layout(monkeypatch, layout)
    rng = stable_rng("big circuit", n, layout)
    for _ in range(6):
        domains, text = _big_circuit(rng, n)
        expected = brute_force(text, domains)
        found, outcome = solve_text(text, all_solutions=True)
        assert outcome.complete
        assert as_tuples(found, list(domains)) == expected, text[-300:]
        assert len(found) == len(expected)


def test_subcircuit_leaves_out_everyone_off_a_closed_cycle():
    """1 -> 2 -> 1 fixed: the cycle is closed, so nodes 3 and 4 are out at the root; and a
    chain 1 -> 2 may not close while node 3 must be in (x3 cannot be 3)."""
    text = (
        "var 2..2: a; var 1..1: b; var 1..4: c; var 1..4: d;\n"
        "constraint fzn_gpu_subcircuit(1, [a, b, c, d]);\nsolve satisfy;\n"
    )
    found, outcome, fails = solve_stats(text, all_solutions=True)
    assert [(s["c"], s["d"]) for s in found] == [(3, 4)] and fails == 0
    text = "var 2..2: a; var 1..3: b; var {1,2}: c;\nconstraint fzn_gpu_subcircuit(1, [a, b, c]);\nsolve satisfy;\n"
    found, outcome, fails = solve_stats(text, all_solutions=True)
    assert [(s["b"], s["c"]) for s in found] == [(3, 1)] and fails == 0


def test_diffn_fails_on_area_at_the_root():
    """Four 2x2 squares with x in 0..1 and y in 0..2 lie in a 3x4 box: their area 16 exceeds
    its 12, though every pair still has room on its own, so the energy check fails the root
    instead of searching."""
    decls = "".join(f"var 0..1: x{i}; var 0..2: y{i};\n" for i in range(4))
    xs, ys = ", ".join(f"x{i}" for i in range(4)), ", ".join(f"y{i}" for i in range(4))
    text = f"{decls}constraint fzn_diffn([{xs}], [{ys}], {_ints([2] * 4)}, {_ints([2] * 4)});\nsolve satisfy;\n"
    found, outcome, fails = solve_stats(text, all_solutions=True)
    assert found == [] and outcome.complete and fails <= 1


def test_bad_global_rows_are_refused_with_the_line():
    for constraint in (
        "fzn_table_int([x, y], [1, 2, 3])",
        "fzn_gpu_regular([x], 2, 2, [1, 2, 0], 1, {1})",
        "fzn_gpu_regular([x], 2, 1, [1, 3], 1, {1})",
        f"fzn_gpu_regular([x], {64 * REGULAR_WORDS + 1}, 1, [{', '.join(['1'] * (64 * REGULAR_WORDS + 1))}], 1, {{1}})",
        "fzn_global_cardinality([x, y], [1, 2], [x])",
        "fzn_cumulative([x, y], [1], [1, 1], x)",
        "fzn_gpu_bin_packing_load([x, y], 1, [x, y], [3])",
        "fzn_diffn([x, y], [x], [1, 1], [1, 1])",
    ):
        text = f"var 1..2: x;\nvar 1..2: y;\nconstraint {constraint};\nsolve satisfy;\n"
        with pytest.raises(FznError) as err:
            lower(parse_items(text, "bad.fzn"), "bad.fzn")
        assert "bad.fzn:3" in str(err.value), str(err.value)


def test_mznlib_regular_limit_is_the_kernels():
    text = (ROOT / "mznlib" / "fzn_regular.mzn").read_text()
    assert re.search(r"if Q <= (\d+) then", text).group(1) == str(64 * REGULAR_WORDS)
    assert f"{64 * REGULAR_WORDS} states" in text


@pytest.mark.parametrize("q, n", [(2, 130), (70, 72)])
def test_regular_over_more_positions_than_a_block(q, n, monkeypatch):
    """Words of n bits with exactly q - 1 ones (state k: k - 1 ones so far): C(n, q - 1) of
    them, enumerated without a failed node, though the backward sets take several blocks
    (kernels/globals.cl stores REGULAR_STORE words at a time)."""
    use_kernel(monkeypatch, "item")
    d = []
    for state in range(1, q + 1):
        d += [state, state + 1 if state < q else 0]  # symbol 1: a 0 bit, symbol 2: a 1 bit
    xs = ", ".join(f"x{i}" for i in range(n))
    text = "".join(f"var 1..2: x{i};\n" for i in range(n))
    text += f"constraint fzn_gpu_regular([{xs}], {q}, 2, {_ints(d)}, 1, {{{q}}});\nsolve satisfy;\n"
    found, outcome, fails = solve_stats(text, all_solutions=True)
    assert outcome.complete and len(found) == math.comb(n, q - 1) and fails == 0


def _counter_automaton(rng: random.Random, q: int, s: int, n: int) -> tuple[list[int], list[int], list[int]]:
    """States 1..q, symbol k adds k - 1 to the state modulo q, a twentieth of the moves gone; a word
    of n symbols walked along the moves left, and the accepting states: where it ends and a
    random third of the others."""
    d = [0 if rng.random() < 0.05 else (state + k) % q + 1 for state in range(q) for k in range(s)]
    word, state = [], 1
    for _ in range(n):
        sym = rng.choice([k for k in range(1, s + 1) if d[(state - 1) * s + k - 1]])
        word.append(sym)
        state = d[(state - 1) * s + sym - 1]
    return d, sorted({state, *rng.sample(range(1, q + 1), max(1, q // 3))}), word


@pytest.mark.parametrize(
    "q, s, n, free",
    [
        (200, 2, 100, 4),  # four words of states, the forward sets kept a block at a time
        (130, 3, 250, 5),  # three words, many blocks
        (200, 2, 300, 7),  # too long a word for the blocks' checkpoints: the unrestricted pass
        (5, 70, 20, 2),  # more symbols than a word's bits
    ],
)
def test_regular_on_big_automata_and_long_words_against_a_simulation(q, s, n, free, monkeypatch):
    """A big automaton over a long word whose positions are fixed but a few: every accepted
    word of the free positions found (the automaton run in Python), without a failed node
    (domain consistency), on each of the propagator's paths (kernels/globals.cl)."""
    import itertools

    use_kernel(monkeypatch, "item")
    rng = stable_rng(f"regular-big-{q}-{s}-{n}")
    d, final, word = _counter_automaton(rng, q, s, n)
    open_at = sorted(rng.sample(range(max(0, n - 8), n), free))  # near the end: a word mostly alive

    def accepts(w) -> bool:
        state = 1
        for sym in w:
            state = d[(state - 1) * s + sym - 1]
            if state == 0:
                return False
        return state in final

    expected = set()
    for choice in itertools.product(range(1, s + 1), repeat=free):
        w = list(word)
        for at, sym in zip(open_at, choice):
            w[at] = sym
        if accepts(w):
            expected.add(choice)
    text = "".join(f"var 1..{s}: x{i};\n" if i in open_at else f"var {word[i]}..{word[i]}: x{i};\n" for i in range(n))
    xs = ", ".join(f"x{i}" for i in range(n))
    text += f"constraint fzn_gpu_regular([{xs}], {q}, {s}, {_ints(d)}, 1, {_set(final)});\nsolve satisfy;\n"
    found, outcome, fails = solve_stats(text, all_solutions=True)
    got = {tuple(sol[f"x{i}"] for i in open_at) for sol in found}
    assert outcome.complete and got == expected and len(found) == len(expected)
    assert fails == 0 or not expected and fails <= 1
