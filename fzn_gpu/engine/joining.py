"""Runners for the devices beside a search's first, built on threads of their own while the first
device splits the root and starts searching: each joins the search once its runner is ready
(balance.py's `join`). Built one after another before the split, the CPU's runner beside a GPU
(PoCL loading its program) held the GPU for a measurable part of a short count
(docs/bench/measurements.md, "Several devices on one search")."""

from __future__ import annotations

import sys
import threading
import time

from .. import hooks
from ..errors import FznError
from ..runtime.device import Device
from .pack import DeviceModel
from .runner import Runner, Tuning, searches_hand_over


class RunnersBehind:
    """One thread per device builds its Runner; `wait(k)` gives device k's (None where its
    build failed: said on stderr with -v, and the search goes on without it)."""

    def __init__(self, devices: list[Device], dm: DeviceModel, opts) -> None:
        self.devices = devices
        self.dm, self.opts = dm, opts
        self.built: list[Runner | None] = [None] * len(devices)
        self.errors: list[BaseException | None] = [None] * len(devices)
        self.threads = [
            threading.Thread(target=self._build, args=(k,), name=f"fzn-gpu runner {k + 1}", daemon=True)
            for k in range(len(devices))
        ]
        for t in self.threads:
            t.start()

    def _build(self, k: int) -> None:
        device = self.devices[k]
        time.sleep(hooks.join_late_s())  # a test's: a device that joins late
        try:
            self.built[k] = Runner(device, self.dm, seed=self.opts.seed, verbose=self.opts.verbose)
        except FznError as err:
            if self.opts.verbose:
                print(f"fzn-gpu: leaving out {device.name}: {err}", file=sys.stderr)
        except BaseException as err:  # a bug: raised where the runner is waited for
            self.errors[k] = err

    def wait(self, k: int) -> Runner | None:
        self.threads[k].join()
        if self.errors[k] is not None:
            raise self.errors[k]  # type: ignore[misc]
        return self.built[k]

    def estimated_items(self, k: int) -> int:
        """Device k's work-items as its runner will choose them where memory allows (before it
        is built): sizes the root split and the device's share until it joins."""
        device = self.devices[k]
        return max(1, device.compute_units * Tuning.for_device(device, floats=self.dm.nf > 0).items_per_cu)

    def split_target(self) -> int:
        """The sub-search spaces the root split aims at for these devices (Runner.max_items
        times Tuning.subs_per_item, estimated)."""
        return sum(
            Tuning.for_device(d, floats=self.dm.nf > 0).subs_per_item * self.estimated_items(k)
            for k, d in enumerate(self.devices)
        )

    def hands_over(self, k: int) -> bool:
        """Whether device k's searches can hand all they have left over (the work-item kernel,
        no float points): as its runner will be built."""
        floats = self.dm.nf > 0
        return searches_hand_over(Tuning.for_device(self.devices[k], floats=floats).model, floats)
