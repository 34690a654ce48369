"""A model's first runs on a GPU machine whose kernels were never built, against the same runs
once they are: what a user meets after `pip install`, a driver update, or with the caches
emptied (engine/warmup.py). Run there after `source scripts/device_env.sh`.

    python3 scripts/cold_start.py OUT [LIMIT_S]

States, each from emptied caches (fzn-gpu's build records, NVIDIA's ComputeCache, PoCL's and
pyopencl's caches):
- "after set-up": `fzn-gpu build-kernels` first, as scripts/setup.sh runs it;
- "cold, GPU alone": `--devices gpu`, which has nothing to start on but the GPU: its run waits
  for the build, as every run did before warmup.py;
- "cold, CPU alone": `--devices cpu`, what the default may not be slower than;
- "cold": the default devices, straight away (a device still building is left out, and a
  builder builds behind the run); then, once that builder is done, "built behind".
SETUP=0 leaves out the first two. Optimisation models print every improvement (-a),
satisfaction models their first solution.
In each: QAP 15 and MKCP 67 under the limit (seconds to the first solution, the objective at
the end, the devices left out), and a batch of small models six at a time (each one's wall
seconds and status). Gecode -p 16 on the two instances beside them. Writes OUT/cold_start.md
and OUT/cold_start.json.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "models" / "bench"
INSTANCES = [("qap 15", "qap.mzn", "qap_15.dzn"), ("mkcp 67", "mkcp.mzn", "mkcp_67.dzn")]
BATCH = (
    [(f"nqueens {n}", "nqueens.mzn", f"n={n}") for n in (8, 12, 20)]
    + [("costas 10", "costas.mzn", "n=10"), ("langford 12", "langford.mzn", "n=12")]
    + [("magic square 6", "magic_square.mzn", "n=6"), ("partition 64", "partition.mzn", "n=64")]
    + [("qap 12", "qap.mzn", "qap_12.dzn"), ("knapsack 50", "knapsack.mzn", "knapsack_50.dzn")]
    + [(f"tsp {n}", "tsp.mzn", f"tsp_{n}.dzn") for n in (10, 15)]
    + [("mkcp 20", "mkcp.mzn", "mkcp_20.dzn"), ("coins grid 8", "coins_grid.mzn", "coins_grid_8.dzn")]
    + [("transportation", "transportation.mzn", "transportation.dzn")]
    + [(f"wcsp {g}", "wcsp_grid.mzn", f"wcsp_grid_{g}.dzn") for g in ("3x3", "5x5")]
)
OTHER = [
    "send_more_money.mzn",
    "knapsack_01.mzn",
    "unsat.mzn",
    "lns/knapsack_30.mzn",
    "lns/qap_8.mzn",
    "lns/tsp_10.mzn",
]
CACHES = ["~/.cache/fzn-gpu", "~/.nv/ComputeCache", "~/.cache/pocl", "~/.cache/pyopencl"]


def compile_fzn(work: Path, label: str, model: Path, data: str | None, solver: str = "gpu-fzn") -> Path:
    out = work / (re.sub(r"\W+", "_", label) + ("" if solver == "gpu-fzn" else "_" + solver) + ".fzn")
    cmd = ["minizinc", "-c", "--solver", solver, str(model), "--fzn", str(out), "--ozn", str(out.with_suffix(".ozn"))]
    if data and data.endswith(".dzn"):
        cmd.append(str(BENCH / "data" / data))
    elif data:
        cmd += ["-D", data + ";"]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    return out


def empty_caches() -> None:
    subprocess.run(["pkill", "-f", "build-kernels --background"], capture_output=True)
    for c in CACHES:
        shutil.rmtree(os.path.expanduser(c), ignore_errors=True)


def wait_for_builder(limit_s: float = 300.0) -> float:
    """Seconds until the background builder's lock is free (it has finished)."""
    lock = Path(os.path.expanduser("~/.cache/fzn-gpu/builds/builder.lock"))
    t0 = time.monotonic()
    if not lock.exists():
        return 0.0
    with open(lock, "a") as f:
        while time.monotonic() - t0 < limit_s:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(f, fcntl.LOCK_UN)
                break
            except BlockingIOError:
                time.sleep(0.2)
    return time.monotonic() - t0


def run_timed(cmd: list[str], limit_s: float) -> dict:
    """The run's wall seconds, seconds to its first solution, last objective, status, and the
    stats it printed (-s)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = None
    lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("----------") and first is None:
            first = time.monotonic() - t0
        lines.append(line)
    proc.wait(timeout=limit_s + 60)
    wall = time.monotonic() - t0
    text = "".join(lines)
    stats = dict(re.findall(r"^%%%mzn-stat: (\w+)=(.*)$", text, re.M))
    objs = re.findall(r"^(?:_objective|objective) = (-?\d+);?$", text, re.M)
    status = (
        "optimal/all"
        if "==========" in text
        else "unsat"
        if "=====UNSATISFIABLE=====" in text
        else "solution"
        if first is not None
        else "none"
    )
    return {
        "wall_s": round(wall, 2),
        "first_s": None if first is None else round(first, 2),
        "objective": stats.get("objective") or (objs[-1] if objs else None),
        "status": status,
        "left_out": stats.get("devicesLeftOut"),
        "devices": stats.get("device"),
        "stderr": proc.stderr.read()[-300:] if proc.stderr else "",
    }


def fzn_gpu(f: Path, limit_s: float, *extra: str) -> dict:
    """An optimisation model's improving solutions (-a), a satisfaction model's first."""
    every = ["-a"] if re.search(r"^solve\b.*\b(minimize|maximize)\b", f.read_text(), re.M) else []
    return run_timed(["fzn-gpu", *every, "-s", "-t", str(int(limit_s * 1000)), *extra, str(f)], limit_s)


def batch(files: dict[str, Path], limit_s: float) -> dict:
    """Every file of `files` six at a time; each one's run, and the batch's wall seconds."""
    t0 = time.monotonic()
    with ThreadPoolExecutor(6) as pool:
        runs = dict(zip(files, pool.map(lambda f: fzn_gpu(f, limit_s), files.values())))
    return {"wall_s": round(time.monotonic() - t0, 2), "runs": runs}


def main() -> None:
    out = Path(sys.argv[1])
    limit = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    out.mkdir(parents=True, exist_ok=True)
    work = Path(os.environ.get("TMPDIR", "/tmp")) / "cold_start"
    work.mkdir(parents=True, exist_ok=True)
    inst = {label: compile_fzn(work, label, BENCH / m, d) for label, m, d in INSTANCES}
    small = {label: compile_fzn(work, label, BENCH / m, d) for label, m, d in BATCH}
    small.update({m: compile_fzn(work, m, ROOT / "models" / m, None) for m in OTHER})
    res: dict = {"limit_s": limit, "states": {}}

    def state(name: str, devices: str | None = None, with_batch: bool = True) -> None:
        extra = ("--devices", devices) if devices else ()
        s = {label: fzn_gpu(f, limit, *extra) for label, f in inst.items()}
        if with_batch:
            s["batch"] = batch(small, limit)
        res["states"][name] = s
        print(name, json.dumps({k: v for k, v in s.items() if k != "batch"}), flush=True)

    if os.environ.get("SETUP", "1") == "1":
        empty_caches()
        t0 = time.monotonic()
        subprocess.run(["fzn-gpu", "build-kernels"], capture_output=True)
        res["build_kernels_s"] = round(time.monotonic() - t0, 1)
        state("after set-up")
        empty_caches()
        state("cold, GPU alone", devices="gpu", with_batch=False)
    empty_caches()
    state("cold, CPU alone", devices="cpu")
    empty_caches()
    state("cold")
    res["builder_s"] = round(wait_for_builder(), 1)
    state("built behind")
    res["gecode"] = {
        label: run_timed(
            ["minizinc", "--solver", "gecode", "-p", "16", "-a", "-s", "--output-objective"]
            + ["-t", str(int(limit * 1000)), str(BENCH / m), str(BENCH / "data" / d)],
            limit,
        )
        for label, m, d in INSTANCES
    }
    (out / "cold_start.json").write_text(json.dumps(res, indent=1))
    (out / "cold_start.md").write_text(report(res))
    print(report(res))


def report(res: dict) -> str:
    lines = [
        f"# First runs with the kernel caches emptied (limit {res['limit_s']:g} s)",
        "",
        f"`fzn-gpu build-kernels` from empty caches: {res.get('build_kernels_s', '(not run)')} s; the builder a cold run "
        f"started finished {res.get('builder_s')} s after the cold state's runs.",
        "",
        "| state | instance | first solution (s) | objective at the end | wall (s) | left out |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in res["states"].items():
        for label, r in s.items():
            if label == "batch":
                continue
            lines.append(
                f"| {name} | {label} | {r['first_s']} | {r['objective']} | {r['wall_s']} | {r['left_out'] or '-'} |"
            )
    for label, r in res.get("gecode", {}).items():
        lines.append(f"| Gecode -p 16 | {label} | {r['first_s']} | {r['objective']} | {r['wall_s']} | - |")
    lines += ["", "Small models six at a time (wall seconds of each run; the batch's wall):", ""]
    states = [n for n, s in res["states"].items() if "batch" in s]
    lines.append("| model | " + " | ".join(states) + " |")
    lines.append("|---|" + "---|" * len(states))
    models = list(res["states"][states[0]]["batch"]["runs"]) if states else []
    for m in models:
        cells = []
        for n in states:
            r = res["states"][n]["batch"]["runs"][m]
            cells.append(f"{r['wall_s']} {r['status']}")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    lines.append("| batch wall | " + " | ".join(str(res["states"][n]["batch"]["wall_s"]) for n in states) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
