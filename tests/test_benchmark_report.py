"""docs/BENCHMARKS.md stays a report a reader can take in (under 800 lines), and every raw
result it or docs/bench/measurements.md names is in the repository."""

from __future__ import annotations

import re
from itertools import product

from helpers import ROOT

REPORT = ROOT / "docs" / "BENCHMARKS.md"
RECORD = ROOT / "docs" / "bench" / "measurements.md"


def expanded(pattern: str) -> list[str]:
    """`a_{x,y}.md/.json` -> a_x.md, a_x.json, a_y.md, a_y.json (how the record names sets)."""
    parts = re.split(r"(\{[^}]*\})", pattern)
    choices = [p[1:-1].split(",") if p.startswith("{") else [p] for p in parts]
    out = []
    for combo in product(*choices):
        name = "".join(combo)
        stem, _, more = name.partition("/.")  # x.md/.json: both suffixes
        out.append(stem)
        if more:
            out.append(stem.rsplit(".", 1)[0] + "." + more)
    return out


def test_the_report_is_short():
    assert len(REPORT.read_text().splitlines()) < 800


def test_every_raw_result_named_is_there():
    for doc in (REPORT, RECORD):
        text = doc.read_text()
        for pattern in set(re.findall(r"`(docs/bench/[^`\s]+)`", text)):
            for name in expanded(pattern):
                assert list(ROOT.glob(name)), f"{doc.name} names {pattern}: {name} is missing"
        for link in set(re.findall(r"\]\(([^)\s]+)\)", text)):
            if not link.startswith("http"):
                assert (doc.parent / link).exists(), f"{doc.name} links {link}, which is missing"


def test_the_expansion_of_a_named_set():
    assert expanded("docs/bench/a_{x,y}.md/.json") == [
        "docs/bench/a_x.md",
        "docs/bench/a_x.json",
        "docs/bench/a_y.md",
        "docs/bench/a_y.json",
    ]
