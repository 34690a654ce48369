"""The solver server serves its own user alone (docs/SECURITY.md): another user's connection is
refused (SO_PEERCRED) even where the folder and socket let it in; the socket folder is a real
folder, private to its owner (a symbolic link or a shared folder is refused); a request must
arrive whole within its deadline (a client trickling a byte at a time is cut off); silent
connections hold at most MAX_WAITING spares; a subcommand sent to the server is never run
there; and a client never hands its run to a server of another user."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from fzn_gpu import launch, server

from test_cli import QUEENS6, fzn, solutions
from test_server import _env, _socket, _start_server, run

# a client that speaks the protocol by hand: its argv as JSON, a pause between bytes (0: none)
RAW_CLIENT = r"""
import array, json, os, socket, struct, sys, time
path, argv, trickle, protocol = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
body = json.dumps({"protocol": protocol, "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ),
                   "started": time.monotonic(), "client": os.getpid()}).encode()
data = struct.pack("!I", len(body)) + body
t0 = time.monotonic()
try:
    s.sendmsg([b"R"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
    if trickle:
        for b in data:
            s.send(bytes([b]))
            time.sleep(trickle)
    else:
        s.sendall(data)
    s.settimeout(60)
    reply = s.recv(4096).decode(errors="replace")
except OSError as err:
    reply = "closed: " + type(err).__name__
print(json.dumps({"reply": reply, "s": time.monotonic() - t0}))
"""


@contextlib.contextmanager
def server_running(env: dict[str, str]):
    """A server for `env` while the block runs, ended after it."""
    proc = _start_server(env)
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def raw_client(path: Path, argv: list[str], trickle: float = 0.0, python: str = sys.executable, **popen) -> dict:
    r = subprocess.run(
        [python, "-c", RAW_CLIENT, str(path), json.dumps(argv), str(trickle), str(launch.PROTOCOL)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        **popen,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_symbolic_link_a_shared_folder_or_a_file_is_no_socket_folder(tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o700)
    shared.chmod(0o750)
    (tmp_path / "file").write_text("")
    for name, words in [("link", "not a folder"), ("shared", "not private"), ("file", "not a folder")]:
        with pytest.raises(PermissionError, match=words):
            launch.private_folder(str(tmp_path / name))
    launch.private_folder(str(real))  # the real folder itself is fine
    launch.private_folder(str(tmp_path / "new"))  # and one made here is made private
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700
    # a run told to use the link runs in its own process, and no socket appears behind it
    env = _env(tmp_path / "link", mode="on")
    r = run(env, "--check", fzn(tmp_path, QUEENS6))
    assert r.returncode == 0 and len(solutions(r.stdout)) == 1, r.stderr
    time.sleep(1.0)
    assert not list(real.iterdir())
    r = run(_env(tmp_path / "link"), "--check", fzn(tmp_path, QUEENS6))  # require: says why
    assert r.returncode == 1 and "not a folder" in r.stderr


def test_the_socket_is_its_owners_alone_whatever_the_umask(tmp_path):
    env = _env(tmp_path)
    old = os.umask(0o002)
    try:
        with server_running(env):
            assert stat.S_IMODE(_socket(env).stat().st_mode) == 0o600
    finally:
        os.umask(old)


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/usr/bin/python3").exists(), reason="needs root (to act as nobody)")
def test_another_user_is_refused_though_the_folder_and_socket_let_it_in():
    """The finding as reported: the owner's folder and socket open to others (a group folder, a
    umask of 002); another user connects with a request. It is never run, and the server goes
    on serving its owner."""
    folder = Path(tempfile.mkdtemp(prefix="fzn-gpu-shared-", dir="/tmp"))
    model = folder / "q.fzn"
    try:
        env = _env(folder)
        proc = _start_server(env)
        try:
            model.write_text(QUEENS6)
            folder.chmod(0o755)
            model.chmod(0o644)
            _socket(env).chmod(0o666)
            cfg = folder / "cfg"

            def as_nobody() -> None:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)

            said = raw_client(_socket(env), [str(model)], python="/usr/bin/python3", preexec_fn=as_nobody, cwd="/")
            assert said["reply"] == "" or said["reply"].startswith("closed"), said  # no "pid": nothing ran
            said = raw_client(
                _socket(env),
                ["install-solver-config", "--dir", str(cfg)],
                python="/usr/bin/python3",
                preexec_fn=as_nobody,
                cwd="/",
            )
            assert not said["reply"].startswith("pid") and not cfg.exists()
            folder.chmod(0o700)
            r = run(env, "--check", str(model))  # the owner is still served (FZN_GPU_SERVER=require)
            assert r.returncode == 0 and len(solutions(r.stdout)) == 1, r.stderr
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_subcommand_sent_to_the_server_is_never_run_there(tmp_path):
    """install-solver-config is meant for the client's own process (it writes where the user
    says): a request naming it is dropped unrun."""
    env = _env(tmp_path / "s")
    with server_running(env):
        cfg = tmp_path / "cfg"
        said = raw_client(_socket(env), ["install-solver-config", "--dir", str(cfg)])
        assert not said["reply"].startswith("pid") and not cfg.exists(), said


def test_a_client_trickling_its_request_is_cut_off_at_the_deadline(tmp_path):
    env = _env(tmp_path / "s", FZN_GPU_SERVER_REQUEST_S="1.5")
    with server_running(env):
        said = raw_client(_socket(env), [fzn(tmp_path, QUEENS6)], trickle=0.4)  # thousands of bytes
        assert not said["reply"].startswith("pid") and said["s"] < 10, said


def test_silent_connections_hold_at_most_a_few_spares(tmp_path):
    env = _env(tmp_path / "s", FZN_GPU_SERVER_REQUEST_S="30")
    proc = _start_server(env)
    held = []
    try:
        for _ in range(3 * server.MAX_WAITING):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(_socket(env)))
            held.append(s)
            time.sleep(0.1)
        time.sleep(3.0)
        children = [
            p for p in os.listdir("/proc") if p.isdigit() and _ppid(p) == proc.pid
        ]  # the waiting spares, and one spare ready for the next client at most
        assert len(children) <= server.MAX_WAITING + 1, children
    finally:
        for s in held:
            s.close()
        proc.terminate()
        proc.wait(timeout=30)


def _ppid(pid: str) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def test_a_client_never_hands_its_run_to_another_users_server(tmp_path, monkeypatch):
    env = _env(tmp_path / "s")
    with server_running(env):
        assert launch._connect(str(_socket(env))) is not None
        monkeypatch.setattr(launch, "peer_uid", lambda conn: os.getuid() + 1)
        assert launch._connect(str(_socket(env))) is None
