"""The checker's meaning of the globals fzn-gpu runs natively (mznlib/fzn_*.mzn, besides
all_different), written from MiniZinc 2.6's definitions of them and nothing of the engine's:
a full assignment in, whether the constraint holds out (fzn_gpu.flatzinc.check merges them)."""

from __future__ import annotations

from collections.abc import Callable


def table(xs: list, t: list) -> bool:
    """x is one of the rows of t (flattened row-major, len(x) columns)."""
    n = len(xs)
    if n == 0:
        return True
    want = [int(v) for v in xs]
    return any([int(v) for v in t[j : j + n]] == want for j in range(0, len(t), n))


def circuit(offset: int, xs: list) -> bool:
    """x[i] = j + offset: node j follows node i, and following successors from node 0 visits
    every node once before coming back (one node: its self-loop)."""
    n = len(xs)
    if n == 0:
        return True
    if any(not offset <= v < offset + n for v in xs):
        return False
    seen, node = set(), 0
    for _ in range(n):
        if node in seen:
            return False
        seen.add(node)
        node = xs[node] - offset
    return node == 0 and len(seen) == n


def subcircuit(offset: int, xs: list) -> bool:
    """x[i] = j + offset: node j follows node i; x[i] = i + offset: node i is out. The nodes in
    form one cycle (none in: every node out), so every successor is a node that is in, each
    taken once, and following them from one node in visits every node in."""
    n = len(xs)
    if any(not offset <= v < offset + n for v in xs):
        return False
    succ = [v - offset for v in xs]
    inside = [i for i in range(n) if succ[i] != i]
    if not inside:
        return True
    if len({succ[i] for i in inside}) != len(inside) or any(succ[succ[i]] == succ[i] for i in inside):
        return False
    seen, node = set(), inside[0]
    while node not in seen:
        seen.add(node)
        node = succ[node]
    return node == inside[0] and len(seen) == len(inside)


def diffn(xs: list, ys: list, dxs: list, dys: list) -> bool:
    """No two rectangles overlap: of every pair, one lies left of, right of, below or above
    the other (MiniZinc's definition, zero-sized rectangles included)."""
    boxes = list(zip(xs, ys, dxs, dys))
    return all(
        xi + wi <= xj or yi + hi <= yj or xj + wj <= xi or yj + hj <= yi
        for k, (xi, yi, wi, hi) in enumerate(boxes)
        for (xj, yj, wj, hj) in boxes[k + 1 :]
    )


def inverse(f: list, f_first: int, g: list, g_first: int) -> bool:
    """f[i] = j <-> g[j] = i, indices counted from each array's first index."""

    def ok(a, a_first, b, b_first):
        for i, v in enumerate(a):
            j = v - b_first
            if not 0 <= j < len(b) or b[j] != i + a_first:
                return False
        return True

    return ok(f, f_first, g, g_first) and ok(g, g_first, f, f_first)


def regular(xs: list, q: int, s: int, d: list, q0: int, final) -> bool:
    """The DFA (states 1..q, symbols 1..s, d row-major, 0: no transition) accepts x."""
    state = q0
    for v in xs:
        if not (1 <= v <= s and 1 <= state <= q):
            return False
        state = d[(state - 1) * s + (v - 1)]
    return 1 <= state <= q and state in final


def _count(xs: list, v: int) -> int:
    return sum(1 for x in xs if x == v)


def gcc(xs: list, cover: list, counts: list) -> bool:
    """counts[i] = how many x take cover[i]; MiniZinc's implied sum(counts) <= length(x)."""
    return all(_count(xs, v) == c for v, c in zip(cover, counts)) and sum(counts) <= len(xs)


def gcc_closed(xs: list, cover: list, counts: list) -> bool:
    return all(x in cover for x in xs) and gcc(xs, cover, counts)


def gcc_low_up(xs: list, cover: list, low: list, up: list) -> bool:
    return all(lo <= _count(xs, v) <= hi for v, lo, hi in zip(cover, low, up))


def gcc_low_up_closed(xs: list, cover: list, low: list, up: list) -> bool:
    return all(x in cover for x in xs) and gcc_low_up(xs, cover, low, up) and sum(low) <= len(xs) <= sum(up)


def alldifferent_except(xs: list, exempt) -> bool:
    """Two variables share a value only if it is in `exempt`."""
    taken = [x for x in xs if x not in exempt]
    return len(set(taken)) == len(taken)


def cumulative(s: list, d: list, r: list, b: int) -> bool:
    """At every time the tasks running (d, r > 0) use at most b, and b >= 0 when there are tasks."""
    if not s:
        return True
    if b < 0:
        return False
    tasks = [(a, a + du, ru) for a, du, ru in zip(s, d, r) if du > 0 and ru > 0]
    return all(sum(ru for a, e, ru in tasks if a <= t < e) <= b for t, _, _ in tasks)


def count_eq(xs: list, y: int, c: int) -> bool:
    return _count(xs, y) == c


def among(n: int, xs: list, values) -> bool:
    """n of the x take a value of the set."""
    return n == sum(1 for x in xs if x in values)


def lex(strict: bool) -> Callable[[list, list], bool]:
    """x before y in lexicographic order (a proper prefix comes first); strictly, or not."""

    def holds(xs: list, ys: list) -> bool:
        a, b = [int(v) for v in xs], [int(v) for v in ys]
        return a < b if strict else a <= b

    return holds


def nvalue(n: int, xs: list) -> bool:
    return n == len(set(xs))


def monotone(decreasing: bool) -> Callable[[list], bool]:
    def holds(xs: list) -> bool:
        pairs = zip(xs, xs[1:])
        return all(a >= b for a, b in pairs) if decreasing else all(a <= b for a, b in pairs)

    return holds


def bin_packing_load(load: list, first: int, bins: list, w: list) -> bool:
    """Item i goes into bin bins[i], one of first..first + len(load) - 1, and load[b - first]
    is the weight in bin b."""
    if any(not first <= b < first + len(load) for b in bins):
        return False
    return all(load[k] == sum(wi for b, wi in zip(bins, w) if b == first + k) for k in range(len(load)))


GLOBALS: dict[str, Callable[..., bool]] = {
    "fzn_table_int": table,
    "fzn_table_bool": table,
    "fzn_gpu_circuit": circuit,
    "fzn_gpu_subcircuit": subcircuit,
    "fzn_diffn": diffn,
    "fzn_gpu_inverse": inverse,
    "fzn_gpu_regular": regular,
    "fzn_global_cardinality": gcc,
    "fzn_global_cardinality_closed": gcc_closed,
    "fzn_global_cardinality_low_up": gcc_low_up,
    "fzn_global_cardinality_low_up_closed": gcc_low_up_closed,
    "fzn_alldifferent_except": alldifferent_except,
    "fzn_cumulative": cumulative,
    "fzn_count_eq": count_eq,
    "fzn_among": among,
    "fzn_lex_lesseq_int": lex(False),
    "fzn_lex_lesseq_bool": lex(False),
    "fzn_lex_less_int": lex(True),
    "fzn_lex_less_bool": lex(True),
    "fzn_nvalue": nvalue,
    "fzn_increasing_int": monotone(False),
    "fzn_increasing_bool": monotone(False),
    "fzn_decreasing_int": monotone(True),
    "fzn_decreasing_bool": monotone(True),
    "fzn_gpu_bin_packing_load": bin_packing_load,
}
