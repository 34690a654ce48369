"""`fzn-gpu`'s entry point: the run is handed to a warm solver server when one is up (server.py),
else it runs in this process, and a server is started in the background for the next run.

A run in a fresh process spends most of a small model's time starting: Python imports numpy,
pyopencl, Lark and the engine, and OpenCL starts its drivers and creates a context
(docs/bench/measurements.md, start-up). MiniZinc starts a new solver process for every model, so the
IDE and a regression suite pay that on every run. The server has done the imports once; a spare
process forked from it has started OpenCL and waits on the socket. This module is all a run
through the server loads: the standard library's socket, the request (argument list, working
folder, environment, the moment this process started, and its standard streams passed as file
descriptors), and the forwarding of SIGINT and SIGTERM to the run, whose exit code ends this
process.

Which server: one per installation, Python and OpenCL-relevant environment (`server_key`), so
a changed package, kernel file or FZN_GPU_* setting never meets a server started before it.
FZN_GPU_SERVER=off runs every run in its own process as before; `require` fails where no
server answers (tests); FZN_GPU_SERVER_DIR names the socket's folder; FZN_GPU_SERVER_IDLE_S
how long a server waits for a run before it exits."""

from __future__ import annotations

import array
import hashlib
import json
import os
import signal
import socket
import stat
import struct
import sys
import time
from collections.abc import Mapping

from . import settings

MODES = settings.SERVER_MODES
# the environment a server's imports and OpenCL start-up may read: a run whose values differ
# goes to another server (the rest of the environment is the run's own, set in its process)
KEY_ENV_PREFIXES = (
    "FZN_GPU_",
    "POCL_",
    "PYOPENCL_",
    "OCL_",
    "OPENCL",
    "CUDA_",
    "NVIDIA_",
    "GPU_",
    "PYTHON",
    "LD_",
    "OMP_",
    "OPENBLAS_",
    "MKL_",
)
# subcommands that change or inspect the installation run here, never in a server
IN_PROCESS = {"install-solver-config", "build-kernels", "check-devices"}
PROTOCOL = 1
PARENT_POLL_S = 0.5  # how often a client checks that its launcher is still there (watchdog.POLL_S)
FIRST_REPLY_S = 10.0
MAX_SERVERS = 4  # servers of one user at a time (one per installation and environment)
BROKEN_S = 3600.0  # how long no server is started where one gave up (server.py writes `.broken`)  # a spare that has not taken the run by then (its OpenCL start hung): run here


def mode() -> str:
    value = (settings.text("FZN_GPU_SERVER") or "on").strip().lower()
    return value if value in MODES else "on"


def server_dir() -> str:
    """The folder of the sockets: private to the user (`private_folder`)."""
    folder = settings.text("FZN_GPU_SERVER_DIR")
    if not folder:
        runtime = settings.text("XDG_RUNTIME_DIR")
        folder = os.path.join(runtime, "fzn-gpu") if runtime else f"/tmp/fzn-gpu-{os.getuid()}"
    private_folder(folder)
    return folder


def private_folder(folder: str) -> None:
    """Makes `folder` (mode 0700) where it is missing, and refuses it (PermissionError) unless it
    is a folder itself, not a symbolic link, that this user owns and no one else may enter: a
    link planted in /tmp would carry the sockets, locks and pid files elsewhere, and a folder
    others may enter would let them reach a socket (docs/SECURITY.md)."""
    parent = os.path.dirname(os.path.abspath(folder))
    os.makedirs(parent, mode=0o700, exist_ok=True)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise PermissionError(f"{folder} is not a folder (a symbolic link, or a file)")
    if st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise PermissionError(f"{folder} is not private to this user (its owner's alone, mode 0700)")


def peer_uid(conn: socket.socket) -> int | None:
    """The user id of the process at the other end of a Unix socket (SO_PEERCRED), or None."""
    try:
        data = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    return struct.unpack("3i", data)[1]


def _tree_stamp(h, folder: str) -> None:
    """Every file's name, size and modification time under `folder` (caches left out)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name == "__pycache__" or entry.name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            _tree_stamp(h, entry.path)
        else:
            st = entry.stat()
            h.update(f"{entry.path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())


def server_key(environ: Mapping[str, str] | None = None) -> str:
    """A name for the server this run may use: the interpreter and its environment (a virtual
    environment's python is a link to the system's, with other packages), this installation's
    files (the package, and its kernels and grammar beside it in a checkout) and the
    environment that a server's imports and OpenCL start-up read."""
    env: Mapping[str, str] = settings.environment() if environ is None else environ
    h = hashlib.sha256(
        f"{PROTOCOL}\0{os.path.realpath(sys.executable)}\0{sys.prefix}\0{sys.version}\0{os.getuid()}\n".encode()
    )
    from .resources import resource_dir

    _tree_stamp(h, os.path.dirname(os.path.abspath(__file__)))
    for name in ("kernels", "grammar"):  # beside the package in a checkout (inside it once installed)
        _tree_stamp(h, str(resource_dir(name)))
    for name in sorted(env):
        if name.startswith(KEY_ENV_PREFIXES) and not name.startswith("FZN_GPU_SERVER") and name != "PYTHONUNBUFFERED":
            h.update(f"{name}={env[name]}\n".encode())
    return h.hexdigest()[:20]


def socket_path(key: str) -> str:
    return os.path.join(server_dir(), f"{key}.sock")


def _wants_server(argv: list[str]) -> bool:
    return mode() != "off" and bool(argv) and argv[0] not in IN_PROCESS


def _in_process(argv: list[str]) -> None:
    if sys.flags.no_site:  # started by the msc's launcher (solver_config.py): the packages' paths now
        import site

        site.main()
    from .cli import main as run_here

    run_here(argv)


def user_servers() -> list[tuple[float, int]]:
    """(last run, pid) of every solver server of this user, in any socket folder: a process of
    this user's whose command line runs fzn_gpu.server on a socket whose pid file names it (its
    spares and runs, forked from it, share its command line but not its pid). The last run is
    the pid file's time, which the server touches at each run."""
    from .procs import own_processes

    live: list[tuple[float, int]] = []
    for pid, argv in own_processes():
        if b"fzn_gpu.server" not in argv[:-1]:
            continue
        try:
            pid_file = os.fsdecode(argv[-1]) + ".pid"
            with open(pid_file) as f:
                if int(f.read().strip()) != pid:
                    continue
            live.append((os.stat(pid_file).st_mtime, pid))
        except (OSError, ValueError):
            continue
    return live


def _make_room() -> None:
    """At most MAX_SERVERS servers of this user at a time, whatever their folders (each keeps a
    spare process with its OpenCL contexts): the one whose last run is the oldest is asked to
    end (SIGTERM: its runs go on, its spare ends)."""
    live = user_servers()
    for _, pid in sorted(live)[: max(0, len(live) - MAX_SERVERS + 1)]:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass


def _start_server(path: str) -> None:
    """A server for the next run, detached (its own session, no standard streams), started
    from the folder above the package so that it imports this same package."""

    try:  # a server gave up here lately (its spare's OpenCL start hung): none for a while
        if time.time() - os.stat(path + ".broken").st_mtime < BROKEN_S:
            return
    except OSError:
        pass
    _make_room()
    from .procs import start_detached

    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    start_detached(["fzn_gpu.server", path], cwd=package_parent)  # where it fails, the next run tries again


def _connect(path: str) -> socket.socket | None:
    """A connection to the server at `path`, where one answers and runs as this user (the run's
    streams, environment and files go to it)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError:
        s.close()
        return None
    if peer_uid(s) != os.getuid():
        s.close()
        return None
    return s


def _send_request(s: socket.socket, argv: list[str]) -> None:
    from . import clock

    request = {
        "protocol": PROTOCOL,
        "argv": argv,
        "cwd": os.getcwd(),
        "env": settings.environment(),
        "started": clock.STARTED,  # the time limit counts from this process's start
        "by_minizinc": clock.BY_MINIZINC,  # the client's parent; the server's run's is the server
        "minizinc_started": clock.MINIZINC_STARTED,
        "minizinc_limit_ms": clock.MINIZINC_LIMIT_MS,
        "client": os.getpid(),
    }
    body = json.dumps(request).encode()
    # the three standard streams travel with the first byte; the request follows, its length first
    s.sendmsg([b"R"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
    s.sendall(struct.pack("!I", len(body)) + body)


class _Remote:
    """The run on the server's side: its pid once known, the signals meanwhile received."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.pending: list[int] = []

    def forward(self, signo: int, _frame=None) -> None:
        if self.pid is None:
            self.pending.append(signo)
            return
        try:
            os.kill(self.pid, signo)
        except ProcessLookupError:
            pass

    def started(self, pid: int) -> None:
        self.pid = pid
        for signo in self.pending:
            self.forward(signo)
        self.pending.clear()


def _run_remote(s: socket.socket, argv: list[str], remote: _Remote) -> int | None:
    """The run's exit code; None where the server closed the connection before the run began
    (a spare shut down as it was reached, or none took it in FIRST_REPLY_S): the caller then
    runs it here."""
    # whatever the launcher's disposition (an ignored SIGINT included), as the watchdog does
    for signo in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signo, remote.forward)
    try:
        _send_request(s, argv)
    except OSError:
        return None
    buf = b""
    parent = os.getppid()
    s.settimeout(FIRST_REPLY_S)
    while True:
        try:
            chunk = s.recv(4096)
        except TimeoutError:
            if remote.pid is None:
                break  # no spare took the run
            if os.getppid() != parent:  # the launcher is gone: end the run, as a fresh process would
                parent = os.getppid()
                remote.forward(signal.SIGTERM)
            continue
        except OSError:  # the connection reset: as if closed
            chunk = b""
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            word, _, value = line.decode().partition(" ")
            if word == "pid":
                s.settimeout(PARENT_POLL_S)
                remote.started(int(value))
            elif word == "exit":
                return int(value)
    if remote.pid is None:
        return None
    sys.stderr.write(
        "fzn-gpu: the solver's process ended without an exit status (it crashed); run again with FZN_GPU_SERVER=off to see why\n"
    )
    return 1


def main() -> None:
    argv = sys.argv[1:]
    if not _wants_server(argv):
        _in_process(argv)
        return
    try:
        path = socket_path(server_key())
    except OSError as err:
        if mode() == "require":
            sys.stderr.write(f"fzn-gpu: no solver server: {err}\n")
            sys.exit(1)
        _in_process(argv)
        return
    s = _connect(path)
    if s is None:
        if mode() == "require":
            sys.stderr.write(f"fzn-gpu: no solver server answers at {path} (FZN_GPU_SERVER=require)\n")
            sys.exit(1)
        _start_server(path)
        _in_process(argv)
        return
    remote = _Remote()
    code = _run_remote(s, argv, remote)
    s.close()
    if code is None:
        if remote.pending:  # interrupted before any run began
            os._exit(128 + remote.pending[0])
        if mode() == "require":
            sys.stderr.write("fzn-gpu: the solver server closed the connection before the run began\n")
            sys.exit(1)
        for signo in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signo, signal.SIG_DFL if signo == signal.SIGTERM else signal.default_int_handler)
        _in_process(argv)
        return
    os._exit(code)
