"""What the MiniZinc IDE (2.6) relies on, tested through the same `minizinc` calls it makes: the
solver list it reads (`--solvers-json`: fzn-gpu by name, its standard flags, and every extra
flag as the option widget the IDE draws: a type it knows, a default of that type, the LNS
strategy drop-down's choices from search_options, and each flag accepted by fzn-gpu), a run
as the IDE starts one (`--json-stream` with a parameter file), its solutions checked, and its
Stop (SIGINT to minizinc's process group) leaving no solver behind. The IDE's window itself is
not driven: it shows what these calls return."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fzn_gpu.search_options import LNS_STRATEGIES
from fzn_gpu.solver_config import LABEL_MAX

from helpers import ROOT, have_minizinc

pytestmark = pytest.mark.skipif(not have_minizinc(), reason="needs minizinc with gpu-fzn registered (README set-up)")

SOLVER_ID = "org.fzn-gpu.gpu-fzn"
# the option types the IDE 2.6 draws (a check box, a number box, a text box, a drop-down)
TYPE = re.compile(r"bool|int(:-?\d+:-?\d+)?|float(:[-.\d]+:[-.\d]+)?|string|opt(:[^:]+)+")


def _solver() -> dict:
    out = subprocess.run(["minizinc", "--solvers-json"], capture_output=True, text=True, check=True).stdout
    return next(s for s in json.loads(out) if s["id"] == SOLVER_ID)


def _valid_default(kind: str, default: str) -> bool:
    if kind == "bool":
        return default in ("true", "false")
    if kind.startswith("int"):
        return re.fullmatch(r"-?\d+", default) is not None
    if kind.startswith("float"):
        return re.fullmatch(r"-?\d+(\.\d*)?", default) is not None
    if kind.startswith("opt:"):
        return default in kind.split(":")[1:]
    return True


def test_the_solver_list_the_ide_reads(tmp_path):
    solver = _solver()
    assert solver["name"] == "fzn-gpu" and solver["version"] and solver["supportsFzn"]
    assert {"-a", "-f", "-i", "-n", "-p", "-r", "-s", "-t"} <= set(solver["stdFlags"])
    flags = {}
    for flag, description, kind, default in solver["extraFlags"]:
        assert flag.startswith("--") and description, flag
        # the IDE's parameter table shows the label beside the value: a long one pushed the
        # value column off the screen (the long text is in --help and the README)
        assert len(description) <= LABEL_MAX, (flag, description)
        assert TYPE.fullmatch(kind), f"{flag}: the IDE has no widget for {kind!r}"
        assert _valid_default(kind, default), f"{flag}: default {default!r} is not a {kind}"
        flags[flag] = (kind, default)
    assert flags["--lns-strategy"][0].split(":")[1:] == ["none", *LNS_STRATEGIES]
    # every widget's default, set as the IDE passes it, is accepted by the solver
    model = tmp_path / "m.fzn"
    model.write_text("var 1..3: x :: output_var;\nsolve satisfy;\n")
    for flag, (kind, default) in flags.items():
        args = [flag] if kind == "bool" else [flag, default]
        if kind == "bool" and default == "false":
            continue  # an unchecked box passes nothing
        r = subprocess.run(
            [sys.executable, "-m", "fzn_gpu", "--check", *args, str(model)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
        assert r.returncode == 0 and r.stdout.startswith("x = "), (flag, r.stderr)


def _queens_ok(q: list[int]) -> bool:
    n = len(q)
    return sorted(q) == list(range(1, n + 1)) and all(
        abs(q[i] - q[j]) != j - i for i in range(n) for j in range(i + 1, n)
    )


def test_a_run_as_the_ide_starts_it(tmp_path):
    """`minizinc --json-stream --param-file-no-push run.mpc model.mzn`: every solution a JSON
    message, checked (8 queens: distinct rows and diagonals), all 92 of them, then the status."""
    params = tmp_path / "run.mpc"
    # --check as an extra flag of the IDE's parameter file: fzn-gpu's checker sees every solution
    params.write_text(json.dumps({"solver": SOLVER_ID, "all-solutions": True, "output-time": True, "--check": True}))
    r = subprocess.run(
        ["minizinc", "--json-stream", "--param-file-no-push", str(params), str(ROOT / "models" / "nqueens.mzn")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    messages = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    boards = [json.loads(m["output"]["default"].split("=", 1)[1].strip()) for m in messages if m["type"] == "solution"]
    assert len(boards) == 92 and len({tuple(b) for b in boards}) == 92
    assert all(_queens_ok(b) for b in boards)
    status = [m for m in messages if m["type"] == "status"]
    assert status and status[-1]["status"] == "ALL_SOLUTIONS"
    assert not [m for m in messages if m["type"] == "error"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_the_ides_stop_leaves_no_solver(tmp_path, sig):
    """Stop while a long run prints: the IDE sends SIGINT to minizinc's process group, and
    SIGKILL to the group a second later if it still runs; either way minizinc ends and no
    fzn-gpu process of the run is left."""
    model = tmp_path / "q.mzn"
    model.write_text(
        'include "alldifferent.mzn";\nint: n = 30;\narray[1..n] of var 1..n: q;\n'
        "constraint alldifferent(q);\nconstraint alldifferent([q[i] + i | i in 1..n]);\n"
        "constraint alldifferent([q[i] - i | i in 1..n]);\nsolve satisfy;\n"
    )
    params = tmp_path / "run.mpc"
    params.write_text(json.dumps({"solver": SOLVER_ID, "all-solutions": True, "--check": True}))
    proc = subprocess.Popen(
        ["minizinc", "--json-stream", "--param-file-no-push", str(params), str(model)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    first = json.loads(proc.stdout.readline())
    assert first["type"] == "solution", first
    solver = [p for p in _children(proc.pid) if "fzn_gpu" in _cmdline(p) or "fzn-gpu" in _cmdline(p)]
    assert solver, "no solver process under minizinc"
    os.killpg(proc.pid, sig)
    proc.communicate(timeout=30)
    t = time.monotonic()
    while any(_alive(p) for p in solver) and time.monotonic() - t < 10:
        time.sleep(0.05)
    assert not any(_alive(p) for p in solver), "the solver outlived the IDE's Stop"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _children(pid: int) -> list[int]:
    """Every descendant of `pid`."""
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                if ppid == parent:
                    found.append(int(entry.name))
                    frontier.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
