// The int/bool propagators' family: membership in sets of constants (set_in and its reified forms).
// The families' files are concatenated in fzn_gpu/runtime/device.py's PROPAGATOR_FILES order.

// ---- sets of constants
bool set_has(__global const int *s, long v) {
    int k = s[0];
    for (int i = 0; i < k; ++i) if (s[1 + 2 * i] <= v && v <= s[2 + 2 * i]) return true;
    return false;
}

PROPAGATOR_FN bool post_in_set(Ctx *x, int v, __global const int *s) {
    int k = s[0];
    if (k == 0) return false;
    TRY(set_min(x, v, s[1]));
    TRY(set_max(x, v, s[2 * k]));
    // move the bounds out of the gaps; with a bitmap, clear the gaps
    while (!set_has(s, dmin(x, v))) {
        long lo = dmin(x, v), next = LONG_MAX;
        for (int i = 0; i < k; ++i) if (s[1 + 2 * i] > lo) { next = s[1 + 2 * i]; break; }
        TRY(set_min(x, v, next));
    }
    while (!set_has(s, dmax(x, v))) {
        long hi = dmax(x, v), prev = LONG_MIN;
        for (int i = k - 1; i >= 0; --i) if (s[2 + 2 * i] < hi) { prev = s[2 + 2 * i]; break; }
        TRY(set_max(x, v, prev));
    }
    if (has_bits(x, v)) {
        for (int i = 0; i + 1 < k; ++i)
            for (long g = max((long)s[2 + 2 * i] + 1, (long)dmin(x, v)); g < s[3 + 2 * i] && g <= dmax(x, v); ++g)
                TRY(remove_value(x, v, g));
    }
    return true;
}

PROPAGATOR_FN bool post_not_in_set(Ctx *x, int v, __global const int *s) {
    int k = s[0];
    if (is_fixed(x, v)) return !set_has(s, val(x, v));
    for (int i = 0; i < k; ++i) {
        long lo = s[1 + 2 * i], hi = s[2 + 2 * i];
        if (lo <= dmin(x, v) && dmin(x, v) <= hi) TRY(set_min(x, v, hi + 1));
        if (lo <= dmax(x, v) && dmax(x, v) <= hi) TRY(set_max(x, v, lo - 1));
    }
    for (int i = k - 1; i >= 0; --i) {
        long lo = s[1 + 2 * i], hi = s[2 + 2 * i];
        if (lo <= dmin(x, v) && dmin(x, v) <= hi) TRY(set_min(x, v, hi + 1));
        if (lo <= dmax(x, v) && dmax(x, v) <= hi) TRY(set_max(x, v, lo - 1));
    }
    if (has_bits(x, v)) {
        for (int i = 0; i < k; ++i)
            for (long g = max((long)s[1 + 2 * i], (long)dmin(x, v)); g <= s[2 + 2 * i] && g <= dmax(x, v); ++g)
                TRY(remove_value(x, v, g));
    }
    if (is_fixed(x, v)) return !set_has(s, val(x, v));
    return true;
}

int in_set_status(Ctx *x, int v, __global const int *s) {
    if (is_fixed(x, v)) return set_has(s, val(x, v)) ? ENTAILED : DISENTAILED;
    int k = s[0];
    bool any = false;
    for (int i = 0; i < k; ++i) {
        if (s[1 + 2 * i] <= dmin(x, v) && dmax(x, v) <= s[2 + 2 * i]) return ENTAILED;
        if (!(s[2 + 2 * i] < dmin(x, v) || s[1 + 2 * i] > dmax(x, v))) any = true;
    }
    return any ? UNDECIDED : DISENTAILED;
}

PROPAGATOR_FN bool reif_in_set(Ctx *x, __global const int *row, int imp) {
    int v = row[0];
    __global const int *s = row + 1;
    int r = row[2 + 2 * s[0]];
    if (is_fixed(x, r)) {
        if (val(x, r)) return post_in_set(x, v, s);
        return imp ? true : post_not_in_set(x, v, s);
    }
    int st = in_set_status(x, v, s);
    if (st == DISENTAILED) TRY(fix(x, r, 0));
    else if (st == ENTAILED && !imp) TRY(fix(x, r, 1));
    return true;
}
