"""Re-splitting on the fly (resplit.py): busy searches donate the right branches of their
shallowest open levels. Counts and optima must not change, on one device or several, and a
device that fails after donating must hand back its block less what it gave away."""

import itertools

import numpy as np
import pytest

from fzn_gpu.engine import resplit as resplit_module
from fzn_gpu.engine.balance import DeviceShare, WorkPool
from fzn_gpu.engine.paths import Paths
from fzn_gpu.engine.resplit import idle_wish
from fzn_gpu.runtime.kernel_abi import DEC

from conftest import use_kernel
from helpers import solve_text
from test_cli import fzn, queens_by_pairs, run
from test_multidevice import KNAPSACK, QUEENS10, stat

EQ, NE, LE, GT = 0, 1, 2, 3


def d(*triples: int) -> np.ndarray:
    """A path from (variable, op, value) triples, as the kernels write it (DEC ints a decision)."""
    t = np.asarray(triples, dtype=np.int32).reshape(-1, 3)
    return np.concatenate([t, np.zeros((len(t), DEC - 3), np.int32)], axis=1).ravel()


HOLDS = {EQ: lambda a, b: a == b, NE: lambda a, b: a != b, LE: lambda a, b: a <= b, GT: lambda a, b: a > b}


def covers(path: np.ndarray, point: tuple) -> bool:
    return all(HOLDS[op](point[v], value) for v, op, value, _ in path.reshape(-1, DEC).tolist())


def test_a_block_less_its_donations_covers_each_point_once_with_them():
    """Three variables over 0..2. Path 0 is x0 = 1; its search (x1 <= 1, then x2 = 0 ...) gave
    away x0=1 & x1>1, and x0=1 & x1<=1 & x2!=0 (right branches of two of its levels)."""
    block = Paths.from_list([d(0, EQ, 1), d(0, NE, 1)])
    given = Paths.from_list([d(0, EQ, 1, 1, GT, 1), d(0, EQ, 1, 1, LE, 1, 2, NE, 0)])
    left = block.without(np.array([0, 0]), given)
    for point in itertools.product(range(3), repeat=3):
        in_left = sum(covers(left.path(i), point) for i in range(len(left)))
        in_given = sum(covers(given.path(i), point) for i in range(len(given)))
        assert in_left + in_given == 1  # every point once: nothing lost or repeated
    assert np.array_equal(left.path(1), block.path(1))  # a path that gave nothing stays whole


def _random_paths(rng, n):
    return Paths.from_list([rng.integers(0, 9, DEC * int(rng.integers(0, 5))).astype(np.int32) for _ in range(n)])


def _same(a, b):
    return len(a) == len(b) and all(np.array_equal(a.path(i), b.path(i)) for i in range(len(a)))


def test_paths_from_records_take_each_records_decisions_and_nothing_after_them():
    """The kernel's emitted and donated records: [decisions, DEC entries each, padding, the
    source]. Paths.from_records gathers the entries the counts cover, from whole rows or from
    rows less their source, whatever lies after them."""
    rng = np.random.default_rng(11)
    for _ in range(100):
        n, longest = int(rng.integers(0, 40)), int(rng.integers(1, 12))
        rows = rng.integers(-9, 99, (n, 2 + DEC * longest)).astype(np.int32)
        rows[:, 0] = rng.integers(0, longest + 1, n)
        for records in (rows, rows[:, :-1]):
            paths = Paths.from_records(records)
            assert len(paths) == n and paths.ptr.dtype == paths.data.dtype == np.int32
            for i in range(n):
                assert np.array_equal(paths.path(i), rows[i, 1 : 1 + DEC * rows[i, 0]])


def test_extended_paths_equal_their_concatenation_and_leave_every_older_view_as_it_was():
    """Paths.extend writes into spare room shared with older Paths: none of those may change,
    whichever of them is extended next (a block given to another device, then the kept part)."""
    rng = np.random.default_rng(5)
    paths, history = _random_paths(rng, 7), []
    for step in range(40):
        more = _random_paths(rng, int(rng.integers(0, 6)))
        history.append((paths, Paths(paths.ptr.copy(), paths.data.copy())))
        if step % 7 == 3 and len(paths) > 2:  # part of it went to another device
            paths = paths.block(0, len(paths) - 2)
        elif step % 5 == 4:  # an older Paths extended again
            paths = history[int(rng.integers(0, len(history)))][0]
        extended = paths.extend(more)
        assert _same(extended, Paths.concat([paths, more]))
        paths = extended
        for old, copy in history:
            assert _same(old, copy)


def test_a_prefix_keeps_the_room_and_only_what_lay_beyond_it_is_written_over():
    """A phase whose block another device took part of: its paths cut to a prefix, then
    extended by donations, at each slice. The prefix keeps `extend`'s room where it is the
    newest paths made in it (no copy of every path at each slice), so what
    lay beyond it is written over: what the balancer keeps from there is a copy and stays as it
    was; the prefix's own paths never change; a prefix of older paths leaves the newest alone."""
    rng = np.random.default_rng(11)
    model = [_random_paths(rng, 1).path(0) for _ in range(5)]  # the paths, as a list
    paths, kept_copies = Paths.from_list(model), []
    for step in range(60):
        if step % 3 == 0 and len(model) > 1:  # another device takes the last few
            k = int(rng.integers(1, len(model)))
            taken = paths.block(k, len(model)).copy()
            kept_copies.append((taken, Paths.from_list(model[k:])))
            before = paths
            paths, model = paths.prefix(k), model[:k]
            assert _same(paths, Paths.from_list(model))
            if step:  # grown by extend: the room is kept, no copy
                assert np.shares_memory(paths.data, before.data) or not len(paths.data)
        more = _random_paths(rng, int(rng.integers(1, 6)))
        grown = paths.extend(more)
        model += [more.path(i) for i in range(len(more))]
        assert _same(grown, Paths.from_list(model))
        kept_copies.append((more.copy(), more.copy()))
        paths = grown
        for held, expected in kept_copies:
            assert _same(held, expected)
    older = paths.prefix(len(paths))  # the whole: itself
    assert older is paths
    newest = paths.extend(_random_paths(rng, 3))
    snapshot = newest.copy()
    cut = paths.prefix(2)  # paths is no longer the newest in the room: a block of its own
    assert not np.shares_memory(cut.ptr, newest.ptr)
    cut.extend(_random_paths(rng, 4))
    assert _same(newest, snapshot)


def test_the_balancer_keeps_copies_of_what_a_block_gives_away():
    """What shrink gives an idle device and what donated records as given away are copies: the
    phase's next extend writes where they lay (Paths.prefix)."""
    a, b = DeviceShare(0, "a", False, 8), DeviceShare(1, "b", False, 2)
    pool = WorkPool(Paths.from_list([d(0, EQ, v) for v in range(6)]), [a, b])
    rb = pool.take(a)
    grown = rb.paths.extend(Paths.from_list([d(0, EQ, 0, 1, NE, 0), d(0, EQ, 1, 1, NE, 0)]))
    pool.donated(0, np.array([0, 1]), grown)
    assert not np.shares_memory(pool.running[0].given[0].data, grown.data)
    pool.running[0].wanted = b
    n = pool.shrink(0, started=2)
    assert n < len(grown) and pool.returned
    assert not np.shares_memory(pool.returned[0].data, grown.data)


def test_donations_that_do_not_extend_their_source_are_refused():
    block = Paths.from_list([d(0, EQ, 1)])
    with pytest.raises(ValueError):
        block.without(np.array([0]), Paths.from_list([d(0, EQ, 2, 1, GT, 1)]))


def test_an_idle_device_gets_the_donations_asked_for_it():
    import threading

    a, b = DeviceShare(0, "a", False, 8), DeviceShare(1, "b", False, 2)
    pool = WorkPool(Paths.from_list([d(0, EQ, v) for v in range(4)]), [a, b])
    assert pool.take(a).n == 4
    got = []
    thief = threading.Thread(target=lambda: got.append(pool.take(b)))
    thief.start()
    while not pool.running[0].wanted:
        pass
    assert pool.shrink(0, started=4) == 4  # nothing unstarted to give
    assert pool.donations_wanted(0, idle_items=0, unstarted=0, items=8) == 2  # one per b's item
    grown = Paths.concat([pool.running[0].paths, Paths.from_list([d(0, EQ, 0, 1, NE, 0), d(0, EQ, 1, 1, NE, 0)])])
    pool.donated(0, np.array([0, 1]), grown)
    assert pool.shrink(0, started=4) == 4  # the two donations go to b
    thief.join(timeout=5)
    assert got[0].n == 2 and np.array_equal(got[0].paths.path(1), grown.path(5))
    rb = pool.running[0]
    left = rb.left_to_search()  # were a to fail now: paths 0 and 1 less
    assert len(left) == 4 and left.path(0).tolist() == d(0, EQ, 0, 1, EQ, 0).tolist()  # what b holds
    assert left.path(2).tolist() == d(0, EQ, 2).tolist()


def test_a_device_asks_once_enough_work_items_are_idle():
    assert idle_wish(idle_items=0, unstarted=0, items=64) == 0
    assert idle_wish(idle_items=1, unstarted=0, items=64) == 0  # under a 32nd
    assert idle_wish(idle_items=2, unstarted=3, items=64) == 2 + 16 - 3  # and a reserve of a quarter
    assert idle_wish(idle_items=8, unstarted=40, items=64) == 0
    assert idle_wish(idle_items=1, unstarted=0, items=4) == 1 + 1


@pytest.fixture
def resplit_often(monkeypatch):
    """Few sub-search spaces and short slices: searches run dry early and often (eight of them
    on this 2-core machine, work-items or work-groups)."""
    monkeypatch.setenv("FZN_GPU_ITEMS_PER_CU", "4")
    monkeypatch.setenv("FZN_GPU_SUBS_PER_ITEM", "1")
    monkeypatch.setenv("FZN_GPU_SLICE_BUDGET", "200")


def test_re_split_searches_give_the_same_counts_and_optima(tmp_path, resplit_often, monkeypatch, kernel_with_clock):
    r = run("-a", "-s", "--check", fzn(tmp_path, QUEENS10))
    assert r.returncode == 0 and r.stdout.count("----------") == 724 and "\n==========\n" in r.stdout
    assert int(stat(r.stdout, "resplitPaths")) > 0
    r = run("-a", "--count-only", "--bucket", "off", "-s", fzn(tmp_path, queens_by_pairs(11), "q11.fzn"))
    assert stat(r.stdout, "solutions") == "2680" and int(stat(r.stdout, "resplitPaths")) > 0
    r = run("-s", "--check", fzn(tmp_path, KNAPSACK, "k.fzn"))
    monkeypatch.delenv("FZN_GPU_SUBS_PER_ITEM")
    monkeypatch.delenv("FZN_GPU_SLICE_BUDGET")
    alone = run("-s", "--check", fzn(tmp_path, KNAPSACK, "k1.fzn"))
    assert stat(r.stdout, "objective") == stat(alone.stdout, "objective") and "==========" in r.stdout


@pytest.mark.parametrize("fault", ["0:1:2", "0:1:4", "1:1:3", "1:1:6", "1:2:1"])
def test_a_device_failing_after_it_donated_loses_and_repeats_nothing(
    tmp_path, resplit_often, monkeypatch, fault, kernel_with_clock
):
    monkeypatch.setenv("FZN_GPU_CPU_SUBDEVICES", "2")
    monkeypatch.setenv("FZN_GPU_TEST_HOOKS", f"join=ready;device={fault}")
    r = run("-a", "--count-only", "--bucket", "off", "-s", fzn(tmp_path, queens_by_pairs(11)))
    assert r.returncode == 0 and stat(r.stdout, "solutions") == "2680" and "==========" in r.stdout
    r = run("-a", "-s", "--check", fzn(tmp_path, QUEENS10, "q10.fzn"))
    assert r.returncode == 0 and r.stdout.count("----------") == 724 and "\n==========\n" in r.stdout


def test_slice_budget_grows_only_on_a_measured_slice():
    """A slice cut short (a full solution buffer, every search done) may shrink the budget but
    never grow it: quick slices of that kind once raised it to the maximum, and the next slice
    without solutions ran for a minute, deaf to Ctrl-C."""
    from fzn_gpu.engine.runner import SliceBudget

    b = SliceBudget()
    b.begin_phase(8)
    start = b.for_slice(None)
    for _ in range(20):
        b.after_slice(b.for_slice(None), 0.0005, cut_short=True)
    assert b.for_slice(None) <= start
    b.after_slice(b.for_slice(None), 0.001)  # a real short slice: grows
    assert b.for_slice(None) > start
    big = b.for_slice(None)
    b.after_slice(big, 1.0, cut_short=True)  # too slow even cut short: shrinks
    assert b.for_slice(None) < big


def test_each_size_of_phase_keeps_the_budget_it_learnt():
    """A phase of a size met before (work-items by powers of two) starts from the budget that
    size learnt, a new size from START: LNS steps alternate sizes with their strategy, and
    restarting every step at START cost a GPU step most of its launches."""
    from fzn_gpu.engine.runner import SliceBudget

    b = SliceBudget()
    b.begin_phase(1)  # a dive
    b.after_slice(b.for_slice(None), SliceBudget.TARGET_S / 8)  # quick: grows
    dive = b.for_slice(None)
    assert dive > SliceBudget.START
    b.begin_phase(4224)
    assert b.for_slice(None) == SliceBudget.START
    b.after_slice(b.for_slice(None), SliceBudget.TARGET_S / 16)
    wide = b.for_slice(None)
    b.begin_phase(264)
    assert b.for_slice(None) == SliceBudget.START
    b.begin_phase(5000)  # the same size as 4224's
    assert b.for_slice(None) == wide
    b.begin_phase(1)
    assert b.for_slice(None) == dive


def test_tail_slices_are_shorter_and_leave_the_budget_as_it_was():
    """With searches idle and waiting for donations (the tail of a search), a slice runs a
    TAIL_SHARE-th of the budget, so that donated paths reach the idle ones sooner; the slice is
    read as the whole one it stands for, so the budget it learns is that of a whole slice."""
    from fzn_gpu.engine.runner import SliceBudget

    b = SliceBudget()
    b.begin_phase(8)
    b.value = 1000
    short = b.for_slice(None, tail=True)
    assert short == 1000 // SliceBudget.TAIL_SHARE
    b.after_slice(short, SliceBudget.TARGET_S / SliceBudget.TAIL_SHARE, tail=True)  # on target
    assert b.for_slice(None) == 1000
    b.value = SliceBudget.LOWEST
    assert b.for_slice(None, tail=True) == SliceBudget.LOWEST


@pytest.mark.parametrize("each", [resplit_module.DONATE_EACH, 1])
def test_a_group_search_gives_several_paths_a_slice(each, resplit_often, monkeypatch):
    """A work-group search gives away the right branches of up to `Resplit.each` open levels at
    a slice's start (one each, ordered printing's rule, when it says one); the count stays
    exact."""
    from fzn_gpu.engine.resplit import SelfSplit

    use_kernel(monkeypatch, "group")
    per_slice: list[np.ndarray] = []
    original = SelfSplit.donated

    def recorded(self, sources, paths):
        per_slice.append(np.asarray(sources).copy())
        original(self, sources, paths)

    def init(self) -> None:
        self.count, self.each = 0, each

    monkeypatch.setattr(SelfSplit, "donated", recorded)
    monkeypatch.setattr(SelfSplit, "__init__", init)
    found, outcome = solve_text(QUEENS10, all_solutions=True)
    assert outcome.complete and len(found) == 724
    assert per_slice, "no donations: the test's settings no longer make searches run dry"
    most = max(int(np.unique(s, return_counts=True)[1].max()) for s in per_slice)
    assert most > 1 if each > 1 else most == 1
