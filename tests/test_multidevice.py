"""Several devices on one search (PHACT load balancing): on PoCL the CPU is split into two
OpenCL sub-devices (FZN_GPU_CPU_SUBDEVICES=2), which must give the same counts and optima as
one device, and a device that fails (a test's fault: fzn_gpu/hooks.py) must lose nothing."""

import re
import sys
import threading
import time

import numpy as np
import pytest

from fzn_gpu.engine.balance import (
    MIN_NODE_SHARE,
    MIN_NODE_SHARE_HELD,
    RATE_AFTER_S,
    BlockSplit,
    DeviceShare,
    RunningBlock,
    WorkPool,
)
from fzn_gpu.engine.paths import Paths
from fzn_gpu.engine.threads import SWITCH_INTERVAL_S, run_threads
from fzn_gpu.runtime.kernel_abi import DEC, Op

from test_cli import fzn, queens_by_pairs, run

QUEENS10 = queens_by_pairs(10)  # 724 solutions, about 650 sub-search spaces
KNAPSACK = (
    "".join(f"var 0..3: x{i};\n" for i in range(8)) + "var 0..1000: value :: output_var;\n"
    "constraint int_lin_le([3, 4, 5, 7, 2, 6, 8, 3], [" + ", ".join(f"x{i}" for i in range(8)) + "], 30);\n"
    "constraint int_lin_eq([4, 5, 7, 9, 2, 8, 11, 4, -1], ["
    + ", ".join(f"x{i}" for i in range(8))
    + ", value], 0);\nsolve maximize value;\n"
)


def stat(out: str, name: str) -> str | None:
    m = re.search(rf"^%%%mzn-stat: {name}=(.*)$", out, re.M)
    return m.group(1) if m else None


@pytest.fixture
def two_devices(monkeypatch):
    """The CPU as two devices, both searching from the start (join=ready: otherwise the second
    joins once its runner is built behind the root split, and a short search may end before)."""
    monkeypatch.setenv("FZN_GPU_CPU_SUBDEVICES", "2")
    monkeypatch.setenv("FZN_GPU_TEST_HOOKS", "join=ready")


def test_two_devices_list_and_share_the_search(tmp_path, two_devices):
    r = run("--list-devices")
    assert r.stdout.count("[part") == 2, r.stdout
    r = run("-a", "-s", "--check", fzn(tmp_path, QUEENS10))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("----------") == 724 and "\n==========\n" in r.stdout
    assert stat(r.stdout, "devices") == "2"
    subs = [int(stat(r.stdout, f"d{i}_subSearchSpaces")) for i in (0, 1)]
    # every sub-search space of the split, and every path re-split off a busy search, once
    resplit = int(stat(r.stdout, "resplitPaths"))
    assert sum(subs) == int(stat(r.stdout, "subSearchSpaces")) + resplit and min(subs) > 0


@pytest.mark.parametrize("fault", [None, "0:1", "1:2", "0:0"])  # 0:0: in the root split
def test_counts_optima_and_limits_agree_with_one_device(tmp_path, two_devices, monkeypatch, fault, kernel_with_clock):
    if fault:
        monkeypatch.setenv("FZN_GPU_TEST_HOOKS", f"join=ready;device={fault}")
    r = run("-a", "--count-only", "--bucket", "off", "-s", fzn(tmp_path, QUEENS10))
    assert r.returncode == 0 and stat(r.stdout, "solutions") == "724" and "==========" in r.stdout
    r = run("-n", "5", "--check", fzn(tmp_path, QUEENS10))
    assert r.returncode == 0 and r.stdout.count("----------") == 5
    r = run("-s", "--check", fzn(tmp_path, KNAPSACK, "k.fzn"))
    monkeypatch.delenv("FZN_GPU_CPU_SUBDEVICES")
    monkeypatch.delenv("FZN_GPU_TEST_HOOKS", raising=False)
    alone = run("-s", "--check", fzn(tmp_path, KNAPSACK, "k1.fzn"))
    assert stat(r.stdout, "objective") == stat(alone.stdout, "objective") and "==========" in r.stdout
    if fault:  # the fault is reported, and only when it fired (a device may finish before its block)
        failed = [stat(r.stdout, f"d{i}_failed") for i in (0, 1)]
        assert all(f is None or "injected" in f for f in failed)


@pytest.mark.parametrize("budget", ["8", "200"])
@pytest.mark.parametrize("fault", [None, "0:1:4", "1:2:1"])
def test_a_device_handing_its_search_over_loses_nothing(tmp_path, two_devices, monkeypatch, budget, fault):
    """FZN_GPU_HAND_OVER_SPEEDUP=0: a busy device hands everything it has left over to any idle
    one (balance.py). Short slices catch its searches between propagation and branching, at a
    node, mid-backtrack; a fault after the hand-over (the one that handed over, or the one that
    took its work) must lose nothing either."""
    monkeypatch.setenv("FZN_GPU_HAND_OVER_SPEEDUP", "0")
    monkeypatch.setenv("FZN_GPU_SLICE_BUDGET", budget)
    if fault:
        monkeypatch.setenv("FZN_GPU_TEST_HOOKS", f"join=ready;device={fault}")
    r = run("-a", "--count-only", "--bucket", "off", "-s", fzn(tmp_path, QUEENS10))
    assert r.returncode == 0 and stat(r.stdout, "solutions") == "724" and "==========" in r.stdout, r.stderr
    if not fault:  # the hand-over happened
        assert "1" in (stat(r.stdout, "d0_handedOver"), stat(r.stdout, "d1_handedOver")), r.stdout
    r = run("-n", "5", "--check", fzn(tmp_path, QUEENS10))
    assert r.returncode == 0 and r.stdout.count("----------") == 5
    r = run("-s", "--check", fzn(tmp_path, KNAPSACK, "k.fzn"))
    assert r.returncode == 0 and stat(r.stdout, "objective") == "41" and "==========" in r.stdout


def test_a_much_faster_idle_device_takes_all_a_busy_one_has_left():
    import threading

    gpu = DeviceShare(0, "gpu", True, items=1000, subs=4000, busy_s=1.0)
    cpu = DeviceShare(1, "cpu", False, items=16, subs=100, busy_s=1.0, can_hand_over=True)
    pool = WorkPool(paths(40), [gpu, cpu])
    pool.next = len(pool.paths)  # nothing fresh left: the CPU holds the last block
    pool.running[1] = RunningBlock(paths(40), 40)
    got = []
    thief = threading.Thread(target=lambda: got.append(pool.take(gpu)))
    thief.start()
    while not pool.running[1].wanted:
        pass
    assert pool.shrink(1, started=10) == 10  # all 30 unstarted go, not a rank-sized part
    thief.join(timeout=5)
    assert got[0].n == 30 and pool.handing(1) and cpu.retired
    # its searches' records (here 5) go too, at its next slices
    pool.donated(1, np.zeros(5, np.int64), paths(15))
    assert pool.shrink(1, started=10) == 10 and len(pool.returned[-1]) == 5


@pytest.mark.parametrize("can, cpu_subs", [(False, 100), (True, 2000)])
def test_a_device_that_cannot_or_is_not_much_slower_shares_by_rank(can, cpu_subs):
    import threading

    gpu = DeviceShare(0, "gpu", True, items=1000, subs=4000, busy_s=1.0)
    cpu = DeviceShare(1, "cpu", False, items=16, subs=cpu_subs, busy_s=1.0, can_hand_over=can)
    pool = WorkPool(paths(40), [gpu, cpu])
    pool.next = len(pool.paths)
    pool.running[1] = RunningBlock(paths(40), 40)
    threading.Thread(target=lambda: pool.take(gpu), daemon=True).start()
    while not pool.running[1].wanted:
        pass
    kept = pool.shrink(1, started=10)
    assert 10 < kept < 40 and not pool.handing(1) and not cpu.retired


def test_work_handed_over_is_not_searched_again_after_a_fault():
    """What a failed device searches again is its block less what its searches handed over:
    every open level's right branch and the node each search was at (a path handed over at its
    root goes whole); the branches it had finished come back (its results are discarded)."""
    eq, ne = int(Op.EQ), int(Op.NE)
    root = [0, eq, 1, 0]
    kept = Paths.from_list([np.array(root), np.array([5, eq, 2, 0])])
    given = Paths.from_list(
        [
            np.array(root + [1, ne, 1, 0]),  # level 0's right branch
            np.array(root + [1, eq, 1, 0, 2, ne, 2, 0]),  # the node, after finishing x2 = 2
            np.array([5, eq, 2, 0]),  # the second path, handed over at its root
        ]
    )
    left = kept.without(np.array([0, 0, 1]), given)
    assert [p.tolist() for p in (left.path(i) for i in range(len(left)))] == [root + [1, eq, 1, 0, 2, eq, 2, 0]]


@pytest.mark.parametrize("faults", ["0:1,1:1", "0:0,1:0"])
def test_every_device_failing_is_an_error_not_an_answer(tmp_path, two_devices, monkeypatch, faults):
    monkeypatch.setenv("FZN_GPU_TEST_HOOKS", f"join=ready;device={faults}")
    r = run("-a", "--count-only", "--bucket", "off", fzn(tmp_path, QUEENS10))
    assert r.returncode != 0 and "every device failed" in r.stderr and "Traceback" not in r.stderr
    assert "==========" not in r.stdout and "UNSATISFIABLE" not in r.stdout


def paths(n: int) -> Paths:
    return Paths(np.arange(n + 1, dtype=np.int32) * DEC, np.zeros(DEC * n, np.int32))


def test_block_sizes_follow_phact_rules():
    gpu = DeviceShare(0, "gpu", True, items=1000)
    cpu = DeviceShare(1, "cpu", False, items=16)
    lead = WorkPool(paths(100_000), [gpu, cpu])
    assert len(lead.take(gpu).paths) == 100_000  # the lead device starts on everything
    pool = WorkPool(paths(100_001), [gpu, cpu])
    pool.next = 1  # (past the lead's start) PHACT's blocks:
    assert len(pool.take(gpu).paths) == 1000 and len(pool.take(cpu).paths) == 16  # calibration
    gpu.subs, gpu.busy_s = 1000, 1.0  # 1000 per second
    cpu.subs, cpu.busy_s = 16, 0.16  # 100 per second: rank 1/11
    pool.running.clear()
    left = pool.remaining()
    assert len(pool.take(gpu).paths) == int(10 / 11 * left / 2)  # half the rest by rank
    pool.running.clear()
    # the tail: the slow device gets its share so both finish together
    pool.next = len(pool.paths) - 2000
    assert len(pool.take(cpu).paths) == int(np.ceil(2000 / 11))
    pool.running.clear()
    # a GPU that would get fewer than half its work-items' worth leaves the rest to a faster
    # device (the fastest never declines)
    slow_gpu = DeviceShare(2, "gpu2", True, items=100_000, subs=10, busy_s=1.0)
    pool.shares.append(slow_gpu)
    assert pool.take(slow_gpu) is None
    # a device predicted to finish the rest in under a second takes it all
    pool.shares.remove(slow_gpu)
    pool.next = len(pool.paths) - 500
    assert len(pool.take(gpu).paths) == 500


def test_steals_follow_the_same_rules():
    gpu = DeviceShare(0, "gpu", True, items=1000)
    cpu = DeviceShare(1, "cpu", False, items=16)
    pool = WorkPool(paths(100_000), [gpu, cpu])
    pool.take(gpu)
    assert pool._steal_size(cpu, 90_000) == 16  # calibration: one per work-item
    gpu.subs, gpu.busy_s = 10_000, 1.0
    cpu.subs, cpu.busy_s = 1_000, 1.0
    pool.running.clear()
    assert pool._steal_size(cpu, 90_000) == int(1 / 11 * 90_000 / 2)  # half the rest by rank
    assert pool._steal_size(cpu, 1_100) == 100  # the tail: by rank


def test_a_failed_block_is_handed_out_again_first():
    a, b = DeviceShare(0, "a", False, 4), DeviceShare(1, "b", False, 4)
    pool = WorkPool(paths(20), [a, b])
    block = pool.take(a).paths
    pool.give_back(0)
    assert pool.remaining() == 20
    again = pool.take(b).paths
    assert np.array_equal(again.ptr, block.ptr) and np.array_equal(again.data, block.data)
    assert pool.remaining() == 0  # a (the lead) had taken all 20: b now holds them


def test_an_idle_device_takes_part_of_the_unstarted_rest_of_a_running_block():
    import threading

    a, b = DeviceShare(0, "a", False, 20), DeviceShare(1, "b", False, 4)
    pool = WorkPool(paths(20), [a, b])
    assert pool.take(a).n == 20  # the lead (most work-items) takes all 20
    got = []
    thief = threading.Thread(target=lambda: got.append(pool.take(b)))
    thief.start()
    while not pool.running[0].wanted:  # b asks a for its rest
        pass
    assert pool.shrink(0, started=4) == 16  # b calibrates: one per work-item, from the end
    thief.join(timeout=5)
    [rb] = got
    assert rb.n == 4 and np.array_equal(rb.paths.ptr, paths(20).block(16, 20).ptr)
    assert pool.finish(0).n == 16 and pool.shrink(1, started=4) == 4


def test_one_cpu_behind_two_platforms_is_one_device():
    """The H100 machine exposed its CPU through its own PoCL (`cpu-skylake-avx512-...`) and
    through pip's (`pthread-...`): counted twice, the same cores ran two devices' threads."""
    from fzn_gpu.runtime.device import cpu_brand

    assert (
        cpu_brand("cpu-skylake-avx512-Intel(R) Xeon(R) Processor")
        == cpu_brand("pthread-Intel(R) Xeon(R) Processor")
        == "Intel(R) Xeon(R) Processor"
    )
    assert cpu_brand("cpu-znver3-AMD EPYC 7B13") == "AMD EPYC 7B13"


def test_a_cpu_beside_a_gpu_leaves_it_a_core():
    """PHACT leaves a core per GPU for its host thread: the CPU becomes a sub-device."""
    from fzn_gpu.runtime.device import Device, _leave_cores_for_gpus, select_devices

    cpu = select_devices("cpu")[0]
    if cpu.compute_units < 2:
        pytest.skip("needs a CPU with two cores")
    gpu = Device(9, None, "a GPU", "test", True, 100, 1 << 30, 1 << 28)
    [g, c] = _leave_cores_for_gpus([gpu, cpu])
    assert g is gpu and c.compute_units == cpu.compute_units - 1 == c.cl_device.max_compute_units
    assert "cores)" in c.name
    assert _leave_cores_for_gpus([cpu]) == [cpu]


def test_a_cpus_part_beside_a_gpu_is_made_once_a_process(monkeypatch, tmp_path):
    """Every run of a process (a solver server's spare, the tests) gets the same part of the
    CPU, so the programs built for it serve them all; `run_devices` (what a spare loads
    programs for) holds it beside the devices as found; the spare loads its programs ahead,
    and the run's build takes them (none built again)."""
    from fzn_gpu import server
    from fzn_gpu.runtime import device
    from fzn_gpu.runtime.device import Device, _leave_cores_for_gpus, all_devices

    cpu = all_devices()[0]
    if cpu.compute_units < 2:
        pytest.skip("needs a CPU with two cores")
    gpu = Device(9, None, "a GPU", "test", True, 100, 1 << 30, 1 << 28)
    first = _leave_cores_for_gpus([gpu, cpu])[1]
    assert _leave_cores_for_gpus([gpu, cpu])[1] is first and first.cl_device is not cpu.cl_device
    monkeypatch.setattr(device, "all_devices", lambda: (cpu,))
    assert device.run_devices() == [cpu]  # a CPU alone stays whole
    monkeypatch.setattr(device, "all_devices", lambda: (gpu, cpu))
    assert device.run_devices() == [gpu, cpu, first]
    loaded = []
    monkeypatch.setattr(device, "build", lambda d, kinds, *rest: loaded.append((d, kinds)))
    monkeypatch.setattr(device.build_record, "was_built", lambda key: True)
    monkeypatch.setattr(device, "device_id", lambda d: d.name)  # the fake GPU has no driver
    monkeypatch.setattr(device, "build_key", lambda d, *rest: d.name)
    from fzn_gpu.engine import runner

    class NoTuning:  # the fake GPU has no cl_device to tune for
        model = "item"

        @staticmethod
        def build_options(d, floats):
            return []

    monkeypatch.setattr(runner.Tuning, "for_device", staticmethod(lambda d: NoTuning))
    path = str(tmp_path / "server")
    server._note_program(path, first, frozenset({1, 2}), "item", [], False)  # a run's, on the part
    server._preload_programs(path)
    assert any(d is first and kinds is None for d, kinds in loaded)  # its generic program
    assert any(d is cpu and kinds is None for d, kinds in loaded)
    assert any(d is first and kinds == frozenset({1, 2}) for d, kinds in loaded)  # the run's


@pytest.mark.parametrize("engine", ["complete", "portfolio"])
def test_a_device_failing_in_the_dive_or_the_root_split_loses_nothing(tmp_path, two_devices, monkeypatch, engine):
    """The first device fails before any block: in the dive of branch and bound (a GPU's first
    second, FZN_GPU_DIVE_MS here) or in the root split. The other device takes the split over
    from the same paths; the optimum and every count are those of one device, each solution
    printed once, and the fault said on stderr."""
    monkeypatch.setenv("FZN_GPU_DIVE_MS", "50")
    monkeypatch.setenv("FZN_GPU_TEST_HOOKS", "join=ready;device=0:0")
    r = run("--engine", engine, "-s", "--check", fzn(tmp_path, KNAPSACK, "k.fzn"))
    monkeypatch.delenv("FZN_GPU_TEST_HOOKS")
    alone = run("--engine", engine, "-s", "--check", fzn(tmp_path, KNAPSACK, "k1.fzn"))
    assert r.returncode == 0 and "==========" in r.stdout, r.stderr
    assert stat(r.stdout, "objective") == stat(alone.stdout, "objective")
    assert "goes on without" in r.stderr and "Traceback" not in r.stderr
    monkeypatch.setenv("FZN_GPU_TEST_HOOKS", "device=0:0")  # the other's runner still building behind
    r = run("-a", "--check", "--bucket", "off", fzn(tmp_path, QUEENS10))
    assert r.returncode == 0 and r.stdout.count("----------") == 724 and "==========" in r.stdout  # none twice


@pytest.mark.parametrize(("given", "expected"), [(None, SWITCH_INTERVAL_S), ("0.0001", 0.0001), ("soon", None)])
def test_device_threads_hand_the_gil_over_quickly_then_the_interval_is_restored(monkeypatch, given, expected):
    """While device threads run side by side the GIL changes hands within the short interval
    (FZN_GPU_SWITCH_INTERVAL where given), and the interpreter's own comes back after, also
    when the run ends in an error; a value that is no number is one clear error, the
    interpreter's interval untouched."""
    from fzn_gpu.errors import FznError

    if given is not None:
        monkeypatch.setenv("FZN_GPU_SWITCH_INTERVAL", given)
    before = sys.getswitchinterval()
    if expected is None:
        with pytest.raises(FznError, match="FZN_GPU_SWITCH_INTERVAL='soon' is not a number"):
            run_threads([threading.Thread(target=lambda: None)], lambda: None)
        assert sys.getswitchinterval() == before
        return
    seen: list[float] = []
    run_threads([threading.Thread(target=lambda: seen.append(sys.getswitchinterval()))], lambda: None)
    assert seen == [pytest.approx(min(before, expected))]
    assert sys.getswitchinterval() == before

    def stop() -> None:
        raise RuntimeError("stopping failed")

    with pytest.raises(RuntimeError):
        run_threads([threading.Thread(target=lambda: None)], stop)
    assert sys.getswitchinterval() == before


def _busy_gpu_beside_a_cpu(gpu_paths: int, cpu_paths: int) -> tuple[DeviceShare, DeviceShare, WorkPool]:
    """A GPU and a CPU (which can hand over) each running a block, nothing fresh left."""
    gpu = DeviceShare(0, "gpu", True, items=1000)
    cpu = DeviceShare(1, "cpu", False, items=16, can_hand_over=True)
    pool = WorkPool(paths(gpu_paths + cpu_paths), [gpu, cpu])
    pool.next = len(pool.paths)
    pool.running[0] = RunningBlock(paths(gpu_paths), gpu_paths)
    pool.running[1] = RunningBlock(paths(cpu_paths), cpu_paths)
    return gpu, cpu, pool


@pytest.mark.parametrize(
    "cpu_nodes, hands_over, leaves",
    [(1_000, True, True), (11_000, True, True), (11_300, True, False), (300_000, True, False)]
    + [(11_300, False, True), (33_000, False, True), (33_500, False, False)],
)
def test_a_device_whose_node_rate_does_not_pay_hands_over_busy_gpu_or_not(cpu_nodes, hands_over, leaves):
    """Once every device has searched RATE_AFTER_S, one under MIN_NODE_SHARE of the node rate
    (MIN_NODE_SHARE_HELD where its searches cannot hand over) gives its search up at its next
    slice (all it holds goes to `handed`) though the GPU is busy and asks for nothing; every
    device is judged, the GPU too; judged once, and not before RATE_AFTER_S."""
    gpu, cpu, pool = _busy_gpu_beside_a_cpu(0, 40)
    cpu.can_hand_over = hands_over
    now = time.monotonic()
    gpu.rate_at, cpu.rate_at = now - RATE_AFTER_S / 2, now - RATE_AFTER_S / 2
    gpu.block_nodes, cpu.block_nodes = 100_000, cpu_nodes
    assert pool.judging() and pool.shrink(1, started=10) == 40 and cpu.node_share is None  # too early
    gpu.rate_at = cpu.rate_at = now - 2 * RATE_AFTER_S
    kept = pool.shrink(1, started=10)
    assert cpu.node_share == pytest.approx(cpu_nodes / (cpu_nodes + 100_000), rel=0.01)
    assert (cpu.node_share < (MIN_NODE_SHARE if hands_over else MIN_NODE_SHARE_HELD)) == leaves
    assert pool.judging() != leaves  # beside a CPU that stays, the GPU awaits its own verdict
    pool.shrink(0, started=0)
    assert not pool.judging() and (gpu.node_share is None) == leaves and not gpu.retired
    assert pool.handing(1) == leaves and cpu.retired == leaves
    assert kept == (10 if leaves else 40) and len(pool.handed) == (1 if leaves else 0) and not pool.returned
    cpu.block_nodes = 0  # judged once: a later slice's rate changes nothing
    assert pool.handing(1) == leaves


def test_a_devices_node_rate_runs_from_the_end_of_its_first_slice():
    """A CPU's first launch may spend seconds in PoCL's compile: its node rate is counted from
    its first report (the end of its first slice), with the nodes of that slice left out, so
    the compile does not judge it at a share of 0; its later blocks count on."""
    cpu = DeviceShare(1, "cpu", False, items=16, can_hand_over=True)
    assert cpu.node_rate(100.0) is None
    cpu.searched(1_000, 100.0)  # its first slice ended, after a compile of seconds
    assert cpu.node_rate(100.0 + RATE_AFTER_S / 2) is None  # too early
    cpu.searched(51_000, 100.5)
    assert cpu.node_rate(100.5) == pytest.approx(100_000)
    cpu.done_nodes, cpu.block_nodes = cpu.done_nodes + cpu.block_nodes, 0  # its block ended
    cpu.searched(49_000, 101.0)  # the next block's first slice: the rate runs on
    assert cpu.node_rate(101.0) == pytest.approx(99_000)


def test_two_devices_count_exactly_whichever_leaves(tmp_path, two_devices, monkeypatch):
    """The node-rate verdict on a real search of two devices (the CPU split in two): with the
    threshold at 1 the device judged first leaves (its share is under 1), at 0 none does; the
    count is exact either way and -s gives the share judged. (An idle device never takes a
    busy one's search here: that rule has its own tests.)"""
    monkeypatch.setenv("FZN_GPU_HAND_OVER_SPEEDUP", "1000000")
    for share, leaves in (("1", True), ("0", False)):
        monkeypatch.setenv("FZN_GPU_MIN_NODE_SHARE", share)
        r = run("-a", "--count-only", "--bucket", "off", "-s", fzn(tmp_path, queens_by_pairs(13)))
        assert r.returncode == 0 and stat(r.stdout, "solutions") == "73712" and "==========" in r.stdout, r.stderr
        judged = [stat(r.stdout, f"d{i}_nodeRateShare") for i in (0, 1)]
        handed = [stat(r.stdout, f"d{i}_handedOver") for i in (0, 1)]
        assert any(j is not None for j in judged), r.stdout
        assert ("1" in handed) == leaves, r.stdout


def test_what_a_device_that_does_not_pay_hands_over_feeds_the_busy_lead():
    """The slow device's unstarted paths and its searches' records go to `handed`, not to a
    block of their own: the lead's next slice takes those that fit its buffers into its running
    block (after its unstarted paths); a longer one waits to be taken as a block."""
    gpu, cpu, pool = _busy_gpu_beside_a_cpu(40, 20)
    gpu.rate_at = cpu.rate_at = time.monotonic() - 2 * RATE_AFTER_S
    gpu.block_nodes, cpu.block_nodes = 100_000, 100
    lead = BlockSplit(pool, gpu)
    assert lead.longest > 0 and BlockSplit(pool, cpu).longest == 0
    assert lead.more() is None  # nothing handed yet
    assert pool.shrink(1, started=5) == 5 and cpu.retired and len(pool.handed) == 1 and not pool.returned
    fed = lead.more()
    assert fed is not None and len(fed) == 15 and pool.running[0].n == 55 and not pool.handed
    too_long = Paths.from_list([np.array([0, int(Op.EQ), 1, 0] * (lead.longest + 1))])
    pool.handed.append(too_long)
    assert lead.more() is None and pool.handed == [too_long] and pool.remaining() == 1
    pool.give_back(0)  # the lead fails: what it was fed goes back with the rest of its block
    assert pool.remaining() == 1 + 55 and len(pool.returned[-1]) == 55


def numbered(lo: int, hi: int) -> Paths:
    """Paths lo..hi-1, each one decision x0 = i: which paths a block holds shows by value."""
    return Paths.from_list([np.array([0, int(Op.EQ), i, 0], np.int32) for i in range(lo, hi)])


def values(p: Paths) -> list[int]:
    return [int(p.path(i)[2]) for i in range(len(p))]


@pytest.mark.parametrize("fault", [None, "1:1", "1:1:1"])
def test_a_device_joining_late_takes_part_and_loses_nothing(tmp_path, monkeypatch, fault):
    """The second device's runner is built behind the root split, here 0.1 s late (join=late):
    the first searches meanwhile, the second joins its search, and the count is exact; a fault
    of the late device, before its first block or after a slice of it, loses nothing."""
    monkeypatch.setenv("FZN_GPU_CPU_SUBDEVICES", "2")
    monkeypatch.setenv("FZN_GPU_MIN_NODE_SHARE", "0")  # it stays once it joins
    monkeypatch.setenv("FZN_GPU_TEST_HOOKS", "join=late:0.1" + (f";device={fault}" if fault else ""))
    r = run("-a", "--count-only", "--bucket", "off", "-s", fzn(tmp_path, queens_by_pairs(13)))
    assert r.returncode == 0 and stat(r.stdout, "solutions") == "73712" and "==========" in r.stdout, r.stderr
    if fault is None:
        assert int(stat(r.stdout, "d1_blocks")) >= 1 and int(stat(r.stdout, "d1_subSearchSpaces")) > 0, r.stdout
    else:
        assert stat(r.stdout, "d1_failed") is None or "injected" in stat(r.stdout, "d1_failed")


def test_a_device_whose_runner_never_joins_leaves_the_search_to_the_others():
    """balance's `join` says no for one device (its runner failed to build behind the split):
    it is marked failed and the others search every path, once."""
    a, b = DeviceShare(0, "a", True, items=8), DeviceShare(1, "b", True, items=8)
    searched: list[int] = []

    def search_block(i, block, resplit):
        assert i == 0
        searched.extend(values(block))
        return True

    def join(share):
        if share.index == 1:
            share.failed = "its program did not build"
            return False
        return True

    from fzn_gpu.engine.balance import balance

    assert balance(numbered(0, 30), [a, b], search_block, join=join)
    assert sorted(searched) == list(range(30)) and b.failed and b.blocks == 0


def test_a_device_that_cannot_hand_over_and_does_not_pay_gives_its_unstarted_paths_away():
    """Judged like any other (a float model's searches cannot hand over): under MIN_NODE_SHARE
    it gives its unstarted paths to the lead, takes no more, and its searches end where they
    are; the lead's next slice takes the paths in."""
    gpu, cpu, pool = _busy_gpu_beside_a_cpu(40, 20)
    cpu.can_hand_over = False
    gpu.rate_at = cpu.rate_at = time.monotonic() - 2 * RATE_AFTER_S
    gpu.block_nodes, cpu.block_nodes = 100_000, 100
    assert pool.shrink(1, started=5) == 5 and cpu.retired and cpu.node_share is not None
    assert len(pool.handed) == 1 and len(pool.handed[0]) == 15
    assert pool.donations_wanted(1, idle_items=0, unstarted=0, items=16) == 0
    fed = BlockSplit(pool, gpu).more()
    assert fed is not None and len(fed) == 15 and pool.running[0].n == 55


def test_a_float_model_on_two_devices_counts_exactly_whichever_leaves(tmp_path, two_devices, monkeypatch):
    """A model with a float variable: both devices run the work-item kernel and their searches
    cannot hand over; with the threshold at 1 the device judged first gives its unstarted paths
    away and ends its searches, at 0 none does; the count is exact either way."""
    text = queens_by_pairs(13).replace(
        "solve satisfy;", "var 0.0..10.0: f;\nconstraint float_eq(f, 2.5);\nsolve satisfy;"
    )
    for share, leaves in (("1", True), ("0", False)):
        monkeypatch.setenv("FZN_GPU_MIN_NODE_SHARE", share)
        r = run("-a", "--count-only", "--bucket", "off", "-s", fzn(tmp_path, text))
        assert r.returncode == 0 and stat(r.stdout, "solutions") == "73712" and "==========" in r.stdout, r.stderr
        handed = [stat(r.stdout, f"d{i}_handedOver") for i in (0, 1)]
        assert ("1" in handed) == leaves, r.stdout
