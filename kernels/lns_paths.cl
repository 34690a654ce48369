// LNS paths built on the device (engine/lns_paths.py): path r fixes fd[j] to its value for
// every position j it keeps, in fd's order, DEC ints a decision (variable, OP_EQ, value, 0), at
// data[ptr[r]]. The host sends one row of values for every path (complete exploration and
// random labelling: the incumbent's) or a row a path (complete assignments), and which
// positions each path keeps: a mask of a byte a position, every position, or `release` positions
// of each path's row drawn here at random (lns_release_draw) into the mask `drawn`, instead of
// every path's decisions built in numpy and uploaded each step; or grown through the constraint
// graph from one random position (lns_release_grow), as engine/lns_graph.py grows them on the
// host. One work-item a path.

// Chris Wellons' lowbias32: the draw's hash (engine/lns_paths.py repeats it in numpy).
inline uint lns_hash(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

// Row `row`'s mask (a byte a position, 1: kept): `release` of its nfd positions cleared, a
// uniformly drawn set (Floyd's sampling: for j = nfd - release .. nfd - 1, a random t in 0..j
// is released unless it already is, then j is), from the step's seed and the row alone.
inline void lns_release_draw(__global uchar *mask, int nfd, int release, uint seed, uint row) {
    for (int j = 0; j < nfd; ++j) mask[j] = 1;
    uint state = lns_hash(seed ^ lns_hash(row));
    for (int j = nfd - release; j < nfd; ++j) {
        state = lns_hash(state + 0x9e3779b9U);
        int t = (int)(((ulong)state * (ulong)(j + 1)) >> 32);
        if (mask[t]) mask[t] = 0;
        else mask[j] = 0;
    }
}

// A number in 0..n-1 from the row's random sequence (the next lowbias32 of its state).
inline int lns_below(uint *state, int n) {
    *state = lns_hash(*state + 0x9e3779b9U);
    return (int)(((ulong)*state * (ulong)n) >> 32);
}

// Row `row`'s mask (1: kept) with `release` positions released, grown through the graph
// (gptr, gadj: each position's relatives, CSR) from a random one: each next member is a random
// relative of a random member, tried `tries` times; then one drawn from all the members'
// relatives still kept (each (member, relative) pair alike); where none is, a random kept
// position. `members` (release ints) holds the row's members in order. The same draw as
// lns_paths.Draw.mask in numpy, and the same law as RelatedVariables.grow.
inline void lns_release_grow(__global uchar *mask, __global int *members, int nfd, int release, uint seed,
                             uint row, __global const int *gptr, __global const int *gadj, int tries) {
    for (int j = 0; j < nfd; ++j) mask[j] = 1;
    uint state = lns_hash(seed ^ lns_hash(row));
    int first = lns_below(&state, nfd);
    members[0] = first;
    mask[first] = 0;
    for (int j = 1; j < release; ++j) {
        int pick = -1;
        for (int t = 0; t < tries && pick < 0; ++t) {
            int m = members[lns_below(&state, j)];
            int deg = gptr[m + 1] - gptr[m];
            int c = lns_below(&state, deg > 0 ? deg : 1);
            if (deg > 0 && mask[gadj[gptr[m] + c]]) pick = gadj[gptr[m] + c];
        }
        if (pick < 0) {  // every relative of every member, one of those kept (a reservoir)
            int seen = 0;
            for (int i = 0; i < j; ++i) {
                int m = members[i];
                for (int e = gptr[m]; e < gptr[m + 1]; ++e) {
                    if (!mask[gadj[e]]) continue;
                    ++seen;
                    if (lns_below(&state, seen) == 0) pick = gadj[e];
                }
            }
        }
        if (pick < 0) {  // none kept: the idx-th kept position
            int idx = lns_below(&state, nfd - j);
            for (int q = 0; q < nfd; ++q) {
                if (mask[q] && idx-- == 0) {
                    pick = q;
                    break;
                }
            }
        }
        members[j] = pick;
        mask[pick] = 0;
    }
}

__kernel void lns_paths(__global const int *fd, int nfd, __global const int *values, int values_per_path,
                        __global uchar *keep, int use_keep, int release, uint seed, int repeat,
                        __global const int *gptr, __global const int *gadj, int grow_tries,
                        __global int *members, __global const int *ptr, int n, __global int *data) {
    int r = get_global_id(0);
    if (r >= n) return;
    __global const int *v = values + (values_per_path ? (long)r * nfd : 0);
    __global uchar *k = keep + (use_keep ? (long)r * nfd : 0);
    // a drawn release: the paths of one neighbourhood's `repeat` starts share its row's draw
    // (grown through the graph where grow_tries > 0; each path grows its own copy of it)
    if (release > 0 && grow_tries > 0)
        lns_release_grow(k, members + (long)r * release, nfd, release, seed, (uint)(r / repeat), gptr, gadj,
                         grow_tries);
    else if (release > 0)
        lns_release_draw(k, nfd, release, seed, (uint)(r / repeat));
    __global int *out = data + ptr[r];
    for (int j = 0; j < nfd; ++j) {
        if (use_keep && !k[j]) continue;
        out[0] = fd[j];
        out[1] = OP_EQ;
        out[2] = v[j];
        for (int i = 3; i < DEC; ++i) out[i] = 0;     // a float's high word: none
        out += DEC;
    }
}
