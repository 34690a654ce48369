"""Runs through the solver server (fzn_gpu/launch.py, fzn_gpu/server.py) behave as runs in a
process of their own: the same solutions (checked), messages, exit codes, time limits and
signals; a run whose client or launcher is gone stops; the server exits when idle, one per
installation and environment, and a stale socket is replaced."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fzn_gpu import launch
from fzn_gpu.flatzinc.check import Checker
from fzn_gpu.flatzinc.parser import parse_items

from helpers import ROOT, have_minizinc
from test_cli import LIMIT_SLACK_S, QUEENS6, fzn, interrupts_end_the_run_whole, queens_by_pairs, solutions


def _env(folder: Path, mode: str = "require", **extra: str) -> dict[str, str]:
    # the checkout's package whatever the working folder (an installed one is another server's)
    env = {**os.environ, "FZN_GPU_SERVER": mode, "FZN_GPU_SERVER_DIR": str(folder), "PYTHONPATH": str(ROOT)}
    env.update(extra)
    return env


def _socket(env: dict[str, str]) -> Path:
    return Path(env["FZN_GPU_SERVER_DIR"]) / f"{launch.server_key(env)}.sock"


def _answers(path: Path) -> bool:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        s.close()


def _gone(pid: int) -> bool:
    """Exited (a zombie waiting for its parent counts as exited)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _start_server(env: dict[str, str]) -> subprocess.Popen:
    path = _socket(env)
    proc = subprocess.Popen(
        [sys.executable, "-m", "fzn_gpu.server", str(path)],
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not path.exists() and time.monotonic() < deadline:
        assert proc.poll() is None, "the server ended at start"
        time.sleep(0.05)
    assert path.exists(), "the server did not start"
    return proc


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The environment of runs that must go through a server (FZN_GPU_SERVER=require)."""
    env = _env(tmp_path_factory.mktemp("server"), FZN_GPU_SERVER_IDLE_S="300")
    proc = _start_server(env)
    yield env
    proc.terminate()
    proc.wait(timeout=30)


def run(env, *args, stdin=None, cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", "fzn_gpu", *args],
        capture_output=True,
        text=True,
        input=stdin,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def _queens_values(out: str) -> list[list[int]]:
    return [json.loads(b.split("[", 1)[1].rsplit("]", 1)[0].join("[]")) for b in solutions(out)]


def test_solutions_statistics_stdin_and_relative_paths(served, tmp_path):
    """All solutions (checked by the independent checker), the same set a process of its own
    prints; -s statistics; the model read from standard input, and by a path relative to the
    client's working folder."""
    path = fzn(tmp_path, QUEENS6)
    through = run(served, "-a", "--check", "-s", path)
    assert through.returncode == 0, through.stderr
    own = run(_env(tmp_path, "off"), "-a", "--check", path)
    checker = Checker(parse_items(QUEENS6, "q.fzn"))
    values = _queens_values(through.stdout)
    assert len(values) == 4 and sorted(values) == sorted(_queens_values(own.stdout))
    for v in values:
        assert checker.check({f"q{i + 1}": x for i, x in enumerate(v)}) == []
    assert "==========" in through.stdout and "%%%mzn-stat: nodes=" in through.stdout
    piped = run(served, "-a", "--check", "-", stdin=QUEENS6)
    assert piped.returncode == 0 and sorted(_queens_values(piped.stdout)) == sorted(values), piped.stderr
    relative = run(served, "-a", "--check", "m.fzn", cwd=tmp_path)
    assert relative.returncode == 0 and sorted(_queens_values(relative.stdout)) == sorted(values), relative.stderr
    # a program no spare had loaded (floats') is noted for the spares to load ahead
    point = fzn(
        tmp_path,
        "var 0.0..10.0: x :: output_var;\nconstraint float_lin_eq([2.0], [x], 5.0);\nsolve satisfy;\n",
        "p.fzn",
    )
    assert run(served, point).stdout == "x = 2.5;\n----------\n"
    recent = [json.loads(line) for line in Path(f"{_socket(served)}.programs").read_text().splitlines()]
    assert recent and recent[-1]["floats"] is True and {"device", "kinds", "model", "options"} <= set(recent[-1])
    time.sleep(1.0)  # the spare waiting has loaded it: the next run takes it (checked)
    assert run(served, "--check", point).stdout == "x = 2.5;\n----------\n"


def test_bad_input_is_the_same_message(served, tmp_path):
    path = fzn(tmp_path, "var 1..3: x;\nconstraint int_le(x, y);\nsolve satisfy;\n")
    through = run(served, path)
    own = run(_env(tmp_path, "off"), path)
    assert through.returncode == own.returncode == 1
    assert through.stderr == own.stderr and f"{path}:2" in through.stderr and "Traceback" not in through.stderr
    missing = run(served, str(tmp_path / "nowhere.fzn"))
    assert missing.returncode == 1 and "nowhere.fzn" in missing.stderr and "Traceback" not in missing.stderr


def test_help_and_usage_errors_end_as_in_a_process_of_their_own(served, tmp_path):
    """argparse ends a run with SystemExit: --help prints the usage and exits 0, an unknown
    option prints argparse's message and exits 2, through the server as without it."""
    for args, code in ((["--help"], 0), (["--no-such-option", "m.fzn"], 2)):
        through, own = run(served, *args), run(_env(tmp_path, "off"), *args)
        assert through.returncode == own.returncode == code, through.stderr
        assert through.stdout == own.stdout and through.stderr == own.stderr and "Traceback" not in through.stderr


def test_time_limit_counts_from_the_clients_start(served, tmp_path):
    t = time.monotonic()
    r = run(served, "-a", "--count-only", "--bucket", "off", "-s", "-t", "1500", fzn(tmp_path, queens_by_pairs(15)))
    assert time.monotonic() - t < 1.5 + LIMIT_SLACK_S
    assert r.returncode == 0 and "==========" not in r.stdout and "%%%mzn-stat-end" in r.stdout, r.stderr


def _as_minizinc(
    env, *args, flattening_s: float = 0.0, time_limit_ms: int | None = None
) -> subprocess.CompletedProcess:
    """fzn-gpu started by a parent named as MiniZinc is (its /proc comm), as MiniZinc starts it,
    after `flattening_s` of the parent's own work; with `time_limit_ms` the parent's command line
    holds `--time-limit` and the run gets `-t` with what the flattening left of it, as MiniZinc
    passes it, then 0.3 s more of the parent's work (writing the FlatZinc)."""
    parent = (
        "import subprocess, sys, time\n"
        "t = time.monotonic()\n"
        "open('/proc/self/comm', 'w').write('minizinc')\n"
        "argv = sys.argv[1:]\n"
        "limit = argv.index('--time-limit') if '--time-limit' in argv else None\n"
        "if limit is not None:\n"
        "    ms = int(argv[limit + 1])\n"
        "    del argv[limit : limit + 2]\n"
        f"time.sleep({flattening_s})\n"
        "if limit is not None:\n"
        "    argv = ['-t', str(int(ms - 1000 * (time.monotonic() - t)))] + argv\n"
        "    time.sleep(0.3)\n"
        "sys.exit(subprocess.run([sys.executable, '-m', 'fzn_gpu', *argv]).returncode)\n"
    )
    extra = ["--time-limit", str(time_limit_ms)] if time_limit_ms is not None else []
    return subprocess.run(
        [sys.executable, "-c", parent, *extra, *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )


@pytest.mark.parametrize("mode", ["require", "off"])
def test_a_run_minizinc_started_leaves_it_time_for_its_own_work(served, tmp_path, mode):
    """Under MiniZinc's --time-limit, MiniZinc passes the solver what its flattening left, yet
    writes the FlatZinc after counting and tears the model down after the solver ends
    (clock.py): a run it started ends by the user's limit counted from MiniZinc's start, less
    0.03 s a MB of FlatZinc, through the server as in a process of its own; a solver's own -t
    keeps its whole limit less the teardown, and a run started otherwise its whole limit."""
    path = Path(fzn(tmp_path, queens_by_pairs(15)))
    path.write_text(path.read_text() + "% " + "x" * 5_000_000 + "\n")  # 5 MB: 0.15 s
    env = {**served, "FZN_GPU_SERVER": mode}
    args = ["-a", "--count-only", "--bucket", "off", "-s", str(path)]
    t = time.monotonic()
    r = _as_minizinc(env, *args, flattening_s=1.0, time_limit_ms=3500)
    took = time.monotonic() - t
    share = re.search(r"%%%mzn-stat: minizincShare=([0-9.]+)\n", r.stdout)
    assert r.returncode == 0 and share, r.stderr
    assert 0.45 <= float(share.group(1)) < 0.45 + 0.4  # 0.3 s of writing, 0.15 s of teardown
    assert took < 3.5 - 0.15 + LIMIT_SLACK_S
    # a limit MiniZinc's own work used up: UNKNOWN at once, and a message that says so
    r = _as_minizinc(env, *args, flattening_s=1.0, time_limit_ms=1100)
    assert r.returncode == 0 and r.stdout.startswith("=====UNKNOWN====="), r.stderr
    assert "MiniZinc's own work around this run takes the whole time limit" in r.stderr
    r = _as_minizinc(env, "-t", "2000", *args, flattening_s=1.0)  # a solver's own -t
    assert r.returncode == 0 and "%%%mzn-stat: minizincShare=0.15\n" in r.stdout, r.stderr
    r = run(env, "-t", "2000", *args)
    assert r.returncode == 0 and "%%%mzn-stat-end" in r.stdout and "minizincShare" not in r.stdout, r.stderr


def test_minizinc_s_share_is_what_its_limit_does_not_count_and_its_teardown(tmp_path, monkeypatch):
    from fzn_gpu import clock

    path = tmp_path / "m.fzn"
    path.write_bytes(b"x" * 27_000_000)
    monkeypatch.setattr(clock, "BY_MINIZINC", True)
    monkeypatch.setattr(clock, "MINIZINC_STARTED", clock.STARTED - 3.5)
    monkeypatch.setattr(clock, "MINIZINC_LIMIT_MS", 20000)
    # 3 s of flattening counted (-t 17000), 0.5 s of writing not; road_25's FlatZinc's 0.81 s
    assert clock.minizinc_share_ms(17000, str(path)) == 500 + 810
    assert clock.minizinc_share_ms(2000, str(path)) == 500  # a -t below what is left: the teardown
    assert clock.minizinc_share_ms(None, str(path)) == 0
    assert clock.minizinc_share_ms(17000, str(tmp_path / "gone.fzn")) == 500
    monkeypatch.setattr(clock, "MINIZINC_LIMIT_MS", None)  # a solver's own -t: the teardown alone
    assert clock.minizinc_share_ms(20000, str(path)) == 810
    monkeypatch.setattr(clock, "MINIZINC_STARTED", None)  # /proc unreadable: the same
    monkeypatch.setattr(clock, "MINIZINC_LIMIT_MS", 20000)
    assert clock.minizinc_share_ms(20000, str(path)) == 810
    monkeypatch.setattr(clock, "BY_MINIZINC", False)
    assert clock.minizinc_share_ms(20000, str(path)) == 0


def test_signals_reach_the_run(served, tmp_path):
    """SIGINT or SIGTERM to the client (as MiniZinc's Stop sends them) end the run at once with
    its stream whole and 128 + the signal's number, also when the launcher ignored SIGINT."""
    interrupts_end_the_run_whole(tmp_path, served)


def _runs_writing_to(target: str, but: int) -> list[int]:
    """Processes (other than `but`) whose standard output is `target` (a /proc fd link)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != but:
            try:
                if os.readlink(entry / "fd" / "1") == target:
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def test_a_killed_client_ends_its_run(served, tmp_path):
    """MiniZinc killed the client outright (SIGKILL): the run, in the server's process tree, sees
    the socket close and ends within a second instead of searching on."""
    client = subprocess.Popen(
        [sys.executable, "-m", "fzn_gpu", "-a", "--check", fzn(tmp_path, queens_by_pairs(15))],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=served,
        cwd=ROOT,
    )
    client.stdout.readline()  # the run has begun
    target = os.readlink(f"/proc/{client.pid}/fd/1")
    runs = _runs_writing_to(target, client.pid)
    assert len(runs) == 1, runs
    client.kill()
    client.wait()
    t = time.monotonic()
    while not _gone(runs[0]) and time.monotonic() - t < 10:
        time.sleep(0.05)
    assert _gone(runs[0]), "the run of a killed client searches on"
    assert time.monotonic() - t < 1.0 + LIMIT_SLACK_S


def test_an_orphaned_client_ends_its_run(served, tmp_path):
    """The launcher killed, the client's SIGINT ignored: the client notices its parent is gone,
    the run ends within about a second with its stream whole, and so does the client."""
    out = tmp_path / "out.txt"
    cmd = (
        f"trap '' INT; {shlex.quote(sys.executable)} -m fzn_gpu -a --check "
        f"{shlex.quote(fzn(tmp_path, queens_by_pairs(15)))} > {shlex.quote(str(out))} 2>&1 & echo $!; exec sleep 120"
    )
    parent = subprocess.Popen(["sh", "-c", cmd], stdout=subprocess.PIPE, text=True, cwd=ROOT, env=served)
    client = int(parent.stdout.readline())
    deadline = time.monotonic() + 60
    while "----------" not in (out.read_text() if out.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert time.monotonic() < deadline, out.read_text()
    runs = _runs_writing_to(os.readlink(f"/proc/{client}/fd/1"), client)
    assert len(runs) == 1, runs
    parent.kill()
    parent.wait()
    t = time.monotonic()
    while not (_gone(runs[0]) and _gone(client)) and time.monotonic() - t < 10:
        time.sleep(0.05)
    assert _gone(runs[0]) and _gone(client), "the orphaned run searches on"
    assert time.monotonic() - t < 1.5 + LIMIT_SLACK_S
    text = out.read_text()
    assert "Traceback" not in text and "violates" not in text and text.rstrip().endswith("----------")


def test_through_minizinc(served, tmp_path):
    if not have_minizinc():
        pytest.skip("needs minizinc with gpu-fzn registered (README set-up)")
    r = subprocess.run(
        ["minizinc", "--solver", "gpu-fzn", "-a", str(ROOT / "models" / "nqueens.mzn")],
        capture_output=True,
        text=True,
        env=served,
        timeout=120,
    )
    assert r.returncode == 0 and r.stdout.count("----------") == 92 and "==========" in r.stdout, r.stderr


def test_one_server_per_installation_and_environment(tmp_path):
    base = {"PATH": "/usr/bin", "FZN_GPU_SERVER_DIR": str(tmp_path)}
    key = launch.server_key(base)
    assert (
        launch.server_key({**base, "HOME": "/elsewhere", "FZN_GPU_SERVER": "off", "FZN_GPU_SERVER_IDLE_S": "9"}) == key
    )
    assert launch.server_key({**base, "FZN_GPU_KERNEL": "item"}) != key
    assert launch.server_key({**base, "POCL_DEVICES": "cpu"}) != key
    assert launch.server_key({**base, "PYTHONPATH": "/x"}) != key


def test_require_without_a_server_says_so(tmp_path):
    r = run(_env(tmp_path), fzn(tmp_path, QUEENS6))
    assert r.returncode == 1 and "no solver server" in r.stderr and r.stdout == ""


def test_a_stale_socket_is_replaced_and_an_idle_server_exits(tmp_path):
    """A socket left by a server that died: the run goes on in its own process (its solution
    checked) and starts a server in its place, which exits after FZN_GPU_SERVER_IDLE_S idle."""
    env = _env(tmp_path, "on", FZN_GPU_SERVER_IDLE_S="2")
    path = _socket(env)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()
    r = run(env, "--check", fzn(tmp_path, QUEENS6))
    assert r.returncode == 0 and len(solutions(r.stdout)) == 1, r.stderr
    deadline = time.monotonic() + 60
    while not _answers(path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _answers(path), "no server replaced the stale socket"
    again = run({**env, "FZN_GPU_SERVER": "require"}, "--check", fzn(tmp_path, QUEENS6))
    assert again.returncode == 0 and len(solutions(again.stdout)) == 1, again.stderr
    pid = int((tmp_path / f"{path.name}.pid").read_text())
    deadline = time.monotonic() + 30
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(pid) and not path.exists(), "the idle server stays"


def test_at_most_a_few_servers_of_a_user_whatever_their_folders(tmp_path, monkeypatch):
    """Starting a server where MAX_SERVERS of this user run already, each in a folder of its own,
    asks those whose last run is the oldest to end; a process whose pid file does not name it
    (a server's spare or run, forked with its command line) or that is no server is never
    signalled."""
    sleeper = [sys.executable, "-c", "import sys, time; time.sleep(60)"]
    socks = [tmp_path / f"d{i}" / "k.sock" for i in range(4)]
    servers = [subprocess.Popen([*sleeper, "fzn_gpu.server", str(p)]) for p in socks]
    spare = subprocess.Popen([*sleeper, "fzn_gpu.server", str(socks[0])])  # forked: not in the pid file
    other = subprocess.Popen([*sleeper, "not-a-server", str(tmp_path / "o.sock")])
    monkeypatch.setattr(launch, "MAX_SERVERS", len(launch.user_servers()) + len(servers) - 1)
    try:
        for age, (proc, sock) in enumerate([(other, tmp_path / "o.sock"), *zip(servers, socks)]):
            sock.parent.mkdir(exist_ok=True)
            pid_file = Path(f"{sock}.pid")
            pid_file.write_text(f"{proc.pid}\n")
            os.utime(pid_file, (1000 + age, 1000 + age))  # `other` the oldest of all
        time.sleep(0.2)  # their command lines in /proc
        launch._make_room()
        servers[0].wait(timeout=10)  # the least recent two servers
        servers[1].wait(timeout=10)
        time.sleep(0.5)
        assert all(p.poll() is None for p in [*servers[2:], spare, other])
    finally:
        for p in [other, spare, *servers]:
            p.kill()
            p.wait()


def test_a_server_sent_sigterm_takes_its_socket_with_it(tmp_path):
    env = _env(tmp_path, FZN_GPU_SERVER_IDLE_S="300")
    proc = _start_server(env)
    path = _socket(env)
    assert _answers(path)
    proc.terminate()
    assert proc.wait(timeout=30) == 0
    assert not path.exists() and not Path(f"{path}.pid").exists()


@pytest.mark.parametrize("moment", ["importing", "serving", "a client waiting", "a spare hanging"])
def test_a_server_sent_sigterm_exits_within_a_second_whatever_it_is_doing(tmp_path, moment):
    """SIGTERM while the server still imports (its caches cold), while it serves, while a
    client holds a connection without a request, and while its spare hangs in OpenCL's start:
    each time the server is gone within a second (server.EXIT_S) and leaves no socket behind."""
    extra = {"FZN_GPU_TEST_HOOKS": "spare=hang"} if moment == "a spare hanging" else {}
    env = _env(tmp_path, FZN_GPU_SERVER_IDLE_S="300", **extra)
    path = _socket(env)
    if moment == "importing":
        proc = subprocess.Popen(
            [sys.executable, "-m", "fzn_gpu.server", str(path)], env=env, cwd=ROOT, start_new_session=True
        )
        time.sleep(0.3)  # inside its imports: the socket comes after them
    else:
        proc = _start_server(env)
    held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if moment == "a client waiting":
        held.connect(str(path))
    try:
        sent = time.monotonic()
        proc.terminate()
        code = proc.wait(timeout=30)
        took = time.monotonic() - sent
    finally:
        held.close()
    assert code in (0, -signal.SIGALRM) and took < 2.0, (code, took)  # 1 s and a loaded machine's margin
    assert not path.exists()


def test_a_spare_that_never_gets_ready_leaves_runs_to_their_own_processes(tmp_path):
    """A spare whose OpenCL start hangs (a test's fault spare=hang: fzn_gpu/hooks.py): the server gives up after
    FZN_GPU_SERVER_READY_S, the run waiting on it goes on in its own process (its solution
    checked), and no server is started there again for a while."""
    env = _env(tmp_path, "on", FZN_GPU_TEST_HOOKS="spare=hang", FZN_GPU_SERVER_READY_S="1")
    proc = _start_server(env)
    path = _socket(env)
    r = run(env, "--check", fzn(tmp_path, QUEENS6))
    assert r.returncode == 0 and len(solutions(r.stdout)) == 1, r.stderr
    assert proc.wait(timeout=30) == 0 and Path(f"{path}.broken").exists() and not path.exists()
    again = run(env, "--check", fzn(tmp_path, QUEENS6))
    assert again.returncode == 0 and len(solutions(again.stdout)) == 1, again.stderr
    time.sleep(2.0)
    assert not path.exists(), "a server was started where one gave up"


def test_a_run_lets_go_of_its_streams_before_its_process_ends(tmp_path):
    """MiniZinc reads the solver's output until every holder of the pipe has closed it: a
    served run releases the client's streams once its output is flushed, so a process whose end
    takes long (a GPU driver's teardown; here the test's fault exit=linger:S) keeps neither the
    client nor the output's reader waiting. In a process of its own the same fault holds the
    run, which shows that it fires."""
    linger = 6.0
    env = _env(tmp_path, "require", FZN_GPU_TEST_HOOKS=f"exit=linger:{linger}")
    proc = _start_server(env)
    try:
        path = fzn(tmp_path, QUEENS6)
        started = time.monotonic()
        client = subprocess.Popen(
            [sys.executable, "-m", "fzn_gpu", "--check", path],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )
        out = client.stdout.read()  # until every holder of the pipe has closed it
        read_s = time.monotonic() - started
        assert client.wait(timeout=30) == 0, client.stderr.read()
        assert read_s < linger / 2, read_s
        values = _queens_values(out)
        checker = Checker(parse_items(QUEENS6, "q.fzn"))
        assert len(values) == 1 and checker.check({f"q{i + 1}": x for i, x in enumerate(values[0])}) == []
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    started = time.monotonic()
    own = run(_env(tmp_path, "off", FZN_GPU_TEST_HOOKS="exit=linger:2"), "--check", path)
    assert own.returncode == 0 and len(solutions(own.stdout)) == 1 and time.monotonic() - started >= 2.0
