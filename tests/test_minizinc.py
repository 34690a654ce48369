"""End to end through `minizinc --solver gpu-fzn` (the way users run fzn-gpu): the bundled
models, and a CI subset of hakank's corpus whose -a counts must equal the manifest's. Every
solution is also checked by the independent checker (`fzn-gpu --check` on the same FlatZinc)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from helpers import CORPUS, ROOT, have_minizinc

pytestmark = pytest.mark.skipif(not have_minizinc(), reason="needs minizinc with gpu-fzn registered (README set-up)")


def minizinc(*args, cwd=None, timeout=120):
    return subprocess.run(["minizinc", "--solver", "gpu-fzn", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def compile_and_check(model, data, cwd, extra=()):
    """Compile with our library, then solve the FlatZinc with every solution checked."""
    fzn = os.path.join(cwd, "model.fzn")
    c = subprocess.run(["minizinc", "-c", "--solver", "gpu-fzn", model, *([data] if data else []),
                        "--fzn", fzn, "--ozn", os.path.join(cwd, "model.ozn")], capture_output=True, text=True, cwd=cwd)
    assert c.returncode == 0, c.stderr
    r = subprocess.run([sys.executable, "-m", "fzn_gpu", "--check", *extra, fzn], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert r.returncode == 0 and "ERROR" not in r.stdout, r.stderr
    return r.stdout


@pytest.mark.parametrize("model, expect", [
    ("nqueens.mzn", "----------"),
    ("send_more_money.mzn", "9567 + 1085 = 10652"),
    ("knapsack.mzn", "value = 309"),
    ("unsat.mzn", "=====UNSATISFIABLE====="),
    ("two_circles.mzn", "distance = 6.0000"),
])
def test_bundled_models(model, expect, tmp_path):
    r = minizinc(str(ROOT / "models" / model))
    assert r.returncode == 0, r.stderr
    assert expect in r.stdout
    compile_and_check(str(ROOT / "models" / model), None, str(tmp_path), ["-a"])


def test_nqueens_all_solutions():
    r = minizinc(str(ROOT / "models" / "nqueens.mzn"), "-a")
    assert r.stdout.count("----------") == 92 and "==========" in r.stdout


def ci_subset(count=24):
    """Small int/bool models of the corpus with a known solution count (every k-th by name)."""
    if not (CORPUS / "manifest.json").exists():
        return []
    entries = json.loads((CORPUS / "manifest.json").read_text())["entries"]
    pool = [e for e in entries if e["kind"] == "sat" and e.get("all_solutions") is not None
            and not {"set-vars", "float-vars"} & set(e.get("tags", [])) and e["gecode_s"] < 0.5
            and e["fzn_lines"] < 400 and e["all_solutions"] <= 2000]
    pool.sort(key=lambda e: e["name"])
    step = max(1, len(pool) // count)
    return pool[::step][:count]


@pytest.mark.corpus
@pytest.mark.parametrize("entry", ci_subset(), ids=lambda e: e["name"])
def test_corpus_counts_match_manifest(entry):
    with tempfile.TemporaryDirectory() as work:
        for f in [entry["model"], entry.get("data")] + entry.get("includes", []):
            if f:
                shutil.copy(CORPUS / f, work)
        data = [entry["data"]] if entry.get("data") else []
        out = compile_and_check(entry["model"], entry.get("data"), work, ["-a", "-t", "60000"])
        assert "==========" in out
        r = minizinc(entry["model"], *data, "-a", cwd=work, timeout=180)
        assert r.returncode == 0, r.stderr
        assert r.stdout.count("----------") == entry["all_solutions"]
        assert "==========" in r.stdout
