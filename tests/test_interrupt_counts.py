"""An interrupt keeps what was found (SolveRun.wind_down): SIGINT or SIGTERM stops the search at
its next slice, as a time limit does, and the run reports every device's count and statistics
so far. Before, a count stopped by Stop or Ctrl-C reported 0 solutions and the root split's
nodes alone (its devices' running totals were never read back)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import pytest

from helpers import ROOT
from test_cli import fzn, queens

TOTAL_14 = 365596  # 14-queens' solutions


def stat(out: str, name: str) -> str | None:
    m = re.search(rf"^%%%mzn-stat: {name}=(.*)$", out, re.M)
    return m.group(1) if m else None


def interrupted(path: str, signo: int, after_s: float, *flags: str) -> subprocess.CompletedProcess:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fzn_gpu", *flags, path],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    time.sleep(after_s)
    sent = time.monotonic()
    proc.send_signal(signo)
    out, err = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    assert took < 3.0, took  # at once: the next slice, at most a second's wait for it
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_count_reports_what_the_devices_counted(tmp_path, signo):
    """Counting 14-queens (about 5 s here), interrupted at three moments: the count is never
    more than the total, and once the search has run for seconds it is more than nothing, with
    the nodes behind it (the code before printed 0 solutions and the root split's 4,401 nodes)."""
    path = fzn(tmp_path, queens(14))
    counts = []
    for after_s in (0.2, 2.0, 3.5):
        r = interrupted(path, signo, after_s, "-a", "--count-only", "-s")
        assert "Traceback" not in r.stderr, r.stderr
        counted = int(stat(r.stdout, "solutions") or 0)
        if r.returncode == 0:  # it finished first: the whole count
            assert counted == TOTAL_14 and "==========" in r.stdout
            continue
        assert r.returncode == 128 + signo, r.stderr
        assert 0 <= counted <= TOTAL_14 and "==========" not in r.stdout, r.stdout
        if counted == 0:  # stopped before the search began: no claim, the status says so
            assert "=====UNKNOWN=====" in r.stdout
        counts.append((after_s, counted, int(stat(r.stdout, "nodes") or 0)))
    late = [c for c in counts if c[0] >= 2.0]
    assert late and all(counted > 0 and nodes > 100_000 for _, counted, nodes in late), counts


def test_a_count_stopped_and_continued_counts_to_the_end(tmp_path):
    """A run stopped (SIGSTOP, as Ctrl-Z stops it) for longer than the watchdog's poll and then
    continued goes on to its whole count. CPython's sigtimedwait, interrupted once its timeout
    had passed, returned a siginfo it never filled, and the watchdog took its garbage for a
    signal: the count ended short, without a status line, with an exit code such as 160."""
    from fzn_gpu.watchdog import POLL_S

    path = fzn(tmp_path, queens(14))
    proc = subprocess.Popen(
        [sys.executable, "-m", "fzn_gpu", "-a", "--count-only", "-s", "--devices", "cpu", path],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    stops = 0
    try:
        for after_s in (0.5, 1.0):  # at start-up and in the search, while the run goes on
            time.sleep(after_s)
            if proc.poll() is not None:
                break
            proc.send_signal(signal.SIGSTOP)
            stops += 1
            time.sleep(POLL_S + 0.5)
            proc.send_signal(signal.SIGCONT)
    finally:
        proc.send_signal(signal.SIGCONT)
    out, err = proc.communicate(timeout=120)
    assert stops, "the count ended before it could be stopped"
    assert "Traceback" not in err, err
    assert proc.returncode == 0, (proc.returncode, out[-500:], err[-500:])
    assert "==========" in out and int(stat(out, "solutions") or 0) == TOTAL_14, out[-500:]
