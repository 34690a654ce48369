"""How a run reaches a Ray cluster, and only one it may trust (docs/SECURITY.md).

Ray moves pickled objects between its processes: whoever runs the cluster a run joins can run
code as the run's user, and whoever can reach a cluster's ports without its token can use it.
So:

- `--cluster auto` never uses Ray's own discovery (`ray.init(address="auto")`), which reads the
  world-writable /tmp/ray/ray_current_cluster and scans every user's processes: another local
  user could point it anywhere. It joins this user's cluster only: the address file owned by
  this user and no one else may write it, and a GCS server of this user's listening on its
  port (`own_cluster_address`). Else it starts a private Ray instance for the run
  (`start_private`): every process bound to 127.0.0.1, a fresh token required on every call,
  its session files in a folder of mode 0700, all of it shut down and removed at the run's end.
- A cluster named by address is joined with a Ray token (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or
  ~/.ray/auth_token, as `ray start` reads them); without one the run refuses, unless the user
  says RAY_AUTH_MODE=disabled (a cluster without authentication, on a network they trust).

Ray binds its servers to every interface unless the node's address is the loopback one, which
`ray.init` replaces with the machine's own address (`resolve_ip_for_localhost`): for the
private instance both of Ray's address helpers answer 127.0.0.1, and the run checks the GCS
address it got. A Ray without those helpers gets no private instance: the run says so.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

from .. import exiting, settings
from ..errors import FznError
from ..procs import own_processes

LOOPBACK = "127.0.0.1"
QUIET = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
TOKEN_FIX = (
    "give the cluster's Ray token (RAY_AUTH_TOKEN, or RAY_AUTH_TOKEN_PATH naming a file holding it; "
    "`ray start` keeps it in ~/.ray/auth_token), or set RAY_AUTH_MODE=disabled to join a cluster "
    "without authentication on a network you trust"
)


def token_file() -> Path:
    return Path(settings.text("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token")


def token_present() -> bool:
    """Whether a Ray token is at hand, where Ray reads one."""
    return bool(settings.text("RAY_AUTH_TOKEN")) or token_file().is_file()


def address_file(temp_root: str | None = None) -> str:
    """Where `ray start` writes its cluster's address (Ray's own rule: RAY_TMPDIR, else TMPDIR,
    else /tmp; then ray/ray_current_cluster)."""
    root = temp_root or settings.text("RAY_TMPDIR") or settings.text("TMPDIR") or "/tmp"
    return os.path.join(root, "ray", "ray_current_cluster")


def own_cluster_address(temp_root: str | None = None) -> str | None:
    """The address of this user's own Ray cluster on this machine, or None: the address file a
    regular file (no link) owned by this user that no one else may write, and a GCS server of
    this user's listening on its port."""
    path = address_file(temp_root)
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
            return None
        with open(path) as f:
            address = f.read().strip()
    except OSError:
        return None
    port = address.rpartition(":")[2]
    if not port.isdigit() or not gcs_of_this_user(int(port)):
        return None
    return address


def gcs_of_this_user(port: int) -> bool:
    """Whether a process of this user's is Ray's GCS server on `port`."""
    want = f"--gcs_server_port={port}".encode()
    return any(argv[0].endswith(b"gcs_server") and want in argv for _, argv in own_processes() if argv)


def join(ray: Any, address: str) -> None:
    """Joins the cluster at `address` with a token, or without one where the user said
    RAY_AUTH_MODE=disabled; else the refusal that says how."""
    mode = settings.text("RAY_AUTH_MODE", "")
    if mode != "disabled":
        if not token_present():
            raise FznError(f"no Ray token to join the cluster at {address} with", fix=TOKEN_FIX)
        settings.export("RAY_AUTH_MODE", "token")
        _reread_auth()
    ray.init(address=address, **QUIET)


def _reread_auth() -> None:
    """Ray (2.60) reads RAY_AUTH_MODE and the token into its config and a token cache once, as
    it loads, before a run knows it will start an instance of its own: read again, the driver
    sends the token its instance's processes (which read the environment afresh) require;
    without it the driver's every call was refused ("Authentication token is missing or
    incorrect"). A Ray without that cache reads the environment at ray.init."""
    try:
        from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

        Config.initialize("")
        AuthenticationTokenLoader.instance().reset_cache()
    except (ImportError, AttributeError):
        return


def start_private(ray: Any) -> str:
    """A Ray instance for this run alone: bound to 127.0.0.1, a fresh token required, its session
    files in a private folder, which it returns (the caller removes it once Ray is shut down)."""
    from ray._private import services

    if not all(hasattr(services, name) for name in ("resolve_ip_for_localhost", "get_node_ip_address")):
        raise FznError(
            "this Ray cannot be kept to 127.0.0.1, so no Ray instance is started for --cluster auto",
            fix="start a cluster with a token (`ray start --head`) and give its address, or leave out --cluster",
        )
    settings.export("RAY_AUTH_MODE", "token")
    settings.export("RAY_AUTH_TOKEN", secrets.token_hex(32))  # the run's processes inherit it, no one else
    _reread_auth()
    services.resolve_ip_for_localhost = lambda host: LOOPBACK
    services.get_node_ip_address = lambda address=None: LOOPBACK
    folder = tempfile.mkdtemp(prefix="fzn-ray-")  # mode 0700; short, as Ray's socket paths must be
    try:
        ray.init(_node_ip_address=LOOPBACK, _temp_dir=folder, **QUIET)
        gcs = ray.get_runtime_context().gcs_address
        if not str(gcs).startswith(LOOPBACK + ":"):
            ray.shutdown()
            raise FznError(f"the Ray instance started for this run listens at {gcs}, not on {LOOPBACK} alone")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


def remove_later(folder: str) -> None:
    """The private instance's folder removed at the run's end (after Ray's shutdown, a hook
    registered before this one)."""
    exiting.on_exit(lambda _code: shutil.rmtree(folder, ignore_errors=True))
