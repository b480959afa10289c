/*
 * Triggers of a SPIIR filter bank: peaks of |SNR| over a threshold, clustered
 * per template (include/transient/spiir_triggers.h has the definition).
 *
 * Paper: X. Guo, Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of
 * low-latency gravitational wave searches using Maxwell-microarchitecture GPUs"
 * (equation 8: the SNR these triggers are taken from).
 *
 * One pass over the samples; per template the state of its open cluster is kept
 * between calls, so the triggers do not depend on the chunking.
 */
#include <transient/spiir_triggers.h>

#include "core_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Marks a |z|^2 that is unknown (no such sample) or not finite. */
#define NO_VALUE (-1.0)

typedef struct {
    int open;     /* a cluster is open */
    uint64_t k;   /* its candidate's sample */
    double val;   /* |z|^2 of the candidate */
    double prev;  /* |z|^2 of the sample before the candidate, or NO_VALUE */
    double next;  /* |z|^2 of the sample after it, or NO_VALUE (not seen yet) */
    float re, im; /* z of the candidate */
    double last;  /* |z|^2 of the latest sample scanned, or NO_VALUE */
} cluster;

struct tr_spiir_triggers {
    tr_spiir_triggers_config cfg;
    cluster *c;        /* one per template */
    uint64_t position; /* samples scanned */
    tr_error err;
};

tr_spiir_triggers_config tr_spiir_triggers_config_default(void)
{
    tr_spiir_triggers_config c;
    memset(&c, 0, sizeof c);
    c.ntemplates = 1;
    c.threshold = 8.0f;
    c.window = 64;
    return c;
}

static tr_status check_threshold(float threshold, tr_error *err)
{
    if (!isfinite(threshold) || !(threshold >= 0.0f))
        return tr_fail(err, TR_ERR_INVALID,
                       "spiir triggers: threshold must be finite and >= 0, got %g",
                       (double)threshold);
    return TR_OK;
}

static void clear_clusters(tr_spiir_triggers *q)
{
    for (uint32_t t = 0; t < q->cfg.ntemplates; t++) {
        q->c[t].open = 0;
        q->c[t].last = NO_VALUE;
    }
    q->position = 0;
}

tr_spiir_triggers *tr_spiir_triggers_create(const tr_spiir_triggers_config *cfg,
                                            tr_error *err)
{
    if (!cfg) {
        tr_fail(err, TR_ERR_INVALID, "spiir triggers: NULL configuration");
        return NULL;
    }
    if (cfg->ntemplates == 0) {
        tr_fail(err, TR_ERR_INVALID, "spiir triggers: ntemplates must be >= 1");
        return NULL;
    }
    if (cfg->window == 0) {
        tr_fail(err, TR_ERR_INVALID, "spiir triggers: window must be >= 1 sample");
        return NULL;
    }
    if (check_threshold(cfg->threshold, err) != TR_OK) return NULL;
    tr_spiir_triggers *q = calloc(1, sizeof *q);
    if (q) q->c = calloc(cfg->ntemplates, sizeof *q->c);
    if (!q || !q->c) {
        free(q);
        tr_fail(err, TR_ERR_NOMEM, "spiir triggers: cannot allocate %u clusters",
                cfg->ntemplates);
        return NULL;
    }
    q->cfg = *cfg;
    clear_clusters(q);
    tr_clear(err);
    tr_clear(&q->err);
    return q;
}

void tr_spiir_triggers_destroy(tr_spiir_triggers *q)
{
    if (!q) return;
    free(q->c);
    free(q);
}

tr_status tr_spiir_triggers_reset(tr_spiir_triggers *q)
{
    if (!q) return TR_ERR_INVALID;
    clear_clusters(q);
    tr_clear(&q->err);
    return TR_OK;
}

/* The candidate of an open cluster as a trigger; closes the cluster. */
static void emit(cluster *c, uint32_t t, tr_spiir_trigger *out)
{
    double delta = 0.0;
    const double y1 = sqrt(c->val);
    if (c->prev != NO_VALUE && c->next != NO_VALUE && c->val > c->prev &&
        c->val > c->next) {
        const double y0 = sqrt(c->prev), y2 = sqrt(c->next);
        /* Vertex of the parabola through (-1, y0), (0, y1), (1, y2). */
        delta = 0.5 * (y0 - y2) / (y0 - 2.0 * y1 + y2);
        if (delta > 0.5) delta = 0.5;
        if (delta < -0.5) delta = -0.5;
    }
    out->sample = c->k;
    out->peak = (double)c->k + delta;
    out->template_index = t;
    out->snr = (float)y1;
    out->re = c->re;
    out->im = c->im;
    out->reserved = 0;
    c->open = 0;
}

tr_status tr_spiir_triggers_process(tr_spiir_triggers *q, const float *snr, size_t n,
                                    tr_spiir_trigger *out, size_t cap, size_t *consumed,
                                    size_t *nout)
{
    if (consumed) *consumed = 0;
    if (nout) *nout = 0;
    if (!q) return TR_ERR_INVALID;
    if (!consumed || !nout)
        return tr_fail(&q->err, TR_ERR_INVALID, "spiir triggers: NULL consumed or nout");
    if (n == 0) return TR_OK;
    if (!snr || (!out && cap > 0))
        return tr_fail(&q->err, TR_ERR_INVALID, "spiir triggers: NULL %s",
                       !snr ? "snr" : "out");
    const uint32_t nt = q->cfg.ntemplates;
    const uint32_t window = q->cfg.window;
    /* Compared as squares: |z|^2 = re^2 + im^2 in double is exact up to one
     * rounding for float parts, and the square root is needed only at a
     * trigger. */
    const double thr2 = (double)q->cfg.threshold * (double)q->cfg.threshold;
    size_t written = 0, k = 0;
    for (; k < n; k++) {
        if (cap - written < nt) break; /* this sample might decide nt triggers */
        const uint64_t pos = q->position;
        const float *z = snr + (size_t)k * nt * 2;
        for (uint32_t t = 0; t < nt; t++) {
            cluster *c = &q->c[t];
            const float re = z[2 * t], im = z[2 * t + 1];
            double v = (double)re * (double)re + (double)im * (double)im;
            if (!isfinite(v)) v = NO_VALUE;
            if (c->open && pos == c->k + 1) c->next = v;
            if (v > thr2) {
                if (!c->open || v > c->val) {
                    c->open = 1;
                    c->k = pos;
                    c->val = v;
                    c->prev = c->last;
                    c->next = NO_VALUE;
                    c->re = re;
                    c->im = im;
                }
            }
            if (c->open && pos - c->k >= window) emit(c, t, &out[written++]);
            c->last = v;
        }
        q->position++;
    }
    *consumed = k;
    *nout = written;
    return TR_OK;
}

tr_status tr_spiir_triggers_flush(tr_spiir_triggers *q, tr_spiir_trigger *out, size_t cap,
                                  size_t *nout)
{
    if (nout) *nout = 0;
    if (!q) return TR_ERR_INVALID;
    if (!nout) return tr_fail(&q->err, TR_ERR_INVALID, "spiir triggers: NULL nout");
    if (!out || cap < q->cfg.ntemplates)
        return tr_fail(&q->err, TR_ERR_INVALID,
                       "spiir triggers: flush needs room for %u triggers, got %zu",
                       q->cfg.ntemplates, out ? cap : (size_t)0);
    size_t written = 0;
    for (uint32_t t = 0; t < q->cfg.ntemplates; t++)
        if (q->c[t].open) emit(&q->c[t], t, &out[written++]);
    *nout = written;
    return TR_OK;
}

tr_status tr_spiir_triggers_set_threshold(tr_spiir_triggers *q, float threshold)
{
    if (!q) return TR_ERR_INVALID;
    tr_status s = check_threshold(threshold, &q->err);
    if (s != TR_OK) return s;
    q->cfg.threshold = threshold;
    return TR_OK;
}

float tr_spiir_triggers_threshold(const tr_spiir_triggers *q)
{
    return q ? q->cfg.threshold : NAN;
}

uint32_t tr_spiir_triggers_window(const tr_spiir_triggers *q)
{
    return q ? q->cfg.window : 0;
}

uint64_t tr_spiir_triggers_position(const tr_spiir_triggers *q)
{
    return q ? q->position : 0;
}

const char *tr_spiir_triggers_last_error(const tr_spiir_triggers *q)
{
    return q ? q->err.message : "spiir triggers: NULL object";
}
