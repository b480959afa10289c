/*
 * Edge metrics object: keeps the samples a transition's IEEE Std 181 metrics
 * need (window samples each side of it, bounded by its neighbours), finishes
 * each transition at a sample position that does not depend on the chunking,
 * and adds the pulse width, period and duty cycle once the next transitions
 * are known. The definitions are in edge_metrics_ref.c.
 *
 * Standard: IEEE Std 181-2003; transitions from Khambadkar, Barford, Harris,
 * "Massively Parallel Localization of Pulsed Signal Transitions Using a GPU".
 */
#include <transient/edge_metrics.h>

#include "common/core_util.h"
#include "edges/edge_metrics_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct tr_edge_metrics {
    tr_edge_metrics_config cfg; /* validated configuration */
    int fixed_levels;           /* cfg gives the state levels */
    tr_metric_levels lv;        /* levels in use */
    int levels_set;             /* lv is valid */
    float *buf;                 /* samples [buf_start, pos) */
    size_t buf_cap;             /* capacity of buf in samples */
    int64_t buf_start;          /* absolute index of buf[0] */
    int64_t pos;                /* absolute index of the next sample */
    tr_edge_metric *rec;        /* records [rec_head, rec_len) not read yet */
    size_t rec_len;             /* records in rec */
    size_t rec_head;            /* first record not read */
    size_t rec_cap;             /* capacity of rec */
    size_t released;            /* records [rec_head, released) are finished */
    int pending;                /* rec[rec_len - 1] waits for its waveform metrics */
    double prev_time;           /* mid instant of the transition before the pending one */
    int64_t prev_sample;        /* its confirming sample, or -1 for none */
    tr_error err;               /* last failure */
};

tr_edge_metrics_config tr_edge_metrics_config_default(void)
{
    tr_edge_metrics_config c;
    memset(&c, 0, sizeof c);
    c.low_level = NAN;
    c.high_level = NAN;
    c.ref_low_pct = 10.0;
    c.ref_high_pct = 90.0;
    c.ref2_low_pct = 20.0;
    c.ref2_high_pct = 80.0;
    c.region_factor = 3.0;
    c.settle_pct = 2.0;
    c.window = 65536;
    c.variant = TR_VARIANT_FAST;
    return c;
}

static tr_status check_pair(double lo, double hi, const char *what, tr_error *err)
{
    if (!(lo > 0.0 && lo < hi && hi < 100.0))
        return tr_fail(err, TR_ERR_INVALID,
                       "edge metrics: %s reference levels must satisfy 0 < low < high < "
                       "100 (%%), got %g, %g",
                       what, lo, hi);
    return TR_OK;
}

static tr_status check_config(const tr_edge_metrics_config *c, tr_error *err)
{
    tr_status s;
    const int lo_nan = c->low_level != c->low_level,
              hi_nan = c->high_level != c->high_level;
    if (lo_nan != hi_nan ||
        (!lo_nan && !(isfinite(c->low_level) && isfinite(c->high_level) &&
                      c->low_level < c->high_level)))
        return tr_fail(err, TR_ERR_INVALID,
                       "edge metrics: low_level and high_level must both be NaN (from "
                       "the localizer's levels) or finite with low < high, got %g, %g",
                       c->low_level, c->high_level);
    if ((s = check_pair(c->ref_low_pct, c->ref_high_pct, "first", err)) != TR_OK)
        return s;
    if ((s = check_pair(c->ref2_low_pct, c->ref2_high_pct, "second", err)) != TR_OK)
        return s;
    if (!(c->region_factor >= 0.0 && c->region_factor <= 1000.0))
        return tr_fail(err, TR_ERR_INVALID,
                       "edge metrics: region_factor must be in [0, 1000], got %g",
                       c->region_factor);
    if (!(c->settle_pct > 0.0 && c->settle_pct < 50.0))
        return tr_fail(err, TR_ERR_INVALID,
                       "edge metrics: settle_pct must be in (0, 50), got %g",
                       c->settle_pct);
    if (c->variant != TR_VARIANT_FAST && c->variant != TR_VARIANT_REFERENCE)
        return tr_fail(err, TR_ERR_INVALID,
                       "edge metrics: variant must be FAST or REFERENCE, got %d",
                       (int)c->variant);
    if (c->window < 2 || c->window > ((size_t)1 << 28))
        return tr_fail(err, TR_ERR_INVALID,
                       "edge metrics: window must be in [2, 2^28] samples, got %zu",
                       c->window);
    return TR_OK;
}

static void clear_stream(tr_edge_metrics *m)
{
    m->buf_start = m->pos = 0;
    m->rec_len = m->rec_head = m->released = 0;
    m->pending = 0;
    m->prev_time = NAN;
    m->prev_sample = -1;
}

tr_edge_metrics *tr_edge_metrics_create(const tr_edge_metrics_config *cfg, tr_error *err)
{
    if (!cfg) {
        tr_fail(err, TR_ERR_INVALID, "edge metrics: NULL configuration");
        return NULL;
    }
    if (check_config(cfg, err) != TR_OK) return NULL;
    tr_edge_metrics *m = calloc(1, sizeof *m);
    if (!m) {
        tr_fail(err, TR_ERR_NOMEM, "edge metrics: cannot allocate the object");
        return NULL;
    }
    m->cfg = *cfg;
    m->fixed_levels = cfg->low_level == cfg->low_level;
    clear_stream(m);
    tr_clear(err);
    return m;
}

void tr_edge_metrics_destroy(tr_edge_metrics *m)
{
    if (!m) return;
    free(m->buf);
    free(m->rec);
    free(m);
}

tr_status tr_edge_metrics_reset(tr_edge_metrics *m)
{
    if (!m) return TR_ERR_INVALID;
    clear_stream(m);
    tr_clear(&m->err);
    return TR_OK;
}

tr_status tr_edge_metrics_set_levels(tr_edge_metrics *m, double low_level,
                                     double high_level, float low, float high)
{
    if (!m) return TR_ERR_INVALID;
    if (m->fixed_levels) {
        low_level = m->cfg.low_level;
        high_level = m->cfg.high_level;
    }
    if (!(isfinite(low_level) && isfinite(high_level) && low_level < high_level) ||
        !(isfinite(low) && isfinite(high) && low < high))
        return tr_fail(&m->err, TR_ERR_INVALID,
                       "edge metrics: levels must be finite with low_level < high_level "
                       "and low < high, got %g, %g, %g, %g",
                       low_level, high_level, (double)low, (double)high);
    m->lv.s1 = low_level;
    m->lv.s2 = high_level;
    m->lv.low = low;
    m->lv.high = high;
    m->levels_set = 1;
    return TR_OK;
}

/* Finish the pending transition's waveform metrics with samples up to hi. */
static void finish_pending(tr_edge_metrics *m, int64_t hi, int hi_window, int hi_record)
{
    tr_edge_metric *r = &m->rec[m->rec_len - 1];
    const int64_t win = (int64_t)m->cfg.window;
    tr_metric_span sp;
    sp.x = m->buf;
    sp.origin = m->buf_start;
    /* The first sample after the previous transition's mid crossing. */
    int64_t lo_nb = 0;
    if (m->prev_sample >= 0)
        lo_nb = m->prev_time == m->prev_time ? (int64_t)floor(m->prev_time) + 1
                                             : m->prev_sample;
    sp.lo = r->sample - win > lo_nb ? r->sample - win : lo_nb;
    sp.lo_window = r->sample - win > lo_nb;
    sp.hi = hi;
    sp.hi_window = hi_window;
    sp.hi_record = hi_record;
    tr_edge_metric_compute(&m->cfg, m->lv, &sp,
                           m->cfg.variant == TR_VARIANT_REFERENCE
                               ? tr_edge_metric_last_outside_ref
                               : tr_edge_metric_last_outside_cpu,
                           r);
    m->pending = 0;
}

/* The first sample the buffer must keep: the pending transition's window and
 * that of any transition still to come (confirmed at pos or later). */
static int64_t keep_from(const tr_edge_metrics *m)
{
    int64_t s = m->pos;
    if (m->pending && m->rec[m->rec_len - 1].sample < s)
        s = m->rec[m->rec_len - 1].sample;
    s -= (int64_t)m->cfg.window;
    return s > m->buf_start ? s : m->buf_start;
}

static tr_status append_samples(tr_edge_metrics *m, const float *x, size_t n)
{
    /* Drop what no transition can use any more. */
    const int64_t keep = keep_from(m);
    size_t len = (size_t)(m->pos - m->buf_start);
    if (keep > m->buf_start) {
        const size_t drop = (size_t)(keep - m->buf_start);
        memmove(m->buf, m->buf + drop, (len - drop) * sizeof(float));
        m->buf_start = keep;
        len -= drop;
    }
    if (len + n > m->buf_cap) {
        size_t cap = m->buf_cap ? m->buf_cap : 4096;
        while (cap < len + n)
            cap *= 2;
        float *b = realloc(m->buf, cap * sizeof(float));
        if (!b)
            return tr_fail(&m->err, TR_ERR_NOMEM, "edge metrics: cannot hold %zu samples",
                           len + n);
        m->buf = b;
        m->buf_cap = cap;
    }
    memcpy(m->buf + len, x, n * sizeof(float));
    m->pos += (int64_t)n;
    return TR_OK;
}

static tr_status push_record(tr_edge_metrics *m, const tr_edge *e)
{
    if (m->rec_head > 0 && m->rec_head * 2 >= m->rec_len) { /* compact */
        memmove(m->rec, m->rec + m->rec_head,
                (m->rec_len - m->rec_head) * sizeof *m->rec);
        m->rec_len -= m->rec_head;
        m->released -= m->rec_head;
        m->rec_head = 0;
    }
    if (m->rec_len == m->rec_cap) {
        size_t cap = m->rec_cap ? 2 * m->rec_cap : 64;
        tr_edge_metric *r = realloc(m->rec, cap * sizeof *r);
        if (!r)
            return tr_fail(&m->err, TR_ERR_NOMEM, "edge metrics: cannot queue records");
        m->rec = r;
        m->rec_cap = cap;
    }
    tr_edge_metric *r = &m->rec[m->rec_len++];
    memset(r, 0, sizeof *r);
    r->time = e->time;
    r->sample = e->sample;
    r->polarity = e->polarity > 0 ? 1 : -1;
    r->width = r->period = r->duty = NAN;
    /* The new transition closes the previous pulse and the one before's period. */
    if (m->rec_len >= 2)
        m->rec[m->rec_len - 2].width = e->time - m->rec[m->rec_len - 2].time;
    if (m->rec_len >= 3) {
        tr_edge_metric *q = &m->rec[m->rec_len - 3];
        q->period = e->time - q->time;
        q->duty = q->width / q->period;
        if (m->released < m->rec_len - 2) m->released = m->rec_len - 2;
    }
    m->pending = 1;
    return TR_OK;
}

tr_status tr_edge_metrics_feed(tr_edge_metrics *m, const float *x, size_t n,
                               const struct tr_edge *edges, size_t k)
{
    if (!m) return TR_ERR_INVALID;
    if ((!x && n > 0) || (!edges && k > 0))
        return tr_fail(&m->err, TR_ERR_INVALID, "edge metrics: NULL samples or edges");
    if (k > 0 && !m->levels_set)
        return tr_fail(&m->err, TR_ERR_STATE,
                       "edge metrics: transitions given before the levels were set");
    tr_status s = append_samples(m, x, n);
    if (s != TR_OK) return s;
    const int64_t win = (int64_t)m->cfg.window;
    int64_t last = m->rec_len > 0 ? m->rec[m->rec_len - 1].sample : -1;
    for (size_t i = 0; i < k; i++) {
        const tr_edge *e = &edges[i];
        if (e->sample <= last || e->sample >= m->pos || e->sample < m->pos - (int64_t)n)
            return tr_fail(
                &m->err, TR_ERR_INVALID,
                "edge metrics: transition at sample %lld is not in the samples "
                "given with it or not after the previous one",
                (long long)e->sample);
        if (m->pending) {
            const tr_edge_metric *p = &m->rec[m->rec_len - 1];
            if (e->sample <= p->sample + win) {
                /* The next transition ends this one's interval before the window. */
                int64_t hi = e->time == e->time ? (int64_t)floor(e->time) : e->sample - 1;
                finish_pending(m, hi, 0, 0);
            } else {
                finish_pending(m, p->sample + win, 1, 0);
            }
            m->prev_time = p->time;
            m->prev_sample = p->sample;
        }
        if ((s = push_record(m, e)) != TR_OK) return s;
        last = e->sample;
    }
    if (m->pending && m->rec[m->rec_len - 1].sample + win <= m->pos - 1) {
        finish_pending(m, m->rec[m->rec_len - 1].sample + win, 1, 0);
        m->prev_time = m->rec[m->rec_len - 1].time;
        m->prev_sample = m->rec[m->rec_len - 1].sample;
    }
    return TR_OK;
}

tr_status tr_edge_metrics_finish(tr_edge_metrics *m)
{
    if (!m) return TR_ERR_INVALID;
    if (m->pending) {
        finish_pending(m, m->pos - 1, 0, 1);
        m->prev_time = m->rec[m->rec_len - 1].time;
        m->prev_sample = m->rec[m->rec_len - 1].sample;
    }
    m->released = m->rec_len;
    return TR_OK;
}

tr_status tr_edge_metrics_read(tr_edge_metrics *m, tr_edge_metric *out, size_t cap,
                               size_t *n_out)
{
    if (!m) return TR_ERR_INVALID;
    if (!n_out || (!out && cap > 0))
        return tr_fail(&m->err, TR_ERR_INVALID, "edge metrics: NULL output");
    size_t avail = m->released - m->rec_head;
    /* A record still waiting for its waveform metrics is never handed out. */
    if (m->pending && m->released == m->rec_len) avail--;
    const size_t k = avail < cap ? avail : cap;
    if (k > 0) memcpy(out, m->rec + m->rec_head, k * sizeof *out);
    m->rec_head += k;
    *n_out = k;
    return TR_OK;
}

const char *tr_edge_metrics_last_error(const tr_edge_metrics *m)
{
    return m ? m->err.message : "";
}
