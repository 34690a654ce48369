// The int/bool propagators' family: element over constants and variables, array maximum and minimum.
// The families' files are concatenated in fzn_gpu/runtime/device.py's PROPAGATOR_FILES order.

// ---- element and extrema
// z = a[idx]: an index whose entry cannot equal z leaves idx (removed from a bitmap; without
// one, idx's bounds go to the hull of the indices left in one call, where removing bound by
// bound took a call per index: thousands of rounds over a long array), and z keeps the entries'
// hull. Domain consistent on a bitmap idx, bounds on z.
// The supports among indices i = from, from + step, ... <= to of z = arr[idx]: an index whose
// entry z cannot take leaves a bitmap idx; s = (first, last) supported index, (lo, hi) their
// entries' hull, left as they were when none is found. false: a wipe-out.
typedef struct { int first, last, lo, hi; } Supports;
inline bool element_supports(Ctx *x, int idx, int z, __global const int *arr, int from, int to, int step,
                             Supports *s) {
    bool bits = has_bits(x, idx);
    for (int i = from; i <= to; i += step) {
        if (!contains(x, idx, i)) continue;
        int e = arr[i - 1];
        if (!contains(x, z, e)) { if (bits) TRY(remove_value(x, idx, i)); continue; }
        s->first = min(s->first, i);
        s->last = max(s->last, i);
        s->lo = min(s->lo, e);
        s->hi = max(s->hi, e);
    }
    return true;
}

// idx to its supported indices' hull and z to their entries' hull (both found: s.first <= s.last).
inline bool element_bounds(Ctx *x, int idx, int z, Supports s) {
    if (s.first > s.last) return false;
    TRY(set_min(x, idx, s.first));
    TRY(set_max(x, idx, s.last));
    TRY(set_min(x, z, s.lo));
    TRY(set_max(x, z, s.hi));
    return true;
}

PROPAGATOR_FN bool prop_element_const(Ctx *x, __global const int *row) {
    int idx = row[0], n = row[1];
    __global const int *arr = row + 2;
    int z = row[2 + n];
    Supports s = {INT_MAX, INT_MIN, INT_MAX, INT_MIN};
    if (!element_supports(x, idx, z, arr, max(dmin(x, idx), 1), min(dmax(x, idx), n), 1, &s)) return false;
    return element_bounds(x, idx, z, s);
}

// Whether arr[i] = v may equal z: their domains meet. Exact where either is fixed or both
// are bitmaps overlapping on at most 64 values; otherwise their bounds overlap (bounds
// support). Before, a z fixed to a value inside v's bounds but not its domain kept i as a
// support: production_by_order[production_period[o]] = o in lot-sizing (a channel through
// element) left indices Gecode's domain-consistent element removes.
inline bool element_meets(Ctx *x, int v, int z) {
    if (dmax(x, v) < dmin(x, z) || dmin(x, v) > dmax(x, z)) return false;
    if (is_fixed(x, z)) return contains(x, v, val(x, z));
    if (is_fixed(x, v)) return contains(x, z, val(x, v));
    if (!has_bits(x, v) || !has_bits(x, z)) return true;
    long a = max((long)dmin(x, v), (long)dmin(x, z)), b = min((long)dmax(x, v), (long)dmax(x, z));
    if (b - a >= 64) return true;
    for (long t = a; t <= b; ++t)
        if (contains(x, v, t) && contains(x, z, t)) return true;
    return false;
}

PROPAGATOR_FN bool prop_element_var(Ctx *x, __global const int *row) {
    int idx = row[0], n = row[1];
    __global const int *xs = row + 2;
    int z = row[2 + n];
    TRY(set_min(x, idx, 1));
    TRY(set_max(x, idx, n));
    long lo = LONG_MAX, hi = LONG_MIN;
    int first = INT_MAX, last = INT_MIN;        // the supported indices' hull: idx's new bounds
    bool bits = has_bits(x, idx);
    for (int i = dmin(x, idx); i <= dmax(x, idx); ++i) {
        if (!contains(x, idx, i)) continue;
        int v = xs[i - 1];
        if (!element_meets(x, v, z)) { if (bits) TRY(remove_value(x, idx, i)); continue; }
        first = min(first, i);
        last = i;
        lo = min(lo, (long)dmin(x, v));
        hi = max(hi, (long)dmax(x, v));
    }
    if (lo > hi) return false;
    TRY(set_min(x, idx, first));
    TRY(set_max(x, idx, last));
    TRY(set_min(x, z, lo));
    TRY(set_max(x, z, hi));
    if (is_fixed(x, idx)) return post_eq(x, xs[val(x, idx) - 1], z);
    return true;
}

PROPAGATOR_FN bool prop_array_extremum(Ctx *x, __global const int *row, int is_max) {
    int m = row[0], n = row[1];
    __global const int *xs = row + 2;
    if (n == 0) return false;
    long lo = LONG_MIN, hi = LONG_MIN;           // for max: max of lbs, max of ubs
    if (!is_max) { lo = LONG_MAX; hi = LONG_MAX; } // for min: min of lbs, min of ubs
    for (int i = 0; i < n; ++i) {
        if (is_max) { lo = max(lo, (long)dmin(x, xs[i])); hi = max(hi, (long)dmax(x, xs[i])); }
        else { lo = min(lo, (long)dmin(x, xs[i])); hi = min(hi, (long)dmax(x, xs[i])); }
    }
    if (is_max) {
        TRY(set_min(x, m, lo)); TRY(set_max(x, m, hi));
        int support = -1, nsup = 0;
        for (int i = 0; i < n; ++i) {
            TRY(set_max(x, xs[i], dmax(x, m)));
            if (dmax(x, xs[i]) >= dmin(x, m)) { support = i; nsup++; }
        }
        if (nsup == 0) return false;
        if (nsup == 1) TRY(set_min(x, xs[support], dmin(x, m)));
    } else {
        TRY(set_max(x, m, hi)); TRY(set_min(x, m, lo));
        int support = -1, nsup = 0;
        for (int i = 0; i < n; ++i) {
            TRY(set_min(x, xs[i], dmin(x, m)));
            if (dmin(x, xs[i]) <= dmax(x, m)) { support = i; nsup++; }
        }
        if (nsup == 0) return false;
        if (nsup == 1) TRY(set_max(x, xs[support], dmax(x, m)));
    }
    return true;
}
