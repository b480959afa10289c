/*
 * SPIIR filter bank object: configuration, backend choice and the calls into
 * the engines: one level object on the CPU (spiir_level.c), the multirate
 * engine (spiir_mr.c, spiir_mr_ref.c) or the CUDA backend (cuda/spiir/).
 *
 * Paper: X. Guo, Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of
 * low-latency gravitational wave searches using Maxwell-microarchitecture GPUs".
 */
#include <transient/spiir.h>

#include "common/core_util.h"
#include "spiir/spiir_internal.h"
#include "spiir/spiir_level.h"
#include "spiir/spiir_mr.h"
#ifdef TR_HAVE_CUDA
#include "spiir/spiir_cuda.h"
#endif

#include <stdlib.h>
#include <string.h>

struct tr_spiir {
    tr_spiir_config cfg;   /* validated configuration */
    tr_spiir_bank *bank;   /* own copy */
    tr_backend backend;    /* resolved backend */
    tr_variant variant;    /* resolved variant */
    tr_spiir_level *level; /* single rate on the CPU, or NULL */
    void *cuda;            /* tr_cuda_spiir context with CUDA */
    uint64_t position;     /* samples processed */
    uint64_t nonfinite;    /* non-finite input values replaced by zero */
    tr_error err;          /* last failure */
    /* multirate = 1 (spiir_mr.h): the plan and one of the three variants */
    tr_spiir_mr_plan *plan;
    tr_spiir_mr_ref *mref;
    tr_spiir_mr_cpu *mcpu;
    void *mcuda;  /* tr_cuda_spiir_mr */
    float *mline; /* reference: one call's cleaned samples (re, im) */
};

tr_spiir_config tr_spiir_config_default(void)
{
    tr_spiir_config c;
    memset(&c, 0, sizeof c);
    c.complex_input = 0;
    c.backend = TR_BACKEND_AUTO;
    c.device = 0;
    c.variant = TR_VARIANT_FAST;
    c.batch = 4096;
    c.multirate = 0;
    return c;
}

static tr_status check_config(const tr_spiir_config *c, tr_error *err)
{
    if (c->complex_input != 0 && c->complex_input != 1)
        return tr_fail(err, TR_ERR_INVALID, "spiir: complex_input must be 0 or 1, got %d",
                       c->complex_input);
    if (c->multirate != 0 && c->multirate != 1)
        return tr_fail(err, TR_ERR_INVALID, "spiir: multirate must be 0 or 1, got %d",
                       c->multirate);
    return TR_OK;
}

#ifdef TR_HAVE_CUDA
/* The bank as the CUDA backend reads it. */
static tr_cuda_spiir_bank cuda_bank(const tr_spiir_bank *b)
{
    tr_cuda_spiir_bank v;
    memset(&v, 0, sizeof v);
    if (!b) return v;
    v.ntemplates = b->ntemplates;
    v.dt = b->dt;
    v.first = b->first;
    v.filters = b->filters;
    v.total = b->total;
    v.max_delay = b->max_delay;
    return v;
}

/* The plan as the CUDA backend reads it. */
static tr_cuda_spiir_mr_plan cuda_plan(const tr_spiir_mr_plan *p)
{
    tr_cuda_spiir_mr_plan v;
    memset(&v, 0, sizeof v);
    v.nlev = p->nlev;
    v.ntemplates = p->ntemplates;
    v.dec = p->dec;
    v.itp = p->itp;
    for (int l = 0; l < p->nlev; l++)
        v.level[l] = cuda_bank(p->sub[l]);
    return v;
}
#endif

/* Multirate: the plan, then the CUDA context or a CPU variant. */
static tr_status choose_backend_mr(tr_spiir *q, const tr_placement *p, tr_error *err)
{
    const tr_spiir_config *c = &q->cfg;
    q->plan = tr_spiir_mr_plan_create(q->bank, err);
    if (!q->plan) return err ? err->code : TR_ERR_INVALID;
    if (p->try_cuda) {
#ifdef TR_HAVE_CUDA
        tr_cuda_spiir_mr *ctx = NULL;
        const tr_cuda_spiir_mr_plan plan = cuda_plan(q->plan);
        tr_status s = tr_cuda_spiir_mr_create(c->device, &plan, c->complex_input,
                                              c->variant, c->batch, &ctx, err);
        if (s == TR_OK) {
            q->mcuda = ctx;
            q->backend = TR_BACKEND_CUDA;
            return TR_OK;
        }
        if (p->need_cuda) return s;
#endif
    }
    q->backend = TR_BACKEND_CPU;
    if (c->variant == TR_VARIANT_REFERENCE) {
        q->mref = tr_spiir_mr_ref_create(q->plan, c->complex_input);
        if (!q->mref)
            return tr_fail(err, TR_ERR_NOMEM,
                           "spiir: cannot allocate the multirate reference state");
    } else {
        q->mcpu = tr_spiir_mr_cpu_create(q->plan, c->complex_input, err);
        if (!q->mcpu) return err ? err->code : TR_ERR_NOMEM;
    }
    tr_clear(err);
    return TR_OK;
}

/* Resolve AUTO and create the CUDA context when the GPU is used. */
static tr_status choose_backend(tr_spiir *q, tr_error *err)
{
    const tr_spiir_config *c = &q->cfg;
    q->variant = c->variant;
    tr_placement p;
    tr_status placed =
        tr_place("spiir", c->backend, c->variant, c->device, c->batch, &p, err);
    if (placed != TR_OK) return placed;
    if (c->multirate) return choose_backend_mr(q, &p, err);
    if (p.try_cuda) {
#ifdef TR_HAVE_CUDA
        tr_cuda_spiir *ctx = NULL;
        const tr_cuda_spiir_bank bank = cuda_bank(q->bank);
        tr_status s = tr_cuda_spiir_create(c->device, &bank, c->complex_input, c->variant,
                                           c->batch, &ctx, err);
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
    q->level = tr_spiir_level_create(q->bank, c->complex_input, c->variant, err);
    if (!q->level) return err ? err->code : TR_ERR_NOMEM;
    tr_clear(err);
    return TR_OK;
}

tr_spiir *tr_spiir_create(const tr_spiir_config *cfg, const tr_spiir_bank *bank,
                          tr_error *err)
{
    if (!cfg || !bank) {
        tr_fail(err, TR_ERR_INVALID, "spiir: NULL %s", !cfg ? "configuration" : "bank");
        return NULL;
    }
    if (check_config(cfg, err) != TR_OK) return NULL;
    tr_spiir *q = calloc(1, sizeof *q);
    if (!q || !(q->bank = tr_spiir_bank_copy(bank))) {
        free(q);
        tr_fail(err, TR_ERR_NOMEM, "spiir: cannot allocate the object");
        return NULL;
    }
    q->cfg = *cfg;
    if (choose_backend(q, err) != TR_OK) {
        tr_spiir_destroy(q);
        return NULL;
    }
    return q;
}

void tr_spiir_destroy(tr_spiir *q)
{
    if (!q) return;
#ifdef TR_HAVE_CUDA
    if (q->cuda) tr_cuda_spiir_destroy((tr_cuda_spiir *)q->cuda);
    if (q->mcuda) tr_cuda_spiir_mr_destroy((tr_cuda_spiir_mr *)q->mcuda);
#endif
    tr_spiir_mr_ref_destroy(q->mref);
    tr_spiir_mr_cpu_destroy(q->mcpu);
    tr_spiir_mr_plan_destroy(q->plan);
    free(q->mline);
    tr_spiir_level_destroy(q->level);
    tr_spiir_bank_destroy(q->bank);
    free(q);
}

tr_status tr_spiir_reset(tr_spiir *q)
{
    if (!q) return TR_ERR_INVALID;
    q->position = 0;
    q->nonfinite = 0;
#ifdef TR_HAVE_CUDA
    if (q->cuda) return tr_cuda_spiir_reset((tr_cuda_spiir *)q->cuda, &q->err);
    if (q->mcuda) return tr_cuda_spiir_mr_reset((tr_cuda_spiir_mr *)q->mcuda, &q->err);
#endif
    if (q->plan) {
        if (q->mref) tr_spiir_mr_ref_reset(q->mref);
        if (q->mcpu) tr_spiir_mr_cpu_reset(q->mcpu);
        tr_clear(&q->err);
        return TR_OK;
    }
    tr_spiir_level_reset(q->level);
    tr_clear(&q->err);
    return TR_OK;
}

static tr_status check_io(tr_spiir *q, const float *x, size_t n, const float *snr)
{
    if (!q) return TR_ERR_INVALID;
    if (n > 0 && (!x || !snr))
        return tr_fail(&q->err, TR_ERR_INVALID, "spiir: NULL %s with n > 0",
                       !x ? "samples" : "output");
    return TR_OK;
}

/* Multirate on the host: the reference cleans into a line of its own here,
 * the optimized CPU variant and CUDA clean as they read. */
static tr_status process_mr(tr_spiir *q, const float *x, size_t n, float *snr)
{
#ifdef TR_HAVE_CUDA
    if (q->mcuda) {
        tr_status s = tr_cuda_spiir_mr_run_host((tr_cuda_spiir_mr *)q->mcuda, x, n, snr,
                                                &q->nonfinite, &q->err);
        if (s == TR_OK) q->position += n;
        return s;
    }
#endif
    if (q->mcpu) {
        tr_spiir_mr_cpu_run(q->mcpu, x, n, snr, &q->nonfinite);
        q->position += n;
        return TR_OK;
    }
    const int cplx = q->cfg.complex_input;
    const size_t span = 4096;
    if (!q->mline) {
        q->mline = malloc(2 * span * sizeof(float));
        if (!q->mline)
            return tr_fail(&q->err, TR_ERR_NOMEM, "spiir: cannot allocate a line");
    }
    for (size_t done = 0; done < n;) {
        const size_t m = n - done < span ? n - done : span;
        uint64_t bad = 0;
        float *re = q->mline, *im = q->mline + span;
        for (size_t i = 0; i < m; i++) {
            if (cplx) {
                re[i] = tr_spiir_take(x[2 * (done + i)], &bad);
                im[i] = tr_spiir_take(x[2 * (done + i) + 1], &bad);
            } else {
                re[i] = tr_spiir_take(x[done + i], &bad);
            }
        }
        q->nonfinite += bad;
        tr_spiir_mr_ref_run(q->mref, re, cplx ? im : NULL, m,
                            snr + done * (size_t)q->bank->ntemplates * 2);
        q->position += m;
        done += m;
    }
    return TR_OK;
}

tr_status tr_spiir_process(tr_spiir *q, const float *x, size_t n, float *snr)
{
    tr_status s = check_io(q, x, n, snr);
    if (s != TR_OK || n == 0) return s;
    if (q->plan) return process_mr(q, x, n, snr);
#ifdef TR_HAVE_CUDA
    if (q->cuda) {
        s = tr_cuda_spiir_run_host((tr_cuda_spiir *)q->cuda, x, n, snr, &q->nonfinite,
                                   &q->err);
        if (s == TR_OK) q->position += n;
        return s;
    }
#endif
    tr_spiir_level_run(q->level, x, n, snr, &q->nonfinite);
    q->position += n;
    return TR_OK;
}

tr_status tr_spiir_process_device(tr_spiir *q, const float *d_x, size_t n, float *d_snr)
{
    tr_status s = check_io(q, d_x, n, d_snr);
    if (s != TR_OK) return s;
#ifdef TR_HAVE_CUDA
    if (q->mcuda) {
        if (n == 0) return TR_OK;
        s = tr_cuda_spiir_mr_run_device((tr_cuda_spiir_mr *)q->mcuda, d_x, n, d_snr,
                                        &q->nonfinite, &q->err);
        if (s == TR_OK) q->position += n;
        return s;
    }
#endif
    if (!q->cuda)
        return tr_fail(
            &q->err, TR_ERR_UNSUPPORTED,
            "spiir: device samples need the CUDA backend (this object runs on %s)",
            tr_backend_name(q->backend));
    if (n == 0) return TR_OK;
#ifdef TR_HAVE_CUDA
    s = tr_cuda_spiir_run_device((tr_cuda_spiir *)q->cuda, d_x, n, d_snr, &q->nonfinite,
                                 &q->err);
    if (s == TR_OK) q->position += n;
    return s;
#else
    return TR_ERR_UNSUPPORTED;
#endif
}

uint32_t tr_spiir_templates(const tr_spiir *q)
{
    return q ? q->bank->ntemplates : 0;
}
int64_t tr_spiir_latency(const tr_spiir *q)
{
    return q && q->plan ? q->plan->latency : 0;
}
uint64_t tr_spiir_position(const tr_spiir *q)
{
    return q ? q->position : 0;
}
uint64_t tr_spiir_nonfinite(const tr_spiir *q)
{
    return q ? q->nonfinite : 0;
}
tr_backend tr_spiir_backend(const tr_spiir *q)
{
    return q ? q->backend : TR_BACKEND_CPU;
}
tr_variant tr_spiir_variant(const tr_spiir *q)
{
    return q ? q->variant : TR_VARIANT_FAST;
}
const char *tr_spiir_last_error(const tr_spiir *q)
{
    return q ? q->err.message : "";
}
