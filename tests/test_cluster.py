"""A search on a Ray cluster (fzn_gpu/cluster/): a local cluster of two nodes on this machine,
one worker each on a one-thread PoCL device, must give the same counts, solution limits and
optima as one process, lose nothing when a worker dies in the middle of a block, and end with
what it has, never a claim of completeness, when every worker dies. Ray is the `cluster`
extra, which scripts/setup.sh installs."""

from __future__ import annotations

import os
import re
import sys

import pytest

from fzn_gpu.cluster.driver import failing_workers, worker_slots

from test_cli import ROOT, fzn, queens, run
from test_multidevice import KNAPSACK, QUEENS10, stat


def test_one_worker_per_gpu_and_one_per_node_without():
    nodes = [
        {"NodeID": "a", "Alive": True, "Resources": {"CPU": 16.0, "GPU": 2.0}},
        {"NodeID": "b", "Alive": True, "Resources": {"CPU": 4.0}},
        {"NodeID": "c", "Alive": False, "Resources": {"CPU": 4.0, "GPU": 1.0}},
    ]
    assert worker_slots(nodes) == [("a", 1), ("a", 1), ("b", 0)]
    assert failing_workers("1:2,0:1") == {1: 2, 0: 1} and failing_workers("") == {}


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
        monkeypatch.setenv("FZN_GPU_FAIL_WORKER", fault)
    r = run("--cluster", cluster, "--engine", "complete", "-a", "--count-only", "-s", fzn(tmp_path, QUEENS10))
    assert r.returncode == 0, r.stderr
    assert stat(r.stdout, "nSolutions") == "724" and "==========" in r.stdout
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
    alone = run("--engine", "complete", "-a", named)
    assert r.returncode == 0 and "==========" in r.stdout, r.stderr
    assert sorted(solutions(r.stdout)) == sorted(solutions(alone.stdout)) and len(solutions(r.stdout)) == 724
    r = run("--cluster", cluster, "--engine", "complete", "-n", "5", "--check", named)
    assert r.returncode == 0 and len(set(solutions(r.stdout))) == 5 and "==========" not in r.stdout
    # branch and bound: improvements from the workers, the bound shared through the driver
    k = fzn(tmp_path, KNAPSACK, "k.fzn")
    r = run("--cluster", cluster, "--engine", "complete", "-s", "--check", k)
    alone = run("--engine", "complete", "-s", k)
    assert r.returncode == 0 and "==========" in r.stdout, r.stderr
    assert stat(r.stdout, "objective") == stat(alone.stdout, "objective") == "41"


def test_the_portfolio_branch_and_bound_runs_on_the_cluster(tmp_path, cluster):
    r = run("--cluster", cluster, "-s", "--check", "--bucket", "off", fzn(tmp_path, KNAPSACK, "k.fzn"))
    assert r.returncode == 0 and "==========" in r.stdout, r.stderr
    assert stat(r.stdout, "objective") == "41" and stat(r.stdout, "clusterWorkers") == "2"


def test_a_cluster_that_dies_ends_the_search_incomplete_with_what_it_found(tmp_path, cluster, monkeypatch):
    monkeypatch.setenv("FZN_GPU_FAIL_WORKER", "0:1,1:1")
    r = run("--cluster", cluster, "--engine", "complete", "-a", "--check", "-s", fzn(tmp_path, queens(10)))
    assert "Traceback" not in r.stderr
    assert "every cluster worker failed" in r.stderr, r.stderr
    assert "==========" not in r.stdout and "UNSATISFIABLE" not in r.stdout
    # what the driver's root split found is printed, and nothing is claimed about the rest
    assert len(solutions(r.stdout)) == int(stat(r.stdout, "nSolutions")) < 724


def test_an_unreachable_cluster_is_a_clear_error(tmp_path):
    pytest.importorskip("ray")
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
        assert stat(r.stdout, "nSolutions") == "724" and int(stat(r.stdout, "w0_blocks")) > 0
    finally:
        os.killpg(head.pid, signal.SIGKILL)
        head.wait(30)
