// Depth-first search with propagation, one sub-search space at a time per work-group (Turbo's
// design, kept event-driven): the group's work-items share one node, its domains in local
// memory, and run its propagation together.
//
// Propagation runs in passes. A pass runs every constraint woken by the previous one, spread
// over the group's work-items; their changes are atomic and monotone (mutate_group.cl) and mark
// the changed variables. Between passes, settle() brings each changed variable's bounds and
// bitmap back into agreement, fails the node on a wipe-out, and collects the constraints that
// watch it into the next pass's list (once each). The fixpoint is a pass that changed nothing.
//
// Backtracking copies: before each left decision the node's store (lower bounds, upper
// bounds, bitmap words: one array; with narrow domains the words alone, domain.cl) goes to
// the group's stack in global memory, and coming back copies it in again, every work-item a
// slice of it. The stack holds the first `slevels` levels (the host sizes it so that the
// device's memory holds enough groups: a big model's worst-case depth times its node would let
// a few groups run); a deeper level is recomputed from the deepest copy by replaying the
// path's decisions from there, each propagated.
// Everything else (sub-search spaces taken from a shared counter, paths replayed, levels and
// their exact right branches, expansion at a cutoff, donations for re-splitting, solution
// slots, branch and bound, LNS node limits and results) works as in the one-work-item kernel
// (search.cl), decided by work-item 0 and shared through local memory.

// local control words (L_ctl)
#define L_BCAST 0       // a value work-item 0 shares with the group
#define L_OP 1
#define L_VAL 2
#define L_FAILED 3      // a wipe-out in this pass
#define L_COUNT 4       // L_COUNT + k: the length of active list k (two, used in turn)
#define L_ERR 6
#define L_NCHANGED 7    // variables listed as changed in this pass (Ctx.clist)
#define L_VAL_HI 8      // a shared decision value's high word
#define L_LATE 9        // the slice's time is up (work-item 0 reads the clock: t_end)
#define L_GCOUNT 10     // L_GCOUNT + k: the length of active list k's rows run by the whole group
#define L_CTL 12

// Work-item 0's `value` for the whole group. Between two barriers no work-item writes a local
// word that another reads: the barrier after the read lets the word be reused at once.
inline int share(__local int *ctl, int k, int value, int lid) {
    if (lid == 0) ctl[k] = value;
    sync_group();
    int v = ctl[k];
    sync_group();
    return v;
}

// Store <-> global copies, every work-item a slice.
inline void store_from(STORE int *dst, __global const int *src, int n, int lid, int w) {
    for (int i = lid; i < n; i += w) dst[i] = src[i];
}
inline void store_to(__global int *dst, STORE const int *src, int n, int lid, int w) {
    for (int i = lid; i < n; i += w) dst[i] = src[i];
}

// After a pass: every changed variable (the list the mutators made, shared out among the group)
// gets its bounds onto its bitmap and bits outside its bounds cleared, the node fails if one is
// empty, and with `wake` the constraints watching it go on the next list (queued: a bit per
// constraint): its parts from the bottom of `next`, counted in ctl[count_slot], or, for a row
// the whole group walks (cparts -m, its current work at least m: propagators_group.cl), the
// constraint from the top of `next` down, counted in ctl[count_slot + L_GCOUNT - L_COUNT]. No
// mutator runs meanwhile; the list's length is reset before the next pass.
void settle(Ctx *x, bool wake, STORE int *next, __local uint *queued, __local int *ctl, int count_slot,
            int lid, int w) {
    int n = *x->nchanged;
    for (int i = lid; i < n; i += w) {
        int v = x->clist[i];
        uint bit = 1u << (v & 31);
        atomic_and(&x->changed[v >> 5], ~bit);
        bool moved = atomic_and(&x->changed[((x->nv + 31) >> 5) + (v >> 5)], ~bit) & bit;
#ifdef FZN_NARROW
        if (!BITS_(x, v)) { ctl[L_FAILED] = 1; continue; }    // the word is the whole domain
#else
        int lo = LB_(x, v), hi = UB_(x, v);
        if (lo > hi) { ctl[L_FAILED] = 1; continue; }
        if (has_bits(x, v)) {
            int nl = next_value(x, v, lo);
            if (nl > hi) { ctl[L_FAILED] = 1; continue; }
            int nu = prev_value(x, v, hi);
            int off = M_BM_OFF(x, v), nw = M_BM_NW(x, v), b = M_BASE(x, v);
            for (int k = 0; k < nw; ++k) BITS_(x, off + k) &= keep_mask(b, k, nl, nu);
            LB_(x, v) = nl;
            UB_(x, v) = nu;
            moved |= nl != lo || nu != hi;
        }
#endif
        if (!wake) continue;
        for (int k = M_WPTR(x, v); k < M_WPTR(x, v + 1); ++k) {
            int e = M_WLIST(x, k);
            if (!wakes(x, e, v, moved)) continue;
            int c = watcher(e);
            uint cbit = 1u << (c & 31);
            if (atomic_or(&queued[c >> 5], cbit) & cbit) continue;
            int parts = M_CPARTS(x, c);                       // its parts, side by side in the list
            if (parts < 0 && group_work(x, c) >= -parts) {
                next[x->nu - 1 - atomic_inc(&ctl[count_slot + L_GCOUNT - L_COUNT])] = c;
                continue;
            }
            parts = max(parts, 1);
            int at = atomic_add(&ctl[count_slot], parts);
            for (int p = 0; p < parts; ++p) next[at + p] = c | (p << PART_SHIFT);
        }
    }
}

// A failed node leaves constraints queued and variables marked: clear both for the next one.
inline void clear_marks(Ctx *x, __local uint *queued, __local int *ctl, int lid, int w) {
    for (int k = lid; k < 2 * ((x->nv + 31) >> 5); k += w) x->changed[k] = 0u;     // changed, moved
    for (int k = lid; k < ((x->nc + 31) >> 5); k += w) queued[k] = 0u;
    if (lid == 0) ctl[L_NCHANGED] = 0;
}

// The bookkeeping of a long row's propagation, by the one work-item that counts it: off the
// queue, a propagation, a failure's weight (dom_w_deg).
inline void long_row_done(Ctx *x, int c, bool all, bool ok, __local uint *queued, __global int *weights,
                          int use_weights) {
    if (!all) atomic_and(&queued[c >> 5], ~(1u << (c & 31)));
    x->props += 1;
    if (!ok && use_weights) atomic_inc(&weights[c]);
}

// Propagate the node to a fixpoint, the whole group together: 1 at the fixpoint, 0 on a
// wipe-out, -1 when `limit` passes ran first (the slice's budget: bounds that move by one a
// pass on a huge domain would hold the slice for billions of passes; the node is left as
// narrowed so far and its propagation resumes, every constraint woken, in the next slice).
// `all`: the first pass runs every constraint whole (a sub-search space's root), else those
// watching the variables changed since the last fixpoint, a constraint shared out over
// several work-items (cparts) as that many entries c | p << PART_SHIFT, and after them the rows
// the whole group walks together, one at a time (propagators_group.cl), the first pass's too.
// `passes` counts the passes run.
// `t_end` (work-item 0's; 0: none): past the floor of passes, the slice's clock stops it too.
int fixpoint(Ctx *x, bool all, STORE int *act, __local uint *queued, __local int *ctl,
             __global int *weights, int use_weights, int *passes, int limit, ulong t_end, ulong *ticks, int lid,
             int w) {
    int nc = x->nc, nu = x->nu, cur = 0;
    if (lid == 0) { ctl[L_COUNT] = all ? nc : 0; ctl[L_GCOUNT] = 0; ctl[L_LATE] = 0; }
    sync_group();
    settle(x, !all, act, queued, ctl, L_COUNT, lid, w);
    if (all) {
        for (int c = lid; c < nc; c += w) {
            act[c] = c;
            if (M_CPARTS(x, c) < 0) act[nu - 1 - atomic_inc(&ctl[L_GCOUNT])] = c;
        }
    }
    sync_group();
    while (true) {
        // every work-item reads the flag and the counts before any may write them again
        bool failed = ctl[L_FAILED], late = ctl[L_LATE];
        int n = ctl[L_COUNT + cur], ng = ctl[L_GCOUNT + cur];
        if (lid == 0) ctl[L_NCHANGED] = 0;          // settle has read it: a fresh list for this pass
        sync_group();
        if (failed || *passes >= limit || late) {
            clear_marks(x, queued, ctl, lid, w);
            sync_group();
            return failed ? 0 : -1;
        }
        if (n == 0 && ng == 0) return 1;
        *passes += 1;
        x->passes += 1;
        PROF_START(t_pass);
        STORE int *list = act + cur * x->nu, *next = act + (1 - cur) * x->nu;
        if (lid == 0) { ctl[L_COUNT + 1 - cur] = 0; ctl[L_GCOUNT + 1 - cur] = 0; }
        for (int i = lid; i < n; i += w) {
            int e = list[i], c = e & ((1 << PART_SHIFT) - 1), p = e >> PART_SHIFT;
            if (all && M_CPARTS(x, c) < 0) continue;       // on the group's list, below
            if (!all && p == 0) atomic_and(&queued[c >> 5], ~(1u << (c & 31)));
            x->props += p == 0;
            PROF_START(t_call);
            bool ok = all ? propagate_one(x, c) : propagate_part(x, c, p, M_CPARTS(x, c));
            PROF_KIND(x->kprof, M_CKIND(x, c), t_call);
            if (!ok) {
                ctl[L_FAILED] = 1;
                if (use_weights) atomic_inc(&weights[c]);       // dom_w_deg
            }
        }
        // The long rows: one at a time by the whole group while they are few, else side by side
        // as the others (a first pass's every row, or most of a model's rows woken at once).
        // Two loops: PoCL needs a loop holding a barrier to run the same times on every
        // work-item, and the side-by-side one does not.
        if (ng <= w / 2) {
            for (int k = 0; k < ng; ++k) {
                int c = list[nu - 1 - k];
                PROF_START(t_call);
                bool ok = propagate_group(x, c, x->red, lid, w);
                if (lid == 0) {
                    PROF_KIND(x->kprof, M_CKIND(x, c), t_call);
                    long_row_done(x, c, all, ok, queued, weights, use_weights);
                }
                if (!ok) ctl[L_FAILED] = 1;
            }
        } else {
            for (int k = lid; k < ng; k += w) {
                int c = list[nu - 1 - k];
                PROF_START(t_call);
                bool ok = propagate_one(x, c);
                PROF_KIND(x->kprof, M_CKIND(x, c), t_call);
                long_row_done(x, c, all, ok, queued, weights, use_weights);
                if (!ok) ctl[L_FAILED] = 1;
            }
        }
        all = false;
        sync_group();
        PROF_ADD(x->t_prop, t_pass);
        PROF_START(t_settle);
        settle(x, true, next, queued, ctl, L_COUNT + 1 - cur, lid, w);
#ifdef FZN_SLICE_CLOCK
        if (lid == 0 && t_end && *passes >= FZN_PROP_FLOOR) ctl[L_LATE] = slice_ns(ticks) >= t_end;
#endif
        sync_group();
        PROF_ADD(x->t_settle, t_settle);
        cur = 1 - cur;
    }
}

// The node of level d (before its left decision) when the stack holds levels below `slevels`
// only: the deepest copy, then the path's decisions from there to level d, each followed by a
// fixpoint as the search did. The result may be stronger than the node was (a tighter bound
// of branch and bound since), never weaker. 1: done; 0: that node fails now; -1 (ERR_PATH
// raised): the path was not recorded that far (the host sizes pcap to the longest branch).
// Levels and path are work-item 0's (written and read by it alone).
int recompute(Ctx *x, int d, int slevels, __global const int *stack, int ssize, __global const int *lv,
              __global const int *path, int pcap, __global volatile int *ctrl, STORE int *store,
              STORE int *act, __local uint *queued, __local int *ctl, __global int *weights, int *passes,
              int lid, int w) {
    int k = slevels - 1;
    int from = share(ctl, L_BCAST, lid == 0 ? lv[k * NLV + LV_PLEN] : 0, lid);
    int to = share(ctl, L_BCAST, lid == 0 ? lv[d * NLV + LV_PLEN] : 0, lid);
    if (to > pcap) {
        if (lid == 0) atomic_or(&ctrl[C_ERR], ERR_PATH);
        return -1;
    }
    store_from(store, stack + (long)k * ssize, ssize, lid, w);
    sync_group();
    bool ok = true;
    for (int i = from; i < to && ok; ++i) {
        if (lid == 0) {
            __global const int *dec = path + DEC * i;
            apply_decision(x, dec[0], dec[1], dec[2], dec[3]);
        }
        ok = fixpoint(x, false, act, queued, ctl, weights, 0, passes, INT_MAX, 0, 0, lid, w) > 0;
    }
    sync_group();
    if (lid == 0) ctl[L_FAILED] = 0;
    sync_group();
    return ok ? 1 : 0;
}

// Where a right branch goes on the path: at its level's place, or over the entry before it
// when that one is the right branch of an earlier level at this depth (at or past `floor`: no
// open level's decision, nor the sub-search space's root) on the same variable, which the new
// one implies (x > v after x > v' with v >= v'; x < v after x < v' with v <= v'). Labelling a
// huge bounds-only domain value by value then keeps one entry on the path instead of one per
// value tried, so recomputation (which replays the path) never runs out of it there.
inline int compact_right_branch(__global const int *path, int plen, int floor, int pcap, int var, int op, int value) {
    if (plen <= floor || plen > pcap || (op != OP_GT && op != OP_LT)) return plen;
    __global const int *prev = path + DEC * (plen - 1);
    if (prev[0] != var || prev[1] != op) return plen;
    return (op == OP_GT ? value >= prev[2] : value <= prev[2]) ? plen - 1 : plen;
}

// The next decision, the group choosing the variable together (each work-item the best of its
// share of a group of the plan, then work-item 0 the best of theirs, earlier ones winning
// ties, so the choice is the one the one-work-item kernel makes). False at a solution.
bool choose_group(Ctx *x, int ngroups, __global const int *weights, uint *rng, int random_values,
                  int div, uint tie, bool halve, __local int *red, __local int *ctl, int lid, int w, int *out_var, int *out_op,
                  int *out_val, int *out_hi) {
    for (int g = 0; g < ngroups; ++g) {
        int vsel = M_SG_SEL(x, 2 * g), valsel = M_SG_SEL(x, 2 * g + 1);
        bool sets = set_group(valsel);
        if ((random_values || (div & DIV_VALUES)) && !sets) valsel = VAL_RANDOM;
        if ((div & DIV_WDEG) && !sets) vsel = VS_DOM_W_DEG;
        int best = -1, best_pos = INT_MAX;
        for (int i = M_SG_PTR(x, g) + lid; i < M_SG_PTR(x, g + 1); i += w) {
            int v = M_SG_VAR(x, i);
            if (!open_var(x, v, valsel)) continue;
            if (sets ? better_set(x, vsel, v, best) : better_var_tie(x, vsel, v, best, weights, 1, tie)) {
                best = v; best_pos = i;
                if (vsel == VS_INPUT_ORDER) break;
            }
        }
#if defined(FZN_WARP_PTX) || defined(FZN_KEYED_CHOICE)
        // A selection that orders by a 32-bit key: two minimums over the group (the key, then
        // the position among the keys' ties) give every work-item the choice at once, and each
        // makes the value choice alike (a random one is work-item 0's draw: the path below). In a
        // group of one warp on NVIDIA each minimum is one instruction and no barrier is needed.
        if (KEYED_GROUP(w) && (!tie || vsel == VS_INPUT_ORDER) && !sets && !float_group(valsel) &&
                valsel != VAL_RANDOM && keyed_selection(vsel)) {
            __local uint *red_u = (__local uint *)red;
            uint key = best >= 0 ? var_key(x, vsel, best) : UINT_MAX;
            uint k = group_min(key, red_u, lid, w);
            uint pos = group_min(best >= 0 && key == k ? (uint)best_pos : UINT_MAX, red_u, lid, w);
            if (pos == UINT_MAX) continue;          // nothing open in this group of the plan
            int b = M_SG_VAR(x, pos), op, value;
            select_value(x, b, valsel, rng, halve, &op, &value);
            *out_var = b; *out_op = op; *out_val = value; *out_hi = 0;
            return true;
        }
#endif
        red[2 * lid] = best;
        red[2 * lid + 1] = best_pos;
        sync_group();
        if (lid == 0) {
            int b = -1, bp = INT_MAX;
            for (int k = 0; k < w; ++k) {
                int v = red[2 * k], p = red[2 * k + 1];
                if (v < 0) continue;
                bool better = sets ? better_set(x, vsel, v, b) : better_var(x, vsel, v, b, weights, 1);
                bool worse = b >= 0 && (sets ? better_set(x, vsel, b, v) : better_var(x, vsel, b, v, weights, 1));
                bool first = tie && !sets && vsel != VS_INPUT_ORDER ? tie_key(tie, v) < tie_key(tie, b) : p < bp;
                if (b < 0 || better || (!worse && first)) { b = v; bp = p; }
            }
            ctl[L_BCAST] = b;
            if (b >= 0) {
                int op, value, hi = 0;
                if (sets) select_set_value(x, b, valsel, &op, &value);
                else select_value(x, b, valsel, rng, halve, &op, &value);
                ctl[L_OP] = op;
                ctl[L_VAL] = value;
                ctl[L_VAL_HI] = hi;
            }
        }
        sync_group();
        int b = ctl[L_BCAST];
        *out_var = b; *out_op = ctl[L_OP]; *out_val = ctl[L_VAL]; *out_hi = ctl[L_VAL_HI];
        sync_group();               // everyone has read before the words are reused
        if (b >= 0) return true;
    }
    return false;
}

// the parameters: fzn_gpu/runtime/kernel_abi.py's SEARCH_PARAMS, the one list (the header generated from it
// writes them as SEARCH_GROUP_PARAMS and their unpacking as SEARCH_GROUP_UNPACK; the host passes its
// arguments by name in that order, its scalars in the settings)
__kernel void search_group(SEARCH_GROUP_PARAMS)
{
    SEARCH_GROUP_UNPACK  // the scalars and packed arrays by name (kernel_abi)
    int g = get_group_id(0), lid = get_local_id(0), w = get_local_size(0);
    if (g >= n_items) return;
#ifdef FZN_NARROW
    int ssize = nwords, wfirst = 0;                    // one node: its bitmap words (domain.cl)
#else
    int ssize = 2 * nv + nwords, wfirst = 2 * nv;      // one node: lb, ub, bitmap words
#endif
#ifdef FZN_STORE_GLOBAL
    // too big for local memory: the node, the changed list and the active lists in global memory
    __global int *store = CUR + (long)g * ssize;
    __global int *act = ACT + (long)g * (2 * nunits + nv);
    __global int *clist = act + 2 * nunits;
#else
    __local int *store = L_store;
    __local int *act = L_act;
    __local int *clist = L_clist;
#endif
    Ctx cx;
    Ctx *x = &cx;
    x->nv = nv; x->nc = nc; x->nu = nunits;
    SEARCH_GROUP_MODEL(x);
    x->lb = store; x->ub = store + nv; x->bits = (STORE uint *)(store + wfirst);
    x->changed = L_changed;
    x->red = L_red;
    __local int *red_ints = (__local int *)L_red;
    x->clist = clist;
    x->nchanged = &ctl[L_NCHANGED];
    x->failed = &ctl[L_FAILED];
    x->err = 0;
    x->props = 0;
    x->passes = 0;
#ifdef FZN_PROFILE
    x->t_prop = x->t_settle = x->t_copy = x->t_choose = x->t_fix = x->t_branch = x->t_back = x->t_clock = 0;
    PROF_START(t_slice);
#endif
    __global int *st = ST + g * NST;
    __global long *cnt = CNT + g * CNT_ROW;
#ifdef FZN_PROFILE
    x->kprof = cnt + NCNT;
#endif
    __global int *lv = LV + (long)g * maxd * NLV;
    __global int *path = PATH + (long)g * pcap * DEC;
    __global int *stack = STACK + (long)g * slevels * ssize;
    __global int *weights = WEIGHTS + (use_weights ? (long)g * nc : 0);

    int status = st[ST_STATUS], depth = st[ST_DEPTH], plen = st[ST_PLEN], sub_nodes = st[ST_SUBNODES];
    uint rng = (uint)st[ST_RNG];
    // how this search runs its sub-search space (restarts: branching.cl, sub_run)
    int sub = st[ST_SUB];
    SubRun run = sub_run(st, sub, limits, use_limits, node_limit);
    long nodes = 0, fails = 0, sols_found = 0, subs = 0, recomputed = 0, cut = 0;
    int passes = 0;
    bool emitting = cutoff > 0;
    // a node left in S_PROPAGATE: a sub-search space's root (fresh), or one whose propagation
    // the last slice's budget interrupted (pending: the same node, not a new one)
    bool fresh = status == S_PROPAGATE && (st[ST_FLAGS] & ST_FRESH);
    bool pending = status == S_PROPAGATE && (st[ST_FLAGS] & ST_PENDING);
    // marks do not outlive a slice: a search resumed at S_PROPAGATE propagates every constraint
    bool resume_all = status == S_PROPAGATE;
    if (lid == 0) { ctl[L_FAILED] = 0; ctl[L_ERR] = 0; }
    clear_marks(x, L_queued, ctl, lid, w);
#ifndef FZN_STORE_GLOBAL
    if (status == S_PROPAGATE || status == S_BRANCH || status == S_SOLUTION)
        store_from(store, CUR + (long)g * ssize, ssize, lid, w);
#endif
    // the right branches of the shallowest open levels, up to donate_each of them
    if (lid == 0 && donate > 0 && depth > 0 && status != S_DONE && status != S_NEED_SUB && ctrl[C_DONATED] < donate) {
        int given = 0;
        for (int l = 0; l < depth && given < donate_each; ++l) {
            __global int *lvl = lv + l * NLV;
            int op = lvl[LV_OP];
            if (op & OP_DONATED) continue;
            int pl = lvl[LV_PLEN];
            if (pl + 1 > rcap) break;
            int idx = atomic_inc(&ctrl[C_DONATED]);
            if (idx >= donate) break;
            __global int *rec = emit + (long)idx * emit_stride;
            rec[0] = pl + 1;
            for (int i = 0; i < DEC * pl; ++i) rec[1 + i] = path[i];
            put_decision(rec + 1 + DEC * pl, lvl[LV_VAR], lvl[LV_NEG], lvl[LV_VAL], lvl[LV_VAL_HI]);
            rec[emit_stride - 1] = st[ST_SUB];
            lvl[LV_OP] = op | OP_DONATED;
            given += 1;
        }
    }
    sync_group();

    // the slice also ends by the clock (kernels/profile.cl), read by work-item 0 between steps
    ulong t_end = 0, ticks = 0;
#ifdef FZN_SLICE_CLOCK
    if (lid == 0) t_end = max(slice_ns(&ticks), (ulong)1) + (ulong)max(slice_us, 1) * 1000;
#endif
    while (budget > 0 && status != S_DONE) {
#ifdef FZN_SLICE_CLOCK
        PROF_START(t_clock);
        bool late = share(ctl, L_BCAST, lid == 0 && slice_ns(&ticks) >= t_end, lid);
        PROF_ADD(x->t_clock, t_clock);
        if (late) break;
#endif
        if (status == S_SOLUTION) {
            int slot = -1;
            if (lid == 0) {
                slot = atomic_inc(&ctrl[C_SOLS]);
                if (slot >= sol_cap) { atomic_dec(&ctrl[C_SOLS]); slot = -1; }   // host drains, we retry
            }
            slot = share(ctl, L_BCAST, slot, lid);
            if (slot < 0) break;
            __global int *out = sols + (long)slot * (nv + 1 + sol_words);
            if (lid == 0) out[0] = obj_var >= 0 ? obj_sense * val(x, obj_var) : st[ST_SUB];   // satisfaction: its path
            for (int v = lid; v < nv; v += w) out[1 + v] = LB_(x, v);
            for (int k = lid; k < sol_words; k += w) out[1 + nv + k] = (int)BITS_(x, k);   // set variables
            status = S_BACKTRACK;
            sync_group();                            // the node is read before it is replaced
            continue;
        }
        if (status == S_NEED_SUB) {
            int s = share(ctl, L_BCAST, lid == 0 ? atomic_inc(&ctrl[C_NEXT]) : 0, lid);
            if (s >= n_sub) { status = S_DONE; break; }
            if (lid == 0) st[ST_SUB] = sub_base + s;
            sub = sub_base + s;
            run = sub_run(st, sub, limits, use_limits, node_limit);
            sub_nodes = 0; depth = 0; plen = 0;
            pending = false;
#ifndef FZN_NARROW
            store_from(store, root_lb, nv, lid, w);
            store_from(store + nv, root_ub, nv, lid, w);
#endif
            store_from(store + wfirst, (__global const int *)root_bits, nwords, lid, w);
            sync_group();
            __global const int *p = sub_data + sub_ptr[s];
            int root_len = (sub_ptr[s + 1] - sub_ptr[s]) / DEC;
            bool ok = true;
            // Replay with propagation after every decision, as the search that made the path
            // did (x != v on a bounds-only domain of an older path is exact only on the node it
            // was taken at). LNS paths hold only x = v: all are applied, then one fixpoint.
            for (int i = 0; i < root_len && ok; ++i) {
                if (lid == 0) {
                    __global const int *d = p + DEC * i;
                    apply_decision(x, d[0], d[1], d[2], d[3]);
                    if (i < pcap) for (int k = 0; k < DEC; ++k) path[DEC * i + k] = d[k];
                }
                if (!use_results) ok = fixpoint(x, false, act, L_queued, ctl, weights, 0, &passes, INT_MAX, 0, 0, lid, w) > 0;
            }
            sync_group();
            if (ok && ctl[L_FAILED]) { ok = false; clear_marks(x, L_queued, ctl, lid, w); }
            sync_group();                            // all have read the flag before it is reset
            if (lid == 0) ctl[L_FAILED] = 0;
            sync_group();
            budget -= min(passes, budget);
            passes = 0;
            plen = root_len;
            if (lid == 0) st[ST_ROOTLEN] = root_len;
            subs += 1;
            fresh = true;
            if (!ok) { fails += 1; continue; }
            status = S_PROPAGATE;
            continue;
        }
        if (status == S_PROPAGATE) {
            // LNS and restarts: a path gets its node limit, then the group moves on
            if (run.limit > 0 && sub_nodes >= run.limit) {
                clear_marks(x, L_queued, ctl, lid, w);
                if (lid == 0) ctl[L_FAILED] = 0;
                sync_group();
                cut += 1;
                status = S_NEED_SUB;
                continue;
            }
            budget -= 1;
            if (!pending) {
                sub_nodes += 1;
                nodes += 1;
            }
            if (lid == 0 && obj_var >= 0 && use_results != RES_EVALUATE) {   // every candidate's own objective
                int best = use_results == RES_OWN ? results[st[ST_SUB]] : ctrl[C_BEST];
                if (best != INT_MAX) {
                    if (obj_sense > 0) set_max(x, obj_var, (long)best - 1);
                    else set_min(x, obj_var, -(long)best + 1);
                }
            }
            PROF_START(t_fix);
            PROF_NOTE(inner0, x->t_prop + x->t_settle);
            int r = fixpoint(x, resume_all || (fresh && (enqueue_all || use_results)), act, L_queued, ctl, weights,
                             use_weights, &passes, max(budget, FZN_PROP_FLOOR), t_end, &ticks, lid, w);
            PROF_ADD_OWN(x->t_fix, t_fix, x->t_prop + x->t_settle, inner0);
            resume_all = false;
            budget -= min(passes, budget);
            passes = 0;
            pending = r < 0;
            if (pending) break;                      // the slice's budget is spent: the node waits
            if (r == 0) {
                if (lid == 0) ctl[L_FAILED] = 0;     // fixpoint returned after a barrier
                if (lid == 0 && fresh && enqueue_all) atomic_or(&ctrl[C_ROOT_FAILED], 1);
                fresh = false;
                fails += 1;
                status = S_BACKTRACK;
                sync_group();
                continue;
            }
            if (fresh && enqueue_all && !use_results) {    // the root's fixpoint: later passes start from it
                for (int v = lid; v < nv; v += w) { root_out_lb[v] = LB_(x, v); root_out_ub[v] = UB_(x, v); }
                store_to((__global int *)root_out_bits, store + wfirst, nwords, lid, w);
            }
            fresh = false;
            status = S_BRANCH;
            sync_group();
            continue;
        }
        if (status == S_BRANCH) {
            if (emitting && (depth >= cutoff || plen + 2 > rcap)) {
                int full = 0;
                if (lid == 0) {
                    int idx = atomic_inc(&ctrl[C_EMIT]);
                    if (idx >= emit_cap) { atomic_or(&ctrl[C_OVERFLOW], 1); full = 1; }
                    else {
                        __global int *rec = emit + (long)idx * emit_stride;
                        rec[0] = plen;
                        for (int i = 0; i < DEC * plen; ++i) rec[1 + i] = path[i];
                        rec[emit_stride - 1] = st[ST_SUB];     // its source: the host sorts by it
                    }
                }
                // A pass whose frontier overflowed is dropped whole (the host widens it or
                // searches its paths as they are), so the group stops: going on walked the rest
                // of the pass for nothing, and where right branches are compacted a bounds-only
                // domain labelled by value was walked one value at a time to its end.
                if (share(ctl, L_BCAST, full, lid)) { status = S_DONE; break; }
                status = S_BACKTRACK;
                continue;
            }
            int v, op, value, value_hi;
            PROF_START(t_choose);
            bool open = choose_group(x, ngroups, weights, &rng, random_values, run.div, run.tie, 2 * depth >= maxd,
                              red_ints, ctl, lid, w, &v, &op, &value, &value_hi);
            PROF_ADD(x->t_choose, t_choose);
            PROF_START(t_branch);
            PROF_NOTE(copy0, x->t_copy);
            if (!open) {
                sols_found += 1;
                if (obj_var >= 0) {
                    int o = obj_sense * val(x, obj_var), better = 0;
                    if (lid == 0) {
                        int mine = use_results ? atomic_min(&results[st[ST_SUB]], o) : INT_MAX;   // LNS: each path's best
                        int old = atomic_min(&ctrl[C_BEST], o);
                        better = o < (use_results == RES_OWN ? mine : old);
                    }
                    status = share(ctl, L_BCAST, better, lid) ? S_SOLUTION : S_BACKTRACK;
                } else {
                    status = count_only ? S_BACKTRACK : S_SOLUTION;
                }
                continue;
            }
            if (depth >= maxd) { if (lid == 0) atomic_or(&ctrl[C_ERR], ERR_DEPTH); status = S_DONE; break; }
            PROF_START(t_push);
            if (depth < slevels) store_to(stack + (long)depth * ssize, store, ssize, lid, w);
            sync_group();                           // the snapshot is whole before the decision
            PROF_ADD(x->t_copy, t_push);
            if (lid == 0) {
                __global int *l = lv + depth * NLV;
                l[LV_VAR] = v; l[LV_VAL] = value; l[LV_OP] = op; l[LV_PLEN] = plen;
                l[LV_NEG] = negation(x, v, op, value); l[LV_VAL_HI] = value_hi;
                if (plen < pcap) put_decision(path + DEC * plen, v, op, value, value_hi);
                apply_decision(x, v, op, value, value_hi);
            }
            plen += 1;
            depth += 1;
            status = S_PROPAGATE;
            sync_group();
            PROF_ADD_OWN(x->t_branch, t_branch, x->t_copy, copy0);
            continue;
        }
        // S_BACKTRACK
        if (depth == 0) { status = S_NEED_SUB; continue; }
        PROF_START(t_back);
        PROF_NOTE(back0, x->t_copy + x->t_prop + x->t_settle);
        depth -= 1;
        __global int *l = lv + depth * NLV;
        // work-item 0 reads the level (it wrote it) and shares what the group needs of it
        int level = lid == 0 ? ((l[LV_OP] & OP_DONATED) ? -1 - l[LV_PLEN] : l[LV_PLEN]) : 0;
        level = share(ctl, L_BCAST, level, lid);
        if (level < 0) { plen = -1 - level; continue; }   // its right branch is another path's now
        PROF_START(t_pop);
        if (depth < slevels) {
            store_from(store, stack + (long)depth * ssize, ssize, lid, w);   // each its own slice, as pushed
            sync_group();                           // the node is whole before the right branch
            PROF_ADD(x->t_copy, t_pop);
        } else {
            int r = recompute(x, depth, slevels, stack, ssize, lv, path, pcap, ctrl, store, act, L_queued, ctl,
                              weights, &passes, lid, w);
            budget -= min(passes, budget);
            passes = 0;
            recomputed += 1;                        // its propagation counts as propagation
            if (r < 0) { status = S_DONE; break; }
            if (r == 0) {
                fails += 1;
                continue;                           // the node is gone, its right branch with it
            }
        }
        plen = level;
        if (lid == 0) {
            int var = l[LV_VAR], value = l[LV_VAL], op = l[LV_NEG], value_hi = l[LV_VAL_HI];
            int floor = depth > 0 ? lv[(depth - 1) * NLV + LV_PLEN] + 1 : st[ST_ROOTLEN];
            plen = compact_right_branch(path, plen, floor, pcap, var, op, value);
            if (plen < pcap) put_decision(path + DEC * plen, var, op, value, value_hi);
            apply_decision(x, var, op, value, value_hi);
        }
        plen = share(ctl, L_BCAST, plen, lid) + 1;
        status = S_PROPAGATE;
        PROF_ADD_OWN(x->t_back, t_back, x->t_copy + x->t_prop + x->t_settle, back0);
    }

    sync_group();
#ifndef FZN_STORE_GLOBAL
    if (status == S_PROPAGATE || status == S_BRANCH || status == S_SOLUTION)
        store_to(CUR + (long)g * ssize, store, ssize, lid, w);
#endif
    red_ints[lid] = (int)min(x->props, (long)INT_MAX);
    sync_group();
    if (lid == 0) {
        long props = 0;
        for (int k = 0; k < w; ++k) props += red_ints[k];
        st[ST_STATUS] = status; st[ST_DEPTH] = depth; st[ST_PLEN] = plen; st[ST_SUBNODES] = sub_nodes;
        st[ST_FLAGS] = status == S_PROPAGATE ? (fresh ? ST_FRESH : 0) | (pending ? ST_PENDING : 0) : 0;
        st[ST_RNG] = (int)rng;
        cnt[CNT_NODES] += nodes; cnt[CNT_FAILS] += fails; cnt[CNT_PROPS] += props;
        cnt[CNT_SOLS] += sols_found; cnt[CNT_SUBS] += subs; cnt[CNT_RECOMPUTED] += recomputed;
        cnt[CNT_PASSES] += x->passes; cnt[CNT_CUT] += cut;
#ifdef FZN_PROFILE
        cnt[CNT_T_PROPAGATE] += x->t_prop; cnt[CNT_T_SETTLE] += x->t_settle; cnt[CNT_T_COPY] += x->t_copy;
        cnt[CNT_T_CHOOSE] += x->t_choose; cnt[CNT_T_FIXPOINT] += x->t_fix; cnt[CNT_T_BRANCH] += x->t_branch;
        cnt[CNT_T_BACKTRACK] += x->t_back; cnt[CNT_T_CLOCK] += x->t_clock;
        PROF_ADD(cnt[CNT_T_TOTAL], t_slice);
#endif
    }
}
