"""Which search programs this machine has built before, and how long loading them took.

A specialised kernel (the model's constraint kinds only) runs faster on a GPU than the generic
one, but NVIDIA's compiler needs seconds for each new set of kinds, inside the user's time limit
(docs/bench/measurements.md, kernel builds). The driver keeps what it built in its own cache,
which cannot be asked what it holds; so each build leaves a record here, named by a hash of
everything the driver's cache is keyed on (source, options, device, driver), with the seconds
the build took. A GPU run takes the specialised program where it was built before, else the
generic one where that was built before (`fzn-gpu build-kernels` builds it once, at set-up),
else builds the specialised one. A program recorded as built that then took seconds to load
(the driver's cache had dropped it) is marked lost, and the next run does not count on it."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .. import settings

FAST_LOAD_S = 5.0  # a load slower than this was a build, not a cache hit


def records_dir() -> Path:
    """$FZN_GPU_CACHE_DIR, else $XDG_CACHE_HOME/fzn-gpu/builds, else ~/.cache/fzn-gpu/builds."""
    given = settings.text("FZN_GPU_CACHE_DIR")
    if given:
        return Path(given)
    base = settings.text("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fzn-gpu" / "builds"


def build_key(device_id: str, source: str, options: list[str]) -> str:
    """The record's name: a hash of the device (name, platform, driver), the options and the source."""
    h = hashlib.sha256()
    for part in (device_id, "\0".join(options), source):
        h.update(part.encode())
        h.update(b"\1")
    return h.hexdigest()


def was_built(key: str) -> bool:
    """Whether this machine built `key` before and its last load since was quick (the driver's
    cache holds it, as far as anyone can tell)."""
    try:
        return (records_dir() / key).read_text().split()[1] == "ok"
    except (OSError, IndexError):
        return False


def record(key: str, seconds: float, fresh: bool = False) -> None:
    """Notes that `key` was just built or loaded in `seconds`: "ok", unless a program recorded
    as built took longer than FAST_LOAD_S to load (the driver's cache had dropped it: "lost",
    so the next run does not count on it); `fresh`: a build ahead of the runs (build-kernels),
    which leaves the program in the driver's cache, "ok" however long it took. A cache that
    cannot be written leaves every run building as before, silently."""
    state = "lost" if not fresh and was_built(key) and seconds > FAST_LOAD_S else "ok"
    try:
        d = records_dir()
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".{key}.{os.getpid()}"
        tmp.write_text(f"{seconds:.3f} {state}\n")
        os.replace(tmp, d / key)
    except OSError:
        pass
