#!/usr/bin/env python3
"""Which optimisation models bucket elimination takes, and how it does: for every optimisation
model of a corpus (hakank's, with its manifest) and of the benchmark suite, the network's
plan (induced width, largest table, work) or why there is none, whether the default engine
would run it beside the portfolio, and for those it takes, `fzn-gpu --engine bucket --check`'s
answer and time beside branch and bound's (`--engine complete`) and against the reference
(Gecode's optimum and time where it proved one). Writes a JSON
file and a Markdown table (docs/bench/measurements.md keeps one).

    python3 tools/bucket_report.py --corpus ../shared/corpus/hakank --bench models/bench --out OUT [-t 60]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from compile_corpus import compile_one  # noqa: E402

from fzn_gpu.bucket.network import NotDecomposable  # noqa: E402
from fzn_gpu.engine.bucket import prepare, worth_running  # noqa: E402
from fzn_gpu.flatzinc.lower import load  # noqa: E402


def plan_row(fzn: str) -> dict:
    try:
        model = load(fzn)
    except Exception as err:  # a model the front end refuses: said, not planned
        return {"plan": f"not read: {str(err)[:120]}"}
    t0 = time.perf_counter()
    try:
        prep = prepare(model, None)
    except NotDecomposable as why:
        return {"plan": str(why)[:160], "plan_s": round(time.perf_counter() - t0, 3)}
    except Exception as err:  # a bug in planning: recorded, and the run goes on
        return {"plan": f"PLANNING FAILED: {type(err).__name__}: {str(err)[:120]}"}
    p = prep.plan
    return {
        "plan": "ok",
        "width": p.width,
        "largest": p.largest,
        "work": p.total,
        "plan_s": round(prep.seconds, 3),
        "auto": worth_running(prep, None),
    }


def solve_row(fzn: str, limit_s: int, engine: str = "bucket") -> dict:
    """`fzn-gpu --engine ENGINE --check`'s answer and wall time."""
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "fzn_gpu", "--engine", engine, "--check", "-s", "-t", str(limit_s * 1000), fzn],
        capture_output=True,
        text=True,
        timeout=limit_s + 30,
        cwd=Path(__file__).resolve().parent.parent,
    )
    wall = time.monotonic() - t0
    obj = re.findall(r"objective=(-?\d+)", r.stdout)
    status = (
        "OPTIMAL"
        if "==========" in r.stdout
        else "UNSATISFIABLE"
        if "=====UNSATISFIABLE" in r.stdout
        else "ERROR"
        if r.returncode
        else "UNKNOWN"
    )
    return {
        "status": status,
        "objective": int(obj[-1]) if obj else None,
        "wall_s": round(wall, 2),
        "stderr": r.stderr[-300:] if r.returncode else "",
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus")
    ap.add_argument("--bench")
    ap.add_argument("--out", required=True)
    ap.add_argument("-t", "--limit", type=int, default=60, help="seconds for each model bucket elimination takes")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        if args.bench:
            from fzn_gpu.bench.__main__ import with_data

            with_data(Path(args.bench))  # its data files, where instances.py writes them
            suite = json.load(open(os.path.join(args.bench, "suite.json")))["instances"]
            for inst in suite:
                if inst["mode"] != "opt":
                    continue
                name = f"{inst['model'][:-4]}:{inst['data'][:-4]}"
                fzn = os.path.join(work, name.replace(":", "_") + ".fzn")
                subprocess.run(
                    [
                        "minizinc",
                        "-c",
                        "--solver",
                        "gpu-fzn",
                        os.path.join(args.bench, inst["model"]),
                        os.path.join(args.bench, "data", inst["data"]),
                        "--fzn",
                        fzn,
                        "--ozn",
                        os.path.join(work, "x.ozn"),
                    ],
                    capture_output=True,
                )
                rows.append({"name": name, "source": "bench", "fzn": fzn})
        if args.corpus:
            entries = json.load(open(os.path.join(args.corpus, "manifest.json")))["entries"]
            for e in entries:
                if e["kind"] == "sat" or "float-vars" in e.get("tags", []) or "set-vars" in e.get("tags", []):
                    continue
                got = compile_one(args.corpus, work, e)
                rows.append(
                    {
                        "name": e["name"],
                        "source": "corpus",
                        "fzn": os.path.join(work, e["name"] + ".fzn"),
                        "compiled": got["ok"],
                        "reference": e["status"],
                        "ref_objective": e.get("objective"),
                        "gecode_s": e.get("gecode_s"),
                    }
                )
        for row in rows:
            if row.get("compiled", True) and os.path.exists(row["fzn"]):
                row.update(plan_row(row["fzn"]))
                if row["plan"] == "ok":
                    row.update(solve_row(row["fzn"], args.limit))
                    bnb = solve_row(row["fzn"], args.limit, "complete")
                    row["bnb_status"], row["bnb_s"] = bnb["status"], bnb["wall_s"]
                    ref = row.get("ref_objective")
                    if row.get("reference") == "OPTIMAL" and row["status"] == "OPTIMAL":
                        row["agrees"] = row["objective"] == ref
            row.pop("fzn")
            print(json.dumps(row), flush=True)
    json.dump(rows, open(os.path.join(args.out, "bucket_report.json"), "w"), indent=1)
    taken = [r for r in rows if r.get("plan") == "ok"]
    with open(os.path.join(args.out, "bucket_report.md"), "w") as md:
        md.write(
            "| model | width | largest table | work | default engine runs it | bucket elimination | objective | "
            "wall s | branch and bound (--engine complete) | Gecode's reference (2-core, compilation included) |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n"
        )
        for r in taken:
            gecode = (
                f"{r.get('reference', '')} {r.get('ref_objective', '')} in {r['gecode_s']} s"
                if r.get("gecode_s") is not None
                else ""
            )
            md.write(
                f"| {r['name']} | {r['width']} | {r['largest']:,} | {r['work']:,} | {'yes' if r['auto'] else 'no'} | "
                f"{r.get('status')} | {r.get('objective')} | {r.get('wall_s')} | "
                f"{r.get('bnb_status')} in {r.get('bnb_s')} s | {gecode} |\n"
            )
        reasons: dict[str, int] = {}
        for r in rows:
            if r.get("plan") not in (None, "ok"):
                key = re.sub(r"\(line \d+\)|[\d,]+", "N", r["plan"])[:90]
                reasons[key] = reasons.get(key, 0) + 1
        md.write(f"\n{len(taken)} of {len(rows)} optimisation models taken; the others, by reason:\n\n")
        for key, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
            md.write(f"- {n}: {key}\n")
    wrong = [r for r in taken if r.get("agrees") is False]
    print(f"{len(taken)} taken of {len(rows)}; {len(wrong)} disagree with the reference", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
