"""OpenCL started in a thread before the model is read (fzn_gpu/runtime/opencl_start.py): the drivers
it initialises are the ones pyopencl then lists, and a context it makes runs a kernel.

Each case runs in a fresh interpreter, since what is tested is a process whose first OpenCL
call is the thread's (this test process has long initialised pyopencl)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import brute_force

ROOT = Path(__file__).resolve().parents[1]

# Starts OpenCL through opencl_start with a context for every device (on CI, PoCL's CPU), then
# lists what pyopencl sees and runs a kernel in the context made early.
EARLY = r"""
import numpy as np
from fzn_gpu.runtime import opencl_start as o
path = o.loader_path()
assert path, "no OpenCL loader found"
o._start(path, o.CL_DEVICE_TYPE_ALL)
made = len(o._contexts)
import pyopencl as cl
names = sorted(p.name for p in cl.get_platforms())
device = cl.get_platforms()[0].get_devices()[0]
ctx = o.take_context(device)
assert ctx is not None, "no context made early for " + device.name
assert o.take_context(device) is None, "a context is taken once"
queue = cl.CommandQueue(ctx)
prog = cl.Program(ctx, "__kernel void sq(__global int *a) { int i = get_global_id(0); a[i] = i * i; }").build()
out = np.zeros(16, dtype=np.int32)
buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
prog.sq(queue, (16,), None, buf)
cl.enqueue_copy(queue, out, buf)
assert out.tolist() == [i * i for i in range(16)], out
print(made, "|".join(names))
"""

PLAIN = r"""
import pyopencl as cl
print("|".join(sorted(p.name for p in cl.get_platforms())))
"""


def _python(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_context_made_early_runs_a_kernel_and_pyopencl_sees_the_same_platforms():
    made, platforms = _python(EARLY).split(" ", 1)
    assert int(made) >= 1
    assert platforms == _python(PLAIN)


MODEL = """var 1..4: x1 :: output_var;
var 1..4: x2 :: output_var;
var 1..4: x3 :: output_var;
var 1..4: x4 :: output_var;
constraint fzn_all_different_int([x1,x2,x3,x4]);
constraint int_lin_le([1,-1],[x1,x4],0);
solve satisfy;
"""


def _solutions(stdout: str) -> set[tuple]:
    out = set()
    for block in stdout.split("----------")[:-1]:
        values = dict(line.rstrip(";").split(" = ") for line in block.strip().splitlines() if " = " in line)
        out.add(tuple(int(values[f"x{i}"]) for i in range(1, 5)))
    return out


def test_solutions_equal_with_and_without_the_early_start(tmp_path):
    """The CLI's whole path both ways, every solution checked (--check) and compared with brute force."""
    fzn = tmp_path / "m.fzn"
    fzn.write_text(MODEL)
    expected = brute_force(MODEL, {f"x{i}": [1, 2, 3, 4] for i in range(1, 5)})
    assert len(expected) == 12
    for early in ("1", "0"):
        env = dict(os.environ, PYTHONPATH=str(ROOT), FZN_GPU_EARLY_OPENCL=early)
        done = subprocess.run(
            [sys.executable, "-m", "fzn_gpu", "-a", "--check", str(fzn)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.rstrip().endswith("==========")
        assert _solutions(done.stdout) == expected


MASK = r"""
import signal
from fzn_gpu.runtime import opencl_start as o
seen = []
o._start = lambda path, device_type: seen.append(signal.pthread_sigmask(signal.SIG_BLOCK, []))
o.begin("all")
o.wait()
assert seen, "the thread did not run"
assert {signal.SIGINT, signal.SIGTERM} <= set(seen[0]), seen
assert signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, []), "the main thread's mask changed"
print("ok")
"""


def test_the_thread_and_the_drivers_it_starts_block_the_stop_signals():
    """SIGINT and SIGTERM are the watchdog's to take (watchdog.py); a driver thread started
    from the early thread with them unblocked could receive one and leave it waiting for the
    main thread, blocked in a kernel launch."""
    assert _python(MASK) == "ok"
