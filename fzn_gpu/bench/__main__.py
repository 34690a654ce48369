"""Benchmarks side by side with Gecode, in one run on one machine.

    python -m fzn_gpu.bench --suite small --out bench-out          # this 2-core machine, ~10 min
    python -m fzn_gpu.bench --suite full --gecode-p 16 --out bench-out   # the GPU machine

Runs each instance of models/bench/suite.json (or --bench-dir's) through `minizinc --solver NAME` for every
solver variant, repeats it (median wall time), and writes results.json, BENCHMARKS.md (tables
with ratios fzn-gpu / Gecode) and PNG plots into --out.

The one command for every measurement: --only and --mode pick the instances, --devices the
device sets, --variants the built-in variants (each engine, LNS strategy and portfolio split),
and --variant NAME=FLAGS adds one of fzn-gpu's flags and settings, so an A/B of a setting or of
another checkout of the code is one call, its variants run in rotation with --interleave:

    python -m fzn_gpu.bench --suite full --only "nqueens n=15,costas" --mode all --devices gpu \
        --variants "gpu-fzn count,before" --variant "before=--count-only ENV:PYTHONPATH=/old/checkout" \
        --interleave --repeats 4 --out ab
    python -m fzn_gpu.bench --mode opt --variant "regs80=ENV:FZN_GPU_MAX_REGISTERS=80" --out regs

Each run's -s statistics (kernelTime, improvementsBy, nodeProfile with FZN_GPU_PROFILE=1, ...)
are kept in results.json."""

from __future__ import annotations

import argparse
import json
import os
import re
import runpy
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

from .. import settings
from ..engine.portfolio import KINDS
from ..flatzinc.model import LNS_STRATEGIES
from ..options import ENGINES

SMALL = (
    [("nqueens.mzn", {"n": n}) for n in (8, 10, 11, 12)]
    + [("costas.mzn", {"n": 10})]
    + [
        ("qap.mzn", "qap_12.dzn"),
        ("knapsack.mzn", "knapsack_50.dzn"),
        ("tsp.mzn", "tsp_10.dzn"),
        ("langford.mzn", {"n": 23}),
        ("magic_square.mzn", {"n": 6}),
    ]
)


def bench_dir() -> Path:
    """The project's suite, models/bench of the checkout this runs from (or of the current
    folder), its data files written by its instances.py where missing."""
    here = Path(__file__).resolve()
    for base in (here.parents[2], Path.cwd()):
        bdir = base / "models" / "bench"
        if (bdir / "suite.json").exists():
            return with_data(bdir)
    raise SystemExit("cannot find models/bench/suite.json: run from a checkout of fzn-gpu, or pass --bench-dir")


def with_data(bdir: Path) -> Path:
    """`bdir`, its data/ folder written by its instances.py first where that script exists and a
    data file of the suite is missing (the files are made, not kept in the repository)."""
    script = bdir / "instances.py"
    wanted = {i["data"] for i in json.loads((bdir / "suite.json").read_text())["instances"] if "data" in i}
    if script.exists() and any(not (bdir / "data" / name).exists() for name in wanted):
        runpy.run_path(str(script))["write"](bdir / "data")
    return bdir


def instances(suite: str, bdir: Path) -> list[dict]:
    full = json.loads((bdir / "suite.json").read_text())["instances"]
    if suite == "full":
        return full
    out = []
    for model, arg in SMALL:
        inst: dict[str, Any] = {
            "model": model,
            "mode": "all"
            if model in ("nqueens.mzn", "costas.mzn")
            else ("one" if model in ("langford.mzn", "magic_square.mzn") else "opt"),
        }
        inst.update({"params": arg} if isinstance(arg, dict) else {"data": arg})
        out.append(inst)
    return out


def label(inst: dict) -> str:
    extra = inst.get("data") or ",".join(f"{k}={v}" for k, v in inst.get("params", {}).items())
    return f"{inst['model'].removesuffix('.mzn')} {extra}".strip()


def run_once(solver: list[str], inst: dict, bdir: Path, limit_s: float) -> dict:
    """One run; a flag "ENV:NAME=VALUE" of `solver` sets NAME in the solver's environment."""
    env = environment(solver)
    solver = [f for f in solver if not f.startswith("ENV:")]
    cmd = ["minizinc", *solver, str(bdir / inst["model"])]
    if inst.get("data"):
        cmd.append(str(bdir / "data" / inst["data"]))
    for k, v in inst.get("params", {}).items():
        cmd += ["-D", f"{k}={v}"]
    if inst["mode"] == "all":
        cmd.append("-a")
    if inst["mode"] == "opt":
        cmd += ["-a", "--output-mode", "dzn", "--output-objective"]
    cmd += ["-s", "--time-limit", str(int(limit_s * 1000))]
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    except FileNotFoundError:
        raise SystemExit("fzn-gpu-bench: `minizinc` is not on PATH; install it (README) or put it there") from None
    sols, complete, unsat, trace, counted = 0, False, False, [], None
    stats: dict[str, str] = {}
    assert p.stdout is not None and p.stderr is not None  # both piped
    for line in p.stdout:
        now = time.monotonic() - t0
        if line.startswith("----------"):
            sols += 1
        elif line.startswith("=========="):
            complete = True
        elif "UNSATISFIABLE" in line:
            unsat = True
        elif line.startswith("_objective"):
            trace.append((now, int(re.findall(r"-?\d+", line)[0])))
        elif line.startswith("%%%mzn-stat:"):
            k, _, v = line[12:].strip().partition("=")
            if k == "nSolutions":  # MiniZinc's own: the solutions it printed (0 when counting only)
                continue
            stats[k] = v
    p.wait()
    wall = time.monotonic() - t0
    if "solutions" in stats and sols == 0:  # a count (--count-only): fzn-gpu's `solutions`
        counted = int(stats["solutions"])
    return {
        "wall_s": wall,
        "solutions": counted if counted is not None else sols,
        "complete": complete,
        "unsat": unsat,
        "trace": trace,
        "best": trace[-1][1] if trace else None,
        "stats": stats,
        "rc": p.returncode,
        "stderr": p.stderr.read()[-300:],
    }


def nodes_per_s(r: dict) -> float | None:
    """Search nodes per second of solving time, from the solver's own statistics."""
    try:
        nodes = float(r["stats"]["nodes"])
        t = float(r["stats"].get("solveTime") or r["wall_s"])
    except (KeyError, ValueError):
        return None
    return nodes / t if t > 0 else None


PROFILE = ["initTime", "buildTime", "splitTime", "kernelTime", "hostTime"]


def profile(results: list[dict], solvers: list[str]) -> str:
    """Where fzn-gpu's time goes: front end and packing, kernel build (or cache load), splitting
    the root, kernels (with their transfers), and the rest of the host's work."""
    lines = [
        "| instance | solver | wall s | " + " | ".join(PROFILE) + " | nodes | nodes/s |",
        "|---|---|---|" + "---|" * len(PROFILE) + "---|---|",
    ]
    for res in results:
        for s in solvers:
            r = res["runs"].get(s)
            if not r or not s.startswith("gpu-fzn"):
                continue
            cells = [f"{float(r['stats'][k]):.2f}" if k in r["stats"] else "-" for k in PROFILE]
            nps = nodes_per_s(r)
            lines.append(
                f"| {res['label']} | {s} | {r['wall_s']:.2f} | "
                + " | ".join(cells)
                + f" | {r['stats'].get('nodes', '-')} | {f'{nps:,.0f}' if nps else '-'} |"
            )
    return "\n".join(lines) + "\n"


def environment(solver: list[str]) -> dict[str, str]:
    """The environment a variant's runs get: this process's, with each flag "ENV:NAME=VALUE" of
    `solver` setting NAME."""
    env = settings.environment()
    for f in solver:
        if f.startswith("ENV:"):
            name, _, value = f[4:].partition("=")
            env[name] = value
    return env


def warm_up(inst: dict, bdir: Path, devices: str, solver: list[str] | None = None) -> float:
    """Build (and cache) the kernel for this instance's constraint kinds on these devices, in
    the environment of variant `solver` (its settings, its checkout: another build): compile
    the model, then `fzn-gpu --build-only` (a first NVIDIA build would spend the time limit of
    the timed runs). Seconds taken."""
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        fzn = os.path.join(tmp, "m.fzn")
        cmd = [
            "minizinc",
            "-c",
            "--solver",
            "gpu-fzn",
            str(bdir / inst["model"]),
            "--fzn",
            fzn,
            "--ozn",
            os.path.join(tmp, "m.ozn"),
        ]
        if inst.get("data"):
            cmd.append(str(bdir / "data" / inst["data"]))
        for k, v in inst.get("params", {}).items():
            cmd += ["-D", f"{k}={v}"]
        subprocess.run(cmd, capture_output=True)
        t0 = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "fzn_gpu", "--build-only", "--devices", devices, fzn],
            capture_output=True,
            env=environment(solver or []),
            cwd=tmp,  # not this checkout's folder: python -m puts the folder first on the path
        )
        return time.monotonic() - t0


def median_run(solver, inst, bdir, limit_s, repeats) -> dict:
    return median([run_once(solver, inst, bdir, limit_s) for _ in range(repeats if inst["mode"] != "opt" else 1)])


def interleaved(solvers: dict[str, list[str]], inst, bdir, limit_s, repeats) -> dict[str, dict]:
    """Every variant's runs in rotation (one of each, `repeats` times), so that a machine's
    drift (clocks, caches, another process) falls on all of them alike: an A/B's way."""
    runs: dict[str, list[dict]] = {name: [] for name in solvers}
    for _ in range(repeats if inst["mode"] != "opt" else 1):
        for name, flags in solvers.items():
            runs[name].append(run_once(flags, inst, bdir, limit_s))
    return {name: median(r) for name, r in runs.items()}


def median(runs: list[dict]) -> dict:
    """The run of median wall time, with every run's wall time and kernel time beside it."""
    runs.sort(key=lambda r: r["wall_s"])
    mid = runs[len(runs) // 2]
    mid["walls"] = [r["wall_s"] for r in runs]
    mid["kernel_s"] = [float(r["stats"]["kernelTime"]) for r in runs if "kernelTime" in r["stats"]]
    return mid


def at_time(trace, t):
    best = None
    for ts, obj in trace:
        if ts <= t:
            best = obj
    return best


def markdown(results: list[dict], solvers: list[str], machine: str) -> str:
    ref = next((s for s in solvers if s.startswith("gecode")), None)
    lines = [
        f"### {machine}",
        "",
        "| instance | mode | " + " | ".join(solvers) + (f" | ratio fzn-gpu / {ref}" if ref else "") + " |",
        "|---|---|" + "---|" * len(solvers) + ("---|" if ref else ""),
    ]
    for res in results:
        cells, times = [], {}
        for s in solvers:
            r = res["runs"].get(s)
            if r is None:
                cells.append("-")
                continue
            if res["mode"] == "opt":
                proof = f" (opt, {r['wall_s']:.2f} s)" if r["complete"] else ""
                first = f"; first {r['trace'][0][0]:.2f} s" if r["trace"] else ""
                cells.append(f"best {r['best']}{proof}{first}; at 10 s: {at_time(r['trace'], 10.0)}")
            elif res["mode"] == "all":
                nps = nodes_per_s(r)
                wrong = r["complete"] and res.get("solutions") not in (None, r["solutions"])
                cells.append(
                    f"{r['wall_s']:.2f} s, {r['solutions']} sol{'' if r['complete'] else ' (not finished)'}"
                    + (f", {nps / 1e6:.2f} M nodes/s" if nps else "")
                    + (f", **WRONG COUNT (expected {res['solutions']})**" if wrong else "")
                )
            else:
                cells.append(f"{r['wall_s']:.2f} s" if r["solutions"] else "none in limit")
            times[s] = r["wall_s"] if (r["complete"] or (res["mode"] == "one" and r["solutions"])) else None
        ratio = ""
        if ref:
            g = times.get(ref)
            mine = [(s, times[s]) for s in solvers if s.startswith("gpu-fzn") and times.get(s)]
            ratio = (
                "; ".join(f"{t / g:.2f}" + (" counted" if s.endswith("count") else "") for s, t in mine)
                if g and mine and res["mode"] != "opt"
                else "-"
            )
        lines.append(f"| {res['label']} | {res['mode']} | " + " | ".join(cells) + (f" | {ratio}" if ref else "") + " |")
    return "\n".join(lines) + "\n"


def plots(results, solvers, out: Path) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    for model in sorted({r["model"] for r in results if r["mode"] == "all" and "params" in r}):
        rows = [r for r in results if r["model"] == model and r["mode"] == "all"]
        fig, ax = plt.subplots(figsize=(6, 4))
        for s in solvers:
            xs = [r["params"]["n"] for r in rows if s in r["runs"] and r["runs"][s]["complete"]]
            ys = [r["runs"][s]["wall_s"] for r in rows if s in r["runs"] and r["runs"][s]["complete"]]
            if xs:
                ax.plot(xs, ys, marker="o", label=s)
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel("wall time, s (all solutions)")
        ax.set_title(model)
        ax.legend()
        fig.tight_layout()
        name = f"time_{model.removesuffix('.mzn')}.png"
        fig.savefig(out / name, dpi=90)
        plt.close(fig)
        made.append(name)
    shared = [
        (r["label"], s, r["runs"][s])
        for r in results
        for s in solvers
        if s in r["runs"] and "d1_subSearchSpaces" in r["runs"][s]["stats"]
    ]
    if shared:  # several devices on one search: each one's share of the sub-search spaces
        fig, ax = plt.subplots(figsize=(7, 0.5 + 0.45 * len(shared)))
        names = [f"{label} ({s})" for label, s, _ in shared]
        left = [0.0] * len(shared)
        for d in range(8):
            key = f"d{d}_subSearchSpaces"
            vals = [int(run["stats"].get(key, 0)) for _, _, run in shared]
            totals = [
                sum(int(run["stats"].get(f"d{k}_subSearchSpaces", 0)) for k in range(8)) or 1 for _, _, run in shared
            ]
            if not any(vals):
                continue
            share = [v / t for v, t in zip(vals, totals)]
            device = next(
                run["stats"].get(f"d{d}_device", f"device {d}")
                for _, _, run in shared
                if f"d{d}_device" in run["stats"]
            ).strip('"')
            ax.barh(names, share, left=left, label=device[:40])
            left = [a + b for a, b in zip(left, share)]
        ax.set_xlabel("share of the sub-search spaces")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / "device_share.png", dpi=90)
        plt.close(fig)
        made.append("device_share.png")
    for r in [r for r in results if r["mode"] == "opt"]:
        if not any(run.get("trace") for run in r["runs"].values()):
            continue  # no solver found a solution: nothing to draw
        fig, ax = plt.subplots(figsize=(6, 4))
        for s in solvers:
            tr = r["runs"].get(s, {}).get("trace") or []
            if tr:
                ax.step([t for t, _ in tr], [o for _, o in tr], where="post", marker=".", label=s)
        ax.set_xlabel("time, s")
        ax.set_ylabel("objective")
        ax.set_title(r["label"])
        ax.legend()
        fig.tight_layout()
        name = "objective_" + re.sub(r"[^A-Za-z0-9]+", "_", r["label"]) + ".png"
        fig.savefig(out / name, dpi=90)
        plt.close(fig)
        made.append(name)
    return made


def user_variants(specs: list[str], device_set: str, check: bool = False) -> dict[str, list[str]]:
    """--variant NAME=FLAGS: fzn-gpu on the first device set with FLAGS added (shell words;
    ENV:NAME=VALUE sets a variable of its environment: a setting, or PYTHONPATH for another
    checkout of the code)."""
    out = {}
    for spec in specs:
        name, sep, flags = spec.partition("=")
        if not sep or not name.strip():
            raise SystemExit(
                f"fzn-gpu-bench: --variant {spec!r}: write NAME=FLAGS, e.g. 'regs80=ENV:FZN_GPU_MAX_REGISTERS=80'"
            )
        out[name.strip()] = ["--solver", "gpu-fzn", "--devices", device_set, *(["--check"] if check else [])]
        out[name.strip()] += shlex.split(flags)
    return out


def variants(device_sets: list[str], gecode_p: int, check: bool = False) -> dict[str, list[str]]:
    """Solver variants by name: fzn-gpu printed and counting per device set (named `gpu-fzn`
    alone when there is one set: the default engine), each engine alone, LNS with each
    strategy, the portfolio with each split of the device kinds between its engines
    (`bnb=cpu lns=gpu`: engine/portfolio.py), Gecode -p 1 and -p N. With `check`, fzn-gpu
    verifies every solution it prints with the independent checker."""
    out: dict[str, list[str]] = {}
    for d in device_sets:
        name = "gpu-fzn" if len(device_sets) == 1 else f"gpu-fzn {d}"
        base = ["--solver", "gpu-fzn", "--devices", d] + (["--check"] if check else [])
        out[name] = base
        out[f"{name} count"] = ["--solver", "gpu-fzn", "--devices", d, "--count-only"]
        out[f"{name} relax=off"] = base + ["--relax", "off"]  # without the relaxations' bounds (fzn_gpu/relax/)
        for engine in ENGINES[1:]:
            out[f"{name} {engine}"] = (
                base + ["--engine", engine] + (["--restart", "luby"] if engine == "restart" else [])
            )
        for strategy in LNS_STRATEGIES:  # optimisation by LNS (engine/lns.py)
            out[f"{name} lns {strategy}"] = base + ["--lns-strategy", strategy]
        for bnb in KINDS:
            for lns in KINDS:
                out[f"{name} bnb={bnb} lns={lns}"] = base + [
                    "--engine",
                    "portfolio",
                    f"ENV:FZN_GPU_BNB_DEVICES={bnb}",
                    f"ENV:FZN_GPU_LNS_DEVICES={lns}",
                ]
    out["gecode -p1"] = ["--solver", "gecode", "-p", "1"]
    if gecode_p > 1:
        out[f"gecode -p{gecode_p}"] = ["--solver", "gecode", "-p", str(gecode_p)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", choices=["small", "full"], default="small")
    ap.add_argument("--bench-dir", default=None)
    ap.add_argument("--out", default="bench-out")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--limit", type=float, default=60.0, help="time limit per run, s (enumeration and first solution)")
    ap.add_argument("--opt-limit", type=float, default=20.0, help="time limit per optimisation run, s")
    ap.add_argument("--gecode-p", type=int, default=0, help="also Gecode with -p N")
    ap.add_argument(
        "--devices",
        action="append",
        default=None,
        help="fzn-gpu --devices for the gpu-fzn runs (default all); repeat it for a column "
        "per device set, e.g. --devices gpu --devices cpu",
    )
    ap.add_argument(
        "--variants",
        default=None,
        help="only these solver variants (comma-separated names, e.g. 'gpu-fzn cpu count,gecode -p16')",
    )
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        help="NAME=FLAGS: fzn-gpu with these flags added (ENV:NAME=VALUE sets a setting, or PYTHONPATH for "
        "another checkout); repeat it for more",
    )
    ap.add_argument(
        "--interleave",
        action="store_true",
        help="run the variants' repeats in rotation (an A/B), not one after another",
    )
    ap.add_argument(
        "--check", action="store_true", help="fzn-gpu checks every solution it prints (slower: for tests, not timings)"
    )
    ap.add_argument("--machine", default=os.uname().nodename)
    ap.add_argument("--only", default=None, help="only instances whose label contains one of these (comma-separated)")
    ap.add_argument("--mode", choices=["all", "one", "opt"], default=None, help="only instances of this mode")
    args = ap.parse_args()
    bdir = with_data(Path(args.bench_dir)) if args.bench_dir else bench_dir()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    device_sets = args.devices or ["all"]
    user = user_variants(args.variant, device_sets[0], args.check)
    solvers = variants(device_sets, args.gecode_p, args.check) | user
    if args.variants:
        wanted = [v.strip() for v in args.variants.split(",")]
        unknown = [v for v in wanted if v not in solvers]
        if unknown:
            raise SystemExit(f"fzn-gpu-bench: no variant {unknown[0]!r}; the variants are {', '.join(solvers)}")
        solvers = {k: v for k, v in solvers.items() if k in wanted}
    results = []
    warmed: set[str] = set()
    for inst in instances(args.suite, bdir):
        if args.only and not any(part in label(inst) for part in args.only.split(",")):
            continue
        if args.mode and inst["mode"] != args.mode:
            continue
        res = {**inst, "label": label(inst), "runs": {}}
        if res["label"] not in warmed:  # the first run builds the kernel (cached after): not timed
            # per instance: a program is specialised to the instance's sizes, and a timed run
            # leaves a GPU whose program was never built out (engine/warmup.py); a variant's own
            # settings or checkout build programs of their own
            own = {()} | {tuple(f for f in flags if f.startswith("ENV:")) for n, flags in solvers.items() if n in user}
            res["warmup_s"] = sum(warm_up(inst, bdir, d, list(env)) for d in device_sets for env in own)
            warmed.add(res["label"])
            print(f"{res['label']:28s} warm-up (kernel build) {res['warmup_s']:.2f}s", flush=True)
        # counting without printing applies to enumeration only
        chosen = {n: f for n, f in solvers.items() if inst["mode"] == "all" or "--count-only" not in f}
        limit = args.opt_limit if inst["mode"] == "opt" else args.limit
        if args.interleave:
            runs = interleaved(chosen, inst, bdir, limit, args.repeats)
        else:
            runs = {name: median_run(flags, inst, bdir, limit, args.repeats) for name, flags in chosen.items()}
        for name, r in runs.items():
            res["runs"][name] = r
            print(
                f"{res['label']:28s} {name:12s} {r['wall_s']:8.2f}s sols={r['solutions']} complete={r['complete']} best={r['best']}"
                + (f" kernel={sorted(r['kernel_s'])[len(r['kernel_s']) // 2]:.3f}s" if r["kernel_s"] else ""),
                flush=True,
            )
        results.append(res)
        (out / "results.json").write_text(json.dumps(results, indent=1))
    md = markdown(results, list(solvers), args.machine)
    pics = plots(results, list(solvers), out)
    cmd = "python -m fzn_gpu.bench " + " ".join(
        f"--{k.replace('_', '-')} {shlex.quote(str(v))}"
        for k, vals in vars(args).items()
        if vals not in (None, False)
        for v in (vals if isinstance(vals, list) else [vals])
    )
    md += "\nWhere fzn-gpu's time goes (seconds, from its -s statistics):\n\n" + profile(results, list(solvers))
    (out / "BENCHMARKS.md").write_text(
        f"{md}\nCommand: `{cmd}`, {time.strftime('%Y-%m-%d')}.\n\n" + "".join(f"![{p}]({p})\n" for p in pics)
    )
    print(md)


if __name__ == "__main__":
    main()
