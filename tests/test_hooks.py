"""The faults tests make happen (fzn_gpu/hooks.py): the plan FZN_GPU_TEST_HOOKS describes, each
fault point firing exactly where the plan says and nowhere without one, and a malformed plan
refused with one clear message. The recoveries themselves are tested where they happen
(test_multidevice.py, test_resplit.py, test_lns.py, test_cluster.py, test_server.py)."""

from __future__ import annotations

import pytest

from fzn_gpu import hooks
from fzn_gpu.errors import FznError

from test_cli import fzn, queens, run


def test_the_plan_reads_every_kind_of_fault():
    plan = hooks.Plan.parse("device=0:1,1:2:3 ; worker=0:2,1:1; spare=hang; exit=linger:2.5")
    assert plan.devices == {(0, 1, 0), (1, 2, 3)}
    assert plan.workers == ((0, 2), (1, 1))
    assert plan.spare_hangs and plan.exit_linger_s == 2.5
    assert hooks.Plan.parse("") == hooks.Plan()
    plan = hooks.Plan.parse("join=ready;join=late:0.5")
    assert plan.join_ready and plan.join_late_s == 0.5


@pytest.mark.parametrize(
    "text",
    [
        "device=0",
        "device=a:1",
        "device=0:1:2:3",
        "worker=1",
        "spare=slow",
        "disk=0:1",
        "exit=linger",
        "exit=linger:x",
        "join=now",
        "join=late:x",
    ],
)
def test_a_malformed_plan_is_one_clear_error(text):
    with pytest.raises(FznError, match="FZN_GPU_TEST_HOOKS"):
        hooks.Plan.parse(text)


def test_fault_points_fire_only_where_the_plan_says():
    assert not hooks.device_fails(0, 1) and hooks.failing_workers() == {} and not hooks.spare_hangs()
    assert hooks.exit_linger_s() == 0
    with hooks.inject(hooks.Plan.parse("device=0:1,1:2:3;worker=1:4;spare=hang")):
        assert hooks.device_fails(0, 1) and hooks.device_fails(0, 1, 0)
        assert not hooks.device_fails(0, 1, 1) and not hooks.device_fails(0, 2) and not hooks.device_fails(1, 2)
        assert hooks.device_fails(1, 2, 3)
        assert hooks.failing_workers() == {1: 4} and hooks.spare_hangs()
    assert hooks.PLAN == hooks.Plan()  # restored after the block


def test_load_takes_the_environment_only_where_it_is_set(monkeypatch):
    monkeypatch.setattr(hooks, "PLAN", hooks.Plan())
    monkeypatch.delenv("FZN_GPU_TEST_HOOKS", raising=False)
    with hooks.inject(hooks.Plan.parse("spare=hang")):
        hooks.load()  # unset: a plan set in this process stays
        assert hooks.spare_hangs()
    monkeypatch.setenv("FZN_GPU_TEST_HOOKS", "device=1:1")
    hooks.load()
    assert hooks.device_fails(1, 1) and not hooks.spare_hangs()


def test_a_run_with_a_malformed_plan_exits_with_one_message(tmp_path, monkeypatch):
    monkeypatch.setenv("FZN_GPU_TEST_HOOKS", "device=first")
    monkeypatch.setenv("FZN_GPU_SERVER", "off")
    r = run(fzn(tmp_path, queens(4)))
    assert r.returncode != 0 and "FZN_GPU_TEST_HOOKS" in r.stderr and "Traceback" not in r.stderr
