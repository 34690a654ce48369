// Domains: bounds lb/ub for every variable, plus a bitmap of 32-bit words for variables whose
// initial span is small (PHACT's representation). Bits outside [lb, ub] are clear whenever
// propagation is at rest, so a domain's size is the popcount of its words.
//
// Every change goes through the mutators (set_min, set_max, fix, remove_value, remove_mask,
// keep_shifted) of the execution model's file and mutate_common.cl: they return CHANGED, UNCHANGED or FAILED, keep
// bounds and bitmap in step, and wake the constraints that watch the variable.

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

// Two execution models share the queries below and the propagators (prop_*.cl); each has
// its own Ctx and its own mutators:
//  - one work-item per sub-search space (mutate_item.cl, search.cl): the work-item's domains
//    in global memory, a trail to undo changes, a queue of constraints to run;
//  - one work-group per sub-search space (built with -DFZN_GROUP; mutate_group.cl,
//    search_group.cl): the current node's domains in local memory (global with
//    -DFZN_STORE_GLOBAL), the group's work-items running the woken constraints side by side.

// The model's part of either execution model's Ctx (read-only, shared by every search).
// The model, read-only: one buffer (kernel_abi.PACKED's pk_model) and each table's offset in it,
// read as M_<TABLE>(x, i) (generated: kernel_abi.model_lines). Its tables: bm_off (first bitmap
// word of each variable, or -1), bm_nw (its number of words), base (the value of bit 0), ckind,
// coff and cd (constraint rows, fzn_gpu.flatzinc.registry's encoding), wptr and wlist (variable ->
// watching constraints, CSR; c << 2 | its WAKE_* event: wakes() below), deg, ubits (the bitmaps
// as declared: a set variable's universe), compan (a set variable's P -> its N, engine/sets.py,
// else -1), fslot (a float variable's slot, engine/floats.py, else -1; the work-item kernel's),
// cparts (work-items sharing each constraint, engine/pack.py; the work-group kernel's), and the
// search plan (sg_ptr, sg_var, sg_sel, sg_prec).
#define CTX_MODEL_FIELDS \
    int nv;                                                                                     \
    __global const int *model;                                                                  \
    MODEL_AT_FIELDS

// A search's counts and, built with FZN_PROFILE, its cycles by phase (profile.cl).
#ifdef FZN_PROFILE
#define CTX_PROFILE_FIELDS long passes; ulong t_prop, t_settle, t_copy, t_choose, t_fix, t_branch, t_back, t_clock; \
    __global long *kprof;
#else
#define CTX_PROFILE_FIELDS long passes;
#endif

#ifdef FZN_GROUP
#ifdef FZN_STORE_GLOBAL
#define STORE __global
#else
#define STORE __local
#endif

typedef struct {
    // model (read-only, shared by every group)
    CTX_MODEL_FIELDS
    // the group's node (shared by its work-items)
    STORE int *lb;
    STORE int *ub;
    STORE uint *bits;
    __local uint *changed;          // variables changed in this pass (a bit each)
    STORE int *clist;               // ... and the same variables listed, once each
    __local volatile int *nchanged; // the length of that list
    __local volatile int *failed;   // set by any work-item that meets a wipe-out
    int nc;
    int nu;                         // an active list's capacity: every constraint's parts
    int err;                        // ERR_* when a capacity ran out
    long props;                     // propagations run by this work-item
    __local long *red;              // four longs a work-item: the shares of a row the group walks
    CTX_PROFILE_FIELDS
} Ctx;

#ifdef FZN_NARROW
// Narrow domains (built with -DFZN_NARROW where engine/pack.py made every variable a bitmap of
// one word, word v for variable v): the node is its bitmaps alone. A bound is read from the
// word (lowest and highest set bit), a change is one atomic AND (mutate_group.cl), and there
// are no bounds to bring back into agreement with the bits between passes.
#define LB_(x, v) dmin(x, v)
#define UB_(x, v) dmax(x, v)
#else
#define LB_(x, v) ((x)->lb[v])
#define UB_(x, v) ((x)->ub[v])
#endif
#define BITS_(x, w) ((x)->bits[w])
#else
typedef struct {
    // model (read-only, shared by all work-items)
    CTX_MODEL_FIELDS
    // this work-item's state
    __global int *lb;
    __global int *ub;
    __global uint *bits;
    __global long *fb;              // float bounds as ordinals: 2 per slot (floats.cl)
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
    CTX_PROFILE_FIELDS
} Ctx;

// Per-work-item arrays are laid out either blocked (stride 1: each work-item's entries
// contiguous, best for CPU caches) or interleaved (stride = number of work-items: entry i of
// neighbouring work-items side by side, so a GPU warp's loads coalesce). Every access goes
// through these macros; the pointers are already offset to the work-item's first entry.
#define LB_(x, v) ((x)->lb[(v) * (x)->st])
#define UB_(x, v) ((x)->ub[(v) * (x)->st])
#define BITS_(x, w) ((x)->bits[(w) * (x)->st])
#define FB_(x, i) ((x)->fb[(i) * (x)->st])
#define STAMP_(x, v) ((x)->stamp[(v) * (x)->st])
#define QUEUE_(x, i) ((x)->queue[(i) * (x)->st])
#define INQ_(x, c) ((x)->inq[(c) * (x)->st])
#define TRAIL_(x, i) ((x)->trail[(long)(i) * (x)->st])
#endif

#define ERR_TRAIL 1
#define ERR_DEPTH 2
#define ERR_PATH 3

#define TRAIL_FIXED 4             // ints of a trail entry besides its bitmap words

#if defined(FZN_NARROW) && !defined(FZN_GROUP)
#error "narrow domains are the work-group model's (FZN_GROUP)"
#endif

#ifdef FZN_NARROW
// The index of the lowest set bit; 32 for none.
inline int low_bit(uint b) { return popcount((b & (0u - b)) - 1u); }
// An empty word (a wipe-out that another work-item met in this pass) reads as min > max, as a
// bound that crossed the other does in the general representation, and as not fixed.
inline int dmin(Ctx *x, int v) { return M_BASE(x, v) + low_bit(BITS_(x, v)); }
inline int dmax(Ctx *x, int v) { return M_BASE(x, v) + 31 - (int)clz(BITS_(x, v)); }
inline bool is_fixed(Ctx *x, int v) {
    uint b = BITS_(x, v);
    return b != 0u && (b & (b - 1u)) == 0u;
}
#else
inline bool is_fixed(Ctx *x, int v) { return LB_(x, v) == UB_(x, v); }
#endif

// Watch list entries (engine/pack.py): c << 2 | the event that wakes c (registry.py's WAKE_*).
// v has just changed, `moved` says whether a bound of v moved: a WAKE_DOM entry wakes on any
// change, WAKE_BND on a moved bound (a fixed variable's have), WAKE_FIX when v is now fixed.
inline int watcher(int entry) { return entry >> 2; }
inline bool wakes(Ctx *x, int entry, int v, bool moved) {
    int event = entry & 3;
    return event == WAKE_DOM || (event == WAKE_BND ? moved : is_fixed(x, v));
}
inline int val(Ctx *x, int v) { return LB_(x, v); }
#ifndef FZN_NARROW
inline int dmin(Ctx *x, int v) { return LB_(x, v); }
inline int dmax(Ctx *x, int v) { return UB_(x, v); }
#endif

#ifdef FZN_NARROW
inline bool has_bits(Ctx *x, int v) { return true; }
#else
inline bool has_bits(Ctx *x, int v) { return M_BM_OFF(x, v) >= 0; }
#endif
#ifdef FZN_FLOATS
inline bool is_float(Ctx *x, int v) { return M_FSLOT(x, v) >= 0; }
#else
inline bool is_float(Ctx *x, int v) { return false; }     // floats run in the work-item kernel only
#endif

#ifdef FZN_NARROW
inline bool bit_at(Ctx *x, int v, int value) { return (BITS_(x, v) >> ((value - M_BASE(x, v)) & 31)) & 1u; }

inline bool contains(Ctx *x, int v, long value) {
    long i = value - M_BASE(x, v);
    return i >= 0 && i < 32 && ((BITS_(x, v) >> i) & 1u);
}

inline long dsize(Ctx *x, int v) { return popcount(BITS_(x, v)); }

// The smallest value >= from in v's word, or INT_MAX.
inline int next_value(Ctx *x, int v, int from) {
    int b = M_BASE(x, v);
    long i = max((long)from - b, 0L);
    if (i >= 32) return INT_MAX;
    uint word = BITS_(x, v) & (0xFFFFFFFFu << (int)i);
    return word ? b + low_bit(word) : INT_MAX;
}

// The largest value <= from in v's word, or INT_MIN.
inline int prev_value(Ctx *x, int v, int from) {
    int b = M_BASE(x, v);
    long i = min((long)from - b, 31L);
    if (i < 0) return INT_MIN;
    uint word = BITS_(x, v) & (0xFFFFFFFFu >> (31 - (int)i));
    return word ? b + 31 - (int)clz(word) : INT_MIN;
}
#else
inline bool bit_at(Ctx *x, int v, int value) {
    int i = value - M_BASE(x, v);
    return (BITS_(x, M_BM_OFF(x, v) + (i >> 5)) >> (i & 31)) & 1u;
}

inline bool contains(Ctx *x, int v, long value) {
    if (value < LB_(x, v) || value > UB_(x, v)) return false;
    if (!has_bits(x, v)) return true;
    return bit_at(x, v, (int)value);
}

inline long dsize(Ctx *x, int v) {
    if (!has_bits(x, v)) return (long)UB_(x, v) - (long)LB_(x, v) + 1;
    int off = M_BM_OFF(x, v), nw = M_BM_NW(x, v);
    long n = 0;
    for (int w = 0; w < nw; ++w) n += popcount(BITS_(x, off + w));
    return n;
}

// The smallest value >= from in the bitmap of v, or INT_MAX.
inline int next_value(Ctx *x, int v, int from) {
    int off = M_BM_OFF(x, v), nw = M_BM_NW(x, v), b = M_BASE(x, v);
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
    int off = M_BM_OFF(x, v), nw = M_BM_NW(x, v), b = M_BASE(x, v);
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

#endif

// The bits of word w of a bitmap based at b that lie inside [lo, hi].
inline uint keep_mask(int b, int w, int lo, int hi) {
    int w_lo = b + (w << 5), w_hi = w_lo + 31;
    if (w_hi < lo || w_lo > hi) return 0u;
    uint keep = 0xFFFFFFFFu;
    if (lo > w_lo) keep &= 0xFFFFFFFFu << (lo - w_lo);
    if (hi < w_hi) keep &= 0xFFFFFFFFu >> (w_hi - hi);
    return keep;
}

// Bits s..s+31 of a bitmask of mw words (bits outside it read as 0); s may be negative.
inline uint mask_bits32(const uint *mask, int mw, long s) {
    long wi = s >> 5;                       // floor(s / 32)
    int sh = (int)(s & 31);
    uint a = (wi >= 0 && wi < mw) ? mask[wi] : 0u;
    uint b = (wi + 1 >= 0 && wi + 1 < mw) ? mask[wi + 1] : 0u;
    return sh ? (a >> sh) | (b << (32 - sh)) : a;
}

// Bits s..s+31 of v's bitmap (bits outside it read as 0); s may be negative.
#ifdef FZN_NARROW
inline uint var_bits32(Ctx *x, int v, long s) {
    if (s <= -32 || s >= 32) return 0u;
    uint a = BITS_(x, v);
    return s >= 0 ? a >> (int)s : a << (int)-s;
}
#else
inline uint var_bits32(Ctx *x, int v, long s) {
    int off = M_BM_OFF(x, v), nw = M_BM_NW(x, v);
    long wi = s >> 5;
    int sh = (int)(s & 31);
    uint a = (wi >= 0 && wi < nw) ? BITS_(x, off + (int)wi) : 0u;
    uint b = (wi + 1 >= 0 && wi + 1 < nw) ? BITS_(x, off + (int)wi + 1) : 0u;
    return sh ? (a >> sh) | (b << (32 - sh)) : a;
}
#endif

// Combine results: any FAILED wins.
#define TRY(e) do { if ((e) == FAILED) return false; } while (0)
