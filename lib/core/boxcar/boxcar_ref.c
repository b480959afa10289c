/*
 * Boxcar search, reference variant: plain scalar C that reads like the paper.
 * For every position p and every boxcar (p, L) of the plan, X_L[p] is summed
 * in double directly from x[p] upwards (eq. 2; one running sum per start, so
 * each X_L is the plain left-to-right sum of its L samples), its S/N is
 * (X_L - mu_L) / sigma_L in double (eq. 4) and the highest S/N with its width
 * is kept (eq. 12; the first in evaluation order wins ties).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020).
 */
#include "boxcar/boxcar_variants.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct tr_boxcar_ref {
    const tr_boxcar_plan *plan;
    const tr_boxcar_norm *norm;
    uint32_t nchan;
    uint32_t latency;
    uint32_t nw;      /* widths of the plan */
    uint32_t *widths; /* every width in evaluation order */
    float *hist;      /* cleaned samples of positions [hfirst, pos), time-major */
    size_t hcap;      /* positions the history holds */
    uint64_t hfirst;  /* position of hist[0] */
    uint64_t pos;     /* samples per channel received */
    /* mu_L, sigma_L of every width per channel, for window win[c] */
    double *mu, *sigma;
    uint64_t *win;
    int *have_win;
};

tr_boxcar_ref *tr_boxcar_ref_create(const tr_boxcar_plan *plan, uint32_t nchan,
                                    const tr_boxcar_norm *norm)
{
    tr_boxcar_ref *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->plan = plan;
    r->norm = norm;
    r->nchan = nchan;
    r->latency = tr_boxcar_plan_latency(plan);
    r->nw = tr_boxcar_plan_total_widths(plan);
    r->hcap = (size_t)r->latency + TR_BOXCAR_SUBCHUNK;
    r->widths = malloc(r->nw * sizeof *r->widths);
    r->hist = malloc(r->hcap * nchan * sizeof(float));
    r->mu = malloc((size_t)r->nw * nchan * sizeof(double));
    r->sigma = malloc((size_t)r->nw * nchan * sizeof(double));
    r->win = calloc(nchan, sizeof *r->win);
    r->have_win = calloc(nchan, sizeof *r->have_win);
    if (!r->widths || !r->hist || !r->mu || !r->sigma || !r->win || !r->have_win) {
        tr_boxcar_ref_destroy(r);
        return NULL;
    }
    tr_boxcar_plan_list(plan, r->widths, NULL, r->nw);
    return r;
}

void tr_boxcar_ref_destroy(tr_boxcar_ref *r)
{
    if (!r) return;
    free(r->widths);
    free(r->hist);
    free(r->mu);
    free(r->sigma);
    free(r->win);
    free(r->have_win);
    free(r);
}

void tr_boxcar_ref_reset(tr_boxcar_ref *r)
{
    r->hfirst = 0;
    r->pos = 0;
    memset(r->have_win, 0, r->nchan * sizeof *r->have_win);
}

/* mu_L and sigma_L of channel c for boxcars starting at p. */
static void load_stats(tr_boxcar_ref *r, uint64_t p, uint32_t c)
{
    const uint64_t w = tr_boxcar_norm_window_of(r->norm, p);
    if (r->have_win[c] && r->win[c] == w) return;
    double *mu = r->mu + (size_t)c * r->nw, *sg = r->sigma + (size_t)c * r->nw;
    for (uint32_t k = 0; k < r->nw; k++)
        tr_boxcar_norm_stats(r->norm, p, c, r->widths[k], &mu[k], &sg[k]);
    r->win[c] = w;
    r->have_win[c] = 1;
}

/* Append the entries of position p (all channels written by the caller). */
static size_t stage_slot(tr_boxcar_stage_buf *b, uint64_t n)
{
    if (b->count == 0) b->first = n;
    return b->count;
}

/*
 * Every boxcar of the plan that starts at p (>= 0) and ends at or before
 * `end`, for channel c: the best S/N and width into *y, *w, and the best of
 * each stage into st when given.
 */
static void search_at(tr_boxcar_ref *r, uint64_t p, uint64_t end, uint32_t c, float *y,
                      int32_t *w, tr_boxcar_stage_buf *st)
{
    const tr_boxcar_plan *plan = r->plan;
    const float *x = r->hist + (size_t)(p - r->hfirst) * r->nchan + c;
    load_stats(r, p, c);
    const double *mu = r->mu + (size_t)c * r->nw, *sg = r->sigma + (size_t)c * r->nw;
    double acc = 0.0; /* X_have[p] = x[p] + ... + x[p + have - 1] */
    uint32_t have = 0;
    double best = -INFINITY;
    uint32_t best_w = 0;
    uint32_t k = 0; /* index of the width in evaluation order */
    for (uint32_t i = 0; i < plan->nstages; i++) {
        const tr_boxcar_stage *s = &plan->stages[i];
        double sbest = -INFINITY;
        uint32_t sw = 0;
        if (p % s->stride == 0) {
            for (uint32_t m = 0; m < s->nwidths; m++) {
                const uint32_t L = s->width_first + m * s->width_step;
                if (p + L > end) break;
                while (have < L)
                    acc += (double)x[(size_t)(have++) * r->nchan];
                const double snr = (acc - mu[k + m]) / sg[k + m];
                if (snr > sbest) {
                    sbest = snr;
                    sw = L;
                }
                if (snr > best) {
                    best = snr;
                    best_w = L;
                }
            }
            if (st) {
                const size_t e = stage_slot(&st[i], p / s->stride);
                st[i].snr[e * r->nchan + c] = (float)sbest;
                st[i].width[e * r->nchan + c] = (int32_t)sw;
            }
        }
        k += s->nwidths;
    }
    *y = (float)best;
    *w = (int32_t)best_w;
}

/* Output positions [first, first + n) (first may be negative), data up to end. */
static void emit(tr_boxcar_ref *r, int64_t first, size_t n, uint64_t end, float *snr,
                 int32_t *width, tr_boxcar_stage_buf *st)
{
    const uint32_t C = r->nchan;
    for (size_t k = 0; k < n; k++) {
        const int64_t p = first + (int64_t)k;
        for (uint32_t c = 0; c < C; c++) {
            float y = 0.0f;
            int32_t w = 0;
            if (p >= 0) search_at(r, (uint64_t)p, end, c, &y, &w, st);
            snr[k * C + c] = y;
            if (width) width[k * C + c] = w;
        }
        if (p >= 0 && st)
            for (uint32_t i = 0; i < r->plan->nstages; i++)
                if ((uint64_t)p % r->plan->stages[i].stride == 0) st[i].count++;
    }
}

void tr_boxcar_ref_run(tr_boxcar_ref *r, const float *y, size_t n, float *snr,
                       int32_t *width, tr_boxcar_stage_buf *st)
{
    const uint32_t C = r->nchan;
    /* Keep the positions from the first one not yet output. */
    const int64_t first = (int64_t)r->pos - (int64_t)r->latency;
    const uint64_t keep = first > 0 ? (uint64_t)first : 0;
    if (keep > r->hfirst) {
        const size_t drop = (size_t)(keep - r->hfirst);
        const size_t held = (size_t)(r->pos - r->hfirst);
        memmove(r->hist, r->hist + drop * C, (held - drop) * C * sizeof(float));
        r->hfirst = keep;
    }
    memcpy(r->hist + (size_t)(r->pos - r->hfirst) * C, y, n * C * sizeof(float));
    r->pos += n;
    emit(r, first, n, r->pos, snr, width, st);
}

void tr_boxcar_ref_flush(tr_boxcar_ref *r, float *snr, int32_t *width,
                         tr_boxcar_stage_buf *st)
{
    const int64_t first = (int64_t)r->pos - (int64_t)r->latency;
    emit(r, first, r->latency, r->pos, snr, width, st);
}
