"""Every model of hakank's corpus, compiled with our mznlib by MiniZinc 2.6, parses and lowers.
(Float and set models lower too; the engine then reports them unsupported, never guesses.)"""

import json
import subprocess
import sys

import pytest

from fzn_gpu.flatzinc.lower import load, lower
from fzn_gpu.flatzinc.parser import parse_items

from helpers import CORPUS, ROOT, have_minizinc
from test_fast_lowering import same

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.skipif(not have_minizinc() or not CORPUS.exists(), reason="needs minizinc and ../shared"),
]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    out = tmp_path_factory.mktemp("fzn")
    r = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "compile_corpus.py"), str(CORPUS), str(out), "-j", "2"],
        capture_output=True,
        text=True,
        timeout=3000,
    )
    assert r.returncode == 0, r.stderr
    return out, json.loads((out / "compile.json").read_text())


def test_every_corpus_model_compiles_with_our_library(compiled):
    _, results = compiled
    bad = [r for r in results if not r["ok"]]
    assert len(results) == len(json.loads((CORPUS / "manifest.json").read_text())["entries"])
    assert not bad, bad[:3]


def test_every_corpus_flatzinc_parses_and_lowers(compiled):
    out, results = compiled
    failures = []
    for r in results:
        path = out / (r["name"] + ".fzn")
        try:
            model = load(str(path))
            assert model.solve is not None
        except Exception as err:  # collect them all, then report
            failures.append(f"{r['name']}: {err}")
    assert not failures, "\n".join(failures[:10])


def test_every_corpus_flatzinc_lowers_alike_from_text_and_item_by_item(compiled):
    """What MiniZinc writes for 695 models: the constraints read straight from their text
    (Lowering.fast_constraint) give the model that parsing and lowering each item gives."""
    out, results = compiled
    differ = []
    for r in results:
        path = out / (r["name"] + ".fzn")
        text = path.read_text()
        if not same(load(str(path)), lower(parse_items(text, str(path)), str(path))):
            differ.append(r["name"])
    assert not differ, differ[:10]
