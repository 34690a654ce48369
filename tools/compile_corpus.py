#!/usr/bin/env python3
"""Compile every model of a corpus (manifest.json) to FlatZinc with fzn-gpu's library, each in
a folder of its own (hakank's folder shadows standard library files).

    python3 tools/compile_corpus.py ../shared/corpus/hakank OUT_DIR [-j 2]
Writes OUT_DIR/NAME.fzn and OUT_DIR/compile.json (which models failed to compile, and why)."""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import tempfile


def compile_one(corpus: str, out: str, entry: dict, timeout: float = 120) -> dict:
    with tempfile.TemporaryDirectory() as work:
        for f in [entry["model"], entry.get("data")] + entry.get("includes", []):
            if f:
                shutil.copy(os.path.join(corpus, f), work)
        fzn = os.path.join(out, entry["name"] + ".fzn")
        cmd = ["minizinc", "-c", "--solver", "gpu-fzn", entry["model"]] + ([entry["data"]] if entry.get("data") else [])
        cmd += ["--fzn", fzn, "--ozn", os.path.join(work, "model.ozn")]
        try:
            p = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=timeout)
            return {"name": entry["name"], "ok": p.returncode == 0 and os.path.exists(fzn), "stderr": p.stderr[-400:]}
        except subprocess.TimeoutExpired:
            return {"name": entry["name"], "ok": False, "stderr": "compilation timed out"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("out")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    entries = json.load(open(os.path.join(args.corpus, "manifest.json")))["entries"]
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda e: compile_one(args.corpus, args.out, e), entries))
    json.dump(results, open(os.path.join(args.out, "compile.json"), "w"), indent=1)
    bad = [r for r in results if not r["ok"]]
    print(f"{len(results) - len(bad)} compiled, {len(bad)} failed")
    for r in bad:
        print(r["name"], r["stderr"].strip().splitlines()[-1:] if r["stderr"] else "")


if __name__ == "__main__":
    main()
