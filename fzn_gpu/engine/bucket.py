"""Bucket elimination as an engine (fzn_gpu/bucket/): the exact optimum of an optimisation
model whose constraint graph has a low induced width, printed with `==========`.

`prepare` turns the model into a cost-function network and plans its elimination before any
search starts, so that the default engine knows whether to run it: beside the portfolio
(portfolio.py) where its largest table fits the memory it would use and its work is small
enough for a run (`AUTO_WORK`), its optimum then ending the run; alone with `--engine bucket`,
where a model that does not fit is a clear error naming the width and the size. The
elimination's big buckets run on the first GPU (kernels/bucket.cl, their tables kept there), the
others, and every bucket without a GPU, on the host with numpy.
Its optimal assignment is completed on the host (each defined variable from its inputs, the
whole verified against every constraint), else replayed through the search kernel on a device,
as an LNS path is (every decision variable fixed, propagation computing the rest and the
objective); the solution printed is one --check accepts, and its objective must be the
elimination's optimum or nothing is claimed."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from .. import clock, settings
from ..bucket import evaluate
from ..bucket.eliminate import eliminate
from ..bucket.network import DOMAIN_MAX, CostNetwork, NotDecomposable, extract
from ..bucket.plan import Plan, best_plan
from ..errors import FznError
from ..flatzinc.model import INT_LIMIT, Model, VarKind
from ..options import SolveOptions
from ..runtime.device import Device
from ..runtime.kernel_abi import DEC, Op
from .incumbent import Incumbent, Outcome, Solution
from .lns_island import run_batch
from .pack import DeviceModel
from .paths import Paths
from .phase import INT_MAX
from .runner import Exploration, Runner

CONSTRAINTS_MAX = 20_000  # more rows than this: not even tried by the default engine
# Work (bucket table entries, added up over the plan) that the default engine runs beside the
# portfolio without a time limit, and the rate it expects under one (entries a second): numpy
# on a 2-core machine did WCSP 10x10's 3.65e9 in about 19 s (docs/bench/measurements.md); the GPU's
# rate is a cautious guess, not yet measured.
AUTO_WORK = {"gpu": 4e10, "cpu": 4e9}
RATE = {"gpu": 2e9, "cpu": 1.5e8}


@dataclass
class Prepared:
    network: CostNetwork
    plan: Plan
    seconds: float


def _host_budget() -> int:
    """A third of the host's available memory, in bytes."""
    avail = 8 << 30
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
    except OSError:
        pass
    return avail // 3


def _memory_budget(device: Device | None) -> int:
    """Bytes the largest bucket table and the tables kept for the backward pass may take: a
    third of the host's available memory, and on a GPU the most one allocation may take."""
    budget = _host_budget()
    if device is not None and device.is_gpu:
        budget = min(budget, int(device.max_alloc))
    return settings.integer("FZN_GPU_BUCKET_MEMORY", budget)  # bytes (FZN_GPU_BUCKET_MEMORY caps them)


def prepare(model: Model, device: Device | None, counting: bool = False, stop=None) -> Prepared:
    """The network and its plan, or NotDecomposable saying why this model is not one for it
    (including a plan whose tables do not fit: its width and size named). `counting`: for
    counting a satisfaction model's solutions (count_prepared). `stop()`: the run has ended
    (another engine answered), checked as the network is made and before the plan."""
    t0 = time.perf_counter()
    if model.solve.kind == "satisfy" and not counting:
        raise NotDecomposable("it has no objective (bucket elimination solves optimisation models)")
    if model.n_constraints() > CONSTRAINTS_MAX:
        raise NotDecomposable(f"it has {model.n_constraints():,} constraints (at most {CONSTRAINTS_MAX:,} are tabled)")
    net = extract(model, _host_budget() // 8, stop)  # the constraints' tables, int64 on the host
    if stop is not None and stop():
        raise NotDecomposable("the run ended before its plan was made")
    plan = best_plan(net)
    if plan is None:
        raise NotDecomposable(f"its {len(net.domains):,} variables are too many to plan")
    need = 8 * (plan.largest + plan.kept)
    budget = _memory_budget(device)
    if need > budget:
        raise NotDecomposable(
            f"its {plan.describe()} need {need / 2**30:.1f} GiB, more than the {budget / 2**30:.1f} GiB at hand"
        )
    return Prepared(net, plan, time.perf_counter() - t0)


def worth_running(prep: Prepared, device: Device | None, deadline: float | None = None) -> bool:
    """Whether the default engine runs it beside the portfolio: its work within AUTO_WORK, and
    within what the time left allows at RATE (FZN_GPU_BUCKET_WORK overrides both, for tests
    and measurements)."""
    if settings.is_set("FZN_GPU_BUCKET_WORK"):
        return prep.plan.total <= settings.number("FZN_GPU_BUCKET_WORK", 0.0)
    kind = "gpu" if device is not None and device.is_gpu else "cpu"
    work = AUTO_WORK[kind]
    if deadline is not None:
        work = min(work, max(0.0, deadline - time.monotonic()) * RATE[kind])
    return prep.plan.total <= work


class BucketSearch:
    def __init__(
        self,
        model: Model,
        dm: DeviceModel,
        devices: list[Device],
        opts: SolveOptions,
        report,
        prepared: Prepared,
        incumbent: Incumbent | None = None,
        gpus: list[Device] | None = None,
    ):
        """`prepared`: prepare()'s network and plan; `incumbent`: one shared with the
        portfolio's engines (its optimum is offered there), else one of its own; `gpus`: the
        GPUs the elimination may use (kernels/bucket.cl, a program of its own and quick to
        build), `devices`' by default: a timed run passes a GPU it left out for want of its
        search program too (engine/warmup.py)."""
        self.model = model
        self.dm = dm
        self.devices = devices
        self.gpus = [d for d in devices if d.is_gpu] if gpus is None else gpus
        self.opts = opts
        self.prepared = prepared
        self.incumbent = incumbent or Incumbent(Outcome(), dm.obj_sense, report)
        self.outcome = self.incumbent.outcome
        self.runners: list[Runner] = []
        self.shares: list = []
        self.elimination_s = 0.0
        self.where = "host"
        self.completed_by = ""  # who computed the optimum's other variables: "host" or "kernel"

    def _joiner(self):
        """The first GPU's (kernels/bucket.cl) where a bucket is big enough for it, else numpy's."""
        from ..bucket.device import DEVICE_MIN, DeviceJoiner

        gpu = next(iter(self.gpus), None)
        if gpu is None or self.prepared.plan.largest < DEVICE_MIN:
            return None
        import pyopencl as cl

        ctx = cl.Context([gpu.cl_device])  # a context of its own: no search program needed
        self.where = gpu.name
        return DeviceJoiner(ctx, cl.CommandQueue(ctx))

    def run(self, deadline: float | None) -> Outcome:
        """The outcome: complete where the elimination ran to its end and its solution (if any)
        came through the kernels with its objective (a copy: the shared outcome's flag is every
        engine's, and another may write it meanwhile)."""
        from dataclasses import replace

        proved = self._run(deadline)
        return replace(self.outcome, complete=proved or self.outcome.complete)

    def _run(self, deadline: float | None) -> bool:
        prep = self.prepared
        t0 = time.perf_counter()
        stop = lambda: self.incumbent.stopped or clock.past(deadline)  # noqa: E731
        result = eliminate(prep.network, prep.plan, join=self._joiner(), stop=stop)
        self.elimination_s = time.perf_counter() - t0
        if result is None:
            return False
        if not result.feasible:
            return True  # every constraint is in the network: no solution exists
        found = self._on_host(result.assignment)
        self.completed_by = "host"
        if found is None:
            found, self.completed_by = self._replay(result.assignment, deadline), "kernel"
        if found is None:
            return False
        if found[0] != result.cost:
            self._internal(
                f"bucket elimination's optimum {result.cost * self.dm.obj_sense} and its solution's "
                f"objective {found[0] * self.dm.obj_sense} differ"
            )
            return False
        return True

    def _on_host(self, assignment: dict[int, int]):
        """The full solution of the optimal assignment computed here, without a kernel: each
        variable the network left out and a constraint defines, from its inputs by the
        defining kind's image (bucket/evaluate.py), in passes until none is left; then every
        constraint and domain verified (local/verify.py, the FlatZinc meanings as the checker
        reads them). Offered to the incumbent as the replay's would be, and returned as
        (objective, values); None where a variable has no image or the values break anything:
        the search kernel's replay then decides. A run whose buckets all fit the host needs no
        device program at all."""
        from ..local.verify import violations

        V, dm = self.model.vars, self.dm
        n = len(V)
        if dm.nv != n or dm.sol_words or dm.nf or dm.obj_var < 0:
            return None
        values = np.zeros(n, np.int64)
        known = np.asarray(V.lb == V.ub, dtype=bool).copy()
        values[known] = np.asarray(V.lb)[known]
        for v, x in self._complete(assignment).items():
            values[v], known[v] = x, True
        defs = [
            (table.kind, evaluate.decode(table.kind, table.row(r)), int(y))
            for table in self.model.tables.values()
            for r, y in enumerate(table.defines)
            if y >= 0 and not known[y]
        ]
        value = lambda u: np.int64(values[u])  # noqa: E731
        while defs:
            left = []
            for kind, args, y in defs:
                if known[y]:
                    continue
                inputs = [u for u in evaluate.variables(args) if u != y]
                if not known[inputs].all():
                    left.append((kind, args, y))
                    continue
                img = evaluate.image(kind, args, y, value)
                if img is None or not bool(img[1]):
                    return None
                values[y], known[y] = int(img[0]), True
            if len(left) == len(defs):
                return None  # a cycle, or an input no constraint defines
            defs = left
        if not known.all() or np.abs(values).max(initial=0) > INT_LIMIT or violations(self.model, values):
            return None
        obj = int(values[dm.obj_var]) * dm.obj_sense
        self.incumbent.offer(np.concatenate([[obj], values])[None, :], "bucket")
        found: Solution = (obj, values)
        return found

    def _replay(self, assignment: dict[int, int], deadline: float | None):
        """The full solution of the optimal assignment, through the search kernel on the first
        device (offered to the incumbent: printed if it improves), or None."""
        if not self.runners:
            self.runners = [
                Runner(self.devices[0], self.dm, seed=self.opts.seed, max_items=1, verbose=self.opts.verbose)
            ]
        runner = self.runners[0]
        decisions = [(v, int(Op.EQ), value, 0) for v, value in sorted(self._complete(assignment).items())]
        flat = np.array(decisions, dtype=np.int32).reshape(-1)
        paths = Paths(np.array([0, DEC * len(decisions)], dtype=np.int32), flat if len(flat) else np.zeros(0, np.int32))
        runner.set_best(INT_MAX)
        how = Exploration(node_limit=self.dm.nv + 16, prune=False)
        _, found = run_batch(runner, paths, deadline, how, lambda sols: self.incumbent.offer(sols, "bucket"))
        if found is None and not self.incumbent.stopped and (deadline is None or time.monotonic() < deadline):
            self._internal("bucket elimination's optimal assignment found no solution through the kernels")
        return found

    def _internal(self, what: str) -> None:
        """A disagreement between the elimination and the kernels: said at once, nothing claimed."""
        message = f"{what} (an internal error in fzn-gpu: please report it with the model)"
        print(f"fzn-gpu: {message}", file=sys.stderr)
        self.incumbent.note_error(message)

    def _complete(self, assignment: dict[int, int]) -> dict[int, int]:
        """The network's assignment, and every other int or bool variable that is not defined
        by a constraint at its smallest value: such a variable is in no table, every constraint
        naming it holding whatever its value. The defined ones left are propagation's."""
        V = self.model.vars
        # defined: a constraint's defines_var names it (is_aux also asks for the variable's own
        # is_defined_var, which FlatZinc written by hand may leave out: such an objective was
        # fixed at its smallest value, and the optimum's replay found no solution)
        defined = np.zeros(len(V), dtype=bool)
        for table in self.model.tables.values():
            defined[table.defines[table.defines >= 0]] = True
        out = dict(assignment)
        for v in range(len(V)):
            if v not in out and not defined[v] and V.kind[v] in (VarKind.INT, VarKind.BOOL):
                out[v] = int(V.domain(v).lo)
        return out

    def progress(self) -> Outcome:
        from dataclasses import replace

        return replace(self.outcome, complete=False)

    def stop(self) -> None:
        """Ends the search at its next slice, keeping what it found (an interrupt: SolveRun.wind_down)."""
        self.incumbent.stopped = True

    def extra_stats(self) -> dict[str, object]:
        stats = bucket_stats(self.prepared, self.elimination_s, self.where)
        if self.completed_by:
            stats["bucketCompletedBy"] = self.completed_by
        return stats


def bucket_stats(prep: Prepared, seconds: float, where: str) -> dict[str, object]:
    p = prep.plan
    return {
        "bucketWidth": p.width,
        "bucketLargestTable": p.largest,
        "bucketWork": p.total,
        "bucketPlanTime": prep.seconds,
        "bucketTime": seconds,
        "bucketDevice": where,
    }


def say_why_not(why: NotDecomposable, verbose: bool) -> None:
    if verbose:
        print(f"fzn-gpu: no bucket elimination: {why}", file=sys.stderr)


def forced(model: Model, devices: list[Device], counting: bool = False) -> Prepared:
    """--engine bucket: the plan, or a clear error saying why the model is not one for it."""
    gpu = next((d for d in devices if d.is_gpu), None)
    try:
        return count_prepared(model, devices) if counting else prepare(model, gpu)
    except NotDecomposable as why:
        raise FznError(
            f"bucket elimination cannot solve this model: {why}", fix="use another engine (--engine auto)"
        ) from None
    except (MemoryError, ValueError, ArithmeticError) as err:
        raise FznError(
            f"bucket elimination could not plan this model ({type(err).__name__}: {err}; a bug in "
            "fzn-gpu, please report it with the model)",
            fix="use another engine (--engine auto)",
        ) from None


def free_values(model: Model, net: CostNetwork) -> int:
    """How many ways the variables outside the network's tables can take values, as complete
    search labels them (every int and bool variable is labelled): their values multiplied;
    -1 where one has too many to count."""
    named = set(net.domains) | set(net.fixed) | set(net.loose)
    out = 1
    for n in net.loose.values():
        if n < 0:
            return -1
        out *= n
    V = model.vars
    for v in range(len(V)):
        if v in named or V.kind[v] not in (VarKind.INT, VarKind.BOOL) or V.is_const[v]:
            continue
        size = sum(hi - lo + 1 for lo, hi in V.domain(v).ranges)
        if size > DOMAIN_MAX:
            return -1
        out *= size
    return out


def count_prepared(model: Model, devices: list[Device]) -> Prepared:
    """For -a --count-only of a satisfaction model: its network and plan, or NotDecomposable
    (also where the count could leave int64: every assignment of the network's variables
    together over 2^COUNT_BITS, or a variable outside it with too many values)."""
    from ..bucket.eliminate import COUNT_BITS

    prep = prepare(model, next((d for d in devices if d.is_gpu), None), counting=True)
    bits = sum(float(np.log2(len(d))) for d in prep.network.domains.values())
    if bits > COUNT_BITS:
        raise NotDecomposable(f"its count could reach 2^{bits:.0f}, beyond exact 64-bit counting")
    if free_values(model, prep.network) < 0:
        raise NotDecomposable("a variable in no table has too many values to count")
    return prep


class BucketCount:
    """-a --count-only of a satisfaction model: the solutions counted by bucket elimination with
    products and sums (eliminate.count), times the values of the variables outside its tables.
    No solution is printed; the count is exact, as complete search's would be."""

    def __init__(self, model: Model, prepared: Prepared):
        self.model = model
        self.prepared = prepared
        self.runners: list = []
        self.shares: list = []
        self.seconds = 0.0

    def run(self, deadline: float | None) -> Outcome:
        from ..bucket.eliminate import count

        t0 = time.perf_counter()
        stop = lambda: clock.past(deadline)  # noqa: E731
        n = count(self.prepared.network, self.prepared.plan, stop)
        self.seconds = time.perf_counter() - t0
        if n is None:
            return Outcome()
        return Outcome(complete=True, solutions=n * free_values(self.model, self.prepared.network))

    def progress(self) -> Outcome:
        return Outcome()

    def stop(self) -> None:
        """Nothing to end early: counting by tables is one numpy pass (the interrupt then
        ends the run with what progress() says)."""

    def extra_stats(self) -> dict[str, object]:
        return bucket_stats(self.prepared, self.seconds, "host")
