// LNS paths built on the device (engine/lns_paths.py): path r fixes fd[j] to its value for
// every position j it keeps, in fd's order, DEC ints a decision (variable, OP_EQ, value, 0), at
// data[ptr[r]]. The host sends one row of values for every path (complete exploration and
// random labelling: the incumbent's) or a row a path (complete assignments), and which
// positions each path keeps: a mask of a byte a position, every position, or `release` positions
// of each path's row drawn here at random (lns_release_draw) into the mask `drawn`, instead of
// every path's decisions built in numpy and uploaded each step. One work-item a path.

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

__kernel void lns_paths(__global const int *fd, int nfd, __global const int *values, int values_per_path,
                        __global uchar *keep, int use_keep, int release, uint seed, int repeat,
                        __global const int *ptr, int n, __global int *data) {
    int r = get_global_id(0);
    if (r >= n) return;
    __global const int *v = values + (values_per_path ? (long)r * nfd : 0);
    __global uchar *k = keep + (use_keep ? (long)r * nfd : 0);
    // a drawn release: the paths of one neighbourhood's `repeat` starts share its row's draw
    if (release > 0) lns_release_draw(k, nfd, release, seed, (uint)(r / repeat));
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
