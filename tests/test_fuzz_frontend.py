"""The front-end fuzzer (tools/fuzz_frontend.py): a short fixed-seed run of mutated FlatZinc ends
every input in acceptance or an error naming file and line, never a traceback or a hang; every
mutation operator is exercised; and the fuzzer itself catches a front end that raises. The long
run is documented in docs/TESTING.md."""

from __future__ import annotations

import random
import sys

from helpers import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import fuzz_frontend  # noqa: E402


def test_short_run_has_no_traceback_hang_or_unlocated_error(tmp_path):
    counts = fuzz_frontend.run(range(0, 1500), out=tmp_path)
    found = sorted(p.name for p in tmp_path.iterdir())
    assert counts["traceback"] == 0 and counts["hang"] == 0 and counts["unlocated"] == 0, found
    assert counts["error"] > 500 and counts["ok"] > 100  # the mutations reach both ends


def test_every_mutation_changes_some_model():
    text = fuzz_frontend.base_text(7, None)
    changed = set()
    for seed in range(400):
        rng = random.Random(seed)
        op = random.Random(seed).randrange(12)
        if fuzz_frontend.mutate(text, rng) != text:
            changed.add(op)
    assert changed == set(range(12))


def test_the_fuzzer_reports_a_traceback_and_a_hang(monkeypatch):
    def broken(text, name="m.fzn"):
        raise ValueError("a bug")

    monkeypatch.setattr(fuzz_frontend, "front_end", broken)
    assert fuzz_frontend.fuzz_one(1)[0] == "traceback"

    def endless(text, name="m.fzn"):
        while True:
            pass

    monkeypatch.setattr(fuzz_frontend, "front_end", endless)
    assert fuzz_frontend.fuzz_one(1, timeout_s=0.2)[0] == "hang"
