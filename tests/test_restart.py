"""Restarts (engine/restart.py) and the satisfaction portfolio (engine/sat_portfolio.py): the
sequences, the annotations, and answers against brute force under both execution models. A
restart proves only when one of its searches finished under its limit; a limit too small for
the tree must never end in a false UNSATISFIABLE or a false optimum."""

from __future__ import annotations

import io
import itertools
import sys
import time

import numpy as np
import pytest

from fzn_gpu.engine import SolveRun
from fzn_gpu.engine.pack import pack
from fzn_gpu.engine.restart import first_solution_restarts, luby, node_limits
from fzn_gpu.engine.runner import Runner
from fzn_gpu.errors import FznError
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.model import RestartSpec
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions
from fzn_gpu.runtime.device import select_devices

from helpers import ROOT, stable_rng

sys.path.insert(0, str(ROOT / "tools"))
import fuzz  # noqa: E402

KERNELS = ["item", "group"]


def run_text(text: str, limit_s: float | None = None, **opts) -> tuple[str, object, dict]:
    """The printed stream, the outcome and the statistics of a whole run (SolveRun, as the
    command line runs it, every solution through the checker)."""
    out = io.StringIO()
    run = SolveRun(lower(parse_items(text, "r.fzn"), "r.fzn"), SolveOptions(devices="cpu", **opts), out=out)
    run.checker = fuzz.Checker(parse_items(text, "r.fzn"))
    run.run_until(time.monotonic() + limit_s if limit_s else None)
    stats = run.search.extra_stats() if run.search is not None else {}
    return out.getvalue(), run.outcome, stats


def queens(n: int, annotation: str) -> str:
    lines = [f"var 1..{n}: q{i} :: output_var;" for i in range(n)]
    for i, j in itertools.combinations(range(n), 2):
        lines.append(f"constraint int_ne(q{i}, q{j});")
        lines.append(f"constraint int_lin_ne([1, -1], [q{i}, q{j}], {j - i});")
        lines.append(f"constraint int_lin_ne([1, -1], [q{i}, q{j}], {i - j});")
    qs = ", ".join(f"q{i}" for i in range(n))
    lines.append(f"solve :: int_search([{qs}], first_fail, indomain_min, complete) {annotation} satisfy;")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ sequences and annotations
def test_luby_sequence():
    assert [luby(i) for i in range(1, 16)] == [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]


@pytest.mark.parametrize(
    "spec, first",
    [
        (RestartSpec("luby", 10), [10, 10, 20, 10, 10, 20, 40]),
        (RestartSpec("geometric", 100, 1.5), [100, 150, 225, 338, 507]),
        (RestartSpec("linear", 7), [7, 14, 21, 28]),
        (RestartSpec("constant", 5), [5, 5, 5]),
    ],
)
def test_node_limits_follow_the_annotation(spec, first):
    assert list(itertools.islice(node_limits(spec), len(first))) == first


@pytest.mark.parametrize(
    "ann, spec",
    [
        ("restart_luby(50)", RestartSpec("luby", 50)),
        ("restart_geometric(1.5, 100)", RestartSpec("geometric", 100, 1.5)),
        ("restart_linear(3)", RestartSpec("linear", 3)),
        ("restart_constant(9)", RestartSpec("constant", 9)),
        ("restart_none", RestartSpec("none")),
    ],
)
def test_restart_annotations_are_read(ann, spec):
    model = lower(parse_items(f"var 1..3: x;\nsolve :: {ann} satisfy;\n", "r.fzn"), "r.fzn")
    assert model.solve.restart == spec


@pytest.mark.parametrize(
    "ann, says",
    [
        ("restart_luby(0)", "not a positive integer"),
        ("restart_geometric(0.5, 10)", "not a number above 1"),
        ("restart_luby(3, 4)", "takes 1 argument"),
    ],
)
def test_bad_restart_annotations_are_refused_with_their_line(ann, says):
    with pytest.raises(FznError) as err:
        lower(parse_items(f"var 1..3: x;\nsolve :: {ann} satisfy;\n", "r.fzn"), "r.fzn")
    assert says in str(err.value) and "r.fzn:2" in str(err.value)


# ------------------------------------------------------------------ answers
@pytest.mark.parametrize("kernel", KERNELS)
def test_restarts_prove_unsatisfiability(monkeypatch, kernel):
    monkeypatch.setenv("FZN_GPU_KERNEL", kernel)
    out, outcome, stats = run_text(queens(3, ":: restart_luby(1)"), engine="restart")
    assert "=====UNSATISFIABLE=====" in out and outcome.complete
    assert stats["restarts"] >= 2  # the first limits were too small for the tree


@pytest.mark.parametrize("kernel", KERNELS)
def test_restarts_print_each_solution_once_and_prove_there_are_no_more(monkeypatch, kernel):
    monkeypatch.setenv("FZN_GPU_KERNEL", kernel)
    out, outcome, _ = run_text(queens(6, ":: restart_luby(2)"), num_solutions=50)
    assert out.count("----------") == 4 and "==========" in out, out  # 6-queens has 4 solutions
    assert outcome.complete


def test_a_limit_too_small_for_the_tree_never_proves(monkeypatch):
    """restart_constant(3) on 7-queens made unsatisfiable: no restart finishes, so the run
    ends by its time limit, saying nothing false."""
    text = queens(7, ":: restart_constant(3)").replace(
        "constraint int_ne(q0, q1);", "constraint int_ne(q0, q1);\nconstraint int_eq(q0, q1);"
    )
    out, outcome, stats = run_text(text, limit_s=3.0, engine="restart")
    assert "UNSATISFIABLE" not in out and not outcome.complete
    assert stats["restarts"] > 10


def test_restart_none_and_all_solutions_search_without_restarts():
    out, _, stats = run_text(queens(6, ":: restart_none"))
    assert "restarts" not in stats and out.count("----------") == 1
    out, _, stats = run_text(queens(6, ":: restart_luby(5)"), all_solutions=True)
    assert "restarts" not in stats and out.count("----------") == 4


def test_one_solution_runs_complete_search_and_restarts_together():
    out, outcome, stats = run_text(queens(8, ""))
    assert stats["engine"] == "complete+restarts" and out.count("----------") == 1
    out, outcome, _ = run_text(queens(3, ""))
    assert "=====UNSATISFIABLE=====" in out and outcome.complete


def test_the_portfolios_own_restarts_select_by_dom_w_deg_beside_the_plan():
    """A satisfaction model asked for one solution: complete search follows the model's plan
    (first_fail here), and the restarts the portfolio adds select by dom_w_deg whatever the plan
    says, so a plan that leads into a hard part of the tree does not keep both engines there;
    restarts that the model asks for (restart_luby) follow its plan as written."""
    out, _, stats = run_text(queens(8, ""))
    assert stats["restartOrder"] == "dom_w_deg" and out.count("----------") == 1
    out, _, stats = run_text(queens(8, ":: restart_luby(20)"))
    assert stats["restartOrder"] == "the plan's" and out.count("----------") == 1


@pytest.mark.parametrize("kernel", KERNELS)
def test_first_solution_restarts_find_one_prove_none_and_stop_when_told(monkeypatch, kernel):
    """restart.first_solution_restarts, the optimisation portfolio's LNS devices' first
    solution (dom_w_deg, beside branch and bound in the plan's order), with its dive in the
    plan's order first and without: on 8-queens minimising the first queen, a solution the
    checker accepts, and the search ends at it; on 3-queens, none exists: the dive or a restart
    finishes the tree and says so (True); told to stop, nothing."""
    from conftest import use_kernel

    use_kernel(monkeypatch, kernel)
    for (n, solvable), dive_first in itertools.product(((8, True), (3, False)), (True, False)):
        text = queens(n, "").replace("satisfy;", "minimize q0;")
        model = lower(parse_items(text, "q.fzn"), "q.fzn")
        runner = Runner(select_devices("all")[0], pack(model, SolveOptions()), max_items=4)
        rows: list = []
        found = first_solution_restarts(runner, None, rows.append, lambda: False, dive_first=dive_first)
        assert found is not solvable
        assert bool(rows) is solvable
        for row in np.concatenate(rows) if rows else []:
            values = {name: int(row[1 + v]) for v, name in enumerate(model.vars.names)}
            assert not fuzz.Checker(parse_items(text, "q.fzn")).check(values), values
        told: list = []
        assert first_solution_restarts(runner, None, told.append, lambda: True) is False and not told


def _fuzz_seeds(count: int) -> list[int]:
    rng = stable_rng("restart-fuzz")
    return [rng.randrange(100_000) for _ in range(count)]


@pytest.mark.parametrize("seed", _fuzz_seeds(30))
def test_restarts_agree_with_brute_force_on_random_models(seed):
    """The fuzzer's random models (every int and bool builtin) under restarts of a tiny scale,
    so that most restarts are cut: every solution (satisfaction) or the optimum, and the
    status, as brute force finds them."""
    case = fuzz.make_case(seed)
    ref = fuzz.brute_force(case)
    if ref is None:
        pytest.skip("too big to enumerate")
    satisfy = case.kind == "satisfy"
    mine = fuzz.run_fzn_gpu(
        case,
        20.0,
        all_solutions=not satisfy,
        engine="restart",
        restart=RestartSpec("luby", 2),
        num_solutions=10**6 if satisfy else None,
    )
    if mine.error and "empty domain" in mine.error:
        pytest.skip(mine.error)
    verdict, detail = fuzz.judge(case, mine, ref, name="brute force")
    assert verdict == "agree", f"seed {seed}: {detail}\n{case.text}"


def _pigeons(n: int) -> str:
    """n pigeons in n - 1 holes, pairwise different: no solution, and a tree of about (n-1)!
    nodes that restarts of a few hundred nodes never finish."""
    xs = [f"p{i}" for i in range(n)]
    lines = [f"var 1..{n - 1}: {x} :: output_var;" for x in xs]
    lines += [f"constraint int_ne({a}, {b});" for a, b in itertools.combinations(xs, 2)]
    lines.append("solve minimize p0;")
    return "\n".join(lines) + "\n"


def test_restart_phases_widen_from_their_first_width(monkeypatch):
    """restart_phases' first_width (the first-solution restarts on a GPU: a search a compute
    unit): the first phase holds that many searches' restarts, four times as many each quick
    phase up to the runner's searches, then each search's restarts double; without it every
    phase is as wide as the runner. Cut restarts prove nothing."""
    from fzn_gpu.engine import restart
    from fzn_gpu.engine.restart import FIRST_PER_SEARCH, restart_phases
    from fzn_gpu.runtime.kernel_abi import Div

    monkeypatch.setattr(restart, "PHASE_S", 1e9)  # every phase counts as quick, however busy the machine

    model = lower(parse_items(_pigeons(9), "p.fzn"), "p.fzn")
    runner = Runner(select_devices("all")[0], pack(model, SolveOptions()), max_items=32)
    for first_width, expected in ((1, [1, 4, 16, 32, 64]), (None, [32, 64, 128, 256, 512])):
        widths: list[int] = []
        real = runner.run_phase

        def run_phase(paths, cutoff, enqueue_all, on_slice, deadline, **kwargs):
            widths.append(len(kwargs["lns"].limits) // FIRST_PER_SEARCH)
            return real(paths, cutoff, enqueue_all, on_slice, deadline, **kwargs)

        runner.run_phase = run_phase  # type: ignore[method-assign]
        phases = iter(range(5))
        explored = restart_phases(
            runner,
            RestartSpec("constant", 100),
            int(Div.TIES | Div.WDEG),
            lambda sols: sols is None or not len(sols) or pytest.fail("a solution of a model without one"),
            None,
            lambda: next(phases, None) is not None,
            lambda phase: phase,
            first_width=first_width,
        )
        del runner.run_phase
        assert explored is False and widths == expected, widths


def test_first_solution_restarts_on_a_gpu_begin_a_search_a_compute_unit(monkeypatch):
    """On a GPU the first-solution restarts' first phase holds a search a compute unit
    (first_width); on a CPU every search of the runner."""
    import dataclasses

    from fzn_gpu.engine import restart

    seen: list = []
    monkeypatch.setattr(restart, "restart_phases", lambda *a, first_width=None, **k: seen.append(first_width) or False)
    model = lower(parse_items(queens(8, "").replace("satisfy;", "minimize q0;"), "q.fzn"), "q.fzn")
    dm = pack(model, SolveOptions())
    cpu = select_devices("all")[0]
    for device, width in ((cpu, None), (dataclasses.replace(cpu, is_gpu=True, compute_units=3), 3)):
        runner = Runner(device, dm, max_items=8)
        offer = lambda rows: pytest.fail("no search ran, yet a solution came")  # noqa: E731
        restart.first_solution_restarts(runner, None, offer, lambda: False, dive_first=False)
        assert seen.pop() == width
