"""The differential fuzzer (tools/fuzz.py): a short fixed-seed run against Gecode must end with no
disagreement, every kind of the registry must be generated and understood by both references,
and the references themselves are checked against brute force. The long run is documented in
docs/TESTING.md."""

from __future__ import annotations

import shutil
import sys
from collections import Counter

import pytest

from fzn_gpu.flatzinc.registry import GLOBALS, KINDS

from helpers import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import fuzz  # noqa: E402
import fuzz_cpsat  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("fzn-gecode") is None, reason="needs Gecode's fzn-gecode (README set-up)")

INT_KINDS = [k for k in KINDS if k.domain == "int" and k.key not in GLOBALS]
SEEDS = range(0, 240)


def test_every_int_kind_has_argument_types():
    """A new constraint kind must be taught to the fuzzer (and its CP-SAT reference) first."""
    for k in INT_KINDS:
        assert len(fuzz.arg_types(k.key)) == len(k.signature), k.key


def test_the_seeds_cover_every_kind():
    seen = Counter(key for s in range(600) for key, _ in fuzz.make_case(s).constraints)
    assert {k.key for k in INT_KINDS} <= set(seen), sorted({k.key for k in INT_KINDS} - set(seen))


@pytest.mark.parametrize("seed", range(40))
def test_cpsat_reference_matches_brute_force(seed):
    """The arbiter must be right where it is asked: on small models it agrees with enumerating
    every assignment through the independent checker."""
    for s in range(seed * 50, seed * 50 + 50):
        case = fuzz.make_case(s)
        exact = fuzz.brute_force(case)
        if exact is None:
            continue
        ref = fuzz_cpsat.solve(case)
        if ref is None:
            continue
        verdict, detail = fuzz.judge(case, exact, ref)
        assert verdict == "agree", f"seed {s}: {detail}\n{case.text}"
        return
    pytest.skip("no small model among these seeds")


def test_short_fuzz_run_has_no_disagreement():
    """fzn-gpu (in this process) against Gecode on fixed seeds: statuses, solution sets, optima."""
    counts: Counter = Counter()
    failures = []
    for seed in SEEDS:
        _, verdict, detail, case, mine, ref = fuzz.fuzz_one(seed, time_limit_s=2.0)
        counts[verdict] += 1
        if verdict == "DISAGREE":
            failures.append(f"seed {seed}: {detail}\n{case.text}")
    assert not failures, "\n".join(failures[:3])
    assert counts["agree"] >= 0.9 * len(SEEDS), counts


def test_a_seeds_kernel_settings_end_with_its_run(monkeypatch):
    """The fuzzer runs in-process: a seed's execution model (a work-group with a one-level
    stack on every fourth seed) must not reach the next seed or a later test."""
    monkeypatch.setenv("FZN_GPU_STACK_LEVELS", "7")
    monkeypatch.delenv("FZN_GPU_KERNEL", raising=False)
    monkeypatch.delenv("FZN_GPU_SLICE_CLOCK", raising=False)
    with fuzz.kernel_env(3):
        assert fuzz.kernel_of(3) == "group-recompute"
        assert (fuzz.os.environ["FZN_GPU_KERNEL"], fuzz.os.environ["FZN_GPU_STACK_LEVELS"]) == ("group", "1")
    assert "FZN_GPU_KERNEL" not in fuzz.os.environ and fuzz.os.environ["FZN_GPU_STACK_LEVELS"] == "7"
    with fuzz.kernel_env(2):
        assert fuzz.os.environ["FZN_GPU_KERNEL"] == "item" and "FZN_GPU_STACK_LEVELS" not in fuzz.os.environ
    assert fuzz.os.environ["FZN_GPU_STACK_LEVELS"] == "7"
    with fuzz.kernel_env(1):
        assert fuzz.kernel_of(1) == "group-clock" and fuzz.os.environ["FZN_GPU_SLICE_CLOCK"] == "1"
    assert "FZN_GPU_SLICE_CLOCK" not in fuzz.os.environ


@pytest.mark.skipif(shutil.which("minizinc") is None, reason="needs minizinc (README set-up)")
def test_native_globals_agree_with_gecode_through_minizinc(tmp_path):
    """tools/fuzz_globals.py on fixed seeds: each random model over a native global gives
    the solution count Gecode gives with MiniZinc's own decompositions."""
    import fuzz_globals

    assert set(fuzz_globals.KINDS) == {fuzz_globals.model(s)[0] for s in range(200)}
    for seed in range(12):
        kind, ours, ref = fuzz_globals.run(seed, tmp_path)
        assert ours is not None and ours == ref, f"seed {seed} ({kind}): fzn-gpu {ours}, Gecode {ref}"
