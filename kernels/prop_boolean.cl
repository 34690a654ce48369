// The int/bool propagators' family: booleans (0/1 integer variables): relations, clauses, parity, boolean linear.
// The families' files are concatenated in fzn_gpu/runtime/device.py's PROPAGATOR_FILES order.

// ---- booleans (0/1 integer variables)
PROPAGATOR_FN bool prop_bool_and(Ctx *x, int a, int b, int r, int imp) {
    if (is_fixed(x, r) && val(x, r) == 1) { TRY(fix(x, a, 1)); TRY(fix(x, b, 1)); return true; }
    if ((is_fixed(x, a) && val(x, a) == 0) || (is_fixed(x, b) && val(x, b) == 0)) { TRY(fix(x, r, 0)); return true; }
    if (imp) return true;
    if (is_fixed(x, a) && is_fixed(x, b)) { TRY(fix(x, r, 1)); return true; }
    if (is_fixed(x, r) && val(x, r) == 0) {
        if (is_fixed(x, a) && val(x, a) == 1) TRY(fix(x, b, 0));
        if (is_fixed(x, b) && val(x, b) == 1) TRY(fix(x, a, 0));
    }
    return true;
}

PROPAGATOR_FN bool prop_bool_or(Ctx *x, int a, int b, int r, int imp) {
    if (is_fixed(x, a) && is_fixed(x, b) && val(x, a) == 0 && val(x, b) == 0) { TRY(fix(x, r, 0)); return true; }
    if (is_fixed(x, r) && val(x, r) == 1) {
        if (is_fixed(x, a) && val(x, a) == 0) TRY(fix(x, b, 1));
        if (is_fixed(x, b) && val(x, b) == 0) TRY(fix(x, a, 1));
        return true;
    }
    if (imp) return true;
    if ((is_fixed(x, a) && val(x, a) == 1) || (is_fixed(x, b) && val(x, b) == 1)) TRY(fix(x, r, 1));
    if (is_fixed(x, r) && val(x, r) == 0) { TRY(fix(x, a, 0)); TRY(fix(x, b, 0)); }
    return true;
}

PROPAGATOR_FN bool prop_bool_xor(Ctx *x, int a, int b, int r, int imp) {
    if (imp) {
        if (is_fixed(x, r) && val(x, r) == 1) return post_rel(x, R_NE, a, b);
        if (is_fixed(x, a) && is_fixed(x, b) && val(x, a) == val(x, b)) TRY(fix(x, r, 0));
        return true;
    }
    int fa = is_fixed(x, a), fb = is_fixed(x, b), fr = is_fixed(x, r);
    if (fa && fb) return fix(x, r, val(x, a) != val(x, b)) != FAILED;
    if (fa && fr) return fix(x, b, val(x, a) ^ val(x, r)) != FAILED;
    if (fb && fr) return fix(x, a, val(x, b) ^ val(x, r)) != FAILED;
    return true;
}

// r <-> and(xs) (is_and) or r <-> or(xs); imp: r -> ...
PROPAGATOR_FN bool prop_array_bool(Ctx *x, __global const int *row, int is_and, int imp) {
    int n = row[0];
    __global const int *xs = row + 1;
    int r = row[1 + n];
    int absorbing = is_and ? 0 : 1;     // a literal with this value decides the result
    int open = -1, nopen = 0;
    for (int i = 0; i < n; ++i) {
        if (is_fixed(x, xs[i])) {
            if (val(x, xs[i]) == absorbing) {
                if (is_and) return fix(x, r, 0) != FAILED;
                return imp ? true : fix(x, r, 1) != FAILED;
            }
        } else { open = xs[i]; nopen++; }
    }
    if (nopen == 0) {   // every literal is 1 - absorbing
        if (is_and) return imp ? true : fix(x, r, 1) != FAILED;
        return fix(x, r, 0) != FAILED;
    }
    if (is_fixed(x, r)) {
        int rv = val(x, r);
        if (is_and) {
            if (rv == 1) { for (int i = 0; i < n; ++i) TRY(fix(x, xs[i], 1)); }
            else if (!imp && nopen == 1) TRY(fix(x, open, 0));
        } else {
            if (rv == 1 && nopen == 1) TRY(fix(x, open, 1));
            else if (rv == 0 && !imp) { for (int i = 0; i < n; ++i) TRY(fix(x, xs[i], 0)); }
        }
    }
    return true;
}

PROPAGATOR_FN bool prop_array_bool_xor(Ctx *x, __global const int *row) {
    int n = row[0];
    __global const int *xs = row + 1;
    int parity = 0, open = -1, nopen = 0;
    for (int i = 0; i < n; ++i) {
        if (is_fixed(x, xs[i])) parity ^= val(x, xs[i]);
        else { open = xs[i]; nopen++; }
    }
    if (nopen == 0) return parity == 1;
    if (nopen == 1) TRY(fix(x, open, parity ^ 1));
    return true;
}

// clause over positive literals ps and negative literals ns; mode: 0 plain, 1 reif, 2 imp
PROPAGATOR_FN bool prop_clause(Ctx *x, __global const int *row, int mode) {
    int np = row[0];
    __global const int *ps = row + 1;
    int nn = row[1 + np];
    __global const int *ns = row + 2 + np;
    int r = mode ? row[2 + np + nn] : -1;
    int open = -1, open_val = 0, nopen = 0;
    for (int i = 0; i < np; ++i) {
        if (is_fixed(x, ps[i])) { if (val(x, ps[i]) == 1) return (mode == 1) ? fix(x, r, 1) != FAILED : true; }
        else { nopen++; open = ps[i]; open_val = 1; }
    }
    for (int i = 0; i < nn; ++i) {
        if (is_fixed(x, ns[i])) { if (val(x, ns[i]) == 0) return (mode == 1) ? fix(x, r, 1) != FAILED : true; }
        else { nopen++; open = ns[i]; open_val = 0; }
    }
    bool required = mode == 0 || (is_fixed(x, r) && val(x, r) == 1);
    if (nopen == 0) return required ? false : (mode ? fix(x, r, 0) != FAILED : true);
    if (required && nopen == 1) TRY(fix(x, open, open_val));
    if (mode == 1 && is_fixed(x, r) && val(x, r) == 0) {
        for (int i = 0; i < np; ++i) TRY(fix(x, ps[i], 0));
        for (int i = 0; i < nn; ++i) TRY(fix(x, ns[i], 1));
    }
    return true;
}

PROPAGATOR_FN bool prop_int_plus(Ctx *x, int a, int b, int c) {
    TRY(set_min(x, c, (long)dmin(x, a) + dmin(x, b)));
    TRY(set_max(x, c, (long)dmax(x, a) + dmax(x, b)));
    TRY(set_min(x, a, (long)dmin(x, c) - dmax(x, b)));
    TRY(set_max(x, a, (long)dmax(x, c) - dmin(x, b)));
    TRY(set_min(x, b, (long)dmin(x, c) - dmax(x, a)));
    TRY(set_max(x, b, (long)dmax(x, c) - dmin(x, a)));
    return true;
}
