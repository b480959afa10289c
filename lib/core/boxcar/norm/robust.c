/*
 * Robust statistics of the boxcar normalisation: the estimate with iterated
 * k-sigma rejection and the correction of sigma for the clipped tails.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * eqs. 3-5.
 */
#include "boxcar/norm/norm_internal.h"

#include <math.h>
#include <stdlib.h>

double tr_boxcar_norm_clip_factor(double k)
{
    if (!(k > 0.0)) return 0.0;
    if (k > 40.0) return 1.0;
    const double phi = exp(-0.5 * k * k) / sqrt(2.0 * 3.14159265358979323846);
    const double mass = erf(k / sqrt(2.0));
    const double var = 1.0 - 2.0 * k * phi / mass;
    return var > 0.0 ? sqrt(var) : 0.0;
}

/*
 * Robust estimate of n finite values v (double): mean and M2 of the kept
 * values, rejection at k sigma repeated until nothing changes. The threshold
 * uses the corrected sigma when correct is set. The first pass is a plain
 * two-pass estimate; each later pass accumulates deviations from the previous
 * mean (one pass; that mean is close to the new one, so no digits are lost).
 */
void tr_norm_robust(const double *v, size_t n, double k, uint32_t max_iter, int correct,
                    acc_t *out)
{
    out->n = 0.0;
    out->mean = 0.0;
    out->m2 = 0.0;
    if (n == 0) return;
    const double f = (k > 0.0 && correct) ? tr_boxcar_norm_clip_factor(k) : 1.0;
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    double mean = s / (double)n, m2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = v[i] - mean;
        m2 += d * d;
    }
    size_t m = n;
    for (uint32_t it = 0; k > 0.0 && it < max_iter; it++) {
        const double sigma = sqrt(m2 / (double)m) / (f > 0.0 ? f : 1.0);
        const double lo = mean - k * sigma, hi = mean + k * sigma;
        double s1 = 0.0, s2 = 0.0;
        size_t c = 0;
        for (size_t i = 0; i < n; i++)
            if (v[i] >= lo && v[i] <= hi) {
                const double d = v[i] - mean;
                s1 += d;
                s2 += d * d;
                c++;
            }
        if (c == 0) break; /* cannot happen: the mean is always kept */
        const int done = c == m;
        mean += s1 / (double)c;
        m2 = s2 - s1 * (s1 / (double)c);
        if (m2 < 0.0) m2 = 0.0;
        m = c;
        if (done) break;
    }
    out->n = (double)m;
    out->mean = mean;
    out->m2 = m2;
}

tr_status tr_boxcar_norm_robust(const float *v, size_t n, size_t stride,
                                double reject_sigma, uint32_t max_iter, int correct,
                                double *mean, double *sigma, size_t *used)
{
    if (!v && n) return TR_ERR_INVALID;
    if (stride < 1 || !(reject_sigma >= 0.0) || !isfinite(reject_sigma))
        return TR_ERR_INVALID;
    double *d = (double *)malloc((n ? n : 1) * sizeof *d);
    if (!d) return TR_ERR_NOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const float x = v[i * stride];
        if (isfinite(x)) d[m++] = x;
    }
    acc_t a;
    tr_norm_robust(d, m, reject_sigma, max_iter ? max_iter : 1, correct, &a);
    free(d);
    if (a.n <= 0.0) return TR_ERR_INVALID;
    const double f =
        (reject_sigma > 0.0 && correct) ? tr_boxcar_norm_clip_factor(reject_sigma) : 1.0;
    if (mean) *mean = a.mean;
    if (sigma) *sigma = sqrt(a.m2 / a.n) / (f > 0.0 ? f : 1.0);
    if (used) *used = (size_t)a.n;
    return TR_OK;
}
