"""Constraint rows encoded apart from the int table layout (set and float kinds): each row is
re-read field by field of its kind's signature and written in the kernel's form."""

from __future__ import annotations

from collections.abc import Callable

from ..flatzinc.model import Model

# (signature field, the row's source words, index of the field's first word, output words,
# watched variables) -> index past the field
FieldEncoder = Callable[[str, list, int, list, list], int]


def reencode(model: Model, domain: str, first_cid: int, encode_field: FieldEncoder):
    """Every row of the kinds of `domain`, numbered from first_cid: (kind ids, rows, watched
    (constraint, var) pairs)."""
    kinds: list[int] = []
    rows: list[list[int]] = []
    pairs: list[tuple[int, int]] = []
    for table in model.tables.values():
        if not len(table) or table.kind.domain != domain:
            continue
        for r in range(len(table)):
            src = table.row(r).tolist()
            out: list[int] = []
            watched: list[int] = []
            i = 0
            for f in table.kind.signature:
                i = encode_field(f, src, i, out, watched)
            pairs.extend((first_cid + len(kinds), w) for w in watched)
            kinds.append(table.kind.id)
            rows.append(out)
    return kinds, rows, pairs
