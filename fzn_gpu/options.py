"""What the user asked for on the command line, as the engines read it."""

from __future__ import annotations

from dataclasses import dataclass

from .search_options import RestartSpec
from .settings import AUTO_OFF

ENGINES = ("auto", "complete", "lns", "portfolio", "restart", "bucket", "adaptive")
BUCKET = RELAX = LOCAL_SEARCH = AUTO_OFF


@dataclass
class SolveOptions:
    all_solutions: bool = False  # -a: every solution (satisfaction) / every improving one
    num_solutions: int | None = None  # -n N
    free_search: bool = False  # -f: ignore the search annotations
    parallel: int | None = None  # -p N: at most N devices
    seed: int = 0  # -r
    statistics: bool = False  # -s
    time_limit_ms: int | None = None  # -t
    intermediate: bool = False  # -i: print improving solutions as found
    verbose: bool = False  # -v
    devices: str = "all"  # --devices
    check: bool = False  # --check
    count_only: bool = False  # --count-only
    deterministic: bool = False  # --deterministic or -p 1: satisfaction solutions in tree order (engine/ordered.py)
    lns: dict | None = None  # --lns-*: LNS settings over the annotation's (engine/lns.py)
    engine: str = "auto"  # --engine: auto, complete, lns, portfolio, restart or bucket (engine/__init__.py)
    bucket: str = "auto"  # --bucket: auto (beside the portfolio where it fits) or off (engine/bucket.py)
    local_search: str = "auto"  # --local-search: auto (Adaptive Search beside complete search for one
    # solution, where the model is one for it) or off (engine/adaptive.py)
    restart: RestartSpec | None = None  # --restart: over the model's restart annotation (engine/restart.py)
    relax: str = "auto"  # --relax: bounds from relaxations added to the model (fzn_gpu/relax/), or off
    cluster: str | None = None  # --cluster: a Ray cluster's address, or auto (fzn_gpu/cluster/)

    def solution_limit(self, optimising: bool) -> int | None:
        """How many solutions a satisfaction search should find (None: all)."""
        if optimising:
            return None
        if self.all_solutions:
            return self.num_solutions
        return self.num_solutions or 1
