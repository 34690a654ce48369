"""Every kind of the registry has its propagator in the kernels' dispatch (kernels/dispatch.cl),
so a kind added to fzn_gpu/flatzinc/registry.py without one fails here by name rather than as a silent
`return false` (a failed node) at run time; the kinds a work-group shares out or walks together
have their parallel forms."""

import re

from fzn_gpu.flatzinc.registry import KINDS, SHARED_BY_GROUP, SHARED_BY_VARIABLE
from fzn_gpu.resources import kernels_dir

DEFINE = r"#define (\w+)\(NAME[^)]*\)((?:[^\n]*\\\n)+[^\n]*)"


def dispatched(source: str, macros_from: str | None = None) -> set[str]:
    """The kinds of the PROPAGATOR(kind, call) lines of `source`, with the macros that write
    them (defined in `macros_from`, by default `source` itself) expanded."""
    macros = {
        name: re.findall(r"PROPAGATOR\(NAME(?:##(\w+))?,", body)
        for name, body in re.findall(DEFINE, macros_from or source)
    }
    body = re.sub(DEFINE, "", source)
    kinds = set(re.findall(r"^\s*PROPAGATOR\((\w+),", body, re.M))
    for name, suffixes in macros.items():
        for base in re.findall(rf"^\s*{name}\((\w+),", body, re.M):
            kinds.update(base + suffix for suffix in suffixes)
    return kinds


def section(source: str, function: str) -> str:
    start = source.index(function)
    return source[start : source.index("\n}\n", start)]


def test_every_kind_has_a_propagator():
    source = (kernels_dir() / "dispatch.cl").read_text()
    missing = {k.key for k in KINDS} - dispatched(section(source, "bool propagate_one("), source)
    assert not missing, f"no PROPAGATOR line in kernels/dispatch.cl for {sorted(missing)}"


def test_shared_kinds_have_their_parallel_forms():
    source = (kernels_dir() / "dispatch.cl").read_text()
    assert set(SHARED_BY_VARIABLE) <= dispatched(section(source, "bool propagate_part("))
    group = (kernels_dir() / "propagators_group.cl").read_text()
    assert set(SHARED_BY_GROUP) <= dispatched(group)


def test_the_reader_of_the_dispatch_sees_a_missing_line():
    text = (
        "#define REL3(NAME, REL) \\\n    PROPAGATOR(NAME, a) \\\n    PROPAGATOR(NAME##_reif, b)\n    REL3(int_eq, R)\n"
    )
    assert dispatched(text) == {"int_eq", "int_eq_reif"}
    assert dispatched("    PROPAGATOR(int_ne, c)\n") == {"int_ne"}


def test_the_kernel_parameters_are_declared_once_and_passed_by_name():
    """kernel_abi.SEARCH_PARAMS is the one list: the generated header writes each kernel's as a
    macro, which is the kernel's signature, and the runner passes its arguments by name, put in
    the declared order (Runner.kernel_args); a name missing, unknown or given twice fails by name.
    A kernel takes at most 20: the arrays of one kind packed in one buffer, the scalars in the
    settings."""
    import pytest

    from fzn_gpu.engine.runner import Runner
    from fzn_gpu.errors import FznError
    from fzn_gpu.runtime import codegen, kernel_abi
    from fzn_gpu.runtime.device import kernels_dir

    item, group = kernel_abi.parameter_names("item"), kernel_abi.parameter_names("group")
    assert len(item) <= 20 and len(group) <= 20
    assert item[:2] == ("pk_model", "pk_root") and "fbest" in item and "pk_node" in item
    assert group[-1] == "pk_local" and "ACT" in group and "STACK" in group
    header = codegen.header()
    for kernel, (file, name) in {"item": ("search.cl", "search"), "group": ("search_group.cl", "search_group")}.items():
        macro, unpack = kernel_abi.SEARCH_MACROS[kernel], kernel_abi.UNPACK_MACROS[kernel]
        source = (kernels_dir() / file).read_text()
        assert f"__kernel void {name}({macro})\n{{\n    {unpack}" in source
        line = next(x for x in header.splitlines() if x.startswith(f"#define {macro} "))
        declared = [p.strip() for p in line.split(" ", 2)[2].split(",")]
        assert [d.replace("*", " ").split()[-1] for d in declared] == list(kernel_abi.parameter_names(kernel))
    runner = Runner.__new__(Runner)
    runner.group = False
    named = [(name, i) for i, name in enumerate(item)]
    assert runner.kernel_args(list(reversed(named))) == tuple(range(len(item)))
    with pytest.raises(FznError, match="pk_model missing"):
        runner.kernel_args([pair for pair in named if pair[0] != "pk_model"])
    with pytest.raises(FznError, match="extra unknown"):
        runner.kernel_args(named + [("extra", 1)])
    with pytest.raises(FznError, match="LV twice"):
        runner.kernel_args(named + [("LV", 1)])


def test_the_settings_and_packed_arrays_are_declared_once():
    """Every scalar a kernel reads is a setting its generated unpacking reads by name from the
    SearchSettings struct it takes by value, every packed array a pointer it derives at the
    offset the settings carry, and the model's tables an element offset from the model's base
    (M_<TABLE>(x, i)); the
    host's row names each (a setting missing or unknown fails by name), and a packed buffer
    lays its arrays end to end, aligned for longs, and reads back what it packed."""
    import numpy as np
    import pytest

    from fzn_gpu.engine import packed
    from fzn_gpu.errors import FznError
    from fzn_gpu.runtime import codegen, kernel_abi

    header = codegen.header()
    for kernel, unpack in kernel_abi.UNPACK_MACROS.items():
        line = next(x for x in header.splitlines() if x.startswith(f"#define {unpack} "))
        for name in kernel_abi.SETTINGS[kernel]:
            assert f"int {name} = (int)pk_settings.v[SET_{name.upper()}];" in line
        model = next(x for x in header.splitlines() if x.startswith(f"#define {unpack.replace('UNPACK', 'MODEL')}(x) "))
        for buffer, parts in kernel_abi.PACKED[kernel].items():
            for part in parts:
                at = f"SET_AT_{part.name.upper()}"
                if buffer == "pk_model":  # read as M_<NAME>(x, i): the base and an element offset
                    shift = part.itemsize.bit_length() - 1
                    assert f"(x)->at_{part.name} = (int)(pk_settings.v[{at}] >> {shift});" in model
                    assert f"#define M_{part.name.upper()}(x, i) (((__global const {part.ctype} *)(x)->model)" in header
                else:  # a pointer; a 32-bit offset but in a work-item node (WIDE_PACKED)
                    cast = "" if buffer in kernel_abi.WIDE_PACKED else "(int)"
                    assert f"{part.ctype} *{part.name} = " in line and f"{buffer} + {cast}pk_settings.v[{at}]" in line
        names = kernel_abi.settings_names(kernel)
        assert len(set(names)) == len(names)
        # the settings travel by value: with the pointers, within the 1,024 bytes of parameters
        # OpenCL promises every device
        assert packed.SETTINGS_DTYPE.itemsize + 8 * (len(kernel_abi.SEARCH_PARAMS[kernel]) - 1) <= 1024
        row = packed.settings_row(kernel, {name: i for i, name in enumerate(names)})
        assert [row[kernel_abi.SETTING_SLOTS[name]] for name in names] == list(range(len(names)))
        with pytest.raises(FznError, match="budget missing"):
            packed.settings_row(kernel, {name: 0 for name in names if name != "budget"})
        with pytest.raises(FznError, match="extra unknown"):
            packed.settings_row(kernel, {**dict.fromkeys(names, 0), "extra": 1})
    roots = {
        "root_lb": np.array([1, 2, 3], np.int32),
        "root_ub": np.array([4, 5, 6], np.int32),
        "root_bits": np.array([7], np.uint32),
        "root_fb": np.array([-(2**40), 2**40], np.int64),
    }
    data, at = packed.pack("item", "pk_root", roots)
    assert at == {"at_root_lb": 0, "at_root_ub": 16, "at_root_bits": 32, "at_root_fb": 40} and len(data) == 56
    back = {name.replace("root_", "root_out_"): np.zeros_like(a) for name, a in roots.items()}
    out_at = {k.replace("root_", "root_out_"): v for k, v in at.items()}
    packed.unpack_into("item", "pk_root_out", data, out_at, back)
    for name, a in roots.items():
        assert (back[name.replace("root_", "root_out_")] == a).all()
    with pytest.raises(FznError, match="root_fb"):
        packed.pack("item", "pk_root", {**roots, "root_fb": np.zeros(2, np.int32)})


def test_a_launch_sets_only_the_arguments_that_changed():
    """engine/kernel_call.py: the same buffer object or an equal scalar of one type is not set
    again; a buffer made anew, a scalar of another value or type is; after a launch that failed,
    the next one sets every argument."""
    import numpy as np
    import pytest

    from fzn_gpu.engine.kernel_call import KernelCall

    class Kernel:
        def __init__(self):
            self.set = []

        def set_arg(self, i, value):
            if isinstance(value, str):
                raise ValueError("no such argument")
            self.set.append(i)

    class CL:
        launches = 0

        @classmethod
        def enqueue_nd_range_kernel(cls, queue, kernel, global_size, local_size):
            cls.launches += 1

    kernel = Kernel()
    call = KernelCall(kernel, launch=lambda cl, queue, k, g, lo: cl.enqueue_nd_range_kernel(queue, k, g, lo))
    buf, other = object(), object()
    call(CL, None, (64,), (32,), (buf, np.int32(3), np.int32(7)))
    assert kernel.set == [0, 1, 2] and CL.launches == 1
    kernel.set.clear()
    call(CL, None, (64,), (32,), (buf, np.int32(3), np.int32(8)))
    assert kernel.set == [2]
    kernel.set.clear()
    call(CL, None, (64,), (32,), (other, np.int64(3), np.int32(8)))
    assert kernel.set == [0, 1]
    with pytest.raises(ValueError):
        call(CL, None, (64,), (32,), (other, "bad", np.int32(8)))
    kernel.set.clear()
    call(CL, None, (64,), (32,), (other, np.int64(3), np.int32(8)))
    assert kernel.set == [0, 1, 2] and CL.launches == 4


def test_the_buffers_of_the_launch_before_live_until_the_launch_has_settled():
    """engine/kernel_call.py: a launch with new buffers does not free the old ones (freeing
    device memory waits for the device's kernels, holding the interpreter lock): they go at
    settle(), which the runner calls once the slice has finished. Dropped in the call, the
    old buffer would be gone before settle()."""
    import gc
    import weakref

    from fzn_gpu.engine.kernel_call import KernelCall

    class Buffer:
        pass

    class Kernel:
        def set_arg(self, i, value):
            pass

    class CL:
        @staticmethod
        def enqueue_nd_range_kernel(queue, kernel, global_size, local_size):
            pass

    call = KernelCall(Kernel(), launch=lambda cl, queue, k, g, lo: cl.enqueue_nd_range_kernel(queue, k, g, lo))
    old = Buffer()
    gone = weakref.ref(old)
    call(CL, None, (64,), (32,), (old,))
    call.settle()
    del old
    call(CL, None, (64,), (32,), (Buffer(),))
    gc.collect()
    assert gone() is not None, "the launch before's buffer was freed while the new launch ran"
    call.settle()
    gc.collect()
    assert gone() is None


def test_a_launch_through_ctypes_runs_the_kernel_and_reports_failures():
    """kernel_launch.py: the search kernel's launches go through the ICD loader by ctypes (the
    interpreter's lock released while a driver waits in the call); the kernel runs over the
    sizes given, and a launch the driver refuses raises cl.Error as pyopencl's would."""
    import numpy as np
    import pyopencl as cl
    import pytest

    from fzn_gpu.runtime.device import select_devices
    from fzn_gpu.runtime.kernel_launch import _native, enqueue

    assert _native() is not None, "no ICD loader found: launches would hold the interpreter's lock"
    ctx = cl.Context([select_devices("all")[0].cl_device])
    queue = cl.CommandQueue(ctx)
    prog = cl.Program(ctx, "__kernel void twice(__global int *a) { int i = get_global_id(0); a[i] = 2 * i; }")
    kernel = cl.Kernel(prog.build(), "twice")
    out = np.zeros(64, np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=out)
    kernel.set_arg(0, buf)
    enqueue(cl, queue, kernel, (np.int64(48),), (np.int32(16),))
    cl.enqueue_copy(queue, out, buf)
    assert out.tolist() == [2 * i for i in range(48)] + [0] * 16
    with pytest.raises(cl.Error, match="INVALID_WORK_GROUP_SIZE"):
        enqueue(cl, queue, kernel, (48,), (7,))


MUTATORS = ("set_min", "set_max", "fix", "remove_value")  # int: FAILED (-1), UNCHANGED (0), CHANGED (1)


def _kernel_sources() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(kernels_dir().glob("*.cl"))}


def test_results_are_read_by_their_own_convention():
    """A mutator answers an int whose failure is FAILED (-1), a propagator or helper a bool whose
    failure is false. TRY(e) fails on e == FAILED, so a bool helper inside TRY never fails (its
    false, a failure, was passed over), and a bool function returning a mutator's int as it is
    fails where nothing changed (UNCHANGED is 0) and goes on where it failed (FAILED is true).
    Each is caught here by file and line."""
    sources = _kernel_sources()
    everything = "\n".join(sources.values())
    bools = set(re.findall(r"\bbool\s+(\w+)\s*\(", everything))
    wrong = []
    for name, text in sources.items():
        for m in re.finditer(r"TRY\(\s*(\w+)\s*\(", text):
            if m.group(1) in bools:
                wrong.append(f"{name}:{text[: m.start()].count(chr(10)) + 1}: TRY({m.group(1)}(...)) of a bool")
        # each function body, by its signature, and the mutators it returns as they are
        for sig in re.finditer(r"^[^\n;]*?\bbool\s+(\w+)\s*\([^;{]*\)\s*\{", text, re.M):
            end = text.find("\n}\n", sig.end())
            body = text[sig.end() : end]
            for r in re.finditer(rf"return\s+({'|'.join(MUTATORS)})\s*\((?:[^();]|\([^();]*\))*\)\s*;", body):
                line = text[: sig.end() + r.start()].count("\n") + 1
                wrong.append(f"{name}:{line}: {sig.group(1)} returns {r.group(1)}'s int as a bool")
    assert not wrong, "\n".join(wrong)


def test_the_convention_check_sees_both_mistakes(tmp_path, monkeypatch):
    """The check above on a source with each mistake once finds both."""
    (tmp_path / "bad.cl").write_text(
        "inline bool helper(Ctx *x, int v) {\n    return set_max(x, v, 3);\n}\n"
        "PROPAGATOR_FN bool prop(Ctx *x, int v) {\n    TRY(helper(x, v));\n    return true;\n}\n"
    )
    monkeypatch.setattr(__import__(__name__), "kernels_dir", lambda: tmp_path)
    try:
        test_results_are_read_by_their_own_convention()
    except AssertionError as e:
        assert "bad.cl:2: helper returns set_max" in str(e) and "bad.cl:5: TRY(helper" in str(e), str(e)
    else:
        raise AssertionError("neither mistake was seen")
