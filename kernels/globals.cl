// Native global constraints (declared to MiniZinc in mznlib/fzn_*.mzn; rows as registry.py
// encodes them). Each is sound and checking like every propagator (prop_*.cl); its doc
// comment states its strength against MiniZinc's standard decomposition. A propagator that
// narrows its own variables is woken again by them (the queue drops it before it runs), so
// none needs to loop to its own fixpoint.

// ---- table: x in t, generalised arc consistency
// Row [n, x_1..x_n, m, t_1..t_m]: m / n tuples, row-major. A tuple is valid when each of its
// values lies in its variable's domain; a value with no valid tuple leaves its domain. Removing
// an unsupported value invalidates no valid tuple, so one call reaches the fixpoint: domain
// consistency on bitmap variables whose span from their minimum fits TABLE_WORDS words (beyond
// it only the bounds move), bounds(Z) consistency elsewhere. MiniZinc's decomposition (an index
// variable and an element constraint per column) needs n + 1 propagators and a variable to
// reach what this does in one pass over the tuples per variable: O(n^2 k) for k tuples.
PROPAGATOR_FN bool prop_table(Ctx *x, __global const int *row) {
    int n = row[0];
    if (n == 0) return true;
    __global const int *xs = row + 1, *t = row + 2 + n;
    int k = row[1 + n] / n;
    uint unsup[TABLE_WORDS];
    for (int i = 0; i < n; ++i) {
        int v = xs[i];
        long base = dmin(x, v);
        int mw = (int)min((long)TABLE_WORDS, ((long)dmax(x, v) - base + 32) >> 5);
        for (int w = 0; w < mw; ++w) unsup[w] = 0xFFFFFFFFu;
        long lo = LONG_MAX, hi = LONG_MIN;
        for (int j = 0; j < k; ++j) {
            __global const int *tu = t + (long)j * n;
            bool valid = contains(x, v, tu[i]);
            for (int q = 0; q < n && valid; ++q) valid = contains(x, xs[q], tu[q]);
            if (!valid) continue;
            long a = tu[i];
            lo = min(lo, a);
            hi = max(hi, a);
            long o = a - base;
            if (o < 32L * mw) unsup[o >> 5] &= ~(1u << (o & 31));
        }
        if (lo > hi) return false;
        TRY(set_min(x, v, lo));
        TRY(set_max(x, v, hi));
        TRY(remove_mask(x, v, unsup, mw, base));
    }
    return true;
}

// ---- circuit: x_i = j + offset makes node j the successor of node i, one cycle through all
// Row [offset, n, x_1..x_n]. Domains to the nodes, no node its own successor (n > 1), the
// successors all different (value elimination), and no sub-tour: a chain of fixed successors
// s -> ... -> e shorter than n - 1 edges may not close, so s leaves x_e; a cycle of fixed
// successors shorter than n fails. MiniZinc's decomposition (all_different on x and on order
// variables, and an element constraint per node) finds a closing sub-tour only once the
// order variables' bounds cross; this removes the closing edge as soon as the chain forms.
// The fixed successors are gathered as bits, CIRCUIT_VALUES nodes at a time (one window up to
// that many nodes), and leave each unfixed domain a word at a time; the chains are walked from
// their first nodes alone (a fixed node no fixed successor names), each node once; the fixed
// nodes on no such chain lie on cycles. O(n) per window, where removing each fixed value from
// every other variable was O(n^2) removals, most of a big circuit's node on a GPU.
// Every successor one of the nodes off .. off + n - 1 (circuit and subcircuit).
inline bool successors_are_nodes(Ctx *x, __global const int *xs, int n, long off) {
    for (int i = 0; i < n; ++i) {
        TRY(set_min(x, xs[i], off));
        TRY(set_max(x, xs[i], off + n - 1));
    }
    return true;
}

#define CIRCUIT_VALUES (32 * ALLDIFF_WORDS)

// The fixed successors among the nodes wb .. wb + CIRCUIT_VALUES - 1, as bits of used (bit k:
// node wb + k), and how many there are; false when two variables name the same successor.
inline bool circuit_window(Ctx *x, __global const int *xs, int n, long off, int wb, uint *used, int *count) {
    for (int w = 0; w < ALLDIFF_WORDS; ++w) used[w] = 0u;
    *count = 0;
    for (int i = 0; i < n; ++i) {
        if (!is_fixed(x, xs[i])) continue;
        long k = (long)val(x, xs[i]) - off - wb;
        if (k < 0 || k >= CIRCUIT_VALUES) continue;
        uint bit = 1u << (k & 31);
        if (used[k >> 5] & bit) return false;
        used[k >> 5] |= bit;
        ++*count;
    }
    return true;
}

// Where the chain of fixed successors from node s ends (its first open node, or where n steps
// went round a cycle), and its length in `len`.
inline int circuit_chain_end(Ctx *x, __global const int *xs, int n, long off, int s, int *len) {
    int e = s;
    *len = 0;
    while (is_fixed(x, xs[e]) && *len < n) {
        e = (int)(val(x, xs[e]) - off);
        ++*len;
    }
    return e;
}

// Every successor fixed (and all different): whether they make one cycle through all n nodes.
inline bool circuit_one_cycle(Ctx *x, __global const int *xs, int n, long off) {
    int e = 0, len = 0;
    do { e = (int)(val(x, xs[e]) - off); len++; } while (e != 0 && len < n);
    return e == 0 && len == n;
}

PROPAGATOR_FN bool prop_circuit(Ctx *x, __global const int *row) {
    long off = row[0];
    int n = row[1];
    __global const int *xs = row + 2;
    if (!successors_are_nodes(x, xs, n, off)) return false;
    for (int i = 0; n > 1 && i < n; ++i) TRY(remove_value(x, xs[i], off + i));
    uint used[ALLDIFF_WORDS];
    int count = 0;
    bool fixed_more = false;    // a variable fixed here: the checks below wait for the next call
    for (int wb = 0; wb < n; wb += CIRCUIT_VALUES) {
        if (!circuit_window(x, xs, n, off, wb, used, &count)) return false;
        int mw = min(ALLDIFF_WORDS, (n - wb + 31) >> 5);
        for (int i = 0; count && i < n; ++i) {
            if (is_fixed(x, xs[i])) continue;
            int r = remove_mask(x, xs[i], used, mw, off + wb);
            if (r == FAILED) return false;
            fixed_more |= r == CHANGED && is_fixed(x, xs[i]);
        }
    }
    // what it fixed wakes it again, and the count of fixed nodes below must see them all
    if (fixed_more) return true;
    int nfixed = 0, chained = 0;
    for (int wb = 0; wb < n; wb += CIRCUIT_VALUES) {
        if (n > CIRCUIT_VALUES && !circuit_window(x, xs, n, off, wb, used, &count)) return false;
        nfixed += count;
        for (int s = wb; s < min(n, wb + CIRCUIT_VALUES); ++s) {
            int k = s - wb;
            if (!is_fixed(x, xs[s]) || (used[k >> 5] >> (k & 31)) & 1u) continue;    // no chain starts at s
            int len;
            int e = circuit_chain_end(x, xs, n, off, s, &len);
            chained += len;
            if (len + 1 < n) {
                int r = remove_value(x, xs[e], off + s);
                if (r == FAILED) return false;
                fixed_more |= r == CHANGED && is_fixed(x, xs[e]);
            }
        }
    }
    if (fixed_more) return true;
    if (nfixed == n) return circuit_one_cycle(x, xs, n, off);
    return chained == nfixed;       // else some fixed nodes close a cycle of fewer than n
}

// ---- subcircuit: x_i = j + offset makes node j the successor of node i; x_i = i + offset
// leaves node i out; the nodes left in form one cycle (of two nodes or more), or none.
// Row [offset, n, x_1..x_n]. Domains to the nodes; the successors all different (value
// elimination: a node taken by x_i, itself included, is nobody else's successor); the
// successor of a node surely in is in; a node no other node can point at is out. Sub-tours:
// once fixed successors close a cycle, every other node is out; a chain of fixed successors
// s -> ... -> e whose closing edge would leave a node surely in (x_k without k) outside the
// cycle loses that edge (s leaves x_e). MiniZinc's decomposition (all_different on x and on
// order variables, a first and a last node, an implication per node) sees a closing sub-tour
// only once order bounds cross; at a full assignment this propagator is exact. O(n^2) per call.
inline bool subcircuit_in(Ctx *x, __global const int *xs, long off, int i) {
    return !contains(x, xs[i], off + i);
}

inline bool subcircuit_fixed_in(Ctx *x, __global const int *xs, long off, int i) {
    return is_fixed(x, xs[i]) && val(x, xs[i]) != off + i;
}

PROPAGATOR_FN bool prop_subcircuit(Ctx *x, __global const int *row) {
    long off = row[0];
    int n = row[1];
    __global const int *xs = row + 2;
    if (!successors_are_nodes(x, xs, n, off)) return false;
    for (int i = 0; i < n; ++i) {
        if (!is_fixed(x, xs[i])) continue;
        long v = val(x, xs[i]);
        for (int j = 0; j < n; ++j)
            if (j != i) TRY(remove_value(x, xs[j], v));
        if (v != off + i) TRY(remove_value(x, xs[v - off], v));    // the successor is in
    }
    for (int j = 0; j < n; ++j) {                   // nobody can point at j: j is out
        if (!contains(x, xs[j], off + j)) {
            bool pointed = false;
            for (int i = 0; i < n && !pointed; ++i) pointed = i != j && contains(x, xs[i], off + j);
            if (!pointed) return false;
            continue;
        }
        bool pointed = false;
        for (int i = 0; i < n && !pointed; ++i) pointed = i != j && contains(x, xs[i], off + j);
        if (!pointed) TRY(fix(x, xs[j], off + j));
    }
    int sure = 0;
    for (int k = 0; k < n; ++k) sure += subcircuit_in(x, xs, off, k);
    for (int s = 0; s < n; ++s) {
        if (!subcircuit_fixed_in(x, xs, off, s)) continue;
        int e = s, len = 0, least = s, sure_on = subcircuit_in(x, xs, off, s);
        while (subcircuit_fixed_in(x, xs, off, e) && len < n) {
            e = (int)(val(x, xs[e]) - off);
            len++;
            if (e == s) break;
            least = min(least, e);
            sure_on += subcircuit_in(x, xs, off, e);
        }
        if (e == s) {                               // a closed cycle: everyone else is out
            if (least != s) continue;               // handled from its least node
            for (int k = 0; k < n; ++k) {
                bool on = false;
                int c = s;
                for (int step = 0; step < len && !on; ++step, c = (int)(val(x, xs[c]) - off)) on = c == k;
                if (!on) TRY(fix(x, xs[k], off + k));
            }
            continue;
        }
        bool pointed = false;                       // some fixed successor is s: s starts no chain
        for (int j = 0; j < n && !pointed; ++j) pointed = j != s && subcircuit_fixed_in(x, xs, off, j) && val(x, xs[j]) == off + s;
        if (!pointed && sure > sure_on) TRY(remove_value(x, xs[e], off + s));
    }
    return true;
}

// ---- diffn: rectangles (x_i, y_i, dx_i, dy_i) do not overlap: for every pair, one lies left
// of, right of, below or above the other (zero-sized ones too, as MiniZinc defines it)
// Row [n, x..., n, y..., n, dx..., n, dy...]. Bounds reasoning per pair: a side that the bounds
// rule out is dropped, no side left fails, and a single side left is enforced on all three of
// its variables (x_i + dx_i <= x_j pushes x_j up, x_i down and dx_i down). Beside it, the
// energy check MiniZinc's decomposition (four reified inequalities and a clause per pair)
// lacks: with no negative size, the rectangles' least areas fit in their bounding box.
// O(n^2) per call.
inline int diffn_sides(Ctx *x, int xi, int dxi, int xj, int dxj) {
    return ((long)dmin(x, xi) + dmin(x, dxi) <= dmax(x, xj)) | (((long)dmin(x, xj) + dmin(x, dxj) <= dmax(x, xi)) << 1);
}

// a + d <= b on bounds.
inline bool diffn_before(Ctx *x, int a, int d, int b) {
    TRY(set_min(x, b, (long)dmin(x, a) + dmin(x, d)));
    TRY(set_max(x, a, (long)dmax(x, b) - dmin(x, d)));
    TRY(set_max(x, d, (long)dmax(x, b) - dmin(x, a)));
    return true;
}

PROPAGATOR_FN bool prop_diffn(Ctx *x, __global const int *row) {
    int n = row[0];
    __global const int *px = row + 1, *py = row + 2 + n, *dx = row + 3 + 2 * n, *dy = row + 4 + 3 * n;
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) {
            int h = diffn_sides(x, px[i], dx[i], px[j], dx[j]), v = diffn_sides(x, py[i], dy[i], py[j], dy[j]);
            int sides = popcount(h) + popcount(v);
            if (sides == 0) return false;
            if (sides > 1) continue;
            if (h == 1 && !diffn_before(x, px[i], dx[i], px[j])) return false;
            if (h == 2 && !diffn_before(x, px[j], dx[j], px[i])) return false;
            if (v == 1 && !diffn_before(x, py[i], dy[i], py[j])) return false;
            if (v == 2 && !diffn_before(x, py[j], dy[j], py[i])) return false;
        }
    if (n == 0) return true;
    long x0 = LONG_MAX, x1 = LONG_MIN, y0 = LONG_MAX, y1 = LONG_MIN;
    double area = 0;                                // exact below 2^53; the slack covers rounding above
    for (int i = 0; i < n; ++i) {
        if (dmin(x, dx[i]) < 0 || dmin(x, dy[i]) < 0) return true;
        x0 = min(x0, (long)dmin(x, px[i]));
        x1 = max(x1, (long)dmax(x, px[i]) + dmax(x, dx[i]));
        y0 = min(y0, (long)dmin(x, py[i]));
        y1 = max(y1, (long)dmax(x, py[i]) + dmax(x, dy[i]));
        area += (double)dmin(x, dx[i]) * dmin(x, dy[i]);
    }
    return area <= (double)(x1 - x0) * (double)(y1 - y0) * (1.0 + 1e-12);
}

// ---- inverse: f_i = j + og  <->  g_j = i + of
// Row [n, f_1..f_n, of, m, g_1..g_m, og] (of, og: the arrays' first indices in the model).
// Domain consistent on the channel: j stays in f_i only while i is in g_j, and the other way;
// a fixed f_i fixes g_j. MiniZinc's decomposition reaches the same with 2n element constraints
// on a variable index; this is one propagator, O(n m) per call.
inline bool inverse_channel(Ctx *x, __global const int *f, int n, long of, __global const int *g, int m, long og) {
    for (int i = 0; i < n; ++i) {
        int v = f[i];
        TRY(set_min(x, v, og));
        TRY(set_max(x, v, og + m - 1));
        if (is_fixed(x, v)) {
            TRY(fix(x, g[val(x, v) - og], of + i));
            continue;
        }
        for (long j = dmin(x, v); j <= dmax(x, v); ++j)
            if (contains(x, v, j) && !contains(x, g[j - og], of + i)) TRY(remove_value(x, v, j));
    }
    return true;
}

PROPAGATOR_FN bool prop_inverse(Ctx *x, __global const int *row) {
    int n = row[0];
    __global const int *f = row + 1;
    long of = row[1 + n];
    int m = row[2 + n];
    __global const int *g = row + 3 + n;
    long og = row[3 + n + m];
    return inverse_channel(x, f, n, of, g, m, og) && inverse_channel(x, g, m, og, f, n, of);
}

// ---- regular: the word x_1..x_n is accepted by a DFA
// Row [n, x_1..x_n, Q, S, m, d_1..d_m, q0, F (a set)]: states 1..Q, symbols 1..S, d row-major
// Q x S (0: no transition), start q0, accepting states F. Domain consistent (generalised arc
// consistency, Pesant's forward-backward reasoning): a symbol stays at position i when a state
// reachable from q0 through the domains before i moves on it to a state from which the domains
// after i reach F. State sets are bitmasks of W = ceil(Q / 64) words (at most REGULAR_WORDS:
// mznlib sends bigger automata to MiniZinc's decomposition), kept in REGULAR_STORE words of
// private memory. Where the forward sets' checkpoints and a block of them fit there (words of up
// to 256 positions with W = 4, 4,096 with W = 1), regular_checkpointed walks only the states the
// forward pass reaches: O(n |F| S) a call, |F| a position's forward set. Otherwise the backward
// sets over all states are computed a block of positions at a time, each block's from the end of
// the word: O(n Q S (1 + n W / REGULAR_STORE)). MiniZinc's decomposition (a state variable per
// position and a two-index element constraint) is not domain consistent.
#define REGULAR_STORE 128
inline bool regular_has(const ulong *set, int q) { return (set[(q - 1) >> 6] >> ((q - 1) & 63)) & 1ul; }
inline void regular_add(ulong *set, int q) { set[(q - 1) >> 6] |= 1ul << ((q - 1) & 63); }
// The index (from 0) of the lowest set bit of b != 0.
inline int regular_low(ulong b) { return (int)popcount((b & (0ul - b)) - 1ul); }

// out = the states from which symbol choices in x_p's domain lead into `after` (W words).
inline void regular_step(Ctx *x, __global const int *row, int p, const ulong *after, ulong *out) {
    int n = row[0], Q = row[1 + n], S = row[2 + n];
    __global const int *xs = row + 1, *d = row + 4 + n;
    int W = (Q + 63) >> 6;
    for (int w = 0; w < W; ++w) out[w] = 0ul;
    for (int q = 1; q <= Q; ++q)
        for (int s = max(1, dmin(x, xs[p])); s <= min(S, dmax(x, xs[p])); ++s) {
            int t = d[(q - 1) * S + (s - 1)];
            if (t >= 1 && contains(x, xs[p], s) && regular_has(after, t)) { regular_add(out, q); break; }
        }
}

// The states from which the domains of positions from..n-1 lead into F.
inline void regular_back(Ctx *x, __global const int *row, int from, ulong *out) {
    int n = row[0], Q = row[1 + n], m = row[3 + n];
    __global const int *F = row + 5 + n + m;
    int W = (Q + 63) >> 6;
    ulong prev[REGULAR_WORDS];
    for (int w = 0; w < W; ++w) out[w] = 0ul;
    for (int q = 1; q <= Q; ++q) if (set_has(F, q)) regular_add(out, q);
    for (int p = n - 1; p >= from; --p) {
        regular_step(x, row, p, out, prev);
        for (int w = 0; w < W; ++w) out[w] = prev[w];
    }
}

// The forward sets' block for regular_checkpointed: REGULAR_STORE words hold a checkpoint (the
// forward set where each block begins) for every block and one block's sets; the block of b
// positions (b + ceil(n / b) sets of W words) the smallest that fits, 0 where none does.
inline int regular_block(int n, int W) {
    for (int b = 1; b <= n; ++b) {
        int used = (b + (n + b - 1) / b) * W;
        if (used <= REGULAR_STORE) return b;
        if (b * W > REGULAR_STORE) break;
    }
    return 0;
}

// next = the states symbol s leads to from `from` (W words); whether it leads anywhere.
inline bool regular_forward(__global const int *d, int S, int s, const ulong *from, ulong *next, int W) {
    bool any = false;
    for (int w = 0; w < W; ++w)
        for (ulong bits = from[w]; bits; bits &= bits - 1ul) {
            int q = (w << 6) + 1 + regular_low(bits);
            int t = d[(q - 1) * S + (s - 1)];
            if (t >= 1) { regular_add(next, t); any = true; }
        }
    return any;
}

// x_i's symbols (1..S, S <= 64) as a word, bit s - 1 for symbol s.
inline ulong regular_symbols(Ctx *x, int v) {
    ulong dom = 0ul;
    for (int s = dmin(x, v); s <= dmax(x, v); s = next_in(x, v, s)) dom |= 1ul << (s - 1);
    return dom;
}

// The forward set after position i from the one before it: every symbol of x_i's domain.
inline void regular_forward_all(Ctx *x, __global const int *row, int i, const ulong *from, ulong *next) {
    int n = row[0], Q = row[1 + n], S = row[2 + n];
    __global const int *xs = row + 1, *d = row + 4 + n;
    int W = (Q + 63) >> 6, v = xs[i];
    for (int w = 0; w < W; ++w) next[w] = 0ul;
    if (S > 64) {
        for (int s = dmin(x, v); s <= dmax(x, v); s = next_in(x, v, s)) regular_forward(d, S, s, from, next, W);
        return;
    }
    ulong dom = regular_symbols(x, v);  // each state's row read once, in order
    for (int w = 0; w < W; ++w)
        for (ulong bits = from[w]; bits; bits &= bits - 1ul) {
            __global const int *out = d + ((w << 6) + regular_low(bits)) * S;
            for (ulong left = dom; left; left &= left - 1ul) {
                int t = out[regular_low(left)];
                if (t >= 1) regular_add(next, t);
            }
        }
}

// Pesant's forward-backward pass with the backward sets restricted to the states the forward
// pass reaches (the few of a big automaton that a word's prefix allows): O(n |F| S) where F is
// a position's forward set, against O(n Q S) and more for prop_regular's unrestricted backward
// sets. The forward sets are kept at each block's start and recomputed a block at a time, the
// blocks taken from the last; `block` from regular_block, `store` REGULAR_STORE words.
inline bool regular_checkpointed(Ctx *x, __global const int *row, int block, ulong *store) {
    int n = row[0], Q = row[1 + n], S = row[2 + n], m = row[3 + n];
    __global const int *xs = row + 1, *d = row + 4 + n, *F = row + 5 + n + m;
    int W = (Q + 63) >> 6, blocks = (n + block - 1) / block;
    ulong cur[REGULAR_WORDS], back[REGULAR_WORDS], prev[REGULAR_WORDS];
    ulong *marks = store, *sets = store + blocks * W;  // marks[b]: the forward set before block b
    for (int w = 0; w < W; ++w) cur[w] = 0ul;
    regular_add(cur, row[4 + n + m]);
    for (int i = 0; i < n; ++i) {
        if (i % block == 0)
            for (int w = 0; w < W; ++w) marks[(i / block) * W + w] = cur[w];
        regular_forward_all(x, row, i, cur, prev);
        bool any = false;
        for (int w = 0; w < W; ++w) { cur[w] = prev[w]; any |= prev[w] != 0ul; }
        if (!any) return false;
    }
    bool any = false;  // back: the states after position n - 1 that accept, among those reached
    for (int w = 0; w < W; ++w) back[w] = 0ul;
    for (int w = 0; w < W; ++w)
        for (ulong bits = cur[w]; bits; bits &= bits - 1ul) {
            int q = (w << 6) + 1 + regular_low(bits);
            if (set_has(F, q)) { regular_add(back, q); any = true; }
        }
    if (!any) return false;
    for (int b = blocks - 1; b >= 0; --b) {
        int i0 = b * block, i1 = min(n, i0 + block);
        for (int w = 0; w < W; ++w) sets[w] = marks[b * W + w];  // sets[(i - i0) * W]: before position i
        for (int i = i0; i + 1 < i1; ++i) regular_forward_all(x, row, i, sets + (i - i0) * W, sets + (i + 1 - i0) * W);
        for (int i = i1 - 1; i >= i0; --i) {
            const ulong *fw = sets + (i - i0) * W;
            int v = xs[i];
            for (int w = 0; w < W; ++w) prev[w] = 0ul;
            if (S <= 64) {  // the symbols as one word: each state's row read once, in order
                ulong dom = regular_symbols(x, v), supp = 0ul;
                for (int w = 0; w < W; ++w)
                    for (ulong bits = fw[w]; bits; bits &= bits - 1ul) {
                        int q = (w << 6) + 1 + regular_low(bits);
                        __global const int *out = d + (q - 1) * S;
                        bool leads = false;
                        for (ulong left = dom; left; left &= left - 1ul) {
                            int s = 1 + regular_low(left);
                            int t = out[s - 1];
                            if (t >= 1 && regular_has(back, t)) { supp |= 1ul << (s - 1); leads = true; }
                        }
                        if (leads) regular_add(prev, q);
                    }
                for (ulong gone = dom & ~supp; gone; gone &= gone - 1ul)
                    TRY(remove_value(x, v, 1 + regular_low(gone)));
            } else
            for (int s = dmin(x, v); s <= dmax(x, v);) {
                int following = next_in(x, v, s);  // read before s may leave the domain
                bool supported = false;
                for (int w = 0; w < W; ++w)
                    for (ulong bits = fw[w]; bits; bits &= bits - 1ul) {
                        int q = (w << 6) + 1 + regular_low(bits);
                        int t = d[(q - 1) * S + (s - 1)];
                        if (t >= 1 && regular_has(back, t)) { supported = true; regular_add(prev, q); }
                    }
                if (!supported) TRY(remove_value(x, v, s));
                s = following;
            }
            any = false;
            for (int w = 0; w < W; ++w) { back[w] = prev[w]; any |= prev[w] != 0ul; }
            if (!any) return false;
        }
    }
    return true;
}

PROPAGATOR_FN bool prop_regular(Ctx *x, __global const int *row) {
    int n = row[0], Q = row[1 + n], S = row[2 + n], m = row[3 + n];
    __global const int *xs = row + 1, *d = row + 4 + n;
    int q0 = row[4 + n + m];
    int W = (Q + 63) >> 6, block = REGULAR_STORE / W;
    ulong fw[REGULAR_WORDS], next[REGULAR_WORDS], store[REGULAR_STORE];
    if (q0 < 1 || q0 > Q) return false;
    if (n == 0) return set_has(row + 5 + n + m, q0);
    for (int i = 0; i < n; ++i) {
        TRY(set_min(x, xs[i], 1));
        TRY(set_max(x, xs[i], S));
    }
    int fits = regular_block(n, W);
    if (fits > 0) return regular_checkpointed(x, row, fits, store);
    for (int w = 0; w < W; ++w) fw[w] = 0ul;
    regular_add(fw, q0);
    for (int i0 = 0; i0 < n; i0 += block) {
        int i1 = min(n, i0 + block);
        // store[(i - i0) * W ..]: the backward set after position i, for i in [i0, i1)
        regular_back(x, row, i1, store + (i1 - 1 - i0) * W);
        for (int i = i1 - 1; i > i0; --i)
            regular_step(x, row, i, store + (i - i0) * W, store + (i - 1 - i0) * W);
        for (int i = i0; i < i1; ++i) {
            const ulong *back = store + (i - i0) * W;
            for (int w = 0; w < W; ++w) next[w] = 0ul;
            int v = xs[i];
            for (int s = dmin(x, v); s <= dmax(x, v); ++s) {
                if (!contains(x, v, s)) continue;
                bool supported = false;
                for (int q = 1; q <= Q; ++q) {
                    if (!regular_has(fw, q)) continue;
                    int t = d[(q - 1) * S + (s - 1)];
                    if (t >= 1 && regular_has(back, t)) { supported = true; regular_add(next, t); }
                }
                if (!supported) TRY(remove_value(x, v, s));
            }
            bool any = false;
            for (int w = 0; w < W; ++w) { fw[w] = next[w]; any |= next[w] != 0ul; }
            if (!any) return false;
        }
    }
    return true;
}

// ---- counting a value (global_cardinality, count_eq)
// How many x are fixed to a, and how many may take it.
inline void count_of(Ctx *x, __global const int *xs, int n, long a, int *fixed, int *possible) {
    *fixed = 0;
    *possible = 0;
    for (int i = 0; i < n; ++i) {
        if (!contains(x, xs[i], a)) continue;
        (*possible)++;
        if (is_fixed(x, xs[i])) (*fixed)++;
    }
}

// The number of x taking a lies in [lo, hi]: once it is reached, a leaves the other x; once it
// needs every x that may take a, they all take it.
inline bool count_force(Ctx *x, __global const int *xs, int n, long a, int fixed, int possible, long lo, long hi) {
    if (fixed > hi || possible < lo) return false;
    if (fixed == hi && possible > fixed) {
        for (int i = 0; i < n; ++i)
            if (!is_fixed(x, xs[i])) TRY(remove_value(x, xs[i], a));
    } else if (possible == lo && possible > fixed) {
        for (int i = 0; i < n; ++i)
            if (contains(x, xs[i], a)) TRY(fix(x, xs[i], a));
    }
    return true;
}

// ---- global_cardinality: count_c = #{i : x_i = cover_c}
// Rows [n, x..., k, cover..., k, counts...] (counts variables) or [n, x..., k, cover..., k,
// low..., k, up...] (constant bounds); `closed`: every x_i takes a cover value. For each
// cover value: its count lies between the x fixed to it and the x that may take it; a value
// whose count is reached leaves the other x, one whose count needs every x that may take it
// fixes them. With counts variables the counts sum to at most n (MiniZinc's implied
// constraint), and to n when closed with distinct cover values. The decomposition's strength
// (a count per value, each a reified equality per variable and a sum) in one propagator with
// no auxiliary variables: O(n k) per call.
inline long gcc_lo(Ctx *x, __global const int *cnt, __global const int *lows, int c) {
    return cnt ? dmin(x, cnt[c]) : lows[c];
}
inline long gcc_hi(Ctx *x, __global const int *cnt, __global const int *ups, int c) {
    return cnt ? dmax(x, cnt[c]) : ups[c];
}

// x_i to the cover values: its bounds to the nearest ones, a bitmap's other values removed.
inline bool gcc_closed(Ctx *x, int v, __global const int *cover, int k) {
    long lo = LONG_MAX, hi = LONG_MIN;
    for (int c = 0; c < k; ++c) {
        if (cover[c] >= dmin(x, v)) lo = min(lo, (long)cover[c]);
        if (cover[c] <= dmax(x, v)) hi = max(hi, (long)cover[c]);
    }
    if (lo > hi) return false;
    TRY(set_min(x, v, lo));
    TRY(set_max(x, v, hi));
    if (has_bits(x, v)) {
        for (int a = dmin(x, v); a <= dmax(x, v); a = next_value(x, v, a + 1)) {
            bool in = false;
            for (int c = 0; c < k && !in; ++c) in = cover[c] == a;
            if (!in) TRY(remove_value(x, v, a));
            if (a == INT_MAX) break;
        }
    }
    return true;
}

PROPAGATOR_FN bool prop_gcc(Ctx *x, __global const int *row, bool var_counts, bool closed) {
    int n = row[0];
    __global const int *xs = row + 1;
    int k = row[1 + n];
    __global const int *cover = row + 2 + n;
    __global const int *cnt = var_counts ? row + 3 + n + k : 0;
    __global const int *lows = var_counts ? 0 : row + 3 + n + k;
    __global const int *ups = var_counts ? 0 : row + 4 + n + 2 * k;
    if (closed)
        for (int i = 0; i < n; ++i)
            if (!gcc_closed(x, xs[i], cover, k)) return false;
    for (int c = 0; c < k; ++c) {
        int fixed, possible;
        count_of(x, xs, n, cover[c], &fixed, &possible);
        if (cnt) {
            TRY(set_min(x, cnt[c], fixed));
            TRY(set_max(x, cnt[c], possible));
        }
        if (!count_force(x, xs, n, cover[c], fixed, possible, gcc_lo(x, cnt, lows, c), gcc_hi(x, cnt, ups, c)))
            return false;
    }
    if (cnt) {
        bool distinct = true;
        for (int c = 0; c < k && distinct; ++c)
            for (int e = c + 1; e < k && distinct; ++e) distinct = cover[c] != cover[e];
        long sum_lo = 0, sum_hi = 0;
        for (int c = 0; c < k; ++c) { sum_lo += dmin(x, cnt[c]); sum_hi += dmax(x, cnt[c]); }
        for (int c = 0; c < k; ++c) {
            long l = dmin(x, cnt[c]), h = dmax(x, cnt[c]);
            TRY(set_max(x, cnt[c], n - (sum_lo - l)));
            if (closed && distinct) TRY(set_min(x, cnt[c], n - (sum_hi - h)));
        }
    } else if (closed) {
        long sum_lo = 0, sum_hi = 0;
        for (int c = 0; c < k; ++c) { sum_lo += lows[c]; sum_hi += ups[c]; }
        if (n < sum_lo || n > sum_hi) return false;
    }
    return true;
}

// ---- alldifferent_except: x_i = x_j only on values of S
// Row [n, x..., S (a set)]. Value elimination: a variable fixed outside S removes its value
// from the others. The decomposition (a disjunction per pair, or a global_cardinality_low_up
// over every value outside S) prunes the same; this is one propagator, O(n^2) per call.
PROPAGATOR_FN bool prop_alldiff_except(Ctx *x, __global const int *row) {
    int n = row[0];
    __global const int *xs = row + 1, *S = row + 1 + n;
    for (int i = 0; i < n; ++i) {
        if (!is_fixed(x, xs[i]) || set_has(S, val(x, xs[i]))) continue;
        long v = val(x, xs[i]);
        for (int j = 0; j < n; ++j)
            if (j != i) TRY(remove_value(x, xs[j], v));
    }
    return true;
}

// ---- cumulative: at every time, the tasks running use at most b
// Row [n, s..., n, d..., n, r..., b]. Time-tabling: task j surely runs over its compulsory
// part [max s_j, min s_j + min d_j) using min r_j. The profile of compulsory parts may not
// exceed b (b at least its peak, and 0), and a task whose placement would lift the profile
// above max b at some time moves its earliest start past, and its latest start before, the
// compulsory parts that cause it. A task whose usage is open (an optional task: r in 0..1 on
// a machine it may not take) is limited too: at most the room the others' profile leaves over
// its own compulsory part, and none where no start leaves room for a usage of one (before,
// such a task was skipped: on test-scheduling's machines, usage bool2int(machine = m), the
// standard library's decomposition found a schedule the propagator's search never did).
// MiniZinc's time decomposition (a reified sum per time point) reaches the same bounds with a
// constraint per time point; this is one propagator whose cost depends on the tasks only:
// O(n^2) per move of a start.
inline bool cum_has_part(Ctx *x, int s, int d, int r) {
    return dmin(x, r) > 0 && (long)dmax(x, s) < (long)dmin(x, s) + dmin(x, d);
}

// The compulsory profile at time t, task `skip` left out.
inline long cum_load(Ctx *x, __global const int *s, __global const int *d, __global const int *r, int n, int skip, long t) {
    long load = 0;
    for (int j = 0; j < n; ++j)
        if (j != skip && cum_has_part(x, s[j], d[j], r[j]) && dmax(x, s[j]) <= t && t < (long)dmin(x, s[j]) + dmin(x, d[j]))
            load += dmin(x, r[j]);
    return load;
}

// A time in [from, from + len) where the profile (task `skip` left out) exceeds room, or
// LONG_MIN: the profile's maximum over the window lies at its start or where a part begins.
inline long cum_conflict(Ctx *x, __global const int *s, __global const int *d, __global const int *r, int n, int skip,
                         long from, long len, long room) {
    if (cum_load(x, s, d, r, n, skip, from) > room) return from;
    for (int j = 0; j < n; ++j) {
        if (j == skip || !cum_has_part(x, s[j], d[j], r[j])) continue;
        long t = dmax(x, s[j]);
        if (t > from && t < from + len && cum_load(x, s, d, r, n, skip, t) > room) return t;
    }
    return LONG_MIN;
}

PROPAGATOR_FN bool prop_cumulative(Ctx *x, __global const int *row) {
    int n = row[0];
    if (n == 0) return true;
    __global const int *s = row + 1, *d = row + 2 + n, *r = row + 3 + 2 * n;
    int b = row[3 + 3 * n];
    TRY(set_min(x, b, 0));
    long peak = 0;
    for (int j = 0; j < n; ++j)
        if (cum_has_part(x, s[j], d[j], r[j])) peak = max(peak, cum_load(x, s, d, r, n, -1, dmax(x, s[j])));
    TRY(set_min(x, b, peak));
    long cap = dmax(x, b);
    for (int i = 0; i < n; ++i) {
        long di = dmin(x, d[i]), ri = dmin(x, r[i]);
        if (di <= 0 || dmax(x, r[i]) <= 0) continue;
        if (ri < dmax(x, r[i])) {  // an open usage: what room the others leave
            long lst = dmax(x, s[i]), ect = (long)dmin(x, s[i]) + di;
            if (lst < ect) {  // task i surely runs over [lst, ect): the others' peak there bounds r_i
                long load = cum_load(x, s, d, r, n, i, lst);
                for (int j = 0; j < n; ++j) {
                    if (j == i || !cum_has_part(x, s[j], d[j], r[j])) continue;
                    long t = dmax(x, s[j]);
                    if (t > lst && t < ect) load = max(load, cum_load(x, s, d, r, n, i, t));
                }
                TRY(set_max(x, r[i], cap - load));
            }
            if (ri <= 0) {  // no start with a usage of one: none; else every start stays possible
                long est = dmin(x, s[i]);
                for (long t; (t = cum_conflict(x, s, d, r, n, i, est, di, cap - 1)) != LONG_MIN;) {
                    long end = LONG_MAX;
                    for (int j = 0; j < n; ++j)
                        if (j != i && cum_has_part(x, s[j], d[j], r[j]) && dmax(x, s[j]) <= t &&
                            t < (long)dmin(x, s[j]) + dmin(x, d[j]))
                            end = min(end, (long)dmin(x, s[j]) + dmin(x, d[j]));
                    est = end;
                    if (est > dmax(x, s[i])) break;
                }
                if (est > dmax(x, s[i])) TRY(set_max(x, r[i], 0));
                continue;
            }
            ri = dmin(x, r[i]);
        }
        long room = cap - ri;
        long est = dmin(x, s[i]);
        for (long t; (t = cum_conflict(x, s, d, r, n, i, est, di, room)) != LONG_MIN;) {
            long end = LONG_MAX;                // the first end among the parts running at t
            for (int j = 0; j < n; ++j)
                if (j != i && cum_has_part(x, s[j], d[j], r[j]) && dmax(x, s[j]) <= t && t < (long)dmin(x, s[j]) + dmin(x, d[j]))
                    end = min(end, (long)dmin(x, s[j]) + dmin(x, d[j]));
            est = end;
            if (est > dmax(x, s[i])) return false;
        }
        TRY(set_min(x, s[i], est));
        long lst = dmax(x, s[i]);
        for (long t; (t = cum_conflict(x, s, d, r, n, i, lst, di, room)) != LONG_MIN;) {
            long start = LONG_MIN;              // the last start among the parts running at t
            for (int j = 0; j < n; ++j)
                if (j != i && cum_has_part(x, s[j], d[j], r[j]) && dmax(x, s[j]) <= t && t < (long)dmin(x, s[j]) + dmin(x, d[j]))
                    start = max(start, (long)dmax(x, s[j]));
            lst = start - di;
            if (lst < dmin(x, s[i])) return false;
        }
        TRY(set_max(x, s[i], lst));
    }
    return true;
}

// ---- among: n = #{i : x_i in S}
// Row [n, k, x..., S]. Each x_i lies surely in S, surely outside it, or either (in_set_status,
// as set_in_reif reads it); n lies between the sure ones and the possible ones; once its
// maximum is the sure count, the undecided x leave S, and once its minimum needs every
// possible one, they enter it (post_not_in_set, post_in_set). MiniZinc's decomposition (a
// set_in_reif per variable and a sum) prunes the same with k + 1 propagators and k booleans;
// this is one, O(k |S|) per call.
PROPAGATOR_FN bool prop_among(Ctx *x, __global const int *row) {
    int nv = row[0], k = row[1];
    __global const int *xs = row + 2, *S = row + 2 + k;
    int sure = 0, possible = 0;
    for (int i = 0; i < k; ++i) {
        int st = in_set_status(x, xs[i], S);
        if (st == ENTAILED) sure++;
        if (st != DISENTAILED) possible++;
    }
    TRY(set_min(x, nv, sure));
    TRY(set_max(x, nv, possible));
    if (sure == possible) return true;
    bool out = dmax(x, nv) == sure, in = dmin(x, nv) == possible;
    if (!out && !in) return true;
    for (int i = 0; i < k; ++i) {
        if (in_set_status(x, xs[i], S) != UNDECIDED) continue;
        // post_*_in_set say false on a wipe-out (TRY catches FAILED only)
        if (!(out ? post_not_in_set(x, xs[i], S) : post_in_set(x, xs[i], S))) return false;
    }
    return true;
}

// ---- count_eq: c = #{i : x_i = y}
// Row [n, x..., y, c]. With y fixed: c lies between the x fixed to y and the x that may take
// it, and a count reached removes y from the other x, one that needs every candidate fixes
// them. With y open (a bitmap, or a span of at most 64 values): c lies within the extremes of
// those counts over y's values, and a value of y whose counts miss c's bounds leaves y;
// otherwise c is at most the x whose bounds meet y's. The decomposition (a reified equality
// per variable and a sum) is weaker when y is open (it never prunes y) and needs n + 1
// propagators and n booleans. O(n |dom y|) per call.
PROPAGATOR_FN bool prop_count_eq(Ctx *x, __global const int *row) {
    int n = row[0];
    __global const int *xs = row + 1;
    int y = row[1 + n], c = row[2 + n];
    TRY(set_min(x, c, 0));
    TRY(set_max(x, c, n));
    int fixed, possible;
    if (is_fixed(x, y)) {
        long a = val(x, y);
        count_of(x, xs, n, a, &fixed, &possible);
        TRY(set_min(x, c, fixed));
        TRY(set_max(x, c, possible));
        return count_force(x, xs, n, a, fixed, possible, dmin(x, c), dmax(x, c));
    }
    if (!has_bits(x, y) && (long)dmax(x, y) - dmin(x, y) >= 64) {
        int meet = 0;
        for (int i = 0; i < n; ++i)
            if (dmax(x, xs[i]) >= dmin(x, y) && dmin(x, xs[i]) <= dmax(x, y)) meet++;
        TRY(set_max(x, c, meet));
        return true;
    }
    long lo = LONG_MAX, hi = LONG_MIN;
    for (long a = dmin(x, y); a <= dmax(x, y); ++a) {
        if (!contains(x, y, a)) continue;
        count_of(x, xs, n, a, &fixed, &possible);
        if (fixed > dmax(x, c) || possible < dmin(x, c)) {
            TRY(remove_value(x, y, a));
            continue;
        }
        lo = min(lo, (long)fixed);
        hi = max(hi, (long)possible);
    }
    if (lo > hi) return false;
    TRY(set_min(x, c, lo));
    TRY(set_max(x, c, hi));
    return true;
}

// ---- lex_lesseq / lex_less: x <=lex y (x <lex y when strict)
// Row [n, x..., m, y...]; when the common positions are all equal, the shorter (or equal, if
// not strict) array is the smaller, as in MiniZinc's decomposition. Past the prefix of fixed
// equal pairs, the first open pair gets x_i <= y_i on bounds, and x_i < y_i when the rest cannot
// come out right with x_i = y_i (its first pair not fixed equal has x_k > y_k, or it is all
// equal and the lengths decide against it). The decomposition (a boolean per position and two
// implications each) reaches the same with 2n propagators. O(n) per call.
inline bool lex_rest_fails(Ctx *x, __global const int *xs, int nx, __global const int *ys, int ny, int from, bool strict) {
    int size = min(nx, ny);
    for (int k = from; k < size; ++k) {
        if (is_fixed(x, xs[k]) && is_fixed(x, ys[k]) && val(x, xs[k]) == val(x, ys[k])) continue;
        return dmin(x, xs[k]) > dmax(x, ys[k]);
    }
    return strict ? nx >= ny : nx > ny;
}

PROPAGATOR_FN bool prop_lex(Ctx *x, __global const int *row, bool strict) {
    int nx = row[0];
    __global const int *xs = row + 1;
    int ny = row[1 + nx];
    __global const int *ys = row + 2 + nx;
    int size = min(nx, ny);
    for (int i = 0; i < size; ++i) {
        int a = xs[i], b = ys[i];
        TRY(set_max(x, a, dmax(x, b)));
        TRY(set_min(x, b, dmin(x, a)));
        if (dmax(x, a) < dmin(x, b)) return true;
        if (is_fixed(x, a) && is_fixed(x, b)) continue;          // equal: the next pair decides
        if (lex_rest_fails(x, xs, nx, ys, ny, i + 1, strict)) {
            TRY(set_max(x, a, (long)dmax(x, b) - 1));
            TRY(set_min(x, b, (long)dmin(x, a) + 1));
        }
        return true;
    }
    return strict ? nx < ny : nx <= ny;
}

// ---- nvalue: n = the number of distinct values among x
// Row [n, x_1..x_k]. n lies between the distinct values already fixed (at least 1 when there
// are variables) and the fewer of the variables and the values their hull spans (exactly the
// fixed ones once every x is fixed); when n can take no more values than those fixed, every
// open x takes one of them. The decomposition (a disjunction per value of the hull, and a sum)
// grows with the hull; this is O(k^2) per call plus a pass over open bitmaps.
inline bool nvalue_seen(Ctx *x, __global const int *xs, int upto, long v) {
    for (int j = 0; j < upto; ++j)
        if (is_fixed(x, xs[j]) && val(x, xs[j]) == v) return true;
    return false;
}

PROPAGATOR_FN bool prop_nvalue(Ctx *x, __global const int *row) {
    int nv = row[0], k = row[1];
    __global const int *xs = row + 2;
    long distinct = 0, lo = LONG_MAX, hi = LONG_MIN;
    bool all_fixed = true;
    for (int i = 0; i < k; ++i) {
        lo = min(lo, (long)dmin(x, xs[i]));
        hi = max(hi, (long)dmax(x, xs[i]));
        if (!is_fixed(x, xs[i])) { all_fixed = false; continue; }
        if (!nvalue_seen(x, xs, i, val(x, xs[i]))) distinct++;
    }
    long upper = all_fixed ? distinct : min((long)k, hi - lo + 1);
    TRY(set_min(x, nv, max(distinct, k > 0 ? 1L : 0L)));
    TRY(set_max(x, nv, upper));
    if (dmax(x, nv) == distinct && !all_fixed) {
        for (int i = 0; i < k; ++i) {
            int v = xs[i];
            if (is_fixed(x, v)) continue;
            long up = LONG_MAX, down = LONG_MIN;    // the fixed values nearest to v's bounds
            for (int j = 0; j < k; ++j) {
                if (!is_fixed(x, xs[j])) continue;
                long a = val(x, xs[j]);
                if (a >= dmin(x, v)) up = min(up, a);
                if (a <= dmax(x, v)) down = max(down, a);
            }
            if (up > down) return false;
            TRY(set_min(x, v, up));
            TRY(set_max(x, v, down));
            if (has_bits(x, v))
                for (int a = dmin(x, v); a < dmax(x, v); a = next_value(x, v, a + 1))
                    if (!nvalue_seen(x, xs, k, a)) TRY(remove_value(x, v, a));
        }
    }
    return true;
}

// ---- increasing / decreasing: x_1 <= x_2 <= ... (>= when decreasing)
// Row [n, x...]. One forward pass lifts each minimum to its predecessor's, one backward pass
// lowers each maximum to its successor's: bounds consistent in one call, as the decomposition's
// n - 1 inequalities are at their fixpoint, with one propagator.
PROPAGATOR_FN bool prop_monotone(Ctx *x, __global const int *row, bool decreasing) {
    int n = row[0];
    __global const int *xs = row + 1;
    for (int k = 1; k < n; ++k) {
        int lo = decreasing ? xs[n - k] : xs[k - 1], hi = decreasing ? xs[n - k - 1] : xs[k];
        TRY(set_min(x, hi, dmin(x, lo)));
    }
    for (int k = n - 1; k >= 1; --k) {
        int lo = decreasing ? xs[n - k] : xs[k - 1], hi = decreasing ? xs[n - k - 1] : xs[k];
        TRY(set_max(x, lo, dmax(x, hi)));
    }
    return true;
}

// ---- bin_packing_load: load_b = the weights of the items in bin b
// Row [nb, load..., first, n, bin..., n, w...]: bins first..first + nb - 1, weights >= 0 (MiniZinc
// asserts it). Each load lies between the weights fixed into its bin and those that may go
// there, and the loads sum to the total weight; an item too heavy for what its bin may still
// take leaves it, an item without which a bin cannot reach its load goes in. The decomposition
// (a reified equality per item and bin, a sum per bin) needs n nb booleans; this is O(n nb) per
// call.
PROPAGATOR_FN bool prop_bin_packing_load(Ctx *x, __global const int *row) {
    int nb = row[0];
    __global const int *load = row + 1;
    long first = row[1 + nb];
    int n = row[2 + nb];
    __global const int *bin = row + 3 + nb, *w = row + 4 + nb + n;
    long total = 0;
    for (int i = 0; i < n; ++i) {
        TRY(set_min(x, bin[i], first));
        TRY(set_max(x, bin[i], first + nb - 1));
        total += w[i];
    }
    for (int b = 0; b < nb; ++b) {
        long fixed = 0, possible = 0;
        for (int i = 0; i < n; ++i) {
            if (!contains(x, bin[i], first + b)) continue;
            possible += w[i];
            if (is_fixed(x, bin[i])) fixed += w[i];
        }
        TRY(set_min(x, load[b], fixed));
        TRY(set_max(x, load[b], possible));
        for (int i = 0; i < n; ++i) {
            if (is_fixed(x, bin[i]) || !contains(x, bin[i], first + b)) continue;
            if (fixed + w[i] > dmax(x, load[b])) TRY(remove_value(x, bin[i], first + b));
            else if (possible - w[i] < dmin(x, load[b])) TRY(fix(x, bin[i], first + b));
        }
    }
    long sum_lo = 0, sum_hi = 0;
    for (int b = 0; b < nb; ++b) { sum_lo += dmin(x, load[b]); sum_hi += dmax(x, load[b]); }
    for (int b = 0; b < nb; ++b) {
        long l = dmin(x, load[b]), h = dmax(x, load[b]);
        TRY(set_min(x, load[b], total - (sum_hi - h)));
        TRY(set_max(x, load[b], total - (sum_lo - l)));
    }
    return true;
}
