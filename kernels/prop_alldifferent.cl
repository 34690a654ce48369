// The int/bool propagators' family: all_different: value elimination from fixed variables, and a pigeonhole test.
// The families' files are concatenated in fzn_gpu/runtime/device.py's PROPAGATOR_FILES order.

// ---- all_different: value elimination from fixed variables, and a pigeonhole test
// The row is [n, x_1..x_n, c_1..c_n, base, words]: the values x_i + c_i are distinct (offset
// views: engine/views.py folds y = x + c into the row; c = 0 elsewhere), and the root hull of
// those values spans `words` words from `base` (0 words: wider than ALLDIFF_WORDS). Values held
// by fixed variables leave the others (forward checking, value consistency), plus the
// pigeonhole test on the current hull. With a narrow root hull one pass over the variables
// gathers the fixed values into a bitmask (a value fixed twice fails) and the hull, and the
// values leave each domain a word at a time: O(n) per round instead of O(n^2) removals. A
// work-group shares it out (registry.SHARED_BY_VARIABLE): part p of P checks the whole
// constraint and narrows the variables x_p, x_(p + P), ... alone, in one round, since what it
// fixes wakes the constraint again; P = 1 is the whole propagator, which rounds until nothing
// new is fixed.
PROPAGATOR_FN bool prop_alldiff_pairs(Ctx *x, __global const int *row, int p, int P);

#ifdef SEGMENTS
// Part p of P > 1 with a root hull of at most 64 values, where a warp's lanes running parts of
// the constraint side by side share one reading of its row (mutate_group.cl, segments): each
// lane of the segment reads its share of the variables, with values relative to the hull's
// base (every domain lies inside the root hull, so each fits 0..63), and the segment combines
// the current hull, the fixed values' bits and how many variables are fixed (a value fixed
// twice leaves fewer bits than fixed variables). Then each part narrows its own variables,
// as the serial propagator's round does. Before, every part read the whole row, so a pass of
// 16-queens read each all_different ten times over.
inline bool prop_alldiff_segment(Ctx *x, __global const int *row, int n, int p, int P) {
    __global const int *xs = row + 1, *cs = row + 1 + n;
    int base = row[1 + 2 * n];
    uint seg = seg_of((uint)((row - x->model) - x->at_cd));
    int s = popcount(seg);
    int lo = INT_MAX, hi = INT_MIN, nfixed = 0;
    uint used_lo = 0u, used_hi = 0u;
    for (int i = seg_rank(seg); i < n; i += s) {
        int v = xs[i];
        uint c = (uint)cs[i] - (uint)base;          // exact modulo 2^32; the true results lie in 0..63
        int l = (int)((uint)dmin(x, v) + c), u = (int)((uint)dmax(x, v) + c);
        lo = min(lo, l);
        hi = max(hi, u);
        if (l != u) continue;
        nfixed++;
        if (l < 32) used_lo |= 1u << l;
        else used_hi |= 1u << (l - 32);
    }
    lo = seg_min(lo, seg);
    hi = seg_max(hi, seg);
    used_lo = seg_or(used_lo, seg);
    used_hi = seg_or(used_hi, seg);
    nfixed = seg_add(nfixed, seg);
    if ((int)(popcount(used_lo) + popcount(used_hi)) != nfixed) return false;
    if (hi - lo + 1 < n) return false;
    if (nfixed == 0 || nfixed == n) return true;
    uint used[2] = {used_lo, used_hi};
    for (int i = p; i < n; i += P) {
        if (is_fixed(x, xs[i])) continue;
        if (remove_mask(x, xs[i], used, 2, (long)base - cs[i]) == FAILED) return false;
    }
    return true;
}
#endif

PROPAGATOR_FN bool prop_alldiff(Ctx *x, __global const int *row, int p, int P) {
    int n = row[0];
    __global const int *xs = row + 1, *cs = row + 1 + n;
    int mw = row[2 + 2 * n];
    if (n <= 1) return true;
    if (mw == 0) return prop_alldiff_pairs(x, row, p, P);
#ifdef SEGMENTS
    if (P > 1 && mw <= 2) return prop_alldiff_segment(x, row, n, p, P);
#endif
    long base = row[1 + 2 * n];
    uint used[ALLDIFF_WORDS];
    while (true) {
        // a hull of at most 64 values (n-queens' diagonals, Costas' differences) gathers in a
        // register: the array below lives in memory, each value a load and a store in turn
        ulong used64 = 0ul;
        for (int w = 0; w < mw; ++w) used[w] = 0u;
        int nfixed = 0;
        long lo = LONG_MAX, hi = LONG_MIN;
        for (int i = 0; i < n; ++i) {
            int v = xs[i];
            long l = (long)dmin(x, v) + cs[i], u = (long)dmax(x, v) + cs[i];
            lo = min(lo, l);
            hi = max(hi, u);
            if (l != u) continue;
            long k = l - base;
            if (mw <= 2) {
                ulong bit = 1ul << k;
                if (used64 & bit) return false;
                used64 |= bit;
            } else {
                uint bit = 1u << (k & 31);
                if (used[k >> 5] & bit) return false;
                used[k >> 5] |= bit;
            }
            nfixed++;
        }
        if (mw <= 2) { used[0] = (uint)used64; used[1] = (uint)(used64 >> 32); }
        if (hi - lo + 1 < n) return false;
        if (nfixed == 0 || nfixed == n) return true;
        bool newly_fixed = false;
        for (int i = p; i < n; i += P) {
            if (is_fixed(x, xs[i])) continue;
            int r = remove_mask(x, xs[i], used, mw, base - cs[i]);
            if (r == FAILED) return false;
            if (r == CHANGED && is_fixed(x, xs[i])) newly_fixed = true;
        }
        if (!newly_fixed || P > 1) return true;
    }
}

PROPAGATOR_FN bool prop_alldiff_pairs(Ctx *x, __global const int *row, int p, int P) {
    int n = row[0];
    __global const int *xs = row + 1, *cs = row + 1 + n;
    bool again = true;
    while (again) {
        again = false;
        for (int i = 0; i < n; ++i) {
            if (!is_fixed(x, xs[i])) continue;
            long v = (long)val(x, xs[i]) + cs[i];
            for (int j = p; j < n; j += P) {
                if (j == i) continue;
                int r = remove_value(x, xs[j], v - cs[j]);
                if (r == FAILED) return false;
                if (r == CHANGED && is_fixed(x, xs[j]) && j < i && P == 1) again = true;
            }
        }
    }
    // pigeonhole: n distinct values need a hull of at least n values
    long lo = LONG_MAX, hi = LONG_MIN;
    for (int i = 0; i < n; ++i) {
        lo = min(lo, (long)dmin(x, xs[i]) + cs[i]);
        hi = max(hi, (long)dmax(x, xs[i]) + cs[i]);
    }
    return hi - lo + 1 >= n;
}
