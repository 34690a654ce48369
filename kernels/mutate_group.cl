// The mutators of the one-work-group-per-sub-search-space model. The group's work-items run
// woken constraints side by side on one node, so every change is an atomic, monotone update (a
// bound only moves inwards, a bitmap only loses bits): their order does not matter, and a
// propagator that reads a domain while another work-item narrows it sees a superset of the
// final domain, from which its deductions stay sound. A change marks its variable in the
// group's changed set, which wakes the watching constraints for the next pass. Between two
// passes the group brings the changed variables' bounds and bitmaps back into agreement and
// checks them for wipe-outs (settle() in search_group.cl): a mutator's own FAILED is an early
// exit, never the only report of a failure.

// A barrier of the group. With the node in local memory, what work-items share through global
// memory is each one's own slice (stack, saved node) or work-item 0's alone (levels, path), so
// a local fence does; with the node in global memory the fence covers global memory too.
#ifdef FZN_STORE_GLOBAL
inline void sync_group(void) { barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE); }
#else
inline void sync_group(void) { barrier(CLK_LOCAL_MEM_FENCE); }
#endif

// The smallest of the group's values `v`, for every work-item. NVIDIA (FZN_WARP_PTX, a group
// of one warp: KEYED_GROUP): one instruction (redux.sync, compute capability 8.0 on). Else
// (FZN_KEYED_CHOICE, which tests build the portable choice with) through local memory `red`.
#ifdef FZN_WARP_PTX
#define KEYED_GROUP(w) ((w) == 32)
inline uint group_min(uint v, __local uint *red, int lid, int w) {
    uint r;
    asm volatile("redux.sync.min.u32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(v));
    return r;
}
#else
#define KEYED_GROUP(w) true
inline uint group_min(uint v, __local uint *red, int lid, int w) {
    red[lid] = v;
    sync_group();
    uint m = UINT_MAX;
    for (int k = 0; k < w; ++k) m = min(m, red[k]);
    sync_group();                       // all have read before `red` is written again
    return m;
}
#endif

// Segments: the lanes of a warp that run parts of one constraint side by side in a pass (a
// part a lane), found at run time and reduced over, so that the parts share one reading of the
// constraint (prop_alldifferent.cl). NVIDIA (FZN_WARP_PTX): `seg_of(key)` is the mask
// of the lanes running now with the same key (activemask, then match.any.sync), and each
// reduction one redux.sync over that mask. Whatever lanes a segment holds, each reads the
// variables k, k + s, ... (k its rank, s the segment's size), so a constraint whose parts were
// split across two rounds of the pass, or across lanes that the warp runs apart, still reads
// every variable in each segment. Elsewhere (FZN_SOLO_SEGMENTS, the same code for the tests on
// PoCL) every lane is a segment of one and reads them all.
#ifdef FZN_WARP_PTX
#define SEGMENTS 1
inline uint seg_of(uint key) {
    uint active, seg;
    asm volatile("activemask.b32 %0;" : "=r"(active));
    asm volatile("match.any.sync.b32 %0, %1, %2;" : "=r"(seg) : "r"(key), "r"(active));
    return seg;
}
inline int seg_rank(uint seg) {
    uint below;
    asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(below));
    return popcount(seg & below);
}
// one redux.sync over the segment's lanes
#define SEG_REDUX(NAME, TYPE, OP) \
    inline TYPE NAME(TYPE v, uint seg) { \
        TYPE r; \
        asm volatile("redux.sync." OP " %0, %1, %2;" : "=r"(r) : "r"(v), "r"(seg)); \
        return r; \
    }
SEG_REDUX(seg_min, int, "min.s32")
SEG_REDUX(seg_max, int, "max.s32")
SEG_REDUX(seg_add, int, "add.s32")
SEG_REDUX(seg_or, uint, "or.b32")
#elif defined(FZN_SOLO_SEGMENTS)
#define SEGMENTS 1
inline uint seg_of(uint key) { return 1u; }
inline int seg_rank(uint seg) { return 0; }
inline int seg_min(int v, uint seg) { return v; }
inline int seg_max(int v, uint seg) { return v; }
inline int seg_add(int v, uint seg) { return v; }
inline uint seg_or(uint v, uint seg) { return v; }
#endif

// v changed: the first change of a pass lists it, for settle() to share out among the group.
// `moved`: a bound of v moved (the second half of the changed set: what wakes WAKE_BND).
inline void mark(Ctx *x, int v, bool moved) {
    uint bit = 1u << (v & 31);
    if (moved) atomic_or(&x->changed[((x->nv + 31) >> 5) + (v >> 5)], bit);
    if (!(atomic_or(&x->changed[v >> 5], bit) & bit)) x->clist[atomic_inc(x->nchanged)] = v;
}

inline int wipe_out(Ctx *x) {
    *x->failed = 1;
    return FAILED;
}

#ifdef FZN_NARROW
// Narrow domains (domain.cl): every change is v's word ANDed with `keep`. CHANGED marks v,
// moved when its least or greatest value went with the bits this call cleared (bits another
// work-item cleared are that one's to mark).
inline int keep_bits(Ctx *x, int v, uint keep) {
    uint cur = BITS_(x, v);
    if ((cur & keep) == cur) return UNCHANGED;
    if (!(cur & keep)) return wipe_out(x);
    uint old = atomic_and(&BITS_(x, v), keep), now = old & keep;
    if (now == old) return UNCHANGED;
    if (!now) return wipe_out(x);
    mark(x, v, low_bit(now) != low_bit(old) || clz(now) != clz(old));
    return CHANGED;
}

MUTATOR int set_min(Ctx *x, int v, long m) {
    if (m <= dmin(x, v)) return UNCHANGED;
    if (m > dmax(x, v)) return wipe_out(x);
    return keep_bits(x, v, 0xFFFFFFFFu << (int)(m - M_BASE(x, v)));       // 1..31: dmin < m <= dmax
}

MUTATOR int set_max(Ctx *x, int v, long m) {
    if (m >= dmax(x, v)) return UNCHANGED;
    if (m < dmin(x, v)) return wipe_out(x);
    return keep_bits(x, v, 0xFFFFFFFFu >> (31 - (int)(m - M_BASE(x, v))));   // 0..30: dmin <= m < dmax
}

MUTATOR int fix(Ctx *x, int v, long value) {
    if (!contains(x, v, value)) return wipe_out(x);
    return keep_bits(x, v, 1u << (int)(value - M_BASE(x, v)));
}

MUTATOR int remove_value(Ctx *x, int v, long value) {
    if (!contains(x, v, value)) return UNCHANGED;
    return keep_bits(x, v, ~(1u << (int)(value - M_BASE(x, v))));
}

// remove_mask on v's word: the values lo + i whose bit i is set in mask[0..mw) leave it.
MUTATOR int remove_mask_bits(Ctx *x, int v, const uint *mask, int mw, long lo) {
    return keep_bits(x, v, ~mask_bits32(mask, mw, (long)M_BASE(x, v) - lo));
}

// y = z - d, domain consistent: y keeps the values v with v + d in z's domain.
MUTATOR int keep_shifted(Ctx *x, int y, int z, long d) {
    return keep_bits(x, y, var_bits32(x, z, (long)M_BASE(x, y) + d - M_BASE(x, z)));
}
#else
// Clear the bits of v outside [lo, hi], touching only the words that hold such bits.
inline void clear_outside(Ctx *x, int v, int lo, int hi) {
    int off = M_BM_OFF(x, v), nw = M_BM_NW(x, v), b = M_BASE(x, v);
    for (int w = 0; w < nw; ++w) {
        uint keep = keep_mask(b, w, lo, hi);
        if (BITS_(x, off + w) & ~keep) atomic_and(&BITS_(x, off + w), keep);
    }
}

MUTATOR int set_min(Ctx *x, int v, long m) {
    if (m <= LB_(x, v)) return UNCHANGED;
    if (m > UB_(x, v)) return wipe_out(x);
    int nm = (int)m;
    if (has_bits(x, v)) {
        nm = next_value(x, v, nm);
        if (nm > UB_(x, v)) return wipe_out(x);
        clear_outside(x, v, nm, INT_MAX);
    }
    if (atomic_max(&LB_(x, v), nm) >= nm) return UNCHANGED;
    mark(x, v, true);
    return CHANGED;
}

MUTATOR int set_max(Ctx *x, int v, long m) {
    if (m >= UB_(x, v)) return UNCHANGED;
    if (m < LB_(x, v)) return wipe_out(x);
    int nm = (int)m;
    if (has_bits(x, v)) {
        nm = prev_value(x, v, nm);
        if (nm < LB_(x, v)) return wipe_out(x);
        clear_outside(x, v, INT_MIN, nm);
    }
    if (atomic_min(&UB_(x, v), nm) <= nm) return UNCHANGED;
    mark(x, v, true);
    return CHANGED;
}

MUTATOR int fix(Ctx *x, int v, long value) {
    if (!contains(x, v, value)) return wipe_out(x);
    if (LB_(x, v) == UB_(x, v)) return UNCHANGED;
    if (has_bits(x, v)) clear_outside(x, v, (int)value, (int)value);
    atomic_max(&LB_(x, v), (int)value);
    atomic_min(&UB_(x, v), (int)value);
    mark(x, v, true);
    return CHANGED;
}

// Remove one value. Without a bitmap only a bound can move (bounds reasoning).
MUTATOR int remove_value(Ctx *x, int v, long value) {
    if (value < LB_(x, v) || value > UB_(x, v)) return UNCHANGED;
    if (LB_(x, v) == UB_(x, v)) return wipe_out(x);
    if (has_bits(x, v)) {
        int i = (int)value - M_BASE(x, v);
        uint bit = 1u << (i & 31);
        if (!(atomic_and(&BITS_(x, M_BM_OFF(x, v) + (i >> 5)), ~bit) & bit)) return UNCHANGED;
        bool moved = false;
        if (value == LB_(x, v)) {
            int n = next_value(x, v, (int)value);
            if (n > UB_(x, v)) return wipe_out(x);
            moved = atomic_max(&LB_(x, v), n) < n;
        }
        if (value == UB_(x, v)) {
            int p = prev_value(x, v, (int)value);
            if (p < LB_(x, v)) return wipe_out(x);
            moved |= atomic_min(&UB_(x, v), p) > p;
        }
        mark(x, v, moved);
        return CHANGED;
    }
    if (value == LB_(x, v)) return set_min(x, v, value + 1);
    if (value == UB_(x, v)) return set_max(x, v, value - 1);
    return UNCHANGED;
}

// After words of v's bitmap were cleared: bounds to the bitmap, mark.
inline int bits_changed(Ctx *x, int v) {
    int nl = next_value(x, v, LB_(x, v));
    if (nl > UB_(x, v)) return wipe_out(x);
    bool moved = atomic_max(&LB_(x, v), nl) < nl;
    int nu = prev_value(x, v, UB_(x, v));
    if (nu < LB_(x, v)) return wipe_out(x);
    moved |= atomic_min(&UB_(x, v), nu) > nu;
    mark(x, v, moved);
    return CHANGED;
}

// Keep only the bits `keep` of word w of v's bitmap, atomically (other work-items may narrow
// the same word); *changed is set when a bit went.
inline int and_word(Ctx *x, int v, int w, uint keep, bool *changed) {
    uint cur = BITS_(x, w);
    if ((cur & keep) == cur) return UNCHANGED;
    atomic_and(&BITS_(x, w), keep);
    *changed = true;
    return CHANGED;
}
#endif
