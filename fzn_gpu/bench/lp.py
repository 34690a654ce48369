"""PDHG for the relaxations' LP dual: the host's numpy against each OpenCL device, on generated
transportation LPs of growing size (fixed seeds), the same iterations on each.

    python -m fzn_gpu.bench.lp                 # sizes 10k .. 1M nonzeros, every device
    python -m fzn_gpu.bench.lp --sizes 100,300 --iterations 2000

Prints a Markdown table: nonzeros, iterations, seconds and iterations per second for numpy and
for each device, and the bound each reached (equal up to rounding: the same method)."""

from __future__ import annotations

import argparse
import time

import numpy as np

from ..relax.linear import EQ, LE, LinearSystem
from ..relax.pdhg import solve_dual
from ..runtime.device import select_devices


def transportation(sources: int, sinks: int, seed: int = 0) -> tuple[LinearSystem, np.ndarray]:
    """min sum(cost * ship) with supplies (<=) and demands (=): sources * sinks variables,
    2 * sources * sinks nonzeros."""
    rng = np.random.default_rng(seed)
    supply = rng.integers(50, 150, sources)
    demand = rng.integers(10, 60, sinks)
    demand = (demand * (supply.sum() * 0.9 / demand.sum())).astype(np.int64)
    i = np.repeat(np.arange(sources), sinks)
    j = np.tile(np.arange(sinks), sources)
    var = np.arange(sources * sinks)
    rows = np.concatenate([i, sources + j])
    cols = np.concatenate([var, var])
    system = LinearSystem(
        rows.astype(np.int64),
        cols.astype(np.int64),
        np.ones(len(rows), dtype=np.int64),
        np.concatenate([supply, demand]).astype(np.int64),
        np.concatenate([np.full(sources, LE), np.full(sinks, EQ)]).astype(np.int8),
        np.zeros(sources * sinks, dtype=np.int64),
        np.full(sources * sinks, int(supply.max()), dtype=np.int64),
    )
    return system, rng.integers(1, 100, sources * sinks).astype(float)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="70,220,700", help="sources = sinks per LP (nonzeros: 2 size^2)")
    ap.add_argument("--iterations", type=int, default=1024, help="PDHG iterations each (a multiple of 64)")
    args = ap.parse_args()
    devices = select_devices("all")
    print("| nonzeros | solver | iterations | seconds | iterations/s | bound |")
    print("|---|---|---|---|---|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        system, cost = transportation(size, size)
        runs: list[tuple[str, object]] = [("numpy", None)] + [(d.name.strip(), d) for d in devices]
        for name, device in runs:
            solve_dual(system, cost, 1e9, max_iterations=64, device=device)  # build and warm
            t0 = time.monotonic()
            # the same method on each: the same iterations (it may stop early where it converges)
            r = solve_dual(system, cost, 1e9, max_iterations=args.iterations, device=device)
            s = time.monotonic() - t0
            print(
                f"| {len(system.val):,} | {name} | {r.iterations} | {s:.3f} | {r.iterations / s:,.0f} | {r.bound:.6g} |"
            )


if __name__ == "__main__":
    main()
