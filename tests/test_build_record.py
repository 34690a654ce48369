"""Which program a run builds (fzn_gpu/runtime/build_record.py, device.kinds_to_build and
choose_program): a GPU takes its specialised program inlined where --build-only built that,
else the specialised one where this machine built it before, else the generic one where that
was built before and loaded quickly, else builds the specialised one; every build leaves a
record."""

from dataclasses import replace

import pytest

from fzn_gpu.runtime import build_record
from fzn_gpu.runtime.device import all_devices, build, build_key, build_options, choose_program, kinds_to_build

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
    build_record.record(key, build_record.FAST_LOAD_S + 60)  # built again from nothing: counts again
    assert kinds_to_build(gpu, KINDS, "group", options) is None


def test_a_cpu_always_builds_what_it_was_asked(records):
    cpu = all_devices()[0]
    options = build_options(cpu)
    build_record.record(build_key(cpu, None, "item", options), 0.1)
    assert kinds_to_build(cpu, KINDS, "item", options) == KINDS


def test_every_build_leaves_a_record(records):
    cpu = all_devices()[0]
    options = build_options(cpu, model="item") + ["-DFZN_TEST_RECORD=1"]  # a program no other test builds
    build(cpu, None, options, "item")
    assert build_record.was_built(build_key(cpu, None, "item", options))


def test_an_unwritable_cache_is_no_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("FZN_GPU_CACHE_DIR", str(blocker / "builds"))
    build_record.record("abc", 1.0)
    assert not build_record.was_built("abc")


def test_build_only_builds_the_inlined_specialised_program_and_runs_take_it(records, gpu):
    options = build_options(gpu, outline=True, model="group")
    inlined = build_options(gpu, outline=False, model="group")
    build_record.record(build_key(gpu, None, "group", options), 0.4)
    # before --build-only: the generic program, out of line
    assert choose_program(gpu, KINDS, "group", options, inlined) == (None, options)
    # --build-only: the inlined specialised one
    assert choose_program(gpu, KINDS, "group", options, inlined, build_now=True) == (KINDS, inlined)
    build_record.record(build_key(gpu, KINDS, "group", inlined), 45.0)
    assert choose_program(gpu, KINDS, "group", options, inlined) == (KINDS, inlined)
    # a model not offered inlining (too many kinds) keeps to the outlined programs
    assert choose_program(gpu, KINDS, "group", options) == (None, options)
    assert choose_program(gpu, KINDS, "group", options, build_now=True) == (KINDS, options)


def test_a_cpu_never_takes_the_inlined_program(records):
    cpu = all_devices()[0]
    options = build_options(cpu, outline=True, model="item")
    inlined = build_options(cpu, outline=False, model="item")
    assert choose_program(cpu, KINDS, "item", options, inlined, build_now=True) == (KINDS, options)


def _device_model(text):
    from fzn_gpu.engine.pack import pack
    from fzn_gpu.flatzinc.lower import lower
    from fzn_gpu.flatzinc.parser import parse_items
    from fzn_gpu.options import SolveOptions

    return pack(lower(parse_items(text, "m.fzn")), SolveOptions())


def test_inlining_pays_for_short_calls_not_for_long_rows():
    from fzn_gpu.engine.runner import inlining_pays

    queens = (
        "array [1..4] of var 1..4: q :: output_array([1..4]);\nconstraint fzn_all_different_int(q);\nsolve satisfy;\n"
    )
    assert inlining_pays(_device_model(queens))
    n = 40
    names = ", ".join(f"x{i}" for i in range(n))
    long_row = "".join(f"var 0..1: x{i} :: output_var;\n" for i in range(n))
    long_row += f"constraint int_lin_le([{', '.join(['1'] * n)}], [{names}], 7);\nsolve satisfy;\n"
    assert not inlining_pays(_device_model(long_row))


def test_build_kernels_builds_the_generic_program_in_every_shape(records, gpu, monkeypatch):
    """`fzn-gpu build-kernels` (set-up) builds the generic work-group program with the node in
    local memory, in global memory (a model whose node does not fit local memory, QAP, takes
    it), as narrow domains (every variable within 32 values: n-queens, Costas) and as both (a
    narrow model too big for local memory: grid-colouring, which ran on the CPU alone while its
    GPU program built behind the run), so no kind of model builds one inside its time limit: a
    run of any shape then takes the generic program; and the work-item program of float models
    (a float count's first run otherwise built it within its time)."""
    import itertools

    import fzn_gpu.runtime.device as device_module
    from fzn_gpu.engine import build_generic
    from fzn_gpu.engine.runner import Tuning

    built = []
    monkeypatch.setattr(device_module, "all_devices", lambda: [gpu])
    monkeypatch.setattr(
        device_module,
        "build",
        lambda d, kinds, options, model, **kw: (
            built.append((kinds, tuple(options), model)),
            build_record.record(build_key(d, kinds, model, options), 20.0),
        ),
    )
    monkeypatch.setenv("FZN_GPU_KERNEL", "group")
    assert build_generic() == 0
    tuning = Tuning.for_device(gpu)
    # every shape a run may take (Runner._choose_program: store_global and narrow decided apart)
    shapes = [tuning.build_options(gpu, g, narrow=n) for g, n in itertools.product((False, True), repeat=2)]
    assert len({tuple(o) for o in shapes}) == 4
    floats = Tuning.for_device(gpu, floats=True)
    float_options = floats.build_options(gpu, floats=True)
    assert floats.model == "item"
    assert sorted(built) == sorted([(None, tuple(o), "group") for o in shapes] + [(None, tuple(float_options), "item")])
    for options in shapes:
        assert kinds_to_build(gpu, KINDS, "group", options) is None
    assert kinds_to_build(gpu, KINDS, "item", float_options) is None


def test_build_kernels_launches_a_cpus_program_once(tmp_path):
    """On a CPU, `fzn-gpu build-kernels` builds the generic program, and float models' own, and
    launches each once: PoCL compiles a program's work-group function at its first launch,
    seconds that a machine's first run beside a GPU spent holding its share of the search while
    the GPU sat idle. The compiled functions land in PoCL's cache for the work-group size every
    CPU run takes (1)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "FZN_GPU_CACHE_DIR": str(tmp_path / "builds")}
    r = subprocess.run(
        [sys.executable, "-m", "fzn_gpu", "build-kernels"], env=env, capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr
    assert "kernel ready" in r.stderr and "kernel for floats ready" in r.stderr and "launched once" in r.stderr
    if not (tmp_path / "pocl").is_dir():
        pytest.skip("the OpenCL here is not PoCL: its cache is not where this test looks")
    compiled = list((tmp_path / "pocl").glob("kcache/*/*/search/1-1-1-*/search.so"))
    assert len(compiled) >= 2, sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "pocl").rglob("*"))


def test_build_kernels_goes_on_where_a_cpus_launch_fails(monkeypatch, capsys):
    """A CPU whose launch ahead fails (its driver out of resources) is named on stderr and
    left to compile at its first run; build-kernels goes on with the other devices and exits 0."""
    import fzn_gpu.engine as engine
    from fzn_gpu.errors import FznError

    def fails(device, floats=False):
        raise FznError("out of resources")

    monkeypatch.setattr(engine, "launch_once", fails)
    assert engine.build_generic() == 0
    err = capsys.readouterr().err
    cpus = [d for d in all_devices() if not d.is_gpu]
    assert all(f"{d.name}: generic item kernel not launched ahead" in err for d in cpus) and "out of resources" in err
