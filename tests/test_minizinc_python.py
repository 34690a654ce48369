"""fzn-gpu through minizinc-python, as a Python user drives it: the solver found by name, a
solution, intermediate solutions of an optimisation, async iteration under a time limit, and
cancellation (the solver process is gone afterwards). Every solution is checked here against
the model's own constraints."""

import asyncio
import os
import time
from datetime import timedelta

import pytest

minizinc = pytest.importorskip("minizinc")

QUEENS = """
include "alldifferent.mzn";
int: n;
array[1..n] of var 1..n: q;
constraint alldifferent(q);
constraint alldifferent([q[i] + i | i in 1..n]);
constraint alldifferent([q[i] - i | i in 1..n]);
solve satisfy;
"""

N_ITEMS = 40
WEIGHTS = [7 + (i * 37) % 41 for i in range(N_ITEMS)]
PROFITS = [5 + (i * 53) % 47 for i in range(N_ITEMS)]
CAPACITY = sum(WEIGHTS) // 3
KNAPSACK = f"""
array[1..{N_ITEMS}] of int: w = {WEIGHTS};
array[1..{N_ITEMS}] of int: p = {PROFITS};
array[1..{N_ITEMS}] of var bool: take;
constraint sum(i in 1..{N_ITEMS})(w[i] * take[i]) <= {CAPACITY};
var int: value = sum(i in 1..{N_ITEMS})(p[i] * take[i]);
solve maximize value;
"""

# Golomb ruler of 12 marks: a first ruler at once, a few improvements a second at most, and a
# proof of optimality far beyond any test's time
GOLOMB = """
include "alldifferent.mzn";
int: m;
array[1..m] of var 0..m * m: mark;
array[1..(m * (m - 1)) div 2] of var 1..m * m: differences =
    [mark[j] - mark[i] | i in 1..m, j in i + 1..m];
constraint mark[1] = 0;
constraint forall(i in 1..m - 1)(mark[i] < mark[i + 1]);
constraint alldifferent(differences);
solve minimize mark[m];
"""


def solver():
    try:
        return minizinc.Solver.lookup("gpu-fzn")
    except LookupError:
        pytest.skip("minizinc does not list gpu-fzn (python3 -m fzn_gpu install-solver-config)")


def instance(text: str, **data):
    model = minizinc.Model()
    model.add_string(text)
    inst = minizinc.Instance(solver(), model)
    for k, v in data.items():
        inst[k] = v
    return inst


def assert_queens(q: list[int]) -> None:
    n = len(q)
    assert sorted(q) == list(range(1, n + 1))
    assert len({q[i] + i for i in range(n)}) == n and len({q[i] - i for i in range(n)}) == n


def assert_knapsack(take: list[bool], value: int) -> None:
    assert sum(w for w, t in zip(WEIGHTS, take) if t) <= CAPACITY
    assert value == sum(p for p, t in zip(PROFITS, take) if t)


def assert_golomb(marks: list[int]) -> None:
    assert marks[0] == 0 and all(a < b for a, b in zip(marks, marks[1:]))
    differences = [b - a for i, a in enumerate(marks) for b in marks[i + 1 :]]
    assert len(set(differences)) == len(differences)


def fzn_gpu_processes() -> set[int]:
    """Live fzn-gpu processes of this user (by command line)."""
    found = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ")
            state = open(f"/proc/{pid}/stat").read().split(")")[-1].split()[0]
        except OSError:
            continue
        if b"fzn_gpu" in cmd or b"fzn-gpu" in cmd:
            if state != "Z":
                found.add(int(pid))
    return found


def test_the_solver_is_found_by_name_and_solves():
    s = solver()
    assert "gpu-fzn" in s.id or "gpu-fzn" in (s.tags or [])
    result = instance(QUEENS, n=8).solve()
    assert result.status == minizinc.Status.SATISFIED
    assert_queens(result["q"])


def test_all_solutions_are_distinct_and_counted():
    result = instance(QUEENS, n=6).solve(all_solutions=True)
    sols = [tuple(s.q) for s in result.solution]
    assert len(sols) == len(set(sols)) == 4
    for q in sols:
        assert_queens(list(q))


def test_intermediate_solutions_improve_and_hold():
    result = instance(KNAPSACK).solve(intermediate_solutions=True, time_limit=timedelta(seconds=20))
    assert result.status in (minizinc.Status.OPTIMAL_SOLUTION, minizinc.Status.SATISFIED)
    values = [s.objective for s in result.solution]
    assert values and values == sorted(values) and len(set(values)) == len(values)
    for s in result.solution:
        assert_knapsack(s.take, s.objective)


def test_async_iteration_ends_by_its_time_limit():
    async def run():
        seen, t0 = [], time.monotonic()
        async for res in instance(QUEENS, n=30).solutions(all_solutions=True, time_limit=timedelta(seconds=4)):
            if res.solution is not None:
                seen.append(res.solution.q)
        return seen, time.monotonic() - t0, res.status

    seen, took, status = asyncio.run(run())
    assert seen and status == minizinc.Status.SATISFIED  # 30-queens' solutions outlast 4 s by far
    assert took < 4 + 15  # compilation and start-up besides the limit
    for q in seen:
        assert_queens(q)


def test_cancelling_the_iteration_leaves_no_solver_behind():
    """Cancel an optimisation's iteration after its first solution; the solver is gone after.

    An optimisation with few improvements, not an all-solutions run: minizinc-python stops
    reading the driver's output when the iteration is cancelled, and a run printing hundreds of
    kilobytes a second (30-queens' solutions) can fill the pipe and block MiniZinc's driver in a
    write before it forwards the termination, whatever the solver does."""
    before = fzn_gpu_processes()

    async def run():
        seen = []

        async def consume():
            async for res in instance(GOLOMB, m=12).solutions(intermediate_solutions=True):
                if res.solution is not None:
                    seen.append(list(res.solution.mark))

        task = asyncio.create_task(consume())
        t0 = time.monotonic()
        while not seen and time.monotonic() - t0 < 60:
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return seen

    seen = asyncio.run(run())
    assert seen, "no solution within 60 s"
    for marks in seen:
        assert_golomb(marks)
    deadline = time.monotonic() + 10
    while fzn_gpu_processes() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not fzn_gpu_processes() - before, "fzn-gpu outlived the cancelled iteration"
