#!/usr/bin/env python3
"""Mutation fuzzing of fzn-gpu's front end: malformed FlatZinc must end in one clear error
naming the file and line, never in a traceback or a hang.

Each seed takes a valid model (tools/fuzz.py's random models, or a FlatZinc file of --corpus)
and mutates it one to three times: lines deleted, duplicated or truncated, tokens swapped,
numbers made huge, negative or thousands of digits long, arguments nested deeply, ranges
emptied or reversed, array literals shortened or lengthened, elements of the wrong type. The
result goes through what the command line does before any device runs (parse, lower, pack for
the device), in-process; each input ends in one of:
  ok          accepted (a mutation may leave valid FlatZinc)
  error       an FznError that names the file and the line
  unlocated   an FznError without a line (counted apart; reported with the input)
  traceback   any other exception: a bug
  hang        longer than --timeout seconds: a bug

    python3 tools/fuzz_frontend.py --seeds 0:100000 --out fuzz-frontend-out
    python3 tools/fuzz_frontend.py --seeds 0:2000 --corpus DIR_OF_FZN

Failing inputs are saved as OUT/<outcome>-N.fzn with OUT/<outcome>-N.txt (the error). Exit
status 1 on a traceback or a hang.
"""

from __future__ import annotations

import argparse
import collections
import random
import re
import signal
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fzn_gpu.errors import FznError  # noqa: E402

NUMBER = re.compile(r"-?\b\d+\b")
RANGE = re.compile(r"(-?\d+)\.\.(-?\d+)")
LITERAL = re.compile(r"\[([^\[\]]*)\]")
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|-?\d+(?:\.\d+)?|\.\.|::|\S")
WRONG_TYPES = ("true", "false", "1.5", "{1, 2}", "1..3", '"text"', "x_undeclared", "[]")
HUGE = (
    "2147483647",
    "-2147483648",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "1" + "0" * 40,
    "9" * 5000,
    "0",
    "-1",
)


class Hang(Exception):
    pass


def _sub_nth(pattern: re.Pattern, text: str, rng: random.Random, repl) -> str:
    """`text` with one match of `pattern` (at random) replaced by repl(match)."""
    found = list(pattern.finditer(text))
    if not found:
        return text
    m = rng.choice(found)
    return text[: m.start()] + repl(m) + text[m.end() :]


def mutate(text: str, rng: random.Random) -> str:
    """One random mutation of a FlatZinc text."""
    lines = text.splitlines(keepends=True)
    op = rng.randrange(12)
    if op == 0 and lines:  # delete a line
        del lines[rng.randrange(len(lines))]
        return "".join(lines)
    if op == 1 and lines:  # duplicate a line
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
        return "".join(lines)
    if op == 2:  # truncate anywhere
        return text[: rng.randrange(len(text) + 1)]
    if op == 3:  # swap two tokens
        toks = list(TOKEN.finditer(text))
        if len(toks) < 2:
            return text
        a, b = sorted(rng.sample(range(len(toks)), 2))
        ta, tb = toks[a], toks[b]
        return text[: ta.start()] + tb.group() + text[ta.end() : tb.start()] + ta.group() + text[tb.end() :]
    if op == 4:  # a huge, negative or endless number
        return _sub_nth(NUMBER, text, rng, lambda m: rng.choice(HUGE))
    if op == 5:  # deep nesting
        depth = rng.choice((50, 1000, 20000))
        return _sub_nth(NUMBER, text, rng, lambda m: "[" * depth + m.group() + "]" * depth)
    if op == 6:  # an empty or reversed range
        return _sub_nth(RANGE, text, rng, lambda m: f"{m.group(2)}..{m.group(1)}" if rng.random() < 0.5 else "1..0")
    if op == 7:  # an array literal one shorter
        return _sub_nth(LITERAL, text, rng, lambda m: "[" + ",".join(m.group(1).split(",")[:-1]) + "]")
    if op == 8:  # an array literal one longer
        return _sub_nth(LITERAL, text, rng, lambda m: "[" + m.group(1) + (", " if m.group(1) else "") + "1]")
    if op == 9:  # an element of the wrong type
        return _sub_nth(NUMBER, text, rng, lambda m: rng.choice(WRONG_TYPES))
    if op == 10:  # a character removed
        i = rng.randrange(max(len(text), 1))
        return text[:i] + text[i + 1 :]
    if op == 11 and lines:  # two lines swapped
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return "".join(lines)
    return text


def base_texts(corpus: Path | None) -> list[str] | None:
    if corpus is None:
        return None
    files = sorted(corpus.rglob("*.fzn"))
    return [f.read_text() for f in files if f.stat().st_size < 200_000]


def base_text(seed: int, corpus: list[str] | None) -> str:
    if corpus:
        return corpus[seed % len(corpus)]
    import fuzz

    return fuzz.make_case(seed).text


def front_end(text: str, name: str = "m.fzn") -> None:
    """What the command line does with a model before any device runs."""
    from fzn_gpu.engine.pack import check_supported, pack
    from fzn_gpu.flatzinc.lower import lower
    from fzn_gpu.flatzinc.parser import parse_items
    from fzn_gpu.options import SolveOptions

    model = lower(parse_items(text, name), name)
    check_supported(model)
    pack(model, SolveOptions())


def _alarm(*_):
    raise Hang()


def fuzz_one(seed: int, corpus: list[str] | None = None, timeout_s: float = 10.0) -> tuple[str, str, str]:
    """(outcome, the mutated text, what it said)."""
    rng = random.Random(seed)
    text = base_text(seed, corpus)
    for _ in range(rng.randint(1, 3)):
        text = mutate(text, rng)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        front_end(text)
        return "ok", text, ""
    except Hang:
        return "hang", text, f"longer than {timeout_s} s"
    except FznError as err:
        return ("error" if err.file and err.line else "unlocated"), text, str(err)
    except Exception:  # noqa: BLE001 - any other exception is what the fuzzer looks for
        return "traceback", text, traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run(
    seeds: range, corpus: list[str] | None = None, out: Path | None = None, timeout_s: float = 10.0
) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    for seed in seeds:
        outcome, text, said = fuzz_one(seed, corpus, timeout_s)
        counts[outcome] += 1
        if outcome in ("traceback", "hang", "unlocated") and out is not None:
            out.mkdir(parents=True, exist_ok=True)
            (out / f"{outcome}-{seed}.fzn").write_text(text)
            (out / f"{outcome}-{seed}.txt").write_text(said)
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="0:1000", help="A:B, the seeds A to B-1")
    ap.add_argument("--corpus", type=Path, help="a folder of FlatZinc files to mutate (default: random models)")
    ap.add_argument("--out", type=Path, default=Path("fuzz-frontend-out"))
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds an input may take")
    a = ap.parse_args(argv)
    lo, hi = (int(x) for x in a.seeds.split(":"))
    t = time.monotonic()
    counts = run(range(lo, hi), base_texts(a.corpus), a.out, a.timeout)
    print(
        f"{hi - lo} inputs in {time.monotonic() - t:.0f} s: "
        + ", ".join(f"{k} {counts[k]}" for k in ("ok", "error", "unlocated", "traceback", "hang"))
    )
    return 1 if counts["traceback"] or counts["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
