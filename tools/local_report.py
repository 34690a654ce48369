#!/usr/bin/env python3
"""Which satisfaction models Adaptive Search takes, and how it does: for every satisfaction
model of a corpus (hakank's, compiled by tools/compile_corpus.py) the network (groups,
invariants, soft constraints) or why there is none, and for those it takes, `--engine
adaptive`'s answer within a limit, each solution checked by the independent checker; models
the manifest calls unsatisfiable must get no solution. Writes JSON and a Markdown summary
(docs/bench/measurements.md keeps one). Exit status 1 on any wrong answer or crash.

    python3 tools/compile_corpus.py ../shared/corpus/hakank FZN
    python3 tools/local_report.py ../shared/corpus/hakank FZN --out OUT [-t 2]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from fzn_gpu.flatzinc.lower import load  # noqa: E402
from fzn_gpu.local.network import NotLocal, build  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("fzn")
    ap.add_argument("--out", required=True)
    ap.add_argument("-t", type=float, default=2.0, help="seconds a model")
    args = ap.parse_args()
    entries = json.load(open(os.path.join(args.corpus, "manifest.json")))["entries"]
    rows, reasons, bad = [], collections.Counter(), 0
    for e in entries:
        if e["kind"] != "sat" or {"set-vars", "float-vars"} & set(e.get("tags", [])):
            continue
        fzn = os.path.join(args.fzn, e["name"] + ".fzn")
        if not os.path.exists(fzn):
            continue
        row = {"name": e["name"], "status": e["status"]}
        try:
            net = build(load(fzn))
            row["network"] = net.describe()
        except NotLocal as why:
            reason = re.sub(r" \(line \d+\)", "", str(why))
            reasons[re.sub(r"its variable \S+", "its variable X", reason)] += 1
            row["network"] = None
            rows.append(row)
            continue
        except Exception as err:  # a crash of the network's building: a bug
            row["crash"] = f"{type(err).__name__}: {err}"
            bad += 1
            rows.append(row)
            continue
        t0 = time.monotonic()
        r = subprocess.run(
            [sys.executable, "-m", "fzn_gpu", "--engine", "adaptive", "--check", "-t", str(int(args.t * 1000)), fzn],
            capture_output=True,
            text=True,
            timeout=args.t + 60,
            cwd=Path(__file__).resolve().parent.parent,
        )
        row["wall_s"] = round(time.monotonic() - t0, 2)
        row["solved"] = "----------" in r.stdout
        wrong = r.returncode != 0 or "Traceback" in r.stderr or (row["solved"] and e["status"] == "UNSATISFIABLE")
        if wrong:
            row["wrong"] = (r.stderr or r.stdout)[-300:]
            bad += 1
        rows.append(row)
        print(
            f"{e['name']:40s} {row['wall_s']:6.2f}s {'solved' if row['solved'] else '-':7s} "
            f"{'WRONG' if wrong else ''} {row['network']}",
            flush=True,
        )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "local_report.json").write_text(json.dumps(rows, indent=1))
    taken = [r for r in rows if r.get("network")]
    solved = [r for r in taken if r.get("solved")]
    sat = [r for r in taken if r["status"] == "SATISFIED"]
    lines = [
        f"Satisfaction models (no set or float variables): {len(rows)}; a network for {len(taken)} "
        f"({len(sat)} of them satisfiable by the manifest); solved in {args.t:g} s: {len(solved)} "
        f"(of the satisfiable {len([r for r in sat if r.get('solved')])}); wrong or crashed: {bad}.",
        "",
        "| why not (count) |",
        "|---|",
    ] + [f"| {why} ({n}) |" for why, n in reasons.most_common()]
    (out / "local_report.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
