"""The FlatZinc solution stream exactly as MiniZinc's solns2out reads it: `x = 3;` lines,
`----------` after each solution, `==========` when the search space is exhausted, the status
lines, and `%%%mzn-stat:` statistics."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import TextIO, cast

import numpy as np

from .flatzinc.ast import IntSet
from .flatzinc.model import Model, OutputItem, VarKind
from .writer import StreamWriter

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
    return _item_line(
        item, [format_value(item.kind, value_of(cast(int, ref)) if tag == "var" else ref) for tag, ref in item.elems]
    )


def _item_line(item: OutputItem, vals: list[str]) -> str:
    if item.dims is None:
        return f"{item.name} = {vals[0]};"
    dims = ", ".join(f"{d.lo}..{d.hi}" if not d.is_empty() else "1..0" for d in item.dims)
    return f"{item.name} = array{len(item.dims)}d({dims}, [{', '.join(vals)}]);"


class SolutionTemplate:
    """The solution text with one `%s` slot per output variable, built once per model, so a
    batch of solutions (rows of int values from the device) is printed with one string
    formatting per solution instead of per value: 14-queens prints 365,596 solutions."""

    def __init__(self, model: Model):
        self.columns: list[int] = []
        bools: list[int] = []
        lines = []
        for item in model.outputs:
            vals = []
            for tag, ref in item.elems:
                if tag == "var" and item.kind in (VarKind.INT, VarKind.BOOL):
                    if item.kind == VarKind.BOOL:
                        bools.append(len(self.columns))
                    self.columns.append(cast(int, ref))
                    vals.append("%s")
                elif tag == "var":
                    raise ValueError(f"{item.name}: device solutions hold only int and bool variables")
                else:  # constants are fixed text
                    vals.append(format_value(item.kind, ref).replace("%", "%%"))
            lines.append(_item_line(item, vals))
        lines.append(SOLUTION_END)
        self.text = "\n".join(lines) + "\n"
        self.bool_columns = bools
        # a solution's text, estimated before formatting: the fixed text and a few digits a value
        self.row_bytes = len(self.text) + 4 * len(self.columns)

    def format(self, rows: np.ndarray) -> str:
        """The text of every solution in `rows` (one row of variable values per solution)."""
        if not len(rows):
            return ""
        picked = np.asarray(rows)[:, self.columns]
        if self.bool_columns:
            picked = picked.astype(object)
            for j in self.bool_columns:
                picked[:, j] = np.where(picked[:, j] != 0, "true", "false")
        return "".join([self.text % tuple(r) for r in picked.tolist()])


def format_solution(model: Model, value_of: Callable[[int], object]) -> str:
    lines = [format_item(o, value_of) for o in model.outputs]
    lines.append(SOLUTION_END)
    return "\n".join(lines) + "\n"


def format_stats(stats: dict[str, object]) -> str:
    """`%%%mzn-stat: name=value` lines and the closing `%%%mzn-stat-end`."""
    lines = []
    for name, value in stats.items():
        if isinstance(value, float) and name == "objective":
            value = f"{value:.12g}"  # a float objective, to its precision
        elif isinstance(value, float):
            value = f"{value:.6f}".rstrip("0").rstrip(".") if value == value else "nan"
        elif isinstance(value, str):
            value = f'"{value}"'
        lines.append(f"%%%mzn-stat: {name}={value}")
    lines.append("%%%mzn-stat-end")
    return "\n".join(lines) + "\n"


class Printer:
    """Writes the stream. Solutions go through a writer thread (writer.py), so the search runs
    on while MiniZinc reads them; the status lines and statistics wait for the solutions before
    them and are written at once."""

    def __init__(self, model: Model, out: TextIO | None = None):
        self.model = model
        self.out = out or sys.stdout
        self._template: SolutionTemplate | None = None
        self._writer = StreamWriter(self.out)
        # row -> {variable: IntSet or float}, for models with set or float variables (engine/decode.py)
        self.decoder: Callable[[np.ndarray], dict[int, object]] | None = None

    def solutions(self, rows: np.ndarray, supersedes: bool = False) -> None:
        """Hand over solutions (rows of every variable's value) to be printed in order;
        `supersedes` (an optimisation's improvements, best last): they replace those handed
        over before and not yet written (writer.py)."""
        rows = np.array(rows, copy=True)  # the caller's buffer is reused by the next slice
        if self.decoder is not None:  # one solution at a time: sets and floats are decoded
            decoder = self.decoder
            size = len(rows) * 16 * (rows.shape[1] + 4)
            self._writer.put(lambda: self._decoded_text(rows, decoder), size, len(rows), supersedes)
            return
        if self._template is None:
            self._template = SolutionTemplate(self.model)
        template = self._template
        self._writer.put(lambda: template.format(rows), len(rows) * template.row_bytes, len(rows), supersedes)

    @property
    def superseded(self) -> int:
        """Solutions handed over and replaced by a better one before they were written."""
        return self._writer.superseded

    def _decoded_text(self, rows: np.ndarray, decoder: Callable[[np.ndarray], dict[int, object]]) -> str:
        parts = []
        for row in rows:
            decoded = decoder(row)
            parts.append(format_solution(self.model, lambda v: decoded[v] if v in decoded else int(row[v])))
        return "".join(parts)

    def drain(self) -> None:
        """Wait until every solution handed over is written."""
        self._writer.drain()

    def status(self, line: str) -> None:
        self.drain()
        self.out.write(line + "\n")
        self.out.flush()

    def stats(self, stats: dict[str, object]) -> None:
        self.drain()
        self.out.write(format_stats(stats))
        self.out.flush()
