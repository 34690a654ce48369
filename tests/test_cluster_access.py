"""Which Ray cluster a run joins, and what it opens (fzn_gpu/cluster/access.py, docs/SECURITY.md):
`--cluster auto` ignores an address file another user planted (or one others may write, or a
link, or one no GCS server of this user's listens behind) and then starts a private instance,
all of whose listening sockets are on 127.0.0.1, with nothing of it left once the run ends; a
cluster named by address is not joined without a Ray token unless RAY_AUTH_MODE=disabled."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fzn_gpu.cluster import access

from helpers import ROOT
from test_cli import fzn, queens


def planted(root: Path, address: str, mode: int = 0o644) -> Path:
    f = root / "ray" / "ray_current_cluster"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(address + "\n")
    f.chmod(mode)
    return f


def test_an_address_file_counts_only_if_this_user_wrote_it_and_runs_the_cluster(tmp_path):
    port = 47000 + os.getpid() % 1000
    f = planted(tmp_path, f"127.0.0.1:{port}")
    assert access.own_cluster_address(str(tmp_path)) is None  # no GCS server of ours on that port
    fake_gcs = subprocess.Popen(  # a process of ours named as Ray's GCS server on that port
        ["gcs_server", "-c", "sleep 30; true", f"--gcs_server_port={port}"], executable="/bin/sh"
    )
    try:
        time.sleep(0.3)
        assert access.own_cluster_address(str(tmp_path)) == f"127.0.0.1:{port}"
        f.chmod(0o666)  # others may write it
        assert access.own_cluster_address(str(tmp_path)) is None
        f.chmod(0o644)
        link_root = tmp_path / "linked"
        (link_root / "ray").mkdir(parents=True)
        (link_root / "ray" / "ray_current_cluster").symlink_to(f)
        assert access.own_cluster_address(str(link_root)) is None  # a link, wherever it points
        if os.geteuid() == 0:
            os.chown(f, 65534, 65534)  # written by another user
            assert access.own_cluster_address(str(tmp_path)) is None
    finally:
        fake_gcs.kill()
        fake_gcs.wait()


def test_a_named_cluster_is_not_joined_without_a_token(tmp_path):
    pytest.importorskip("ray")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env.update(FZN_GPU_SERVER="off", RAY_AUTH_TOKEN_PATH=str(tmp_path / "no-token"), PYTHONPATH=str(ROOT))
    r = subprocess.run(
        [sys.executable, "-m", "fzn_gpu", "--cluster", "127.0.0.1:1", fzn(tmp_path, queens(6))],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "no Ray token to join the cluster at 127.0.0.1:1" in r.stderr and "RAY_AUTH_MODE=disabled" in r.stderr


def _listeners() -> dict[str, str]:
    """Every listening TCP socket of the machine: inode -> local address (hex, as /proc has it)."""
    out: dict[str, str] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A":  # LISTEN
                out[fields[9]] = fields[1].rsplit(":", 1)[0]
    return out


LOOPBACK_HEX = {"0100007F", "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}


def test_cluster_auto_starts_a_private_instance_on_loopback_alone(tmp_path):
    """A planted address file (another user's, where this runs as root) is ignored; the Ray
    instance started for the run listens on 127.0.0.1 alone while it runs, and nothing of it is
    left once the run ends: no process, no session folder."""
    pytest.importorskip("ray")
    root = tmp_path / "raytmp"
    f = planted(root, "127.0.0.1:47000")
    if os.geteuid() == 0:
        os.chown(f, 65534, 65534)
    before = set(_listeners())
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    folders_before = set(tmp.glob("fzn-ray-*"))
    env = dict(os.environ, FZN_GPU_SERVER="off", RAY_TMPDIR=str(root), POCL_MAX_PTHREAD_COUNT="1")
    env.pop("RAY_AUTH_MODE", None)
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "fzn_gpu", "--cluster", "auto", "--engine", "complete", "-a", "--count-only", "-s"]
        + [fzn(tmp_path, queens(10))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    seen: dict[str, str] = {}
    deadline = time.monotonic() + 180
    while proc.poll() is None and time.monotonic() < deadline:
        seen.update({k: v for k, v in _listeners().items() if k not in before})
        time.sleep(0.05)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "%%%mzn-stat: solutions=724" in out, err
    assert seen, "no listening socket seen: the run started no Ray instance"
    assert set(seen.values()) <= LOOPBACK_HEX, seen
    time.sleep(2.0)
    left = subprocess.run(["pgrep", "-f", "fzn-ray-"], capture_output=True, text=True).stdout.split()
    assert not left, left  # no Ray process of the run's instance left behind
    assert set(tmp.glob("fzn-ray-*")) <= folders_before  # its session folder removed
