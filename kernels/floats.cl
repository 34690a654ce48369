// Float constraints (built with -DFZN_FLOATS for models with float variables; see
// fzn_gpu/engine/floats.py). Bounds are stored as ordinals (the double's bits, negative ones
// flipped, so integer order is float order) and read as doubles. Every computed bound is rounded
// outwards: one ulp for +, -, *, /, sqrt (correctly rounded in OpenCL), FUZZ ulps for the
// library functions (OpenCL allows them a few ulps of error), so no solution is ever cut off.
// A float parameter sits in a row as two words (low, high) of its bits.
#ifdef FZN_FLOATS
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

#define FUZZ 4
#define FINF as_double(0x7FF0000000000000L)     // +infinity as a double (INFINITY is a float)

inline long ford(double d) { long b = as_long(d); return b < 0 ? b ^ 0x7FFFFFFFFFFFFFFFL : b; }
inline double fval(long o) { return as_double(o < 0 ? o ^ 0x7FFFFFFFFFFFFFFFL : o); }
inline double fparam(__global const int *w) { return as_double((long)(uint)w[0] | ((long)w[1] << 32)); }
inline double fdecision(int lo, int hi) { return as_double((long)(uint)lo | ((long)hi << 32)); }

inline double down(double d) { return isnan(d) ? -FINF : nextafter(d, -FINF); }
inline double up(double d) { return isnan(d) ? FINF : nextafter(d, FINF); }
inline double downk(double d) { for (int i = 0; i < FUZZ; ++i) d = down(d); return d; }
inline double upk(double d) { for (int i = 0; i < FUZZ; ++i) d = up(d); return d; }

// a float variable's bounds; an int variable (int2float) reads as its int bounds
inline double flo(Ctx *x, int v) { return is_float(x, v) ? fval(FB_(x, 2 * M_FSLOT(x, v))) : (double)dmin(x, v); }
inline double fhi(Ctx *x, int v) { return is_float(x, v) ? fval(FB_(x, 2 * M_FSLOT(x, v) + 1)) : (double)dmax(x, v); }
inline bool fpoint(Ctx *x, int v) { return flo(x, v) == fhi(x, v); }

// A result's box read one ulp wider each side, where a backward projection starts: b = f(a)
// holds where b is f(a) rounded to a double, as the model's own arithmetic and MiniZinc's
// printed constants make it (3.8 + 0.93 gives 4.7299999999999995, though no real 3.8 + 0.93
// is that double), so a point solution computed in doubles is never refuted.
inline double rlo(Ctx *x, int v) { return down(flo(x, v)); }
inline double rhi(Ctx *x, int v) { return up(fhi(x, v)); }

// narrow a float variable: below m nothing remains (fset_min), above m nothing (fset_max)
inline int fset_min(Ctx *x, int v, double m) { return isnan(m) ? UNCHANGED : fset_lo(x, v, ford(m == 0.0 ? -0.0 : m)); }
inline int fset_max(Ctx *x, int v, double m) { return isnan(m) ? UNCHANGED : fset_hi(x, v, ford(m == 0.0 ? 0.0 : m)); }
inline int fset(Ctx *x, int v, double lo, double hi) {
    if (fset_min(x, v, lo) == FAILED) return FAILED;
    return fset_max(x, v, hi);
}

// ---- relations a REL b
#define FR_EQ 0
#define FR_NE 1
#define FR_LE 2
#define FR_LT 3

// Equal within the checker's tolerance (fzn_gpu/flatzinc/check.py). float != fails where two boxes are
// indistinguishable, every value of one within the tolerance of every value of the other (so
// also on two equal points): the printed shortest decimals of such boxes may coincide, and
// search accepts boxes as narrow as that.
inline bool fnear(double a, double b) { return fabs(a - b) <= 1e-6 * max(1.0, max(fabs(a), fabs(b))); }
inline bool fnear_boxes(double la, double ua, double lb, double ub) {
    return fnear(la, ub) && fnear(ua, lb) && fnear(la, lb) && fnear(ua, ub);
}

PROPAGATOR_FN bool post_frel(Ctx *x, int rel, int a, int b) {
    switch (rel) {
    case FR_EQ:
        TRY(fset(x, a, flo(x, b), fhi(x, b)));
        TRY(fset(x, b, flo(x, a), fhi(x, a)));
        return true;
    case FR_NE:
        return !fnear_boxes(flo(x, a), fhi(x, a), flo(x, b), fhi(x, b));
    case FR_LE:
        TRY(fset_max(x, a, fhi(x, b)));
        TRY(fset_min(x, b, flo(x, a)));
        return true;
    default:     // FR_LT
        TRY(fset_max(x, a, down(fhi(x, b))));
        TRY(fset_min(x, b, up(flo(x, a))));
        return true;
    }
}

int frel_status(Ctx *x, int rel, int a, int b) {
    double la = flo(x, a), ua = fhi(x, a), lb = flo(x, b), ub = fhi(x, b);
    switch (rel) {
    case FR_EQ: case FR_NE: {
        int s = (ua < lb || ub < la) ? DISENTAILED : ((la == ua && lb == ub && la == lb) ? ENTAILED : UNDECIDED);
        return rel == FR_EQ ? s : -s;
    }
    case FR_LE: return ua <= lb ? ENTAILED : (la > ub ? DISENTAILED : UNDECIDED);
    default: return ua < lb ? ENTAILED : (la >= ub ? DISENTAILED : UNDECIDED);
    }
}

PROPAGATOR_FN bool reif_frel(Ctx *x, int rel, int a, int b, int r, int imp) {
    if (is_fixed(x, r)) {
        if (val(x, r)) return post_frel(x, rel, a, b);
        if (imp) return true;
        switch (rel) {
        case FR_EQ: return post_frel(x, FR_NE, a, b);
        case FR_NE: return post_frel(x, FR_EQ, a, b);
        case FR_LE: return post_frel(x, FR_LT, b, a);
        default: return post_frel(x, FR_LE, b, a);
        }
    }
    int s = frel_status(x, rel, a, b);
    if (s == DISENTAILED) TRY(fix(x, r, 0));
    else if (s == ENTAILED && !imp) TRY(fix(x, r, 1));
    return true;
}

// ---- linear: sum c_i x_i REL c, each term's bounds and each sum rounded outwards
inline void fterm(Ctx *x, double c, int v, double *lo, double *hi) {
    double a = c * flo(x, v), b = c * fhi(x, v);
    if (c == 0.0) { *lo = 0.0; *hi = 0.0; return; }
    *lo = down(fmin(a, b));
    *hi = up(fmax(a, b));
}

// lo <= sum <= hi (a side may be infinite: no bound)
PROPAGATOR_FN bool flin_bounds(Ctx *x, int n, __global const int *cs, __global const int *vs, double lo, double hi) {
    // the sum's finite parts and its count of infinite ends, so that the others' sum beside a
    // term with an infinite end is still known (inf - inf would be NaN: no bound at all)
    double flo_s = 0.0, fhi_s = 0.0, mag = 0.0;
    int ninf_lo = 0, ninf_hi = 0;
    for (int i = 0; i < n; ++i) {
        double tl, th;
        fterm(x, fparam(cs + 2 * i), vs[i], &tl, &th);
        if (isinf(tl)) ninf_lo++; else flo_s = down(flo_s + tl);
        if (isinf(th)) ninf_hi++; else fhi_s = up(fhi_s + th);
        mag += fmax(isinf(tl) ? 0.0 : fabs(tl), isinf(th) ? 0.0 : fabs(th));
    }
    if ((ninf_lo == 0 && flo_s > hi) || (ninf_hi == 0 && fhi_s < lo)) return false;
    // the bound of a sum rounded n + 1 times (its products, its additions): a point solution in
    // doubles may miss the real sum by that much
    mag += fmax(isinf(lo) ? 0.0 : fabs(lo), isinf(hi) ? 0.0 : fabs(hi));
    double slack = up((n + 1) * DBL_EPSILON * up(mag));
    if (!isinf(lo)) lo = down(lo - slack);
    if (!isinf(hi)) hi = up(hi + slack);
    for (int i = 0; i < n; ++i) {
        double c = fparam(cs + 2 * i);
        if (c == 0.0) continue;
        double tl, th;
        fterm(x, c, vs[i], &tl, &th);
        // c x_i <= hi - (the others' least sum), c x_i >= lo - (the others' greatest sum)
        bool others_lo_inf = ninf_lo - (isinf(tl) ? 1 : 0) > 0, others_hi_inf = ninf_hi - (isinf(th) ? 1 : 0) > 0;
        double top = (isinf(hi) || others_lo_inf) ? FINF : up(hi - down(flo_s - (isinf(tl) ? 0.0 : tl)));
        double bot = (isinf(lo) || others_hi_inf) ? -FINF : down(lo - up(fhi_s - (isinf(th) ? 0.0 : th)));
        if (c > 0) TRY(fset(x, vs[i], down(bot / c), up(top / c)));
        else TRY(fset(x, vs[i], down(top / c), up(bot / c)));
    }
    return true;
}

#define FL_EQ 0
#define FL_NE 1
#define FL_LE 2
#define FL_LT 3
#define FL_GT 4          // the negation of LE
#define FL_GE 5          // the negation of LT

PROPAGATOR_FN bool post_flin(Ctx *x, int rel, int n, __global const int *cs, __global const int *vs, double c) {
    switch (rel) {
    case FL_EQ: return flin_bounds(x, n, cs, vs, c, c);
    case FL_LE: return flin_bounds(x, n, cs, vs, -FINF, c);
    case FL_LT: return flin_bounds(x, n, cs, vs, -FINF, down(c));
    case FL_GT: return flin_bounds(x, n, cs, vs, up(c), FINF);
    case FL_GE: return flin_bounds(x, n, cs, vs, c, FINF);
    default: {   // FL_NE: fails once the sum's box is within the tolerance of c, relative to
                 // the terms' magnitude as the checker measures it
        double slo = 0.0, shi = 0.0, mag = fabs(c);
        for (int i = 0; i < n; ++i) {
            double tl, th;
            fterm(x, fparam(cs + 2 * i), vs[i], &tl, &th);
            slo = down(slo + tl);
            shi = up(shi + th);
            mag += fmax(fabs(tl), fabs(th));
        }
        double tol = 1e-6 * fmax(1.0, mag);
        return !(fabs(slo - c) <= tol && fabs(shi - c) <= tol);
    }
    }
}

int flin_status(Ctx *x, int rel, int n, __global const int *cs, __global const int *vs, double c) {
    double slo = 0.0, shi = 0.0;
    for (int i = 0; i < n; ++i) {
        double tl, th;
        fterm(x, fparam(cs + 2 * i), vs[i], &tl, &th);
        slo = down(slo + tl);
        shi = up(shi + th);
    }
    switch (rel) {
    case FL_LE: return shi <= c ? ENTAILED : (slo > c ? DISENTAILED : UNDECIDED);
    case FL_LT: return shi < c ? ENTAILED : (slo >= c ? DISENTAILED : UNDECIDED);
    default: {
        int s = (c < slo || c > shi) ? DISENTAILED : ((slo == c && shi == c) ? ENTAILED : UNDECIDED);
        return rel == FL_EQ ? s : -s;
    }
    }
}

// row: [n, c_1 (2 words) .. c_n, n, v_1 .. v_n, c (2 words), (r)]
PROPAGATOR_FN bool prop_flin(Ctx *x, __global const int *row, int rel, int reif, int imp) {
    int n = row[0];
    __global const int *cs = row + 1, *vs = row + 2 + 2 * n;
    double c = fparam(row + 2 + 3 * n);
    if (!reif) return post_flin(x, rel, n, cs, vs, c);
    int r = row[4 + 3 * n];
    if (is_fixed(x, r)) {
        if (val(x, r)) return post_flin(x, rel, n, cs, vs, c);
        if (imp) return true;
        int neg = rel == FL_EQ ? FL_NE : rel == FL_NE ? FL_EQ : rel == FL_LE ? FL_GT : FL_GE;
        return post_flin(x, neg, n, cs, vs, c);
    }
    int s = flin_status(x, rel, n, cs, vs, c);
    if (s == DISENTAILED) TRY(fix(x, r, 0));
    else if (s == ENTAILED && !imp) TRY(fix(x, r, 1));
    return true;
}

// ---- arithmetic: c = a OP b, each bound from the corners of the box, rounded outwards
inline void hull4(double p, double q, double r, double s, double *lo, double *hi) {
    *lo = down(fmin(fmin(p, q), fmin(r, s)));
    *hi = up(fmax(fmax(p, q), fmax(r, s)));
}

PROPAGATOR_FN bool prop_fplus(Ctx *x, int a, int b, int c) {
    TRY(fset(x, c, down(flo(x, a) + flo(x, b)), up(fhi(x, a) + fhi(x, b))));
    TRY(fset(x, a, down(rlo(x, c) - fhi(x, b)), up(rhi(x, c) - flo(x, b))));
    TRY(fset(x, b, down(rlo(x, c) - fhi(x, a)), up(rhi(x, c) - flo(x, a))));
    return true;
}

// p in c / q where q does not contain 0
inline int fquotient(Ctx *x, int p, int c, int q) {
    double lq = flo(x, q), uq = fhi(x, q);
    if (lq <= 0.0 && uq >= 0.0) return UNCHANGED;
    double lo, hi;
    hull4(rlo(x, c) / lq, rlo(x, c) / uq, rhi(x, c) / lq, rhi(x, c) / uq, &lo, &hi);
    return fset(x, p, lo, hi);
}

PROPAGATOR_FN bool prop_ftimes(Ctx *x, int a, int b, int c) {
    double lo, hi;
    if (a == b) {          // c = a * a
        double la = flo(x, a), ua = fhi(x, a);
        double m = (la > 0 || ua < 0) ? fmin(la * la, ua * ua) : 0.0;
        TRY(fset(x, c, down(m), up(fmax(la * la, ua * ua))));
        double s = up(sqrt(fmax(rhi(x, c), 0.0))), r = down(sqrt(fmax(rlo(x, c), 0.0)));
        TRY(fset(x, a, -s, s));                  // |a| in [r, s]: a side of 0 short of r is out
        if (r > 0.0 && flo(x, a) > -r) TRY(fset_min(x, a, r));
        if (r > 0.0 && fhi(x, a) < r) TRY(fset_max(x, a, -r));
        return true;
    }
    hull4(flo(x, a) * flo(x, b), flo(x, a) * fhi(x, b), fhi(x, a) * flo(x, b), fhi(x, a) * fhi(x, b), &lo, &hi);
    TRY(fset(x, c, lo, hi));
    TRY(fquotient(x, a, c, b));
    TRY(fquotient(x, b, c, a));
    return true;
}

PROPAGATOR_FN bool prop_fdiv(Ctx *x, int a, int b, int c) {
    if (fpoint(x, b) && flo(x, b) == 0.0) return false;          // division by zero
    double lo, hi;
    TRY(fquotient(x, c, a, b));
    hull4(rlo(x, c) * flo(x, b), rlo(x, c) * fhi(x, b), rhi(x, c) * flo(x, b), rhi(x, c) * fhi(x, b), &lo, &hi);
    TRY(fset(x, a, lo, hi));
    double lc = rlo(x, c), uc = rhi(x, c);
    if (lc > 0.0 || uc < 0.0) {            // b = a / c
        hull4(flo(x, a) / lc, flo(x, a) / uc, fhi(x, a) / lc, fhi(x, a) / uc, &lo, &hi);
        TRY(fset(x, b, lo, hi));
    }
    return true;
}

PROPAGATOR_FN bool prop_fminmax(Ctx *x, int a, int b, int c, int is_max) {
    if (is_max) {
        TRY(fset(x, c, fmax(flo(x, a), flo(x, b)), fmax(fhi(x, a), fhi(x, b))));
        TRY(fset_max(x, a, fhi(x, c)));
        TRY(fset_max(x, b, fhi(x, c)));
        if (fhi(x, b) < flo(x, a)) return post_frel(x, FR_EQ, a, c);
        if (fhi(x, a) < flo(x, b)) return post_frel(x, FR_EQ, b, c);
    } else {
        TRY(fset(x, c, fmin(flo(x, a), flo(x, b)), fmin(fhi(x, a), fhi(x, b))));
        TRY(fset_min(x, a, flo(x, c)));
        TRY(fset_min(x, b, flo(x, c)));
        if (flo(x, b) > fhi(x, a)) return post_frel(x, FR_EQ, a, c);
        if (flo(x, a) > fhi(x, b)) return post_frel(x, FR_EQ, b, c);
    }
    return true;
}

PROPAGATOR_FN bool prop_fabs(Ctx *x, int a, int b) {
    double la = flo(x, a), ua = fhi(x, a);
    double lo = (la > 0) ? la : (ua < 0 ? -ua : 0.0);
    TRY(fset(x, b, lo, fmax(fabs(la), fabs(ua))));
    double ub = fhi(x, b), lb = flo(x, b);
    TRY(fset(x, a, -ub, ub));
    if (lb > 0) {          // a outside (-lb, lb)
        if (flo(x, a) > -lb) TRY(fset_min(x, a, lb));
        if (fhi(x, a) < lb) TRY(fset_max(x, a, -lb));
    }
    return true;
}

// b = f(a) for f increasing on [dlo, dhi] with inverse g (a = g(b)); outside it: no a
#define MONOTONE(NAME, F, G, DLO, DHI) \
PROPAGATOR_FN bool NAME(Ctx *x, int a, int b) { \
    TRY(fset(x, a, DLO, DHI)); \
    TRY(fset(x, b, downk(F(flo(x, a))), upk(F(fhi(x, a))))); \
    TRY(fset(x, a, downk(G(rlo(x, b))), upk(G(rhi(x, b))))); \
    return true; \
}
inline double ident(double v) { return v; }
inline double exp10_(double v) { return pow(10.0, v); }
MONOTONE(prop_fexp, exp, log, -FINF, FINF)
MONOTONE(prop_fln, log, exp, 0.0, FINF)
MONOTONE(prop_flog10, log10, exp10_, 0.0, FINF)
MONOTONE(prop_flog2, log2, exp2, 0.0, FINF)
MONOTONE(prop_fsqrt, sqrt, ident, 0.0, FINF)
MONOTONE(prop_fatan, atan, tan, -FINF, FINF)
MONOTONE(prop_fasin, asin, sin, -1.0, 1.0)
MONOTONE(prop_fsinh, sinh, asinh, -FINF, FINF)
MONOTONE(prop_ftanh, tanh, atanh, -FINF, FINF)
MONOTONE(prop_fasinh, asinh, sinh, -FINF, FINF)
MONOTONE(prop_facosh, acosh, cosh, 1.0, FINF)
MONOTONE(prop_fatanh, atanh, tanh, -1.0, 1.0)

// sqrt's inverse is a square: a = b * b on [0, inf)
PROPAGATOR_FN bool prop_fsqrt_exact(Ctx *x, int a, int b) {
    TRY(fset(x, a, 0.0, FINF));
    TRY(fset(x, b, down(sqrt(flo(x, a))), up(sqrt(fhi(x, a)))));
    double lb = fmax(rlo(x, b), 0.0), ub = rhi(x, b);
    TRY(fset(x, a, down(lb * lb), up(ub * ub)));
    return true;
}

PROPAGATOR_FN bool prop_facos(Ctx *x, int a, int b) {       // decreasing on [-1, 1]
    TRY(fset(x, a, -1.0, 1.0));
    TRY(fset(x, b, downk(acos(fhi(x, a))), upk(acos(flo(x, a)))));
    TRY(fset(x, a, downk(cos(rhi(x, b))), upk(cos(rlo(x, b)))));
    return true;
}

PROPAGATOR_FN bool prop_fcosh(Ctx *x, int a, int b) {       // even, least at 0
    double la = flo(x, a), ua = fhi(x, a);
    double lo = (la > 0) ? cosh(la) : (ua < 0 ? cosh(ua) : 1.0);
    TRY(fset(x, b, downk(lo), upk(fmax(cosh(la), cosh(ua)))));
    double m = upk(acosh(fmax(rhi(x, b), 1.0)));
    TRY(fset(x, a, -m, m));
    return true;
}

// tan backward, over a box holding a pole: a = atan(b) + k pi on each branch k that a's box
// meets (up to 4), their hull; so a box about a pole with b bounded loses the pole. The branch
// offsets are widened by k ulps of pi for the rounding of k * M_PI.
PROPAGATOR_FN bool ftan_back(Ctx *x, int a, int b) {
    double la = flo(x, a), ua = fhi(x, a), lb = rlo(x, b), ub = rhi(x, b);
    if (isinf(lb) || isinf(ub) || isinf(la) || isinf(ua)) return true;
    double k1 = floor((la + M_PI_2) / M_PI), k2 = floor((ua + M_PI_2) / M_PI);
    if (k2 - k1 > 3) return true;
    double lo = FINF, hi = -FINF, t1 = atan(lb), t2 = atan(ub);
    for (double k = k1; k <= k2; k += 1.0) {
        double slack = (fabs(k) + 1.0) * 4.0 * DBL_EPSILON * M_PI;
        double plo = downk(t1 + k * M_PI) - slack, phi = upk(t2 + k * M_PI) + slack;
        if (phi < la || plo > ua) continue;
        lo = fmin(lo, fmax(plo, la)); hi = fmax(hi, fmin(phi, ua));
    }
    if (lo > hi) return false;
    return fset(x, a, lo, hi) != FAILED;
}

// sin, cos, tan: b from a only. Over a width of a period or more, the whole range; else the
// ends and any extremum (or pole) inside.
PROPAGATOR_FN bool prop_ftrig(Ctx *x, int a, int b, int which) {
    double la = flo(x, a), ua = fhi(x, a);
    if (which == 2) {                                   // tan: poles at pi/2 + k pi
        if (ua - la < M_PI && floor((la - M_PI_2) / M_PI) == floor((ua - M_PI_2) / M_PI))
            return fset(x, b, downk(tan(la)), upk(tan(ua))) != FAILED;
        return ftan_back(x, a, b);
    }
    if (!(ua - la < 2 * M_PI)) return fset(x, b, -1.0, 1.0) != FAILED;
    double shift = which == 0 ? 0.0 : M_PI_2;           // cos(t) = sin(t + pi/2): its extrema
    double s0 = la + shift, s1 = ua + shift;
    double f0 = which == 0 ? sin(la) : cos(la), f1 = which == 0 ? sin(ua) : cos(ua);   // not shifted:
    double lo = fmin(f0, f1), hi = fmax(f0, f1);        // t + pi/2 rounds by more than cos's ulps
    if (floor((s0 - M_PI_2) / (2 * M_PI)) != floor((s1 - M_PI_2) / (2 * M_PI))) hi = 1.0;     // a maximum inside
    if (floor((s0 + M_PI_2) / (2 * M_PI)) != floor((s1 + M_PI_2) / (2 * M_PI))) lo = -1.0;    // a minimum inside
    return fset(x, b, fmax(downk(lo), -1.0), fmin(upk(hi), 1.0)) != FAILED;
}

// a^p = c for a point exponent p != 0, backward: a = c^(1/p) on a >= 0 and, for an integer p,
// a = -(+-c)^(1/p) on a < 0 (c's sign by p's parity). The hull over the parts, each widened by
// a relative 1e-12 for the rounding of 1/p. The union's gap around 0 matters: a^-1 = 0.76
// leaves no a near 0, which the forward hull alone cannot see.
inline double fwide_lo(double v) { return v - fabs(v) * 1e-12 - DBL_MIN; }
inline double fwide_hi(double v) { return v + fabs(v) * 1e-12 + DBL_MIN; }
PROPAGATOR_FN bool fpow_root(Ctx *x, int a, double p, int c) {
    double q = 1.0 / p, lc = flo(x, c), uc = fhi(x, c);
    double lo = FINF, hi = -FINF;
    if (fhi(x, a) >= 0.0 && uc >= 0.0) {                // a >= 0: c >= 0
        double r1 = pow(fmax(lc, 0.0), q), r2 = pow(uc, q);
        lo = fmin(r1, r2); hi = fmax(r1, r2);
    }
    if (flo(x, a) < 0.0 && floor(p) == p) {
        bool odd = fmod(fabs(p), 2.0) == 1.0;
        double ml = odd ? fmax(-uc, 0.0) : fmax(lc, 0.0), mu = odd ? -lc : uc;   // |c| on the part
        if (mu >= ml && (odd ? lc < 0.0 : uc >= 0.0)) {
            double r1 = pow(ml, q), r2 = pow(mu, q);
            lo = fmin(lo, -fmax(r1, r2)); hi = fmax(hi, -fmin(r1, r2));
        }
    }
    if (isnan(lo) || isnan(hi)) return true;
    if (lo > hi) return false;
    return fset(x, a, fwide_lo(lo), fwide_hi(hi)) != FAILED;
}

// c = a ^ b, forward: the hull of c over the box. For a >= 0, b ln a is monotone in each
// argument, so the corners bound it; a negative base needs an integer exponent (no integer in
// b's box: a >= 0; one, k: |a|^k signed by k's parity; several: no bound until search splits).
PROPAGATOR_FN bool prop_fpow(Ctx *x, int a, int b, int c) {
    if (fpoint(x, a) && fpoint(x, b)) {
        double p = pow(flo(x, a), flo(x, b));
        if (isnan(p)) return false;
        return fset(x, c, downk(p), upk(p)) != FAILED;
    }
    if (flo(x, a) == 0.0 && fhi(x, a) == 0.0) {    // 0^b: 0 for b > 0, 1 for b = 0, inf below
        bool one = flo(x, c) <= 1.0 && fhi(x, c) >= 1.0, zero = flo(x, c) <= 0.0 && fhi(x, c) >= 0.0;
        if (!one && !isinf(fhi(x, c))) TRY(fset_min(x, b, zero ? DBL_MIN : FINF));
        if (!one && !zero) TRY(fset_max(x, b, -DBL_MIN));
    }
    double kl = ceil(flo(x, b)), kh = floor(fhi(x, b));
    if (flo(x, a) < 0.0 && kl > kh) TRY(fset_min(x, a, 0.0));
    if (fhi(x, a) < 0.0 && kl == kh) TRY(fset(x, b, kl, kl));
    double la = flo(x, a), ua = fhi(x, a), lb = flo(x, b), ub = fhi(x, b);
    double lo = FINF, hi = -FINF;
    if (ua >= 0.0) {                            // the base's part >= 0
        double l0 = fmax(la, 0.0), p, q;
        hull4(pow(l0, lb), pow(l0, ub), pow(ua, lb), pow(ua, ub), &p, &q);
        lo = p; hi = q;
    }
    if (la < 0.0) {                             // the base's negative part
        if (kl != kh) return true;              // several integer exponents: no bound yet
        double p1 = pow(fmax(-ua, 0.0), kl), p2 = pow(-la, kl);
        double m = fmin(p1, p2), M = fmax(p1, p2);
        bool odd = fmod(fabs(kl), 2.0) == 1.0;
        lo = fmin(lo, odd ? -M : m);
        hi = fmax(hi, odd ? -m : M);
    }
    if (!(isnan(lo) || isnan(hi))) TRY(fset(x, c, downk(lo), upk(hi)));
    if (fpoint(x, b) && flo(x, b) != 0.0) return fpow_root(x, a, flo(x, b), c);
    return true;
}

// ---- int2float, domains, elements, extrema
PROPAGATOR_FN bool prop_int2float(Ctx *x, int a, int b) {
    TRY(fset(x, b, (double)dmin(x, a), (double)dmax(x, a)));
    double lb = flo(x, b), ub = fhi(x, b);
    if (lb > -2147483648.0) TRY(set_min(x, a, (long)ceil(lb)));
    if (ub < 2147483648.0) TRY(set_max(x, a, (long)floor(ub)));
    return true;
}

// row: [x, a (2 words), b (2 words), (r)]: x in [a, b]
PROPAGATOR_FN bool prop_fin(Ctx *x, __global const int *row, int reif, int imp) {
    int v = row[0];
    double a = fparam(row + 1), b = fparam(row + 3);
    if (!reif || (is_fixed(x, row[5]) && val(x, row[5]))) return fset(x, v, a, b) != FAILED;
    int r = row[5];
    if (is_fixed(x, r)) {                       // r false: x < a or x > b
        if (imp) return true;
        if (flo(x, v) >= a) return fset_min(x, v, up(b)) != FAILED;
        if (fhi(x, v) <= b) return fset_max(x, v, down(a)) != FAILED;
        return true;
    }
    if (fhi(x, v) < a || flo(x, v) > b) TRY(fix(x, r, 0));
    else if (!imp && flo(x, v) >= a && fhi(x, v) <= b) TRY(fix(x, r, 1));
    return true;
}

PROPAGATOR_FN bool prop_fdom(Ctx *x, int v, int n, __global const int *pairs) {
    // the first and the last interval that the bounds still meet
    double lo = flo(x, v), hi = fhi(x, v), nlo = FINF, nhi = -FINF;
    for (int i = 0; i < n; i += 2) {
        double a = fparam(pairs + 2 * i), b = fparam(pairs + 2 * i + 2);
        if (b < lo || a > hi) continue;
        nlo = fmin(nlo, fmax(a, lo));
        nhi = fmax(nhi, fmin(b, hi));
    }
    if (nlo > nhi) return false;
    return fset(x, v, nlo, nhi) != FAILED;
}

PROPAGATOR_FN bool prop_felement_const(Ctx *x, __global const int *row) {
    int idx = row[0], n = row[1];
    __global const int *arr = row + 2;
    int z = row[2 + 2 * n];
    TRY(set_min(x, idx, 1));
    TRY(set_max(x, idx, n));
    double lo = FINF, hi = -FINF;
    for (int i = dmin(x, idx); i <= dmax(x, idx); ++i) {
        if (!contains(x, idx, i)) continue;
        double v = fparam(arr + 2 * (i - 1));
        if (v < flo(x, z) || v > fhi(x, z)) { TRY(remove_value(x, idx, i)); continue; }
        lo = fmin(lo, v); hi = fmax(hi, v);
    }
    if (lo > hi) return false;
    return fset(x, z, lo, hi) != FAILED;
}

PROPAGATOR_FN bool prop_felement_var(Ctx *x, __global const int *row) {
    int idx = row[0], n = row[1];
    __global const int *xs = row + 2;
    int z = row[2 + n];
    TRY(set_min(x, idx, 1));
    TRY(set_max(x, idx, n));
    double lo = FINF, hi = -FINF;
    for (int i = dmin(x, idx); i <= dmax(x, idx); ++i) {
        if (!contains(x, idx, i)) continue;
        int v = xs[i - 1];
        if (fhi(x, v) < flo(x, z) || flo(x, v) > fhi(x, z)) { TRY(remove_value(x, idx, i)); continue; }
        lo = fmin(lo, flo(x, v)); hi = fmax(hi, fhi(x, v));
    }
    if (lo > hi) return false;
    TRY(fset(x, z, lo, hi));
    if (is_fixed(x, idx)) return post_frel(x, FR_EQ, xs[val(x, idx) - 1], z);
    return true;
}

PROPAGATOR_FN bool prop_fextremum(Ctx *x, __global const int *row, int is_max) {
    int m = row[0], n = row[1];
    __global const int *xs = row + 2;
    if (n == 0) return false;
    double lo = is_max ? -FINF : FINF, hi = lo;
    for (int i = 0; i < n; ++i) {
        if (is_max) { lo = fmax(lo, flo(x, xs[i])); hi = fmax(hi, fhi(x, xs[i])); }
        else { lo = fmin(lo, flo(x, xs[i])); hi = fmin(hi, fhi(x, xs[i])); }
    }
    TRY(fset(x, m, lo, hi));
    int support = -1, nsup = 0;
    for (int i = 0; i < n; ++i) {
        if (is_max) {
            TRY(fset_max(x, xs[i], fhi(x, m)));
            if (fhi(x, xs[i]) >= flo(x, m)) { support = i; nsup++; }
        } else {
            TRY(fset_min(x, xs[i], flo(x, m)));
            if (flo(x, xs[i]) <= fhi(x, m)) { support = i; nsup++; }
        }
    }
    if (nsup == 0) return false;
    if (nsup == 1) TRY(is_max ? fset_min(x, xs[support], flo(x, m)) : fset_max(x, xs[support], fhi(x, m)));
    return true;
}

// ---- search on float variables (branching.cl, search.cl)
// A float variable is split in halves until its width is within the group's precision: at the
// arithmetic midpoint while the box is narrower than SPLIT_ARITHMETIC and either wider than 1 or
// within a factor SPLIT_RATIO of 0's side it lies on (at most about 20 + 35 splits), else at its
// ordinal midpoint (halving the doubles left: at most 64 splits however wide, unbounded or close
// to 0 the box; halving [1e-154, 0.6] arithmetically towards a precision relative to its low end
// would take 500). So a variable takes at most about 120 levels (pack.FLOAT_LEVELS). Then it is tried at the shortest decimal of its
// box (FPOINT), and where that fails its box is accepted as it is (FACCEPT: the int slot's flag).
#define SPLIT_ARITHMETIC 1e6
#define SPLIT_RATIO 256.0

inline bool float_open(Ctx *x, int v) { return !fpoint(x, v) && dmin(x, v) == 0; }

// The double with the fewest significant digits in [lo, hi] (both finite, lo < hi): the first
// multiple of a power of ten, from the coarsest down, that lies in the box.
inline double nice_point(double lo, double hi) {
    if (lo <= 0.0 && hi >= 0.0) return 0.0;
    int top = (int)floor(log10(fmax(fabs(lo), fabs(hi)))) + 1;
    int bottom = (int)floor(log10(hi - lo)) - 1;
    for (int e = top; e >= bottom; --e) {
        double c = e >= 0 ? ceil(lo / exp10((double)e)) * exp10((double)e)
                          : ceil(lo * exp10((double)-e)) / exp10((double)-e);
        if (c >= lo && c <= hi) return c;
    }
    double m = lo + (hi - lo) * 0.5;
    return (m >= lo && m <= hi) ? m : lo;
}

// float_search's variable selection: by width (first_fail, anti_first_fail), by bound
// (smallest, largest), else in order.
// How far v is from settled: its width relative to its magnitude (infinite when unbounded), the
// measure the default search's relative precision stops at.
inline double float_unsettled(Ctx *x, int v) {
    double lo = flo(x, v), hi = fhi(x, v), width = hi - lo, m = fmax(fabs(lo), fabs(hi));
    if (isinf(width)) return INFINITY;
    return m > 0.0 ? width / m : 0.0;
}

inline bool better_float(Ctx *x, int sel, int v, int best) {
    if (best < 0) return true;
    switch (sel) {
    case VS_FIRST_FAIL: return fhi(x, v) - flo(x, v) < fhi(x, best) - flo(x, best);
    case VS_ANTI_FIRST_FAIL: return fhi(x, v) - flo(x, v) > fhi(x, best) - flo(x, best);
    case VS_SMALLEST: return flo(x, v) < flo(x, best);
    case VS_LARGEST: return fhi(x, v) > fhi(x, best);
    case VS_FLOAT_UNSETTLED: return float_unsettled(x, v) > float_unsettled(x, best);
    default: return false;
    }
}

// Whether v is wider than a group's precision. prec > 0: a width (float_search's precision);
// prec < 0: a width relative to the box's magnitude, -prec x max(|lo|, |hi|) (the default
// search, where a variable of magnitude 1e18 is as settled at width 1e10 as one of magnitude 1
// at 1e-8, and one near 0 is narrowed to its own scale: a^-0.05 at a = 1e-8 is no value at
// a = 0, the shortest decimal of a box [0, 2e-8]); VAL_FLOAT_SETTLE's variables (Aux, never
// printed for their own sake) stop at -prec x max(1, |lo|, |hi|).
inline bool float_wide(Ctx *x, int v, int valsel, double prec) {
    double lo = flo(x, v), hi = fhi(x, v);
    double floor_ = valsel == VAL_FLOAT_SETTLE ? 1.0 : 0.0;
    double width = prec >= 0.0 ? prec : -prec * fmax(floor_, fmax(fabs(lo), fabs(hi)));
    return !(hi - lo <= width) || isinf(width);
}

// Whether v still needs a decision in a group of value selection valsel and precision prec:
// VAL_FLOAT_SETTLE's variables are settled once within the precision.
inline bool float_needs(Ctx *x, int v, int valsel, double prec) {
    return float_open(x, v) && (valsel != VAL_FLOAT_SETTLE || float_wide(x, v, valsel, prec));
}

// The decision on float variable v: a split (x <= m, or x > m first for VAL_FLOAT_HIGH) while
// wider than the precision, else a point (never asked of VAL_FLOAT_SETTLE's variables).
inline void select_float(Ctx *x, int v, int valsel, double prec, int *out_op, int *out_val, int *out_hi) {
    double lo = flo(x, v), hi = fhi(x, v), m;
    if (!float_wide(x, v, valsel, prec)) {
        m = nice_point(lo, hi);
        *out_op = OP_FPOINT;
    } else {
        if (hi - lo <= SPLIT_ARITHMETIC && (hi - lo > 1.0 || (lo > 0.0 && hi <= SPLIT_RATIO * lo) ||
                                            (hi < 0.0 && lo >= SPLIT_RATIO * hi))) {
            m = lo * 0.5 + hi * 0.5;
        } else {
            int f = 2 * M_FSLOT(x, v);
            long olo = FB_(x, f), ohi = FB_(x, f + 1);
            m = fval((olo >> 1) + (ohi >> 1) + (olo & ohi & 1));   // lo <= m < hi in ordinals
        }
        if (m >= hi) m = down(hi);                                   // -0.0 against +0.0
        if (m < lo) m = lo;
        *out_op = valsel == VAL_FLOAT_HIGH ? OP_FGT : OP_FLE;
    }
    long b = as_long(m);
    *out_val = (int)b;
    *out_hi = (int)(b >> 32);
}

inline int apply_float_decision(Ctx *x, int v, int op, int value, int value_hi) {
    double m = fdecision(value, value_hi);
    switch (op) {
    case OP_FLE: return fset_max(x, v, m);
    case OP_FGT: return fset_min(x, v, up(m));
    case OP_FPOINT: return fset(x, v, m, m);
    default: return set_min(x, v, 1);                                // OP_FACCEPT
    }
}

// Branch and bound on a float objective: best holds the ordinal of the best sense-adjusted
// value (LONG_MAX: none yet); a node must improve on it by OBJ_STEP of its size.
#define OBJ_STEP 1e-9
inline int float_bound(Ctx *x, int obj, int sense, long best) {
    if (best == LONG_MAX) return UNCHANGED;
    double b = fval(best);
    double limit = b - fmax(fabs(b) * OBJ_STEP, 1e-12);
    return sense > 0 ? fset_max(x, obj, limit) : fset_min(x, obj, -limit);
}

// A solution's sense-adjusted objective as an ordinal: the better end of its box, so that
// each improvement's box lies wholly beyond the last one's.
inline long float_objective(Ctx *x, int obj, int sense) {
    return sense > 0 ? ford(flo(x, obj)) : ford(-fhi(x, obj));
}
#endif
