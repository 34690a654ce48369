"""A work-group's stack of nodes holds only the levels the device's memory allows for every
group wanted; deeper levels are recomputed from the deepest copy by replaying the branch's
path (kernels/search_group.cl). Counts, optima and every solution must not change whatever the
stack holds, and the stack must be sized so that a big model still gets its groups."""

from __future__ import annotations

import pytest

from fzn_gpu.engine import runner as runner_mod
from fzn_gpu.engine.pack import pack
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions
from fzn_gpu.runtime.device import Device

from helpers import as_tuples, brute_force, solve_text
from test_cli import fzn, queens_by_pairs, run
from test_multidevice import KNAPSACK, QUEENS10, stat

QUEENS8 = queens_by_pairs(8)


@pytest.fixture
def group(monkeypatch):
    """The work-group kernel, the root split into one sub-search space per group, so that
    branches run deep below their paths."""
    monkeypatch.setenv("FZN_GPU_KERNEL", "group")
    monkeypatch.setenv("FZN_GPU_SUBS_PER_ITEM", "1")
    return monkeypatch


@pytest.mark.parametrize("levels", [1, 2, 3])
def test_counts_are_exact_with_recomputed_levels(tmp_path, group, levels):
    """8-queens has 92 solutions; with a stack of `levels` the same tree is searched (same
    nodes), some levels of it recomputed."""
    path = fzn(tmp_path, QUEENS8)
    full = run("-a", "--count-only", "--bucket", "off", "-s", path)
    assert stat(full.stdout, "recomputedLevels") == "0"
    group.setenv("FZN_GPU_STACK_LEVELS", str(levels))
    r = run("-a", "--count-only", "--bucket", "off", "-s", path)
    assert r.returncode == 0, r.stderr
    assert stat(r.stdout, "solutions") == "92"
    # the same tree, up to the node where a path donated on the fly (re-splitting) starts:
    # about 1 run in 20 counts it once less, whichever stack (777 and 776 here, 92 solutions
    # each; an open question, docs/TESTING.md)
    donated = int(stat(r.stdout, "resplitPaths")) + int(stat(full.stdout, "resplitPaths"))
    assert abs(int(stat(r.stdout, "nodes")) - int(stat(full.stdout, "nodes"))) <= donated
    assert int(stat(r.stdout, "recomputedLevels")) > 0


@pytest.mark.parametrize("levels", [1, 3])
def test_every_solution_is_listed_once_with_recomputed_levels(group, levels):
    """Against brute force: three variables with holes, a disequality and a sum, all solutions."""
    text = (
        "var {1,3,4,6,7}: a :: output_var;\nvar 0..5: b :: output_var;\nvar {2,5,8}: c :: output_var;\n"
        "constraint int_ne(a, b);\nconstraint int_lin_le([1, 1, -1], [a, b, c], 4);\n"
        "constraint int_lin_ne([2, -1], [b, a], 1);\nsolve satisfy;\n"
    )
    group.setenv("FZN_GPU_STACK_LEVELS", str(levels))
    found, outcome = solve_text(text, all_solutions=True, devices="cpu")
    want = brute_force(text, {"a": [1, 3, 4, 6, 7], "b": list(range(6)), "c": [2, 5, 8]})
    assert outcome.complete
    assert len(found) == len(want)
    assert as_tuples(found, ["a", "b", "c"]) == want


def test_branch_and_bound_proves_the_optimum_with_recomputed_levels(tmp_path, group):
    """Branch and bound tightens its bound between a level's copy and its replay, so the
    replayed node may be stronger than it was, or fail: the optimum (41, Gecode's) must still be
    proven."""
    group.setenv("FZN_GPU_STACK_LEVELS", "1")
    r = run("-a", "-s", fzn(tmp_path, KNAPSACK))
    assert r.returncode == 0, r.stderr
    assert int(stat(r.stdout, "recomputedLevels")) > 0
    assert r.stdout.rstrip().splitlines()[-1] != "=====UNKNOWN====="
    assert "==========" in r.stdout
    assert stat(r.stdout, "objective") == "41"


def test_re_splitting_with_recomputed_levels_loses_and_repeats_nothing(tmp_path, group):
    """Busy groups donate the right branch of their shallowest open level while their deeper
    levels are recomputed: eight groups on this machine, short slices, a one-level stack. The
    donations' buffer must hold a record per group that may donate (else the heap is
    overwritten: a crash or wrong counts)."""
    group.setenv("FZN_GPU_ITEMS_PER_CU", "4")
    group.setenv("FZN_GPU_SLICE_BUDGET", "200")
    group.setenv("FZN_GPU_STACK_LEVELS", "1")
    r = run("-a", "--count-only", "--bucket", "off", "-s", fzn(tmp_path, queens_by_pairs(11), "q11.fzn"))
    assert r.returncode == 0, r.stderr
    assert stat(r.stdout, "solutions") == "2680" and "==========" in r.stdout
    assert int(stat(r.stdout, "resplitPaths")) > 0 and int(stat(r.stdout, "recomputedLevels")) > 0
    r = run("-a", "-s", "--check", fzn(tmp_path, QUEENS10))
    assert r.returncode == 0 and r.stdout.count("----------") == 724 and "\n==========\n" in r.stdout


def test_a_walk_through_a_huge_domain_keeps_a_short_path(group):
    """x labelled by value on a bounds-only domain of 70,001 values, every x below 66,000
    failing only once y is labelled: each value tried is a right branch x > v. The path keeps
    the last of them only (compact_right_branch), so a one-level stack recomputes its way to the
    first solution instead of running out of path capacity (65,536 decisions)."""
    text = (
        "var 0..70000: x :: output_var;\nvar 0..1: y :: output_var;\nvar bool: b;\n"
        "constraint int_lin_le_reif([1], [x], 65999, b);\nconstraint bool_xor(b, y, y);\n"
        "solve :: int_search([x, y], input_order, indomain_min, complete) satisfy;\n"
    )
    group.setenv("FZN_GPU_STACK_LEVELS", "1")
    found, outcome = solve_text(text, devices="cpu")
    assert outcome.error is None
    assert as_tuples(found, ["x", "y"]) == {(66000, 0)}


class _Sized(runner_mod.Runner):
    """A runner's sizing alone, for a device that is not here (no OpenCL context)."""

    def __init__(self, device: Device, dm) -> None:
        self.device, self.dm = device, dm
        self.tuning = runner_mod.Tuning.for_device(device)
        self.group = True
        self.narrow = dm.narrow
        self.stack_levels = self._stack_levels()
        self.max_items = self._default_items()


def test_a_big_node_leaves_room_for_every_group(group):
    """A QAP-like model: 30 facilities, element results with big domains (bitmaps), so the
    worst-case depth (every Aux split to a point) times the node would fill an H100 with a few
    groups. The stack is cut to what fits, and every group wanted gets its memory."""
    n = 30
    lines = [f"var 1..{n}: p{i};" for i in range(n)]
    flows = ",".join(str((7 * i) % 997 + 3) for i in range(n * n))
    for i in range(n):
        for j in range(i + 1, n):
            lines += [
                f"var 1..{n * n}: k{i}_{j} :: var_is_introduced :: is_defined_var;",
                f"var 3..1000: e{i}_{j} :: var_is_introduced :: is_defined_var;",
                f"constraint int_lin_eq([{n}, 1, -1], [p{i}, p{j}, k{i}_{j}], {n}) :: defines_var(k{i}_{j});",
                f"constraint array_int_element(k{i}_{j}, [{flows}], e{i}_{j}) :: defines_var(e{i}_{j});",
            ]
    es = [f"e{i}_{j}" for i in range(n) for j in range(i + 1, n)]
    lines += [
        "var 0..1000000: cost :: output_var;",
        f"constraint int_lin_eq([{', '.join(['1'] * len(es))}, -1], [{', '.join(es)}, cost], 0);",
        "solve :: int_search([" + ", ".join(f"p{i}" for i in range(n)) + "], first_fail, indomain_min, complete) "
        "minimize cost;",
    ]
    text = "\n".join(lines) + "\n"
    dm = pack(lower(parse_items(text, "qap.fzn"), "qap.fzn"), SolveOptions())
    h100 = Device(0, None, "H100", "NVIDIA", True, 132, 80 << 30, 20 << 30, 49152)
    sized = _Sized(h100, dm)
    want = h100.compute_units * sized.tuning.items_per_cu
    assert sized.stack_levels < dm.maxd + 1  # the worst case does not fit ...
    assert sized.stack_levels >= n + 1  # ... the real depth does
    assert sized.max_items == want  # and every group runs
    small = pack(lower(parse_items(QUEENS8, "q.fzn"), "q.fzn"), SolveOptions())
    assert _Sized(h100, small).stack_levels == small.maxd + 1  # a small model keeps its whole depth


def test_phases_of_few_searches_get_wider_groups(monkeypatch):
    """Runner.phase_local: a phase of one search (a dive) or a few (an LNS step) widens its
    work-groups, doubling while the phase fills no more work-items than a full launch, up to
    Tuning.wide_local, the kernel's limit and the local memory; a full phase keeps the tuned
    width; a CPU (wide_local 0 by default) never widens."""
    monkeypatch.delenv("FZN_GPU_WIDE_LOCAL", raising=False)
    monkeypatch.setenv("FZN_GPU_KERNEL", "group")
    dm = pack(lower(parse_items(QUEENS8, "q.fzn"), "q.fzn"), SolveOptions())
    h100 = Device(0, None, "H100", "NVIDIA", True, 132, 80 << 30, 20 << 30, 49152)
    sized = _Sized(h100, dm)
    sized.max_group_width, sized.store_global = 1024, False
    base, full = sized.tuning.local, sized.max_items
    assert sized.phase_local(full) == base
    assert sized.phase_local(1) == 1024
    assert sized.phase_local(full // 16) == 16 * base
    assert sized.phase_local(full // 16 + 1) == 8 * base
    sized.max_group_width = 256  # the kernel's own limit
    assert sized.phase_local(1) == 256
    sized.max_group_width = 1024
    sized.device = Device(
        0, None, "H100", "NVIDIA", True, 132, 80 << 30, 20 << 30, sized._group_local_bytes(True, 128)
    )  # local memory for 128 at most
    assert sized.phase_local(1) == 128
    cpu = _Sized(Device(0, None, "CPU", "PoCL", False, 2, 24 << 30, 6 << 30, 1 << 20), dm)
    cpu.max_group_width, cpu.store_global = 4096, False
    assert cpu.phase_local(1) == cpu.tuning.local
