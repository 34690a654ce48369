"""The values a solution row carries beyond its ints: set variables (bitmap words, sets.py) and
float variables (boxes, floats.py), as one decoder for the printer and the checker."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import floats, sets


def decoder(dm) -> Callable[[np.ndarray], dict[int, object]] | None:
    """row -> {variable: its IntSet or float} for the model's set and float variables; None
    when it has neither (every value is the row's int)."""
    parts = [d for d in (sets.decoder(dm), floats.decoder(dm)) if d is not None]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]

    def decode(row) -> dict[int, object]:
        out: dict[int, object] = {}
        for part in parts:
            out.update(part(row))
        return out

    return decode
