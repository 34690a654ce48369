"""The benchmark command: its solver variants and report, and one small run end to end through
minizinc (fzn-gpu and Gecode side by side must agree on the count). No timing is asserted."""

import json
import subprocess
import sys

import pytest

from fzn_gpu.bench.__main__ import markdown, variants

from helpers import ROOT, have_minizinc


def core(names) -> list[str]:
    """The variants of the default engine and Gecode (not LNS strategies, engines, splits,
    the relaxations off)."""
    return [
        n
        for n in names
        if " lns " not in n
        and "bnb=" not in n
        and not n.endswith((" complete", " lns", " portfolio", " restart", " bucket", " adaptive", " relax=off"))
    ]


def test_variants_name_one_column_per_device_set():
    one = variants(["all"], 0)
    assert core(one) == ["gpu-fzn", "gpu-fzn count", "gecode -p1"]
    assert one["gpu-fzn count"][-1] == "--count-only"
    assert variants(["all"], 0, check=True)["gpu-fzn"][-1] == "--check"
    two = variants(["gpu", "cpu"], 16)
    assert core(two) == [
        "gpu-fzn gpu",
        "gpu-fzn gpu count",
        "gpu-fzn cpu",
        "gpu-fzn cpu count",
        "gecode -p1",
        "gecode -p16",
    ]
    assert two["gpu-fzn cpu lns icm"][-2:] == ["--lns-strategy", "icm"] and len(two) == 6 + 2 * (6 + 6 + 9 + 1)
    assert two["gpu-fzn gpu relax=off"][-2:] == ["--relax", "off"]
    assert two["gpu-fzn gpu adaptive"][-2:] == ["--engine", "adaptive"]
    assert two["gpu-fzn gpu complete"][-2:] == ["--engine", "complete"]
    assert two["gpu-fzn cpu bucket"][-2:] == ["--engine", "bucket"]
    assert two["gpu-fzn gpu restart"][-4:] == ["--engine", "restart", "--restart", "luby"]
    assert two["gpu-fzn gpu bnb=cpu lns=gpu"][-4:] == [
        "--engine",
        "portfolio",
        "ENV:FZN_GPU_BNB_DEVICES=cpu",
        "ENV:FZN_GPU_LNS_DEVICES=gpu",
    ]
    assert two["gpu-fzn cpu"][:4] == ["--solver", "gpu-fzn", "--devices", "cpu"]


def test_markdown_gives_ratios_against_gecode_and_marks_unfinished_runs():
    def run(wall, complete, sols=92):
        return {"wall_s": wall, "complete": complete, "solutions": sols, "stats": {}, "trace": [], "best": None}

    results = [
        {
            "label": "nqueens n=8",
            "mode": "all",
            "solutions": 92,
            "runs": {"gpu-fzn": run(0.5, True), "gpu-fzn count": run(0.25, True), "gecode -p1": run(1.0, True)},
        },
        {"label": "nqueens n=9", "mode": "all", "solutions": 352, "runs": {"gpu-fzn": run(0.5, True, 350)}},
        {
            "label": "nqueens n=17",
            "mode": "all",
            "runs": {
                "gpu-fzn": run(10.0, False, 5),
                "gpu-fzn count": run(10.0, False, 7),
                "gecode -p1": run(10.0, False, 3),
            },
        },
    ]
    md = markdown(results, ["gpu-fzn", "gpu-fzn count", "gecode -p1"], "test machine")
    rows = [line for line in md.splitlines() if line.startswith("| nqueens")]
    assert rows[0].endswith("| 0.50; 0.25 counted |")
    assert "WRONG COUNT (expected 352)" in rows[1]  # a finished run's count is checked
    assert "(not finished)" in rows[2] and rows[2].endswith("| - |") and "WRONG" not in rows[2]


@pytest.mark.skipif(not have_minizinc(), reason="needs minizinc with gpu-fzn registered (README set-up)")
def test_merge_joins_split_calls_and_keeps_tagged_runs_apart(tmp_path):
    from fzn_gpu.bench.merge import merge

    def run(best):
        return {"wall_s": 10.0, "complete": False, "solutions": 1, "stats": {}, "trace": [[1.0, best]], "best": best}

    a = [{"label": "qap 15", "mode": "opt", "runs": {"gpu-fzn lns icm": run(5), "gecode -p1": run(7)}}]
    b = [
        {"label": "qap 15", "mode": "opt", "runs": {"gpu-fzn lns icm": run(4)}},
        {"label": "tsp 60", "mode": "opt", "runs": {"gecode -p1": run(9)}},
    ]
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    results, solvers = merge([str(tmp_path / "a.json"), f"{tmp_path / 'b.json'}:(H 9)"])
    assert solvers == ["gpu-fzn lns icm", "gpu-fzn lns icm (H 9)", "gecode -p1"]
    assert [r["label"] for r in results] == ["qap 15", "tsp 60"]
    assert {k: v["best"] for k, v in results[0]["runs"].items()} == {
        "gpu-fzn lns icm": 5,
        "gecode -p1": 7,
        "gpu-fzn lns icm (H 9)": 4,
    }
    assert results[1]["runs"]["gecode -p1"]["best"] == 9


def bench(out, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """`python -m fzn_gpu.bench --out OUT ARGS...` from the checkout."""
    cmd = [sys.executable, "-m", "fzn_gpu.bench", "--out", str(out), *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def test_small_run_end_to_end(tmp_path):
    out = tmp_path / "bench"
    r = bench(
        out, "--repeats", "1", "--limit", "60", "--only", "nqueens n=8", "--check", "--variants",
        "gpu-fzn,gpu-fzn count,gecode -p1",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    [res] = json.loads((out / "results.json").read_text())
    assert {name: run["solutions"] for name, run in res["runs"].items()} == {
        "gpu-fzn": 92,
        "gpu-fzn count": 92,
        "gecode -p1": 92,
    }
    assert all(run["complete"] for run in res["runs"].values())
    assert "ratio fzn-gpu / gecode -p1" in (out / "BENCHMARKS.md").read_text()


def test_a_variant_of_ones_own_runs_in_rotation_with_its_settings(tmp_path):
    """--variant NAME=FLAGS adds fzn-gpu with those flags, ENV:NAME=VALUE in its environment (here
    a work-item a compute unit, which its statistics show), and --interleave runs the variants'
    repeats in rotation; each run's kernel time is kept. A variant without NAME= is one clear
    error."""
    out = tmp_path / "bench"
    common = ["--repeats", "2", "--only", "nqueens n=8"]
    variant = "one a unit=--count-only ENV:FZN_GPU_ITEMS_PER_CU=1"
    r = bench(out, *common, "--variant", variant, "--variants", "gpu-fzn count,one a unit", "--interleave")
    assert r.returncode == 0, r.stderr
    [res] = json.loads((out / "results.json").read_text())
    runs = res["runs"]
    assert {name: run["solutions"] for name, run in runs.items()} == {"gpu-fzn count": 92, "one a unit": 92}
    assert all(len(run["kernel_s"]) == 2 and run["complete"] for run in runs.values())
    assert int(runs["one a unit"]["stats"]["workItems"]) < int(runs["gpu-fzn count"]["stats"]["workItems"])
    bad = bench(out, *common, "--variant", "no name", timeout=60)
    assert bad.returncode != 0 and "write NAME=FLAGS" in bad.stderr and "Traceback" not in bad.stderr


def test_the_suite_lives_in_the_project_and_its_data_is_made_the_same_every_time(tmp_path):
    """models/bench holds every model suite.json names, and instances.py writes every data file
    it names, byte for byte the same on each run (fixed seeds): figures from different runs and
    machines are of the same instances."""
    import runpy

    bench = ROOT / "models" / "bench"
    suite = json.loads((bench / "suite.json").read_text())["instances"]
    assert all((bench / inst["model"]).exists() for inst in suite)
    write = runpy.run_path(str(bench / "instances.py"))["write"]
    first, second = write(tmp_path / "a"), write(tmp_path / "b")
    wanted = {inst["data"] for inst in suite if "data" in inst}
    assert wanted <= {p.name for p in first.iterdir()}
    for p in first.iterdir():
        assert p.read_bytes() == (second / p.name).read_bytes()
    assert (first / "knapsack_100.dzn").read_text().startswith("n = 100;\ncapacity = ")
