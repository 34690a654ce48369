"""OpenCL devices: find them (one per physical device, even when two platforms expose the same
CPU), select them (--devices, -p), and build the search program once per device with
pyopencl's binary cache. Failures name the device and what to install."""

from __future__ import annotations

import contextlib
import re
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from .. import settings
from ..errors import FznError
from ..resources import kernels_dir
from . import build_record, device_check
from .codegen import header

# The int/bool propagators, one file per family, in the order the program needs them (a family
# may call the functions of those before it).
PROPAGATOR_FILES = (
    "prop_relations.cl",
    "prop_linear.cl",
    "prop_arithmetic.cl",
    "prop_element.cl",
    "prop_membership.cl",
    "prop_alldifferent.cl",
    "prop_boolean.cl",
)

# The program of each execution model (see kernels/domain.cl): one work-item, or one
# work-group, per sub-search space. Float variables (floats.cl, built with -DFZN_FLOATS) run in
# the work-item model only.
KERNEL_FILES = {
    "item": (
        "profile.cl",
        "domain.cl",
        "mutate_item.cl",
        "mutate_common.cl",
        *PROPAGATOR_FILES,
        "propagators_set.cl",
        "globals.cl",
        "floats.cl",
        "dispatch.cl",
        "branching.cl",
        "search.cl",
        "lns_paths.cl",
    ),
    "group": (
        "profile.cl",
        "domain.cl",
        "mutate_group.cl",
        "mutate_common.cl",
        *PROPAGATOR_FILES,
        "propagators_set.cl",
        "globals.cl",
        "dispatch.cl",
        "propagators_group.cl",
        "branching.cl",
        "search_group.cl",
        "lns_paths.cl",
    ),
}

NO_DEVICE_FIX = (
    "install an OpenCL driver: `pip install pocl-binary-distribution` (a CPU device, "
    "or `pip install 'fzn-gpu[cpu]'`), or Debian's `apt-get install pocl-opencl-icd`; on NVIDIA "
    "machines whose driver has no ICD file: mkdir -p /etc/OpenCL/vendors && "
    "echo /usr/lib/libnvidia-opencl.so > /etc/OpenCL/vendors/nvidia.icd"
)


@dataclass(frozen=True)
class Device:
    index: int
    cl_device: Any  # a pyopencl.Device (None in tests that need no OpenCL)
    name: str
    platform: str
    is_gpu: bool
    compute_units: int
    global_mem: int
    max_alloc: int
    local_mem: int = 32768  # bytes of local memory a work-group may use
    clock_mhz: int = 0  # rated clock (profile figures; 0: unknown)

    def describe(self) -> str:
        kind = "GPU" if self.is_gpu else "CPU"
        return (
            f"{self.index}: {kind} {self.name} ({self.platform}), {self.compute_units} compute units, "
            f"{self.global_mem / 2**30:.1f} GiB"
        )


def cpu_brand(name: str) -> str:
    """A CPU's brand string without PoCL's prefixes: `pthread-Intel(R) Xeon(R)` (PoCL 3) and
    `cpu-skylake-avx512-Intel(R) Xeon(R)` (newer PoCL) are one CPU exposed by two platforms."""
    return re.sub(r"^(pthread|cpu)(-[a-z0-9_]+)*-(?=[A-Z])", "", name.strip())


def _cpu_parts(d, is_gpu: bool) -> list:
    """The device itself, or with FZN_GPU_CPU_SUBDEVICES=N a CPU split into N OpenCL
    sub-devices of equal compute units: several logical devices on one CPU, for testing and
    measuring multi-device search where only a CPU exists."""
    import pyopencl as cl

    wanted = settings.integer("FZN_GPU_CPU_SUBDEVICES", 0)
    if is_gpu or not wanted:
        return [d]
    n = min(wanted, d.max_compute_units)
    if n == 1:
        return [d]
    try:
        parts = d.create_sub_devices([cl.device_partition_property.EQUALLY, d.max_compute_units // n])
    except cl.Error as err:
        raise FznError(
            f"{d.name.strip()} cannot be split into {n} sub-devices: {err}", fix="unset FZN_GPU_CPU_SUBDEVICES"
        ) from None
    return list(parts[:n])


@lru_cache(maxsize=1)
def all_devices() -> tuple[Device, ...]:
    import pyopencl as cl

    from . import opencl_start

    opencl_start.wait()
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    found: list[Device] = []
    seen_cpus: set[str] = set()
    failed: dict[str, LeftOut] = {}  # by CPU brand (a GPU: by its place), what failed the check
    for p in platforms:
        try:
            devs = p.get_devices()
        except cl.Error:
            continue
        for d in devs:
            is_gpu = bool(d.type & cl.device_type.GPU)
            key = cpu_brand(d.name) if not is_gpu else f"gpu {len(failed)} {len(found)}"
            if key in seen_cpus:  # the same CPU behind a second platform, which builds for it
                continue
            why = device_check.probe(d)
            if why is not None:  # another platform may still serve this CPU
                failed.setdefault(key, LeftOut(d.name.strip(), p.name.strip(), why))
                continue
            seen_cpus.add(key)
            for part, cl_dev in enumerate(_cpu_parts(d, is_gpu)):
                name = d.name.strip() + (f" [part {part + 1}]" if cl_dev is not d else "")
                found.append(
                    Device(
                        len(found),
                        cl_dev,
                        name,
                        p.name.strip(),
                        is_gpu,
                        cl_dev.max_compute_units,
                        d.global_mem_size,
                        d.max_mem_alloc_size,
                        d.local_mem_size,
                        int(d.max_clock_frequency or 0),
                    )
                )
    # GPUs first: they are the reason to run fzn-gpu
    found.sort(key=lambda dv: (not dv.is_gpu, dv.index))
    _LEFT_OUT[:] = [why for key, why in failed.items() if key not in seen_cpus]
    return tuple(replace(d, index=i) for i, d in enumerate(found))


@dataclass(frozen=True)
class LeftOut:
    """A device that failed device_check's probe, and no other platform serves."""

    name: str
    platform: str
    why: str

    def describe(self) -> str:
        return f"{self.name} ({self.platform}) left out: its programs do not build: {self.why}"


_LEFT_OUT: list[LeftOut] = []


def left_out() -> list[LeftOut]:
    """The devices all_devices() left out, each with why."""
    all_devices()
    return list(_LEFT_OUT)


def _say_left_out() -> None:
    """One line on stderr for each device left out, with the fix: a run goes on without it."""
    for gone in left_out():
        print(f"fzn-gpu: {gone.describe()}\n  fix: {device_check.fix_for(gone.platform)}", file=sys.stderr)


def select_devices(spec: str = "all", limit: int | None = None) -> list[Device]:
    devices = list(all_devices())
    gone = left_out()
    if not devices and gone:
        raise FznError(
            "no OpenCL device here builds programs: " + "; ".join(g.describe() for g in gone),
            fix=device_check.fix_for(gone[0].platform),
        )
    if not devices:
        raise FznError("no OpenCL device found", fix=NO_DEVICE_FIX)
    _say_left_out()
    spec = (spec or "all").strip().lower()
    if spec == "gpu":
        chosen = [d for d in devices if d.is_gpu]
    elif spec == "cpu":
        chosen = [d for d in devices if not d.is_gpu]
    elif spec == "all":
        chosen = devices
    else:
        try:
            wanted = [int(s) for s in spec.split(",") if s.strip()]
        except ValueError:
            raise FznError(
                f"--devices {spec!r} is not all, gpu, cpu or a list of indices", fix="see `fzn-gpu --list-devices`"
            ) from None
        bad = [i for i in wanted if not 0 <= i < len(devices)]
        if bad:
            raise FznError(f"no OpenCL device with index {bad[0]}", fix="see `fzn-gpu --list-devices`")
        chosen = [devices[i] for i in wanted]
    if not chosen:
        raise FznError(
            f"no OpenCL device of the kind {spec!r}", fix="see `fzn-gpu --list-devices`, or " + NO_DEVICE_FIX
        )
    if limit:
        chosen = chosen[: max(1, limit)]
    return _leave_cores_for_gpus(chosen)


# (id of a whole CPU's cl_device, cores kept): that cl_device (kept alive, so that its id names
# it alone) and its part
_CORES_LEFT: dict[tuple[int, int], tuple[Any, Device]] = {}
_CORES_LEFT_LOCK = threading.Lock()


def _leave_cores_for_gpus(chosen: list[Device]) -> list[Device]:
    """A CPU searching beside GPUs gives up one core per GPU (an OpenCL sub-device of the
    rest), as PHACT does: on the H100 machine PoCL on all 16 cores starved the GPU's host
    thread and driver, and the GPU searched 2.5x fewer nodes per second beside it. The part is
    made once a process: the programs built for it (`build`, keyed by its cl_device) serve
    every run of the process, and a solver server's spare loads them ahead for its run
    (server.py); a part made afresh each run loaded them again (docs/bench/measurements.md, a warm
    spare's CPU part)."""
    gpus = sum(d.is_gpu for d in chosen)
    if not gpus:
        return chosen
    import pyopencl as cl

    out = []
    for d in chosen:
        keep = d.compute_units - gpus
        if d.is_gpu or keep < 1 or settings.flag("FZN_GPU_CPU_ALL_CORES", False):
            out.append(d)
            continue
        with _CORES_LEFT_LOCK:
            whole, part = _CORES_LEFT.get((id(d.cl_device), keep), (None, None))
            if whole is not d.cl_device or part is None:
                try:
                    sub = d.cl_device.create_sub_devices([cl.device_partition_property.EQUALLY, keep])[0]
                except cl.Error:
                    out.append(d)  # cannot be split: use it whole
                    continue
                part = replace(
                    d, cl_device=sub, name=f"{d.name} ({keep} of {d.compute_units} cores)", compute_units=keep
                )
                _CORES_LEFT[(id(d.cl_device), keep)] = (d.cl_device, part)
        out.append(part)
    return out


def run_devices() -> list[Device]:
    """Every device a run may search on: each device as found, and a CPU's part beside the GPUs
    where the machine has both (`_leave_cores_for_gpus`)."""
    found = list(all_devices())
    parts = [d for d in _leave_cores_for_gpus(found) if not any(d is f for f in found)]
    return found + parts


def describe_devices() -> str:
    """--list-devices: each device that passed the build check (device_check), then each that
    did not, with the fix."""
    devices = all_devices()
    lines = [d.describe() + ", builds programs" for d in devices]
    lines += [f"-: {g.describe()}\n   fix: {device_check.fix_for(g.platform)}" for g in left_out()]
    if not lines:
        return "no OpenCL device found; " + NO_DEVICE_FIX
    return "\n".join(lines)


def check_devices() -> int:
    """`fzn-gpu check-devices` (set-up): the probe afresh on every device of every platform,
    a line for each; exit status 1 where none passes."""
    import pyopencl as cl

    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    passed = 0
    for p in platforms:
        for d in p.get_devices():
            why = device_check.probe(d, fresh=True)
            passed += why is None
            verdict = "builds and runs programs" if why is None else f"does not build programs: {why}"
            print(f"fzn-gpu: {d.name.strip()} ({p.name.strip()}, {d.driver_version}): {verdict}", file=sys.stderr)
            if why is not None:
                print(f"  fix: {device_check.fix_for(p.name)}", file=sys.stderr)
    if not passed:
        print(f"fzn-gpu: no OpenCL device here builds programs; {NO_DEVICE_FIX}", file=sys.stderr)
    return 0 if passed else 1


@lru_cache(maxsize=16)
def kernel_source(kinds: frozenset[int] | None = None, model: str = "item") -> str:
    """The program of an execution model ("item" or "group"); specialised to the constraint
    kinds in `kinds` when given. Read once per process (the kernel files do not change under a
    run, and a solver server's key stamps them: launch.server_key): every runner asks for it,
    and reading and joining the files was a visible part of a served run's start."""
    parts = [header(kinds)]
    for name in KERNEL_FILES[model]:
        parts.append(f"// ---- {name}\n" + (kernels_dir() / name).read_text())
    return "\n".join(parts)


_PROGRAMS: dict[tuple, tuple] = {}
_BUILDS: dict[tuple, threading.Lock] = {}  # one build per key at a time: engines build runners in threads
_BUILDS_LOCK = threading.Lock()
BUILD_LOGS: dict[int, str] = {}  # the compiler's log of a device's last build (by id of its cl_device)
# called with (device, kinds, model, options, floats) for every program a run takes: a run the
# solver server forked notes them, for its next spares to load ahead (server.py); None elsewhere
program_used: Callable[[Device, frozenset[int] | None, str, list[str], bool], None] | None = None


_POCL_LAUNCH = threading.Lock()


def launch_lock(device: Device):
    """What a launch of the search kernel holds until it has finished. PoCL keeps one
    process-wide cache entry per compiled kernel and work-group size, counted by the launches
    in flight, and two launches of one kernel in flight at once (two engines on one CPU) have
    made it release an entry twice (an assertion in pocl_release_dlhandle_cache, which aborts
    the process; seen on a 16-core host): on PoCL, one launch at a time. Other drivers run
    launches from several queues at once."""
    return _POCL_LAUNCH if "Portable Computing Language" in device.platform else contextlib.nullcontext()


def supports_floats(device: Device) -> bool:
    """Double precision and 64-bit atomic min (a float objective's bound)."""
    ext = device.cl_device.extensions.split()
    return bool(device.cl_device.double_fp_config) and "cl_khr_int64_extended_atomics" in ext


def is_nvidia(device: Device) -> bool:
    """NVIDIA's OpenCL: the kernels can read the cycle counter (%clock64 through inline PTX,
    what a profile build times phases with: kernels/profile.cl), and the compiler takes
    -cl-nv-* options (a register cap)."""
    return "NVIDIA" in device.platform.upper()


def has_warp_min(device: Device) -> bool:
    """NVIDIA at compute capability 8.0 or later: a warp's minimum in one instruction (redux.sync,
    through inline PTX), which a group of one warp chooses its variable with
    (kernels/search_group.cl, FZN_WARP_PTX)."""
    if not is_nvidia(device):
        return False
    import pyopencl as cl

    try:
        return int(device.cl_device.compute_capability_major_nv) >= 8
    except (AttributeError, cl.Error):  # a driver without cl_nv_device_attribute_query
        return False


def build_options(
    device: Device,
    outline: bool = False,
    model: str = "item",
    store_global: bool = False,
    floats: bool = False,
    profile: bool = False,
    max_registers: int = 0,
    propagation_floor: int = 4096,
    slice_clock: bool = False,
    narrow: bool = False,
) -> list[str]:
    """The compiler's options for a program (see `build`)."""
    cap = max_registers if max_registers > 0 and is_nvidia(device) else 0
    clock = ("ptx" if is_nvidia(device) else "fake") if slice_clock and model == "group" else ""
    options = ["-cl-std=CL1.2"] + (["-DFZN_OUTLINE"] if outline else []) + (["-DFZN_FLOATS"] if floats else [])
    if model == "group":
        options += ["-DFZN_GROUP"] + (["-DFZN_STORE_GLOBAL"] if store_global else [])
        options += ["-DFZN_NARROW"] if narrow else []
        options += ["-DFZN_WARP_PTX"] if has_warp_min(device) else []
    if profile:
        options += ["-DFZN_PROFILE"] + (["-DFZN_CLOCK_PTX"] if is_nvidia(device) else [])
    if cap:
        options.append(f"-cl-nv-maxrregcount={cap}")
    if clock:
        options.append("-DFZN_TIMER_PTX" if clock == "ptx" else "-DFZN_TIMER_FAKE")
    options.append(f"-DFZN_PROP_FLOOR={max(1, propagation_floor)}")
    # FZN_GPU_CL_OPTIONS: more build options, for tuning runs (NVIDIA: -cl-nv-verbose puts the
    # registers and spills in `build_log`, -cl-nv-maxrregcount=N caps the registers)
    return options + (settings.text("FZN_GPU_CL_OPTIONS") or "").split()


def device_id(device: Device) -> str:
    """What a driver's cache of built programs tells devices apart by: name, platform, driver."""
    d = device.cl_device
    return f"{device.name}|{d.platform.version}|{d.driver_version}"


def build_key(device: Device, kinds: frozenset[int] | None, model: str, options: list[str]) -> str:
    return _build_key(device_id(device), kinds, model, tuple(options))


@lru_cache(maxsize=64)
def _build_key(device: str, kinds: frozenset[int] | None, model: str, options: tuple[str, ...]) -> str:
    """build_key's hash of a source of some 300 KB, once per process: a run asks for it several
    times before it searches (warmup.py, each engine's runner)."""
    return build_record.build_key(device, kernel_source(kinds, model), list(options))


def kinds_to_build(
    device: Device, kinds: frozenset[int] | None, model: str, options: list[str]
) -> frozenset[int] | None:
    """The kinds of the program to use for a model of `kinds` (None: the generic program, every
    kind): on a GPU, the specialised program where this machine built it before, else the
    generic one where that was built before (and not lost since), else the specialised one (a
    build of seconds). build_record.py says why."""
    if kinds is None or not device.is_gpu:
        return kinds
    if build_record.was_built(build_key(device, kinds, model, options)):
        return kinds
    if build_record.was_built(build_key(device, None, model, options)):
        return None
    return kinds


def choose_program(
    device: Device,
    kinds: frozenset[int] | None,
    model: str,
    options: list[str],
    inlined: list[str] | None = None,
    build_now: bool = False,
) -> tuple[frozenset[int] | None, list[str]]:
    """(kinds, options) of the program a run on `device` uses. `inlined`: the options of the
    same program with its propagators inlined, for a GPU model whose specialised program may be
    inlined (the fastest kernel, but an NVIDIA build of about 45 s instead of 10:
    docs/bench/measurements.md, inlined specialised kernels). `build_now` (--build-only): the best
    program, built now: the inlined specialised one where offered, else the specialised one.
    Otherwise the inlined specialised program where this machine built it before, else what
    `kinds_to_build` picks with `options`."""
    if kinds is not None and inlined is not None and device.is_gpu:
        if build_now or build_record.was_built(build_key(device, kinds, model, inlined)):
            return kinds, inlined
    if build_now:
        return kinds, options
    return kinds_to_build(device, kinds, model, options), options


def build(
    device: Device,
    kinds: frozenset[int] | None = None,
    options: list[str] | None = None,
    model: str = "item",
    floats: bool = False,
    fresh: bool = False,
):
    """(context, program) for `device`, built once per process with `options` (`build_options`;
    cached on disk by pyopencl or the driver across processes, each build noted in
    build_record); with `kinds`, a program holding only those propagators; `model`: "item" or
    "group" (KERNEL_FILES); `floats`: the model has float variables (checked against the
    device); `fresh`: a build ahead (build_record.record's)."""
    options = list(options if options is not None else build_options(device, model=model, floats=floats))
    key = _cache_key(device, kinds, model, options)
    with _BUILDS_LOCK:
        lock = _BUILDS.setdefault(key, threading.Lock())
    with lock:
        if key not in _PROGRAMS:
            _PROGRAMS[key] = _build_program(device, key, kinds, model, floats, options, fresh)
            if program_used is not None:
                program_used(device, kinds, model, options, floats)
    return _PROGRAMS[key]


def _cache_key(device: Device, kinds: frozenset[int] | None, model: str, options: list[str]) -> tuple:
    """The key of a program in this process's cache (_PROGRAMS)."""
    return (id(device.cl_device), kinds, model, tuple(options))


def loaded(device: Device, kinds: frozenset[int] | None, model: str, options: list[str]) -> bool:
    """Whether `build` holds this program in this process already (a solver server's spare
    loads the programs runs take before the run comes: server.py)."""
    return _cache_key(device, kinds, model, options) in _PROGRAMS


def _build_program(device: Device, key: tuple, kinds, model, floats, options, fresh: bool = False) -> tuple:
    """Builds the program `build` caches under `key`: (context, program)."""
    import pyopencl as cl

    if floats and not supports_floats(device):
        raise FznError(
            f"{device.name} has no double precision (or no 64-bit atomics): float variables need both",
            fix="choose another device with --devices (see --list-devices)",
        )
    from . import opencl_start

    ctx = opencl_start.take_context(device.cl_device) or cl.Context([device.cl_device])
    source = kernel_source(kinds, model)
    t0 = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            prog = cl.Program(ctx, source).build(options=options)
        except cl.RuntimeError as err:
            raise FznError(
                f"the search kernels did not build on {device.name}: {str(err)[-2000:]}",
                fix="report this with the device name; meanwhile choose another device with --devices",
            ) from None
    build_record.record(build_record.build_key(device_id(device), source, options), time.monotonic() - t0, fresh)
    BUILD_LOGS[key[0]] = prog.get_build_info(device.cl_device, cl.program_build_info.LOG) or ""
    return ctx, prog
