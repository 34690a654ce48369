"""The FlatZinc syntax tree: plain dataclasses, one per item and literal kind.

Literals are Python values where the meaning is plain (int, bool, float, list for arrays);
the rest get a small class so that lowering can tell an identifier from a string."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Ident:
    name: str


@dataclass(frozen=True)
class ArrayAccess:
    name: str
    index: int  # 1-based, as written


@dataclass(frozen=True)
class Str:
    value: str


@dataclass(frozen=True)
class IntSet:
    """A set of ints as sorted, disjoint, non-adjacent closed ranges (an empty tuple is {})."""

    ranges: tuple[tuple[int, int], ...]

    @staticmethod
    def range(lo: int, hi: int) -> IntSet:
        return IntSet(((lo, hi),) if lo <= hi else ())

    @staticmethod
    def of(values) -> IntSet:
        ranges: list[list[int]] = []
        for v in sorted(set(values)):
            if ranges and ranges[-1][1] + 1 == v:
                ranges[-1][1] = v
            else:
                ranges.append([v, v])
        return IntSet(tuple((a, b) for a, b in ranges))

    def __contains__(self, v: int) -> bool:
        return any(a <= v <= b for a, b in self.ranges)

    def __len__(self) -> int:
        return sum(b - a + 1 for a, b in self.ranges)

    def values(self) -> list[int]:
        return [v for a, b in self.ranges for v in range(a, b + 1)]

    @property
    def lo(self) -> int:
        return self.ranges[0][0]

    @property
    def hi(self) -> int:
        return self.ranges[-1][1]

    def is_empty(self) -> bool:
        return not self.ranges

    def intersect(self, other: IntSet) -> IntSet:
        out = []
        i = j = 0
        while i < len(self.ranges) and j < len(other.ranges):
            lo = max(self.ranges[i][0], other.ranges[j][0])
            hi = min(self.ranges[i][1], other.ranges[j][1])
            if lo <= hi:
                out.append((lo, hi))
            if self.ranges[i][1] < other.ranges[j][1]:
                i += 1
            else:
                j += 1
        return IntSet(tuple(out))

    def shifted(self, d: int) -> IntSet:
        """{v + d : v in self}."""
        return IntSet(tuple((a + d, b + d) for a, b in self.ranges))


@dataclass(frozen=True)
class FloatRange:
    lo: float
    hi: float


@dataclass(frozen=True)
class Call:
    """An annotation, possibly with arguments: `int_search(x, first_fail, ...)`, `output_var`."""

    name: str
    args: tuple = ()


class IntList(list):
    """An array literal of plain ints, read by the parser's fast path (a big model's data
    arrays are most of its text). Lowering encodes it once, however many constraints use it."""

    __slots__ = ("_packed",)
    _packed: array

    def packed(self) -> array:
        try:
            return self._packed
        except AttributeError:
            self._packed = array("q", self)
            return self._packed


Expr = int | bool | float | Str | Ident | ArrayAccess | IntSet | FloatRange | Call | list


@dataclass(frozen=True)
class Type:
    """`base` is bool, int, float or set; `domain` narrows it (IntSet or FloatRange, or None for
    unbounded); for sets, `domain` is the universe of elements. `dims` holds one (lo, hi) per
    array dimension (None for an `int` index set), or is None for a scalar."""

    is_var: bool
    base: str
    domain: IntSet | FloatRange | None = None
    dims: tuple | None = None


@dataclass
class Decl:
    type: Type
    name: str
    annotations: list[Call] = field(default_factory=list)
    value: Expr | None = None
    line: int = 0


@dataclass
class PredicateDecl:
    name: str
    line: int = 0


@dataclass
class ConstraintItem:
    name: str
    args: list
    annotations: list[Call] = field(default_factory=list)
    line: int = 0


class RawConstraint:
    """A constraint item alone on its line, as its text, for lowering to read straight into its
    table where the text is of the plain shape MiniZinc writes (`constraint
    int_lin_le([1,-1],[x,y],0):: defines_var(y);`): a big model's constraints are most of its
    items, and their objects and resolution cost more than the lowering itself
    (lower.Lowering.fast_constraint). Where the text is of any other shape, `parse()` reads it
    as every item is read, its errors located in the file (`parser.parse_raw`)."""

    __slots__ = ("text", "line")

    def __init__(self, text: str, line: int):
        self.text = text  # the item without its ';', from the start of its line
        self.line = line


class RawVar(RawConstraint):
    """A plain variable's declaration alone on its line, as its text (`var 0..9:
    X_INTRODUCED_3_:: output_var;`), for lowering to read (lower.Lowering.fast_var);
    `parser.parse_raw` reads any other as every item is read."""

    __slots__ = ()


@dataclass
class SolveItem:
    kind: str  # satisfy, minimize, maximize
    objective: Expr | None
    annotations: list[Call] = field(default_factory=list)
    line: int = 0


Item = Decl | PredicateDecl | ConstraintItem | SolveItem


def annotation(anns: list[Call], name: str) -> Call | None:
    """The first annotation called `name`, if any."""
    for a in anns:
        if a.name == name:
            return a
    return None
