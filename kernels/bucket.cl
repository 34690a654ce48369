// Bucket elimination's step on a device (fzn_gpu/bucket/device.py): the tables of one bucket
// added up, then the bucket's variable minimised out, one work-item per entry of the result
// (the GPU bucket elimination paper's join and projection in one kernel). Built with COST as
// int or long and INF the saturating cost of a forbidden assignment.
//
// The bucket's variables are 0 (the one eliminated) .. m, of `dims[k]` values each; the result
// is the table over 1 .. m, row-major (variable m fastest). Table f of the bucket starts at
// tables[base[f]], and stride[f * (m + 1) + k] is its step along variable k (0 where f does
// not name k).
//
// Each table's place for the work-item's entry is computed once per XCHUNK values of the
// eliminated variable (m multiply-adds), and the chunk's sums are then one load and one add
// per table and value: the place was recomputed for every value before (XCHUNK times the
// multiply-adds on WCSP grids, whose buckets join about ten tables of ten variables).

#define MAX_VARS 64
#define XCHUNK 16

__kernel void bucket_join_min(__global const COST *tables, __global const long *base,
                              __global const long *stride, __global const int *dims,
                              int nf, int m, long n_out, __global COST *out)
{
    long j = get_global_id(0);
    if (j >= n_out) return;
    int digit[MAX_VARS];
    if (n_out <= (long)UINT_MAX) {           // 32-bit division where the result's size allows
        uint rest = (uint)j;
        for (int k = m; k >= 1; --k) {
            digit[k] = (int)(rest % (uint)dims[k]);
            rest /= (uint)dims[k];
        }
    } else {
        long rest = j;
        for (int k = m; k >= 1; --k) {
            digit[k] = (int)(rest % dims[k]);
            rest /= dims[k];
        }
    }
    COST best = INF;
    int d0 = dims[0];
    for (int x0 = 0; x0 < d0 && best > 0; x0 += XCHUNK) {     // costs are never negative (network.py)
        int nx = min(XCHUNK, d0 - x0);
        COST sum[XCHUNK];
        for (int i = 0; i < XCHUNK; ++i) sum[i] = 0;
        for (int f = 0; f < nf; ++f) {
            __global const long *s = stride + (long)f * (m + 1);
            long at = base[f] + (long)x0 * s[0];
            for (int k = 1; k <= m; ++k) at += (long)digit[k] * s[k];
            long s0 = s[0];
            for (int i = 0; i < nx; ++i) sum[i] = min(sum[i] + tables[at + (long)i * s0], (COST)INF);
        }
        for (int i = 0; i < nx; ++i) best = min(best, sum[i]);
    }
    out[j] = best;
}

// The backward pass's reads of a table kept on the device: out[i] = table[at[i]].
__kernel void bucket_gather(__global const COST *table, __global const long *at, long n, __global COST *out)
{
    long i = get_global_id(0);
    if (i < n) out[i] = table[at[i]];
}
