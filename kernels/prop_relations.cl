// One propagator per constraint kind, each over one row of its table (the encoding of
// fzn_gpu/flatzinc/registry.py). Every propagator is sound (it never removes a value with a support)
// and checking: once all its variables are fixed it fails exactly when the constraint is
// violated, so a fixpoint with every variable fixed is a solution.

#define ENTAILED 1
#define DISENTAILED (-1)
#define UNDECIDED 0

// ---- integer division with floor / ceiling / truncation (b != 0)
inline long floor_div(long a, long b) {
    long q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}
inline long ceil_div(long a, long b) {
    long q = a / b;
    if ((a % b != 0) && ((a < 0) == (b < 0))) q += 1;
    return q;
}

// ---- binary relations a REL b (EQ, NE, LE, LT); negation maps to another relation
#define R_EQ 0
#define R_NE 1
#define R_LE 2
#define R_LT 3

PROPAGATOR_FN bool post_eq(Ctx *x, int a, int b) {
    TRY(set_min(x, a, dmin(x, b)));
    TRY(set_max(x, a, dmax(x, b)));
    TRY(set_min(x, b, dmin(x, a)));
    TRY(set_max(x, b, dmax(x, a)));
    if (is_fixed(x, a)) TRY(fix(x, b, val(x, a)));
    if (is_fixed(x, b)) TRY(fix(x, a, val(x, b)));
    if (has_bits(x, a) && has_bits(x, b) && !is_fixed(x, a)) {
        for (int v = dmin(x, a); v <= dmax(x, a); ++v) {
            if (contains(x, a, v) && !contains(x, b, v)) TRY(remove_value(x, a, v));
        }
        for (int v = dmin(x, b); v <= dmax(x, b); ++v) {
            if (contains(x, b, v) && !contains(x, a, v)) TRY(remove_value(x, b, v));
        }
    }
    return true;
}

PROPAGATOR_FN bool post_rel(Ctx *x, int rel, int a, int b) {
    if (a == b) return rel == R_EQ || rel == R_LE;      // x = x and x <= x hold, x != x and x < x fail
    switch (rel) {
    case R_EQ: return post_eq(x, a, b);
    case R_NE:
        if (is_fixed(x, a)) TRY(remove_value(x, b, val(x, a)));
        if (is_fixed(x, b)) TRY(remove_value(x, a, val(x, b)));
        return true;
    case R_LE:
        TRY(set_max(x, a, dmax(x, b)));
        TRY(set_min(x, b, dmin(x, a)));
        return true;
    default: // R_LT
        TRY(set_max(x, a, (long)dmax(x, b) - 1));
        TRY(set_min(x, b, (long)dmin(x, a) + 1));
        return true;
    }
}

int rel_status(Ctx *x, int rel, int a, int b) {
    if (a == b) return (rel == R_EQ || rel == R_LE) ? ENTAILED : DISENTAILED;
    switch (rel) {
    case R_EQ:
    case R_NE: {
        int s = UNDECIDED;
        if (dmax(x, a) < dmin(x, b) || dmax(x, b) < dmin(x, a)) s = DISENTAILED;
        else if (is_fixed(x, a) && is_fixed(x, b)) s = val(x, a) == val(x, b) ? ENTAILED : DISENTAILED;
        else if (is_fixed(x, a) && !contains(x, b, val(x, a))) s = DISENTAILED;
        else if (is_fixed(x, b) && !contains(x, a, val(x, b))) s = DISENTAILED;
        return rel == R_EQ ? s : -s;
    }
    case R_LE:
        if (dmax(x, a) <= dmin(x, b)) return ENTAILED;
        if (dmin(x, a) > dmax(x, b)) return DISENTAILED;
        return UNDECIDED;
    default:
        if (dmax(x, a) < dmin(x, b)) return ENTAILED;
        if (dmin(x, a) >= dmax(x, b)) return DISENTAILED;
        return UNDECIDED;
    }
}

// not (a REL b) as a relation on (a2, b2): EQ<->NE, not(a<=b) = b<a, not(a<b) = b<=a
PROPAGATOR_FN bool post_not_rel(Ctx *x, int rel, int a, int b) {
    switch (rel) {
    case R_EQ: return post_rel(x, R_NE, a, b);
    case R_NE: return post_rel(x, R_EQ, a, b);
    case R_LE: return post_rel(x, R_LT, b, a);
    default: return post_rel(x, R_LE, b, a);
    }
}

// r <-> (a REL b) (mode 0), r -> (a REL b) (mode 1)
PROPAGATOR_FN bool reif_rel(Ctx *x, int rel, int a, int b, int r, int imp) {
    if (is_fixed(x, r)) {
        if (val(x, r)) return post_rel(x, rel, a, b);
        return imp ? true : post_not_rel(x, rel, a, b);
    }
    int s = rel_status(x, rel, a, b);
    if (s == DISENTAILED) TRY(fix(x, r, 0));
    else if (s == ENTAILED && !imp) TRY(fix(x, r, 1));
    return true;
}
