"""The FlatZinc solution stream exactly as MiniZinc's solns2out reads it: `x = 3;` lines,
`----------` after each solution, `==========` when the search space is exhausted, the status
lines, and `%%%mzn-stat:` statistics."""

from __future__ import annotations

import math
import sys
from typing import Callable, TextIO

from .ast import IntSet
from .model import Model, OutputItem, VarKind

SOLUTION_END = "----------"
SEARCH_COMPLETE = "=========="
UNSATISFIABLE = "=====UNSATISFIABLE====="
UNKNOWN = "=====UNKNOWN====="
ERROR = "=====ERROR====="
UNBOUNDED_STATUS = "=====UNBOUNDED====="


def format_set(s: IntSet) -> str:
    """`{}`, `3..7` for one range, else `{1,3,5}` (the forms MiniZinc writes)."""
    if s.is_empty():
        return "{}"
    if len(s.ranges) == 1 and s.hi > s.lo:
        return f"{s.lo}..{s.hi}"
    return "{" + ",".join(str(v) for v in s.values()) + "}"


def format_float(x: float) -> str:
    if math.isinf(x):
        return "infinity" if x > 0 else "-infinity"
    text = repr(float(x))
    return text


def format_value(kind: VarKind, value) -> str:
    if kind == VarKind.BOOL:
        return "true" if value else "false"
    if kind == VarKind.INT:
        return str(int(value))
    if kind == VarKind.FLOAT:
        return format_float(value)
    if isinstance(value, IntSet):
        return format_set(value)
    return format_set(IntSet.of(value))


def format_item(item: OutputItem, value_of: Callable[[int], object]) -> str:
    """One output line; `value_of(var_index)` gives a variable's value in the solution."""
    vals = [format_value(item.kind, value_of(ref) if tag == "var" else ref) for tag, ref in item.elems]
    if item.dims is None:
        return f"{item.name} = {vals[0]};"
    dims = ", ".join(f"{d.lo}..{d.hi}" if not d.is_empty() else "1..0" for d in item.dims)
    return f"{item.name} = array{len(item.dims)}d({dims}, [{', '.join(vals)}]);"


def format_solution(model: Model, value_of: Callable[[int], object]) -> str:
    lines = [format_item(o, value_of) for o in model.outputs]
    lines.append(SOLUTION_END)
    return "\n".join(lines) + "\n"


def format_stats(stats: dict[str, object]) -> str:
    """`%%%mzn-stat: name=value` lines and the closing `%%%mzn-stat-end`."""
    lines = []
    for name, value in stats.items():
        if isinstance(value, float):
            value = f"{value:.6f}".rstrip("0").rstrip(".") if value == value else "nan"
        elif isinstance(value, str):
            value = f'"{value}"'
        lines.append(f"%%%mzn-stat: {name}={value}")
    lines.append("%%%mzn-stat-end")
    return "\n".join(lines) + "\n"


class Printer:
    """Writes the stream and flushes at each solution so MiniZinc sees it at once."""

    def __init__(self, model: Model, out: TextIO | None = None):
        self.model = model
        self.out = out or sys.stdout
        self.solutions = 0

    def solution(self, value_of: Callable[[int], object]) -> None:
        self.out.write(format_solution(self.model, value_of))
        self.out.flush()
        self.solutions += 1

    def status(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()

    def stats(self, stats: dict[str, object]) -> None:
        self.out.write(format_stats(stats))
        self.out.flush()
