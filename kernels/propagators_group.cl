// Long rows walked by a whole work-group (registry.SHARED_BY_GROUP, rows of at least
// kernel_abi.GROUP_ROW_MIN terms; engine/pack.py marks them with parts -GROUP_ROW_MIN).
//
// One work-item walking a long row keeps the others of its warp waiting at the pass's barrier,
// and such rows took most of an optimisation model's pass (docs/BENCHMARKS.md, where a big
// model's pass goes). Here every work-item of the group takes the terms lid, lid + w,
// ... of one row in two steps around a reduction in local memory:
//  - share: it reads its terms and writes its share (a linear sum's span; an element's
//    supported indices and entries, removing from a bitmap index the values without support);
//  - apply: after every share is in (`red`: four longs a work-item), each work-item adds them
//    up itself and narrows its own terms from the total, as the serial propagator would
//    (prop_*.cl: the same helpers).
// A term narrowed by one work-item is not seen by the others' arithmetic in that call; the
// constraint watches the term, so the next pass runs it again. Reads may meet another
// work-item's narrowing (mutate_group.cl's monotone updates): they see a superset of the
// domain, from which the deductions stay sound, and an element's share takes its indices by
// their residue modulo w, never by where a bound stood when it looked.
//
// Such a row goes on the group's list when woken with at least GROUP_ROW_MIN terms to walk
// (group_work: a linear row's terms, an element's index range), and search_group.cl's
// fixpoint runs that list one constraint at a time, every work-item of the group calling
// propagate_group together, while the list holds at most half as many rows as the group has
// work-items (beyond, one work-item a row keeps them all busy). Its barriers stand outside
// every branch (PoCL builds a work-group function only from barriers that every work-item
// provably meets), and the one after the shares are read lets the next call write `red` at once.

// A work-item's share: a span as two 128-bit sums (added up over the group), or an element's
// (first, -last, lo, -hi) (each the least over the group).
typedef struct { long v[4]; bool add; } Share;

inline void share_span(Span s, Share *out) {
    out->v[0] = (long)s.lo.lo; out->v[1] = s.lo.hi; out->v[2] = (long)s.hi.lo; out->v[3] = s.hi.hi;
    out->add = true;
}

inline Span span_of(Share t) {
    Span s = {{(ulong)t.v[0], t.v[1]}, {(ulong)t.v[2], t.v[3]}};
    return s;
}

// lo <= sum <= hi over a row's terms (lin_bounds, shared out).
inline bool group_lin(Ctx *x, int n, __global const int *cs, __global const int *vs, int xv, int xc,
                      bool has_lo, long lo, bool has_hi, long hi, bool apply, Share *t, int lid, int w) {
    if (!apply) {
        share_span(lin_span_of(x, n, cs, vs, xv, xc, lid, w), t);
        return true;
    }
    Span s = span_of(*t);
    if (has_hi && w_lt(w_of(hi), s.lo)) return false;
    if (has_lo && w_lt(s.hi, w_of(lo))) return false;
    for (int i = lid; i <= n; i += w) {
        long a; int v;
        LIN_TERM(i, a, v)
        if (a != 0 && !lin_narrow(x, a, v, has_lo, lo, has_hi, hi, &s)) return false;
    }
    return true;
}

// z = arr[idx] (prop_element_const, shared out): the work-item's indices are those i with
// (i - 1) mod w == lid within idx's bounds as it reads them; work-item 0 applies the hulls.
inline bool group_element(Ctx *x, __global const int *row, bool apply, Share *t, int lid, int w) {
    int idx = row[0], n = row[1];
    __global const int *arr = row + 2;
    int z = row[2 + n];
    if (!apply) {
        int lo = max(dmin(x, idx), 1);
        int from = lo + ((1 + lid - lo) % w + w) % w;
        Supports s = {INT_MAX, INT_MIN, INT_MAX, INT_MIN};
        bool ok = element_supports(x, idx, z, arr, from, min(dmax(x, idx), n), w, &s);
        t->v[0] = s.first; t->v[1] = -(long)s.last; t->v[2] = s.lo; t->v[3] = -(long)s.hi;
        t->add = false;
        return ok;
    }
    Supports s = {(int)t->v[0], (int)-t->v[1], (int)t->v[2], (int)-t->v[3]};
    if (lid == 0) return element_bounds(x, idx, z, s);
    return s.first <= s.last;
}

// The terms a walk of c's row would take now.
int group_work(Ctx *x, int c) {
    __global const int *row = x->cd + x->coff[c];
    switch (x->ckind[c]) {
    USE_array_int_element(case KIND_array_int_element:)
    USE_array_bool_element(case KIND_array_bool_element:)
        return (int)min((long)dmax(x, row[0]) - dmin(x, row[0]) + 1, (long)INT_MAX);
    default:
        return row[0];      // a linear row's length
    }
}

// One step of constraint c's group propagator (share, or apply the group's total `t`).
bool group_step(Ctx *x, int c, bool apply, Share *t, int lid, int w) {
    __global const int *row = x->cd + x->coff[c];
    int n = row[0];
    __global const int *cs = row + 1, *vs = row + 2 + n;
    switch (x->ckind[c]) {
    PROPAGATOR(int_lin_eq, group_lin(x, n, cs, vs, -1, 0, true, vs[n], true, vs[n], apply, t, lid, w))
    PROPAGATOR(int_lin_le, group_lin(x, n, cs, vs, -1, 0, false, 0, true, vs[n], apply, t, lid, w))
    PROPAGATOR(bool_lin_eq, group_lin(x, n, cs, vs, vs[n], -1, true, 0, true, 0, apply, t, lid, w))
    PROPAGATOR(bool_lin_le, group_lin(x, n, cs, vs, -1, 0, false, 0, true, vs[n], apply, t, lid, w))
    PROPAGATOR(array_int_element, group_element(x, row, apply, t, lid, w))
    PROPAGATOR(array_bool_element, group_element(x, row, apply, t, lid, w))
    default:
        return false;   // unreachable: only registry.SHARED_BY_GROUP's kinds are marked (engine/pack.py)
    }
}

// Two shares combined: spans added (128 bits), hulls met (least of each word).
inline void share_combine(__local long *a, __local const long *b, bool add) {
    if (add) {
        Wide alo = {(ulong)a[0], a[1]}, ahi = {(ulong)a[2], a[3]};
        Wide blo = {(ulong)b[0], b[1]}, bhi = {(ulong)b[2], b[3]};
        Wide lo = w_add(alo, blo), hi = w_add(ahi, bhi);
        a[0] = (long)lo.lo; a[1] = lo.hi; a[2] = (long)hi.lo; a[3] = hi.hi;
    } else {
        for (int j = 0; j < 4; ++j) a[j] = min(a[j], b[j]);
    }
}

// Constraint c propagated by the whole group (every work-item calls it): false on a wipe-out
// this work-item met. The shares meet by a tree in `red` (log2 w rounds, each behind a barrier
// every work-item meets: the rounds depend on w alone), so a wide group (a dive's, or a phase
// of few searches: engine/runner.py) pays log w, not w, per row.
bool propagate_group(Ctx *x, int c, __local long *red, int lid, int w) {
    Share mine;
    bool ok = group_step(x, c, false, &mine, lid, w);
    for (int k = 0; k < 4; ++k) red[4 * lid + k] = mine.v[k];
    sync_group();
    int top = 1;
    while (top < w) top <<= 1;
    for (int s = top >> 1; s > 0; s >>= 1) {
        if (lid < s && lid + s < w) share_combine(red + 4 * lid, red + 4 * (lid + s), mine.add);
        sync_group();
    }
    Share t = mine;
    for (int k = 0; k < 4; ++k) t.v[k] = red[k];
    sync_group();
    return ok && group_step(x, c, true, &t, lid, w);
}
