"""Large neighbourhood search (engine/lns.py): every strategy improves a poor first solution
(the search annotation's) on small knapsack, QAP and TSP models, every printed solution passes
the checker (--check), time limits and LNS time-outs hold, and nothing claims optimality."""

import re
import subprocess
import time

import numpy as np
import pytest

from fzn_gpu.engine import assignment
from fzn_gpu.engine import lns as lns_module
from fzn_gpu.engine.incumbent import Incumbent, Outcome
from fzn_gpu.engine.lns import LnsSearch, lns_arms, lns_variables
from fzn_gpu.engine.lns_island import CE_NODES, Island, ModesPace, StepPace, StrategyBandit
from fzn_gpu.engine.pack import pack
from fzn_gpu.engine.runner import Runner
from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions
from fzn_gpu.runtime.device import all_devices, select_devices

from conftest import use_kernel
from helpers import ROOT, have_minizinc, superseded
from test_cli import fzn, run

pytestmark = pytest.mark.skipif(not have_minizinc(), reason="needs minizinc with gpu-fzn registered (README set-up)")

MODELS = ROOT / "models" / "lns"
STRATEGIES = ["complete_exploration", "random_labeling", "random_permutation", "two_exchange", "icm", "gibbs"]
SLACK_S = 1.2


def solve(model: str, *args: str) -> subprocess.CompletedProcess:
    """Through minizinc, as users run it; --check verifies every solution before it is printed."""
    return subprocess.run(
        ["minizinc", "--solver", "gpu-fzn", "--check", *args, str(MODELS / f"{model}.mzn")],
        capture_output=True,
        text=True,
        timeout=120,
    )


def objectives(stdout: str, name: str) -> list[int]:
    return [int(v) for v in re.findall(rf"^{name} = (-?\d+)$", stdout, re.M)]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(
    "model, objective, sense", [("knapsack_30", "value", -1), ("qap_8", "cost", 1), ("tsp_10", "length", 1)]
)
def test_every_strategy_improves_a_poor_first_solution(strategy, model, objective, sense, kernel):
    # without the relaxations, whose knapsack hint makes the first solution the optimum
    r = solve(model, "--lns-strategy", strategy, "--relax", "off", "-a", "-s", "-t", "6000")
    assert r.returncode == 0, r.stderr
    found = objectives(r.stdout, objective)
    assert len(found) >= 2, r.stdout[-2000:]  # the first solution, then improvements
    assert all(sense * b < sense * a for a, b in zip(found, found[1:]))  # each one strictly better
    assert f'lnsStrategy="{strategy}"' in r.stdout
    assert "==========" not in r.stdout  # LNS proves nothing


def test_the_annotation_chooses_lns_and_the_command_line_overrides_it():
    r = solve("tsp_circuit_10", "-s", "-t", "4000")
    assert 'lnsStrategy="complete_exploration"' in r.stdout and "lnsPercent=50" in r.stdout
    r = solve("tsp_circuit_10", "-s", "-t", "4000", "--lns-strategy", "random_labeling", "--lns-starts", "4")
    assert 'lnsStrategy="random_labeling"' in r.stdout and "lnsStarts=4" in r.stdout
    assert "lnsPercent=50" in r.stdout  # what the command line left, from the annotation
    assert "==========" not in r.stdout and objectives(r.stdout, "length")


def test_time_limit_and_lns_time_out_are_honoured(tmp_path):
    text = (MODELS / "knapsack_30.mzn").read_text()
    subprocess.run(
        [
            "minizinc",
            "-c",
            "--solver",
            "gpu-fzn",
            str(MODELS / "knapsack_30.mzn"),
            "--fzn",
            str(tmp_path / "k.fzn"),
            "--ozn",
            str(tmp_path / "k.ozn"),
        ],
        check=True,
        capture_output=True,
    )
    assert "maximize value" in text
    t0 = time.monotonic()
    # without the relaxations, whose knapsack bound and hint let LNS's first dive prove the optimum
    off = ("--relax", "off")
    r = run("-s", "--check", *off, "--lns-strategy", "gibbs", "-t", "3000", str(tmp_path / "k.fzn"))
    assert r.returncode == 0 and time.monotonic() - t0 < 3.0 + SLACK_S
    t0 = time.monotonic()
    r = run("-s", "--check", *off, "--lns-strategy", "icm", "--lns-timeout", "1", str(tmp_path / "k.fzn"))
    init = float(re.search(r"initTime=([\d.]+)", r.stdout).group(1))
    assert r.returncode == 0 and time.monotonic() - t0 < init + 1.0 + SLACK_S
    assert "objective=" in r.stdout and "==========" not in r.stdout
    # S descents done before the time limit: the run ends and says why, claiming nothing
    r = run(
        "-s",
        "--check",
        *off,
        "--engine",
        "lns",
        "--lns-restarts",
        "2",
        "--lns-steps",
        "3",
        "-t",
        "60000",
        str(tmp_path / "k.fzn"),
    )
    assert r.returncode == 0 and "==========" not in r.stdout, r.stderr
    assert "after its 2 descents from the first solution" in r.stderr
    assert re.search(r"lnsRestarts=1\b", r.stdout) and re.search(r"lnsSteps=6\b", r.stdout)


def test_a_satisfaction_model_with_lns_is_solved_completely(tmp_path):
    text = (
        "var 0..10: x :: output_var;\nvar 0..10: y;\nconstraint int_lin_le([2, 3], [x, y], 12);\n"
        "solve :: lns(20, 32, 16, 50, random_labeling, 5, 8) satisfy;\n"
    )
    r = run("--check", fzn(tmp_path, text))
    assert r.returncode == 0 and r.stdout.endswith("----------\n") and "LNS needs an objective" in r.stderr


@pytest.mark.parametrize(
    "args, words", [(["--lns-percent", "150"], "over 100"), (["--lns-strategy", "tabu"], "invalid choice")]
)
def test_bad_lns_settings_are_one_clear_message(tmp_path, args, words):
    text = "var 0..10: x :: output_var;\nconstraint int_le(x, 7);\nsolve maximize x;\n"
    r = (
        run("--lns-strategy", "icm", *args, fzn(tmp_path, text))
        if "--lns-strategy" not in args
        else run(*args, fzn(tmp_path, text))
    )
    assert r.returncode != 0 and words in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("fault", [None, "1:2"])
def test_every_device_runs_its_own_steps_and_a_failed_one_leaves_the_rest(monkeypatch, fault, kernel):
    """Two PoCL sub-devices: each runs LNS steps from the best either has found; a device
    failing at its second step leaves the other going, and the stream stays improving."""
    monkeypatch.setenv("FZN_GPU_CPU_SUBDEVICES", "2")
    if fault:
        monkeypatch.setenv("FZN_GPU_TEST_HOOKS", f"device={fault}")
    r = solve("qap_8", "--lns-strategy", "random_labeling", "-a", "-s", "-t", "5000")
    assert r.returncode == 0, r.stderr
    found = objectives(r.stdout, "cost")
    assert len(found) >= 2 and all(b < a for a, b in zip(found, found[1:]))
    steps = [int(re.search(rf"d{i}_lnsSteps=(\d+)", r.stdout).group(1)) for i in (0, 1)]
    improvements = [int(re.search(rf"d{i}_lnsImprovements=(\d+)", r.stdout).group(1)) for i in (0, 1)]
    assert len(found) + superseded(r.stdout) == sum(improvements)  # each device's, the first its dive's
    gains = [int(re.search(rf"d{i}_lnsGain=(\d+)", r.stdout).group(1)) for i in (0, 1)]
    assert sum(gains) == found[0] - found[-1]  # every improvement's gain, the first solution's none
    if fault:
        assert steps[1] == 1 and steps[0] > 2 and "LNS goes on without" in r.stderr
    else:
        assert min(steps) > 2 and "==========" not in r.stdout


def simulated_bandit(arms: list[tuple[float, float]], steps: int = 400) -> np.ndarray:
    """Steps a StrategyBandit gives each arm, where arm i gains a share g_i of the objective
    in every step of s_i seconds, (g_i, s_i), from an objective that keeps improving."""
    bandit = StrategyBandit(len(arms), np.random.default_rng(1))
    objective = 10**9
    for _ in range(steps):
        arm = bandit.pick()
        gain, seconds = arms[arm]
        after = objective - int(objective * gain)
        bandit.update(arm, objective, after, seconds)
        objective = after
    return bandit.steps


def test_the_bandit_prefers_the_most_gain_per_second():
    """A strategy of rare big steps beats one of frequent small ones when it gains more per
    second (complete exploration against two-exchange on a GPU), and the reverse: the measure is
    the objective gained per second, not improving steps per second."""
    big_slow, small_quick = (0.01, 0.05), (0.0002, 0.002)  # 0.2 and 0.1 of the objective a second
    steps = simulated_bandit([small_quick, big_slow])
    assert steps[1] > 0.8 * steps.sum()  # the rest: exploring at random
    steps = simulated_bandit([(0.001, 0.05), small_quick])  # 0.02 against 0.1
    assert steps[1] > 0.8 * steps.sum()


def test_exploring_gives_each_arm_about_the_same_time():
    """Exploring steps draw an arm in inverse proportion to its recent seconds a step: two arms
    that gain nothing, one of 20 times the other's steps, each take about the same share of
    the exploring time, and the slow one far fewer steps than a uniform draw would give it
    (about a third of the exploring steps)."""
    bandit = StrategyBandit(3, np.random.default_rng(3))
    costs = (0.05, 0.05, 1.0)  # arm 0 gains, arms 1 and 2 never do
    objective, explored = 10**9, np.zeros(3)
    for _ in range(2000):
        arm = bandit.pick()
        after = objective - objective // 100 if arm == 0 else objective
        bandit.update(arm, objective, after, costs[arm])
        objective, explored[arm] = after, explored[arm] + costs[arm]
    slow_steps = bandit.steps[2] - 1  # beside its first try
    assert 0 < slow_steps < 0.15 * (bandit.steps[1] + bandit.steps[2])
    assert 0.3 < explored[2] / explored[1] < 3
    assert bandit.steps[0] > 0.85 * bandit.steps.sum()


def test_where_no_arm_has_gained_each_takes_about_the_same_time():
    """Every arm tried and none gaining (a first solution no strategy improves): the bandit
    spreads the time over them, as its exploring steps do, instead of taking the quickest
    arm every step (a futile 1 ms random permutation held a CPU island's coins grid at its
    first solution: docs/bench/measurements.md, the bandit where nothing gains)."""
    bandit = StrategyBandit(3, np.random.default_rng(5), streak=StrategyBandit.STREAK)
    costs = (0.001, 0.02, 0.05)
    spent = np.zeros(3)
    for _ in range(3000):
        arm = bandit.pick()
        bandit.update(arm, 1000, 1000, costs[arm])
        spent[arm] += costs[arm]
    assert spent.min() > 0.5 * spent.max(), spent  # before: the quickest's 3.0 s against 0.4 s


def test_an_arm_that_gains_goes_on_before_the_untried_ones_are_tried():
    """With a streak (the strategies' bandit), while arms are untried the last one goes on as
    long as it gains, up to STREAK steps in a row; a step that gains nothing hands over to the
    next untried arm, and each arm is tried once before the bandit weighs them. Without one
    each arm is tried once in turn."""
    bandit = StrategyBandit(3, np.random.default_rng(4), StrategyBandit.STREAK)
    picks = []
    for objective in range(1000, 1000 - StrategyBandit.STREAK, -1):
        picks.append(bandit.pick())
        bandit.update(picks[-1], objective, objective - 1, 0.01)  # every step of arm 0 gains
    assert picks == [0] * StrategyBandit.STREAK
    assert bandit.pick() == 1  # the streak's end: the next untried arm
    bandit.update(1, 900, 899, 0.01)
    assert bandit.pick() == 1  # it gains: it goes on
    bandit.update(1, 899, 899, 0.01)
    assert bandit.pick() == 2  # it gained nothing: the next untried arm
    bandit.update(2, 899, 899, 0.01)
    assert bandit.steps.min() == 1  # each tried; from here the bandit weighs them
    plain = StrategyBandit(2, np.random.default_rng(4))  # no streak (shapes, merging)
    plain.update(plain.pick(), 1000, 900, 0.01)
    assert plain.pick() == 1  # arm 0 gained, and arm 1 is tried all the same


def test_a_stalled_strategy_gives_way():
    """An arm that stops gaining loses its lead to one that still gains, however slowly."""
    bandit = StrategyBandit(2, np.random.default_rng(2))
    for arm in (0, 1):
        assert bandit.pick() == arm  # each is tried once first
        bandit.update(arm, 1000, 1000 if arm == 0 else 999, 0.05)
    bandit.update(0, 1000, 900, 0.05)  # arm 0's one big gain
    picks = []
    for _ in range(200):
        arm = bandit.pick()
        picks.append(arm)
        bandit.update(arm, 1000, 1000 if arm == 0 else 999, 0.05)  # arm 0 has stalled
    assert picks[-50:].count(1) > 40


def descents(
    stall: int | None,
    steps: int,
    restarts: int,
    other_at: int | None = None,
    kicks: list[tuple[int, int]] | None = None,
) -> list[tuple[int, int]]:
    """Island.run over a fake step that improves the objective by one down to 7 (from the first
    solution's 10) and then nothing: the (objective the step began from, step) of every step.
    `other_at`: at that step another island offers 5 (the incumbent's best from then on).
    `kicks`: kicks are on (every descent after the first begins at one, over 10 decision
    variables and a percent of 20), and each is recorded as (the best it kicked, the variables
    it released); a kick gives the best's objective plus 3. Without it, kicks are off."""
    from types import SimpleNamespace

    island = Island.__new__(Island)
    island.index, island.stall, island.bandit, island.shapes = 0, stall, None, None
    island.arms = [SimpleNamespace(restarts=restarts, steps=steps, percent=20)]
    island.fd = np.arange(10)
    island.kick_every, island.kick_size, island.kicked_from = (1 if kicks is not None else 0), 0, None
    island.incumbent = Incumbent(Outcome(), 1, lambda values, objective: None)
    island.runner = SimpleNamespace(verbose=False)
    island.steps = island.improvements = island.improving_steps = island.restarts = 0
    seen: list[tuple[int, int]] = []

    def step(current, deadline):
        seen.append((current[0], len(seen) + 1))
        if len(seen) == other_at:
            island.incumbent.offer(np.array([[5, 0]]))
        if current[0] <= 7:
            return None
        island.incumbent.offer(np.array([[current[0] - 1, 0]]))
        return (current[0] - 1, current[1])

    def kick(best, k, deadline):
        kicks.append((best[0], k))
        return (best[0] + 3, best[1])

    island.step, island._kick = step, kick
    island.run((10, np.zeros(1, dtype=np.int64)), None)
    return seen


def test_descents_after_the_first_begin_at_kicks_that_grow_until_the_best_improves():
    """With kicks on, every descent after the first begins at a kick of the best so far, of
    KICK_SCALE times the percent's variables (2 x 2 of 10); a kick after which the best did
    not improve is followed by one twice as big, up to every variable; an improvement (5,
    from another island) sets the size back."""
    kicks: list[tuple[int, int]] = []
    seen = descents(stall=2, steps=50, restarts=4, kicks=kicks)
    assert [obj for obj, _ in seen] == [10, 9, 8, 7, 7] * 4  # each kick gives 7 + 3
    assert kicks == [(7, 4), (7, 8), (7, 10)]
    kicks.clear()
    descents(stall=2, steps=50, restarts=4, other_at=8, kicks=kicks)  # 5 arrives in the second descent
    assert kicks == [(7, 4), (5, 4), (5, 8)]


def test_a_default_descent_restarts_once_it_stalls_and_a_given_h_after_h_steps():
    """Without the user's H, a descent restarts from the first solution after `stall` steps
    in a row improve nothing (3 improving steps from 10 to 7, then 2 that fail); with H, after
    H steps whatever they did. An improvement another island found counts as the descent's."""
    stalled = descents(stall=2, steps=50, restarts=3)
    assert [obj for obj, _ in stalled] == [10, 9, 8, 7, 7] * 3
    fixed = descents(stall=None, steps=4, restarts=2)
    assert [obj for obj, _ in fixed] == [10, 9, 8, 7] * 2
    shared = descents(stall=2, steps=50, restarts=1, other_at=4)  # 5 arrives in step 4's stall
    assert [obj for obj, _ in shared] == [10, 9, 8, 7, 5, 5]


def test_step_pace_keeps_steps_near_the_target():
    """Complete exploration's node budget: doubling after quick steps up to CE_NODES, cut in
    proportion after slow ones, never under LOWEST; a device whose node costs a millisecond
    settles where a step lasts about the target."""
    pace = StepPace()
    assert pace.nodes == StepPace.START
    for _ in range(20):
        pace.after_step(StepPace.TARGET_S / 10)
    assert pace.nodes == CE_NODES
    pace.after_step(StepPace.TARGET_S * 4)
    assert pace.nodes == CE_NODES // 4
    for _ in range(5):
        pace.after_step(1000.0)
    assert pace.nodes == StepPace.LOWEST
    slow = StepPace()
    for _ in range(30):
        slow.after_step(0.005 + 0.001 * slow.nodes)  # 5 ms a step plus 1 ms a node
    assert 0.005 + 0.001 * slow.nodes <= 2 * StepPace.TARGET_S and slow.nodes >= StepPace.LOWEST


def test_modes_pace_sizes_icm_and_gibbs_steps_to_the_device():
    """ICM's and Gibbs' neighbourhoods (M chains each): at first about one candidate path per
    search at a position (2 candidates a value a chain), so a GPU of 4,224 searches over TSP 60's
    60 values starts with 2 neighbourhoods of 16 chains, not the 264 that built 506,880 paths a
    position; a step cut off or over the target halves them, one under half of it doubles
    them, between 1 and T."""
    gpu = ModesPace(264, searches=4224, values=60, starts=16)
    assert gpu.count == 2 and 2 * 16 * 2 * 60 <= 4224
    gpu.after_step(StepPace.TARGET_S / 10, cut=True)
    assert gpu.count == 1
    gpu.after_step(StepPace.TARGET_S * 3, cut=False)
    assert gpu.count == 1
    for _ in range(20):
        gpu.after_step(StepPace.TARGET_S / 10, cut=False)
    assert gpu.count == 264
    gpu.after_step(StepPace.TARGET_S * 0.75, cut=False)  # near the target: kept
    assert gpu.count == 264
    small = ModesPace(1, searches=8, values=5, starts=16)  # a small CPU: the one neighbourhood
    assert small.count == 1
    small.after_step(0.0, cut=False)
    assert small.count == 1


@pytest.mark.parametrize("strategy", ["icm", "gibbs"])
def test_icm_and_gibbs_steps_are_paced_unless_the_user_names_t(strategy):
    """With LNS's default T, -s shows ICM's and Gibbs' paced neighbourhoods
    (lnsModesNeighbourhoods, ModesPace); with T given (--lns-neighbourhoods) there is no pace
    and each step has T; both improve and print only checked solutions."""
    for extra in ([], ["--lns-neighbourhoods", "3"]):
        r = solve("qap_8", "--lns-strategy", strategy, "-a", "-s", "-t", "3000", *extra)
        assert r.returncode == 0, r.stderr
        assert len(objectives(r.stdout, "cost")) >= 2, r.stdout[-2000:]
        paced = re.search(r'lnsModesNeighbourhoods="(\d+)"', r.stdout)
        assert (paced is None) == bool(extra), r.stdout[-2000:]
        assert paced is None or int(paced.group(1)) >= 1


def test_step_pace_cuts_neighbourhoods_before_the_budget_goes_under_its_floor():
    """With many neighbourhoods a step (a GPU's 4,224): a slow step cuts the budget to FLOOR,
    then the neighbourhoods, down to a SHARE_KEPT-th, and only then the budget below FLOOR; quick steps
    give them back in the reverse order. Without steer_count (the user's T) the neighbourhoods
    stay T."""
    pace = StepPace(4224, steer_count=True)
    assert (pace.count, pace.nodes) == (4224 // StepPace.SHARE_KEPT, StepPace.START)  # starts small
    for _ in range(4):
        pace.after_step(StepPace.TARGET_S / 10)
    assert (pace.count, pace.nodes) == (4224, StepPace.START)
    pace.after_step(StepPace.TARGET_S * 4)
    assert (pace.count, pace.nodes) == (1056, StepPace.FLOOR)
    for _ in range(10):
        pace.after_step(1000.0)
    assert (pace.count, pace.nodes) == (4224 // StepPace.SHARE_KEPT, StepPace.LOWEST)
    for _ in range(3):
        pace.after_step(StepPace.TARGET_S / 10)
    assert (pace.count, pace.nodes) == (4224 // StepPace.SHARE_KEPT, StepPace.FLOOR)
    for _ in range(30):
        pace.after_step(StepPace.TARGET_S / 10)
    assert (pace.count, pace.nodes) == (4224, CE_NODES)
    settled = StepPace(4224, steer_count=True)
    for _ in range(40):  # a node costs 10 ms a neighbourhood-thousandth: steps of count * nodes
        settled.after_step(0.002 + 1e-7 * settled.count * settled.nodes)
    assert settled.nodes >= StepPace.FLOOR and settled.count < 4224
    assert 0.002 + 1e-7 * settled.count * settled.nodes <= 2 * StepPace.TARGET_S
    fixed = StepPace(4224, steer_count=False)
    for _ in range(10):
        fixed.after_step(1000.0)
    assert (fixed.count, fixed.nodes) == (4224, StepPace.LOWEST)


def test_a_step_is_reshaped_by_the_share_of_neighbourhoods_cut_at_the_budget():
    """Most neighbourhoods cut at the node budget: half as many with twice the budget; almost
    none cut: twice as many with half the budget, not under FLOOR; the work per step stays, and
    the user's T (no steer_count) is never reshaped."""
    mid = 0.75 * StepPace.TARGET_S  # neither slow nor quick: the time moves nothing
    pace = StepPace(4224, steer_count=True)
    pace.count = 4224  # as the first quick steps leave it (it starts small)
    pace.after_step(mid, cut_share=0.9)
    assert (pace.count, pace.nodes) == (2112, 2 * StepPace.START)
    pace.after_step(mid, cut_share=0.3)
    assert (pace.count, pace.nodes) == (2112, 2 * StepPace.START)
    pace.after_step(mid, cut_share=0.0)
    assert (pace.count, pace.nodes) == (4224, StepPace.START)
    pace.after_step(mid, cut_share=0.0)
    assert (pace.count, pace.nodes) == (4224, StepPace.START)  # at most T, at least FLOOR
    for _ in range(20):
        pace.after_step(mid, cut_share=1.0)
    assert pace.count == 4224 // StepPace.SHARE_KEPT and pace.nodes <= CE_NODES
    fixed = StepPace(4224, steer_count=False)
    fixed.after_step(mid, cut_share=1.0)
    assert (fixed.count, fixed.nodes) == (4224, StepPace.START)


def test_a_slow_step_is_cut_off_and_paced_down(monkeypatch):
    """A step gets a deadline CUTOFF_S after it began (or the run's, if sooner), whatever its
    strategy: a first step of thousands of big neighbourhoods on a GPU would otherwise run to
    the time limit, and the pace learns only from a step that ends. A cut complete-exploration
    step then shrinks the next one."""
    from types import SimpleNamespace

    import numpy as np

    from fzn_gpu.engine.lns_island import Island

    monkeypatch.setattr(StepPace, "CUTOFF_S", 4 * StepPace.TARGET_S)
    island = Island.__new__(Island)
    island.settings = SimpleNamespace(strategy="complete_exploration", starts=1)
    island.pace = StepPace(4224, steer_count=True)
    island.fd = np.arange(3)
    island.grow_release, island.extra_released, island.unimproved = False, 0, 0
    island.runner = SimpleNamespace(phase_explored=0, phase_cut=0)
    island.merging = None  # every step bounded by its best: the fake _explore below
    monkeypatch.setattr(Island, "_release_size", lambda self: 1)
    monkeypatch.setattr(Island, "_neighbourhoods", lambda self, count: np.zeros((count or 4, 1), dtype=np.int64))
    monkeypatch.setattr(Island, "_released_paths", lambda self, values, count, k, repeat: None)
    monkeypatch.setattr(Island, "_paths", lambda self, assign, fixed: None)
    given = []

    def explore(self, paths, obj, deadline, how, bound=None):  # a step that would run for ever
        given.append(deadline - time.monotonic())
        time.sleep(max(0.0, deadline - time.monotonic()))
        return None

    monkeypatch.setattr(Island, "_explore", explore)
    island.step((10, np.zeros(3, dtype=np.int64)), None)
    assert 0 < given[0] <= StepPace.CUTOFF_S
    assert island.pace.count < 4224  # the cut step shrank the next one
    island.step((10, np.zeros(3, dtype=np.int64)), time.monotonic() + 0.01)
    assert given[1] <= 0.01  # the run's deadline, when sooner
    island.settings = SimpleNamespace(strategy="random_permutation", starts=2)
    island.rng = np.random.default_rng(0)
    island.step((10, np.zeros(3, dtype=np.int64)), None)  # every strategy's step is cut off
    assert 0 < given[2] <= StepPace.CUTOFF_S


def test_a_neighbourhood_grows_once_every_set_of_its_size_failed():
    """grow_release: after as many unimproved complete-exploration neighbourhoods as there are
    sets of k of the n variables, the next ones release k + 1; an improvement (or a restart)
    goes back to the percent's k; with the user's percent nothing grows."""
    from types import SimpleNamespace

    import numpy as np

    from fzn_gpu.engine.lns_island import Island

    island = Island.__new__(Island)
    island.settings = SimpleNamespace(percent=34, neighbourhoods=1000)
    island.fd = np.arange(6)
    island.rng = np.random.default_rng(0)
    island.grow_release, island.extra_released, island.most_released, island.unimproved = True, 0, 0, 0
    island.related, island.shape = None, 0
    rows = island._neighbourhoods(5)
    assert rows.shape == (5, 3) and all(len(set(r)) == 3 for r in rows.tolist())
    island._after_exploring(19, 3, improved=False)  # C(6, 3) = 20 sets
    assert island._neighbourhoods(1).shape[1] == 3
    island._after_exploring(1, 3, improved=False)
    assert island._neighbourhoods(1).shape[1] == 4
    for _ in range(3):
        island._after_exploring(15, 4, improved=False)  # C(6, 4) = 15
    assert island._neighbourhoods(1).shape[1] == 6  # every variable, at most
    island._after_exploring(1, 6, improved=False)
    assert island._neighbourhoods(1).shape[1] == 6
    island._after_exploring(1, 6, improved=True)
    assert island._neighbourhoods(1).shape[1] == 3 and island.most_released == 6
    island.grow_release = False
    island._after_exploring(1000, 3, improved=False)
    assert island._neighbourhoods(1).shape[1] == 3


def test_neighbourhoods_grow_at_a_local_optimum_unless_the_percent_is_given():
    """QAP 8 releases 2 of its 8 facilities a neighbourhood (20 %): its 28 pairs are soon all
    searched to the end without improving, and the neighbourhoods grow (lnsMostReleased); with
    --lns-percent they stay as given. Every solution goes through the checker."""
    grown = solve("qap_8", "--lns-strategy", "complete_exploration", "-s", "-t", "3000")
    given = solve("qap_8", "--lns-strategy", "complete_exploration", "--lns-percent", "20", "-s", "-t", "3000")
    for r in (grown, given):
        assert r.returncode == 0, r.stderr
    most = lambda r: max(int(k) for k in re.search(r"lnsMostReleased=\"?([0-9 ;]+)", r.stdout).group(1).split(";"))  # noqa: E731
    assert most(grown) > 2 and most(given) == 2


def test_statistics_show_each_islands_node_budget():
    r = solve("tsp_10", "--lns-strategy", "complete_exploration", "-a", "-s", "-t", "2000")
    assert r.returncode == 0, r.stderr
    budget = re.search(r"lnsNodeBudget=\"?([0-9 ;]+)", r.stdout)
    assert budget and all(StepPace.LOWEST <= int(b) <= CE_NODES for b in budget.group(1).split(";"))


@pytest.fixture
def two_sub_devices(monkeypatch):
    """The CPU as two OpenCL sub-devices, in this process (the device list is cached)."""
    monkeypatch.setenv("FZN_GPU_CPU_SUBDEVICES", "2")
    all_devices.cache_clear()
    yield select_devices("all")
    all_devices.cache_clear()


@pytest.mark.parametrize("slow", ["build", "dive"])
def test_no_device_waits_for_another_to_start(tmp_path, monkeypatch, two_sub_devices, slow):
    """One of two devices is 2 s late: its kernel still being built (device 1), or its dive's
    first launch long, as PoCL's compile at a model's first launch is (device 0, the dive's
    device). The other finds the first solution and starts its steps at once; the late one
    joins with the best so far; every solution passes the checker and improves on the last."""
    assert len(two_sub_devices) == 2
    fzn_path = tmp_path / "qap.fzn"
    subprocess.run(
        [
            "minizinc",
            "-c",
            "--solver",
            "gpu-fzn",
            str(MODELS / "qap_8.mzn"),
            "--fzn",
            str(fzn_path),
            "--ozn",
            str(tmp_path / "q.ozn"),
        ],
        check=True,
    )
    text = fzn_path.read_text()
    model = lower(parse_items(text, "qap.fzn"), "qap.fzn")
    opts = SolveOptions(all_solutions=True)
    dm = pack(model, opts)
    checker = Checker(parse_items(text, "qap.fzn"))
    objectives_found: list[int] = []

    def report(values, objective) -> None:
        assert not checker.check(assignment(model, values, None))
        objectives_found.append(objective)

    late, delay = (1 if slow == "build" else 0), 2.0
    starts: dict[int, float] = {}
    island_run = Island.run

    def timed_run(self, first, deadline):
        starts[self.index] = time.monotonic()
        return island_run(self, first, deadline)

    monkeypatch.setattr(Island, "run", timed_run)
    if slow == "build":
        make_runner = LnsSearch._runner

        def late_runner(self, i):
            if i == late:
                time.sleep(delay)
            return make_runner(self, i)

        monkeypatch.setattr(LnsSearch, "_runner", late_runner)
    else:
        dive = lns_module.run_batch

        def late_dive(runner, *args, first_only=False, **kw):
            if first_only and runner.device.index == late:
                time.sleep(delay)
            return dive(runner, *args, first_only=first_only, **kw)

        monkeypatch.setattr(lns_module, "run_batch", late_dive)
    search = LnsSearch(model, dm, two_sub_devices, opts, report, model.solve.lns)
    t0 = time.monotonic()
    search.run(t0 + 2 * delay + 1.0)
    early = 1 - late
    assert starts[early] - t0 < delay / 2 and starts[late] - starts[early] > delay / 2, (starts, t0)
    assert [isl.steps > 0 for isl in search.islands] == [True, True]
    assert len(objectives_found) >= 2 and all(b < a for a, b in zip(objectives_found, objectives_found[1:]))


PERMUTATION = """array [1..6] of int: w = [3, 1, 4, 1, 5, 9];
array [1..6] of var 1..6: p :: output_array([1..6]);
var 0..200: cost :: output_var;
constraint fzn_all_different_int(p);
constraint int_lin_eq([3, 1, 4, 1, 5, 9, -1], [p[1], p[2], p[3], p[4], p[5], p[6], cost], 0) :: defines_var(cost);
solve :: int_search(p, input_order, indomain_min, complete) minimize cost;
"""


@pytest.mark.parametrize("model", ["item", "group"])
def test_a_kick_changes_at_most_its_released_variables_and_gives_a_solution(model, monkeypatch):
    """_kick(best, k): a solution the checker accepts, whose decision variables differ from the
    best's in at most k positions, its row's objective its own; kicks of every variable (a
    random restart) meet more than one permutation."""
    use_kernel(monkeypatch, model)
    items = parse_items(PERMUTATION, "perm.fzn")
    model_ = lower(items, "perm.fzn")
    dm = pack(model_, SolveOptions())
    fd = lns_variables(model_, dm, free_search=False)
    runner = Runner(select_devices("all")[0], dm, max_items=8)
    incumbent = Incumbent(Outcome(), dm.obj_sense, lambda values, objective: None)
    island = Island(0, runner, lns_arms(None, SolveOptions(), runner.max_items), fd, 7, incumbent)
    checker, names = Checker(items), model_.vars.names
    values = np.zeros(len(names), dtype=np.int64)
    values[fd] = [6, 5, 4, 3, 2, 1]
    best = (int(np.dot([3, 1, 4, 1, 5, 9], values[fd])), values)
    randoms = set()
    for k in (2, 3, 6, 6, 6):
        kicked = island._kick(best, k, None)
        assert kicked is not None
        obj, got = kicked
        assignment = {n: int(got[v]) for v, n in enumerate(names) if n == "cost" or n.startswith("p")}
        assert not checker.check(assignment), assignment
        assert obj == assignment["cost"]
        assert (got[fd] != values[fd]).sum() <= k
        if k == 6:
            randoms.add(tuple(got[fd].tolist()))
    assert len(randoms) > 1
