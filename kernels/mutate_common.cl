// Mutators built on either execution model's set_min / set_max / and_word / bits_changed
// (mutate_item.cl or mutate_group.cl, whichever precedes this file).

#ifndef FZN_NARROW      // narrow domains have their own (mutate_group.cl)
// remove_mask on a bitmap variable: whole words at a time.
MUTATOR int remove_mask_bits(Ctx *x, int v, const uint *mask, int mw, long lo) {
    int off = M_BM_OFF(x, v), nw = M_BM_NW(x, v);
    long b = M_BASE(x, v);
    bool changed = false;
    for (int w = 0; w < nw; ++w)
        if (and_word(x, v, off + w, ~mask_bits32(mask, mw, b + 32 * w - lo), &changed) == FAILED) return FAILED;
    return changed ? bits_changed(x, v) : UNCHANGED;
}
#endif

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
    return remove_mask_bits(x, v, mask, mw, lo);
}

#ifndef FZN_NARROW
// Keep in y (a bitmap variable) only the values v with v + d in the domain of z (a bitmap
// variable too): y = z - d, domain consistent, a word at a time.
MUTATOR int keep_shifted(Ctx *x, int y, int z, long d) {
    int off = M_BM_OFF(x, y), nw = M_BM_NW(x, y);
    long s0 = (long)M_BASE(x, y) + d - M_BASE(x, z);
    bool changed = false;
    for (int w = 0; w < nw; ++w) {
        if (!BITS_(x, off + w)) continue;
        if (and_word(x, y, off + w, var_bits32(x, z, s0 + 32 * w), &changed) == FAILED) return FAILED;
    }
    return changed ? bits_changed(x, y) : UNCHANGED;
}
#endif
