"""Parse+lower throughput (constraints per second) and peak memory, on the largest FlatZinc
files of a folder and on a generated file of N constraints.

    python -m fzn_gpu.bench.frontend --fzn-dir DIR --top 5 --generate 1000000
Prints a markdown table (docs/BENCHMARKS.md keeps the figures)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def generate(path: Path, n_constraints: int, n_vars: int = 100_000) -> None:
    """A chain of linear constraints over n_vars variables, MiniZinc-style names."""
    with open(path, "w") as f:
        for i in range(n_vars):
            f.write(f"var 0..100: X_INTRODUCED_{i}_;\n")
        for c in range(n_constraints):
            a, b, d = c % n_vars, (c * 7 + 1) % n_vars, (c * 13 + 5) % n_vars
            f.write(
                f"constraint int_lin_le([1,2,-3],[X_INTRODUCED_{a}_,X_INTRODUCED_{b}_,X_INTRODUCED_{d}_],{c % 50});\n"
            )
        f.write("solve satisfy;\n")


def measure_one(path: str) -> dict:
    """Parse and lower in a child process so that peak memory is this file's alone."""
    code = (
        "import time,resource,sys;from fzn_gpu.lower import load;t=time.perf_counter();m=load(sys.argv[1]);"
        "dt=time.perf_counter()-t;print(m.n_constraints(),len(m.vars),dt,"
        "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, check=True).stdout.split()
    n, nv, dt, rss = int(out[0]), int(out[1]), float(out[2]), int(out[3])
    return {
        "file": os.path.basename(path),
        "constraints": n,
        "variables": nv,
        "seconds": dt,
        "constraints_per_s": n / dt if dt else 0.0,
        "peak_mib": rss / 1024,
        "mib": os.path.getsize(path) / 2**20,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fzn-dir", help="folder of .fzn files (e.g. from tools/compile_corpus.py)")
    ap.add_argument("--top", type=int, default=5, help="how many of the largest files")
    ap.add_argument("--generate", type=int, default=0, help="also a generated file of this many constraints")
    args = ap.parse_args()
    rows = []
    if args.fzn_dir:
        files = sorted(Path(args.fzn_dir).glob("*.fzn"), key=lambda p: p.stat().st_size, reverse=True)[: args.top]
        rows += [measure_one(str(f)) for f in files]
    if args.generate:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / f"generated_{args.generate}.fzn"
            generate(path, args.generate)
            rows.append(measure_one(str(path)))
    print("| file | MiB | constraints | variables | parse+lower s | constraints/s | peak memory MiB |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['file']} | {r['mib']:.1f} | {r['constraints']} | {r['variables']} | {r['seconds']:.2f} | "
            f"{r['constraints_per_s']:.0f} | {r['peak_mib']:.0f} |"
        )


if __name__ == "__main__":
    main()
