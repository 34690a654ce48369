"""The vocabularies of search options shared by the command line, the solver configuration and
the model (LNS strategies, restart kinds and their annotations' records), in a module that
imports nothing heavy: the command line reads them before numpy and pyopencl are imported,
while OpenCL starts in a thread beside those imports (opencl_start.py)."""

from __future__ import annotations

from dataclasses import dataclass

# in the order LNS's bandit first tries them (engine/lns_island.StrategyBandit): the steps that
# cost least first (ICM and Gibbs launch once per released variable: seconds a step on QAP 64)
LNS_STRATEGIES = ("complete_exploration", "two_exchange", "random_labeling", "random_permutation", "icm", "gibbs")


@dataclass
class LnsSpec:
    """The GPU-LNS paper's solve annotation lns(P, T, M, H, STRATEGY, S, TIMEOUT)."""

    percent: int
    neighbourhoods: int
    starts: int
    steps: int
    strategy: str
    restarts: int
    timeout_s: float | None  # None: the run's time limit alone


RESTART_KINDS = ("luby", "geometric", "linear", "constant", "none")


@dataclass
class RestartSpec:
    """MiniZinc's restart annotation (restart_luby(scale), restart_geometric(base, scale),
    restart_linear(scale), restart_constant(scale), restart_none): the node limits of the
    successive runs from the root (engine/restart.py)."""

    kind: str  # one of RESTART_KINDS
    scale: int = 0
    base: float = 0.0  # geometric's growth factor
