"""A timed run starts on the devices whose search program is ready, not on the slowest build.

On a GPU a model's program is a build of seconds (NVIDIA: 9-15 s for a specialised program,
more inlined) where the machine has not built it before: after an install by pip, a driver
update, or with the driver's cache emptied. `fzn-gpu build-kernels` builds the generic programs
ahead, but a run cannot count on it: every engine builds its programs before it searches, so
a cold GPU kept a whole run under `-t 10000` from printing anything (QAP 15 and MKCP 67 on a
fresh H200 machine), though the CPU beside it would have found solutions in a second.

So a timed run on several devices, one of them a GPU, leaves out at once a GPU whose program
this machine never built (no build record: a build of seconds, which would also take a host
core from the devices that search), giving the CPU back the cores kept for the GPUs' host
threads where no GPU is left. It builds the other devices' programs side by side (threads: the
drivers' compilers release the interpreter's lock) and starts on the devices ready when the
first one is. A device whose program this machine built before (a build
record says so: a load from the driver's cache, well under a second) may follow within
RECORDED_WAIT_S; one whose program was never built is not waited for. A device still building
then is left out of this run (`-s`: devicesLeftOut; `-v` says why). Its build goes on in a
detached `fzn-gpu build-kernels --background` (one at a time, through a lock beside the build
records), which puts every device's generic programs in the drivers' caches for the runs after
this one. A run without a time limit has no time to lose to a build: it waits for every
device, as before. A device cannot join a run once it has started (the engines split their
devices at the start): a timed run that starts cold stays on the devices it started on.
"""

from __future__ import annotations

import fcntl
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .. import settings
from ..errors import FznError
from ..procs import start_detached
from ..runtime import build_record
from ..runtime.device import Device

NEVER_BUILT = "its program was never built here: it is built behind this run, for the next ones"
RECORDED_WAIT_S = 2.0  # after the first device is ready, how long one whose program was built before may take
LOCK_NAME = "builder.lock"


@dataclass
class Readiness:
    """Which devices a timed run starts on, and why the others are left out."""

    ready: list[Device]
    left_out: dict[str, str]  # device name -> why


def _builds(devices: list[Device], build_one: Callable[[Device], None]) -> tuple[list, list]:
    """Starts a thread per device running build_one; (done events, errors: None or the error)."""
    done = [threading.Event() for _ in devices]
    errors: list[BaseException | None] = [None] * len(devices)

    def one(i: int) -> None:
        try:
            build_one(devices[i])
        except BaseException as err:  # noqa: BLE001 - said where the device is left out
            errors[i] = err
        finally:
            done[i].set()

    for i in range(len(devices)):
        threading.Thread(target=one, args=(i,), name=f"fzn-gpu build {i}", daemon=True).start()
    return done, errors


def split_ready(
    devices: list[Device],
    build_one: Callable[[Device], None],
    deadline: float,
    recorded: list[bool] | None = None,
    wait_s: float | None = None,
) -> Readiness:
    """The devices whose build_one has finished without error once the first has, and those
    `recorded` (built before, so expected soon) that finish within `wait_s` (RECORDED_WAIT_S) of it (never past
    `deadline`); every device where none finishes in time or every build fails (the engines
    then meet the same errors and report them)."""
    recorded = recorded if recorded is not None else [True] * len(devices)
    wait_s = RECORDED_WAIT_S if wait_s is None else wait_s
    done, errors = _builds(devices, build_one)
    first_at: float | None = None
    while True:
        now = time.monotonic()
        finished = [e.is_set() for e in done]
        ok = [f and errors[i] is None for i, f in enumerate(finished)]
        if first_at is None and any(ok):
            first_at = now
        awaited = [not f and recorded[i] for i, f in enumerate(finished)]
        if (
            all(finished)
            or now >= deadline
            or (first_at is not None and (not any(awaited) or now - first_at >= wait_s))
        ):
            break
        time.sleep(0.005)
    if not any(ok):
        return Readiness(list(devices), {})
    left: dict[str, str] = {}
    for i, d in enumerate(devices):
        if not finished[i]:
            built = (
                "building again (its driver's cache had lost it)"
                if recorded[i]
                else "building (never built here before)"
            )
            left[d.name] = f"its program was still {built} when another device's was ready"
        elif errors[i] is not None:
            err = errors[i]
            left[d.name] = err.message if isinstance(err, FznError) else repr(err)
    return Readiness([d for i, d in enumerate(devices) if ok[i]], left)


def ready_devices(devices: list[Device], dm, opts, deadline: float | None) -> Readiness:
    """SolveRun's devices for a run: all of them, unless the run is timed, on several devices,
    one a GPU, and some device's program is not in this process yet (a served run's spare
    loaded those that runs take: server.py); then `split_ready` on building each device's
    search program (the Runner an engine makes next finds it built), and where a device is
    left out, the generic programs built behind the run (`spawn_builder`)."""
    if deadline is None or len(devices) < 2 or not any(d.is_gpu for d in devices):
        return Readiness(list(devices), {})
    from ..runtime.device import loaded
    from .runner import Runner

    if all(loaded(d, *Runner.program_of(d, dm)) for d in devices):  # a served run: its spare loaded them
        return Readiness(list(devices), {})

    def build_one(device: Device) -> None:
        Runner(device, dm, seed=opts.seed, max_items=1)

    recorded = [build_record.was_built(Runner.program_key(d, dm)) for d in devices]
    never = {d.index for d, rec in zip(devices, recorded) if d.is_gpu and not rec}
    left: dict[str, str] = {}
    if never and len(never) < len(devices):  # a GPU never built for: not even tried in this run
        left = {d.name: NEVER_BUILT for d in devices if d.index in never}
        recorded = [rec for d, rec in zip(devices, recorded) if d.index not in never]
        devices = [d for d in devices if d.index not in never]
        if not any(d.is_gpu for d in devices):  # the cores kept for the GPUs' host threads come back
            devices = [whole(d) for d in devices]
    readiness = split_ready(devices, build_one, deadline, recorded)
    readiness.left_out = {**left, **readiness.left_out}
    if readiness.left_out:
        spawn_builder()
    for name, why in readiness.left_out.items():
        if opts.verbose:
            print(f"fzn-gpu: {name} left out of this run: {why}", file=sys.stderr)
    return readiness


def whole(d: Device) -> Device:
    """A CPU as all_devices() has it, all its cores (select_devices keeps one for each GPU's
    host thread)."""
    from ..runtime.device import all_devices

    full = all_devices()
    return full[d.index] if not d.is_gpu and d.index < len(full) and full[d.index].name in d.name else d


def _lock_path() -> str:
    folder = build_record.records_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / LOCK_NAME)


def take_builder_lock():
    """The builder's lock (an open file, held while it lives), or None where another holds it."""
    f = open(_lock_path(), "a")  # noqa: SIM115 - held for the builder's lifetime
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        return None
    return f


def spawn_builder() -> bool:
    """Starts `fzn-gpu build-kernels --background`, detached (it outlives this run), unless one
    is running; whether one was started."""
    try:
        held = take_builder_lock()
    except OSError:
        return False
    if held is None:
        return False
    held.close()  # the builder takes it itself; two runs racing here start two, one of which leaves at once
    env = {k: v for k, v in settings.environment().items() if k not in ("FZN_GPU_CL_OPTIONS",)}
    return start_detached(["fzn_gpu", "build-kernels", "--background"], env=env)
