"""The corpus regression script: how it judges a run against the manifest (a wrong answer must
never count as a pass or a time-out), and one small run end to end."""

import json
import subprocess
import sys

import pytest

from helpers import CORPUS, ROOT, have_minizinc

sys.path.insert(0, str(ROOT / "tools"))
from regress import classify  # noqa: E402

SAT = {"name": "s", "kind": "sat", "status": "SATISFIED", "all_solutions": 2}
UNSAT = {"name": "u", "kind": "sat", "status": "UNSATISFIABLE"}
MIN = {"name": "m", "kind": "min", "status": "OPTIMAL", "objective": 10}
FMIN = {"name": "f", "kind": "min", "status": "OPTIMAL", "objective": 7.2111, "tags": ["float-vars"]}
TRUNCATED = {"name": "t", "kind": "min", "status": "OPTIMAL", "objective": 144, "tags": ["float-vars"]}
SOL = "x = 1;\n----------\n"


def stats(obj):
    return f"%%%mzn-stat: objective={obj}\n%%%mzn-stat-end\n"


@pytest.mark.parametrize(
    "entry,rc,out,err,count,outcome",
    [
        (SAT, 0, SOL, "", False, "pass"),
        (SAT, 0, SOL * 2 + "==========\n", "", True, "pass"),
        (SAT, 0, SOL * 3 + "==========\n", "", True, "WRONG"),  # another count
        (SAT, 0, SOL, "", True, "timeout"),  # enumeration unfinished
        (SAT, 0, "=====UNSATISFIABLE=====\n", "", False, "WRONG"),  # false UNSAT
        (SAT, 0, "=====UNKNOWN=====\n", "", False, "timeout"),
        (SAT, None, "", "", False, "timeout"),  # killed, nothing printed
        (UNSAT, 0, "=====UNSATISFIABLE=====\n", "", False, "pass"),
        (UNSAT, 0, SOL, "", False, "reference-wrong"),  # a checked solution refutes it
        (MIN, 0, SOL + "==========\n" + stats(10), "", False, "pass"),
        (MIN, 0, SOL + "==========\n" + stats(12), "", False, "WRONG"),  # false optimum
        (MIN, 0, SOL + stats(9), "", False, "reference-wrong"),  # a checked solution beats it
        (MIN, 0, SOL + stats(12), "", False, "timeout"),  # not proven
        (FMIN, 0, SOL + "==========\n" + stats(7.21110001), "", False, "pass"),  # within 1e-6
        (FMIN, 0, SOL + "==========\n" + stats(7.2112), "", False, "WRONG"),
        (TRUNCATED, 0, SOL + "==========\n" + stats(144.4), "", False, "pass"),  # the manifest's integer part
        (TRUNCATED, 0, SOL + "==========\n" + stats(145.5), "", False, "WRONG"),
        (SAT, 0, "=====ERROR=====\n", "fzn-gpu: error: the solver produced a solution that violates c", False, "WRONG"),
        (SAT, 1, "", "fzn-gpu: m.fzn:3: error: variable f is a float variable\n  fix: ...", False, "unsupported"),
        (SAT, 1, "", "Traceback (most recent call last):\n  ...\nValueError: x", False, "error"),
        (SAT, 1, "", "fzn-gpu: error: the search kernels did not build", False, "error"),
    ],
)
def test_classify(entry, rc, out, err, count, outcome):
    assert classify(entry, rc, out, err, count)[0] == outcome


@pytest.mark.skipif(not have_minizinc() or not CORPUS.exists(), reason="needs minizinc and ../shared")
def test_small_run_writes_report(tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "regress.py"),
            str(CORPUS),
            "--out",
            str(tmp_path),
            "--only",
            "4",
            "--count",
            "--max-limit",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    results = json.loads((tmp_path / "regress.json").read_text())
    assert len(results) == 4 and all(x["outcome"] != "WRONG" for x in results)
    md = (tmp_path / "regress.md").read_text()
    assert "| pass |" in md and "## Per tag" in md
