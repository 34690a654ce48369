"""Merging an LNS step's improving neighbourhoods (engine/lns_merge.py, Island._merge): the
greedy chain against a plain reference, the prefix merges position by position, the kernel's
own-bound mode (kernel_abi.Results.OWN) against brute force under both execution models, and
whole runs through minizinc whose every printed solution the checker accepts, on a separable
model (merges improve) and on one whose merges break a shared constraint (they must not
print)."""

from __future__ import annotations

import itertools
import re
import subprocess

import numpy as np
import pytest

from fzn_gpu.engine.lns import lns_variables
from fzn_gpu.engine.lns_island import Island, run_batch
from fzn_gpu.engine.lns_merge import MOST, accepted_prefix, disjoint_chain, prefix_merges
from fzn_gpu.engine.lns_paths import DevicePaths
from fzn_gpu.engine.pack import pack
from fzn_gpu.engine.phase import INT_MAX
from fzn_gpu.engine.runner import Exploration, Runner
from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions
from fzn_gpu.runtime.device import select_devices

from conftest import use_kernel
from helpers import have_minizinc, stable_rng


def reference_chain(base: np.ndarray, found: np.ndarray, objectives: np.ndarray, most: int) -> list[int]:
    """The greedy chain written plainly: distinct changed rows, best first (the earlier row
    among equal objectives), the best `most` of them, each kept if it changes no position
    that a kept one changes."""
    seen, order = set(), []
    for i in sorted(range(len(found)), key=lambda i: (objectives[i], i)):
        key = tuple(found[i].tolist())
        if key in seen or (found[i] == base).all():
            continue
        seen.add(key)
        order.append(i)
    taken: set[int] = set()
    chain = []
    for i in order[:most]:
        changed = set(np.flatnonzero(found[i] != base).tolist())
        if not changed & taken:
            taken |= changed
            chain.append(i)
    return chain


def test_the_chain_is_the_greedy_disjoint_one_best_first():
    rng = stable_rng("merge chain")
    np_rng = np.random.default_rng(rng.randrange(2**32))
    for _ in range(300):
        n, m = rng.randint(1, 12), rng.choice([rng.randint(0, 30), rng.randint(100, 600)])
        base = np_rng.integers(0, 3, n)
        found = np.where(np_rng.random((m, n)) < rng.random(), np_rng.integers(0, 3, (m, n)), base[None, :])
        if m and rng.random() < 0.5:  # many repeats of a few rows, as a GPU step's neighbourhoods meet
            found = found[np_rng.integers(0, min(m, rng.randint(1, 8)), m)]
        if m and rng.random() < 0.3:
            found[rng.randrange(m)] = base  # a row that changes nothing
        objectives = np_rng.integers(-5, 5, m)
        most = rng.choice([MOST, rng.randint(1, 5)])
        chain = disjoint_chain(base, found.reshape(m, n), objectives, most)
        assert chain.tolist() == reference_chain(base, found.reshape(m, n), objectives, most)


def test_prefix_merges_apply_each_prefix_of_the_chain():
    rng = stable_rng("merge prefixes")
    np_rng = np.random.default_rng(rng.randrange(2**32))
    for _ in range(200):
        n = rng.randint(2, 15)
        base = np_rng.integers(0, 5, n)
        found = np.where(np_rng.random((20, n)) < 0.3, np_rng.integers(0, 5, (20, n)), base[None, :])
        chain = disjoint_chain(base, found, np_rng.integers(0, 9, 20))
        if len(chain) < 2:
            continue
        start = found[chain[0]]  # what the first round keeps: the best row
        merges = prefix_merges(start, base, found, chain[1:])
        assert merges.shape == (len(chain) - 1, n)
        for p in range(len(chain) - 1):
            expected = start.copy()
            for i in chain[1 : p + 2]:
                expected[found[i] != base] = found[i][found[i] != base]
            assert np.array_equal(merges[p], expected)


@pytest.mark.parametrize(
    "start, scores, kept",
    [
        (10, [9, 8, 7], 3),  # every addition improves
        (10, [9, 9, 7], 1),  # the second adds nothing: dropped, the rest tried again
        (10, [10, 8], 0),  # the first already fails
        (10, [9, INT_MAX, 5], 1),  # an infeasible merge
        (10, [], 0),
    ],
)
def test_the_accepted_prefix_ends_at_the_first_addition_that_did_not_improve(start, scores, kept):
    assert accepted_prefix(start, np.array(scores, dtype=np.int32)) == kept


# Three pairs, each at least 6 between them, the sum minimised: a neighbourhood's best is the
# pairs it releases brought down to 6, each pair's gain its own.
PAIRS = """array [1..6] of int: ones = [1, 1, 1, 1, 1, 1];
var 0..9: x1;
var 0..9: x2;
var 0..9: x3;
var 0..9: x4;
var 0..9: x5;
var 0..9: x6;
var 0..54: total :: is_defined_var;
array [1..6] of var int: x :: output_array([1..6]) = [x1, x2, x3, x4, x5, x6];
constraint int_lin_le([-1, -1], [x1, x2], -6);
constraint int_lin_le([-1, -1], [x3, x4], -6);
constraint int_lin_le([-1, -1], [x5, x6], -6);
constraint int_lin_eq([1, 1, 1, 1, 1, 1, -1], [x1, x2, x3, x4, x5, x6, total], 0) :: defines_var(total);
solve :: int_search(x, input_order, indomain_max, complete) minimize total;
"""


def brute_best(values: np.ndarray, keep: np.ndarray) -> int:
    """The least sum over the released positions' values, the kept ones as in `values`."""
    released = np.flatnonzero(~keep)
    best = INT_MAX
    for combo in itertools.product(range(10), repeat=len(released)):
        x = values.copy()
        x[released] = combo
        if all(x[i] + x[i + 1] >= 6 for i in (0, 2, 4)):
            best = min(best, int(x.sum()))
    return best


@pytest.mark.parametrize("model", ["item", "group"])
def test_each_path_bounded_by_its_own_best_reports_that_best(model, monkeypatch):
    """Results.OWN: every neighbourhood's result is the best below it that beats the phase's
    bound (brute force), the bound where none does; under the phase's one bound (PRUNE) a
    path's result can stop above its own best, never below it, and the best of them all is
    the same."""
    use_kernel(monkeypatch, model)
    model_ = lower(parse_items(PAIRS, "pairs.fzn"), "pairs.fzn")
    dm = pack(model_, SolveOptions())
    fd = lns_variables(model_, dm, free_search=False)  # x1..x6, the annotation's order
    assert len(fd) == 6
    runner = Runner(select_devices("all")[0], dm, max_items=4)
    rng = stable_rng("own bound", model)
    np_rng = np.random.default_rng(rng.randrange(2**32))
    values = np.full(6, 9, dtype=np.int64)
    bound = 50
    keep = np_rng.random((24, 6)) < 0.5
    expected = [min(brute_best(values, k), bound) for k in keep]
    checker, names = Checker(parse_items(PAIRS, "pairs.fzn")), model_.vars.names
    seen: list[int] = []

    def checked(sols: np.ndarray) -> None:
        """Every solution row the phase met satisfies the model and beats the bound."""
        for row in sols:
            assignment = {n: int(row[1 + v]) for v, n in enumerate(names) if n == "total" or n.startswith("x")}
            assert not checker.check(assignment), assignment
            assert int(row[0]) == assignment["total"] < bound
            seen.append(int(row[0]))

    results = {}
    for own in (True, False):
        how = Exploration(own_bound=own)
        runner.set_best(bound)
        paths = DevicePaths.make(fd, values, keep, len(keep)).to_host()
        run_batch(runner, paths, None, how, checked)
        results[own] = how.results[: len(keep)].astype(np.int64)
    assert results[True].tolist() == expected
    pruned = np.where(results[False] == INT_MAX, bound, results[False])
    assert (pruned >= np.array(expected)).all()
    assert pruned.min() == min(expected)
    assert seen and min(seen) == min(expected)


def lns_run(text: str, tmp_path, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / "model.mzn"
    path.write_text(text)
    return subprocess.run(
        ["minizinc", "--solver", "gpu-fzn", "--check", "-a", "-s", *args, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


SEPARABLE = """int: n = 40;
array[1..n] of var 0..9: x;
constraint forall(i in 1..n div 2)(x[2 * i - 1] + x[2 * i] >= 6);
var int: total = sum(x);
solve :: int_search(x, input_order, indomain_max) minimize total;
output ["total = \\(total)\\n"];
"""


@pytest.mark.skipif(not have_minizinc(), reason="needs minizinc with gpu-fzn registered (README set-up)")
@pytest.mark.parametrize("coupled", [False, True])
def test_merged_steps_print_only_solutions_the_checker_accepts(tmp_path, kernel, coupled):
    """Twenty independent pairs: a step's improving neighbourhoods release different pairs,
    and their merges improve on the best of them (lnsMergedSteps). With the sum held at 150 or
    more, merges of improvements that each keep it there can break it together: none may
    print (--check). Both runs come most of the way from the first solution's 360 to their
    optimum (120, 150). Whether a step merges is the merging bandit's choice, by the gains a
    second of the steps with and without, and a run on two shared cores may choose against
    it after a try or two: the separable run is made up to three times for a merged step."""
    text = SEPARABLE.replace("var int: total", "constraint sum(x) >= 150;\nvar int: total") if coupled else SEPARABLE
    for _ in range(3):
        r = lns_run(text, tmp_path, "--lns-strategy", "complete_exploration", "-t", "6000")
        assert r.returncode == 0, r.stderr
        found = [int(v) for v in re.findall(r"^total = (\d+)$", r.stdout, re.M)]
        assert found[0] == 360 and all(b < a for a, b in zip(found, found[1:]))
        assert found[-1] <= (200 if coupled else 180)
        merged = int(re.search(r"lnsMergedSteps=(\d+)", r.stdout).group(1))
        if coupled or merged > 0:
            break
    assert coupled or merged > 0


def test_a_merging_step_offers_the_rows_that_beat_every_row_before_them():
    """Under own bounds a slice holds every neighbourhood's improvements; the island offers
    those that beat all rows written before them, in order, as the step's one bound would have
    let through, and not each distinct improvement."""
    island = Island.__new__(Island)
    offered: list[list[int]] = []
    island.offer = lambda sols: offered.append(sols[:, 0].tolist())
    sols = np.array([[5, 0], [7, 1], [3, 2], [3, 3], [4, 4], [2, 5], [6, 6]], dtype=np.int32)
    island._offer_records(sols)
    assert offered == [[5, 3, 2]]
