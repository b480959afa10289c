/*
 * Kalman-bank detector object: configuration, backend choice, run-time
 * settings, decisions and burst events around the variants (kalman_ref.c,
 * kalman_cpu.c, cuda/kalman/kalman_cuda.cu).
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector" (eq. 15 and section
 * III-C.6: the decision compares the LLR with a threshold).
 */
#include "common/core_util.h"
#include "kalman/kalman_internal.h"
#ifdef TR_HAVE_CUDA
#include "kalman/kalman_cuda.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 4096 /* samples per variant call (scratch size) */

struct tr_kalman {
    tr_kalman_config cfg;   /* validated configuration (threshold, Ns, alpha current) */
    tr_kalman_model *model; /* own copy */
    tr_kalman_params par;   /* run-time parameters of the variants */
    tr_backend backend;     /* resolved */
    tr_variant variant;     /* resolved */
    tr_kalman_ref *ref;     /* CPU reference, or NULL */
    tr_kalman_cpu *fast;    /* CPU fast, or NULL */
    void *cuda;             /* tr_cuda_kalman with CUDA */
    double *llr;            /* CHUNK scratch */
    uint32_t *kmax;         /* CHUNK scratch */
    uint64_t position;      /* samples processed */
    uint64_t nonfinite;     /* non-finite samples treated as missing */
    /* burst state */
    int in_burst;
    tr_kalman_event cur; /* the open burst */
    /* event queue (ring) */
    tr_kalman_event *ev;
    size_t ev_head, ev_count;
    uint64_t ev_dropped;
    tr_error err;
};

tr_kalman_config tr_kalman_config_default(void)
{
    tr_kalman_config c;
    memset(&c, 0, sizeof c);
    c.Ns = 1;
    c.alpha = 1e-9;
    c.threshold = 0.0;
    c.backend = TR_BACKEND_AUTO;
    c.device = 0;
    c.variant = TR_VARIANT_FAST;
    c.batch = 65536;
    c.max_events = 4096;
    return c;
}

static tr_status check_ns(uint32_t Ns, uint32_t M, tr_error *err)
{
    if (Ns < 1 || Ns >= M)
        return tr_fail(err, TR_ERR_INVALID,
                       "kalman: N_s must satisfy 1 <= N_s < M = %u, got %u", M, Ns);
    return TR_OK;
}

static tr_status check_alpha(double a, tr_error *err)
{
    if (!(a > 0.0 && a < 1.0))
        return tr_fail(err, TR_ERR_INVALID,
                       "kalman: alpha must satisfy 0 < alpha < 1, got %g", a);
    return TR_OK;
}

static tr_status check_threshold(double t, tr_error *err)
{
    if (isnan(t))
        return tr_fail(err, TR_ERR_INVALID, "kalman: threshold must not be NaN");
    return TR_OK;
}

static void set_params(tr_kalman *q)
{
    q->par.Ns = q->cfg.Ns;
    q->par.log_alpha = log(q->cfg.alpha);
    q->par.log1m_alpha = log1p(-q->cfg.alpha);
}

static tr_status choose_backend(tr_kalman *q, tr_error *err)
{
    const tr_kalman_config *c = &q->cfg;
    q->variant = c->variant;
    tr_placement p;
    tr_status placed =
        tr_place("kalman", c->backend, c->variant, c->device, c->batch, &p, err);
    if (placed != TR_OK) return placed;
    if (p.try_cuda) {
#ifdef TR_HAVE_CUDA
        tr_cuda_kalman *ctx = NULL;
        tr_status s = tr_cuda_kalman_create(c->device, q->model, &q->par, c->variant,
                                            c->batch, &ctx, err);
        if (s == TR_OK) {
            q->cuda = ctx;
            q->backend = TR_BACKEND_CUDA;
            tr_clear(err);
            return TR_OK;
        }
        if (p.need_cuda) return s;
#endif
    }
    q->backend = TR_BACKEND_CPU;
    if (c->variant == TR_VARIANT_REFERENCE)
        q->ref = tr_kalman_ref_create(q->model);
    else
        q->fast = tr_kalman_cpu_create(q->model);
    if (!q->ref && !q->fast)
        return tr_fail(err, TR_ERR_NOMEM,
                       "kalman: cannot allocate the registers of M = %u", q->model->M);
    tr_clear(err);
    return TR_OK;
}

tr_kalman *tr_kalman_create(const tr_kalman_config *cfg, const tr_kalman_model *model,
                            tr_error *err)
{
    if (!cfg || !model) {
        tr_fail(err, TR_ERR_INVALID, "kalman: NULL %s", !cfg ? "configuration" : "model");
        return NULL;
    }
    if (check_ns(cfg->Ns, model->M, err) != TR_OK ||
        check_alpha(cfg->alpha, err) != TR_OK ||
        check_threshold(cfg->threshold, err) != TR_OK)
        return NULL;
    if (cfg->max_events < 1 || cfg->max_events > ((size_t)1 << 24)) {
        tr_fail(err, TR_ERR_INVALID, "kalman: max_events must be in [1, 2^24], got %zu",
                cfg->max_events);
        return NULL;
    }
    tr_kalman *q = calloc(1, sizeof *q);
    if (!q) {
        tr_fail(err, TR_ERR_NOMEM, "kalman: cannot allocate the object");
        return NULL;
    }
    q->cfg = *cfg;
    q->model = tr_kalman_model_copy(model, err);
    q->llr = malloc(CHUNK * sizeof(double));
    q->kmax = malloc(CHUNK * sizeof(uint32_t));
    q->ev = malloc(cfg->max_events * sizeof(tr_kalman_event));
    if (!q->model || !q->llr || !q->kmax || !q->ev) {
        tr_kalman_destroy(q);
        tr_fail(err, TR_ERR_NOMEM, "kalman: cannot allocate the object");
        return NULL;
    }
    set_params(q);
    if (choose_backend(q, err) != TR_OK) {
        tr_kalman_destroy(q);
        return NULL;
    }
    return q;
}

void tr_kalman_destroy(tr_kalman *q)
{
    if (!q) return;
#ifdef TR_HAVE_CUDA
    if (q->cuda) tr_cuda_kalman_destroy((tr_cuda_kalman *)q->cuda);
#endif
    tr_kalman_ref_destroy(q->ref);
    tr_kalman_cpu_destroy(q->fast);
    tr_kalman_model_destroy(q->model);
    free(q->llr);
    free(q->kmax);
    free(q->ev);
    free(q);
}

tr_status tr_kalman_reset(tr_kalman *q)
{
    if (!q) return TR_ERR_INVALID;
    q->position = 0;
    q->nonfinite = 0;
    q->in_burst = 0;
    q->ev_head = q->ev_count = 0;
    q->ev_dropped = 0;
#ifdef TR_HAVE_CUDA
    if (q->cuda) return tr_cuda_kalman_reset((tr_cuda_kalman *)q->cuda, &q->err);
#endif
    if (q->ref) tr_kalman_ref_reset(q->ref);
    if (q->fast) tr_kalman_cpu_reset(q->fast);
    tr_clear(&q->err);
    return TR_OK;
}

static void push_event(tr_kalman *q, const tr_kalman_event *e)
{
    const size_t cap = q->cfg.max_events;
    if (q->ev_count == cap) { /* drop the oldest */
        q->ev_head = (q->ev_head + 1) % cap;
        q->ev_count--;
        q->ev_dropped++;
    }
    q->ev[(q->ev_head + q->ev_count) % cap] = *e;
    q->ev_count++;
}

static uint64_t onset_of(uint64_t pos, uint32_t k)
{
    return (uint64_t)(k - 1) > pos ? 0 : pos - (k - 1);
}

/* Decisions and events of n samples whose LLR is in q->llr. */
static void decide(tr_kalman *q, size_t n, float *llr_f, double *llr_d, uint8_t *dec)
{
    const double thr = q->cfg.threshold;
    for (size_t i = 0; i < n; i++) {
        const double L = q->llr[i];
        const uint64_t pos = q->position + i;
        const int d = L > thr;
        if (llr_f) llr_f[i] = (float)L;
        if (llr_d) llr_d[i] = L;
        if (dec) dec[i] = (uint8_t)d;
        if (d && !q->in_burst) {
            q->in_burst = 1;
            memset(&q->cur, 0, sizeof q->cur);
            q->cur.type = TR_KALMAN_EVENT_START;
            q->cur.start = pos;
            q->cur.peak = pos;
            q->cur.peak_llr = L;
            q->cur.onset = onset_of(pos, q->kmax[i]);
            push_event(q, &q->cur);
        } else if (d && L > q->cur.peak_llr) {
            q->cur.peak = pos;
            q->cur.peak_llr = L;
            q->cur.onset = onset_of(pos, q->kmax[i]);
        } else if (!d && q->in_burst) {
            q->in_burst = 0;
            q->cur.type = TR_KALMAN_EVENT_END;
            q->cur.end = pos;
            push_event(q, &q->cur);
        }
    }
}

static tr_status process_any(tr_kalman *q, const float *x, size_t n, float *llr_f,
                             double *llr_d, uint8_t *dec)
{
    if (!q) return TR_ERR_INVALID;
    if (n > 0 && !x)
        return tr_fail(&q->err, TR_ERR_INVALID, "kalman: NULL samples with n > 0");
    size_t done = 0;
    while (done < n) {
        const size_t m = n - done < CHUNK ? n - done : CHUNK;
        const double thr = q->cfg.threshold;
        for (size_t i = 0; i < m; i++)
            q->kmax[i] = 1;
#ifdef TR_HAVE_CUDA
        if (q->cuda) {
            tr_status s =
                tr_cuda_kalman_run_host((tr_cuda_kalman *)q->cuda, x + done, m, q->llr,
                                        q->kmax, thr, &q->nonfinite, &q->err);
            if (s != TR_OK) return s;
        } else
#endif
            if (q->ref)
            q->nonfinite +=
                tr_kalman_ref_run(q->ref, &q->par, x + done, m, q->llr, q->kmax, thr);
        else
            q->nonfinite +=
                tr_kalman_cpu_run(q->fast, &q->par, x + done, m, q->llr, q->kmax, thr);
        decide(q, m, llr_f ? llr_f + done : NULL, llr_d ? llr_d + done : NULL,
               dec ? dec + done : NULL);
        q->position += m;
        done += m;
    }
    return TR_OK;
}

tr_status tr_kalman_process(tr_kalman *q, const float *x, size_t n, float *llr,
                            uint8_t *decision)
{
    return process_any(q, x, n, llr, NULL, decision);
}

tr_status tr_kalman_process_f64(tr_kalman *q, const float *x, size_t n, double *llr,
                                uint8_t *decision)
{
    return process_any(q, x, n, NULL, llr, decision);
}

tr_status tr_kalman_process_device(tr_kalman *q, const float *d_x, size_t n, float *d_llr,
                                   uint8_t *d_decision)
{
    if (!q) return TR_ERR_INVALID;
#ifdef TR_HAVE_CUDA
    if (q->cuda) {
        if (n == 0) return TR_OK;
        if (!d_x)
            return tr_fail(&q->err, TR_ERR_INVALID, "kalman: NULL samples with n > 0");
        tr_status s = tr_cuda_kalman_run_device((tr_cuda_kalman *)q->cuda, d_x, n, d_llr,
                                                d_decision, q->cfg.threshold, &q->err);
        if (s == TR_OK) q->position += n;
        return s;
    }
#else
    (void)d_x;
    (void)n;
    (void)d_llr;
    (void)d_decision;
#endif
    return tr_fail(
        &q->err, TR_ERR_UNSUPPORTED,
        "kalman: process_device needs the CUDA backend (this object runs on %s)",
        tr_backend_name(q->backend));
}

size_t tr_kalman_events(tr_kalman *q, tr_kalman_event *ev, size_t max)
{
    if (!q || !ev) return 0;
    size_t k = 0;
    while (k < max && q->ev_count > 0) {
        ev[k++] = q->ev[q->ev_head];
        q->ev_head = (q->ev_head + 1) % q->cfg.max_events;
        q->ev_count--;
    }
    return k;
}

size_t tr_kalman_events_pending(const tr_kalman *q)
{
    return q ? q->ev_count : 0;
}
uint64_t tr_kalman_events_dropped(const tr_kalman *q)
{
    return q ? q->ev_dropped : 0;
}

static tr_status push_params(tr_kalman *q)
{
    set_params(q);
#ifdef TR_HAVE_CUDA
    if (q->cuda)
        return tr_cuda_kalman_set_params((tr_cuda_kalman *)q->cuda, &q->par, &q->err);
#endif
    return TR_OK;
}

tr_status tr_kalman_set_threshold(tr_kalman *q, double threshold)
{
    if (!q) return TR_ERR_INVALID;
    tr_status s = check_threshold(threshold, &q->err);
    if (s != TR_OK) return s;
    q->cfg.threshold = threshold;
    return TR_OK;
}

tr_status tr_kalman_set_ns(tr_kalman *q, uint32_t Ns)
{
    if (!q) return TR_ERR_INVALID;
    tr_status s = check_ns(Ns, q->model->M, &q->err);
    if (s != TR_OK) return s;
    q->cfg.Ns = Ns;
    return push_params(q);
}

tr_status tr_kalman_set_alpha(tr_kalman *q, double alpha)
{
    if (!q) return TR_ERR_INVALID;
    tr_status s = check_alpha(alpha, &q->err);
    if (s != TR_OK) return s;
    q->cfg.alpha = alpha;
    return push_params(q);
}

double tr_kalman_threshold(const tr_kalman *q)
{
    return q ? q->cfg.threshold : NAN;
}
uint32_t tr_kalman_ns(const tr_kalman *q)
{
    return q ? q->cfg.Ns : 0;
}
double tr_kalman_alpha(const tr_kalman *q)
{
    return q ? q->cfg.alpha : NAN;
}
uint32_t tr_kalman_M(const tr_kalman *q)
{
    return q ? q->model->M : 0;
}
uint32_t tr_kalman_Q(const tr_kalman *q)
{
    return q ? q->model->Q : 0;
}
uint64_t tr_kalman_position(const tr_kalman *q)
{
    return q ? q->position : 0;
}
uint64_t tr_kalman_nonfinite(const tr_kalman *q)
{
    return q ? q->nonfinite : 0;
}
int tr_kalman_in_burst(const tr_kalman *q)
{
    return q ? q->in_burst : 0;
}
tr_backend tr_kalman_backend(const tr_kalman *q)
{
    return q ? q->backend : TR_BACKEND_CPU;
}
tr_variant tr_kalman_variant(const tr_kalman *q)
{
    return q ? q->variant : TR_VARIANT_FAST;
}
const char *tr_kalman_last_error(const tr_kalman *q)
{
    return q ? q->err.message : "NULL object";
}
