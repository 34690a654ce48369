"""A first-order LP method for the relaxations' duals: primal-dual hybrid gradient (Chambolle
and Pock), with PDLP's diagonal (Ruiz) rescaling, primal weight and restarts to the average
(Applegate et al., "Practical large-scale linear programming using primal-dual hybrid
gradient", NeurIPS 2021).

Its iterations are two sparse matrix-vector products; it needs no factorisation, which is
why it suits a GPU. The relaxations need only its dual: ANY dual vector y (y >= 0 on the
inequality rows) gives the valid Lagrangian bound

    g(y) = -b.y + sum_j min(d_j * lb_j, d_j * ub_j),   d = c + A^T y,

so the method keeps the best y it has seen and stops at its budget; an unconverged y makes a
weaker bound, never a wrong one (and lagrangian.py recomputes every number exactly anyway)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..flatzinc.arrays import unique
from .linear import LE, LinearSystem

RUIZ_ROUNDS = 10
POWER_ROUNDS = 30
STALLED_RESTARTS = 16  # restarts (of 64 iterations) without a better bound before it stops


@dataclass
class DualResult:
    y: np.ndarray  # one multiplier per row, >= 0 on LE rows
    bound: float  # g(y): the LP's lower bound this dual proves (float estimate)
    iterations: int
    primal: np.ndarray  # the last primal iterate (a hint, not a solution)


def dual_bound(system: LinearSystem, c: np.ndarray, y: np.ndarray) -> float:
    """g(y) in floating point (an estimate: lagrangian.py's integer cut is the exact one)."""
    d = c + np.bincount(system.col, weights=system.val * y[system.row], minlength=len(c))
    lb, ub = system.lb.astype(float), system.ub.astype(float)
    return float(-system.rhs.astype(float) @ y + np.minimum(d * lb, d * ub).sum())


class Steps(Protocol):
    """Where PDHG's iterations run: NumpySteps here, pdhg_cl.OpenCLSteps on a device."""

    def run(self, count: int, tau: float, sigma: float) -> None: ...

    def state(self, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...

    def restart(self, x: np.ndarray, y: np.ndarray) -> None: ...


class NumpySteps:
    """PDHG's iterations on the host: two sparse products an iteration (bincount over COO)."""

    def __init__(self, rows, cols, A, m, n, cs, bs, lbs, ubs, le):
        self.rows, self.cols, self.A, self.m, self.n = rows, cols, A, m, n
        self.cs, self.bs, self.lbs, self.ubs, self.le = cs, bs, lbs, ubs, le
        self.x, self.y = np.clip(np.zeros(n), lbs, ubs), np.zeros(m)
        self.x_sum, self.y_sum = np.zeros(n), np.zeros(m)

    def Ax(self, x):
        return np.bincount(self.rows, weights=self.A * x[self.cols], minlength=self.m)

    def ATy(self, y):
        return np.bincount(self.cols, weights=self.A * y[self.rows], minlength=self.n)

    def run(self, count: int, tau: float, sigma: float) -> None:
        x, y = self.x, self.y
        for _ in range(count):
            x_new = np.clip(x - tau * (self.cs + self.ATy(y)), self.lbs, self.ubs)
            y = y + sigma * (self.Ax(2 * x_new - x) - self.bs)
            y[self.le] = np.maximum(y[self.le], 0.0)
            x = x_new
            self.x_sum += x
            self.y_sum += y
        self.x, self.y = x, y

    def state(self, count: int):
        """(x, y, their averages over the last `count` iterations); the sums start again."""
        out = (self.x, self.y, self.x_sum / count, self.y_sum / count)
        self.x_sum, self.y_sum = np.zeros(self.n), np.zeros(self.m)
        return out

    def restart(self, x, y) -> None:
        self.x, self.y = x.copy(), y.copy()


def solve_dual(
    system: LinearSystem, c: np.ndarray, seconds: float, max_iterations: int = 20000, device=None
) -> DualResult:
    """min c.x over the rows and the box, by PDHG for at most `seconds`: the best dual seen.
    Only the variables the rows use take part (c must be zero elsewhere). `device`: an OpenCL
    device (fzn_gpu.runtime.device.Device) to run the iterations on (pdhg_cl.py), else numpy here."""
    start = time.monotonic()
    m = system.n_rows
    used = unique(system.col)
    local = np.searchsorted(used, system.col)
    n = len(used)
    rows, val = system.row, system.val.astype(float)
    lb, ub = system.lb[used].astype(float), system.ub[used].astype(float)
    cc, b = c[used].astype(float), system.rhs.astype(float)
    le = system.sense == LE
    # Ruiz equilibration: A' = R A C with every row's and column's largest |entry| near 1
    r_scale, c_scale = np.ones(m), np.ones(n)
    for _ in range(RUIZ_ROUNDS):
        a = np.abs(val) * r_scale[rows] * c_scale[local]
        row_max = np.zeros(m)
        col_max = np.zeros(n)
        np.maximum.at(row_max, rows, a)
        np.maximum.at(col_max, local, a)
        r_scale /= np.sqrt(np.where(row_max > 0, row_max, 1.0))
        c_scale /= np.sqrt(np.where(col_max > 0, col_max, 1.0))
    A = val * r_scale[rows] * c_scale[local]
    cs, bs = cc * c_scale, b * r_scale
    lbs, ubs = lb / c_scale, ub / c_scale
    host = NumpySteps(rows, local, A, m, n, cs, bs, lbs, ubs, le)
    steps: Steps
    if device is not None:
        from .pdhg_cl import OpenCLSteps

        steps = OpenCLSteps(device, rows, local, A, m, n, cs, bs, lbs, ubs, le)
    else:
        steps = host
    # the operator norm by power iteration
    v = np.ones(n) / np.sqrt(max(n, 1))
    norm = 1.0
    for _ in range(POWER_ROUNDS):
        w = host.ATy(host.Ax(v))
        norm = float(np.linalg.norm(w))
        if norm == 0:
            break
        v = w / norm
    eta = 0.95 / np.sqrt(max(norm, 1e-12))
    cn, bn = float(np.linalg.norm(cs)), float(np.linalg.norm(bs))
    omega = cn / bn if cn > 0 and bn > 0 else 1.0
    tau, sigma = eta / omega, eta * omega
    best_y, best = np.zeros(m), -np.inf
    period, it = 64, 0  # iterations between restarts
    stalled = 0  # restarts in a row that did not raise the best bound

    def bound_of(ys):
        yy = ys * r_scale
        d = cc + np.bincount(local, weights=val * yy[rows], minlength=n)
        with np.errstate(invalid="ignore"):
            return float(-b @ yy + np.minimum(d * lb, d * ub).sum())

    x_last, y_last = steps.state(1)[:2]  # the iterates at the last restart
    bn1 = 1.0 + float(np.linalg.norm(bs))
    x, y = x_last, y_last
    while it < max_iterations:
        steps.run(period, tau, sigma)
        it += period
        x, y, x_avg, y_avg = steps.state(period)
        # restart from the average where it proves more
        g_avg, g_now = bound_of(y_avg), bound_of(y)
        before = best
        for g, ys in ((g_avg, y_avg), (g_now, y)):
            if g > best:
                best, best_y = g, ys.copy()
        stalled = stalled + 1 if best <= before + 1e-9 * (1.0 + abs(before)) and np.isfinite(before) else 0
        if g_avg >= g_now:
            x, y = x_avg, y_avg
        # PDLP's primal weight: the ratio of the dual and primal moves since the last restart
        dx, dy = float(np.linalg.norm(x - x_last)), float(np.linalg.norm(y - y_last))
        if dx > 1e-10 and dy > 1e-10:
            omega = float(np.exp(0.5 * np.log(dy / dx) + 0.5 * np.log(omega)))
            tau, sigma = eta / omega, eta * omega
        steps.restart(x, y)
        x_last, y_last = x, y
        if _converged(host.Ax(x), bs, le, bn1, float(cs @ x), best):
            break
        if time.monotonic() - start > seconds or stalled >= STALLED_RESTARTS:
            break
    return DualResult(best_y * r_scale, best, it, x * c_scale)


def _converged(ax, bs, le, bn1, primal_obj, best) -> bool:
    """The primal iterate nearly feasible and the best dual bound within 1e-6 (relative) of its
    objective: more iterations would prove next to nothing more."""
    viol = ax - bs
    viol[le] = np.maximum(viol[le], 0.0)
    if float(np.linalg.norm(viol)) > 1e-6 * bn1:
        return False
    return abs(primal_obj - best) <= 1e-6 * (1.0 + abs(primal_obj) + abs(best))
