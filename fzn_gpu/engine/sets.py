"""Set variables on the device, as shrinking bitmaps the int machinery already handles.

A set variable S over the universe U becomes three device variables:
  P  the elements S may hold: U plus a sentinel value (max U + 1), a bitmap;
  N  the elements S need not hold (those not yet required): the same domain;
  C  its cardinality, 0..|U|.
u joins S by leaving N (SET_IN) and leaves S by leaving P (SET_OUT): both domains only
shrink, so every mutator, the trail, the node copies, the settling of bounds onto bitmaps and
the path replays work on them unchanged. The sentinel is in neither's way: no propagator or
decision touches it, so neither bitmap is ever empty; S is fixed when P and N share only the
sentinel, and then S = P less the sentinel. An element outside both P and N is required and
impossible: set propagators fail on it. Set constraint rows name each set variable by its
(P, N, C) triple, and every set variable gets a set_card row tying C to it.

P keeps the model's index of S (so solutions, output and paths name it as before); N and C
are appended after the model's variables."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import Unsupported
from ..flatzinc.ast import IntSet
from ..flatzinc.model import Model, VarKind
from ..flatzinc.registry import BY_KEY
from .rows import reencode

MAX_UNIVERSE = 1023  # elements, so that the universe and its sentinel fit a bitmap (1,024 values)


@dataclass
class SetLayout:
    """The device's variables once set variables are expanded: bounds, exact domains where
    they have holes, constants, and which need a bitmap whatever their span."""

    lb: np.ndarray  # int64, every device variable
    ub: np.ndarray
    holes: dict[int, IntSet]
    is_const: np.ndarray  # bool
    need_bits: np.ndarray  # bool: P and N always have a bitmap
    triple: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # set var -> (P, N, C)

    @property
    def set_vars(self) -> np.ndarray:
        return np.array(sorted(self.triple), dtype=np.int64)


def expand(model: Model, lb: np.ndarray, ub: np.ndarray) -> SetLayout:
    """The device variables: the model's (lb/ub already clipped to the device's range), with
    every set variable's P in place and its N and C appended."""
    V = model.vars
    holes = dict(V.holes)
    is_const = V.is_const.copy()
    set_idx = np.nonzero(V.kind == VarKind.SET)[0]
    extra_lb, extra_ub, extra_const = [], [], []
    lb, ub = lb.astype(np.int64).copy(), ub.astype(np.int64).copy()
    need_bits = np.zeros(len(V) + 2 * len(set_idx), dtype=bool)
    triple: dict[int, tuple[int, int, int]] = {}
    nxt = len(V)
    for v in set_idx.tolist():
        universe = V.domain(v) if V.lb[v] <= V.ub[v] else IntSet(())
        if len(universe.ranges) and universe.hi - universe.lo + 1 > MAX_UNIVERSE:
            raise Unsupported(
                f"set variable {V.names[v]} has a universe of {universe.hi - universe.lo + 1} values",
                file=model.source,
                fix=f"fzn-gpu's set variables hold at most {MAX_UNIVERSE} values",
            )
        s = universe.hi + 1 if universe.ranges else 1  # the sentinel
        with_s = IntSet(tuple(universe.ranges) + ((s, s),)) if universe.ranges else IntSet(((s, s),))
        lo = universe.lo if universe.ranges else s
        n, c = nxt, nxt + 1
        nxt += 2
        triple[v] = (v, n, c)
        size = len(universe.values())
        # P: U + sentinel (a constant set: exactly its value, required whole, so N holds the sentinel only)
        lb[v], ub[v] = lo, s
        if len(with_s.ranges) > 1:
            holes[v] = with_s
        else:
            holes.pop(v, None)
        need_bits[v] = need_bits[n] = True
        if V.is_const[v]:
            extra_lb += [s, size]
            extra_ub += [s, size]
            extra_const += [True, True]
        else:
            extra_lb += [lo, 0]
            extra_ub += [s, size]
            extra_const += [False, False]
            if len(with_s.ranges) > 1:
                holes[n] = with_s
        is_const[v] = False  # P keeps a bitmap, constant or not
    lb = np.concatenate([lb, np.asarray(extra_lb, dtype=np.int64)])
    ub = np.concatenate([ub, np.asarray(extra_ub, dtype=np.int64)])
    is_const = np.concatenate([is_const, np.asarray(extra_const, dtype=bool)])
    return SetLayout(lb, ub, holes, is_const, need_bits, triple)


def encode(model: Model, layout: SetLayout, first_cid: int):
    """Rows of the set constraint kinds with each set variable as (P, N, C), plus a set_card
    row per set variable; (kind ids, rows, watched (constraint, var) pairs)."""
    V = model.vars

    def encode_field(f: str, src: list, i: int, out: list, watched: list) -> int:
        if f == "var":
            v = src[i]
            parts = list(layout.triple[v]) if V.kind[v] == VarKind.SET else [v]
            out += parts
            watched += parts
            return i + 1
        if f == "var[]":
            k = src[i]
            out.append(k)
            for v in src[i + 1 : i + 1 + k]:
                out += list(layout.triple[v])
                watched += list(layout.triple[v])
            return i + 1 + k
        if f in ("int", "float"):
            out.append(src[i])
            return i + 1
        if f == "set":
            k = src[i]
            out += src[i : i + 1 + 2 * k]
            return i + 1 + 2 * k
        if f == "set[]":
            k = src[i]
            out.append(k)
            i += 1
            for _ in range(k):
                m = src[i]
                out += src[i : i + 1 + 2 * m]
                i += 1 + 2 * m
            return i
        k = src[i]
        out += src[i : i + 1 + k]  # int[] / float[]
        return i + 1 + k

    kinds, rows, pairs = reencode(model, "set", first_cid, encode_field)
    card = BY_KEY["set_card"].id
    for p, n, c in layout.triple.values():  # each set variable's implicit set_card row
        pairs.extend((first_cid + len(kinds), w) for w in (p, n, c))
        kinds.append(card)
        rows.append([p, n, c, c])
    return kinds, rows, pairs


def decoder(dm):
    """row -> {set variable: its value}: a solution row (every device variable's value, then the
    bitmap words) read at each set variable's P, less the sentinel."""
    if not len(dm.set_vars):
        return None
    nv = dm.nv
    parts = [(int(p), int(dm.bm_off[p]), int(dm.bm_nw[p]), int(dm.base[p]), int(dm.ub[p])) for p in dm.set_vars]

    def decode(row) -> dict[int, IntSet]:
        words = np.asarray(row[nv : nv + dm.sol_words], dtype=np.int64) & 0xFFFFFFFF
        out: dict[int, IntSet] = {}
        for p, off, nw, base, sentinel in parts:
            w = words[off : off + nw]
            bits = np.nonzero((w[:, None] >> np.arange(32)) & 1)
            values = (base + 32 * bits[0] + bits[1]).tolist()
            out[p] = IntSet.of(sorted(v for v in values if v < sentinel))
        return out

    return decode
