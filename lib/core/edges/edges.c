/*
 * Edge localizer object: configuration, backend choice, IEEE 181 level
 * estimation and stream bookkeeping around the variants (edges_ref.c,
 * edges_cpu.c, cuda/edges/edges_cuda.cu), which all run the same state machine.
 *
 * Paper: V. Khambadkar, L. Barford, F. C. Harris Jr., "Massively Parallel
 * Localization of Pulsed Signal Transitions Using a GPU".
 */
#include <transient/edges.h>

#include "common/core_util.h"
#include "edges/edges_internal.h"
#ifdef TR_HAVE_CUDA
#include "edges/edges_cuda.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct tr_edges {
    tr_edges_config cfg;    /* validated configuration (levels/percentages updated) */
    tr_backend backend;     /* resolved backend */
    tr_variant variant;     /* resolved variant */
    tr_edges_run_fn run;    /* CPU runner, NULL with CUDA */
    void *cuda;             /* tr_cuda_edges context with CUDA */
    tr_edges_lv lv;         /* levels in use */
    int levels_known;       /* lv is valid */
    tr_edges_carry carry;   /* stream state after the last processed sample */
    float *hold;            /* auto: samples held until the first estimate */
    size_t hold_len;        /* samples in hold */
    size_t hold_pos;        /* hold[0..hold_pos) already processed */
    float *ring;            /* auto with re-estimation: the last level_samples */
    size_t ring_fill;       /* valid samples in ring */
    size_t ring_head;       /* next write position in ring */
    uint64_t next_estimate; /* absolute position of the next re-estimate */
    tr_edge_metrics
        *metrics; /* IEEE 181 metrics fed with every processed span, or NULL */
    tr_error err; /* last failure */
};

tr_edges_config tr_edges_config_default(void)
{
    tr_edges_config c;
    memset(&c, 0, sizeof c);
    c.levels_mode = TR_LEVELS_FIXED;
    c.low = 0.1f;
    c.mid = 0.5f;
    c.high = 0.9f;
    c.tolerance_pct = 10.0;
    c.mid_pct = 50.0;
    c.hist_bins = 100;
    c.level_samples = 65536;
    c.level_interval = 0;
    c.backend = TR_BACKEND_AUTO;
    c.device = 0;
    c.variant = TR_VARIANT_FAST;
    c.batch = (size_t)1 << 22;
    c.metrics = 0;
    c.metrics_cfg = tr_edge_metrics_config_default();
    return c;
}

static int finite_f(float v)
{
    return (v - v) == 0.0f;
}

static tr_status check_levels(float low, float mid, float high, tr_error *err)
{
    if (!finite_f(low) || !finite_f(mid) || !finite_f(high) || !(low < mid && mid < high))
        return tr_fail(
            err, TR_ERR_INVALID,
            "edges: levels must be finite with low < mid < high, got %g, %g, %g",
            (double)low, (double)mid, (double)high);
    return TR_OK;
}

static tr_status check_percentages(double tol, double mid, tr_error *err)
{
    if (!(tol > 0.0 && tol < 50.0))
        return tr_fail(err, TR_ERR_INVALID,
                       "edges: tolerance_pct must be in (0, 50), got %g", tol);
    if (!(mid > tol && mid < 100.0 - tol))
        return tr_fail(
            err, TR_ERR_INVALID,
            "edges: mid_pct must lie between the state boundaries (%g, %g), got %g", tol,
            100.0 - tol, mid);
    return TR_OK;
}

static tr_status check_config(const tr_edges_config *c, tr_error *err)
{
    tr_status s;
    if (c->levels_mode == TR_LEVELS_FIXED) {
        if ((s = check_levels(c->low, c->mid, c->high, err)) != TR_OK) return s;
    } else if (c->levels_mode == TR_LEVELS_AUTO) {
        if ((s = check_percentages(c->tolerance_pct, c->mid_pct, err)) != TR_OK) return s;
        if (c->hist_bins < 2 || c->hist_bins > (1u << 24))
            return tr_fail(err, TR_ERR_INVALID,
                           "edges: hist_bins must be in [2, 2^24], got %u", c->hist_bins);
        if (c->level_samples < 2 || c->level_samples > ((size_t)1 << 30))
            return tr_fail(err, TR_ERR_INVALID,
                           "edges: level_samples must be in [2, 2^30], got %zu",
                           c->level_samples);
    } else {
        return tr_fail(err, TR_ERR_INVALID, "edges: unknown levels_mode %d",
                       (int)c->levels_mode);
    }
    return TR_OK;
}

/* State levels of fixed boundaries: l = S1 + t A and h = S2 - t A solved for S1, S2. */
static tr_status metrics_levels_fixed(tr_edges *q)
{
    if (!q->metrics) return TR_OK;
    const double t = q->cfg.tolerance_pct / 100.0;
    const double amp = ((double)q->lv.high - (double)q->lv.low) / (1.0 - 2.0 * t);
    return tr_edge_metrics_set_levels(q->metrics, q->lv.low - t * amp,
                                      q->lv.high + t * amp, q->lv.low, q->lv.high);
}

/* Resolve AUTO and create the CUDA context when the GPU is used. */
static tr_status choose_backend(tr_edges *q, tr_error *err)
{
    const tr_edges_config *c = &q->cfg;
    q->variant = c->variant;
    tr_placement p;
    tr_status placed =
        tr_place("edges", c->backend, c->variant, c->device, c->batch, &p, err);
    if (placed != TR_OK) return placed;
    if (p.try_cuda) {
#ifdef TR_HAVE_CUDA
        tr_cuda_edges *ctx = NULL;
        tr_status s = tr_cuda_edges_create(c->device, c->batch, c->variant, &ctx, err);
        if (s == TR_OK) {
            q->cuda = ctx;
            q->backend = TR_BACKEND_CUDA;
            return TR_OK;
        }
        if (p.need_cuda) return s;
#endif
    }
    /* CPU: the requested AUTO falls back here when no GPU is usable. */
    q->backend = TR_BACKEND_CPU;
    q->run =
        c->variant == TR_VARIANT_REFERENCE ? tr_edges_run_reference : tr_edges_run_cpu;
    tr_clear(err);
    return TR_OK;
}

static void clear_stream(tr_edges *q)
{
    memset(&q->carry, 0, sizeof q->carry);
    q->levels_known = q->cfg.levels_mode == TR_LEVELS_FIXED;
    if (q->levels_known) {
        q->lv.low = q->cfg.low;
        q->lv.mid = q->cfg.mid;
        q->lv.high = q->cfg.high;
    }
    q->hold_len = q->hold_pos = 0;
    q->ring_fill = q->ring_head = 0;
    q->next_estimate = q->cfg.level_interval;
    if (q->metrics) {
        tr_edge_metrics_reset(q->metrics);
        if (q->levels_known) metrics_levels_fixed(q);
    }
}

tr_edges *tr_edges_create(const tr_edges_config *cfg, tr_error *err)
{
    if (!cfg) {
        tr_fail(err, TR_ERR_INVALID, "edges: NULL configuration");
        return NULL;
    }
    if (check_config(cfg, err) != TR_OK) return NULL;
    tr_edges *q = calloc(1, sizeof *q);
    if (!q) {
        tr_fail(err, TR_ERR_NOMEM, "edges: cannot allocate the object");
        return NULL;
    }
    q->cfg = *cfg;
    if (cfg->levels_mode == TR_LEVELS_AUTO) {
        q->hold = malloc(cfg->level_samples * sizeof(float));
        if (cfg->level_interval > 0) q->ring = malloc(cfg->level_samples * sizeof(float));
        if (!q->hold || (cfg->level_interval > 0 && !q->ring)) {
            tr_fail(err, TR_ERR_NOMEM,
                    "edges: cannot allocate %zu samples for level estimation",
                    cfg->level_samples);
            tr_edges_destroy(q);
            return NULL;
        }
    }
    if (cfg->metrics) {
        if (cfg->levels_mode == TR_LEVELS_FIXED &&
            !(cfg->tolerance_pct > 0.0 && cfg->tolerance_pct < 50.0)) {
            check_percentages(cfg->tolerance_pct, cfg->mid_pct, err);
            tr_edges_destroy(q);
            return NULL;
        }
        tr_edge_metrics_config mc = cfg->metrics_cfg; /* the localizer's variant */
        mc.variant =
            cfg->variant == TR_VARIANT_REFERENCE ? TR_VARIANT_REFERENCE : TR_VARIANT_FAST;
        q->metrics = tr_edge_metrics_create(&mc, err);
        if (!q->metrics) {
            tr_edges_destroy(q);
            return NULL;
        }
    }
    if (choose_backend(q, err) != TR_OK) {
        tr_edges_destroy(q);
        return NULL;
    }
    clear_stream(q);
    return q;
}

void tr_edges_destroy(tr_edges *q)
{
    if (!q) return;
#ifdef TR_HAVE_CUDA
    if (q->cuda) tr_cuda_edges_destroy((tr_cuda_edges *)q->cuda);
#endif
    tr_edge_metrics_destroy(q->metrics);
    free(q->hold);
    free(q->ring);
    free(q);
}

tr_status tr_edges_reset(tr_edges *q)
{
    if (!q) return TR_ERR_INVALID;
    clear_stream(q);
    tr_clear(&q->err);
    return TR_OK;
}

/* Run the chosen variant on host samples. */
static tr_status run_variant(tr_edges *q, const float *x, size_t n, tr_edge *out,
                             size_t cap, size_t *consumed, size_t *nout)
{
#ifdef TR_HAVE_CUDA
    if (q->cuda)
        return tr_cuda_edges_run_host((tr_cuda_edges *)q->cuda, q->lv, &q->carry, x, n,
                                      out, cap, consumed, nout, &q->err);
#endif
    *nout = q->run(q->lv, &q->carry, x, n, out, cap, consumed);
    return TR_OK;
}

static void ring_push(tr_edges *q, const float *x, size_t n)
{
    const size_t len = q->cfg.level_samples;
    if (n >= len) { /* only the newest len samples matter */
        memcpy(q->ring, x + (n - len), len * sizeof(float));
        q->ring_head = 0;
        q->ring_fill = len;
        return;
    }
    size_t first = len - q->ring_head < n ? len - q->ring_head : n;
    memcpy(q->ring + q->ring_head, x, first * sizeof(float));
    memcpy(q->ring, x + first, (n - first) * sizeof(float));
    q->ring_head = (q->ring_head + n) % len;
    q->ring_fill = q->ring_fill + n < len ? q->ring_fill + n : len;
}

/* Estimate levels from x; keeps the old levels (returns 0) when it cannot. */
static int estimate(tr_edges *q, const float *x, size_t n)
{
    tr_statelevels sl;
    if (tr_statelevels_estimate(x, n, q->cfg.hist_bins, q->cfg.tolerance_pct,
                                q->cfg.mid_pct, &sl, NULL) != TR_OK)
        return 0;
    q->lv.low = sl.low;
    q->lv.mid = sl.mid;
    q->lv.high = sl.high;
    q->levels_known = 1;
    if (q->metrics)
        tr_edge_metrics_set_levels(q->metrics, sl.low_level, sl.high_level, sl.low,
                                   sl.high);
    return 1;
}

/*
 * Process a span with levels known, splitting it where periodic re-estimation
 * is due so that the result does not depend on the chunking.
 */
static tr_status run_span(tr_edges *q, const float *x, size_t n, tr_edge *out, size_t cap,
                          size_t *used, size_t *nout)
{
    const int reestimate = q->ring != NULL;
    *used = *nout = 0;
    while (*used < n) {
        size_t seg = n - *used;
        if (reestimate) {
            uint64_t to_next = q->next_estimate - (uint64_t)q->carry.pos;
            if (to_next < seg) seg = (size_t)to_next;
        }
        size_t c = 0, k = 0;
        tr_status s = run_variant(q, x + *used, seg, out + *nout, cap - *nout, &c, &k);
        if (s != TR_OK) return s;
        if (q->metrics &&
            tr_edge_metrics_feed(q->metrics, x + *used, c, out + *nout, k) != TR_OK)
            return tr_fail(&q->err, TR_ERR_STATE, "%s",
                           tr_edge_metrics_last_error(q->metrics));
        if (reestimate) ring_push(q, x + *used, c);
        *used += c;
        *nout += k;
        if (c < seg) break; /* output full */
        if (reestimate && (uint64_t)q->carry.pos == q->next_estimate) {
            /* A histogram does not depend on order: the ring needs no unrolling. */
            estimate(q, q->ring, q->ring_fill);
            q->next_estimate += q->cfg.level_interval;
        }
    }
    return TR_OK;
}

/* Skip held samples that cannot be estimated: they are constant or non-finite,
 * so they hold no crossing; their position and last value are kept. */
static void drop_held(tr_edges *q, size_t count)
{
    if (q->metrics) tr_edge_metrics_feed(q->metrics, q->hold, count, NULL, 0);
    q->carry.pos += (int64_t)count;
    q->carry.x_prev = q->hold[count - 1];
    q->carry.has_prev = 1;
    memmove(q->hold, q->hold + count, (q->hold_len - count) * sizeof(float));
    q->hold_len -= count;
}

/* Process held samples once the levels are known. */
static tr_status drain_held(tr_edges *q, tr_edge *out, size_t cap, size_t *nout)
{
    size_t used = 0;
    *nout = 0;
    if (!q->levels_known || q->hold_pos >= q->hold_len) return TR_OK;
    tr_status s = run_span(q, q->hold + q->hold_pos, q->hold_len - q->hold_pos, out, cap,
                           &used, nout);
    q->hold_pos += used;
    if (q->hold_pos == q->hold_len) q->hold_len = q->hold_pos = 0;
    return s;
}

static tr_status check_io(tr_edges *q, const float *x, size_t n, const tr_edge *out,
                          size_t cap, size_t *n_consumed, size_t *n_out)
{
    if (!q) return TR_ERR_INVALID;
    if (!n_consumed || !n_out)
        return tr_fail(&q->err, TR_ERR_INVALID, "edges: NULL n_consumed or n_out");
    *n_consumed = *n_out = 0;
    if (!x && n > 0)
        return tr_fail(&q->err, TR_ERR_INVALID, "edges: NULL samples with n > 0");
    if (!out && cap > 0)
        return tr_fail(&q->err, TR_ERR_INVALID, "edges: NULL output with cap > 0");
    return TR_OK;
}

tr_status tr_edges_process(tr_edges *q, const float *x, size_t n, tr_edge *out,
                           size_t out_cap, size_t *n_consumed, size_t *n_out)
{
    tr_status s = check_io(q, x, n, out, out_cap, n_consumed, n_out);
    if (s != TR_OK) return s;
    size_t taken = 0, k = 0;
    const size_t want = q->cfg.level_samples;
    while (!q->levels_known && taken < n) {
        size_t take = want - q->hold_len < n - taken ? want - q->hold_len : n - taken;
        memcpy(q->hold + q->hold_len, x + taken, take * sizeof(float));
        q->hold_len += take;
        taken += take;
        if (q->hold_len == want && !estimate(q, q->hold, q->hold_len))
            drop_held(q, want / 2);
    }
    *n_consumed = taken;
    if (!q->levels_known) return TR_OK;
    if ((s = drain_held(q, out, out_cap, &k)) != TR_OK) return s;
    *n_out = k;
    if (q->hold_len > 0) return TR_OK; /* output full before the held samples were done */
    size_t used = 0;
    s = run_span(q, x + taken, n - taken, out + k, out_cap - k, &used, &k);
    *n_consumed += used;
    *n_out += k;
    return s;
}

tr_status tr_edges_flush(tr_edges *q, tr_edge *out, size_t out_cap, size_t *n_out)
{
    if (!q) return TR_ERR_INVALID;
    if (!n_out) return tr_fail(&q->err, TR_ERR_INVALID, "edges: NULL n_out");
    *n_out = 0;
    if (!out && out_cap > 0)
        return tr_fail(&q->err, TR_ERR_INVALID, "edges: NULL output with cap > 0");
    if (!q->levels_known && q->hold_len > 0 && !estimate(q, q->hold, q->hold_len))
        drop_held(q, q->hold_len);
    tr_status s = drain_held(q, out, out_cap, n_out);
    if (s == TR_OK && q->metrics && q->hold_len == 0) tr_edge_metrics_finish(q->metrics);
    return s;
}

tr_status tr_edges_metrics_read(tr_edges *q, tr_edge_metric *out, size_t cap,
                                size_t *n_out)
{
    if (!q) return TR_ERR_INVALID;
    if (!q->metrics)
        return tr_fail(&q->err, TR_ERR_STATE,
                       "edges: metrics were not enabled (cfg.metrics)");
    if (tr_edge_metrics_read(q->metrics, out, cap, n_out) != TR_OK)
        return tr_fail(&q->err, TR_ERR_INVALID, "%s",
                       tr_edge_metrics_last_error(q->metrics));
    return TR_OK;
}

tr_status tr_edges_process_device(tr_edges *q, const float *d_x, size_t n, tr_edge *d_out,
                                  size_t out_cap, size_t *n_consumed, size_t *n_out)
{
    tr_status s = check_io(q, d_x, n, d_out, out_cap, n_consumed, n_out);
    if (s != TR_OK) return s;
    if (!q->cuda)
        return tr_fail(
            &q->err, TR_ERR_UNSUPPORTED,
            "edges: device samples need the CUDA backend (this object runs on %s)",
            tr_backend_name(q->backend));
    if (q->metrics)
        return tr_fail(
            &q->err, TR_ERR_UNSUPPORTED,
            "edges: metrics need the samples on the host (use tr_edges_process)");
    if (!q->levels_known || q->hold_len > 0 || q->ring)
        return tr_fail(&q->err, TR_ERR_UNSUPPORTED,
                       "edges: device samples need fixed or already estimated levels "
                       "without periodic re-estimation");
#ifdef TR_HAVE_CUDA
    return tr_cuda_edges_run_device((tr_cuda_edges *)q->cuda, q->lv, &q->carry, d_x, n,
                                    d_out, out_cap, n_consumed, n_out, &q->err);
#else
    return TR_ERR_UNSUPPORTED;
#endif
}

tr_status tr_edges_set_levels(tr_edges *q, float low, float mid, float high)
{
    if (!q) return TR_ERR_INVALID;
    tr_status s = check_levels(low, mid, high, &q->err);
    if (s != TR_OK) return s;
    q->cfg.low = q->lv.low = low;
    q->cfg.mid = q->lv.mid = mid;
    q->cfg.high = q->lv.high = high;
    q->levels_known = 1;
    return metrics_levels_fixed(q);
}

tr_status tr_edges_set_percentages(tr_edges *q, double tolerance_pct, double mid_pct)
{
    if (!q) return TR_ERR_INVALID;
    tr_status s = check_percentages(tolerance_pct, mid_pct, &q->err);
    if (s != TR_OK) return s;
    q->cfg.tolerance_pct = tolerance_pct;
    q->cfg.mid_pct = mid_pct;
    return TR_OK;
}

tr_status tr_edges_get_levels(const tr_edges *q, float *low, float *mid, float *high)
{
    if (!q || !low || !mid || !high) return TR_ERR_INVALID;
    if (!q->levels_known) return TR_ERR_STATE;
    *low = q->lv.low;
    *mid = q->lv.mid;
    *high = q->lv.high;
    return TR_OK;
}

uint64_t tr_edges_position(const tr_edges *q)
{
    /* Held samples are not processed yet. */
    return q ? (uint64_t)q->carry.pos : 0;
}

tr_backend tr_edges_backend(const tr_edges *q)
{
    return q ? q->backend : TR_BACKEND_CPU;
}
tr_variant tr_edges_variant(const tr_edges *q)
{
    return q ? q->variant : TR_VARIANT_FAST;
}
const char *tr_edges_last_error(const tr_edges *q)
{
    return q ? q->err.message : "";
}
