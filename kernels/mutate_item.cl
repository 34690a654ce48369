// The mutators of the one-work-item-per-sub-search-space model: the old domain goes on the
// work-item's trail before the first change of each search depth, and a change queues the
// constraints that watch the variable.

// The trail is cut into segments, one per search depth: the entries made while the search was
// at depth d (its decision's propagation, and the right branches taken at depth d after
// backtracking there). `epoch` is the current depth, and STAMP(v) the deepest live segment
// holding an entry of v, or -1: so v is saved at most once per segment, and a chain of right
// branches at one depth (x != 1, x != 2, ... on a bounds-only domain) re-uses its entries
// instead of growing the trail without end. An entry keeps v's previous stamp, which restore
// puts back. Entries are [lb, ub, words.., old stamp, v] so that restore pops them from the top.
// The ints of v's entry besides TRAIL_FIXED: its bitmap words, or a float's two ordinals.
inline int entry_words(Ctx *x, int v) { return has_bits(x, v) ? M_BM_NW(x, v) : (is_float(x, v) ? 4 : 0); }

inline bool save(Ctx *x, int v) {
    int old = STAMP_(x, v);
    if (old == x->epoch) return true;
    int nw = entry_words(x, v);
    if (x->ttop + TRAIL_FIXED + nw > x->tcap) { x->err = ERR_TRAIL; return false; }
    int t = x->ttop;
    TRAIL_(x, t) = LB_(x, v);
    TRAIL_(x, t + 1) = UB_(x, v);
    if (has_bits(x, v)) {
        int off = M_BM_OFF(x, v);
        for (int w = 0; w < nw; ++w) TRAIL_(x, t + 2 + w) = (int)BITS_(x, off + w);
    } else if (nw) {                     // a float: its two ordinals as four ints
        int f = 2 * M_FSLOT(x, v);
        for (int k = 0; k < 2; ++k) {
            long o = FB_(x, f + k);
            TRAIL_(x, t + 2 + 2 * k) = (int)o;
            TRAIL_(x, t + 3 + 2 * k) = (int)(o >> 32);
        }
    }
    TRAIL_(x, t + 2 + nw) = old;
    TRAIL_(x, t + 3 + nw) = v;
    x->ttop += TRAIL_FIXED + nw;
    STAMP_(x, v) = x->epoch;
    return true;
}

inline void restore(Ctx *x, int mark) {
    while (x->ttop > mark) {
        int v = TRAIL_(x, x->ttop - 1);
        int nw = entry_words(x, v);
        x->ttop -= TRAIL_FIXED + nw;
        int t = x->ttop;
        LB_(x, v) = TRAIL_(x, t);
        UB_(x, v) = TRAIL_(x, t + 1);
        if (has_bits(x, v)) {
            int off = M_BM_OFF(x, v);
            for (int w = 0; w < nw; ++w) BITS_(x, off + w) = (uint)TRAIL_(x, t + 2 + w);
        } else if (nw) {
            int f = 2 * M_FSLOT(x, v);
            for (int k = 0; k < 2; ++k)
                FB_(x, f + k) = (long)(uint)TRAIL_(x, t + 2 + 2 * k) | ((long)TRAIL_(x, t + 3 + 2 * k) << 32);
        }
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

// v changed (`moved`: a bound of it too): the constraints its change wakes go on the queue.
inline void wake(Ctx *x, int v, bool moved) {
    for (int i = M_WPTR(x, v); i < M_WPTR(x, v + 1); ++i) {
        int e = M_WLIST(x, i);
        if (wakes(x, e, v, moved)) enqueue(x, watcher(e));
    }
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
    int off = M_BM_OFF(x, v), nw = M_BM_NW(x, v), b = M_BASE(x, v);
    for (int w = 0; w < nw; ++w) BITS_(x, off + w) &= keep_mask(b, w, lo, hi);
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
    wake(x, v, true);
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
    wake(x, v, true);
    return CHANGED;
}

MUTATOR int fix(Ctx *x, int v, long value) {
    if (!contains(x, v, value)) return FAILED;
    if (LB_(x, v) == UB_(x, v)) return UNCHANGED;
    if (!save(x, v)) return FAILED;
    if (has_bits(x, v)) clear_bits_outside(x, v, (int)value, (int)value);
    LB_(x, v) = (int)value;
    UB_(x, v) = (int)value;
    wake(x, v, true);
    return CHANGED;
}

// Remove one value. Without a bitmap only a bound can move (bounds reasoning).
MUTATOR int remove_value(Ctx *x, int v, long value) {
    if (value < LB_(x, v) || value > UB_(x, v)) return UNCHANGED;
    if (LB_(x, v) == UB_(x, v)) return FAILED;
    if (has_bits(x, v)) {
        if (!bit_at(x, v, (int)value)) return UNCHANGED;
        if (!save(x, v)) return FAILED;
        int i = (int)value - M_BASE(x, v);
        BITS_(x, M_BM_OFF(x, v) + (i >> 5)) &= ~(1u << (i & 31));
        bool moved = value == LB_(x, v) || value == UB_(x, v);
        if (value == LB_(x, v)) LB_(x, v) = next_value(x, v, (int)value);
        else if (value == UB_(x, v)) UB_(x, v) = prev_value(x, v, (int)value);
        wake(x, v, moved);
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
    int nu = prev_value(x, v, UB_(x, v));
    bool moved = nl != LB_(x, v) || nu != UB_(x, v);
    LB_(x, v) = nl;
    UB_(x, v) = nu;
    wake(x, v, moved);
    return CHANGED;
}

// Keep only the bits `keep` of word w of v's bitmap (v saved on the trail before its first
// change at this node: *changed says whether one came before); FAILED when the trail is full.
inline int and_word(Ctx *x, int v, int w, uint keep, bool *changed) {
    uint cur = BITS_(x, w);
    if ((cur & keep) == cur) return UNCHANGED;
    if (!*changed && !save(x, v)) return FAILED;
    *changed = true;
    BITS_(x, w) = cur & keep;
    return CHANGED;
}

// Float bounds (ordinals, floats.cl): narrowed like int bounds, trailed the same way.
#ifdef FZN_FLOATS
MUTATOR int fset_lo(Ctx *x, int v, long o) {
    int f = 2 * M_FSLOT(x, v);
    if (o <= FB_(x, f)) return UNCHANGED;
    if (o > FB_(x, f + 1)) return FAILED;
    if (!save(x, v)) return FAILED;
    FB_(x, f) = o;
    wake(x, v, true);
    return CHANGED;
}

MUTATOR int fset_hi(Ctx *x, int v, long o) {
    int f = 2 * M_FSLOT(x, v);
    if (o >= FB_(x, f + 1)) return UNCHANGED;
    if (o < FB_(x, f)) return FAILED;
    if (!save(x, v)) return FAILED;
    FB_(x, f + 1) = o;
    wake(x, v, true);
    return CHANGED;
}
#endif
