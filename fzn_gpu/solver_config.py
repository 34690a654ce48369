"""The MiniZinc solver configuration (gpu-fzn.msc), written where MiniZinc looks for it.

MiniZinc finds solver configurations in ~/.minizinc/solvers, in /usr/share/minizinc/solvers, and
in every folder named by the MZN_SOLVER_PATH environment variable. The file holds absolute paths
to this installation's executable and mznlib/ folder, so it is generated, not shipped.

The executable it names is a launcher written beside it (LAUNCHER): `fzn-gpu` as this
interpreter runs it without the site module (python -S). A run through a warm solver server
needs only the standard library and fzn_gpu.launch, and the site module's work (every .pth file
of every installed package, some of which import modules of their own) was a large part of a
served small model's start (docs/bench/measurements.md); fzn_gpu.launch runs the site module
itself where the run stays in its process. Where the interpreter's path cannot stand in a #!
line, the msc names the `fzn-gpu` command instead."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from . import __version__
from .options import BUCKET, ENGINES, LOCAL_SEARCH, RELAX
from .resources import mznlib_dir
from .search_options import LNS_STRATEGIES, RESTART_KINDS

SOLVER_ID = "org.fzn-gpu.gpu-fzn"
STD_FLAGS = ["-a", "-f", "-i", "-n", "-p", "-r", "-s", "-t", "-v"]
# Each extra flag's label is what the MiniZinc IDE shows in its parameter table, beside the
# value: a few words, as Gecode's are (LABEL_MAX; tests/test_ide.py); what each means is in
# `fzn-gpu --help` and the README.
LABEL_MAX = 40
EXTRA_FLAGS = [
    ["--devices", "OpenCL devices (all, gpu, cpu, 0,2)", "string", "all"],
    ["--check", "Check every solution", "bool", "false"],
    ["--count-only", "Count solutions only (with -a)", "bool", "false"],
    ["--deterministic", "Same answers every run (slower)", "bool", "false"],
    ["--engine", "Search engine", ":".join(("opt",) + ENGINES), "auto"],
    ["--bucket", "Bucket elimination", ":".join(("opt",) + BUCKET), "auto"],
    ["--local-search", "Adaptive Search (local search)", ":".join(("opt",) + LOCAL_SEARCH), "auto"],
    ["--relax", "Relaxation bounds", ":".join(("opt",) + RELAX), "auto"],
    ["--cluster", "Ray cluster: HOST:PORT or auto", "string", ""],
    ["--restart", "Restarts", ":".join(("opt", "auto") + RESTART_KINDS), "auto"],
    ["--restart-scale", "Restart unit in nodes (0: 100)", "int", "0"],
    ["--restart-base", "Geometric restart factor (0: 1.5)", "float", "0"],
    # LNS settings override the model's lns(...) annotation; none and 0 leave it (or the default) be
    ["--lns-strategy", "LNS strategy", ":".join(("opt", "none") + LNS_STRATEGIES), "none"],
    ["--lns-percent", "LNS: % of variables freed (0: 20)", "int", "0"],
    ["--lns-neighbourhoods", "LNS: neighbourhoods at once (0: auto)", "int", "0"],
    ["--lns-starts", "LNS: starts a neighbourhood (0: 16)", "int", "0"],
    ["--lns-steps", "LNS: steps a restart (0: auto)", "int", "0"],
    ["--lns-restarts", "LNS: restarts (0: to the limit)", "int", "0"],
    ["--lns-timeout", "LNS: time-out in s (0: the limit)", "float", "0"],
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


LAUNCHER = "fzn-gpu"  # what a process list shows the solver as (python -S .../fzn-gpu)
LAUNCHER_TEXT = """\
#!{python} -S
# Written by `fzn-gpu install-solver-config` for gpu-fzn.msc beside it: `fzn-gpu` started
# without the site module's imports (fzn_gpu/solver_config.py says why).
import sys

sys.path.append({packages!r})
from fzn_gpu.launch import main

main()
"""


def launcher_fits(python: str) -> bool:
    """Whether `python` can be a #! line's interpreter: absolute, no blanks, short enough for
    every kernel's limit (127 bytes before Linux 5.1)."""
    return python.startswith("/") and not any(c.isspace() for c in python) and len(python) <= 100


def site_serves(python: str) -> bool:
    """Whether `python -S`, running the site module afterwards as fzn_gpu.launch does for a run
    that stays in its process, imports what a run needs."""
    check = "import site; site.main(); import numpy, pyopencl, lark"
    try:
        done = subprocess.run([python, "-S", "-c", check], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def write_launcher(folder: Path) -> Path | None:
    """The launcher in `folder` for this interpreter and installation, or None where this
    interpreter's path does not fit a #! line or it would not find the packages a run needs.
    The interpreter's path as started, not resolved: a virtual environment's python is a link
    to the system's, and only its own path finds the environment's packages."""
    python = os.path.abspath(sys.executable)
    if not launcher_fits(python) or not site_serves(python):
        return None
    packages = str(Path(__file__).resolve().parent.parent)  # the folder fzn_gpu is imported from
    path = folder / LAUNCHER
    tmp = folder / f".{LAUNCHER}.{os.getpid()}"
    tmp.write_text(LAUNCHER_TEXT.format(python=python, packages=packages))
    tmp.chmod(0o755)
    tmp.replace(path)
    return path


def config(launcher: Path | None = None) -> dict:
    return {
        "id": SOLVER_ID,
        "name": "fzn-gpu",
        "description": "FlatZinc solver whose search runs as OpenCL kernels on GPUs and CPUs "
        "(the IDE's number of threads, -p, is the number of OpenCL devices)",
        "version": __version__,
        "mznlib": str(mznlib_dir()),
        "executable": str(launcher) if launcher is not None else executable(),
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
    executable()  # installed: the server and background builds start as `python -m fzn_gpu...`
    path.write_text(json.dumps(config(write_launcher(target)), indent=2) + "\n")
    return path
