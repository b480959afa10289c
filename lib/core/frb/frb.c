/*
 * FRB search object: the chain tr_dedisp -> tr_boxcar -> tr_candidates over
 * blocks of spectra, with DM trials turned into DMs and positions into times.
 *
 * Papers: B. R. Barsdell et al., "Accelerating incoherent dedispersion"
 * (MNRAS 422, 379, 2012) for the DM plan; K. Adamek, W. Armour, "Single Pulse
 * Detection Algorithms for Real-time Fast Radio Burst Searches using GPUs"
 * (ApJS 247:56, 2020) for the search and the candidates.
 *
 * Positions: tr_dedisp writes position p = position_in - L + k for output k
 * of a call; p < 0 (the first L spectra) are dropped, so the search sees
 * dedispersed position 0 first. The end of the data is dedispersed by
 * feeding L spectra of zeros through tr_dedisp_process (what tr_dedisp_flush
 * does, in bounded blocks), and the positions whose sum lacks a spectrum are
 * set to NaN for the search.
 *
 * This file: the object, its plan split into parts (frb_internal.h), and the
 * host chain (CPU backend, or CUDA stages through their host entry points:
 * the plane comes back to the host for the normalisation and goes up for the
 * search). The device-resident chain over one or several GPUs is in
 * frb_device.c.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "frb/frb_internal.h"

#include "common/core_util.h"
#ifdef TR_HAVE_CUDA
#include "frb/frb_cuda.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Samples per tr_boxcar_process call: tr_boxcar_candidates_process reads the
 * statistics of the windows its outputs start in, and tr_boxcar keeps them
 * for at least its latency + 4096 samples behind its position; the outputs
 * of a longer call would lose theirs and be masked as warming up.
 */
#define FRB_SEARCH_PIECE 4096

tr_frb_config tr_frb_config_default(void)
{
    tr_frb_config c;
    memset(&c, 0, sizeof c);
    c.dedisp = tr_dedisp_config_default();
    c.dedisp.plan.nchan = 0; /* the geometry has no default */
    c.dedisp.zero_dm = 1;    /* as Heimdall: slow broadband power is not a burst */
    c.search = tr_boxcar_config_default();
    c.search.max_width = 1024;
    c.search.norm.window = 1024;
    c.search.norm.history = 8;
    /* the first window of each trial is the search's warm-up (not searched):
     * the definition the device statistics follow */
    c.search.norm.first_own = 0;
    c.threshold = 8.0f;
    c.link_time = 0;
    c.link_dm = 200;
    c.link_width = 0.0;
    c.max_span = 0;
    c.backend = TR_BACKEND_AUTO;
    c.device = 0;
    c.ndevices = 0;
    c.block = 16384;
    c.keep_plane = 0;
    return c;
}

static tr_status check_config(const tr_frb_config *c, tr_error *err)
{
    if (c->block < 1 || c->block > TR_FRB_MAX_BLOCK)
        return tr_fail(err, TR_ERR_INVALID, "frb: block must be in 1..%u spectra, got %u",
                       TR_FRB_MAX_BLOCK, c->block);
    if (!isfinite(c->threshold))
        return tr_fail(err, TR_ERR_INVALID, "frb: threshold must be finite");
    if (c->link_width != 0.0 && !(c->link_width >= 1.0))
        return tr_fail(err, TR_ERR_INVALID, "frb: link_width must be 0 or >= 1, got %g",
                       c->link_width);
    if (c->backend != TR_BACKEND_AUTO && c->backend != TR_BACKEND_CPU &&
        c->backend != TR_BACKEND_CUDA)
        return tr_fail(err, TR_ERR_INVALID, "frb: unknown backend %d", (int)c->backend);
    if (c->ndevices > TR_FRB_MAX_DEVICES)
        return tr_fail(err, TR_ERR_INVALID, "frb: at most %u devices, got %u",
                       TR_FRB_MAX_DEVICES, c->ndevices);
    for (uint32_t j = 0; j < c->ndevices; j++)
        if (c->devices[j] < 0)
            return tr_fail(err, TR_ERR_INVALID, "frb: device %d of the list is negative",
                           c->devices[j]);
    if (c->ndevices > 1 && c->backend == TR_BACKEND_CPU)
        return tr_fail(
            err, TR_ERR_INVALID,
            "frb: %u devices need the CUDA backend (the CPU backend was asked)",
            c->ndevices);
    if (c->ndevices > 1 && c->keep_plane)
        return tr_fail(err, TR_ERR_INVALID,
                       "frb: keep_plane (the DM-time plane output) needs one device, "
                       "%u were given",
                       c->ndevices);
    if (c->dedisp.plan.scrunch && c->search.norm.mode != TR_BOXCAR_NORM_LEVELS)
        return tr_fail(err, TR_ERR_INVALID,
                       "frb: scrunched DM trials hold each value for a block of "
                       "samples, so their noise is not white: the search needs the "
                       "LEVELS normalisation (measured per width), not %s",
                       c->search.norm.mode == TR_BOXCAR_NORM_WHITE ? "WHITE" : "FIXED");
    return TR_OK;
}

void tr_frb_destroy(tr_frb *q)
{
    if (!q) return;
    tr_candidates_split_destroy(q->split);
    tr_candidates_destroy(q->cand);
    tr_pool_destroy(q->pool);
    for (uint32_t j = 0; q->part && j < q->npart; j++) {
        tr_boxcar_destroy(q->part[j].bx);
        tr_dedisp_destroy(q->part[j].dd);
#ifdef TR_HAVE_CUDA
        tr_cuda_frb_destroy((tr_cuda_frb *)q->part[j].dev);
#endif
    }
    free(q->part);
    free(q->dm_own);
    free(q->trial_lat);
    free(q->y);
    free(q->snr);
    free(q->width);
    free(q->zeros);
    free(q->plane);
    free(q->tmp);
    free(q);
}

double tr_frb_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *alloc_array(size_t n, size_t size)
{
    return n && n <= SIZE_MAX / size ? calloc(n, size) : NULL;
}

/*
 * The plan's DMs when it is split over npart devices (the generated list, or
 * the given one), so that each part gets its range as an explicit list: the
 * same values, hence the same delays.
 */
static tr_status split_plan(tr_frb *q, const tr_frb_config *cfg, tr_error *err)
{
    const tr_dedisp_plan_config *plan = &cfg->dedisp.plan;
    size_t n = plan->dm_list ? plan->ndm_list : tr_dedisp_dm_list(plan, NULL, 0, err);
    if (n == 0) {
        if (plan->dm_list) return tr_fail(err, TR_ERR_INVALID, "frb: dm_list is empty");
        return TR_ERR_INVALID; /* err says why */
    }
    if (n > TR_DEDISP_MAX_NDM)
        return tr_fail(err, TR_ERR_INVALID, "frb: %zu DM trials, at most %u", n,
                       TR_DEDISP_MAX_NDM);
    if (n < q->npart)
        return tr_fail(err, TR_ERR_INVALID,
                       "frb: %u devices for %zu DM trials: at most one device per trial",
                       q->npart, n);
    q->dm_own = alloc_array(n, sizeof *q->dm_own);
    if (!q->dm_own) return tr_fail(err, TR_ERR_NOMEM, "frb: out of memory for the plan");
    if (plan->dm_list)
        memcpy(q->dm_own, plan->dm_list, n * sizeof *q->dm_own);
    else
        tr_dedisp_dm_list(plan, q->dm_own, n, err);
    q->ndm = (uint32_t)n;
    for (uint32_t j = 0; j < q->npart; j++) {
        q->part[j].d0 = (uint32_t)((uint64_t)n * j / q->npart);
        q->part[j].ndm = (uint32_t)((uint64_t)n * (j + 1) / q->npart) - q->part[j].d0;
    }
    return TR_OK;
}

/* The scrunch factor of trial d of the whole split plan, so that a part
 * starting there continues the plan's factors (dedisp's rule only looks
 * back one trial). */
static tr_status split_factor(const tr_frb *q, uint32_t d, uint32_t *out, tr_error *err)
{
    tr_dedisp_plan_config whole = q->cfg.dedisp.plan;
    whole.dm_list = q->dm_own;
    whole.ndm_list = q->ndm;
    uint32_t *f = alloc_array(q->ndm, sizeof *f);
    if (!f) return tr_fail(err, TR_ERR_NOMEM, "frb: out of memory for the plan");
    const size_t n = tr_dedisp_scrunch_factors(&whole, f, q->ndm, err);
    if (n) *out = f[d];
    free(f);
    return n ? TR_OK : (err ? err->code : TR_ERR_INVALID);
}

/* Part pt's dedispersion (backend: the plan's, or the first part's) and
 * search on its device. */
static tr_status make_part(tr_frb *q, frb_part *pt, tr_backend backend, tr_error *err)
{
    tr_dedisp_config dc = q->cfg.dedisp;
    dc.backend = backend;
    dc.device = pt->device;
    dc.device_layout = TR_DEDISP_SAMPLE_MAJOR;
    if (q->dm_own) {
        dc.plan.dm_list = q->dm_own + pt->d0;
        dc.plan.ndm_list = pt->ndm;
        if (dc.plan.scrunch &&
            split_factor(q, pt->d0, &dc.plan.scrunch_first, err) != TR_OK)
            return err ? err->code : TR_ERR_INVALID;
    }
    pt->dd = tr_dedisp_create(&dc, err);
    if (!pt->dd) return err ? err->code : TR_ERR_INVALID;
    pt->ndm = tr_dedisp_ndm(pt->dd);
    pt->L = tr_dedisp_latency(pt->dd);
    tr_boxcar_config bc = q->cfg.search;
    bc.nchan = pt->ndm;
    /* FIXED statistics given per trial: the part's own */
    if (bc.norm.fixed_means) bc.norm.fixed_means += pt->d0;
    if (bc.norm.fixed_sigmas) bc.norm.fixed_sigmas += pt->d0;
    bc.backend = tr_dedisp_backend(pt->dd);
    bc.device = pt->device;
    bc.device_layout = TR_BOXCAR_TIME_MAJOR;
    bc.stage_outputs = 0;
    pt->bx = tr_boxcar_create(&bc, err);
    if (!pt->bx) return err ? err->code : TR_ERR_INVALID;
    return TR_OK;
}

/* Part j of a split plan (on the pool). */
static void make_part_task(void *arg, size_t j)
{
    tr_frb *q = arg;
    frb_part *pt = &q->part[j];
    tr_clear(&pt->err);
    pt->st = make_part(q, pt, TR_BACKEND_CUDA, &pt->err);
}

tr_status tr_frb_parts_status(const tr_frb *q, tr_error *err)
{
    for (uint32_t j = 0; j < q->npart; j++) {
        const frb_part *pt = &q->part[j];
        if (pt->st == TR_OK) continue;
        if (q->npart == 1) { /* the one part's message as it is */
            if (err) *err = pt->err;
            return pt->st;
        }
        return tr_fail(err, pt->st, "%s (device %d, DM trials %u..%u)", pt->err.message,
                       pt->device, pt->d0, pt->d0 + pt->ndm - 1);
    }
    return TR_OK;
}

tr_frb *tr_frb_create(const tr_frb_config *cfg, tr_error *err)
{
    tr_clear(err);
    if (!cfg) {
        tr_fail(err, TR_ERR_INVALID, "frb: cfg is NULL");
        return NULL;
    }
    if (check_config(cfg, err) != TR_OK) return NULL;
    tr_frb *q = calloc(1, sizeof *q);
    const uint32_t np = cfg->ndevices > 1 ? cfg->ndevices : 1;
    if (q) q->part = calloc(np, sizeof *q->part);
    if (!q || !q->part) {
        free(q);
        tr_fail(err, TR_ERR_NOMEM, "frb: out of memory");
        return NULL;
    }
    q->cfg = *cfg;
    q->npart = np;
    for (uint32_t j = 0; j < np; j++)
        q->part[j].device = cfg->ndevices ? cfg->devices[j] : cfg->device;
    if (np > 1 && split_plan(q, cfg, err) != TR_OK) goto fail;

    /* One part's dedispersion decides the backend (AUTO falls back to the
     * CPU without a device); its search follows it. A split plan runs on
     * CUDA, its parts made side by side on the pool (each device's context
     * and buffers at the same time). */
    if (np == 1) {
        if (make_part(q, &q->part[0], cfg->backend, err) != TR_OK) goto fail;
    } else {
        if (tr_pool_create(np, "frb", &q->pool, err) != TR_OK) goto fail;
        tr_pool_run(q->pool, make_part_task, q, np);
        if (tr_frb_parts_status(q, err) != TR_OK) goto fail;
    }
    if (np == 1) {
        q->ndm = q->part[0].ndm;
        q->dms = tr_dedisp_dms(q->part[0].dd);
    } else {
        q->dms = q->dm_own;
    }
    q->nchan = tr_dedisp_nchan(q->part[0].dd);
    q->L = 0; /* the largest of the parts' (an explicit list may be in any order) */

    q->trial_lat = alloc_array(q->ndm, sizeof *q->trial_lat);
    q->tmp_cap = 256;
    q->tmp = alloc_array(q->tmp_cap, sizeof *q->tmp);
    if (!q->trial_lat || !q->tmp) {
        tr_fail(err, TR_ERR_NOMEM, "frb: out of memory for %u DM trials", q->ndm);
        goto fail;
    }
    for (uint32_t j = 0; j < np; j++) {
        const frb_part *pt = &q->part[j];
        for (uint32_t d = 0; d < pt->ndm; d++)
            q->trial_lat[pt->d0 + d] = tr_dedisp_trial_latency(pt->dd, d);
        if (pt->L > q->L) q->L = pt->L;
    }

    tr_candidates_config cc = tr_candidates_config_default();
    cc.backend = TR_BACKEND_CPU; /* the devices select the peaks (frb_device.c) */
    cc.nchan = q->ndm;
    cc.threshold = cfg->threshold;
    cc.link_time = cfg->link_time;
    cc.link_chan = cfg->link_dm;
    cc.link_width = cfg->link_width;
    cc.start_position = 0;
    cc.max_span = cfg->max_span;
    q->cand = tr_candidates_create(&cc, err);
    if (!q->cand) goto fail;
#ifdef TR_HAVE_CUDA
    if (tr_dedisp_backend(q->part[0].dd) == TR_BACKEND_CUDA &&
        tr_frb_device_setup(q, err) != TR_OK)
        goto fail;
#endif
    /* Host blocks: the device-resident chain needs only the zero spectra of
     * the flush, one block of them. */
    const size_t B = cfg->block;
    q->zeros = alloc_array(B * q->nchan, sizeof *q->zeros);
    if (!q->resident) {
        q->y = alloc_array(B * q->ndm, sizeof *q->y);
        q->snr = alloc_array(B * q->ndm, sizeof *q->snr);
        q->width = alloc_array(B * q->ndm, sizeof *q->width);
    }
    if (!q->zeros || (!q->resident && (!q->y || !q->snr || !q->width))) {
        tr_fail(err, TR_ERR_NOMEM,
                "frb: out of memory for blocks of %zu spectra x %u "
                "DM trials",
                B, q->ndm);
        goto fail;
    }
    /* The pointers of cfg are not kept (the stages copied what they need). */
    q->cfg.dedisp.plan.dm_list = NULL;
    q->cfg.dedisp.mask = NULL;
    q->cfg.search.norm.fixed_means = NULL;
    q->cfg.search.norm.fixed_sigmas = NULL;
    q->cfg.search.norm.fixed_mu_L = NULL;
    q->cfg.search.norm.fixed_sigma_L = NULL;
    return q;
fail:
    tr_frb_destroy(q);
    return NULL;
}

tr_status tr_frb_reset(tr_frb *q)
{
    if (!q) return TR_ERR_INVALID;
    tr_status st = TR_OK;
    for (uint32_t j = 0; j < q->npart && st == TR_OK; j++) {
        frb_part *pt = &q->part[j];
        st = tr_dedisp_reset(pt->dd);
        if (st == TR_OK) st = tr_boxcar_reset(pt->bx);
        pt->searched = 0;
        memset(&pt->timing, 0, sizeof pt->timing);
    }
    if (st == TR_OK) st = tr_candidates_reset(q->cand);
    if (st == TR_OK && q->split) st = tr_candidates_split_reset(q->split);
    if (st != TR_OK)
        return tr_fail(&q->err, st, "frb: reset failed: %s", tr_strerror(st));
    q->position = 0;
    q->merge = 0;
    q->ending = 0;
    q->total = 0;
    q->plane_n = 0;
    q->plane_first = 0;
    q->flushed = 0;
    tr_clear(&q->err);
    return TR_OK;
}

float *tr_frb_plane_grow(tr_frb *q, uint64_t first, size_t m)
{
    if (q->plane_n == 0) q->plane_first = (int64_t)first;
    const size_t need = (q->plane_n + m) * q->ndm;
    if (need > q->plane_cap) {
        size_t cap = q->plane_cap ? q->plane_cap : (size_t)q->ndm * 1024;
        while (cap < need)
            cap *= 2;
        float *p = realloc(q->plane, cap * sizeof *p);
        if (!p) {
            tr_fail(&q->err, TR_ERR_NOMEM, "frb: out of memory for the plane");
            return NULL;
        }
        q->plane = p;
        q->plane_cap = cap;
    }
    float *dst = q->plane + q->plane_n * q->ndm;
    q->plane_n += m;
    return dst;
}

/* Adds m dedispersed positions to the plane of the current call. */
static tr_status add_plane(tr_frb *q, const float *y, size_t m)
{
    if (!q->cfg.keep_plane || m == 0) return TR_OK;
    float *dst = tr_frb_plane_grow(q, q->part[0].searched, m);
    if (!dst) return TR_ERR_NOMEM;
    memcpy(dst, y, m * q->ndm * sizeof *y);
    return TR_OK;
}

static tr_status stage_error(tr_frb *q, tr_status st, const char *stage, const char *msg)
{
    return tr_fail(&q->err, st, "frb: %s: %s", stage, msg);
}

void tr_frb_mark_tail_host(const tr_frb *q, const frb_part *pt, uint64_t first,
                           float *snr, const int32_t *width, size_t n)
{
    const uint32_t *lat = q->trial_lat + pt->d0;
    for (size_t k = 0; k < n; k++)
        for (uint32_t d = 0; d < pt->ndm; d++) {
            const int32_t w = width[k * pt->ndm + d];
            if (first + k + (uint64_t)(w > 1 ? w - 1 : 0) + lat[d] >= q->total)
                snr[k * pt->ndm + d] = -INFINITY;
        }
}

/* The clustering of n search outputs of the host chain from position first
 * on (at the end of the data, the boxcars reaching an incomplete position
 * left out). */
static tr_status cluster(tr_frb *q, uint64_t first, float *snr, const int32_t *width,
                         size_t n)
{
    if (q->ending) tr_frb_mark_tail_host(q, &q->part[0], first, snr, width, n);
    const tr_status st =
        tr_boxcar_candidates_process(q->cand, q->part[0].bx, first, snr, width, n);
    if (st != TR_OK)
        return stage_error(q, st, "candidates", tr_candidates_last_error(q->cand));
    return TR_OK;
}

tr_status tr_frb_search_done(frb_part *pt, tr_status st, double t0, uint64_t bpos,
                             size_t m, size_t *skip, uint64_t *first)
{
    pt->timing.search += tr_frb_now() - t0;
    if (st != TR_OK)
        return tr_fail(&pt->err, st, "frb: search: %s", tr_boxcar_last_error(pt->bx));
    pt->searched += m;
    const uint64_t lat = tr_boxcar_latency(pt->bx);
    *skip = bpos >= lat ? 0 : (size_t)(lat - bpos < m ? lat - bpos : m);
    *first = bpos + *skip - lat;
    return TR_OK;
}

/* The search and the clustering of m <= FRB_SEARCH_PIECE positions. */
static tr_status search_piece(tr_frb *q, const float *y, size_t m)
{
    frb_part *pt = &q->part[0];
    const uint64_t bpos = tr_boxcar_position(pt->bx);
    const double t0 = tr_frb_now();
    size_t skip = 0;
    uint64_t first = 0;
    tr_status st =
        tr_frb_search_done(pt, tr_boxcar_process(pt->bx, y, m, q->snr, q->width), t0,
                           bpos, m, &skip, &first);
    if (st != TR_OK) {
        q->err = pt->err;
        return st;
    }
    const double t1 = tr_frb_now();
    st = cluster(q, first, q->snr + skip * q->ndm, q->width + skip * q->ndm, m - skip);
    pt->timing.candidates += tr_frb_now() - t1;
    return st;
}

/* The search and the clustering of m dedispersed positions. */
static tr_status search(tr_frb *q, const float *y, size_t m)
{
    if (m == 0) return TR_OK;
    tr_status st = add_plane(q, y, m);
    if (st != TR_OK) return st;
    for (size_t k = 0; k < m && st == TR_OK; k += FRB_SEARCH_PIECE)
        st = search_piece(q, y + k * q->ndm,
                          m - k < FRB_SEARCH_PIECE ? m - k : FRB_SEARCH_PIECE);
    return st;
}

/* Dedisperse n <= block spectra (x: floats, or raw bytes when raw is set) and
 * search the complete positions they finish. */
static tr_status step(tr_frb *q, const float *x, const void *raw, size_t n)
{
    frb_part *pt = &q->part[0];
    const uint64_t pin = q->position;
    const double t0 = tr_frb_now();
    const tr_status st = raw ? tr_dedisp_process_raw(pt->dd, raw, n, q->y)
                             : tr_dedisp_process(pt->dd, x, n, q->y);
    pt->timing.dedisp += tr_frb_now() - t0;
    if (st != TR_OK)
        return stage_error(q, st, "dedispersion", tr_dedisp_last_error(pt->dd));
    q->position += n;
    /* Output k is position pin - L + k: the first L overall are negative. */
    const size_t skip = pin >= q->L ? 0 : (size_t)(q->L - pin < n ? q->L - pin : n);
    return search(q, q->y + skip * q->ndm, n - skip);
}

static tr_status run(tr_frb *q, const float *x, const void *raw, size_t n)
{
    if (!q) return TR_ERR_INVALID;
    if (q->flushed)
        return tr_fail(&q->err, TR_ERR_STATE, "frb: process after flush (reset first)");
    if (n && !x && !raw) return tr_fail(&q->err, TR_ERR_INVALID, "frb: input is NULL");
    q->plane_n = 0;
#ifdef TR_HAVE_CUDA
    if (q->resident) return tr_frb_device_run(q, x, raw, n);
#endif
    const size_t bytes = raw ? (size_t)q->nchan * q->cfg.dedisp.raw_nbits / 8 : 0;
    for (size_t k = 0; k < n;) {
        const size_t len = n - k < q->cfg.block ? n - k : q->cfg.block;
        const uint8_t *rk = raw ? (const uint8_t *)raw + k * bytes : NULL;
        const float *xk = raw ? NULL : x + k * (size_t)q->nchan;
        const tr_status st = step(q, xk, rk, len);
        if (st != TR_OK) return st;
        k += len;
    }
    return TR_OK;
}

tr_status tr_frb_process(tr_frb *q, const float *x, size_t n)
{
    return run(q, x, NULL, n);
}

tr_status tr_frb_process_raw(tr_frb *q, const void *raw, size_t n)
{
    if (q && n && !raw) return tr_fail(&q->err, TR_ERR_INVALID, "frb: input is NULL");
    return run(q, NULL, raw, n);
}

/* The host chain's end of the data. */
static tr_status flush_host(tr_frb *q)
{
    frb_part *pt = &q->part[0];
    const uint64_t N = q->total;
    /* The last L positions: L zero spectra through the dedispersion, without
     * counting them as data; a position p of trial d is complete when
     * p + trial_lat[d] < N, otherwise NaN. */
    for (uint32_t left = q->L; left > 0;) {
        const size_t len = left < q->cfg.block ? left : q->cfg.block;
        const uint64_t pin = tr_dedisp_position(pt->dd);
        const double t0 = tr_frb_now();
        tr_status st = tr_dedisp_process(pt->dd, q->zeros, len, q->y);
        pt->timing.dedisp += tr_frb_now() - t0;
        if (st != TR_OK)
            return stage_error(q, st, "dedispersion", tr_dedisp_last_error(pt->dd));
        left -= (uint32_t)len;
        const size_t skip =
            pin >= q->L ? 0 : (size_t)(q->L - pin < len ? q->L - pin : len);
        const size_t m = len - skip;
        float *y = q->y + skip * q->ndm;
        for (size_t k = 0; k < m; k++) {
            const uint64_t p = pt->searched + k;
            for (uint32_t d = 0; d < q->ndm; d++)
                if (p + q->trial_lat[d] >= N) y[k * q->ndm + d] = NAN;
        }
        st = search(q, y, m);
        if (st != TR_OK) return st;
    }
    /* The search's last latency positions, then every open candidate. */
    const uint32_t lat = tr_boxcar_latency(pt->bx);
    const uint64_t bpos = tr_boxcar_position(pt->bx);
    float *snr = alloc_array((size_t)lat * q->ndm + 1, sizeof *snr);
    int32_t *width = alloc_array((size_t)lat * q->ndm + 1, sizeof *width);
    tr_status st = snr && width ? TR_OK : TR_ERR_NOMEM;
    if (st == TR_OK) {
        st = tr_boxcar_flush(pt->bx, snr, width);
        if (st != TR_OK) stage_error(q, st, "search", tr_boxcar_last_error(pt->bx));
    } else {
        tr_fail(&q->err, st, "frb: out of memory for the search flush");
    }
    if (st == TR_OK) {
        /* Flush output k is position bpos - lat + k. */
        const size_t skip = bpos >= lat ? 0 : (size_t)(lat - bpos);
        st = cluster(q, bpos + skip - lat, snr + skip * q->ndm, width + skip * q->ndm,
                     lat - skip);
    }
    free(snr);
    free(width);
    return st;
}

tr_status tr_frb_flush(tr_frb *q)
{
    if (!q) return TR_ERR_INVALID;
    if (q->flushed) return tr_fail(&q->err, TR_ERR_STATE, "frb: flush called twice");
    q->plane_n = 0;
    q->ending = 1;
    q->total = q->position;
    tr_status st;
#ifdef TR_HAVE_CUDA
    if (q->resident)
        st = tr_frb_device_flush(q);
    else
#endif
        st = flush_host(q);
    if (st != TR_OK) return st;
    const double t0 = tr_frb_now();
    st = tr_candidates_flush(q->cand);
    q->merge += tr_frb_now() - t0;
    if (st != TR_OK)
        return stage_error(q, st, "candidates", tr_candidates_last_error(q->cand));
    q->flushed = 1;
    return TR_OK;
}

size_t tr_frb_read(tr_frb *q, tr_frb_candidate *out, size_t cap)
{
    if (!q || !out) return 0;
    const double tsamp = q->cfg.dedisp.plan.tsamp;
    size_t done = 0;
    while (done < cap) {
        const size_t want = cap - done < q->tmp_cap ? cap - done : q->tmp_cap;
        const size_t got = tr_candidates_read(q->cand, q->tmp, want);
        for (size_t i = 0; i < got; i++) {
            const tr_candidate *e = &q->tmp[i];
            tr_frb_candidate *o = &out[done + i];
            o->dm = q->dms[e->channel];
            o->sample = e->peak;
            o->time = (double)e->peak * tsamp;
            o->start = e->start;
            o->width = e->width;
            o->snr = e->snr;
            o->members = e->members;
            o->dm_index = e->channel;
            o->dm_index_lo = e->chan_lo;
            o->dm_index_hi = e->chan_hi;
            o->first = e->first;
            o->end = e->end;
            o->truncated = e->truncated;
        }
        done += got;
        if (got < want) break;
    }
    return done;
}

tr_status tr_frb_plane(const tr_frb *q, const float **plane, size_t *n, int64_t *first)
{
    if (!q || !plane || !n) return TR_ERR_INVALID;
    if (!q->cfg.keep_plane) return TR_ERR_STATE;
    *plane = q->plane;
    *n = q->plane_n;
    if (first) *first = q->plane_first;
    return TR_OK;
}

tr_status tr_frb_set_threshold(tr_frb *q, float threshold)
{
    if (!q) return TR_ERR_INVALID;
    const tr_status st = tr_candidates_set_threshold(q->cand, threshold);
    if (st != TR_OK)
        return stage_error(q, st, "candidates", tr_candidates_last_error(q->cand));
    q->cfg.threshold = threshold;
    return TR_OK;
}

tr_frb_timing tr_frb_get_timing(const tr_frb *q)
{
    tr_frb_timing t = {0, 0, 0};
    if (!q) return t;
    /* the devices run side by side: each stage took as long as its slowest */
    for (uint32_t j = 0; j < q->npart; j++) {
        const tr_frb_timing *p = &q->part[j].timing;
        if (p->dedisp > t.dedisp) t.dedisp = p->dedisp;
        if (p->search > t.search) t.search = p->search;
        if (p->candidates > t.candidates) t.candidates = p->candidates;
    }
    t.candidates += q->merge;
    return t;
}

uint32_t tr_frb_ndm(const tr_frb *q)
{
    return q ? q->ndm : 0;
}
const double *tr_frb_dms(const tr_frb *q)
{
    return q ? q->dms : NULL;
}
uint32_t tr_frb_max_delay(const tr_frb *q)
{
    return q ? q->L : 0;
}
uint32_t tr_frb_latency(const tr_frb *q)
{
    return q ? q->L + tr_boxcar_latency(q->part[0].bx) : 0;
}
uint32_t tr_frb_warmup(const tr_frb *q)
{
    return q ? tr_boxcar_norm_window(tr_boxcar_get_norm(q->part[0].bx)) : 0;
}
uint64_t tr_frb_position(const tr_frb *q)
{
    return q ? q->position : 0;
}
uint64_t tr_frb_searched(const tr_frb *q)
{
    if (!q) return 0;
    uint64_t m = q->part[0].searched;
    for (uint32_t j = 1; j < q->npart; j++)
        if (q->part[j].searched < m) m = q->part[j].searched;
    return m;
}
uint32_t tr_frb_ndevices(const tr_frb *q)
{
    return q ? q->npart : 0;
}
uint64_t tr_frb_peaks(const tr_frb *q)
{
    return q ? tr_candidates_peaks(q->cand) : 0;
}
size_t tr_frb_pending(const tr_frb *q)
{
    return q ? tr_candidates_pending(q->cand) : 0;
}
tr_backend tr_frb_backend(const tr_frb *q)
{
    return q ? tr_dedisp_backend(q->part[0].dd) : TR_BACKEND_CPU;
}
int tr_frb_device_resident(const tr_frb *q)
{
    return q ? q->resident : 0;
}
void *tr_frb_host_alloc(const tr_frb *q, size_t bytes)
{
    return q ? tr_dedisp_host_alloc(q->part[0].dd, bytes) : NULL;
}
void tr_frb_host_free(const tr_frb *q, void *p)
{
    if (q) tr_dedisp_host_free(q->part[0].dd, p);
}
int tr_frb_flushed(const tr_frb *q)
{
    return q ? q->flushed : 0;
}
const char *tr_frb_last_error(const tr_frb *q)
{
    return q ? q->err.message : "frb: NULL";
}
