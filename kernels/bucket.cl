// Bucket elimination's step on a device (fzn_gpu/bucket/device.py): the tables of one bucket
// added up, then the bucket's variable minimised out, one work-item per entry of the result
// (the GPU bucket elimination paper's join and projection in one kernel). Built with COST as
// int or long and INF the saturating cost of a forbidden assignment.
//
// The bucket's variables are 0 (the one eliminated) .. m, of `dims[k]` values each; the result
// is the table over 1 .. m, row-major (variable m fastest). Table f of the bucket starts at
// tables[base[f]], and stride[f * (m + 1) + k] is its step along variable k (0 where f does
// not name k).

#define MAX_VARS 64

__kernel void bucket_join_min(__global const COST *tables, __global const long *base,
                              __global const long *stride, __global const int *dims,
                              int nf, int m, long n_out, __global COST *out)
{
    long j = get_global_id(0);
    if (j >= n_out) return;
    int digit[MAX_VARS];
    long rest = j;
    for (int k = m; k >= 1; --k) {
        digit[k] = (int)(rest % dims[k]);
        rest /= dims[k];
    }
    COST best = INF;
    for (int x = 0; x < dims[0]; ++x) {
        COST sum = 0;
        for (int f = 0; f < nf && sum < INF; ++f) {
            __global const long *s = stride + (long)f * (m + 1);
            long at = base[f] + (long)x * s[0];
            for (int k = 1; k <= m; ++k) at += (long)digit[k] * s[k];
            sum = min(sum + tables[at], (COST)INF);
        }
        best = min(best, sum);
    }
    out[j] = best;
}
