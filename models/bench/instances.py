#!/usr/bin/env python3
"""The benchmark suite's data files (.dzn), written from fixed seeds: the same instances on every
machine, so figures from different runs compare. `python3 models/bench/instances.py [OUT_DIR]`
(default: models/bench/data, which the benchmark command fills on first use).

Each family draws from its own `random.Random(seed)`, in a fixed order of calls; changing a seed
or the order of draws changes the instances, and every figure in docs/bench/measurements.md with them.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent


def dzn_matrix(name: str, rows: list[list[int]]) -> str:
    body = "\n |".join(", ".join(str(v) for v in row) for row in rows)
    return f"{name} = [|{body}\n|];\n"


def qap(n: int) -> str:
    """Random flows between facilities; locations on a 100 x 100 grid, Manhattan distances."""
    rng = random.Random(1000 + n)
    flow = [[0 if i == j else rng.randint(0, 99) for j in range(n)] for i in range(n)]
    spots = [(rng.randint(0, 99), rng.randint(0, 99)) for _ in range(n)]
    dist = [[abs(a[0] - b[0]) + abs(a[1] - b[1]) for b in spots] for a in spots]
    return f"n = {n};\n" + dzn_matrix("flow", flow) + dzn_matrix("dist", dist)


def knapsack(n: int) -> str:
    """Strongly correlated: each profit is its weight plus 100; the capacity half the weights."""
    rng = random.Random(2000 + n)
    weight = [rng.randint(1, 1000) for _ in range(n)]
    profit = [w + 100 for w in weight]
    return f"n = {n};\ncapacity = {sum(weight) // 2};\nweight = {weight};\nprofit = {profit};\n"


def tsp(n: int) -> str:
    """An asymmetric distance matrix of 1..100."""
    rng = random.Random(3000 + n)
    dist = [[0 if i == j else rng.randint(1, 100) for j in range(n)] for i in range(n)]
    return f"n = {n};\n" + dzn_matrix("dist", dist)


def mkcp(nodes: int, edges: int) -> str:
    """A random simple graph, 30 colours."""
    rng = random.Random(4000 + nodes)
    chosen: set[tuple[int, int]] = set()
    while len(chosen) < edges:
        a, b = sorted(rng.sample(range(1, nodes + 1), 2))
        chosen.add((a, b))
    return f"nodes = {nodes};\ncolours = 30;\nedges = {edges};\n" + dzn_matrix(
        "edge", [list(e) for e in sorted(chosen)]
    )


def transportation() -> str:
    """3 sources, 4 sinks; the last demand trimmed so that the supply covers every demand."""
    rng = random.Random(5000)
    s, d = 3, 4
    supply = [rng.randint(30, 60) for _ in range(s)]
    demand = [rng.randint(10, 30) for _ in range(d)]
    demand[-1] = max(1, min(demand[-1], sum(supply) - sum(demand[:-1])))
    unit = [[rng.randint(1, 20) for _ in range(d)] for _ in range(s)]
    fixed = [[rng.randint(50, 200) for _ in range(d)] for _ in range(s)]
    head = f"s = {s};\nd = {d};\nsupply = {supply};\ndemand = {demand};\n"
    return head + dzn_matrix("unit_cost", unit) + dzn_matrix("fixed_cost", fixed)


def wcsp_grid(rows: int, cols: int, dom: int = 5) -> str:
    """A rows x cols grid, right and down edges; each pair of values costs 0..100, or 1000 (half
    of the pairs, forbidden)."""
    rng = random.Random(6000 + rows * cols)

    def var(i: int, j: int) -> int:
        return i * cols + j + 1

    edge = [(var(i, j), var(i, j + 1)) for i in range(rows) for j in range(cols - 1)]
    edge += [(var(i, j), var(i + 1, j)) for i in range(rows - 1) for j in range(cols)]
    tables = [
        [[1000 if rng.random() < 0.5 else rng.randint(0, 100) for _ in range(dom)] for _ in range(dom)] for _ in edge
    ]
    flat = ", ".join(str(v) for table in tables for row in table for v in row)
    return (
        f"rows = {rows};\ncols = {cols};\ndom = {dom};\nedges = {len(edge)};\n"
        + dzn_matrix("edge", [list(e) for e in edge])
        + f"cost = array3d(1..{len(edge)}, 1..{dom}, 1..{dom}, [{flat}]);\n"
    )


def instances() -> Iterator[tuple[str, str]]:
    """(file name, text) of every data file of the suite."""
    for n in (12, 15, 20, 32, 64):
        yield f"qap_{n}.dzn", qap(n)
    for n in (50, 100, 200):
        yield f"knapsack_{n}.dzn", knapsack(n)
    for n in (10, 15, 20, 30, 60):
        yield f"tsp_{n}.dzn", tsp(n)
    for nodes, edges in ((20, 60), (67, 232)):
        yield f"mkcp_{nodes}.dzn", mkcp(nodes, edges)
    yield "transportation.dzn", transportation()
    for n, c in ((8, 3), (15, 6), (31, 14)):
        yield f"coins_grid_{n}.dzn", f"n = {n};\nc = {c};\n"
    for rows, cols in ((3, 3), (5, 5), (7, 7), (10, 10)):
        yield f"wcsp_grid_{rows}x{cols}.dzn", wcsp_grid(rows, cols)


def write(out: Path) -> Path:
    """Writes every data file into `out` (made if missing); returns it."""
    out.mkdir(parents=True, exist_ok=True)
    for name, text in instances():
        (out / name).write_text(text)
    return out


if __name__ == "__main__":
    where = write(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "data")
    print(f"wrote the suite's data files to {where}")
