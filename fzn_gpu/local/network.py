"""The model as Adaptive Search walks it (kernels/adaptive.cl, the GPU adaptive search paper):
decision variables in groups, invariants, and soft constraints with error functions, all in
one int32 buffer whose header (local_abi.H) says where each array lies.

- Invariants: a constraint that defines a variable (MiniZinc's defines_var) and has a
  functional form here (a linear equation with the variable's coefficient +-1, arithmetic,
  element, extremum, reification, clause, parity, set membership, count) computes that
  variable from the others, in topological order; the walk never moves it. Its declared
  domain becomes a DOMAIN soft constraint where the function's values can leave it
  (`_domains_kept_by_construction`).
- Groups (local_abi.Group): an all_different over decision variables sharing a domain of
  exactly as many values is a permutation (moves swap values, so it always holds); a chain
  x_1 < x_2 < ... (or <=) over decision variables is a sorted group (moves replace a value and
  sort again, so the chain always holds); every other decision variable is free.
- Soft constraints: everything else, each with an error that is 0 where it holds and grows
  with how far it is from holding where the kind has a natural measure (a linear relation's
  distance, an all_different's repeated values, a function's distance), else 0 or 1.
- For each decision variable, the invariants a change of it wakes (transitively, in
  topological order) and the soft constraints whose errors it carries (its projected error,
  which selects the variable to move); and, where every constraint it reaches is scored from
  a sum or a value (LIN, all_different, DOMAIN) and every invariant it wakes is a function of
  it alone (a square, a constant array's element), its swap terms, from which a swap's score
  is computed without the general evaluation (_swap_terms).

A model whose constraints are not all of these forms, or with float or set variables, is
not one for local search (NotLocal says why); nothing here is approximate."""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from functools import cache
from itertools import chain
from typing import cast

import numpy as np

from ..bucket import evaluate
from ..bucket.evaluate import IntSetArg
from ..flatzinc.arrays import unique
from ..flatzinc.model import INT_LIMIT, Model, Variables, VarKind
from ..runtime.local_abi import SWAP_ALLDIFF, SWAP_DOMAIN, SWAP_TERMS_MAX, Arith, Group, H, Inv, Rel, Soft, SwapTerm

SUM_LIMIT = 2**62  # a linear sum's magnitude, at most, in the kernel's 64 bits
SPAN_LIMIT = 1 << 20  # an all_different's value span, a sorted group's interval
CHANGE_CAP = 1024  # KMAX, TMAX, DMAX at most (a move needing more is not taken)
CAND_MAX = 1024  # candidate values of a free variable's move (a sample beyond)


class NotLocal(Exception):
    """Why the model is not one for local search."""


@dataclass
class _Soft:
    type: Soft
    row: list[int]
    reads: list[int]  # variables, in any order
    coefs: dict[int, int] = field(default_factory=dict)  # LIN: a variable's coefficient


@dataclass
class _Inv:
    type: Inv
    out: int
    row: list[int]
    reads: list[int]
    line: int = 0


@dataclass
class LsNetwork:
    buffer: np.ndarray  # int32: header then arrays (local_abi.H)
    nv: int
    ndec: int
    hist: int  # all_different histogram entries of a walk
    kmax: int
    tmax: int
    dmax: int
    groups: dict[str, int]  # how many groups of each kind (statistics)
    n_inv: int
    n_soft: int
    max_candidates: int  # the most moves one variable has (a neighbourhood's size)
    # every decision variable is in a permutation and carries swap terms: every move is a swap
    # scored from them, the general evaluation running only for the move taken
    swaps_only: bool = False
    # at least half of the decision variables carry the same constraints shared with others
    # (number partitioning's first half), so their projected errors are always equal and the
    # walks mostly search the whole neighbourhood by sample (kernels/adaptive.cl) rather than
    # one variable's moves: `_shares_error`
    shared_error: bool = False
    # every decision variable is in a permutation and every error is a distance from a linear
    # relation (LIN, DOMAIN): a swap that keeps the error moves values between sums without
    # undoing any (a magic square's within its balanced rows), and the walks follow such
    # plateaus more often (engine/adaptive.py, walk_params)
    linear_permutation: bool = False
    # every swap term is a LIN or an all_different one on the decision variable itself, and no
    # sum, error or change of them that a swap's score computes leaves 31 bits, so the kernel
    # scores swaps in 32-bit arithmetic, whose 64-bit form takes several instructions an
    # operation on a GPU (`_sums_fit_32`; kernels/adaptive.cl, LS_SUMS_32)
    sums_32: bool = False

    def describe(self) -> str:
        g = ", ".join(f"{n} {k}" for k, n in self.groups.items() if n)
        return (
            f"{self.ndec} decision variables ({g or 'free'}), {self.n_inv} invariants, {self.n_soft} soft constraints"
        )


# ---- linear forms of the kinds that are linear relations
_BINARY_REL = {
    "int_eq": (Rel.EQ, 0),
    "int_ne": (Rel.NE, 0),
    "int_le": (Rel.LE, 0),
    "int_lt": (Rel.LE, -1),
    "bool_eq": (Rel.EQ, 0),
    "bool_le": (Rel.LE, 0),
    "bool_lt": (Rel.LE, -1),
    "bool_ne": (Rel.NE, 0),
}


def _terms(cs, xs) -> dict[int, int]:
    out: dict[int, int] = {}
    for c, x in zip(cs, xs):
        if c:
            out[x] = out.get(x, 0) + int(c)
    return {x: c for x, c in out.items() if c}


def _linear(key: str, args: list) -> tuple[Rel, dict[int, int], int] | None:
    """A linear kind (a reified one's name without its suffix) as (rel, {var: coef}, rhs):
    sum coef * var rel rhs."""
    base = key
    if base in _BINARY_REL:
        rel, rhs = _BINARY_REL[base]
        a, b = args[0].index, args[1].index
        return rel, _terms((1, -1), (a, b)), rhs
    if base in ("int_lin_eq", "int_lin_le", "int_lin_ne"):
        rel = {"int_lin_eq": Rel.EQ, "int_lin_le": Rel.LE, "int_lin_ne": Rel.NE}[base]
        return rel, _terms(args[0], args[1].indices), int(args[2])
    if key == "bool_lin_eq":
        return Rel.EQ, _terms(tuple(args[0]) + (-1,), args[1].indices + (args[2].index,)), 0
    if key == "bool_lin_le":
        return Rel.LE, _terms(args[0], args[1].indices), int(args[2])
    if key == "bool_not":
        return Rel.EQ, _terms((1, 1), (args[0].index, args[1].index)), 1
    if key in ("bool_xor_2",):
        return Rel.NE, _terms((1, -1), (args[0].index, args[1].index)), 0
    if key == "bool2int":
        return Rel.EQ, _terms((1, -1), (args[0].index, args[1].index)), 0
    if key == "int_plus":
        return Rel.EQ, _terms((1, 1, -1), (args[0].index, args[1].index, args[2].index)), 0
    return None


def wide(value: int) -> list[int]:
    """A constant of up to 63 bits as two int32 words, low then high (local_abi.Soft's LIN)."""
    low = value & 0xFFFFFFFF
    return [low - (1 << 32) if low >= 1 << 31 else low, value >> 32]


def unwide(low: int, high: int) -> int:
    """The constant `wide` wrote as two int32 words."""
    return (high << 32) | (low & 0xFFFFFFFF)


def sum_bound(terms: dict[int, int], rhs: int, lo: np.ndarray, hi: np.ndarray) -> int:
    """|rhs| plus each term's |coefficient| times its variable's largest size within lo..hi:
    a bound of any linear sum's distance from rhs. In int64 where a float estimate shows that
    nothing comes near its limit (a magic square's 400 sums of 200 terms), else in Python's
    integers."""
    if len(terms) < 32:  # numpy's calls cost more than they save
        return abs(rhs) + sum(abs(c) * max(abs(int(lo[x])), abs(int(hi[x]))) for x, c in terms.items())
    xs = np.fromiter(terms.keys(), dtype=np.int64, count=len(terms))
    cs = np.fromiter(terms.values(), dtype=object, count=len(terms))
    size = np.maximum(np.abs(lo[xs]), np.abs(hi[xs]))
    mags = np.abs(cs.astype(np.float64))
    if mags.max() < 2.0**62 and float(mags @ size.astype(np.float64)) < 2.0**60:
        return abs(rhs) + int(np.abs(cs.astype(np.int64)) @ size)
    return abs(rhs) + sum(abs(c) * int(m) for c, m in zip(terms.values(), size.tolist()))


def _lin_row(rel: Rel, terms: dict[int, int], rhs: int) -> list[int]:
    xs = list(terms)
    return [int(rel), len(xs)] + [terms[x] for x in xs] + xs + wide(rhs)


def _clause_row(flip: int, pos, neg) -> list[int]:
    return [flip, len(pos), *pos, len(neg), *neg]


def _ranges_row(s: IntSetArg) -> list[int]:
    return [len(s.ranges)] + [int(b) for r in s.ranges for b in r]


_ARITH = {
    "int_times": Arith.TIMES,
    "int_div": Arith.DIV,
    "int_mod": Arith.MOD,
    "int_min": Arith.MIN,
    "int_max": Arith.MAX,
    "int_pow": Arith.POW,
}


def _relation(base: str, args: list) -> tuple[Inv, list[int]] | None:
    """A relation whose truth a literal may carry (`base` without _reif or _imp, `args`
    without the literal): its invariant form and row, computing 1 where it holds."""
    lin = _linear(base, args)
    if lin is not None:
        return Inv.LINREIF, _lin_row(*lin)
    if base in ("bool_and", "array_bool_and"):  # no operand 0
        return Inv.CLAUSE, _clause_row(
            1, [], [args[0].index, args[1].index] if base == "bool_and" else list(args[0].indices)
        )
    if base in ("bool_or", "array_bool_or"):
        return Inv.CLAUSE, _clause_row(
            0, [args[0].index, args[1].index] if base == "bool_or" else list(args[0].indices), []
        )
    if base == "bool_clause":
        return Inv.CLAUSE, _clause_row(0, list(args[0].indices), list(args[1].indices))
    if base == "bool_xor":
        return Inv.XOR, [2, args[0].index, args[1].index]
    if base == "set_in":
        return Inv.SETIN, [args[0].index, *_ranges_row(args[1])]
    return None


# kinds whose last argument is the literal of a relation though their name says no _reif
LITERAL_LAST = ("bool_and", "bool_or", "bool_xor", "array_bool_and", "array_bool_or")


def _function(key: str, args: list) -> tuple[Inv, int, list[int]] | None:
    """The kind's functional form: (invariant type, the variable it computes, its row), or
    None. (Linear equations are handled apart: any +-1 variable of theirs may be defined.)"""
    if key in _ARITH:
        return Inv.ARITH, args[2].index, [int(_ARITH[key]), args[0].index, args[1].index]
    if key == "int_abs":
        return Inv.ARITH, args[1].index, [int(Arith.ABS), args[0].index, args[0].index]
    if key in ("array_int_element", "array_bool_element"):
        idx, arr, y = args
        return Inv.ELEM, y.index, [idx.index, len(arr), *[int(v) for v in arr]]
    if key in ("array_var_int_element", "array_var_bool_element"):
        idx, xs, y = args
        return Inv.VELEM, y.index, [idx.index, len(xs.indices), *xs.indices]
    if key in ("array_int_maximum", "array_int_minimum"):
        m, xs = args
        return Inv.EXTREMUM, m.index, [int(key.endswith("maximum")), len(xs.indices), *xs.indices]
    if key == "fzn_count_eq":
        xs, y, c = args
        return Inv.COUNT, c.index, [len(xs.indices), *xs.indices, y.index, 0]
    if key.endswith("_reif") or key in LITERAL_LAST:
        rel = _relation(key.removesuffix("_reif"), args[:-1])
        if rel is not None:
            return rel[0], args[-1].index, rel[1]
    return None


def _implication(key: str, args: list) -> tuple[int, Inv, list[int]] | None:
    """An _imp kind as (r, the invariant type of its relation, the relation's row): r = 1
    needs the relation."""
    rel = _relation(key[:-4], args[:-1]) if key.endswith("_imp") else None
    return None if rel is None else (args[-1].index, rel[0], rel[1])


def _read_slots(inv_type: Inv, row: list[int]) -> list[int]:
    """The positions in an invariant row that name the variables it reads."""
    if inv_type == Inv.LIN:
        n = row[0]
        return list(range(1 + n, 1 + 2 * n))
    if inv_type == Inv.LINREIF:
        n = row[1]
        return list(range(2 + n, 2 + 2 * n))
    if inv_type == Inv.ARITH:
        return [1, 2]
    if inv_type in (Inv.ELEM, Inv.SETIN):
        return [0]
    if inv_type == Inv.VELEM:
        return [0, *range(2, 2 + row[1])]
    if inv_type == Inv.EXTREMUM:
        return list(range(2, 2 + row[1]))
    if inv_type == Inv.CLAUSE:
        npos = row[1]
        return [*range(2, 2 + npos), *range(3 + npos, 3 + npos + row[2 + npos])]
    if inv_type == Inv.XOR:
        return list(range(1, 1 + row[0]))
    if inv_type == Inv.COUNT:
        n = row[0]
        return [*range(1, 1 + n), *([1 + n] if row[1 + n] >= 0 else [])]
    raise AssertionError(inv_type)


def _row_reads(inv_type: Inv, row: list[int]) -> list[int]:
    """The variables an invariant row reads."""
    return [row[p] for p in _read_slots(inv_type, row)]


class _Builder:
    def __init__(self, model: Model):
        self.model = model
        V = model.vars
        self.nv = len(V)
        if self.nv and (V.kind >= VarKind.FLOAT).any():
            raise NotLocal("it has float or set variables (local search moves int and bool variables)")
        self.lo = V.lb.astype(np.int64)  # a bool's 0..1, or its fixed value (true: 1..1)
        self.hi = V.ub.astype(np.int64)
        self.softs: list[_Soft] = []
        self.invs: list[_Inv] = []
        self.alldiffs: list[tuple[list[int], int]] = []  # (variables, index in softs or -1)
        self.chains: list[tuple[int, int, bool, int]] = []  # (a, b, strict, soft index): a < b
        self.defined = np.full(self.nv, -1, dtype=np.int64)  # the invariant computing each variable

    # -- constraints
    def constraints(self) -> None:
        for key, table in self.model.tables.items():
            kind = table.kind
            for r in range(len(table)):
                args = evaluate.decode(kind, table.row(r))
                self.one(key, kind.name, args, int(table.defines[r]), int(table.lines[r]))

    def soft(self, type_: Soft, row: list[int], reads: list[int], coefs: dict[int, int] | None = None) -> int:
        self.softs.append(_Soft(type_, row, list(reads), coefs or {}))
        return len(self.softs) - 1

    def soft_lin(self, rel: Rel, terms: dict[int, int], rhs: int) -> int:
        self._check_sum(terms, rhs)
        return self.soft(Soft.LIN, _lin_row(rel, terms, rhs), list(terms), terms)

    def _check_sum(self, terms: dict[int, int], rhs: int) -> None:
        if sum_bound(terms, rhs, self.lo, self.hi) >= SUM_LIMIT:
            raise NotLocal("a linear sum could leave 62 bits")

    def invariant(self, type_: Inv, out: int, row: list[int], line: int) -> bool:
        if self.defined[out] >= 0 or self.model.vars.is_const[out]:
            return False
        self.defined[out] = len(self.invs)
        self.invs.append(_Inv(type_, out, row, _row_reads(type_, row), line))
        return True

    def one(self, key: str, name: str, args: list, defines: int, line: int) -> None:
        lin = _linear(key, args) if not key.endswith(("_reif", "_imp")) else None
        if lin is not None:
            rel, terms, rhs = lin
            if defines >= 0 and rel == Rel.EQ and abs(terms.get(defines, 0)) == 1:
                a = terms[defines]
                rest = {x: c for x, c in terms.items() if x != defines}
                self._check_sum(rest, rhs)
                row = [len(rest), *rest.values(), *rest.keys(), *wide(rhs), a]
                if self.invariant(Inv.LIN, defines, row, line):
                    return
            s = self.soft_lin(rel, terms, rhs)
            if rel == Rel.LE and len(terms) == 2 and rhs in (0, -1):
                (x, cx), (y, cy) = terms.items()
                if (cx, cy) == (1, -1):
                    self.chains.append((x, y, rhs == -1, s))
                elif (cx, cy) == (-1, 1):
                    self.chains.append((y, x, rhs == -1, s))
            return
        fn = _function(key, args)
        if fn is not None:
            type_, out, row = fn
            if defines == out and self.invariant(type_, out, row, line):
                return
            if type_ in (Inv.LINREIF, Inv.CLAUSE, Inv.XOR, Inv.SETIN):
                self.soft(Soft.REIF, [out, int(type_), *row], [out, *_row_reads(type_, row)])
            else:
                self.soft(Soft.FUNC, [out, int(type_), *row], [out, *_row_reads(type_, row)])
            return
        imp = _implication(key, args)
        if imp is not None:
            r, type_, row = imp
            self.soft(Soft.IMP, [r, int(type_), *row], [r, *_row_reads(type_, row)])
            return
        if key == "set_in":
            x, s = args
            self.soft(Soft.DOMAIN, [x.index, *_ranges_row(s)], [x.index])
        elif key == "bool_clause":
            pos, neg = list(args[0].indices), list(args[1].indices)
            self.soft(Soft.CLAUSE, [len(pos), *pos, len(neg), *neg], pos + neg)
        elif key == "array_bool_xor":
            xs = list(args[0].indices)
            self.soft(Soft.XOR, [len(xs), *xs], xs)
        elif key == "fzn_all_different_int":
            self.alldiffs.append((list(args[0].indices), line))
        elif key in ("fzn_table_int", "fzn_table_bool"):
            xs, flat = list(args[0].indices), [int(v) for v in args[1]]
            n = len(xs)
            self.soft(Soft.TABLE, [n, *xs, len(flat) // n if n else 0, *flat], xs)
        elif key in ("fzn_increasing_int", "fzn_decreasing_int", "fzn_increasing_bool", "fzn_decreasing_bool"):
            xs = list(args[0].indices)
            if key.startswith("fzn_decreasing"):
                xs = xs[::-1]
            for a, b in zip(xs, xs[1:]):
                s = self.soft_lin(Rel.LE, _terms((1, -1), (a, b)), 0)
                if a != b and key.endswith("_int"):
                    self.chains.append((a, b, False, s))
        elif key.startswith("fzn_global_cardinality"):
            xs = list(args[0].indices)
            cover = [int(v) for v in args[1]]
            if key.endswith(("low_up", "low_up_closed")):
                for v, lo, hi in zip(cover, args[2], args[3]):
                    self.soft(Soft.COUNT, [len(xs), *xs, -1, v, -1, int(lo), int(hi)], xs)
            else:
                for v, c in zip(cover, args[2].indices):
                    self.soft(Soft.COUNT, [len(xs), *xs, -1, v, c, 0, 0], xs + [c])
            if key.endswith("closed"):
                ranges = IntSetArg(tuple((v, v) for v in sorted(set(cover))))
                for x in xs:
                    self.soft(Soft.DOMAIN, [x, *_ranges_row(ranges)], [x])
        else:
            raise NotLocal(f"it has {name} (line {line}), which has no local-search error function here")

    # -- invariants in topological order
    def order_invariants(self) -> list[int]:
        """Kahn's order over the invariants (inputs before the invariants that read them); the
        invariants on a cycle give their variables back to the walk and become soft."""
        n = len(self.invs)
        readers: dict[int, list[int]] = defaultdict(list)
        indeg = [0] * n
        for k, inv in enumerate(self.invs):
            for v in set(inv.reads):
                d = self.defined[v]
                if d >= 0:
                    readers[int(d)].append(k)
                    indeg[k] += 1
        queue = deque(k for k in range(n) if indeg[k] == 0)
        order = []
        while queue:
            k = queue.popleft()
            order.append(k)
            for j in readers[k]:
                indeg[j] -= 1
                if indeg[j] == 0:
                    queue.append(j)
        if len(order) < n:
            for k in set(range(n)) - set(order):
                inv = self.invs[k]
                self.defined[inv.out] = -1
                self.soft(
                    Soft.FUNC if inv.type not in (Inv.LINREIF, Inv.CLAUSE, Inv.XOR, Inv.SETIN) else Soft.REIF,
                    [inv.out, int(inv.type), *inv.row],
                    [inv.out, *inv.reads],
                )
        return order


def _domain_ranges(V: Variables) -> list[list[tuple[int, int]]]:
    """Each variable's domain (Variables.domain) as ranges clipped to ±INT_LIMIT, read for every
    variable at once: an IntSet made for each variable was much of a big model's build."""
    lbs, ubs = V.lb.tolist(), V.ub.tolist()
    ranges = [[(max(a, -INT_LIMIT), min(b, INT_LIMIT))] if a <= b else [] for a, b in zip(lbs, ubs)]
    for v, holes in V.holes.items():
        if holes:
            ranges[v] = [(max(a, -INT_LIMIT), min(b, INT_LIMIT)) for a, b in holes.ranges]
    return ranges


def build(model: Model) -> LsNetwork:
    """The network of a satisfaction model's constraints, or NotLocal saying why it has none."""
    b = _Builder(model)
    V = model.vars
    b.constraints()
    order = b.order_invariants()
    invs = [b.invs[k] for k in order]
    inv_index = np.full(b.nv, -1, dtype=np.int64)
    for i, inv in enumerate(invs):
        inv_index[inv.out] = i
    fixed = V.is_const.astype(bool) | ((b.lo == b.hi) & (inv_index < 0))
    is_dec = ~fixed & (inv_index < 0)
    ranges = _domain_ranges(V)
    unbounded = np.flatnonzero(is_dec & ((b.lo < -INT_LIMIT) | (b.hi > INT_LIMIT)))
    if unbounded.size:
        raise NotLocal(
            f"its variable {V.names[int(unbounded[0])]} has no bounds (local search needs every decision variable's domain)"
        )
    # aux variables: their declared domains as soft constraints (a function may leave them;
    # those it cannot leave are dropped below, once the groups' spans are known)
    domain_soft = {}
    for inv in invs:
        v = inv.out
        rs = ranges[v] or [(1, 0)]
        domain_soft[v] = b.soft(Soft.DOMAIN, [v, len(rs), *[x for r in rs for x in r]], [v])
    # groups: permutations, then sorted chains
    dec_group: dict[int, tuple[int, int]] = {}  # model var -> (group, position)
    groups: list[tuple[Group, list[int], int, int]] = []
    for xs, line in b.alldiffs:
        domains: list[tuple | None] = [tuple(ranges[x]) if is_dec[x] else None for x in xs]
        ok = (
            len(set(xs)) == len(xs) >= 2
            and all(d is not None for d in domains)
            and all(x not in dec_group for x in xs)
            and len(set(domains)) == 1
            and sum(hi - lo + 1 for lo, hi in cast(tuple, domains[0])) == len(xs)
        )
        if ok:
            g = len(groups)
            groups.append((Group.PERM, list(xs), 0, 0))
            for p, x in enumerate(xs):
                dec_group[x] = (g, p)
            continue
        if len(set(xs)) < len(xs):  # a variable twice: never all different (an error that stays)
            b.soft(Soft.LIN, _lin_row(Rel.EQ, {}, 1), [])
            xs = list(dict.fromkeys(xs))
        lo = min(int(b.lo[x]) for x in xs) if xs else 0
        hi = max(int(b.hi[x]) for x in xs) if xs else 0
        if hi - lo + 1 > SPAN_LIMIT:
            raise NotLocal(f"an all_different (line {line}) spans over {SPAN_LIMIT:,} values")
        b.soft(Soft.ALLDIFF, [len(xs), *xs, lo, hi - lo + 1, 0], xs)
    dropped: set[int] = set()
    for strict in (True, False):
        edges = [
            (x, y, s)
            for x, y, st, s in b.chains
            if st == strict and is_dec[x] and is_dec[y] and x not in dec_group and y not in dec_group and x != y
        ]
        succ: dict[int, list] = defaultdict(list)
        pred: dict[int, list] = defaultdict(list)
        for x, y, s in edges:
            succ[x].append((y, s))
            pred[y].append((x, s))
        for start in list(succ):
            if pred.get(start) or len(succ[start]) != 1:
                continue
            chain, souls, x = [start], [], start
            while len(succ.get(x, ())) == 1:
                y, s = succ[x][0]
                if len(pred[y]) != 1 or y in chain:
                    break
                chain.append(y)
                souls.append(s)
                x = y
            if len(chain) < 3 or any(v in dec_group for v in chain):
                continue
            lo = min(int(b.lo[v]) for v in chain)
            hi = max(int(b.hi[v]) for v in chain)
            if hi - lo + 1 > SPAN_LIMIT or (strict and hi - lo + 1 < len(chain)):
                continue
            g = len(groups)
            groups.append((Group.SORTED_STRICT if strict else Group.SORTED, chain, lo, hi))
            for p, v in enumerate(chain):
                dec_group[v] = (g, p)
                if ranges[v] != [(lo, hi)]:  # the interval does not fit it: its own domain is soft
                    rs = ranges[v]
                    b.soft(Soft.DOMAIN, [v, len(rs), *[x for r in rs for x in r]], [v])
            dropped.update(souls)
    dropped.update(_domains_kept_by_construction(invs, domain_soft, ranges, b, is_dec, groups))
    softs = [s for i, s in enumerate(b.softs) if i not in dropped]
    return _pack(b, model, invs, softs, groups, dec_group, is_dec, ranges)


def _domains_kept_by_construction(invs: list[_Inv], domain_soft: dict[int, int], ranges, b: _Builder, is_dec, groups):
    """The DOMAIN constraints of invariants (`domain_soft`: by variable) that no walk can
    violate: every value the invariant computes from values its reads can take lies within one
    range of its declared domain (`_image`, in topological order; a decision variable takes
    values within its domain's bounds, or its sorted group's span). Their errors are always 0,
    and each one carried cost every swap of its variable a second evaluation of the invariant
    and a range test (number partitioning's squares, which MiniZinc declares within their
    bounds, as it does most variables it defines)."""
    bounds: dict[int, tuple[int, int] | None] = {}
    for kind, members, lo, hi in groups:
        if kind != Group.PERM:
            for v in members:
                bounds[v] = (lo, hi)
    for v in range(len(is_dec)):
        if v not in bounds and (is_dec[v] or b.lo[v] == b.hi[v]):
            bounds[v] = (int(b.lo[v]), int(b.hi[v]))
    kept = []
    for inv in invs:  # topological order: an invariant's reads are bounded before it
        image = _image(inv, bounds)
        bounds[inv.out] = image
        if image is not None and any(lo <= image[0] and image[1] <= hi for lo, hi in ranges[inv.out]):
            kept.append(domain_soft[inv.out])
    return kept


def _trunc_div(a: int, b: int) -> int:
    """a / b truncated towards 0, as C and FlatZinc's int_div divide."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _image(inv: _Inv, bounds: dict[int, tuple[int, int] | None]) -> tuple[int, int] | None:
    """An interval holding every value `inv` computes (kernels/adaptive.cl, inv_value) from
    values of its reads within `bounds`; None where a value may be undefined (a division by a
    divisor that may be 0, a power, an index out of range, beyond 31 bits) or a read is not
    bounded."""
    found = [bounds.get(v) for v in inv.reads]
    if any(r is None for r in found):
        return None
    reads = cast(list[tuple[int, int]], found)
    row, t = inv.row, inv.type
    out: tuple[int, int] | None
    if t == Inv.LIN:
        n = row[0]
        lo_s = sum(min(c * x[0], c * x[1]) for c, x in zip(row[1 : 1 + n], reads))
        hi_s = sum(max(c * x[0], c * x[1]) for c, x in zip(row[1 : 1 + n], reads))
        rhs = unwide(row[1 + 2 * n], row[2 + 2 * n])
        out = (rhs - hi_s, rhs - lo_s) if row[3 + 2 * n] == 1 else (lo_s - rhs, hi_s - rhs)
    elif t == Inv.ARITH:
        (alo, ahi), (blo, bhi) = reads[0], reads[1]
        op = row[0]
        if op == Arith.TIMES:
            corners = [alo * blo, alo * bhi, ahi * blo, ahi * bhi]
            out = (min(corners), max(corners))
        elif op == Arith.MIN:
            out = (min(alo, blo), min(ahi, bhi))
        elif op == Arith.MAX:
            out = (max(alo, blo), max(ahi, bhi))
        elif op == Arith.ABS:
            out = (alo, ahi) if alo >= 0 else (-ahi, -alo) if ahi <= 0 else (0, max(-alo, ahi))
        elif op in (Arith.DIV, Arith.MOD) and (blo > 0 or bhi < 0):  # a divisor never 0
            if op == Arith.DIV:  # truncated, monotone in each read: its corners
                corners = [_trunc_div(a, b) for a in (alo, ahi) for b in (blo, bhi)]
                out = (min(corners), max(corners))
            else:  # the dividend's sign, below the largest divisor's size, within the dividend
                m = max(-blo, bhi) - 1
                out = (0 if alo >= 0 else max(alo, -m), 0 if ahi <= 0 else min(ahi, m))
        else:  # POW, and DIV or MOD by a divisor that may be 0: undefined at some inputs
            return None
    elif t == Inv.ELEM:
        (ilo, ihi), n = reads[0], row[1]
        if ilo < 1 or ihi > n:
            return None
        values = row[2 + ilo - 1 : 2 + ihi]
        out = (min(values), max(values))
    elif t in (Inv.LINREIF, Inv.CLAUSE, Inv.XOR, Inv.SETIN):
        out = (0, 1)
    else:  # VELEM, EXTREMUM, COUNT: left to their DOMAIN constraints
        return None
    return out if -INT_LIMIT <= out[0] and out[1] <= INT_LIMIT else None  # the kernel's fits()


WEIGHT_MAX = 1 << 10


def _weights(softs: list[_Soft], lo: np.ndarray, hi: np.ndarray) -> list[int]:
    """Each soft constraint's weight: linear ones are put on one scale, so that a relation over
    small terms is not drowned by one over large terms (number partitioning's sum and sum of
    squares, as Adaptive Search's own model scales them): each linear constraint's typical term
    (|coefficient| times the variable's typical magnitude, averaged) against the largest one's,
    rounded, at most WEIGHT_MAX; every other constraint 1."""
    typical = {}
    reach = (np.abs(lo.astype(np.float64)) + np.abs(hi.astype(np.float64))) / 2
    for c, s in enumerate(softs):
        if s.type == Soft.LIN and 0 < len(s.coefs) < 32:
            mags = [abs(k) * (abs(float(lo[v])) + abs(float(hi[v]))) / 2 for v, k in s.coefs.items()]
            typical[c] = max(1.0, sum(mags) / len(mags))
        elif s.type == Soft.LIN and s.coefs:
            xs = np.fromiter(s.coefs.keys(), dtype=np.int64, count=len(s.coefs))
            ks = np.fromiter((float(k) for k in s.coefs.values()), dtype=np.float64, count=len(s.coefs))
            typical[c] = max(1.0, float(np.abs(ks) @ reach[xs]) / len(xs))
    top = max(typical.values(), default=1.0)
    return [min(WEIGHT_MAX, max(1, round(top / typical[c]))) if c in typical else 1 for c in range(len(softs))]


UNARY_INVARIANTS = (Inv.ARITH, Inv.ELEM, Inv.LIN)  # kinds the kernel computes for one changed variable


def _swap_terms(
    dec_vars: list[int],
    deps: list[list[int]],
    memb: list[list[tuple[int, int]]],
    invs: list[_Inv],
    softs: list[_Soft],
    soft_row: list[int],
    weights: list[int],
    is_dec: np.ndarray,
    perms: list[list[int]],
    caps: tuple[int, int, int],
    lo: np.ndarray,
) -> tuple[list[int], list[int], list[int], np.ndarray]:
    """(SW_OK, SW_OFF, SW, SW_CLASS): the swap terms (local_abi.SwapTerm) of each decision variable of a
    permutation (`perms`: each one's decision indices) whose swaps can be scored from them:
    every invariant it wakes computes a function of it and constants alone (UNARY_INVARIANTS;
    number partitioning's squares) and is read only by LIN and DOMAIN constraints, and every
    constraint reading the variable itself is a LIN, an all_different or a DOMAIN one. A
    permutation is marked only where a swap of any two of its members fits the move's
    capacities (`caps`: KMAX, TMAX, DMAX), so the general evaluation, which commits the move
    taken, never refuses what the terms scored."""
    outs = {inv.out for inv in invs}
    found: dict[int, list[int]] = {}

    @cache  # a constraint's term is the same for each of its many variables
    def term(c: int, coef: int, inv: int, on_invariant: bool) -> tuple[int, ...] | None:
        s = softs[c]
        if s.type == Soft.LIN:
            n = s.row[1]
            return (c, coef, inv, s.row[0], s.row[2 + 2 * n], s.row[3 + 2 * n], weights[c])
        if s.type == Soft.ALLDIFF and not on_invariant:
            return (c, 0, inv, SWAP_ALLDIFF, 0, 0, weights[c])
        if s.type == Soft.DOMAIN:
            return (c, 0, inv, SWAP_DOMAIN, soft_row[c], 0, weights[c])
        return None

    def terms_of(i: int) -> list[int] | None:
        v = dec_vars[i]
        for k in deps[i]:
            inv = invs[k]
            if inv.type not in UNARY_INVARIANTS or any(r != v and (is_dec[r] or r in outs) for r in inv.reads):
                return None
        mine = [term(c, coef, -1, False) for c, coef in memb[v]]
        mine += [term(c, coef, k, True) for k in deps[i] for c, coef in memb[invs[k].out]]
        if len(mine) > SWAP_TERMS_MAX or None in mine:
            return None
        return list(chain.from_iterable(cast(list[tuple], mine)))

    def top_two(values: list[int]) -> int:
        return sum(sorted(values)[-2:])

    for members in perms:
        each = [terms_of(i) for i in members]
        if any(t is None for t in each):
            continue
        needs = (
            top_two([2 + len(deps[i]) for i in members]) - 2,  # two changes, and the invariants
            top_two([len(cast(list, t)) // SwapTerm.SIZE for t in each]),
            top_two([len(deps[i]) for i in members]),
        )
        if all(need <= cap for need, cap in zip(needs, caps)):
            found.update(zip(members, cast(list, each)))
    ok, off, terms = [], [0], []
    for i in range(len(dec_vars)):
        ok.append(int(i in found))
        terms += found.get(i, [])
        off.append(len(terms) // SwapTerm.SIZE)
    return ok, off, terms, _swap_classes(ok, off, terms, invs, lo, perms)


def _row_ids(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's number among the distinct rows of a 2-D integer array, and how many rows
    have each number: np.unique(axis=0)'s inverse and counts, by a lexical sort of the
    columns, several times faster than np.unique(axis=0) on long arrays."""
    if not rows.shape[1]:  # rows of nothing: all alike
        return np.zeros(len(rows), dtype=np.int64), np.array([len(rows)] if len(rows) else [], dtype=np.int64)
    order = np.lexsort(rows.T[::-1])
    ranked = rows[order]
    new = np.ones(len(rows), dtype=bool)
    new[1:] = (ranked[1:] != ranked[:-1]).any(axis=1)
    ids = np.empty(len(rows), dtype=np.int64)
    ids[order] = np.cumsum(new) - 1
    return ids, np.bincount(ids)


def _swap_classes(
    ok: list[int], off: list[int], terms: list[int], invs: list[_Inv], lo: np.ndarray, perms: list[list[int]]
) -> np.ndarray:
    """SW_CLASS: decision variables of one permutation whose swap terms are equal but for the
    variable they are on (the same constraints and coefficients, each invariant the same
    function of its variable: its kind and row with the variable's slots blanked and each
    constant read by its value) share a class, so that a swap of two of them changes no
    constraint's sum, which swap_delta and evaluate() call a null move: number partitioning's
    first half, its second half. The kernel passes over such a partner without reading it. A
    variable with a DOMAIN term (its invariant's domain: the errors trade places and each
    changes) or an all_different one (evaluate() counts a histogram as changed), or whose terms
    no other variable shares, is in none (-1). Variables are first told apart by a fingerprint
    of their terms in numpy (a magic square's cells all differ there); only those sharing one
    are compared term by term."""
    ndec = len(ok)
    classes = np.full(ndec, -1, dtype=np.int64)
    group = np.full(ndec, -1, dtype=np.int64)
    for g, members in enumerate(perms):
        group[members] = g
    size = int(SwapTerm.SIZE)
    rows = np.asarray(terms, dtype=np.int64).reshape(-1, size)
    counts: np.ndarray = np.diff(np.asarray(off, dtype=np.int64)).astype(np.int64)
    owner = np.repeat(np.arange(ndec), counts)
    eligible = (np.asarray(ok, dtype=bool)) & (group >= 0)
    odd = np.isin(rows[:, SwapTerm.KIND], (SWAP_ALLDIFF, SWAP_DOMAIN))
    eligible[owner[odd]] = False

    def function(k: int, v: int) -> tuple[int, ...]:
        inv = invs[k]
        slots = set(_read_slots(inv.type, inv.row))
        entries = [(0, x) if p not in slots else (1, 0) if x == v else (2, int(lo[x])) for p, x in enumerate(inv.row)]
        return (int(inv.type), *chain.from_iterable(entries))

    # each term as (constraint, coefficient, function): the constraint fixes its relation,
    # constant and weight
    fid = np.full(len(rows), -1, dtype=np.int64)
    functions: dict[tuple[int, ...], int] = {}
    on_inv = np.flatnonzero((rows[:, SwapTerm.INV] >= 0) & eligible[owner])
    for t, k, v in zip(on_inv.tolist(), rows[on_inv, SwapTerm.INV].tolist(), owner[on_inv].tolist()):
        fid[t] = functions.setdefault(function(k, v), len(functions))
    tid = np.zeros(len(rows), dtype=np.int64)
    if len(rows):
        keys = np.stack([rows[:, SwapTerm.C], rows[:, SwapTerm.COEF], fid], axis=1)
        tid = _row_ids(keys)[0]
    order = np.lexsort((tid, owner))
    sorted_tid = tid[order]
    f = tid.astype(np.float64)
    finger = np.stack(
        [
            group,
            counts,
            np.bincount(owner, f, ndec).astype(np.int64),
            np.bincount(owner, f * f, ndec).astype(np.int64),
            np.where(eligible, 0, np.arange(ndec) + 1),  # the ineligible each alone
        ],
        axis=1,
    )
    which, sharing = _row_ids(finger)
    count = 0
    candidates = np.flatnonzero(sharing[which] > 1)
    for same in np.split(
        candidates[np.argsort(which[candidates], kind="stable")],
        np.flatnonzero(np.diff(np.sort(which[candidates]))) + 1,
    ):
        if len(same) < 2:
            continue
        m = int(counts[same[0]])
        starts = np.asarray(off, dtype=np.int64)[same]
        seqs = sorted_tid[starts[:, None] + np.arange(m)]
        sub, n_sub = _row_ids(seqs)
        for s_ in np.flatnonzero(n_sub > 1).tolist():
            classes[same[sub == s_]] = count
            count += 1
    return classes


def _pack(
    b: _Builder, model: Model, invs: list[_Inv], softs: list[_Soft], groups, dec_group, is_dec, ranges
) -> LsNetwork:
    nv = b.nv
    dec_vars = [int(v) for v in np.flatnonzero(is_dec)]
    ndec = len(dec_vars)
    dec_of = np.full(nv, -1, dtype=np.int64)
    for i, v in enumerate(dec_vars):
        dec_of[v] = i
    # memberships: the soft constraints reading each variable
    memb: list[list[tuple[int, int]]] = [[] for _ in range(nv)]
    hist = 0
    for c, s in enumerate(softs):
        for v in sorted(set(s.reads)):
            memb[v].append((c, s.coefs.get(v, 0)))
        if s.type == Soft.ALLDIFF:
            s.row[-1] = hist
            hist += s.row[-2]
    # dependencies: the invariants each decision variable wakes, transitively, in order
    readers: list[list[int]] = [[] for _ in range(nv)]
    for i, inv in enumerate(invs):
        for v in set(inv.reads):
            readers[v].append(i)
    deps: list[list[int]] = []
    infl: list[list[int]] = []
    for v in dec_vars:
        if not readers[v]:  # wakes no invariant (every cell of a magic square): its own constraints
            deps.append([])
            infl.append([c for c, _ in memb[v]])  # in order, each once (memb's)
            continue
        seen: set[int] = set()
        stack = list(readers[v])
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            stack.extend(readers[invs[i].out])
        dep = sorted(seen)
        deps.append(dep)
        touched = {c for c, _ in memb[v]}
        for i in dep:
            touched.update(c for c, _ in memb[invs[i].out])
        infl.append(sorted(touched))

    # capacities: the changes, touched constraints and woken invariants of the largest move,
    # each measure a sum over the move's decision variables (one's: `single`)
    n_deps = np.array([len(d) for d in deps], dtype=np.int64)
    inv_memb = np.array([len(memb[inv.out]) for inv in invs], dtype=np.int64)
    flat_deps = np.fromiter(chain.from_iterable(deps), dtype=np.int64, count=int(n_deps.sum()))
    through = np.bincount(np.repeat(np.arange(ndec), n_deps), inv_memb[flat_deps], ndec).astype(np.int64)
    own = np.array([len(memb[v]) for v in dec_vars], dtype=np.int64)
    single = np.stack([1 + n_deps, own + through, n_deps], axis=1).reshape(-1, 3)
    sizes = [single[[int(dec_of[v]) for v in dec_vars if v not in dec_group]]]
    for kind, members, _, _ in groups:
        each = single[[int(dec_of[v]) for v in members]]
        if kind == Group.PERM:  # a swap: each measure's two largest members, which may differ
            sizes.append(np.sort(each, axis=0)[-2:].sum(axis=0, keepdims=True))
        else:  # a whole sorted group
            sizes.append(each.sum(axis=0, keepdims=True))
    kmax, tmax, dmax = (int(x) for x in np.vstack([np.ones((1, 3), dtype=np.int64), *sizes]).max(axis=0))
    kmax, tmax, dmax = (min(x, CHANGE_CAP) for x in (kmax, tmax, dmax))
    # the buffer
    arrays: dict[H, list[int] | np.ndarray] = {}
    arrays[H.LO] = np.clip(b.lo, -INT_LIMIT, INT_LIMIT)
    arrays[H.HI] = np.clip(b.hi, -INT_LIMIT, INT_LIMIT)
    dr = [x for rs in ranges for r in rs for x in r]
    dr_off = np.concatenate([[0], np.cumsum([len(rs) for rs in ranges])])
    dsize = [min(sum(hi - lo + 1 for lo, hi in rs), 1 << 30) for rs in ranges]
    arrays[H.DR_OFF], arrays[H.DR], arrays[H.DSIZE] = dr_off, dr, dsize
    arrays[H.DEC_VAR] = dec_vars
    arrays[H.DEC_GROUP] = [dec_group[v][0] if v in dec_group else -1 for v in dec_vars]
    arrays[H.DEC_POS] = [dec_group[v][1] if v in dec_group else 0 for v in dec_vars]
    arrays[H.DEC_OF] = dec_of
    arrays[H.G_TYPE] = [int(g[0]) for g in groups]
    g_off, g_mem = [0], []
    for g in groups:
        g_mem += [int(dec_of[v]) for v in g[1]]
        g_off.append(len(g_mem))
    arrays[H.G_OFF], arrays[H.G_MEM] = g_off, g_mem
    arrays[H.G_LO] = [g[2] for g in groups]
    arrays[H.G_HI] = [g[3] for g in groups]
    data: list[int] = []
    inv_row = []
    for inv in invs:
        inv_row.append(len(data))
        data += inv.row
    soft_row = []
    for s in softs:
        soft_row.append(len(data))
        data += s.row
    arrays[H.INV_TYPE] = [int(i.type) for i in invs]
    arrays[H.INV_OUT] = [i.out for i in invs]
    arrays[H.INV_ROW] = inv_row
    arrays[H.SOFT_WEIGHT] = _weights(softs, b.lo, b.hi)
    arrays[H.SOFT_TYPE] = [int(s.type) for s in softs]
    arrays[H.SOFT_ROW] = soft_row
    perms = [[int(dec_of[v]) for v in g[1]] for g in groups if g[0] == Group.PERM]
    arrays[H.SW_OK], arrays[H.SW_OFF], arrays[H.SW], arrays[H.SW_CLASS] = _swap_terms(
        dec_vars,
        deps,
        memb,
        invs,
        softs,
        soft_row,
        list(arrays[H.SOFT_WEIGHT]),
        is_dec,
        perms,
        (kmax, tmax, dmax),
        b.lo,
    )
    pairs = list(chain.from_iterable(memb))
    arrays[H.MEMB_OFF] = np.concatenate([[0], np.cumsum([len(m) for m in memb])])
    arrays[H.MEMB_C] = [c for c, _ in pairs]
    arrays[H.MEMB_COEF] = [k for _, k in pairs]
    d_off, d_all, i_off, i_all = [0], [], [0], []
    for dep, inf in zip(deps, infl):
        d_all += dep
        d_off.append(len(d_all))
        i_all += inf
        i_off.append(len(i_all))
    arrays[H.DEP_OFF], arrays[H.DEP], arrays[H.INF_OFF], arrays[H.INF] = d_off, d_all, i_off, i_all
    arrays[H.DATA] = data
    if max(data, default=0) > 2**31 - 1 or min(data, default=0) < -(2**31 - 1):
        raise NotLocal("a constant beyond 32 bits")
    head = np.zeros(H.SIZE, dtype=np.int64)
    head[H.NV], head[H.NDEC], head[H.NG] = nv, ndec, len(groups)
    head[H.NINV], head[H.NSOFT], head[H.HIST] = len(invs), len(softs), hist
    head[H.KMAX], head[H.TMAX], head[H.DMAX], head[H.CAND_MAX] = kmax, tmax, dmax, CAND_MAX
    cands = [min(dsize[v], CAND_MAX) for v in dec_vars if v not in dec_group]
    cands += [len(g[1]) if g[0] == Group.PERM else g[3] - g[2] + 1 for g in groups]
    head[H.CAND_ALL] = max(cands, default=1)
    parts = [head]
    at = int(H.SIZE)
    for key in sorted(arrays, key=int):
        a = np.asarray(arrays[key], dtype=np.int64)
        head[key] = at
        parts.append(a)
        at += len(a)
    buffer = np.concatenate(parts)
    if at >= 2**31 - 1:
        raise NotLocal("its network does not fit 32-bit offsets")
    kinds = {k.name.lower(): sum(1 for g in groups if g[0] == k) for k in Group if k != Group.FREE}
    kinds["free"] = ndec - sum(len(g[1]) for g in groups)
    swaps_only = bool(ndec) and all(arrays[H.SW_OK])
    return LsNetwork(
        buffer.astype(np.int32),
        nv,
        ndec,
        hist,
        kmax,
        tmax,
        dmax,
        kinds,
        len(invs),
        len(softs),
        int(head[H.CAND_ALL]),
        swaps_only,
        _shares_error(infl),
        bool(softs)
        and all(s.type in (Soft.LIN, Soft.DOMAIN) for s in softs)
        and all(v in dec_group and groups[dec_group[v][0]][0] == Group.PERM for v in dec_vars),
        swaps_only and _sums_fit_32(arrays[H.SW_OFF], arrays[H.SW], softs, list(arrays[H.SOFT_WEIGHT]), b.lo, b.hi),
    )


def _sums_fit_32(
    off: list[int] | np.ndarray, terms: list[int] | np.ndarray, softs: list[_Soft], weights: list[int], lo, hi
) -> bool:
    """Whether a swap's score (kernels/adaptive.cl, swap_delta_side) fits 32-bit arithmetic:
    every swap term is a LIN or an all_different one on the decision variable itself (no
    invariant, no DOMAIN), and 8 W B T stays below 2^31 for the largest weighted bound W B of
    a LIN constraint among them (B: its constant's size plus each term's coefficient times its
    variable's largest size) and T the terms of a swap's two variables at most. A swap's score
    adds at most T changes of error, each within 8 W B: a change of a sum within 4 B (the two
    values' difference times a side's coefficients), the sum with it within 5 B, its distance
    from the constant within 6 B, less the error now (within 2 W B). Such a variable's terms
    name each constraint once (the memberships hold a variable once per constraint, its
    coefficients added up), which the 32-bit program relies on: it scores a partner's term
    without looking for the constraint's other terms; checked here."""
    rows = np.asarray(terms, dtype=np.int64).reshape(-1, int(SwapTerm.SIZE))
    if not len(rows):
        return False
    if (rows[:, SwapTerm.INV] >= 0).any() or (rows[:, SwapTerm.KIND] == SWAP_DOMAIN).any():
        return False
    counts: np.ndarray = np.diff(np.asarray(off, dtype=np.int64)).astype(np.int64)
    owner = np.repeat(np.arange(len(counts)), counts)
    if len(unique(owner * (int(rows[:, SwapTerm.C].max()) + 1) + rows[:, SwapTerm.C])) < len(rows):
        return False
    widest = 0
    for c in unique(rows[rows[:, SwapTerm.KIND] != SWAP_ALLDIFF, SwapTerm.C]).tolist():
        s = softs[c]
        n = s.row[1]
        widest = max(widest, weights[c] * sum_bound(s.coefs, unwide(s.row[2 + 2 * n], s.row[3 + 2 * n]), lo, hi))
    per_variable = int(np.diff(np.asarray(off)).max())
    return 8 * widest * 2 * per_variable < 2**31


def _shares_error(carried: list[list[int]]) -> bool:
    """Whether at least half of the decision variables carry one same set of constraints, each
    carried by two variables or more (`carried`: each decision variable's soft constraints,
    its projected error's). The constraints only one variable carries (an invariant's DOMAIN,
    such as number partitioning's squares') are left out: they tell the variables apart by
    their errors only where they are violated, which a function of one variable in its domain
    seldom is. Such variables' projected errors are equal wherever those shared constraints
    are all that is violated, where the walks search the whole neighbourhood by sample."""
    if len(carried) < 2:
        return False
    carriers = np.bincount(np.fromiter(chain.from_iterable(carried), dtype=np.int64))
    alone = set(np.flatnonzero(carriers == 1).tolist())
    signatures = (
        Counter(tuple(c for c in cs if c not in alone) for cs in carried) if alone else Counter(map(tuple, carried))
    )
    signatures.pop((), None)
    return bool(signatures) and 2 * max(signatures.values()) >= len(carried)
