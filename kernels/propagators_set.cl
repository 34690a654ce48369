// Set constraints. A set variable is a triple of device variables (fzn_gpu/engine/sets.py):
// P, its possible elements, and N, the elements it need not hold (u is required when u is not
// in N), both bitmaps over its universe plus a sentinel no propagator touches, and C its
// cardinality. Propagation works 32 values at a time: a chunk of each part at the same values
// (var_bits32), masks of bits to remove, remove_mask. An element of the universe outside both
// P and N is required and impossible: valid_set() fails on it. Every propagator here is sound
// and checking: once the sets are decided, a violated constraint fails.

typedef struct { int p, n, c; } SetVar;

inline SetVar set_at(__global const int *row) { SetVar s = {row[0], row[1], row[2]}; return s; }

inline int set_first(Ctx *x, SetVar s) { return M_BASE(x, s.p); }
inline int set_sentinel(Ctx *x, SetVar s) { return dmax(x, s.p); }   // never leaves P, the largest

// Bits v0..v0+31 of the set's universe (its root bitmap less the sentinel).
inline uint set_universe32(Ctx *x, SetVar s, long v0) {
    int off = M_BM_OFF(x, s.p), nw = M_BM_NW(x, s.p);
    long i = v0 - M_BASE(x, s.p), wi = i >> 5;
    int sh = (int)(i & 31);
    uint a = (wi >= 0 && wi < nw) ? M_UBITS(x, off + wi) : 0u;
    uint b = (wi + 1 >= 0 && wi + 1 < nw) ? M_UBITS(x, off + wi + 1) : 0u;
    uint m = sh ? (a >> sh) | (b << (32 - sh)) : a;
    long si = (long)set_sentinel(x, s) - v0;
    if (si >= 0 && si < 32) m &= ~(1u << si);
    return m;
}
// possible (in P), and required (in the universe, out of N), 32 values from v0
inline uint set_pos32(Ctx *x, SetVar s, long v0) { return var_bits32(x, s.p, v0 - M_BASE(x, s.p)) & set_universe32(x, s, v0); }
inline uint set_req32(Ctx *x, SetVar s, long v0) { return set_universe32(x, s, v0) & ~var_bits32(x, s.n, v0 - M_BASE(x, s.n)); }

// the value range [lo, hi) covering the universes of a and b, in chunks from lo
inline long set_lo(Ctx *x, SetVar a, SetVar b) { return min(set_first(x, a), set_first(x, b)); }
inline long set_hi(Ctx *x, SetVar a, SetVar b) { return max(set_sentinel(x, a), set_sentinel(x, b)); }

// Exclude (leave P) or require (leave N) the elements v0 + i of the bits i of m. An element
// outside the universe cannot be required: that fails.
inline int exclude(Ctx *x, SetVar s, uint m, long v0) { return m ? remove_mask(x, s.p, &m, 1, v0) : UNCHANGED; }
inline int require(Ctx *x, SetVar s, uint m, long v0) {
    if (m & ~set_universe32(x, s, v0)) return FAILED;
    return m ? remove_mask(x, s.n, &m, 1, v0) : UNCHANGED;
}

// The smallest and the largest possible element (the sentinel: none).
inline int set_pos_min(Ctx *x, SetVar s) { return dmin(x, s.p); }
inline int set_pos_max(Ctx *x, SetVar s) {
    int top = set_sentinel(x, s);
    int u = top > set_first(x, s) ? prev_value(x, s.p, top - 1) : INT_MIN;
    return u == INT_MIN ? top : u;
}

// No element both required and impossible.
inline bool valid_set(Ctx *x, SetVar s) {
    for (long v0 = set_first(x, s); v0 < set_sentinel(x, s); v0 += 32)
        if (set_req32(x, s, v0) & ~set_pos32(x, s, v0)) return false;
    return true;
}

inline long popcount_set(Ctx *x, SetVar s, bool required) {
    long n = 0;
    for (long v0 = set_first(x, s); v0 < set_sentinel(x, s); v0 += 32)
        n += popcount(required ? set_req32(x, s, v0) : set_pos32(x, s, v0));
    return n;
}

inline bool set_decided(Ctx *x, SetVar s) {
    for (long v0 = set_first(x, s); v0 < set_sentinel(x, s); v0 += 32)
        if (set_pos32(x, s, v0) & ~set_req32(x, s, v0)) return false;
    return true;
}

// set_card(S, n), and the row every set variable has tying C to it: |required| <= C <= |possible|;
// C at |required| excludes the undecided elements, C at |possible| requires them.
PROPAGATOR_FN bool prop_set_card(Ctx *x, __global const int *row) {
    SetVar s = set_at(row);
    int n = row[3];
    if (!valid_set(x, s)) return false;
    TRY(set_min(x, s.c, popcount_set(x, s, true)));
    TRY(set_max(x, s.c, popcount_set(x, s, false)));
    if (n != s.c && !post_eq(x, s.c, n)) return false;
    long req = popcount_set(x, s, true), pos = popcount_set(x, s, false);
    if (dmax(x, s.c) == req && pos > req)
        for (long v0 = set_first(x, s); v0 < set_sentinel(x, s); v0 += 32)
            TRY(exclude(x, s, set_pos32(x, s, v0) & ~set_req32(x, s, v0), v0));
    else if (dmin(x, s.c) == pos && pos > req)
        for (long v0 = set_first(x, s); v0 < set_sentinel(x, s); v0 += 32)
            TRY(require(x, s, set_pos32(x, s, v0) & ~set_req32(x, s, v0), v0));
    return valid_set(x, s);
}

// x in S (r < 0), r <-> x in S, r -> x in S (imp). x's values beyond the universe are never
// in S, so every loop below runs over the universe only.
PROPAGATOR_FN bool prop_set_in(Ctx *x, __global const int *row, __global const int *srow, int r, int imp) {
    int v = row[0];
    SetVar s = set_at(srow);
    if (!valid_set(x, s)) return false;
    int top = set_sentinel(x, s);
    int must = r < 0 ? 1 : (is_fixed(x, r) ? val(x, r) : -1);
    if (must == 1) {                    // x in S: x among the possible elements; a fixed x is required
        int first = set_pos_min(x, s), last = set_pos_max(x, s);
        if (first >= top) return false;                 // S is empty
        TRY(set_min(x, v, first));
        TRY(set_max(x, v, last));
        for (int u = dmin(x, v); u <= dmax(x, v); ++u)
            if (!contains(x, s.p, u)) TRY(remove_value(x, v, u));     // bounds only: the bound moves
        if (is_fixed(x, v)) TRY(remove_value(x, s.n, val(x, v)));
        return valid_set(x, s);
    }
    int lo = max(dmin(x, v), set_first(x, s)), hi = min(dmax(x, v), top - 1);
    if (must == 0) {                    // x not in S: not a required element; a fixed x is excluded
        if (imp) return true;
        if (is_fixed(x, v)) {
            if (val(x, v) < top && val(x, v) >= set_first(x, s)) TRY(remove_value(x, s.p, val(x, v)));
            return valid_set(x, s);
        }
        for (int u = lo; u <= hi; ++u)
            if (contains(x, s.p, u) && !contains(x, s.n, u)) TRY(remove_value(x, v, u));
        return true;
    }
    // r open: decided when x's domain lies within the required elements, or misses the possible
    bool any_pos = false, all_req = dmin(x, v) >= set_first(x, s) && dmax(x, v) < top;
    for (int u = lo; u <= hi; ++u) {
        if (!contains(x, v, u)) continue;
        bool pos = contains(x, s.p, u);
        any_pos |= pos;
        all_req &= pos && !contains(x, s.n, u);
        if (any_pos && !all_req) break;
    }
    if (!any_pos) TRY(fix(x, r, 0));
    else if (all_req && !imp) TRY(fix(x, r, 1));
    return true;
}

#define SR_EQ 0
#define SR_NE 1
#define SR_SUBSET 2
#define SR_SUPERSET 3
#define SR_LE 4
#define SR_LT 5

// Compare decided sets in MiniZinc's order: their elements in increasing order, lexicographically
// (a prefix comes first). -1, 0, 1.
int set_compare(Ctx *x, SetVar a, SetVar b) {
    int ua = INT_MIN, ub = INT_MIN;
    while (true) {
        ua = next_value(x, a.p, ua == INT_MIN ? set_first(x, a) : ua + 1);
        ub = next_value(x, b.p, ub == INT_MIN ? set_first(x, b) : ub + 1);
        bool ea = ua >= set_sentinel(x, a), eb = ub >= set_sentinel(x, b);
        if (ea || eb) return ea && eb ? 0 : (ea ? -1 : 1);
        if (ua != ub) return ua < ub ? -1 : 1;
    }
}

// a REL b holds for sure (1), fails for sure (-1), or is open (0).
int set_rel_status(Ctx *x, SetVar a, SetVar b, int rel) {
    long lo = set_lo(x, a, b), hi = set_hi(x, a, b);
    bool decided = set_decided(x, a) && set_decided(x, b);
    if (rel == SR_LE || rel == SR_LT) {
        if (!decided) return 0;
        int cmp = set_compare(x, a, b);
        return (rel == SR_LE ? cmp <= 0 : cmp < 0) ? 1 : -1;
    }
    if (rel == SR_SUPERSET) { SetVar t = a; a = b; b = t; rel = SR_SUBSET; }
    bool fails = false, holds = true;
    for (long v0 = lo; v0 < hi; v0 += 32) {
        uint ra = set_req32(x, a, v0), pa = set_pos32(x, a, v0), rb = set_req32(x, b, v0), pb = set_pos32(x, b, v0);
        if (rel == SR_SUBSET) {
            fails |= (ra & ~pb) != 0;
            holds &= (pa & ~rb) == 0;
        } else {
            fails |= ((ra & ~pb) | (rb & ~pa)) != 0;
            holds &= (pa == ra) && (pb == rb) && (pa == pb);
        }
    }
    if (rel == SR_NE) return fails ? 1 : (holds ? -1 : 0);
    return fails ? -1 : (holds ? 1 : 0);
}

// a REL b: equality and inclusion prune chunk by chunk; != and the orders check decided sets.
PROPAGATOR_FN bool post_set_rel(Ctx *x, SetVar a, SetVar b, int rel) {
    if (rel == SR_SUPERSET) { SetVar t = a; a = b; b = t; rel = SR_SUBSET; }
    if (rel == SR_EQ || rel == SR_SUBSET) {
        long lo = set_lo(x, a, b), hi = set_hi(x, a, b);
        for (long v0 = lo; v0 < hi; v0 += 32) {
            TRY(exclude(x, a, set_pos32(x, a, v0) & ~set_pos32(x, b, v0), v0));    // a's only where b may be
            TRY(require(x, b, set_req32(x, a, v0) & ~set_req32(x, b, v0), v0));    // a's required are b's
            if (rel == SR_EQ) {
                TRY(exclude(x, b, set_pos32(x, b, v0) & ~set_pos32(x, a, v0), v0));
                TRY(require(x, a, set_req32(x, b, v0) & ~set_req32(x, a, v0), v0));
            }
        }
        if (rel == SR_EQ && !post_eq(x, a.c, b.c)) return false;
        else { TRY(set_max(x, a.c, dmax(x, b.c))); TRY(set_min(x, b.c, dmin(x, a.c))); }
        return valid_set(x, a) && valid_set(x, b);
    }
    return set_rel_status(x, a, b, rel) != -1;
}

PROPAGATOR_FN bool prop_set_rel(Ctx *x, __global const int *row, int rel, int r, int imp) {
    SetVar a = set_at(row), b = set_at(row + 3);
    if (!valid_set(x, a) || !valid_set(x, b)) return false;
    if (r < 0 || (is_fixed(x, r) && val(x, r) == 1)) return post_set_rel(x, a, b, rel);
    if (is_fixed(x, r)) {               // val 0: the negation (nothing for an implication)
        if (imp) return true;
        int neg = rel == SR_EQ ? SR_NE : rel == SR_NE ? SR_EQ : -1;
        if (neg >= 0) return post_set_rel(x, a, b, neg);
        return set_rel_status(x, a, b, rel) != 1;
    }
    int st = set_rel_status(x, a, b, rel);
    if (st == -1) TRY(fix(x, r, 0));
    else if (st == 1 && !imp) TRY(fix(x, r, 1));
    return true;
}

#define SO_UNION 0
#define SO_INTERSECT 1
#define SO_DIFF 2
#define SO_SYMDIFF 3

// c = a OP b, value by value (32 at a time): what two of the three hold decides the third.
PROPAGATOR_FN bool prop_set_op(Ctx *x, __global const int *row, int op) {
    SetVar a = set_at(row), b = set_at(row + 3), c = set_at(row + 6);
    if (!valid_set(x, a) || !valid_set(x, b) || !valid_set(x, c)) return false;
    long lo = min(set_lo(x, a, b), (long)set_first(x, c)), hi = max(set_hi(x, a, b), (long)set_sentinel(x, c));
    for (long v0 = lo; v0 < hi; v0 += 32) {
        uint pa = set_pos32(x, a, v0), ra = set_req32(x, a, v0);
        uint pb = set_pos32(x, b, v0), rb = set_req32(x, b, v0);
        uint pc = set_pos32(x, c, v0), rc = set_req32(x, c, v0);
        uint na = ~pa, nb = ~pb, nc = ~pc;     // certainly out
        switch (op) {
        case SO_UNION:            // c = a | b
            TRY(exclude(x, c, pc & na & nb, v0));
            TRY(require(x, c, (ra | rb) & ~rc, v0));
            TRY(exclude(x, a, pa & nc, v0));
            TRY(exclude(x, b, pb & nc, v0));
            TRY(require(x, a, rc & nb & ~ra, v0));
            TRY(require(x, b, rc & na & ~rb, v0));
            break;
        case SO_INTERSECT:        // c = a & b
            TRY(exclude(x, c, pc & (na | nb), v0));
            TRY(require(x, c, ra & rb & ~rc, v0));
            TRY(require(x, a, rc & ~ra, v0));
            TRY(require(x, b, rc & ~rb, v0));
            TRY(exclude(x, a, pa & rb & nc, v0));
            TRY(exclude(x, b, pb & ra & nc, v0));
            break;
        case SO_DIFF:             // c = a & ~b
            TRY(exclude(x, c, pc & (na | rb), v0));
            TRY(require(x, c, ra & nb & ~rc, v0));
            TRY(require(x, a, rc & ~ra, v0));
            TRY(exclude(x, b, pb & rc, v0));
            TRY(exclude(x, a, pa & nc & nb, v0));
            TRY(require(x, b, ra & nc & ~rb, v0));
            break;
        default:                  // c = a ^ b: two of three decided decide the third
            TRY(exclude(x, c, pc & ((ra & rb) | (na & nb)), v0));
            TRY(require(x, c, ((ra & nb) | (na & rb)) & ~rc, v0));
            TRY(exclude(x, a, pa & ((rb & rc) | (nb & nc)), v0));
            TRY(require(x, a, ((rb & nc) | (nb & rc)) & ~ra, v0));
            TRY(exclude(x, b, pb & ((ra & rc) | (na & nc)), v0));
            TRY(require(x, b, ((ra & nc) | (na & rc)) & ~rb, v0));
            break;
        }
    }
    return valid_set(x, a) && valid_set(x, b) && valid_set(x, c);
}

// Bits v0..v0+31 of a constant set [k, lo_1, hi_1, ..] (the row's encoding).
inline uint const_set32(__global const int *s, long v0) {
    uint m = 0u;
    for (int i = 0; i < s[0]; ++i) {
        long lo = max((long)s[1 + 2 * i], v0), hi = min((long)s[2 + 2 * i], v0 + 31);
        for (long u = lo; u <= hi; ++u) m |= 1u << (u - v0);
    }
    return m;
}

// S = sets[idx] over constant sets: idx keeps the sets S can be; S lies between what all
// of them hold and what any holds.
PROPAGATOR_FN bool prop_set_element_const(Ctx *x, __global const int *row) {
    int idx = row[0], k = row[1];
    __global const int *sets = row + 2, *p = sets;
    for (int i = 0; i < k; ++i) p += 1 + 2 * p[0];
    SetVar s = set_at(p);
    if (!valid_set(x, s)) return false;
    TRY(set_min(x, idx, 1));
    TRY(set_max(x, idx, k));
    long lo = set_first(x, s), hi = set_sentinel(x, s);
    p = sets;
    for (int i = 1; i <= k; p += 1 + 2 * p[0], ++i) {            // drop the sets S cannot be
        if (!contains(x, idx, i)) continue;
        bool ok = true;
        for (int j = 0; j < p[0]; ++j) if (p[1 + 2 * j] < lo || p[2 + 2 * j] >= hi) ok = false;  // outside the universe
        for (long v0 = lo; v0 < hi && ok; v0 += 32) {
            uint m = const_set32(p, v0);
            ok = !(set_req32(x, s, v0) & ~m) && !(m & ~set_pos32(x, s, v0));
        }
        if (!ok) TRY(remove_value(x, idx, i));
    }
    for (long v0 = lo; v0 < hi; v0 += 32) {
        uint any = 0u, all = 0xFFFFFFFFu;
        p = sets;
        for (int i = 1; i <= k; p += 1 + 2 * p[0], ++i) {
            if (!contains(x, idx, i)) continue;
            uint m = const_set32(p, v0);
            any |= m; all &= m;
        }
        TRY(exclude(x, s, set_pos32(x, s, v0) & ~any, v0));
        TRY(require(x, s, all & set_universe32(x, s, v0) & ~set_req32(x, s, v0), v0));
    }
    return valid_set(x, s);
}

// S = sets[idx] over set variables.
PROPAGATOR_FN bool prop_set_element_var(Ctx *x, __global const int *row) {
    int idx = row[0], k = row[1];
    SetVar s = set_at(row + 2 + 3 * k);
    TRY(set_min(x, idx, 1));
    TRY(set_max(x, idx, k));
    for (int i = 1; i <= k; ++i)
        if (contains(x, idx, i) && set_rel_status(x, set_at(row + 2 + 3 * (i - 1)), s, SR_EQ) == -1)
            TRY(remove_value(x, idx, i));
    if (is_fixed(x, idx)) return post_set_rel(x, set_at(row + 2 + 3 * (val(x, idx) - 1)), s, SR_EQ);
    long lo = set_first(x, s), hi = set_sentinel(x, s);
    for (long v0 = lo; v0 < hi; v0 += 32) {
        uint any = 0u, all = 0xFFFFFFFFu;
        for (int i = 1; i <= k; ++i) {
            if (!contains(x, idx, i)) continue;
            SetVar e = set_at(row + 2 + 3 * (i - 1));
            any |= set_pos32(x, e, v0); all &= set_req32(x, e, v0);
        }
        TRY(exclude(x, s, set_pos32(x, s, v0) & ~any, v0));
        TRY(require(x, s, all & ~set_req32(x, s, v0), v0));
    }
    return valid_set(x, s);
}
