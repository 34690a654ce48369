#!/usr/bin/env python3
"""Differential fuzzing of the native globals through MiniZinc: random small models over one
global each (mznlib's declarations, the fzn_gpu_* wrappers, index sets not starting at 1,
sizes past brute force), all solutions counted by `minizinc --solver gpu-fzn --check` (every
solution through the independent checker, a rejected one fails the run) and by Gecode with
MiniZinc's own decompositions (`-G std`). Any difference in the counts is a disagreement.

    python3 tools/fuzz_globals.py [--seeds 0:200]

Exit status 1 on any disagreement (the model is written to fuzz_globals_SEED.mzn)."""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path

KINDS = [
    "circuit",
    "gcc",
    "regular",
    "table",
    "cumulative",
    "binpack",
    "inverse",
    "lex",
    "nvalue",
    "count",
    "among",
    "subcircuit",
    "diffn",
]


def model(seed: int) -> tuple[str, str]:
    """A random satisfaction model over one of the native globals (KINDS), with index sets
    that need not start at 1: (the global, the MiniZinc text)."""
    r = random.Random(seed)
    k = r.choice(KINDS)
    if k == "circuit":
        n = r.randint(4, 7)
        off = r.randint(-1, 2)
        body = f"array[{off}..{off + n - 1}] of var {off}..{off + n - 1}: x;\nconstraint circuit(x);\nconstraint x[{off}] != {off + 1};\n"
    elif k == "subcircuit":
        n = r.randint(3, 7)
        off = r.randint(-1, 2)
        body = (
            f"array[{off}..{off + n - 1}] of var {off}..{off + n - 1}: x;\nconstraint subcircuit(x);\n"
            f"constraint x[{off}] != {off + 1};\nconstraint x[{off + n - 1}] != {off + n - 1};\n"
        )
    elif k == "diffn":
        n = r.randint(2, 4)
        w = [r.randint(1, 3) for _ in range(n)]
        h = [r.randint(0, 2) for _ in range(n)]
        body = (
            f"array[1..{n}] of var 0..{r.randint(2, 4)}: x;\narray[1..{n}] of var 0..{r.randint(1, 3)}: y;\n"
            f"constraint diffn(x, y, {w}, {h});\n"
        )
    elif k == "gcc":
        n = r.randint(4, 7)
        body = f"array[1..{n}] of var 0..3: x;\narray[1..3] of var 0..{n}: c;\nconstraint global_cardinality(x, [0, 1, 2], c);\nconstraint c[1] >= c[2];\n"
    elif k == "regular":
        q, s, n = r.randint(2, 5), r.randint(2, 3), r.randint(5, 9)
        d = " | ".join(", ".join(str(0 if r.random() < 0.15 else r.randint(1, q)) for _ in range(s)) for _ in range(q))
        F = sorted(r.sample(range(1, q + 1), r.randint(1, q)))
        body = f"array[1..{n}] of var 1..{s}: x;\nconstraint regular(x, {q}, {s}, [| {d} |], 1, {{{', '.join(map(str, F))}}});\n"
    elif k == "table":
        n, m = r.randint(2, 4), r.randint(3, 12)
        rows = " | ".join(", ".join(str(r.randint(0, 3)) for _ in range(n)) for _ in range(m))
        body = f"array[1..{n}] of var 0..3: x;\narray[1..{n}] of var 0..3: y;\nconstraint table(x, [| {rows} |]);\nconstraint table(y, [| {rows} |]);\nconstraint x[1] != y[1];\n"
    elif k == "cumulative":
        n = r.randint(3, 4)
        d = [r.randint(1, 3) for _ in range(n)]
        q = [r.randint(1, 2) for _ in range(n)]
        body = f"array[1..{n}] of var 0..5: s;\nconstraint cumulative(s, {d}, {q}, {r.randint(2, 3)});\n"
    elif k == "binpack":
        n = r.randint(3, 5)
        w = [r.randint(1, 4) for _ in range(n)]
        body = f"array[1..{n}] of var 1..3: b;\narray[1..3] of var 0..{sum(w)}: load;\nconstraint bin_packing_load(load, b, {w});\nconstraint load[1] <= {r.randint(2, 6)};\n"
    elif k == "inverse":
        n = r.randint(3, 6)
        body = f"array[1..{n}] of var 1..{n}: f;\narray[0..{n - 1}] of var 1..{n}: g;\nconstraint inverse(f, array1d(1..{n}, g));\nconstraint f[1] != 1;\n"
    elif k == "lex":
        n = r.randint(2, 4)
        body = f"array[1..{n}] of var 0..2: x;\narray[1..{n}] of var 0..2: y;\nconstraint lex_less(x, y);\nconstraint lex_lesseq(y, [2 | i in 1..{n}]);\n"
    elif k == "among":
        n = r.randint(3, 6)
        values = sorted(r.sample(range(0, 5), r.randint(1, 3)))
        body = (
            f"array[1..{n}] of var 0..4: x;\nvar 0..{n}: m;\nconstraint among(m, x, {{{', '.join(map(str, values))}}});\n"
            f"constraint m >= {r.randint(1, 3)};\nconstraint among({r.randint(0, 2)}, x, {{{r.randint(0, 4)}}});\n"
        )
    elif k == "nvalue":
        n = r.randint(3, 5)
        body = f"array[1..{n}] of var 0..3: x;\nvar 0..{n}: m;\nconstraint nvalue(m, x);\nconstraint m <= {r.randint(1, 3)};\n"
    else:
        n = r.randint(3, 6)
        body = f"array[1..{n}] of var 0..3: x;\nvar 0..3: y;\nvar 0..{n}: c;\nconstraint count(x, y, c);\nconstraint c >= 2;\n"
    return k, 'include "globals.mzn";\n' + body + "solve satisfy;\n"


def count(solver: list[str], path: Path) -> int | None:
    """The solutions `minizinc -a` prints, or None when it fails or does not finish."""
    try:
        p = subprocess.run(["minizinc", *solver, "-a", str(path)], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None
    if p.returncode != 0 or "==========" not in p.stdout and "=====UNSATISFIABLE=====" not in p.stdout:
        return None
    return p.stdout.count("----------")


def run(seed: int, folder: Path) -> tuple[str, int | None, int | None]:
    """One seed: (the global, fzn-gpu's count, Gecode's count)."""
    kind, text = model(seed)
    path = folder / f"fuzz_globals_{seed}.mzn"
    path.write_text(text)
    return kind, count(["--solver", "gpu-fzn", "--check"], path), count(["--solver", "gecode", "-G", "std"], path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="0:100", help="A:B, the seeds A..B-1")
    args = ap.parse_args()
    a, b = map(int, args.seeds.split(":"))
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(a, b):
            kind, ours, ref = run(seed, Path(tmp))
            if ours is None or ours != ref:
                bad += 1
                Path(f"fuzz_globals_{seed}.mzn").write_text(model(seed)[1])
                print(f"seed {seed} ({kind}): fzn-gpu {ours}, Gecode {ref}")
    print(f"{b - a - bad} agree, {bad} disagree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
