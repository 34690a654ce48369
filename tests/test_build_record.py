"""Which program a run builds (fzn_gpu/build_record.py, device.kinds_to_build): a GPU takes its
specialised program where this machine built it before, else the generic one where that was
built before and loaded quickly, else builds the specialised one; every build leaves a record."""

from dataclasses import replace

import pytest

from fzn_gpu import build_record
from fzn_gpu.device import all_devices, build, build_key, build_options, kinds_to_build

KINDS = frozenset({1, 2})


@pytest.fixture
def records(tmp_path, monkeypatch):
    monkeypatch.setenv("FZN_GPU_CACHE_DIR", str(tmp_path / "builds"))
    return tmp_path / "builds"


@pytest.fixture
def gpu():
    """PoCL's CPU standing in for a GPU: the choice reads only is_gpu and the device's names."""
    return replace(all_devices()[0], is_gpu=True)


def test_a_gpu_builds_its_specialised_program_when_nothing_was_built(records, gpu):
    options = build_options(gpu, model="group")
    assert kinds_to_build(gpu, KINDS, "group", options) == KINDS


def test_a_gpu_takes_the_generic_program_built_before_over_a_new_build(records, gpu):
    options = build_options(gpu, model="group")
    build_record.record(build_key(gpu, None, "group", options), 0.4)
    assert kinds_to_build(gpu, KINDS, "group", options) is None
    # other options (a node in global memory) are another program: not built before
    other = build_options(gpu, model="group", store_global=True)
    assert kinds_to_build(gpu, KINDS, "group", other) == KINDS


def test_a_specialised_program_built_before_wins(records, gpu):
    options = build_options(gpu, model="group")
    build_record.record(build_key(gpu, None, "group", options), 0.4)
    build_record.record(build_key(gpu, KINDS, "group", options), 9.0)
    assert kinds_to_build(gpu, KINDS, "group", options) == KINDS


def test_a_generic_program_built_slowly_counts_but_one_that_reloaded_slowly_does_not(records, gpu):
    """Its first build takes long (set-up's build-kernels); a slow load of a
    program built before means the driver's cache had lost it: a specialised build costs less."""
    options = build_options(gpu, model="group")
    key = build_key(gpu, None, "group", options)
    build_record.record(key, build_record.FAST_LOAD_S + 60)
    assert kinds_to_build(gpu, KINDS, "group", options) is None
    build_record.record(key, 0.3)
    assert kinds_to_build(gpu, KINDS, "group", options) is None
    build_record.record(key, build_record.FAST_LOAD_S + 60)
    assert kinds_to_build(gpu, KINDS, "group", options) == KINDS
    build_record.record(key, build_record.FAST_LOAD_S + 60)      # built again from nothing: counts again
    assert kinds_to_build(gpu, KINDS, "group", options) is None


def test_a_cpu_always_builds_what_it_was_asked(records):
    cpu = all_devices()[0]
    options = build_options(cpu)
    build_record.record(build_key(cpu, None, "item", options), 0.1)
    assert kinds_to_build(cpu, KINDS, "item", options) == KINDS


def test_every_build_leaves_a_record(records):
    cpu = all_devices()[0]
    options = build_options(cpu, model="item") + ["-DFZN_TEST_RECORD=1"]     # a program no other test builds
    build(cpu, None, options, "item")
    assert build_record.was_built(build_key(cpu, None, "item", options))


def test_an_unwritable_cache_is_no_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("FZN_GPU_CACHE_DIR", str(blocker / "builds"))
    build_record.record("abc", 1.0)
    assert not build_record.was_built("abc")
