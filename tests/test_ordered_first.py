"""Solutions in the order of the search tree (--deterministic or -p 1: complete search's ordered
printing, engine/ordered.py): with `-n k` (one by default) the first k solutions printed
are those a sequential search of the annotated tree meets first, whatever the work-items, the
paths the root is split into and the execution model, and the same in every run.

With input_order the tree's order over complete assignments is lexicographic: ascending values
under indomain_min and indomain_split, descending under indomain_max and
indomain_reverse_split. Random models are enumerated by brute force with the independent
checker, and the engine's first k compared with the lexicographic first k."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from fzn_gpu.engine.ordered import LAST, TreeOrder
from fzn_gpu.engine.paths import Paths

from helpers import ROOT, as_tuples, brute_force, solve_text, stable_rng

ASCENDING = {"indomain_min": True, "indomain_split": True, "indomain_max": False, "indomain_reverse_split": False}


def random_model(seed: int, value_choice: str) -> tuple[str, dict[str, list[int]]]:
    """Six variables of 1..5 under an all_different, two linear inequalities and a disequality,
    searched in input order with `value_choice`."""
    rng = stable_rng("ordered", seed)
    n, names = 6, [f"x{i}" for i in range(6)]
    lines = [f"var 1..5: {v} :: output_var;" for v in names]
    group = rng.sample(names, 4)
    lines.append(f"constraint fzn_all_different_int([{','.join(group)}]);")
    for _ in range(2):
        vs = rng.sample(names, 3)
        cs = [rng.choice([-2, -1, 1, 2]) for _ in vs]
        bound = rng.randint(-2, 6)
        lines.append(f"constraint int_lin_le([{','.join(map(str, cs))}],[{','.join(vs)}],{bound});")
    a, b = rng.sample(names, 2)
    lines.append(f"constraint int_ne({a},{b});")
    lines.append(f"solve :: int_search([{','.join(names)}], input_order, {value_choice}, complete) satisfy;")
    return "\n".join(lines) + "\n", {v: list(range(1, n)) for v in names}


def expected_first(text: str, domains: dict[str, list[int]], value_choice: str, k: int) -> list[tuple]:
    sols = sorted(brute_force(text, domains), reverse=not ASCENDING[value_choice])
    return sols[:k]


@pytest.mark.parametrize("value_choice", sorted(ASCENDING))
@pytest.mark.parametrize("subs, budget", [("1", None), ("50", "3")])
def test_first_solutions_are_the_leftmost(kernel, monkeypatch, value_choice, subs, budget):
    """The first 1 and 3 solutions, over random models, both kernels: few paths and the
    default slices, or many paths and slices of 3 nodes (searches to the right of the first
    solution then find theirs slices before the search that meets it)."""
    monkeypatch.setenv("FZN_GPU_SUBS_PER_ITEM", subs)
    if budget:
        monkeypatch.setenv("FZN_GPU_SLICE_BUDGET", budget)
    checked = 0
    for seed in range(4):
        text, domains = random_model(seed, value_choice)
        names = list(domains)
        for k in (1, 3):
            want = expected_first(text, domains, value_choice, k)
            found, outcome = solve_text(text, ordered=True, num_solutions=k)
            got = [tuple(int(s[v]) for v in names) for s in found]
            assert got == want, f"seed {seed}, -n {k}:\n{text}"
            checked += bool(want)
            if len(want) < k:  # fewer solutions than asked: all found, proven
                assert outcome.complete
    assert checked >= 4  # the random models are not all unsatisfiable


@pytest.mark.parametrize("subs", ["50", "1"])
def test_the_leftmost_solution_of_a_model_with_many(kernel, monkeypatch, subs):
    """8-queens in input order: Gecode's first four solutions, with the root split into many
    paths (many solutions found at once by searches to its right), or into one a search with
    the first queen in row 1 (the four solutions there, behind paths that fail early: searches
    fall idle at once, and busy ones give away parts of theirs: re-splitting, which must keep
    the order)."""
    monkeypatch.setenv("FZN_GPU_SUBS_PER_ITEM", subs)
    monkeypatch.setenv("FZN_GPU_SLICE_BUDGET", "3")
    monkeypatch.setenv("FZN_GPU_ITEMS_PER_CU", "4")  # searches enough to fall idle
    donated = []
    real = TreeOrder.donated
    monkeypatch.setattr(
        TreeOrder, "donated", lambda self, sources, paths: (donated.append(len(sources)), real(self, sources, paths))
    )
    n = 8
    lines = [f"var 1..{n}: q{i} :: output_var;" for i in range(n)]
    for off in (1, -1):
        for i in range(n):
            lines.insert(0, f"var -16..16: d{off + 1}_{i};")
            lines.append(f"constraint int_lin_eq([1,-1],[d{off + 1}_{i},q{i}],{off * i});")
    lines.append(f"constraint fzn_all_different_int([{','.join(f'q{i}' for i in range(n))}]);")
    for off in (1, -1):
        lines.append(f"constraint fzn_all_different_int([{','.join(f'd{off + 1}_{i}' for i in range(n))}]);")
    if subs == "1":
        lines.append("constraint int_le(q0, 1);")
    qs = ",".join(f"q{i}" for i in range(n))
    lines.append(f"solve :: int_search([{qs}], input_order, indomain_min, complete) satisfy;")
    text = "\n".join(lines) + "\n"
    names = [f"q{i}" for i in range(n)]
    found, _ = solve_text(text, ordered=True, num_solutions=4)
    assert [tuple(int(s[v]) for v in names) for s in found] == [
        (1, 5, 8, 6, 3, 7, 2, 4),
        (1, 6, 8, 3, 7, 4, 2, 5),
        (1, 7, 4, 6, 8, 2, 5, 3),
        (1, 7, 5, 8, 2, 4, 6, 3),
    ]
    if subs == "1":
        assert sum(donated) > 0  # the order went through re-splitting
    # without ordering the same search prints its solutions in the order found: all agree
    everything, _ = solve_text(text, all_solutions=True)
    assert len(as_tuples(everything, names)) == (92 if subs == "50" else 4)


@pytest.mark.parametrize("flag", ["--deterministic", "-p1"])
def test_the_cli_prints_the_same_first_solution_every_run(tmp_path, flag):
    """Five runs through the CLI with --deterministic (or -p 1: complete search alone,
    ordered), two CPU sub-devices: the same solution, the leftmost."""
    text, domains = random_model(3, "indomain_min")
    want = expected_first(text, domains, "indomain_min", 1)
    assert want
    fzn = tmp_path / "m.fzn"
    fzn.write_text(text)
    env = dict(os.environ, PYTHONPATH=str(ROOT), FZN_GPU_CPU_SUBDEVICES="2")
    outs = set()
    for _ in range(5):
        done = subprocess.run(
            [sys.executable, "-m", "fzn_gpu", "--check", flag, str(fzn)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        values = dict(line.rstrip(";").split(" = ") for line in done.stdout.splitlines() if " = " in line)
        outs.add(tuple(int(values[v]) for v in domains))
    assert outs == {want[0]}


def test_tree_order_keys_through_donations():
    """Three paths; path 0 gives away a region twice (the second deeper, so left of the first),
    and its first donation gives one away in turn: the tree order is path 0, its second
    donation, its first donation's own donation... see the keys."""
    order = TreeOrder(3)
    paths = Paths.from_list([np.zeros(4, np.int32)] * 3)
    paths = paths.extend(Paths.from_list([np.zeros(8, np.int32)]))  # 3: path 0's first
    order.donated(np.array([0]), paths)
    paths = paths.extend(Paths.from_list([np.zeros(12, np.int32)] * 2))  # 4: 0's second, 5: 3's first
    order.donated(np.array([0, 3]), paths)
    assert order.keys[3].tolist()[:2] == [1, LAST - 1] and order.keys[4].tolist()[:2] == [1, LAST - 2]
    # tree order: 0 (what it kept), 4, 3 (what it kept), 5, then 1 and 2
    assert order.sort(np.arange(6)).tolist() == [0, 4, 3, 5, 1, 2]
    # a solution below path 3 waits while path 4 (left of it) runs, not while 1 is unstarted
    frontier = order.frontier(np.array([4, 3]), 1, 3)
    assert frontier.tolist() == order.keys[4].tolist()
    assert order.up_to(np.array([0, 4, 3, 5, 1]), frontier).tolist() == [True, True, False, False, False]
    assert order.frontier(np.array([], np.int64), 3, 3) is None
