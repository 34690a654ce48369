"""A timed run starts on the devices whose program is ready (engine/warmup.py): a GPU whose
program is still building is left out of the run, which prints its solutions from the other
devices instead of waiting, and a builder is started behind it. Here the CPU is split in two
sub-devices (FZN_GPU_CPU_SUBDEVICES=2), one of which plays a GPU whose build takes far longer
than the run's time limit."""

from __future__ import annotations

import dataclasses
import re
import threading
import time

import pytest

from fzn_gpu.engine import solve, warmup
from fzn_gpu.errors import FznError
from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions
from fzn_gpu.runtime import device as device_mod
from fzn_gpu.runtime.device import Device, all_devices

KNAPSACK = (
    "".join(f"var 0..1: t{i} :: output_var;\n" for i in range(12))
    + "var 0..10000: value :: output_var;\n"
    + "constraint int_lin_le(["
    + ", ".join(str(7 + 3 * i) for i in range(12))
    + "], ["
    + ", ".join(f"t{i}" for i in range(12))
    + "], 60);\n"
    + "constraint int_lin_eq(["
    + ", ".join(str(10 + 5 * i) for i in range(12))
    + ", -1], ["
    + ", ".join(f"t{i}" for i in range(12))
    + ", value], 0);\nsolve maximize value;\n"
)


def fake(index: int, gpu: bool = False) -> Device:
    return Device(index, None, f"dev{index}", "test", gpu, 1, 1 << 30, 1 << 28)


def test_devices_ready_with_the_first_are_kept_and_the_slow_ones_left_out():
    """dev1 is ready at once; dev2, built before (recorded), follows within the wait; dev4,
    never built here, is not waited for though it is quick; dev0, recorded but rebuilding
    (its driver's cache lost it), takes longer than the wait; dev3 fails."""
    pace = {"dev0": 30.0, "dev1": 0.0, "dev2": 0.3, "dev3": 0.0, "dev4": 5.0}
    gate = threading.Event()

    def build(d: Device) -> None:
        if d.name == "dev3":
            raise FznError("no such compiler")
        gate.wait(pace[d.name])

    t0 = time.monotonic()
    devices = [fake(0, True), fake(1), fake(2), fake(3), fake(4)]
    recorded = [True, True, True, True, False]
    r = warmup.split_ready(devices, build, time.monotonic() + 60, recorded, wait_s=2.0)
    gate.set()  # the slow builds end, as the daemon threads would
    assert [d.name for d in r.ready] == ["dev1", "dev2"]
    assert set(r.left_out) == {"dev0", "dev3", "dev4"} and r.left_out["dev3"] == "no such compiler"
    assert "never built here" in r.left_out["dev4"] and "lost it" in r.left_out["dev0"]
    assert time.monotonic() - t0 < 10  # never the slow build's 30 s
    # with nothing recorded left to wait for, a device never built here is not waited for
    gate = threading.Event()
    t0 = time.monotonic()
    r = warmup.split_ready([fake(1), fake(4)], build, time.monotonic() + 60, [True, False], wait_s=2.0)
    assert [d.name for d in r.ready] == ["dev1"] and time.monotonic() - t0 < 1.0
    gate.set()


def test_where_nothing_is_ready_in_time_every_device_stays():
    """None finished by the deadline, or every build failed: the engines meet it and report it."""
    gate = threading.Event()
    r = warmup.split_ready([fake(0, True), fake(1)], lambda d: gate.wait(30), time.monotonic() + 0.2)
    gate.set()
    assert [d.name for d in r.ready] == ["dev0", "dev1"] and not r.left_out

    def fail(d: Device) -> None:
        raise FznError("broken")

    r = warmup.split_ready([fake(0, True), fake(1)], fail, time.monotonic() + 5)
    assert len(r.ready) == 2 and not r.left_out


@pytest.fixture
def slow_gpu(monkeypatch):
    """Two CPU sub-devices, the first playing a GPU whose every build takes 40 s; the builder a
    run would start behind it noted instead of started."""
    monkeypatch.setenv("FZN_GPU_CPU_SUBDEVICES", "2")
    all_devices.cache_clear()
    devices = list(all_devices())
    assert len(devices) == 2
    gpu = dataclasses.replace(devices[0], is_gpu=True)
    monkeypatch.setattr(device_mod, "all_devices", lambda: (gpu, devices[1]))
    real_build = device_mod.build
    release = threading.Event()

    def build(dev, *args, **kwargs):
        if dev.is_gpu:
            release.wait(40)
        return real_build(dev, *args, **kwargs)

    monkeypatch.setattr(device_mod, "build", build)
    monkeypatch.setattr("fzn_gpu.engine.runner.build", build)
    spawned: list[bool] = []
    monkeypatch.setattr(warmup, "spawn_builder", lambda: spawned.append(True) or True)
    # nothing built here before, whatever earlier tests left in the build records (a test that
    # wants the GPU's program recorded says so)
    monkeypatch.setattr("fzn_gpu.runtime.build_record.was_built", lambda key: False)
    yield gpu, spawned
    release.set()
    all_devices.cache_clear()


def test_a_timed_run_prints_from_the_ready_device_while_the_gpu_builds(slow_gpu, capsys, monkeypatch):
    gpu, spawned = slow_gpu
    monkeypatch.setattr("fzn_gpu.clock.STARTED", time.monotonic())  # a limit counts from the run's start
    model = lower(parse_items(KNAPSACK, "k.fzn"), "k.fzn")
    t0 = time.monotonic()
    code = solve(model, SolveOptions(time_limit_ms=20000, statistics=True, bucket="off", local_search="off"))
    out = capsys.readouterr().out
    assert code == 0 and time.monotonic() - t0 < 15, out  # never the 40 s build
    assert out.count("----------") >= 1 and "==========" in out  # the optimum, proven without the GPU
    checker = Checker(parse_items(KNAPSACK, "k.fzn"))
    last = out.split("----------")[-2]
    values = {k: int(v) for k, v in re.findall(r"^(\w+) = (-?\d+);$", last, re.M)}
    assert checker.check(values) == [], last
    assert f'devicesLeftOut="{gpu.name}: its program was never built here' in out
    assert spawned == [True]


def test_a_gpu_left_out_still_runs_bucket_elimination(slow_gpu, capsys, monkeypatch, tmp_path):
    """Bucket elimination's kernel is a program of its own: the GPU a timed run leaves out for
    want of its search program still eliminates (-s: bucketDevice), where planning for the host
    alone had refused WCSP 10x10 on a fresh machine. Every bucket goes to the device here; the
    optimum is proven by it, every solution checked."""
    from test_bucket import grid

    import fzn_gpu.bucket.device as bucket_device

    gpu, _ = slow_gpu
    monkeypatch.setattr("fzn_gpu.clock.STARTED", time.monotonic())
    monkeypatch.setattr(bucket_device, "DEVICE_MIN", 0)
    path = tmp_path / "g.fzn"
    path.write_text(grid(6, 6, 4, 1))
    model = lower(parse_items(path.read_text(), str(path)), str(path))
    # --check: the independent checker verifies every solution before it is printed (the
    # grid's defined variables are not printed)
    code = solve(model, SolveOptions(time_limit_ms=20000, statistics=True, local_search="off", check=True))
    out = capsys.readouterr().out
    assert code == 0 and "==========" in out, out[-2000:]
    assert f'devicesLeftOut="{gpu.name}: its program was never built here' in out
    assert f'bucketDevice="{gpu.name}"' in out and 'provedBy="bucket"' in out, out[-2000:]


def test_a_gpu_built_before_but_lost_by_its_driver_is_waited_for_a_while(slow_gpu, monkeypatch):
    """The GPU's program recorded as built (its build record), but rebuilt for 40 s: the run
    waits RECORDED_WAIT_S for it, then goes on without it."""
    gpu, spawned = slow_gpu
    monkeypatch.setattr("fzn_gpu.runtime.build_record.was_built", lambda key: True)
    monkeypatch.setattr(warmup, "RECORDED_WAIT_S", 0.5)
    model = lower(parse_items(KNAPSACK, "k.fzn"), "k.fzn")
    from fzn_gpu.engine.pack import pack

    dm = pack(model, SolveOptions())
    t0 = time.monotonic()
    r = warmup.ready_devices(list(device_mod.all_devices()), dm, SolveOptions(), time.monotonic() + 30)
    assert [d.is_gpu for d in r.ready] == [False] and "lost it" in r.left_out[gpu.name]
    assert time.monotonic() - t0 < 15 and spawned == [True]


def test_an_untimed_run_waits_for_every_device(slow_gpu, monkeypatch):
    """No time limit, nothing to lose to a build: every device takes part."""
    seen: list[list[str]] = []
    monkeypatch.setattr(warmup, "split_ready", lambda devices, *a, **k: seen.append([d.name for d in devices]) or None)
    r = warmup.ready_devices(list(device_mod.all_devices()), None, SolveOptions(), None)
    assert len(r.ready) == 2 and not r.left_out and seen == []


def test_a_run_whose_programs_this_process_holds_starts_on_every_device_at_once(slow_gpu, monkeypatch):
    """A served run's spare loaded its devices' programs before the run came (server.py): the
    run starts on all of them at once, without a trial build on each (a GPU whose build takes
    40 s here, and that no build record names, is not left out)."""
    gpu, spawned = slow_gpu
    from fzn_gpu.engine.pack import pack
    from fzn_gpu.engine.runner import Runner

    dm = pack(lower(parse_items(KNAPSACK, "k.fzn"), "k.fzn"), SolveOptions())
    devices = list(device_mod.all_devices())

    def key(d):  # device.build's cache key of the program a Runner on d takes
        return device_mod._cache_key(d, *Runner.program_of(d, dm))

    for d in devices:
        monkeypatch.setitem(device_mod._PROGRAMS, key(d), (None, None))
    t0 = time.monotonic()
    r = warmup.ready_devices(devices, dm, SolveOptions(), time.monotonic() + 30)
    assert [d.name for d in r.ready] == [d.name for d in devices] and not r.left_out and spawned == []
    assert time.monotonic() - t0 < 5
    monkeypatch.delitem(device_mod._PROGRAMS, key(gpu))
    r = warmup.ready_devices(devices, dm, SolveOptions(), time.monotonic() + 30)
    assert [d.is_gpu for d in r.ready] == [False] and gpu.name in r.left_out  # one not held: as before
