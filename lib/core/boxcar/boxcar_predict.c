/*
 * Sensitivity predictor of the boxcar search: eqs. 22-31 of Appendix A, the
 * losses of eqs. 8 and 9, the cumulative mean of eq. 19, and the exact
 * extremes of the noise-free model (<transient/boxcar_predict.h>).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020).
 */
#include <transient/boxcar_predict.h>

#include "common/core_util.h"

#include <math.h>
#include <stdlib.h>

double tr_boxcar_rsnr_max_single(uint32_t S, uint32_t L)
{
    if (S < 1 || L < 1) return 0.0;
    return S < L ? sqrt((double)S / (double)L) : sqrt((double)L / (double)S);
}

double tr_boxcar_rsnr_min_single(uint32_t S, uint32_t L, uint32_t Ls)
{
    if (S < 1 || L < 1 || Ls < 1) return 0.0;
    const int64_t s = S, l = L, ls = Ls;
    int64_t d;
    if (s <= l - ls) return sqrt((double)S / (double)L);
    if (s >= l + ls) return sqrt((double)L / (double)S);
    if (s < l)
        d = s - (s - l + ls) / 2; /* eq. 27; the argument is > 0 here */
    else
        d = l - (l + ls - s) / 2; /* eq. 29; the argument is > 0 here */
    if (d < 0) d = 0;             /* L < Ls: gaps between the boxcars (see the header) */
    return (double)d / sqrt((double)L * (double)S);
}

tr_status tr_boxcar_cumulative_mean(const double *psi, uint32_t n, double *out)
{
    if (!psi || !out) return TR_ERR_INVALID;
    double acc = 0.0;
    for (uint32_t k = 0; k < n; k++) {
        acc += psi[k];
        out[k] = acc / (double)(k + 1);
    }
    return TR_OK;
}

static tr_status check_set(const uint32_t *w, const uint32_t *sep, uint32_t nb,
                           uint32_t smax)
{
    if (!w || !sep || nb == 0 || smax == 0) return TR_ERR_INVALID;
    for (uint32_t k = 0; k < nb; k++)
        if (w[k] == 0 || sep[k] == 0) return TR_ERR_INVALID;
    return TR_OK;
}

tr_status tr_boxcar_predict(const uint32_t *widths, const uint32_t *separations,
                            uint32_t nb, uint32_t smax, double *rsnr_max,
                            double *rsnr_min, double *psi_1, double *psi_w,
                            double *mean_psi_1, double *mean_psi_w)
{
    if (check_set(widths, separations, nb, smax) != TR_OK) return TR_ERR_INVALID;
    double *p1 = NULL, *pw = NULL;
    if (mean_psi_1 || mean_psi_w) {
        p1 = (double *)malloc((size_t)smax * sizeof *p1);
        pw = (double *)malloc((size_t)smax * sizeof *pw);
        if (!p1 || !pw) {
            free(p1);
            free(pw);
            return TR_ERR_NOMEM;
        }
    }
    for (uint32_t S = 1; S <= smax; S++) {
        double hi = 0.0, lo = 0.0;
        for (uint32_t k = 0; k < nb; k++) {
            const double a = tr_boxcar_rsnr_max_single(S, widths[k]);
            const double b = tr_boxcar_rsnr_min_single(S, widths[k], separations[k]);
            if (a > hi) hi = a;
            if (b > lo) lo = b;
        }
        if (rsnr_max) rsnr_max[S - 1] = hi;
        if (rsnr_min) rsnr_min[S - 1] = lo;
        if (psi_1) psi_1[S - 1] = 1.0 - hi;
        if (psi_w) psi_w[S - 1] = 1.0 - lo;
        if (p1) p1[S - 1] = 1.0 - hi;
        if (pw) pw[S - 1] = 1.0 - lo;
    }
    if (mean_psi_1) tr_boxcar_cumulative_mean(p1, smax, mean_psi_1);
    if (mean_psi_w) tr_boxcar_cumulative_mean(pw, smax, mean_psi_w);
    free(p1);
    free(pw);
    return TR_OK;
}

/* The plan's (width, separation) list, allocated. */
static tr_status plan_arrays(const tr_boxcar_plan *plan, uint32_t **w, uint32_t **s,
                             uint32_t *nb)
{
    if (!plan) return TR_ERR_INVALID;
    const uint32_t n = tr_boxcar_plan_list(plan, NULL, NULL, 0);
    if (n == 0) return TR_ERR_INVALID;
    *w = (uint32_t *)malloc(n * sizeof **w);
    *s = (uint32_t *)malloc(n * sizeof **s);
    if (!*w || !*s) {
        free(*w);
        free(*s);
        return TR_ERR_NOMEM;
    }
    tr_boxcar_plan_list(plan, *w, *s, n);
    *nb = n;
    return TR_OK;
}

tr_status tr_boxcar_predict_plan(const tr_boxcar_plan *plan, uint32_t smax,
                                 double *rsnr_max, double *rsnr_min, double *psi_1,
                                 double *psi_w, double *mean_psi_1, double *mean_psi_w)
{
    uint32_t *w = NULL, *s = NULL, nb = 0;
    tr_status st = plan_arrays(plan, &w, &s, &nb);
    if (st != TR_OK) return st;
    st = tr_boxcar_predict(w, s, nb, smax, rsnr_max, rsnr_min, psi_1, psi_w, mean_psi_1,
                           mean_psi_w);
    free(w);
    free(s);
    return st;
}

/* Largest coverage of the pulse [t, t+S) by a boxcar of width L starting at a
 * multiple of sep (t >= L so that every candidate start is >= 0). */
static int64_t best_cover(int64_t t, int64_t S, int64_t L, int64_t sep)
{
    const int64_t a[2] = {t, t + S - L};
    int64_t best = 0;
    for (int i = 0; i < 2; i++) {
        const int64_t f = (a[i] / sep) * sep; /* a[i] >= 0 */
        const int64_t cand[2] = {f, f + sep};
        for (int j = 0; j < 2; j++) {
            const int64_t p = cand[j];
            const int64_t lo = p > t ? p : t;
            const int64_t hi = p + L < t + S ? p + L : t + S;
            if (hi - lo > best) best = hi - lo;
        }
    }
    return best;
}

tr_status tr_boxcar_predict_exact(const uint32_t *widths, const uint32_t *separations,
                                  uint32_t nb, uint32_t smax, double *rsnr_max,
                                  double *rsnr_min, uint32_t *best_width)
{
    if (check_set(widths, separations, nb, smax) != TR_OK) return TR_ERR_INVALID;
    uint32_t maxw = 0;
    for (uint32_t k = 0; k < nb; k++) {
        if (separations[k] & (separations[k] - 1)) return TR_ERR_INVALID;
        if (widths[k] > maxw) maxw = widths[k];
    }
    uint32_t *keep = (uint32_t *)malloc(nb * sizeof *keep);
    if (!keep) return TR_ERR_NOMEM;
    for (uint32_t S = 1; S <= smax; S++) {
        /* eq. 31 bounds the best S/N at every position from below: widths
         * whose best case (eq. 23) is under it can never win */
        double bound = 0.0;
        for (uint32_t k = 0; k < nb; k++) {
            const double b = tr_boxcar_rsnr_min_single(S, widths[k], separations[k]);
            if (b > bound) bound = b;
        }
        uint32_t nk = 0;
        int64_t period = 1;
        for (uint32_t k = 0; k < nb; k++)
            if (tr_boxcar_rsnr_max_single(S, widths[k]) >= bound * (1.0 - 1e-12)) {
                keep[nk++] = k;
                if ((int64_t)separations[k] > period) period = separations[k];
            }
        /* pulse start offset: a multiple of the period beyond every width */
        const int64_t base = (((int64_t)maxw + period) / period + 1) * period;
        double hi = 0.0, lo = INFINITY;
        uint32_t bw = 0;
        for (int64_t t = 0; t < period; t++) {
            double best = 0.0;
            uint32_t wbest = 0;
            for (uint32_t i = 0; i < nk; i++) {
                const uint32_t k = keep[i];
                const int64_t d = best_cover(base + t, S, widths[k], separations[k]);
                const double r = (double)d / sqrt((double)widths[k] * (double)S);
                if (r > best || (r == best && widths[k] < wbest)) {
                    best = r;
                    wbest = widths[k];
                }
            }
            if (best > hi || (best == hi && wbest < bw)) {
                hi = best;
                bw = wbest;
            }
            if (best < lo) lo = best;
        }
        if (rsnr_max) rsnr_max[S - 1] = hi;
        if (rsnr_min) rsnr_min[S - 1] = lo;
        if (best_width) best_width[S - 1] = bw;
    }
    free(keep);
    return TR_OK;
}
