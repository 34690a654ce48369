"""The search kernels' packed parameters on the host: several arrays end to end in one buffer
(kernel_abi.PACKED), and every scalar in one settings row (kernel_abi.SETTINGS), so a kernel
takes at most 20 parameters (18 for the work-item kernel, 20 for the work-group one). The layout is
kernel_abi.pack_layout's; the offsets travel in the settings, where the generated
SEARCH_*_UNPACK statements read them."""

from __future__ import annotations

import numpy as np

from ..errors import FznError
from ..runtime.kernel_abi import PACKED, SETTING_SLOTS, WIDE_PACKED, Part, pack_layout, settings_names

INT_MAX = 2**31 - 1


def layout(kernel: str, packed: str, counts: dict[str, int]) -> tuple[dict[str, int], int]:
    """The byte offsets of packed parameter `packed`'s arrays (`counts[name]` elements each),
    as the settings name them (at_<name>), and the buffer's bytes."""
    at, total = pack_layout(PACKED[kernel][packed], counts)
    if packed not in WIDE_PACKED and total > INT_MAX:
        raise FznError(
            f"the search kernel's {packed} would take {total / 2**30:.1f} GiB, more than its 32-bit offsets reach",
            fix="try a smaller model",
        )
    return {f"at_{name}": offset for name, offset in at.items()}, total


def pack(kernel: str, packed: str, arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, dict[str, int]]:
    """Packed parameter `packed` holding `arrays` (by part name): its bytes and offsets."""
    parts = PACKED[kernel][packed]
    at, total = layout(kernel, packed, {p.name: np.asarray(arrays[p.name]).size for p in parts})
    out = np.zeros(total, np.uint8)
    for part in parts:
        a = _checked(part, arrays[part.name])
        start = at[f"at_{part.name}"]
        out[start : start + a.nbytes] = a.view(np.uint8)
    return out, at


def unpack_into(kernel: str, packed: str, data: np.ndarray, at: dict[str, int], arrays: dict[str, np.ndarray]) -> None:
    """The packed bytes `data` (laid out at `at`) copied back into `arrays` (by part name)."""
    for part in PACKED[kernel][packed]:
        a = arrays.get(part.name)
        if a is None or not a.size:
            continue
        start = at[f"at_{part.name}"]
        a.reshape(-1)[:] = data[start : start + a.nbytes].view(a.dtype)


def _checked(part: Part, a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a).reshape(-1)
    if a.dtype.itemsize != part.itemsize:
        raise FznError(
            f"the search kernel's {part.name}: {a.dtype} where the kernel reads {part.ctype} (an internal error)"
        )
    return a


# the kernels' SearchSettings struct, passed by value: one long a slot
SETTINGS_DTYPE = np.dtype([("v", np.int64, (len(SETTING_SLOTS),))])


def settings_value(row: np.ndarray) -> np.void:
    """The settings row as the kernel's SearchSettings argument: a copy, so that the row may
    change for the next slice while this launch's value is kept (KernelCall compares them)."""
    return np.frombuffer(row.tobytes(), SETTINGS_DTYPE)[0]


def settings_row(kernel: str, values: dict[str, int]) -> np.ndarray:
    """The settings row: every scalar and offset kernel `kernel` reads at its slot. A
    name missing or unknown is an internal error, said by name: the kernel would read 0."""
    wanted = settings_names(kernel)
    if values.keys() != set(wanted):
        problems = [f"{n} missing" for n in wanted if n not in values] + [
            f"{n} unknown" for n in values if n not in wanted
        ]
        raise FznError(
            f"the search kernel's settings: {', '.join(problems)} (an internal error in fzn-gpu: please report it)"
        )
    row = np.zeros(len(SETTING_SLOTS), np.int64)
    for name, value in values.items():
        row[SETTING_SLOTS[name]] = int(value)
    return row
