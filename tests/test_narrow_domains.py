"""Narrow domains (kernels/domain.cl, FZN_NARROW): a work-group search whose every variable spans
at most 32 values holds its node as one 32-bit word per variable. Which models are narrow, and
the edges of a word (a span of exactly 32 values, bits 0 and 31, negative values, holes)
against brute force, the work-group kernel narrow and general."""

from __future__ import annotations

import numpy as np
import pytest

from fzn_gpu.engine.pack import NARROW_SPAN, pack
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions

from helpers import as_tuples, brute_force, solve_stats, stable_rng


def _device_model(text: str):
    return pack(lower(parse_items(text, "test.fzn"), "test.fzn"), SolveOptions())


QUEENS_4 = """array[1..4] of var 1..4: q :: output_array([1..4]);
var 0..1: b :: output_var;
constraint fzn_all_different_int(q);
constraint int_le(q[1], q[2]);
constraint int_lin_le([1, 1], [q[1], b], 4);
solve satisfy;
"""


def test_a_model_of_small_spans_is_narrow_every_variable_a_word_of_its_own():
    dm = _device_model(QUEENS_4)
    assert dm.narrow
    assert (dm.bm_off == np.arange(dm.nv)).all() and (dm.bm_nw == 1).all() and dm.nwords == dm.nv
    # the boolean, below the span at which a bitmap pays elsewhere, has one too
    assert int(dm.bits[dm.nv - 1]) == 0b11


@pytest.mark.parametrize(
    "decl",
    [f"var 0..{NARROW_SPAN}: w :: output_var;", "var -1.0..1.0: f :: output_var;"],
    ids=["a span of 33 values", "a float"],
)
def test_a_wider_span_or_a_float_keeps_the_general_representation(decl):
    assert not _device_model(decl + "\n" + QUEENS_4).narrow


def test_fzn_gpu_narrow_0_keeps_the_general_representation(monkeypatch):
    monkeypatch.setenv("FZN_GPU_NARROW", "0")
    dm = _device_model(QUEENS_4)
    assert not dm.narrow and dm.bm_off[-1] == -1  # the boolean: bounds alone


def _word_domain(rng) -> list[int]:
    """A domain at the edges of a word: 32 values (bits 0 and 31 both in use) or fewer, often
    negative, with holes that may take either end."""
    lo = rng.randint(-45, 20)
    values = list(range(lo, lo + rng.choice([NARROW_SPAN, NARROW_SPAN, 31, 9])))
    for _ in range(rng.randint(0, 6)):
        if len(values) > 2:
            values.remove(rng.choice(values))
    return values


CONSTRAINTS = [
    "int_lin_le([2, -3, 1], [x, y, z], {c});",
    "int_lin_eq([1, -1, 1], [x, y, z], {c});",
    "int_lin_ne([1, 1], [x, z], {c});",
    "int_ne(x, y);",
    "int_le(y, z);",
    "int_lt(z, x);",
    "fzn_all_different_int([x, y, z]);",
    "int_abs(x, y);",
    "int_plus(x, y, z);",
    "int_max(x, y, z);",
    "int_eq_reif(x, {c}, b);",
    "int_lin_le_reif([1, -1], [y, z], {c}, b);",
]


def _instance(rng) -> tuple[str, dict[str, list[int]]]:
    domains = {n: _word_domain(rng) for n in "xyz"}
    domains["b"] = [0, 1]
    decls = "\n".join(
        f"var {{{','.join(map(str, values))}}}: {name} :: output_var;" for name, values in domains.items()
    )
    posted = rng.sample(CONSTRAINTS, 2) + ["bool_le(b, b);"]
    body = "\n".join("constraint " + c.format(c=rng.randint(-30, 30)) for c in posted)
    return f"{decls}\n{body}\nsolve satisfy;\n", domains


@pytest.mark.parametrize("seed", range(10))
def test_word_edges_match_brute_force_at_the_general_strength(seed, monkeypatch):
    """Every solution and nothing else, each checked (solve_text), narrow and general; and the
    same failed nodes both ways: the same fixpoints (the propagators' strength unchanged), so a
    narrow mutator that kept a value it should remove shows too."""
    monkeypatch.setenv("FZN_GPU_KERNEL", "group")
    rng = stable_rng("narrow", seed)
    for _ in range(3):
        text, domains = _instance(rng)
        expected = brute_force(text, domains)
        fails = {}
        for narrow in ("1", "0"):
            monkeypatch.setenv("FZN_GPU_NARROW", narrow)
            assert _device_model(text).narrow == (narrow == "1")
            found, outcome, fails[narrow] = solve_stats(text, all_solutions=True)
            got = as_tuples(found, list(domains))
            assert outcome.complete, text
            assert len(found) == len(got), f"a solution was reported twice\n{text}"
            assert got == expected, f"missing {sorted(expected - got)[:5]} extra {sorted(got - expected)[:5]}\n{text}"
        assert fails["1"] == fails["0"], text
