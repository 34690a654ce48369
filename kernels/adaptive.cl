// Adaptive Search (the GPU adaptive search paper; fzn_gpu/local/): constraint-based local
// search, one walk per work-group, many walks at once (multi-walk), the work-items of a group
// evaluating its walk's neighbourhood side by side (the paper's second level).
//
// The model is one int buffer (fzn_gpu/local/network.py; its header local_abi.H): decision
// variables in groups (free, permutation, sorted chain), invariants that compute the other
// variables in topological order, and soft constraints whose errors the walk drives to 0. An
// iteration: every decision variable's projected error (the errors of the soft constraints it
// reaches, directly or through invariants); the variable with the highest error that is not
// frozen (ties at random); every move of it (a value, a swap within its permutation, a value
// replaced in its sorted chain) evaluated by its change of the total error, with the
// invariants it wakes recomputed and the soft constraints it touches re-scored; the best move
// taken where it improves, a plateau followed with probability PLATEAU, a worsening move
// taken with probability LOCAL_MIN, else the variable frozen for TABU_TENURE iterations; once
// RESET_LIMIT variables are frozen, RESET_PERCENT of the variables get fresh random values;
// after RESTART_ITERS iterations without a new best, a fresh random start.
//
// A walk's state lives in global memory between launches (values, per-constraint sums and
// errors, all_different histograms, frozen-until iterations, scalars); each work-item has a
// scratch area for the move it evaluates (its changes, the constraints they touch, the
// invariants they wake, each with a small hash table). A walk whose total error reaches 0
// stops there and raises LSC_FOUND; the others go on to the end of the launch, so that which
// walk answers first (the fewest iterations, then the lowest index: the host's choice) does
// not depend on the timing of the launch, and a seed gives the same answer on one device.

typedef struct {
    __global const int *M;
    int nv, ndec, ng, ninv, nsoft, nhist, kmax, tmax, dmax, cand_max;
    __global const int *lo, *hi, *dr_off, *dr, *dsize, *dec_var, *dec_group, *dec_pos, *dec_of;
    __global const int *g_type, *g_off, *g_mem, *g_lo, *g_hi;
    __global const int *inv_type, *inv_out, *inv_row, *soft_type, *soft_row, *soft_weight;
    __global const int *memb_off, *memb_c, *memb_coef, *dep_off, *dep, *inf_off, *inf, *data;
    __global const int *sw_ok, *sw_off, *sw, *sw_class;
} Net;

inline Net net_of(__global const int *M) {
    Net n;
    n.M = M;
    n.nv = M[LSH_NV]; n.ndec = M[LSH_NDEC]; n.ng = M[LSH_NG]; n.ninv = M[LSH_NINV]; n.nsoft = M[LSH_NSOFT];
    n.nhist = M[LSH_HIST]; n.kmax = M[LSH_KMAX]; n.tmax = M[LSH_TMAX]; n.dmax = M[LSH_DMAX];
    n.cand_max = M[LSH_CAND_MAX];
    n.lo = M + M[LSH_LO]; n.hi = M + M[LSH_HI]; n.dr_off = M + M[LSH_DR_OFF]; n.dr = M + M[LSH_DR];
    n.dsize = M + M[LSH_DSIZE]; n.dec_var = M + M[LSH_DEC_VAR]; n.dec_group = M + M[LSH_DEC_GROUP];
    n.dec_pos = M + M[LSH_DEC_POS]; n.dec_of = M + M[LSH_DEC_OF];
    n.g_type = M + M[LSH_G_TYPE]; n.g_off = M + M[LSH_G_OFF]; n.g_mem = M + M[LSH_G_MEM];
    n.g_lo = M + M[LSH_G_LO]; n.g_hi = M + M[LSH_G_HI];
    n.inv_type = M + M[LSH_INV_TYPE]; n.inv_out = M + M[LSH_INV_OUT]; n.inv_row = M + M[LSH_INV_ROW];
    n.soft_type = M + M[LSH_SOFT_TYPE]; n.soft_row = M + M[LSH_SOFT_ROW]; n.soft_weight = M + M[LSH_SOFT_WEIGHT];
    n.memb_off = M + M[LSH_MEMB_OFF]; n.memb_c = M + M[LSH_MEMB_C]; n.memb_coef = M + M[LSH_MEMB_COEF];
    n.dep_off = M + M[LSH_DEP_OFF]; n.dep = M + M[LSH_DEP]; n.inf_off = M + M[LSH_INF_OFF]; n.inf = M + M[LSH_INF];
    n.data = M + M[LSH_DATA];
    n.sw_ok = M + M[LSH_SW_OK]; n.sw_off = M + M[LSH_SW_OFF]; n.sw = M + M[LSH_SW];
    n.sw_class = M + M[LSH_SW_CLASS];
    return n;
}

// A walk's state.
typedef struct {
    __global int *val;      // [nv] every variable's value
    __global int *frozen;   // [ndec] frozen while the walk has made fewer moves than this
    __global int *hist;     // [nhist] all_different value counts
    __global long *sum;     // [nsoft] a LIN constraint's sum
    __global long *err;     // [nsoft] each soft constraint's error
    __global int *sw;       // LSW_ scalars
    __global long *sl;      // LSL_ scalars
} Walk;

// A work-item's scratch for the move it evaluates: changes (var, old, new) with a hash from
// variable to change, touched soft constraints with a hash, their LIN sums' deltas and new
// errors, each touched constraint's changes (a list through the (change, constraint) pairs),
// and the invariants the move wakes.
typedef struct {
    __global int *chg;      // [3 kmax]
    __global int *chash;    // [hk]
    __global int *tc;       // [tmax]
    __global int *thash;    // [ht]
    __global int *dq;       // [dmax]
    __global int *tfirst;   // [tmax] a touched constraint's latest pair, or -1
    __global int *pchg;     // [tmax] a pair's change
    __global int *plink;    // [tmax] the constraint's pair before it, or -1
    __global long *td;      // [tmax]
    __global long *te;      // [tmax]
    int hk, ht;             // hash sizes (powers of two)
    int nchg, nt, np;
    bool null;              // the move leaves every soft constraint as it was (see evaluate)
} Move;

#define EMPTY (-1)

inline uint mix32(uint x) {
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
    return x;
}

inline uint next_rand(__global int *sw) {
    uint x = (uint)sw[LSW_RNG];
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    if (x == 0) x = 0x9e3779b9U;
    sw[LSW_RNG] = (int)x;
    return x;
}

// ---- values with a move's changes on top
inline int chg_find(const Move *mv, int v) {
    uint h = mix32((uint)v) & (uint)(mv->hk - 1);
    while (true) {
        int k = mv->chash[h];
        if (k == EMPTY) return -1;
        if (mv->chg[3 * k] == v) return k;
        h = (h + 1) & (uint)(mv->hk - 1);
    }
}

inline long VAL(const Walk *w, const Move *mv, int v) {
    if (mv->nchg) {
        int k = chg_find(mv, v);
        if (k >= 0) return mv->chg[3 * k + 2];
    }
    return w->val[v];
}

// Adds the change v: old -> new; false when the move has more changes than KMAX.
inline bool chg_add(Move *mv, const Net *n, int v, int old, int nw) {
    if (mv->nchg >= n->kmax) return false;
    int k = mv->nchg++;
    mv->chg[3 * k] = v; mv->chg[3 * k + 1] = old; mv->chg[3 * k + 2] = nw;
    uint h = mix32((uint)v) & (uint)(mv->hk - 1);
    while (mv->chash[h] != EMPTY) h = (h + 1) & (uint)(mv->hk - 1);
    mv->chash[h] = k;
    return true;
}

inline void move_clear(Move *mv) {
    for (int k = 0; k < mv->nchg; ++k) {
        uint h = mix32((uint)mv->chg[3 * k]) & (uint)(mv->hk - 1);
        while (mv->chash[h] != EMPTY) { mv->chash[h] = EMPTY; h = (h + 1) & (uint)(mv->hk - 1); }
    }
    for (int t = 0; t < mv->nt; ++t) {
        uint h = mix32((uint)mv->tc[t]) & (uint)(mv->ht - 1);
        while (mv->thash[h] != EMPTY) { mv->thash[h] = EMPTY; h = (h + 1) & (uint)(mv->ht - 1); }
    }
    mv->nchg = 0;
    mv->nt = 0;
    mv->np = 0;
}

// ---- domains
inline bool in_ranges(__global const int *r, int k, long x) {
    for (int i = 0; i < k; ++i) if (r[2 * i] <= x && x <= r[2 * i + 1]) return true;
    return false;
}

inline long range_distance(__global const int *r, int k, long x) {
    if (x == LS_UNDEFINED) return LS_ERROR_CAP;
    long best = LONG_MAX;
    for (int i = 0; i < k; ++i) {
        long d = x < r[2 * i] ? r[2 * i] - x : x > r[2 * i + 1] ? x - r[2 * i + 1] : 0;
        best = min(best, d);
    }
    return k == 0 ? LS_ERROR_CAP : min(best, (long)LS_ERROR_CAP);
}

// The j-th value (from 0) of v's domain.
inline int nth_value(const Net *n, int v, long j) {
    for (int r = n->dr_off[v]; r < n->dr_off[v + 1]; ++r) {
        long size = (long)n->dr[2 * r + 1] - n->dr[2 * r] + 1;
        if (j < size) return (int)(n->dr[2 * r] + j);
        j -= size;
    }
    return n->dr[2 * n->dr_off[v]];
}

// ---- invariants and relations
// a constant in two ints, low and high 32 bits (local_abi.Soft's LIN: network.wide)
inline long wide(__global const int *p) { return ((long)p[1] << 32) | (long)(uint)p[0]; }

inline bool rel_holds(int rel, long s, long rhs) {
    return rel == LS_REL_EQ ? s == rhs : rel == LS_REL_LE ? s <= rhs : s != rhs;
}

inline long lin_sum(const Walk *w, const Move *mv, __global const int *cs, __global const int *xs, int k) {
    long s = 0;
    for (int i = 0; i < k; ++i) s += (long)cs[i] * VAL(w, mv, xs[i]);
    return s;
}

inline long fits(long x) {
    return (x < -2147483646L || x > 2147483646L) ? LS_UNDEFINED : x;
}

// ARITH's operation `op` on a and b (LS_UNDEFINED where undefined or beyond 31 bits).
long arith_value(int op, long a, long b) {
    switch (op) {
    case LS_ARITH_TIMES: return fits(a * b);
    case LS_ARITH_DIV: return b == 0 ? LS_UNDEFINED : fits(a / b);
    case LS_ARITH_MOD: return b == 0 ? LS_UNDEFINED : fits(a % b);
    case LS_ARITH_MIN: return min(a, b);
    case LS_ARITH_MAX: return max(a, b);
    case LS_ARITH_ABS: return fits(a < 0 ? -a : a);
    case LS_ARITH_POW: {
        if (b < 0) {
            if (a == 0) return LS_UNDEFINED;
            if (a == 1) return 1;
            if (a == -1) return (b & 1) ? -1 : 1;
            return 0;
        }
        long r = 1;
        for (long i = 0; i < b; ++i) {
            r *= a;
            if (r < -2147483646L || r > 2147483646L) return LS_UNDEFINED;
        }
        return r;
    }
    }
    return LS_UNDEFINED;
}

// ELEM's value at index i (1-based; LS_UNDEFINED outside the array).
inline long elem_value(__global const int *row, long i) {
    return (i >= 1 && i <= row[1]) ? row[1 + i] : LS_UNDEFINED;
}

// The value an invariant of `type` with row `row` computes (LS_UNDEFINED where undefined).
long inv_value(const Walk *w, const Move *mv, int type, __global const int *row) {
    switch (type) {
    case LS_INV_LIN: {
        int k = row[0];
        long num = wide(row + 1 + 2 * k) - lin_sum(w, mv, row + 1, row + 1 + k, k);
        return fits(num * row[3 + 2 * k]);          // a = +-1
    }
    case LS_INV_ARITH:
        return arith_value(row[0], VAL(w, mv, row[1]), VAL(w, mv, row[2]));
    case LS_INV_ELEM:
        return elem_value(row, VAL(w, mv, row[0]));
    case LS_INV_VELEM: {
        long i = VAL(w, mv, row[0]);
        return (i >= 1 && i <= row[1]) ? VAL(w, mv, row[1 + i]) : LS_UNDEFINED;
    }
    case LS_INV_EXTREMUM: {
        int k = row[1];
        if (k == 0) return LS_UNDEFINED;
        long m = VAL(w, mv, row[2]);
        for (int i = 1; i < k; ++i) {
            long x = VAL(w, mv, row[2 + i]);
            m = row[0] ? max(m, x) : min(m, x);
        }
        return m;
    }
    case LS_INV_LINREIF: {
        int k = row[1];
        return rel_holds(row[0], lin_sum(w, mv, row + 2, row + 2 + k, k), wide(row + 2 + 2 * k)) ? 1 : 0;
    }
    case LS_INV_CLAUSE: {
        int npos = row[1], nneg = row[2 + npos];
        bool any = false;
        for (int i = 0; i < npos && !any; ++i) any = VAL(w, mv, row[2 + i]) != 0;
        for (int i = 0; i < nneg && !any; ++i) any = VAL(w, mv, row[3 + npos + i]) == 0;
        return (long)(any ^ (row[0] != 0));
    }
    case LS_INV_XOR: {
        int k = row[0], odd = 0;
        for (int i = 0; i < k; ++i) odd ^= VAL(w, mv, row[1 + i]) != 0;
        return odd;
    }
    case LS_INV_SETIN:
        return in_ranges(row + 2, row[1], VAL(w, mv, row[0])) ? 1 : 0;
    case LS_INV_COUNT: {
        int k = row[0];
        long value = row[1 + k] >= 0 ? VAL(w, mv, row[1 + k]) : row[2 + k];
        long c = 0;
        for (int i = 0; i < k; ++i) c += VAL(w, mv, row[1 + i]) == value;
        return c;
    }
    }
    return LS_UNDEFINED;
}

// ---- soft constraints
inline long lin_error(int rel, long s, long rhs) {
    if (rel == LS_REL_EQ) return s > rhs ? s - rhs : rhs - s;
    if (rel == LS_REL_LE) return s > rhs ? s - rhs : 0;
    return s == rhs ? 1 : 0;
}

// Constraint c's error from the values (all_different: from the walk's histogram, `hist`).
long soft_error(const Net *n, const Walk *w, const Move *mv, int c) {
    __global const int *row = n->data + n->soft_row[c];
    switch (n->soft_type[c]) {
    case LS_SOFT_LIN: {
        int k = row[1];
        return lin_error(row[0], lin_sum(w, mv, row + 2, row + 2 + k, k), wide(row + 2 + 2 * k));
    }
    case LS_SOFT_ALLDIFF: {
        int k = row[0], span = row[2 + k], h = row[3 + k];
        long e = 0;
        for (int i = 0; i < span; ++i) e += max(w->hist[h + i] - 1, 0);
        return e;
    }
    case LS_SOFT_CLAUSE: {
        int npos = row[0], nneg = row[1 + npos];
        for (int i = 0; i < npos; ++i) if (VAL(w, mv, row[1 + i]) != 0) return 0;
        for (int i = 0; i < nneg; ++i) if (VAL(w, mv, row[2 + npos + i]) == 0) return 0;
        return 1;
    }
    case LS_SOFT_REIF:
        return inv_value(w, mv, row[1], row + 2) != VAL(w, mv, row[0]) ? 1 : 0;
    case LS_SOFT_IMP:
        return (VAL(w, mv, row[0]) != 0 && inv_value(w, mv, row[1], row + 2) == 0) ? 1 : 0;
    case LS_SOFT_FUNC: {
        long v = inv_value(w, mv, row[1], row + 2);
        if (v == LS_UNDEFINED) return LS_ERROR_CAP;
        long d = v - VAL(w, mv, row[0]);
        return min(d < 0 ? -d : d, (long)LS_ERROR_CAP);
    }
    case LS_SOFT_DOMAIN:
        return range_distance(row + 2, row[1], VAL(w, mv, row[0]));
    case LS_SOFT_TABLE: {
        int k = row[0], nt = row[1 + k];
        __global const int *t = row + 2 + k;
        for (int j = 0; j < nt; ++j) {
            bool match = true;
            for (int i = 0; i < k && match; ++i) match = VAL(w, mv, row[1 + i]) == t[j * k + i];
            if (match) return 0;
        }
        return 1;
    }
    case LS_SOFT_COUNT: {
        int k = row[0];
        long value = row[1 + k] >= 0 ? VAL(w, mv, row[1 + k]) : row[2 + k];
        long c = 0;
        for (int i = 0; i < k; ++i) c += VAL(w, mv, row[1 + i]) == value;
        long lo = row[3 + k] >= 0 ? VAL(w, mv, row[3 + k]) : row[4 + k];
        long hi = row[3 + k] >= 0 ? lo : row[5 + k];
        return c < lo ? lo - c : c > hi ? c - hi : 0;
    }
    case LS_SOFT_XOR: {
        int k = row[0], odd = 0;
        for (int i = 0; i < k; ++i) odd ^= VAL(w, mv, row[1 + i]) != 0;
        return odd ? 0 : 1;
    }
    }
    return 0;
}

// How all_different c's error changes with the move's changes of its variables (the list of
// touched slot t): each value they leave or take re-counted once.
long alldiff_delta(const Net *n, const Walk *w, const Move *mv, int c, int t) {
    __global const int *row = n->data + n->soft_row[c];
    int k = row[0], vmin = row[1 + k], span = row[2 + k], h = row[3 + k];
    long d = 0;
    for (int p = mv->tfirst[t]; p >= 0; p = mv->plink[p]) {
        int a = mv->pchg[p];
        for (int side = 1; side <= 2; ++side) {
            long u = mv->chg[3 * a + side];
            if (u < vmin || u >= (long)vmin + span) continue;
            bool seen = side == 2 && mv->chg[3 * a + 1] == u;      // u counted already
            for (int q = mv->tfirst[t]; q != p && !seen; q = mv->plink[q]) {
                int b = mv->pchg[q];
                seen = mv->chg[3 * b + 1] == u || mv->chg[3 * b + 2] == u;
            }
            if (seen) continue;
            int net = 0;
            for (int q = p; q >= 0; q = mv->plink[q]) {
                int b = mv->pchg[q];
                net += (mv->chg[3 * b + 2] == u) - (mv->chg[3 * b + 1] == u);
            }
            int cnt = w->hist[h + (int)(u - vmin)];
            d += max(cnt + net - 1, 0) - max(cnt - 1, 0);
        }
    }
    return d;
}

// Touched constraint c: its slot in the move's list (added with delta 0), or -1 past TMAX.
inline int touch(Move *mv, const Net *n, int c) {
    uint h = mix32((uint)c) & (uint)(mv->ht - 1);
    while (true) {
        int t = mv->thash[h];
        if (t == EMPTY) break;
        if (mv->tc[t] == c) return t;
        h = (h + 1) & (uint)(mv->ht - 1);
    }
    if (mv->nt >= n->tmax) return -1;
    int t = mv->nt++;
    mv->tc[t] = c;
    mv->td[t] = 0;
    mv->tfirst[t] = -1;
    mv->thash[h] = t;
    return t;
}

// The move whose decision changes are in mv: the invariants they wake recomputed (changes
// added), the soft constraints touched and their new errors (mv->te); returns the change of
// the total error, or LONG_MAX where the move is beyond the scratch's capacities.
long evaluate(const Net *n, const Walk *w, Move *mv) {
    int nd = mv->nchg;
    // the invariants woken, in topological order (one decision change: its list as it is)
    __global const int *woken;
    int nw = 0;
    if (nd == 1) {
        int i = n->dec_of[mv->chg[0]];
        woken = n->dep + n->dep_off[i];
        nw = n->dep_off[i + 1] - n->dep_off[i];
    } else {
        for (int a = 0; a < nd; ++a) {
            int i = n->dec_of[mv->chg[3 * a]];
            for (int j = n->dep_off[i]; j < n->dep_off[i + 1]; ++j) {
                int k = n->dep[j];
                int at = nw;                    // insertion into the sorted list, once
                while (at > 0 && mv->dq[at - 1] > k) at--;
                if (at > 0 && mv->dq[at - 1] == k) continue;
                if (nw >= n->dmax) return LONG_MAX;
                for (int b = nw; b > at; --b) mv->dq[b] = mv->dq[b - 1];
                mv->dq[at] = k;
                nw++;
            }
        }
        woken = mv->dq;
    }
    for (int j = 0; j < nw; ++j) {
        int k = woken[j];
        int out = n->inv_out[k];
        long v = inv_value(w, mv, n->inv_type[k], n->data + n->inv_row[k]);
        int old = w->val[out];
        if (v != old && !chg_add(mv, n, out, old, (int)v)) return LONG_MAX;
    }
    // the soft constraints the changes touch, with the LIN sums' deltas
    for (int a = 0; a < mv->nchg; ++a) {
        int v = mv->chg[3 * a];
        long diff = (long)mv->chg[3 * a + 2] - mv->chg[3 * a + 1];
        for (int m = n->memb_off[v]; m < n->memb_off[v + 1]; ++m) {
            int t = touch(mv, n, n->memb_c[m]);
            if (t < 0 || mv->np >= n->tmax) return LONG_MAX;
            mv->td[t] += (long)n->memb_coef[m] * diff;
            mv->pchg[mv->np] = a;
            mv->plink[mv->np] = mv->tfirst[t];
            mv->tfirst[t] = mv->np++;
        }
    }
    long delta = 0;
    mv->null = true;
    for (int t = 0; t < mv->nt; ++t) {
        int c = mv->tc[t];
        long e;
        int type = n->soft_type[c];
        if (type == LS_SOFT_LIN) {
            __global const int *row = n->data + n->soft_row[c];
            e = n->soft_weight[c] * lin_error(row[0], w->sum[c] + mv->td[t], wide(row + 2 + 2 * row[1]));
        } else if (type == LS_SOFT_ALLDIFF) {
            e = w->err[c] + n->soft_weight[c] * alldiff_delta(n, w, mv, c, t);
        } else {
            e = n->soft_weight[c] * soft_error(n, w, mv, c);
        }
        mv->te[t] = e;
        delta += e - w->err[c];
        // a null move: every linear sum it touches unchanged, every other error unchanged (an
        // all_different's histogram always counts as changed); swapping two variables that
        // play the same part (number partitioning's two halves) is one, never worth a step
        mv->null &= type == LS_SOFT_LIN ? mv->td[t] == 0 : (type != LS_SOFT_ALLDIFF && e == w->err[c]);
    }
    return delta;
}

// A swap's sums and errors: 32 bits where the host found that every swap term is a LIN or an
// all_different one on the decision variable itself and no sum or error of them leaves 31 bits
// (LsNetwork.sums_32: the program built with -DLS_SUMS_32), else 64. On a GPU a 64-bit
// operation takes several instructions, and scoring swaps is bound by its instructions.
#ifdef LS_SUMS_32
typedef int lsum;
#else
typedef long lsum;
#endif

inline lsum lin_error_s(int rel, lsum s, lsum rhs) {
    if (rel == LS_REL_EQ) return s > rhs ? s - rhs : rhs - s;
    if (rel == LS_REL_LE) return s > rhs ? s - rhs : 0;
    return s == rhs ? 1 : 0;
}

// ---- a swap scored from the constraints' sums
// Invariant k's value where x, the one variable it reads beside constants (network.py,
// _swap_terms), takes the value nx: as inv_value computes it.
long unary_value(const Net *n, const Walk *w, int k, int x, long nx) {
    __global const int *row = n->data + n->inv_row[k];
    switch (n->inv_type[k]) {
    case LS_INV_ARITH:
        return arith_value(row[0], row[1] == x ? nx : w->val[row[1]], row[2] == x ? nx : w->val[row[2]]);
    case LS_INV_ELEM:
        return elem_value(row, nx);
    case LS_INV_LIN: {
        int m = row[0];
        long s = 0;
        for (int i = 0; i < m; ++i) s += (long)row[1 + i] * (row[1 + m + i] == x ? nx : w->val[row[1 + m + i]]);
        return fits((wide(row + 1 + 2 * m) - s) * row[3 + 2 * m]);
    }
    }
    return LS_UNDEFINED;
}

// The new value of what swap term t reads (the decision variable x itself, or its invariant's
// variable) once x takes the value nx; *old: its value now.
inline long term_value(const Net *n, const Walk *w, __global const int *t, int x, long nx, long *old) {
    int k = t[LSS_INV];
    if (k < 0) { *old = w->val[x]; return nx; }
    *old = w->val[n->inv_out[k]];
    return unary_value(n, w, k, x, nx);
}

// The change of what swap term t reads once decision variable x moves from its value `now`
// to nx: in 32 bits (LS_SUMS_32) every term is on the variable itself.
inline lsum term_change(const Net *n, const Walk *w, __global const int *t, int x, long now, long nx) {
#ifdef LS_SUMS_32
    return (lsum)(nx - now);
#else
    long old;
    long value = term_value(n, w, t, x, nx, &old);
    return value - old;
#endif
}

// How much the sum of constraint c changes through swap terms from .. to - 1 of decision
// variable x (all of them read x) once x moves from `now` to nx.
lsum terms_change(const Net *n, const Walk *w, int from, int to, int c, int x, long now, long nx) {
    lsum d = 0;
    for (int k = from; k < to; ++k) {
        __global const int *t = n->sw + LSS_SIZE * k;
        if (t[LSS_C] == c) d += t[LSS_COEF] * term_change(n, w, t, x, now, nx);
    }
    return d;
}

// The change of the total error when decision variables i and j of a permutation (variables v
// and u, values a and b) swap values, both marked SW_OK: each soft constraint of their swap
// terms re-scored from its sum (LIN), its range (DOMAIN) or as it is (an all_different holding
// both: a swap leaves its histogram as it is). What evaluate() gives that move, without the
// move's hash tables in global memory, whose chains of dependent loads and stores dominate a
// GPU walk that scores every swap of a big permutation each iteration (docs/bench/measurements.md,
// Adaptive Search), and without reading a constraint's row. An invariant's undefined value
// counts as LS_UNDEFINED, as evaluate() takes it. LONG_MAX where either is not marked or an
// all_different holds one of them alone: the caller evaluates that move as any other.
// *null: evaluate()'s null flag.
long swap_delta(const Net *n, const Walk *w, int i, int j, int v, int u, int a, int b, bool *null) {
    if (!n->sw_ok[i] || !n->sw_ok[j]) return LONG_MAX;
    int i0 = n->sw_off[i], i1 = n->sw_off[i + 1], j0 = n->sw_off[j], j1 = n->sw_off[j + 1];
    __global const int *sw = n->sw;
    long delta = 0;
    bool nul = true;
    for (int side = 0; side < 2; ++side) {
        int s0 = side ? j0 : i0, s1 = side ? j1 : i1;
        for (int m = s0; m < s1; ++m) {
            __global const int *t = sw + LSS_SIZE * m;
            int c = t[LSS_C];
            bool seen = false;          // scored already: earlier in this list, or (j's) in i's
            for (int k = s0; k < m && !seen; ++k) seen = sw[LSS_SIZE * k + LSS_C] == c;
            for (int k = i0; side && k < i1 && !seen; ++k) seen = sw[LSS_SIZE * k + LSS_C] == c;
            if (seen) continue;
            int kind = t[LSS_KIND];
            long e, old;
            if (kind == LS_SWAP_DOMAIN) {   // one variable's: this term's alone
                long x = side ? term_value(n, w, t, u, a, &old) : term_value(n, w, t, v, b, &old);
                __global const int *row = n->data + t[LSS_RHS];
                e = t[LSS_WEIGHT] * range_distance(row + 2, row[1], x);
                nul &= e == w->err[c];
            } else if (kind == LS_SWAP_ALLDIFF) {
                bool in_i = false, in_j = false;
                for (int k = i0; k < i1; ++k) in_i |= sw[LSS_SIZE * k + LSS_C] == c;
                for (int k = j0; k < j1; ++k) in_j |= sw[LSS_SIZE * k + LSS_C] == c;
                if (!(in_i && in_j)) return LONG_MAX;
                nul = false;                // evaluate() counts a histogram as changed
                continue;
            } else {                        // LIN: every term of either on c
                long td = (long)terms_change(n, w, i0, i1, c, v, a, b) + terms_change(n, w, j0, j1, c, u, b, a);
                e = t[LSS_WEIGHT] * lin_error(kind, w->sum[c] + td, wide(t + LSS_RHS));
                nul &= td == 0;
            }
            delta += e - w->err[c];
        }
    }
    *null = nul;
    return delta;
}

// ---- every swap of one variable X, X's side gathered once an iteration
// X's swap terms as its group's work-items share them in local memory while they score X's
// swaps: its constraints once each (their relation, constant, weight, and the walk's sum and
// error now), the coefficients its own value carries on each (`direct`), and its invariant
// terms apart. Each swap then reads from global memory only the partner's terms and the sums
// and errors of the partner's other constraints: swap_delta re-reads both lists for every
// constraint of every swap, 40,000 swaps an iteration on magic square 200.
typedef struct {
    int nq, nt;                                     // constraints; invariant terms
    int c[LS_SWAP_TERMS_MAX], kind[LS_SWAP_TERMS_MAX], weight[LS_SWAP_TERMS_MAX];
    lsum rhs[LS_SWAP_TERMS_MAX], sum[LS_SWAP_TERMS_MAX], err[LS_SWAP_TERMS_MAX];
    lsum direct[LS_SWAP_TERMS_MAX];                 // the sum of X's own coefficients on each
    int src[LS_SWAP_TERMS_MAX];                     // a DOMAIN's variable: -1 X, else its invariant term
    int t_q[LS_SWAP_TERMS_MAX], t_coef[LS_SWAP_TERMS_MAX], t_inv[LS_SWAP_TERMS_MAX];
    long t_old[LS_SWAP_TERMS_MAX];                  // an invariant term's value now
} XSide;

// Fills xs with decision variable i's side (variable v): one work-item does.
void gather_side(const Net *n, const Walk *w, __local XSide *xs, int i, int v) {
    int nq = 0, nt = 0;
    for (int m = n->sw_off[i]; m < n->sw_off[i + 1]; ++m) {
        __global const int *t = n->sw + LSS_SIZE * m;
        int c = t[LSS_C], q = 0;
        while (q < nq && xs->c[q] != c) ++q;
        if (q == nq) {
            xs->c[q] = c;
            xs->kind[q] = t[LSS_KIND];
            xs->weight[q] = t[LSS_WEIGHT];
            xs->rhs[q] = t[LSS_KIND] == LS_SWAP_DOMAIN ? t[LSS_RHS] : (lsum)wide(t + LSS_RHS);
            xs->sum[q] = (lsum)w->sum[c];
            xs->err[q] = (lsum)w->err[c];
            xs->direct[q] = 0;
            xs->src[q] = -1;
            nq++;
        }
        int k = t[LSS_INV];
        if (k < 0) {
            xs->direct[q] += t[LSS_COEF];
        } else {
            if (t[LSS_KIND] == LS_SWAP_DOMAIN) xs->src[q] = nt;
            xs->t_q[nt] = q;
            xs->t_coef[nt] = t[LSS_COEF];
            xs->t_inv[nt] = k;
            xs->t_old[nt] = w->val[n->inv_out[k]];
            nt++;
        }
    }
    xs->nq = nq;
    xs->nt = nt;
}

// What swap_delta gives the swap of X (xs: variable v, value a) with decision variable j
// (variable u, value b), in lsum's width.
long swap_delta_side(const Net *n, const Walk *w, __local const XSide *xs, int j, int v, int u, int a, int b,
                     bool *null) {
    if (!n->sw_ok[j]) return LONG_MAX;
    int j0 = n->sw_off[j], j1 = n->sw_off[j + 1];
    __global const int *sw = n->sw;
    lsum td[LS_SWAP_TERMS_MAX];                     // the partner's part of each X constraint's change
    uint shared = 0;                                // X constraints the partner reads too
    for (int q = 0; q < xs->nq; ++q) td[q] = 0;
    lsum delta = 0;
    bool nul = true;
    for (int m = j0; m < j1; ++m) {
        __global const int *t = sw + LSS_SIZE * m;
        int c = t[LSS_C], q = 0;
        while (q < xs->nq && xs->c[q] != c) ++q;
        if (q < xs->nq) {                           // X's too: scored below
            td[q] += t[LSS_COEF] * term_change(n, w, t, u, b, a);
            shared |= 1u << q;
            continue;
        }
#ifndef LS_SUMS_32
        bool seen = false;                          // the partner's alone: scored here, once
        for (int k = j0; k < m && !seen; ++k) seen = sw[LSS_SIZE * k + LSS_C] == c;
        if (seen) continue;
#endif
        int kind = t[LSS_KIND];
        lsum e;
        if (kind == LS_SWAP_ALLDIFF) return LONG_MAX;   // X is not in it
#ifndef LS_SUMS_32
        if (kind == LS_SWAP_DOMAIN) {
            long old;
            long x = term_value(n, w, t, u, a, &old);
            __global const int *row = n->data + t[LSS_RHS];
            e = t[LSS_WEIGHT] * range_distance(row + 2, row[1], x);
            nul &= e == w->err[c];
        } else
#endif
        {
#ifdef LS_SUMS_32
            lsum d = t[LSS_COEF] * ((lsum)a - b);      // its one term on c (LsNetwork.sums_32)
#else
            lsum d = terms_change(n, w, m, j1, c, u, b, a);   // every term of the partner's on c
#endif
            e = t[LSS_WEIGHT] * lin_error_s(kind, (lsum)w->sum[c] + d, (lsum)wide(t + LSS_RHS));
            nul &= d == 0;
        }
        delta += e - (lsum)w->err[c];
    }
#ifndef LS_SUMS_32
    for (int k = 0; k < xs->nt; ++k) {              // X's invariant terms at the value b
        int q = xs->t_q[k];
        td[q] += xs->t_coef[k] * (unary_value(n, w, xs->t_inv[k], v, b) - xs->t_old[k]);
    }
#endif
    for (int q = 0; q < xs->nq; ++q) {
        int kind = xs->kind[q];
        lsum e;
        if (kind == LS_SWAP_ALLDIFF) {
            if (!(shared & (1u << q))) return LONG_MAX;
            nul = false;                            // evaluate() counts a histogram as changed
            continue;
        }
#ifndef LS_SUMS_32
        if (kind == LS_SWAP_DOMAIN) {               // X's own variable's, or its invariant's
            int k = xs->src[q];
            long x = k < 0 ? b : unary_value(n, w, xs->t_inv[k], v, b);
            __global const int *row = n->data + xs->rhs[q];
            e = xs->weight[q] * range_distance(row + 2, row[1], x);
            nul &= e == xs->err[q];
        } else
#endif
        {
            lsum d = td[q] + xs->direct[q] * ((lsum)b - a);
            e = xs->weight[q] * lin_error_s(kind, xs->sum[q] + d, xs->rhs[q]);
            nul &= d == 0;
        }
        delta += e - xs->err[q];
    }
    *null = nul;
    return delta;
}

// ---- moves of a decision variable
// How many candidate moves decision variable i has (indices 0 .. count-1).
inline int candidates(const Net *n, int i) {
    int g = n->dec_group[i];
    if (g < 0) return min(n->dsize[n->dec_var[i]], n->cand_max);
    int t = n->g_type[g];
    if (t == LS_GROUP_PERM) return n->g_off[g + 1] - n->g_off[g];
    return n->g_hi[g] - n->g_lo[g] + 1;
}

// The most candidate moves a decision variable has.
inline int max_candidates(const Net *n) {
    return n->M[LSH_CAND_ALL];
}

// Writes candidate j of decision variable i's moves into mv as decision changes; false when
// it is no move (its own value, a value its sorted chain holds already, too many changes).
bool candidate(const Net *n, const Walk *w, Move *mv, int i, int j, uint salt, int moves) {
    int v = n->dec_var[i];
    int cur = w->val[v];
    int g = n->dec_group[i];
    if (g < 0) {
        int size = n->dsize[v];
        long k = size <= n->cand_max ? j : (long)(mix32(salt ^ mix32((uint)j)) % (uint)size);
        int value = nth_value(n, v, k);
        return value != cur && chg_add(mv, n, v, cur, value);
    }
    int t = n->g_type[g];
    __global const int *mem = n->g_mem + n->g_off[g];
    if (t == LS_GROUP_PERM) {
        int u = n->dec_var[mem[j]];
        int other = w->val[u];
        if (u == v || other == cur || w->frozen[mem[j]] > moves) return false;     // a frozen partner stays
        return chg_add(mv, n, v, cur, other) && chg_add(mv, n, u, other, cur);
    }
    // a sorted chain: its value at position p replaced by x, the sequence sorted again
    int size = n->g_off[g + 1] - n->g_off[g];
    int p = n->dec_pos[i];
    int x = n->g_lo[g] + j;
    if (x == cur) return false;
    // q: where x goes among the other values (binary search over the sorted sequence)
    int a = 0, b = size;
    while (a < b) {
        int m = (a + b) / 2;
        int vm = w->val[n->dec_var[mem[m]]];
        if (vm < x) a = m + 1; else b = m;
    }
    if (t == LS_GROUP_SORTED_STRICT && a < size && w->val[n->dec_var[mem[a]]] == x) return false;
    int q = a > p ? a - 1 : a;          // the position x takes once v's value has left
    if (q >= p) {
        for (int s = p; s < q; ++s) {
            int u = n->dec_var[mem[s]];
            if (!chg_add(mv, n, u, w->val[u], w->val[n->dec_var[mem[s + 1]]])) return false;
        }
    } else {
        for (int s = p; s > q; --s) {
            int u = n->dec_var[mem[s]];
            if (!chg_add(mv, n, u, w->val[u], w->val[n->dec_var[mem[s - 1]]])) return false;
        }
    }
    int u = n->dec_var[mem[q]];
    return chg_add(mv, n, u, w->val[u], x);
}

// ---- whole-walk work (work-item 0)
// A decision variable's random value; a permutation's swap; a sorted chain's replaced value.
void randomise(const Net *n, Walk *w, int i) {
    int v = n->dec_var[i];
    int g = n->dec_group[i];
    if (g < 0) {
        w->val[v] = nth_value(n, v, next_rand(w->sw) % (uint)n->dsize[v]);
        return;
    }
    __global const int *mem = n->g_mem + n->g_off[g];
    int size = n->g_off[g + 1] - n->g_off[g];
    if (n->g_type[g] == LS_GROUP_PERM) {
        int u = n->dec_var[mem[next_rand(w->sw) % (uint)size]];
        int t = w->val[u]; w->val[u] = w->val[v]; w->val[v] = t;
        return;
    }
    int span = n->g_hi[g] - n->g_lo[g] + 1;
    bool strict = n->g_type[g] == LS_GROUP_SORTED_STRICT;
    for (int tries = 0; tries < 16; ++tries) {
        int x = n->g_lo[g] + (int)(next_rand(w->sw) % (uint)span);
        bool taken = false;
        for (int s = 0; s < size && strict && !taken; ++s) taken = w->val[n->dec_var[mem[s]]] == x;
        if (taken) continue;
        w->val[v] = x;
        // sorted again: x moves along from position p
        int p = n->dec_pos[i];
        while (p > 0 && w->val[n->dec_var[mem[p - 1]]] > x) {
            w->val[n->dec_var[mem[p]]] = w->val[n->dec_var[mem[p - 1]]];
            w->val[n->dec_var[mem[--p]]] = x;
        }
        while (p + 1 < size && w->val[n->dec_var[mem[p + 1]]] < x) {
            w->val[n->dec_var[mem[p]]] = w->val[n->dec_var[mem[p + 1]]];
            w->val[n->dec_var[mem[++p]]] = x;
        }
        return;
    }
}

// A fresh random assignment of every decision variable.
void random_start(const Net *n, Walk *w) {
    for (int i = 0; i < n->ndec; ++i) if (n->dec_group[i] < 0) randomise(n, w, i);
    for (int g = 0; g < n->ng; ++g) {
        __global const int *mem = n->g_mem + n->g_off[g];
        int size = n->g_off[g + 1] - n->g_off[g];
        if (n->g_type[g] == LS_GROUP_PERM) {        // the shared domain's values, shuffled
            int v0 = n->dec_var[mem[0]];
            for (int s = 0; s < size; ++s) w->val[n->dec_var[mem[s]]] = nth_value(n, v0, s);
            for (int s = size - 1; s > 0; --s) {
                int r = (int)(next_rand(w->sw) % (uint)(s + 1));
                int a = n->dec_var[mem[s]], b = n->dec_var[mem[r]];
                int t = w->val[a]; w->val[a] = w->val[b]; w->val[b] = t;
            }
            continue;
        }
        // sorted: distinct values in order by selection sampling (Knuth's algorithm S); a
        // non-strict chain the same (a sample that repeats no value is one of its states)
        int lo = n->g_lo[g], span = n->g_hi[g] - lo + 1, need = size, s = 0;
        for (int x = 0; x < span && need > 0; ++x) {
            if ((int)(next_rand(w->sw) % (uint)(span - x)) < need) {
                w->val[n->dec_var[mem[s++]]] = lo + x;
                need--;
            }
        }
        for (; s < size; ++s) w->val[n->dec_var[mem[s]]] = n->g_hi[g];     // (a non-strict chain longer than its interval)
    }
}

// Everything computed from the decision variables' values: the invariants (work-item 0, in
// order), then the sums, histograms and errors (shared out), then the total.
void recompute(const Net *n, Walk *w, Move *mv, __local long *red, int lid, int W) {
    if (lid == 0) {
        mv->nchg = 0;
        for (int k = 0; k < n->ninv; ++k)
            w->val[n->inv_out[k]] = (int)inv_value(w, mv, n->inv_type[k], n->data + n->inv_row[k]);
    }
    for (int h = lid; h < n->nhist; h += W) w->hist[h] = 0;
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    for (int c = lid; c < n->nsoft; c += W) {
        __global const int *row = n->data + n->soft_row[c];
        if (n->soft_type[c] == LS_SOFT_LIN) {
            int k = row[1];
            w->sum[c] = lin_sum(w, mv, row + 2, row + 2 + k, k);
        } else if (n->soft_type[c] == LS_SOFT_ALLDIFF) {
            int k = row[0], vmin = row[1 + k], span = row[2 + k], h = row[3 + k];
            for (int i = 0; i < k; ++i) {
                long x = w->val[row[1 + i]];
                if (x >= vmin && x < (long)vmin + span) atomic_inc(&w->hist[h + (int)(x - vmin)]);
            }
        }
    }
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    long total = 0;
    for (int c = lid; c < n->nsoft; c += W) {
        __global const int *row = n->data + n->soft_row[c];
        long e = n->soft_weight[c] * (n->soft_type[c] == LS_SOFT_LIN ? lin_error(row[0], w->sum[c], wide(row + 2 + 2 * row[1]))
                                                                     : soft_error(n, w, mv, c));
        w->err[c] = e;
        total += e;
    }
    red[lid] = total;
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        long t = 0;
        for (int l = 0; l < W; ++l) t += red[l];
        w->sl[LSL_TOTAL] = t;
    }
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
}

// Work-item 0 takes the move in mv (evaluated): values, sums, histograms, errors, total.
void commit(const Net *n, Walk *w, Move *mv, long delta) {
    for (int t = 0; t < mv->nt; ++t) {
        int c = mv->tc[t];
        int type = n->soft_type[c];
        if (type == LS_SOFT_LIN) {
            w->sum[c] += mv->td[t];
        } else if (type == LS_SOFT_ALLDIFF) {
            __global const int *row = n->data + n->soft_row[c];
            int k = row[0], vmin = row[1 + k], span = row[2 + k], h = row[3 + k];
            for (int p = mv->tfirst[t]; p >= 0; p = mv->plink[p]) {
                int a = mv->pchg[p];
                long o = mv->chg[3 * a + 1], x = mv->chg[3 * a + 2];
                if (o >= vmin && o < (long)vmin + span) w->hist[h + (int)(o - vmin)]--;
                if (x >= vmin && x < (long)vmin + span) w->hist[h + (int)(x - vmin)]++;
            }
        }
        w->err[c] = mv->te[t];
    }
    for (int a = 0; a < mv->nchg; ++a) w->val[mv->chg[3 * a]] = mv->chg[3 * a + 2];
    w->sl[LSL_TOTAL] += delta;
}

// Work-item 0 of a walk at error 0: it stops, its values the solution it offers.
inline void solved(Walk *w, __global int *ctl) {
    w->sw[LSW_STATUS] = 2;
    atomic_or(&ctl[LSC_FOUND], 1);
}

// ---- the kernels
// The walk of this work-group, and this work-item's scratch.
#define WALK_ARGS __global const int *M, __global int *vals, __global int *frozen, __global int *hists, \
    __global long *sums, __global long *errs, __global int *scalars, __global long *lscalars, \
    __global int *scratch, __global long *lscratch

inline Walk walk_of(const Net *n, __global int *vals, __global int *frozen, __global int *hists, __global long *sums,
                    __global long *errs, __global int *scalars, __global long *lscalars, int wid) {
    Walk w;
    w.val = vals + (long)wid * n->nv;
    w.frozen = frozen + (long)wid * n->ndec;
    w.hist = hists + (long)wid * n->nhist;
    w.sum = sums + (long)wid * n->nsoft;
    w.err = errs + (long)wid * n->nsoft;
    w.sw = scalars + (long)wid * LSW_SIZE;
    w.sl = lscalars + (long)wid * LSL_SIZE;
    return w;
}

inline Move move_of(const Net *n, __global int *scratch, __global long *lscratch, long item) {
    Move mv;
    mv.hk = 1; while (mv.hk < 2 * n->kmax) mv.hk <<= 1;
    mv.ht = 1; while (mv.ht < 2 * n->tmax) mv.ht <<= 1;
    long per_item = 3L * n->kmax + mv.hk + 4L * n->tmax + mv.ht + n->dmax;
    mv.chg = scratch + item * per_item;
    mv.chash = mv.chg + 3 * n->kmax;
    mv.tc = mv.chash + mv.hk;
    mv.thash = mv.tc + n->tmax;
    mv.dq = mv.thash + mv.ht;
    mv.tfirst = mv.dq + n->dmax;
    mv.pchg = mv.tfirst + n->tmax;
    mv.plink = mv.pchg + n->tmax;
    mv.td = lscratch + item * 2L * n->tmax;
    mv.te = mv.td + n->tmax;
    mv.nchg = 0;
    mv.nt = 0;
    mv.np = 0;
    mv.null = false;
    return mv;
}

// Everything of each walk computed again from its values (the tests compare it with what the
// walk kept up to date move by move).
__kernel void adaptive_rescore(WALK_ARGS, __local long *red_key)
{
    Net n = net_of(M);
    int lid = get_local_id(0), W = get_local_size(0), wid = get_group_id(0);
    Walk w = walk_of(&n, vals, frozen, hists, sums, errs, scalars, lscalars, wid);
    Move mv = move_of(&n, scratch, lscratch, (long)wid * W + lid);
    recompute(&n, &w, &mv, red_key, lid, W);
}

// `iters`: iterations each walk makes in this launch at most; `params`: local_abi.Param;
// `red_*`: a long, a uint and an int a work-item for the group's reductions.
__kernel void adaptive(WALK_ARGS, __global int *ctl, __global const int *params, int iters,
                       __local long *red_key, __local uint *red_tie, __local int *red_idx)
{
    Net n = net_of(M);
    int lid = get_local_id(0), W = get_local_size(0), wid = get_group_id(0);
    Walk w = walk_of(&n, vals, frozen, hists, sums, errs, scalars, lscalars, wid);
    Move mv = move_of(&n, scratch, lscratch, (long)wid * W + lid);
    __local int *flag = red_idx;          // a word work-item 0 shares (reused below)
    __local XSide xside;                  // X's swap terms (gather_side)
    bool fast_swap = params[LSP_FAST_SWAP] != 0;

    if (w.sw[LSW_STATUS] == 0) {          // fresh: hash tables cleared, a random start
        for (int h = 0; h < mv.hk; ++h) mv.chash[h] = EMPTY;
        for (int h = 0; h < mv.ht; ++h) mv.thash[h] = EMPTY;
        if (lid == 0) {
            random_start(&n, &w);
            for (int i = 0; i < n.ndec; ++i) w.frozen[i] = 0;
        }
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
        recompute(&n, &w, &mv, red_key, lid, W);
        if (lid == 0) {
            w.sw[LSW_STATUS] = 1;
            w.sl[LSL_BEST] = w.sl[LSL_TOTAL];
            w.sw[LSW_ITER] = 0;
            w.sw[LSW_LAST_BEST] = 0;
        }
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    }
    for (int it = 0; it < iters; ++it) {
        if (lid == 0) {
            int stop = ctl[LSC_STOP] != 0 || w.sw[LSW_STATUS] == 2;
            if (!stop && w.sl[LSL_TOTAL] == 0) {
                solved(&w, ctl);
                stop = 1;
            }
            flag[0] = stop;
        }
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
        bool done = flag[0] != 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (done) break;
        int iter = w.sw[LSW_ITER];
        uint salt = mix32((uint)w.sw[LSW_RNG] ^ mix32((uint)iter * 0x9e3779b9U));
        // 1. the variable with the highest projected error, not frozen (ties at random)
        long best_e = -1;
        uint best_tie = 0;
        int best_i = -1, nfrozen = 0, ties = 0;
        int moves = w.sw[LSW_MOVES];
        // two variables a pass, their loads interleaved: each variable's error is a chain of
        // dependent loads (its list, the list's constraints, their errors), which one chain
        // alone leaves waiting on memory
        for (int i = lid; i < n.ndec; i += 2 * W) {
            int i2 = i + W;
            bool two = i2 < n.ndec;
            int f1 = w.frozen[i], f2 = two ? w.frozen[i2] : 0;
            int a1 = n.inf_off[i], b1 = n.inf_off[i + 1];
            int a2 = two ? n.inf_off[i2] : 0, b2 = two ? n.inf_off[i2 + 1] : 0;
            long e1 = 0, e2 = 0;
            for (int k = 0; k < max(b1 - a1, b2 - a2); ++k) {
                if (a1 + k < b1) e1 += w.err[n.inf[a1 + k]];
                if (a2 + k < b2) e2 += w.err[n.inf[a2 + k]];
            }
            for (int h = 0; h < 1 + two; ++h) {
                int v = h ? i2 : i;
                if ((h ? f2 : f1) > moves) { nfrozen++; continue; }
                long e = h ? e2 : e1;
                uint tie = mix32(salt ^ (uint)v);
                if (e > best_e) ties = 0;
                ties += e >= best_e;
                if (e > best_e || (e == best_e && tie > best_tie)) { best_e = e; best_tie = tie; best_i = v; }
            }
        }
        red_key[lid] = best_e; red_tie[lid] = best_tie; red_idx[lid] = best_i;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            for (int l = 1; l < W; ++l)
                if (red_key[l] > best_e || (red_key[l] == best_e && red_tie[l] > best_tie)) {
                    best_e = red_key[l]; best_tie = red_tie[l]; best_i = red_idx[l];
                }
            red_idx[0] = best_i;
            red_key[0] = best_e;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        int X = red_idx[0];
        long top = red_key[0];
        barrier(CLK_LOCAL_MEM_FENCE);
        // the frozen variables, and how many share the highest error, added up by work-item 0
        red_idx[lid] = nfrozen;
        red_key[lid] = best_e == top ? ties : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            int f = 0;
            long t = 0;
            for (int l = 0; l < W; ++l) { f += red_idx[l]; t += red_key[l]; }
            nfrozen = f;
            // every move of every variable not frozen, where the highest error tells nothing
            long all = (long)(n.ndec - f) * max_candidates(&n);
            red_idx[0] = (X >= 0 && t > 1 && 2 * t >= n.ndec - f && all <= params[LSP_EXHAUSTIVE]) ? 1 : 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        bool whole = red_idx[0] != 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        // X's swap terms, gathered once for all its swaps where it carries them
        int gx = X >= 0 ? n.dec_group[X] : -1;
        bool sided = fast_swap && !whole && gx >= 0 && n.g_type[gx] == LS_GROUP_PERM && n.sw_ok[X];
        if (sided) {
            if (lid == 0) gather_side(&n, &w, &xside, X, n.dec_var[X]);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        // 2. every move of X (or of every variable), side by side
        long my_delta = LONG_MAX;
        uint my_tie = 0;
        int my_cand = -1, skipped = 0;
        int per = max_candidates(&n);
        long ncand = X < 0 ? 0 : whole ? (long)n.ndec * per : candidates(&n, X);
        int cx = X >= 0 ? n.sw_class[X] : -1;
        uint csalt = mix32(salt + 0x632be5abU);
        // a whole neighbourhood larger than SAMPLE: every step-th move from a random start
        long step = 1, start = 0, count = ncand;
        if (whole && ncand > params[LSP_SAMPLE]) {
            step = ncand / params[LSP_SAMPLE];
            start = mix32(csalt ^ 0x5bd1e995U) % (uint)step;
            count = params[LSP_SAMPLE];
        }
        for (long c = lid; c < count; c += W) {
            long j = start + c * step;
            int y = whole ? (int)(j / per) : X, k = whole ? (int)(j % per) : (int)j;
            if (whole && (w.frozen[y] > moves || k >= candidates(&n, y))) continue;
            long d = LONG_MAX;
            bool null = false;
            int g = n.dec_group[y];
            if (fast_swap && g >= 0 && n.g_type[g] == LS_GROUP_PERM) {     // as candidate() refuses
                int partner = n.g_mem[n.g_off[g] + k];
                int cy = whole ? n.sw_class[y] : cx;
                if (cy >= 0 && n.sw_class[partner] == cy) continue;      // a null swap (SW_CLASS)
                int v = n.dec_var[y], u = n.dec_var[partner], a = w.val[v], b = w.val[u];
                if (u == v || a == b || w.frozen[partner] > moves) continue;
                d = sided ? swap_delta_side(&n, &w, &xside, partner, v, u, a, b, &null)
                          : swap_delta(&n, &w, y, partner, v, u, a, b, &null);
            }
            if (d == LONG_MAX) {
                if (!candidate(&n, &w, &mv, y, k, csalt, moves)) {
                    skipped += mv.nchg >= n.kmax;
                    move_clear(&mv);
                    continue;
                }
                d = evaluate(&n, &w, &mv);
                null = mv.null;
                move_clear(&mv);
                if (d == LONG_MAX) { skipped++; continue; }
            }
            if (null) continue;
            uint tie = mix32(csalt ^ (uint)j);
            if (d < my_delta || (d == my_delta && tie > my_tie)) { my_delta = d; my_tie = tie; my_cand = (int)j; }
        }
        red_key[lid] = my_delta; red_tie[lid] = my_tie; red_idx[lid] = my_cand;
        if (skipped) atomic_add(&w.sw[LSW_SKIPPED], skipped);
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        // 3. work-item 0 decides: move, freeze, reset or restart
        if (lid == 0) {
            long bd = LONG_MAX;
            uint bt = 0;
            int bc = -1;
            for (int l = 0; l < W; ++l)
                if (red_key[l] < bd || (red_key[l] == bd && red_tie[l] > bt)) { bd = red_key[l]; bt = red_tie[l]; bc = red_idx[l]; }
            // a move that lowers the error is taken; one that keeps it is taken unless the plateau
            // is treated as a local minimum (LOCAL_MIN); none that raises it
            uint r = next_rand(w.sw) % 1000u;
            bool take = bc >= 0 && (bd < 0 || (bd == 0 && r >= (uint)params[LSP_LOCAL_MIN]));
            int action = 0;                     // 0 nothing more, 1 reset, 2 restart
            if (bc >= 0 && whole) {             // the move's variable is the one moved or frozen
                X = bc / per;
                bc %= per;
            }
            if (take) {
                candidate(&n, &w, &mv, X, bc, csalt, moves);
                long d = evaluate(&n, &w, &mv);
                int partner = mv.nchg > 1 ? n.dec_of[mv.chg[3]] : -1;
                commit(&n, &w, &mv, d);
                move_clear(&mv);
                w.sw[LSW_MOVES] = ++moves;
                w.frozen[X] = moves + params[LSP_FREEZE_SWAP];
                if (partner >= 0) w.frozen[partner] = moves + params[LSP_FREEZE_SWAP];
            } else if (X >= 0) {
                w.frozen[X] = moves + params[LSP_FREEZE_LOCAL_MIN];
                if (whole || nfrozen + 1 >= params[LSP_RESET_LIMIT]) action = 1;
            }
            long total = w.sl[LSL_TOTAL];
            if (total < w.sl[LSL_BEST]) { w.sl[LSL_BEST] = total; w.sw[LSW_LAST_BEST] = iter; }
            if (total == 0) {
                solved(&w, ctl);
            } else if (iter - w.sw[LSW_LAST_BEST] > params[LSP_RESTART_ITERS]) {
                action = 2;
            }
            if (action == 1) {
                int count = max(1, n.ndec * params[whole ? LSP_RESET_PERCENT_WHOLE : LSP_RESET_PERCENT] / 100);
                for (int k = 0; k < count; ++k) randomise(&n, &w, (int)(next_rand(w.sw) % (uint)n.ndec));
                for (int i = 0; i < n.ndec; ++i) w.frozen[i] = 0;
                w.sw[LSW_RESETS]++;
            } else if (action == 2) {
                random_start(&n, &w);
                for (int i = 0; i < n.ndec; ++i) w.frozen[i] = 0;
                w.sw[LSW_RESTARTS]++;
                w.sw[LSW_LAST_BEST] = iter + 1;
                w.sl[LSL_BEST] = LONG_MAX;
            }
            w.sw[LSW_ITER] = iter + 1;
            uint lo = (uint)w.sw[LSW_ITERS_LO] + 1u;
            w.sw[LSW_ITERS_LO] = (int)lo;
            if (lo == 0u) w.sw[LSW_ITERS_HI]++;
            flag[0] = action;
        }
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
        int action = flag[0];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (action) {
            recompute(&n, &w, &mv, red_key, lid, W);
            if (lid == 0 && w.sl[LSL_TOTAL] < w.sl[LSL_BEST]) w.sl[LSL_BEST] = w.sl[LSL_TOTAL];
            barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
        }
    }
}
