"""AST items -> Model, in one pass and linear time.

Names resolve to variable indices or constants as their declarations stream by; aliases
(`var int: x = y;`) point at the aliased variable and narrow its domain; constants that stand
where a variable is expected become fixed variables (one per value); each constraint is encoded
by its kind's signature into one int64 row of that kind's table (fzn_gpu.flatzinc.registry)."""

from __future__ import annotations

import gc
import re
import struct
from array import array
from collections.abc import Iterable
from typing import Any, cast

import numpy as np

from ..errors import SCALE_DOWN, FznError, Unsupported, nested_too_deeply
from . import ast
from .ast import Call, IntList, IntSet
from .model import (
    INT_LIMIT,
    LNS_STRATEGIES,
    RESTART_KINDS,
    UNBOUNDED,
    ConstraintTable,
    LnsSpec,
    Model,
    OutputItem,
    RestartSpec,
    SearchStep,
    Solve,
    Variables,
    VarKind,
)
from .parser import parse_items_raw, parse_raw, read_text
from .quickparse import KEYWORDS, NAME
from .registry import REGULAR_WORDS, ConstraintKind, kinds_named

_BASE_KIND = {"bool": VarKind.BOOL, "int": VarKind.INT, "float": VarKind.FLOAT, "set": VarKind.SET}


class VarRef:
    """A variable in argument position (as opposed to a constant)."""

    __slots__ = ("idx",)

    def __init__(self, idx: int):
        self.idx = idx


def _float_bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", float(x)))[0]


def float_from_bits(b: int) -> float:
    return struct.unpack("<d", struct.pack("<q", int(b)))[0]


class _TableBuilder:
    __slots__ = ("kind", "row_ptr", "data", "lines", "defines")

    def __init__(self, kind: ConstraintKind):
        self.kind = kind
        self.row_ptr = array("q", [0])
        self.data = array("q")
        self.lines = array("i")
        self.defines = array("q")

    def finish(self) -> ConstraintTable:
        return ConstraintTable(
            self.kind,
            np.frombuffer(self.row_ptr, dtype=np.int64).copy(),
            np.frombuffer(self.data, dtype=np.int64).copy(),
            np.frombuffer(self.lines, dtype=np.int32).copy(),
            np.frombuffer(self.defines, dtype=np.int64).copy(),
        )


class Lowering:
    """Consumes items one by one (see `lower`)."""

    def __init__(self, filename: str):
        self.filename = filename
        self.names: list[str] = []
        self.kind = array("b")
        self.lb = array("q")
        self.ub = array("q")
        self.flb = array("d")
        self.fub = array("d")
        self.defined_flag = bytearray()  # is_defined_var
        self.defined_by = bytearray()  # some constraint has defines_var(x)
        self.is_const = bytearray()
        self.decl_lines = array("i")
        self.holes: dict[int, IntSet] = {}
        self.scope: dict[str, object] = {}  # name -> VarRef | constant | list
        self.scope_kind: dict[str, VarKind] = {}
        self.const_vars: dict[tuple, int] = {}
        self.tables: dict[str, _TableBuilder] = {}
        self._domains: dict[tuple[str, str], IntSet] = {}  # fast_var's LO..HI, one IntSet each
        self._fast_plans: dict[tuple, tuple] = {}  # (name, argument shapes) -> (kind or None, linear)
        self.outputs: list[OutputItem] = []
        self.solve: Solve | None = None
        self.line = 0

    # ---------------------------------------------------------------- variables
    def _new_var(self, name: str, kind: VarKind, domain, is_defined: bool = False, const: bool = False) -> int:
        idx = len(self.names)
        self.names.append(name)
        self.kind.append(int(kind))
        lo, hi, flo, fhi = 0, 0, 0.0, 0.0
        if kind == VarKind.BOOL:
            lo, hi = (max(0, domain.lo), min(1, domain.hi)) if isinstance(domain, IntSet) and domain.ranges else (0, 1)
        elif kind in (VarKind.INT, VarKind.SET):
            if domain is None:
                lo, hi = (-UNBOUNDED, UNBOUNDED) if kind == VarKind.INT else (0, -1)
                if kind == VarKind.SET:
                    raise FznError(
                        f"set variable {name} has no universe",
                        file=self.filename,
                        line=self.line,
                        fix="declare it as `var set of LO..HI`",
                    )
            elif domain.is_empty():
                lo, hi = 1, 0
            else:
                lo, hi = domain.lo, domain.hi
                self._representable(name, lo, hi, const)
                if len(domain.ranges) > 1:
                    self.holes[idx] = domain
        elif kind == VarKind.FLOAT:
            flo, fhi = (domain.lo, domain.hi) if isinstance(domain, ast.FloatRange) else (-np.inf, np.inf)
        self.lb.append(lo)
        self.ub.append(hi)
        self.flb.append(flo)
        self.fub.append(fhi)
        self.defined_flag.append(1 if is_defined else 0)
        self.defined_by.append(0)
        self.is_const.append(1 if const else 0)
        self.decl_lines.append(self.line)
        return idx

    def _const_var(self, value) -> int:
        """A fixed variable holding `value`, shared by every use of that constant."""
        key: tuple[str, object]
        if isinstance(value, bool):
            key = ("b", int(value))
        elif isinstance(value, int):
            key = ("i", value)
        elif isinstance(value, float):
            key = ("f", value)
        elif isinstance(value, IntSet):
            key = ("s", value.ranges)
        else:
            what = "an array" if isinstance(value, list) else repr(value)
            raise self._error(
                f"{what} cannot stand where a variable is expected",
                fix="give each element of an array argument as a variable or a constant, not an array",
            )
        idx = self.const_vars.get(key)
        if idx is None:
            if key[0] in ("b", "i"):
                idx = self._new_var(
                    f"_const_{key[1]}",
                    VarKind.BOOL if key[0] == "b" else VarKind.INT,
                    IntSet.range(int(value), int(value)),
                    const=True,
                )
            elif key[0] == "f":
                idx = self._new_var(f"_const_{value}", VarKind.FLOAT, ast.FloatRange(value, value), const=True)
            elif value.is_empty():
                idx = self._empty_set_var()
            else:  # a fixed set: its universe is exactly its value (is_const says so)
                idx = self._new_var(f"_const_set_{len(self.const_vars)}", VarKind.SET, value, const=True)
            self.const_vars[key] = idx
        return idx

    def _empty_set_var(self) -> int:
        idx = len(self.names)
        self.names.append("_const_set_empty")
        self.kind.append(int(VarKind.SET))
        self.lb.append(1)
        self.ub.append(0)
        self.flb.append(0.0)
        self.fub.append(0.0)
        self.defined_flag.append(0)
        self.defined_by.append(0)
        self.is_const.append(1)
        self.decl_lines.append(self.line)
        return idx

    def _representable(self, name: str, lo: int, hi: int, const: bool = False) -> None:
        """Refuse a declared bound at or past ±UNBOUNDED, the value that stands for "no bound":
        kept, it would read as an undeclared one and be narrowed to the device's 32 bits without
        a word (a declared 1..2^62 maximised to 2^31 - 2 and called optimal)."""
        if max(abs(lo), abs(hi)) >= UNBOUNDED:
            wide = lo if abs(lo) >= UNBOUNDED else hi
            what = f"the constant {wide} is" if const else f"variable {name} has the bound {wide},"
            raise Unsupported(f"{what} beyond ±{INT_LIMIT}", file=self.filename, line=self.line, fix=SCALE_DOWN)

    def _narrow(self, idx: int, domain) -> None:
        """Intersect variable idx's domain with a declared domain (aliases, array elements)."""
        if domain is not None and self.kind[idx] == VarKind.FLOAT and isinstance(domain, ast.FloatRange):
            self.flb[idx], self.fub[idx] = max(self.flb[idx], domain.lo), min(self.fub[idx], domain.hi)
            return
        if domain is None or self.kind[idx] not in (VarKind.INT, VarKind.BOOL):
            return
        if isinstance(domain, ast.FloatRange):
            return
        lo, hi = (
            max(self.lb[idx], domain.lo if domain.ranges else 1),
            min(self.ub[idx], domain.hi if domain.ranges else 0),
        )
        if domain.ranges:  # a bound left at "no bound" that the declaration reaches or passes
            self._representable(
                self.names[idx], domain.lo if lo <= -UNBOUNDED else 0, domain.hi if hi >= UNBOUNDED else 0
            )
        self.lb[idx], self.ub[idx] = lo, hi
        old = self.holes.get(idx)
        if len(domain.ranges) > 1 or old is not None:
            if old is None:
                old = IntSet.range(lo, hi)
            merged = old.intersect(domain)
            if len(merged.ranges) > 1:
                self.holes[idx] = merged
            else:
                self.holes.pop(idx, None)
            if merged.is_empty():
                self.lb[idx], self.ub[idx] = 1, 0
            else:
                self.lb[idx], self.ub[idx] = merged.lo, merged.hi

    # ---------------------------------------------------------------- expressions
    def _error(self, msg: str, fix: str | None = None) -> FznError:
        return FznError(msg, file=self.filename, line=self.line, fix=fix)

    def resolve(self, e):
        """An expression as a constant (int, bool, float, IntSet, list) or VarRef."""
        if isinstance(e, ast.Ident):
            try:
                return self.scope[e.name]
            except KeyError:
                raise self._error(
                    f"'{e.name}' is used before it is declared",
                    fix="declare every parameter and variable before the constraints that use it",
                ) from None
        if type(e) is IntList:  # ints only: nothing to resolve
            return e
        if isinstance(e, list):
            return [self.resolve(x) for x in e]
        if isinstance(e, ast.ArrayAccess):
            arr = self.scope.get(e.name)
            if not isinstance(arr, list):
                raise self._error(f"'{e.name}' is not an array")
            if not 1 <= e.index <= len(arr):
                raise self._error(f"index {e.index} is outside {e.name}'s 1..{len(arr)}")
            return arr[e.index - 1]
        return e

    def _encode(self, field: str, value, out: array) -> None:
        if field == "var":
            out.append(value.idx if isinstance(value, VarRef) else self._const_var(value))
        elif field == "var[]":
            out.append(len(value))
            for v in value:
                out.append(v.idx if isinstance(v, VarRef) else self._const_var(v))
        elif field == "int":
            out.append(int(value))
        elif field == "int[]":
            out.append(len(value))
            out.extend(value.packed() if type(value) is IntList else (int(v) for v in value))
        elif field == "set":
            out.append(len(value.ranges))
            for lo, hi in value.ranges:
                out.append(lo)
                out.append(hi)
        elif field == "set[]":
            out.append(len(value))
            for s in value:
                self._encode("set", s, out)
        elif field == "float":
            out.append(_float_bits(value))
        elif field == "float[]":
            out.append(len(value))
            out.extend(_float_bits(v) for v in value)
        else:  # pragma: no cover - registry and encoder are written together
            raise AssertionError(field)

    @staticmethod
    def _fits(field: str, value) -> bool:
        if field == "var":
            return not isinstance(value, list)
        if field == "var[]":
            return isinstance(value, list)
        if field == "int":
            return isinstance(value, (int, bool)) and not isinstance(value, VarRef)
        if field == "int[]":
            return type(value) is IntList or isinstance(value, list) and all(isinstance(v, (int, bool)) for v in value)
        if field == "set":
            return isinstance(value, IntSet)
        if field == "set[]":
            return isinstance(value, list) and all(isinstance(v, IntSet) for v in value)
        if field == "float":
            return isinstance(value, (float, int)) and not isinstance(value, bool)
        if field == "float[]":
            return isinstance(value, list) and all(isinstance(v, (float, int)) for v in value)
        return False

    # ---------------------------------------------------------------- items
    def add(self, item: ast.Item | ast.RawConstraint) -> None:
        self.line = item.line
        if type(item) is ast.RawConstraint:
            if not self.fast_constraint(item.text):
                self.add_parsed(item)
        elif type(item) is ast.RawVar:
            if not self.fast_var(item.text):
                self.add_parsed(item)
        elif isinstance(item, ast.Decl):
            self._decl(item)
        elif isinstance(item, ast.ConstraintItem):
            self._constraint(item)
        elif isinstance(item, ast.SolveItem):
            if self.solve is not None:
                raise self._error("a second solve item", fix="a FlatZinc model has exactly one solve item")
            self._solve(item)

    def add_parsed(self, item: ast.RawConstraint) -> None:
        """A constraint the fast reading left: parsed as any item, then lowered."""
        parsed = parse_raw(item, self.filename)
        self.line = parsed.line
        self.add(parsed)

    def _decl(self, d: ast.Decl) -> None:
        t = d.type
        if d.name in self.scope:
            raise self._error(f"'{d.name}' is declared twice")
        kind = _BASE_KIND[t.base]
        is_defined = ast.annotation(d.annotations, "is_defined_var") is not None
        if t.dims is None:
            if not t.is_var:
                if d.value is None:
                    raise self._error(f"parameter {d.name} has no value", fix="give it a value: `int: n = 3;`")
                value = self.resolve(d.value)
                if kind == VarKind.FLOAT and isinstance(value, int):
                    value = float(value)
                self.scope[d.name] = value
            elif d.value is None:
                self.scope[d.name] = VarRef(self._new_var(d.name, kind, t.domain, is_defined))
            else:
                value = self.resolve(d.value)
                if isinstance(value, VarRef):
                    self._narrow(value.idx, t.domain)
                    if is_defined:
                        self.defined_flag[value.idx] = 1
                    self.scope[d.name] = value
                else:  # a variable fixed in its declaration: keep it a variable of its own
                    if kind == VarKind.FLOAT:
                        idx = self._new_var(d.name, kind, ast.FloatRange(float(value), float(value)), const=True)
                    elif kind == VarKind.SET:
                        idx = self._const_var(value)
                    else:
                        if not isinstance(value, int):
                            what = (
                                "a set"
                                if isinstance(value, IntSet)
                                else "an array"
                                if isinstance(value, list)
                                else repr(value)
                            )
                            raise self._error(
                                f"variable {d.name} is given {what}, not a value of its type",
                                fix="regenerate the FlatZinc with `minizinc -c`",
                            )
                        v = int(value)
                        idx = self._new_var(d.name, kind, IntSet.range(v, v), const=True)
                        self._narrow(idx, t.domain)
                    self.scope[d.name] = VarRef(idx)
            self.scope_kind[d.name] = kind
            out = ast.annotation(d.annotations, "output_var")
            if out is not None:
                ref = self.scope[d.name]
                elem = ("var", ref.idx) if isinstance(ref, VarRef) else ("const", ref)
                self.outputs.append(OutputItem(d.name, kind, None, [elem]))
            return
        # arrays
        if d.value is None:
            if not t.is_var:
                raise self._error(f"parameter array {d.name} has no value")
            n = 1
            for dim in t.dims:
                if dim is None:
                    raise self._error(f"array {d.name} needs a fixed index set")
                n *= max(0, dim[1] - dim[0] + 1)
            elems: list[Any] = [VarRef(self._new_var(f"{d.name}[{i + 1}]", kind, t.domain)) for i in range(n)]
        else:
            elems = cast(list, self.resolve(d.value))
            if not isinstance(elems, list):
                raise self._error(f"array {d.name} must be given an array literal")
            self._check_array(d, kind, elems)
            if t.is_var and t.domain is not None:
                for e in elems:
                    if isinstance(e, VarRef):
                        self._narrow(e.idx, t.domain)
            if kind == VarKind.FLOAT and not t.is_var:
                elems = [float(e) for e in elems]
        self.scope[d.name] = elems
        self.scope_kind[d.name] = kind
        out = ast.annotation(d.annotations, "output_array")
        if out is not None:
            dims = self._output_dims(d.name, out.args, len(elems))
            self.outputs.append(
                OutputItem(
                    d.name, kind, dims, [("var", e.idx) if isinstance(e, VarRef) else ("const", e) for e in elems]
                )
            )

    def _output_dims(self, name: str, args: tuple | list, n: int) -> list[IntSet]:
        """output_array's index sets: one to six ranges whose sizes multiply to the array's
        length, as MiniZinc writes them. Anything else is refused: printed, a billion indices
        on a one-element array (or `array0d(, ...)`) reads back as another array or not at all."""
        fix = (
            "give output_array a list of index ranges, e.g. output_array([1..3, 1..4]) (regenerate with `minizinc -c`)"
        )
        if len(args) != 1 or not isinstance(args[0], list) or not 1 <= len(args[0]) <= 6:
            raise self._error(f"array {name}'s output_array needs a list of one to six index sets", fix=fix)
        dims = [self.resolve(x) for x in args[0]]
        size = 1
        for dim in dims:
            if not isinstance(dim, IntSet) or len(dim.ranges) > 1:
                raise self._error(f"array {name}'s output_array has an index set that is not a range: {dim!r}", fix=fix)
            size *= 0 if dim.is_empty() else dim.hi - dim.lo + 1
        if size != n:
            raise self._error(f"array {name} has {n} elements but its output_array's index sets give {size}", fix=fix)
        return dims

    def _check_array(self, d: ast.Decl, kind: VarKind, elems: list) -> None:
        """An array literal holds as many elements as its index sets say, each of its type."""
        t = d.type
        dims = t.dims or ()
        if all(dim is not None for dim in dims):
            n = 1
            for lo, hi in cast(tuple, dims):
                n *= max(0, hi - lo + 1)
            if n != len(elems):
                raise self._error(
                    f"array {d.name} is declared with {n} elements but given {len(elems)}",
                    fix="make the literal match the index set (regenerate with `minizinc -c`)",
                )
        if type(elems) is IntList and kind in (VarKind.INT, VarKind.FLOAT):
            return
        for i, e in enumerate(elems):
            if isinstance(e, VarRef):
                ok = t.is_var and self.kind[e.idx] == kind
            elif isinstance(e, bool):
                ok = kind == VarKind.BOOL
            elif isinstance(e, int):
                ok = kind in (VarKind.INT, VarKind.FLOAT)
            elif isinstance(e, float):
                ok = kind == VarKind.FLOAT
            elif isinstance(e, IntSet):
                ok = kind == VarKind.SET
            else:
                ok = False
            if not ok:
                what = (
                    "a variable"
                    if isinstance(e, VarRef)
                    else "a set"
                    if isinstance(e, IntSet)
                    else str(e).lower()
                    if isinstance(e, bool)
                    else repr(e)
                )
                raise self._error(
                    f"element {i + 1} of array {d.name} ({what}) is not of its type, "
                    f"{'var ' if t.is_var else ''}{t.base}",
                    fix="regenerate the FlatZinc with `minizinc -c`",
                )

    def _constraint(self, c: ast.ConstraintItem) -> None:
        candidates = kinds_named(c.name)
        if not candidates:
            raise Unsupported(
                f"unknown constraint '{c.name}'",
                file=self.filename,
                line=self.line,
                fix="compile the model with fzn-gpu's library (`minizinc --solver gpu-fzn`), "
                "which decomposes every global into constraints fzn-gpu runs",
            )
        args = [self.resolve(a) for a in c.args]
        for kind in candidates:
            if len(kind.signature) == len(args) and all(self._fits(f, a) for f, a in zip(kind.signature, args)):
                break
        else:
            sig = " or ".join("(" + ", ".join(k.signature) + ")" for k in candidates)
            raise self._error(
                f"constraint '{c.name}' has arguments of the wrong form; expected {sig}",
                fix="regenerate the FlatZinc with `minizinc -c`",
            )
        shape = _global_shape(kind.key, args)
        if shape:
            raise self._error(f"{c.name}: {shape}", fix="regenerate the FlatZinc with `minizinc -c`")
        if kind.key.startswith(("int_lin_", "bool_lin_")):
            args[0], args[1] = _repeats_merged(args[0], args[1])
        if kind.key == "fzn_all_different_int" and _repeats(args[0]):
            kind, args = _EMPTY_CLAUSE, [[], []]  # no assignment holds it: the root fails
        table = self.tables.get(kind.key)
        if table is None:
            table = self.tables[kind.key] = _TableBuilder(kind)
        for f, a in zip(kind.signature, args):
            self._encode(f, a, table.data)
        table.row_ptr.append(len(table.data))
        table.lines.append(self.line)
        defines = -1
        dv = ast.annotation(c.annotations, "defines_var")
        if dv is not None and dv.args:
            ref = self.resolve(dv.args[0])
            if isinstance(ref, VarRef):
                defines = ref.idx
                self.defined_by[ref.idx] = 1
        table.defines.append(defines)

    def fast_var(self, text: str) -> bool:
        """Declare `var bool|int|LO..HI: NAME ANNS` (no ';') straight from its text, as _decl
        would its parsed item, and return True; or change nothing and return False (see
        fast_constraint). Taken: annotations without arguments."""
        m = _FAST_VAR.fullmatch(text)
        if m is None:
            return False
        base, lo, hi, name, ann_text = m.groups()
        if name in self.scope or name in KEYWORDS:
            return False
        anns = _FAST_ANN_NAME.findall(ann_text) if ann_text else ()
        if not KEYWORDS.isdisjoint(anns):
            return False
        if base == "bool":
            kind, domain = VarKind.BOOL, None
        else:
            kind = VarKind.INT
            domain = None if base else self._domains.get((lo, hi))
            if domain is None and not base:
                domain = self._domains[(lo, hi)] = IntSet.range(int(lo), int(hi))
        idx = self._new_var(name, kind, domain, "is_defined_var" in anns)
        self.scope[name] = VarRef(idx)
        self.scope_kind[name] = kind
        if "output_var" in anns:
            self.outputs.append(OutputItem(name, kind, None, [("var", idx)]))
        return True

    def fast_constraint(self, text: str) -> bool:
        """Lower `constraint NAME(ARGS) ANNS` (no ';') straight from its text, as _constraint
        would lower its parsed item, and return True; or change nothing and return False, for
        the parser and _constraint to read it (and report what is wrong with it). Taken: the
        shape MiniZinc writes, arguments without white space that are ints, bools, names,
        name[i] and flat arrays of them, and annotations `:: name` or `:: name(name)`. An array
        of variables' names is read as their indices alone (_Indices): most of a big model's
        text, and a VarRef per name cost more than the rest of its lowering."""
        m = _FAST_ITEM.fullmatch(text)
        if m is None:
            return False
        name, arg_text, ann_text = m.groups()
        scope: dict[str, Any] = self.scope
        args: list = []
        shape: list = [name]
        value: Any
        cls: object
        for part in _FAST_ARG.findall(arg_text) if "[" in arg_text else arg_text.split(","):
            if part[0] == "[":
                inner = part[1:-1]
                if not inner:
                    value, cls = [], "[]"
                elif inner[0] in _INT_START and _FAST_INTS.fullmatch(inner):
                    value, cls = list(map(int, inner.split(","))), "[int]"
                else:
                    try:
                        value, cls = _Indices([scope[n].idx for n in inner.split(",")]), "[var]"
                    except (KeyError, AttributeError):  # constants among them, or no names
                        found = _fast_list(inner, scope)
                        if found is None:
                            return False
                        value, cls = found, _list_shape(found)
            else:
                value = scope.get(part)
                if value is None:
                    value = _fast_scalar(part, scope)
                t = type(value)
                if t is VarRef or t is int or t is bool:
                    cls = t
                elif isinstance(value, list):  # an array's name
                    if type(value) is not IntList and any(type(v) not in _SCALAR_TYPES for v in value):
                        return False
                    cls = _list_shape(value)
                else:
                    return False
            args.append(value)
            shape.append(cls)
        defines = -1
        if ann_text:
            for ann, ann_arg in _FAST_ANN.findall(ann_text):
                if ann == "defines_var":
                    if not ann_arg:
                        break  # defines_var without an argument: as _constraint reads it, none
                    ref = scope.get(ann_arg)
                    if ref is None or ann_arg in KEYWORDS:
                        return False
                    if isinstance(ref, VarRef):
                        defines = ref.idx
                    break
        key = tuple(shape)
        plan = self._fast_plans.get(key)
        if plan is None:
            like = [_refs(a) for a in args]
            kind = next(
                (
                    k
                    for k in kinds_named(name)
                    if len(k.signature) == len(like) and all(self._fits(f, a) for f, a in zip(k.signature, like))
                ),
                None,
            )
            plan = self._fast_plans[key] = (kind, kind is not None and kind.key.startswith(_LINEAR))
        kind, linear = plan
        if kind is None or _global_shape(kind.key, args):
            return False  # _constraint says what is wrong
        if linear:
            xs = args[1]
            if type(xs) is not _Indices or len(set(xs)) < len(xs):
                args[0], args[1] = _repeats_merged(args[0], _refs(xs))
        elif kind.key == "fzn_all_different_int" and _repeats(_refs(args[0])):
            kind, args = _EMPTY_CLAUSE, [[], []]
        table = self.tables.get(kind.key)
        if table is None:
            table = self.tables[kind.key] = _TableBuilder(kind)
        data = table.data
        for f, a in zip(kind.signature, args):
            t = type(a)
            if t is _Indices:
                data.append(len(a))
                data.extend(a)
            elif t is VarRef:
                data.append(a.idx)
            elif t is IntList and f == "int[]":
                data.append(len(a))
                data.extend(a.packed())
            elif t is list and f == "int[]":
                data.append(len(a))
                data.extend(a)
            else:
                self._encode(f, a, data)
        table.row_ptr.append(len(data))
        table.lines.append(self.line)
        if defines >= 0:
            self.defined_by[defines] = 1
        table.defines.append(defines)
        return True

    def _vars_of(self, e) -> list[int]:
        value = self.resolve(e)
        if not isinstance(value, list):
            value = [value]
        return [v.idx for v in value if isinstance(v, VarRef)]

    def _search(self, ann: Call, out: list[SearchStep]) -> LnsSpec | None:
        lns = None
        name = ann.name
        if name == "seq_search" and ann.args:
            for sub in ann.args[0]:
                if isinstance(sub, Call):
                    lns = self._search(sub, out) or lns
        elif name in ("int_search", "bool_search", "set_search") and len(ann.args) >= 3:
            out.append(SearchStep(name[:-7], self._vars_of(ann.args[0]), _word(ann.args[1]), _word(ann.args[2])))
        elif name == "float_search" and len(ann.args) >= 4:
            precision = self.resolve(ann.args[1])
            if not isinstance(precision, (int, float)) or isinstance(precision, bool) or not precision > 0:
                raise self._error(
                    f"float_search's precision {precision!r} is not a positive number",
                    fix="give a precision such as 0.0001",
                )
            out.append(
                SearchStep(
                    "float", self._vars_of(ann.args[0]), _word(ann.args[2]), _word(ann.args[3]), float(precision)
                )
            )
        elif name == "lns":
            lns = self._lns(ann)
        return lns

    def _restart(self, ann: Call) -> RestartSpec | None:
        """MiniZinc's restart annotation, checked as Gecode checks it (a positive scale, a
        geometric base above 1); None for any other annotation."""
        kind = ann.name[len("restart_") :] if ann.name.startswith("restart_") else None
        if kind not in RESTART_KINDS:
            return None
        want = {"none": 0, "geometric": 2}.get(kind, 1)
        if len(ann.args) != want:
            raise self._error(
                f"{ann.name} takes {want} argument{'s' if want != 1 else ''}",
                fix="write restart_luby(S), restart_geometric(B, S), restart_linear(S), "
                "restart_constant(S) or restart_none",
            )
        args = [self.resolve(a) for a in ann.args]
        if kind == "none":
            return RestartSpec("none")
        scale = args[-1]
        if not isinstance(scale, int) or isinstance(scale, bool) or scale < 1:
            raise self._error(f"{ann.name}'s scale {scale!r} is not a positive integer", fix="give a scale such as 100")
        base = args[0] if kind == "geometric" else 0.0
        if kind == "geometric" and (not isinstance(base, (int, float)) or isinstance(base, bool) or not base > 1):
            raise self._error(
                f"restart_geometric's base {base!r} is not a number above 1", fix="give a base such as 1.5"
            )
        return RestartSpec(kind, scale, float(base))

    def _lns(self, ann: Call) -> LnsSpec:
        args = list(ann.args)
        if len(args) != 7:
            raise self._error("lns(...) takes 7 arguments: lns(P, T, M, H, STRATEGY, S, TIMEOUT)")
        strategy = _word(args[4])
        if strategy not in LNS_STRATEGIES:
            raise self._error(f"unknown LNS strategy '{strategy}'", fix="use one of " + ", ".join(LNS_STRATEGIES))
        nums = [self.resolve(a) for a in (args[0], args[1], args[2], args[3], args[5], args[6])]
        if not all(isinstance(x, (int, float)) and not isinstance(x, VarRef) for x in nums):
            raise self._error("lns(...) needs numbers for P, T, M, H, S and TIMEOUT")
        p, t, m, h, s, timeout = nums
        return LnsSpec(int(p), int(t), int(m), int(h), strategy, int(s), float(timeout))

    def _solve(self, s: ast.SolveItem) -> None:
        objective = None
        if s.objective is not None:
            ref = self.resolve(s.objective)
            objective = ("var", ref.idx) if isinstance(ref, VarRef) else ("const", ref)
        steps: list[SearchStep] = []
        lns = restart = None
        for ann in s.annotations:
            lns = self._search(ann, steps) or lns
            if isinstance(ann, Call):
                restart = self._restart(ann) or restart
        self.solve = Solve(s.kind, objective, steps, lns, s.line, restart)

    def finish(self) -> Model:
        if self.solve is None:
            raise FznError(
                "the model has no solve item",
                file=self.filename,
                line=max(self.line, 1),
                fix="end the model with `solve satisfy;`, `solve minimize x;` or `solve maximize x;`",
            )
        n = len(self.names)
        variables = Variables(
            names=self.names,
            kind=np.frombuffer(self.kind, dtype=np.int8).copy() if n else np.zeros(0, np.int8),
            lb=np.frombuffer(self.lb, dtype=np.int64).copy() if n else np.zeros(0, np.int64),
            ub=np.frombuffer(self.ub, dtype=np.int64).copy() if n else np.zeros(0, np.int64),
            flb=np.frombuffer(self.flb, dtype=np.float64).copy() if n else np.zeros(0),
            fub=np.frombuffer(self.fub, dtype=np.float64).copy() if n else np.zeros(0),
            is_aux=(
                np.frombuffer(bytes(self.defined_flag), dtype=np.uint8)
                & np.frombuffer(bytes(self.defined_by), dtype=np.uint8)
            ).astype(bool)
            if n
            else np.zeros(0, bool),
            is_const=np.frombuffer(bytes(self.is_const), dtype=np.uint8).astype(bool) if n else np.zeros(0, bool),
            holes=self.holes,
            lines=np.frombuffer(self.decl_lines, dtype=np.int32).copy() if n else np.zeros(0, np.int32),
        )
        assert len(self.decl_lines) == n, "a variable without its declaring line"  # every path adds both
        tables = {k: b.finish() for k, b in self.tables.items()}
        return Model(self.filename, variables, tables, self.outputs, self.solve)


def _global_shape(key: str, args: list) -> str | None:
    """What is wrong with a native global's arrays (kernels/globals.cl reads them as their
    lengths promise), or None."""
    if key.startswith(("int_lin_", "bool_lin_", "float_lin_")):
        if len(args[0]) != len(args[1]):
            return f"its {len(args[0])} coefficients and {len(args[1])} variables differ in length"
    elif key in ("fzn_table_int", "fzn_table_bool"):
        n, m = len(args[0]), len(args[1])
        if (n == 0 and m) or (n and m % n):
            return f"the table's {m} values are not rows of {n}"
    elif key == "fzn_gpu_regular":
        q, s, d = args[1], args[2], args[3]
        if not 1 <= q <= 64 * REGULAR_WORDS or s < 1 or len(d) != q * s:
            return f"the automaton needs 1..{64 * REGULAR_WORDS} states, a symbol, and a Q x S transition table"
        if any(not 0 <= t <= q for t in d):
            return "a transition leads outside the states 1..Q (0: none)"
    elif key.startswith("fzn_global_cardinality"):
        if len({len(a) for a in args[1:]}) != 1:
            return "the cover and its counts (or bounds) differ in length"
    elif key == "fzn_gpu_bin_packing_load":
        if len(args[2]) != len(args[3]):
            return "the items' bins and weights differ in length"
    elif key == "fzn_diffn":
        if len({len(a) for a in args}) != 1:
            return "the rectangles' x, y, widths and heights differ in length"
    elif key == "fzn_cumulative":
        if not len(args[0]) == len(args[1]) == len(args[2]):
            return "the starts, durations and resource usages differ in length"
    return None


def _repeats(xs: list) -> bool:
    """Whether a list names one variable, or one constant, twice. all_different over it holds
    for no assignment, yet a propagator that takes its places apart fails only once that
    variable is fixed: fuzz seed 51452 (all_different([x1, x2, x2, x2]), x1 over 32 bits
    labelled first) ran out of time where Gecode fails at once."""
    if not all(isinstance(x, (VarRef, int)) for x in xs):  # malformed: said where it is encoded
        return False
    keys = [("v", x.idx) if isinstance(x, VarRef) else ("c", x) for x in xs]
    return len(set(keys)) < len(keys)


_EMPTY_CLAUSE = next(k for k in kinds_named("bool_clause") if len(k.signature) == 2)

# Lowering.fast_constraint's reading of the plain shape of a constraint item: a predicate's
# name, arguments without white space (ints, names, name[i], flat arrays), then annotations
_FAST_NAME = NAME
_FAST_PART = rf"\[[^\[\]\s]*\]|{_FAST_NAME}\[[0-9]+\]|[^,\[\]\s()]+"
_FAST_ITEM = re.compile(
    rf"constraint\s+({_FAST_NAME})\s*\(((?:{_FAST_PART})(?:,(?:{_FAST_PART}))*)\)"
    rf"((?:\s*::\s*{_FAST_NAME}(?:\s*\(\s*{_FAST_NAME}\s*\))?)*)\s*"
)
_FAST_ARG = re.compile(_FAST_PART)
_FAST_VAR = re.compile(
    rf"var\s+(?:(bool|int)|(-?[0-9]{{1,18}})\s*\.\.\s*(-?[0-9]{{1,18}}))\s*:\s*({_FAST_NAME})((?:\s*::\s*{_FAST_NAME})*)\s*"
)
_FAST_ANN_NAME = re.compile(rf"::\s*({_FAST_NAME})")
_FAST_ANN = re.compile(rf"::\s*({_FAST_NAME})(?:\s*\(\s*({_FAST_NAME})\s*\))?")
_FAST_INT = re.compile(r"-?[0-9]{1,18}")
_FAST_INTS = re.compile(r"-?[0-9]{1,18}(?:,-?[0-9]{1,18})*")
_FAST_NAMES = re.compile(rf"{_FAST_NAME}(?:,{_FAST_NAME})*")
_FAST_ACCESS = re.compile(rf"({_FAST_NAME})\[([0-9]{{1,9}})\]")
_SCALAR_TYPES = (VarRef, int, bool)
_INT_START = frozenset("-0123456789")
_LINEAR = ("int_lin_", "bool_lin_")


class _Indices(list):
    """Lowering.fast_constraint's array of variables, as their indices (no VarRef each)."""

    __slots__ = ()


def _refs(value):
    """An _Indices as the VarRefs the parsed item's lowering holds; any other value as it is."""
    return [VarRef(i) for i in value] if type(value) is _Indices else value


def _fast_scalar(token: str, scope: dict):
    """An argument or array element's value, as resolve() gives it for the parsed item; None
    for anything fast_constraint leaves to the parser."""
    if _FAST_INT.fullmatch(token):
        return int(token)
    if token == "true" or token == "false":
        return token == "true"
    m = _FAST_ACCESS.fullmatch(token)
    if m:
        arr = scope.get(m.group(1))
        index = int(m.group(2))
        if not isinstance(arr, list) or not 1 <= index <= len(arr) or m.group(1) in KEYWORDS:
            return None
        return arr[index - 1]
    if token in KEYWORDS:
        return None
    return scope.get(token)  # None where it is no name or not declared: the parser says which


def _fast_list(inner: str, scope: dict) -> list | None:
    """A flat array literal's values, or None (see _fast_scalar)."""
    if not inner:
        return []
    if _FAST_INTS.fullmatch(inner):
        return IntList(map(int, inner.split(",")))
    if _FAST_NAMES.fullmatch(inner):
        values = [scope.get(n) for n in inner.split(",")]
        if all(type(v) is VarRef for v in values):
            return values
    out = []
    for token in inner.split(","):
        v = _fast_scalar(token, scope)
        if type(v) not in _SCALAR_TYPES:
            return None
        out.append(v)
    return out


def _list_shape(value: list) -> str:
    """What of a list decides which signatures fit it (Lowering._fits): empty, holding a
    variable, or constants only."""
    if not value:
        return "[]"
    if type(value) is IntList:
        return "[int]"
    return "[var]" if any(type(v) is VarRef for v in value) else "[int]"


def _repeats_merged(coefs, xs: list) -> tuple:
    """A linear row's terms with each variable once, its coefficients summed (-900*x + -1*x:
    -901*x), as Gecode posts them. Bounds reasoning takes each term apart, so a variable twice
    limits itself only through the other term's bound: x >= 0 from -900*x - x <= 1 was
    x >= -2,386,092, and labelling from there took seconds. The row as given where no variable
    repeats, or where a sum leaves ±INT_LIMIT (beyond the device's 32-bit values)."""
    refs = [x.idx for x in xs if isinstance(x, VarRef)]
    if len(set(refs)) == len(refs):
        return coefs, xs
    merged: dict[int, int] = {}  # variable -> position of its term in the merged row
    out_coefs: list[int] = []
    out_xs: list = []
    for a, x in zip(coefs, xs):
        at = merged.get(x.idx) if isinstance(x, VarRef) else None
        if at is None:
            if isinstance(x, VarRef):
                merged[x.idx] = len(out_xs)
            out_coefs.append(int(a))
            out_xs.append(x)
        else:
            out_coefs[at] += int(a)
            if abs(out_coefs[at]) > INT_LIMIT:
                return coefs, xs
    return out_coefs, out_xs


def _word(e) -> str:
    return e.name if isinstance(e, (ast.Ident, Call)) else str(e)


def lower(
    items: Iterable[ast.Item | ast.RawConstraint], filename: str = "<string>", reading: list | None = None
) -> Model:
    """The typed model of a stream of FlatZinc items. `reading`, where given, gets the Lowering
    (its `line`: the item it is at), for a time limit that ends the run while it reads."""
    low = Lowering(filename)
    if reading is not None:
        reading.append(low)
    collecting = gc.isenabled()
    gc.disable()  # lowering makes no cycles, and each collection walked every object read so far
    try:
        _lower_items(low, items, filename)
    finally:
        if collecting:
            gc.enable()
    return low.finish()


def _lower_items(low: Lowering, items: Iterable[ast.Item | ast.RawConstraint], filename: str) -> None:
    raw, fast, fast_var = ast.RawConstraint, low.fast_constraint, low.fast_var
    for item in items:
        try:
            if isinstance(item, raw):  # most of a big model: its own branch, no call to add()
                low.line = item.line
                if not (fast(item.text) if type(item) is raw else fast_var(item.text)):
                    low.add_parsed(item)
                continue
            low.add(item)
        except FznError as err:
            raise err.located(filename, item.line) from None
        except OverflowError:
            raise FznError(
                "a number on this line is too large (beyond 64 bits)",
                file=filename,
                line=item.line,
                fix=SCALE_DOWN,
            ) from None
        except RecursionError:
            raise nested_too_deeply(filename, item.line) from None


def load(path: str, reading: list | None = None) -> Model:
    """Parse and lower a FlatZinc file ('-' for standard input); `reading` as for lower()."""
    text, name = read_text(path)
    return lower(parse_items_raw(text, name), name, reading)
