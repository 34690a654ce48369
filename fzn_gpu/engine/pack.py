"""Model -> the flat int32 arrays the search kernel reads: domains (bounds, and bitmaps for
small spans), constraint rows, watch lists, and the search plan. Refuses (Unsupported) what
no kernel runs, so the engine never guesses."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from .. import settings
from ..errors import Unsupported
from ..flatzinc.arrays import unique_pairs
from ..flatzinc.model import INT_LIMIT, UNBOUNDED, ConstraintTable, Model, VarKind
from ..flatzinc.registry import BY_KEY, KINDS, WAKE_DOM, ConstraintKind
from ..options import SolveOptions
from ..runtime.codegen import (
    FLOAT_VAL_BASE,
    FLOAT_VAL_SETTLE,
    SET_VAL_BASE,
    float_val_select_code,
    set_val_select_code,
    val_select_code,
    var_select_code,
)
from ..runtime.kernel_abi import GROUP_ROW_MIN, PART_SHIFT, PARTS_MAX, ROUND_LANES
from . import floats, sets, views

LIMIT = INT_LIMIT  # |value| of any int variable on the device (Gecode's limit too)
BITMAP_MAX_SPAN = 1024  # variables with a smaller initial span get a bitmap
NARROW_SPAN = 32  # a model whose every variable spans at most this many values is narrow (DeviceModel)
FLOAT_LEVELS = 132  # levels one float variable can take: 64 ordinal and 64 arithmetic splits, a point, slack


@dataclass
class DeviceModel:
    nv: int
    nc: int
    nwords: int
    lb: np.ndarray
    ub: np.ndarray
    bits: np.ndarray  # uint32, nwords
    bm_off: np.ndarray
    bm_nw: np.ndarray
    base: np.ndarray
    ckind: np.ndarray
    coff: np.ndarray
    cd: np.ndarray
    wptr: np.ndarray
    wlist: np.ndarray
    deg: np.ndarray
    sg_ptr: np.ndarray
    sg_var: np.ndarray
    sg_sel: np.ndarray
    maxd: int  # the most levels one branch can hold (pack.max_levels)
    max_branch: int  # the most decisions one branch's path can hold below its root
    trail_entry_total: int  # sum over the variables that can change of a trail entry's size
    trail_bound: int  # the most trail (ints) one branch of the search can need
    obj_var: int  # -1 for satisfaction
    obj_sense: int  # 1 minimise, -1 maximise
    use_weights: bool
    empty_var: int = -1  # a variable declared with an empty domain (the model is unsatisfiable)
    compan: np.ndarray = field(default_factory=lambda: np.full(1, -1, np.int32))  # set var's P -> N (sets.py)
    set_vars: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # the set variables' P
    sol_words: int = 0  # bitmap words a solution carries (set models: all of them)
    nf: int = 0  # float variables (engine/floats.py)
    # every variable a one-word bitmap, word v for variable v: a work-group search may hold a
    # node as its bitmaps alone (kernels/domain.cl, FZN_NARROW)
    narrow: bool = False
    fslot: np.ndarray = field(default_factory=lambda: np.full(1, -1, np.int32))  # device var -> float slot, or -1
    froot: np.ndarray = field(default_factory=lambda: np.zeros(2, np.int64))  # root float bounds (ordinals)
    sg_prec: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))  # a float group's precision (bits)
    cparts: np.ndarray = field(default_factory=lambda: np.ones(1, np.int32))  # work-items a group shares c over
    # (-m: the group, kernel_abi.GROUP_ROW_MIN)
    views: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))  # (y, x, c): y = x + c (views.py)

    @property
    def nunits(self) -> int:
        """Entries a work-group's active lists may hold: every constraint's parts, and the
        constraints the whole group may walk twice (their list fills the same array from its
        top, beside a first pass's list of every constraint: kernels/search_group.cl)."""
        parts = self.cparts[: self.nc]
        return max(int(np.maximum(parts, 1).sum() + (parts < 0).sum()), self.nc, 1)


def _var_positions(kind: ConstraintKind, row: np.ndarray) -> list[int]:
    """Indices of the variables in one encoded row (see fzn_gpu.flatzinc.registry)."""
    out: list[int] = []
    i = 0
    for f in kind.signature:
        if f == "var":
            out.append(int(row[i]))
            i += 1
        elif f == "var[]":
            n = int(row[i])
            out.extend(int(v) for v in row[i + 1 : i + 1 + n])
            i += 1 + n
        elif f in ("int", "float"):
            i += 1
        elif f in ("int[]", "float[]"):
            i += 1 + int(row[i])
        elif f == "set":
            i += 1 + 2 * int(row[i])
        elif f == "set[]":
            n = int(row[i])
            i += 1
            for _ in range(n):
                i += 1 + 2 * int(row[i])
    return out


def _fixed_width(kind: ConstraintKind) -> bool:
    return all(f in ("var", "int") for f in kind.signature)


def table_vars(table: ConstraintTable) -> tuple[np.ndarray, np.ndarray]:
    """Every variable occurrence of a table: (row within the table, variable), int64."""
    n, kind = len(table), table.kind
    if _fixed_width(kind):
        mat = table.data.reshape(n, len(kind.signature))
        cols = [i for i, f in enumerate(kind.signature) if f == "var"]
        return np.repeat(np.arange(n, dtype=np.int64), len(cols)), mat[:, cols].reshape(-1).astype(np.int64)
    if "set[]" in kind.signature:  # nested lengths: row by row
        rows, vs = [], []
        for r in range(n):
            pos = _var_positions(kind, table.row(r))
            rows.extend([r] * len(pos))
            vs.extend(pos)
        return np.asarray(rows, dtype=np.int64), np.asarray(vs, dtype=np.int64)
    return _ragged_table_vars(table)


def _ragged_table_vars(table: ConstraintTable) -> tuple[np.ndarray, np.ndarray]:
    """table_vars of a kind whose rows differ in length, every row at once: a cursor per row
    walks the signature's fields (a big model's int_lin_* and bool_clause tables hold a million
    rows: row by row took seconds). The occurrences come in the row-by-row order, each row's in
    its fields' order."""
    n, data = len(table), table.data
    cur = table.row_ptr[:-1].astype(np.int64).copy()
    row_ids = np.arange(n, dtype=np.int64)
    rows_parts, vars_parts = [], []
    for f in table.kind.signature:
        if f == "var":
            rows_parts.append(row_ids)
            vars_parts.append(data[cur])
            cur += 1
        elif f == "var[]":
            lens = data[cur].astype(np.int64)
            total = int(lens.sum())
            starts = np.repeat(cur + 1 - np.cumsum(lens) + lens, lens)  # each element's row start, less its rank
            rows_parts.append(np.repeat(row_ids, lens))
            vars_parts.append(data[starts + np.arange(total, dtype=np.int64)])
            cur += 1 + lens
        elif f in ("int", "float"):
            cur += 1
        elif f in ("int[]", "float[]"):
            cur += 1 + data[cur]
        elif f == "set":
            cur += 1 + 2 * data[cur]
        else:  # pragma: no cover - registry and this walk are written together
            raise AssertionError(f)
    if not rows_parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rows, vs = np.concatenate(rows_parts), np.concatenate(vars_parts).astype(np.int64)
    order = np.argsort(rows, kind="stable")
    return rows[order], vs[order]


def check_supported(model: Model) -> None:
    """Every kind has a kernel; what is left to refuse is a kind no table knows (a lowering bug)."""
    for table in model.tables.values():
        if len(table) and table.kind.domain not in ("int", "float", "set"):
            raise Unsupported(
                f"{table.kind.name} has no kernel",
                file=model.source,
                line=int(table.lines[0]),
                fix="use another solver for this model",
            )


def is_narrow(span: np.ndarray, nf: int) -> bool:
    """Whether every variable's initial span fits one 32-bit word (none empty, no floats), so
    that each can be a bitmap of one word (and bitmaps that wide are in use at all).
    FZN_GPU_NARROW=0 turns it off (for comparisons)."""
    if not settings.flag("FZN_GPU_NARROW", True) or nf > 0 or len(span) == 0 or BITMAP_MAX_SPAN < NARROW_SPAN:
        return False
    return bool(((span >= 1) & (span <= NARROW_SPAN)).all())


def _domain_bits(holes, want_bits, lb, ub, bm_off, bm_nw, nwords: int) -> np.ndarray:
    """The root bitmaps: every value of lb..ub, less the declared holes (a per-value loop in
    Python took seconds on QAP 64's thousands of 1..4096 index variables)."""
    bits = np.zeros(max(nwords, 1), dtype=np.uint32)
    full = want_bits.copy()
    full[list(holes)] = False
    for v in np.nonzero(full)[0]:  # whole words, then the last word's low bits
        span = int(ub[v]) - int(lb[v]) + 1
        words = bits[bm_off[v] : bm_off[v] + bm_nw[v]]
        words[: span >> 5] = 0xFFFFFFFF
        if span & 31:
            words[span >> 5] = (1 << (span & 31)) - 1
    for v, dom in holes.items():
        if want_bits[v]:
            i = np.asarray(dom.values(), dtype=np.int64) - int(lb[v])
            np.bitwise_or.at(bits, bm_off[v] + (i >> 5), (1 << (i & 31)).astype(np.uint32))
    return bits


class WideConstant(Unsupported):
    """A constraint's constant beyond the device tables' 32 bits: complete search, restarts, LNS
    and bucket elimination cannot take the model; Adaptive Search can, its linear constants
    having 63 bits (SolveRun's fallback, engine/__init__.py)."""


@dataclass
class _Rows:
    """The device's constraint rows as they are gathered: each part's kind ids, data and
    lengths, and the (constraint ids, variable ids) pairs that watch them."""

    kinds: list[np.ndarray] = field(default_factory=list)
    data: list[np.ndarray] = field(default_factory=list)
    lens: list[np.ndarray] = field(default_factory=list)
    watches: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    count: int = 0

    def add_table(self, kind_id: int, data: np.ndarray, lens: np.ndarray, rows: np.ndarray, vs: np.ndarray) -> None:
        """A table's rows: `rows` (its row of each watched pair) and `vs` (their variables)."""
        self.kinds.append(np.full(len(lens), kind_id, dtype=np.int32))
        self.data.append(data.astype(np.int32))
        self.lens.append(lens)
        self.watches.append((self.count + rows, vs))
        self.count += len(lens)

    def add_encoded(self, encoded) -> None:
        """Rows encoded apart (set and float kinds: (kind ids, rows, watched pairs))."""
        ekinds, erows, epairs = encoded
        for k, row in zip(ekinds, erows):
            self.kinds.append(np.array([k], dtype=np.int32))
            self.data.append(np.asarray(row, dtype=np.int32))
            self.lens.append(np.array([len(row)]))
        if epairs:
            pairs_arr = np.asarray(epairs, dtype=np.int64)
            self.watches.append((pairs_arr[:, 0], pairs_arr[:, 1]))
        self.count += len(ekinds)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ckind, cd, coff): the rows' kinds, their data end to end, and each row's offset."""
        ckind = np.concatenate(self.kinds) if self.kinds else np.zeros(0, np.int32)
        cd = np.concatenate(self.data) if self.data else np.zeros(0, np.int32)
        lens = np.concatenate(self.lens) if self.lens else np.zeros(0, np.int64)
        return ckind, cd, (np.cumsum(lens) - lens).astype(np.int32)


def _device_bounds(model: Model, lb: np.ndarray, ub: np.ndarray) -> None:
    """Refuses a declared bound or constant past ±LIMIT (clipped into `lb`, `ub`), and checks
    that lowering fixed every constant."""
    V = model.vars
    declared = (np.abs(V.lb) != UNBOUNDED) & (V.lb != lb) | (np.abs(V.ub) != UNBOUNDED) & (V.ub != ub)
    if declared.any():
        v = int(np.nonzero(declared)[0][0])
        line = int(V.lines[v]) if V.lines is not None else None
        what = f"the constant {V.lb[v]} is" if V.is_const[v] else f"variable {V.names[v]} has values"
        raise Unsupported(
            f"{what} beyond ±{LIMIT}",
            file=model.source,
            line=line,
            fix="scale the model's numbers down; fzn-gpu (like Gecode) works with 32-bit integers",
        )
    # (a constant given a value outside its declared domain is empty: lb > ub, the model unsatisfiable)
    loose = V.is_const & (lb < ub) & ((V.kind == VarKind.INT) | (V.kind == VarKind.BOOL))
    assert not loose.any(), f"constant {V.names[int(np.argmax(loose))]} is not fixed"  # lowering bug


def _table_rows(model: Model, folded, lb: np.ndarray, ub: np.ndarray) -> _Rows:
    """Every int and bool table's rows (set and float kinds are encoded apart), a constant past
    ±LIMIT refused; all_different's rows with their offset views (views.py)."""
    out = _Rows()
    for key, table in model.tables.items():
        if len(table) == 0 or table.kind.domain in ("set", "float"):  # sets.encode and floats.encode
            continue
        kind = table.kind
        if np.abs(table.data).max(initial=0) > LIMIT + 1:
            r = int(np.argmax(np.abs(table.data)))
            raise WideConstant(
                f"a constant of {kind.name} is beyond ±{LIMIT}",
                file=model.source,
                line=int(table.lines[np.searchsorted(table.row_ptr, r, side="right") - 1]),
                fix="scale the model's numbers down; fzn-gpu works with 32-bit integers",
            )
        if key == views.ALLDIFF:  # [n, x..., offset...]: views.py
            data, lens = views.alldiff_rows(table, folded, lb, ub)
            table = dataclasses.replace(table, data=data, row_ptr=np.concatenate([[0], np.cumsum(lens)]))
        rows, vs = table_vars(table)
        out.add_table(kind.id, table.data, np.diff(table.row_ptr), rows, vs)
    return out


def _watch_lists(rows: _Rows, is_const: np.ndarray, nv: int, ckind, cd, coff, bm_nw):
    """(deg, wptr, wlist): each variable's constraints (CSR), without constants and duplicates."""
    if rows.watches:
        wc = np.concatenate([w[0] for w in rows.watches]).astype(np.int64)
        wv = np.concatenate([w[1] for w in rows.watches]).astype(np.int64)
    else:
        wc = wv = np.zeros(0, np.int64)
    keep = ~is_const[wv] if len(wv) else np.zeros(0, bool)
    pairs = unique_pairs(wv[keep], wc[keep])
    deg = np.bincount(pairs[:, 0], minlength=nv).astype(np.int32) if len(pairs) else np.zeros(nv, np.int32)
    wptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int32)
    return deg, wptr, watch_entries(pairs[:, 1], ckind, cd, coff, bm_nw)


def pack(model: Model, opts: SolveOptions) -> DeviceModel:
    check_supported(model)
    folded = views.find(model, table_vars) if views.wanted() else None
    if folded is not None:  # y = x + c inside all_different: x's domain narrowed, y fixed
        model = folded.model
    V = model.vars
    nv = len(V)
    lb = np.clip(V.lb, -LIMIT, LIMIT)
    ub = np.clip(V.ub, -LIMIT, LIMIT)
    _device_bounds(model, lb, ub)
    # a float variable's int slot is a flag: set when search accepts its box (floats.py)
    is_float = V.kind == VarKind.FLOAT
    lb = np.where(is_float, np.where(V.is_const, 1, 0), lb)
    ub = np.where(is_float, 1, ub)
    # the device's variables: the model's, with each set variable's N and C appended (sets.py)
    layout = sets.expand(model, lb, ub) if (V.kind == VarKind.SET).any() else None
    if layout is not None:
        lb, ub, holes, is_const = layout.lb, layout.ub, layout.holes, layout.is_const
        need_bits = layout.need_bits
    else:
        holes, is_const, need_bits = V.holes, V.is_const, np.zeros(nv, dtype=bool)
    nv = len(lb)
    flayout = floats.layout(model, nv)
    span = ub.astype(np.int64) - lb + 1
    empty = np.nonzero((span <= 0) | (flayout.slot >= 0) & _float_empty(flayout))[0]
    want_bits = ((span > 2) & (span <= BITMAP_MAX_SPAN) & ~is_const) | need_bits
    for v in holes:
        if span[v] <= BITMAP_MAX_SPAN:
            want_bits[v] = True
    narrow = is_narrow(span, flayout.nf)
    if narrow:  # every variable a word of its own, word v for variable v
        want_bits[:] = True
    bm_nw = np.where(want_bits, (span + 31) // 32, 0).astype(np.int32)
    bm_off = np.where(want_bits, np.cumsum(bm_nw) - bm_nw, -1).astype(np.int32)
    nwords = int(bm_nw.sum())
    bits = _domain_bits(holes, want_bits, lb, ub, bm_off, bm_nw, nwords)

    # constraint rows, with set_in rows added for holes that no bitmap can hold
    rows = _table_rows(model, folded, lb, ub)
    if layout is not None:
        rows.add_encoded(sets.encode(model, layout, rows.count))
    if flayout.nf or any(len(t) and t.kind.domain == "float" for t in model.tables.values()):
        rows.add_encoded(floats.encode(model, rows.count))
    set_in = BY_KEY["set_in"]
    for v, dom in holes.items():
        if not want_bits[v]:
            row = [v, len(dom.ranges)] + [b for r in dom.ranges for b in r]
            rows.add_table(set_in.id, np.array(row), np.array([len(row)]), np.array([0]), np.array([v]))
    nc = rows.count
    ckind, cd, coff = rows.arrays()
    deg, wptr, wlist = _watch_lists(rows, is_const, nv, ckind, cd, coff, bm_nw)

    sg_ptr, sg_var, sg_sel, sg_prec, use_weights = search_plan(model, opts)
    optimising = model.solve.kind != "satisfy"
    maxd = max_levels(sg_ptr, sg_var, sg_sel, span, want_bits, random_possible=optimising)
    max_branch = max_levels(sg_ptr, sg_var, sg_sel, span, want_bits, random_possible=optimising, decisions=True)

    # the trail holds a variable at most once per depth (kernels/domain.cl), and at most once
    # per change of its domain, of which it has span - 1 on one branch (a float: any number)
    TRAIL_FIXED = 4
    fvar = flayout.slot >= 0
    entry = TRAIL_FIXED + bm_nw.astype(np.int64) + np.where(fvar, 4, 0)
    changing = span > 1
    changes = np.where(fvar, maxd + 1, span - 1)

    compan = np.full(nv, -1, dtype=np.int32)
    if layout is not None:
        for p_, n_, _ in layout.triple.values():
            compan[p_] = n_

    obj_var, obj_sense = -1, 1
    if model.solve.kind != "satisfy" and model.solve.objective and model.solve.objective[0] == "var":
        obj_var = cast(int, model.solve.objective[1])
        obj_sense = 1 if model.solve.kind == "minimize" else -1
    return DeviceModel(
        nv=nv,
        nc=nc,
        nwords=max(nwords, 1),
        lb=lb.astype(np.int32),
        ub=ub.astype(np.int32),
        bits=bits,
        bm_off=bm_off,
        bm_nw=bm_nw,
        base=lb.astype(np.int32),
        ckind=ckind,
        coff=coff,
        cd=cd,
        wptr=wptr,
        wlist=wlist if len(wlist) else np.zeros(1, np.int32),
        deg=deg,
        sg_ptr=sg_ptr,
        sg_var=sg_var if len(sg_var) else np.zeros(1, np.int32),
        sg_sel=sg_sel if len(sg_sel) else np.zeros(2, np.int32),
        maxd=maxd,
        max_branch=max_branch,
        trail_entry_total=int(entry[changing].sum()),
        trail_bound=int((entry[changing] * np.minimum(maxd + 1, changes[changing])).sum()),
        obj_var=obj_var,
        obj_sense=obj_sense,
        use_weights=use_weights,
        empty_var=int(empty[0]) if len(empty) else -1,
        compan=compan,
        set_vars=layout.set_vars if layout is not None else np.zeros(0, np.int64),
        sol_words=max(nwords, 1) if layout is not None else 0,
        nf=flayout.nf,
        narrow=narrow,
        fslot=flayout.slot,
        froot=flayout.root if flayout.nf else np.zeros(2, np.int64),
        sg_prec=sg_prec,
        cparts=constraint_parts(ckind, cd, coff),
        views=folded.triples() if folded is not None else np.zeros((0, 3), np.int64),
    )


def _float_empty(flayout) -> np.ndarray:
    """Per device variable: a float variable declared with lower bound above its upper."""
    out = np.zeros(len(flayout.slot), dtype=bool)
    fv = np.nonzero(flayout.slot >= 0)[0]
    if len(fv):
        lo, hi = flayout.root[0::2], flayout.root[1::2]
        out[fv] = lo[flayout.slot[fv]] > hi[flayout.slot[fv]]
    return out


def max_levels(sg_ptr, sg_var, sg_sel, span, has_bits, random_possible: bool, decisions: bool = False) -> int:
    """The most levels (left decisions) one branch can hold. A left decision x = v fixes x, so a
    variable labelled by value (min, max; median and random on a bitmap) takes one level; a
    split (x <= m) halves its domain, so one labelled by splits takes its bit length plus one; a
    set variable takes one per element of its universe; a float variable at most 64 splits
    (each halves the doubles of its box) and a point. Random values split bounds-only
    domains at a random inner value, which may shrink them by one value only, so where they can
    occur (a random value selection, or LNS's random labelling of an optimisation model) the
    stack is twice as deep and its second half splits in halves (search kernels' `halve`).

    With `decisions`, the most decisions one branch can hold instead (its path: the left
    decisions and the right branches taken): a variable labelled by value takes up to its span
    (each right branch x != v removes a value), the others as many as levels."""
    levels, split_all, random = 1, 1, random_possible
    for g in range(len(sg_ptr) - 1):
        vs = np.asarray(sg_var[sg_ptr[g] : sg_ptr[g + 1]], dtype=np.int64)
        val = int(sg_sel[2 * g + 1])
        if val >= FLOAT_VAL_BASE:
            levels += FLOAT_LEVELS * len(vs)
            split_all += FLOAT_LEVELS * len(vs)
            continue
        if val >= SET_VAL_BASE:
            universe = int(np.maximum(span[vs] - 1, 0).sum())  # less the sentinel (sets.py)
            levels += universe
            split_all += universe
            continue
        random = random or val == val_select_code("indomain_random")
        bitlen = np.ceil(np.log2(np.maximum(span[vs], 1) + 1)).astype(np.int64)
        by_value = val in (val_select_code("indomain_min"), val_select_code("indomain_max"))
        by_value_on_bits = val in (val_select_code("indomain_median"), val_select_code("indomain_random"))
        one = np.full(len(vs), by_value) | (by_value_on_bits & has_bits[vs])
        levels += int(np.where(one, np.maximum(span[vs], 1) if decisions else 1, bitlen + 1).sum())
        split_all += int((bitlen + 1).sum())
    return 2 * max(levels, split_all) if random else levels


def search_plan(model: Model, opts: SolveOptions):
    """Groups of (variables, var selection, value selection, precision) in order: the
    relaxations' guide (fzn_gpu.relax), the annotations (unless -f), then every other FD variable (first_fail; indomain_min where its
    domain has a bitmap, then the wide ones by indomain_split), then an objective that none
    of these names, towards better values (as Gecode does; by halves, the better first, on a
    bounds-only domain): a maximised variable that nothing bounds is labelled with its
    largest value at once, not raised one solution at a time; then the Aux variables that
    propagation left open (input_order;
    indomain_min on small domains, indomain_split on large ones); last the float variables no
    float_search names (split to floats.DEFAULT_PRECISION of their magnitude): a float objective first, towards
    better values, so that branch and bound halves the objective's range rather than creeping
    up on it from one solution to the next, then the decision floats, then the Aux ones (to
    floats.AUX_PRECISION). Within each of the last two the variable widest relative to its
    magnitude is split first (as interval solvers split the largest box side): splitting one
    variable down to its precision while another stays wide can leave nothing to propagate
    until the end (a^b = c with two integers in b's box bounds nothing on a negative base), so
    such a search walks every precision-wide box of the first variable. A solution is a node
    where all are decided."""
    V = model.vars
    searchable = ((V.kind == VarKind.INT) | (V.kind == VarKind.BOOL)) & ~V.is_const
    groups: list[tuple[list[int], int, int, float]] = []
    seen = np.zeros(len(V), dtype=bool)
    objective = model.solve.objective
    obj = cast(int, objective[1]) if model.solve.kind != "satisfy" and objective and objective[0] == "var" else -1
    sets_open = (V.kind == VarKind.SET) & ~V.is_const
    floats_open = (V.kind == VarKind.FLOAT) & ~V.is_const

    def add(vs, var_select: str, value_code: int, precision: float = 0.0) -> None:
        vs = [int(v) for v in vs]
        if vs:
            groups.append((vs, var_select_code(var_select), value_code, precision))
            seen[vs] = True

    for step in model.solve.guide:
        add([v for v in step.vars if searchable[v] and not seen[v]], step.var_select, val_select_code(step.val_select))
    if not opts.free_search:
        for step in model.solve.search:
            if step.kind == "set":
                add(
                    [v for v in step.vars if sets_open[v] and not seen[v]],
                    step.var_select,
                    set_val_select_code(step.val_select),
                )
            elif step.kind == "float":
                add(
                    [v for v in step.vars if floats_open[v] and not seen[v]],
                    step.var_select,
                    float_val_select_code(step.val_select),
                    step.precision or -floats.DEFAULT_PRECISION,
                )
            elif step.kind in ("int", "bool"):
                add(
                    [v for v in step.vars if searchable[v] and not seen[v]],
                    step.var_select,
                    val_select_code(step.val_select),
                )
    better = "indomain_min" if model.solve.kind == "minimize" else "indomain_max"
    last = obj >= 0 and searchable[obj] and not seen[obj]
    if last:
        seen[obj] = True
    small = (V.ub - V.lb) < BITMAP_MAX_SPAN

    def add_by_width(mask: np.ndarray, var_select: str, by_value: str, by_halves: str) -> None:
        """The variables of `mask` whose domain has a bitmap, labelled by value, then the
        bounds-only ones, by halves: labelled by value from a bound, a wide variable that only
        a few values fit took a node a value, billions (a -10^9..10^9 that an element's index
        or reified bounds tie to a few values)."""
        add(np.nonzero(mask & small)[0], var_select, val_select_code(by_value))
        add(np.nonzero(mask & ~small)[0], var_select, val_select_code(by_halves))

    add_by_width(searchable & ~seen & ~V.is_aux, "first_fail", "indomain_min", "indomain_split")
    # set variables: the smallest undecided element in
    add(np.nonzero(sets_open & ~seen)[0], "input_order", set_val_select_code("indomain_min"))
    if last:  # towards better values: by halves, the better half first, on a bounds-only domain
        seen[obj] = False
        halves = "indomain_split" if better == "indomain_min" else "indomain_reverse_split"
        add_by_width(np.arange(len(V)) == obj, "input_order", better, halves)
    # Aux variables left open by propagation
    add_by_width(searchable & ~seen & V.is_aux, "input_order", "indomain_min", "indomain_split")
    # float variables: an objective towards better values, the decision ones, then the Aux ones
    # (each a function of the others, so settled to a coarser width: the checker's need)
    if obj >= 0 and floats_open[obj] and not seen[obj]:
        add(
            [obj],
            "input_order",
            float_val_select_code("indomain_reverse_split" if better == "indomain_max" else "indomain_split"),
            -floats.DEFAULT_PRECISION,
        )
    add(
        np.nonzero(floats_open & ~seen & ~V.is_aux)[0],
        "float_unsettled",
        float_val_select_code("indomain_split"),
        -floats.DEFAULT_PRECISION,
    )
    add(np.nonzero(floats_open & ~seen)[0], "float_unsettled", FLOAT_VAL_SETTLE, -floats.AUX_PRECISION)
    sizes = [len(g[0]) for g in groups]
    sg_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32) if groups else np.zeros(1, np.int32)
    sg_var = np.concatenate([np.asarray(g[0], dtype=np.int32) for g in groups]) if groups else np.zeros(0, np.int32)
    sg_sel = np.asarray([c for g in groups for c in (g[1], g[2])], dtype=np.int32)
    sg_prec = np.asarray([g[3] for g in groups] or [0.0], dtype=np.float64).view(np.int64)
    use_weights = any(g[1] == var_select_code("dom_w_deg") for g in groups)
    return sg_ptr, sg_var, sg_sel, sg_prec, use_weights


_WAKE = np.array([k.wake for k in KINDS], dtype=np.int64)
_LIN_EQ = np.array([k.id for k in KINDS if k.name in ("int_lin_eq", "int_lin_eq_reif", "int_lin_eq_imp")])


_SHARED = np.array([k.shared_by_variable for k in KINDS], dtype=bool)
_GROUP_AT = np.array([k.group_length_at for k in KINDS], dtype=np.int64)


def group_row_min() -> int:
    """Rows at least this long are walked by a whole work-group (kernel_abi.GROUP_ROW_MIN;
    FZN_GPU_GROUP_ROW_MIN for tuning runs and tests, 0: never)."""
    return settings.integer("FZN_GPU_GROUP_ROW_MIN", GROUP_ROW_MIN)


def parts_max() -> int:
    """A constraint shared out by variable has at most this many parts (kernel_abi.PARTS_MAX;
    FZN_GPU_PARTS_MAX, 1 to PARTS_MAX, for tuning runs)."""
    return min(settings.integer("FZN_GPU_PARTS_MAX", PARTS_MAX), PARTS_MAX)


def constraint_parts(ckind: np.ndarray, cd: np.ndarray, coff: np.ndarray, row_min: int | None = None) -> np.ndarray:
    """How many work-items of a group share each constraint's propagation (registry's
    SHARED_BY_VARIABLE: one per variable of the row's first array, whose length leads the row,
    at most PARTS_MAX, and fewer where that fits a pass waking them all in one round of a group
    (kernel_abi.ROUND_LANES); -row_min for a SHARED_BY_GROUP row of at least `row_min` terms, which
    the whole group walks while its work is that long (kernel_abi.GROUP_ROW_MIN); 1 for the
    others, and for all in a model of 2 ** PART_SHIFT constraints)."""
    parts = np.ones(max(len(ckind), 1), dtype=np.int32)
    if len(ckind) == 0 or len(ckind) >= 2**PART_SHIFT:
        return parts
    shared = np.flatnonzero(_SHARED[ckind])
    parts[shared] = np.clip(cd[coff[shared]], 1, parts_max())
    total = int(parts[shared].sum())
    if ROUND_LANES < total <= 2 * ROUND_LANES:
        # one round instead of two: each work-item narrows two variables of a constraint after
        # reading its row once, where two rounds read it twice (docs/bench/measurements.md: 16-queens'
        # 48 parts as 24, kernel 3.58 -> 3.09 s)
        parts[shared] = np.maximum(parts[shared] * ROUND_LANES // total, 1)
    row_min = group_row_min() if row_min is None else row_min
    at = _GROUP_AT[ckind]
    grouped = np.flatnonzero(at >= 0)
    if row_min > 0 and len(grouped):
        long_rows = grouped[cd[coff[grouped] + at[grouped]] >= row_min]
        parts[long_rows] = -row_min
    return parts


def watch_entries(
    watchers: np.ndarray, ckind: np.ndarray, cd: np.ndarray, coff: np.ndarray, bm_nw: np.ndarray
) -> np.ndarray:
    """The watch list's entries, `c << 2 | event` for each watching constraint c (registry's
    WAKE_*; kernels/domain.cl reads them back). A linear equality that post_lin makes domain
    consistent (x0 - x1 = c on two bitmaps, unit coefficients) needs every domain change."""
    if len(watchers) == 0:
        return np.zeros(1, np.int32)
    c = watchers.astype(np.int64)
    kind = ckind[c].astype(np.int64)
    event = _WAKE[kind]
    lin = np.flatnonzero(np.isin(kind, _LIN_EQ))
    at = coff[c[lin]].astype(np.int64)
    lin, at = lin[cd[at] == 2], at[cd[at] == 2]  # [2, a0, a1, 2, x0, x1, c]
    a0, a1, x0, x1 = cd[at + 1], cd[at + 2], cd[at + 4], cd[at + 5]
    shift = (a0 == -a1) & (np.abs(a0) == 1) & (bm_nw[x0] > 0) & (bm_nw[x1] > 0)
    event[lin[shift]] = WAKE_DOM
    return ((c << 2) | event).astype(np.int32)
