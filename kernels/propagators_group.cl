// Long rows walked by a whole work-group (registry.SHARED_BY_GROUP, rows of at least
// kernel_abi.GROUP_ROW_MIN terms; engine/pack.py marks them with parts -GROUP_ROW_MIN).
//
// One work-item walking a long row keeps the others of its warp waiting at the pass's barrier,
// and such rows took most of an optimisation model's pass (docs/bench/measurements.md, where a big
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

// circuit (prop_circuit, globals.cl) walked by the whole group: the same deductions, each
// work-item taking the nodes i = lid, lid + w, ... in three steps between barriers, where one
// work-item walking every node was most of a TSP node's pass (docs/bench/measurements.md):
//  - its nodes' domains to the nodes and off themselves, and its fixed successors set as bits
//    of one bitmap in `red` (a bit already set: two nodes share a successor, a failure);
//  - its open nodes lose every fixed successor a word at a time, and each fixed node of its
//    own that no fixed successor names starts a chain, walked to its open end e, which loses
//    the chain's start where closing it would make a sub-tour;
//  - work-item 0 checks the cycles (every node fixed: one cycle through all; else every fixed
//    node on some chain), unless this call fixed a node (it wakes the constraint again).
// The bitmap and the counts live in `red`: ceil(n / 32) + 4 ints, at most 8 a work-item
// (group_work sends longer circuits to one work-item).
#define GC_FIXED 0      // the counts after the bitmap: fixed nodes, nodes on chains,
#define GC_CHAINED 1    // a node fixed by this call, a failure met by some work-item
#define GC_FIXED_HERE 2
#define GC_FAILED 3
#define GC_COUNTS 4

inline bool group_circuit_fits(int n, int w) { return ((n + 31) >> 5) + GC_COUNTS <= 8 * w; }

bool group_circuit(Ctx *x, __global const int *row, __local long *red, int lid, int w) {
    long off = row[0];
    int n = row[1];
    __global const int *xs = row + 2;
    int nw = (n + 31) >> 5;
    __local uint *used = (__local uint *)red;
    __local int *cnt = (__local int *)(used + nw);
    for (int k = lid; k < nw + GC_COUNTS; k += w) used[k] = 0u;
    sync_group();
    bool ok = true;
    for (int i = lid; ok && i < n; i += w) {
        int v = xs[i];
        ok = set_min(x, v, off) != FAILED && set_max(x, v, off + n - 1) != FAILED &&
             (n == 1 || remove_value(x, v, off + i) != FAILED);
        if (ok && is_fixed(x, v)) {
            int k = (int)(val(x, v) - off);
            uint bit = 1u << (k & 31);
            ok = !(atomic_or(&used[k >> 5], bit) & bit);
            atomic_inc(&cnt[GC_FIXED]);
        }
    }
    if (!ok) cnt[GC_FAILED] = 1;
    sync_group();
    int nfixed = cnt[GC_FIXED];
    bool go = !cnt[GC_FAILED] && nfixed > 0;
    uint mask[ALLDIFF_WORDS];
    for (int wb = 0; go && ok && wb < n; wb += CIRCUIT_VALUES) {
        int mw = min(ALLDIFF_WORDS, (n - wb + 31) >> 5);
        for (int k = 0; k < mw; ++k) mask[k] = used[(wb >> 5) + k];
        for (int i = lid; ok && i < n; i += w) {
            int v = xs[i];
            if (is_fixed(x, v)) continue;
            int r = remove_mask(x, v, mask, mw, off + wb);
            ok = r != FAILED;
            if (r == CHANGED && is_fixed(x, v)) cnt[GC_FIXED_HERE] = 1;
        }
    }
    for (int s = lid; go && ok && s < n; s += w) {
        if (!is_fixed(x, xs[s]) || (used[s >> 5] >> (s & 31)) & 1u) continue;    // no chain starts at s
        int len;
        int e = circuit_chain_end(x, xs, n, off, s, &len);
        atomic_add(&cnt[GC_CHAINED], len);
        if (len + 1 < n) {
            int r = remove_value(x, xs[e], off + s);
            ok = r != FAILED;
            if (r == CHANGED && is_fixed(x, xs[e])) cnt[GC_FIXED_HERE] = 1;
        }
    }
    if (!ok) cnt[GC_FAILED] = 1;
    sync_group();
    ok = !cnt[GC_FAILED];
    if (lid == 0 && ok && !cnt[GC_FIXED_HERE]) {
        // every successor fixed: one cycle through all; else every fixed node on some chain
        ok = nfixed == n ? circuit_one_cycle(x, xs, n, off) : cnt[GC_CHAINED] == nfixed;
    }
    sync_group();       // every work-item has read the counts before the next row writes `red`
    return ok;
}

// The terms a walk of c's row would take now.
int group_work(Ctx *x, int c) {
    __global const int *row = &M_CD(x, M_COFF(x, c));
    switch (M_CKIND(x, c)) {
    USE_array_int_element(case KIND_array_int_element:)
    USE_array_bool_element(case KIND_array_bool_element:)
        return (int)min((long)dmax(x, row[0]) - dmin(x, row[0]) + 1, (long)INT_MAX);
    USE_fzn_gpu_circuit(case KIND_fzn_gpu_circuit:)
        return group_circuit_fits(row[1], (int)get_local_size(0)) ? row[1] : 0;
    default:
        return row[0];      // a linear row's length
    }
}

// One step of constraint c's group propagator (share, or apply the group's total `t`).
bool group_step(Ctx *x, int c, bool apply, Share *t, int lid, int w) {
    __global const int *row = &M_CD(x, M_COFF(x, c));
    int n = row[0];
    __global const int *cs = row + 1, *vs = row + 2 + n;
    switch (M_CKIND(x, c)) {
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

// A row walked in two steps around its shares (group_step): false on a wipe-out this
// work-item met. The shares meet by a tree in `red` (log2 w rounds, each behind a barrier
// every work-item meets: the rounds depend on w alone), so a wide group (a dive's, or a phase
// of few searches: engine/runner.py) pays log w, not w, per row.
bool propagate_shares(Ctx *x, int c, __local long *red, int lid, int w) {
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

// Constraint c propagated by the whole group (every work-item calls it, all taking one case):
// a circuit in its own steps, the other kinds by their shares.
bool propagate_group(Ctx *x, int c, __local long *red, int lid, int w) {
    __global const int *row = &M_CD(x, M_COFF(x, c));
    switch (M_CKIND(x, c)) {
    PROPAGATOR(fzn_gpu_circuit, group_circuit(x, row, red, lid, w))
    default:
        return propagate_shares(x, c, red, lid, w);
    }
}
