"""LNS paths built on the device (engine/lns_paths.py, kernels/lns_paths.cl): the same
decisions as the host builds, under both execution models' programs, and LNS steps through
them still print only improvements the checker accepts."""

from __future__ import annotations

import numpy as np
import pytest
from test_lns import objectives, solve

from fzn_gpu.engine.lns_paths import DEVICE_MIN, DevicePaths, Draw, on_device
from fzn_gpu.engine.pack import pack
from fzn_gpu.engine.runner import Runner
from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.lower import lower
from fzn_gpu.flatzinc.parser import parse_items
from fzn_gpu.options import SolveOptions
from fzn_gpu.runtime.device import select_devices

from helpers import have_minizinc, stable_rng

TEXT = "var 1..9: x;\nvar 1..9: y;\nconstraint int_lt(x, y);\nsolve minimize y;\n"


def _device_data(runner: Runner, paths: DevicePaths) -> tuple[np.ndarray, np.ndarray]:
    """(ptr, data) as the search kernel would read them, read back from the device."""
    cl = runner.cl
    buffers: list = []

    def data_buffer(nbytes: int, name: str):
        nbytes = -(-nbytes // 4) * 4  # a byte mask's too: a fill's unit is an int
        buffers.append(cl.Buffer(runner.ctx, cl.mem_flags.READ_WRITE, size=nbytes))
        cl.enqueue_fill_buffer(runner.queue, buffers[-1], np.int32(-7), 0, nbytes)  # unwritten shows
        return buffers[-1]

    def put(name: str, a: np.ndarray):
        buffers.append(cl.Buffer(runner.ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=a))
        return buffers[-1]

    kernel = cl.Kernel(runner.prog, "lns_paths")
    ptr_buf, data_buf = paths.to_device(cl, runner.queue, kernel, put, data_buffer)
    ptr = np.empty(len(paths) + 1, np.int32)
    data = np.empty(max(int(paths.ptr[-1]), 1), np.int32)
    cl.enqueue_copy(runner.queue, ptr, ptr_buf)
    cl.enqueue_copy(runner.queue, data, data_buf)
    runner.queue.finish()
    return ptr, data[: int(paths.ptr[-1])]


def _setup(model: str, monkeypatch, name: str):
    """A one-work-item runner under `model`'s program, and the test's two random sources."""
    monkeypatch.setenv("FZN_GPU_KERNEL", model)
    dm = pack(lower(parse_items(TEXT, "t.fzn"), "t.fzn"), SolveOptions())
    runner = Runner(select_devices("all")[0], dm, max_items=1)
    rng = stable_rng(name, model)
    return runner, rng, np.random.default_rng(rng.randrange(2**32))


def _assert_device_is_host(runner: Runner, paths: DevicePaths) -> None:
    """Every decision the device writes is the host's, and it writes every one of them."""
    host = paths.to_host()
    ptr, data = _device_data(runner, paths)
    assert np.array_equal(ptr, host.ptr)
    assert np.array_equal(data, host.data)


@pytest.mark.parametrize("model", ["item", "group"])
def test_device_paths_are_the_hosts(model, monkeypatch):
    """Random variables, values (one row, or a row a path) and keep masks (rows keeping
    nothing or everything among them): every decision the device writes is the host's, and
    the device writes every one of them."""
    runner, rng, np_rng = _setup(model, monkeypatch, "device paths")
    for _ in range(12):
        n, nfd = rng.randint(1, 70), rng.randint(1, 40)
        fd = np_rng.permutation(200)[:nfd]
        per_path = rng.random() < 0.4
        values = np_rng.integers(-(2**31), 2**31 - 1, (n, nfd) if per_path else nfd)
        keep = None if rng.random() < 0.3 else np_rng.random((n, nfd)) < rng.random()
        if keep is not None:
            keep[0] = False
            keep[-1] = True
        paths = DevicePaths.make(fd, values, keep, n)
        _assert_device_is_host(runner, paths)


@pytest.mark.parametrize("model", ["item", "group"])
def test_drawn_releases_are_the_hosts(model, monkeypatch):
    """Releases drawn on the device (every size from one position to all of them, neighbourhoods
    of several starts): the device's paths are the host's draw, decision for decision."""
    runner, rng, np_rng = _setup(model, monkeypatch, "drawn releases")
    for case in range(12):
        nfd = rng.randint(1, 40)
        release = [1, nfd][case] if case < 2 else rng.randint(1, nfd)
        repeat = rng.choice([1, 1, 3, 16])
        n = repeat * rng.randint(1, 30)
        fd = np_rng.permutation(200)[:nfd]
        values = np_rng.integers(-(2**31), 2**31 - 1, nfd)
        paths = DevicePaths.make(fd, values, None, n, Draw(release, rng.randrange(2**32), repeat))
        _assert_device_is_host(runner, paths)


def _random_graph(rng: np.random.Generator, n: int, density: float) -> tuple[np.ndarray, np.ndarray]:
    """A symmetric relation over n positions (CSR), some positions without relatives."""
    edges = np.triu(rng.random((n, n)) < density, 1)
    edges = edges | edges.T
    ptr = np.concatenate([[0], np.cumsum(edges.sum(axis=1))])
    return ptr.astype(np.int32), np.nonzero(edges)[1].astype(np.int32)


@pytest.mark.parametrize("model", ["item", "group"])
def test_grown_releases_are_the_hosts(model, monkeypatch):
    """Releases grown through a graph on the device (sparse graphs whose components run out,
    dense ones, a neighbourhood's starts sharing a growth): the device's paths are the host
    reference's, decision for decision."""
    runner, rng, np_rng = _setup(model, monkeypatch, "grown releases")
    for case in range(10):
        nfd = rng.randint(3, 40)
        graph = _random_graph(np_rng, nfd, [0.02, 0.1, 0.5][case % 3])
        release = rng.randint(1, nfd)
        repeat = rng.choice([1, 4])
        n = repeat * rng.randint(1, 12)
        fd = np_rng.permutation(200)[:nfd]
        values = np_rng.integers(-(2**31), 2**31 - 1, nfd)
        paths = DevicePaths.make(fd, values, None, n, Draw(release, rng.randrange(2**32), repeat, graph))
        _assert_device_is_host(runner, paths)


def test_a_grown_release_follows_the_graph_as_the_hosts_growth_does():
    """The device's growth (its numpy reference) and RelatedVariables.grow: k distinct positions
    a row; on a path graph (each position related to its neighbours) every neighbourhood is one
    run of consecutive positions while relatives are left; the share of rows holding each
    position matches the host growth's within sampling noise."""
    from fzn_gpu.engine.lns_graph import RelatedVariables

    n, k, rows = 30, 6, 3000
    idx = np.arange(n)
    adj = [[j for j in (i - 1, i + 1) if 0 <= j < n] for i in idx]
    ptr = np.concatenate([[0], np.cumsum([len(a) for a in adj])])
    flat = np.concatenate(adj)
    keep = Draw(k, 99, 1, (ptr, flat)).mask(rows, n)
    released = ~keep
    assert (released.sum(axis=1) == k).all()
    starts = np.diff(released.astype(int), axis=1, prepend=0) == 1
    assert (starts.sum(axis=1) == 1).all()  # one run a row
    host = RelatedVariables(ptr, flat).grow(np.random.default_rng(3), rows, k)
    host_share = np.bincount(host.ravel(), minlength=n) / rows
    assert np.abs(released.mean(axis=0) - host_share).max() < 0.05


def test_a_drawn_release_is_uniform():
    """Every row releases exactly k distinct positions, a neighbourhood's starts the same ones,
    and each position about k/n of the time (the argsort draw's distribution: Floyd's sampling
    is uniform over the k-subsets)."""
    n, k, rows = 30, 7, 6000
    keep = Draw(k, 12345, 3).mask(rows, n)
    assert ((~keep).sum(axis=1) == k).all()
    assert (keep[0::3] == keep[1::3]).all() and (keep[0::3] == keep[2::3]).all()
    share = (~keep[0::3]).mean(axis=0)
    assert np.abs(share - k / n).max() < 0.04, share
    pairs = (~keep[0::3, 0] & ~keep[0::3, 1]).mean()  # two positions together: k(k-1)/(n(n-1))
    assert abs(pairs - k * (k - 1) / (n * (n - 1))) < 0.015
    assert not (Draw(k, 12346, 3).mask(rows, n) == keep).all()  # the seed decides the draw


def test_paths_go_to_the_device_only_for_big_steps(monkeypatch):
    monkeypatch.delenv("FZN_GPU_DEVICE_PATHS", raising=False)
    assert on_device(DEVICE_MIN) and not on_device(DEVICE_MIN - 1)
    monkeypatch.setenv("FZN_GPU_DEVICE_PATHS", "0")
    assert not on_device(10 * DEVICE_MIN)
    monkeypatch.setenv("FZN_GPU_DEVICE_PATHS", "1")
    assert on_device(1)


@pytest.mark.skipif(not have_minizinc(), reason="needs minizinc with gpu-fzn registered (README set-up)")
@pytest.mark.parametrize("strategy", ["complete_exploration", "random_labeling", "two_exchange", "icm"])
def test_every_strategy_improves_through_device_paths(strategy, kernel, monkeypatch):
    """Every step's paths built on the device: each solution printed (--check) strictly better."""
    monkeypatch.setenv("FZN_GPU_DEVICE_PATHS", "1")
    r = solve("tsp_10", "--lns-strategy", strategy, "-a", "-s", "-t", "3000")
    assert r.returncode == 0, r.stderr
    found = objectives(r.stdout, "length")
    assert len(found) >= 2, r.stdout[-2000:]
    assert all(b < a for a, b in zip(found, found[1:]))
    assert "==========" not in r.stdout


@pytest.mark.parametrize("model", ["item", "group"])
def test_a_phase_drops_no_copy_before_it_is_done_and_settles_its_launches(model, monkeypatch):
    """engine/runner.py: pyopencl's event of a queued copy waits for the copy when dropped,
    holding the interpreter lock (on PoCL, behind any kernel the device runs, another queue's
    too), so a phase keeps the events of the copies it queues until its slice has finished;
    and it lets its kernel's old buffers go (KernelCall.settle) only once the slice is done.
    An event dropped at put() (as before) is met here not yet complete, or never checked."""
    from fzn_gpu.engine.paths import Paths

    runner, rng, np_rng = _setup(model, monkeypatch, "phase copies")
    cl = runner.cl
    dropped: list[bool] = []

    class Watched:
        """A queued copy's event that notes, when dropped, whether the copy was done."""

        def __init__(self, event):
            self.event = event

        def __del__(self):
            dropped.append(self.event.command_execution_status == cl.command_execution_status.COMPLETE)

    class Proxy:
        def __getattr__(self, name):
            return getattr(cl, name)

        @staticmethod
        def enqueue_copy(queue, dest, src, **kwargs):
            event = cl.enqueue_copy(queue, dest, src, **kwargs)
            return Watched(event) if kwargs.get("is_blocking") is False else event

    names = lower(parse_items(TEXT, "t.fzn"), "t.fzn").vars.names
    checker = Checker(parse_items(TEXT, "t.fzn"))
    found: list[dict] = []

    def checked(sols) -> bool:
        """Every solution the phase met satisfies the model (values after the objective)."""
        for row in sols if sols is not None else []:
            assignment = {n: int(row[1 + v]) for v, n in enumerate(names) if n in ("x", "y")}
            assert not checker.check(assignment), assignment
            found.append(assignment)
        return True

    runner.cl = Proxy()
    fd = np.arange(2)
    values = np.array([3, 7])
    for paths in (Paths.root(), DevicePaths.make(fd, values, np.array([[False, True]] * 3), 3)):
        runner.run_phase(paths, 0, False, checked, None)
        assert runner.launch.retired == ()
    assert dropped and all(dropped)
    assert found
