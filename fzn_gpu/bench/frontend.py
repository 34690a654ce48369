"""Parse+lower throughput (constraints per second) and peak memory, on the largest FlatZinc
files of a folder, on a generated chain of N linear constraints, and on a generated file of
M megabytes like a MiniZinc Challenge model's.

    python -m fzn_gpu.bench.frontend --fzn-dir DIR --top 5 --generate 1000000 --generate-mb 77
Prints a markdown table (docs/bench/measurements.md keeps the figures)."""

from __future__ import annotations

import argparse
import os
import random
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


def generate_mix(path: Path, megabytes: float, seed: int = 1) -> tuple[int, int]:
    """A FlatZinc file of about `megabytes` like a MiniZinc Challenge model's, as MiniZinc
    writes it (no spaces in arguments): decomposed resources and time-indexed schedules
    (int_lin_le_reif, int_le_reif, bool_clause, array_bool_and/or defining bools), sums
    (int_lin_le, half of them over shared parameter arrays), int_lin_ne, element over a literal
    array, int_le, int_max, and an objective summing many variables. Every constraint holds on
    a planted assignment, so the model has a solution at any size. Seeded. Returns
    (variables, constraints)."""
    rng = random.Random(seed)
    target = int(megabytes * 1_000_000)
    n_int = max(200, target // 400)
    n_bool = n_int
    ubs = [rng.choice((9, 63, 100, 1000)) for _ in range(n_int)]
    val = [rng.randint(0, ub) for ub in ubs]  # the planted solution
    with_value: dict[int, list[int]] = {}
    for i, v in enumerate(val):
        with_value.setdefault(v, []).append(i)
    bval: list[bool] = []  # the defined bools' planted values, in order of definition
    table = [rng.randint(0, 63) for _ in range(64)]
    pool = []  # (name, coefficients) of the shared parameter arrays
    head = ["predicate fzn_all_different_int(array [int] of var int: x);\n"]
    head.append(f"array [1..64] of int: table = [{','.join(map(str, table))}];\n")
    for i in range(200):
        coeffs = [rng.choice((1, -1, 2, 3, -5, 7)) for _ in range(rng.randint(2, 4))]
        pool.append((f"X_INTRODUCED_C{i}_", coeffs))
        head.append(f"array [1..{len(coeffs)}] of int: {pool[-1][0]} = [{','.join(map(str, coeffs))}];\n")
    for i in range(n_int):
        head.append(f"var 0..{ubs[i]}: X_INTRODUCED_{i}_{':: output_var' if i < 10 else ''};\n")
    for i in range(n_bool):
        head.append(f"var bool: X_INTRODUCED_B{i}_:: var_is_introduced :: is_defined_var;\n")
    head.append("var 0..1000000000: objective:: output_var:: is_defined_var;\n")
    shown = min(n_int, 5000)
    head.append(
        f"array [1..{shown}] of var int: xs:: output_array([1..{shown}]) = "
        f"[{','.join(f'X_INTRODUCED_{i}_' for i in range(shown))}];\n"
    )

    def x() -> int:
        return rng.randrange(n_int)

    def name(i: int) -> str:
        return f"X_INTRODUCED_{i}_"

    def bname(j: int) -> str:
        return f"X_INTRODUCED_B{j}_"

    def coefficients() -> tuple[str, list[int]]:
        """A literal array, or the name of a parameter array (MiniZinc shares repeated ones)."""
        if rng.random() < 0.5:
            coeffs = [rng.choice((1, -1, 2, 3, -5, 7)) for _ in range(rng.randint(2, 4))]
            return f"[{','.join(map(str, coeffs))}]", coeffs
        return pool[rng.randrange(len(pool))]

    def define(value: bool) -> str | None:
        """The next bool to define, its planted value `value`; None once all are."""
        if len(bval) >= n_bool:
            return None
        bval.append(value)
        return bname(len(bval) - 1)

    def some_bools(k: int) -> list[int]:
        return [rng.randrange(len(bval)) for _ in range(k)] if bval else []

    constraints = 0
    with open(path, "w") as out:
        written = 0
        for chunk in head:
            out.write(chunk)
            written += len(chunk)
        while written < target - 2000:
            r = rng.random()
            coeff_text, coeffs = coefficients()
            line = None
            if r < 0.22:
                xs = [x() for _ in coeffs]
                rhs = rng.randint(0, 500)
                d = define(sum(c * val[i] for c, i in zip(coeffs, xs)) <= rhs)
                if d:
                    line = (
                        f"constraint int_lin_le_reif({coeff_text},[{','.join(map(name, xs))}],{rhs},{d})"
                        f":: defines_var({d});\n"
                    )
            elif r < 0.36:
                a, b = x(), x()
                d = define(val[a] <= val[b])
                if d:
                    line = f"constraint int_le_reif({name(a)},{name(b)},{d}):: defines_var({d});\n"
            elif r < 0.50 and bval:
                pos, neg = some_bools(rng.randint(1, 3)), some_bools(rng.randint(0, 2))
                if not any(bval[j] for j in pos) and all(bval[j] for j in neg):
                    (pos if rng.random() < 0.5 else neg).append(rng.randrange(len(bval)))
                    if not any(bval[j] for j in pos) and all(bval[j] for j in neg):
                        true = [j for j in range(max(0, len(bval) - 50), len(bval)) if bval[j]]
                        if not true:
                            continue
                        pos.append(rng.choice(true))
                line = f"constraint bool_clause([{','.join(map(bname, pos))}],[{','.join(map(bname, neg))}]);\n"
            elif r < 0.58 and bval:
                conj = rng.random() < 0.5
                bs = some_bools(rng.randint(2, 4))
                d = define(all(bval[j] for j in bs) if conj else any(bval[j] for j in bs))
                if d:
                    op = "array_bool_and" if conj else "array_bool_or"
                    line = f"constraint {op}([{','.join(map(bname, bs))}],{d}):: defines_var({d});\n"
            elif r < 0.74:
                xs = [x() for _ in coeffs]
                rhs = sum(c * val[i] for c, i in zip(coeffs, xs)) + rng.randint(0, 50)
                line = f"constraint int_lin_le({coeff_text},[{','.join(map(name, xs))}],{rhs});\n"
            elif r < 0.82:
                a, b = x(), x()
                c = rng.choice([k for k in range(-3, 4) if k != val[a] - val[b]])
                line = f"constraint int_lin_ne([1,-1],[{name(a)},{name(b)}],{c});\n"
            elif r < 0.90:
                indices = with_value.get(rng.randint(1, 9))
                index = rng.choice(indices) if indices else -1
                results = with_value.get(table[val[index] - 1]) if index >= 0 else None
                if results:
                    line = f"constraint array_int_element({name(index)},table,{name(rng.choice(results))});\n"
            elif r < 0.95:
                a, b = x(), x()
                if val[a] > val[b]:
                    a, b = b, a
                line = f"constraint int_le({name(a)},{name(b)});\n"
            else:
                a, b = x(), x()
                results = with_value.get(max(val[a], val[b]))
                if results:
                    line = f"constraint int_max({name(a)},{name(b)},{name(rng.choice(results))});\n"
            if line:
                out.write(line)
                written += len(line)
                constraints += 1
        terms = [name(i) for i in range(min(n_int, 1000))]
        out.write(
            f"constraint int_lin_eq([{','.join(['1'] * len(terms))},-1],[{','.join(terms)},objective],0)"
            ":: defines_var(objective);\n"
        )
        out.write("solve minimize objective;\n")
    return n_int + n_bool + 1, constraints + 1


def measure_one(path: str) -> dict:
    """Parse and lower in a child process so that peak memory is this file's alone."""
    code = (
        "import time,resource,sys;from fzn_gpu.flatzinc.lower import load;t=time.perf_counter();m=load(sys.argv[1]);"
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
    ap.add_argument("--generate-mb", type=float, default=0, help="also a challenge-like file of this many megabytes")
    ap.add_argument("--seed", type=int, default=1, help="the challenge-like file's seed")
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
    if args.generate_mb:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / f"challenge_like_{args.generate_mb:g}mb.fzn"
            generate_mix(path, args.generate_mb, args.seed)
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
