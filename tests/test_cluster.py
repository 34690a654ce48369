"""A search on a Ray cluster (fzn_gpu/cluster/): a local cluster of two nodes on this machine,
one worker each on a one-thread PoCL device, must give the same counts, solution limits and
optima as one process, lose nothing when a worker dies in the middle of a block, and end with
what it has, never a claim of completeness, when every worker dies. Ray is the `cluster`
extra, which scripts/setup.sh installs."""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest

from fzn_gpu import hooks
from fzn_gpu.cluster.driver import worker_slots
from fzn_gpu.cluster.worker import ClusterWorker, _FedSplit, _NodeIncumbent
from fzn_gpu.engine.balance import DeviceShare, WorkPool
from fzn_gpu.engine.pack import pack
from fzn_gpu.engine.paths import Paths
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions
from fzn_gpu.runtime.kernel_abi import DEC, Op

from test_cli import ROOT, fzn, queens, run
from test_multidevice import KNAPSACK, QUEENS10, stat


def test_one_worker_per_gpu_and_one_per_node_without():
    nodes = [
        {"NodeID": "a", "Alive": True, "Resources": {"CPU": 16.0, "GPU": 2.0}},
        {"NodeID": "b", "Alive": True, "Resources": {"CPU": 4.0}},
        {"NodeID": "c", "Alive": False, "Resources": {"CPU": 4.0, "GPU": 1.0}},
    ]
    assert worker_slots(nodes) == [("a", 1), ("a", 1), ("b", 0)]
    with hooks.inject(hooks.Plan.parse("worker=1:2,0:1")):
        assert hooks.failing_workers() == {1: 2, 0: 1}
    assert hooks.failing_workers() == {}


def first_queen_paths(model, n: int, values) -> Paths:
    """Paths q1 = v, one per value: disjoint sub-search spaces that together cover the tree."""
    q1 = model.vars.names.index("q1")
    data = np.array([[q1, int(Op.EQ), v, 0] for v in values], np.int32).reshape(-1)
    return Paths(np.arange(len(values) + 1, dtype=np.int32) * DEC, data)


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.2])
def test_a_worker_takes_paths_fed_while_its_block_runs(delay):
    """The worker as a plain object (no Ray): a block of the first queen's first values, the
    rest fed from another thread after `delay` while the block runs, or after it ended (then
    the worker refuses them, and they make a block of their own, as the driver does): every
    solution counted once."""
    import threading
    import time

    text = queens(10)
    model = lower(parse_items(text, "q.fzn"), "q.fzn")
    opts = SolveOptions(all_solutions=True, count_only=True)
    dm = pack(model, opts)
    worker = ClusterWorker(model, dm, opts, 0)
    r = worker.search.runner
    root = (r.root_lb, r.root_ub, r.root_bits, r.root_fb)
    block, rest = first_queen_paths(model, 10, range(1, 4)), first_queen_paths(model, 10, range(4, 11))
    refused: list[Paths] = []

    def feed():
        time.sleep(delay)
        for i in range(len(rest)):  # one path at a time, as chunks arrive
            one = rest.block(i, i + 1)
            if not worker.feed(one.ptr, one.data):
                refused.append(one)

    feeder = threading.Thread(target=feed)
    feeder.start()
    result = worker.search_block(block.ptr, block.data, root, None, None, None)
    feeder.join()
    counted = result.counted
    assert result.finished
    if refused:
        late = Paths.concat(refused)
        result = worker.search_block(late.ptr, late.data, root, None, None, None)
        counted += result.counted
    assert counted == 724


def test_a_fed_split_takes_paths_until_it_closes():
    split = _FedSplit(longest=4, unstarted=3)
    assert split.more() is None and split.keep(started=1, n=3) == 3 and split.unstarted == 2
    one = Paths(np.array([0, DEC], np.int32), np.zeros(DEC, np.int32))
    assert split.feed(one) and split.unstarted == 3
    assert len(split.more()) == 1 and split.more() is None
    assert split.feed(one) and len(split.close()) == 1  # fed after the phase's last slice
    assert split.close() is None and not split.feed(one)  # closed: the driver keeps them


def test_a_worker_sends_its_islands_improvements_and_not_the_runs_best_back():
    inc = _NodeIncumbent(obj_sense=1)
    rows = lambda *objs: np.array([[o, o, 7] for o in objs], np.int32)  # noqa: E731  (objective, two values)
    assert inc.offer(rows(30, 20)) == 2 and inc.take()[:, 0].tolist() == [30, 20]
    assert inc.offer(rows(10), "driver") == 1 and inc.take() is None  # the run's best: a start, not news
    assert inc.offer(rows(15)) == 0 and inc.take() is None  # no better than the best: nothing to send
    assert inc.offer(rows(12, 5)) == 1 and inc.take()[:, 0].tolist() == [5]
    assert inc.bound() == 5


def test_a_worker_runs_lns_islands_and_stops_when_told():
    """The worker as a plain object: its islands find the knapsack's solutions (each row its
    objective and values, the values a solution by the checker), and lns_stop ends them."""
    import threading

    from fzn_gpu.engine import assignment
    from fzn_gpu.flatzinc.check import Checker

    model = lower(parse_items(KNAPSACK, "k.fzn"), "k.fzn")
    opts = SolveOptions()
    dm = pack(model, opts)
    worker = ClusterWorker(model, dm, opts, 0)
    done: list[dict] = []
    t = threading.Thread(target=lambda: done.append(worker.lns(30.0)))
    t.start()
    found = None
    for _ in range(200):
        found = worker.lns_poll(None)
        if found is not None:
            break
        t.join(0.05)
    worker.lns_stop()
    t.join(30)
    assert not t.is_alive() and done and done[0]["steps"] >= 0
    assert found is not None
    checker = Checker(parse_items(KNAPSACK, "k.fzn"))
    for row in found:
        assert not checker.check(assignment(model, row[1:])), row
        assert row[0] * dm.obj_sense == row[1 + model.vars.names.index("value")]


def test_the_pool_feeds_a_running_block_in_shrinking_parts_and_takes_it_back_on_a_fault():
    a, b = DeviceShare(0, "a", True, items=100), DeviceShare(1, "b", True, items=100)
    pool = WorkPool(
        Paths(np.arange(1001, dtype=np.int32) * DEC, np.zeros(1000 * DEC, np.int32)), [a, b], lead_all=False
    )
    first = pool.take(a)
    assert first is not None and len(first.paths) == 100  # calibration: one per work-item
    sizes = []
    while (chunk := pool.feed(0)) is not None:
        sizes.append(len(chunk))
        pool.fed(0, chunk)
    # one per work-item while many are left, then a quarter of the rest (two devices live)
    assert sizes[0] == 100 and sizes[-1] == 1 and sizes == sorted(sizes, reverse=True) and sum(sizes) == 900
    pool.give_back(0)  # the device failed: its block and all it was fed go back
    assert pool.remaining() == 1000
    chunk = pool.feed(1)
    assert chunk is not None and len(chunk) == 1000  # given-back paths first, whole
    pool.unfed(chunk)
    assert pool.remaining() == 1000


def test_without_ray_the_flag_says_how_to_install_it(tmp_path):
    """A `ray` that cannot be imported (a package that raises ImportError, first on the path)."""
    shim = tmp_path / "shim" / "ray"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('no ray here')\n")
    import subprocess

    env = dict(os.environ, PYTHONPATH=f"{shim.parent}{os.pathsep}{ROOT}", FZN_GPU_SERVER="off")
    r = subprocess.run(
        [sys.executable, "-m", "fzn_gpu", "--cluster", "auto", fzn(tmp_path, QUEENS10)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "--cluster needs Ray" in r.stderr and "fzn-gpu[cluster]" in r.stderr, r.stderr


@pytest.fixture(scope="module")
def cluster():
    """Two Ray nodes on this machine, one CPU each; their workers' PoCL devices run one thread.
    Without Ray's token authentication (RAY_AUTH_MODE=disabled, which the runs inherit too): a
    cluster made by ray.cluster_utils ignores a token this machine may hold."""
    pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    saved = {k: os.environ.get(k) for k in ("POCL_MAX_PTHREAD_COUNT", "RAY_AUTH_MODE")}
    os.environ["POCL_MAX_PTHREAD_COUNT"] = "1"  # the nodes' processes inherit it
    os.environ["RAY_AUTH_MODE"] = "disabled"
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    c.add_node(num_cpus=1)
    c.wait_for_nodes()
    del os.environ["POCL_MAX_PTHREAD_COUNT"]
    yield c.address
    c.shutdown()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def solutions(out: str) -> list[str]:
    return [s.strip() for s in out.split("----------")[:-1]]


@pytest.mark.parametrize("fault", [None, "1:1", "0:2"])
def test_counts_limits_and_optima_agree_with_one_process(tmp_path, cluster, monkeypatch, fault):
    if fault:
        monkeypatch.setenv("FZN_GPU_TEST_HOOKS", f"worker={fault}")
    r = run("--cluster", cluster, "--engine", "complete", "-a", "--count-only", "-s", fzn(tmp_path, QUEENS10))
    assert r.returncode == 0, r.stderr
    assert stat(r.stdout, "solutions") == "724" and "==========" in r.stdout
    assert stat(r.stdout, "clusterWorkers") == "2"
    subs = [int(stat(r.stdout, f"w{i}_subSearchSpaces") or 0) for i in (0, 1)]
    failed = [stat(r.stdout, f"w{i}_failed") for i in (0, 1)]
    # every sub-search space of the split searched to the end once, by a worker that lived
    assert sum(subs) == int(stat(r.stdout, "subSearchSpaces")), r.stdout
    if fault is None:
        assert min(subs) > 0 and failed == [None, None]
    else:  # the fault fired where the worker got that many blocks, and was survived
        dead = int(fault[0])
        assert failed[1 - dead] is None
        assert failed[dead] is None or "died" in failed[dead], failed
    # every solution printed, each checked, the same set as one process's
    named = fzn(tmp_path, queens(10), "q.fzn")
    r = run("--cluster", cluster, "--engine", "complete", "-a", "--check", named)
    alone = run("--engine", "complete", "-a", "--check", named)
    assert r.returncode == 0 and "==========" in r.stdout, r.stderr
    assert sorted(solutions(r.stdout)) == sorted(solutions(alone.stdout)) and len(solutions(r.stdout)) == 724
    r = run("--cluster", cluster, "--engine", "complete", "-n", "5", "--check", named)
    assert r.returncode == 0 and len(set(solutions(r.stdout))) == 5 and "==========" not in r.stdout
    # branch and bound: improvements from the workers, the bound shared through the driver
    k = fzn(tmp_path, KNAPSACK, "k.fzn")
    r = run("--cluster", cluster, "--engine", "complete", "-s", "--check", k)
    alone = run("--engine", "complete", "-s", "--check", k)
    assert r.returncode == 0 and "==========" in r.stdout, r.stderr
    assert stat(r.stdout, "objective") == stat(alone.stdout, "objective") == "41"


def test_the_portfolio_branch_and_bound_runs_on_the_cluster(tmp_path, cluster):
    r = run("--cluster", cluster, "-s", "--check", "--bucket", "off", fzn(tmp_path, KNAPSACK, "k.fzn"))
    assert r.returncode == 0 and "==========" in r.stdout, r.stderr
    assert stat(r.stdout, "objective") == "41" and stat(r.stdout, "clusterWorkers") == "2"


def test_a_cluster_that_dies_ends_the_search_incomplete_with_what_it_found(tmp_path, cluster, monkeypatch):
    monkeypatch.setenv("FZN_GPU_TEST_HOOKS", "worker=0:1,1:1")
    r = run("--cluster", cluster, "--engine", "complete", "-a", "--check", "-s", fzn(tmp_path, queens(10)))
    assert "Traceback" not in r.stderr
    assert "every cluster worker failed" in r.stderr, r.stderr
    assert "==========" not in r.stdout and "UNSATISFIABLE" not in r.stdout
    # what the driver's root split found is printed, and nothing is claimed about the rest
    assert len(solutions(r.stdout)) == int(stat(r.stdout, "solutions")) < 724


def test_an_unreachable_cluster_is_a_clear_error(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # no token asked for: the address is what fails
    r = run("--cluster", "ray://127.0.0.1:1", fzn(tmp_path, QUEENS10))
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert re.search(r"cannot join the Ray cluster at ray://127\.0\.0\.1:1", r.stderr), r.stderr
    assert "ray start --head" in r.stderr


def test_a_cluster_started_by_ray_start_is_joined_by_its_address(tmp_path):
    """The README's way: `ray start --head`, then the run given HOST:PORT, on a machine with a
    Ray token (RAY_AUTH_TOKEN_PATH here), which makes `ray start` require it: the run sends it."""
    pytest.importorskip("ray")
    import secrets
    import signal
    import socket
    import subprocess

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = tmp_path / "auth_token"
    token.write_text(secrets.token_hex(32))  # the form of Ray's own tokens
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", POCL_MAX_PTHREAD_COUNT="1", RAY_AUTH_TOKEN_PATH=str(token))
    env.pop("RAY_AUTH_MODE", None)
    head = subprocess.Popen(
        [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--port", str(port), "--num-cpus", "1"]
        + ["--include-dashboard=false", "--disable-usage-stats", "--block"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,  # the head's processes in a group of their own, ended together
    )
    try:
        assert head.stdout is not None
        for line in head.stdout:
            if "Ray runtime started" in line:
                break
        r = subprocess.run(  # the run in the same environment (the token's path)
            [sys.executable, "-m", "fzn_gpu", "--cluster", f"127.0.0.1:{port}", "--engine", "complete"]
            + ["-a", "--count-only", "-s", fzn(tmp_path, QUEENS10)],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        assert stat(r.stdout, "solutions") == "724" and int(stat(r.stdout, "w0_blocks")) > 0
    finally:
        os.killpg(head.pid, signal.SIGKILL)
        head.wait(30)


def test_a_time_limit_and_an_interrupt_end_a_cluster_run_as_on_one_machine(tmp_path, cluster):
    """-t ends the run at the limit (counted from the process's start, Ray's joining included)
    and an interrupt at once, each without a claim of completeness; the workers go with it."""
    import signal
    import subprocess
    import time

    from test_cli import LIMIT_SLACK_S, queens_by_pairs

    long_count = fzn(tmp_path, queens_by_pairs(15), "q15.fzn")
    t = time.monotonic()
    r = run("--cluster", cluster, "--engine", "complete", "-t", "5000", "-a", "--count-only", "-s", long_count)
    assert time.monotonic() - t < 5.0 + LIMIT_SLACK_S, r.stdout
    assert r.returncode == 0 and "==========" not in r.stdout, r.stderr
    assert int(stat(r.stdout, "solutions")) < 2279184  # 15-queens' count: cut short
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fzn_gpu",
            "--cluster",
            cluster,
            "--engine",
            "complete",
            "-a",
            "--count-only",
            long_count,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    time.sleep(4)  # joined, split, searching
    proc.send_signal(signal.SIGINT)
    t = time.monotonic()
    out, err = proc.communicate(timeout=60)
    assert time.monotonic() - t < 1.0 + LIMIT_SLACK_S
    assert proc.returncode == 128 + signal.SIGINT and "Traceback" not in err, err
    assert "==========" not in out


def test_lns_islands_run_on_every_worker_and_share_the_incumbent(tmp_path, cluster):
    """`--engine lns`: islands on the driver's devices and on each worker, every improvement
    printed once through the run's incumbent (each checked), the run ending at its limit with
    no claim of optimality."""
    import time

    from test_cli import LIMIT_SLACK_S

    # 15 s: each worker builds its kernel at its first launch, seconds on two busy cores with
    # PoCL's cache empty (a fresh CI machine), before its dive can find a first solution
    t = time.monotonic()
    r = run("--cluster", cluster, "--engine", "lns", "-t", "15000", "-s", "--check", fzn(tmp_path, KNAPSACK, "k.fzn"))
    assert time.monotonic() - t < 15.0 + LIMIT_SLACK_S
    assert r.returncode == 0 and "==========" not in r.stdout, r.stderr
    assert stat(r.stdout, "objective") is not None and int(stat(r.stdout, "objective")) <= 41
    steps = [int(stat(r.stdout, f"w{i}_lnsSteps") or 0) for i in (0, 1)]
    assert min(steps) > 0, r.stdout  # both workers' islands stepped


def test_lns_on_the_cluster_proves_an_unsatisfiable_model(tmp_path, cluster):
    """A worker's dive that explores the whole tree is a proof for the run, as one machine's."""
    text = "var 1..3: x;\nvar 1..3: y;\nconstraint int_lt(x, y);\nconstraint int_lt(y, x);\nsolve minimize x;\n"
    r = run("--cluster", cluster, "--engine", "lns", "-t", "20000", fzn(tmp_path, text, "u.fzn"))
    assert r.returncode == 0 and "=====UNSATISFIABLE=====" in r.stdout, (r.stdout, r.stderr)
