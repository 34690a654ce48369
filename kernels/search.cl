// Depth-first search with propagation, one sub-search space at a time per work-item (PHACT).
//
// A sub-search space is a path of decisions (var, op, value) from the root. Work-items take
// the next one from a shared counter, replay it on the root domains, and search below it with
// binary branching (left: the decision, right: its negation). Kernels run in slices of at most
// `budget` nodes; the whole state lives in global memory and survives between slices.
//
// With cutoff > 0 the kernel expands instead of solving: every node reached at `cutoff` left
// decisions below its sub-search space is written out as a new, longer path (the host's
// splitting of the tree into many sub-search spaces, done on the device).
//
// With donate > 0 (re-splitting on the fly, the GPU-backtracking paper's second cut-off taken
// where the measured tree turned out big): at the start of a slice, up to `donate` busy
// work-items each give away the right branch of their shallowest open level as a new path
// (its prefix plus the negated decision), and mark that level so they never take it
// themselves. The host hands the paths to idle work-items, of this device or another one.

// Run the queue to a fixpoint: 1 there, 0 on failure (the queue is then emptied), -1 when
// `limit` propagations were counted first (the slice's budget: bounds that move by one a run on
// a huge domain would hold the slice for billions of them). The queue is kept, and the next
// slice goes on with it (ST_QLEN, ST_PENDING).
int propagate(Ctx *x, long limit) {
    while (x->qlen > 0) {
        if (x->props >= limit) return -1;
        int c = QUEUE_(x, x->qhead);
        x->qhead = (x->qhead + 1 == x->nc) ? 0 : x->qhead + 1;
        x->qlen -= 1;
        INQ_(x, c) = 0;
        x->props += 1;
        PROF_START(t_call);
        bool ok = propagate_one(x, c);
        PROF_KIND(x->kprof, M_CKIND(x, c), t_call);
        if (!ok) {
            x->failed = c;
            clear_queue(x);
            return 0;
        }
    }
    return 1;
}

#define LV_(l, k) ((l)[(k) * x->st])

// A record of the first `plen` decisions of `path`, and the phase's index of the path it came from.
inline void put_path(__global int *rec, int emit_stride, __global const int *path, int plen, int source) {
    rec[0] = plen;
    for (int i = 0; i < DEC * plen; ++i) rec[1 + i] = path[i];
    rec[emit_stride - 1] = source;
}

// A path at the emission frontier becomes a sub-search space of its own.
// A frontier path, with the phase's index of the path it extends last (a search emits its
// frontier left to right: the host puts the records back in tree order by source and index).
// False where the frontier overflowed: the host drops such a pass whole (it widens the
// frontier or searches the pass's paths as they are), so the work-item stops there.
inline bool emit_path(__global volatile int *ctrl, __global int *emit, int emit_cap, int emit_stride,
                      __global const int *path, int plen, int source) {
    int idx = atomic_inc(&ctrl[C_EMIT]);
    if (idx >= emit_cap) { atomic_or(&ctrl[C_OVERFLOW], 1); return false; }
    put_path(emit + (long)idx * emit_stride, emit_stride, path, plen, source);
    return true;
}

// A level's right branch given away as record `rec` (a donation, or part of a hand-over): the
// path's first decisions down to the level, then its negated decision, then the path it came
// from; the level is flagged, so the search skips it when it backtracks.
inline void give_branch(Ctx *x, __global int *rec, int emit_stride, __global const int *path, __global int *lvl,
                        int source) {
    int pl = LV_(lvl, LV_PLEN);
    put_path(rec, emit_stride, path, pl, source);
    rec[0] = pl + 1;
    __global int *d = rec + 1 + DEC * pl;
    d[0] = LV_(lvl, LV_VAR); d[1] = LV_(lvl, LV_NEG); d[2] = LV_(lvl, LV_VAL); d[3] = LV_(lvl, LV_VAL_HI);
    LV_(lvl, LV_OP) = LV_(lvl, LV_OP) | OP_DONATED;
}

#ifdef FZN_FLOATS
// A solution below FPOINT decisions: their right branches (FACCEPT, the box around the point)
// would give it again within the precision, so they are skipped on backtracking.
inline void mark_points_solved(Ctx *x, __global int *lv, int depth) {
    for (int d = 0; d < depth; ++d) {
        __global int *l = lv + d * NLV * x->st;
        if (LV_(l, LV_OP) == OP_FPOINT) LV_(l, LV_OP) = OP_FPOINT | OP_SOLVED;
    }
}
#endif

// Choose the next decision; false when every variable of the plan is decided (a solution).
bool choose(Ctx *x, int ngroups, __global const int *weights, uint *rng, int random_values, int div, uint tie, bool halve, int *out_var, int *out_op, int *out_val,
            int *out_hi) {
    for (int g = 0; g < ngroups; ++g) {
        int vsel = M_SG_SEL(x, 2 * g), valsel = M_SG_SEL(x, 2 * g + 1);
        bool sets = set_group(valsel), floats = float_group(valsel);
        if ((random_values || (div & DIV_VALUES)) && !sets && !floats) valsel = VAL_RANDOM;
        if ((div & DIV_WDEG) && !sets && !floats) vsel = VS_DOM_W_DEG;
        int best = -1;
        for (int i = M_SG_PTR(x, g); i < M_SG_PTR(x, g + 1); ++i) {
            int v = M_SG_VAR(x, i);
            if (!open_var(x, v, valsel)) continue;
#ifdef FZN_FLOATS
            if (floats && !float_needs(x, v, valsel, as_double(M_SG_PREC(x, g)))) continue;
#endif
            bool better;
#ifdef FZN_FLOATS
            if (floats) better = better_float(x, vsel, v, best); else
#endif
            better = sets ? better_set(x, vsel, v, best) : better_var_tie(x, vsel, v, best, weights, x->st, tie);
            if (better) {
                best = v;
                if (vsel == VS_INPUT_ORDER) break;
            }
        }
        if (best < 0) continue;
        *out_var = best;
        *out_hi = 0;
#ifdef FZN_FLOATS
        if (floats) { select_float(x, best, valsel, as_double(M_SG_PREC(x, g)), out_op, out_val, out_hi); return true; }
#endif
        if (sets) select_set_value(x, best, valsel, out_op, out_val);
        else select_value(x, best, valsel, rng, halve, out_op, out_val);
        return true;
    }
    return false;
}

// the parameters: fzn_gpu/runtime/kernel_abi.py's SEARCH_PARAMS, the one list (the header generated from it
// writes them as SEARCH_ITEM_PARAMS and their unpacking as SEARCH_ITEM_UNPACK; the host passes its
// arguments by name in that order, its scalars in the settings)
__kernel void search(SEARCH_ITEM_PARAMS)
{
    SEARCH_ITEM_UNPACK  // the scalars and packed arrays by name (kernel_abi)
    int gid = get_global_id(0);
    if (gid >= n_items) return;

    Ctx cx;
    Ctx *x = &cx;
    x->nv = nv; x->nc = nc;
    SEARCH_ITEM_MODEL(x);
    // interleaved: entry i of work-item gid at i * n_items + gid; blocked: at gid * size + i
    long first = interleave ? (long)gid : 0;
    x->st = interleave ? n_items : 1;
    x->lb = LB + (interleave ? first : (long)gid * nv);
    x->ub = UB + (interleave ? first : (long)gid * nv);
    x->bits = BITS + (interleave ? first : (long)gid * nwords);
    x->fb = FB + (interleave ? first : (long)gid * 2 * nf);
    x->stamp = STAMP + (interleave ? first : (long)gid * nv);
    x->trail = TRAIL + (interleave ? first : (long)gid * tcap);
    x->tcap = tcap;
    x->queue = QUEUE + (interleave ? first : (long)gid * nc);
    x->inq = INQ + (interleave ? first : (long)gid * nc);
    x->qlen = 0;
    x->err = 0;
#ifdef FZN_FLOATS
    bool obj_float = obj_var >= 0 && M_FSLOT(x, obj_var) >= 0;
#else
    bool obj_float = false;
#endif
    x->failed = -1;
    x->props = 0;
    x->passes = 0;
#ifdef FZN_PROFILE
    x->t_prop = x->t_settle = x->t_copy = x->t_choose = x->t_fix = x->t_branch = x->t_back = x->t_clock = 0;
    PROF_START(t_slice);
#endif
    __global int *st = ST + gid * NST;
    __global long *cnt = CNT + gid * CNT_ROW;
#ifdef FZN_PROFILE
    x->kprof = cnt + NCNT;
#endif
    __global int *lv = LV + (interleave ? first : (long)gid * maxd * NLV);
    __global int *path = PATH + (long)gid * pcap * DEC;
    __global int *weights = WEIGHTS + (use_weights ? (interleave ? first : (long)gid * nc) : 0);

    int status = st[ST_STATUS], depth = st[ST_DEPTH], plen = st[ST_PLEN];
    x->ttop = st[ST_TTOP];
    x->epoch = depth;
    x->qhead = st[ST_QHEAD];
    x->qlen = st[ST_QLEN];              // 0 unless a propagation was interrupted
    uint rng = (uint)st[ST_RNG];
    long nodes = 0, fails = 0, sols_found = 0, subs = 0;
    int emitting = cutoff > 0;
    int tracking = emitting || track;   // keep the path of decisions (bounded by pcap)
    // the next propagation is the first of a new sub-search space (fresh), or goes on with an
    // interrupted one (pending: the same node, not a new one)
    bool fresh = status == S_PROPAGATE && (st[ST_FLAGS] & ST_FRESH);
    bool pending = status == S_PROPAGATE && (st[ST_FLAGS] & ST_PENDING);
    int sub_nodes = st[ST_SUBNODES];
    // how this search runs its sub-search space (restarts: branching.cl, sub_run)
    int sub = st[ST_SUB];
    SubRun run = sub_run(st, sub, limits, use_limits, node_limit);
    long cut = 0;

    // A hand-over (engine/balance.py: a much faster device waits and nothing else is left):
    // the work-item gives all its remaining search away, the right branch of every open level
    // and the node it is at, as one run of records, and stops. One at a solution it has not
    // written yet (its bound already taken), with a path longer than it records, on a float
    // point, or whose records would not fit, searches on and hands over at a later slice.
    if (handover && status != S_DONE && status != S_NEED_SUB && status != S_SOLUTION) {
        bool at_node = status == S_PROPAGATE || status == S_BRANCH;   // a node not searched yet
        int need = at_node ? 1 : 0;
        bool can = !at_node || plen <= pcap;
        for (int l = 0; l < depth && can; ++l) {
            int op = LV_(lv + l * NLV * x->st, LV_OP);
            if (op == OP_FPOINT || (op & OP_SOLVED)) can = false;
            else if (!(op & OP_DONATED)) {
                need += 1;
                can = LV_(lv + l * NLV * x->st, LV_PLEN) + 1 <= pcap;
            }
        }
        int idx = -1;
        if (can) {   // claim `need` records, never past `donate`
            int old = ctrl[C_DONATED];
            while (old + need <= donate) {
                int prev = atomic_cmpxchg(&ctrl[C_DONATED], old, old + need);
                if (prev == old) { idx = old; break; }
                old = prev;
            }
        }
        if (idx >= 0) {
            for (int l = 0; l < depth; ++l) {
                __global int *lvl = lv + l * NLV * x->st;
                if (LV_(lvl, LV_OP) & OP_DONATED) continue;
                give_branch(x, emit + (long)idx++ * emit_stride, emit_stride, path, lvl, st[ST_SUB]);
            }
            if (at_node)   // the node itself, replayed by whoever takes it
                put_path(emit + (long)idx * emit_stride, emit_stride, path, plen, st[ST_SUB]);
            clear_queue(x);
            status = S_DONE;
        }
    }
    if (donate > 0 && depth > 0 && status != S_DONE && status != S_NEED_SUB && ctrl[C_DONATED] < donate) {
        for (int l = 0; l < depth; ++l) {
            __global int *lvl = lv + l * NLV * x->st;
            int op = LV_(lvl, LV_OP);
            if ((op & (OP_DONATED | OP_SOLVED)) || op == OP_FPOINT) continue;   // a point's box stays here
            int pl = LV_(lvl, LV_PLEN);
            if (pl + 1 > pcap) break;           // deeper levels have longer paths
            int idx = atomic_inc(&ctrl[C_DONATED]);
            if (idx < donate) {
                give_branch(x, emit + (long)idx * emit_stride, emit_stride, path, lvl, st[ST_SUB]);
            }
            break;
        }
    }

    while (budget > 0 && status != S_DONE) {
        // A mutator that ran out of trail returns FAILED like a wipe-out; the error, not a
        // failure, must decide: the search stops incomplete (never a false UNSATISFIABLE).
        if (x->err) { atomic_or(&ctrl[C_ERR], x->err); status = S_DONE; break; }
        if (status == S_SOLUTION) {
            int slot = atomic_inc(&ctrl[C_SOLS]);
            if (slot >= sol_cap) { atomic_dec(&ctrl[C_SOLS]); break; }   // host drains, we retry
            __global int *out = sols + (long)slot * (nv + 1 + sol_words + 4 * nf);
            // satisfaction: the path it was found below (the host prints in tree order)
            out[0] = obj_var < 0 ? st[ST_SUB] : !obj_float ? obj_sense * val(x, obj_var) : 0;
            for (int v = 0; v < nv; ++v) out[1 + v] = LB_(x, v);
            for (int k = 0; k < sol_words; ++k) out[1 + nv + k] = (int)BITS_(x, k);   // set variables
            for (int k = 0; k < 2 * nf; ++k) {                                          // float boxes
                long o = FB_(x, k);
                out[1 + nv + sol_words + 2 * k] = (int)o;
                out[2 + nv + sol_words + 2 * k] = (int)(o >> 32);
            }
            status = S_BACKTRACK;
            continue;
        }
        if (status == S_NEED_SUB) {
            int s = atomic_inc(&ctrl[C_NEXT]);
            if (s >= n_sub) { status = S_DONE; break; }
            st[ST_SUB] = sub_base + s;   // the phase's index of it (the device holds from sub_base on)
            sub = sub_base + s;
            run = sub_run(st, sub, limits, use_limits, node_limit);
            sub_nodes = 0;
            pending = false;
            for (int v = 0; v < nv; ++v) { LB_(x, v) = root_lb[v]; UB_(x, v) = root_ub[v]; STAMP_(x, v) = -1; }
            for (int w = 0; w < nwords; ++w) BITS_(x, w) = root_bits[w];
            for (int k = 0; k < 2 * nf; ++k) FB_(x, k) = root_fb[k];
            x->ttop = 0; depth = 0; plen = 0;
            x->epoch = 0;
            clear_queue(x);
            if (enqueue_all) for (int c = 0; c < nc; ++c) enqueue(x, c);
            __global const int *p = sub_data + sub_ptr[s];
            int root_len = (sub_ptr[s + 1] - sub_ptr[s]) / DEC;
            bool ok = true;
            // Replay with propagation after every decision, as the search that made the path
            // did: a right branch x != v is exact only where v is a bound (bounds-only domains).
            // LNS paths hold only x = v: all are applied, and S_PROPAGATE runs one fixpoint.
            long props_before = x->props;
            for (int i = 0; i < root_len && ok; ++i) {
                __global const int *d = p + DEC * i;
                ok = apply_decision(x, d[0], d[1], d[2], d[3]) != FAILED && (use_results || propagate(x, LONG_MAX) > 0);
                if (tracking && i < pcap) for (int k = 0; k < DEC; ++k) path[DEC * i + k] = d[k];
            }
            budget -= (int)min(x->props - props_before, (long)budget);   // a long replay ends the slice sooner
            plen = root_len;
            subs += 1;
            fresh = true;
            if (!ok) { clear_queue(x); fails += 1; continue; }
            status = S_PROPAGATE;
            continue;
        }
        if (status == S_PROPAGATE) {
            // LNS and restarts: a path gets its node limit, then the work-item moves on
            if (run.limit > 0 && sub_nodes >= run.limit) { clear_queue(x); cut += 1; status = S_NEED_SUB; continue; }
            budget -= 1;
            if (!pending) {
                sub_nodes += 1;
                nodes += 1;
            }
            bool ok = true;
#ifdef FZN_FLOATS
            if (obj_float) ok = float_bound(x, obj_var, obj_sense, *fbest) != FAILED; else
#endif
            if (obj_var >= 0 && use_results != RES_EVALUATE) {   // every candidate's own objective
                int best = use_results == RES_OWN ? results[st[ST_SUB]] : ctrl[C_BEST];
                if (best != INT_MAX) {
                    if (obj_sense > 0) ok = set_max(x, obj_var, (long)best - 1) != FAILED;
                    else ok = set_min(x, obj_var, -(long)best + 1) != FAILED;
                }
            }
            if (ok) {
                long props_before = x->props;
                x->passes += 1;
                PROF_START(t_prop);
                int r = propagate(x, props_before + max(budget, FZN_PROP_FLOOR));
                PROF_ADD(x->t_prop, t_prop);
                // a slice's budget counts propagations too: one node can run thousands of them
                budget -= (int)min(x->props - props_before, (long)budget);
                pending = r < 0;
                if (pending) break;                  // the budget is spent: the queue waits
                ok = r > 0;
                if (!ok && use_weights && x->failed >= 0) weights[x->failed * x->st] += 1;   // dom_w_deg
            }
            if (x->err) { atomic_or(&ctrl[C_ERR], x->err); status = S_DONE; break; }
            if (!ok) {
                if (fresh && enqueue_all) atomic_or(&ctrl[C_ROOT_FAILED], 1);
                fresh = false;
                clear_queue(x); fails += 1; status = S_BACKTRACK; continue;
            }
            if (fresh && enqueue_all) {   // the root's fixpoint: later passes start from it
                for (int v = 0; v < nv; ++v) { root_out_lb[v] = LB_(x, v); root_out_ub[v] = UB_(x, v); }
                for (int w = 0; w < nwords; ++w) root_out_bits[w] = BITS_(x, w);
                for (int k = 0; k < 2 * nf; ++k) root_out_fb[k] = FB_(x, k);
            }
            fresh = false;
            status = S_BRANCH;
            continue;
        }
        if (status == S_BRANCH) {
            if (emitting && (depth >= cutoff || plen + 2 > pcap)) {
                if (!emit_path(ctrl, emit, emit_cap, emit_stride, path, plen, st[ST_SUB])) { status = S_DONE; break; }
                status = S_BACKTRACK;
                continue;
            }
            int v, op, value, value_hi = 0;
            PROF_START(t_choose);
            bool open = choose(x, ngroups, weights, &rng, random_values, run.div, run.tie,
                               2 * depth >= maxd, &v, &op, &value, &value_hi);
            PROF_ADD(x->t_choose, t_choose);
            if (!open) {
                sols_found += 1;
#ifdef FZN_FLOATS
                mark_points_solved(x, lv, depth);
#endif
#ifdef FZN_FLOATS
                if (obj_float) {
                    long o = float_objective(x, obj_var, obj_sense);
                    status = o < atom_min(fbest, o) ? S_SOLUTION : S_BACKTRACK;
                    continue;
                }
#endif
                if (obj_var >= 0) {
                    int o = obj_sense * val(x, obj_var);
                    int mine = use_results ? atomic_min(&results[st[ST_SUB]], o) : INT_MAX;   // LNS: each path's best
                    int old = atomic_min(&ctrl[C_BEST], o);
                    status = (o < (use_results == RES_OWN ? mine : old)) ? S_SOLUTION : S_BACKTRACK;
                } else {
                    status = count_only ? S_BACKTRACK : S_SOLUTION;
                }
                continue;
            }
#ifdef FZN_FLOATS
            if (emitting && op == OP_FPOINT) {       // a point and its box stay in one sub-search space
                if (!emit_path(ctrl, emit, emit_cap, emit_stride, path, plen, st[ST_SUB])) { status = S_DONE; break; }
                status = S_BACKTRACK;
                continue;
            }
#endif
            if (depth >= maxd) { atomic_or(&ctrl[C_ERR], ERR_DEPTH); status = S_DONE; break; }
            __global int *l = lv + depth * NLV * x->st;
            LV_(l, LV_TRAIL) = x->ttop; LV_(l, LV_VAR) = v; LV_(l, LV_VAL) = value; LV_(l, LV_OP) = op;
            LV_(l, LV_PLEN) = plen; LV_(l, LV_NEG) = negation(x, v, op, value); LV_(l, LV_VAL_HI) = value_hi;
            depth += 1;
            x->epoch = depth;
            if (tracking) { if (plen < pcap) put_decision(path + DEC * plen, v, op, value, value_hi); plen += 1; }
            if (apply_decision(x, v, op, value, value_hi) == FAILED) { clear_queue(x); fails += 1; status = S_BACKTRACK; }
            else status = S_PROPAGATE;
            continue;
        }
        // S_BACKTRACK
        if (depth == 0) { status = S_NEED_SUB; continue; }
        depth -= 1;
        __global int *l = lv + depth * NLV * x->st;
        PROF_START(t_undo);
        clear_queue(x);
        restore(x, LV_(l, LV_TRAIL));
        PROF_ADD(x->t_copy, t_undo);
        plen = LV_(l, LV_PLEN);
        x->epoch = depth;
        if (LV_(l, LV_OP) & (OP_DONATED | OP_SOLVED)) continue;   // another path's now, or a found point's box
        int var = LV_(l, LV_VAR), value = LV_(l, LV_VAL), op = LV_(l, LV_NEG), value_hi = LV_(l, LV_VAL_HI);
        if (tracking) { if (plen < pcap) put_decision(path + DEC * plen, var, op, value, value_hi); plen += 1; }
        if (apply_decision(x, var, op, value, value_hi) == FAILED) { clear_queue(x); fails += 1; }
        else status = S_PROPAGATE;
    }

    if (x->err) { atomic_or(&ctrl[C_ERR], x->err); status = S_DONE; }
    st[ST_STATUS] = status; st[ST_DEPTH] = depth; st[ST_PLEN] = plen; st[ST_SUBNODES] = sub_nodes;
    st[ST_TTOP] = x->ttop; st[ST_QHEAD] = x->qhead; st[ST_QLEN] = x->qlen; st[ST_RNG] = (int)rng;
    st[ST_FLAGS] = status == S_PROPAGATE ? (fresh ? ST_FRESH : 0) | (pending ? ST_PENDING : 0) : 0;
    cnt[CNT_NODES] += nodes; cnt[CNT_FAILS] += fails; cnt[CNT_PROPS] += x->props;
    cnt[CNT_SOLS] += sols_found; cnt[CNT_SUBS] += subs; cnt[CNT_PASSES] += x->passes; cnt[CNT_CUT] += cut;
#ifdef FZN_PROFILE
    cnt[CNT_T_PROPAGATE] += x->t_prop; cnt[CNT_T_COPY] += x->t_copy; cnt[CNT_T_CHOOSE] += x->t_choose;
    PROF_ADD(cnt[CNT_T_TOTAL], t_slice);
#endif
}
