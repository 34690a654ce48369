"""An independent checker: evaluates every FlatZinc builtin on a full assignment.

It reads the FlatZinc items itself (resolving parameters, arrays and aliases on its own) and
shares no code with lowering or the engines, so a bug there cannot hide a wrong solution.
Tests run every solution they see through `check`; `fzn-gpu --check` does so at run time."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import cast

from . import ast
from .ast import IntSet
from .check_globals import GLOBALS

FLOAT_TOL = 1e-6


@dataclass
class Violation:
    line: int
    what: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}"


class _Undefined(Exception):
    """A partial function (division by zero, element out of range): the constraint is false."""


def _div(a: int, b: int) -> int:
    if b == 0:
        raise _Undefined
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _mod(a: int, b: int) -> int:
    return a - b * _div(a, b)


def _pow(a: int, b: int) -> int:
    """FlatZinc's int_pow: a negative exponent gives 1 div a^-b (0 unless |a| = 1)."""
    if b < 0:
        if a == 0:
            raise _Undefined
        return _div(1, a**-b)
    return a**b


def _elem(idx: int, arr: list):
    if not 1 <= idx <= len(arr):
        raise _Undefined
    return arr[idx - 1]


def _feq(a: float, b: float, tol: float = FLOAT_TOL, mag: float = 0.0) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b), mag)


def _fle(a: float, b: float, tol: float = FLOAT_TOL, mag: float = 0.0) -> bool:
    return a <= b + tol * max(1.0, abs(a), abs(b), mag)


def _lin(cs, xs) -> float:
    return sum(c * x for c, x in zip(cs, xs))


def _float_builtins(tol: float) -> dict[str, Callable[..., bool]]:
    """The float builtins, each relation true within `tol` (relative to the magnitudes
    involved), and so is its negation: a printed float is the shortest decimal of a box
    within the search's precision, so x < y and x >= y may both be within reach of it."""
    C: dict[str, Callable[..., bool]] = {}

    def eq(a, b, mag=0.0):
        return _feq(a, b, tol, mag)

    def le(a, b, mag=0.0):
        return _fle(a, b, tol, mag)

    def reified(name: str, holds: Callable[..., bool], fails: Callable[..., bool]) -> None:
        C[name] = holds
        C[name + "_reif"] = lambda *a: holds(*a[:-1]) if _b(a[-1]) else fails(*a[:-1])
        C[name + "_imp"] = lambda *a: (not _b(a[-1])) or holds(*a[:-1])

    def mag(cs, xs, c) -> float:
        return sum(abs(k * x) for k, x in zip(cs, xs)) + abs(c)

    reified("float_eq", eq, lambda a, b: a != b)
    reified("float_ne", lambda a, b: a != b, eq)
    reified("float_le", le, lambda a, b: le(b, a))
    reified("float_lt", le, lambda a, b: le(b, a))
    reified("float_lin_eq", lambda cs, xs, c: eq(_lin(cs, xs), c, mag(cs, xs, c)), lambda cs, xs, c: _lin(cs, xs) != c)
    reified("float_lin_ne", lambda cs, xs, c: _lin(cs, xs) != c, lambda cs, xs, c: eq(_lin(cs, xs), c, mag(cs, xs, c)))
    for name in ("float_lin_le", "float_lin_lt"):
        reified(
            name,
            lambda cs, xs, c: le(_lin(cs, xs), c, mag(cs, xs, c)),
            lambda cs, xs, c: le(c, _lin(cs, xs), mag(cs, xs, c)),
        )
    reified("float_in", lambda x, lo, hi: le(lo, x) and le(x, hi), lambda x, lo, hi: le(x, lo) or le(hi, x))
    C["float_plus"] = lambda a, b, c: eq(a + b, c, abs(a) + abs(b))
    C["float_times"] = lambda a, b, c: eq(a * b, c)
    C["float_div"] = lambda a, b, c: b != 0 and eq(a / b, c)
    C["float_min"] = lambda a, b, c: eq(min(a, b), c)
    C["float_max"] = lambda a, b, c: eq(max(a, b), c)
    C["float_pow"] = lambda a, b, c: eq(math.pow(a, b), c)
    for fn, impl in (
        ("abs", abs),
        ("sqrt", math.sqrt),
        ("exp", math.exp),
        ("ln", math.log),
        ("log10", math.log10),
        ("log2", math.log2),
        ("sin", math.sin),
        ("cos", math.cos),
        ("tan", math.tan),
        ("asin", math.asin),
        ("acos", math.acos),
        ("atan", math.atan),
        ("sinh", math.sinh),
        ("cosh", math.cosh),
        ("tanh", math.tanh),
        ("asinh", math.asinh),
        ("acosh", math.acosh),
        ("atanh", math.atanh),
    ):
        C[f"float_{fn}"] = (lambda f: lambda a, b: eq(f(a), b))(impl)
    C["int2float"] = lambda a, b: eq(float(a), b)
    C["float_dom"] = lambda x, pairs: any(le(pairs[i], x) and le(x, pairs[i + 1]) for i in range(0, len(pairs), 2))
    C["array_float_element"] = lambda i, arr, v: eq(_elem(i, arr), v)
    C["array_var_float_element"] = C["array_float_element"]
    C["array_float_maximum"] = lambda m, xs: len(xs) > 0 and eq(m, max(xs))
    C["array_float_minimum"] = lambda m, xs: len(xs) > 0 and eq(m, min(xs))
    return C


def _float_precision(anns) -> float:
    """The coarsest precision any float_search in the solve annotations asks for (0: none)."""
    best = 0.0
    for a in anns:
        if isinstance(a, list):
            best = max(best, _float_precision(a))
        elif isinstance(a, ast.Call):
            if a.name == "float_search" and len(a.args) > 1 and isinstance(a.args[1], (int, float)):
                best = max(best, float(a.args[1]))
            best = max(best, _float_precision(a.args))
    return best


def _in(v, s) -> bool:
    return v in s


def _set(s) -> frozenset:
    return frozenset(s.values()) if isinstance(s, IntSet) else frozenset(s)


def _b(x) -> bool:
    return bool(x)


def _build() -> dict[str, Callable[..., bool]]:
    C: dict[str, Callable[..., bool]] = {}

    def reified(name: str, f: Callable[..., bool]) -> None:
        C[name] = f
        C[name + "_reif"] = lambda *a: f(*a[:-1]) == _b(a[-1])
        C[name + "_imp"] = lambda *a: (not _b(a[-1])) or f(*a[:-1])

    # int
    reified("int_eq", lambda a, b: a == b)
    reified("int_ne", lambda a, b: a != b)
    reified("int_le", lambda a, b: a <= b)
    reified("int_lt", lambda a, b: a < b)
    reified("int_lin_eq", lambda cs, xs, c: _lin(cs, xs) == c)
    reified("int_lin_ne", lambda cs, xs, c: _lin(cs, xs) != c)
    reified("int_lin_le", lambda cs, xs, c: _lin(cs, xs) <= c)
    C["int_plus"] = lambda a, b, c: a + b == c
    C["int_times"] = lambda a, b, c: a * b == c
    C["int_div"] = lambda a, b, c: _div(a, b) == c
    C["int_mod"] = lambda a, b, c: b != 0 and _mod(a, b) == c
    C["int_min"] = lambda a, b, c: min(a, b) == c
    C["int_max"] = lambda a, b, c: max(a, b) == c
    C["int_pow"] = lambda a, b, c: _pow(a, b) == c
    C["int_abs"] = lambda a, b: abs(a) == b
    C["array_int_element"] = lambda i, arr, v: _elem(i, arr) == v
    C["array_var_int_element"] = C["array_int_element"]
    C["array_bool_element"] = lambda i, arr, v: _b(_elem(i, arr)) == _b(v)
    C["array_var_bool_element"] = C["array_bool_element"]
    C["array_int_maximum"] = lambda m, xs: len(xs) > 0 and m == max(xs)
    C["array_int_minimum"] = lambda m, xs: len(xs) > 0 and m == min(xs)
    reified("set_in", lambda x, s: _in(x, s))
    C["fzn_all_different_int"] = lambda xs: len(set(xs)) == len(xs)
    # bool
    C["bool2int"] = lambda a, b: int(_b(a)) == b
    reified("bool_eq", lambda a, b: _b(a) == _b(b))
    reified("bool_le", lambda a, b: _b(a) <= _b(b))
    reified("bool_lt", lambda a, b: _b(a) < _b(b))
    C["bool_not"] = lambda a, b: _b(a) != _b(b)
    C["bool_ne"] = C["bool_not"]
    C["bool_ne_reif"] = lambda a, b, r: (_b(a) != _b(b)) == _b(r)
    C["bool_and"] = lambda a, b, r: (_b(a) and _b(b)) == _b(r)
    C["bool_or"] = lambda a, b, r: (_b(a) or _b(b)) == _b(r)
    C["bool_and_imp"] = lambda a, b, r: (not _b(r)) or (_b(a) and _b(b))
    C["bool_or_imp"] = lambda a, b, r: (not _b(r)) or (_b(a) or _b(b))
    C["bool_xor_imp"] = lambda a, b, r: (not _b(r)) or (_b(a) != _b(b))
    C["bool_xor"] = lambda a, b, r=None: (_b(a) != _b(b)) if r is None else ((_b(a) != _b(b)) == _b(r))
    C["array_bool_and"] = lambda xs, r: all(map(_b, xs)) == _b(r)
    C["array_bool_or"] = lambda xs, r: any(map(_b, xs)) == _b(r)
    C["array_bool_and_imp"] = lambda xs, r: (not _b(r)) or all(map(_b, xs))
    C["array_bool_or_imp"] = lambda xs, r: (not _b(r)) or any(map(_b, xs))
    C["array_bool_xor"] = lambda xs: sum(map(_b, xs)) % 2 == 1

    def clause(ps, ns) -> bool:
        return any(map(_b, ps)) or not all(map(_b, ns))

    reified("bool_clause", clause)
    C["bool_lin_eq"] = lambda cs, xs, c: _lin(cs, map(int, map(_b, xs))) == c
    C["bool_lin_le"] = lambda cs, xs, c: _lin(cs, map(int, map(_b, xs))) <= c
    # set
    reified("set_eq", lambda a, b: _set(a) == _set(b))
    reified("set_ne", lambda a, b: _set(a) != _set(b))
    reified("set_subset", lambda a, b: _set(a) <= _set(b))
    reified("set_superset", lambda a, b: _set(a) >= _set(b))
    reified("set_le", lambda a, b: _set_le(_set(a), _set(b)))
    reified("set_lt", lambda a, b: _set_le(_set(a), _set(b)) and _set(a) != _set(b))
    C["set_union"] = lambda a, b, c: _set(a) | _set(b) == _set(c)
    C["set_intersect"] = lambda a, b, c: _set(a) & _set(b) == _set(c)
    C["set_diff"] = lambda a, b, c: _set(a) - _set(b) == _set(c)
    C["set_symdiff"] = lambda a, b, c: _set(a) ^ _set(b) == _set(c)
    C["set_card"] = lambda a, n: len(_set(a)) == n
    C["array_set_element"] = lambda i, arr, v: _set(_elem(i, arr)) == _set(v)
    C["array_var_set_element"] = C["array_set_element"]
    return C


def _set_le(a: frozenset, b: frozenset) -> bool:
    """MiniZinc's set order: compare the sorted element lists lexicographically."""
    return sorted(a) <= sorted(b)


BUILTINS = {**_build(), **_float_builtins(FLOAT_TOL), **GLOBALS}


def _in_domain(value, t: ast.Type, tol: float = FLOAT_TOL) -> bool:
    if t.base == "bool":
        return value in (0, 1, True, False)
    if t.domain is None:
        return True
    if t.base == "int":
        return value in cast(IntSet, t.domain)
    if t.base == "float":
        return _fle(t.domain.lo, value, tol) and _fle(value, t.domain.hi, tol)
    if t.base == "set":
        return all(v in cast(IntSet, t.domain) for v in _set(value))
    return True


class Checker:
    """Checks assignments against one FlatZinc model (parsed once, checked many times)."""

    def __init__(self, items: Iterable[ast.Item]):
        self.items = list(items)
        self.decls = [i for i in self.items if isinstance(i, ast.Decl)]
        self.constraints = [i for i in self.items if isinstance(i, ast.ConstraintItem)]
        self.solve = next((i for i in self.items if isinstance(i, ast.SolveItem)), None)
        # floats: the checker's tolerance, or the search's precision where that is coarser
        self.tol = max(FLOAT_TOL, _float_precision(self.solve.annotations) if self.solve else 0.0)
        self.builtins = {**BUILTINS, **_float_builtins(self.tol)}

    def check(self, assignment: dict[str, object]) -> list[Violation]:
        """Every violated constraint, domain and definition; an empty list means a solution.
        `assignment` gives a value to every declared scalar variable without a value."""
        env: dict[str, object] = {}
        bad: list[Violation] = []

        def ev(e):
            if isinstance(e, ast.Ident):
                return env[e.name]
            if isinstance(e, ast.ArrayAccess):
                return env[e.name][e.index - 1]
            if isinstance(e, list):
                return [ev(x) for x in e]
            return e

        for d in self.decls:
            if d.type.dims is not None:
                env[d.name] = (
                    ev(d.value)
                    if d.value is not None
                    else [assignment[f"{d.name}[{i + 1}]"] for i in range(_size(d.type.dims))]
                )
                if d.type.is_var and d.type.domain is not None:
                    for k, v in enumerate(cast(list, env[d.name])):
                        if not _in_domain(v, d.type, self.tol):
                            bad.append(Violation(d.line, f"{d.name}[{k + 1}] = {v} is outside its domain"))
                continue
            if not d.type.is_var:
                env[d.name] = ev(d.value)
                continue
            if d.value is not None:
                env[d.name] = ev(d.value)
                if d.name in assignment and not _same(assignment[d.name], env[d.name]):
                    bad.append(Violation(d.line, f"{d.name} = {assignment[d.name]} but it is declared = {env[d.name]}"))
            elif d.name in assignment:
                env[d.name] = assignment[d.name]
            else:
                bad.append(Violation(d.line, f"{d.name} has no value"))
                continue
            if not _in_domain(env[d.name], d.type, self.tol):
                bad.append(Violation(d.line, f"{d.name} = {env[d.name]} is outside its domain"))
        if bad and any("has no value" in v.what for v in bad):
            return bad
        for c in self.constraints:
            f = self.builtins.get(c.name)
            if f is None:
                bad.append(Violation(c.line, f"the checker does not know '{c.name}'"))
                continue
            try:
                ok = f(*[ev(a) for a in c.args])
            except _Undefined:
                ok = False
            except (ValueError, OverflowError, ZeroDivisionError):
                ok = False
            if not ok:
                args = ", ".join(_show(ev(a)) for a in c.args)
                bad.append(Violation(c.line, f"{c.name}({args}) is violated"))
        return bad

    def objective(self, assignment: dict[str, object]):
        """The objective's value under `assignment`, or None for satisfaction."""
        if self.solve is None or self.solve.objective is None:
            return None
        o = self.solve.objective
        if isinstance(o, ast.Ident):
            for d in self.decls:
                if d.name == o.name and d.value is not None and not isinstance(d.value, ast.Ident):
                    return d.value
            return assignment.get(o.name, None) if o.name in assignment else self._alias(o.name, assignment)
        return o

    def _alias(self, name: str, assignment: dict[str, object]):
        for d in self.decls:
            if d.name == name and isinstance(d.value, ast.Ident):
                return assignment.get(d.value.name, self._alias(d.value.name, assignment))
        return None


def _size(dims) -> int:
    n = 1
    for d in dims:
        n *= max(0, d[1] - d[0] + 1)
    return n


def _same(a, b) -> bool:
    if isinstance(a, (set, frozenset, IntSet)) or isinstance(b, (set, frozenset, IntSet)):
        return _set(a) == _set(b)
    if isinstance(a, float) or isinstance(b, float):
        return _feq(float(a), float(b))
    return a == b


def _show(v) -> str:
    if isinstance(v, list):
        text = "[" + ", ".join(_show(x) for x in v[:12]) + (", ..." if len(v) > 12 else "") + "]"
        return text
    if isinstance(v, IntSet):
        return "{" + ",".join(f"{a}..{b}" if a != b else str(a) for a, b in v.ranges) + "}"
    if isinstance(v, (set, frozenset)):
        return "{" + ",".join(map(str, sorted(v))) + "}"
    return str(v)


def check_file(path: str, assignment: dict[str, object]) -> list[Violation]:
    from .parser import parse_items, read_text

    text, name = read_text(path)
    return Checker(parse_items(text, name)).check(assignment)
