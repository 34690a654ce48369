"""One device's large neighbourhood search (an island): its own improving steps, at its own
pace, each a batch of paths built from the incumbent by the chosen strategy and searched by
the device's search kernel. Islands share improvements through `Incumbent` (incumbent.py).

The strategies, each a way to turn the incumbent and a neighbourhood into paths:
- complete_exploration (CE): the other variables fixed, branch and bound below;
- random_labeling (RL): M random labellings with propagation (CP-built starting points);
- random_permutation (RP): M random permutations of the released variables' values;
- two_exchange (2P): M swaps of two released variables' values;
- icm: iterated conditional modes, one released variable at a time, all its values at once;
- gibbs: Gibbs sampling, the same candidates, the value drawn by its objective."""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from .. import clock, hooks, settings
from ..errors import FznError
from ..flatzinc.model import LNS_STRATEGIES, LnsSpec
from .incumbent import Incumbent, Solution
from .lns_graph import RelatedVariables
from .lns_merge import accepted_prefix, disjoint_chain, prefix_merges
from .lns_paths import DevicePaths, Draw, on_device
from .paths import Paths
from .phase import INT_MAX
from .runner import Exploration, Runner

MAX_VALUES = 64  # ICM / Gibbs: values tried per variable and step (sampled beyond)
CE_NODES = 2000  # complete exploration: the most nodes per neighbourhood and step
ENOUGH = 0.9  # a step ends when this share of its work-items is done (runner.Exploration)
SHAPES = ("random", "related")  # how a step's neighbourhoods are drawn (lns_graph.py), chosen by a bandit
# a step's improving neighbourhoods merged (lns_merge.py) in up to this many launches; 0: off
# (FZN_GPU_LNS_MERGE_ROUNDS for measurements)
MERGE_ROUNDS = 3
# LNS restart points (Island._restart_point): every KICK_EVERY-th descent after the first
# begins at a kick of the best (FZN_GPU_LNS_KICK_EVERY; 0: every one at the first solution),
# a kick of KICK_SCALE times the percent's variables at first, KICK_PATHS random labellings
KICK_EVERY = 1
KICK_SCALE = 2
KICK_PATHS = 16


class StepPace:
    """Complete exploration's node budget per neighbourhood and neighbourhoods per step,
    steered so that an island's step lasts about TARGET_S. LNS improves step by step: an island
    that spends seconds on one step gives up the improvements its next steps would have built
    on. A GPU work-group explores a node of a big model far more slowly than a CPU work-item, so
    one fixed budget made the GPU's steps last seconds while the CPU's took milliseconds; and a
    budget cut to fit thousands of neighbourhoods (one per GPU work-group) into a step explored
    none of them, where fewer neighbourhoods with a real budget improved at most steps
    (docs/bench/measurements.md, LNS neighbourhoods sized to the device).

    The first step has the fewest neighbourhoods where the island steers them (below). A slow
    step first cuts the budget down to FLOOR, then the neighbourhoods down to
    `fewest` (when the island may: `most` is a default, not the user's T; FEWEST, or a
    SHARE_KEPT-th of `most`: below that a GPU's groups sit idle while a step still waits for
    its slowest neighbourhood, which fewer of them do not shorten), then the budget down to
    LOWEST, each in proportion to the overshoot; a quick one (under half the target) doubles
    them back in the reverse order: the budget up to FLOOR, the neighbourhoods up to `most`,
    the budget up to CE_NODES."""

    TARGET_S, LOWEST, FLOOR, FEWEST, SHARE_KEPT = 0.05, 16, 128, 16, 16
    START = FLOOR
    # A step (of any strategy) is cut off this long after it began (what it found so far still
    # counts): a first step of thousands of neighbourhoods of a big model on a GPU would
    # otherwise run to the time limit, and its length is the pace's only news that it must
    # shrink; the adaptive strategy's first tries of ICM, Gibbs or random labelling could each
    # take seconds of a GPU (docs/bench/measurements.md, the default engines on a GPU alone).
    CUTOFF_S = 20 * TARGET_S
    CUT_MOST, CUT_FEW = 0.5, 0.1  # shares of neighbourhoods cut at the budget that reshape a step

    def __init__(self, most: int = 1, steer_count: bool = False) -> None:
        self.nodes = self.START
        self.most = max(1, most)
        self.fewest = max(self.FEWEST, self.most // self.SHARE_KEPT)
        self.steer_count = steer_count and self.most > self.fewest
        # neighbourhoods in the next step: where the island steers them, the first step has the
        # fewest and quick steps double them, since a first step of a GPU's thousands on a big
        # model took seconds of a 10 s run (QAP 64 on the H100: 3.2 s for one slice of 4,110
        # neighbourhoods), while the doublings cost a few short steps
        self.count = self.fewest if self.steer_count else self.most

    def after_step(self, seconds: float, cut_share: float | None = None) -> None:
        """`cut_share`: of the step's neighbourhoods searched, the share left at the node budget
        (None: unknown). Beside the time, it shapes the step: where most are cut, half as many
        neighbourhoods with twice the budget (their search needs depth); where almost none are,
        twice as many with half the budget, down to FLOOR (the budget is more than they use)."""
        self._time(seconds)
        if not self.steer_count or cut_share is None:
            return
        if cut_share > self.CUT_MOST and self.count > self.fewest and self.nodes < CE_NODES:
            self.count = max(self.fewest, self.count // 2)
            self.nodes = min(CE_NODES, 2 * self.nodes)
        elif cut_share < self.CUT_FEW and self.count < self.most and self.nodes > self.FLOOR:
            self.count = min(self.most, 2 * self.count)
            self.nodes = max(self.FLOOR, self.nodes // 2)

    def _time(self, seconds: float) -> None:
        if seconds > self.TARGET_S:
            ratio = self.TARGET_S / seconds
            if self.nodes > self.FLOOR:
                self.nodes = max(self.FLOOR, int(self.nodes * ratio))
            elif self.steer_count and self.count > self.fewest:
                self.count = max(self.fewest, int(self.count * ratio))
            else:
                self.nodes = max(self.LOWEST, int(self.nodes * ratio))
        elif seconds < self.TARGET_S / 2:
            if self.nodes < self.FLOOR:
                self.nodes = min(self.FLOOR, 2 * self.nodes)
            elif self.steer_count and self.count < self.most:
                self.count = min(self.most, 2 * self.count)
            else:
                self.nodes = min(CE_NODES, 2 * self.nodes)


class ModesPace:
    """ICM's and Gibbs sampling's neighbourhoods per step (each holds M chains). A step tries,
    at each released position of each chain, every value of that variable twice (plain and
    swapped), one launch a position: a step of T x M chains over variables of V values builds
    2 T M V candidate paths a position. T x M filling the device (as complete exploration's
    neighbourhoods do) made a position 2V times the device's searches: on the H100, 506,880
    paths of 60 decisions for TSP 60, seconds of host work to build, and a launch cut off at
    the step's second after 17k of them (docs/bench/measurements.md, ICM's and Gibbs' steps sized to
    the device). So the neighbourhoods start where a position gives each search about one
    candidate and move toward a step of StepPace.TARGET_S: halved after a step over it or cut
    off before its last position, doubled after one under half of it, between 1 and `most`."""

    def __init__(self, most: int, searches: int, values: float, starts: int) -> None:
        self.most = max(1, most)
        self.count = max(1, min(self.most, int(searches // max(1.0, 2 * values * starts))))

    def after_step(self, seconds: float, cut: bool) -> None:
        if cut or seconds > StepPace.TARGET_S:
            self.count = max(1, self.count // 2)
        elif seconds < StepPace.TARGET_S / 2:
            self.count = min(self.most, 2 * self.count)


class StrategyBandit:
    """Chooses each step's strategy by the strategies' recent gains (no single one is best
    everywhere: complete exploration on tours, two-exchange on QAP, ICM on covering). Each is
    tried once, in order (with a streak, the last one going on while it gains); then, with
    probability EXPLORE one at random, else the one whose recent steps
    gained the most objective per second: a step's gain is its improvement relative to the
    objective it started from, and both the gains and the seconds decay by DECAY at each step
    of that strategy, so a strategy that has stalled gives way, and is tried again once the
    others stall too. Counting improving steps instead favoured quick strategies with small
    gains: on a GPU alone, two-exchange's many 1 % steps over complete exploration's fewer,
    far larger ones (docs/bench/measurements.md, the default engines on a GPU alone).

    Until some arm's step has improved, every step explores: the tie at PRIOR otherwise went
    to the quickest arm at every step, and a futile, quick random permutation held a CPU
    island's coins grid at its first solution for a whole run (docs/bench/measurements.md, the
    bandit where nothing gains). Once something has gained, stalled arms tie as before.

    The arm explored at random is drawn in inverse proportion to its recent seconds a step,
    so that exploring gives each arm about the same time, not the same steps: a strategy
    whose steps run to the cut-off (ICM walking a big model's hundreds of released positions
    on a GPU, a launch each) drawn as often as one of a single short launch took a third of a
    GPU island's run on coins grid 31 for no gain (docs/bench/measurements.md, LNS exploration
    weighed by time)."""

    DECAY = 0.8
    EXPLORE = 0.1
    PRIOR = 1e-6  # gain credited to every strategy: none stays at zero, stalled ones tie
    STREAK = 8  # while some arm is untried, the most steps in a row of one that keeps gaining

    def __init__(self, arms: int, rng: np.random.Generator, streak: int = 0):
        """`streak`: while some arm is untried, how many steps in a row an arm whose steps gain
        may take before the next untried one is tried (0: each is tried once in turn): the
        strategies' bandit's STREAK; the shapes' and merging's try each arm at once, their
        arms being two ways of taking the same step."""
        self.rng = rng
        self.streak_most = streak
        self.gains = np.zeros(arms)
        self.seconds = np.zeros(arms)
        self.steps = np.zeros(arms, dtype=np.int64)
        self.improving = np.zeros(arms, dtype=np.int64)
        self.recent = np.zeros(arms)  # steps, decaying as the gains and the seconds do
        self.last, self.last_gained = -1, False  # the arm of the last step, and whether it gained
        self.streak = 0  # steps in a row of the last arm

    def pick(self) -> int:
        untried = np.flatnonzero(self.steps == 0)
        if len(untried):
            # the arm whose last step gained goes on (up to STREAK steps in a row) before the
            # next untried one is tried: a small model's first steps on a GPU tried every
            # strategy in turn while the first kept improving, and the run ended before LNS
            # came back to it (docs/bench/measurements.md, LNS descents from kicks of the best)
            if self.last >= 0 and self.last_gained and self.streak < self.streak_most:
                return self.last
            return int(untried[0])
        if self.rng.random() < self.EXPLORE or not self.improving.any():
            return self._explore()
        return int(np.argmax((self.gains + self.PRIOR) / np.maximum(self.seconds, 1e-4)))

    def _explore(self) -> int:
        """An arm drawn with a weight of one over its recent mean seconds a step."""
        mean = self.seconds / np.maximum(self.recent, 1e-9)
        weight = 1.0 / np.maximum(mean, 1e-4)
        return int(self.rng.choice(len(weight), p=weight / weight.sum()))

    def update(self, arm: int, before: int, after: int, seconds: float) -> None:
        """A step of `arm` from objective `before` (minimised) to `after` in `seconds`."""
        gain = max(0, before - after) / max(1, abs(before))
        self.gains[arm] = self.DECAY * self.gains[arm] + gain
        self.seconds[arm] = self.DECAY * self.seconds[arm] + seconds
        self.recent[arm] = self.DECAY * self.recent[arm] + 1
        self.steps[arm] += 1
        self.improving[arm] += gain > 0
        self.streak = self.streak + 1 if arm == self.last else 1
        self.last, self.last_gained = arm, gain > 0


class Island:
    def __init__(
        self,
        index: int,
        runner: Runner,
        arms: list[LnsSpec],
        fd: np.ndarray,
        seed: int,
        incumbent: Incumbent,
        steer_count: bool = False,
        grow_release: bool = False,
        related: RelatedVariables | None = None,
        stall: int | None = None,
    ):
        """`arms`: the settings of each strategy this island may use (lns.lns_arms); with more
        than one, a StrategyBandit picks each step's. `steer_count`: complete exploration's
        neighbourhoods per step are the pace's (StepPace), the settings' T at most.
        `grow_release` (the percent is LNS's default, not the user's): a neighbourhood releases
        one variable more each time complete exploration has searched to the end (within the
        node budget) as many neighbourhoods since the last improvement as there are sets of
        that size (likely a local optimum for them all, which a GPU step of thousands of
        neighbourhoods of a small model meets at once), and goes back to the percent at an
        improvement or a restart. `related`: the decision variables' constraint graph; with it,
        each step's neighbourhoods are all drawn at random or all grown through the graph, as a
        second bandit chooses by the gains of each shape's steps (neither is best everywhere: a
        grid's weighted CSP gains from patches, a covering model from scattered cells). None:
        all at random. `stall` (H is LNS's default, not the user's): a descent restarts from the
        first solution once this many of its steps in a row have not improved it, instead of
        after H steps."""
        self.index = index
        self.stall = stall
        self.related = related
        # the graph as the device's growth reads it (lns_paths.Draw), converted once
        self.graph = (related.ptr.astype(np.int32), related.adj.astype(np.int32)) if related else None
        self.shapes = StrategyBandit(len(SHAPES), np.random.default_rng([seed, index, 1])) if related else None
        self.shape = 0
        # whether a step's improving neighbourhoods are merged (lns_merge.py), by the gains of
        # the steps with and without: merges pay on a grid's cost functions and on QAP's
        # permutations, and cost a tour's steps their pace (docs/bench/measurements.md)
        self.merge_rounds = settings.integer("FZN_GPU_LNS_MERGE_ROUNDS", MERGE_ROUNDS)
        merges = self.merge_rounds > 0 and not runner.float_objective  # a float's rows are not bounded path by path
        self.merging = StrategyBandit(2, np.random.default_rng([seed, index, 2])) if merges else None
        self.merging_steps = 0  # steps that merged
        self.kick_every = settings.integer("FZN_GPU_LNS_KICK_EVERY", KICK_EVERY)
        self.kick_size = 0  # the variables the last kick released (_restart_point)
        self.kicked_from: int | None = None  # the best objective when the last kick was made
        self.runner = runner
        self.arms = arms
        self.settings = arms[0]
        self.fd = fd
        self.rng = np.random.default_rng([seed, index])
        self.bandit = StrategyBandit(len(arms), self.rng, StrategyBandit.STREAK) if len(arms) > 1 else None
        self.incumbent = incumbent
        explore = [a.neighbourhoods for a in arms if a.strategy == "complete_exploration"]
        self.pace = StepPace(explore[0] if explore else arms[0].neighbourhoods, steer_count)
        modes = [a for a in arms if a.strategy in ("icm", "gibbs")]
        self.modes_pace = (
            ModesPace(modes[0].neighbourhoods, runner.max_items, self._mean_values(), modes[0].starts)
            if modes and steer_count
            else None
        )
        self.grow_release = grow_release
        self.extra_released = 0  # variables released beyond the percent (grow_release)
        self.most_released = 0  # the most a neighbourhood released (for -s)
        self.unimproved = 0  # neighbourhoods explored since the last improvement
        self.steps = 0
        self.restarts = 0  # descents begun again from the first solution
        self.improving_steps = 0
        self.improvements = 0  # solutions this island printed (its device's dive's too)
        self.merged_steps = 0  # steps whose merged improvements beat their best single one
        self.gain = 0  # how far its improvements moved the best objective
        self.failed: FznError | None = None  # why this device stopped, if it failed

    # ------------------------------------------------------------------ the loop
    def run(self, first: Solution, deadline: float | None) -> None:
        """S restarts from the first solution, each a descent of H steps, or (with `stall`) one
        that goes on until that many steps in a row have not improved it. Each step starts from
        the best of this island's own and what any island found since its restart."""
        s = self.arms[0]
        for restart in range(s.restarts):
            self.restarts = restart
            current = self._restart_point(restart, first, deadline)
            self.extra_released = self.unimproved = 0
            mark = self.incumbent.stamp()
            step, stalled = 0, 0
            while step < s.steps if self.stall is None else stalled < self.stall:
                step += 1
                if self.incumbent.stopped or deadline is not None and time.monotonic() >= deadline:
                    return
                begun = self.incumbent.better_since(mark, current)
                stalled = 0 if begun[0] < current[0] else stalled
                current = begun
                if hooks.device_fails(self.index, self.steps + 1):
                    raise FznError(f"fault injected by a test in step {self.steps + 1}")
                arm = self.bandit.pick() if self.bandit else 0
                self.settings = self.arms[arm]
                self.shape = self.shapes.pick() if self.shapes else 0
                t0, printed = time.monotonic(), self.improvements
                better = self.step(current, deadline)
                self.steps += 1
                improved = better is not None and better[0] < current[0]
                after, seconds = better[0] if better is not None and improved else current[0], time.monotonic() - t0
                if self.runner.verbose:
                    self._trace(t0, seconds, current[0], after, self.improvements - printed)
                if self.bandit:
                    self.bandit.update(arm, current[0], after, seconds)
                if self.shapes:
                    self.shapes.update(self.shape, current[0], after, seconds)
                if better is not None and improved:
                    current = better
                    self.improving_steps += 1
                    stalled = 0
                else:
                    stalled += 1

    def _restart_point(self, restart: int, first: Solution, deadline: float | None) -> Solution:
        """Where descent `restart` begins: the first solution, or every `kick_every`-th descent
        (where kicks are on) a kick of the best so far (_kick). A kick releases KICK_SCALE
        times the percent's variables; each kick after which the best has not improved
        releases twice as many as the one before, up to every variable (a random restart), and
        an improvement sets it back. A GPU's step searches so many neighbourhoods that a
        descent is nearly the same from the same start: QAP 15's descents from the first
        solution all ended at one local optimum on the H200, as did those from kicks of a
        fixed small size; the random restarts among the growing kicks reached its best
        (docs/bench/measurements.md, LNS descents from kicks of the best)."""
        best = self.incumbent.best
        if not self.kick_every or restart == 0 or restart % self.kick_every or best is None:
            return first
        n = len(self.fd)
        if self.kicked_from is not None and best[0] >= self.kicked_from:
            self.kick_size = min(n, 2 * self.kick_size)
        else:
            self.kick_size = min(n, KICK_SCALE * max(1, math.ceil(self.settings.percent * n / 100)))
        self.kicked_from = best[0]
        return self._kick(best, self.kick_size, deadline) or first

    def _kick(self, best: Solution, k: int, deadline: float | None) -> Solution | None:
        """A solution near `best`: KICK_PATHS random labellings of k of its decision variables
        (the others kept), each path under its own bound, one of the solutions they met drawn
        at random (None: none met before StepPace.CUTOFF_S)."""
        releases = self._random_releases(KICK_PATHS, k)
        how = Exploration(node_limit=4 * k + 16, random_values=True, own_bound=True)
        rows: list[np.ndarray] = []
        cutoff = time.monotonic() + StepPace.CUTOFF_S
        paths = self._paths(best[1][self.fd], ~self._released_mask(releases))
        self._explore(paths, best[0], min(cutoff, deadline or cutoff), how, bound=INT_MAX, rows=rows)
        if not rows:
            return None
        met = np.concatenate(rows)
        row = met[self.rng.integers(len(met))]
        return int(row[0]), row[1:].copy()

    def _trace(self, t0: float, seconds: float, before: int, after: int, printed: int) -> None:
        """One step on stderr (-v): which island, when, what it tried, how long it took, the
        objective it started from and reached (sense-adjusted) and how many it printed; the
        steps of several islands interleave, so their pace and who finds what can be read off."""
        shape = SHAPES[self.shape] if self.shapes else "random"
        print(
            f"fzn-gpu: lns island {self.index} step {self.steps} at {t0 - clock.STARTED:.3f} s: {self.settings.strategy} "
            f"{shape} x{self.pace.count} nodes {self.pace.nodes}, {seconds * 1000:.1f} ms, "
            f"{before} -> {after}, printed {printed}",
            file=sys.stderr,
        )

    def strategy_steps(self) -> str:
        """Steps and improving steps of each strategy the bandit used: "icm:12/3 ..."."""
        if self.bandit is None:
            return f"{self.settings.strategy}:{self.steps}/{self.improving_steps}"
        b = self.bandit
        return " ".join(f"{a.strategy}:{b.steps[i]}/{b.improving[i]}" for i, a in enumerate(self.arms) if b.steps[i])

    def shape_steps(self) -> str:
        """Steps and improving steps of each neighbourhood shape: "random:40/12 related:61/30"."""
        if self.shapes is None:
            return f"random:{self.steps}/{self.improving_steps}"
        b = self.shapes
        return " ".join(f"{name}:{b.steps[i]}/{b.improving[i]}" for i, name in enumerate(SHAPES))

    # ------------------------------------------------------------------ one step
    def step(self, current: Solution, deadline: float | None) -> Solution | None:
        """One step of the current strategy from `current`: the best solution it met, or None.
        Every strategy's step ends StepPace.CUTOFF_S after it began at the latest."""
        t0 = time.monotonic()
        cutoff = t0 + StepPace.CUTOFF_S
        deadline = cutoff if deadline is None else min(deadline, cutoff)
        return STEPS[self.settings.strategy](self, current, deadline, t0)

    def _modes_step(self, current: Solution, deadline: float, t0: float) -> Solution | None:
        """ICM or Gibbs sampling (_conditional_modes), their neighbourhoods paced apart."""
        obj, values = current
        paced = self.modes_pace
        releases = self._neighbourhoods(paced.count if paced else None)
        found, cut = self._conditional_modes(obj, values, releases, deadline, gibbs=self.settings.strategy == "gibbs")
        if paced:
            paced.after_step(time.monotonic() - t0, cut)
        return found

    def _exploration_step(self, current: Solution, deadline: float, t0: float) -> Solution | None:
        """Complete exploration: the other variables fixed, branch and bound below each
        neighbourhood under the pace's node budget."""
        obj, values = current
        k = self._release_size()
        found = self._explore_and_merge(
            current,
            self._released_paths(values[self.fd], self.pace.count, k, 1),
            deadline,
            Exploration(node_limit=self.pace.nodes, enough=ENOUGH),
        )
        searched = self.runner.phase_explored + self.runner.phase_cut
        self.pace.after_step(time.monotonic() - t0, self.runner.phase_cut / searched if searched else None)
        self._after_exploring(self.runner.phase_explored, k, found is not None and found[0] < obj)
        return found

    def _labeling_step(self, current: Solution, deadline: float, t0: float) -> Solution | None:
        """Random labelling: M labellings a neighbourhood, the kernel choosing values at random."""
        obj, values = current
        k = self._release_size()
        return self._explore_and_merge(
            current,
            self._released_paths(values[self.fd], None, k, self.settings.starts),
            deadline,
            Exploration(node_limit=4 * k + 16, random_values=True, enough=ENOUGH),
        )

    def _assignment_step(self, current: Solution, deadline: float, t0: float) -> Solution | None:
        """Random permutation or two-exchange: M complete assignments a neighbourhood, built
        here from the incumbent's values, checked and scored by the kernel."""
        obj, values = current
        releases = self._neighbourhoods(None)
        m = self.settings.starts
        assign = np.tile(values[self.fd], (len(releases) * m, 1))
        rel = np.repeat(releases, m, axis=0)  # (T*M, k) positions in fd
        rows = np.arange(len(rel))[:, None]
        if self.settings.strategy == "random_permutation":
            perm = np.argsort(self.rng.random(rel.shape), axis=1)
            assign[rows, rel] = assign[rows, rel[rows, perm]]
        else:  # two_exchange
            if rel.shape[1] < 2:
                return None
            pick = np.argsort(self.rng.random(rel.shape), axis=1)[:, :2]
            i, j = rel[rows[:, 0], pick[:, 0]], rel[rows[:, 0], pick[:, 1]]
            r = rows[:, 0]
            assign[r, i], assign[r, j] = assign[r, j], assign[r, i].copy()
        return self._explore_and_merge(
            current,
            self._paths(assign, None),
            deadline,
            Exploration(node_limit=len(self.fd) + 16, enough=ENOUGH),
        )

    def _conditional_modes(self, obj, values, releases, deadline, gibbs: bool) -> tuple[Solution | None, bool]:
        """ICM / Gibbs sampling: M chains a neighbourhood; at each released position, every value
        of that variable (up to MAX_VALUES) is evaluated in one launch with the others as they
        are, and once more with the released variable that held the value taking the old one (a
        swap, without which no single change keeps a permutation). ICM keeps the best candidate,
        Gibbs draws one by exp(-(objective - best) / temperature). Returns the best solution met
        and whether the deadline cut the step before its last position."""
        m = self.settings.starts
        chains = np.tile(values[self.fd], (len(releases) * m, 1))
        rel = np.repeat(releases, m, axis=0)
        lb, ub = self.runner.root_lb, self.runner.root_ub
        temperature = max(1.0, abs(obj) * 0.01)
        best = None
        for col in range(rel.shape[1]):
            if deadline is not None and time.monotonic() >= deadline:
                return best, True
            pos = rel[:, col]
            owner, new = self._candidate_values(self.fd[pos], lb, ub)
            n = len(owner)
            changed = chains[owner]
            old = changed[np.arange(n), pos[owner]].copy()
            changed[np.arange(n), pos[owner]] = new
            swapped = changed.copy()
            holders = rel[owner]  # released positions of each chain
            held = (chains[owner[:, None], holders] == new[:, None]) & (holders != pos[owner][:, None])
            r, c = np.nonzero(held)
            swapped[r, holders[r, c]] = old[r]
            assign = np.concatenate([changed, swapped])
            how = Exploration(node_limit=len(self.fd) + 16, prune=False, enough=ENOUGH)
            found = self._explore(self._paths(assign, None), obj, deadline, how, bound=INT_MAX)
            if found is not None and (best is None or found[0] < best[0]):
                best = found
            plain, swap = how.results[:n], how.results[n:]
            use_swap = swap < plain  # the better of plain and swap
            res = np.minimum(plain, swap).astype(np.float64)
            res[res >= INT_MAX] = np.inf
            pick = self._pick(res, owner, len(chains), temperature if gibbs else None)
            ok = pick >= 0
            chains[ok] = np.where(use_swap[pick[ok], None], swapped[pick[ok]], changed[pick[ok]])
        return best, False

    def _candidate_values(self, variables: np.ndarray, lb: np.ndarray, ub: np.ndarray):
        """(owner, value) per candidate: every value (up to MAX_VALUES) of each chain's variable,
        the chains' candidates contiguous and in chain order."""
        uniq, inv = np.unique(variables, return_inverse=True)
        per_var = [self._values(int(lb[v]), int(ub[v])) for v in uniq]
        lens = np.array([len(x) for x in per_var])
        var_start = np.concatenate([[0], np.cumsum(lens)[:-1]])
        counts = lens[inv]
        owner = np.repeat(np.arange(len(variables)), counts)
        within = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
        return owner, np.concatenate(per_var)[var_start[inv[owner]] + within]

    def _pick(self, res: np.ndarray, owner: np.ndarray, chains: int, temperature: float | None) -> np.ndarray:
        """Per chain, the index of its chosen candidate (-1: none feasible): ICM the best (the
        first of equals), Gibbs one drawn by exp(-(objective - best) / temperature)."""
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        mins = np.minimum.reduceat(res, starts)
        feasible = np.isfinite(mins)
        with np.errstate(invalid="ignore"):  # inf - inf where none is feasible
            gap = res - mins[owner]
        if temperature is None:
            score = np.where(gap == 0, np.arange(len(res)), len(res))
            pick = np.minimum.reduceat(score, starts)
        else:
            w = np.where(np.isfinite(gap), np.exp(-gap / temperature), 0.0)
            cw = np.cumsum(w)
            before = np.r_[0.0, cw][starts]
            total = np.add.reduceat(w, starts)
            target = before + self.rng.random(len(starts)) * total
            ends = np.r_[starts[1:], len(res)] - 1
            pick = np.minimum(np.searchsorted(cw, target, side="right"), ends)
        out = np.full(chains, -1, dtype=np.int64)
        out[owner[starts][feasible]] = pick[feasible]
        return out

    # ------------------------------------------------------------------ helpers
    def _after_exploring(self, count: int, k: int, improved: bool) -> None:
        """grow_release's bookkeeping after a complete-exploration step that searched `count`
        neighbourhoods of k variables to the end."""
        if improved:
            self.extra_released = self.unimproved = 0
        elif self.grow_release:
            self.unimproved += count
            if k < len(self.fd) and self.unimproved >= math.comb(len(self.fd), k):
                self.extra_released += 1
                self.unimproved = 0

    def _release_size(self) -> int:
        """How many variables each neighbourhood releases (the percent's, and extra_released)."""
        n = len(self.fd)
        k = min(n, max(1, math.ceil(self.settings.percent * n / 100)) + self.extra_released)
        self.most_released = max(self.most_released, k)
        return k

    def _grown(self, k: int) -> bool:
        """Whether this step's neighbourhoods are grown through the constraint graph."""
        return SHAPES[self.shape] == "related" and self.related is not None and k < len(self.fd)

    def _neighbourhoods(self, count: int | None = None) -> np.ndarray:
        """`count` (default T) rows of k distinct positions in fd: the variables each
        neighbourhood releases."""
        k = self._release_size()
        count = self.settings.neighbourhoods if count is None else min(count, self.settings.neighbourhoods)
        if self._grown(k) and self.related is not None:
            return self.related.grow(self.rng, count, k)
        return self._random_releases(count, k)

    def _random_releases(self, count: int, k: int) -> np.ndarray:
        """`count` rows of k distinct positions in fd, drawn uniformly."""
        return np.argsort(self.rng.random((count, len(self.fd))), axis=1)[:, :k]

    def _released_paths(self, values: np.ndarray, count: int | None, k: int, repeat: int) -> Paths | DevicePaths:
        """`count` (default T) neighbourhoods releasing k positions each, `repeat` paths a
        neighbourhood, every other position fixed to `values`. Drawn on the device (at random
        or grown through the graph) where the paths are built there (lns_paths.Draw): the
        host's draws and masks took longer than the paths (docs/bench/measurements.md); a small step's
        are drawn on the host."""
        count = self.settings.neighbourhoods if count is None else min(count, self.settings.neighbourhoods)
        n = count * repeat
        if on_device(n * len(self.fd)):  # _paths' rule
            draw = Draw(k, int(self.rng.integers(2**32)), repeat, self.graph if self._grown(k) else None)
            return DevicePaths.make(self.fd, values, None, n, draw)
        keep = ~self._released_mask(self._neighbourhoods(count))
        return self._paths(values, keep if repeat == 1 else np.repeat(keep, repeat, axis=0))

    def _released_mask(self, releases: np.ndarray) -> np.ndarray:
        mask = np.zeros((len(releases), len(self.fd)), dtype=bool)
        mask[np.arange(len(releases))[:, None], releases] = True
        return mask

    def _mean_values(self) -> float:
        """The values ICM and Gibbs try at a released position, on average over the FD variables."""
        if not len(self.fd):
            return 1.0
        span = self.runner.root_ub[self.fd].astype(np.int64) - self.runner.root_lb[self.fd] + 1
        return float(np.minimum(span, MAX_VALUES).mean())

    def _values(self, lo: int, hi: int) -> np.ndarray:
        if hi - lo + 1 <= MAX_VALUES:
            return np.arange(lo, hi + 1, dtype=np.int64)
        return np.unique(self.rng.integers(lo, hi + 1, MAX_VALUES))

    def _paths(self, values: np.ndarray, keep: np.ndarray | None) -> Paths | DevicePaths:
        """One path per row of `keep` (or of `values`, a row a path, where keep is None: every
        position): x = value for the kept positions, in fd's order, `values` one row for all
        paths or a row each. Built on the device where the step is big enough (lns_paths.py)."""
        n = len(values) if keep is None else len(keep)
        paths = DevicePaths.make(self.fd, values, keep, n)
        return paths if on_device(n * len(self.fd)) else paths.to_host()

    def _explore(
        self,
        paths: Paths | DevicePaths,
        obj: int,
        deadline,
        how: Exploration,
        bound: int | None = None,
        rows: list[np.ndarray] | None = None,
        offer=None,
    ):
        """Run one batch; returns the best (objective, values) that beat `bound` (default: the
        incumbent's objective), or None. how.results holds each path's best objective; `rows`,
        where given, collects every solution row the batch met; `offer` (default self.offer)
        takes each slice's."""
        self.runner.set_best(obj if bound is None else bound)
        incumbent = self.incumbent
        return run_batch(
            self.runner, paths, deadline, how, offer or self.offer, stop=lambda: incumbent.stopped, rows=rows
        )[1]

    def _explore_and_merge(
        self, current: Solution, paths: Paths | DevicePaths, deadline, how: Exploration
    ) -> Solution | None:
        """One batch of neighbourhoods (or candidates) from `current`. Where the merging bandit
        says so, each is bounded by its own best, so that every one that improves on `current`
        reports it, and those improvements are merged (_merge); else all by the step's best.
        The best solution met, or None."""
        t0 = time.monotonic()
        merge = bool(self.merging.pick()) if self.merging else False
        if not merge:
            found = self._explore(paths, current[0], deadline, how)
        else:
            self.merging_steps += 1
            how.own_bound = True
            rows: list[np.ndarray] = []
            found = self._explore(paths, current[0], deadline, how, rows=rows, offer=self._offer_records)
            if found is not None and not self.incumbent.stopped:
                merged = self._merge(current, np.concatenate(rows), deadline)
                found = merged if merged is not None and merged[0] < found[0] else found
        if self.merging:
            after = found[0] if found is not None and found[0] < current[0] else current[0]
            self.merging.update(int(merge), current[0], after, time.monotonic() - t0)
        return found

    def _merge(self, current: Solution, rows: np.ndarray, deadline) -> Solution | None:
        """The step's improvements (`rows`, solution rows better than `current`) merged greedily,
        best first, those that change disjoint decision variables (lns_merge.py): each round
        evaluates the prefixes of the chain on top of what the rounds before kept, in one
        launch, keeps the longest prefix whose every addition improved, and drops the
        addition that did not. The best merge met (printed as it was found), or None."""
        obj, values = current
        base = values[self.fd]
        found = rows[:, 1:][:, self.fd]
        chain = disjoint_chain(base, found, rows[:, 0])
        if len(chain) < 2:
            return None
        kept_obj, kept = int(rows[chain[0], 0]), found[chain[0]]
        rest, best = chain[1:], None
        for _ in range(self.merge_rounds):
            if not len(rest) or time.monotonic() >= deadline or self.incumbent.stopped:
                break
            candidates = prefix_merges(kept, base, found, rest)
            how = Exploration(node_limit=len(self.fd) + 16, prune=False)
            met = self._explore(self._paths(candidates, None), obj, deadline, how, bound=INT_MAX)
            if met is not None and (best is None or met[0] < best[0]):
                best = met
            scores = how.results[: len(rest)]
            taken = accepted_prefix(kept_obj, scores)
            if taken:
                kept_obj, kept = int(scores[taken - 1]), candidates[taken - 1]
            rest = rest[taken + 1 :]
        self.merged_steps += best is not None and best[0] < int(rows[chain[0], 0])
        return best

    def _offer_records(self, sols: np.ndarray) -> None:
        """offer() of the rows of a slice that beat every row before them, in the order the
        searches wrote them: what the step's one bound would have let through. Under own bounds
        a slice holds every neighbourhood's improvements, and printing each that beats the last
        (worst first) printed strings of unrelated near-equal solutions."""
        keys = sols[:, 0].astype(np.int64)
        before = np.minimum.accumulate(np.concatenate([[np.iinfo(np.int64).max], keys[:-1]]))
        self.offer(sols[keys < before])

    def offer(self, sols: np.ndarray) -> None:
        """Solutions this island's device met (its steps', and its dive's for the first one):
        the improvements among them are printed and counted as this island's."""
        printed, gain = self.incumbent.offer_gain(sols)
        self.improvements += printed
        self.gain += gain


def run_batch(
    runner: Runner,
    paths: Paths | DevicePaths,
    deadline: float | None,
    how: Exploration | None,
    offer,
    first_only: bool = False,
    stop=None,
    rows: list[np.ndarray] | None = None,
) -> tuple[bool, Solution | None]:
    """(finished, best (objective, values) among the solutions met, or None); every solution
    a slice meets goes to offer() at once (which prints the improvements), and its rows to
    `rows` where given. `stop()`, checked after every slice, ends the batch early when it says
    so (another engine's news)."""
    rows = [] if rows is None else rows

    def on_slice(sols) -> bool:
        if sols is not None and len(sols):
            rows.append(sols)
            offer(sols)
            if first_only:
                return False
        return stop is None or not stop()

    finished, _ = runner.run_phase(paths, 0, True, on_slice, deadline, lns=how)
    if not rows:
        return finished, None
    found = np.concatenate(rows)
    row = found[np.argmin(found[:, 0])]
    return finished, (int(row[0]), row[1:].copy())


# Each strategy's step (model.LNS_STRATEGIES is the one list of their names)
STEPS = {
    "complete_exploration": Island._exploration_step,
    "random_labeling": Island._labeling_step,
    "random_permutation": Island._assignment_step,
    "two_exchange": Island._assignment_step,
    "icm": Island._modes_step,
    "gibbs": Island._modes_step,
}
assert set(STEPS) == set(LNS_STRATEGIES), "every LNS strategy needs its step here"
