"""The MiniZinc Challenge as a benchmark: instances of the public challenge repository
(github.com/MiniZinc/mzn-challenge, years 2008-2019; later years are kept aside to check the
work), run through `minizinc --solver S` for each solver under one time limit, scored as the
challenge scores a pair of solvers, written as raw JSON and a markdown table by problem.

    git clone https://github.com/MiniZinc/mzn-challenge REPO   (or a copy carried there)
    python -m fzn_gpu.bench.challenge --repo REPO --out DIR [--limit 20] [--per-problem 1]
        [--solvers "gpu-fzn,gecode -G std"] [--problems N] [--only N] [--range A:B] [--years 2008-2019]
    python -m fzn_gpu.bench.challenge --merge --out DIR a/results.json b/results.json ...

Selection: one problem name once (its latest year from the range; `_` and `-` alike), with
--problems N, N of them spread evenly over the sorted names, and per problem the
instances spread evenly over its data files by name (deterministic: no tuning to an
instance). A problem whose folder holds several models and data files is left out
(which model takes which data is not said there). --range A:B runs a slice of the
selection, and --merge makes one report of several runs' results (slices run in turn, or
solvers run side by side on separate devices and cores), for a benchmark split over calls.

Scoring, per instance and pair of solvers, as the challenge's "complete" scoring: a solver
that proved (optimality, unsatisfiability) beats one that did not; a solution beats none; a
better objective beats a worse one; otherwise the pair shares the point by time (the
faster takes t_other / (t_a + t_b)), and where neither solved it neither scores. Answers that contradict each other (UNSATISFIABLE
against a solution, two different proven optima, a solution better than the other's proven
optimum) are flagged WRONG for the solver whose claim is refuted, both where it cannot be
told. fzn-gpu runs with --check (its checker rejects a solution that breaks a constraint)."""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import settings

DATA_SUFFIXES = (".dzn", ".json")


@dataclass
class Instance:
    problem: str
    year: int
    model: str
    data: str | None

    @property
    def name(self) -> str:
        return f"{self.problem}/{Path(self.data).stem if self.data else Path(self.model).stem}"


@dataclass
class Run:
    solver: str
    status: str  # OPTIMAL_SOLUTION, ALL_SOLUTIONS, SATISFIED, UNSATISFIABLE, UNKNOWN, ERROR
    objective: float | None
    seconds: float
    solutions: int = 0
    error: str = ""
    statistics: dict = field(default_factory=dict)

    @property
    def proven(self) -> bool:
        return self.status in ("OPTIMAL_SOLUTION", "UNSATISFIABLE", "ALL_SOLUTIONS")

    @property
    def solved(self) -> bool:
        return self.status in ("OPTIMAL_SOLUTION", "SATISFIED", "ALL_SOLUTIONS", "UNSATISFIABLE")


def select(repo: Path, years: range, per_problem: int) -> list[Instance]:
    """The instances the benchmark runs (see the module's docstring)."""
    chosen: dict[str, Instance] = {}
    picked: list[Instance] = []
    for year in sorted(years, reverse=True):
        folder = repo / str(year)
        if not folder.is_dir():
            continue
        for problem_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
            problem = problem_dir.name
            key = problem.replace("_", "-")  # costas_array (2010) and costas-array (2015): one problem
            if key in chosen:
                continue
            models = sorted(p for p in problem_dir.iterdir() if p.suffix == ".mzn")
            data = sorted(p for p in problem_dir.iterdir() if p.suffix in DATA_SUFFIXES)
            if not models:
                continue
            if data and len(models) > 1:
                named = [m for m in models if m.stem == problem]
                if len(named) != 1:
                    continue
                models = named
            pairs = [(models[0], d) for d in data] if data else [(m, None) for m in models]
            step = max(1, len(pairs) // per_problem)
            for model, d in pairs[step // 2 :: step][:per_problem]:
                inst = Instance(problem, year, str(model), str(d) if d else None)
                picked.append(inst)
                chosen.setdefault(key, inst)
    return sorted(picked, key=lambda i: (i.problem, i.name))


def method(inst: Instance, solver: str) -> str:
    """sat, min or max, as MiniZinc reads the model with `solver`'s library (another's may
    not compile it)."""
    name, *flags = shlex.split(solver)
    cmd = ["minizinc", "--solver", name, *flags, "--model-interface-only", inst.model] + (
        [inst.data] if inst.data else []
    )
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
        return str(json.loads(out).get("method", "sat"))
    except (subprocess.TimeoutExpired, ValueError):
        return "unknown"


def solve(inst: Instance, solver: str, limit_s: float, check: bool) -> Run:
    """One run through MiniZinc, its JSON stream read for status, objective and statistics.
    `solver`: a solver's id, then any flags of MiniZinc's for it (`gecode -G std`)."""
    name, *flags = shlex.split(solver)
    cmd = ["minizinc", "--solver", name, *flags, "--time-limit", str(int(limit_s * 1000)), "-s", "--json-stream"]
    cmd += ["--output-objective", "--output-mode", "json"]
    if check and name == "gpu-fzn":
        cmd += ["--fzn-flags", "--check"]
    cmd += [inst.model] + ([inst.data] if inst.data else [])
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit_s + 120, cwd=Path(inst.model).parent)
        out, err, code = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as gone:
        out = gone.stdout.decode(errors="replace") if isinstance(gone.stdout, bytes) else (gone.stdout or "")
        err, code = "killed: no end within the limit plus 120 s", -9
    seconds = time.monotonic() - t0
    run = Run(solver, "UNKNOWN", None, seconds)
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        kind = msg.get("type")
        if kind == "solution":
            run.solutions += 1
            run.status = "SATISFIED"
            value = msg.get("output", {}).get("json", {}).get("_objective")
            if isinstance(value, (int, float)):
                run.objective = value
        elif kind == "status":
            run.status = msg.get("status", run.status)
        elif kind == "statistics":
            run.statistics.update(msg.get("statistics", {}))
        elif kind == "error":
            run.status, run.error = "ERROR", msg.get("message", "")[:300]
    if code not in (0, None) and run.status in ("UNKNOWN", "SATISFIED") and not run.solutions:
        run.status, run.error = "ERROR", (run.error or err.strip().splitlines()[-1:] or [""])[0][:300]
    return run


def better(a: Run, b: Run, sense: str) -> int:
    """1 when a is better than b, -1 when worse, 0 when the challenge would split by time."""
    if a.proven != b.proven:
        return 1 if a.proven else -1
    if a.solved != b.solved:
        return 1 if a.solved else -1
    if sense in ("min", "max") and a.objective is not None and b.objective is not None and a.objective != b.objective:
        return 1 if (a.objective < b.objective) == (sense == "min") else -1
    return 0


def score(a: Run, b: Run, sense: str) -> float:
    """a's share of the instance's point against b."""
    won = better(a, b, sense)
    if won:
        return 1.0 if won > 0 else 0.0
    if not a.solved:
        return 0.0  # neither solved it: no point for either
    total = a.seconds + b.seconds
    return b.seconds / total if total > 0 else 0.5


def contradictions(runs: list[Run], sense: str) -> list[str]:
    """The solvers whose answer another's refutes (see the module's docstring)."""
    wrong = set()
    for a in runs:
        for b in runs:
            if a is b:
                continue
            if a.status == "UNSATISFIABLE" and b.solutions:
                wrong.add(a.solver)
            if sense in ("min", "max") and a.status == "OPTIMAL_SOLUTION" and b.objective is not None:
                if a.objective is not None and (
                    b.objective < a.objective if sense == "min" else b.objective > a.objective
                ):
                    wrong.add(a.solver)  # b holds a solution better than a's "optimum"
    return sorted(wrong)


def merge(files: list[str]) -> list[dict]:
    """One result list from several runs' results.json: an instance's runs of every file
    together, in the order the instances first come; contradictions found again over them all."""
    merged: dict[str, dict] = {}
    for path in files:
        for r in json.loads(Path(path).read_text()):
            into = merged.setdefault(r["instance"], {**r, "runs": []})
            have = {x["solver"] for x in into["runs"]}
            into["runs"] += [x for x in r["runs"] if x["solver"] not in have]
            if into["method"] in ("unknown", "sat") and r["method"] in ("min", "max"):
                into["method"] = r["method"]  # one solver's library may not compile the model
    for r in merged.values():
        r["wrong"] = contradictions([Run(**x) for x in r["runs"]], r["method"])
    return list(merged.values())


def report(results: list[dict], solvers: list[str], limit_s: float) -> str:
    a, b = solvers[0], solvers[1] if len(solvers) > 1 else solvers[0]
    lines = [
        f"| instance | kind | {' | '.join(solvers)} | score {a} : {b} |",
        "|---|---|" + "---|" * len(solvers) + "---|",
    ]
    totals = dict.fromkeys(solvers, 0.0)
    solved = dict.fromkeys(solvers, 0)
    late = dict.fromkeys(solvers, 0)  # runs that ended more than a second past the limit
    wins = dict.fromkeys(solvers, 0)
    wrong: list[str] = []
    compiled = 0
    for r in results:
        runs = {x["solver"]: Run(**x) for x in r["runs"]}
        for s in solvers:  # a merged report's instance that one solver's run never reached
            runs.setdefault(s, Run(s, "ERROR", None, 0.0, error="not run"))
        cells = []
        for s in solvers:
            run = runs[s]
            mark = {"OPTIMAL_SOLUTION": "opt", "UNSATISFIABLE": "unsat", "ALL_SOLUTIONS": "all"}.get(run.status, "")
            what = (
                run.status.lower()
                if run.status in ("UNKNOWN", "ERROR")
                else "unsat"
                if run.status == "UNSATISFIABLE"
                else f"{run.objective if run.objective is not None else 'sol'} {mark}"
            )
            cells.append(f"{what.strip()}, {run.seconds:.1f} s")
            solved[s] += run.solved
            late[s] += run.seconds > limit_s + 1.0
        if len(solvers) > 1:
            sa, sb = score(runs[a], runs[b], r["method"]), score(runs[b], runs[a], r["method"])
            w = better(runs[a], runs[b], r["method"])
            if (a in r["wrong"]) != (b in r["wrong"]):  # a refuted answer scores nothing
                w = -1 if a in r["wrong"] else 1
                sa, sb = float(w > 0), float(w < 0)
            totals[a] += sa
            totals[b] += sb
            if w:
                wins[a if w > 0 else b] += 1
            cells.append(f"{sa:.2f} : {sb:.2f}")
        else:
            cells.append("")
        wrong += [f"{r['instance']}: {s}" for s in r["wrong"]]
        lines.append(f"| {r['instance']} | {r['method']} | {' | '.join(cells)} |")
        # a model MiniZinc compiles for no solver (written for MiniZinc 1, say) is no measure of one
        compiled += any(runs[s].status != "ERROR" for s in solvers)
    n = len(results)
    lines.append("")
    lines.append(
        f"{n} instances, limit {limit_s:g} s. Solved (a solution or a proof): "
        + ", ".join(f"{s} {solved[s]} ({100.0 * solved[s] / max(n, 1):.1f} %)" for s in solvers)
        + f"; of the {compiled} that some solver compiles: "
        + ", ".join(f"{s} {100.0 * solved[s] / max(compiled, 1):.1f} %" for s in solvers)
        + ". Runs that ended more than 1 s past the limit: "
        + ", ".join(f"{s} {late[s]}" for s in solvers)
        + "."
    )
    if len(solvers) > 1:
        lines.append(f"Score {a} {totals[a]:.1f}, {b} {totals[b]:.1f}; better on {wins[a]} and {wins[b]} instances.")
    lines.append("Contradicted answers: " + ("; ".join(wrong) if wrong else "none") + ".")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fzn_gpu.bench.challenge", description=__doc__.splitlines()[0])
    ap.add_argument("--repo", help="a checkout of github.com/MiniZinc/mzn-challenge (not with --merge)")
    ap.add_argument("--out", required=True, help="folder for results.json and report.md")
    ap.add_argument("--limit", type=float, default=20.0, help="seconds a run (MiniZinc's --time-limit)")
    ap.add_argument("--per-problem", type=int, default=1)
    ap.add_argument(
        "--solvers",
        default="gpu-fzn,gecode -G std",
        help="comma-separated, each a solver's id and MiniZinc flags for it (Debian's Gecode 6.2 library does not "
        "compile many challenge models through MiniZinc 2.6: its inverse; -G std gives it the standard library's)",
    )
    ap.add_argument("--years", default="2008-2019", help="FIRST-LAST")
    ap.add_argument("--problems", type=int, default=0, help="N problems spread evenly over the selection's")
    ap.add_argument("--only", type=int, default=0, help="the first N instances of the selection")
    ap.add_argument("--range", default="", help="A:B, the selection's instances A to B-1 (from 0)")
    ap.add_argument("--list", action="store_true", help="print the selection and stop")
    ap.add_argument("--merge", nargs="+", metavar="RESULTS", help="one report of these results.json files, in --out")
    ap.add_argument("--no-check", action="store_true", help="fzn-gpu without --check")
    args = ap.parse_args(argv)
    if args.merge:
        results = merge(args.merge)
        solvers = list(dict.fromkeys(x["solver"] for r in results for x in r["runs"]))
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(json.dumps(results, indent=1))
        text = report(results, solvers, args.limit)
        (out / "report.md").write_text(text)
        print(text)
        return 1 if any(r["wrong"] for r in results) else 0
    if not args.repo:
        ap.error("--repo is required (a checkout of github.com/MiniZinc/mzn-challenge)")
    first, last = (int(y) for y in args.years.split("-"))
    instances = select(Path(args.repo).resolve(), range(first, last + 1), args.per_problem)  # runs cd to the model
    if args.problems:
        names = sorted({i.problem for i in instances})
        keep = {names[int(k * len(names) / args.problems)] for k in range(min(args.problems, len(names)))}
        instances = [i for i in instances if i.problem in keep]
    if args.only:
        instances = instances[: args.only]
    if args.range:
        a, _, b = args.range.partition(":")
        instances = instances[int(a or 0) : int(b) if b else None]
    if args.list:
        for inst in instances:
            print(inst.year, inst.name, inst.model, inst.data or "")
        return 0
    solvers = args.solvers.split(",")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for k, inst in enumerate(instances, 1):
        sense = method(inst, solvers[0])
        runs = [solve(inst, s, args.limit, not args.no_check) for s in solvers]
        wrong = contradictions(runs, sense)
        results.append(
            {**asdict(inst), "instance": inst.name, "method": sense, "runs": [asdict(r) for r in runs], "wrong": wrong}
        )
        print(
            f"[{k}/{len(instances)}] {inst.name} ({sense}): "
            + "; ".join(f"{r.solver} {r.status} {r.objective} {r.seconds:.1f}s" for r in runs)
            + (f"  WRONG: {wrong}" if wrong else ""),
            file=sys.stderr,
            flush=True,
        )
        (out / "results.json").write_text(json.dumps(results, indent=1))
    (out / "report.md").write_text(report(results, solvers, args.limit))
    print(report(results, solvers, args.limit))
    return 1 if any(r["wrong"] for r in results) else 0


if __name__ == "__main__":
    if not settings.is_set("PYTHONUNBUFFERED"):
        settings.export("PYTHONUNBUFFERED", "1")
    sys.exit(main())
