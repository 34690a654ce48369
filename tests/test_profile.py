"""Profiling a node (kernels/profile.cl, engine/profile.py): a profile build counts the same
search, its passes are counted in every build, and the cycles it keeps become one line of
shares. Build settings for tuning runs (a register cap, more compiler options) reach the
compiler only where it takes them."""

from __future__ import annotations

import re
import time

import numpy as np

from fzn_gpu.engine.profile import cnt_row, kind_profile, node_profile
from fzn_gpu.engine.runner import SliceBudget, Tuning
from fzn_gpu.flatzinc.registry import KINDS
from fzn_gpu.runtime.device import Device, is_nvidia
from fzn_gpu.runtime.kernel_abi import Cnt

from test_cli import fzn, queens_by_pairs, run
from test_multidevice import stat

QUEENS8 = queens_by_pairs(8)


def test_a_profile_build_searches_the_same_tree(tmp_path, monkeypatch, kernel):
    """Same nodes and solutions with and without the timers; passes counted in both; no
    cycles (so no nodeProfile line) on a device without a cycle counter (PoCL)."""
    monkeypatch.setenv("FZN_GPU_SUBS_PER_ITEM", "1")
    path = fzn(tmp_path, QUEENS8)
    plain = run("-a", "--count-only", "--bucket", "off", "-s", path)
    monkeypatch.setenv("FZN_GPU_PROFILE", "1")
    timed = run("-a", "--count-only", "--bucket", "off", "-s", path)
    assert timed.returncode == 0, timed.stderr
    assert stat(timed.stdout, "solutions") == stat(plain.stdout, "solutions") == "92"
    assert stat(timed.stdout, "nodes") == stat(plain.stdout, "nodes")
    # passes are counted in both builds; their totals may differ by the propagation of a path
    # donated on the fly (re-splitting), which the slices' timing decides (two plain runs of
    # the group kernel here: 1,258 and 1,259)
    assert int(stat(timed.stdout, "passes")) >= int(stat(plain.stdout, "nodes")) > 0
    assert int(stat(plain.stdout, "passes")) >= int(stat(plain.stdout, "nodes"))
    assert "nodeProfile" not in timed.stdout
    # the calls of each kind are counted without a clock: queens by pairs is int_ne and
    # int_lin_ne alone
    kinds = stat(timed.stdout, "kindProfile")
    assert kinds and set(re.findall(r"(\w+) \(", kinds)) <= {"int_ne", "int_lin_ne"}, kinds
    assert "kindProfile" not in plain.stdout


def test_the_kind_line_ranks_kinds_by_cycles_then_calls():
    row = np.zeros(cnt_row(True), dtype=np.int64)
    assert kind_profile(row, nodes=10) is None
    lin, ne = next(k.id for k in KINDS if k.key == "int_lin_eq"), next(k.id for k in KINDS if k.key == "int_ne")
    row[len(Cnt) + 2 * ne] = 40  # calls only (no clock): ranked by calls
    row[len(Cnt) + 2 * lin] = 10
    assert kind_profile(row, nodes=10) == "int_ne (4.00 calls a node); int_lin_eq (1.00 calls a node)"
    row[len(Cnt) + 2 * lin + 1] = 30_000  # cycles: int_lin_eq 75 %, 3,000 a call
    row[len(Cnt) + 2 * ne + 1] = 10_000
    assert kind_profile(row, nodes=10) == (
        "int_lin_eq 75 % (1.00 calls a node, 3,000 cycles a call); int_ne 25 % (4.00 calls a node, 250 cycles a call)"
    )
    assert kind_profile(row[: len(Cnt)], nodes=10) is None


def test_the_profile_line_gives_each_phase_its_share():
    cycles = np.zeros(len(Cnt), dtype=np.int64)
    assert node_profile(cycles, nodes=10, passes=40) is None  # nothing timed
    cycles[[Cnt.T_PROPAGATE, Cnt.T_SETTLE, Cnt.T_COPY, Cnt.T_CHOOSE, Cnt.T_TOTAL]] = [600, 100, 50, 50, 1000]
    line = node_profile(cycles, nodes=10, passes=40)
    assert line.startswith("100 cycles a node (")
    assert "propagate 60 %, settle 10 %, copy 5 %, choose 5 %, other 20 %" in line
    assert "4.00 passes, 25 cycles a pass" in line and "busy" not in line
    # 1,000 cycles at 1 MHz are 1 ms of a search's 4 ms launched (4 searches for 1 ms)
    assert node_profile(cycles, nodes=10, passes=40, search_s=0.004, clock_mhz=1).endswith("; busy 25 %")
    # the busiest search ran 500 cycles a millisecond (0.5 MHz): at that clock the 1,000 cycles
    # are 2 ms of the 4 launched
    assert node_profile(cycles, nodes=10, passes=40, search_s=0.004, clock_mhz=1, clock_seen_hz=5e5).endswith(
        "; busy 25 % at the rated 1 MHz, 50 % at the busiest search's 0 MHz"
    )
    assert node_profile(cycles, nodes=0, passes=0) is None
    # a work-group's bookkeeping phases appear where timed, out of "other"
    cycles[[Cnt.T_FIXPOINT, Cnt.T_BACKTRACK]] = [100, 50]
    line = node_profile(cycles, nodes=10, passes=40)
    assert "choose 5 %, fixpoint 10 %, backtrack 5 %, other 5 %" in line and "branch" not in line


def _device(platform: str, gpu: bool) -> Device:
    return Device(0, None, "dev", platform, gpu, 8, 8 << 30, 2 << 30)


def test_the_register_cap_is_nvidias_alone(monkeypatch):
    monkeypatch.delenv("FZN_GPU_MAX_REGISTERS", raising=False)
    nvidia, pocl = _device("NVIDIA CUDA", True), _device("Portable Computing Language", False)
    assert is_nvidia(nvidia) and not is_nvidia(pocl)
    assert Tuning.for_device(nvidia).max_registers == 64
    assert Tuning.for_device(pocl).max_registers == 0
    monkeypatch.setenv("FZN_GPU_MAX_REGISTERS", "0")
    assert Tuning.for_device(nvidia).max_registers == 0


def test_slices_end_by_the_clock_where_asked_on_work_groups_alone(monkeypatch):
    """Slices end by a budget unless FZN_GPU_SLICE_CLOCK=1, which the work-group kernel alone
    takes (measured slower on NVIDIA: docs/bench/measurements.md)."""
    monkeypatch.delenv("FZN_GPU_SLICE_CLOCK", raising=False)
    nvidia, pocl = _device("NVIDIA CUDA", True), _device("Portable Computing Language", False)
    monkeypatch.setenv("FZN_GPU_KERNEL", "group")
    assert not Tuning.for_device(nvidia).slice_clock and not Tuning.for_device(pocl).slice_clock
    monkeypatch.setenv("FZN_GPU_SLICE_CLOCK", "1")
    assert Tuning.for_device(nvidia).slice_clock and Tuning.for_device(pocl).slice_clock
    monkeypatch.setenv("FZN_GPU_KERNEL", "item")
    assert not Tuning.for_device(nvidia).slice_clock and not Tuning.for_device(pocl).slice_clock


def test_a_clocked_slice_is_the_target_or_what_the_deadline_leaves():
    budget = SliceBudget()
    assert budget.clock_us(None) == int(SliceBudget.TARGET_S * 1e6)
    assert budget.clock_us(time.monotonic() + 3600) == int(SliceBudget.TARGET_S * 1e6)
    assert 1000 <= budget.clock_us(time.monotonic() + 0.01) <= 8000
    assert budget.clock_us(time.monotonic() - 1) == 1000


def test_bad_build_settings_are_refused_with_their_name(tmp_path, monkeypatch):
    monkeypatch.setenv("FZN_GPU_MAX_REGISTERS", "many")
    r = run("-a", "--count-only", "--bucket", "off", fzn(tmp_path, QUEENS8))
    assert r.returncode != 0 and "FZN_GPU_MAX_REGISTERS" in r.stderr and "Traceback" not in r.stderr


def test_more_compiler_options_reach_the_build(tmp_path, monkeypatch):
    """FZN_GPU_CL_OPTIONS goes to the compiler: a valid one builds and counts exactly, an
    invalid one fails the build with the compiler's word, not a traceback."""
    path = fzn(tmp_path, QUEENS8)
    monkeypatch.setenv("FZN_GPU_CL_OPTIONS", "-cl-mad-enable -DFZN_UNUSED_SETTING=1")
    r = run("-a", "--count-only", "--bucket", "off", "-s", path)
    assert r.returncode == 0 and stat(r.stdout, "solutions") == "92"
    monkeypatch.setenv("FZN_GPU_CL_OPTIONS", "-cl-no-such-option")
    r = run("-a", "--count-only", "--bucket", "off", path)
    assert r.returncode != 0 and "did not build" in r.stderr and "Traceback" not in r.stderr
