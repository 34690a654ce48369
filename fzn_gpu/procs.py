"""This user's processes, read from /proc, and detached processes started from a run: what the
solver server's client (launch.py), a timed run's builder (engine/warmup.py) and the Ray access
checks (cluster/access.py) share. Standard library only: the client imports it before anything
heavy."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator


def own_processes() -> Iterator[tuple[int, list[bytes]]]:
    """(pid, argv) of every process of this user's that /proc shows (none where it cannot be read)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != os.getuid():
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = [a for a in f.read().split(b"\0") if a]
        except OSError:
            continue
        yield int(entry), argv


def start_detached(args: list[str], cwd: str | None = None, env: dict[str, str] | None = None) -> bool:
    """Starts `python -m ARGS...` in a session of its own with no standard streams, so that it
    outlives the run that started it; whether it started."""
    try:
        subprocess.Popen(
            [sys.executable, "-m", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return False
    return True
