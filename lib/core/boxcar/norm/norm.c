/*
 * S/N normalisation of the boxcar search: the object (configuration, state,
 * queries). The policy is described in <transient/boxcar_norm.h>.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * eqs. 3-5 and section 4.6.2.
 */
#define _POSIX_C_SOURCE 200809L /* sysconf */

#include "boxcar/norm/norm_internal.h"

#include "common/core_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

tr_boxcar_norm_config tr_boxcar_norm_config_default(void)
{
    tr_boxcar_norm_config c;
    memset(&c, 0, sizeof c);
    c.mode = TR_BOXCAR_NORM_WHITE;
    c.window = 16384;
    c.history = 4;
    c.reject_sigma = 3.0;
    c.reject_max_iter = 16;
    c.reject_correct = 1;
    c.init_mean = 0.0;
    c.init_sigma = 1.0;
    c.first_own = 1;
    c.fixed_mean = 0.0;
    c.fixed_sigma = 1.0;
    c.baseline = TR_BOXCAR_BASELINE_NONE;
    c.baseline_window = 4096;
    c.threads = 0;
    return c;
}

/* ---------------------------------------------------------------- config */

static int is_pos_finite(double x)
{
    return isfinite(x) && x > 0.0;
}

tr_status tr_boxcar_norm_validate(const tr_boxcar_norm_config *c, uint32_t nchan,
                                  uint32_t max_width, tr_error *err)
{
    if (!c) return tr_fail(err, TR_ERR_INVALID, "boxcar_norm: config is NULL");
    if (nchan < 1) return tr_fail(err, TR_ERR_INVALID, "boxcar_norm: nchan must be >= 1");
    if (max_width < 1)
        return tr_fail(err, TR_ERR_INVALID, "boxcar_norm: max_width must be >= 1");
    if (c->mode != TR_BOXCAR_NORM_WHITE && c->mode != TR_BOXCAR_NORM_LEVELS &&
        c->mode != TR_BOXCAR_NORM_FIXED)
        return tr_fail(err, TR_ERR_INVALID, "boxcar_norm: unknown mode %d", (int)c->mode);
    if (c->mode != TR_BOXCAR_NORM_FIXED) {
        if (c->window < 16 || c->window > TR_BOXCAR_NORM_MAX_WINDOW)
            return tr_fail(err, TR_ERR_INVALID,
                           "boxcar_norm: window must be in [16, %u], got %u",
                           TR_BOXCAR_NORM_MAX_WINDOW, c->window);
        if (c->history < 1 || c->history > TR_BOXCAR_NORM_MAX_HISTORY)
            return tr_fail(err, TR_ERR_INVALID,
                           "boxcar_norm: history must be in [1, %d], got %u",
                           TR_BOXCAR_NORM_MAX_HISTORY, c->history);
        if (!isfinite(c->reject_sigma) || c->reject_sigma < 0.0 ||
            (c->reject_sigma > 0.0 && c->reject_sigma < 0.5))
            return tr_fail(err, TR_ERR_INVALID,
                           "boxcar_norm: reject_sigma must be 0 (off) or >= 0.5, got %g",
                           c->reject_sigma);
        if (c->reject_max_iter < 1 || c->reject_max_iter > 1000)
            return tr_fail(err, TR_ERR_INVALID,
                           "boxcar_norm: reject_max_iter must be in [1, 1000], got %u",
                           c->reject_max_iter);
        if (c->reject_correct != 0 && c->reject_correct != 1)
            return tr_fail(err, TR_ERR_INVALID,
                           "boxcar_norm: reject_correct must be 0 or 1, got %d",
                           c->reject_correct);
        if (c->first_own != 0 && c->first_own != 1)
            return tr_fail(err, TR_ERR_INVALID,
                           "boxcar_norm: first_own must be 0 or 1, got %d", c->first_own);
        if (!isfinite(c->init_mean) || !is_pos_finite(c->init_sigma))
            return tr_fail(err, TR_ERR_INVALID,
                           "boxcar_norm: init_mean must be finite and init_sigma > 0");
    } else {
        if (!isfinite(c->fixed_mean) || !is_pos_finite(c->fixed_sigma))
            return tr_fail(err, TR_ERR_INVALID,
                           "boxcar_norm: fixed_mean must be finite and fixed_sigma > 0");
        for (uint32_t i = 0; c->fixed_means && i < nchan; i++)
            if (!isfinite(c->fixed_means[i]))
                return tr_fail(err, TR_ERR_INVALID,
                               "boxcar_norm: fixed_means[%u] is not finite", i);
        for (uint32_t i = 0; c->fixed_sigmas && i < nchan; i++)
            if (!is_pos_finite(c->fixed_sigmas[i]))
                return tr_fail(err, TR_ERR_INVALID,
                               "boxcar_norm: fixed_sigmas[%u] must be finite and > 0", i);
        const int has_tab = c->fixed_mu_L || c->fixed_sigma_L || c->fixed_table_len;
        if (has_tab) {
            if (!c->fixed_mu_L || !c->fixed_sigma_L || c->fixed_table_len < 1)
                return tr_fail(err, TR_ERR_INVALID,
                               "boxcar_norm: a per-width table needs fixed_mu_L, "
                               "fixed_sigma_L and fixed_table_len >= 1");
            if (c->fixed_means || c->fixed_sigmas)
                return tr_fail(err, TR_ERR_INVALID,
                               "boxcar_norm: give either per-channel fixed_means/"
                               "fixed_sigmas or a per-width table, not both");
            for (uint32_t i = 0; i < c->fixed_table_len; i++)
                if (!isfinite(c->fixed_mu_L[i]) || !is_pos_finite(c->fixed_sigma_L[i]))
                    return tr_fail(err, TR_ERR_INVALID,
                                   "boxcar_norm: table entry for width %u must have "
                                   "finite mu_L and sigma_L > 0",
                                   i + 1);
        }
    }
    if (c->threads > TR_BOXCAR_NORM_MAX_THREADS)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar_norm: threads must be in 0..%d, got %u",
                       TR_BOXCAR_NORM_MAX_THREADS, c->threads);
    if (c->baseline != TR_BOXCAR_BASELINE_NONE &&
        c->baseline != TR_BOXCAR_BASELINE_MEDIAN &&
        c->baseline != TR_BOXCAR_BASELINE_BLOCK_MEDIAN)
        return tr_fail(err, TR_ERR_INVALID, "boxcar_norm: unknown baseline mode %d",
                       (int)c->baseline);
    if (c->baseline == TR_BOXCAR_BASELINE_MEDIAN &&
        (c->baseline_window < 3 || c->baseline_window > TR_BOXCAR_NORM_MAX_BASELINE))
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar_norm: baseline_window must be in [3, %u], got %u",
                       TR_BOXCAR_NORM_MAX_BASELINE, c->baseline_window);
    if (c->baseline == TR_BOXCAR_BASELINE_BLOCK_MEDIAN &&
        (c->baseline_window < BB_BLOCKS ||
         c->baseline_window > TR_BOXCAR_NORM_MAX_BASELINE))
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar_norm: baseline_window must be in [%d, %u] for the block "
                       "median, got %u",
                       BB_BLOCKS, TR_BOXCAR_NORM_MAX_BASELINE, c->baseline_window);
    tr_clear(err);
    return TR_OK;
}

/* Levels measured: K + 1 with 2^K >= max_width when possible, 2^K <= W / 8. */
static uint32_t levels_for(const tr_boxcar_norm_config *c, uint32_t max_width)
{
    if (c->mode != TR_BOXCAR_NORM_LEVELS) return 1;
    uint32_t K = 0;
    while (K < TR_BOXCAR_NORM_MAX_LEVEL && ((uint64_t)1 << K) < max_width)
        K++;
    while (K > 0 && ((uint64_t)1 << K) > c->window / 8)
        K--;
    return K + 1;
}

/* ---------------------------------------------------------------- create */

void tr_boxcar_norm_destroy(tr_boxcar_norm *q)
{
    if (!q) return;
    free(q->buf);
    free(q->sum);
    free(q->sum_valid);
    free(q->eff);
    free(q->eff_ready);
    free(q->scratch);
    free(q->prefix);
    free(q->pbad);
    free(q->tmem);
    tr_pool_destroy(q->pool);
    free(q->fmean);
    free(q->fsigma);
    free(q->tmu);
    free(q->tsig);
    free(q->bl_ring);
    free(q->bl_lo);
    free(q->bl_hi);
    free(q->bl_where);
    free(q->bl_nlo);
    free(q->bl_n);
    free(q->bb_blk);
    free(q->bb_n);
    free(q->bb_med);
    free(q->bb_base);
    free(q->bb_have);
    free(q);
}

tr_status tr_boxcar_norm_reset(tr_boxcar_norm *q)
{
    if (!q) return TR_ERR_INVALID;
    q->position = 0;
    q->nonfinite = 0;
    q->rejected = 0;
    q->first_n = 0;
    q->finished = 0;
    if (q->measure) {
        memset(q->sum_valid, 0, q->cfg.history);
        tr_norm_compute_effect(q, 0);
    }
    if (q->bl_n) {
        memset(q->bl_n, 0, q->nchan * sizeof *q->bl_n);
        memset(q->bl_nlo, 0, q->nchan * sizeof *q->bl_nlo);
        memset(q->bl_where, 0,
               (size_t)q->nchan * q->cfg.baseline_window * sizeof(int32_t));
    }
    if (q->bb_n) {
        memset(q->bb_n, 0, q->nchan * sizeof *q->bb_n);
        memset(q->bb_have, 0, q->nchan);
        for (size_t i = 0; i < (size_t)q->nchan * BB_BLOCKS; i++)
            q->bb_med[i] = NAN;
        for (uint32_t c = 0; c < q->nchan; c++)
            q->bb_base[c] = 0.0f;
    }
    tr_clear(&q->err);
    return TR_OK;
}

tr_boxcar_norm *tr_boxcar_norm_create(const tr_boxcar_norm_config *cfg, uint32_t nchan,
                                      uint32_t max_width, uint64_t lookback,
                                      tr_error *err)
{
    if (tr_boxcar_norm_validate(cfg, nchan, max_width, err) != TR_OK) return NULL;
    if (lookback > ((uint64_t)1 << 40)) {
        tr_fail(err, TR_ERR_INVALID, "boxcar_norm: lookback %llu is too large",
                (unsigned long long)lookback);
        return NULL;
    }
    tr_boxcar_norm *q = (tr_boxcar_norm *)calloc(1, sizeof *q);
    if (!q) {
        tr_fail(err, TR_ERR_NOMEM, "boxcar_norm: out of memory");
        return NULL;
    }
    q->cfg = *cfg;
    q->cfg.fixed_means = q->cfg.fixed_sigmas = NULL;
    q->cfg.fixed_mu_L = q->cfg.fixed_sigma_L = NULL;
    q->nchan = nchan;
    q->max_width = max_width;
    q->lookback = lookback;
    q->measure = cfg->mode != TR_BOXCAR_NORM_FIXED;
    q->nlev = levels_for(cfg, max_width);
    int ok = 1;
    if (q->measure) {
        const size_t W = cfg->window, H = cfg->history, L = q->nlev;
        uint64_t E = (lookback + 1) / W + 3;
        q->E = (uint32_t)E;
        ok = ok &&
             (q->buf = (float *)malloc(nchan * BUF_STRIDE(W) * sizeof(float))) != NULL;
        ok = ok && (q->sum = (acc_t *)calloc(H * nchan * L, sizeof(acc_t))) != NULL;
        ok = ok && (q->sum_valid = (unsigned char *)calloc(H, 1)) != NULL;
        ok = ok &&
             (q->eff = (lev_t *)calloc((size_t)E * nchan * L, sizeof(lev_t))) != NULL;
        ok = ok && (q->eff_ready = (unsigned char *)calloc((size_t)E * nchan, 1)) != NULL;
        ok = ok && (q->scratch = (double *)malloc(W * sizeof(double))) != NULL;
        ok = ok && (q->prefix = (double *)malloc((W + 1) * sizeof(double))) != NULL;
        ok = ok && (q->pbad = (uint32_t *)malloc((W + 1) * sizeof(uint32_t))) != NULL;
    }
    {
        uint32_t T = cfg->threads;
        if (T == 0) {
            const long np = sysconf(_SC_NPROCESSORS_ONLN);
            T = np > 1 ? (uint32_t)(np < 8 ? np : 8) : 1;
        }
        q->nthr = T;
        if (q->measure && q->nthr > 1) /* per thread: W + W + 1 doubles, W + 1 words */
            ok = ok && (q->tmem = (double *)malloc((size_t)(q->nthr - 1) *
                                                   (3 * (size_t)cfg->window + 3) *
                                                   sizeof(double))) != NULL;
        /* Threads only where calls use them (no baseline removal); threads
         * that cannot be had leave q->pool NULL: the caller then runs every
         * job, with the same results. */
        if (ok && q->measure && q->nthr > 1 && cfg->baseline == TR_BOXCAR_BASELINE_NONE)
            tr_pool_create(q->nthr, "boxcar_norm", &q->pool, NULL);
    }
    if (!q->measure) {
        ok = ok && (q->fmean = (double *)malloc(nchan * sizeof(double))) != NULL;
        ok = ok && (q->fsigma = (double *)malloc(nchan * sizeof(double))) != NULL;
        if (ok)
            for (uint32_t c = 0; c < nchan; c++) {
                q->fmean[c] = cfg->fixed_means ? cfg->fixed_means[c] : cfg->fixed_mean;
                q->fsigma[c] =
                    cfg->fixed_sigmas ? cfg->fixed_sigmas[c] : cfg->fixed_sigma;
            }
        if (ok && cfg->fixed_table_len) {
            const size_t n = cfg->fixed_table_len;
            ok = ok && (q->tmu = (double *)malloc(n * sizeof(double))) != NULL;
            ok = ok && (q->tsig = (double *)malloc(n * sizeof(double))) != NULL;
            if (ok) {
                memcpy(q->tmu, cfg->fixed_mu_L, n * sizeof(double));
                memcpy(q->tsig, cfg->fixed_sigma_L, n * sizeof(double));
            }
        } else {
            q->cfg.fixed_table_len = 0;
        }
    }
    if (ok && cfg->baseline == TR_BOXCAR_BASELINE_BLOCK_MEDIAN) {
        const size_t b = cfg->baseline_window / BB_BLOCKS;
        ok = ok && (q->bb_blk = (float *)malloc(nchan * b * sizeof(float))) != NULL;
        ok = ok && (q->bb_n = (uint32_t *)calloc(nchan, sizeof(uint32_t))) != NULL;
        ok = ok &&
             (q->bb_med = (float *)malloc(nchan * BB_BLOCKS * sizeof(float))) != NULL;
        ok = ok && (q->bb_base = (float *)calloc(nchan, sizeof(float))) != NULL;
        ok = ok && (q->bb_have = (unsigned char *)calloc(nchan, 1)) != NULL;
    }
    if (ok && cfg->baseline == TR_BOXCAR_BASELINE_MEDIAN) {
        const size_t M = cfg->baseline_window;
        ok = ok && (q->bl_ring = (float *)malloc(nchan * M * sizeof(float))) != NULL;
        const size_t Hh = BL_HEAP(M);
        ok = ok && (q->bl_lo = (uint32_t *)malloc(nchan * Hh * sizeof(uint32_t))) != NULL;
        ok = ok && (q->bl_hi = (uint32_t *)malloc(nchan * Hh * sizeof(uint32_t))) != NULL;
        ok = ok && (q->bl_where = (int32_t *)calloc(nchan * M, sizeof(int32_t))) != NULL;
        ok = ok && (q->bl_nlo = (uint32_t *)calloc(nchan, sizeof(uint32_t))) != NULL;
        ok = ok && (q->bl_n = (uint32_t *)calloc(nchan, sizeof(uint32_t))) != NULL;
    }
    if (!ok) {
        tr_boxcar_norm_destroy(q);
        tr_fail(err, TR_ERR_NOMEM, "boxcar_norm: out of memory");
        return NULL;
    }
    tr_boxcar_norm_reset(q);
    tr_clear(err);
    return q;
}

/* ---------------------------------------------------------------- queries */

uint32_t tr_boxcar_norm_window(const tr_boxcar_norm *q)
{
    return q && q->measure ? q->cfg.window : 0;
}

uint64_t tr_boxcar_norm_window_of(const tr_boxcar_norm *q, uint64_t p)
{
    return q && q->measure ? p / q->cfg.window : 0;
}

tr_status tr_boxcar_norm_stats(const tr_boxcar_norm *q, uint64_t p, uint32_t c,
                               uint32_t L, double *mu, double *sigma)
{
    if (!q) return TR_ERR_INVALID;
    tr_boxcar_norm *w = (tr_boxcar_norm *)q;
    if (c >= q->nchan || L < 1)
        return tr_fail(&w->err, TR_ERR_INVALID,
                       "boxcar_norm: channel %u or width %u out of range", c, L);
    if (tr_norm_stats_at(q, p, c, L, mu, sigma) != TR_OK)
        return tr_fail(&w->err, TR_ERR_INVALID,
                       "boxcar_norm: position %llu is outside the kept windows",
                       (unsigned long long)p);
    return TR_OK;
}

tr_status tr_boxcar_norm_table(const tr_boxcar_norm *q, uint64_t p, uint32_t c,
                               const uint32_t *widths, size_t nw, float *mu, float *sigma)
{
    if (!q || (nw && !widths)) return TR_ERR_INVALID;
    for (size_t i = 0; i < nw; i++) {
        double a, b;
        tr_status s = tr_boxcar_norm_stats(q, p, c, widths[i], &a, &b);
        if (s != TR_OK) return s;
        if (mu) mu[i] = (float)a;
        if (sigma) sigma[i] = (float)b;
    }
    return TR_OK;
}

int tr_boxcar_norm_ready(const tr_boxcar_norm *q, uint64_t p, uint32_t c)
{
    if (!q || c >= q->nchan) return 0;
    if (!q->measure) return 1;
    const long s = tr_norm_slot_of(q, p);
    return s < 0 ? 0 : q->eff_ready[(size_t)s * q->nchan + c];
}

uint64_t tr_boxcar_norm_position(const tr_boxcar_norm *q)
{
    return q ? q->position : 0;
}
uint64_t tr_boxcar_norm_first_measured(const tr_boxcar_norm *q)
{
    return q ? q->first_n : 0;
}
uint64_t tr_boxcar_norm_nonfinite(const tr_boxcar_norm *q)
{
    return q ? q->nonfinite : 0;
}
uint64_t tr_boxcar_norm_rejected(const tr_boxcar_norm *q)
{
    return q ? q->rejected : 0;
}
uint32_t tr_boxcar_norm_levels(const tr_boxcar_norm *q)
{
    return q ? q->nlev : 0;
}
const char *tr_boxcar_norm_last_error(const tr_boxcar_norm *q)
{
    return q ? q->err.message : "boxcar_norm: NULL object";
}
