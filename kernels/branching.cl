// What both search kernels share: the status of a search, the layout of its per-search state and
// counters, decisions and their negation, and variable and value selection.

// The status codes, state layouts and decision operators (S_*, ST_*, CNT_*, C_*, OP_*, LV_*) come
// from the generated header (fzn_gpu/runtime/kernel_abi.py).

// A decision into a path (or an emitted record).
inline void put_decision(__global int *d, int var, int op, int value, int value_hi) {
    d[0] = var; d[1] = op; d[2] = value; d[3] = value_hi;
}

inline int apply_decision(Ctx *x, int v, int op, int value, int value_hi) {
#ifdef FZN_FLOATS
    if (op >= OP_FLE) return apply_float_decision(x, v, op, value, value_hi);
#endif
    switch (op) {
    case OP_EQ: return fix(x, v, value);
    case OP_NE: return remove_value(x, v, value);
    case OP_LE: return set_max(x, v, value);
    case OP_GT: return set_min(x, v, (long)value + 1);
    case OP_GE: return set_min(x, v, value);
    case OP_LT: return set_max(x, v, (long)value - 1);
    case OP_SET_IN: return remove_value(x, M_COMPAN(x, v), value);     // required: out of N
    default: return remove_value(x, v, value);                       // OP_SET_OUT: out of P
    }
}

// A set variable's undecided elements (in both P and N, the sentinel aside), by its P.
inline long set_open(Ctx *x, int p) {
    int n = M_COMPAN(x, p), op = M_BM_OFF(x, p), on = M_BM_OFF(x, n), nw = M_BM_NW(x, p);
    long c = 0;
    for (int w = 0; w < nw; ++w) c += popcount(BITS_(x, op + w) & BITS_(x, on + w));
    return c - 1;
}

// Which kind of variable a plan group labels, by its value selection's code (codegen.py).
inline bool set_group(int valsel) { return valsel >= VAL_SET_BASE && valsel < VAL_FLOAT_BASE; }
inline bool float_group(int valsel) { return valsel >= VAL_FLOAT_BASE; }

// Whether v, of a plan group labelled by `valsel`, still needs a decision.
inline bool open_var(Ctx *x, int v, int valsel) {
#ifdef FZN_FLOATS
    if (float_group(valsel)) return float_open(x, v);
#endif
    return set_group(valsel) ? set_open(x, v) > 0 : !is_fixed(x, v);
}

// set_search's variable selection: by undecided elements (first_fail, anti_first_fail), else in order.
inline bool better_set(Ctx *x, int sel, int v, int best) {
    if (best < 0) return true;
    if (sel == VS_FIRST_FAIL) return set_open(x, v) < set_open(x, best);
    if (sel == VS_ANTI_FIRST_FAIL) return set_open(x, v) > set_open(x, best);
    return false;
}

// The decision on set variable p: its smallest or largest undecided element, in or out first.
inline void select_set_value(Ctx *x, int p, int valsel, int *out_op, int *out_val) {
    int n = M_COMPAN(x, p), op = M_BM_OFF(x, p), on = M_BM_OFF(x, n), nw = M_BM_NW(x, p), b = M_BASE(x, p);
    int top = dmax(x, p);                                 // the sentinel
    bool largest = valsel == VAL_SET_IN_MAX || valsel == VAL_SET_OUT_MAX;
    int u = top;
    for (int k = 0; k < nw; ++k) {
        int w = largest ? nw - 1 - k : k;
        uint both = BITS_(x, op + w) & BITS_(x, on + w);
        int si = top - b - 32 * w;
        if (si >= 0 && si < 32) both &= ~(1u << si);
        if (!both) continue;
        u = b + 32 * w + (largest ? 31 - clz(both) : 31 - clz(both & (~both + 1u)));
        break;
    }
    *out_val = u;
    *out_op = (valsel == VAL_SET_IN_MIN || valsel == VAL_SET_IN_MAX) ? OP_SET_IN : OP_SET_OUT;
}

inline uint rng_next(uint *s) {
    uint z = *s;
    z ^= z << 13; z ^= z >> 17; z ^= z << 5;
    *s = z ? z : 0x9E3779B9u;
    return *s;
}

// The k-th smallest value of v's domain (0-based).
inline int kth_value(Ctx *x, int v, long k) {
    if (!has_bits(x, v)) return (int)(dmin(x, v) + k);
    int value = dmin(x, v);
    for (long i = 0; i < k; ++i) value = next_value(x, v, value + 1);
    return value;
}

// dom_w_deg's weight of v: the failures of the constraints watching it (weights[c * ws]).
inline long wdeg(Ctx *x, __global const int *weights, int ws, int v) {
    long s = 0;
    for (int i = M_WPTR(x, v); i < M_WPTR(x, v + 1); ++i) s += weights[watcher(M_WLIST(x, i)) * ws];
    return s > 0 ? s : 1;
}

// A variable's key under a search's tie salt (Div.TIES, restarts): among variables the
// selection rates equal, the smallest key wins, so each search of a round meets ties in an
// order of its own (murmur3's finaliser).
inline uint tie_key(uint tie, int v) {
    uint h = tie ^ ((uint)v * 0x9E3779B9u);
    h ^= h >> 16; h *= 0x85EBCA6Bu; h ^= h >> 13; h *= 0xC2B2AE35u; h ^= h >> 16;
    return h;
}

// How a search runs sub-search space `sub` (restarts, engine/restart.py): its departures from
// the plan (Div bits of ST_DIV; a phase's path 0 follows the plan), its node limit (one per path
// with use_limits, else node_limit; 0: none) and its tie key (from ST_TIE, one per path; 0:
// none). Both kernels set it when a search takes a sub-search space.
typedef struct { int div; int limit; uint tie; } SubRun;

inline SubRun sub_run(__global const int *st, int sub, __global const int *limits, int use_limits, int node_limit) {
    SubRun r;
    r.div = sub != 0 ? st[ST_DIV] : 0;
    r.limit = use_limits ? limits[sub] : node_limit;
    r.tie = st[ST_TIE] && sub != 0 ? tie_key((uint)st[ST_TIE], sub) | 1u : 0u;
    return r;
}

// Is candidate (size a_num/a_den) better than the incumbent under the variable selection?
// Returns true if v should replace best.
bool better_var(Ctx *x, int sel, int v, int best, __global const int *weights, int ws) {
    if (best < 0) return true;
    switch (sel) {
    case VS_FIRST_FAIL: return dsize(x, v) < dsize(x, best);
    case VS_ANTI_FIRST_FAIL: return dsize(x, v) > dsize(x, best);
    case VS_SMALLEST: return dmin(x, v) < dmin(x, best);
    case VS_LARGEST: return dmax(x, v) > dmax(x, best);
    case VS_OCCURRENCE: return M_DEG(x, v) > M_DEG(x, best);
    case VS_MOST_CONSTRAINED: {
        long sv = dsize(x, v), sb = dsize(x, best);
        return sv < sb || (sv == sb && M_DEG(x, v) > M_DEG(x, best));
    }
    case VS_MAX_REGRET: {
        long rv = has_bits(x, v) ? (long)next_value(x, v, dmin(x, v) + 1) - dmin(x, v) : 1;
        long rb = has_bits(x, best) ? (long)next_value(x, best, dmin(x, best) + 1) - dmin(x, best) : 1;
        return rv > rb;
    }
    case VS_DOM_W_DEG: {
        // size(v)/wdeg(v) < size(best)/wdeg(best)
        return dsize(x, v) * wdeg(x, weights, ws, best) < dsize(x, best) * wdeg(x, weights, ws, v);
    }
    default: return false;   // input_order: keep the first
    }
}

// The selections whose order is that of a 32-bit key (var_key): smaller is better, equal keys
// are ties, exactly as better_var rates them.
inline bool keyed_selection(int sel) {
    return sel == VS_INPUT_ORDER || sel == VS_FIRST_FAIL || sel == VS_ANTI_FIRST_FAIL || sel == VS_SMALLEST ||
           sel == VS_LARGEST || sel == VS_OCCURRENCE;
}

inline uint var_key(Ctx *x, int sel, int v) {
    switch (sel) {
    case VS_FIRST_FAIL: return (uint)(dsize(x, v) - 1);             // an int domain holds at most 2^32 values
    case VS_ANTI_FIRST_FAIL: return ~(uint)(dsize(x, v) - 1);
    case VS_SMALLEST: return (uint)dmin(x, v) ^ 0x80000000u;        // signed order as unsigned
    case VS_LARGEST: return ~((uint)dmax(x, v) ^ 0x80000000u);
    case VS_OCCURRENCE: return ~(uint)M_DEG(x, v);
    default: return 0u;                                             // input order: position alone
    }
}

// better_var, ties broken by the salt's keys where `tie` is set (input order has no ties).
inline bool better_var_tie(Ctx *x, int sel, int v, int best, __global const int *weights, int ws, uint tie) {
    if (better_var(x, sel, v, best, weights, ws)) return true;
    return tie && sel != VS_INPUT_ORDER && tie_key(tie, v) < tie_key(tie, best) &&
           !better_var(x, sel, best, v, weights, ws);
}

// The decision on `best` that value selection `valsel` makes: x = v, or a split x <= v.
// x != v needs a bitmap unless v is a bound, so without one an inner value splits instead.
// `halve`: a split at a random inner value may shrink the domain by one value only, so past
// half the level stack (maxd) splits halve, and the stack cannot overflow.
inline void select_value(Ctx *x, int best, int valsel, uint *rng, bool halve, int *out_op, int *out_val) {
    int lo = dmin(x, best), hi = dmax(x, best);
    long mid = ((long)lo + (long)hi) >> 1;     // floor: lo <= mid < hi
    switch (valsel) {
    case VAL_MAX: *out_op = OP_EQ; *out_val = hi; break;
    case VAL_MEDIAN:
        *out_val = kth_value(x, best, (dsize(x, best) - 1) / 2);
        *out_op = (has_bits(x, best) || *out_val == lo) ? OP_EQ : OP_LE;
        break;
    case VAL_SPLIT: *out_op = OP_LE; *out_val = (int)mid; break;
    case VAL_REVERSE_SPLIT: *out_op = OP_GT; *out_val = (int)mid; break;
    case VAL_RANDOM:
        *out_val = kth_value(x, best, rng_next(rng) % (ulong)dsize(x, best));
        if (!has_bits(x, best) && *out_val != lo && *out_val != hi) {
            *out_op = OP_LE;
            if (halve) *out_val = (int)mid;
        } else *out_op = OP_EQ;
        break;
    default: *out_op = OP_EQ; *out_val = lo; break;
    }
}

// The right branch of decision (var, op, value), on the domains it was taken from. x != v on a
// bounds-only domain is exact only because v was a bound there: it becomes x > v or x < v, so
// that a path holding it replays exactly in any order (several devices, donated paths).
inline int negation(Ctx *x, int var, int op, int value) {
    int neg = op ^ 1;
    if (neg == OP_NE && !has_bits(x, var)) {
        if (value == dmin(x, var)) return OP_GT;
        if (value == dmax(x, var)) return OP_LT;
    }
    return neg;
}

