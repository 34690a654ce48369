"""Offset views (engine/views.py): an introduced y = x + c that only all_different uses folds
into the constraint's row. Which variables fold, and that every solution (y's value written back
by the host) is exactly what brute force finds, with the fold and without, under both kernels."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fzn_gpu.engine import pack as pack_module
from fzn_gpu.engine import views
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items

from helpers import as_tuples, brute_force_offsets, solve_text


def _set(values: list[int]) -> str:
    return "{" + ",".join(map(str, values)) + "}"


def offset_model(rng: random.Random) -> tuple[str, list[str], dict[str, list[int]], dict[str, tuple[str, int]]]:
    """x0..x3 with holes; y_i = x_i + c_i introduced (some with a declared domain narrower
    than x_i + c_i, one also in an order constraint, one an output: those two stay); an
    all_different over the y, one over two x and a y. Returns the text, the names in solution
    order, the x domains and y -> (x, c)."""
    xs = {f"x{i}": sorted(rng.sample(range(1, 7), rng.randint(3, 5))) for i in range(4)}
    defs = {f"y{i}": (f"x{i}", rng.randint(-3, 3)) for i in range(4)}
    lines = [f"var {_set(d)}: {n} :: output_var;" for n, d in xs.items()]
    for y, (x, c) in defs.items():
        full = [v + c for v in xs[x]]
        dom = full if rng.random() < 0.5 else sorted(set(v for v in full if rng.random() < 0.8) | {full[0]})
        out = " :: output_var" if y == "y3" else ""
        lines.append(f"var {_set(dom)}: {y} :: var_is_introduced :: is_defined_var{out};")
    for y, (x, c) in defs.items():
        coefs = "[1, -1]" if rng.random() < 0.5 else "[-1, 1]"
        rhs = c if coefs == "[1, -1]" else -c  # y - x = c, or x - y = -c
        lines.append(f"constraint int_lin_eq({coefs}, [{y}, {x}], {rhs}) :: defines_var({y});")
    lines.append("constraint fzn_all_different_int([y0, y1, y2, y3]);")
    lines.append("constraint fzn_all_different_int([x0, y1, x2]);")
    lines.append(f"constraint int_le(y2, {rng.randint(2, 6)});")
    lines.append("solve satisfy;")
    return "\n".join(lines) + "\n", list(xs) + list(defs), xs, defs


def test_which_variables_fold():
    """y0 and y1 fold (all_different alone); y2 (also in int_le) and y3 (an output) stay."""
    text, _, _, defs = offset_model(random.Random(1))
    model = lower(parse_items(text, "test.fzn"), "test.fzn")
    found = views.find(model, pack_module.table_vars)
    names = model.vars.names
    assert sorted(names[int(v)] for v in found.y) == ["y0", "y1"]
    for y, x, c in found.triples().tolist():
        assert (names[x], c) == defs[names[y]]
    assert len(found.model.tables["int_lin_eq"]) == 2
    dm = pack_module.pack(found.model, __import__("fzn_gpu.options", fromlist=["SolveOptions"]).SolveOptions())
    assert (dm.lb[found.y] == dm.ub[found.y]).all()  # fixed: no search labels them


def test_device_rows_carry_offsets():
    """[n, x..., c..., base, words]: folded variables replaced by their x, c = 0 for the
    others, the root hull of the values x + c."""
    text, _, _, defs = offset_model(random.Random(2))
    model = lower(parse_items(text, "test.fzn"), "test.fzn")
    found = views.find(model, pack_module.table_vars)
    lb, ub = found.model.vars.lb, found.model.vars.ub
    data, lens = views.alldiff_rows(model.tables["fzn_all_different_int"], found, lb, ub)
    names = model.vars.names
    idx = {n: i for i, n in enumerate(names)}
    assert lens.tolist() == [11, 9]
    xs = [idx[defs["y0"][0]], idx[defs["y1"][0]], idx["y2"], idx["y3"]]
    cs = [defs["y0"][1], defs["y1"][1], 0, 0]
    base = min(lb[x] + c for x, c in zip(xs, cs))
    top = max(ub[x] + c for x, c in zip(xs, cs))
    assert data[:11].tolist() == [4] + xs + cs + [base, (top - base + 32) // 32]
    xs = [idx["x0"], idx[defs["y1"][0]], idx["x2"]]
    cs = [0, defs["y1"][1], 0]
    base = min(lb[x] + c for x, c in zip(xs, cs))
    assert data[11:19].tolist() == [3] + xs + cs + [base]
    values = np.zeros((2, len(names)), dtype=np.int32)
    values[:, idx["x0"]] = [3, 5]
    views.fill(found.triples(), values)
    assert values[:, idx["y0"]].tolist() == [3 + defs["y0"][1], 5 + defs["y0"][1]]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fold", ["1", "0"])
def test_offset_views_against_brute_force(seed, fold, kernel, monkeypatch):
    """Every solution, y written back from x, with declared y domains narrower than x + c."""
    monkeypatch.setenv("FZN_GPU_OFFSET_VIEWS", fold)
    text, names, xs, defs = offset_model(random.Random(seed))
    expected = brute_force_offsets(text, xs, defs)
    found, outcome = solve_text(text, all_solutions=True)
    assert outcome.complete and as_tuples(found, names) == expected and len(found) == len(expected), text
