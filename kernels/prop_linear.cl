// The int/bool propagators' family: linear relations over a row: sums kept in 128 bits, bounds reasoning.
// The families' files are concatenated in fzn_gpu/runtime/device.py's PROPAGATOR_FILES order.

// ---- linear: sum_i coef_i*x_i (+ xc*xv) against bounds, over a row's arrays
// Every term fits in 63 bits (|coef| < 2^31, |value| < 2^31), but a sum of several need not:
// sums are kept in 128 bits (Wide), and a bound derived from one is clamped to +-2^62, which
// divided by any coefficient lies beyond every domain on the same side, as the exact value would.
typedef struct { ulong lo; long hi; } Wide;

inline Wide w_of(long v) { Wide r; r.lo = (ulong)v; r.hi = v < 0 ? -1 : 0; return r; }
inline Wide w_add(Wide a, Wide b) {
    Wide r;
    r.lo = a.lo + b.lo;
    r.hi = a.hi + b.hi + (r.lo < a.lo ? 1 : 0);
    return r;
}
inline Wide w_neg(Wide a) {
    Wide r;
    r.lo = ~a.lo + 1;
    r.hi = ~a.hi + (r.lo == 0 ? 1 : 0);
    return r;
}
inline Wide w_sub(Wide a, Wide b) { return w_add(a, w_neg(b)); }
inline Wide w_addl(Wide a, long b) { return w_add(a, w_of(b)); }
#define W_LIM (1L << 62)
// a clamped to [-2^62, 2^62]
inline long w_clamp(Wide a) {
    if (a.hi == 0) return a.lo <= (ulong)W_LIM ? (long)a.lo : W_LIM;
    if (a.hi == -1) return a.lo >= (ulong)(-W_LIM) ? (long)a.lo : -W_LIM;
    return a.hi < 0 ? -W_LIM : W_LIM;
}
inline bool w_lt(Wide a, Wide b) { return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo; }
inline bool w_eq(Wide a, Wide b) { return a.hi == b.hi && a.lo == b.lo; }

typedef struct { Wide lo, hi; } Span;

// term i of a row: the arrays' entries, then the extra variable xv (if xv >= 0)
#define LIN_TERM(i, a, v) \
    if (i < n) { a = cs[i]; v = vs[i]; } else { if (xv < 0) break; a = xc; v = xv; }

// The span of the terms i = from, from + step, ... (a work-group's work-item adds up its share:
// propagators_group.cl).
inline Span lin_span_of(Ctx *x, int n, __global const int *cs, __global const int *vs, int xv, int xc, int from,
                        int step) {
    Span s = {w_of(0), w_of(0)};
    for (int i = from; i <= n; i += step) {
        long a; int v;
        LIN_TERM(i, a, v)
        long l = a * (long)dmin(x, v), u = a * (long)dmax(x, v);
        s.lo = w_addl(s.lo, min(l, u));
        s.hi = w_addl(s.hi, max(l, u));
    }
    return s;
}

inline Span lin_span(Ctx *x, int n, __global const int *cs, __global const int *vs, int xv, int xc) {
    return lin_span_of(x, n, cs, vs, xv, xc, 0, 1);
}

// Narrow the term a*v of lo <= sum <= hi, `s` the sum's span (no narrower than the true one: a
// term read before another narrowed it only makes the rest look wider, which stays sound), then
// move `s` by what the term lost. false: a wipe-out.
inline bool lin_narrow(Ctx *x, long a, int v, bool has_lo, long lo, bool has_hi, long hi, Span *s) {
    long l = a * (long)dmin(x, v), u = a * (long)dmax(x, v);
    long tmin = min(l, u), tmax = max(l, u);
    // a*x <= hi - (s.lo - tmin) and a*x >= lo - (s.hi - tmax)
    if (has_hi) {
        long up = w_clamp(w_sub(w_of(hi), w_sub(s->lo, w_of(tmin))));
        if (up < tmax) TRY(a > 0 ? set_max(x, v, floor_div(up, a)) : set_min(x, v, ceil_div(up, a)));
    }
    if (has_lo) {
        long dn = w_clamp(w_sub(w_of(lo), w_sub(s->hi, w_of(tmax))));
        if (dn > tmin) TRY(a > 0 ? set_min(x, v, ceil_div(dn, a)) : set_max(x, v, floor_div(dn, a)));
    }
    long l2 = a * (long)dmin(x, v), u2 = a * (long)dmax(x, v);
    s->lo = w_addl(s->lo, min(l2, u2) - tmin);
    s->hi = w_addl(s->hi, max(l2, u2) - tmax);
    return true;
}

// Bounds propagation of lo <= sum <= hi; a side without a bound is left out (has_lo, has_hi).
PROPAGATOR_FN bool lin_bounds(Ctx *x, int n, __global const int *cs, __global const int *vs, int xv, int xc,
                              bool has_lo, long lo, bool has_hi, long hi) {
    Span s = lin_span(x, n, cs, vs, xv, xc);
    if (has_hi && w_lt(w_of(hi), s.lo)) return false;
    if (has_lo && w_lt(s.hi, w_of(lo))) return false;
    for (int i = 0; i <= n; ++i) {
        long a; int v;
        LIN_TERM(i, a, v)
        if (a != 0 && !lin_narrow(x, a, v, has_lo, lo, has_hi, hi, &s)) return false;
    }
    return true;
}

// sum != c: prune when one variable is left.
PROPAGATOR_FN bool lin_ne(Ctx *x, int n, __global const int *cs, __global const int *vs, int xv, int xc, long c) {
    int open = -1, nopen = 0;
    long a_open = 0;
    Wide fixed_sum = w_of(0);
    for (int i = 0; i <= n; ++i) {
        long a; int v;
        LIN_TERM(i, a, v)
        if (a == 0) continue;
        if (is_fixed(x, v)) fixed_sum = w_addl(fixed_sum, a * (long)val(x, v));
        else { nopen++; open = v; a_open = a; if (nopen > 1) return true; }
    }
    Wide rest_w = w_sub(w_of(c), fixed_sum);
    if (nopen == 0) return !w_eq(rest_w, w_of(0));
    long rest = w_clamp(rest_w);            // beyond +-2^62: a_open * value cannot reach it
    if (rest != W_LIM && rest != -W_LIM && rest % a_open == 0) TRY(remove_value(x, open, rest / a_open));
    return true;
}

#define L_EQ 0
#define L_NE 1
#define L_LE 2
#define L_GT 3   // negation of LE: sum >= c + 1

PROPAGATOR_FN bool post_lin(Ctx *x, int rel, int n, __global const int *cs, __global const int *vs, int xv, int xc, long c) {
    switch (rel) {
    case L_EQ:
        // x0 - x1 = c (or -x0 + x1 = c) on two bitmaps: domain consistency by shifting words,
        // so a value removed from q[i] + i (an Aux of a decomposition) leaves q[i] too
        if (n == 2 && xv < 0 && cs[0] == -cs[1] && (cs[0] == 1 || cs[0] == -1)
                && has_bits(x, vs[0]) && has_bits(x, vs[1])) {
            long d = cs[0] * c;     // x1 = x0 - d
            TRY(keep_shifted(x, vs[1], vs[0], d));
            TRY(keep_shifted(x, vs[0], vs[1], -d));
            return true;
        }
        return lin_bounds(x, n, cs, vs, xv, xc, true, c, true, c);
    case L_NE: return lin_ne(x, n, cs, vs, xv, xc, c);
    case L_LE: return lin_bounds(x, n, cs, vs, xv, xc, false, 0, true, c);
    default: return lin_bounds(x, n, cs, vs, xv, xc, true, c + 1, false, 0);
    }
}

int lin_status(Ctx *x, int rel, int n, __global const int *cs, __global const int *vs, long c) {
    Span s = lin_span(x, n, cs, vs, -1, 0);
    Wide wc = w_of(c);
    int st;
    if (rel == L_LE) return !w_lt(wc, s.hi) ? ENTAILED : (w_lt(wc, s.lo) ? DISENTAILED : UNDECIDED);
    st = (w_eq(s.lo, wc) && w_eq(s.hi, wc)) ? ENTAILED : ((w_lt(wc, s.lo) || w_lt(s.hi, wc)) ? DISENTAILED : UNDECIDED);
    return rel == L_EQ ? st : -st;
}

PROPAGATOR_FN bool reif_lin(Ctx *x, int rel, __global const int *row, int imp) {
    int n = row[0];
    __global const int *cs = row + 1, *vs = row + 2 + n;
    long c = row[2 + 2 * n];
    int r = row[3 + 2 * n];
    if (is_fixed(x, r)) {
        if (val(x, r)) return post_lin(x, rel, n, cs, vs, -1, 0, c);
        if (imp) return true;
        int neg = rel == L_EQ ? L_NE : (rel == L_NE ? L_EQ : L_GT);
        return post_lin(x, neg, n, cs, vs, -1, 0, c);
    }
    int s = lin_status(x, rel, n, cs, vs, c);
    if (s == DISENTAILED) TRY(fix(x, r, 0));
    else if (s == ENTAILED && !imp) TRY(fix(x, r, 1));
    return true;
}
