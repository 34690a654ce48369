// LNS paths built on the device (engine/lns_paths.py): path r fixes fd[j] to its value for
// every position j it keeps, in fd's order, DEC ints a decision (variable, OP_EQ, value, 0), at
// data[ptr[r]]. The host sends one row of values for every path (complete exploration and
// random labelling: the incumbent's) or a row a path (complete assignments), and a keep mask of
// a byte a position (none: every position kept), instead of every path's decisions built in
// numpy and uploaded each step. One work-item a path.
__kernel void lns_paths(__global const int *fd, int nfd, __global const int *values, int values_per_path,
                        __global const uchar *keep, int use_keep, __global const int *ptr, int n,
                        __global int *data) {
    int r = get_global_id(0);
    if (r >= n) return;
    __global const int *v = values + (values_per_path ? (long)r * nfd : 0);
    __global const uchar *k = keep + (use_keep ? (long)r * nfd : 0);
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
