"""Shared test helpers: solve FlatZinc text in-process and enumerate it by brute force with
the independent checker as the oracle."""

from __future__ import annotations

import itertools
import os
import random
import shutil
import subprocess
import time
import zlib
from pathlib import Path

import numpy as np

from fzn_gpu.engine import assignment
from fzn_gpu.engine.complete import CompleteSearch
from fzn_gpu.engine.decode import decoder
from fzn_gpu.engine.pack import pack
from fzn_gpu.engine.portfolio import PortfolioSearch
from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions
from fzn_gpu.relax import strengthen
from fzn_gpu.runtime.device import select_devices

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus" / "hakank"


def stable_rng(*parts: object) -> random.Random:
    """A generator seeded from its parts the same way in every process (Python's own hash of a
    string changes with PYTHONHASHSEED, so a seed from hash() made a failure unrepeatable).
    FZN_GPU_TEST_SEED shifts every seed, to draw fresh instances on purpose."""
    key = repr(parts) + os.environ.get("FZN_GPU_TEST_SEED", "")
    return random.Random(zlib.crc32(key.encode()))


def solve_text(
    text: str, portfolio: bool = False, ordered: bool = False, bucket: bool = False, relax: bool = False, **opts
) -> tuple[list[dict], object]:
    """All solutions the engine reports (as name -> value dicts, each checked, in the order
    reported), and the outcome; time_limit_ms counts from this call. The engine: complete
    search (`ordered`: printing in tree order, as the CLI's complete engine does), or with
    `portfolio` LNS and branch and bound together (an optimisation model), or with `bucket`
    bucket elimination alone (engine/bucket.py). `relax`: with the relaxations' bounds added, as
    a run from the command line adds them (fzn_gpu/relax/)."""
    found, outcome, _ = solve_stats(text, portfolio, ordered, bucket, relax, **opts)
    return found, outcome


def solve_stats(
    text: str, portfolio: bool = False, ordered: bool = False, bucket: bool = False, relax: bool = False, **opts
) -> tuple[list[dict], object, int]:
    """solve_text's solutions and outcome, and the failed nodes of complete search (0 for the
    other engines): what a propagator's strength shows in."""
    model = lower(parse_items(text, "test.fzn"), "test.fzn")
    if relax:
        strengthen(model)
    options = SolveOptions(**opts)
    checker = Checker(parse_items(text, "test.fzn"))
    dm = pack(model, options)
    decode = decoder(dm)
    found: list[dict] = []

    def report(values: np.ndarray, objective) -> None:
        a = assignment(model, values, decode(values) if decode else None)
        bad = checker.check(a)
        assert not bad, f"engine reported a non-solution: {bad[0]}\n{text}"
        found.append(a)

    if bucket:
        from fzn_gpu.engine.bucket import BucketSearch, forced

        devices = select_devices("all")
        search = BucketSearch(model, dm, devices, options, report, forced(model, devices))
    elif portfolio:
        search = PortfolioSearch(model, dm, select_devices("all"), options, report, model.solve.lns)
    else:
        search = CompleteSearch(model, dm, select_devices("all")[0], options, report, ordered=ordered)
    limit = options.time_limit_ms
    outcome = search.run(time.monotonic() + limit / 1000.0 if limit else None)
    fails = 0 if portfolio or bucket else sum(r.stats.fails for r in search.runners)
    return found, outcome, fails


def brute_force(text: str, domains: dict[str, list[int]]) -> set[tuple]:
    """Every assignment of the named variables that the checker accepts."""
    checker = Checker(parse_items(text, "test.fzn"))
    names = list(domains)
    sols = set()
    for combo in itertools.product(*(domains[n] for n in names)):
        if not checker.check(dict(zip(names, combo))):
            sols.add(combo)
    return sols


def brute_force_offsets(text: str, xs: dict[str, list[int]], defs: dict[str, tuple[str, int]]) -> set[tuple]:
    """Every assignment of the x that the checker accepts with each y = x + c (defs: y -> (x,
    c)) set from it, as tuples over the x then the y."""
    checker = Checker(parse_items(text, "test.fzn"))
    out = set()
    for combo in itertools.product(*xs.values()):
        a = dict(zip(xs, combo))
        a.update({y: a[x] + c for y, (x, c) in defs.items()})
        if not checker.check(a):
            out.add(tuple(a[n] for n in list(xs) + list(defs)))
    return out


def as_tuples(found: list[dict], names: list[str]) -> set[tuple]:
    return {tuple(s[n] if isinstance(s[n], frozenset) else int(s[n]) for n in names) for s in found}


def superseded(stdout: str) -> int:
    """How many improvements the solver found and did not print, a better one having replaced
    them while the reader was behind (the supersededSolutions statistic; writer.py)."""
    import re

    m = re.search(r"^%%%mzn-stat: supersededSolutions=(\d+)$", stdout, re.M)
    return int(m.group(1)) if m else 0


def have_minizinc() -> bool:
    return (
        shutil.which("minizinc") is not None
        and "gpu-fzn" in subprocess.run(["minizinc", "--solvers"], capture_output=True, text=True).stdout
    )
