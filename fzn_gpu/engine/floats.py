"""Float variables on the device (kernels/floats.cl).

A float variable keeps its device index; its int slot (0..1) is a flag, set when search accepts
its box as it is, and its bounds are a pair of 64-bit *ordinals*: the double's IEEE bits mapped
so that integer order is float order (negative values reversed), which lets a work-group narrow
them with 64-bit atomic max and min, and lets every store, trail and stack carry them as ints.
Each float variable has a slot (0..nf-1); the device holds its two ordinals at 2*slot, 2*slot+1.
Float constraint rows name variables as usual and hold each float parameter as two int32 words
(low, high) of its bits. Search splits a float variable until its width is within its
precision, then tries it at a point (the shortest decimal in its box), accepting the box if
the point fails; a solution carries the boxes, and the host prints each variable's shortest
decimal (its point where it has one)."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import numpy as np

from ..flatzinc.model import Model, VarKind
from .rows import reencode

ORD_FLIP = np.int64(0x7FFFFFFFFFFFFFFF)
# The width a float variable no float_search names is split down to, relative to its magnitude
# (max |bound|); the search plan passes it negated, the kernel's mark of a relative width.
DEFAULT_PRECISION = 1e-8
# The width, relative to max(1, |bound|), an Aux float (a function of others: defines_var) is
# split down to once the decision floats are settled: a tenth of the checker's tolerance (check.FLOAT_TOL), enough for
# a printed solution to pass it. Splitting an ill-conditioned Aux (a high power, a long product)
# down to DEFAULT_PRECISION would search its box's dust, and nothing is printed from it.
AUX_PRECISION = 1e-7
FLOAT_NONE = 2**63 - 1  # no float objective bound yet (beyond every ordinal of a double)


def to_ord(x) -> np.ndarray:
    """double(s) -> ordinal(s): int64 whose order is the doubles' order."""
    b = np.asarray(x, dtype=np.float64).view(np.int64)
    return np.where(b < 0, b ^ ORD_FLIP, b)


def from_ord(o) -> np.ndarray:
    o = np.asarray(o, dtype=np.int64)
    return np.where(o < 0, o ^ ORD_FLIP, o).view(np.float64)


def float_value(o: int) -> float:
    """An ordinal back to its double; FLOAT_NONE reads as +inf."""
    return math.inf if o == FLOAT_NONE else float(from_ord(np.int64(o)))


def words(value: float) -> tuple[int, int]:
    """A double as two int32 words (low, high) of its bits."""
    lo, hi = struct.unpack("<ii", struct.pack("<d", float(value)))
    return lo, hi


def bits_to_float(b: int) -> float:
    return struct.unpack("<d", struct.pack("<q", int(b)))[0]


@dataclass
class FloatLayout:
    slot: np.ndarray  # int32 per device variable: its float slot, or -1
    root: np.ndarray  # int64, 2 per slot: the declared bounds as ordinals
    nf: int


def layout(model: Model, nv_device: int) -> FloatLayout:
    V = model.vars
    fv = np.nonzero(V.kind == VarKind.FLOAT)[0]
    slot = np.full(nv_device, -1, dtype=np.int32)
    slot[fv] = np.arange(len(fv), dtype=np.int32)
    lo = np.where(np.isnan(V.flb[fv]), -np.inf, V.flb[fv])
    hi = np.where(np.isnan(V.fub[fv]), np.inf, V.fub[fv])
    root = np.empty(2 * len(fv), dtype=np.int64)
    root[0::2] = to_ord(lo)
    root[1::2] = to_ord(hi)
    return FloatLayout(slot, root, len(fv))


def encode(model: Model, first_cid: int):
    """Rows of the float kinds with float parameters as (low, high) words; (kind ids, rows,
    watched (constraint, var) pairs)."""

    def encode_field(f: str, src: list, i: int, out: list, watched: list) -> int:
        if f == "var":
            out.append(src[i])
            watched.append(src[i])
            return i + 1
        if f == "var[]":
            k = src[i]
            out.append(k)
            out += src[i + 1 : i + 1 + k]
            watched += src[i + 1 : i + 1 + k]
            return i + 1 + k
        if f == "float":
            out += words(bits_to_float(src[i]))
            return i + 1
        if f == "float[]":
            k = src[i]
            out.append(k)
            for b in src[i + 1 : i + 1 + k]:
                out += words(bits_to_float(b))
            return i + 1 + k
        if f == "int":
            out.append(src[i])
            return i + 1
        k = src[i]
        out += src[i : i + 1 + k]  # int[]
        return i + 1 + k

    return reencode(model, "float", first_cid, encode_field)


def shortest(lo: float, hi: float) -> float:
    """The double with the fewest significant digits in [lo, hi] (lo itself when lo == hi)."""
    if lo == hi or not (math.isfinite(lo) and math.isfinite(hi)):
        return lo if math.isfinite(lo) else (hi if math.isfinite(hi) else 0.0)
    if lo <= 0.0 <= hi:
        return 0.0
    for digits in range(1, 18):
        for cand in (float(f"{lo:.{digits}g}"), float(f"{hi:.{digits}g}"), float(f"{(lo + hi) / 2:.{digits}g}")):
            if lo <= cand <= hi:
                return cand
    return (lo + hi) / 2


def boxes(dm, rows: np.ndarray) -> np.ndarray:
    """Solution rows (after their first int) -> float64 array (rows, nf, 2): each box."""
    start = dm.nv + dm.sol_words
    w = np.asarray(rows[:, start : start + 4 * dm.nf], dtype=np.int64).reshape(len(rows), -1, 2)
    ords = (w[:, :, 0] & 0xFFFFFFFF) | (w[:, :, 1] << 32)
    return from_ord(ords).reshape(len(rows), dm.nf, 2)


def objective_keys(dm, sols: np.ndarray) -> np.ndarray:
    """A float objective's sense-adjusted value per solution row (kernel rows, the objective int
    first): the better end of its box, as the kernel's bound counts it (floats.cl)."""
    box = boxes(dm, sols[:, 1:])[:, int(dm.fslot[dm.obj_var])]
    return box[:, 0] if dm.obj_sense > 0 else -box[:, 1]


def decoder(dm):
    """row -> {float variable: its value}: the boxes a solution row carries after the int values
    and bitmap words, each read as its shortest decimal."""
    if not dm.nf:
        return None
    fvars = np.nonzero(dm.fslot >= 0)[0]
    slots = dm.fslot[fvars]

    def decode(row) -> dict[int, float]:
        vals = boxes(dm, np.asarray(row)[None, :])[0]
        return {int(v): shortest(float(vals[s, 0]), float(vals[s, 1])) for v, s in zip(fvars, slots)}

    return decode
