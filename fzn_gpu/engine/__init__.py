"""Search engines. `solve` picks one for the model, prints the solution stream and the final
status, and returns the exit code."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TYPE_CHECKING

import numpy as np

from .. import clock
from ..errors import FznError
from ..flatzinc.model import Model, RestartSpec, VarKind
from ..options import SolveOptions
from ..output import ERROR, SEARCH_COMPLETE, UNKNOWN, UNSATISFIABLE, Printer
from ..watchdog import GRACE_S, Watchdog, interrupt_code, signal_code
from ..writer import shrink_pipe
from .incumbent import Outcome
from .interface import Engine, JoinCluster
from .profile import kind_profile, node_profile

DELIVER_WAIT_S = 1.0  # how long the stream's end waits for a solution's report under way (_end)
WIND_DOWN_S = 1.0  # how long an interrupt waits for the search to stop at its next slice (SolveRun.wind_down)

if TYPE_CHECKING:  # imported where a run needs them: start-up stays light
    from ..flatzinc.check import Checker
    from ..relax import Relaxed
    from ..runtime.device import Device
    from .bucket import Prepared
    from .pack import DeviceModel


def assignment(model: Model, values: np.ndarray, decoded: dict | None = None) -> dict[str, object]:
    """Every declared variable's value by name, for the independent checker; `decoded` holds the
    set and float variables' values (engine/decode.py)."""
    out: dict[str, object] = {}
    for i, name in enumerate(model.vars.names):
        if name.startswith("_const_"):
            continue
        if decoded is not None and i in decoded:
            value = decoded[i]
            out[name] = value if isinstance(value, float) else frozenset(value.values())
            continue
        x = int(values[i])
        out[name] = bool(x) if model.vars.kind[i] == VarKind.BOOL else x
    return out


class SolveRun:
    """One run of the solver: the solution stream, and its end, printed exactly once, either
    when the search returns or, from the watchdog's thread, at an interrupt or a slice that
    overran the time limit. A lock keeps the two from interleaving."""

    def __init__(self, model: Model, opts: SolveOptions, out=None):
        """`out`: where the stream goes (standard output unless given)."""
        self.model = model
        self.opts = opts
        self.printer = Printer(model, out)
        self.optimising = model.solve.kind != "satisfy"
        self.count_only = opts.count_only and opts.all_solutions and not self.optimising
        self.print_each = (not self.optimising or opts.all_solutions or opts.intermediate) and not self.count_only
        # an optimisation's newest improvement replaces those the reader has not taken yet, except
        # where the stream must be the same every run (--deterministic: every improvement, in order)
        self.supersede = self.optimising and self.print_each and not opts.deterministic
        if self.supersede:
            shrink_pipe(self.printer.out)  # the newest improvement waits in the writer's queue, not the pipe
        self.best_values: list[np.ndarray] = []
        self.lock = threading.Lock()
        self.ended = False
        self.closing = False  # the stream's end has begun: no new report is taken (_end)
        self.delivering = 0  # reports under way (checked, not yet printed)
        self.delivered = threading.Condition(self.lock)  # a report under way has finished
        self.handed = 0  # solutions printed or kept back for the end: what the stream holds
        self.signalled: int | None = None  # the signal an interrupt wound the search down for (wind_down)
        self.stream_done = threading.Event()  # set once the main thread has ended the stream
        self.outcome: Outcome | None = None  # how the run ended, once it has
        self.search: Engine | None = None
        self.restart: RestartSpec | None = None  # the restart sequence this run may follow (restart.restart_spec)
        self.bucket_count: Prepared | None = None  # bucket elimination's plan for counting, where it counts this run
        self.dm: DeviceModel | None = None
        self.devices: list = []
        self.relaxed: Relaxed | None = None  # the relaxations' bounds added to the model (fzn_gpu/relax/)
        self.left_out: dict[str, str] = {}  # devices a timed run started without (warmup.py), and why
        self.bucket_gpus: list[Device] = []  # the run's GPUs, a timed run's left-out ones too (bucket elimination's)
        self.t_init = 0.0
        self.checker: Checker | None = None
        if opts.check:
            from ..flatzinc.check import Checker
            from ..flatzinc.parser import parse_items, read_text

            text, name = read_text(model.source) if model.source != "<stdin>" else ("", model.source)
            self.checker = Checker(parse_items(text, name)) if text else None

    @property
    def packed(self) -> DeviceModel:
        """The model packed for the devices: run_until packs it before anything reads it."""
        if self.dm is None:
            raise RuntimeError("the model is read before run_until packed it")
        return self.dm

    # -- the stream
    def _check(self, values: np.ndarray) -> None:
        decode = self.printer.decoder
        if self.checker is None:  # report_batch checks only where there is a checker
            return
        bad = self.checker.check(assignment(self.model, values, decode(values) if decode else None))
        if bad:
            self.printer.status(ERROR)
            raise FznError(
                f"the solver produced a solution that violates {bad[0]} (a bug in fzn-gpu)",
                file=self.model.source,
                fix="please report it with the model",
            )

    def report(self, values: np.ndarray, objective) -> None:
        self.report_batch(values[None, :])

    def report_batch(self, rows: np.ndarray) -> None:
        """Solutions an engine found: checked (--check), then printed or kept. The stream's end
        waits for a report under way (`_end`), so that a solution found just before the limit
        whose check was still running is not lost: it was, and the stream then said nothing at
        all, neither the solution nor UNKNOWN (a big model's check under --check)."""
        with self.lock:
            if self.ended or self.closing:
                return
            self.delivering += 1
        try:
            if self.checker is not None:
                for row in rows:
                    self._check(row)
            with self.lock:
                if self.ended:
                    return
                self.handed += len(rows)
                if self.print_each:
                    self.printer.solutions(rows, supersedes=self.supersede)
                else:
                    self.best_values[:] = [rows[-1].copy()]
        finally:
            with self.lock:
                self.delivering -= 1
                self.delivered.notify_all()

    def _end(self, outcome, interrupted: bool) -> None:
        """The best solution kept back, the status, the statistics (caller holds the lock).
        Reports under way finish first, up to DELIVER_WAIT_S and a quarter of the watchdog's
        grace past the limit; the status follows the solutions the stream holds, not those the
        engines found (one whose report came too late is not claimed)."""
        self.closing = True
        limit = clock.deadline(self.opts.time_limit_ms)
        wait = DELIVER_WAIT_S if limit is None else min(DELIVER_WAIT_S, limit + GRACE_S / 4 - time.monotonic())
        if self.delivering and wait > 0:
            self.delivered.wait_for(lambda: self.delivering == 0, timeout=wait)
        self.ended = True
        self.outcome = outcome
        if self.best_values and not self.print_each and not self.count_only:
            self.printer.solutions(self.best_values[0][None, :])
        opts = self.opts
        shown = outcome.solutions if self.count_only else self.handed
        if shown == 0 and not interrupted:
            self.printer.status(UNSATISFIABLE if outcome.complete and outcome.solutions == 0 else UNKNOWN)
        elif outcome.complete and (
            self.optimising or opts.all_solutions or outcome.solutions < (opts.solution_limit(False) or 1)
        ):
            self.printer.status(SEARCH_COMPLETE)
        elif interrupted and shown == 0:
            self.printer.status(UNKNOWN)
        if outcome.error:
            print(f"fzn-gpu: search incomplete: {outcome.error}", file=sys.stderr)
        if opts.statistics:
            self.printer.stats(self._stats(outcome))
        self.printer.drain()  # the process ends with os._exit: nothing may stay queued

    def _stats(self, outcome) -> dict[str, object]:
        now = time.monotonic()
        # `solutions`: what the search found (with --count-only, the count). Not `nSolutions`:
        # MiniZinc appends that itself, the solutions it printed (none when counting only)
        stats: dict[str, object] = {"solutions": outcome.solutions}
        if self.supersede:  # improvements a better one replaced before MiniZinc read them
            stats["supersededSolutions"] = self.printer.superseded
        solve_s = max(0.0, clock.elapsed() - self.t_init)
        runners = self.search.runners if self.search is not None else []
        if runners:
            total = lambda field: sum(getattr(x.stats, field) for x in runners)  # noqa: E731
            kernel_s = max(x.stats.kernel_s for x in runners)
            stats.update(
                {
                    "nodes": total("nodes"),
                    "failures": total("fails"),
                    "propagations": total("props"),
                    "initTime": self.t_init,
                    "solveTime": solve_s,
                    "startupMarks": clock.marks_text(),
                    **({"minizincShare": round(clock.AHEAD_S, 3)} if clock.AHEAD_S else {}),
                    "buildTime": total("build_s"),
                    "kernelTime": kernel_s,
                    "hostTime": max(0.0, now - clock.STARTED - kernel_s),
                    "kernelLaunches": total("launches"),
                    "subSearchSpaces": outcome.sub_spaces,
                    "resplitPaths": total("donated"),
                    "recomputedLevels": total("recomputed"),
                    "splitTime": outcome.split_s,
                    "workItems": total("items"),
                    "devices": len(runners),
                    "device": "; ".join(x.device.name for x in runners),
                }
            )
            stats["passes"] = total("passes")
            stats["sliceGapTime"] = max(x.stats.gap_s for x in runners)  # host work between a runner's slices
            if any(x.stats.generic for x in runners):  # the specialised program was not built yet
                stats["genericKernel"] = sum(x.stats.generic for x in runners)
            if any(x.stats.inlined for x in runners):  # built ahead, propagators inlined
                stats["inlinedKernel"] = sum(x.stats.inlined for x in runners)
            if any(x.stats.width for x in runners):  # work-group kernels: their widest phase
                stats["groupWidth"] = max(x.stats.width for x in runners)
            if any(x.narrow for x in runners):  # work-group nodes held as one-word bitmaps
                stats["narrowDomains"] = sum(x.narrow for x in runners)
            for i, x in enumerate(runners):
                line = (
                    node_profile(
                        x.stats.cycles,
                        x.stats.nodes,
                        x.stats.passes,
                        x.stats.search_s,
                        x.device.clock_mhz,
                        x.stats.clock_seen_hz,
                    )
                    if x.tuning.profile
                    else None
                )
                if line is not None:
                    stats["nodeProfile" if len(runners) == 1 else f"d{i}_nodeProfile"] = line
                kinds = kind_profile(x.stats.cycles, x.stats.nodes) if x.tuning.profile else None
                if kinds is not None:
                    stats["kindProfile" if len(runners) == 1 else f"d{i}_kindProfile"] = kinds
            search = self.search
            if search is not None:
                stats.update(device_stats(search.shares, search.runners))
                stats.update(search.extra_stats())
        elif self.search is None and not self.t_init:  # the limit came before the search began
            stats.update({"initTime": clock.elapsed(), "solveTime": 0, "phase": "preparing the search"})
        else:  # no search ran on a device (nothing to search, or bucket elimination's count)
            stats.update({"initTime": self.t_init, "solveTime": solve_s})
            if self.search is not None:
                stats.update(self.search.extra_stats())
        if self.relaxed is not None:
            stats.update(self.relaxed.stats())
        if self.left_out:
            stats["devicesLeftOut"] = "; ".join(f"{name}: {why}" for name, why in self.left_out.items())
        if outcome.best is not None and self.dm is not None:
            stats["objective"] = outcome.best * self.dm.obj_sense
        return stats

    def _make_engine(self, engine: str, restart) -> Engine:
        """The engine `_engine()` named, built on this run's model and devices: the one place
        that knows every engine (engine/interface.py says what each implements)."""
        if engine == "sat-portfolio":
            from .sat_portfolio import SatisfactionPortfolio

            return SatisfactionPortfolio(
                self.model, self.packed, self.devices, self.opts, self.report, self.restart, cluster=self._cluster()
            )
        elif engine == "adaptive":
            from .adaptive import AdaptiveSearch
            from .adaptive import forced as forced_network

            return AdaptiveSearch(self.model, self.devices, self.opts, self.report, forced_network(self.model))
        elif engine == "restart":
            from .restart import RestartSearch

            return RestartSearch(self.model, self.packed, self.devices, self.opts, self.report, restart)
        elif engine == "bucket":
            from .bucket import BucketSearch, forced

            prep = forced(self.model, self.bucket_gpus)
            return BucketSearch(
                self.model, self.packed, self.devices, self.opts, self.report, prep, gpus=self.bucket_gpus
            )
        elif engine == "bucket-count":
            from .bucket import BucketCount, forced

            prep = getattr(self, "bucket_count", None) or forced(self.model, self.devices, counting=True)
            return BucketCount(self.model, prep)
        elif engine == "lns":
            from .lns import LnsSearch

            return LnsSearch(
                self.model,
                self.packed,
                self.devices,
                self.opts,
                self.report,
                self.model.solve.lns,
                cluster=self._cluster(),
            )
        elif engine == "portfolio":
            from .portfolio import PortfolioSearch

            return PortfolioSearch(
                self.model,
                self.packed,
                self.devices,
                self.opts,
                self.report,
                self.model.solve.lns,
                restart,
                cluster=self._cluster(),
                bucket_gpus=self.bucket_gpus,
            )
        else:
            from .complete import CompleteSearch

            return CompleteSearch(
                self.model,
                self.packed,
                self.devices,
                self.opts,
                self.report,
                self.report_batch,
                ordered=self.opts.deterministic,
                cluster=self._cluster(),
            )

    def _cluster(self) -> JoinCluster | None:
        """How an engine joins the run's Ray cluster, where --cluster asks for one (cluster/
        imports the engines to run them on its workers: none of them imports it)."""
        if not self.opts.cluster:
            return None
        from ..cluster.driver import cluster_for

        return cluster_for

    def wind_down(self, signo: int) -> bool:
        """From the watchdog, on SIGINT or SIGTERM: ask the search to stop at its next slice, as
        a time limit stops it, so that its devices' running counts, solutions and statistics
        come back (an end straight from here saw none of a count's running totals: 16-queens
        stopped after 6 s reported 0 solutions where a 5 s limit reports 189,691), and wait up
        to WIND_DOWN_S for the main thread to end the stream with them. Whether it did; if not,
        the watchdog ends the run with `end_early`. Counts only (`--count-only`): a run that
        prints its solutions would print the last slice's after the signal, into a reader that
        may have stopped reading (minizinc-python, cancelled, then waited for ever on its full
        pipe); it ends at once with what it printed, as before."""
        if not self.count_only:
            return False
        if not self.lock.acquire(timeout=WIND_DOWN_S):  # held by a thread blocked writing the stream
            return False
        try:
            if self.ended:
                return False
            self.signalled = signo
            search = self.search
        finally:
            self.lock.release()
        if search is None:
            return False
        search.stop()
        return self.stream_done.wait(WIND_DOWN_S)

    def searching(self) -> bool:
        """Whether the search has begun (the watchdog ends a run that has not at its limit)."""
        return self.search is not None

    def end_early(self, signo: int | None) -> int:
        """From the watchdog: end the stream with what the search has so far. The search was
        cut short, so nothing claims completeness."""
        with self.lock:
            if self.ended or self.closing:  # the main thread is ending the stream
                return 0
            outcome = self.search.progress() if self.search is not None else Outcome()
            self._end(outcome, interrupted=signo is not None)
            return signal_code(signo)

    def _engine(self) -> str:
        """complete, lns, portfolio, restart or bucket. --engine names one; by default an
        optimisation model gets the portfolio (portfolio.py; the lns(...) annotation configures
        its LNS, a restart annotation or --restart makes its branch and bound restart, and bucket
        elimination runs beside it where the model suits it), or LNS alone where
        --lns-strategy names a strategy, and a satisfaction model complete search, or restarts
        where the model or --restart asks for them (restart.py). LNS needs an objective and
        works on int, bool and set models; restarts need int or bool variables and are no use
        with -a: the others are solved by complete search, said on stderr where asked for."""
        opts = self.opts
        flag = bool(opts.lns and opts.lns.get("strategy"))
        asked = opts.engine != "auto" or flag or self.model.solve.lns is not None
        wanted = opts.engine
        if wanted == "auto" and opts.deterministic and not flag:
            wanted = "complete"  # one sequential branch and bound, or ordered printing
        if wanted == "auto":
            wanted = "lns" if flag else "portfolio" if self.optimising or asked else self._satisfaction_engine()
        if wanted in ("sat-portfolio", "bucket-count"):
            return wanted
        if wanted == "adaptive":
            if self.optimising:
                print(
                    "fzn-gpu: Adaptive Search finds solutions of satisfaction models; solving this optimisation "
                    "model by the default engine",
                    file=sys.stderr,
                )
                return "portfolio"
            if opts.all_solutions or (opts.num_solutions or 1) > 1:
                print(
                    "fzn-gpu: Adaptive Search finds one solution; searching for several by complete search",
                    file=sys.stderr,
                )
                return "complete"
            return wanted
        if wanted == "restart":
            return "restart" if self._restart_why(asked=True) is None else "complete"
        if wanted == "complete":
            return wanted
        why = None
        if wanted == "bucket" and (not self.optimising or self.packed.obj_var < 0):
            if self.count_only:
                return "bucket-count"
            why = (
                "bucket elimination solves optimisation models, and counts satisfaction models' solutions "
                "(-a --count-only); solving this satisfaction model by complete search"
            )
        elif wanted == "bucket":
            return wanted
        elif not self.optimising or self.packed.obj_var < 0:
            why = "LNS needs an objective; solving this satisfaction model by complete search"
        elif self.packed.nf:
            why = "LNS works on int, bool and set models; solving this float model by complete search"
        if why is None:
            return wanted
        if asked:
            print(f"fzn-gpu: {why}", file=sys.stderr)
        return "complete"

    def _satisfaction_engine(self) -> str:
        """For one solution, complete search and restarts together (sat_portfolio.py) unless the
        model or --restart says restart_none; with --deterministic (or -p 1) complete search
        alone, which prints the solutions the model's search meets first, in its order, every
        run (engine/ordered.py), as Gecode does; for several, restarts where asked for (printing
        each solution once), else complete search; for all of them complete search."""
        opts = self.opts
        said_none = (opts.restart or self.model.solve.restart or RestartSpec("luby")).kind == "none"
        if self.count_only and opts.bucket != "off" and not opts.deterministic and self._counts_by_buckets():
            return "bucket-count"
        if opts.all_solutions or self.packed.nf:
            return "restart" if self.restart is not None else "complete"  # restart: said why not
        if opts.deterministic:
            return "complete"
        if (opts.num_solutions or 1) == 1 and not said_none:
            return "sat-portfolio"
        return "restart" if self.restart is not None else "complete"

    def _counts_by_buckets(self) -> bool:
        """Whether bucket elimination counts this model's solutions (engine/bucket.py): its
        network planned, its work within what the run allows (-v says why not)."""
        from ..bucket.network import NotDecomposable
        from .bucket import count_prepared, say_why_not, worth_running

        try:
            self.bucket_count = count_prepared(self.model, self.devices)
        except NotDecomposable as why:
            say_why_not(why, self.opts.verbose)
            return False
        except (MemoryError, ValueError, ArithmeticError) as err:
            say_why_not(NotDecomposable(f"planning failed ({err})"), self.opts.verbose)
            return False
        return worth_running(self.bucket_count, None, clock.deadline(self.opts.time_limit_ms))

    def _restart_why(self, asked: bool) -> str | None:
        """Why restarts cannot serve this run (None: they can), said on stderr where the user
        asked for them (--engine restart, --restart); a model's annotation alone is Gecode's
        kind of hint, followed where it fits."""
        why = None
        if self.restart is None:
            why = "--engine restart needs a restart sequence (a restart annotation, or --restart luby)"
        elif self.opts.all_solutions and not self.optimising:
            why = "restarts would find the same solutions again; searching for all of them without restarts"
        elif self.packed.nf:
            why = "restarts work on int, bool and set models; solving this float model without them"
        if why is not None and (asked and self.opts.engine == "restart" or self.opts.restart is not None):
            print(f"fzn-gpu: {why}", file=sys.stderr)
        return why

    # -- the run
    def run(self) -> int:
        """The run under the options' time limit, counted from the process's start."""
        return self.run_until(clock.deadline(self.opts.time_limit_ms))

    def run_until(self, deadline: float | None) -> int:
        """The run, ending at `deadline` (time.monotonic()) at the latest; the exit code."""
        from ..runtime.device import select_devices
        from .pack import WideConstant, pack

        if self._adaptive_alone():
            from .adaptive import forced

            return self._run_adaptive(forced(self.model), deadline)
        from ..relax import lp_budget, strengthen

        self.devices = select_devices(self.opts.devices, self.opts.parallel)
        # bucket elimination's kernel is a program of its own: a GPU a timed run leaves out for
        # want of its search program (warmup.py) still eliminates
        self.bucket_gpus = [d for d in self.devices if d.is_gpu]
        clock.mark("devices")
        self.relaxed = strengthen(self.model, self.opts.relax, lp_budget(self.opts.time_limit_ms), self.devices)
        clock.mark("relax")
        try:
            self.dm = pack(self.model, self.opts)
            clock.mark("pack")
        except WideConstant as why:
            return self._run_local_alone(why, deadline)
        from .decode import decoder

        self.printer.decoder = decoder(self.dm)
        if self.dm.empty_var < 0 and self.opts.cluster is None:  # a timed run: the devices ready first (warmup.py)
            from .warmup import ready_devices

            readiness = ready_devices(self.devices, self.dm, self.opts, deadline)
            self.devices, self.left_out = readiness.ready, readiness.left_out
            clock.mark("programs")
        self.t_init = clock.elapsed()
        if self.dm.empty_var >= 0:  # nothing to search: the kernels assume non-empty domains
            if self.opts.verbose:
                print(f"fzn-gpu: {self.model.vars.names[self.dm.empty_var]} has an empty domain", file=sys.stderr)
            with self.lock:
                self._end(Outcome(complete=True), interrupted=False)
            return 0
        from .restart import restart_spec

        self.restart = restart_spec(self.model, self.opts)
        engine = self._engine()
        restart = (
            self.restart
            if engine == "restart" or (engine == "portfolio" and self._restart_why(asked=False) is None)
            else None
        )
        self.search = self._make_engine(engine, restart)
        return self._search(deadline)

    def _run_local_alone(self, why, deadline: float | None) -> int:
        """A model with a constant the device tables cannot hold (pack.WideConstant): Adaptive
        Search alone, where it serves (one solution of a satisfaction model it has a network
        for, no other engine named; its linear constants have 63 bits), said on stderr, since it
        proves nothing: the run ends with a solution or UNKNOWN. Else the refusal."""
        from ..local.network import NotLocal, build

        opts = self.opts
        if (
            self.optimising
            or opts.all_solutions
            or (opts.num_solutions or 1) > 1
            or opts.local_search == "off"
            or opts.engine not in ("auto", "adaptive")
        ):
            raise why
        try:
            network = build(self.model)
        except NotLocal:
            raise why from None
        print(
            f"fzn-gpu: {why.message}, more than complete search takes: solving by Adaptive Search alone, "
            "which finds solutions but cannot prove there is none",
            file=sys.stderr,
        )
        return self._run_adaptive(network, deadline)

    def _adaptive_alone(self) -> bool:
        """Whether `--engine adaptive` runs as asked (one solution of a satisfaction model):
        then nothing is packed for complete search (a tenth of a second on a model of 40,000
        variables). A variable with an empty domain goes the packed way, which ends it as
        unsatisfiable."""
        opts, V = self.opts, self.model.vars
        return (
            opts.engine == "adaptive"
            and not self.optimising
            and not opts.all_solutions
            and (opts.num_solutions or 1) == 1
            and not bool((V.lb > V.ub).any())
        )

    def _run_adaptive(self, network, deadline: float | None) -> int:
        """Adaptive Search alone on `network` (local/network.py), on the chosen devices."""
        from ..runtime.device import select_devices
        from .adaptive import AdaptiveSearch

        self.devices = select_devices(self.opts.devices, self.opts.parallel)
        self.t_init = clock.elapsed()
        self.search = AdaptiveSearch(self.model, self.devices, self.opts, self.report, network)
        return self._search(deadline)

    def _search(self, deadline: float | None) -> int:
        """Run the engine built, print the stream's end; the exit code."""
        assert self.search is not None
        interrupted: KeyboardInterrupt | None = None
        try:
            outcome = self.search.run(deadline)
        except KeyboardInterrupt as exc:  # where the watchdog cannot take signals
            interrupted = exc
            outcome = self.search.progress()
        signalled = self.signalled
        if not (
            outcome.complete
            or outcome.stopped
            or outcome.error
            or interrupted
            or signalled is not None
            or (deadline is not None and time.monotonic() >= deadline)
        ):
            outcome.error = (
                "the search ended before exploring everything, for no reason it knows "
                "(an internal error in fzn-gpu: please report it with the model)"
            )
        with self.lock:
            if not self.ended:
                self._end(outcome, interrupted is not None or signalled is not None)
        self.stream_done.set()
        if interrupted:
            return interrupt_code(interrupted)
        return signal_code(signalled) if signalled is not None else 0


def device_stats(shares, runners) -> dict[str, object]:
    """Per device of a search on several: sub-search spaces finished, blocks, nodes, busy time,
    and idle time at the end (how long it waited for the last device), as `dN_...` entries."""
    if not shares:
        return {}
    end = max((s.done_at for s in shares if s.done_at is not None), default=None)
    out: dict[str, object] = {}
    for share, runner in zip(shares, runners):
        p = f"d{share.index}_"
        out[p + "device"] = share.name
        out[p + "subSearchSpaces"] = share.subs
        out[p + "blocks"] = share.blocks
        out[p + "nodes"] = runner.stats.nodes
        out[p + "resplitPaths"] = runner.stats.donated
        out[p + "busyTime"] = share.busy_s
        if end is not None and share.done_at is not None:
            out[p + "idleAtEnd"] = end - share.done_at
        if share.node_share is not None:  # its share of the node rate when judged (balance.py)
            out[p + "nodeRateShare"] = round(share.node_share, 4)
        if share.retired:  # it handed what it had left over to a faster device (balance.py)
            out[p + "handedOver"] = 1
        if share.failed:
            out[p + "failed"] = share.failed
    return out


def solve(model: Model, opts: SolveOptions, watchdog: Watchdog | None = None) -> int:
    """Solve and print the stream. Under the command line's watchdog (started before parsing),
    the run takes over its early ending; alone, it starts one of its own."""
    run = SolveRun(model, opts)
    if watchdog is not None:
        watchdog.end_early, watchdog.wind_down, watchdog.searching = run.end_early, run.wind_down, run.searching
        return run.run()
    with Watchdog(run.end_early, opts.time_limit_ms) as own:
        own.wind_down, own.searching = run.wind_down, run.searching
        return run.run()


def build_only(model: Model, opts: SolveOptions) -> int:
    """`--build-only`: build the search kernel for this model on the chosen devices and launch
    it once (PoCL finishes compiling at the first launch), so that both land in the on-disk
    caches and a later timed run starts at once. An NVIDIA build can take seconds; it counts
    inside a time limit otherwise. Nothing goes to stdout."""
    from ..relax import lp_budget, strengthen
    from ..runtime.device import select_devices
    from .pack import pack
    from .paths import Paths
    from .runner import Runner

    devices = select_devices(opts.devices, opts.parallel)
    # the model a run packs, the relaxations' rows included: their constraint kinds are part of
    # the specialised program, and a timed run leaves a GPU whose program it lacks out
    strengthen(model, opts.relax, lp_budget(opts.time_limit_ms), devices)
    dm = pack(model, opts)
    for device in devices:
        t0 = time.monotonic()
        runner = Runner(device, dm, seed=opts.seed, max_items=1, verbose=opts.verbose, specialise_now=True)
        runner.run_phase(Paths.root(), 0, True, lambda sols: False, deadline=None)
        print(f"fzn-gpu: kernel ready on {device.name} in {time.monotonic() - t0:.2f} s", file=sys.stderr)
    return 0


# the models whose search launches a CPU's generic programs once (launch_once): two variables
# and a constraint, so that the launch is the program's first and nothing else; the second
# with a float variable, for the program of float models
FIRST_LAUNCH_MODEL = """var 1..3: x :: output_var;
var 1..3: y :: output_var;
constraint int_lt(x, y);
solve satisfy;
"""
FIRST_LAUNCH_FLOAT_MODEL = """var 1..3: x :: output_var;
var 0.0..1.0: f :: output_var;
constraint float_le(f, 0.5);
solve satisfy;
"""


def launch_once(device: Device, floats: bool = False) -> None:
    """A CPU's generic search program built and launched once on a model of two variables
    (`floats`: the program of float models). PoCL compiles a program's work-group function at
    its first launch (seconds; its own cache keeps it), and a run's search waits for that: a
    machine's first run on the CPU beside a GPU held its share of the search for seconds while
    the GPU sat idle (docs/bench/measurements.md, "The CPU's first launch" and "A count where
    the CPU pays"). Every run of an integer model on a CPU takes the one program (runner.Tuning:
    a CPU is never specialised) and the same work-group size, every float model's the other, so
    one launch of each serves them all."""
    from ..flatzinc.lower import lower
    from ..flatzinc.parser import parse_items
    from .pack import pack
    from .paths import Paths
    from .runner import Runner

    text = FIRST_LAUNCH_FLOAT_MODEL if floats else FIRST_LAUNCH_MODEL
    dm = pack(lower(parse_items(text, "<first launch>"), "<first launch>"), SolveOptions())
    runner = Runner(device, dm, max_items=1)
    runner.run_phase(Paths.root(), 0, True, lambda sols: False, deadline=None)


def build_generic(background: bool = False) -> int:
    """`fzn-gpu build-kernels`: build, on every GPU, the generic search program (every
    constraint kind) in every shape its models run (runner.GROUP_SHAPES: a work-group per
    search, its node in local memory, or in global memory where the node is too big for local
    memory: QAP, big scheduling models, held as narrow domains: n-queens, Costas, or both:
    grid-colouring), so that a
    model whose specialised program this machine has not built yet starts with it at once
    (device.kinds_to_build) instead of waiting seconds for a build inside its time limit (QAP
    64's first run on the H100 spent 5 s of its 10 building it), and the Adaptive Search
    program; on every CPU, its generic program built and launched once (launch_once), so that
    PoCL's cache holds the compiled work-group function a run would otherwise wait for. With
    `background` (`--background`: started by a timed run that left a device out while its
    program built, warmup.py) each CPU's generic program is built and not launched; one such
    builder at a time (a lock beside the build records: another running, it leaves at once), at
    a low priority, its loads recorded as builds (build_record.record's `fresh`). Says what it
    built on stderr."""
    import pyopencl as cl

    from ..runtime.device import all_devices, build
    from .runner import GROUP_SHAPES, Tuning

    if background:
        from .warmup import take_builder_lock

        held = take_builder_lock()
        if held is None:
            return 0
        os.nice(10)
    for device in all_devices():
        if not device.is_gpu and not background:
            for floats in (False, True):
                t0 = time.monotonic()
                what = f"generic {Tuning.for_device(device, floats).model} kernel{' for floats' if floats else ''}"
                try:
                    launch_once(device, floats)
                except (FznError, cl.Error) as err:
                    # the GPUs still get theirs; this CPU's first run compiles its kernel instead
                    print(f"fzn-gpu: {device.name}: {what} not launched ahead ({err})", file=sys.stderr)
                    break
                print(
                    f"fzn-gpu: {what} ready on {device.name} (built and launched once) in {time.monotonic() - t0:.1f} s",
                    file=sys.stderr,
                )
            continue
        t = Tuning.for_device(device)
        if device.is_gpu:  # a float model's work-item program (runner.Tuning: floats run no other)
            tf = Tuning.for_device(device, floats=True)
            t0 = time.monotonic()
            build(device, None, tf.build_options(device, floats=True), tf.model, floats=True, fresh=background)
            print(
                f"fzn-gpu: generic {tf.model} kernel for floats ready on {device.name} in {time.monotonic() - t0:.1f} s",
                file=sys.stderr,
            )
        for store_global, narrow in GROUP_SHAPES if t.model == "group" else GROUP_SHAPES[:1]:
            t0 = time.monotonic()
            build(device, None, t.build_options(device, store_global, narrow=narrow), t.model, fresh=background)
            shape = ", ".join(
                p for p, on in (("narrow domains", narrow), ("node in global memory", store_global)) if on
            )
            where = f" ({shape})" if shape else ""
            print(
                f"fzn-gpu: generic {t.model} kernel{where} ready on {device.name} in {time.monotonic() - t0:.1f} s",
                file=sys.stderr,
            )
        if not device.is_gpu:
            continue
        from .adaptive import build_program

        t0 = time.monotonic()
        build_program(device)
        print(
            f"fzn-gpu: adaptive search kernel ready on {device.name} in {time.monotonic() - t0:.1f} s", file=sys.stderr
        )
    return 0
