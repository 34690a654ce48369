"""One fzn-gpu run with a timestamp on stderr (seconds since this process began) at the start
(>) and end (<) of its main phases: reading and lowering the FlatZinc, packing it for complete
search, opening the devices, building the local search network, Adaptive Search's walks (their
setup, program and answer), the verifier; at the stream's end, the launches of the walks and the
seconds inside them. Where a run's time goes besides its kernels (docs/bench/measurements.md, Adaptive
Search's host part). Run in the process (FZN_GPU_SERVER=off):
    FZN_GPU_SERVER=off python3 scripts/phase_stamps.py [fzn-gpu arguments]"""

import time

from stamps import run_fzn_gpu, stamp, wrap

stamp("start")
import fzn_gpu.engine.adaptive as adaptive  # noqa: E402

stamp("imported")
for module, attr in [
    ("fzn_gpu.flatzinc.lower", "load"),
    ("fzn_gpu.engine.pack", "pack"),
    ("fzn_gpu.runtime.device", "select_devices"),
    ("fzn_gpu.local.network", "build"),  # partition's path: Adaptive Search alone for a wide constant
    ("fzn_gpu.engine.adaptive", "build"),  # --engine adaptive's path
    ("fzn_gpu.engine.adaptive", "AdaptiveSearch.run"),
    ("fzn_gpu.engine.adaptive", "DeviceWalks.setup"),
    ("fzn_gpu.engine.adaptive", "_program"),
    ("fzn_gpu.engine.adaptive", "DeviceWalks.solution"),
    ("fzn_gpu.engine.adaptive", "violations"),
]:
    wrap(module, attr)

launches = {"count": 0, "seconds": 0.0}
_launch = adaptive.DeviceWalks.launch


def launch(self, iters):
    t = time.monotonic()
    try:
        return _launch(self, iters)
    finally:
        launches["count"] += 1
        launches["seconds"] += time.monotonic() - t


adaptive.DeviceWalks.launch = launch
run_fzn_gpu(lambda: stamp(f"finish (launches {launches['count']}, {launches['seconds']:.3f} s inside them)"))
