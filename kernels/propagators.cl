// One propagator per constraint kind, each over one row of its table (the encoding of
// fzn_gpu/registry.py). Every propagator is sound (it never removes a value with a support)
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

// ---- arithmetic
// floor(sqrt(v)) for 0 <= v <= 2^62 in integers: a float estimate, one Newton step, exact fix-up
// (no double: not every OpenCL device has it).
inline long isqrt_floor(long v) {
    if (v < 2) return v;
    long r = (long)sqrt((float)v);
    if (r > 0) r = (r + v / r) >> 1;
    while (r * r > v) r -= 1;
    while ((r + 1) * (r + 1) <= v) r += 1;
    return r;
}

// c = a * a, bounds consistent (Gecode's sqr): c within the squares of a's bounds, and
// ceil(sqrt(min c)) <= |a| <= floor(sqrt(max c)); on a bitmap the values in between leave a.
PROPAGATOR_FN bool prop_square(Ctx *x, int a, int c) {
    long la = dmin(x, a), ua = dmax(x, a);
    TRY(set_min(x, c, la > 0 ? la * la : (ua < 0 ? ua * ua : 0)));
    TRY(set_max(x, c, max(la * la, ua * ua)));
    long s = isqrt_floor(dmax(x, c));
    TRY(set_min(x, a, -s));
    TRY(set_max(x, a, s));
    long lc = dmin(x, c);
    if (lc > 0) {
        long r = isqrt_floor(lc);
        if (r * r < lc) r += 1;                 // the smallest |a| whose square reaches lc
        if (dmin(x, a) > -r) TRY(set_min(x, a, r));
        if (dmax(x, a) < r) TRY(set_max(x, a, -r));
        if (has_bits(x, a))
            for (long v = max(1 - r, (long)dmin(x, a)); v < r && v <= dmax(x, a); ++v) TRY(remove_value(x, a, v));
    }
    if (is_fixed(x, a)) TRY(fix(x, c, (long)val(x, a) * (long)val(x, a)));
    return true;
}

// c = a * b, bounds reasoning on the box (sound for any sign); c = a * a and a = a * b
// (a = 0 or b = 1) get their own, stronger reasoning.
PROPAGATOR_FN bool prop_times(Ctx *x, int a, int b, int c) {
    if (a == b) return prop_square(x, a, c);
    if (a == c || b == c) {
        int y = a == c ? b : a;                 // c * y = c
        if (!contains(x, c, 0)) TRY(fix(x, y, 1));
        if (!contains(x, y, 1)) TRY(fix(x, c, 0));
    }
    for (int pass = 0; pass < 2; ++pass) {
        long la = dmin(x, a), ua = dmax(x, a), lb = dmin(x, b), ub = dmax(x, b);
        long p1 = la * lb, p2 = la * ub, p3 = ua * lb, p4 = ua * ub;
        TRY(set_min(x, c, min(min(p1, p2), min(p3, p4))));
        TRY(set_max(x, c, max(max(p1, p2), max(p3, p4))));
        long lc = dmin(x, c), uc = dmax(x, c);
        if (lc > 0 || uc < 0) { TRY(remove_value(x, a, 0)); TRY(remove_value(x, b, 0)); }
        // a = c / b where b does not cross 0 (the quotient is monotone on the box)
        for (int side = 0; side < 2; ++side) {
            int p = side ? b : a, q = side ? a : b;
            long lq = dmin(x, q), uq = dmax(x, q);
            if (lq > 0 || uq < 0) {
                lc = dmin(x, c); uc = dmax(x, c);
                long lo = min(min(ceil_div(lc, lq), ceil_div(lc, uq)), min(ceil_div(uc, lq), ceil_div(uc, uq)));
                long hi = max(max(floor_div(lc, lq), floor_div(lc, uq)), max(floor_div(uc, lq), floor_div(uc, uq)));
                TRY(set_min(x, p, lo));
                TRY(set_max(x, p, hi));
            }
        }
    }
    if (is_fixed(x, a) && is_fixed(x, b)) TRY(fix(x, c, (long)val(x, a) * (long)val(x, b)));
    return true;
}

inline long trunc_div(long a, long b) { return a / b; }   // C99 / OpenCL division truncates

PROPAGATOR_FN bool prop_div(Ctx *x, int a, int b, int c) {
    TRY(remove_value(x, b, 0));
    long la = dmin(x, a), ua = dmax(x, a);
    long lo = LONG_MAX, hi = LONG_MIN;
    long lb = dmin(x, b), ub = dmax(x, b);
    if (ub >= 1) {
        long p = max(lb, 1L), q = ub;
        lo = min(lo, min(min(trunc_div(la, p), trunc_div(la, q)), min(trunc_div(ua, p), trunc_div(ua, q))));
        hi = max(hi, max(max(trunc_div(la, p), trunc_div(la, q)), max(trunc_div(ua, p), trunc_div(ua, q))));
    }
    if (lb <= -1) {
        long p = lb, q = min(ub, -1L);
        lo = min(lo, min(min(trunc_div(la, p), trunc_div(la, q)), min(trunc_div(ua, p), trunc_div(ua, q))));
        hi = max(hi, max(max(trunc_div(la, p), trunc_div(la, q)), max(trunc_div(ua, p), trunc_div(ua, q))));
    }
    if (lo > hi) return false;
    TRY(set_min(x, c, lo));
    TRY(set_max(x, c, hi));
    // a from c and b: trunc(a / d) in [lc, uc] for a divisor d > 0 means a in [L(d), U(d)] with
    // L(d) = lc * d if lc > 0, else (lc - 1) * d + 1, and U(d) = (uc + 1) * d - 1 if uc >= 0,
    // else uc * d; both are linear in d, so over a range of divisors their extremes lie at its
    // ends. A negative divisor -d gives the quotients [-uc, -lc] for d.
    long lc = dmin(x, c), uc = dmax(x, c);
    lb = dmin(x, b); ub = dmax(x, b);
    long alo = LONG_MAX, ahi = LONG_MIN;
    for (int side = 0; side < 2; ++side) {
        long p = side ? max(lb, 1L) : max(-ub, 1L), q = side ? ub : -lb;    // divisor magnitudes
        if (p > q) continue;
        long l = side ? lc : -uc, u = side ? uc : -lc;                       // quotients for d = |b|
        long lp = l > 0 ? l * p : (l - 1) * p + 1, lq = l > 0 ? l * q : (l - 1) * q + 1;
        long up = u >= 0 ? (u + 1) * p - 1 : u * p, uq = u >= 0 ? (u + 1) * q - 1 : u * q;
        long smin = min(lp, lq), smax = max(up, uq);
        // b < 0: a / b = -(a / |b|), so a's range for |b| is the one for b itself
        alo = min(alo, smin);
        ahi = max(ahi, smax);
    }
    if (alo > ahi) return false;
    TRY(set_min(x, a, alo));
    TRY(set_max(x, a, ahi));
    if (is_fixed(x, a) && is_fixed(x, b)) TRY(fix(x, c, trunc_div(val(x, a), val(x, b))));
    return true;
}

PROPAGATOR_FN bool prop_mod(Ctx *x, int a, int b, int c) {
    TRY(remove_value(x, b, 0));
    long m = max(abs((long)dmin(x, b)), abs((long)dmax(x, b)));
    TRY(set_min(x, c, -(m - 1)));
    TRY(set_max(x, c, m - 1));
    if (dmin(x, a) >= 0) { TRY(set_min(x, c, 0)); TRY(set_max(x, c, dmax(x, a))); }
    if (dmax(x, a) <= 0) { TRY(set_max(x, c, 0)); TRY(set_min(x, c, dmin(x, a))); }
    if (is_fixed(x, a) && is_fixed(x, b)) TRY(fix(x, c, (long)val(x, a) % (long)val(x, b)));
    if (is_fixed(x, b) && !is_fixed(x, a)) {
        // a keeps only values whose remainder c can take (C's % truncates, as MiniZinc's mod)
        long d = val(x, b);
        if (has_bits(x, a)) {
            for (int v = dmin(x, a); v <= dmax(x, a); ++v)
                if (contains(x, a, v) && !contains(x, c, (long)v % d)) TRY(remove_value(x, a, v));
        } else {
            for (int k = 0; k < 1024 && !contains(x, c, (long)dmin(x, a) % d); ++k) TRY(set_min(x, a, (long)dmin(x, a) + 1));
            for (int k = 0; k < 1024 && !contains(x, c, (long)dmax(x, a) % d); ++k) TRY(set_max(x, a, (long)dmax(x, a) - 1));
        }
        if (has_bits(x, a) && has_bits(x, c) && (long)(dmax(x, a) - dmin(x, a)) * (dmax(x, c) - dmin(x, c)) <= 65536) {
            for (int r = dmin(x, c); r <= dmax(x, c); ++r) {
                if (!contains(x, c, r)) continue;
                bool support = false;
                for (int v = dmin(x, a); v <= dmax(x, a) && !support; ++v) support = contains(x, a, v) && (long)v % d == r;
                if (!support) TRY(remove_value(x, c, r));
            }
        }
    }
    return true;
}

PROPAGATOR_FN bool prop_abs(Ctx *x, int a, int b) {
    TRY(set_min(x, b, 0));
    long la = dmin(x, a), ua = dmax(x, a);
    if (la >= 0) { TRY(set_min(x, b, la)); TRY(set_max(x, b, ua)); }
    else if (ua <= 0) { TRY(set_min(x, b, -ua)); TRY(set_max(x, b, -la)); }
    else TRY(set_max(x, b, max(-la, ua)));
    long ub = dmax(x, b), lb = dmin(x, b);
    TRY(set_min(x, a, -ub));
    TRY(set_max(x, a, ub));
    if (lb > 0) {   // a is outside (-lb, lb)
        if (dmin(x, a) > -lb) TRY(set_min(x, a, lb));
        if (dmax(x, a) < lb) TRY(set_max(x, a, -lb));
    }
    if (is_fixed(x, a)) TRY(fix(x, b, abs((long)val(x, a))));
    if (is_fixed(x, b) && is_fixed(x, a) == false) {
        long v = val(x, b);
        if (!contains(x, a, v)) TRY(fix(x, a, -v));
        else if (!contains(x, a, -v)) TRY(fix(x, a, v));
    }
    return true;
}

PROPAGATOR_FN bool prop_minmax(Ctx *x, int a, int b, int c, int is_max) {
    if (is_max) {
        TRY(set_min(x, c, max(dmin(x, a), dmin(x, b))));
        TRY(set_max(x, c, max(dmax(x, a), dmax(x, b))));
        TRY(set_max(x, a, dmax(x, c)));
        TRY(set_max(x, b, dmax(x, c)));
        if (dmax(x, b) < dmin(x, a)) return post_eq(x, a, c);
        if (dmax(x, a) < dmin(x, b)) return post_eq(x, b, c);
    } else {
        TRY(set_max(x, c, min(dmax(x, a), dmax(x, b))));
        TRY(set_min(x, c, min(dmin(x, a), dmin(x, b))));
        TRY(set_min(x, a, dmin(x, c)));
        TRY(set_min(x, b, dmin(x, c)));
        if (dmin(x, b) > dmax(x, a)) return post_eq(x, a, c);
        if (dmin(x, a) > dmax(x, b)) return post_eq(x, b, c);
    }
    if (is_fixed(x, a) && is_fixed(x, b)) TRY(fix(x, c, is_max ? max(val(x, a), val(x, b)) : min(val(x, a), val(x, b))));
    return true;
}

// base^e with saturation at +-2^40 (beyond every domain). A negative exponent gives
// 1 div base^-e (FlatZinc's int_pow): 1 for base 1, +-1 for base -1, 0 for |base| >= 2, and
// nothing for base 0 (defined = false).
inline long ipow_sat(long base, long e, bool *defined) {
    *defined = !(base == 0 && e < 0);
    if (base == 0) return e == 0 ? 1 : 0;
    if (base == 1) return 1;
    if (base == -1) return (e % 2 == 0) ? 1 : -1;
    if (e < 0) return 0;
    long r = 1, lim = 1L << 40;         // |base| >= 2: past 40 factors r is beyond lim
    for (long i = 0; i < e; ++i) {
        r *= base;
        if (r > lim) return lim;
        if (r < -lim) return -lim;
    }
    return r;
}

// The next value of v's domain after `value` (INT_MAX past the end), bitmap or bounds.
inline int next_in(Ctx *x, int v, int value) {
    if (value >= dmax(x, v)) return INT_MAX;
    return has_bits(x, v) ? next_value(x, v, value + 1) : value + 1;
}

#define POW_PAIRS 4096      // base x exponent values enumerated for supports

// c = a^b. With few (base, exponent) pairs: the bounds of a, b and c shrink to the values with
// a support (bounds consistent, the same variable in two places counted once). Otherwise the
// box: |c| <= max|a|^max(b) and c >= 0 for a >= 0, with exact bounds for a fixed exponent of a
// non-negative base.
PROPAGATOR_FN bool prop_pow(Ctx *x, int a, int b, int c) {
    bool d;
    if (is_fixed(x, a) && is_fixed(x, b)) {
        long r = ipow_sat(val(x, a), val(x, b), &d);
        if (!d) return false;
        return fix(x, c, r) != FAILED;
    }
    if (dsize(x, a) * dsize(x, b) <= POW_PAIRS) {
        long clo = LONG_MAX, chi = LONG_MIN, alo = LONG_MAX, ahi = LONG_MIN, blo = LONG_MAX, bhi = LONG_MIN;
        for (int va = dmin(x, a); va != INT_MAX; va = next_in(x, a, va)) {
            for (int vb = dmin(x, b); vb != INT_MAX; vb = next_in(x, b, vb)) {
                if (a == b && va != vb) continue;
                long r = ipow_sat(va, vb, &d);
                if (!d || (c == a && r != va) || (c == b && r != vb) || !contains(x, c, r)) continue;
                clo = min(clo, r); chi = max(chi, r);
                alo = min(alo, (long)va); ahi = max(ahi, (long)va);
                blo = min(blo, (long)vb); bhi = max(bhi, (long)vb);
            }
        }
        if (clo > chi) return false;
        TRY(set_min(x, c, clo)); TRY(set_max(x, c, chi));
        TRY(set_min(x, a, alo)); TRY(set_max(x, a, ahi));
        TRY(set_min(x, b, blo)); TRY(set_max(x, b, bhi));
        return true;
    }
    long m = ipow_sat(max(-(long)dmin(x, a), (long)dmax(x, a)), max((long)dmax(x, b), 1L), &d);
    TRY(set_min(x, c, dmin(x, a) >= 0 ? 0 : -max(m, 1L)));
    TRY(set_max(x, c, max(m, 1L)));
    if (is_fixed(x, b) && dmin(x, a) >= 0 && val(x, b) >= 0) {
        long lo = ipow_sat(dmin(x, a), val(x, b), &d), hi = ipow_sat(dmax(x, a), val(x, b), &d);
        TRY(set_min(x, c, lo));
        TRY(set_max(x, c, hi));
    }
    return true;
}

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
        if (dmax(x, v) < dmin(x, z) || dmin(x, v) > dmax(x, z) ||
            (is_fixed(x, v) && !contains(x, z, val(x, v)))) { if (bits) TRY(remove_value(x, idx, i)); continue; }
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
    uint seg = seg_of((uint)(row - x->cd));
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
