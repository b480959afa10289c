/*
 * Edge metrics, CPU fast variant of the settling search (the scan whose
 * length is the time between transitions; see edge_metrics_ref.c for the
 * definition, IEEE Std 181-2003 settling time). The double band is turned
 * into the float band that holds exactly the same floats, and the samples are
 * tested a block at a time in a loop without early exit, which the compiler
 * vectorizes; the block with the answer is searched like the reference.
 */
#include "edges/edge_metrics_internal.h"

#include <math.h>

#define TR_SCAN_BLOCK 64

/* Smallest float f with (double)f >= lo, largest with (double)f <= hi. */
static void float_band(double lo, double hi, float *flo, float *fhi)
{
    float a = (float)lo, b = (float)hi;
    if ((double)a < lo) a = nextafterf(a, INFINITY);
    if ((double)b > hi) b = nextafterf(b, -INFINITY);
    *flo = a;
    *fhi = b;
}

int64_t tr_edge_metric_last_outside_cpu(const float *x, int64_t n, double lo, double hi)
{
    float flo, fhi;
    float_band(lo, hi, &flo, &fhi);
    int64_t end = n;
    while (end > 0) {
        const int64_t start = end >= TR_SCAN_BLOCK ? end - TR_SCAN_BLOCK : 0;
        int out = 0;
        for (int64_t j = start; j < end; j++)
            out |= !(x[j] >= flo) | !(x[j] <= fhi);
        if (out) {
            for (int64_t j = end - 1; j >= start; j--)
                if (!(x[j] >= flo && x[j] <= fhi)) return j;
        }
        end = start;
    }
    return -1;
}
