"""One report from several bench runs (results.json each), for a benchmark split over device
calls to fit their time limit:

    python -m fzn_gpu.bench.merge OUT a/results.json b/results.json:'(H unbounded)'

A tag after the file name is appended to that file's fzn-gpu variant names, so that runs of
another setting stay apart. Writes OUT/results.json, OUT/BENCHMARKS.md and the plots."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .__main__ import markdown, plots


def merge(files: list[str]) -> tuple[list[dict], list[str]]:
    by_label: dict[str, dict] = {}
    solvers: list[str] = []
    for spec in files:
        path, _, tag = spec.partition(":")
        for res in json.loads(Path(path).read_text()):
            into = by_label.setdefault(res["label"], {**res, "runs": {}})
            for name, run in res["runs"].items():
                name = f"{name} {tag}" if tag and name.startswith("gpu-fzn") else name
                into["runs"][name] = run
                if name not in solvers:
                    solvers.append(name)
    order = sorted(solvers, key=lambda s: (s.startswith("gecode"), s))  # fzn-gpu first, then Gecode
    return list(by_label.values()), order


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("files", nargs="+", help="results.json files, each optionally FILE:TAG")
    ap.add_argument("--machine", default="merged")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results, solvers = merge(args.files)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    md = markdown(results, solvers, args.machine)
    pics = plots(results, solvers, out)
    (out / "BENCHMARKS.md").write_text(md + "\n" + "".join(f"![{p}]({p})\n" for p in pics))
    print(md)


if __name__ == "__main__":
    main()
