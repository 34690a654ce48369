"""What wakes a propagator (registry.WAKE_*): value-consistent kinds wake when a watched
variable becomes fixed, bounds-reasoning kinds when a bound moves, the rest on any change. The
watch lists carry the event of each entry; the kernels must still reach every solution and
no other, under every execution model, on models where the kinds feed each other (a value
taken from inside a domain, a bound moved by a bitmap's last bit going, a variable fixed by a
removal)."""

from __future__ import annotations

import random

from fzn_gpu.engine.pack import pack
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.flatzinc.registry import BY_KEY, WAKE_BND, WAKE_DOM, WAKE_FIX
from fzn_gpu.options import SolveOptions

from helpers import as_tuples, brute_force, solve_text, stable_rng


def _events(text: str) -> dict[str, set[int]]:
    """Kind key -> the events its watch entries carry."""
    dm = pack(lower(parse_items(text, "t.fzn"), "t.fzn"), SolveOptions())
    by_id = {k.id: k.key for k in BY_KEY.values()}
    out: dict[str, set[int]] = {}
    for entry in dm.wlist[: dm.wptr[-1]]:
        out.setdefault(by_id[int(dm.ckind[entry >> 2])], set()).add(int(entry & 3))
    return out


def test_each_watch_entry_carries_its_kinds_event():
    text = (
        "var 0..9: x;\nvar 0..9: y;\nvar 0..9: z;\nvar 0..9: w;\n"
        "constraint int_ne(x, y);\n"
        "constraint int_lin_le([1, 2], [x, z], 12);\n"
        "constraint int_lin_eq([1, 1, -1], [x, y, z], 0);\n"
        "constraint int_times(x, y, w);\n"
        "constraint fzn_all_different_int([x, y, z]);\n"
        "solve satisfy;\n"
    )
    events = _events(text)
    assert events["int_ne"] == {WAKE_FIX} and events["fzn_all_different_int"] == {WAKE_FIX}
    assert events["int_lin_le"] == {WAKE_BND} and events["int_lin_eq"] == {WAKE_BND}
    assert events["int_times"] == {WAKE_DOM}


def test_a_shifted_equality_on_bitmaps_wakes_on_any_change():
    """x - y = 3 on two bitmaps is domain consistent (post_lin shifts words): a value taken from
    inside x's domain must reach y."""
    shifted = "var 0..9: x;\nvar 0..9: y;\nconstraint int_lin_eq([1, -1], [x, y], 3);\nsolve satisfy;\n"
    assert _events(shifted)["int_lin_eq"] == {WAKE_DOM}
    scaled = "var 0..9: x;\nvar 0..9: y;\nconstraint int_lin_eq([2, -1], [x, y], 3);\nsolve satisfy;\n"
    assert _events(scaled)["int_lin_eq"] == {WAKE_BND}


RELS = [
    lambda a, b, c, r: f"int_ne({a}, {b})",
    lambda a, b, c, r: f"int_lin_ne([1, 2], [{a}, {b}], {r.randint(0, 6)})",
    lambda a, b, c, r: f"fzn_all_different_int([{a}, {b}, {c}])",
    lambda a, b, c, r: f"int_lin_le([1, -1], [{a}, {b}], {r.randint(-2, 1)})",
    lambda a, b, c, r: f"int_lin_eq([1, 1, -1], [{a}, {b}, {c}], {r.randint(-1, 2)})",
    lambda a, b, c, r: f"int_lin_eq([1, -1], [{a}, {b}], {r.randint(-1, 1)})",
    lambda a, b, c, r: f"int_lt({a}, {b})",
    lambda a, b, c, r: f"int_le_reif({a}, {b}, p)",
    lambda a, b, c, r: f"int_times({a}, {b}, {c})",
    lambda a, b, c, r: f"int_lin_le_reif([1, 1], [{a}, {b}], {r.randint(1, 4)}, p)",
]


def _mixed(rng: random.Random) -> tuple[str, dict[str, list[int]]]:
    names = [f"x{i}" for i in range(5)]
    domains = {}
    for n in names:
        lo = rng.randint(-1, 1)
        values = list(range(lo, lo + rng.randint(3, 5)))
        if rng.random() < 0.5:
            values.remove(rng.choice(values[1:-1]))  # a hole
        domains[n] = values
    domains["p"] = [0, 1]
    decls = "\n".join(f"var {{{','.join(map(str, v))}}}: {n};" for n, v in domains.items())
    cons = [rng.choice(RELS)(*rng.sample(names, 3), rng) for _ in range(rng.randint(3, 5))]
    text = decls + "\n" + "".join(f"constraint {c};\n" for c in cons) + "solve satisfy;\n"
    return text, domains


def test_kinds_feeding_each_other_give_exactly_the_solutions(kernel):
    """Random models mixing fix-, bound- and domain-woken kinds, every solution against brute
    force (each also checked by the independent checker in solve_text)."""
    rng = stable_rng("wake events", kernel)
    for _ in range(10):
        text, domains = _mixed(rng)
        expected = brute_force(text, domains)
        found, outcome = solve_text(text, all_solutions=True)
        got = as_tuples(found, list(domains))
        assert outcome.complete, text
        assert len(found) == len(got), f"a solution was reported twice\n{text}"
        assert got == expected, f"missing {sorted(expected - got)[:5]} extra {sorted(got - expected)[:5]}\n{text}"
