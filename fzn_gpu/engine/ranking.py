"""Which devices paid for their part of a complete search beside the others, kept between runs:
PHACT's ranking from measured speed, with a share of zero (../shared/papers/phact-*.txt).

A search on several devices judges each device's share of their node rate once all have searched
a quarter of a second (balance.py, MIN_NODE_SHARE); one under it hands its search over. That
trial costs every run the quarter of a second and the device's start, and what a device's share
is depends on the model: beside an H200 a 16-core CPU pays on all-interval series (on some
machines) and not on n-queens, Costas arrays or Langford (docs/bench/measurements.md, "Several
devices on one search"). So the verdicts are recorded
here, per set of devices, kernel (a float model's work-item kernel on the GPU is another
match-up than the work-group kernel's) and model (model_key: its constraints' kinds and sizes),
and a device judged not paying in a recent search of the same model is left out of the next
ones from the start (`-s`: devicesRankedOut). It is tried again at the RECHECK_RUNS-th search
after its verdict, or once the verdict is RECHECK_S old, so that a faster driver can win it
back; a model never judged gets its trial.

The records lie beside the kernel builds' (build_record.records_dir()), one small JSON file per
set of devices holding the MODELS_KEPT models judged last; a record this user does not own, in
a folder others may write, or unreadable, counts as none."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
import time
from pathlib import Path

import numpy as np

from .. import settings
from ..runtime import build_record
from ..runtime.device import Device
from .balance import node_share_line
from .pack import DeviceModel
from .runner import Tuning

RECHECK_RUNS = 16  # a device left out is tried again at this many searches after its verdict
RECHECK_S = 3600.0  # or once its verdict is this old
MODELS_KEPT = 256  # a device set's record keeps the verdicts of the models judged last


def ranking_dir() -> Path:
    return build_record.records_dir() / "ranking"


def _key(devices: list[Device], floats: bool) -> str:
    """The record's name: the devices of the search (name, platform) and the kernel each runs."""
    parts = sorted(f"{d.name}\1{d.platform}\1{Tuning.for_device(d, floats=floats).model}" for d in devices)
    return hashlib.sha256("\0".join([*parts, str(floats)]).encode()).hexdigest()[:40]


def model_key(dm: DeviceModel) -> str:
    """A model's name in its device set's record: how many constraints of each kind it has, its
    variables and domain words (a DeviceModel). Two instances of one model differ; a model run
    again, as benchmarks and regression runs do, finds its verdict."""
    kinds = np.bincount(np.asarray(dm.ckind, dtype=np.int64)) if len(dm.ckind) else np.zeros(0, np.int64)
    sizes = np.array([dm.nv, dm.nf, dm.nwords, dm.maxd], dtype=np.int64)
    return hashlib.sha256(kinds.tobytes() + b"\0" + sizes.tobytes()).hexdigest()[:24]


def _own_folder(folder: Path) -> bool:
    """Whether `folder` is this user's and no one else may write in it: a record read or written
    elsewhere (FZN_GPU_CACHE_DIR under a shared /tmp, say) could be another's."""
    try:
        st = folder.stat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _read(path: Path) -> dict:
    """The record at `path`, or {} (none, not this user's or in a folder not its own, unreadable)."""
    try:
        if not _own_folder(path.parent) or path.stat().st_uid != os.getuid():
            return {}
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write(path: Path, data: dict) -> None:
    """Written whole (a file of its own, never one that was there, renamed over the record), in
    a folder of this user's alone; a cache that cannot be written leaves every search judging
    its devices afresh, silently."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _own_folder(path.parent):
            return
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(data))
        os.replace(tmp, path)
    except OSError:
        pass


def enabled() -> bool:
    return settings.flag("FZN_GPU_RANKING", True)


def left_out(devices: list[Device], floats: bool, model: str, now: float | None = None) -> dict[str, str]:
    """The devices (never the first) that a recent search of `model` (model_key) on these
    devices judged not paying: name -> why. Counts this search against each one's RECHECK_RUNS."""
    if not enabled() or len(devices) < 2:
        return {}
    path = ranking_dir() / _key(devices, floats)
    data = _read(path)
    models = data.get("models")
    entry = models.get(model) if isinstance(models, dict) else None
    if not isinstance(entry, dict):
        return {}
    shares, at = entry.get("shares"), entry.get("at")
    if not isinstance(shares, dict) or not isinstance(at, (int, float)):
        return {}
    now = time.time() if now is None else now
    out: dict[str, str] = {}
    for d in devices[1:]:
        verdict = shares.get(d.name)
        if not isinstance(verdict, dict):
            continue
        share, skipped, held = verdict.get("share"), verdict.get("skipped", 0), verdict.get("held", False)
        if not isinstance(share, (int, float)) or not isinstance(skipped, int) or not isinstance(held, bool):
            continue
        line = node_share_line(can_hand_over=not held)
        if share < line and skipped < RECHECK_RUNS and 0 <= now - at < RECHECK_S:
            out[d.name] = (
                f"its share of the node rate was {share:.3f} beside the others in a recent search "
                f"of this model (under {line}); tried again within {RECHECK_RUNS - skipped} "
                f"{'search' if RECHECK_RUNS - skipped == 1 else 'searches'}"
            )
            verdict["skipped"] = skipped + 1
    if out:
        _write(path, data)
    return out


def _judged_at(entry: dict) -> float:
    at = entry.get("at")
    return float(at) if isinstance(at, (int, float)) else 0.0


def record(
    devices: list[Device],
    floats: bool,
    model: str,
    verdicts: dict[str, tuple[float, bool]],
    now: float | None = None,
) -> None:
    """The node-rate shares judged in a search of `model` on `devices` (name -> (share, whether
    its searches could hand over)): the next searches of that model on the same devices leave
    those under their line (balance.node_share_line) out."""
    if not enabled() or len(devices) < 2 or not verdicts:
        return
    path = ranking_dir() / _key(devices, floats)
    models = _read(path).get("models")
    models = {k: v for k, v in models.items() if isinstance(v, dict)} if isinstance(models, dict) else {}
    shares = {
        name: {"share": float(share), "held": not hands_over, "skipped": 0}
        for name, (share, hands_over) in verdicts.items()
    }
    models[model] = {"at": time.time() if now is None else now, "shares": shares}
    if len(models) > MODELS_KEPT:  # the models judged longest ago go
        for k in sorted(models, key=lambda k: _judged_at(models[k]))[: len(models) - MODELS_KEPT]:
            del models[k]
    _write(path, {"models": models})
