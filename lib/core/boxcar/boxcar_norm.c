/*
 * S/N normalisation of the boxcar search: robust windowed statistics (WHITE,
 * LEVELS), user values (FIXED) and the causal running-median baseline. The
 * policy is described in include/transient/boxcar_norm.h.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * eqs. 3-5 and section 4.6.2; merge of (n, mean, M2) after Chan, Golub and
 * LeVeque (1983).
 */
#define _POSIX_C_SOURCE 200809L /* pthreads, sysconf */

#include <transient/boxcar_norm.h>

#include "common/core_util.h"

#include <math.h>
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

/* Floats between the windows of two channels in q->buf: W plus one cache
 * line, so that the channels of one position do not share a cache set. */
#define BUF_STRIDE(W) ((size_t)(W) + 16)

/* Entries of one running-median heap (half the window, plus one). */
#define BL_HEAP(M) ((size_t)(M) / 2 + 2)

/* Blocks of the block-median baseline. */
#define BB_BLOCKS 16

/* Chan et al. accumulator of the values kept by the robust estimate. */
typedef struct {
    double n;    /* count */
    double mean; /* mean */
    double m2;   /* sum of squared deviations from mean */
} acc_t;

/* Per-sample values in effect of one window, one channel, one level. */
typedef struct {
    double m; /* mean per sample (level mean / 2^k) */
    double v; /* variance per sample (level variance / 2^k) */
} lev_t;

struct tr_boxcar_norm {
    tr_boxcar_norm_config cfg;
    uint32_t nchan;
    uint32_t max_width;
    uint64_t lookback;
    uint32_t nlev;      /* levels measured (LEVELS: K + 1), else 1 */
    int measure;        /* WHITE or LEVELS */
    uint64_t position;  /* samples per channel consumed */
    uint64_t nonfinite; /* non-finite input samples */
    uint64_t rejected;  /* level-0 values dropped as outliers */
    /* current window, channel-major: buf[c * BUF_STRIDE(W) + i]; NaN marks
     * non-finite */
    float *buf;
    /* summaries of the last H windows: sum[(slot * nchan + c) * nlev + k] */
    acc_t *sum;
    unsigned char *sum_valid; /* [slot]: window existed (since start/reset) */
    /* values in effect for the last E windows: eff[(slot * nchan + c) * nlev + k] */
    lev_t *eff;
    unsigned char *eff_ready; /* [slot * nchan + c] */
    uint32_t E;               /* window slots of values kept */
    /* scratch for the window statistics */
    double *scratch; /* W values */
    double *prefix;  /* W + 1 prefix sums */
    uint32_t *pbad;  /* W + 1 prefix counts of non-finite */
    uint32_t nthr;   /* threads for the channels (1: none) */
    double *tmem;    /* scratch of threads 1 .. nthr - 1 */
    /* FIXED mode */
    double *fmean;  /* nchan */
    double *fsigma; /* nchan */
    double *tmu;    /* table, fixed_table_len */
    double *tsig;
    /* baseline */
    float *bl_ring;    /* nchan * M: the last M samples (NaN: non-finite) */
    uint32_t *bl_lo;   /* nchan * H: max-heap of ring slots, the lower half */
    uint32_t *bl_hi;   /* nchan * H: min-heap of ring slots, the upper half */
    int32_t *bl_where; /* nchan * M: slot's heap index + 1 (lo), -(index + 1) (hi), 0 */
    uint32_t *bl_nlo;  /* per channel: size of the lower heap */
    uint32_t *bl_n;    /* per channel: finite values in the window */
    /* block-median baseline */
    float *bb_blk;          /* nchan * b: finite values of the current block */
    uint32_t *bb_n;         /* per channel: values in bb_blk */
    float *bb_med;          /* nchan * 16: medians of the last 16 blocks (NaN: none) */
    float *bb_base;         /* per channel: baseline of the current block */
    unsigned char *bb_have; /* per channel: 0 none, 2 warm-up value, 1 block median */
    tr_error err;
};

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
    c.fixed_mean = 0.0;
    c.fixed_sigma = 1.0;
    c.baseline = TR_BOXCAR_BASELINE_NONE;
    c.baseline_window = 4096;
    c.threads = 0;
    return c;
}

double tr_boxcar_norm_clip_factor(double k)
{
    if (!(k > 0.0)) return 0.0;
    if (k > 40.0) return 1.0;
    const double phi = exp(-0.5 * k * k) / sqrt(2.0 * 3.14159265358979323846);
    const double mass = erf(k / sqrt(2.0));
    const double var = 1.0 - 2.0 * k * phi / mass;
    return var > 0.0 ? sqrt(var) : 0.0;
}

/* ---------------------------------------------------------------- robust */

/*
 * Robust estimate of n finite values v (double): mean and M2 of the kept
 * values, rejection at k sigma repeated until nothing changes. The threshold
 * uses the corrected sigma when correct is set. The first pass is a plain
 * two-pass estimate; each later pass accumulates deviations from the previous
 * mean (one pass; that mean is close to the new one, so no digits are lost).
 */
static void robust_d(const double *v, size_t n, double k, uint32_t max_iter, int correct,
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
    robust_d(d, m, reject_sigma, max_iter ? max_iter : 1, correct, &a);
    free(d);
    if (a.n <= 0.0) return TR_ERR_INVALID;
    const double f =
        (reject_sigma > 0.0 && correct) ? tr_boxcar_norm_clip_factor(reject_sigma) : 1.0;
    if (mean) *mean = a.mean;
    if (sigma) *sigma = sqrt(a.m2 / a.n) / (f > 0.0 ? f : 1.0);
    if (used) *used = (size_t)a.n;
    return TR_OK;
}

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

/* ---------------------------------------------------------------- values */

static size_t eff_slot(const tr_boxcar_norm *q, uint64_t j)
{
    return (size_t)(j % q->E);
}

/* Compute the values in effect for window j from the summaries of j-H..j-1. */
static void compute_effect_ch(tr_boxcar_norm *q, uint64_t j, uint32_t c0, uint32_t c1);

static void compute_effect(tr_boxcar_norm *q, uint64_t j)
{
    compute_effect_ch(q, j, 0, q->nchan);
}

/* The same for channels c0 .. c1 - 1 only. */
static void compute_effect_ch(tr_boxcar_norm *q, uint64_t j, uint32_t c0, uint32_t c1)
{
    const uint32_t H = q->cfg.history, L = q->nlev;
    const double f = (q->cfg.reject_sigma > 0.0 && q->cfg.reject_correct)
                         ? tr_boxcar_norm_clip_factor(q->cfg.reject_sigma)
                         : 1.0;
    const double f2 = f > 0.0 ? f * f : 1.0;
    const size_t es = eff_slot(q, j);
    for (uint32_t c = c0; c < c1; c++) {
        lev_t *e = q->eff + ((size_t)es * q->nchan + c) * L;
        int ready = 0;
        for (uint32_t k = 0; k < L; k++) {
            acc_t a = {0.0, 0.0, 0.0};
            for (uint32_t h = 1; h <= H && h <= j; h++) {
                const size_t slot = (size_t)((j - h) % H);
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

/* Scratch of one thread for the window statistics. */
typedef struct {
    double *scratch; /* W values */
    double *prefix;  /* W + 1 prefix sums */
    uint32_t *pbad;  /* W + 1 prefix counts of non-finite */
} norm_scratch;

static void summarise_ch(tr_boxcar_norm *q, uint64_t j, uint32_t c0, uint32_t c1,
                         const norm_scratch *sc, uint64_t *rejected);

/* Summaries of the completed window j (in buf) into slot j % H. */
static void summarise_window(tr_boxcar_norm *q, uint64_t j)
{
    const norm_scratch sc = {q->scratch, q->prefix, q->pbad};
    q->sum_valid[(size_t)(j % q->cfg.history)] = 1;
    summarise_ch(q, j, 0, q->nchan, &sc, &q->rejected);
}

/* Summary s[0 .. nlev-1] of one channel's window: values b[i * stride],
 * i < W (non-finite ones left out). */
static void summarise_one(tr_boxcar_norm *q, const float *b, size_t stride, acc_t *s,
                          const norm_scratch *sc, uint64_t *rejected)
{
    const uint32_t W = q->cfg.window, L = q->nlev;
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
    robust_d(scratch, m, q->cfg.reject_sigma, q->cfg.reject_max_iter,
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
        robust_d(scratch, m, q->cfg.reject_sigma, q->cfg.reject_max_iter,
                 q->cfg.reject_correct, &s[k]);
    }
}

/* The same for channels c0 .. c1 - 1 of the window in buf (sum_valid is set by
 * the caller). */
static void summarise_ch(tr_boxcar_norm *q, uint64_t j, uint32_t c0, uint32_t c1,
                         const norm_scratch *sc, uint64_t *rejected)
{
    const uint32_t W = q->cfg.window, H = q->cfg.history, L = q->nlev;
    const size_t slot = (size_t)(j % H);
    for (uint32_t c = c0; c < c1; c++)
        summarise_one(q, q->buf + (size_t)c * BUF_STRIDE(W), 1,
                      q->sum + ((size_t)slot * q->nchan + c) * L, sc, rejected);
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
    if (q->measure) {
        memset(q->sum_valid, 0, q->cfg.history);
        compute_effect(q, 0);
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

/* Values slot of position p, or -1 when its window is not kept. */
static long slot_of(const tr_boxcar_norm *q, uint64_t p)
{
    const uint64_t j = p / q->cfg.window, cur = q->position / q->cfg.window;
    if (j > cur || cur - j >= q->E) return -1;
    return (long)eff_slot(q, j);
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

static tr_status stats_at(const tr_boxcar_norm *q, uint64_t p, uint32_t c, uint32_t L,
                          double *mu, double *sigma)
{
    if (q->measure) {
        const long s = slot_of(q, p);
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

tr_status tr_boxcar_norm_stats(const tr_boxcar_norm *q, uint64_t p, uint32_t c,
                               uint32_t L, double *mu, double *sigma)
{
    if (!q) return TR_ERR_INVALID;
    tr_boxcar_norm *w = (tr_boxcar_norm *)q;
    if (c >= q->nchan || L < 1)
        return tr_fail(&w->err, TR_ERR_INVALID,
                       "boxcar_norm: channel %u or width %u out of range", c, L);
    if (stats_at(q, p, c, L, mu, sigma) != TR_OK)
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
    const long s = slot_of(q, p);
    return s < 0 ? 0 : q->eff_ready[(size_t)s * q->nchan + c];
}

uint64_t tr_boxcar_norm_position(const tr_boxcar_norm *q)
{
    return q ? q->position : 0;
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

/* ---------------------------------------------------------------- process */

/*
 * Running median of channel c: two heaps of ring slots, the lower half in a
 * max-heap and the upper half in a min-heap (sizes equal, or the lower one
 * larger by one), each slot's place recorded so that the sample leaving the
 * window is removed in O(log M).
 */
typedef struct {
    const float *v; /* ring values */
    uint32_t *h;    /* heap of slots */
    int32_t *where; /* slot -> +-(index + 1) */
    int sign;       /* +1: max-heap (lower half), -1: min-heap (upper half) */
} heap_t;

/* a above b in heap order */
static int h_above(const heap_t *H, uint32_t a, uint32_t b)
{
    return H->sign > 0 ? H->v[a] > H->v[b] : H->v[a] < H->v[b];
}

static void h_put(heap_t *H, uint32_t i, uint32_t slot)
{
    H->h[i] = slot;
    H->where[slot] = H->sign * (int32_t)(i + 1);
}

static void h_up(heap_t *H, uint32_t i)
{
    const uint32_t slot = H->h[i];
    while (i > 0) {
        const uint32_t par = (i - 1) / 2;
        if (!h_above(H, slot, H->h[par])) break;
        h_put(H, i, H->h[par]);
        i = par;
    }
    h_put(H, i, slot);
}

static void h_down(heap_t *H, uint32_t n, uint32_t i)
{
    const uint32_t slot = H->h[i];
    for (;;) {
        uint32_t ch = 2 * i + 1;
        if (ch >= n) break;
        if (ch + 1 < n && h_above(H, H->h[ch + 1], H->h[ch])) ch++;
        if (!h_above(H, H->h[ch], slot)) break;
        h_put(H, i, H->h[ch]);
        i = ch;
    }
    h_put(H, i, slot);
}

static void h_push(heap_t *H, uint32_t *n, uint32_t slot)
{
    h_put(H, *n, slot);
    h_up(H, (*n)++);
}

/* Remove the entry at index i; returns its slot. */
static uint32_t h_remove(heap_t *H, uint32_t *n, uint32_t i)
{
    const uint32_t slot = H->h[i];
    const uint32_t last = --(*n);
    if (i != last) {
        const uint32_t m = H->h[last];
        h_put(H, i, m);
        if (i > 0 && h_above(H, m, H->h[(i - 1) / 2]))
            h_up(H, i);
        else
            h_down(H, *n, i);
    }
    H->where[slot] = 0;
    return slot;
}

static float baseline_push(tr_boxcar_norm *q, uint32_t c, uint64_t p, float x)
{
    const uint32_t M = q->cfg.baseline_window;
    const size_t Hh = BL_HEAP(M);
    float *ring = q->bl_ring + (size_t)c * M;
    int32_t *where = q->bl_where + (size_t)c * M;
    heap_t lo = {ring, q->bl_lo + (size_t)c * Hh, where, +1};
    heap_t hi = {ring, q->bl_hi + (size_t)c * Hh, where, -1};
    uint32_t nlo = q->bl_nlo[c], n = q->bl_n[c], nhi = n - nlo;
    const uint32_t slot = (uint32_t)(p % M);
    if (p >= M && where[slot] != 0) { /* the sample leaving the window */
        const int32_t w = where[slot];
        if (w > 0)
            h_remove(&lo, &nlo, (uint32_t)(w - 1));
        else
            h_remove(&hi, &nhi, (uint32_t)(-w - 1));
    }
    ring[slot] = x;
    if (isfinite(x)) {
        if (nlo == 0 || x <= ring[lo.h[0]])
            h_push(&lo, &nlo, slot);
        else
            h_push(&hi, &nhi, slot);
    }
    /* rebalance: nlo == nhi or nlo == nhi + 1 */
    if (nlo > nhi + 1) h_push(&hi, &nhi, h_remove(&lo, &nlo, 0));
    if (nhi > nlo) h_push(&lo, &nlo, h_remove(&hi, &nhi, 0));
    q->bl_nlo[c] = nlo;
    q->bl_n[c] = n = nlo + nhi;
    if (n == 0) return 0.0f;
    if (nlo > nhi) return ring[lo.h[0]];
    return (float)(0.5 * ((double)ring[lo.h[0]] + (double)ring[hi.h[0]]));
}

/* Median of the n >= 1 values v (reordered): quickselect; an even count
 * takes the mean of the two middle values. */
static float median_select(float *v, uint32_t n)
{
    const uint32_t k = n / 2;
    uint32_t lo = 0, hi = n - 1;
    while (lo < hi) { /* Lomuto partition, pivot moved to hi */
        const uint32_t mid = lo + (hi - lo) / 2;
        float t = v[mid];
        v[mid] = v[hi];
        v[hi] = t;
        const float piv = v[hi];
        uint32_t st = lo;
        for (uint32_t i = lo; i < hi; i++)
            if (v[i] < piv) {
                t = v[i];
                v[i] = v[st];
                v[st] = t;
                st++;
            }
        t = v[st];
        v[st] = v[hi];
        v[hi] = t;
        if (st == k) break;
        if (st < k)
            lo = st + 1;
        else
            hi = st - 1;
    }
    const float upper = v[k];
    if (n & 1u) return upper;
    float lower = v[0]; /* the largest value left of k */
    for (uint32_t i = 1; i < k; i++)
        if (v[i] > lower) lower = v[i];
    return (float)(0.5 * ((double)lower + (double)upper));
}

/* Block-median baseline of channel c for the sample x at position p. */
static float block_baseline_push(tr_boxcar_norm *q, uint32_t c, uint64_t p, int bend,
                                 float x)
{
    const uint32_t b = q->cfg.baseline_window / BB_BLOCKS;
    float *blk = q->bb_blk + (size_t)c * b, *med = q->bb_med + (size_t)c * BB_BLOCKS;
    if (q->bb_have[c] == 0 && isfinite(x)) { /* warm-up: the first finite sample */
        q->bb_base[c] = x;
        q->bb_have[c] = 2;
    }
    const float base = q->bb_have[c] ? q->bb_base[c] : 0.0f;
    if (isfinite(x)) blk[q->bb_n[c]++] = x;
    if (bend) { /* block complete: its median, then the new baseline */
        med[(p / b) % BB_BLOCKS] = q->bb_n[c] ? median_select(blk, q->bb_n[c]) : NAN;
        q->bb_n[c] = 0;
        float tmp[BB_BLOCKS];
        uint32_t m = 0;
        for (uint32_t i = 0; i < BB_BLOCKS; i++)
            if (isfinite(med[i])) tmp[m++] = med[i];
        if (m) {
            q->bb_base[c] = median_select(tmp, m);
            q->bb_have[c] = 1;
        }
    }
    return base;
}

/* One thread's part of a call without baseline removal: channels c0 .. c1-1
 * of n samples from q->position on. */
typedef struct {
    tr_boxcar_norm *q;
    const float *x;
    float *y;
    size_t n;
    uint32_t c0, c1;
    norm_scratch sc;
    uint64_t nonfinite, rejected;
} norm_job;

/* Input mean in effect at position p of channel c: what stats_at gives for
 * the current window (whose values are fixed), without touching q. */
static double mean_at(const tr_boxcar_norm *q, uint64_t p, uint32_t c)
{
    double mu1 = 0.0;
    if (q->measure) {
        const size_t es = eff_slot(q, p / q->cfg.window);
        interp(q->eff + (es * q->nchan + c) * q->nlev, q->nlev, 1, &mu1, NULL);
    } else {
        stats_at(q, p, c, 1, &mu1, NULL);
    }
    return mu1;
}

/*
 * Runs of samples inside one statistics window (the values in effect, hence
 * the replacement of a non-finite sample, are the same for all of them),
 * channel by channel in blocks of kBlk samples (the block of x stays in
 * cache); at each window end the summaries and the next window's values of
 * these channels. The same results as the general loop of
 * tr_boxcar_norm_process. Writes only the channels' own state.
 */
static void fast_channels(norm_job *jb)
{
    enum { kBlk = 512 };
    tr_boxcar_norm *q = jb->q;
    const uint32_t C = q->nchan;
    const uint64_t W = q->measure ? q->cfg.window : 0;
    const size_t S = BUF_STRIDE(W);
    uint64_t pos = q->position;
    size_t k = 0;
    while (k < jb->n) {
        const uint64_t p0 = pos;
        size_t run = jb->n - k;
        if (W && run > W - p0 % W) run = (size_t)(W - p0 % W);
        for (size_t b0 = 0; b0 < run; b0 += kBlk) {
            const size_t bn = run - b0 < kBlk ? run - b0 : kBlk;
            for (uint32_t c = jb->c0; c < jb->c1; c++) {
                const float *xs = jb->x + (k + b0) * C + c;
                float *ys = jb->y + (k + b0) * C + c;
                float *bk = W ? q->buf + (size_t)c * S + (p0 + b0) % W : NULL;
                for (size_t i = 0; i < bn; i++) {
                    const float v = xs[i * C];
                    if (isfinite(v)) {
                        ys[i * C] = v;
                        if (bk) bk[i] = v;
                    } else {
                        jb->nonfinite++;
                        ys[i * C] = (float)mean_at(q, p0, c);
                        if (bk) bk[i] = NAN;
                    }
                }
            }
        }
        pos = p0 + run;
        if (W && pos % W == 0) {
            const uint64_t j = p0 / W;
            summarise_ch(q, j, jb->c0, jb->c1, &jb->sc, &jb->rejected);
            compute_effect_ch(q, j + 1, jb->c0, jb->c1);
        }
        k += run;
    }
}

static void *fast_channels_thread(void *arg)
{
    fast_channels((norm_job *)arg);
    return NULL;
}

/* Samples [position, position + n) without baseline removal: threads share
 * the channels (long calls). */
static void channel_segment(tr_boxcar_norm *q, const float *x, float *y, size_t n)
{
    const uint32_t C = q->nchan;
    const uint64_t W = q->measure ? q->cfg.window : 0;
    if (n == 0) return;
    /* No baseline: the channels are independent; with several threads
     * each takes a range of them (the same results as one). */
    uint32_t T = q->nthr < C ? q->nthr : C;
    /* threads only where the statistics make the work worth their start */
    if (!q->measure || (uint64_t)n * C < ((uint64_t)1 << 17)) T = 1;
    if (W) /* windows that complete in this call (see fast_channels) */
        for (uint64_t j = q->position / W; (j + 1) * W <= q->position + n; j++)
            q->sum_valid[(size_t)(j % q->cfg.history)] = 1;
    norm_job jobs[TR_BOXCAR_NORM_MAX_THREADS];
    pthread_t th[TR_BOXCAR_NORM_MAX_THREADS];
    int started[TR_BOXCAR_NORM_MAX_THREADS];
    for (uint32_t t = 0; t < T; t++) {
        norm_job *jb = &jobs[t];
        jb->q = q;
        jb->x = x;
        jb->y = y;
        jb->n = n;
        jb->c0 = (uint32_t)((uint64_t)C * t / T);
        jb->c1 = (uint32_t)((uint64_t)C * (t + 1) / T);
        jb->nonfinite = jb->rejected = 0;
        if (t == 0 || !q->tmem) {
            jb->sc.scratch = q->scratch;
            jb->sc.prefix = q->prefix;
            jb->sc.pbad = q->pbad;
        } else {
            double *m = q->tmem + (size_t)(t - 1) * (3 * (size_t)W + 3);
            jb->sc.scratch = m;
            jb->sc.prefix = m + W;
            jb->sc.pbad = (uint32_t *)(m + 2 * W + 1);
        }
        started[t] = 0;
    }
    for (uint32_t t = 1; t < T; t++)
        started[t] = pthread_create(&th[t], NULL, fast_channels_thread, &jobs[t]) == 0;
    fast_channels(&jobs[0]);
    for (uint32_t t = 1; t < T; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            fast_channels(&jobs[t]); /* no thread to be had: here */
    }
    for (uint32_t t = 0; t < T; t++) {
        q->nonfinite += jobs[t].nonfinite;
        q->rejected += jobs[t].rejected;
    }
    q->position += n;
}

/* One thread's tasks of window_segment: task t = window t / C, channel t % C
 * of the m windows at x. Phase 0: summaries into tmp; phase 1: cleaned
 * samples (the values in effect are known by then). */
typedef struct {
    tr_boxcar_norm *q;
    const float *x;
    float *y;
    uint64_t j0;
    size_t t0, t1;
    int phase;
    acc_t *tmp;
    norm_scratch sc;
    uint64_t rejected, nonfinite;
} win_job;

static void win_tasks(win_job *jb)
{
    tr_boxcar_norm *q = jb->q;
    const uint32_t C = q->nchan, L = q->nlev;
    const size_t W = q->cfg.window;
    for (size_t t = jb->t0; t < jb->t1; t++) {
        const size_t jw = t / C;
        const uint32_t c = (uint32_t)(t % C);
        const float *src = jb->x + jw * W * C + c;
        if (jb->phase == 0) {
            summarise_one(q, src, C, jb->tmp + (jw * C + c) * L, &jb->sc, &jb->rejected);
            continue;
        }
        float *dst = jb->y + jw * W * C + c;
        for (size_t i = 0; i < W; i++) {
            const float v = src[i * C];
            if (isfinite(v)) {
                dst[i * C] = v;
            } else {
                jb->nonfinite++;
                dst[i * C] = (float)mean_at(q, (jb->j0 + jw) * W, c);
            }
        }
    }
}

static void *win_tasks_thread(void *arg)
{
    win_tasks((win_job *)arg);
    return NULL;
}

/* Run phase `phase` of the m * C tasks on up to nthr threads. */
static void win_run(tr_boxcar_norm *q, win_job *base, size_t m, int phase)
{
    const size_t tasks = m * q->nchan;
    uint32_t T = q->nthr;
    if (T > tasks) T = (uint32_t)tasks;
    win_job jobs[TR_BOXCAR_NORM_MAX_THREADS];
    pthread_t th[TR_BOXCAR_NORM_MAX_THREADS];
    int started[TR_BOXCAR_NORM_MAX_THREADS];
    const size_t W = q->cfg.window;
    for (uint32_t t = 0; t < T; t++) {
        jobs[t] = *base;
        jobs[t].phase = phase;
        jobs[t].t0 = tasks * t / T;
        jobs[t].t1 = tasks * (t + 1) / T;
        jobs[t].rejected = jobs[t].nonfinite = 0;
        if (t == 0 || !q->tmem) {
            jobs[t].sc.scratch = q->scratch;
            jobs[t].sc.prefix = q->prefix;
            jobs[t].sc.pbad = q->pbad;
        } else {
            double *mem = q->tmem + (size_t)(t - 1) * (3 * W + 3);
            jobs[t].sc.scratch = mem;
            jobs[t].sc.prefix = mem + W;
            jobs[t].sc.pbad = (uint32_t *)(mem + 2 * W + 1);
        }
        started[t] = 0;
    }
    for (uint32_t t = 1; t < T && q->tmem; t++)
        started[t] = pthread_create(&th[t], NULL, win_tasks_thread, &jobs[t]) == 0;
    win_tasks(&jobs[0]);
    for (uint32_t t = 1; t < T; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            win_tasks(&jobs[t]);
    }
    for (uint32_t t = 0; t < T; t++) {
        base->rejected += jobs[t].rejected;
        base->nonfinite += jobs[t].nonfinite;
    }
}

/*
 * The m >= 1 windows j0 .. j0 + m - 1 that start at position = j0 W and lie
 * entirely in x: their summaries in parallel (read from x, as summarise_ch
 * reads them from buf), then in order what the window ends do (summaries into
 * their slots, the values in effect of the next window), then the cleaned
 * samples in parallel. m + 1 <= E - 1, so the values of every window of the
 * segment are still kept for the cleaning. Returns 0 (nothing done) when the
 * scratch cannot be had.
 */
static int window_segment(tr_boxcar_norm *q, const float *x, float *y, size_t m)
{
    const uint32_t C = q->nchan, L = q->nlev, H = q->cfg.history;
    const uint64_t W = q->cfg.window, j0 = q->position / W;
    acc_t *tmp = (acc_t *)malloc(m * C * L * sizeof(acc_t));
    if (!tmp) return 0;
    win_job base;
    memset(&base, 0, sizeof base);
    base.q = q;
    base.x = x;
    base.y = y;
    base.j0 = j0;
    base.tmp = tmp;
    win_run(q, &base, m, 0);
    for (size_t jw = 0; jw < m; jw++) {
        const uint64_t j = j0 + jw;
        const size_t slot = (size_t)(j % H);
        q->sum_valid[slot] = 1;
        memcpy(q->sum + (size_t)slot * C * L, tmp + jw * C * L,
               (size_t)C * L * sizeof(acc_t));
        compute_effect(q, j + 1);
    }
    win_run(q, &base, m, 1);
    q->rejected += base.rejected;
    q->nonfinite += base.nonfinite;
    q->position += m * W;
    free(tmp);
    return 1;
}

tr_status tr_boxcar_norm_process(tr_boxcar_norm *q, const float *x, size_t n, float *y)
{
    if (!q) return TR_ERR_INVALID;
    if (n == 0) return TR_OK;
    if (!x || !y)
        return tr_fail(&q->err, TR_ERR_INVALID, "boxcar_norm: NULL buffer with n = %zu",
                       n);
    const uint32_t C = q->nchan;
    const uint64_t W = q->measure ? q->cfg.window : 0;
    if (!q->bl_n && !q->bb_n) {
        /* No baseline. Several statistics windows in one call and fewer
         * channels than threads: the windows that lie entirely in the call
         * are summarised in parallel (window_segment); otherwise threads
         * share the channels (channel_segment). The same results as one
         * thread. */
        size_t k = 0;
        if (W && q->nthr > C && q->nthr > 1) {
            const size_t head = q->position % W ? (size_t)(W - q->position % W) : 0;
            if (head < n && (n - head) / W >= 2 &&
                (uint64_t)(n - head) * C >= ((uint64_t)1 << 17)) {
                channel_segment(q, x, y, head);
                k = head;
                size_t m = (n - head) / W;
                const size_t cap =
                    q->E > 3 ? q->E - 2 : 1; /* values of the windows kept */
                while (m > 0) {
                    const size_t mm = m < cap ? m : cap;
                    if (!window_segment(q, x + k * C, y + k * C, mm)) break;
                    k += mm * W;
                    m -= mm;
                }
            }
        }
        channel_segment(q, x + k * C, y + k * C, n - k);
        return TR_OK;
    }
    for (size_t k = 0; k < n; k++) {
        const uint64_t p = q->position;
        const float *xk = x + k * C;
        float *yk = y + k * C;
        float *bk = q->measure ? q->buf + p % W : NULL; /* channel c at bk[c * S] */
        const size_t S = BUF_STRIDE(W);
        /* block-median baseline: p ends a block */
        const int bend = q->bb_n && (p + 1) % (q->cfg.baseline_window / BB_BLOCKS) == 0;
        for (uint32_t c = 0; c < C; c++) {
            float v = xk[c];
            const int fin = isfinite(v);
            if (q->bl_n) {
                const float b = baseline_push(q, c, p, fin ? v : NAN);
                if (fin) v = v - b;
            } else if (q->bb_n) {
                const float b = block_baseline_push(q, c, p, bend, fin ? v : NAN);
                if (fin) v = v - b;
            }
            if (fin) {
                yk[c] = v;
            } else {
                double mu1 = 0.0;
                q->nonfinite++;
                stats_at(q, p, c, 1, &mu1, NULL);
                yk[c] = (float)mu1;
                v = NAN;
            }
            if (bk) bk[(size_t)c * S] = v;
        }
        q->position = p + 1;
        if (W && q->position % W == 0) {
            const uint64_t j = p / W;
            summarise_window(q, j);
            compute_effect(q, j + 1);
        }
    }
    return TR_OK;
}
