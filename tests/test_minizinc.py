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
    return subprocess.run(
        ["minizinc", "--solver", "gpu-fzn", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


def compile_and_check(model, data, cwd, extra=()):
    """Compile with our library, then solve the FlatZinc with every solution checked."""
    fzn = os.path.join(cwd, "model.fzn")
    c = subprocess.run(
        [
            "minizinc",
            "-c",
            "--solver",
            "gpu-fzn",
            model,
            *([data] if data else []),
            "--fzn",
            fzn,
            "--ozn",
            os.path.join(cwd, "model.ozn"),
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
    )
    assert c.returncode == 0, c.stderr
    r = subprocess.run(
        [sys.executable, "-m", "fzn_gpu", "--check", *extra, fzn], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert r.returncode == 0 and "ERROR" not in r.stdout, r.stderr
    return r.stdout


@pytest.mark.parametrize(
    "model, expect",
    [
        ("nqueens.mzn", "----------"),
        ("send_more_money.mzn", "9567 + 1085 = 10652"),
        ("knapsack_01.mzn", "value = 309"),
        ("unsat.mzn", "=====UNSATISFIABLE====="),
        ("two_circles.mzn", "distance = 6.0000"),
    ],
)
def test_bundled_models(model, expect, tmp_path):
    r = minizinc(str(ROOT / "models" / model))
    assert r.returncode == 0, r.stderr
    assert expect in r.stdout
    assert "Warning" not in r.stderr, r.stderr  # e.g. a model named after a global of MiniZinc
    compile_and_check(str(ROOT / "models" / model), None, str(tmp_path), ["-a"])


def test_nqueens_all_solutions():
    r = minizinc(str(ROOT / "models" / "nqueens.mzn"), "-a")
    assert r.stdout.count("----------") == 92 and "==========" in r.stdout


def ci_subset(count=24):
    """Small int/bool models of the corpus with a known solution count (every k-th by name)."""
    if not (CORPUS / "manifest.json").exists():
        return []
    entries = json.loads((CORPUS / "manifest.json").read_text())["entries"]
    pool = [
        e
        for e in entries
        if e["kind"] == "sat"
        and e.get("all_solutions") is not None
        and not {"set-vars", "float-vars"} & set(e.get("tags", []))
        and e["gecode_s"] < 0.5
        and e["fzn_lines"] < 400
        and e["all_solutions"] <= 2000
    ]
    pool.sort(key=lambda e: e["name"])
    step = max(1, len(pool) // count)
    return pool[::step][:count]


@pytest.mark.corpus
@pytest.mark.skipif(
    not (CORPUS / "manifest.json").exists(), reason="needs the hakank corpus in ../shared/corpus/hakank"
)
@pytest.mark.parametrize("entry", ci_subset() or [{"name": "none"}], ids=lambda e: e["name"])
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


GLOBAL_MODELS = {
    # index sets that do not start at 1 (circuit, inverse and bin_packing_load carry them)
    "offsets": """include "globals.mzn";
array[0..3] of var 0..3: x;
array[2..5] of var 0..3: y;
constraint circuit(x);
constraint inverse(array1d(0..3, [y[i] | i in 2..5]), x);
array[-1..1] of var 0..4: load;
array[1..3] of var -1..1: bin;
constraint bin_packing_load(load, bin, [1, 2, 1]);
constraint load[-1] >= 1;
solve satisfy;
""",
    "counting": """include "globals.mzn";
array[1..4] of var 0..2: x;
array[1..3] of var 0..4: c;
constraint global_cardinality_closed(x, [0, 1, 2], c);
constraint count(x, 1, 2);
constraint nvalue(2, x) \\/ lex_less(x, [1, 1, 2, 2]);
constraint alldifferent_except_0([x[1], x[2], x[3]]);
solve satisfy;
""",
    "sequences": """include "globals.mzn";
array[1..5] of var 1..2: w;
constraint regular(w, 3, 2, [| 1, 2 | 3, 2 | 1, 0 |], 1, {1, 2, 3});
array[1..3] of var 0..3: t;
constraint table(t, [| 0, 1, 2 | 1, 2, 3 | 3, 0, 0 | 1, 1, 1 |]);
constraint increasing(t) \\/ decreasing(t);
solve satisfy;
""",
    "scheduling": """include "globals.mzn";
array[1..3] of var 0..4: s;
constraint cumulative(s, [2, 2, 1], [1, 2, 2], 3);
array[1..2] of var 0..4: u;
constraint disjunctive(u, [2, 3]);
constraint bin_packing(3, [s[1] mod 2 + 1, u[1] mod 2 + 1], [2, 2]);
solve satisfy;
""",
}


@pytest.mark.skipif(shutil.which("fzn-gecode") is None, reason="needs Gecode (README set-up)")
@pytest.mark.parametrize("name", sorted(GLOBAL_MODELS))
def test_native_globals_count_as_gecode_with_the_standard_library(name, tmp_path):
    """The native globals through mznlib's declarations (offsets, wrappers, reified contexts)
    give exactly the solutions Gecode gives with MiniZinc's own decompositions, each checked."""
    model = tmp_path / f"{name}.mzn"
    model.write_text(GLOBAL_MODELS[name])
    ours = compile_and_check(str(model), None, str(tmp_path), extra=("-a",)).count("----------")
    ref = subprocess.run(
        ["minizinc", "--solver", "gecode", "-G", "std", "-a", str(model)], capture_output=True, text=True, timeout=120
    )
    assert ref.returncode == 0, ref.stderr
    assert ours == ref.stdout.count("----------") > 0


def test_a_count_through_minizinc_has_one_value_per_statistic():
    """`-a --count-only`: fzn-gpu's count is `solutions`; MiniZinc adds `nSolutions`, the
    solutions it printed (none). Before, fzn-gpu printed nSolutions=92 and MiniZinc
    nSolutions=0: two values under one name."""
    r = minizinc("-a", "--count-only", "-s", str(ROOT / "models" / "nqueens.mzn"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("%%%mzn-stat: solutions=92\n") == 1
    assert "nSolutions=92" not in r.stdout and "----------" not in r.stdout and "==========" in r.stdout
