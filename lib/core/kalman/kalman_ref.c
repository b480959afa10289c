/*
 * Kalman-bank detector, reference variant: a literal sample-by-sample
 * implementation of equations 2-15 in double. It is the oracle of the tests.
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector", section III.
 *
 * Registers (two copies, read one and write the other, as the paper's GPU
 * memory organisation I): z[k] = z_{k|k-1} of hypothesis k = 1..M-1 for the
 * current sample, d[k] = d_k[j-1]; zM = z_{M|M-1} of the noise-only filter.
 * Range: the literal exp() of eqs. 7, 9, 13 and 15 is evaluated in double,
 * so the LLR is exact while the registers stay within about +-700 of each
 * other (the fast variants use log-sum-exp and have no such limit). One
 * safeguard beyond the paper: when max{exp_d_1, S1, S2} of eq. 13 is 0 or
 * not finite (underflow/overflow), norm_factor is re-centred on the largest
 * register (max_k d_k - 20, or 0 when that is not finite), which is what
 * eq. 13 approximates. Beyond that range the reference gives -inf, +inf or
 * NaN for a sample or two (e.g. when exp(d_{M-1}) of eq. 9 overflows after a
 * very strong burst) and then recovers; its registers are consistent again
 * after M samples.
 */
#include "kalman/kalman_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double LOG_2PI = 1.8378770664093454835606594728112;

struct tr_kalman_ref {
    const tr_kalman_model *m; /* the object's model (outlives this variant) */
    double *z[2];             /* [(k) * n]: two copies, k = 0..M (0, M unused) */
    double *d[2];             /* [k], k = 0..M-1 (0 unused) */
    double *zM;               /* n: noise-only prediction z_{M|M-1} */
    double *tmp;              /* n: work */
    double norm_factor;       /* eq. 13 */
    int cur;                  /* copy read this sample */
};

tr_kalman_ref *tr_kalman_ref_create(const tr_kalman_model *m)
{
    tr_kalman_ref *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->m = m;
    const size_t n = m->n, M = m->M;
    for (int c = 0; c < 2; c++) {
        r->z[c] = calloc((M + 1) * n, sizeof(double));
        r->d[c] = calloc(M, sizeof(double));
    }
    r->zM = calloc(n, sizeof(double));
    r->tmp = calloc(n, sizeof(double));
    if (!r->z[0] || !r->z[1] || !r->d[0] || !r->d[1] || !r->zM || !r->tmp) {
        tr_kalman_ref_destroy(r);
        return NULL;
    }
    tr_kalman_ref_reset(r);
    return r;
}

void tr_kalman_ref_destroy(tr_kalman_ref *r)
{
    if (!r) return;
    for (int c = 0; c < 2; c++) {
        free(r->z[c]);
        free(r->d[c]);
    }
    free(r->zM);
    free(r->tmp);
    free(r);
}

void tr_kalman_ref_reset(tr_kalman_ref *r)
{
    const size_t n = r->m->n, M = r->m->M;
    for (int c = 0; c < 2; c++) {
        memset(r->z[c], 0, (M + 1) * n * sizeof(double));
        for (size_t k = 0; k < M; k++)
            r->d[c][k] = -INFINITY; /* no target yet */
    }
    memset(r->zM, 0, n * sizeof(double));
    r->norm_factor = 0.0;
    r->cur = 0;
}

/*
 * One Kalman filter step of hypothesis k (1-based; k = M: noise-only) on the
 * predicted state zin: eqs. 2-5. Writes z_{k+1|k} = A z_{k|k} to zout and
 * returns q_k. missing: no measurement update, q_k = 0.
 */
static double filter_step(const tr_kalman_model *m, uint32_t k, const double *zin,
                          double r, int missing, double *zout, double *tmp)
{
    const uint32_t n = m->n, Q = m->Q;
    const double *K = m->K + (size_t)(k - 1) * n;
    const double rhat = zin[0] + zin[Q]; /* eq. 2 */
    const double e = missing ? 0.0 : r - rhat;
    for (uint32_t i = 0; i < n; i++)
        tmp[i] = zin[i] + K[i] * e;    /* eq. 3 */
    for (uint32_t i = 0; i < n; i++) { /* eq. 4 */
        double s = 0.0;
        for (uint32_t l = 0; l < n; l++)
            s += m->A[(size_t)i * n + l] * tmp[l];
        zout[i] = s;
    }
    if (missing) return 0.0;
    /* eq. 5 */
    return 0.5 * (-(LOG_2PI + m->log_sigma[k - 1]) -
                  (rhat - r) * m->inv_sigma[k - 1] * (rhat - r));
}

uint64_t tr_kalman_ref_run(tr_kalman_ref *R, const tr_kalman_params *p, const float *x,
                           size_t nsamp, double *llr, uint32_t *kmax, double kmax_above)
{
    const tr_kalman_model *m = R->m;
    const uint32_t n = m->n, M = m->M, Ns = p->Ns;
    const double alpha = exp(p->log_alpha);
    uint64_t bad = 0;
    for (size_t j = 0; j < nsamp; j++) {
        const double r = (double)x[j];
        const int missing = !isfinite(r);
        bad += (uint64_t)missing;
        const double *zi = R->z[R->cur], *di = R->d[R->cur];
        double *zo = R->z[1 - R->cur], *dn = R->d[1 - R->cur];

        /* Kalman filter #M (noise only, state fed back): q_M[j], z_{M|M-1}[j+1].
         * Its input z_{M|M-1}[j] is also z_{1|0} of filter #1. */
        double *z1in = zo + (size_t)M * n; /* spare slot M holds z_{1|0} */
        memcpy(z1in, R->zM, n * sizeof(double));
        const double qM = filter_step(m, M, R->zM, r, missing, R->zM, R->tmp);

        /* eq. 9 (d_M[j-1] = 0 by normalisation) */
        const double LX = qM + log(1.0 - alpha + exp(di[M - 1]));

        /* Kalman filter #1 and eq. 10 */
        const double q1 = filter_step(m, 1, z1in, r, missing, zo + 2 * (size_t)n, R->tmp);
        dn[1] = p->log_alpha + q1 - LX;

        /* Kernel 1: hypotheses k = 2..M-1, eqs. 2-6; hypothesis k reads the
         * registers hypothesis k-1 wrote at the previous sample. */
        for (uint32_t k = 2; k <= M - 1; k++) {
            double scratch[2 * TR_KALMAN_MAX_Q]; /* z_{M|M-1} of the diagonal: unused */
            double *out = (k + 1 <= M - 1) ? zo + (size_t)(k + 1) * n : scratch;
            const double qk =
                filter_step(m, k, zi + (size_t)k * n, r, missing, out, R->tmp);
            dn[k] = di[k - 1] + qk - LX; /* eq. 6 */
        }

        /* eqs. 7, 11, 12 */
        const double nf = R->norm_factor;
        const double exp_d1 = exp(dn[1] - nf);
        double S1 = 0.0, S2 = 0.0;
        for (uint32_t k = 2; k <= Ns; k++)
            S1 += exp(dn[k] - nf);
        for (uint32_t k = Ns + 1; k <= M - 1; k++)
            S2 += exp(dn[k] - nf);

        /* eq. 15 */
        const double L = log(S1 + exp_d1) - log(exp(-nf) + S2);
        if (llr) llr[j] = L;

        /* eq. 13 (with the safeguard of the top comment) */
        double mx = exp_d1;
        if (S1 > mx) mx = S1;
        if (S2 > mx) mx = S2;
        if (mx > 0.0 && isfinite(mx)) {
            R->norm_factor = nf + log(mx) + -20.0;
        } else {
            double dmax = dn[1];
            for (uint32_t k = 2; k <= M - 1; k++)
                if (dn[k] > dmax) dmax = dn[k];
            R->norm_factor = isfinite(dmax) ? dmax - 20.0 : 0.0;
        }

        if (kmax && L > kmax_above) {
            uint32_t best = 1;
            for (uint32_t k = 2; k <= M - 1; k++)
                if (dn[k] > dn[best]) best = k;
            kmax[j] = best;
        }
        R->cur = 1 - R->cur;
    }
    return bad;
}
