"""The command line: MiniZinc's flags, status lines, statistics, and bad input reported in one
clear message with a non-zero exit and never a traceback."""

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fzn_gpu import watchdog
from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.parser import parse_items

from helpers import ROOT


def fzn(tmp_path, text, name="m.fzn"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def run(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "fzn_gpu", *args], capture_output=True, text=True, input=stdin, cwd=ROOT, timeout=120
    )


def queens(n: int) -> str:
    """n-queens with pairwise constraints, as FlatZinc."""
    return (
        "".join(f"var 1..{n}: q{i};\n" for i in range(1, n + 1))
        + f"array [1..{n}] of var int: q :: output_array([1..{n}]) = ["
        + ", ".join(f"q{i}" for i in range(1, n + 1))
        + "];\n"
        + "".join(
            f"constraint int_ne(q{i}, q{j});\nconstraint int_lin_ne([1, -1], [q{i}, q{j}], {j - i});\n"
            f"constraint int_lin_ne([1, -1], [q{i}, q{j}], {i - j});\n"
            for i in range(1, n + 1)
            for j in range(i + 1, n + 1)
        )
        + "solve satisfy;\n"
    )


QUEENS6 = queens(6)


def solutions(out):
    return [b for b in out.split("----------\n")[:-1]]


def test_all_solutions_are_checked_and_complete(tmp_path):
    path = fzn(tmp_path, QUEENS6)
    r = run("-a", "--check", path)
    assert r.returncode == 0, r.stderr
    sols = solutions(r.stdout)
    assert len(sols) == 4 and r.stdout.endswith("==========\n")
    checker = Checker(parse_items(QUEENS6, "q.fzn"))
    for block in sols:
        values = json.loads(block.split("[", 1)[1].rsplit("]", 1)[0].join("[]"))
        assert checker.check({f"q{i + 1}": v for i, v in enumerate(values)}) == []


@pytest.mark.parametrize("layout,specialise", [("blocked", "0"), ("interleaved", "1")])
def test_layouts_and_launch_shapes_agree(tmp_path, monkeypatch, layout, specialise):
    """The GPU's settings (interleaved state layout, a kernel specialised to the model's
    constraint kinds, many work-items, a local size > 1) must enumerate exactly the same
    solutions as PoCL's defaults: 8-queens has 92."""
    monkeypatch.setenv("FZN_GPU_LAYOUT", layout)
    monkeypatch.setenv("FZN_GPU_SPECIALISE", specialise)
    monkeypatch.setenv("FZN_GPU_ITEMS_PER_CU", "48")
    monkeypatch.setenv("FZN_GPU_LOCAL", "8")
    path = fzn(tmp_path, queens(8))
    r = run("-a", "--check", path)
    assert r.returncode == 0, r.stderr
    assert len(solutions(r.stdout)) == 92 and r.stdout.endswith("==========\n")
    assert len(set(solutions(r.stdout))) == 92
    r = run("-a", "--count-only", "--bucket", "off", "-s", path)
    assert "%%%mzn-stat: solutions=92" in r.stdout


KNAPSACK = """var 0..10: a :: output_var;
var 0..10: b :: output_var;
var 0..10: c :: output_var;
var 0..100: obj :: output_var;
constraint int_lin_le([3, 4, 5], [a, b, c], 23);
constraint int_lin_eq([4, 5, 7, -1], [a, b, c, obj], 0);
solve maximize obj;
"""


@pytest.mark.parametrize("dive_ms", ["0", "1", "5000"])
def test_dive_then_parallel_search_keeps_optimum_and_status(tmp_path, monkeypatch, dive_ms):
    """The GPU's one-work-item dive (cut short, or long enough to finish the tree) changes
    neither the proven optimum nor the final status, nor UNSAT, nor a first solution."""
    monkeypatch.setenv("FZN_GPU_DIVE_MS", dive_ms)
    best = max(
        4 * a + 5 * b + 7 * c for a in range(11) for b in range(11) for c in range(11) if 3 * a + 4 * b + 5 * c <= 23
    )
    r = run("-a", "--check", "-s", fzn(tmp_path, KNAPSACK))
    assert r.returncode == 0, r.stderr
    objs = [int(line.split("=")[1].rstrip(";")) for line in r.stdout.splitlines() if line.startswith("obj =")]
    assert objs[-1] == best and objs == sorted(objs) and len(set(objs)) == len(objs)
    assert "==========" in r.stdout
    unsat = fzn(
        tmp_path,
        "var 1..3: x;\nvar 1..3: y;\nconstraint int_lt(x, y);\nconstraint int_lt(y, x);\nsolve satisfy;\n",
        "u.fzn",
    )
    assert run(unsat).stdout.strip() == "=====UNSATISFIABLE====="
    one = run("--check", fzn(tmp_path, queens(8), "q.fzn"))
    assert one.returncode == 0 and len(solutions(one.stdout)) == 1


def test_tuning_variables_are_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("FZN_GPU_LAYOUT", "diagonal")
    r = run(fzn(tmp_path, QUEENS6))
    assert r.returncode != 0 and "FZN_GPU_LAYOUT" in r.stderr and "Traceback" not in r.stderr


def test_one_solution_by_default_and_n(tmp_path):
    path = fzn(tmp_path, QUEENS6)
    assert len(solutions(run(path).stdout)) == 1
    r = run("-n", "3", path)
    assert len(solutions(r.stdout)) == 3 and "==========" not in r.stdout


def test_stdin_statistics_and_count_only(tmp_path):
    r = run("-a", "--count-only", "--bucket", "off", "-s", "-", stdin=QUEENS6)
    assert "----------" not in r.stdout and "%%%mzn-stat: solutions=4" in r.stdout
    assert r.stdout.rstrip().endswith("%%%mzn-stat-end") and "==========" in r.stdout
    # MiniZinc's own statistic (the solutions it printed) is left to MiniZinc: one value each
    assert "nSolutions" not in r.stdout


def test_unsatisfiable_and_optimum(tmp_path):
    unsat = (
        "".join(f"var 1..2: x{i};\n" for i in range(3))
        + "constraint int_ne(x0, x1);\nconstraint int_ne(x1, x2);\nconstraint int_ne(x0, x2);\nsolve satisfy;\n"
    )
    assert run(fzn(tmp_path, unsat)).stdout == "=====UNSATISFIABLE=====\n"
    opt = (
        "var 0..10: x :: output_var;\nvar 0..10: y :: output_var;\nconstraint int_lin_le([2, 3], [x, y], 12);\n"
        "var int: obj :: output_var = x;\nsolve maximize x;\n"
    )
    r = run("--check", fzn(tmp_path, opt, "o.fzn"))
    assert r.stdout.startswith("x = 6;") and r.stdout.endswith("----------\n==========\n")


@pytest.mark.parametrize(
    "args, text, words",
    [
        (["missing.fzn"], None, "no such file: missing.fzn"),
        ([], "var 1..3: x;\nconstraint int_le(x 3);\nsolve satisfy;\n", "m.fzn:2:21: error: syntax error"),
        ([], "var 1..3: x;\nconstraint foo(x);\nsolve satisfy;\n", "m.fzn:2: error: unknown constraint 'foo'"),
        (
            [],
            "var 0.0..1.0: f;\nsolve :: float_search([f], -1.0, input_order, indomain_split, complete) satisfy;\n",
            "m.fzn:2: error: float_search's precision -1.0 is not a positive number",
        ),
        (["--devices", "7"], "var 1..3: x;\nsolve satisfy;\n", "no OpenCL device with index 7"),
    ],
)
def test_bad_input_is_one_clear_message(tmp_path, args, text, words):
    path = [fzn(tmp_path, text)] if text else []
    r = run(*args, *path)
    assert r.returncode != 0
    assert words in r.stderr and "fix:" in r.stderr
    assert "Traceback" not in r.stderr


def test_input_that_is_no_text_or_too_large_is_refused_before_it_fills_memory(tmp_path):
    """/dev/zero once read until memory ran out and ended in a MemoryError traceback."""
    r = run("/dev/zero")
    assert r.returncode != 0 and "/dev/zero is not FlatZinc text (a NUL byte at offset 0)" in r.stderr, r.stderr
    big = tmp_path / "big.fzn"
    big.write_text(("% a comment line of a large file\n" * 40_000) + "var 1..3: x :: output_var;\nsolve satisfy;\n")
    r = subprocess.run(
        [sys.executable, "-m", "fzn_gpu", str(big)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ, "FZN_GPU_MAX_INPUT_MB": "1"},
    )
    assert r.returncode != 0 and "is larger than 1 MiB" in r.stderr and "FZN_GPU_MAX_INPUT_MB" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    r = run("-", stdin="var 1..3: x :: output_var;\n\0solve satisfy;\n")
    assert r.returncode != 0 and "standard input is not FlatZinc text (a NUL byte at offset 27)" in r.stderr
    r = run(str(big))  # under the default limit, the same file solves
    assert r.returncode == 0 and r.stdout.startswith("x = "), r.stderr


def test_float_model_prints_shortest_decimals(tmp_path):
    """A float solution prints each variable's shortest decimal within its box (a point where
    it has one), and a float objective's statistic too."""
    text = (
        "var 0.0..10.0: x :: output_var;\nvar 0.0..10.0: y :: output_var;\n"
        "constraint float_lin_le([1.0, 2.0], [x, y], 7.5);\nvar 0.0..100.0: p;\n"
        "constraint float_times(x, y, p);\nconstraint float_le(2.0, p);\nvar 0.0..20.0: s :: output_var;\n"
        "constraint float_lin_eq([1.0, 1.0, -1.0], [x, y, s], 0.0);\nsolve maximize s;\n"
    )
    r = run("--check", "-s", fzn(tmp_path, text))
    assert r.returncode == 0 and "==========" in r.stdout, r.stderr
    values = dict(line.rstrip(";").split(" = ") for line in r.stdout.splitlines() if " = " in line)
    assert abs(float(values["s"]) - 7.21107219255619) < 1e-6
    assert abs(float(values["x"]) + float(values["y"]) - float(values["s"])) < 1e-6
    objective = [line for line in r.stdout.splitlines() if line.startswith("%%%mzn-stat: objective=")]
    assert abs(float(objective[-1].split("=")[1]) - 7.21107219255619) < 1e-6
    point = "var 0.0..10.0: x :: output_var;\nconstraint float_lin_eq([2.0], [x], 5.0);\nsolve satisfy;\n"
    assert run(fzn(tmp_path, point, "p.fzn")).stdout == "x = 2.5;\n----------\n"


def queens_by_pairs(n: int) -> str:
    return (
        "".join(f"var 1..{n}: q{i};\n" for i in range(n))
        + "".join(
            f"constraint int_ne(q{i}, q{j});\nconstraint int_lin_ne([1, -1], [q{i}, q{j}], {j - i});\n"
            f"constraint int_lin_ne([1, -1], [q{i}, q{j}], {i - j});\n"
            for i in range(n)
            for j in range(i + 1, n)
        )
        + "solve satisfy;\n"
    )


# The limit counts from the process's start (interpreter, imports, parsing and the kernel build
# included), the search stops at it, and a watchdog ends the run half a second later even
# inside a kernel slice. This bound is the contract, with slack for a loaded machine.
LIMIT_SLACK_S = 1.2


@pytest.mark.parametrize("fixed_budget", [None, "2000000000"])
def test_time_limit_is_honoured(tmp_path, monkeypatch, fixed_budget):
    """15 queens by pairwise constraints with -a takes about 50 s here. With a fixed budget
    of 2e9 nodes a slice, the first slice alone would too: only the watchdog can end it."""
    if fixed_budget:
        monkeypatch.setenv("FZN_GPU_SLICE_BUDGET", fixed_budget)
    t = time.monotonic()
    r = run("-a", "--count-only", "--bucket", "off", "-s", "-t", "1500", fzn(tmp_path, queens_by_pairs(15)))
    assert time.monotonic() - t < 1.5 + LIMIT_SLACK_S
    assert r.returncode == 0 and "==========" not in r.stdout and "%%%mzn-stat-end" in r.stdout


def test_time_limit_on_optimisation_keeps_best_and_claims_nothing(tmp_path):
    """Branch and bound cut by the limit prints its best solution (checked), without
    `==========`: 18 queens maximising a weighted sum is far from proven in 4 s (on a loaded
    machine start-up may leave no time for a first solution: then UNKNOWN)."""
    n = 18
    text = (
        queens_by_pairs(n).replace("solve satisfy;\n", "")
        + f"var 0..{n**3}: obj;\n"
        + f"constraint int_lin_eq([{', '.join(str((7 * i) % n + 1) for i in range(n))}, -1], "
        f"[{', '.join(f'q{i}' for i in range(n))}, obj], 0);\nsolve maximize obj;\n"
    )
    t = time.monotonic()
    r = run("-t", "4000", "-s", "--check", fzn(tmp_path, text))
    assert time.monotonic() - t < 4.0 + LIMIT_SLACK_S
    assert r.returncode == 0, r.stderr
    assert "==========" not in r.stdout
    if "=====UNKNOWN=====" not in r.stdout:
        assert r.stdout.count("----------") == 1 and "%%%mzn-stat: objective=" in r.stdout


def test_a_limit_that_ends_the_reading_says_how_far_it_got(tmp_path):
    """A model too big to read within its limit ends by it, UNKNOWN, and with -s the
    statistics of a run that never searched: where the time went and the line reached."""
    from fzn_gpu.bench.frontend import generate_mix

    path = tmp_path / "big.fzn"
    generate_mix(path, 40, seed=3)  # longer to read than the limit
    t = time.monotonic()
    r = run("-s", "-t", "1500", str(path))
    assert time.monotonic() - t < 1.5 + LIMIT_SLACK_S
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("=====UNKNOWN=====\n") and r.stdout.endswith("%%%mzn-stat-end\n"), r.stdout
    assert '%%%mzn-stat: phase="reading the model"' in r.stdout and "%%%mzn-stat: solveTime=0" in r.stdout
    assert '%%%mzn-stat: endedBy="the time limit"' in r.stdout  # not a signal, nor a lost owner
    # no search to wind down: the run ends at its limit, not the watchdog's grace after it
    ended = float(re.search(r"%%%mzn-stat: initTime=([0-9.]+)", r.stdout).group(1))
    assert 1.5 <= ended < 1.5 + 0.5 * watchdog.GRACE_S, r.stdout
    line = re.search(r"%%%mzn-stat: flatzincLine=(\d+)", r.stdout)
    assert line and 0 < int(line.group(1)) < path.read_text().count("\n"), r.stdout
    quiet = run("-t", "1500", str(path))  # without -s: the status alone
    assert quiet.returncode == 0 and quiet.stdout == "=====UNKNOWN=====\n", quiet.stdout


def test_the_watchdog_ends_a_run_that_has_not_searched_at_its_limit():
    """Before a search runs there is nothing to wind down: the watchdog ends the run at the
    limit; once one runs, GRACE_S later (the search stops at its next slice by itself)."""
    dog = watchdog.Watchdog(lambda signo: 0, 2000)
    assert dog.limit is not None and dog._end_at() == dog.limit
    dog.searching = lambda: True
    assert dog._end_at() == dog.limit + watchdog.GRACE_S
    assert watchdog.Watchdog(lambda signo: 0, None)._end_at() is None


def interrupts_end_the_run_whole(tmp_path, env=None) -> None:
    """SIGINT, SIGTERM, and SIGINT under a launcher that ignores it, each sent to a running
    `python -m fzn_gpu -a --check` (in `env`): each ends at once, its stream whole (every
    solution block complete), no `==========`, exit status 128 + the signal's number."""
    ignore = lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)  # noqa: E731
    for sig, start in ((signal.SIGINT, None), (signal.SIGTERM, None), (signal.SIGINT, ignore)):
        proc = subprocess.Popen(
            [sys.executable, "-m", "fzn_gpu", "-a", "--check", fzn(tmp_path, queens_by_pairs(15))],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
            preexec_fn=start,
        )
        first = proc.stdout.readline()  # the first solution has begun: the search runs
        assert first.startswith("q") or first.startswith("----------"), first
        proc.send_signal(sig)
        t = time.monotonic()
        out, err = proc.communicate(timeout=60)
        assert time.monotonic() - t < 1.0 + LIMIT_SLACK_S
        assert proc.returncode == 128 + sig, err
        assert "Traceback" not in err
        assert "==========" not in out and (first + out).endswith("----------\n")


def test_interrupt_prints_the_solutions_so_far(tmp_path):
    """SIGINT (Ctrl-C) or SIGTERM while kernels run: the stream so far stays whole, exit status
    130 or 143, at once; also when the launcher started the solver with SIGINT ignored (nohup,
    `&` in a script), whose Stop sends SIGINT all the same."""
    interrupts_end_the_run_whole(tmp_path)


def test_a_signal_during_a_long_slice_ends_the_run(tmp_path, monkeypatch):
    """SIGTERM while the main thread is inside one long kernel slice (a budget of 2e9 nodes):
    only the watchdog's thread can take it, whichever thread the kernel hands it to; the
    drivers' threads (PoCL's workers, started by the early OpenCL thread) block it too. Three
    runs, each ended within a second."""
    monkeypatch.setenv("FZN_GPU_SLICE_BUDGET", "2000000000")
    for _ in range(3):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fzn_gpu",
                "-a",
                "--count-only",
                "--bucket",
                "off",
                fzn(tmp_path, queens_by_pairs(15)),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        time.sleep(3)  # started, and inside its first slice
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        t = time.monotonic()
        out, err = proc.communicate(timeout=120)
        assert time.monotonic() - t < 1.0 + LIMIT_SLACK_S, "the signal waited for the slice"
        assert proc.returncode == 143, err
        assert "==========" not in out and "Traceback" not in err


def test_a_signal_ends_the_run_though_nobody_reads_its_stream(tmp_path):
    """SIGTERM to a run printing every solution into a pipe nobody reads (full: the writer
    blocked): its last lines cannot be written, and it ends within END_WAIT_S all the same,
    with SIGTERM's code, rather than waiting for ever (MiniZinc 2.6 cancelled by minizinc-python
    read the solver's stderr while its stdout stayed full)."""
    from fzn_gpu.watchdog import END_WAIT_S

    proc = subprocess.Popen(
        [sys.executable, "-m", "fzn_gpu", "-a", "--check", fzn(tmp_path, queens_by_pairs(14))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    time.sleep(4)  # started; 365,596 solutions fill the pipe's 64 KiB long before
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=END_WAIT_S + 5 + LIMIT_SLACK_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("the run waited for ever to write to a pipe nobody reads") from None
    out, err = proc.communicate()
    assert code == 143 and b"Traceback" not in err, err


def test_an_orphaned_solver_stops(tmp_path):
    """The launcher (minizinc) killed while the solver runs, the solver's SIGINT ignored: the
    solver notices its parent is gone and ends within a second, its stream whole, instead of
    searching on at full speed with no one to read it."""
    out = tmp_path / "out.txt"
    cmd = (
        f"trap '' INT; {shlex.quote(sys.executable)} -m fzn_gpu -a --check {shlex.quote(fzn(tmp_path, queens_by_pairs(15)))} "
        f"> {shlex.quote(str(out))} 2>&1 & echo $!; exec sleep 120"
    )
    parent = subprocess.Popen(["sh", "-c", cmd], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    pid = int(parent.stdout.readline())
    deadline = time.monotonic() + 60
    while "----------" not in (out.read_text() if out.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.05)  # the search runs
    assert time.monotonic() < deadline, out.read_text()
    parent.kill()
    parent.wait()
    t = time.monotonic()

    def running() -> bool:  # an exited orphan may stay a zombie here
        try:
            return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
        except FileNotFoundError:
            return False

    while running() and time.monotonic() - t < 10:
        time.sleep(0.05)
    assert not running(), "the orphaned solver runs on"
    assert time.monotonic() - t < 1.0 + LIMIT_SLACK_S
    text = out.read_text()
    assert "Traceback" not in text and "violates" not in text and text.rstrip().endswith("----------")


def test_list_devices_and_solver_config(tmp_path):
    r = run("--list-devices")
    assert r.returncode == 0 and "0:" in r.stdout
    r = run("install-solver-config", "--dir", str(tmp_path))
    cfg = json.loads((tmp_path / "gpu-fzn.msc").read_text())
    assert cfg["id"] == "org.fzn-gpu.gpu-fzn" and cfg["mznlib"].endswith("mznlib")
    assert {"-a", "-n", "-f", "-p", "-r", "-s", "-t", "-i", "-v"} <= set(cfg["stdFlags"])
    assert any(f[0] == "--devices" for f in cfg["extraFlags"])
    # the executable: the launcher beside it, this interpreter without the site module
    launcher = Path(cfg["executable"])
    assert launcher.parent == tmp_path and os.access(launcher, os.X_OK)
    assert launcher.read_text().splitlines()[0] == f"#!{os.path.abspath(sys.executable)} -S"
    model = fzn(tmp_path, QUEENS6)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    own = subprocess.run(
        [str(launcher), "-a", "--check", model],
        env={**env, "FZN_GPU_SERVER": "off"},
        capture_output=True,
        text=True,
        timeout=120,
    )  # the run stays in its process: the site module's paths (numpy, pyopencl) come then
    assert own.returncode == 0 and len(solutions(own.stdout)) == 4, own.stderr


def test_statistics_say_where_the_start_went(tmp_path):
    """-s: startupMarks, each step of the start-up with the moment it ended, in order, the last
    no later than initTime (the search's start)."""
    r = run("-s", fzn(tmp_path, QUEENS6))
    assert r.returncode == 0, r.stderr
    marks = re.search(r'%%%mzn-stat: startupMarks="([^"]*)"', r.stdout).group(1).split()
    steps = [m.split(":")[0] for m in marks]
    at = [float(m.split(":")[1]) for m in marks]
    assert steps[:4] == ["read", "devices", "relax", "pack"], steps
    init = float(re.search(r"%%%mzn-stat: initTime=([0-9.e-]+)", r.stdout).group(1))
    assert at == sorted(at) and at[-1] <= init + 0.0015


def test_the_launcher_keeps_a_virtual_environments_python(tmp_path):
    """Written from a virtual environment, the msc's launcher starts that environment's python
    (a link to the system's: resolved, it would not find the environment's packages), and a
    run that stays in its process finds them."""
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FZN_GPU_SERVER": "off"}
    done = subprocess.run(
        [str(python), "-m", "fzn_gpu", "install-solver-config", "--dir", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    launcher = Path(json.loads((tmp_path / "gpu-fzn.msc").read_text())["executable"])
    assert launcher.read_text().splitlines()[0] == f"#!{python} -S"
    env.pop("PYTHONPATH")
    own = subprocess.run(
        [str(launcher), "-a", "--check", fzn(tmp_path, QUEENS6)], env=env, capture_output=True, text=True, timeout=120
    )
    assert own.returncode == 0 and len(solutions(own.stdout)) == 4, own.stderr


KNAPSACK_01 = """\
var 0..1: a;
var 0..1: b;
var 0..1: c;
constraint int_lin_le([4, 5, 6], [a, b, c], 10);
var 0..30: v :: output_var;
constraint int_lin_eq([5, 6, 8, -1], [a, b, c, v], 0) :: defines_var(v);
solve maximize v;
"""


def test_relax_flag_and_its_statistics(tmp_path, monkeypatch):
    """By default an optimisation model's relaxations are added and `-s` names them and their
    bound; `--relax off` adds none (same optimum); a bad FZN_GPU_RELAX is one clear error."""
    path = fzn(tmp_path, KNAPSACK_01)
    on = run("-s", "--check", path)
    assert on.returncode == 0 and "v = 13;" in on.stdout and "==========" in on.stdout, on.stderr
    assert '%%%mzn-stat: relaxation="knapsack linear"' in on.stdout
    assert "%%%mzn-stat: relaxationBound=13" in on.stdout
    off = run("-s", "--relax", "off", "--check", path)
    assert off.returncode == 0 and "v = 13;" in off.stdout and "relaxation" not in off.stdout
    monkeypatch.setenv("FZN_GPU_RELAX", "sometimes")
    bad = run(path)
    assert bad.returncode != 0 and "FZN_GPU_RELAX='sometimes' is not one of auto, off" in bad.stderr
    assert "Traceback" not in bad.stderr
