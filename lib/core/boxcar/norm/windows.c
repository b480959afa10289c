/*
 * Window statistics of the boxcar normalisation: the summaries of each
 * statistics window (robust estimates per level), their merge over the last H
 * windows into the values in effect, and the mean and sigma at a position and
 * width from those values.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * eqs. 3-5 and section 4.6.2; merge of (n, mean, M2) after Chan, Golub and
 * LeVeque (1983).
 */
#include "boxcar/norm/norm_internal.h"

#include <math.h>

/* Chan et al. pairwise merge: a <- a + b. */
static void acc_merge(acc_t *a, const acc_t *b)
{
    if (b->n <= 0.0) return;
    if (a->n <= 0.0) {
        *a = *b;
        return;
    }
    const double n = a->n + b->n;
    const double delta = b->mean - a->mean;
    a->mean += delta * (b->n / n);
    a->m2 += b->m2 + delta * delta * (a->n * b->n / n);
    a->n = n;
}

void tr_norm_compute_effect(tr_boxcar_norm *q, uint64_t j)
{
    tr_norm_compute_effect_ch(q, j, 0, q->nchan);
}

/* Values of window j (slot j % E) from the summaries of windows j0 .. j1 - 1
 * (those kept), channels c0 .. c1 - 1. */
static void effect_from(tr_boxcar_norm *q, uint64_t j, uint64_t j0, uint64_t j1,
                        uint32_t c0, uint32_t c1)
{
    const uint32_t H = q->cfg.history, L = q->nlev;
    const double f = (q->cfg.reject_sigma > 0.0 && q->cfg.reject_correct)
                         ? tr_boxcar_norm_clip_factor(q->cfg.reject_sigma)
                         : 1.0;
    const double f2 = f > 0.0 ? f * f : 1.0;
    const size_t es = tr_norm_eff_slot(q, j);
    for (uint32_t c = c0; c < c1; c++) {
        lev_t *e = q->eff + ((size_t)es * q->nchan + c) * L;
        int ready = 0;
        for (uint32_t k = 0; k < L; k++) {
            acc_t a = {0.0, 0.0, 0.0};
            for (uint64_t i = j0; i < j1; i++) {
                const size_t slot = (size_t)(i % H);
                if (!q->sum_valid[slot]) continue;
                acc_merge(&a, q->sum + ((size_t)slot * q->nchan + c) * L + k);
            }
            const double w = (double)((uint64_t)1 << k);
            const double var = a.n > 0.0 ? a.m2 / a.n / f2 : 0.0;
            if (a.n >= 2.0 && var > 0.0 && isfinite(var) && isfinite(a.mean)) {
                e[k].m = a.mean / w;
                e[k].v = var / w;
                if (k == 0) ready = 1;
            } else if (k == 0) {
                e[k].m = q->cfg.init_mean;
                e[k].v = q->cfg.init_sigma * q->cfg.init_sigma;
            } else {
                e[k] = e[k - 1]; /* white extrapolation from the level below */
            }
            if (k > 0 && !ready) e[k] = e[0]; /* warm-up: plain eq. 5 */
        }
        q->eff_ready[es * q->nchan + c] = (unsigned char)ready;
    }
}

void tr_norm_compute_effect_ch(tr_boxcar_norm *q, uint64_t j, uint32_t c0, uint32_t c1)
{
    const uint64_t H = q->cfg.history;
    effect_from(q, j, j > H ? j - H : 0, j, c0, c1);
}

void tr_norm_window_end_ch(tr_boxcar_norm *q, uint64_t j, uint32_t c0, uint32_t c1)
{
    if (j == 0 && q->cfg.first_own) effect_from(q, 0, 0, 1, c0, c1);
    tr_norm_compute_effect_ch(q, j + 1, c0, c1);
}

void tr_norm_summarise_window(tr_boxcar_norm *q, uint64_t j, uint32_t n)
{
    const tr_norm_scratch sc = {q->scratch, q->prefix, q->pbad};
    q->sum_valid[(size_t)(j % q->cfg.history)] = 1;
    tr_norm_summarise_ch(q, j, n, 0, q->nchan, &sc, &q->rejected);
}

void tr_norm_summarise_one(tr_boxcar_norm *q, const float *b, size_t stride, uint32_t W,
                           acc_t *s, const tr_norm_scratch *sc, uint64_t *rejected)
{
    const uint32_t L = q->nlev;
    double *const scratch = sc->scratch, *const prefix = sc->prefix;
    uint32_t *const pbad = sc->pbad;
    /* level 0: the finite samples */
    size_t m = 0;
    prefix[0] = 0.0;
    pbad[0] = 0;
    for (uint32_t i = 0; i < W; i++) {
        const float v = b[(size_t)i * stride];
        const int ok = isfinite(v);
        if (ok) scratch[m++] = v;
        if (L > 1) {
            prefix[i + 1] = prefix[i] + (ok ? (double)v : 0.0);
            pbad[i + 1] = pbad[i] + (ok ? 0u : 1u);
        }
    }
    tr_norm_robust(scratch, m, q->cfg.reject_sigma, q->cfg.reject_max_iter,
                   q->cfg.reject_correct, &s[0]);
    *rejected += (uint64_t)(m - (size_t)s[0].n);
    /* level k: sums of width 2^k inside the window starting at every
     * multiple of max(1, 2^k / 8) (neighbours overlap by 7/8: hardly any
     * information lost), finite only */
    for (uint32_t k = 1; k < L; k++) {
        const uint32_t w = 1u << k, g = w >= 16 ? w / 8 : 1;
        m = 0;
        for (uint32_t i = 0; i + w <= W; i += g)
            if (pbad[i + w] == pbad[i]) scratch[m++] = prefix[i + w] - prefix[i];
        tr_norm_robust(scratch, m, q->cfg.reject_sigma, q->cfg.reject_max_iter,
                       q->cfg.reject_correct, &s[k]);
    }
}

void tr_norm_summarise_ch(tr_boxcar_norm *q, uint64_t j, uint32_t n, uint32_t c0,
                          uint32_t c1, const tr_norm_scratch *sc, uint64_t *rejected)
{
    const uint32_t W = q->cfg.window, H = q->cfg.history, L = q->nlev;
    const size_t slot = (size_t)(j % H);
    for (uint32_t c = c0; c < c1; c++)
        tr_norm_summarise_one(q, q->buf + (size_t)c * BUF_STRIDE(W), 1, n,
                              q->sum + ((size_t)slot * q->nchan + c) * L, sc, rejected);
}

long tr_norm_slot_of(const tr_boxcar_norm *q, uint64_t p)
{
    const uint64_t j = p / q->cfg.window, cur = q->position / q->cfg.window;
    if (j > cur || cur - j >= q->E) return -1;
    return (long)tr_norm_eff_slot(q, j);
}

/* Per-sample values at width L from per-level values e[0..nlev-1]. */
static void interp(const lev_t *e, uint32_t nlev, uint32_t L, double *mu, double *sigma)
{
    uint32_t k = 0;
    while (k + 1 < 32 && ((uint64_t)2 << k) <= L)
        k++; /* k = floor(log2 L) */
    double m, v;
    if (k + 1 >= nlev) {
        m = e[nlev - 1].m;
        v = e[nlev - 1].v;
    } else {
        const double f = log2((double)L) - (double)k;
        m = e[k].m + f * (e[k + 1].m - e[k].m);
        v = e[k].v + f * (e[k + 1].v - e[k].v);
    }
    if (mu) *mu = (double)L * m;
    if (sigma) *sigma = sqrt((double)L * v);
}

tr_status tr_norm_stats_at(const tr_boxcar_norm *q, uint64_t p, uint32_t c, uint32_t L,
                           double *mu, double *sigma)
{
    if (q->measure) {
        const long s = tr_norm_slot_of(q, p);
        if (s < 0) return TR_ERR_INVALID;
        interp(q->eff + ((size_t)s * q->nchan + c) * q->nlev, q->nlev, L, mu, sigma);
        return TR_OK;
    }
    if (q->cfg.fixed_table_len) {
        const uint32_t n = q->cfg.fixed_table_len;
        if (L <= n) {
            if (mu) *mu = q->tmu[L - 1];
            if (sigma) *sigma = q->tsig[L - 1];
        } else {
            if (mu) *mu = q->tmu[n - 1] / n * (double)L;
            if (sigma) *sigma = q->tsig[n - 1] * sqrt((double)L / (double)n);
        }
        return TR_OK;
    }
    if (mu) *mu = (double)L * q->fmean[c];
    if (sigma) *sigma = sqrt((double)L) * q->fsigma[c];
    return TR_OK;
}

double tr_norm_mean_at(const tr_boxcar_norm *q, uint64_t p, uint32_t c)
{
    double mu1 = 0.0;
    if (q->measure) {
        if (q->cfg.first_own && p < q->cfg.window) return NAN;
        const size_t es = tr_norm_eff_slot(q, p / q->cfg.window);
        interp(q->eff + (es * q->nchan + c) * q->nlev, q->nlev, 1, &mu1, NULL);
    } else {
        tr_norm_stats_at(q, p, c, 1, &mu1, NULL);
    }
    return mu1;
}
