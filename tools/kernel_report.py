#!/usr/bin/env python3
"""What the compiler made of the search kernels for one model on one device: build time and,
on NVIDIA (its `-cl-nv-verbose` build log), registers, stack frame and spills of each kernel,
for both execution models, each built with the options a run uses (Tuning.build_options: the
register cap included). Costs no search. With --ptx DIR each program's binary (PTX on NVIDIA)
is written there too, for ptxas and cuobjdump (scripts/device_sass.sh).

    python3 tools/kernel_report.py MODEL.fzn [--devices gpu] [--ptx DIR]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fzn_gpu.engine.pack import pack  # noqa: E402
from fzn_gpu.engine.runner import Tuning  # noqa: E402
from fzn_gpu.flatzinc.lower import load  # noqa: E402
from fzn_gpu.options import SolveOptions  # noqa: E402
from fzn_gpu.runtime.device import is_nvidia, kernel_source, select_devices  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--devices", default="gpu")
    ap.add_argument("--ptx", type=Path, help="write each program's binary (PTX on NVIDIA) into this folder")
    ap.add_argument("--models", default="item,group", help="execution models to build (comma-separated)")
    args = ap.parse_args()
    import numpy as np
    import pyopencl as cl

    dm = pack(load(args.model), SolveOptions())
    kinds = frozenset(int(k) for k in np.unique(dm.ckind))
    print(
        f"model {args.model}: {dm.nv} variables, {dm.nc} constraints, {dm.nwords} bitmap words, "
        f"{len(kinds)} kinds, maxd {dm.maxd}"
    )
    for device in select_devices(args.devices):
        nvidia = is_nvidia(device)
        tuning = Tuning.for_device(device)
        for model in args.models.split(","):
            for outline in (True, False):
                opts = replace(tuning, model=model, outline=outline).build_options(device)
                opts += ["-cl-nv-verbose"] if nvidia else []
                ctx = cl.Context([device.cl_device])
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    prog = cl.Program(ctx, kernel_source(kinds, model)).build(options=opts)
                dt = time.perf_counter() - t0
                log = prog.get_build_info(device.cl_device, cl.program_build_info.LOG) or ""
                kernel = "search_group" if model == "group" else "search"
                k = cl.Kernel(prog, kernel)
                regs = k.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, device.cl_device)
                lines = [
                    ln.strip()
                    for ln in log.splitlines()
                    if re.search(r"registers|stack frame|spill|Compiling entry", ln)
                ]
                print(
                    f"\n{device.name}: {model} kernel, {'out of line' if outline else 'inlined'}: "
                    f"built in {dt:.2f} s, max work-group size {regs}"
                )
                for ln in lines[-12:]:
                    print("   ", ln)
                if args.ptx:
                    args.ptx.mkdir(parents=True, exist_ok=True)
                    name = f"{Path(args.model).stem}_{model}_{'outline' if outline else 'inline'}.ptx"
                    (args.ptx / name).write_bytes(prog.get_info(cl.program_info.BINARIES)[0])
                    print("    binary:", args.ptx / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
