"""The MiniZinc Challenge benchmark's selection and scoring (fzn_gpu/bench/challenge.py), on a
made-up repository layout and made-up runs: one instance set per problem name, the latest
year; the challenge's pairwise scoring; contradicting answers flagged."""

from __future__ import annotations

from pathlib import Path

import pytest

from fzn_gpu.bench.challenge import Run, better, contradictions, main, merge, report, score, select


def touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")


def test_one_problem_once_its_latest_year_instances_spread_over_its_data(tmp_path):
    for y in (2010, 2015):
        touch(tmp_path / str(y) / "costas_array" / "costas.mzn")
        for k in range(6):
            touch(tmp_path / str(y) / "costas_array" / f"{k}.dzn")
    touch(tmp_path / "2011" / "costas-array" / "c.mzn")  # the same problem, spelt otherwise, earlier
    touch(tmp_path / "2012" / "solo" / "a.mzn")  # models without data: each an instance
    touch(tmp_path / "2012" / "solo" / "b.mzn")
    touch(tmp_path / "2012" / "ambiguous" / "x.mzn")  # two models and data: which takes which?
    touch(tmp_path / "2012" / "ambiguous" / "y.mzn")
    touch(tmp_path / "2012" / "ambiguous" / "d.dzn")
    touch(tmp_path / "2020" / "later" / "m.mzn")  # outside the years
    got = select(tmp_path, range(2008, 2020), per_problem=2)
    assert [(i.year, i.name) for i in got] == [
        (2015, "costas_array/1"),
        (2015, "costas_array/4"),
        (2012, "solo/a"),
        (2012, "solo/b"),
    ]


def run(solver, status, objective=None, seconds=1.0, solutions=0):
    return Run(solver, status, objective, seconds, solutions)


@pytest.mark.parametrize(
    "a, b, sense, want",
    [
        (run("a", "OPTIMAL_SOLUTION", 5, 9.0, 1), run("b", "SATISFIED", 5, 1.0, 1), "min", 1.0),  # proof first
        (run("a", "SATISFIED", 4, 9.0, 1), run("b", "SATISFIED", 5, 1.0, 1), "min", 1.0),  # then the objective
        (run("a", "SATISFIED", 4, 9.0, 1), run("b", "SATISFIED", 5, 1.0, 1), "max", 0.0),
        (run("a", "SATISFIED", 5, 3.0, 1), run("b", "SATISFIED", 5, 1.0, 1), "min", 0.25),  # then time
        (run("a", "UNKNOWN"), run("b", "SATISFIED", None, 1.0, 1), "sat", 0.0),
        (run("a", "UNKNOWN"), run("b", "ERROR"), "sat", 0.0),  # neither solved it
        (run("a", "UNSATISFIABLE", None, 2.0), run("b", "UNSATISFIABLE", None, 2.0), "sat", 0.5),
    ],
)
def test_the_challenge_scoring(a, b, sense, want):
    assert score(a, b, sense) == pytest.approx(want)
    assert score(b, a, sense) == pytest.approx(1 - want) or not (a.solved or b.solved)
    assert better(a, b, sense) == -better(b, a, sense)


def test_answers_that_contradict_each_other_are_flagged():
    assert contradictions([run("a", "UNSATISFIABLE"), run("b", "SATISFIED", None, 1, 1)], "sat") == ["a"]
    assert contradictions([run("a", "OPTIMAL_SOLUTION", 10, 1, 1), run("b", "SATISFIED", 9, 1, 1)], "min") == ["a"]
    assert contradictions([run("a", "OPTIMAL_SOLUTION", 10, 1, 1), run("b", "OPTIMAL_SOLUTION", 12, 1, 1)], "max") == [
        "a"
    ]
    assert contradictions([run("a", "OPTIMAL_SOLUTION", 10, 1, 1), run("b", "SATISFIED", 11, 1, 1)], "min") == []


def test_the_report_sums_the_scores_and_names_what_was_contradicted():
    from dataclasses import asdict

    results = [
        {
            "instance": "p/1",
            "method": "min",
            "runs": [asdict(run("a", "SATISFIED", 3, 1, 1)), asdict(run("b", "SATISFIED", 4, 1, 1))],
            "wrong": [],
        },
        {
            "instance": "p/2",
            "method": "sat",
            "runs": [asdict(run("a", "UNSATISFIABLE")), asdict(run("b", "SATISFIED", None, 1, 1))],
            "wrong": ["a"],
        },
    ]
    text = report(results, ["a", "b"], 20)
    assert "Score a 1.0, b 1.0; better on 1 and 1 instances." in text
    assert "Contradicted answers: p/2: a." in text
    assert "| p/2 | sat | unsat, " in text and "| sol, " in text  # a proof of no solution says so
    assert "of the 2 that some solver compiles: a 100.0 %, b 100.0 %" in text
    results.append(
        {
            "instance": "p/3",
            "method": "sat",
            "wrong": [],
            "runs": [asdict(run("a", "ERROR")), asdict(run("b", "ERROR"))],
        }
    )
    assert "of the 2 that some solver compiles: a 100.0 %" in report(results, ["a", "b"], 20)


def test_runs_side_by_side_merge_into_one_report_with_contradictions_found_again(tmp_path):
    """Two solvers run on separate devices (two results files of the same instances, one
    solver each), a slice run later in a third: one report, the instances in their first
    order, the late run counted and the contradiction between files found."""
    import json
    from dataclasses import asdict

    def results(rows):
        return [{"instance": name, "method": method, "runs": [asdict(r)], "wrong": []} for name, method, r in rows]

    ours = results([("p/1", "min", run("a", "SATISFIED", 3, 21.5, 1)), ("p/2", "sat", run("a", "UNSATISFIABLE"))])
    theirs = results([("p/1", "unknown", run("b", "UNKNOWN")), ("p/2", "sat", run("b", "SATISFIED", None, 2, 1))])
    later = results([("q/1", "max", run("a", "OPTIMAL_SOLUTION", 7, 3, 1))])
    files = []
    for k, rows in enumerate((ours, theirs, later)):
        files.append(str(tmp_path / f"{k}.json"))
        Path(files[-1]).write_text(json.dumps(rows))
    merged = merge(files)
    assert [r["instance"] for r in merged] == ["p/1", "p/2", "q/1"]
    assert [x["solver"] for x in merged[0]["runs"]] == ["a", "b"] and merged[0]["method"] == "min"
    assert merged[1]["wrong"] == ["a"]
    text = report(merged, ["a", "b"], 20)
    assert "Solved (a solution or a proof): a 3 (100.0 %), b 1 (33.3 %); of the 3" in text
    assert "more than 1 s past the limit: a 1, b 0." in text
    assert "| q/1 | max | 7 opt, 3.0 s | error, 0.0 s |" in text  # b never ran it
    assert main(["--merge", *files, "--out", str(tmp_path / "m")]) == 1  # a contradicted answer
    assert json.loads((tmp_path / "m" / "results.json").read_text())[1]["wrong"] == ["a"]


def test_a_range_runs_a_slice_of_the_selection(tmp_path, capsys):
    for p in "abcde":
        touch(tmp_path / "2012" / p / f"{p}.mzn")
    assert main(["--repo", str(tmp_path), "--out", str(tmp_path / "o"), "--list", "--range", "1:3"]) == 0
    assert [line.split()[1] for line in capsys.readouterr().out.splitlines()] == ["b/b", "c/c"]
