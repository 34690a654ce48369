"""LNS neighbourhoods grown through related variables (engine/lns_graph.py): on a grid's
weighted CSP each cell's relatives are exactly its grid neighbours (through the Aux index and
cost variables between them, not through the objective's sum); grown neighbourhoods hold
distinct variables, connected where the graph allows and completed at random where it does
not; and LNS with both shapes prints only checked, improving solutions down to the optimum."""

import itertools
import re

import numpy as np
import pytest

from fzn_gpu.engine.lns import lns_variables
from fzn_gpu.engine.lns_graph import RelatedVariables
from fzn_gpu.engine.pack import pack
from fzn_gpu.flatzinc.lower import load
from fzn_gpu.options import SolveOptions

from test_cli import fzn, run

DOM = 3


def grid_edges(rows: int, cols: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    right = [((r, c), (r, c + 1)) for r in range(rows) for c in range(cols - 1)]
    down = [((r, c), (r + 1, c)) for r in range(rows - 1) for c in range(cols)]
    return right + down


def grid_costs(rows: int, cols: int, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 20, size=(len(grid_edges(rows, cols)), DOM, DOM))


def grid_wcsp(rows: int, cols: int) -> str:
    """The suite's weighted CSP on a grid as MiniZinc flattens it: per edge an Aux index
    (a linear equality) and an Aux cost (an element), the objective their sum."""
    cells = [(r, c) for r in range(rows) for c in range(cols)]
    name = {(r, c): f"x_{r}_{c}" for r, c in cells}
    out = [f"var 1..{DOM}: {name[p]} :: output_var;\n" for p in cells]
    for k, ((a, b), table) in enumerate(zip(grid_edges(rows, cols), grid_costs(rows, cols))):
        out.append(f"var 1..{DOM * DOM}: i{k} :: is_defined_var;\nvar 0..19: e{k} :: is_defined_var;\n")
        out.append(
            f"constraint int_lin_eq([{DOM}, 1, -1], [{name[a]}, {name[b]}, i{k}], {DOM}) :: defines_var(i{k});\n"
        )
        out.append(
            f"constraint array_int_element(i{k}, [{', '.join(map(str, table.reshape(-1)))}], e{k})"
            f" :: defines_var(e{k});\n"
        )
    m = len(grid_edges(rows, cols))
    out.append(f"var 0..{20 * m}: total :: output_var :: is_defined_var;\n")
    out.append(
        f"constraint int_lin_eq([{', '.join(['1'] * m)}, -1], [{', '.join(f'e{k}' for k in range(m))}, total], 0)"
        " :: defines_var(total);\n"
    )
    xs = ", ".join(name[p] for p in cells)
    out.append(f"solve :: int_search([{xs}], input_order, indomain_max) minimize total;\n")
    return "".join(out)


def graph_of(path: str) -> tuple[RelatedVariables | None, list[str]]:
    model = load(path)
    fd = lns_variables(model, pack(model, SolveOptions()), False)
    return RelatedVariables.of(model, fd), [model.vars.names[v] for v in fd]


def cell(name: str) -> tuple[int, int]:
    _, r, c = name.split("_")
    return int(r), int(c)


def test_a_grid_cells_relatives_are_its_grid_neighbours(tmp_path):
    graph, names = graph_of(fzn(tmp_path, grid_wcsp(4, 5)))
    assert graph is not None and graph.n == 20
    for i, name in enumerate(names):
        r, c = cell(name)
        relatives = {cell(names[j]) for j in graph.adj[graph.ptr[i] : graph.ptr[i + 1]]}
        assert relatives == {
            (r + dr, c + dc) for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)) if 0 <= r + dr < 4 and 0 <= c + dc < 5
        }


def connected(graph: RelatedVariables, members: list[int]) -> bool:
    inside, seen, todo = set(members), {members[0]}, [members[0]]
    while todo:
        u = todo.pop()
        for w in graph.adj[graph.ptr[u] : graph.ptr[u + 1]].tolist():
            if w in inside and w not in seen:
                seen.add(w)
                todo.append(w)
    return seen == inside


def test_grown_neighbourhoods_are_distinct_and_connected(tmp_path):
    graph, _ = graph_of(fzn(tmp_path, grid_wcsp(4, 5)))
    rng = np.random.default_rng(7)
    for k in (1, 2, 5, 12, 20):
        rows = graph.grow(rng, 300, k)
        assert rows.shape == (300, k)
        for row in rows.tolist():
            assert len(set(row)) == k and all(0 <= p < 20 for p in row)
            assert connected(graph, row)
    assert len({tuple(sorted(r)) for r in graph.grow(rng, 300, 4).tolist()}) > 100  # not one patch


def test_a_neighbourhood_beyond_its_component_is_completed_at_random():
    # two pairs of related positions and an isolated one: 0-1, 2-3, 4
    graph = RelatedVariables(np.array([0, 1, 2, 3, 4, 4]), np.array([1, 0, 3, 2]))
    rows = graph.grow(np.random.default_rng(1), 500, 3)
    assert all(len(set(r)) == 3 for r in rows.tolist())
    pairs = [{0, 1}, {2, 3}]
    grown_from_pair = sum(any(p <= set(r) for p in pairs) for r in rows.tolist())
    assert grown_from_pair >= 400  # the start's relative first, then anything
    assert set(rows.reshape(-1).tolist()) == {0, 1, 2, 3, 4}
    assert graph.grow(np.random.default_rng(1), 10, 9).shape == (10, 5)  # k beyond n: all n


def test_no_graph_where_nothing_or_everything_is_related(tmp_path):
    knapsack = (
        "".join(f"var 0..1: b{i} :: output_var;\n" for i in range(40))
        + "var 0..1000: v :: output_var :: is_defined_var;\n"
        f"constraint int_lin_le([{', '.join(str(3 + i % 7) for i in range(40))}], "
        f"[{', '.join(f'b{i}' for i in range(40))}], 50);\n"
        f"constraint int_lin_eq([{', '.join(str(5 + i % 11) for i in range(40))}, -1], "
        f"[{', '.join(f'b{i}' for i in range(40))}, v], 0) :: defines_var(v);\n"
        "solve maximize v;\n"
    )
    assert graph_of(fzn(tmp_path, knapsack, "k.fzn"))[0] is None  # one constraint over all
    triangle = (
        "var 1..3: a :: output_var;\nvar 1..3: b :: output_var;\nvar 1..3: c :: output_var;\n"
        "var 0..9: s :: output_var :: is_defined_var;\n"
        "constraint int_ne(a, b);\nconstraint int_ne(b, c);\nconstraint int_ne(a, c);\n"
        "constraint int_lin_eq([1, 1, 1, -1], [a, b, c, s], 0) :: defines_var(s);\nsolve minimize s;\n"
    )
    assert graph_of(fzn(tmp_path, triangle, "t.fzn"))[0] is None  # every pair: nothing to choose


def brute_force_optimum(rows: int, cols: int) -> int:
    edges, costs = grid_edges(rows, cols), grid_costs(rows, cols)
    cells = [(r, c) for r in range(rows) for c in range(cols)]
    best = None
    for values in itertools.product(range(DOM), repeat=len(cells)):
        at = dict(zip(cells, values))
        total = sum(int(costs[k, at[a], at[b]]) for k, (a, b) in enumerate(edges))
        best = total if best is None else min(best, total)
    return best


def test_lns_with_both_shapes_reaches_the_optimum_through_checked_solutions(tmp_path):
    optimum = brute_force_optimum(3, 3)
    r = run("--engine", "lns", "--check", "-a", "-s", "-t", "4000", fzn(tmp_path, grid_wcsp(3, 3)))
    assert r.returncode == 0, r.stderr
    found = [int(v) for v in re.findall(r"^total = (\d+);$", r.stdout, re.M)]
    assert found and all(b < a for a, b in zip(found, found[1:]))
    assert found[-1] == optimum
    assert "==========" not in r.stdout  # LNS proves nothing
    shapes = dict(re.findall(r"(random|related):(\d+)/\d+", re.search(r'lnsShapeSteps="([^"]*)"', r.stdout)[1]))
    assert int(shapes["related"]) > 0 and int(shapes["random"]) > 0


@pytest.mark.parametrize("seed", [1, 2])
def test_the_same_seed_draws_the_same_neighbourhoods(tmp_path, seed):
    graph, _ = graph_of(fzn(tmp_path, grid_wcsp(3, 4)))
    a = graph.grow(np.random.default_rng(seed), 50, 4)
    b = graph.grow(np.random.default_rng(seed), 50, 4)
    assert (a == b).all()
