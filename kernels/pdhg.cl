// PDHG's two half-steps for the LP relaxation's dual (fzn_gpu/relax/pdhg.py): the host runs a
// restart period's iterations as pairs of launches and reads the iterates back only at a
// restart. The matrix is Ruiz-scaled on the host, held twice: by columns (CSC) for A^T y, by rows
// (CSR) for A x. One work-item a column, then one a row; double precision.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// x <- clamp(x - tau (c + A^T y)), xbar = 2 x_new - x_old, xsum += x_new
__kernel void pdhg_primal(int n, __global const int *cptr, __global const int *crow, __global const double *cval,
                          __global const double *c, __global const double *lb, __global const double *ub,
                          __global const double *y, __global double *x, __global double *xbar,
                          __global double *xsum, double tau) {
    int j = get_global_id(0);
    if (j >= n) return;
    double g = c[j];
    for (int k = cptr[j]; k < cptr[j + 1]; k++) g += cval[k] * y[crow[k]];
    double old = x[j];
    double nx = fmin(fmax(old - tau * g, lb[j]), ub[j]);
    xbar[j] = 2.0 * nx - old;
    x[j] = nx;
    xsum[j] += nx;
}

// y <- y + sigma (A xbar - b), kept >= 0 on the `<=` rows; ysum += y
__kernel void pdhg_dual(int m, __global const int *rptr, __global const int *rcol, __global const double *rval,
                        __global const double *b, __global const uchar *le, __global const double *xbar,
                        __global double *y, __global double *ysum, double sigma) {
    int i = get_global_id(0);
    if (i >= m) return;
    double ax = 0.0;
    for (int k = rptr[i]; k < rptr[i + 1]; k++) ax += rval[k] * xbar[rcol[k]];
    double ny = y[i] + sigma * (ax - b[i]);
    if (le[i]) ny = fmax(ny, 0.0);
    y[i] = ny;
    ysum[i] += ny;
}
