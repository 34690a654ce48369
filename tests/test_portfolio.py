"""The portfolio (engine/portfolio.py), the default for optimisation: LNS and branch and bound
at once, one strictly improving stream, the proof of either ending the run with `==========`
at the true optimum (brute force decides it), the engine flags choosing one engine alone, and
each engine taking the other's solutions."""

import re
import subprocess
import threading
import time

import numpy as np
import pytest

from fzn_gpu.engine import assignment
from fzn_gpu.engine.complete import CompleteSearch
from fzn_gpu.engine.incumbent import Incumbent, Outcome
from fzn_gpu.engine.pack import pack
from fzn_gpu.engine.portfolio import split_devices
from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions
from fzn_gpu.runtime.device import Device, select_devices

from helpers import ROOT, have_minizinc, solve_text, stable_rng, superseded
from test_cli import fzn, run

MODELS = ROOT / "models" / "lns"
needs_minizinc = pytest.mark.skipif(
    not have_minizinc(), reason="needs minizinc with gpu-fzn registered (README set-up)"
)


def proven(stdout: str) -> bool:
    """The stream ends with `==========` (statistics may follow it)."""
    return re.search(r"^==========$", stdout, re.M) is not None


def knapsack(weights: list[int], values: list[int], limit: int, cover: bool) -> str:
    """0/1 items as FlatZinc: maximise the value within the weight limit, or (cover) minimise
    the value of items whose weights reach the limit."""
    n = len(weights)
    xs = ", ".join(f"x{i}" for i in range(n))
    lines = [f"var 0..1: x{i};" for i in range(n)]
    lines.append(f"var 0..{sum(values)}: obj :: output_var;")
    lines.append(f"array [1..{n}] of var int: x :: output_array([1..{n}]) = [{xs}];")
    sign = -1 if cover else 1
    lines.append(f"constraint int_lin_le([{', '.join(str(sign * w) for w in weights)}], [{xs}], {sign * limit});")
    lines.append(f"constraint int_lin_eq([{', '.join(map(str, values))}, -1], [{xs}, obj], 0) :: defines_var(obj);")
    lines.append(f"solve {'minimize' if cover else 'maximize'} obj;")
    return "\n".join(lines) + "\n"


def optimum(weights: list[int], values: list[int], limit: int, cover: bool) -> int:
    """By dynamic programming over the weight (capped at the limit when covering)."""
    if cover:
        best = [0] + [None] * limit  # least value reaching weight c (c = limit: at least it)
        for w, v in zip(weights, values):
            for c in range(limit, -1, -1):
                if best[c] is not None:
                    to = min(limit, c + w)
                    best[to] = best[c] + v if best[to] is None else min(best[to], best[c] + v)
        return best[limit]
    best = [0] * (limit + 1)  # most value within weight c
    for w, v in zip(weights, values):
        for c in range(limit, w - 1, -1):
            best[c] = max(best[c], best[c - w] + v)
    return best[limit]


def instance(seed: int, n: int | None = None) -> tuple[list[int], list[int], int, bool]:
    rng = stable_rng("portfolio", seed, n)
    n = n or rng.randint(8, 13)
    weights = [rng.randint(1, 30) for _ in range(n)]
    values = [rng.randint(1, 40) for _ in range(n)]
    return weights, values, sum(weights) // rng.randint(2, 4), seed % 2 == 1


@pytest.mark.parametrize("seed", range(8))
def test_the_portfolio_proves_the_brute_force_optimum(seed):
    """Random knapsacks, maximising and covering: every solution checked, the stream strictly
    improving, the run complete at the optimum."""
    weights, values, limit, cover = instance(seed)
    found, outcome = solve_text(knapsack(weights, values, limit, cover), portfolio=True, all_solutions=True)
    objs = [s["obj"] for s in found]
    best = optimum(weights, values, limit, cover)
    assert outcome.complete and objs and objs[-1] == best
    sense = 1 if cover else -1
    assert all(sense * b < sense * a for a, b in zip(objs, objs[1:]))


def test_bucket_elimination_plans_beside_the_engines_and_stops_with_them(monkeypatch):
    """Bucket elimination's plan is made in its own thread while the other engines search: a
    plan that never ends (a stand-in for a model whose network takes seconds to make) neither
    delays their first solution nor outlives their proof, since it sees the run end."""
    from fzn_gpu.bucket.network import NotDecomposable
    from fzn_gpu.engine import bucket

    saw_stop: list[float] = []
    began = time.monotonic()

    def endless(model, device, counting=False, stop=None):
        while not (stop is not None and stop()) and time.monotonic() - began < 40:
            time.sleep(0.01)
        saw_stop.append(time.monotonic() - began)
        raise NotDecomposable("stopped")

    monkeypatch.setattr(bucket, "prepare", endless)
    weights, values, limit, cover = instance(3)
    found, outcome = solve_text(knapsack(weights, values, limit, cover), portfolio=True, time_limit_ms=60000)
    assert outcome.complete and found[-1]["obj"] == optimum(weights, values, limit, cover)
    assert len(saw_stop) == 1 and saw_stop[0] < 30  # the proof, long before the time limit


def knapsack_model(seed: int):
    """(model, packed model, options, optimum, checker) of instance(seed), lowered in-process."""
    weights, values, limit, cover = instance(seed)
    text = knapsack(weights, values, limit, cover)
    model = lower(parse_items(text, "k.fzn"), "k.fzn")
    opts = SolveOptions()
    return model, pack(model, opts), opts, optimum(weights, values, limit, cover), Checker(parse_items(text, "k.fzn"))


def test_branch_and_bound_takes_the_incumbents_bound():
    """Given the optimum by another engine before it starts, branch and bound prints nothing
    and proves it: every slice searched below the shared bound."""
    model, dm, opts, _, _ = knapsack_model(2)
    rows = []
    alone = CompleteSearch(
        model, dm, select_devices("all")[0], opts, lambda values, obj: rows.append(np.r_[obj * dm.obj_sense, values])
    )
    assert alone.run(None).complete
    incumbent = Incumbent(Outcome(), dm.obj_sense, lambda values, obj: None)
    incumbent.offer(np.array(rows[-1:]), "other")
    bnb = CompleteSearch(
        model, dm, select_devices("all")[0], opts, lambda *a: pytest.fail("printed again"), incumbent=incumbent
    )
    outcome = bnb.run(None)
    assert outcome.complete and outcome.solutions == 0
    assert incumbent.found_by() == "other:1"


@pytest.mark.parametrize("with_incumbent", [False, True])
def test_a_lost_solution_makes_the_end_of_the_search_no_proof(monkeypatch, with_incumbent):
    """A solution the device found (its bound fell) that never reached the stream: the search
    still explores everything below the device's bound, so its end would prove an optimum
    that was not printed. CompleteSearch._lost_solution turns that into an incomplete search
    that says why; the same search with nothing lost proves the optimum."""
    model, dm, opts, best, checker = knapsack_model(2)
    printed = []

    def report(values, obj):
        bad = checker.check(assignment(model, values))
        assert not bad, f"a non-solution: {bad[0]}"
        printed.append(obj)

    incumbent = Incumbent(Outcome(), dm.obj_sense, report) if with_incumbent else None

    def search() -> CompleteSearch:
        return CompleteSearch(model, dm, select_devices("all")[0], opts, report, incumbent=incumbent)

    take = CompleteSearch._take_locked
    dropped = []

    def drop_the_optimum(self, sols):
        if sols is not None and len(sols) and int(sols[:, 0].min()) == best * dm.obj_sense and not dropped:
            dropped.append(sols)  # the optimum's batch never reaches the stream
            return self._more()
        return take(self, sols)

    monkeypatch.setattr(CompleteSearch, "_take_locked", drop_the_optimum)
    outcome = search().run(None)
    assert dropped, "the optimum was found on the device"
    assert not outcome.complete and "a solution was lost" in (outcome.error or "")
    assert best not in printed
    monkeypatch.setattr(CompleteSearch, "_take_locked", take)
    printed.clear()
    if incumbent is not None:
        incumbent = Incumbent(Outcome(), dm.obj_sense, report)
    outcome = search().run(None)
    assert outcome.complete and outcome.error is None and printed[-1] == best


@needs_minizinc
@pytest.mark.parametrize(
    "model, objective, best, sense", [("knapsack_30", "value", 232, -1), ("tsp_10", "length", 72, 1)]
)
def test_by_default_both_engines_run_and_the_optimum_is_proven(model, objective, best, sense):
    r = subprocess.run(
        ["minizinc", "--solver", "gpu-fzn", "--check", "-a", "-s", str(MODELS / f"{model}.mzn")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    found = [int(v) for v in re.findall(rf"^{objective} = (-?\d+)$", r.stdout, re.M)]
    assert found and found[-1] == best and proven(r.stdout)
    assert all(sense * b < sense * a for a, b in zip(found, found[1:]))
    assert 'engine="portfolio"' in r.stdout and 'lnsStrategy="adaptive"' in r.stdout
    bnb = int(re.search(r"bnbImprovements=(\d+)", r.stdout).group(1))
    lns = int(re.search(r"lnsImprovements=(\d+)", r.stdout).group(1))
    assert bnb + lns == len(found) + superseded(r.stdout)  # found: those printed
    runs = re.search(r'improvementsBy="([^"]*)"', r.stdout).group(1).split()
    assert sum(int(x.split(":")[1]) for x in runs) == bnb + lns
    # the proof's engine: branch and bound, LNS's dive or bucket elimination
    assert re.search(r"^%%%mzn-stat: provedBy=\"?(bnb|lns|bucket)\"?$", r.stdout, re.M)


@needs_minizinc
def test_without_a_time_limit_an_annotated_lns_model_still_ends(tmp_path):
    """A 12-item knapsack with lns(...): LNS alone ran until stopped; in the portfolio branch
    and bound's proof ends the run."""
    text = (
        (MODELS / "knapsack_30.mzn")
        .read_text()
        .replace("int: n = 30;", "int: n = 12;")
        .replace("<= 120", "<= 60")
        .replace("solve ::", "solve :: lns(30, 8, 1, 20, complete_exploration, 1000000, 0) ::")
    )
    path = tmp_path / "k12.mzn"
    path.write_text(text)
    w = [(i * 37) % 23 + 5 for i in range(1, 13)]
    v = [(i * 53) % 29 + 3 for i in range(1, 13)]
    r = subprocess.run(
        ["minizinc", "--solver", "gpu-fzn", "--check", "-s", str(path)], capture_output=True, text=True, timeout=100
    )
    assert r.returncode == 0, r.stderr
    assert proven(r.stdout) and 'engine="portfolio"' in r.stdout
    assert re.findall(r"^value = (\d+)$", r.stdout, re.M)[-1] == str(optimum(w, v, 60, cover=False))


@pytest.mark.parametrize(
    "args, portfolio, proves",
    [
        (["--engine", "complete"], False, True),
        (["--engine", "lns"], False, False),
        (["--lns-strategy", "icm"], False, False),
        (["--engine", "portfolio", "--lns-strategy", "icm"], True, True),
        ([], True, True),
    ],
)
def test_an_engine_flag_runs_that_engine_alone(tmp_path, args, portfolio, proves):
    weights, values, limit, cover = instance(4, n=30)  # too big for LNS's first dive to finish
    path = fzn(tmp_path, knapsack(weights, values, limit, cover))
    t0 = time.monotonic()
    # without the relaxations: the knapsack relaxation's bound and hint let LNS's dive finish
    r = run("-s", "--check", "-t", "3000", "--relax", "off", *args, path)
    assert r.returncode == 0, r.stderr
    assert ('engine="portfolio"' in r.stdout) == portfolio
    assert ("lnsStrategy=" in r.stdout) == ("--engine" not in args or "complete" not in args)
    assert proven(r.stdout) == proves
    assert f"obj = {optimum(weights, values, limit, cover)}" in r.stdout or not proves
    assert time.monotonic() - t0 < 3.0 + 1.5


def test_a_model_lns_cannot_take_is_solved_by_complete_search(tmp_path):
    """A satisfaction model asked for the portfolio says so and is solved completely; a float
    objective takes complete search by default without a word."""
    r = run(
        "--engine",
        "portfolio",
        "--check",
        fzn(tmp_path, "var 1..3: x :: output_var;\nconstraint int_ne(x, 1);\nsolve satisfy;\n"),
    )
    assert r.returncode == 0 and re.search(r"^x = [23];$", r.stdout, re.M) and "LNS needs an objective" in r.stderr
    r = run(
        "-s",
        "--check",
        fzn(tmp_path, "var 0.0..2.0: f :: output_var;\nconstraint float_le(0.5, f);\nsolve minimize f;\n", "f.fzn"),
    )
    assert r.returncode == 0 and "==========" in r.stdout and not r.stderr.strip()
    assert 'engine="portfolio"' not in r.stdout


def test_on_two_devices_both_engines_share_them(monkeypatch, tmp_path):
    """Two PoCL sub-devices (one kind): both engines run on both, and the run still proves."""
    monkeypatch.setenv("FZN_GPU_CPU_SUBDEVICES", "2")
    weights, values, limit, cover = instance(5)
    r = run("-s", "--check", "-a", fzn(tmp_path, knapsack(weights, values, limit, cover)))
    assert r.returncode == 0, r.stderr
    assert proven(r.stdout)
    assert f"obj = {optimum(weights, values, limit, cover)}" in r.stdout
    for engine in ("bnb", "lns"):
        assert re.search(rf'{engine}Devices="[^";]+; [^";]+"', r.stdout), r.stdout[-1500:]


def _device(index: int, gpu: bool) -> Device:
    return Device(index, None, f"dev{index}", "test", gpu, 1, 1 << 30, 1 << 28)


def test_beside_cpus_lns_takes_the_gpus_and_branch_and_bound_the_cpus(monkeypatch):
    """The default split (portfolio.DEFAULT_SPLIT): on a machine with both kinds LNS runs on
    the GPUs alone and branch and bound on the CPUs; with one kind both engines get every
    device; the variables override it, and a kind the machine lacks falls back to all."""
    gpu, cpu, cpu2 = _device(0, True), _device(1, False), _device(2, False)
    monkeypatch.delenv("FZN_GPU_BNB_DEVICES", raising=False)
    monkeypatch.delenv("FZN_GPU_LNS_DEVICES", raising=False)
    assert split_devices([gpu, cpu, cpu2]) == ([cpu, cpu2], [gpu])
    assert split_devices([cpu, cpu2]) == ([cpu, cpu2], [cpu, cpu2])
    assert split_devices([gpu]) == ([gpu], [gpu])
    monkeypatch.setenv("FZN_GPU_BNB_DEVICES", "gpu")
    monkeypatch.setenv("FZN_GPU_LNS_DEVICES", "all")
    assert split_devices([gpu, cpu]) == ([gpu], [gpu, cpu])
    assert split_devices([cpu, cpu2]) == ([cpu, cpu2], [cpu, cpu2])  # no GPU: every device


def test_device_split_variables_are_checked(monkeypatch, tmp_path):
    monkeypatch.setenv("FZN_GPU_BNB_DEVICES", "fast")
    weights, values, limit, cover = instance(1)
    r = run(fzn(tmp_path, knapsack(weights, values, limit, cover)))
    assert r.returncode == 1 and "FZN_GPU_BNB_DEVICES" in r.stderr and "Traceback" not in r.stderr


def test_the_statistics_do_not_wait_for_a_report_in_progress():
    """The watchdog ends the stream holding the solver's stream lock and reads which engine
    found what (found_by, improvements_by) for the statistics, while an engine may sit in
    offer() printing an improvement, waiting for that stream lock: the statistics must not wait
    for offer() (they did, and the two waited for each other: a run past its time limit that
    never ended, seen with two solvers on two cores)."""
    stream = threading.Lock()
    printing = threading.Event()

    def report(values, objective):
        printing.set()
        with stream:
            pass

    incumbent = Incumbent(Outcome(), 1, report)
    stream.acquire()
    engine = threading.Thread(target=incumbent.offer, args=(np.array([[5, 1, 2]]), "bnb"))
    engine.start()
    assert printing.wait(10)
    read = []
    watchdog = threading.Thread(target=lambda: read.append((incumbent.found_by(), incumbent.improvements_by())))
    watchdog.start()
    watchdog.join(10)
    stream.release()
    engine.join(10)
    assert read == [("", {"bnb": 0, "lns": 0})]
    assert incumbent.found_by() == "bnb:1"


def test_a_paused_runner_waits_its_share_and_wakes_when_cancelled():
    """Runner.pause_after: a runner holding a quarter of the wall time waits three times its
    slice; not past the deadline; at once once its search is cancelled; not at all when whole."""
    from fzn_gpu.engine.runner import Runner

    def runner(share: float) -> Runner:
        r = object.__new__(Runner)
        r.time_share, r.resume = share, threading.Event()
        return r

    r = runner(0.25)
    t0 = time.monotonic()
    Runner.pause_after(r, 0.02, None)
    assert time.monotonic() - t0 >= 0.06
    t0 = time.monotonic()
    Runner.pause_after(r, 100.0, time.monotonic() + 0.05)  # the deadline comes first
    assert time.monotonic() - t0 < 5
    threading.Timer(0.05, r.resume.set).start()
    t0 = time.monotonic()
    Runner.pause_after(r, 100.0, None)  # cancelled while it waits
    assert time.monotonic() - t0 < 5
    whole = runner(1.0)
    t0 = time.monotonic()
    Runner.pause_after(whole, 100.0, None)
    assert time.monotonic() - t0 < 1


def test_branch_and_bound_sharing_its_device_still_proves_the_optimum():
    """A search whose launches pause for another engine (here forced on a CPU runner, since
    share_gpus touches GPUs only) proves the brute-force optimum all the same; share_gpus leaves
    a CPU whole."""
    model, dm, opts, best, checker = knapsack_model(3)
    rows = []

    def report(values, obj):
        bad = checker.check(assignment(model, values))
        assert not bad, f"a non-solution: {bad[0]}"
        rows.append(obj)

    bnb = CompleteSearch(model, dm, select_devices("all")[0], opts, report)
    bnb.share_gpus(0.25)
    assert bnb.runner.time_share == 1.0  # a CPU is not split
    bnb.runner.time_share = 0.5
    assert bnb.run(None).complete
    assert rows[-1] == best


def test_branch_and_bound_takes_its_gpus_whole_once_lns_has_ended():
    """In the portfolio, LNS's end (its restarts or time-out, or a failure) gives branch and
    bound its share of a shared GPU back, so that the proof does not go on at a quarter."""
    from fzn_gpu.engine import portfolio

    shares = []
    bnb = type("Bnb", (), {"share_gpus": lambda self, s: shares.append(s)})()
    done = Outcome()
    lns = type("Lns", (), {"run": lambda self, deadline: done})()
    assert portfolio._ThenWhole(lns, bnb).run(None) is done and shares == [1.0]

    def fail(self, deadline):
        raise RuntimeError("device lost")

    broken = type("Lns", (), {"run": fail})()
    with pytest.raises(RuntimeError):
        portfolio._ThenWhole(broken, bnb).run(None)
    assert shares == [1.0, 1.0]


@pytest.mark.parametrize(
    "text, ok", [(None, True), ("0.5", True), ("1", True), ("0", False), ("1.5", False), ("half", False)]
)
def test_the_shared_gpu_share_is_checked(monkeypatch, text, ok):
    from fzn_gpu.engine.portfolio import SHARED_GPU_BNB, shared_gpu_share
    from fzn_gpu.errors import FznError

    incumbent = Incumbent(Outcome(), 1, lambda values, obj: None)
    monkeypatch.delenv("FZN_GPU_BNB_PROVING_SHARE", raising=False)
    if text is None:
        monkeypatch.delenv("FZN_GPU_BNB_SHARE", raising=False)
    else:
        monkeypatch.setenv("FZN_GPU_BNB_SHARE", text)
    if ok:
        share = shared_gpu_share(incumbent)
        assert (share() if text is None else share) == (SHARED_GPU_BNB if text is None else float(text))
    else:
        with pytest.raises(FznError, match="FZN_GPU_BNB_SHARE"):
            shared_gpu_share(incumbent)
    monkeypatch.delenv("FZN_GPU_BNB_SHARE", raising=False)
    monkeypatch.setenv("FZN_GPU_BNB_PROVING_SHARE", text or "0.75")
    if ok:
        assert shared_gpu_share(incumbent).proving == float(text or "0.75")
    else:
        with pytest.raises(FznError, match="FZN_GPU_BNB_PROVING_SHARE"):
            shared_gpu_share(incumbent)


def test_branch_and_bound_takes_more_of_a_shared_gpu_once_the_best_stands_still():
    """ProvingShare: the base share before any solution and while the best improves; the
    proving share once it has stood still for as long as the search took to reach it (at
    least QUIET_MIN_S); the base again at the next improvement, and while bucket elimination
    runs (`yield_to`)."""
    from fzn_gpu.engine import portfolio

    now = [100.0]
    bucket_runs = [False]
    incumbent = Incumbent(Outcome(), 1, lambda values, obj: None)
    incumbent.started = 100.0
    share = portfolio.ProvingShare(incumbent, proving=0.75, yield_to=lambda: bucket_runs[0], now=lambda: now[0])
    base = portfolio.SHARED_GPU_BNB
    assert base < 0.75
    now[0] = 105.0
    assert share() == base  # no solution yet, however long
    incumbent.improved_at = 100.01  # found 10 ms in: still for QUIET_MIN_S then
    now[0] = 100.01 + portfolio.QUIET_MIN_S * 0.9
    assert share() == base
    now[0] = 100.01 + portfolio.QUIET_MIN_S * 1.1
    assert share() == 0.75
    bucket_runs[0] = True
    assert share() == base
    bucket_runs[0] = False
    incumbent.improved_at = 104.0  # found 4 s in: the proving share after 4 s of stillness
    now[0] = 107.9
    assert share() == base
    now[0] = 108.1
    assert share() == 0.75


def test_the_incumbent_notes_when_it_improved():
    """Incumbent.improved_at moves with each improvement, not with a solution no better."""
    incumbent = Incumbent(Outcome(), 1, lambda values, obj: None)
    assert incumbent.improved_at is None
    incumbent.offer(np.array([[5, 1, 2]]))
    first = incumbent.improved_at
    assert first is not None
    time.sleep(0.01)
    incumbent.offer(np.array([[7, 1, 2]]))
    assert incumbent.improved_at == first
    incumbent.offer(np.array([[3, 1, 2]]))
    assert incumbent.improved_at > first


def _phases(monkeypatch) -> list[tuple[int, object]]:
    """(cutoff, lns exploration) of every phase the runners run from here on."""
    from fzn_gpu.engine.runner import Runner

    seen: list[tuple[int, object]] = []
    real = Runner.run_phase

    def run_phase(self, paths, cutoff, enqueue_all, on_slice, deadline, *args, **kwargs):
        seen.append((cutoff, kwargs.get("lns")))
        return real(self, paths, cutoff, enqueue_all, on_slice, deadline, *args, **kwargs)

    monkeypatch.setattr(Runner, "run_phase", run_phase)
    return seen


def _checked_rows(model, dm, checker, rows: list) -> object:
    """A report that checks each solution and keeps it as an incumbent's row (objective
    sense-adjusted, then the values)."""

    def report(values, obj):
        assert checker.check(assignment(model, values, None)) == []
        rows.append(np.r_[obj * dm.obj_sense, values])

    return report


def _plan_dive_search(model, dm, opts, checker, devices=None) -> tuple[object, list[int], CompleteSearch]:
    """Branch and bound with its plan dive on `devices` (this machine's first by default), run
    to its end: (outcome, the objectives reported, each solution checked, the search)."""
    objs: list[int] = []

    def report(values, obj):
        assert checker.check(assignment(model, values, None)) == []
        objs.append(obj)

    bnb = CompleteSearch(model, dm, devices if devices is not None else select_devices("all")[0], opts, report)
    bnb.plan_dive = True
    return bnb.run(None), objs, bnb


@pytest.mark.parametrize("seed", range(6))
def test_branch_and_bound_dives_in_the_plans_order_before_its_split(monkeypatch, seed):
    """The plan dive (CompleteSearch.plan_dive: the portfolio's branch and bound on a CPU
    beside LNS on GPUs) runs first, ends at its first solution, and the split and search that
    follow prove the brute-force optimum; every solution checked, the stream improving."""
    from fzn_gpu.engine.restart import PLAN_DIVE_NODES

    model, dm, opts, best, checker = knapsack_model(seed)
    seen = _phases(monkeypatch)
    outcome, objs, _ = _plan_dive_search(model, dm, opts, checker)
    assert outcome.complete and objs[-1] == best
    sense = dm.obj_sense
    assert all(sense * b < sense * a for a, b in zip(objs, objs[1:]))
    dive = seen[0][1]
    assert seen[0][0] == 0 and dive is not None and list(dive.limits) == [PLAN_DIVE_NODES]
    assert seen[1][0] == 1 and seen[1][1] is None  # then the root split, as without the dive


def test_branch_and_bound_without_the_plan_dive_splits_at_once(monkeypatch):
    model, dm, opts, best, checker = knapsack_model(1)
    seen = _phases(monkeypatch)
    rows: list = []
    bnb = CompleteSearch(model, dm, select_devices("all")[0], opts, _checked_rows(model, dm, checker, rows))
    assert bnb.run(None).complete and rows[-1][0] * dm.obj_sense == best
    assert seen[0][0] == 1 and all(lns is None for _, lns in seen)


@pytest.mark.parametrize("given", ["none", "the optimum"])
def test_a_plan_dive_that_explores_everything_is_a_proof(monkeypatch, given):
    """A dive that searched the whole tree and met nothing there ends the search complete: a
    model without solutions (a cover no choice reaches) is unsatisfiable. With a solution from
    another engine before it starts there is no dive: the optimum given, nothing is printed
    and it is proven."""
    weights, values, limit, _ = instance(4, n=6)
    limit = sum(weights) + 1 if given == "none" else sum(weights) // 2
    text = knapsack(weights, values, limit, True)
    model = lower(parse_items(text, "k.fzn"), "k.fzn")
    opts = SolveOptions()
    dm = pack(model, opts)
    incumbent = Incumbent(Outcome(), dm.obj_sense, lambda values, obj: None)
    if given == "the optimum":
        rows: list = []
        checker = Checker(parse_items(text, "k.fzn"))
        alone = CompleteSearch(model, dm, select_devices("all")[0], opts, _checked_rows(model, dm, checker, rows))
        assert alone.run(None).complete and rows
        incumbent.offer(np.array(rows[-1:]), "other")
    seen = _phases(monkeypatch)
    bnb = CompleteSearch(
        model, dm, select_devices("all")[0], opts, lambda *a: pytest.fail("printed"), incumbent=incumbent
    )
    bnb.plan_dive = True
    outcome = bnb.run(None)
    assert outcome.complete and outcome.solutions == 0
    if given == "none":
        assert len(seen) == 1 and seen[0][1] is not None  # the dive alone
    else:
        assert seen and all(lns is None for _, lns in seen)


def test_beside_lns_on_gpus_branch_and_bound_on_a_cpu_dives_first(monkeypatch):
    """The portfolio sets the plan dive where LNS has GPUs alone and branch and bound a CPU
    (a GPU's lone dive for LNS's first solution is slow), and nowhere else; the optimum proven,
    every solution checked."""
    import dataclasses

    from fzn_gpu.engine.portfolio import PortfolioSearch
    from fzn_gpu.runtime import device as device_mod

    monkeypatch.setenv("FZN_GPU_CPU_SUBDEVICES", "2")
    device_mod.all_devices.cache_clear()
    try:
        cpus = list(device_mod.all_devices())
        gpu = dataclasses.replace(cpus[0], is_gpu=True)
        model, dm, opts, best, checker = knapsack_model(5)
        for devices, dives in (([gpu, cpus[1]], True), (cpus, False)):
            found: list[int] = []

            def report(values, obj):
                assert checker.check(assignment(model, values, None)) == []
                found.append(obj)

            search = PortfolioSearch(model, dm, devices, opts, report, model.solve.lns)
            assert search.bnb.plan_dive is dives
            assert search.run(time.monotonic() + 60).complete and found[-1] == best
    finally:
        device_mod.all_devices.cache_clear()


def test_branch_and_bound_waits_a_while_for_another_engines_first_solution(monkeypatch):
    """Before its plan dive, branch and bound waits FZN_GPU_BNB_DIVE_WAIT_MS for another
    engine's first solution: one that comes within it (here from a thread, 50 ms in) leaves
    the dive out and the split starts with its bound; none within it, and the dive runs. The
    optimum proven both ways, every printed solution checked."""
    model, dm, opts, best, checker = knapsack_model(3)
    rows: list = []
    alone = CompleteSearch(model, dm, select_devices("all")[0], opts, _checked_rows(model, dm, checker, rows))
    assert alone.run(None).complete
    first = np.array(rows[:1])  # the first solution complete search met: rarely the optimum
    for wait_ms, comes, dives in ((5000, True, False), (50, False, True)):
        monkeypatch.setenv("FZN_GPU_BNB_DIVE_WAIT_MS", str(wait_ms))
        printed: list[int] = []

        def report(values, obj):
            assert checker.check(assignment(model, values, None)) == []
            printed.append(obj)

        incumbent = Incumbent(Outcome(), dm.obj_sense, report)
        if comes:
            threading.Timer(0.05, lambda: incumbent.offer(first, "other")).start()
        seen = _phases(monkeypatch)
        bnb = CompleteSearch(model, dm, select_devices("all")[0], opts, report, incumbent=incumbent)
        bnb.plan_dive = True
        t0 = time.monotonic()
        assert bnb.run(None).complete and printed[-1] == best
        assert any(lns is not None for _, lns in seen) is dives
        assert time.monotonic() - t0 < 4  # never the whole wait once a solution is in
        monkeypatch.undo()


@pytest.mark.parametrize("seed", range(10))
def test_the_plan_dive_proves_covers_with_and_without_solutions(seed):
    """Covers whose limit is near the items' whole weight, some unreachable: branch and bound
    with its plan dive proves the dynamic programme's optimum, or that there is none (a dive
    that explores the whole tree without a solution is that proof); every solution checked."""
    rng = stable_rng("plan dive covers", seed)
    n = rng.randint(5, 9)
    weights = [rng.randint(1, 12) for _ in range(n)]
    values = [rng.randint(1, 20) for _ in range(n)]
    limit = sum(weights) - rng.randint(-2, 6)
    text = knapsack(weights, values, limit, True)
    model = lower(parse_items(text, "k.fzn"), "k.fzn")
    opts = SolveOptions()
    dm = pack(model, opts)
    outcome, objs, _ = _plan_dive_search(model, dm, opts, Checker(parse_items(text, "k.fzn")))
    best = optimum(weights, values, limit, True) if limit <= sum(weights) else None
    assert outcome.complete
    assert (objs[-1] if objs else None) == best


def test_a_device_failing_in_the_plan_dive_leaves_the_search_to_the_others(monkeypatch):
    """The plan dive's device fails (a test's fault device=0:0): the split and search go on on
    the other device, said on stderr, and the optimum is proven, every solution checked."""
    from fzn_gpu import hooks
    from fzn_gpu.runtime import device as device_mod

    monkeypatch.setenv("FZN_GPU_CPU_SUBDEVICES", "2")
    device_mod.all_devices.cache_clear()
    try:
        model, dm, opts, best, checker = knapsack_model(6)
        with hooks.inject(hooks.Plan.parse("device=0:0")):
            outcome, objs, bnb = _plan_dive_search(model, dm, opts, checker, list(device_mod.all_devices()))
        assert outcome.complete and objs[-1] == best
        assert [r.device.index for r in bnb.runners] == [1]
    finally:
        device_mod.all_devices.cache_clear()
