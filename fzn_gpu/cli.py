"""`fzn-gpu [options] FILE.fzn`: MiniZinc's FlatZinc solver interface.

Bad input ends with one message on stderr (file:line: what, and the fix) and exit status 1;
an interrupt (Ctrl-C, SIGTERM) prints the best solution found so far before exiting."""

from __future__ import annotations

import argparse
import functools
import signal
import sys

from . import __version__, clock, exiting, hooks, settings  # noqa: F401  (clock first: the time limit counts from here at the latest)
from .errors import FznError, Unsupported
from .options import BUCKET, ENGINES, LOCAL_SEARCH, RELAX
from .search_options import LNS_STRATEGIES, RESTART_KINDS, RestartSpec
from .watchdog import Terminated, interrupt_code


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fzn-gpu",
        description="Solve a FlatZinc model with search running as OpenCL kernels on GPUs and CPUs.",
        epilog="Subcommands: `fzn-gpu install-solver-config [--dir DIR]` registers fzn-gpu with MiniZinc "
        "(then `minizinc --solver gpu-fzn model.mzn`); `fzn-gpu build-kernels` builds the generic "
        "kernels ahead, and launches each CPU's once (set-up: no model then waits for a build or a "
        "first compile); `fzn-gpu check-devices` builds a small program "
        "on every OpenCL device and says which work; `fzn-gpu --list-devices` lists the devices a run uses.",
    )
    p.add_argument("file", nargs="?", help="the FlatZinc file, or - for standard input")
    p.add_argument(
        "-a",
        "--all-solutions",
        action="store_true",
        help="all solutions (satisfaction), every improving one (optimisation)",
    )
    p.add_argument("-n", "--num-solutions", type=int, metavar="N", help="stop after N solutions")
    p.add_argument("-f", "--free-search", action="store_true", help="ignore the search annotations")
    p.add_argument("-p", "--parallel", type=int, metavar="N", help="use at most N devices")
    p.add_argument("-r", "--seed", "--random-seed", type=int, default=0, metavar="SEED", help="random seed")
    p.add_argument("-s", "--statistics", action="store_true", help="print %%%%%%mzn-stat statistics")
    p.add_argument("-t", "--time-limit", type=int, metavar="MS", help="time limit in milliseconds")
    p.add_argument("-i", "--intermediate", action="store_true", help="print each improving solution")
    p.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    p.add_argument("--devices", default="all", help="all, gpu, cpu, or comma-separated indices from --list-devices")
    p.add_argument("--list-devices", action="store_true", help="list the OpenCL devices and exit")
    p.add_argument("--check", action="store_true", help="verify every solution with the independent checker")
    p.add_argument("--count-only", action="store_true", help="with -a, count solutions without printing them")
    p.add_argument(
        "--deterministic",
        action="store_true",
        help="the same answers every run: satisfaction, the solutions the model's search meets first, in its "
        "order (complete search on one device); optimisation, one sequential branch and bound; slower; "
        "also with -p 1",
    )
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="auto (default): optimisation by LNS and branch and bound together (portfolio), or by LNS "
        "alone when --lns-strategy is given; satisfaction by complete search, or by restarts where "
        "the model or --restart asks for them, with Adaptive Search beside them for one solution. "
        "complete, lns, portfolio, restart, bucket, adaptive: that engine alone",
    )
    p.add_argument(
        "--bucket",
        choices=BUCKET,
        default=settings.text("FZN_GPU_BUCKET", "auto"),
        help="bucket elimination (exact optima of optimisation models of low induced width, and counts "
        "with -a --count-only): auto (default; FZN_GPU_BUCKET sets it for scripts) runs it where "
        "its tables fit, off never",
    )
    p.add_argument(
        "--relax",
        choices=RELAX,
        default=settings.text("FZN_GPU_RELAX", "auto"),
        help="bounds on the objective from relaxations (the assignment problem under a permutation, a "
        "knapsack row by dynamic programming, the LP by PDHG), added as redundant constraints that every "
        "node propagates: auto (default; FZN_GPU_RELAX sets it for scripts) where the model has the "
        "structure, off never",
    )
    p.add_argument(
        "--local-search",
        choices=LOCAL_SEARCH,
        default=settings.text("FZN_GPU_LOCAL_SEARCH", "auto"),
        help="Adaptive Search (local search, many walks on every device) beside complete search for one "
        "solution of a satisfaction model: auto (default; FZN_GPU_LOCAL_SEARCH sets it for scripts) "
        "where the model is one for it, off never",
    )
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        default=None,
        help="complete search, the portfolio's branch and bound and LNS islands on the nodes of a Ray cluster: its "
        "address (HOST:6379, ray://HOST:10001), or auto for the cluster this machine belongs to, else a "
        "Ray instance started here; needs `pip install 'fzn-gpu[cluster]'`",
    )
    rs = p.add_argument_group("restarts (over the solve item's restart annotation)")
    rs.add_argument(
        "--restart",
        choices=("auto",) + RESTART_KINDS,
        default="auto",
        help="restart sequence: luby, geometric, linear, constant, or none; auto (default): the model's "
        "restart annotation",
    )
    rs.add_argument("--restart-scale", type=int, metavar="NODES", help="nodes of the sequence's unit (default 100)")
    rs.add_argument("--restart-base", type=float, metavar="B", help="restart_geometric's growth factor (default 1.5)")
    lns = p.add_argument_group("large neighbourhood search (over the solve item's lns(...) annotation)")
    lns.add_argument(
        "--lns-strategy",
        choices=("none",) + LNS_STRATEGIES,
        help="search by LNS with this strategy (any optimisation model)",
    )
    lns.add_argument("--lns-percent", type=int, metavar="P", help="percent of the FD variables released")
    lns.add_argument("--lns-neighbourhoods", type=int, metavar="T", help="neighbourhoods explored at once")
    lns.add_argument("--lns-starts", type=int, metavar="M", help="starting points per neighbourhood")
    lns.add_argument(
        "--lns-steps", type=int, metavar="H", help="steps per restart (default: until 10 in a row improve nothing)"
    )
    lns.add_argument("--lns-restarts", type=int, metavar="S", help="restarts from the first solution")
    lns.add_argument("--lns-timeout", type=float, metavar="SECONDS", help="time-out of the LNS")
    p.add_argument(
        "--build-only",
        action="store_true",
        help="build and cache the search kernel for this model, then exit (a later timed run starts at once)",
    )
    p.add_argument("--version", action="version", version=f"fzn-gpu {__version__}")
    return p


def _install_solver_config(argv: list[str]) -> int:
    from .solver_config import install

    ap = argparse.ArgumentParser(
        prog="fzn-gpu install-solver-config",
        description="Write gpu-fzn.msc where MiniZinc finds it (default ~/.minizinc/solvers). "
        "For another folder, also set MZN_SOLVER_PATH to it.",
    )
    ap.add_argument("--dir", default=None, help="folder to write gpu-fzn.msc into")
    args = ap.parse_args(argv)
    path = install(args.dir)
    print(f"wrote {path}")
    if args.dir:
        print(f"MiniZinc finds it when MZN_SOLVER_PATH includes {path.parent}")
    return 0


def _lns_options(args) -> dict | None:
    keys = ("strategy", "percent", "neighbourhoods", "starts", "steps", "restarts", "timeout")
    # "none" and 0 are what the solver configuration's flags default to: not given
    given = {k: getattr(args, f"lns_{k}") for k in keys if getattr(args, f"lns_{k}") not in (None, 0, "none")}
    return given or None


def _restart_option(args) -> RestartSpec | None:
    """--restart and its settings (None: the model's annotation decides); bad values said at once."""
    if args.restart == "auto":
        return None
    scale = args.restart_scale or 100
    base = args.restart_base or 1.5
    if scale < 1:
        raise FznError(f"--restart-scale {scale} is not a positive number of nodes", fix="give one such as 100")
    if args.restart == "geometric" and not base > 1:
        raise FznError(f"--restart-base {base} is not above 1", fix="give one such as 1.5")
    return RestartSpec(args.restart, scale, base)


def _limit_left_by_minizinc(time_limit_ms: int | None, fzn_path: str | None) -> int | None:
    """-t less MiniZinc's own work around the run where MiniZinc started it (clock.py says why)."""
    if not time_limit_ms or not fzn_path:
        return time_limit_ms
    ahead = clock.minizinc_share_ms(time_limit_ms, fzn_path)
    clock.AHEAD_S = ahead / 1000.0
    if time_limit_ms - ahead <= 0:
        print(
            f"fzn-gpu: MiniZinc's own work around this run takes the whole time limit ({ahead} ms of "
            f"{time_limit_ms} ms left): no time is left to search",
            file=sys.stderr,
        )
    return max(1, time_limit_ms - ahead)  # 0 would be no limit: a spent one ends at once


def run(argv: list[str]) -> int:
    if argv and argv[0] == "install-solver-config":
        return _install_solver_config(argv[1:])
    if argv and argv[0] == "check-devices":
        from .runtime.device import check_devices

        return check_devices()
    if argv and argv[0] == "build-kernels":
        from .engine import build_generic

        return build_generic(background=argv[1:] == ["--background"])
    args = _parser().parse_args(argv)
    if args.list_devices:
        from .runtime.device import describe_devices

        print(describe_devices())
        return 0
    if not args.file:
        raise FznError(
            "no FlatZinc file given", fix="run `fzn-gpu model.fzn`, or `minizinc --solver gpu-fzn model.mzn`"
        )
    for value, allowed, variable in (
        (args.bucket, BUCKET, "FZN_GPU_BUCKET"),
        (args.local_search, LOCAL_SEARCH, "FZN_GPU_LOCAL_SEARCH"),
        (args.relax, RELAX, "FZN_GPU_RELAX"),
    ):
        if value not in allowed:
            raise FznError(
                f"{variable}={value!r} is not one of {', '.join(allowed)}", fix="unset it or give auto or off"
            )
    from .options import SolveOptions

    opts = SolveOptions(
        all_solutions=args.all_solutions,
        num_solutions=args.num_solutions,
        free_search=args.free_search,
        parallel=args.parallel,
        seed=args.seed,
        statistics=args.statistics,
        time_limit_ms=_limit_left_by_minizinc(args.time_limit, args.file),
        intermediate=args.intermediate,
        verbose=args.verbose,
        devices=args.devices,
        check=args.check,
        count_only=args.count_only,
        deterministic=args.deterministic or args.parallel == 1,
        lns=_lns_options(args),
        engine=args.engine,
        bucket=args.bucket,
        local_search=args.local_search,
        relax=args.relax,
        restart=_restart_option(args),
        cluster=args.cluster or None,
    )
    from .runtime import opencl_start
    from .watchdog import Watchdog, unknown_yet

    opencl_start.begin(args.devices)  # the drivers start while numpy, pyopencl and the model load
    reading: list = []  # the Lowering, once reading has begun

    def read_so_far() -> dict[str, object]:
        """-s when the limit ends the run while it reads the model: how far it got."""
        stats: dict[str, object] = {"initTime": clock.elapsed(), "solveTime": 0, "phase": "reading the model"}
        if reading:
            stats["flatzincLine"] = reading[0].line
        return stats

    # started before parsing: a model of 40,000 items takes seconds to read, inside the limit
    end = functools.partial(unknown_yet, statistics=read_so_far if opts.statistics else None)
    with Watchdog(end, opts.time_limit_ms) as watchdog:
        from .engine import build_only, solve
        from .flatzinc.lower import load

        model = load(args.file, reading)
        clock.mark("read")
        return build_only(model, opts) if args.build_only else solve(model, opts, watchdog)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv

    def terminated(*_):
        raise Terminated()

    signal.signal(signal.SIGTERM, terminated)
    try:
        hooks.load()  # a test's faults, where it set FZN_GPU_TEST_HOOKS (fzn_gpu/hooks.py)
        code = run(argv)
    except Unsupported as err:
        print(f"fzn-gpu: {err}", file=sys.stderr)
        code = err.exit_code
    except FznError as err:
        print(f"fzn-gpu: {err}", file=sys.stderr)
        code = err.exit_code
    except KeyboardInterrupt as exc:
        code = interrupt_code(exc)
    except BrokenPipeError:
        code = 0
    # end without tearing down the OpenCL contexts (0.3 s on PoCL, inside the user's time
    # limit): the stream is complete and nothing else is left to save
    exiting.finish(code)


if __name__ == "__main__":
    main()
