"""The default for optimisation: large neighbourhood search and complete branch and bound at
the same time, each in a thread of its own, sharing one incumbent.

LNS finds good solutions fast and proves nothing; branch and bound proves optima but, with
many slow threads, may find little on big instances. Together: every solution either finds
goes through the shared `Incumbent` (incumbent.py), which prints only improvements on all
found so far, so the stream is one strictly improving sequence whoever found each; LNS islands
take the best as their next starting point (`better_since`), and branch and bound takes its
objective as its bound at its next slice (`CompleteSearch._share_bound`). The first solution
comes from whichever engine finds one first: branch and bound searches in the model's order,
LNS's devices by restarts that select by dom_w_deg (restart.first_solution_restarts), which
stop once the incumbent has one.
Branch and bound's proof ends the run with `==========` (it stops every island); so does a
first-solution restart of LNS's that finished the tree without a solution (there is none).
An LNS that ends on its own (its restarts or time-out) leaves branch and bound running:
without a time limit, the run still ends.
Bucket elimination joins them where the model is a cost-function network of low width
(`_PlannedBucket`, planned in its own thread while the two search).

Devices: one device runs both engines, each with its own runner and command queue. Where
GPUs and CPUs are both present, LNS runs on the GPUs and branch and bound on the CPUs
(`split_devices`; FZN_GPU_BNB_DEVICES and FZN_GPU_LNS_DEVICES, each all, gpu or cpu,
override it for measurements, docs/bench/measurements.md, "Branch and bound on the CPU, LNS on
the GPU alone")."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from .. import clock, settings
from ..errors import FznError
from ..flatzinc.model import LnsSpec, Model, RestartSpec
from ..options import SolveOptions
from ..runtime.device import Device
from .complete import CompleteSearch
from .incumbent import Incumbent, Outcome
from .interface import Engine, JoinCluster
from .lns import LnsSearch
from .pack import DeviceModel
from .restart import RestartSearch
from .threads import run_engines

if TYPE_CHECKING:  # imported where bucket elimination runs
    from .bucket import BucketSearch

KINDS = settings.DEVICE_KINDS
# on a machine with both kinds: LNS on the GPUs, at their full width (the GPU-LNS paper), and
# branch and bound on the CPUs, its relaxation bounds proving the optima LNS finds. Measured:
# proofs as fast as with branch and bound sharing the GPU, and LNS's island on the GPU, no
# longer waiting behind branch and bound's slices, finding the improvements that an island on
# the CPU beside it had taken (docs/bench/measurements.md, "Branch and bound on the CPU, LNS on
# the GPU: the default")
DEFAULT_SPLIT = {"bnb": "cpu", "lns": "gpu"}
SHARED_GPU_BNB = 0.25  # branch and bound's share of a GPU's time where LNS runs on it too (a GPU alone)
PROVING_GPU_BNB = 0.75  # its share once LNS has stopped improving (ProvingShare)
QUIET_MIN_S = 0.05  # the shortest stillness that counts as LNS having stopped improving


class ProvingShare:
    """Branch and bound's share of a GPU that LNS uses too, asked at each of its slices
    (Runner.share_now): `base` while the run's best keeps improving, `proving` once it has
    stood still for as long as the search took to reach it (QUIET_MIN_S at least), until the
    next improvement; `base` while `yield_to()` holds (bucket elimination runs on the GPU:
    its proof is the run's, and branch and bound's slices would only delay it).

    Why: while LNS improves, its launches are what the run needs and branch and bound's slices
    only delay them; once it stops, what is left is the proof, which a quarter of the GPU makes
    three times as long as it needs to be (the short proofs: their optimum found early).
    Stillness measured against the time to the last improvement keeps a long run that still
    improves now and then (QAP 64) at the base share (docs/bench/measurements.md,
    "Branch and bound's share of a GPU that LNS uses")."""

    def __init__(
        self,
        incumbent: Incumbent,
        base: float = SHARED_GPU_BNB,
        proving: float = PROVING_GPU_BNB,
        yield_to: Callable[[], bool] = lambda: False,
        now: Callable[[], float] = time.monotonic,
    ):
        self.incumbent, self.base, self.proving = incumbent, base, proving
        self.yield_to, self.now = yield_to, now

    def __call__(self) -> float:
        improved = self.incumbent.improved_at
        if improved is None or self.yield_to():  # no solution yet: LNS's first steps come first
            return self.base
        quiet = max(QUIET_MIN_S, improved - self.incumbent.started)
        return self.proving if self.now() - improved >= quiet else self.base


def shared_gpu_share(incumbent: Incumbent, yield_to: Callable[[], bool] = lambda: False) -> float | ProvingShare:
    """Branch and bound's share of the wall time on a GPU that LNS uses as well (a machine whose
    only device is a GPU): a ProvingShare (FZN_GPU_BNB_PROVING_SHARE its share once LNS has
    stopped improving), or FZN_GPU_BNB_SHARE, a fixed share, for measurements. LNS improves
    step by step, and each of its launches waited behind one of branch and bound's slices
    (docs/bench/measurements.md, the default engines on a GPU alone); branch and bound takes
    more of the GPU once LNS stops improving."""
    fixed = _share("FZN_GPU_BNB_SHARE", settings.text("FZN_GPU_BNB_SHARE"))
    if fixed is not None:
        return fixed
    proving = _share("FZN_GPU_BNB_PROVING_SHARE", settings.text("FZN_GPU_BNB_PROVING_SHARE"))
    return ProvingShare(incumbent, proving=PROVING_GPU_BNB if proving is None else proving, yield_to=yield_to)


def _share(name: str, text: str | None) -> float | None:
    """Variable `name`'s value `text` as a share of a GPU's wall time, in (0, 1] (None: unset)."""
    if text is None:
        return None
    try:
        share = float(text)
    except ValueError:
        share = 0.0
    if not 0 < share <= 1:
        raise FznError(f"{name}={text!r} is not a share in (0, 1]", fix="unset it or give e.g. 0.25")
    return share


def split_devices(devices: list[Device], split: dict[str, str] = DEFAULT_SPLIT) -> tuple[list[Device], list[Device]]:
    """The devices of each of two engines (by default branch and bound's, LNS's). Each engine
    gets the kind `split` names where the machine has both kinds, all devices where it has one
    kind; an environment variable FZN_GPU_<ENGINE>_DEVICES (all, gpu or cpu) overrides it, and
    a kind the machine lacks falls back to every device."""
    mixed = len({d.is_gpu for d in devices}) > 1
    chosen = []
    for engine in split:
        var = f"FZN_GPU_{engine.upper()}_DEVICES"
        kind = settings.choice(var, split[engine] if mixed else "all")
        picked = [d for d in devices if kind == "all" or d.is_gpu == (kind == "gpu")]
        chosen.append(picked or list(devices))
    return chosen[0], chosen[1]


class PortfolioSearch:
    def __init__(
        self,
        model: Model,
        dm: DeviceModel,
        devices: list[Device],
        opts: SolveOptions,
        report,
        spec: LnsSpec | None,
        restart: RestartSpec | None = None,
        cluster: JoinCluster | None = None,
        bucket_gpus: list[Device] | None = None,
    ):
        """report(values, objective) prints one solution; `spec`: the model's lns(...)
        annotation, configuring the LNS part (the --lns-* flags over it); `restart`: branch and
        bound restarts with this sequence (restart.py) instead of searching the tree once;
        `cluster`: how branch and bound joins the run's Ray cluster (--cluster); `bucket_gpus`:
        the GPUs bucket elimination may use (BucketSearch), the devices' by default."""
        self.opts = opts
        self.outcome = Outcome()
        self.incumbent = Incumbent(self.outcome, dm.obj_sense, report)
        bnb_devices, lns_devices = split_devices(devices)
        self.bnb: CompleteSearch | RestartSearch
        if restart is not None:
            self.bnb = RestartSearch(model, dm, bnb_devices, opts, report, restart, incumbent=self.incumbent)
        else:
            self.bnb = CompleteSearch(model, dm, bnb_devices, opts, report, incumbent=self.incumbent, cluster=cluster)
        # LNS's first solution, from one CPU work-item of its own, comes sooner than a GPU's
        # one-work-item dive would give one: branch and bound searches in parallel at once
        # (FZN_GPU_DIVE_MS, where set, decides as everywhere else)
        self.bnb.dive = settings.is_set("FZN_GPU_DIVE_MS") or not any(
            not d.is_gpu and d not in bnb_devices for d in lns_devices
        )
        # no CPU of LNS's own dives for LNS's first solution (a GPU's lone dive is slow): branch
        # and bound's CPU dives before its split, which on a model of slow nodes takes seconds
        if isinstance(self.bnb, CompleteSearch):
            self.bnb.plan_dive = not bnb_devices[0].is_gpu and all(d.is_gpu for d in lns_devices)
        # LNS's first solution by restarts that select by dom_w_deg, beside branch and bound's
        # search in the model's order: a plan that leads into a part of the tree without
        # solutions no longer holds both engines there
        self.lns = LnsSearch(
            model, dm, lns_devices, opts, report, spec, incumbent=self.incumbent, free_dive=True, shared=bnb_devices
        )
        self.shared_gpus = any(d.is_gpu and d in lns_devices for d in bnb_devices)
        gpus = [d for d in devices if d.is_gpu] if bucket_gpus is None else bucket_gpus
        self.bucket: _PlannedBucket | None = self._bucket(model, dm, devices, opts, report, gpus)
        if self.shared_gpus:
            self.bnb.share_gpus(shared_gpu_share(self.incumbent, self._bucket_running))
        self.proved_by: str | None = None  # bnb, lns (its dive explored everything) or bucket

    def _bucket(self, model: Model, dm: DeviceModel, devices: list[Device], opts: SolveOptions, report, gpus):
        """Bucket elimination beside the two, planned in its own thread while they search
        (`_PlannedBucket`), where bucket elimination is on."""
        if opts.bucket == "off" or opts.deterministic:
            return None
        return _PlannedBucket(model, dm, devices, opts, report, self.incumbent, gpus)

    @property
    def runners(self) -> list:
        return self.bnb.runners + self.lns.runners + (self.bucket.runners if self.bucket else [])

    @property
    def shares(self) -> list:
        return self.bnb.shares

    def _bucket_running(self) -> bool:
        return self.bucket is not None and self.bucket.running

    def run(self, deadline: float | None) -> Outcome:
        self.incumbent.started = time.monotonic()  # ProvingShare's stillness counts from here
        engines: dict[str, Engine] = {"bnb": self.bnb, "lns": _ThenWhole(self.lns, self.bnb)}
        if self.bucket is not None:
            engines["bucket"] = self.bucket
        results = run_engines(engines, deadline, self._stop_all, verbose=self.opts.verbose)
        # results in the order the engines ended: the first complete one proved the answer
        self.proved_by = next((name for name, outcome in results.items() if outcome.complete), None)
        proved = self.outcome.complete or ("bucket" in results and results["bucket"].complete)
        return self._merged(results["bnb"], proved)

    def _stop_all(self) -> None:
        """Every LNS island ends at its next slice, and branch and bound at its next one."""
        self.incumbent.stopped = True
        self.bnb.cancel.set()

    def _merged(self, bnb: Outcome, others_complete: bool) -> Outcome:
        """The run's outcome: the stream's solutions and best, complete where any engine
        explored everything (LNS's dive, bucket elimination: `others_complete`); otherwise branch
        and bound's reason for stopping early, if it had one (LNS's own end, its restarts or
        time-out, is no reason: branch and bound went on)."""
        out = replace(self.outcome, expansions=bnb.expansions, sub_spaces=bnb.sub_spaces, split_s=bnb.split_s)
        out.complete = bnb.complete or others_complete
        out.error = None if out.complete else bnb.error
        return out

    def progress(self) -> Outcome:
        """The outcome so far, for a run cut short (interrupt, time limit): never complete."""
        return replace(self.outcome, complete=False, error=None, sub_spaces=self.bnb.outcome.sub_spaces)

    def stop(self) -> None:
        """Ends the search at its next slice, keeping what it found (an interrupt: SolveRun.wind_down)."""
        self._stop_all()

    def extra_stats(self) -> dict[str, object]:
        """LNS's statistics (its per-device ones as lns_dN_...), which engine found each
        improvement, and the devices of each engine."""
        stats: dict[str, object] = {"engine": "portfolio"}
        for key, value in self.lns.extra_stats().items():
            stats["lns_" + key if re.match(r"d\d+_", key) else key] = value
        stats["improvementsBy"] = self.incumbent.found_by()
        by = self.incumbent.improvements_by()
        stats["bnbImprovements"], stats["lnsImprovements"] = by["bnb"], by["lns"]
        if self.proved_by is not None:  # the engine whose search ended the run with its proof
            stats["provedBy"] = self.proved_by
        # the devices each engine was given (a device beside branch and bound's first joins once
        # its runner is built: a short proof may end before)
        stats["bnbDevices"] = "; ".join(d.name for d in self.bnb.devices)
        stats["lnsDevices"] = "; ".join(d.name for d in self.lns.devices)
        stats.update(self.bnb.extra_stats())  # branch and bound's workers on a cluster (--cluster)
        if self.bucket is not None and self.bucket.search is not None:
            stats["bucketImprovements"] = by.get("bucket", 0)
            stats.update(self.bucket.extra_stats())
        return stats


class _ThenWhole:
    """LNS's run, after which branch and bound takes its GPUs whole again (LNS ends on its own
    at its restarts or time-out; the proof is then branch and bound's alone)."""

    def __init__(self, lns: LnsSearch, bnb) -> None:
        self.lns, self.bnb = lns, bnb

    @property
    def runners(self) -> list:
        return self.lns.runners

    @property
    def shares(self) -> list:
        return self.lns.shares

    def run(self, deadline: float | None) -> Outcome:
        try:
            return self.lns.run(deadline)
        finally:
            self.bnb.share_gpus(1.0)

    def progress(self) -> Outcome:
        return self.lns.progress()

    def stop(self) -> None:
        self.lns.stop()

    def extra_stats(self) -> dict[str, object]:
        return self.lns.extra_stats()


class _PlannedBucket:
    """Bucket elimination as the portfolio's third engine: its plan is made in the engine's
    own thread, while branch and bound and LNS already search (a plan takes seconds on some
    models: the network's definitions narrowed, its width found), then it runs where the
    model is a cost-function network whose plan fits and is worth the time left
    (engine/bucket.py); its optimum ends the run. A model that is none, or a plan that failed,
    only leaves it out (said with -v)."""

    def __init__(
        self, model: Model, dm: DeviceModel, devices: list[Device], opts: SolveOptions, report, incumbent, gpus
    ):
        self.model, self.dm, self.devices, self.opts, self.report = model, dm, devices, opts, report
        self.incumbent = incumbent
        self.gpus: list[Device] = gpus  # those its elimination may use (BucketSearch)
        self.search: BucketSearch | None = None  # once planned and worth running
        self.running = False  # its search runs (branch and bound yields a shared GPU to it)

    @property
    def runners(self) -> list:
        return self.search.runners if self.search is not None else []

    @property
    def shares(self) -> list:
        return []

    def run(self, deadline: float | None) -> Outcome:
        from ..bucket.network import NotDecomposable
        from .bucket import BucketSearch, prepare, say_why_not, worth_running

        gpu = next(iter(self.gpus), None)
        try:
            prep = prepare(self.model, gpu, stop=lambda: self.incumbent.stopped or clock.past(deadline))
        except NotDecomposable as why:
            say_why_not(why, self.opts.verbose)
            return Outcome()
        except (MemoryError, ValueError, ArithmeticError) as err:
            say_why_not(NotDecomposable(f"planning failed ({err})"), self.opts.verbose)
            return Outcome()
        if self.incumbent.stopped:  # another engine proved the answer while this one planned
            return Outcome()
        if not worth_running(prep, gpu, deadline):
            plan = prep.plan
            left = "" if deadline is None else f"{max(0.0, deadline - time.monotonic()):.1f} s "
            say_why_not(
                NotDecomposable(
                    f"its {plan.describe()} are {plan.total:.3g} entries of work, more than the "
                    f"run's {left}left are likely to allow on {gpu.name if gpu else 'the host'} "
                    f"(its plan took {prep.seconds:.2f} s)"
                ),
                self.opts.verbose,
            )
            return Outcome()
        search = self.search = BucketSearch(
            self.model, self.dm, self.devices, self.opts, self.report, prep, incumbent=self.incumbent, gpus=self.gpus
        )
        self.running = True
        try:
            return search.run(deadline)
        finally:
            self.running = False

    def progress(self) -> Outcome:
        return self.search.progress() if self.search is not None else Outcome()

    def stop(self) -> None:
        if self.search is not None:
            self.search.stop()

    def extra_stats(self) -> dict[str, object]:
        return self.search.extra_stats() if self.search is not None else {}
