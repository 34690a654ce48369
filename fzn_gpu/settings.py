"""Every environment variable fzn-gpu reads, in one place: its name, kind, default and what it
does (`SETTINGS`), and one reader per kind that checks the value (a bad one is one FznError
naming the variable and the fix, never a traceback).

Values are read at each use, never at import: a run the solver server forks takes its client's
environment (server.py), which a value read when the server imported the module would not see.
No other module touches `os.environ`; docs/SETTINGS.md is generated from this list
(`python -m fzn_gpu.settings > docs/SETTINGS.md`), and tests/test_settings.py checks both."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from .errors import FznError

GROUPS = {
    "run": "What a run does",
    "server": "The solver server",
    "tuning": "Launch and search tuning (measurements)",
    "devices": "Devices (tests and measurements)",
    "test": "Test hooks: faults injected by tests (fzn_gpu/hooks.py)",
    "external": "Read from other software's conventions",
}


class Setting:
    """One environment variable: `kind` is flag (0/1), int, float, choice, text or path;
    `default` as the user meets it (a value, or what decides it). A plain class, not a
    dataclass: the solver server's client imports this module on every run, and importing
    dataclasses would be much of its start-up."""

    __slots__ = ("name", "kind", "default", "doc", "group", "minimum", "choices")

    def __init__(self, name: str, kind: str, default: str, doc: str, group: str, minimum, choices) -> None:
        self.name, self.kind, self.default, self.doc, self.group = name, kind, default, doc, group
        self.minimum: float | None = minimum
        self.choices: tuple[str, ...] = tuple(choices)


def _s(name: str, kind: str, default: str, group: str, doc: str, minimum: float | None = None, choices=()) -> Setting:
    return Setting(name, kind, default, doc, group, minimum, choices)


AUTO_OFF = ("auto", "off")  # --bucket, --relax and --local-search (options.py), and their variables
SERVER_MODES = ("on", "off", "require")  # FZN_GPU_SERVER (launch.py)
DEVICE_KINDS = ("all", "gpu", "cpu")  # an engine's devices in a portfolio (engine/portfolio.py)


SETTINGS: tuple[Setting, ...] = (
    # -- what a run does
    _s(
        "FZN_GPU_RELAX",
        "choice",
        "auto",
        "run",
        "the default of `--relax`: relaxation bounds (docs/RELAXATION.md)",
        choices=AUTO_OFF,
    ),
    _s(
        "FZN_GPU_BUCKET",
        "choice",
        "auto",
        "run",
        "the default of `--bucket`: bucket elimination beside the search",
        choices=AUTO_OFF,
    ),
    _s(
        "FZN_GPU_LOCAL_SEARCH",
        "choice",
        "auto",
        "run",
        "the default of `--local-search`: Adaptive Search where a model suits it",
        choices=AUTO_OFF,
    ),
    _s("FZN_GPU_MAX_INPUT_MB", "int", "2048", "run", "the largest FlatZinc file read, in MB", minimum=1),
    _s(
        "FZN_GPU_CACHE_DIR",
        "path",
        "$XDG_CACHE_HOME/fzn-gpu/builds",
        "run",
        "where the records of built kernels are kept (build_record.py)",
    ),
    _s(
        "FZN_GPU_EARLY_OPENCL",
        "flag",
        "1",
        "run",
        "0: OpenCL's drivers are not started beside the imports (to measure it)",
    ),
    # -- the solver server
    _s(
        "FZN_GPU_SERVER",
        "choice",
        "on",
        "server",
        "on: runs go through a warm solver server, started by the first; off: every run in a process of its own; require: fail where no server answers (tests)",
        choices=SERVER_MODES,
    ),
    _s(
        "FZN_GPU_SERVER_DIR",
        "path",
        "$XDG_RUNTIME_DIR/fzn-gpu",
        "server",
        "the folder of the server's socket (made 0700, checked: docs/SECURITY.md)",
    ),
    _s(
        "FZN_GPU_SERVER_IDLE_S",
        "float",
        "900",
        "server",
        "seconds without a run after which the server ends",
        minimum=0.001,
    ),
    _s(
        "FZN_GPU_SERVER_READY_S",
        "float",
        "60",
        "server",
        "seconds a spare may take to get ready before the server gives up on it",
        minimum=0.001,
    ),
    _s(
        "FZN_GPU_SERVER_REQUEST_S",
        "float",
        "10",
        "server",
        "seconds a client has to send its whole request",
        minimum=0.001,
    ),
    # -- launch and search tuning
    _s(
        "FZN_GPU_KERNEL",
        "choice",
        "group on a GPU, item on a CPU",
        "tuning",
        "the execution model: a work-group or a work-item per sub-search space (docs/ARCHITECTURE.md)",
        choices=("group", "item"),
    ),
    _s(
        "FZN_GPU_LAYOUT",
        "choice",
        "interleaved on a GPU, blocked on a CPU",
        "tuning",
        "how the searches' domains lie in memory",
        choices=("interleaved", "blocked"),
    ),
    _s(
        "FZN_GPU_ITEMS_PER_CU",
        "int",
        "group 32 / 1, item 512 / 4 (GPU / CPU)",
        "tuning",
        "searches per compute unit",
        minimum=1,
    ),
    _s("FZN_GPU_LOCAL", "int", "group 32; item 64 / 1", "tuning", "work-items per work-group", minimum=1),
    _s(
        "FZN_GPU_SPECIALISE",
        "flag",
        "1 on a GPU, 0 on a CPU",
        "tuning",
        "build the kernel for the model's constraint kinds only",
    ),
    _s(
        "FZN_GPU_OUTLINE",
        "flag",
        "1 on a GPU, 0 on a CPU",
        "tuning",
        "propagators out of line (shorter NVIDIA builds); unset, `--build-only` on a GPU inlines a specialised program where that pays",
    ),
    _s(
        "FZN_GPU_SUBS_PER_ITEM",
        "int",
        "2 / 50",
        "tuning",
        "sub-search spaces per search from the root split (PHACT)",
        minimum=1,
    ),
    _s(
        "FZN_GPU_BNB_DIVE_WAIT_MS",
        "int",
        "100",
        "tuning",
        "the portfolio's branch and bound on a CPU beside LNS on GPUs: how long it waits for LNS's first solution "
        "before its own dive in the plan's order, ms",
        minimum=0,
    ),
    _s(
        "FZN_GPU_DIVE_MS",
        "int",
        "1000 / 0",
        "tuning",
        "a one-work-item dive for a first solution before the parallel search, ms; set, it decides in the portfolio too",
        minimum=0,
    ),
    _s(
        "FZN_GPU_SLICE_BUDGET",
        "int",
        "0",
        "tuning",
        "0: slices steered to about 50 ms and cut to fit the time limit; N: a fixed work per work-item and slice",
        minimum=0,
    ),
    _s("FZN_GPU_PROFILE", "flag", "0", "tuning", "1: time the kernel's phases (`-s` nodeProfile on NVIDIA)"),
    _s(
        "FZN_GPU_MAX_REGISTERS",
        "int",
        "64 on NVIDIA, else 0",
        "tuning",
        "registers a work-item at most (NVIDIA); 0: the compiler's choice",
        minimum=0,
    ),
    _s(
        "FZN_GPU_PROPAGATION_FLOOR",
        "int",
        "4096",
        "tuning",
        "a node's propagation stops at the slice's end only past this many propagations or passes",
        minimum=1,
    ),
    _s(
        "FZN_GPU_SLICE_CLOCK",
        "flag",
        "0",
        "tuning",
        "1: a work-group slice ends by the device's clock instead of a budget (measured slower)",
    ),
    _s(
        "FZN_GPU_WIDE_LOCAL",
        "int",
        "1024 on a GPU (group), else 0",
        "tuning",
        "a phase of fewer searches than the device holds widens its work-groups up to this",
        minimum=0,
    ),
    _s(
        "FZN_GPU_SLICE_S",
        "float",
        "0.05",
        "tuning",
        "seconds a search kernel's slice aims at (SliceBudget.TARGET_S): results, bounds and limits act between slices",
        minimum=0.001,
    ),
    _s(
        "FZN_GPU_TAIL_SHARE",
        "int",
        "5",
        "tuning",
        "after a slice that left a 32nd of the work-groups idle, the next runs 1/N of its budget; 1: off",
        minimum=1,
    ),
    _s(
        "FZN_GPU_STORE_GLOBAL",
        "flag",
        "0",
        "tuning",
        "1: a work-group's node in global memory even where it fits local memory",
    ),
    _s(
        "FZN_GPU_STACK_LEVELS",
        "int",
        "what memory allows",
        "tuning",
        "N: a group's stack holds N levels, deeper ones recomputed from the path",
        minimum=1,
    ),
    _s(
        "FZN_GPU_NARROW",
        "flag",
        "1",
        "tuning",
        "0: a model whose variables all span at most 32 values keeps the general representation",
    ),
    _s(
        "FZN_GPU_GROUP_ROW_MIN",
        "int",
        "32",
        "tuning",
        "rows a whole work-group walks are at least this long; 0: none",
        minimum=0,
    ),
    _s(
        "FZN_GPU_PARTS_MAX",
        "int",
        "8",
        "tuning",
        "the most parts a constraint shared out by variable has (1 to 8)",
        minimum=1,
    ),
    _s(
        "FZN_GPU_OFFSET_VIEWS",
        "flag",
        "1",
        "tuning",
        "0: keep the introduced y = x + c that all_different alone uses instead of folding them into it",
    ),
    _s("FZN_GPU_CL_OPTIONS", "text", "", "tuning", "more OpenCL compiler options (`-v` prints the compiler's log)"),
    _s(
        "FZN_GPU_DEVICE_PATHS",
        "choice",
        "by size",
        "tuning",
        "1 / 0: LNS paths built on the device / on the host",
        choices=("0", "1"),
    ),
    _s(
        "FZN_GPU_LNS_MERGE_ROUNDS",
        "int",
        "3",
        "tuning",
        "launches an LNS step may spend merging its improving neighbourhoods; 0: never merge",
        minimum=0,
    ),
    _s(
        "FZN_GPU_LNS_KICK_EVERY",
        "int",
        "1",
        "tuning",
        "every how many LNS descents one begins at a kick of the best solution instead of the first; 0: never",
        minimum=0,
    ),
    _s(
        "FZN_GPU_BNB_SHARE",
        "float",
        "the proving share",
        "tuning",
        "branch and bound's share of a GPU that LNS uses too, in (0, 1], fixed (a measurement's)",
    ),
    _s(
        "FZN_GPU_BNB_PROVING_SHARE",
        "float",
        "0.75",
        "tuning",
        "branch and bound's share of a GPU that LNS uses too once the best has stood still "
        "(a quarter before), in (0, 1]",
    ),
    _s(
        "FZN_GPU_BNB_DEVICES",
        "choice",
        "cpu beside GPUs, else all",
        "tuning",
        "the portfolio's branch and bound devices",
        choices=DEVICE_KINDS,
    ),
    _s(
        "FZN_GPU_LNS_DEVICES",
        "choice",
        "gpu beside CPUs, else all",
        "tuning",
        "the portfolio's LNS devices",
        choices=DEVICE_KINDS,
    ),
    _s(
        "FZN_GPU_COMPLETE_DEVICES",
        "choice",
        "by the machine",
        "tuning",
        "satisfaction's portfolio: complete search's devices",
        choices=DEVICE_KINDS,
    ),
    _s(
        "FZN_GPU_RESTARTS_DEVICES",
        "choice",
        "by the machine",
        "tuning",
        "satisfaction's portfolio: restarts' devices",
        choices=DEVICE_KINDS,
    ),
    _s(
        "FZN_GPU_HAND_OVER_SPEEDUP",
        "int",
        "4",
        "tuning",
        "how many times faster an idle device must be for a busy one to hand it all its search; 0: any idle device",
        minimum=0,
    ),
    _s(
        "FZN_GPU_MIN_NODE_SHARE",
        "float",
        "0.10 (0.25 for a float model's searches)",
        "tuning",
        "a device of a complete search on several under this share of their node rate hands its search over "
        "(a float model's searches, which cannot hand over, give their unstarted paths away); 0: none does",
        minimum=0,
    ),
    _s(
        "FZN_GPU_SWITCH_INTERVAL",
        "float",
        "0.0005",
        "tuning",
        "seconds within which the interpreter's lock changes hands while device threads run side by side",
    ),
    _s(
        "FZN_GPU_CLUSTER_POLL_MS",
        "int",
        "50",
        "tuning",
        "how often a `--cluster` run's driver polls its workers, ms",
        minimum=1,
    ),
    _s(
        "FZN_GPU_LS_WIDTH",
        "int",
        "by the largest neighbourhood (GPU), 1 (CPU)",
        "tuning",
        "Adaptive Search: work-items of one walk",
        minimum=1,
    ),
    _s("FZN_GPU_LS_WALKS", "int", "by the device", "tuning", "Adaptive Search: walks at once", minimum=1),
    _s("FZN_GPU_LS_PARAMS", "text", "", "tuning", "Adaptive Search's tuning, NAME=INT,... (`local_abi.Param`)"),
    # -- devices
    _s("FZN_GPU_CPU_SUBDEVICES", "int", "", "devices", "N: the CPU split into N OpenCL sub-devices", minimum=1),
    _s("FZN_GPU_CPU_ALL_CORES", "flag", "0", "devices", "1: a CPU beside GPUs keeps all its cores"),
    _s(
        "FZN_GPU_RANKING",
        "flag",
        "1",
        "devices",
        "0: a complete search on several devices does not leave out those a recent one judged not paying (engine/ranking.py)",
    ),
    # -- test hooks
    _s(
        "FZN_GPU_TEST_HOOKS",
        "text",
        "",
        "test",
        "faults a test makes happen, read once at a run's start: device=i:k[:s],...; worker=i:b,...; "
        "spare=hang; exit=linger:S (fzn_gpu/hooks.py)",
    ),
    _s(
        "FZN_GPU_BUCKET_MEMORY",
        "int",
        "a third of the available memory (a GPU's: its largest allocation)",
        "tuning",
        "bytes bucket elimination's tables may take",
        minimum=0,
    ),
    _s(
        "FZN_GPU_BUCKET_WORK",
        "float",
        "by the time left",
        "tuning",
        "the most work bucket elimination plans for",
        minimum=0,
    ),
    _s("FZN_GPU_POISON", "flag", "0", "tuning", "1: fresh device buffers filled with a pattern (debugging)"),
    # -- other software's
    _s("XDG_CACHE_HOME", "path", "~/.cache", "external", "the base of fzn-gpu's build records"),
    _s("XDG_RUNTIME_DIR", "path", "", "external", "the base of the solver server's socket folder"),
    _s("PYTHONUNBUFFERED", "text", "", "external", "set: a served run writes its output through"),
    _s("POCL_EXTRA_BUILD_FLAGS", "text", "", "external", "PoCL's own; part of the device check's cache key"),
    _s("RAY_AUTH_MODE", "text", "", "external", "Ray's; token where fzn-gpu runs a cluster of its own"),
    _s("RAY_AUTH_TOKEN", "text", "", "external", "Ray's token (a private cluster's is made afresh)"),
    _s("RAY_AUTH_TOKEN_PATH", "path", "~/.ray/auth_token", "external", "Ray's token file"),
    _s("RAY_TMPDIR", "path", "", "external", "where a private Ray instance's session folder goes"),
    _s("TMPDIR", "path", "/tmp", "external", "the same, where RAY_TMPDIR is unset"),
    _s(
        "PYOPENCL_HOME",
        "path",
        "pyopencl's folder",
        "external",
        "set by fzn-gpu where pyopencl's bundled ICD loader is used: where it finds pip's drivers",
    ),
)

BY_NAME = {s.name: s for s in SETTINGS}


def _declared(name: str) -> Setting:
    setting = BY_NAME.get(name)
    if setting is None:  # a programming error: every variable is declared above
        raise KeyError(f"{name} is not declared in fzn_gpu/settings.py")
    return setting


def text(name: str, default: str | None = None) -> str | None:
    """The variable's text as set, or `default`."""
    _declared(name)
    return os.environ.get(name, default)


def is_set(name: str) -> bool:
    _declared(name)
    return name in os.environ


def flag(name: str, default: bool) -> bool:
    """A 0/1 variable."""
    value = text(name)
    if value is None:
        return default
    if value.strip() not in ("0", "1"):
        raise FznError(f"{name}={value!r} is not 0 or 1", fix=f"unset {name} or give 0 or 1")
    return value.strip() == "1"


def integer(name: str, default: int) -> int:
    """An integer variable, at least its declared minimum."""
    value = text(name)
    if value is None or not value.strip():
        return default
    least = _declared(name).minimum
    low = int(least) if least is not None else None
    stripped = value.strip()
    if not stripped.lstrip("-").isdigit() or (low is not None and int(stripped) < low):
        bound = f" >= {low}" if low is not None else ""
        raise FznError(f"{name}={value!r} is not an integer{bound}", fix=f"unset {name} or give a number")
    return int(stripped)


def number(name: str, default: float) -> float:
    """A real-valued variable, at least its declared minimum."""
    value = text(name)
    if value is None or not value.strip():
        return default
    least = _declared(name).minimum
    try:
        out = float(value)
    except ValueError:
        out = float("nan")
    if not out == out or (least is not None and out < least):  # nan: not a number
        bound = f" >= {least:g}" if least is not None else ""
        raise FznError(f"{name}={value!r} is not a number{bound}", fix=f"unset {name} or give a number")
    return out


def choice(name: str, default: str) -> str:
    """One of the variable's declared choices (compared in lower case)."""
    value = text(name)
    if value is None or not value.strip():
        return default
    choices = _declared(name).choices
    picked = value.strip().lower()
    if picked not in choices:
        raise FznError(f"{name}={value!r} is not one of {', '.join(choices)}", fix=f"unset {name} or give one of them")
    return picked


def environment() -> dict[str, str]:
    """A copy of the whole environment, for a process this one starts or a run it hands on."""
    return dict(os.environ)


def export(name: str, value: str) -> None:
    """Sets a declared variable for this process and those it starts (Ray's token)."""
    _declared(name)
    os.environ[name] = value


def replace_environment(env: Mapping[str, str]) -> None:
    """This process's environment becomes `env` (a served run takes its client's)."""
    os.environ.clear()
    os.environ.update(env)


def markdown() -> str:
    """docs/SETTINGS.md: every variable by group, generated from SETTINGS."""
    lines = [
        "# Environment variables",
        "",
        "Generated from `fzn_gpu/settings.py` (`python -m fzn_gpu.settings > docs/SETTINGS.md`): every",
        "environment variable fzn-gpu reads, read there alone, at each use. Command-line flags are",
        "the user's interface; these are defaults for them, tuning for measurements and test hooks.",
    ]
    for group, title in GROUPS.items():
        lines += ["", f"## {title}", "", "| variable | values | default | what it does |", "|---|---|---|---|"]
        for s in SETTINGS:
            if s.group == group:
                values = " / ".join(s.choices) if s.choices else s.kind
                if s.minimum is not None:
                    values += f" >= {s.minimum:g}"
                lines.append(f"| `{s.name}` | {values} | {s.default or '-'} | {s.doc.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown())
