"""Whether a constraint holds, over whole grids of its variables' values at once (numpy).

Bucket elimination turns every constraint into a table over its scope: `holds(kind, args,
values)` evaluates the kind's FlatZinc meaning (the MiniZinc specification's, as check.py
reads it) on arrays that broadcast against each other, one axis per variable of the scope.
A kind without an evaluator here makes the model one bucket elimination does not take
(`UNSUPPORTED` is what callers test for); partial functions (a division by zero, an element
index out of range) make the constraint false, as in FlatZinc."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from ..flatzinc.registry import ConstraintKind


@dataclass(frozen=True)
class Var:
    index: int


@dataclass(frozen=True)
class VarArray:
    indices: tuple[int, ...]


@dataclass(frozen=True)
class IntSetArg:
    ranges: tuple[tuple[int, int], ...]

    def contains(self, x: np.ndarray) -> np.ndarray:
        out = np.zeros(np.shape(x), dtype=bool)
        for lo, hi in self.ranges:
            out |= (x >= lo) & (x <= hi)
        return out


Arg = Var | VarArray | int | tuple | IntSetArg


def decode(kind: ConstraintKind, row: np.ndarray) -> list:
    """A row's arguments by the kind's signature (fzn_gpu.flatzinc.registry's encoding): Var, VarArray,
    an int, a tuple of ints, or IntSetArg."""
    out: list = []
    i = 0
    for f in kind.signature:
        if f == "var":
            out.append(Var(int(row[i])))
            i += 1
        elif f == "var[]":
            n = int(row[i])
            out.append(VarArray(tuple(row[i + 1 : i + 1 + n].tolist())))
            i += 1 + n
        elif f == "int":
            out.append(int(row[i]))
            i += 1
        elif f == "int[]":
            n = int(row[i])
            out.append(tuple(row[i + 1 : i + 1 + n].tolist()))
            i += 1 + n
        elif f == "set":
            k = int(row[i])
            flat = row[i + 1 : i + 1 + 2 * k]
            out.append(IntSetArg(tuple((int(flat[2 * j]), int(flat[2 * j + 1])) for j in range(k))))
            i += 1 + 2 * k
        else:
            raise ValueError(f"no evaluation of {f} arguments")
    return out


def variables(args: list) -> list[int]:
    """Every variable the arguments name, in order, repeats kept."""
    out: list[int] = []
    for a in args:
        if isinstance(a, Var):
            out.append(a.index)
        elif isinstance(a, VarArray):
            out.extend(a.indices)
    return out


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a div b rounded towards zero (FlatZinc's int_div), b != 0 where it is used."""
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe)
    return np.where((a >= 0) == (safe >= 0), q, -q)


class Unsupported(Exception):
    """The constraint cannot be evaluated exactly here (its sums could leave 64 bits)."""


SAFE = float(2**61)


def _lin(cs: tuple, xs: list) -> np.ndarray:
    """A linear sum in int64, refused where a term or the sum could leave 64 bits (the float
    sum of magnitudes bounds it)."""
    total = np.int64(0)
    bound = 0.0
    for c, x in zip(cs, xs):
        if isinstance(x, np.ndarray):
            bound += abs(float(c)) * float(np.max(np.abs(x))) if x.size else 0.0
        else:  # one value (the verifier's): a numpy reduction on it costs more than the sum
            bound += abs(float(c)) * abs(float(x))
        total = total + np.int64(c) * x
    if bound >= SAFE:
        raise Unsupported("a linear sum beyond 61 bits")
    return cast(np.ndarray, total)  # a numpy scalar where no array took part: it broadcasts alike


def _reified(holds_fn, name: str):
    """`name`, `name_reif` and `name_imp` from the relation's evaluator (the literal last)."""
    return {
        name: lambda *a: holds_fn(*a),
        name + "_reif": lambda *a: holds_fn(*a[:-1]) == (a[-1] != 0),
        name + "_imp": lambda *a: (a[-1] == 0) | holds_fn(*a[:-1]),
    }


def _element(idx, arr, y):
    arr = np.asarray(arr, dtype=np.int64)
    inside = (idx >= 1) & (idx <= len(arr))
    return inside & (arr[np.clip(idx - 1, 0, len(arr) - 1)] == y)


def _var_element(idx, xs, y):
    stacked = np.stack(np.broadcast_arrays(*xs, idx, y)[: len(xs)])
    inside = (idx >= 1) & (idx <= len(xs))
    picked = np.take_along_axis(
        stacked, np.broadcast_to(np.clip(idx - 1, 0, len(xs) - 1), stacked.shape[1:])[None], axis=0
    )[0]
    return inside & (picked == y)


def _pow(a, b, c):
    """FlatZinc's int_pow: a^b, and for b < 0 the integer 1 div a^-b (undefined at a = 0); a
    power beyond 61 bits equals no int32 c."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    pos = b >= 0
    exp = np.where(pos, b, 0)
    with np.errstate(over="ignore", invalid="ignore"):
        power = np.power(a, exp)
        fits = np.abs(np.power(a.astype(np.float64), exp.astype(np.float64))) < SAFE
    negative = np.where(np.abs(a) == 1, np.where((a == -1) & (b % 2 != 0), -1, 1), 0)  # 1 div a^-b
    value = np.where(pos, power, negative)
    return np.where(pos, fits & (value == c), (a != 0) & (value == c))


def _all_different(*xs):
    ok = np.bool_(True)
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            ok = ok & (xs[i] != xs[j])
    return ok


def _all(xs):
    out = np.bool_(True)
    for x in xs:
        out = out & (x != 0)
    return out


def _any(xs):
    out = np.bool_(False)
    for x in xs:
        out = out | (x != 0)
    return out


def _clause(pos, neg):
    out = np.bool_(False)
    for p in pos:
        out = out | (p != 0)
    for n in neg:
        out = out | (n == 0)
    return out


def _table(xs, flat):
    n = len(xs)
    rows = np.asarray(flat, dtype=np.int64).reshape(-1, n) if n else np.zeros((0, 0), np.int64)
    out = np.bool_(False)
    for t in rows:
        match = np.bool_(True)
        for x, v in zip(xs, t):
            match = match & (x == v)
        out = out | match
    return out


def _count(xs, value) -> np.ndarray:
    out = np.int64(0)
    for x in xs:
        out = out + (x == value).astype(np.int64)
    return cast(np.ndarray, out)


def _cardinality(closed: bool, bounded: bool):
    """global_cardinality(x, cover, counts) and its closed and low_up forms: each cover value's
    count equals its count variable (or lies within its bounds); closed: every x in the cover."""

    def fn(xs, cover, *rest):
        out = np.bool_(True)
        for i, v in enumerate(cover):
            n = _count(xs, v)
            out = out & ((rest[0][i] <= n) & (n <= rest[1][i]) if bounded else (n == rest[0][i]))
        if closed:
            for x in xs:
                inside = np.bool_(False)
                for v in cover:
                    inside = inside | (x == v)
                out = out & inside
        return out

    return fn


def _monotone(xs, decreasing: bool) -> np.ndarray:
    out = np.bool_(True)
    for a, b in zip(xs, xs[1:]):
        out = out & ((a >= b) if decreasing else (a <= b))
    return cast(np.ndarray, out)


def _evaluators() -> dict:
    E: dict = {}
    for base, rel in (
        ("int_eq", np.equal),
        ("int_ne", np.not_equal),
        ("int_le", np.less_equal),
        ("int_lt", np.less),
        ("bool_eq", np.equal),
        ("bool_le", np.less_equal),
        ("bool_lt", np.less),
    ):
        E.update(_reified((lambda r: lambda a, b: r(a, b))(rel), base))
    for base, rel in (("int_lin_eq", np.equal), ("int_lin_ne", np.not_equal), ("int_lin_le", np.less_equal)):
        E.update(_reified((lambda r: lambda cs, xs, c: r(_lin(cs, xs), c))(rel), base))
    E.update(_reified(lambda x, s: s.contains(x), "set_in"))
    E["int_plus"] = lambda a, b, c: a + b == c
    E["int_times"] = lambda a, b, c: a * b == c
    E["int_div"] = lambda a, b, c: (b != 0) & (_trunc_div(a, b) == c)
    E["int_mod"] = lambda a, b, c: (b != 0) & (a - b * _trunc_div(a, b) == c)
    E["int_min"] = lambda a, b, c: np.minimum(a, b) == c
    E["int_max"] = lambda a, b, c: np.maximum(a, b) == c
    E["int_pow"] = _pow
    E["int_abs"] = lambda a, b: np.abs(a) == b
    E["array_int_element"] = E["array_bool_element"] = _element
    E["array_var_int_element"] = E["array_var_bool_element"] = _var_element
    E["array_int_maximum"] = lambda m, xs: m == np.maximum.reduce(np.broadcast_arrays(*xs)) if xs else np.bool_(False)
    E["array_int_minimum"] = lambda m, xs: m == np.minimum.reduce(np.broadcast_arrays(*xs)) if xs else np.bool_(False)
    E["array_bool_xor"] = lambda xs: (sum((x != 0).astype(np.int64) for x in xs) % 2) == 1 if xs else np.bool_(False)
    E["fzn_all_different_int"] = lambda xs: _all_different(*xs)
    E["bool2int"] = lambda a, b: a == b
    E["bool_not"] = E["bool_ne"] = E["bool_xor_2"] = lambda a, b: a != b
    E["bool_ne_reif"] = lambda a, b, r: (a != b) == (r != 0)
    for base, op in (("bool_and", np.logical_and), ("bool_or", np.logical_or), ("bool_xor", np.logical_xor)):
        E[base] = (lambda o: lambda a, b, r: o(a != 0, b != 0) == (r != 0))(op)
        E[base + "_imp"] = (lambda o: lambda a, b, r: (r == 0) | o(a != 0, b != 0))(op)
    E["array_bool_and"] = lambda xs, r: _all(xs) == (r != 0)
    E["array_bool_or"] = lambda xs, r: _any(xs) == (r != 0)
    E["array_bool_and_imp"] = lambda xs, r: (r == 0) | _all(xs)
    E["array_bool_or_imp"] = lambda xs, r: (r == 0) | _any(xs)
    E["bool_clause"] = _clause
    E["bool_clause_reif"] = lambda pos, neg, r: _clause(pos, neg) == (r != 0)
    E["bool_clause_imp"] = lambda pos, neg, r: (r == 0) | _clause(pos, neg)
    E["bool_lin_eq"] = lambda cs, xs, v: _lin(cs, xs) == v
    E["bool_lin_le"] = lambda cs, xs, c: _lin(cs, xs) <= c
    E["fzn_table_int"] = E["fzn_table_bool"] = _table
    E["fzn_count_eq"] = lambda xs, y, c: _count(xs, y) == c
    for suffix, closed, bounded in (
        ("", False, False),
        ("_closed", True, False),
        ("_low_up", False, True),
        ("_low_up_closed", True, True),
    ):
        E["fzn_global_cardinality" + suffix] = _cardinality(closed, bounded)
    for base in ("int", "bool"):
        E[f"fzn_increasing_{base}"] = lambda xs: _monotone(xs, False)
        E[f"fzn_decreasing_{base}"] = lambda xs: _monotone(xs, True)
    return E


EVALUATORS = _evaluators()


def supported(kind: ConstraintKind) -> bool:
    return kind.key in EVALUATORS


def holds(kind: ConstraintKind, args: list, value) -> np.ndarray:
    """The constraint's truth over broadcast grids: `value(v)` gives variable v's values as an
    array (or a scalar, for a fixed one)."""
    fn = EVALUATORS[kind.key]
    vals = []
    for a in args:
        if isinstance(a, Var):
            vals.append(value(a.index))
        elif isinstance(a, VarArray):
            vals.append([value(v) for v in a.indices])
        else:
            vals.append(a)
    return np.asarray(fn(*vals), dtype=bool)


def _image_lin(args, y, value):
    cs, xs, c = args
    coef = sum(k for k, v in zip(cs, xs.indices) if v == y)
    if coef == 0 or sum(1 for v in xs.indices if v == y) != 1:
        return None
    rest = _lin([k for k, v in zip(cs, xs.indices) if v != y], [value(v) for v in xs.indices if v != y])
    num = np.int64(c) - rest
    return num // coef, num % abs(coef) == 0


def _image_element(args, y, value):
    idx, arr, out = args
    if not isinstance(out, Var) or out.index != y or (isinstance(idx, Var) and idx.index == y):
        return None
    i = value(idx.index) if isinstance(idx, Var) else np.int64(idx)
    if isinstance(arr, VarArray):
        if y in arr.indices:
            return None
        stacked = np.stack(np.broadcast_arrays(*[value(v) for v in arr.indices], i)[: len(arr.indices)])
        picked = np.take_along_axis(
            stacked, np.broadcast_to(np.clip(i - 1, 0, len(arr.indices) - 1), stacked.shape[1:])[None], axis=0
        )[0]
    else:
        table = np.asarray(arr, dtype=np.int64)
        picked = table[np.clip(i - 1, 0, len(table) - 1)]
    n = len(arr.indices) if isinstance(arr, VarArray) else len(arr)
    return picked, (i >= 1) & (i <= n)


def _image_binary(fn):
    """z = fn(a, b) for z the defined variable (its last argument)."""

    def image(args, y, value):
        a, b, z = args
        if not isinstance(z, Var) or z.index != y or y in variables([a, b]):
            return None
        va, vb = value(a.index), value(b.index)
        return fn(va, vb)

    return image


def _image_unary(fn):
    def image(args, y, value):
        a, b = args
        if not isinstance(b, Var) or b.index != y or a.index == y:
            return None
        return fn(value(a.index)), np.bool_(True)

    return image


def _image_extremum(reduce):
    def image(args, y, value):
        m, xs = args
        if m.index != y or y in xs.indices or not xs.indices:
            return None
        return reduce(np.broadcast_arrays(*[value(v) for v in xs.indices])), np.bool_(True)

    return image


def _guarded_div(a, b):
    return _trunc_div(a, b), b != 0


IMAGES = {
    "int_lin_eq": _image_lin,
    "array_int_element": _image_element,
    "array_bool_element": _image_element,
    "array_var_int_element": _image_element,
    "array_var_bool_element": _image_element,
    "int_plus": _image_binary(lambda a, b: (a + b, np.bool_(True))),
    "int_times": _image_binary(lambda a, b: (a * b, np.bool_(True))),
    "int_min": _image_binary(lambda a, b: (np.minimum(a, b), np.bool_(True))),
    "int_max": _image_binary(lambda a, b: (np.maximum(a, b), np.bool_(True))),
    "int_div": _image_binary(_guarded_div),
    "int_mod": _image_binary(lambda a, b: (a - b * _trunc_div(a, b), b != 0)),
    "int_abs": _image_unary(np.abs),
    "bool2int": _image_unary(lambda a: a),
    "array_int_maximum": _image_extremum(np.maximum.reduce),
    "array_int_minimum": _image_extremum(np.minimum.reduce),
}


def image(kind: ConstraintKind, args: list, y: int, value):
    """Where the constraint defines y as a function of its other variables: (y's values, where
    they are defined) over their grid; None where this kind or position has no such form."""
    fn = IMAGES.get(kind.key)
    if fn is None:
        return None
    try:
        out = fn(args, y, value)
    except Unsupported:
        return None
    if out is None:
        return None
    values, valid = out
    return np.asarray(values, dtype=np.int64), np.asarray(valid, dtype=bool)
