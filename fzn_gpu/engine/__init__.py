"""Search engines. `solve` picks one for the model, prints the solution stream and the final
status, and returns the exit code."""

from __future__ import annotations

import sys
import time

import numpy as np

from ..errors import FznError
from ..model import Model, VarKind
from ..options import SolveOptions
from ..output import (SEARCH_COMPLETE, UNKNOWN, UNSATISFIABLE, ERROR, Printer)


def assignment(model: Model, values: np.ndarray) -> dict[str, object]:
    """Every declared variable's value by name, for the independent checker."""
    out: dict[str, object] = {}
    for i, name in enumerate(model.vars.names):
        if name.startswith("_const_"):
            continue
        x = int(values[i])
        out[name] = bool(x) if model.vars.kind[i] == VarKind.BOOL else x
    return out


def solve(model: Model, opts: SolveOptions) -> int:
    from ..device import select_devices
    from .complete import CompleteSearch
    from .pack import pack

    t_start = time.monotonic()
    deadline = t_start + opts.time_limit_ms / 1000.0 if opts.time_limit_ms else None
    printer = Printer(model)
    optimising = model.solve.kind != "satisfy"
    checker = None
    if opts.check:
        from ..check import Checker
        from ..parser import parse_items, read_text
        text, name = read_text(model.source) if model.source != "<stdin>" else ("", model.source)
        checker = Checker(parse_items(text, name)) if text else None

    best_values: list[np.ndarray] = []
    print_each = not optimising or opts.all_solutions or opts.intermediate
    count_only = opts.count_only and opts.all_solutions and not optimising

    def check(values: np.ndarray) -> None:
        bad = checker.check(assignment(model, values))
        if bad:
            printer.status(ERROR)
            raise FznError(f"the solver produced a solution that violates {bad[0]} (a bug in fzn-gpu)",
                           file=model.source, fix="please report it with the model")

    def report(values: np.ndarray, objective) -> None:
        if checker is not None:
            check(values)
        if print_each and not count_only:
            printer.solutions(values[None, :])
        else:
            best_values[:] = [values.copy()]

    def report_batch(rows: np.ndarray) -> None:
        if checker is not None:
            for row in rows:
                check(row)
        if print_each and not count_only:
            printer.solutions(rows)
        else:
            best_values[:] = [rows[-1].copy()]

    dm = pack(model, opts)
    devices = select_devices(opts.devices, opts.parallel)
    device = devices[0]
    t_init = time.monotonic() - t_start
    search = CompleteSearch(model, dm, device, opts, report, report_batch)
    interrupted = False
    try:
        outcome = search.run(deadline)
    except KeyboardInterrupt:
        interrupted = True
        outcome = search.outcome
    if best_values and not (print_each and not count_only):
        if not count_only:
            printer.solutions(best_values[0][None, :])
    if outcome.solutions == 0 and not interrupted:
        printer.status(UNSATISFIABLE if outcome.complete else UNKNOWN)
    elif outcome.complete and (optimising or opts.all_solutions or outcome.solutions < (opts.solution_limit(False) or 1)):
        printer.status(SEARCH_COMPLETE)
    elif interrupted and outcome.solutions == 0:
        printer.status(UNKNOWN)
    if outcome.error and opts.verbose:
        print(f"fzn-gpu: search incomplete: {outcome.error}", file=sys.stderr)
    if opts.statistics:
        s = search.runner.stats
        stats = {
            "solutions": outcome.solutions,
            "nodes": s.nodes,
            "failures": s.fails,
            "propagations": s.props,
            "nSolutions": outcome.solutions,
            "initTime": t_init,
            "solveTime": time.monotonic() - t_start - t_init,
            "buildTime": s.build_s,
            "kernelTime": s.kernel_s,
            "hostTime": max(0.0, time.monotonic() - t_start - s.kernel_s),
            "kernelLaunches": s.launches,
            "subSearchSpaces": outcome.sub_spaces,
            "splitTime": outcome.split_s,
            "workItems": s.items,
            "devices": len(devices[:1]),
            "device": device.name,
        }
        if outcome.best is not None:
            stats["objective"] = outcome.best * dm.obj_sense
        printer.stats(stats)
    return 130 if interrupted else 0
