"""The writer thread (fzn_gpu/writer.py): solutions are written in the order handed over, the
backlog stays bounded while the reader is slow, the status comes after every solution, and a
failed write reaches the searching thread instead of hanging it."""

import io
import threading
import time

import numpy as np
import pytest

from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.output import SEARCH_COMPLETE, Printer
from fzn_gpu.writer import StreamWriter


class SlowPipe(io.StringIO):
    """A reader that takes its time over every write, like MiniZinc's solns2out."""

    def __init__(self, delay_s: float):
        super().__init__()
        self.delay_s = delay_s
        self.writes = 0

    def write(self, text: str) -> int:
        time.sleep(self.delay_s)
        self.writes += 1
        return super().write(text)


class BrokenPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError("the reader is gone")


def test_batches_are_written_in_order_and_drained():
    out = SlowPipe(0.002)
    writer = StreamWriter(out, max_pending=1 << 30)
    for i in range(50):
        writer.put(lambda i=i: f"{i}\n", 3)
    writer.drain()
    assert out.getvalue() == "".join(f"{i}\n" for i in range(50))


def test_the_backlog_is_bounded():
    out = SlowPipe(0.01)
    writer = StreamWriter(out, max_pending=100)
    most = 0
    for i in range(30):
        writer.put(lambda i=i: "x" * 40, 40)
        most = max(most, writer._pending)
    assert most <= 100
    writer.drain()
    assert out.getvalue() == "x" * 40 * 30


def test_a_job_over_the_bound_still_goes_through():
    out = io.StringIO()
    writer = StreamWriter(out, max_pending=10)
    writer.put(lambda: "a" * 100, 100)
    writer.put(lambda: "b" * 100, 100)
    writer.drain()
    assert out.getvalue() == "a" * 100 + "b" * 100


def test_a_failed_write_is_raised_in_the_searching_thread():
    writer = StreamWriter(BrokenPipe())
    writer.put(lambda: "lost\n", 5)
    with pytest.raises(BrokenPipeError):
        writer.drain()
    with pytest.raises(BrokenPipeError):  # every later hand-over fails too, none hangs
        for _ in range(3):
            writer.put(lambda: "lost\n", 5)
            time.sleep(0.01)
        writer.drain()


def test_the_search_runs_on_while_the_reader_is_slow():
    out = SlowPipe(0.2)
    writer = StreamWriter(out)
    t0 = time.monotonic()
    writer.put(lambda: "slow\n", 5)
    handed_over = time.monotonic() - t0
    writer.drain()
    assert handed_over < 0.1 and out.getvalue() == "slow\n"


def hand_over(model_text: str, out: io.StringIO, values: range, supersedes: bool = False) -> Printer:
    """A printer over `out`, handed one solution x = v after another in one buffer, refilled
    (the printer keeps its own copy); improvements a millisecond apart where `supersedes`."""
    model = lower(parse_items(model_text))
    printer = Printer(model, out)
    rows = np.zeros((1, len(model.vars.kind)), dtype=np.int64)
    for v in values:
        rows[0, 0] = v
        printer.solutions(rows, supersedes=supersedes)
        if supersedes:
            time.sleep(0.001)
    return printer


def test_printer_status_follows_every_solution():
    out = SlowPipe(0.001)
    printer = hand_over("var 1..9: x :: output_var;\nsolve satisfy;\n", out, range(1, 10))
    printer.status(SEARCH_COMPLETE)
    assert out.getvalue() == "".join(f"x = {v};\n----------\n" for v in range(1, 10)) + SEARCH_COMPLETE + "\n"


def test_solutions_from_several_threads_stay_whole():
    model = lower(parse_items("var 1..9: x :: output_var;\nsolve satisfy;\n"))
    out = io.StringIO()
    printer = Printer(model, out)
    lock = threading.Lock()

    def search(v: int) -> None:
        rows = np.full((20, len(model.vars.kind)), v, dtype=np.int64)
        with lock:  # SolveRun hands batches over under its lock
            printer.solutions(rows)

    threads = [threading.Thread(target=search, args=(v,)) for v in range(1, 10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    printer.drain()
    lines = out.getvalue().split("----------\n")[:-1]
    assert len(lines) == 180 and all(line.startswith("x = ") for line in lines)


def test_an_improvement_replaces_those_not_yet_written():
    out = SlowPipe(0.05)  # MiniZinc reading a large solution
    writer = StreamWriter(out)
    for i in range(40):  # a search improving every millisecond
        writer.put(lambda i=i: f"{i}\n", 3, supersedes=True)
        time.sleep(0.001)
    writer.drain()
    written = [int(x) for x in out.getvalue().split()]
    assert written[-1] == 39 and written == sorted(written) and len(written) < 20  # not 40 slow writes
    assert writer.superseded == 40 - len(written)


def test_only_superseding_jobs_are_replaced():
    out = SlowPipe(0.05)
    writer = StreamWriter(out)
    writer.put(lambda: "a\n", 2, supersedes=True)  # taken by the thread at once
    time.sleep(0.01)
    writer.put(lambda: "kept\n", 5)
    writer.put(lambda: "b\n", 2, solutions=2, supersedes=True)
    writer.put(lambda: "c\n", 2, supersedes=True)
    writer.drain()
    assert out.getvalue() == "a\nkept\nc\n" and writer.superseded == 2


def test_printer_prints_the_best_improvement_last():
    out = SlowPipe(0.02)
    printer = hand_over("var 1..99: x :: output_var;\nsolve maximize x;\n", out, range(1, 60), supersedes=True)
    printer.status(SEARCH_COMPLETE)
    text = out.getvalue()
    values = [int(line[4:-1]) for line in text.splitlines() if line.startswith("x = ")]
    assert values[-1] == 59 and values == sorted(values) and text.endswith(SEARCH_COMPLETE + "\n")
    assert len(values) < 30  # 59 improvements in 59 ms: the reader got the best, not each
    assert printer.superseded == 59 - len(values)


def test_shrink_pipe_leaves_a_pipe_one_page():
    import fcntl
    import os

    from fzn_gpu.writer import shrink_pipe

    r, w = os.pipe()
    try:
        with os.fdopen(w, "w", closefd=False) as out:
            if not hasattr(fcntl, "F_GETPIPE_SZ"):
                pytest.skip("no F_GETPIPE_SZ here")
            assert shrink_pipe(out)
            assert fcntl.fcntl(w, fcntl.F_GETPIPE_SZ) == os.sysconf("SC_PAGESIZE")
    finally:
        os.close(r)
        os.close(w)
    assert not shrink_pipe(io.StringIO())  # not a pipe: left alone


def test_a_reader_keeping_up_gets_every_improvement():
    out = io.StringIO()
    writer = StreamWriter(out)
    for i in range(30):
        writer.put(lambda i=i: f"{i}\n", 3, supersedes=True)
        writer.drain()  # the writer is idle again before the next improvement
    assert out.getvalue() == "".join(f"{i}\n" for i in range(30)) and writer.superseded == 0


@pytest.mark.parametrize("deterministic", [False, True])
def test_an_optimisation_run_ends_with_its_best_though_its_reader_is_slow(deterministic):
    """The run's own stream (SolveRun over a real pipe, as MiniZinc reads it): improvements
    found faster than the reader takes them replace one another, the best found is the last
    printed, the statistics say how many were replaced, and the pipe holds one page; with
    --deterministic every improvement is printed, the same stream every run."""
    import fcntl
    import os

    from fzn_gpu.engine import SolveRun
    from fzn_gpu.engine.incumbent import Outcome
    from fzn_gpu.options import SolveOptions

    model = lower(parse_items("var 1..5000: x :: output_var;\nsolve maximize x;\n"))
    r, w = os.pipe()
    read: list[bytes] = []

    def slow_reader() -> None:  # MiniZinc's solns2out on a big solution: a page every 5 ms
        while chunk := os.read(r, 4096):
            read.append(chunk)
            time.sleep(0.005)

    reader = threading.Thread(target=slow_reader)
    reader.start()
    with os.fdopen(w, "w") as out:
        opts = SolveOptions(all_solutions=True, statistics=True, deterministic=deterministic)
        run = SolveRun(model, opts, out=out)
        if hasattr(fcntl, "F_GETPIPE_SZ") and not deterministic:
            assert fcntl.fcntl(w, fcntl.F_GETPIPE_SZ) == os.sysconf("SC_PAGESIZE")
        rows = np.zeros((1, len(model.vars.kind)), dtype=np.int64)
        for v in range(1, 5001):  # the x = v lines, some 60 KB: more than a pipe holds by default
            rows[0, 0] = v
            run.report_batch(rows)
        with run.lock:
            run._end(Outcome(solutions=5000, best=-5000), interrupted=False)
    reader.join()
    os.close(r)
    text = b"".join(read).decode()
    printed = [int(line[4:-1]) for line in text.splitlines() if line.startswith("x = ")]
    if deterministic:
        assert printed == list(range(1, 5001)) and "supersededSolutions" not in text
        return
    superseded = int(text.split("supersededSolutions=")[1].split()[0])
    assert printed[-1] == 5000 and printed == sorted(printed)
    assert superseded > 0 and len(printed) + superseded == 5000


@pytest.mark.parametrize("check_s, wait_s", [(0.3, 1.0), (0.6, 0.1)])
def test_a_solution_whose_check_runs_as_the_stream_ends_is_printed_or_not_claimed(check_s, wait_s, monkeypatch):
    """An engine reports a solution just before the limit and --check takes a while on it (a
    model of 118,000 variables): the stream's end waits for the report and prints it; where the
    check outlasts the wait, the solution is not printed and the stream says UNKNOWN, never
    nothing at all (it said neither before), and the late report prints nothing after the end."""
    import io

    from fzn_gpu import engine
    from fzn_gpu.engine import SolveRun
    from fzn_gpu.engine.incumbent import Outcome
    from fzn_gpu.options import SolveOptions

    class SlowChecker:
        def check(self, _assignment):
            time.sleep(check_s)
            return []

    monkeypatch.setattr(engine, "DELIVER_WAIT_S", wait_s)
    model = lower(parse_items("var 1..9: x :: output_var;\nsolve maximize x;\n"))
    out = io.StringIO()
    run = SolveRun(model, SolveOptions(), out=out)
    run.checker = SlowChecker()
    row = np.full((1, len(model.vars.kind)), 7, dtype=np.int64)
    reporter = threading.Thread(target=run.report_batch, args=(row,))
    reporter.start()
    time.sleep(0.05)  # the check under way
    with run.lock:
        run._end(Outcome(solutions=1, best=-7), interrupted=False)
    reporter.join()
    text = out.getvalue()
    if check_s < wait_s:
        assert "x = 7;\n----------\n" in text and "UNKNOWN" not in text
    else:
        assert text == "=====UNKNOWN=====\n"
