"""The solver server: a process that has imported the solver once and forks a process per run,
so that a run through MiniZinc starts in a fraction of a fresh process's time (launch.py says
why and how a run reaches it; docs/ARCHITECTURE.md, "Start-up").

    server (imports done; never touches OpenCL)
      └─ spare (forked ahead: OpenCL's drivers started, a context for every device, waiting on
         the socket) ─ accepts a client ─> becomes that run; the server forks the next spare

A run's process is forked before OpenCL starts, never after: a driver's threads and state do
not survive a fork. The spare accepts one connection, receives the client's standard streams
(as file descriptors), argument list, working folder, environment and start time, puts them in
place, tells the client its pid (the client forwards SIGINT and SIGTERM to it) and runs the
command line exactly as a fresh process would; its exit code goes back on the socket. A run
whose client is gone (the socket closed: MiniZinc killed it) ends as if sent SIGTERM, through
the watchdog's owner check.

The server holds a lock beside its socket for its lifetime (one server per key), exits after
FZN_GPU_SERVER_IDLE_S seconds (default 900) without a run, or when its socket file is removed
or replaced, and never outlives its runs' needs: each run is a process of its own."""

from __future__ import annotations

import fcntl
import importlib
import json
import os
import pkgutil
import select
import signal
import socket
import struct
import sys
import time
import traceback
from dataclasses import dataclass

from fzn_gpu import hooks, settings

IDLE_S = 900.0
POLL_S = 0.5
SPARE_FAILURES = 3  # spares that die before taking a run, one after another: the server gives up
REQUEST_TIMEOUT_S = 10.0  # a client's whole request (FZN_GPU_SERVER_REQUEST_S)
MAX_REQUEST_BYTES = 1 << 24
MAX_WAITING = 4  # spares that took a connection and wait for its request, at most
READY_S = 60.0  # a spare whose OpenCL start takes longer (a driver hung): the server gives up,
# leaving a `.broken` file beside its socket (launch.BROKEN_S: no server there for a while)
# modules a run never needs in its process: the benchmark tools, and the entry points
NOT_PRELOADED = ("fzn_gpu.bench", "fzn_gpu.__main__", "fzn_gpu.server")
# read and packed once by the server, so that the first model of every run does not pay for
# Lark's lexers, the regular expressions' compilation and numpy's lazy submodules
SAMPLE_MODEL = """\
predicate fzn_all_different_int(array [int] of var int: x);
array [1..3] of int: c = [2, 3, -1];
var 1..9: x :: output_var;
var {1, 3, 5, 7}: y :: output_var;
var -5..20: z :: is_defined_var :: var_is_introduced;
var bool: b :: output_var;
var bool: r :: var_is_introduced :: is_defined_var;
var 0..100: obj :: output_var;
array [1..3] of var int: xs :: output_array([1..3]) = [x, y, z];
constraint fzn_all_different_int([x, y, z]);
constraint int_lin_eq([1, 1, -1], [x, y, z], 0) :: defines_var(z);
constraint int_lin_le(c, [x, y, z], 30);
constraint int_le_reif(x, y, r) :: defines_var(r);
constraint bool_clause([b, r], []);
constraint int_times(x, y, obj);
constraint array_int_element(x, [1, 2, 3, 4, 5, 6, 7, 8, 9], obj);
solve :: seq_search([int_search([x, y], first_fail, indomain_min, complete), bool_search([b], input_order, indomain_max, complete)]) minimize obj;
"""


# a tour of three cities with a capacity row: the assignment, choice and linear relaxations
# run on it (fzn_gpu/relax/)
RELAX_SAMPLE = """\
predicate fzn_gpu_circuit(int: offset, array [int] of var int: x);
var 1..3: s1;
var 1..3: s2;
var 1..3: s3;
var 0..9: d1;
var 0..9: d2;
var 0..9: d3;
var 0..30: len :: output_var;
constraint fzn_gpu_circuit(1, [s1, s2, s3]);
constraint array_int_element(s1, [0, 2, 9], d1);
constraint array_int_element(s2, [1, 0, 6], d2);
constraint array_int_element(s3, [5, 3, 0], d3);
constraint int_lin_le([1, 2, 1], [d1, d2, d3], 20);
constraint int_lin_eq([1, 1, 1, -1], [d1, d2, d3, len], 0) :: defines_var(len);
solve minimize len;
"""


def _preload() -> None:
    """Import what a run imports (every module of the package, numpy, pyopencl, Lark's grammar
    analysed): once here, shared by every forked run."""
    import numpy  # noqa: F401
    import pyopencl  # noqa: F401

    import fzn_gpu

    for info in pkgutil.walk_packages(fzn_gpu.__path__, "fzn_gpu."):
        if info.name.startswith(NOT_PRELOADED):
            continue
        try:
            importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - a run that needs the module meets the same error itself
            pass
    from fzn_gpu.engine.pack import pack
    from fzn_gpu.flatzinc.lower import lower
    from fzn_gpu.flatzinc.parser import parse_items
    from fzn_gpu.options import SolveOptions
    from fzn_gpu.relax import strengthen

    try:
        pack(lower(parse_items(SAMPLE_MODEL, "<sample>"), "<sample>"), SolveOptions())
        # the relaxations' numpy routines loaded, so that a run does not pay for their first use
        strengthen(lower(parse_items(RELAX_SAMPLE, "<sample>"), "<sample>"))
    except Exception:  # noqa: BLE001 - only a warm-up
        pass


RECENT_PROGRAMS = 8  # the programs recent runs took that a spare loads ahead


def _recent_file(path: str) -> str:
    return path + ".programs"


def _stamp(file: str) -> int:
    try:
        return os.stat(file).st_mtime_ns
    except OSError:
        return 0


def _note_program(path: str, d, kinds, model: str, options: list[str], floats: bool) -> None:
    """A run's program, last in the file of recent ones (device.program_used)."""
    from fzn_gpu.runtime import device

    entry = json.dumps(
        {
            "device": device.device_id(d),
            "kinds": sorted(kinds) if kinds is not None else None,
            "model": model,
            "options": options,
            "floats": floats,
        }
    )
    try:
        with open(_recent_file(path)) as f:
            entries = [e for e in f.read().splitlines() if e and e != entry]
    except OSError:
        entries = []
    entries = [*entries, entry][-RECENT_PROGRAMS:]
    tmp = f"{_recent_file(path)}.{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            f.write("\n".join(entries) + "\n")
        os.replace(tmp, _recent_file(path))
    except OSError:
        pass  # only a hint for the next spares


def _preload_programs(path: str) -> None:
    """In a spare: the programs runs may take, where this machine built them before, loaded from
    the drivers' cache into this process, where the run finds them (device.build): each
    device's generic program (every CPU run takes it; a GPU's models whose specialised program
    is not built yet do) and the programs recent runs of this server took (a model run again,
    its specialised program). Nothing that is not built yet: a build of seconds would keep the
    spare from taking its run."""
    from fzn_gpu.engine.runner import Tuning
    from fzn_gpu.runtime import build_record, device

    wanted: list[tuple] = []
    # the CPU's part beside the GPUs too: a run on both searches on it (device.run_devices)
    devices = device.run_devices()
    for d in devices:
        t = Tuning.for_device(d)
        wanted.append((d, None, t.model, t.build_options(d, False), False))
    try:
        with open(_recent_file(path)) as f:
            recent = [json.loads(line) for line in f.read().splitlines() if line]
    except (OSError, ValueError):
        recent = []
    by_id = {device.device_id(d): d for d in devices}
    for e in reversed(recent):  # the latest first
        used = by_id.get(e.get("device"))
        if used is not None:
            kinds = frozenset(e["kinds"]) if e.get("kinds") is not None else None
            wanted.append((used, kinds, e["model"], list(e["options"]), bool(e.get("floats"))))
    for d, kinds, model, options, floats in wanted:
        if build_record.was_built(device.build_key(d, kinds, model, options)):
            device.build(d, kinds, options, model, floats)


def _recv_exact(conn: socket.socket, n: int, left) -> bytes:
    """n bytes, each read under the time `left()` says is left."""
    data = b""
    while len(data) < n:
        conn.settimeout(left())
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the client closed the connection")
        data += chunk
    return data


def _receive_request(conn: socket.socket) -> tuple[list[int], dict]:
    """The client's three standard streams (descriptors) and its request, all of it within
    request_s() (a client trickling a byte at a time is cut off there) and at most
    MAX_REQUEST_BYTES long."""
    deadline = time.monotonic() + request_s()

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the request took too long")
        return remaining

    conn.settimeout(left())
    fds: list[int] = []
    _, ancillary, _, _ = conn.recvmsg(1, socket.CMSG_SPACE(3 * 4))
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.extend(struct.unpack(f"{len(data) // 4}i", data[: len(data) - len(data) % 4]))
    (length,) = struct.unpack("!I", _recv_exact(conn, 4, left))
    if length > MAX_REQUEST_BYTES:
        raise ConnectionError("the request is too long")
    request = json.loads(_recv_exact(conn, length, left))
    conn.settimeout(None)
    return fds, request


def request_s() -> float:
    """How long a client may take to send its whole request (FZN_GPU_SERVER_REQUEST_S)."""
    try:
        return float(settings.text("FZN_GPU_SERVER_REQUEST_S") or REQUEST_TIMEOUT_S)
    except ValueError:
        return REQUEST_TIMEOUT_S


def _client_gone(conn: socket.socket) -> bool:
    """The client sends nothing after its request: the socket readable means it closed."""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return bool(readable) and conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def release_streams() -> None:
    """Points this process's standard streams at /dev/null, letting go of the client's.

    MiniZinc reads the solver's output until every holder of the pipe has closed it, and a
    process's descriptors close late in its exit, after its memory is torn down: with a GPU's
    context mapped that teardown is the driver's, and MiniZinc waited through it after the
    run had printed everything. Called once the output is flushed, before the client is told
    the exit code."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    for fd in (0, 1, 2):
        try:
            os.dup2(null, fd)
        except OSError:
            pass
    os.close(null)


def _report_exit(conn: socket.socket, code: int) -> None:
    """The run's last step (exiting.on_exit): the streams let go, then the code sent."""
    release_streams()
    conn.sendall(f"exit {code}\n".encode())


def _become_run(conn: socket.socket, path: str, status_w: int) -> None:
    """In the spare, once a client connected: take its streams and settings and run its command
    line; never returns."""
    from fzn_gpu import clock, exiting, launch, watchdog
    from fzn_gpu.runtime import device

    try:
        fds, request = _receive_request(conn)
        if request.get("protocol") != launch.PROTOCOL or len(fds) != 3:
            raise ConnectionError("a client of another version")
        argv = list(request["argv"])
        if argv and argv[0] in launch.IN_PROCESS:  # solves only: a subcommand runs in its client
            raise ConnectionError("a subcommand")
    except (OSError, ValueError, ConnectionError, KeyError, TypeError):
        os._exit(0)  # no run began: the client runs the model itself
    os.write(status_w, b"g")  # the run begins: the server stops counting this spare as waiting
    os.close(status_w)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    settings.replace_environment(request["env"])
    clock.STARTED = float(request["started"])
    clock.BY_MINIZINC = bool(request.get("by_minizinc"))
    started = request.get("minizinc_started")
    clock.MINIZINC_STARTED = float(started) if started is not None else None
    limit = request.get("minizinc_limit_ms")
    clock.MINIZINC_LIMIT_MS = int(limit) if limit is not None else None
    clock.MARKS.clear()  # the run's own start-up, none of what the server or spare did before
    clock.mark("served")
    sys.stdout.reconfigure(line_buffering=os.isatty(1), write_through=bool(settings.text("PYTHONUNBUFFERED")))  # type: ignore[union-attr]
    sys.stderr.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    watchdog.owner_gone = lambda: _client_gone(conn)
    device.program_used = lambda *used: _note_program(path, *used)
    exiting.on_exit(lambda code: _report_exit(conn, code))
    sys.argv = ["fzn-gpu", *argv]
    conn.sendall(f"pid {os.getpid()}\n".encode())
    from fzn_gpu.cli import main

    try:
        main(argv)
    except SystemExit as done:  # argparse's --help (0) and its usage errors (2), as a process ends
        code = done.code
        if isinstance(code, str):
            sys.stderr.write(code + "\n")
        exiting.finish(code if isinstance(code, int) else 0 if code is None else 1)
    except BaseException:  # noqa: BLE001 - as a fresh process would: the traceback, exit status 1
        traceback.print_exc()
        exiting.finish(1)
    exiting.finish(0)


def _spare(listener: socket.socket, status_w: int, server: int, path: str) -> None:
    """The forked spare: OpenCL started, then one client taken; never returns."""
    for signo in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signo, signal.SIG_DFL)
    stamp = _stamp(_recent_file(path))  # before reading it: a note written meanwhile is seen below
    from fzn_gpu import launch

    try:
        from fzn_gpu.runtime import device, opencl_start

        opencl_start.begin("all", every_type=True)
        opencl_start.wait()
        device.all_devices()
        _preload_programs(path)
    except Exception:  # noqa: BLE001 - the run meets the same fault and reports it
        pass
    if hooks.spare_hangs():  # tests: a driver that never returns
        time.sleep(3600)
    os.write(status_w, b"r")  # ready: the server stops counting its start-up
    while True:
        if os.getppid() != server:
            os._exit(0)  # the server is gone: no one forks the next spare or reaps this one
        readable, _, _ = select.select([listener], [], [], POLL_S)
        if not readable:
            if _stamp(_recent_file(path)) != stamp:  # a run took a program not loaded yet
                stamp = _stamp(_recent_file(path))
                try:
                    _preload_programs(path)
                except Exception:  # noqa: BLE001 - the run meets the same fault and reports it
                    pass
            continue
        try:
            conn, _ = listener.accept()
        except (BlockingIOError, InterruptedError):
            continue
        if launch.peer_uid(conn) != os.getuid():  # another user's process: never served
            conn.close()
            continue
        break
    os.write(status_w, b"t")
    listener.close()
    conn.setblocking(True)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _become_run(conn, path, status_w)


@dataclass
class _Spare:
    pid: int
    status: int  # the read end of a pipe: b"r" once ready, b"t" once it took a run, end of file if it died
    born: float  # time.monotonic() at its fork
    ready: bool = False


def _fork_spare(listener: socket.socket, path: str) -> _Spare:
    r, w = os.pipe()
    server = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            _spare(listener, w, server, path)
        finally:
            os._exit(1)
    os.close(w)
    return _Spare(pid, r, time.monotonic())


def _reap(runs: set[int]) -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        runs.discard(pid)


EXIT_S = 0.9  # a server sent SIGTERM is gone within this, whatever it was doing


def _leave(*_) -> None:
    """SIGTERM (launch.py making room, a user, a test): the server's cleanup (its socket, pid
    file and unstarted spare) runs as SystemExit unwinds it, under a timer whose SIGALRM, left
    to its default action, ends the process at EXIT_S wherever the cleanup or the interpreter's
    shutdown may be."""
    global _terminated
    _terminated = True  # for where the SystemExit below is swallowed (an import's `except BaseException`)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, EXIT_S)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one changes nothing
    raise SystemExit(0)


_terminated = False


def serve(path: str) -> int:
    """Serve runs on the socket at `path` until idle; 0 at once where another server holds it."""
    signal.signal(signal.SIGTERM, _leave)  # from the start: the imports below take seconds on a cold cache
    from fzn_gpu.launch import private_folder

    hooks.load()  # a test's faults for the spares (its runs read their own at cli.main)

    try:
        private_folder(os.path.dirname(os.path.abspath(path)))
    except OSError as err:
        sys.stderr.write(f"fzn-gpu server: {err}\n")
        return 1
    lock = open(path + ".lock", "a")  # noqa: SIM115 - held, locked, for the server's lifetime
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0
    _preload()
    if _terminated:
        return 0
    try:
        os.unlink(path)  # a server that died left it
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    idle = float(settings.text("FZN_GPU_SERVER_IDLE_S") or IDLE_S)
    ready_s = float(settings.text("FZN_GPU_SERVER_READY_S") or READY_S)
    runs: set[int] = set()
    spare: _Spare | None = None
    waiting: dict[int, int] = {}  # status pipe -> pid of each spare that took a connection, its request not yet in
    last = time.monotonic()
    failures = 0
    inode = -1
    try:  # from the bind on: a SIGTERM at any point leaves no socket behind
        umask = os.umask(0o177)  # the socket its owner's alone (mode 0600), whatever the user's umask
        try:
            listener.bind(path)
        finally:
            os.umask(umask)
        inode = os.stat(path).st_ino
        listener.listen(64)
        listener.setblocking(False)  # shared by the spares, each of which may find it taken
        with open(path + ".pid", "w") as f:
            f.write(f"{os.getpid()}\n")
        while not _terminated:
            if spare is None and len(waiting) < MAX_WAITING:
                spare = _fork_spare(listener, path)
            watched = ([spare.status] if spare is not None else []) + list(waiting)
            readable, _, _ = select.select(watched, [], [], POLL_S)
            for fd in [fd for fd in readable if fd in waiting]:  # a run begun, or its spare gone
                if os.read(fd, 1) in (b"g", b""):
                    os.close(fd)
                    del waiting[fd]
            if spare is None:
                pass
            elif spare.status not in readable:
                if not spare.ready and time.monotonic() - spare.born > ready_s:
                    with open(path + ".broken", "w") as f:  # launch.py starts no server here for a while
                        f.write(f"a spare process did not start OpenCL in {ready_s:g} s\n")
                    break
            else:
                said = os.read(spare.status, 1)
                if said == b"r":
                    spare.ready = True
                    continue
                taken = said == b"t"
                if taken:  # until its request has come (b"g"), it counts as waiting
                    waiting[spare.status] = spare.pid
                    runs.add(spare.pid)
                    last = time.monotonic()
                    try:  # when this server last served: launch.py ends the least recent first
                        os.utime(path + ".pid")
                    except OSError:
                        pass
                else:
                    os.close(spare.status)
                failures = 0 if taken else failures + 1
                spare = None
                if failures >= SPARE_FAILURES:
                    break
            _reap(runs)
            if not runs and time.monotonic() - last > idle:
                break
            try:
                if os.stat(path).st_ino != inode:
                    break
            except FileNotFoundError:
                break
    finally:
        try:
            if inode == -1 or os.stat(path).st_ino == inode:  # -1: bound, not yet stamped; the lock says ours
                os.unlink(path)
        except FileNotFoundError:
            pass
        if spare is not None:
            readable, _, _ = select.select([spare.status], [], [], 0)
            if not (readable and b"t" in os.read(spare.status, 2)):  # a spare that took a run finishes it
                try:
                    os.kill(spare.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        listener.close()
        try:
            with open(path + ".pid") as f:
                if f.read().strip() == str(os.getpid()):
                    os.unlink(path + ".pid")
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    code = serve(sys.argv[1])
    os._exit(code)  # no interpreter shutdown: every module of the package and numpy loaded, nothing to save
