"""The MiniZinc solver configuration (gpu-fzn.msc), written where MiniZinc looks for it.

MiniZinc finds solver configurations in ~/.minizinc/solvers, in /usr/share/minizinc/solvers, and
in every folder named by the MZN_SOLVER_PATH environment variable. The file holds absolute paths
to this installation's `fzn-gpu` executable and mznlib/ folder, so it is generated, not shipped."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from . import __version__
from .options import BUCKET, ENGINES, LOCAL_SEARCH
from .resources import mznlib_dir
from .search_options import LNS_STRATEGIES, RESTART_KINDS

SOLVER_ID = "org.fzn-gpu.gpu-fzn"
STD_FLAGS = ["-a", "-f", "-i", "-n", "-p", "-r", "-s", "-t", "-v"]
EXTRA_FLAGS = [
    ["--devices", "OpenCL devices to use: all, gpu, cpu, or indices from --list-devices (e.g. 0,2)", "string", "all"],
    ["--check", "Verify every solution with the independent checker before printing it", "bool", "false"],
    ["--count-only", "With -a, count solutions without printing each one (the count is nSolutions)", "bool", "false"],
    [
        "--deterministic",
        "The same answers every run: satisfaction, the solutions the model's search meets first, in its "
        "order (complete search on one device); optimisation, one sequential branch and bound. Slower. Also with -p 1",
        "bool",
        "false",
    ],
    [
        "--engine",
        "Search engine: auto (optimisation: LNS and branch and bound together, and bucket elimination where "
        "it fits; satisfaction: complete search, restarts and Adaptive Search together), complete, lns, portfolio, "
        "restart, bucket, adaptive (local search)",
        ":".join(("opt",) + ENGINES),
        "auto",
    ],
    [
        "--bucket",
        "Bucket elimination (exact optima of optimisation models of low induced width) beside the portfolio: "
        "auto (where its tables fit), off",
        ":".join(("opt",) + BUCKET),
        "auto",
    ],
    [
        "--local-search",
        "Adaptive Search (local search on every device) beside complete search for one solution of a "
        "satisfaction model: auto (where the model suits it), off",
        ":".join(("opt",) + LOCAL_SEARCH),
        "auto",
    ],
    [
        "--cluster",
        "Complete search, the portfolio's branch and bound and LNS islands on the nodes of a Ray cluster: its address "
        "(HOST:6379), or auto (this machine's cluster, else a Ray instance started here); empty: this machine",
        "string",
        "",
    ],
    [
        "--restart",
        "Restarts: luby, geometric, linear, constant, none; auto: the model's restart annotation",
        ":".join(("opt", "auto") + RESTART_KINDS),
        "auto",
    ],
    ["--restart-scale", "Restarts: nodes of the sequence's unit (0: 100)", "int", "0"],
    ["--restart-base", "Restarts: restart_geometric's growth factor (0: 1.5)", "float", "0"],
    # LNS settings override the model's lns(...) annotation; none and 0 leave it (or the default) be
    [
        "--lns-strategy",
        "Large neighbourhood search with this strategy (optimisation models)",
        ":".join(("opt", "none") + LNS_STRATEGIES),
        "none",
    ],
    ["--lns-percent", "LNS: percent of the FD variables released per neighbourhood (0: 20)", "int", "0"],
    ["--lns-neighbourhoods", "LNS: neighbourhoods explored at once (0: fill the device)", "int", "0"],
    ["--lns-starts", "LNS: starting points per neighbourhood (0: 16)", "int", "0"],
    ["--lns-steps", "LNS: steps per restart (0: until 10 in a row improve nothing)", "int", "0"],
    ["--lns-restarts", "LNS: restarts from the first solution (0: until the time limit)", "int", "0"],
    ["--lns-timeout", "LNS: time-out in seconds (0: the time limit)", "float", "0"],
]


def executable() -> str:
    """The absolute path of the `fzn-gpu` command of this installation."""
    beside = Path(sys.executable).parent / "fzn-gpu"
    if beside.exists():
        return str(beside)
    found = shutil.which("fzn-gpu")
    if found:
        return str(Path(found).resolve())
    raise FileNotFoundError("the fzn-gpu command is not installed; run `pip install .` in the checkout")


def config() -> dict:
    return {
        "id": SOLVER_ID,
        "name": "fzn-gpu",
        "description": "FlatZinc solver whose search runs as OpenCL kernels on GPUs and CPUs",
        "version": __version__,
        "mznlib": str(mznlib_dir()),
        "executable": executable(),
        "tags": ["gpu-fzn", "cp", "int", "set", "float", "gpu", "opencl"],
        "stdFlags": STD_FLAGS,
        "extraFlags": EXTRA_FLAGS,
        "supportsMzn": False,
        "supportsFzn": True,
        "needsSolns2Out": True,
        "needsMznExecutable": False,
        "needsStdlibDir": False,
        "isGUIApplication": False,
    }


def default_dir() -> Path:
    return Path(os.path.expanduser("~")) / ".minizinc" / "solvers"


def install(folder: str | None = None) -> Path:
    """Write gpu-fzn.msc into `folder` (default ~/.minizinc/solvers) and return its path."""
    target = Path(folder) if folder else default_dir()
    target.mkdir(parents=True, exist_ok=True)
    path = target / "gpu-fzn.msc"
    path.write_text(json.dumps(config(), indent=2) + "\n")
    return path
