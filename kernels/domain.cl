// Domains of one work-item: bounds lb/ub for every variable, plus a bitmap of 32-bit words for
// variables whose initial span is small (PHACT's representation). Bits outside [lb, ub] are
// always clear, so a domain's size is the popcount of its words.
//
// Every change goes through the functions below: they save the old domain on the trail once per
// epoch (copy-on-write), normalise bounds against the bitmap, and wake the constraints that
// watch the variable. They return CHANGED, UNCHANGED or FAILED.

// Built with -DFZN_OUTLINE (FZN_GPU_OUTLINE=1), the domain mutators and the propagators stay
// out of line: far less code for a compiler that inlines everything (NVIDIA's).
#ifdef FZN_OUTLINE
#define MUTATOR __attribute__((noinline))
#define PROPAGATOR_FN __attribute__((noinline))
#else
#define MUTATOR inline
#define PROPAGATOR_FN
#endif

#define FAILED (-1)
#define UNCHANGED 0
#define CHANGED 1

typedef struct {
    // model (read-only, shared by all work-items)
    int nv;
    __global const int *bm_off;     // first bitmap word of each variable, or -1
    __global const int *bm_nw;      // its number of words
    __global const int *base;       // the value of bit 0
    __global const int *ckind;
    __global const int *coff;
    __global const int *cd;         // constraint rows (fzn_gpu.registry encoding)
    __global const int *wptr;       // variable -> watching constraints (CSR)
    __global const int *wlist;
    // this work-item's state
    __global int *lb;
    __global int *ub;
    __global uint *bits;
    __global int *stamp;
    __global int *trail;
    int tcap;
    int ttop;
    int epoch;                      // the current search depth: the trail segment being written
    __global int *queue;
    __global uchar *inq;
    int nc;
    int qhead;
    int qlen;
    int err;                        // ERR_* when a capacity ran out
    int failed;                     // the constraint whose propagation failed last
    long props;
    int st;                         // stride between one item's consecutive entries (layout)
} Ctx;

// Per-work-item arrays are laid out either blocked (stride 1: each work-item's entries
// contiguous, best for CPU caches) or interleaved (stride = number of work-items: entry i of
// neighbouring work-items side by side, so a GPU warp's loads coalesce). Every access goes
// through these macros; the pointers are already offset to the work-item's first entry.
#define LB_(x, v) ((x)->lb[(v) * (x)->st])
#define UB_(x, v) ((x)->ub[(v) * (x)->st])
#define BITS_(x, w) ((x)->bits[(w) * (x)->st])
#define STAMP_(x, v) ((x)->stamp[(v) * (x)->st])
#define QUEUE_(x, i) ((x)->queue[(i) * (x)->st])
#define INQ_(x, c) ((x)->inq[(c) * (x)->st])
#define TRAIL_(x, i) ((x)->trail[(long)(i) * (x)->st])

#define ERR_TRAIL 1
#define ERR_DEPTH 2
#define ERR_PATH 3

#define TRAIL_FIXED 4             // ints of a trail entry besides its bitmap words

inline bool is_fixed(Ctx *x, int v) { return LB_(x, v) == UB_(x, v); }
inline int val(Ctx *x, int v) { return LB_(x, v); }
inline int dmin(Ctx *x, int v) { return LB_(x, v); }
inline int dmax(Ctx *x, int v) { return UB_(x, v); }

inline bool has_bits(Ctx *x, int v) { return x->bm_off[v] >= 0; }

inline bool bit_at(Ctx *x, int v, int value) {
    int i = value - x->base[v];
    return (BITS_(x, x->bm_off[v] + (i >> 5)) >> (i & 31)) & 1u;
}

inline bool contains(Ctx *x, int v, long value) {
    if (value < LB_(x, v) || value > UB_(x, v)) return false;
    if (!has_bits(x, v)) return true;
    return bit_at(x, v, (int)value);
}

inline long dsize(Ctx *x, int v) {
    if (!has_bits(x, v)) return (long)UB_(x, v) - (long)LB_(x, v) + 1;
    int off = x->bm_off[v], nw = x->bm_nw[v];
    long n = 0;
    for (int w = 0; w < nw; ++w) n += popcount(BITS_(x, off + w));
    return n;
}

// The smallest value >= from in the bitmap of v, or INT_MAX.
inline int next_value(Ctx *x, int v, int from) {
    int off = x->bm_off[v], nw = x->bm_nw[v], b = x->base[v];
    int i = from - b;
    if (i < 0) i = 0;
    int w = i >> 5;
    if (w >= nw) return INT_MAX;
    uint word = BITS_(x, off + w) & (0xFFFFFFFFu << (i & 31));
    while (true) {
        if (word) return b + (w << 5) + (31 - clz(word & (~word + 1u)));
        if (++w >= nw) return INT_MAX;
        word = BITS_(x, off + w);
    }
}

// The largest value <= from in the bitmap of v, or INT_MIN.
inline int prev_value(Ctx *x, int v, int from) {
    int off = x->bm_off[v], nw = x->bm_nw[v], b = x->base[v];
    int i = from - b;
    if (i >= nw * 32) i = nw * 32 - 1;
    if (i < 0) return INT_MIN;
    int w = i >> 5;
    uint word = BITS_(x, off + w) & (0xFFFFFFFFu >> (31 - (i & 31)));
    while (true) {
        if (word) return b + (w << 5) + (31 - clz(word));
        if (--w < 0) return INT_MIN;
        word = BITS_(x, off + w);
    }
}

// The trail is cut into segments, one per search depth: the entries made while the search was
// at depth d (its decision's propagation, and the right branches taken at depth d after
// backtracking there). `epoch` is the current depth, and STAMP(v) the deepest live segment
// holding an entry of v, or -1: so v is saved at most once per segment, and a chain of right
// branches at one depth (x != 1, x != 2, ... on a bounds-only domain) re-uses its entries
// instead of growing the trail without end. An entry keeps v's previous stamp, which restore
// puts back. Entries are [lb, ub, words.., old stamp, v] so that restore pops them from the top.
inline bool save(Ctx *x, int v) {
    int old = STAMP_(x, v);
    if (old == x->epoch) return true;
    int nw = has_bits(x, v) ? x->bm_nw[v] : 0;
    if (x->ttop + TRAIL_FIXED + nw > x->tcap) { x->err = ERR_TRAIL; return false; }
    int t = x->ttop;
    TRAIL_(x, t) = LB_(x, v);
    TRAIL_(x, t + 1) = UB_(x, v);
    int off = x->bm_off[v];
    for (int w = 0; w < nw; ++w) TRAIL_(x, t + 2 + w) = (int)BITS_(x, off + w);
    TRAIL_(x, t + 2 + nw) = old;
    TRAIL_(x, t + 3 + nw) = v;
    x->ttop += TRAIL_FIXED + nw;
    STAMP_(x, v) = x->epoch;
    return true;
}

inline void restore(Ctx *x, int mark) {
    while (x->ttop > mark) {
        int v = TRAIL_(x, x->ttop - 1);
        int nw = has_bits(x, v) ? x->bm_nw[v] : 0;
        x->ttop -= TRAIL_FIXED + nw;
        int t = x->ttop;
        LB_(x, v) = TRAIL_(x, t);
        UB_(x, v) = TRAIL_(x, t + 1);
        int off = x->bm_off[v];
        for (int w = 0; w < nw; ++w) BITS_(x, off + w) = (uint)TRAIL_(x, t + 2 + w);
        STAMP_(x, v) = TRAIL_(x, t + 2 + nw);
    }
}

inline void enqueue(Ctx *x, int c) {
    if (INQ_(x, c)) return;
    INQ_(x, c) = 1;
    int tail = x->qhead + x->qlen;
    if (tail >= x->nc) tail -= x->nc;
    QUEUE_(x, tail) = c;
    x->qlen += 1;
}

inline void wake(Ctx *x, int v) {
    for (int i = x->wptr[v]; i < x->wptr[v + 1]; ++i) enqueue(x, x->wlist[i]);
}

inline void clear_queue(Ctx *x) {
    while (x->qlen > 0) {
        INQ_(x, QUEUE_(x, x->qhead)) = 0;
        x->qhead = (x->qhead + 1 == x->nc) ? 0 : x->qhead + 1;
        x->qlen -= 1;
    }
}

// Clear the bits of v outside [lo, hi] (a range of the current bounds).
inline void clear_bits_outside(Ctx *x, int v, int lo, int hi) {
    int off = x->bm_off[v], nw = x->bm_nw[v], b = x->base[v];
    for (int w = 0; w < nw; ++w) {
        int w_lo = b + (w << 5), w_hi = w_lo + 31;
        uint keep = 0xFFFFFFFFu;
        if (w_hi < lo || w_lo > hi) keep = 0u;
        else {
            if (lo > w_lo) keep &= 0xFFFFFFFFu << (lo - w_lo);
            if (hi < w_hi) keep &= 0xFFFFFFFFu >> (w_hi - hi);
        }
        BITS_(x, off + w) &= keep;
    }
}

MUTATOR int set_min(Ctx *x, int v, long m) {
    if (m <= LB_(x, v)) return UNCHANGED;
    if (m > UB_(x, v)) return FAILED;
    if (!save(x, v)) return FAILED;
    int nm = (int)m;
    if (has_bits(x, v)) {
        nm = next_value(x, v, nm);
        if (nm > UB_(x, v)) return FAILED;
        clear_bits_outside(x, v, nm, UB_(x, v));
    }
    LB_(x, v) = nm;
    wake(x, v);
    return CHANGED;
}

MUTATOR int set_max(Ctx *x, int v, long m) {
    if (m >= UB_(x, v)) return UNCHANGED;
    if (m < LB_(x, v)) return FAILED;
    if (!save(x, v)) return FAILED;
    int nm = (int)m;
    if (has_bits(x, v)) {
        nm = prev_value(x, v, nm);
        if (nm < LB_(x, v)) return FAILED;
        clear_bits_outside(x, v, LB_(x, v), nm);
    }
    UB_(x, v) = nm;
    wake(x, v);
    return CHANGED;
}

MUTATOR int fix(Ctx *x, int v, long value) {
    if (!contains(x, v, value)) return FAILED;
    if (LB_(x, v) == UB_(x, v)) return UNCHANGED;
    if (!save(x, v)) return FAILED;
    if (has_bits(x, v)) clear_bits_outside(x, v, (int)value, (int)value);
    LB_(x, v) = (int)value;
    UB_(x, v) = (int)value;
    wake(x, v);
    return CHANGED;
}

// Remove one value. Without a bitmap only a bound can move (bounds reasoning).
MUTATOR int remove_value(Ctx *x, int v, long value) {
    if (value < LB_(x, v) || value > UB_(x, v)) return UNCHANGED;
    if (LB_(x, v) == UB_(x, v)) return FAILED;
    if (has_bits(x, v)) {
        if (!bit_at(x, v, (int)value)) return UNCHANGED;
        if (!save(x, v)) return FAILED;
        int i = (int)value - x->base[v];
        BITS_(x, x->bm_off[v] + (i >> 5)) &= ~(1u << (i & 31));
        if (value == LB_(x, v)) LB_(x, v) = next_value(x, v, (int)value);
        else if (value == UB_(x, v)) UB_(x, v) = prev_value(x, v, (int)value);
        wake(x, v);
        return CHANGED;
    }
    if (value == LB_(x, v)) return set_min(x, v, value + 1);
    if (value == UB_(x, v)) return set_max(x, v, value - 1);
    return UNCHANGED;
}

// After words of v's bitmap were cleared (v saved on the trail): bounds to the bitmap, wake.
inline int bits_changed(Ctx *x, int v) {
    int nl = next_value(x, v, LB_(x, v));
    if (nl > UB_(x, v)) return FAILED;      // emptied: the caller backtracks, the trail restores
    LB_(x, v) = nl;
    UB_(x, v) = prev_value(x, v, UB_(x, v));
    wake(x, v);
    return CHANGED;
}

// Bits s..s+31 of a bitmask of mw words (bits outside it read as 0); s may be negative.
inline uint mask_bits32(const uint *mask, int mw, long s) {
    long wi = s >> 5;                       // floor(s / 32)
    int sh = (int)(s & 31);
    uint a = (wi >= 0 && wi < mw) ? mask[wi] : 0u;
    uint b = (wi + 1 >= 0 && wi + 1 < mw) ? mask[wi + 1] : 0u;
    return sh ? (a >> sh) | (b << (32 - sh)) : a;
}

// Remove from v every value lo + i whose bit i is set in mask[0..mw): whole words at a time on
// a bitmap, bound by bound without one (bounds reasoning).
MUTATOR int remove_mask(Ctx *x, int v, const uint *mask, int mw, long lo) {
    if (!has_bits(x, v)) {
        int r = UNCHANGED;
        while (LB_(x, v) <= UB_(x, v)) {
            long i = (long)LB_(x, v) - lo;
            if (i < 0 || i >= 32L * mw || !((mask[i >> 5] >> (i & 31)) & 1u)) break;
            if (set_min(x, v, (long)LB_(x, v) + 1) == FAILED) return FAILED;
            r = CHANGED;
        }
        while (true) {
            long i = (long)UB_(x, v) - lo;
            if (i < 0 || i >= 32L * mw || !((mask[i >> 5] >> (i & 31)) & 1u)) break;
            if (set_max(x, v, (long)UB_(x, v) - 1) == FAILED) return FAILED;
            r = CHANGED;
        }
        return r;
    }
    int off = x->bm_off[v], nw = x->bm_nw[v];
    long b = x->base[v];
    bool changed = false;
    for (int w = 0; w < nw; ++w) {
        uint m = mask_bits32(mask, mw, b + 32 * w - lo);
        uint cur = BITS_(x, off + w);
        if (!(cur & m)) continue;
        if (!changed && !save(x, v)) return FAILED;
        changed = true;
        BITS_(x, off + w) = cur & ~m;
    }
    return changed ? bits_changed(x, v) : UNCHANGED;
}

// Bits s..s+31 of v's bitmap (bits outside it read as 0); s may be negative.
inline uint var_bits32(Ctx *x, int v, long s) {
    int off = x->bm_off[v], nw = x->bm_nw[v];
    long wi = s >> 5;
    int sh = (int)(s & 31);
    uint a = (wi >= 0 && wi < nw) ? BITS_(x, off + (int)wi) : 0u;
    uint b = (wi + 1 >= 0 && wi + 1 < nw) ? BITS_(x, off + (int)wi + 1) : 0u;
    return sh ? (a >> sh) | (b << (32 - sh)) : a;
}

// Keep in y (a bitmap variable) only the values v with v + d in the domain of z (a bitmap
// variable too): y = z - d, domain consistent, a word at a time.
MUTATOR int keep_shifted(Ctx *x, int y, int z, long d) {
    int off = x->bm_off[y], nw = x->bm_nw[y];
    long s0 = (long)x->base[y] + d - x->base[z];
    bool changed = false;
    for (int w = 0; w < nw; ++w) {
        uint cur = BITS_(x, off + w);
        if (!cur) continue;
        uint keep = cur & var_bits32(x, z, s0 + 32 * w);
        if (keep == cur) continue;
        if (!changed && !save(x, y)) return FAILED;
        changed = true;
        BITS_(x, off + w) = keep;
    }
    return changed ? bits_changed(x, y) : UNCHANGED;
}

// Combine results: any FAILED wins.
#define TRY(e) do { if ((e) == FAILED) return false; } while (0)
