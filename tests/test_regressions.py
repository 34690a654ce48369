"""Models that once got a wrong or unfinished answer, each with the answer it must get, written in
its first line: `% expect: solutions N` (all of them, proven), `% expect: optimum V` (proven),
`% expect: unsatisfiable`. FlatZinc files are solved in this process, MiniZinc files through
`minizinc --solver gpu-fzn`; every printed solution goes through the independent checker.
A failure the fuzzer (tools/fuzz.py) finds is fixed and then added here."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fzn_gpu.engine import SolveRun
from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions

from helpers import ROOT, have_minizinc

sys.path.insert(0, str(ROOT / "tools"))
from fuzz import parse_stream  # noqa: E402

HERE = Path(__file__).resolve().parent / "regressions"
CASES = sorted(HERE.glob("*.fzn")) + sorted(HERE.glob("*.mzn"))


def expectation(path: Path) -> tuple[str, int | None]:
    m = re.match(r"% expect: (solutions|optimum|unsatisfiable)\s*(-?\d+)?", path.read_text())
    assert m, f"{path.name} has no `% expect:` first line"
    return m.group(1), int(m.group(2)) if m.group(2) else None


def judge(path: Path, stream: str, objective_name: str | None) -> None:
    what, value = expectation(path)
    ans = parse_stream(stream)
    if what == "unsatisfiable":
        assert ans.unsat, stream[-500:]
    elif what == "solutions":
        assert ans.complete and not ans.unsat, stream[-500:]
        assert len(ans.solutions) == value
        assert len({tuple(sorted(s.items())) for s in ans.solutions}) == value, "a solution printed twice"
    else:
        assert ans.complete and ans.solutions, stream[-500:]
        assert ans.solutions[-1][objective_name] == value


@pytest.mark.parametrize("path", [p for p in CASES if p.suffix == ".fzn"], ids=lambda p: p.name)
def test_flatzinc_regression(path, kernel):
    text = path.read_text()
    model = lower(parse_items(text, path.name), path.name)
    out = io.StringIO()
    run = SolveRun(model, SolveOptions(all_solutions=True, devices="cpu"), out=out)
    run.run_until(None)
    checker = Checker(parse_items(text, path.name))
    for sol in parse_stream(out.getvalue()).solutions:
        assert not checker.check(sol), sol
    assert run.outcome is not None and run.outcome.error is None, run.outcome
    objective = re.search(r"solve\s.*(?:minimize|maximize)\s+(\w+)", text)
    judge(path, out.getvalue(), objective.group(1) if objective else None)


@pytest.mark.skipif(not have_minizinc(), reason="needs minizinc with gpu-fzn registered (README set-up)")
@pytest.mark.parametrize("path", [p for p in CASES if p.suffix == ".mzn"], ids=lambda p: p.name)
def test_minizinc_regression(path):
    what, _ = expectation(path)
    flags = ["-a"] if what == "solutions" else []
    r = subprocess.run(
        ["minizinc", "--solver", "gpu-fzn", "--check", *flags, "-t", "120000", str(path)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 0 and "violates" not in r.stderr, r.stderr
    objective = re.search(r"solve\s.*(?:minimize|maximize)\s+(\w+)", path.read_text())
    judge(path, r.stdout, objective.group(1) if objective else None)


def test_capacity_error_is_said_never_a_failure(monkeypatch, capsys):
    """A work-item whose trail runs out must end the search incomplete with the reason on
    stderr: the overflow looks like a failed propagation to the kernel's mutators, and counting
    it as one once printed UNSATISFIABLE for satisfiable models. (The work-group kernel keeps no
    trail: it copies nodes.)"""
    from fzn_gpu.engine import runner

    monkeypatch.setenv("FZN_GPU_KERNEL", "item")
    monkeypatch.setattr(runner.Runner, "_trail_capacity", lambda self: 12)
    text = (HERE / "lin_le_no_lower_bound.fzn").read_text().replace("constraint int_eq(y, -1073741824);\n", "")
    model = lower(parse_items(text, "t.fzn"), "t.fzn")
    out = io.StringIO()
    run = SolveRun(model, SolveOptions(all_solutions=True, devices="cpu"), out=out)
    run.run_until(None)
    assert "UNSATISFIABLE" not in out.getvalue() and "==========" not in out.getvalue()
    assert "trail" in run.outcome.error
    assert "search incomplete" in capsys.readouterr().err
