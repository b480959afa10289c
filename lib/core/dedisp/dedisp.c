/*
 * The dedispersion object (<transient/dedisp.h>): validation, the plan,
 * zero-DM subtraction and the history of the last L spectra, dispatch to the
 * reference, CPU fast or CUDA variant.
 *
 * Paper: D. R. Lorimer, M. Kramer, "Handbook of Pulsar Astronomy" (CUP 2005),
 * section 5.2; B. R. Barsdell et al., MNRAS 422, 379 (2012).
 *
 * CPU history: one row per used channel (channel-major, so that a trial's
 * shifted rows are contiguous for the sums), `cap` = H + block spectra; the
 * first H = L + smax - 1 (smax the largest scrunch factor: the first output's
 * block may start smax - 1 spectra before it) hold the end of the stream so
 * far (zeros before position 0), the next ones a block of new spectra after
 * zero-DM subtraction. After a block its last H spectra move to the front;
 * block >= H keeps that move no larger than the block itself. Scrunched
 * trials come in groups of one factor (the factors never decrease along the
 * list); the fast variant computes each factor's block means once per block
 * (two level buffers used in turn) and sums them like full-rate rows.
 */
#define _POSIX_C_SOURCE 200809L

#include "common/core_util.h"
#include "dedisp/dedisp_internal.h"

#include "dedisp/dedisp_cuda.h"

#include <transient/filterbank.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Fewest spectra per CPU block. */
#define MIN_BLOCK 4096u
/* Most threads of the CPU fast variant. */
#define MAX_THREADS 256u

struct tr_dedisp {
    tr_dedisp_config cfg; /* copy; plan.dm_list and mask point to our arrays */
    double *dms;          /* ndm trials */
    uint32_t ndm;
    uint32_t *chans; /* nused channel indices, increasing */
    uint32_t nused;
    uint32_t *delays;    /* ndm x nused, in samples of each trial's factor */
    uint32_t *factors;   /* ndm scrunch factors, non-decreasing */
    uint32_t *trial_lat; /* ndm trial latencies L_d */
    uint32_t latency;    /* L */
    uint32_t smax;       /* largest factor */
    size_t keep;         /* CPU: history spectra H = L + smax - 1 */
    float *buf;          /* CPU: nused rows of cap spectra */
    size_t block, cap;   /* CPU: new spectra per block, H + block */
    float *lev[2];       /* CPU fast, scrunched: block means, nused rows of lev_cap */
    size_t lev_cap;      /* floats per row of a level */
    float *coarse;       /* CPU fast, scrunched: a group's coarse outputs */
    float *unpacked;     /* CPU raw input: block spectra of nchan floats */
    tr_pool *pool;       /* CPU fast: threads */
    void *cuda;          /* tr_cuda_dedisp with CUDA */
    uint64_t position;   /* spectra consumed */
    int flushed;
    tr_backend backend;
    tr_variant variant;
    tr_error err;
};

tr_dedisp_config tr_dedisp_config_default(void)
{
    tr_dedisp_config c;
    memset(&c, 0, sizeof c);
    c.plan = tr_dedisp_plan_config_default();
    c.mask = NULL;
    c.zero_dm = 0;
    c.scale = TR_DEDISP_SUM;
    c.raw_nbits = 8;
    c.device_layout = TR_DEDISP_SAMPLE_MAJOR;
    c.backend = TR_BACKEND_AUTO;
    c.device = 0;
    c.variant = TR_VARIANT_FAST;
    c.nthreads = 0;
    c.batch = 16384;
    return c;
}

static tr_status check_config(const tr_dedisp_config *c, tr_error *err)
{
    if (c->scale != TR_DEDISP_SUM && c->scale != TR_DEDISP_MEAN)
        return tr_fail(err, TR_ERR_INVALID,
                       "dedisp: scale must be SUM (0) or MEAN (1), got %d",
                       (int)c->scale);
    if (c->device_layout != TR_DEDISP_SAMPLE_MAJOR &&
        c->device_layout != TR_DEDISP_DM_MAJOR)
        return tr_fail(
            err, TR_ERR_INVALID,
            "dedisp: device_layout must be SAMPLE_MAJOR (0) or DM_MAJOR (1), got %d",
            (int)c->device_layout);
    const uint32_t nb = c->raw_nbits;
    if (nb != 1 && nb != 2 && nb != 4 && nb != 8 && nb != 16 && nb != 32)
        return tr_fail(err, TR_ERR_INVALID,
                       "dedisp: raw_nbits must be 1, 2, 4, 8, 16 or 32, got %u", nb);
    if (((uint64_t)c->plan.nchan * nb) % 8 != 0)
        return tr_fail(err, TR_ERR_INVALID,
                       "dedisp: nchan = %u at raw_nbits = %u does not fill whole bytes",
                       c->plan.nchan, nb);
    if (c->variant == TR_VARIANT_PAPER)
        return tr_fail(err, TR_ERR_UNSUPPORTED, "dedisp: there is no paper variant");
    if (c->nthreads > MAX_THREADS)
        return tr_fail(err, TR_ERR_INVALID, "dedisp: nthreads must be <= %u, got %u",
                       MAX_THREADS, c->nthreads);
    return TR_OK;
}

/* Trials, used channels and delays. */
static tr_status build_plan(tr_dedisp *q, const tr_dedisp_config *cfg, tr_error *err)
{
    const tr_dedisp_plan_config *pc = &cfg->plan;
    size_t ndm = pc->dm_list ? pc->ndm_list : tr_dedisp_dm_list(pc, NULL, 0, err);
    if (ndm == 0) return err ? err->code : TR_ERR_INVALID;
    q->dms = (double *)malloc(ndm * sizeof *q->dms);
    q->chans = (uint32_t *)malloc((size_t)pc->nchan * sizeof *q->chans);
    if (!q->dms || !q->chans)
        return tr_fail(err, TR_ERR_NOMEM, "dedisp: out of memory for the plan");
    if (pc->dm_list)
        memcpy(q->dms, pc->dm_list, ndm * sizeof *q->dms);
    else
        tr_dedisp_dm_list(pc, q->dms, ndm, err);
    q->ndm = (uint32_t)ndm;
    q->factors = (uint32_t *)malloc(ndm * sizeof *q->factors);
    q->trial_lat = (uint32_t *)malloc(ndm * sizeof *q->trial_lat);
    if (!q->factors || !q->trial_lat)
        return tr_fail(err, TR_ERR_NOMEM, "dedisp: out of memory for the plan");
    tr_status s = tr_dedisp_scrunch_list(pc, q->dms, ndm, q->factors, err);
    if (s != TR_OK) return s;
    q->smax = q->factors[ndm - 1];
    for (uint32_t c = 0; c < pc->nchan; ++c)
        if (!cfg->mask || cfg->mask[c]) q->chans[q->nused++] = c;
    if (q->nused == 0)
        return tr_fail(err, TR_ERR_INVALID, "dedisp: the mask excludes every channel");
    q->cfg.plan.dm_list = q->dms;
    q->cfg.plan.ndm_list = q->ndm;
    q->cfg.mask = NULL;
    s = tr_dedisp_build_delays(pc, q->dms, q->factors, q->ndm, q->chans, q->nused,
                               &q->delays, q->trial_lat, &q->latency, err);
    q->keep = (size_t)q->latency + q->smax - 1;
    return s;
}

static tr_status cpu_start(tr_dedisp *q, tr_error *err)
{
    q->block = q->keep > MIN_BLOCK ? q->keep : MIN_BLOCK;
    q->cap = q->keep + q->block;
    if (q->cap > SIZE_MAX / sizeof(float) / q->nused ||
        q->block > SIZE_MAX / sizeof(float) / q->cfg.plan.nchan)
        return tr_fail(err, TR_ERR_NOMEM, "dedisp: history too large");
    q->buf = (float *)calloc(q->cap * q->nused, sizeof(float));
    q->unpacked = (float *)malloc(q->block * q->cfg.plan.nchan * sizeof(float));
    if (!q->buf || !q->unpacked)
        return tr_fail(err, TR_ERR_NOMEM,
                       "dedisp: cannot allocate the history (%zu x %u floats)", q->cap,
                       q->nused);
    if (q->smax > 1 && q->variant == TR_VARIANT_FAST) {
        q->lev_cap = q->cap / 2 + 1;
        for (int i = 0; i < 2; ++i)
            q->lev[i] = (float *)malloc(q->lev_cap * q->nused * sizeof(float));
        q->coarse = (float *)malloc((q->block / 2 + 2) * q->ndm * sizeof(float));
        if (!q->lev[0] || !q->lev[1] || !q->coarse)
            return tr_fail(err, TR_ERR_NOMEM,
                           "dedisp: cannot allocate the scrunched history (2 x %zu x %u "
                           "floats)",
                           q->lev_cap, q->nused);
    }
    if (q->variant == TR_VARIANT_FAST) {
        uint32_t nt = q->cfg.nthreads;
        if (nt == 0) {
            long cpus = sysconf(_SC_NPROCESSORS_ONLN);
            nt = cpus < 1 ? 1u : cpus > (long)MAX_THREADS ? MAX_THREADS : (uint32_t)cpus;
        }
        if (nt > 1) return tr_pool_create(nt, "dedisp", &q->pool, err);
    }
    return TR_OK;
}

#ifdef TR_HAVE_CUDA
static tr_status cuda_start(tr_dedisp *q, tr_error *err)
{
    tr_cuda_dedisp_plan p;
    p.nchan = q->cfg.plan.nchan;
    p.nused = q->nused;
    p.ndm = q->ndm;
    p.latency = q->latency;
    p.chans = q->chans;
    p.delays = q->delays;
    p.factors = q->factors;
    p.zero_dm = q->cfg.zero_dm;
    p.mean = q->cfg.scale == TR_DEDISP_MEAN;
    p.raw_nbits = q->cfg.raw_nbits;
    p.batch = q->cfg.batch;
    tr_cuda_dedisp *ctx = NULL;
    tr_status s = tr_cuda_dedisp_create(q->cfg.device, &p, &ctx, err);
    q->cuda = ctx;
    return s;
}
#endif

static tr_status choose_backend(tr_dedisp *q, tr_error *err)
{
    const tr_dedisp_config *c = &q->cfg;
    q->variant = c->variant;
    tr_placement p;
    tr_status s =
        tr_place("dedisp", c->backend, c->variant, c->device, c->batch, &p, err);
    if (s != TR_OK) return s;
    if (p.try_cuda) {
#ifdef TR_HAVE_CUDA
        s = cuda_start(q, err);
        if (s == TR_OK) {
            q->backend = TR_BACKEND_CUDA;
            return TR_OK;
        }
        if (q->cuda) tr_cuda_dedisp_destroy((tr_cuda_dedisp *)q->cuda);
        q->cuda = NULL;
        if (p.need_cuda) return s;
#endif
    }
    q->backend = TR_BACKEND_CPU;
    return cpu_start(q, err);
}

tr_dedisp *tr_dedisp_create(const tr_dedisp_config *cfg, tr_error *err)
{
    if (!cfg) {
        tr_fail(err, TR_ERR_INVALID, "dedisp: NULL configuration");
        return NULL;
    }
    if (tr_dedisp_plan_validate(&cfg->plan, err) != TR_OK ||
        check_config(cfg, err) != TR_OK)
        return NULL;
    tr_placement dummy;
    if (tr_place("dedisp", cfg->backend, cfg->variant, cfg->device, cfg->batch, &dummy,
                 err) != TR_OK)
        return NULL;
    tr_dedisp *q = (tr_dedisp *)calloc(1, sizeof *q);
    if (!q) {
        tr_fail(err, TR_ERR_NOMEM, "dedisp: cannot allocate the object");
        return NULL;
    }
    q->cfg = *cfg;
    if (build_plan(q, cfg, err) != TR_OK || choose_backend(q, err) != TR_OK) {
        tr_dedisp_destroy(q);
        return NULL;
    }
    tr_clear(err);
    tr_clear(&q->err);
    return q;
}

void tr_dedisp_destroy(tr_dedisp *q)
{
    if (!q) return;
#ifdef TR_HAVE_CUDA
    if (q->cuda) tr_cuda_dedisp_destroy((tr_cuda_dedisp *)q->cuda);
#endif
    tr_pool_destroy(q->pool);
    free(q->dms);
    free(q->chans);
    free(q->delays);
    free(q->factors);
    free(q->trial_lat);
    free(q->lev[0]);
    free(q->lev[1]);
    free(q->coarse);
    free(q->buf);
    free(q->unpacked);
    free(q);
}

tr_status tr_dedisp_reset(tr_dedisp *q)
{
    if (!q) return TR_ERR_INVALID;
    q->position = 0;
    q->flushed = 0;
    tr_clear(&q->err);
#ifdef TR_HAVE_CUDA
    if (q->cuda) return tr_cuda_dedisp_reset((tr_cuda_dedisp *)q->cuda, &q->err);
#endif
    memset(q->buf, 0, q->cap * q->nused * sizeof(float));
    return TR_OK;
}

/* ---- CPU path ---- */

/* Write m spectra (time-major; NULL = zeros) after the history, zero-DM
 * subtracted: the mean over the used channels summed in channel order. */
static void cpu_fill(tr_dedisp *q, const float *x, size_t m)
{
    const uint32_t nchan = q->cfg.plan.nchan, nused = q->nused;
    float *dst = q->buf + q->keep;
    for (size_t k = 0; k < m; ++k) {
        const float *s = x ? x + k * nchan : NULL;
        float mean = 0.0f;
        if (s && q->cfg.zero_dm) {
            float sum = 0.0f;
            for (uint32_t j = 0; j < nused; ++j)
                sum += s[q->chans[j]];
            mean = sum / (float)nused;
        }
        for (uint32_t j = 0; j < nused; ++j)
            dst[(size_t)j * q->cap + k] = s ? s[q->chans[j]] - mean : 0.0f;
    }
}

/* The scrunched trials d0 .. ndm - 1 (factors > 1) of the m outputs from
 * position p0 on, the history's columns 0 .. H + m - 1 holding spectra from
 * position p0 - H + L on. */
static void cpu_scrunched(tr_dedisp *q, uint32_t d0, int64_t p0, size_t m, float *y)
{
    const int mean = q->cfg.scale == TR_DEDISP_MEAN;
    tr_dedisp_rows rows = {q->buf, q->cap, q->nused, p0 + q->latency - (int64_t)q->keep,
                           q->keep + m};
    uint32_t level_s = 1;
    int which = 0;
    for (uint32_t d = d0; d < q->ndm;) {
        const uint32_t s = q->factors[d];
        uint32_t e = d;
        while (e < q->ndm && q->factors[e] == s)
            ++e;
        const uint32_t *dl = q->delays + (size_t)d * q->nused;
        if (q->variant == TR_VARIANT_REFERENCE) {
            tr_dedisp_scrunch_ref(&rows, s, e - d, dl, p0, m, mean, y + d, q->ndm);
        } else {
            for (; level_s < s; level_s *= 2, which = 1 - which)
                tr_dedisp_scrunch_level(&rows, &rows, q->lev[which], q->lev_cap);
            tr_dedisp_scrunch_fast(&rows, s, e - d, dl, p0, m, mean, q->pool, q->coarse,
                                   y + d, q->ndm);
        }
        d = e;
    }
}

/* Sum m outputs from the filled block, zero those before position 0, keep
 * the last H spectra. */
static void cpu_block(tr_dedisp *q, size_t m, float *y)
{
    uint32_t full = 0; /* trials at full rate */
    while (full < q->ndm && q->factors[full] == 1)
        ++full;
    tr_dedisp_sum_args a;
    a.buf = q->buf + (q->keep - q->latency);
    a.cap = q->cap;
    a.nused = q->nused;
    a.ndm = full;
    a.delays = q->delays;
    a.n = m;
    a.mean = q->cfg.scale == TR_DEDISP_MEAN;
    a.y = y;
    a.ystride = q->ndm;
    a.pool = q->pool;
    if (full && q->variant == TR_VARIANT_REFERENCE)
        tr_dedisp_sum_ref(&a);
    else if (full)
        tr_dedisp_sum_fast(&a);
    if (full < q->ndm)
        cpu_scrunched(q, full, (int64_t)q->position - (int64_t)q->latency, m, y);
    if (q->position < q->latency) {
        uint64_t before = q->latency - q->position;
        size_t z = before < m ? (size_t)before : m;
        memset(y, 0, z * q->ndm * sizeof(float));
    }
    for (uint32_t j = 0; j < q->nused; ++j) {
        float *row = q->buf + (size_t)j * q->cap;
        memmove(row, row + m, q->keep * sizeof(float));
    }
    q->position += m;
}

/* x: float spectra, raw: packed spectra, neither: zeros (flush). */
static tr_status cpu_run(tr_dedisp *q, const float *x, const unsigned char *raw, size_t n,
                         float *y)
{
    const uint32_t nchan = q->cfg.plan.nchan;
    const size_t raw_bytes = (size_t)nchan * q->cfg.raw_nbits / 8;
    for (size_t done = 0; done < n;) {
        size_t m = n - done < q->block ? n - done : q->block;
        const float *src = x ? x + done * nchan : NULL;
        if (raw) {
            tr_filterbank_unpack(raw + done * raw_bytes, q->cfg.raw_nbits, m * nchan,
                                 q->unpacked);
            src = q->unpacked;
        }
        cpu_fill(q, src, m);
        cpu_block(q, m, y + done * q->ndm);
        done += m;
    }
    return TR_OK;
}

/* ---- entry points ---- */

static tr_status check_call(tr_dedisp *q, const void *in, size_t n, const float *y)
{
    if (!q) return TR_ERR_INVALID;
    if (q->flushed)
        return tr_fail(&q->err, TR_ERR_STATE, "dedisp: stream flushed; reset first");
    if (n && (!in || !y)) return tr_fail(&q->err, TR_ERR_INVALID, "dedisp: NULL buffer");
    const uint32_t wide = q->ndm > q->cfg.plan.nchan ? q->ndm : q->cfg.plan.nchan;
    if (n > SIZE_MAX / sizeof(float) / wide)
        return tr_fail(&q->err, TR_ERR_INVALID, "dedisp: n = %zu too large", n);
    return TR_OK;
}

/* One call of any entry point: n spectra of `kind` (ZEROS: flush) to y. */
static tr_status run(tr_dedisp *q, tr_cuda_dedisp_input kind, const void *in, size_t n,
                     float *y, int on_device)
{
    if (on_device && q->backend != TR_BACKEND_CUDA)
        return tr_fail(&q->err, TR_ERR_UNSUPPORTED,
                       "dedisp: device buffers need the CUDA backend");
    if (n == 0) return TR_OK;
#ifdef TR_HAVE_CUDA
    if (q->cuda) {
        tr_status s = tr_cuda_dedisp_run((tr_cuda_dedisp *)q->cuda, kind, in, n, y,
                                         on_device, q->cfg.device_layout, &q->err);
        if (s == TR_OK) q->position += n;
        return s;
    }
#endif
    if (kind == TR_CUDA_DEDISP_HOST_RAW)
        return cpu_run(q, NULL, (const unsigned char *)in, n, y);
    return cpu_run(q, (const float *)in, NULL, n, y);
}

tr_status tr_dedisp_process(tr_dedisp *q, const float *x, size_t n, float *y)
{
    tr_status s = check_call(q, x, n, y);
    return s != TR_OK ? s : run(q, TR_CUDA_DEDISP_HOST_FLOAT, x, n, y, 0);
}

tr_status tr_dedisp_process_raw(tr_dedisp *q, const void *raw, size_t n, float *y)
{
    tr_status s = check_call(q, raw, n, y);
    return s != TR_OK ? s : run(q, TR_CUDA_DEDISP_HOST_RAW, raw, n, y, 0);
}

tr_status tr_dedisp_process_device(tr_dedisp *q, const float *d_x, size_t n, float *d_y)
{
    tr_status s = check_call(q, d_x, n, d_y);
    return s != TR_OK ? s : run(q, TR_CUDA_DEDISP_DEVICE_FLOAT, d_x, n, d_y, 1);
}

tr_status tr_dedisp_process_raw_device(tr_dedisp *q, const void *raw, size_t n,
                                       float *d_y)
{
    tr_status s = check_call(q, raw, n, d_y);
    return s != TR_OK ? s : run(q, TR_CUDA_DEDISP_HOST_RAW, raw, n, d_y, 1);
}

static tr_status flush(tr_dedisp *q, float *y, int on_device)
{
    tr_status s = check_call(q, NULL, 0, y);
    if (s != TR_OK) return s;
    if (q->latency && !y) return tr_fail(&q->err, TR_ERR_INVALID, "dedisp: NULL buffer");
    s = run(q, TR_CUDA_DEDISP_ZEROS, NULL, q->latency, y, on_device);
    if (s == TR_OK) q->flushed = 1;
    return s;
}

tr_status tr_dedisp_flush(tr_dedisp *q, float *y)
{
    return flush(q, y, 0);
}

tr_status tr_dedisp_flush_device(tr_dedisp *q, float *d_y)
{
    return flush(q, d_y, 1);
}

void *tr_dedisp_host_alloc(const tr_dedisp *q, size_t bytes)
{
#ifdef TR_HAVE_CUDA
    if (q && q->cuda) return tr_cuda_dedisp_host_alloc(bytes);
#endif
    (void)q;
    return malloc(bytes ? bytes : 1);
}

void tr_dedisp_host_free(const tr_dedisp *q, void *p)
{
#ifdef TR_HAVE_CUDA
    if (q && q->cuda) {
        tr_cuda_dedisp_host_free(p);
        return;
    }
#endif
    (void)q;
    free(p);
}

uint32_t tr_dedisp_ndm(const tr_dedisp *q)
{
    return q ? q->ndm : 0;
}
const double *tr_dedisp_dms(const tr_dedisp *q)
{
    return q ? q->dms : NULL;
}
uint32_t tr_dedisp_channel_delay(const tr_dedisp *q, uint32_t d, uint32_t c)
{
    if (!q || d >= q->ndm || c >= q->cfg.plan.nchan) return 0;
    return tr_dedisp_coarse_delay(&q->cfg.plan, q->dms[d], q->factors[d], c);
}
uint32_t tr_dedisp_factor(const tr_dedisp *q, uint32_t d)
{
    return q && d < q->ndm ? q->factors[d] : 0;
}
uint32_t tr_dedisp_trial_latency(const tr_dedisp *q, uint32_t d)
{
    return q && d < q->ndm ? q->trial_lat[d] : 0;
}
double tr_dedisp_full_rate_trials(const tr_dedisp *q)
{
    double sum = 0;
    for (uint32_t d = 0; q && d < q->ndm; ++d)
        sum += 1.0 / q->factors[d];
    return sum;
}
uint32_t tr_dedisp_latency(const tr_dedisp *q)
{
    return q ? q->latency : 0;
}
uint32_t tr_dedisp_nchan(const tr_dedisp *q)
{
    return q ? q->cfg.plan.nchan : 0;
}
uint32_t tr_dedisp_nused(const tr_dedisp *q)
{
    return q ? q->nused : 0;
}
uint64_t tr_dedisp_position(const tr_dedisp *q)
{
    return q ? q->position : 0;
}
int tr_dedisp_flushed(const tr_dedisp *q)
{
    return q ? q->flushed : 0;
}
tr_backend tr_dedisp_backend(const tr_dedisp *q)
{
    return q ? q->backend : TR_BACKEND_CPU;
}
tr_variant tr_dedisp_variant(const tr_dedisp *q)
{
    return q ? q->variant : TR_VARIANT_FAST;
}
const char *tr_dedisp_last_error(const tr_dedisp *q)
{
    return q ? q->err.message : "dedisp: NULL object";
}
