"""OpenCL's start-up, begun before the model is read: a thread initialises the OpenCL drivers and
creates a context for every GPU while the main thread imports numpy and pyopencl and parses the
model.

On the H100 machine, enumerating the platforms took 0.20 s of a 16-queens run (loading NVIDIA's
library and initialising its driver) and creating the context 0.12 s, each inside the user's
time, after the model was read (docs/bench/measurements.md, "the host between slices"). The thread calls
the ICD loader through ctypes, which releases the interpreter's lock for the length of each
call, so the drivers start while Python works. pyopencl then finds the drivers ready, and
`device.build` takes the context made here (`take_context`) instead of creating one.

The main thread never calls OpenCL while the thread runs (`wait` first): the ICD loader's first
initialisation is not documented as thread-safe. Anything that fails here is left to pyopencl,
which reports it as before. FZN_GPU_EARLY_OPENCL=0 turns it off (to measure it).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import importlib.util
import os
import signal
import threading

from .. import settings
from ..watchdog import SIGNALS

CL_DEVICE_TYPE_GPU = 1 << 2
CL_DEVICE_TYPE_ALL = 0xFFFFFFFF

_thread: threading.Thread | None = None
_contexts: dict[int, int] = {}  # cl_device_id -> cl_context, made by the thread
_lock = threading.Lock()


def loader_path() -> str | None:
    """The ICD loader pyopencl's extension is linked against (its wheel bundles one, a name
    with a hash, under pyopencl/.libs), else the system's; found without importing pyopencl.
    The bundled loader finds the drivers pip installed beside pyopencl through PYOPENCL_HOME,
    which pyopencl sets when imported (to its folder) and which it needs before its first call
    (without it, it crashed): set here the same way, before the thread starts."""
    spec = importlib.util.find_spec("pyopencl")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(glob.glob(os.path.join(folder, ".libs", "libOpenCL*.so*")))
        if found:
            settings.export("PYOPENCL_HOME", os.path.abspath(folder))
            return found[0]
    return ctypes.util.find_library("OpenCL")


def _load_bundled_drivers(folder: str) -> None:
    """Load, by their full paths, the drivers that .icd files beside a bundled loader name by a
    bare file name (pip's pyopencl wheel: pocl.icd names libpocl-<hash>.so in the same folder).
    pyopencl's extension finds them through its own run path, which the loader inherits when
    the extension loads it; loaded from here it does not, and the loader then finds a library
    already in the process by its name."""
    for icd in glob.glob(os.path.join(folder, "*.icd")):
        with open(icd, encoding="utf-8", errors="replace") as f:
            name = f.read().strip()
        lib = os.path.join(folder, name)
        if name and os.sep not in name and os.path.exists(lib):
            ctypes.CDLL(lib)


def _start(path: str, device_type: int) -> None:
    """The thread's work: platforms, devices and one context per device of `device_type`
    (an OpenCL device type mask; 0: none), through the loader at `path`."""
    _load_bundled_drivers(os.path.dirname(path))
    cl = ctypes.CDLL(path)
    u32, ptr = ctypes.c_uint32, ctypes.c_void_p
    n = u32(0)
    if cl.clGetPlatformIDs(u32(0), None, ctypes.byref(n)) != 0 or n.value == 0:
        return
    platforms = (ptr * n.value)()
    if cl.clGetPlatformIDs(n, platforms, None) != 0 or not device_type:
        return
    cl.clCreateContext.restype = ptr
    for platform in platforms:
        count = u32(0)
        if (
            cl.clGetDeviceIDs(ptr(platform), ctypes.c_uint64(device_type), u32(0), None, ctypes.byref(count)) != 0
            or count.value == 0
        ):
            continue
        devices = (ptr * count.value)()
        if cl.clGetDeviceIDs(ptr(platform), ctypes.c_uint64(device_type), count, devices, None) != 0:
            continue
        for device in devices:
            err = ctypes.c_int32(0)
            one = (ptr * 1)(device)
            context = cl.clCreateContext(None, u32(1), one, None, None, ctypes.byref(err))
            if err.value == 0 and context:
                with _lock:
                    _contexts[int(device or 0)] = int(context)


def begin(devices: str = "all", every_type: bool = False) -> None:
    """Start the thread (once per process). `devices`: the --devices option; a run on CPUs
    alone makes no GPU context. `every_type`: a context for every device, CPUs too (a solver
    server's spare process, server.py, which does not know yet which devices its run takes)."""
    global _thread
    if _thread is not None or not settings.flag("FZN_GPU_EARLY_OPENCL", True):
        return

    path = loader_path()
    if not path:
        return

    def run() -> None:
        try:
            cpu_only = (devices or "all").strip().lower() == "cpu"
            _start(path, CL_DEVICE_TYPE_ALL if every_type else 0 if cpu_only else CL_DEVICE_TYPE_GPU)
        except Exception:  # noqa: BLE001 - pyopencl meets the same fault and reports it
            pass

    _thread = threading.Thread(target=run, name="fzn-gpu-opencl-start", daemon=True)
    # born with SIGINT and SIGTERM blocked, as are the threads the drivers start from it (PoCL's
    # workers, NVIDIA's), as they were when the main thread started them inside the watchdog
    # (watchdog.py), whose thread takes those signals: one handed to a thread that does not
    # block them would wait for the main thread, which may be blocked in a kernel launch
    held = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS) if hasattr(signal, "pthread_sigmask") else None
    try:
        _thread.start()
    finally:
        if held is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)


def wait() -> None:
    """Wait for the thread, if one was started: before the first OpenCL call of the main thread."""
    if _thread is not None:
        _thread.join()


def take_context(cl_device):
    """A pyopencl Context made early for `cl_device`, once (the next build of the device makes
    its own); None where there is none."""
    wait()
    with _lock:
        handle = _contexts.pop(int(cl_device.int_ptr), None)
    if handle is None:
        return None
    import pyopencl as cl

    return cl.Context.from_int_ptr(handle, retain=False)
