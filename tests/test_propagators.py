"""Every int/bool builtin against brute force: on random small instances the engine must report
exactly the solutions that the independent checker accepts among all assignments. A propagator
that removed a supported value would lose a solution; one that failed to check would report a
non-solution (solve_text checks each). Run with bitmaps and with bounds alone."""

from __future__ import annotations

import itertools
import os
import random

import numpy as np
import pytest

from fzn_gpu.engine import pack as pack_module
from fzn_gpu.flatzinc.registry import GLOBALS, KINDS

from conftest import add_cl_options, use_kernel
from helpers import as_tuples, brute_force, brute_force_offsets, solve_stats, solve_text, stable_rng

INT_KINDS = [k for k in KINDS if k.domain == "int" and k.key not in GLOBALS]  # globals: test_globals.py


def _is_bool_kind(name: str) -> bool:
    return "bool" in name and not name.startswith("bool_lin")


def _domain(rng: random.Random, boolean: bool) -> list[int]:
    if boolean:
        return rng.choice([[0, 1], [0, 1], [0], [1]])
    lo = rng.randint(-3, 2)
    hi = rng.randint(lo, 3)
    values = list(range(lo, hi + 1))
    if len(values) > 3 and rng.random() < 0.3:
        values.remove(rng.choice(values[1:-1]))  # a hole
    return values


def _decl(name: str, values: list[int]) -> str:
    if values == list(range(values[0], values[-1] + 1)):
        return f"var {values[0]}..{values[-1]}: {name};"
    return f"var {{{','.join(map(str, values))}}}: {name};"


def instance(kind, rng: random.Random) -> tuple[str, dict[str, list[int]]]:
    boolean = _is_bool_kind(kind.name)
    nvars = rng.randint(2, 4)
    domains = {f"x{i}": _domain(rng, boolean) for i in range(nvars)}
    if kind.name.startswith("bool_lin"):
        domains = {f"x{i}": _domain(rng, True) for i in range(nvars)}
        domains["s"] = _domain(rng, False)
    names = list(domains)
    bool_names = [n for n in names if set(domains[n]) <= {0, 1}]
    args = []
    arr_len = rng.randint(1, 3)
    for pos, field in enumerate(kind.signature):
        last = pos == len(kind.signature) - 1
        is_literal = last and (
            kind.key.endswith("_reif")
            or kind.key.endswith("_imp")
            or kind.name in ("array_bool_and", "array_bool_or", "bool_and", "bool_or", "bool_xor")
        )
        if field == "var":
            pool = bool_names if (is_literal or boolean) and bool_names else names
            if kind.name == "bool_lin_eq" and last:
                pool = ["s"]
            if is_literal and not bool_names:
                domains["r"] = [0, 1]
                names.append("r")
                bool_names.append("r")
                pool = ["r"]
            args.append(rng.choice(pool))
        elif field == "var[]":
            pool = bool_names if boolean or kind.name.startswith("bool_lin") else names
            if not pool:
                pool = names
            n = (
                arr_len
                if kind.name not in ("bool_clause", "bool_clause_reif", "bool_clause_imp")
                else rng.randint(0, 2)
            )
            args.append("[" + ", ".join(rng.choice(pool) for _ in range(n)) + "]")
        elif field == "int":
            args.append(str(rng.randint(-4, 4)))
        elif field == "int[]":
            if "element" in kind.name:
                vals = [rng.randint(0, 1) if boolean else rng.randint(-3, 3) for _ in range(arr_len)]
            else:
                vals = [rng.choice([-2, -1, 1, 2, 3]) for _ in range(arr_len)]
            args.append("[" + ", ".join(map(str, vals)) + "]")
        elif field == "set":
            vals = sorted(rng.sample(range(-3, 4), rng.randint(1, 4)))
            args.append("{" + ",".join(map(str, vals)) + "}")
    # an element's index is a variable of its own, ranging around 1..n
    if "element" in kind.name:
        domains["i"] = list(range(rng.randint(-1, 1), rng.randint(1, 4) + 1))
        names.append("i")
        args[0] = "i"
    decls = "\n".join(_decl(n, domains[n]) for n in names)
    text = f"{decls}\nconstraint {kind.name}({', '.join(args)});\nsolve satisfy;\n"
    return text, domains


LAYOUTS = [
    (True, "blocked", "bitmaps"),
    (False, "blocked", "bounds"),
    (True, "interleaved", "interleaved"),
    (True, "group", "group-bitmaps"),
    (True, "group-general", "group-general-bitmaps"),
    (False, "group", "group-bounds"),
    (True, "group-global", "group-global"),
    (True, "group-rows", "group-rows-bitmaps"),
    (False, "group-rows", "group-rows-bounds"),
]


def _layout_cases() -> list:
    """Every kind under every layout; the group-rows layouts only for the kinds whose rows a
    group walks (registry.SHARED_BY_GROUP): for the others they run what group-* run."""
    from fzn_gpu.flatzinc.registry import SHARED_BY_GROUP

    return [
        pytest.param(kind, bitmaps, layout, id=f"{kind.key}-{name}")
        for kind in INT_KINDS
        for bitmaps, layout, name in LAYOUTS
        if layout != "group-rows" or kind.key in SHARED_BY_GROUP
    ]


@pytest.mark.parametrize("kind,bitmaps,layout", _layout_cases())
def test_propagator_matches_brute_force(kind, bitmaps, layout, monkeypatch):
    """The interleaved layout (the GPU's work-item kernel) and the work-group kernel (the
    GPU's default, its work-items propagating one node side by side; its node in local memory,
    or in global memory for big models; group-rows and group-global: every row of
    registry.SHARED_BY_GROUP's kinds walked by the whole group, however short; group with
    bitmaps holds these small domains as narrow domains, group-general as bounds and bitmaps)
    must find exactly what the blocked work-item kernel (PoCL's) finds."""
    if not bitmaps:
        monkeypatch.setattr(pack_module, "BITMAP_MAX_SPAN", 0)
    if layout.startswith("group"):
        monkeypatch.setenv("FZN_GPU_KERNEL", "group")
        monkeypatch.setenv("FZN_GPU_NARROW", "0" if layout == "group-general" else "1")
        monkeypatch.setenv("FZN_GPU_STORE_GLOBAL", "1" if layout == "group-global" else "0")
        monkeypatch.setenv("FZN_GPU_GROUP_ROW_MIN", "1" if layout in ("group-rows", "group-global") else "0")
    else:
        monkeypatch.setenv("FZN_GPU_KERNEL", "item")
        monkeypatch.setenv("FZN_GPU_LAYOUT", layout)
    rng = stable_rng(kind.key, bitmaps)
    for _ in range(6):
        text, domains = instance(kind, rng)
        expected = brute_force(text, domains)
        found, outcome = solve_text(text, all_solutions=True)
        names = list(domains)
        got = as_tuples(found, names)
        assert outcome.complete, text
        assert len(found) == len(got), f"a solution was reported twice\n{text}"
        assert got == expected, f"missing {sorted(expected - got)[:5]} extra {sorted(got - expected)[:5]}\n{text}"


def _holey(rng: random.Random, lo: int, hi: int) -> list[int]:
    values = sorted(rng.sample(range(lo, hi + 1), rng.randint(1, min(5, hi - lo + 1))))
    return values


@pytest.mark.parametrize("seed", range(8))
def test_shifted_equality_and_alldifferent_fast_paths(seed, kernel):
    """The word-at-a-time paths: x - y = c on two bitmaps (domain consistent), and
    all_different with a narrow hull (bitmask) or a wide one (pairwise), with holes and
    bitmaps whose bases differ, against brute force."""
    rng = random.Random(seed)
    spread = 400 if seed % 2 else 40  # wide hulls take the pairwise path
    domains = {f"x{i}": _holey(rng, -spread // 2 + 37 * i, spread // 2 + 37 * i) for i in range(3)}
    c = rng.randint(-30, 30)
    coefs = rng.choice([[1, -1], [-1, 1]])
    # y = x0 - c (or x0 + c) for some of x0's values, plus values without support
    shifted = [v - coefs[0] * c for v in domains["x0"] if rng.random() < 0.7]
    domains["y"] = sorted(set(shifted + _holey(rng, -spread // 2, spread // 2)))
    names = list(domains)
    decls = "\n".join(_decl(n, domains[n]) for n in names)
    text = (
        f"{decls}\nconstraint int_lin_eq([{coefs[0]}, {coefs[1]}], [x0, y], {c});\n"
        f"constraint fzn_all_different_int([x0, x1, x2, y]);\nsolve satisfy;\n"
    )
    expected = brute_force(text, domains)
    found, outcome = solve_text(text, all_solutions=True)
    assert outcome.complete and as_tuples(found, names) == expected and len(found) == len(expected), text
    assert len(expected) or seed == 4  # most seeds have solutions


@pytest.mark.parametrize("width,seed", [(w, s) for w in (20, 33, 64, 65, 200) for s in range(2)])
def test_alldifferent_by_hull_width(width, seed, kernel):
    check_alldifferent_by_hull_width(width, seed)


@pytest.mark.parametrize("width,seed", [(w, s) for w in (20, 33, 64) for s in range(2)])
def test_alldifferent_by_hull_width_in_segments(width, seed, monkeypatch):
    """The narrow hulls of the test above (at most 64 values) under the group kernel's segment
    code (use_segments), with groups narrower than the row."""
    use_kernel(monkeypatch, "group")
    use_segments(monkeypatch, True)
    monkeypatch.setenv("FZN_GPU_LOCAL", str(3 + 2 * seed))
    check_alldifferent_by_hull_width(width, seed)


def check_alldifferent_by_hull_width(width: int, seed: int) -> None:
    """all_different whose values x_i + c_i span a root hull of `width` values from a negative
    base: the fixed values gathered in one 64-bit register up to 64 values, in an array of
    words up to 256, pairs beyond (kernels/prop_alldifferent.cl). Two of the members are offset views y = x + c (folded into the
    row: engine/views.py), the values sit at both ends of the hull and across word boundaries;
    every solution against brute force over the x (y computed)."""
    rng = random.Random(700 + 10 * width + seed)
    base = -width // 2 - 3
    ends = [base, base + width - 1]
    xs = {}
    for i in range(5):
        values = set(rng.sample(range(base, base + width), 3)) | {ends[i % 2]}
        xs[f"x{i}"] = sorted(values)
    shift = {"y0": ("x0", rng.randint(1, 5)), "y1": ("x1", -rng.randint(1, 5))}
    for x, c in shift.values():  # keep y = x + c inside the hull
        xs[x] = sorted(v for v in xs[x] if base <= v + c < base + width) or [base + max(0, -c)]
    lines = [_decl(n, d) for n, d in xs.items()]
    for y, (x, c) in shift.items():
        lo, hi = min(xs[x]) + c, max(xs[x]) + c
        lines.append(f"var {lo}..{hi}: {y} :: var_is_introduced :: is_defined_var;")
        lines.append(f"constraint int_lin_eq([1, -1], [{y}, {x}], {c}) :: defines_var({y});")
    lines.append("constraint fzn_all_different_int([y0, y1, x2, x3, x4]);")
    lines.append("constraint fzn_all_different_int([x0, x1, x2]);")
    lines.append("solve satisfy;")
    text = "\n".join(lines) + "\n"
    expected = {t[: len(xs)] for t in brute_force_offsets(text, xs, shift)}  # y follows from x
    found, outcome = solve_text(text, all_solutions=True)
    assert outcome.complete and as_tuples(found, list(xs)) == expected and len(found) == len(expected), text


@pytest.mark.parametrize("seed", range(6))
def test_linear_rows_with_coefficients_up_to_2_31(seed, kernel):
    """Linear rows whose sums need more than 64 bits (kernels/prop_linear.cl keeps them in 128,
    Wide) beside small ones: coefficients of 1, 3, 2^20, 2^20 + 1 and 2^31 - 1 of either sign,
    right-hand sides reached by an assignment or just missing it, with holes; every solution
    against brute force."""
    rng = random.Random(900 + seed)
    edge = [1, 3, 2**20, 2**20 + 1, 2**31 - 1]
    domains = {f"x{i}": _domain(rng, False) for i in range(4)}
    names = list(domains)
    lines = [_decl(n, d) for n, d in domains.items()]
    for k, kind in enumerate(("int_lin_eq", "int_lin_le", "int_lin_ne", "int_lin_eq_reif")):
        terms = rng.sample(names, rng.randint(2, 4))
        coefs = [rng.choice(edge) * rng.choice((1, -1)) for _ in terms]
        if seed % 2 == 0:
            coefs = [c if abs(c) <= 2**20 else 2**20 for c in coefs]
        rhs = sum(c * rng.choice(domains[t]) for c, t in zip(coefs, terms)) + rng.choice((0, 0, 1, -1))
        rhs = max(-(2**31 - 1), min(2**31 - 1, rhs))
        extra = ""
        if kind.endswith("_reif"):
            lines.append(f"var bool: r{k};")
            names.append(f"r{k}")
            domains[f"r{k}"] = [0, 1]
            extra = f", r{k}"
        lines.append(f"constraint {kind}({coefs}, [{', '.join(terms)}], {rhs}{extra});")
    text = "\n".join(lines + ["solve satisfy;"]) + "\n"
    expected = brute_force(text, domains)
    found, outcome = solve_text(text, all_solutions=True)
    assert outcome.complete and as_tuples(found, names) == expected and len(found) == len(expected), text


@pytest.mark.parametrize("seed", range(4))
def test_a_long_alldifferent(seed, kernel):
    """Eight variables with holes over nine values, a sum tying the two halves: every
    solution, against brute force (value elimination cascading through newly fixed ones)."""
    rng = random.Random(100 + seed)
    domains = {f"x{i}": sorted(rng.sample(range(1, 10), 4)) for i in range(8)}
    names = list(domains)
    decls = "\n".join(_decl(n, domains[n]) for n in names)
    text = (
        f"{decls}\nconstraint fzn_all_different_int([{', '.join(names)}]);\n"
        f"constraint int_lin_le([1, 1, 1, 1, -1, -1, -1, -1], [{', '.join(names)}], {rng.randint(-4, 4)});\n"
        "solve satisfy;\n"
    )
    expected = brute_force(text, domains)
    found, outcome = solve_text(text, all_solutions=True)
    assert outcome.complete and as_tuples(found, names) == expected and len(found) == len(expected), text


def use_segments(monkeypatch, on: bool) -> None:
    """Build the group kernel's segment code (kernels/mutate_group.cl: the parts of one
    constraint that a warp runs side by side share one reading of its row) with every lane a
    segment of its own (FZN_SOLO_SEGMENTS), as PoCL has no warp; NVIDIA builds take it with
    warp reductions (FZN_WARP_PTX), which these tests exercise when run on such a GPU."""
    if on:
        add_cl_options(monkeypatch, "-DFZN_SOLO_SEGMENTS")


@pytest.mark.parametrize(
    "seed,local,segments", [(s, local, seg) for s in range(3) for local in (1, 3, 8) for seg in (False, True)]
)
def test_alldifferent_shared_out_over_a_group(seed, local, segments, monkeypatch):
    """A work-group shares all_different out, a part per variable (engine/pack.py's
    constraint_parts): with fewer work-items than parts (each takes several, in turn) or more,
    with a narrow hull (bitmask) and a wide one (pairwise, one value per 100), two
    all_different sharing variables, against brute force; each part reading the whole row, or
    (segments) the code that shares one reading between the parts a warp runs at once."""
    use_kernel(monkeypatch, "group")
    use_segments(monkeypatch, segments)
    monkeypatch.setenv("FZN_GPU_LOCAL", str(local))
    rng = random.Random(300 + seed)
    scale = 100 if seed == 2 else 1
    domains = {f"x{i}": sorted(scale * v for v in rng.sample(range(1, 9), rng.randint(3, 5))) for i in range(7)}
    names = list(domains)
    decls = "\n".join(_decl(n, domains[n]) for n in names)
    text = (
        f"{decls}\nconstraint fzn_all_different_int([{', '.join(names[:5])}]);\n"
        f"constraint fzn_all_different_int([{', '.join(names[3:])}]);\n"
        f"constraint int_lin_le([1, 1, -1, -1], [x0, x1, x5, x6], {scale * rng.randint(-2, 2)});\n"
        "solve satisfy;\n"
    )
    expected = brute_force(text, domains)
    found, outcome = solve_text(text, all_solutions=True)
    assert outcome.complete and as_tuples(found, names) == expected and len(found) == len(expected), text
    assert expected


def test_constraint_parts_follow_the_registry():
    """all_different (SHARED_BY_VARIABLE) gets a part per variable up to PARTS_MAX, every other
    kind one, and where all the parts together would need two rounds of ROUND_LANES work-items,
    fewer each so that one round takes them; the dispatch of parts (kernels/dispatch.cl,
    propagate_part) names every shared kind."""
    from pathlib import Path

    from fzn_gpu.flatzinc.registry import BY_KEY, SHARED_BY_VARIABLE
    from fzn_gpu.runtime.kernel_abi import PARTS_MAX, ROUND_LANES

    alldiff, ne = BY_KEY["fzn_all_different_int"].id, BY_KEY["int_ne"].id

    def parts(*sizes):
        rows = [[n] + list(range(n)) if n else [0, 1] for n in sizes]
        ckind = np.array([alldiff if n else ne for n in sizes], dtype=np.int32)
        coff = np.cumsum([0] + [len(r) for r in rows[:-1]]).astype(np.int32)
        return pack_module.constraint_parts(ckind, np.array(sum(rows, []), dtype=np.int32), coff).tolist()

    assert ROUND_LANES == 32 == PARTS_MAX
    assert parts(3, 0, 20) == [3, 1, 20]  # one round as they are
    assert parts(3, 0, 40) == [2, 1, 29]  # 35 parts: one round of 31 instead
    assert parts(16, 16, 16) == [10, 10, 10]  # 16-queens' three
    assert parts(40, 40, 40) == [PARTS_MAX] * 3  # rounds anyway: each its most
    dispatch = (Path(__file__).resolve().parents[1] / "kernels" / "dispatch.cl").read_text()
    part_fn = dispatch[dispatch.index("bool propagate_part(") :]
    assert all(f"PROPAGATOR({key}," in part_fn for key in SHARED_BY_VARIABLE)


def test_long_rows_are_walked_by_the_group():
    """A row of registry.SHARED_BY_GROUP's kinds at least GROUP_ROW_MIN long is marked with
    parts -GROUP_ROW_MIN (a shorter one, or another kind, keeps its parts), the active lists make room for
    both lists, and the group's dispatch (kernels/propagators_group.cl, group_step) names every such kind."""
    from pathlib import Path

    from fzn_gpu.flatzinc.registry import BY_KEY, SHARED_BY_GROUP
    from fzn_gpu.runtime.kernel_abi import GROUP_ROW_MIN

    lin, elem, ne = BY_KEY["int_lin_le"].id, BY_KEY["array_int_element"].id, BY_KEY["int_ne"].id
    n = GROUP_ROW_MIN
    rows = [
        [n] + [1] * n + list(range(n)) + [5],
        [n - 1] + [1] * (n - 1) + list(range(n - 1)) + [5],
        [0, n] + list(range(n)) + [1],
        [0, 1],
    ]
    ckind = np.array([lin, lin, elem, ne], dtype=np.int32)
    coff = np.cumsum([0] + [len(r) for r in rows[:-1]]).astype(np.int32)
    cd = np.array(sum(rows, []), dtype=np.int32)
    parts = pack_module.constraint_parts(ckind, cd, coff, row_min=n)
    assert parts.tolist() == [-n, 1, -n, 1]
    assert pack_module.constraint_parts(ckind, cd, coff, row_min=0).tolist() == [1, 1, 1, 1]
    from types import SimpleNamespace

    assert pack_module.DeviceModel.nunits.fget(SimpleNamespace(nc=4, cparts=parts)) == 4 + 2
    group_fn = (Path(__file__).resolve().parents[1] / "kernels" / "propagators_group.cl").read_text()
    group_fn = group_fn[group_fn.index("bool group_step(") :]
    assert all(f"PROPAGATOR({key}," in group_fn for key in SHARED_BY_GROUP)


@pytest.mark.parametrize("local", [32, 3], ids=["w32", "w3"])
@pytest.mark.parametrize("bitmaps", [True, False], ids=["bitmaps", "bounds"])
@pytest.mark.parametrize("seed", range(4))
def test_many_long_rows_together_and_side_by_side(seed, bitmaps, local, monkeypatch):
    """Every linear and element row walked by the group (FZN_GPU_GROUP_ROW_MIN=1), twenty of
    them: more than half the group's work-items at once run side by side (the first pass),
    fewer one at a time by the whole group (search_group.cl); either way exactly the brute
    force's solutions. A group of 3 work-items takes the shares' tree (propagators_group.cl)
    through a width that is no power of two."""
    use_kernel(monkeypatch, "group")
    monkeypatch.setenv("FZN_GPU_GROUP_ROW_MIN", "1")
    monkeypatch.setenv("FZN_GPU_LOCAL", str(local))
    if not bitmaps:
        monkeypatch.setattr(pack_module, "BITMAP_MAX_SPAN", 0)
    rng = stable_rng("long rows", seed)
    names = [f"x{i}" for i in range(5)]
    domains = {n: list(range(-1, 3)) for n in names} | {"i": list(range(0, 7)), "b0": [0, 1], "b1": [0, 1]}
    rows = []
    for k in range(20):
        pick = rng.sample(names, 3)
        coefs = [rng.choice([-2, -1, 1, 2]) for _ in pick]
        kind = ["int_lin_eq", "element", "element"][k] if k < 3 else rng.choice(["int_lin_le"] * 4 + ["bool_lin_le"])
        if kind == "element":
            arr = [rng.randint(-1, 2) for _ in range(6)]
            rows.append(f"array_int_element(i, {arr}, {pick[0]})")
        elif kind == "bool_lin_le":
            rows.append(f"bool_lin_le([1, 2], [b0, b1], {rng.randint(0, 3)})")
        elif kind == "int_lin_eq":
            rows.append(f"int_lin_eq({coefs}, [{', '.join(pick)}], {rng.randint(-2, 2)})")
        else:
            rows.append(f"int_lin_le({coefs}, [{', '.join(pick)}], {rng.randint(2, 6)})")
    text = "".join(f"var {d[0]}..{d[-1]}: {n};\n" for n, d in domains.items())
    text += "".join(f"constraint {r};\n" for r in rows) + "solve satisfy;\n"
    expected = brute_force(text, domains)
    found, outcome = solve_text(text, all_solutions=True)
    assert outcome.complete and as_tuples(found, list(domains)) == expected and len(found) == len(expected), text
    assert expected, "an instance with solutions tests more than the root"


SET_KINDS = [k for k in KINDS if k.domain == "set"]


def _subsets(universe: list[int]) -> list[frozenset]:
    return [frozenset(c) for r in range(len(universe) + 1) for c in itertools.combinations(universe, r)]


def set_instance(kind, rng: random.Random) -> tuple[str, dict[str, list]]:
    """A random instance of a set kind over small universes (set variables, some constants,
    an int variable where the kind takes one), with every variable's domain for brute force."""
    domains: dict[str, list] = {}
    decls: list[str] = []
    n_sets = 0

    def set_var() -> str:
        nonlocal n_sets
        if rng.random() < 0.15:  # a constant set in a variable's place
            vals = sorted(rng.sample(range(-1, 4), rng.randint(0, 3)))
            return "{" + ",".join(map(str, vals)) + "}"
        name = f"S{n_sets}"
        n_sets += 1
        lo = rng.randint(-1, 1)
        universe = [v for v in range(lo, lo + rng.randint(1, 4)) if rng.random() < 0.9] or [lo]
        decls.append(f"var set of {{{','.join(map(str, universe))}}}: {name};")
        domains[name] = _subsets(universe)
        return name

    def int_var(name: str, values: list[int]) -> str:
        decls.append(_decl(name, values))
        domains[name] = values
        return name

    reified = kind.name.endswith("_reif") or kind.name.endswith("_imp")
    name = kind.name.removesuffix("_reif").removesuffix("_imp")
    args: list[str] = []
    if name == "set_in":
        args = [int_var("x", list(range(rng.randint(-2, 1), rng.randint(1, 4) + 1))), set_var()]
    elif name == "set_card":
        args = [set_var(), int_var("n", list(range(0, rng.randint(1, 4) + 1)))]
    elif name in ("set_union", "set_intersect", "set_diff", "set_symdiff"):
        args = [set_var(), set_var(), set_var()]
    elif name == "array_set_element":
        k = rng.randint(1, 3)
        consts = ["{" + ",".join(map(str, sorted(rng.sample(range(-1, 3), rng.randint(0, 2))))) + "}" for _ in range(k)]
        args = [
            int_var("i", list(range(rng.randint(0, 1), k + rng.randint(0, 1) + 1))),
            "[" + ", ".join(consts) + "]",
            set_var(),
        ]
    elif name == "array_var_set_element":
        k = rng.randint(1, 2)
        items = [set_var() for _ in range(k)]
        args = [
            int_var("i", list(range(rng.randint(0, 1), k + rng.randint(0, 1) + 1))),
            "[" + ", ".join(items) + "]",
            set_var(),
        ]
    else:  # the relations
        args = [set_var(), set_var()]
    if reified:
        decls.append("var bool: r;")
        domains["r"] = [0, 1]
        args.append("r")
    text = "\n".join(decls) + f"\nconstraint {kind.name}({', '.join(args)});\nsolve satisfy;\n"
    return text, domains


@pytest.mark.parametrize("layout", ["blocked", "group"])
@pytest.mark.parametrize("kind", SET_KINDS, ids=[k.key for k in SET_KINDS])
def test_set_propagator_matches_brute_force(kind, layout, monkeypatch):
    """Every set kind (variables as possible/required bitmaps, engine/sets.py) against all
    subsets of small universes, through the independent checker, under both kernels."""
    monkeypatch.setenv("FZN_GPU_KERNEL", "group" if layout == "group" else "item")
    rng = stable_rng(kind.key, "set")
    for _ in range(int(os.environ.get("FZN_GPU_TEST_INSTANCES", "8"))):
        text, domains = set_instance(kind, rng)
        names = list(domains)
        expected = {
            tuple(t)
            for t in brute_force(text, {n: [int(v) if isinstance(v, bool) else v for v in domains[n]] for n in names})
        }
        found, outcome = solve_text(text, all_solutions=True)
        got = as_tuples(found, names)
        assert outcome.complete, text
        assert len(found) == len(got), f"a solution was reported twice\n{text}"
        assert got == expected, (
            f"missing {sorted(map(str, expected - got))[:3]} extra {sorted(map(str, got - expected))[:3]}\n{text}"
        )


@pytest.mark.parametrize("kernel_name", ["item", "group"])
def test_element_over_a_long_array_without_a_bitmap(kernel_name, monkeypatch):
    """z = a[i] over 3,000 entries with i too wide for a bitmap (bounds only: i's bounds go to
    the hull of the entries equal to z, kernels/prop_element.cl): the solutions are exactly
    the indices of such entries."""
    use_kernel(monkeypatch, kernel_name)
    arr = [k % 7 for k in range(1, 3001)]
    text = (
        f"var 1..3000: i; var 3..3: z;\nconstraint array_int_element(i, [{', '.join(map(str, arr))}], z);\n"
        "solve satisfy;\n"
    )
    found, outcome, _ = solve_stats(text, all_solutions=True)
    assert outcome.complete and sorted(s["i"] for s in found) == [k for k in range(1, 3001) if k % 7 == 3]
