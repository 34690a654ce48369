"""The solver server's pool of spares (fzn_gpu/server.py, SparePool): one spare, more while
runs come faster than a spare starts, back to one once runs stop coming; extra spares that are
ready end, starting ones are left to finish; runs back to back through a pool are answered
right (checked)."""

from __future__ import annotations

import os
import signal
import time

import pytest

from fzn_gpu import server
from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.parser import parse_items

from test_cli import QUEENS6, fzn, solutions
from test_server import _env, _start_server, run


def test_one_spare_until_runs_come_faster_than_a_spare_starts():
    pool = server.SparePool()
    assert pool.wanted(0.0) == 1  # nothing known yet
    pool.started(0.8)
    pool.taken(10.0)
    assert pool.wanted(10.1) == 1  # one run: no gap yet
    pool.taken(10.4)  # a run every 0.4 s, a spare's start 0.8 s: two start side by side
    assert pool.wanted(10.5) == 2
    pool.taken(10.6)  # every 0.2 s: four wanted, three at most
    assert pool.wanted(10.7) == server.SparePool.MAX_SPARES == 3
    pool.taken(12.0)  # runs slower than a spare starts: one
    assert pool.wanted(12.1) == 1
    pool.taken(12.1)
    assert pool.wanted(12.2) == 3
    assert pool.wanted(12.1 + server.SparePool.SHRINK_S + 0.1) == 1  # no run for a while: back to one


def test_the_most_spares_is_a_setting(monkeypatch):
    monkeypatch.setenv("FZN_GPU_SERVER_SPARES", "1")
    pool = server.SparePool()
    pool.started(5.0)
    pool.taken(1.0)
    pool.taken(1.1)
    assert pool.wanted(1.2) == 1


def _fake_spare(ready: bool) -> server._Spare:
    """A child that sleeps, with a status pipe nothing writes to."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        time.sleep(60)
        os._exit(0)
    os.close(w)
    return server._Spare(pid, r, time.monotonic(), ready=ready)


def _ended(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return True
        time.sleep(0.02)
    return False


def test_extra_spares_that_are_ready_end_and_starting_ones_stay():
    spares = [_fake_spare(True), _fake_spare(False), _fake_spare(True)]
    kept = list(spares)
    try:
        server._retire_extra(spares, 1)
        assert [x.pid for x in spares] == [kept[1].pid]  # the ready ones ended; the starting one stays
        assert _ended(kept[0].pid) and _ended(kept[2].pid)
        server._retire_extra(spares, 0)  # none ready: nothing to end yet
        assert [x.pid for x in spares] == [kept[1].pid]
    finally:
        for x in kept:
            try:
                os.kill(x.pid, signal.SIGKILL)
                os.waitpid(x.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass


@pytest.mark.parametrize("most", ["1", "3"])
def test_runs_back_to_back_through_a_pool_are_answered_right(tmp_path, most):
    env = _env(tmp_path / "s", FZN_GPU_SERVER_SPARES=most, FZN_GPU_SERVER_IDLE_S="60")
    proc = _start_server(env)
    try:
        checker = Checker(parse_items(QUEENS6, "q.fzn"))
        path = fzn(tmp_path, QUEENS6)
        for _ in range(6):
            r = run(env, "-a", "--check", path)
            assert r.returncode == 0, r.stderr
            found = solutions(r.stdout)
            assert len(found) == 4
            for block in found:
                values = [int(v) for v in block.split("[", 1)[1].rsplit("]", 1)[0].split(",")]
                assert checker.check({f"q{i + 1}": x for i, x in enumerate(values)}) == []
    finally:
        proc.terminate()
        proc.wait(timeout=30)
