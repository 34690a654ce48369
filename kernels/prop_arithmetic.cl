// The int/bool propagators' family: arithmetic: plus, times, div, mod, pow, abs, min, max.
// The families' files are concatenated in fzn_gpu/runtime/device.py's PROPAGATOR_FILES order.

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
    if (a == b) return fix(x, c, 1) != FAILED;     // a div a, a nonzero: no walk of a's values
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

// The least v >= lo whose truncated remainder by a divisor of magnitude dd >= 1 lies in
// [cl, cu] (LONG_MAX: none). A remainder has its dividend's sign or is 0 and repeats with
// period dd on either side of 0, so the answer is found from lo's own remainder: where the
// remainders of one sign all miss [cl, cu], the bound jumps the whole side at once (a bound
// moved one value at a time took billions of passes over a 32-bit domain).
inline long mod_next_support(long lo, long dd, long cl, long cu) {
    if (lo < 0) {   // v = -w, w >= 1: its remainder is -(w % dd); the least v is the largest w <= -lo
        long sl = -min(cu, 0L), su = -max(cl, -(dd - 1));
        if (sl <= su) {
            long big = -lo, q = big / dd, s0 = big % dd;
            long w = (s0 >= sl && s0 <= su) ? big : (s0 > su ? q * dd + su : (q - 1) * dd + su);
            if (w >= 1) return -w;
        }
    }
    long v0 = max(lo, 0L), rl = max(cl, 0L), ru = min(cu, dd - 1);
    if (rl > ru) return LONG_MAX;
    long q = v0 / dd, r0 = v0 % dd;
    return r0 < rl ? q * dd + rl : (r0 <= ru ? v0 : (q + 1) * dd + rl);
}

// The least v >= p (p >= 0) whose remainder by dd >= 1 is s (0 <= s < dd).
inline long mod_first_from(long p, long dd, long s) { return p + ((s - p % dd) % dd + dd) % dd; }

// Whether [p, q] (p >= 0) holds a value whose remainder by dd >= 1 is s (0 <= s < dd).
inline bool mod_range_has(long p, long q, long dd, long s) { return p <= q && mod_first_from(p, dd, s) <= q; }

// Whether some v in [lo, hi] has v % dd == r under C's truncating %, as MiniZinc's mod: a
// positive remainder comes from a positive v, a negative one from a negative v, 0 from either.
inline bool mod_interval_supports(long lo, long hi, long dd, long r) {
    return (r >= 0 && mod_range_has(max(lo, 0L), hi, dd, r)) || (r <= 0 && mod_range_has(max(-hi, 0L), -lo, dd, -r));
}

// The values of a that a divisor of magnitude dd can leave as remainders lie in
// [*rmin, *rmax]: all of each sign a has, or, where a's bounds lie in one period of one sign,
// those of its bounds.
inline void mod_remainder_range(long lo, long hi, long dd, long *rmin, long *rmax) {
    *rmin = lo >= 0 ? 0 : -min(dd - 1, -lo);
    *rmax = hi <= 0 ? 0 : min(dd - 1, hi);
    if ((lo >= 0 || hi <= 0) && lo / dd == hi / dd) { *rmin = lo % dd; *rmax = hi % dd; }
}

// Removes from a (within [lo, hi]) every value whose remainder by dd is r.
inline bool mod_remove_remainder(Ctx *x, int a, long lo, long hi, long dd, long r) {
    if (r >= 0) {   // v >= 0 (v >= 1 for r > 0)
        long p = max(lo, r == 0 ? 0L : 1L);
        for (long v = mod_first_from(p, dd, r); v <= hi; v += dd)
            if (contains(x, a, v)) TRY(remove_value(x, a, (int)v));
    }
    if (r <= 0) {   // v = -w <= 0 with w % dd == -r
        long p = max(-hi, r == 0 ? 0L : 1L);
        for (long w = mod_first_from(p, dd, -r); w <= -lo; w += dd)
            if (contains(x, a, -w)) TRY(remove_value(x, a, (int)-w));
    }
    return true;
}

// a (a bitmap) keeps only values whose remainder by d lies in c. Where c is an interval the
// remainders it lacks are few or none: nothing to do when it holds every remainder a can
// leave, else each lacking remainder's values are removed, a period apart, when that is
// shorter than a walk over a's values. The walk, at every wake-up of each of hundreds of
// int_mod rows sharing a dividend of 1..1000, was most of a model's search
// (divisors_ending_in_0_to_9).
inline bool mod_prune_dividend(Ctx *x, int a, long d, int c) {
    long dd = d < 0 ? -d : d, lo = dmin(x, a), hi = dmax(x, a), rmin, rmax;
    mod_remainder_range(lo, hi, dd, &rmin, &rmax);
    long cl = dmin(x, c), cu = dmax(x, c);
    if (dsize(x, c) == cu - cl + 1) {
        long lacking = max(0L, min(cl, rmax + 1) - rmin) + max(0L, rmax - max(cu, rmin - 1));
        if (lacking * ((hi - lo) / dd + 1) < hi - lo + 1) {
            for (long r = rmin; r <= rmax && r < cl; ++r) if (!mod_remove_remainder(x, a, lo, hi, dd, r)) return false;
            for (long r = max(cu + 1, rmin); r <= rmax; ++r) if (!mod_remove_remainder(x, a, lo, hi, dd, r)) return false;
            return true;
        }
    }
    for (int v = lo; v <= hi; ++v)
        if (contains(x, a, v) && !contains(x, c, (long)v % d)) TRY(remove_value(x, a, v));
    return true;
}

// Whether a holds, within [lo, hi], a value whose remainder by dd is r: its candidates lie a
// period apart.
inline bool mod_has_support(Ctx *x, int a, long lo, long hi, long dd, long r) {
    if (r >= 0) {
        long p = max(lo, r == 0 ? 0L : 1L);
        for (long v = mod_first_from(p, dd, r); v <= hi; v += dd)
            if (contains(x, a, v)) return true;
    }
    if (r <= 0) {
        long p = max(-hi, r == 0 ? 0L : 1L);
        for (long w = mod_first_from(p, dd, -r); w <= -lo; w += dd)
            if (contains(x, a, -w)) return true;
    }
    return false;
}

// c (a bitmap) keeps only remainders by d that a value of a leaves. An interval a answers by
// arithmetic: each sign's part a period wide or empty leaves every remainder c's bounds allow;
// under a period of one sign the remainders run from lo's to hi's, wrapping once where hi's
// is the smaller, and the values between lack support; else a test per value of c. Otherwise
// each value of c looks for a support a period apart, where that (or the walk it replaces,
// every value of a for each of c) stays under 65,536 steps.
inline bool mod_prune_remainder(Ctx *x, int a, long d, int c) {
    if (!has_bits(x, c)) return true;
    long dd = d < 0 ? -d : d, lo = dmin(x, a), hi = dmax(x, a), cl = dmin(x, c), cu = dmax(x, c);
    if (dsize(x, a) == hi - lo + 1) {
        if ((hi < 0 || hi - max(lo, 0L) + 1 >= dd) && (lo > 0 || min(hi, 0L) - lo + 1 >= dd)) return true;
        if ((lo >= 0 || hi <= 0) && hi - lo + 1 < dd) {
            long r1 = lo % dd, r2 = hi % dd;
            if (r1 <= r2) {
                TRY(set_min(x, c, r1));
                return set_max(x, c, r2) != FAILED;
            }
            for (long r = max(r2 + 1, cl); r < r1 && r <= cu; ++r)
                if (contains(x, c, r)) TRY(remove_value(x, c, (int)r));
            return true;
        }
        if (cu - cl > 65536) return true;
        for (long r = cl; r <= cu; ++r)
            if (contains(x, c, r) && !mod_interval_supports(lo, hi, dd, r)) TRY(remove_value(x, c, (int)r));
        return true;
    }
    if (cu - cl > 65536 || ((cu - cl) * ((hi - lo) / dd + 1) > 65536 && (cu - cl) * (hi - lo) > 65536)) return true;
    for (long r = cl; r <= cu; ++r)
        if (contains(x, c, r) && !mod_has_support(x, a, lo, hi, dd, r)) TRY(remove_value(x, c, (int)r));
    return true;
}

PROPAGATOR_FN bool prop_mod(Ctx *x, int a, int b, int c) {
    TRY(remove_value(x, b, 0));
    if (a == b) return fix(x, c, 0) != FAILED;     // a mod a, a nonzero (fuzz seed 54109: a over 10^8 values)
    long m = max(abs((long)dmin(x, b)), abs((long)dmax(x, b)));
    TRY(set_min(x, c, -(m - 1)));
    TRY(set_max(x, c, m - 1));
    if (dmin(x, a) >= 0) { TRY(set_min(x, c, 0)); TRY(set_max(x, c, dmax(x, a))); }
    if (dmax(x, a) <= 0) { TRY(set_max(x, c, 0)); TRY(set_min(x, c, dmin(x, a))); }
    // every divisor larger in magnitude than every dividend: the remainder is the dividend
    long least_b = dmin(x, b) > 0 ? (long)dmin(x, b) : (dmax(x, b) < 0 ? -(long)dmax(x, b) : 1L);
    if (least_b > max(abs((long)dmin(x, a)), abs((long)dmax(x, a)))) {
        TRY(set_min(x, c, dmin(x, a)));
        TRY(set_max(x, c, dmax(x, a)));
        TRY(set_min(x, a, dmin(x, c)));
        TRY(set_max(x, a, dmax(x, c)));
    }
    if (is_fixed(x, a) && is_fixed(x, b)) TRY(fix(x, c, (long)val(x, a) % (long)val(x, b)));
    if (is_fixed(x, b) && !is_fixed(x, a)) {
        // a keeps only values whose remainder c can take (C's % truncates, as MiniZinc's mod)
        long d = val(x, b);
        if (has_bits(x, a)) {
            if (!mod_prune_dividend(x, a, d, c)) return false;
        } else {
            // the bounds first to values whose remainder lies within c's bounds; then value by
            // value past remainders in c's holes
            long dd = d < 0 ? -d : d, cl = dmin(x, c), cu = dmax(x, c);
            long lo = mod_next_support(dmin(x, a), dd, cl, cu);
            if (lo == LONG_MAX) return false;
            TRY(set_min(x, a, lo));
            long hi = mod_next_support(-(long)dmax(x, a), dd, -cu, -cl);   // (-v) % d == -(v % d)
            if (hi == LONG_MAX) return false;
            TRY(set_max(x, a, -hi));
            for (int k = 0; k < 1024 && !contains(x, c, (long)dmin(x, a) % d); ++k) TRY(set_min(x, a, (long)dmin(x, a) + 1));
            for (int k = 0; k < 1024 && !contains(x, c, (long)dmax(x, a) % d); ++k) TRY(set_max(x, a, (long)dmax(x, a) - 1));
        }
        if (!mod_prune_remainder(x, a, d, c)) return false;
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
        // c above what one side can reach: the other is c
        if (dmax(x, b) < dmin(x, c)) TRY(set_min(x, a, dmin(x, c)));
        if (dmax(x, a) < dmin(x, c)) TRY(set_min(x, b, dmin(x, c)));
        if (dmax(x, b) < dmin(x, a)) return post_eq(x, a, c);
        if (dmax(x, a) < dmin(x, b)) return post_eq(x, b, c);
    } else {
        TRY(set_max(x, c, min(dmax(x, a), dmax(x, b))));
        TRY(set_min(x, c, min(dmin(x, a), dmin(x, b))));
        TRY(set_min(x, a, dmin(x, c)));
        TRY(set_min(x, b, dmin(x, c)));
        if (dmin(x, b) > dmax(x, c)) TRY(set_max(x, a, dmax(x, c)));
        if (dmin(x, a) > dmax(x, c)) TRY(set_max(x, b, dmax(x, c)));
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
