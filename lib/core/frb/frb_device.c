/*
 * FRB search object, the device-resident chain (CUDA backend, FAST search
 * without baseline removal, statistics windows the device search takes):
 * the DM trials split over one or several GPUs, each part's spectra going up
 * once, its plane, S/N and widths staying on its device (dedispersion, search
 * with its statistics measured there, peak selection, the end-of-data
 * marking), the parts' peaks merged into one clustering on the host.
 *
 * Papers: B. R. Barsdell et al., "Accelerating incoherent dedispersion"
 * (MNRAS 422, 379, 2012); K. Adamek, W. Armour, "Single Pulse Detection
 * Algorithms for Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56,
 * 2020).
 *
 * Each call's spectra go through every part (one host thread per part when
 * there are several: each part's stages return when their results are in
 * place, so the devices overlap only when driven from threads of their own),
 * then the main thread merges the peaks of the positions every part has
 * searched (tr_candidates_split_merge). Only the candidates, the search's
 * last latency positions at the flush when they exceed one block and, with
 * keep_plane (one part), the plane come back.
 */
#define _POSIX_C_SOURCE 200809L
#include "frb/frb_internal.h"

#include "common/core_util.h"
#include "frb/frb_cuda.h"

#include <math.h>
#include <stdlib.h>

/*
 * Part pt's device buffers for one block, when its search can take device
 * samples: (WHITE, LEVELS) a statistics window the device normalisation
 * takes, which one probe sample shows (the search is reset afterwards).
 * *ok = 0 otherwise.
 */
static tr_status part_setup(tr_frb *q, frb_part *pt, int *ok, tr_error *err)
{
    tr_cuda_frb *dev = NULL;
    tr_status st = tr_cuda_frb_create(pt->device, q->cfg.block, q->nchan, pt->ndm,
                                      q->trial_lat + pt->d0, &dev, err);
    if (st != TR_OK) return st;
    pt->dev = dev;
    /* One probe position of zeros (total 0: every value is past the end). */
    st = tr_cuda_frb_mark_tail(dev, tr_cuda_frb_plane(dev), NULL, 1, 0, 0, 0.0f, err);
    if (st != TR_OK) return st;
    const tr_status probe = tr_boxcar_process_device(
        pt->bx, tr_cuda_frb_plane(dev), 1, tr_cuda_frb_snr(dev), tr_cuda_frb_width(dev));
    if (probe != TR_OK && probe != TR_ERR_UNSUPPORTED)
        return tr_fail(err, probe, "frb: search: %s", tr_boxcar_last_error(pt->bx));
    st = tr_boxcar_reset(pt->bx);
    if (st != TR_OK)
        return tr_fail(err, st, "frb: search: %s", tr_boxcar_last_error(pt->bx));
    *ok = probe == TR_OK;
    return TR_OK;
}

/* Part j's set-up (on the pool with several parts). */
static void part_setup_task(void *arg, size_t j)
{
    tr_frb *q = arg;
    frb_part *pt = &q->part[j];
    int ok = 0;
    tr_clear(&pt->err);
    pt->st = part_setup(q, pt, &ok, &pt->err);
    pt->device_search = ok;
}

tr_status tr_frb_device_setup(tr_frb *q, tr_error *err)
{
    const tr_boxcar_config *sc = &q->cfg.search;
    int ok =
        sc->variant == TR_VARIANT_FAST && sc->norm.baseline == TR_BOXCAR_BASELINE_NONE;
    if (ok) {
        /* the devices' buffers and probes side by side */
        tr_pool_run(q->pool, part_setup_task, q, q->npart);
        const tr_status st = tr_frb_parts_status(q, err);
        if (st != TR_OK) return st;
        for (uint32_t j = 0; j < q->npart; j++)
            ok &= q->part[j].device_search;
    }
    if (!ok) {
        for (uint32_t j = 0; j < q->npart; j++) {
            tr_cuda_frb_destroy((tr_cuda_frb *)q->part[j].dev);
            q->part[j].dev = NULL;
        }
        if (q->npart == 1) return TR_OK; /* the host chain */
        return tr_fail(err, TR_ERR_UNSUPPORTED,
                       "frb: %u devices need the device-resident chain: the FAST search "
                       "without baseline removal and a statistics window that is a "
                       "multiple of the search kernel's tile (docs/frb.md, Backends)",
                       q->npart);
    }
    uint32_t nchan[TR_FRB_MAX_DEVICES];
    int devices[TR_FRB_MAX_DEVICES];
    for (uint32_t j = 0; j < q->npart; j++) {
        nchan[j] = q->part[j].ndm;
        devices[j] = q->part[j].device;
    }
    q->split = tr_candidates_split_create(q->cand, q->npart, nchan, devices, err);
    if (!q->split) return err ? err->code : TR_ERR_NOMEM;
    q->resident = 1;
    return TR_OK;
}

/*
 * Part j's n search outputs of positions first .. first + n - 1 (on its
 * device, or on the host when on_device is 0) to the peak selection; at the
 * end of the data, the outputs whose boxcar reaches an incomplete position
 * are set to -inf first.
 */
static tr_status part_select(tr_frb *q, uint32_t j, uint64_t first, float *snr,
                             int32_t *width, size_t n, int on_device)
{
    if (n == 0) return TR_OK;
    frb_part *pt = &q->part[j];
    const double t0 = tr_frb_now();
    tr_status st = TR_OK;
    if (q->ending && on_device)
        st = tr_cuda_frb_mark_tail((tr_cuda_frb *)pt->dev, snr, width, n, first, q->total,
                                   -INFINITY, &pt->err);
    else if (q->ending)
        tr_frb_mark_tail_host(q, pt, first, snr, width, n);
    if (st == TR_OK)
        st = tr_boxcar_candidates_split_select(q->split, j, pt->bx, first, snr, width, n,
                                               on_device, &pt->err);
    pt->timing.candidates += tr_frb_now() - t0;
    return st;
}

/* Part j's search and peak selection of m <= block positions of its device
 * plane d_y (pt->searched on); the plane comes down only for keep_plane. */
static tr_status part_search(tr_frb *q, uint32_t j, const float *d_y, size_t m)
{
    if (m == 0) return TR_OK;
    frb_part *pt = &q->part[j];
    tr_cuda_frb *dev = (tr_cuda_frb *)pt->dev;
    tr_status st;
    if (q->cfg.keep_plane) { /* one part only (check_config) */
        float *dst = tr_frb_plane_grow(q, pt->searched, m);
        if (!dst)
            return tr_fail(&pt->err, TR_ERR_NOMEM, "frb: out of memory for the plane");
        st = tr_cuda_frb_download(dev, dst, d_y, m * pt->ndm, &pt->err);
        if (st != TR_OK) return st;
    }
    float *d_snr = tr_cuda_frb_snr(dev);
    int32_t *d_width = tr_cuda_frb_width(dev);
    const uint64_t bpos = tr_boxcar_position(pt->bx);
    const double t0 = tr_frb_now();
    size_t skip = 0;
    uint64_t first = 0;
    st = tr_frb_search_done(pt, tr_boxcar_process_device(pt->bx, d_y, m, d_snr, d_width),
                            t0, bpos, m, &skip, &first);
    if (st != TR_OK) return st;
    const size_t off = skip * pt->ndm;
    return part_select(q, j, first, d_snr + off, d_width + off, m - skip, 1);
}

/* Part j: n <= block spectra up (or the packed ones, unpacked there),
 * dedispersed into its device plane; output k is position pin - L + k. */
static tr_status part_step(tr_frb *q, uint32_t j, const float *x, const void *raw,
                           size_t n)
{
    frb_part *pt = &q->part[j];
    tr_cuda_frb *dev = (tr_cuda_frb *)pt->dev;
    float *d_y = tr_cuda_frb_plane(dev);
    const uint64_t pin = tr_dedisp_position(pt->dd);
    const double t0 = tr_frb_now();
    tr_status st = TR_OK;
    if (raw) {
        st = tr_dedisp_process_raw_device(pt->dd, raw, n, d_y);
    } else {
        st = tr_cuda_frb_upload(dev, x, n, &pt->err);
        if (st != TR_OK) return st;
        st = tr_dedisp_process_device(pt->dd, tr_cuda_frb_spectra(dev), n, d_y);
    }
    pt->timing.dedisp += tr_frb_now() - t0;
    if (st != TR_OK)
        return tr_fail(&pt->err, st, "frb: dedispersion: %s",
                       tr_dedisp_last_error(pt->dd));
    const size_t skip = pin >= pt->L ? 0 : (size_t)(pt->L - pin < n ? pt->L - pin : n);
    return part_search(q, j, d_y + skip * pt->ndm, n - skip);
}

/* Part j's search flush: its last latency positions, selected on the device
 * when they fit one block, else brought down once. */
static tr_status part_flush_search(tr_frb *q, uint32_t j)
{
    frb_part *pt = &q->part[j];
    tr_cuda_frb *dev = (tr_cuda_frb *)pt->dev;
    const uint32_t lat = tr_boxcar_latency(pt->bx);
    const uint64_t bpos = tr_boxcar_position(pt->bx);
    /* Flush output k is position bpos - lat + k. */
    const size_t skip = bpos >= lat ? 0 : (size_t)(lat - bpos);
    const size_t off = skip * pt->ndm;
    const int on_device = lat <= q->cfg.block;
    float *snr = on_device ? tr_cuda_frb_snr(dev) : NULL;
    int32_t *width = on_device ? tr_cuda_frb_width(dev) : NULL;
    if (!on_device) {
        const size_t nv = (size_t)lat * pt->ndm;
        snr = nv <= SIZE_MAX / sizeof *snr ? malloc(nv * sizeof *snr) : NULL;
        width = nv <= SIZE_MAX / sizeof *width ? malloc(nv * sizeof *width) : NULL;
        if (!snr || !width) {
            free(snr);
            free(width);
            return tr_fail(&pt->err, TR_ERR_NOMEM,
                           "frb: out of memory for the search flush");
        }
    }
    const double t0 = tr_frb_now();
    tr_status st = on_device ? tr_boxcar_flush_device(pt->bx, snr, width)
                             : tr_boxcar_flush(pt->bx, snr, width);
    pt->timing.search += tr_frb_now() - t0;
    if (st != TR_OK)
        tr_fail(&pt->err, st, "frb: search: %s", tr_boxcar_last_error(pt->bx));
    else
        st = part_select(q, j, bpos + skip - lat, snr + off, width + off, lat - skip,
                         on_device);
    if (!on_device) {
        free(snr);
        free(width);
    }
    return st;
}

/* Part j's end of the data: its L zero spectra dedispersed on the device,
 * the incomplete positions of every trial set to NaN there, searched, then
 * the search's flush. */
static tr_status part_flush(tr_frb *q, uint32_t j)
{
    frb_part *pt = &q->part[j];
    tr_cuda_frb *dev = (tr_cuda_frb *)pt->dev;
    float *d_y = tr_cuda_frb_plane(dev);
    for (uint32_t left = pt->L; left > 0;) {
        const size_t len = left < q->cfg.block ? left : q->cfg.block;
        const uint64_t pin = tr_dedisp_position(pt->dd);
        const double t0 = tr_frb_now();
        tr_status st = tr_cuda_frb_upload(dev, q->zeros, len, &pt->err);
        if (st != TR_OK) return st;
        st = tr_dedisp_process_device(pt->dd, tr_cuda_frb_spectra(dev), len, d_y);
        pt->timing.dedisp += tr_frb_now() - t0;
        if (st != TR_OK)
            return tr_fail(&pt->err, st, "frb: dedispersion: %s",
                           tr_dedisp_last_error(pt->dd));
        left -= (uint32_t)len;
        const size_t skip =
            pin >= pt->L ? 0 : (size_t)(pt->L - pin < len ? pt->L - pin : len);
        float *y = d_y + skip * pt->ndm;
        st = tr_cuda_frb_mark_tail(dev, y, NULL, len - skip, pt->searched, q->total, NAN,
                                   &pt->err);
        if (st == TR_OK) st = part_search(q, j, y, len - skip);
        if (st != TR_OK) return st;
    }
    return part_flush_search(q, j);
}

/* What the parts are given: spectra (x or raw) of one step, or nothing (the
 * flush). */
typedef struct {
    tr_frb *q;
    const float *x;
    const void *raw;
    size_t n;
    int flush;
} part_task;

static void run_part(void *arg, size_t j)
{
    const part_task *t = arg;
    frb_part *pt = &t->q->part[j];
    pt->st = t->flush ? part_flush(t->q, (uint32_t)j)
                      : part_step(t->q, (uint32_t)j, t->x, t->raw, t->n);
}

/* The task on every part (side by side on the pool with several), then the
 * merge of what all of them have searched. */
static tr_status each_part(tr_frb *q, const part_task *t)
{
    tr_pool_run(q->pool, run_part, (void *)t, q->npart);
    const tr_status pst = tr_frb_parts_status(q, &q->err);
    if (pst != TR_OK) return pst;
    const double t0 = tr_frb_now();
    tr_error e;
    const tr_status st = tr_candidates_split_merge(q->split, &e);
    q->merge += tr_frb_now() - t0;
    if (st != TR_OK) return tr_fail(&q->err, st, "frb: %s", e.message);
    return TR_OK;
}

tr_status tr_frb_device_run(tr_frb *q, const float *x, const void *raw, size_t n)
{
    const size_t bytes = raw ? (size_t)q->nchan * q->cfg.dedisp.raw_nbits / 8 : 0;
    for (size_t k = 0; k < n;) {
        const size_t len = n - k < q->cfg.block ? n - k : q->cfg.block;
        part_task t = {q, NULL, NULL, len, 0};
        if (raw)
            t.raw = (const uint8_t *)raw + k * bytes;
        else
            t.x = x + k * (size_t)q->nchan;
        const tr_status st = each_part(q, &t);
        if (st != TR_OK) return st;
        q->position += len;
        k += len;
    }
    return TR_OK;
}

tr_status tr_frb_device_flush(tr_frb *q)
{
    const part_task t = {q, NULL, NULL, 0, 1};
    return each_part(q, &t);
}
