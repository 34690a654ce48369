"""Whether an OpenCL device can build and run a program at all, checked once per device and
driver with a small kernel before any search relies on it.

A CPU runtime may install and list its device yet build nothing: pip's PoCL 3.0 (LLVM 14) asks
LLVM for the host CPU's name, gets "generic" on processors newer than LLVM 14 (an AMD EPYC of
family 26), and every build then fails with "unknown target CPU 'generic'". Without this check
such a device took the run down with it (`=====ERROR=====`) although another platform's CPU, or
a GPU, would have served. A device that fails is left out with one line on stderr naming it and
the fix (`select_devices`); the run goes on with the others.

The probe uses what the search kernels use (64-bit integers, global atomics, local memory and a
barrier) and checks what it computed. Its verdict is kept on disk beside the build records
(build_record.records_dir), keyed by everything that decides it (the device, platform and
driver versions, the probe's source and options, PoCL's extra build flags), so a run pays for
the probe once per machine and driver: `fzn-gpu check-devices` runs it afresh, at set-up.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

from .. import settings
from . import build_record

PROBE_SOURCE = """
__kernel void probe(__global long *out, __global int *hits, __local int *scratch)
{
    int lid = get_local_id(0);
    scratch[lid] = lid + 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    long acc = 0;
    for (int i = 0; i < (int)get_local_size(0); i++)
        acc += (long)scratch[i] << 33;
    out[get_global_id(0)] = acc + (long)get_group_id(0);
    atomic_add(hits, 1);
    atomic_max(hits + 1, (int)get_global_id(0));
}
"""
PROBE_OPTIONS = ["-cl-std=CL1.2"]
PROBE_GROUPS = 2

# What a user can do about a device that does not build, by kind of runtime.
POCL_FIX = (
    "use a CPU runtime that builds for this CPU: Debian's PoCL (`apt-get install pocl-opencl-icd`, "
    "PoCL 3.1 or later, which builds for any x86-64 or arm64 CPU) in place of pip's "
    "(`pip uninstall pocl-binary-distribution`); `bash scripts/setup.sh` does both"
)
OTHER_FIX = "update the device's OpenCL driver, or leave the device out with --devices (see --list-devices)"


def fix_for(platform: str) -> str:
    return POCL_FIX if "Portable Computing Language" in platform else OTHER_FIX


def _key(cl_device: Any) -> str:
    d = cl_device
    ident = f"{d.name}|{d.platform.name}|{d.platform.version}|{d.driver_version}"
    return "probe-" + build_record.build_key(
        ident, PROBE_SOURCE, PROBE_OPTIONS + [settings.text("POCL_EXTRA_BUILD_FLAGS") or ""]
    )


def run_probe(cl_device: Any) -> str | None:
    """Build and run the probe on `cl_device` now: None where it built and computed right,
    else what went wrong (the compiler's last words)."""
    import numpy as np
    import pyopencl as cl

    try:
        ctx = cl.Context([cl_device])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prog = cl.Program(ctx, PROBE_SOURCE).build(options=PROBE_OPTIONS)
        local = int(max(1, min(32, cl_device.max_work_group_size)))
        n = local * PROBE_GROUPS
        queue = cl.CommandQueue(ctx)
        out = np.zeros(n, dtype=np.int64)
        hits = np.zeros(2, dtype=np.int32)
        mf = cl.mem_flags
        out_buf = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
        hits_buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=hits)
        prog.probe(queue, (n,), (local,), out_buf, hits_buf, cl.LocalMemory(4 * local))
        cl.enqueue_copy(queue, out, out_buf)
        cl.enqueue_copy(queue, hits, hits_buf)
        queue.finish()
    except (cl.Error, cl.RuntimeError, OSError, ValueError) as err:
        return _compiler_words(str(err)) or type(err).__name__
    want = (np.int64(local * (local + 1) // 2) << 33) + np.arange(n) // local
    if not (out == want).all() or hits.tolist() != [n, n - 1]:
        return "the probe kernel built but computed wrong values"
    return None


def _compiler_words(text: str) -> str:
    """The lines of a pyopencl build error that say what failed (not its 'Build on <device>'
    and '(options: ...)' frame), joined, at most 400 characters."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    said = [ln for ln in lines if not ln.startswith(("Build on ", "(options:"))] or lines
    return " / ".join(said[-3:])[-400:]


def probe(cl_device: Any, fresh: bool = False) -> str | None:
    """`run_probe`'s verdict on `cl_device`, from the record of an earlier run where one exists
    (and `fresh` is not asked for); a verdict just reached is recorded."""
    path = build_record.records_dir() / _key(cl_device)
    if not fresh:
        try:
            text = path.read_text()
            return None if text == "ok\n" else text.removeprefix("failed ").rstrip("\n")
        except OSError:
            pass
    why = run_probe(cl_device)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text("ok\n" if why is None else f"failed {why}\n")
        os.replace(tmp, path)
    except OSError:
        pass  # no cache to write: every run checks again
    return why
