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
 * CUDA backend, device-resident (FAST search, no baseline removal): the
 * spectra go up once, the plane, the S/N and the widths stay on the device
 * (dedispersion, search with its statistics measured there, clustering),
 * the end-of-data marking runs there too; only the candidates, the search's
 * last latency positions at the flush and, with keep_plane, the plane come
 * back. Otherwise both stages run through their host entry points (the plane
 * comes back to the host for the normalisation and goes up for the search).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <transient/frb.h>

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

struct tr_frb {
    tr_frb_config cfg; /* validated configuration (pointers cleared) */
    tr_dedisp *dd;     /* dedispersion */
    tr_boxcar *bx;     /* normalisation + search, nchan = ndm */
    tr_candidates *cand;
    uint32_t ndm;
    uint32_t nchan;
    uint32_t L;          /* largest delay */
    uint32_t *trial_lat; /* largest delay of each trial */
    float *y;            /* block * ndm dedispersed */
    float *snr;          /* block * ndm search outputs */
    int32_t *width;
    float *zeros; /* block * nchan zero spectra (the end of the data) */
    float *plane; /* keep_plane: the plane of the last call */
    size_t plane_n, plane_cap;
    int64_t plane_first;
    tr_candidate *tmp; /* tr_candidates_read scratch */
    size_t tmp_cap;
    uint64_t position;    /* spectra consumed */
    uint64_t searched;    /* dedispersed positions given to the search */
    tr_frb_timing timing; /* seconds per stage */
    int ending;           /* flush under way: total is the number of spectra */
    uint64_t total;
    int flushed;
    int resident; /* the chain runs on the device (docs/frb.md, Backends) */
    void *dev;    /* tr_cuda_frb: the device chain's buffers (resident) */
    tr_error err;
};

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
    return TR_OK;
}

void tr_frb_destroy(tr_frb *q)
{
    if (!q) return;
    tr_candidates_destroy(q->cand);
    tr_boxcar_destroy(q->bx);
    tr_dedisp_destroy(q->dd);
#ifdef TR_HAVE_CUDA
    tr_cuda_frb_destroy((tr_cuda_frb *)q->dev);
#endif
    free(q->trial_lat);
    free(q->y);
    free(q->snr);
    free(q->width);
    free(q->zeros);
    free(q->plane);
    free(q->tmp);
    free(q);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *alloc_array(size_t n, size_t size)
{
    return n && n <= SIZE_MAX / size ? calloc(n, size) : NULL;
}

/* Spectra per dedispersion call of the device-resident chain: a whole
 * block (the plane buffer holds what one search call takes). The device
 * statistics keep every window a call's outputs reach (their ring grows
 * with the call), so the search needs no host-path pieces here. */
static size_t device_step(const tr_frb *q)
{
    return q->cfg.block;
}

#ifdef TR_HAVE_CUDA
/*
 * The device-resident chain's buffers, when the search can take device
 * samples: the FAST variant without baseline removal, and (WHITE, LEVELS) a
 * statistics window the device normalisation takes, which one probe sample
 * shows (the search is reset afterwards). Otherwise q->resident stays 0.
 */
static tr_status device_setup(tr_frb *q, tr_error *err)
{
    const tr_boxcar_config *sc = &q->cfg.search;
    if (sc->variant != TR_VARIANT_FAST || sc->norm.baseline != TR_BOXCAR_BASELINE_NONE)
        return TR_OK;
    tr_cuda_frb *dev = NULL;
    tr_status st = tr_cuda_frb_create(q->cfg.device, device_step(q), q->nchan, q->ndm,
                                      q->trial_lat, &dev, err);
    if (st != TR_OK) return st;
    q->dev = dev;
    /* One probe position of zeros (total 0: every value is past the end). */
    st = tr_cuda_frb_mark_tail(dev, tr_cuda_frb_plane(dev), NULL, 1, 0, 0, 0.0f, err);
    if (st != TR_OK) return st;
    const tr_status probe = tr_boxcar_process_device(
        q->bx, tr_cuda_frb_plane(dev), 1, tr_cuda_frb_snr(dev), tr_cuda_frb_width(dev));
    if (probe != TR_OK && probe != TR_ERR_UNSUPPORTED)
        return tr_fail(err, probe, "frb: search: %s", tr_boxcar_last_error(q->bx));
    st = tr_boxcar_reset(q->bx);
    if (st != TR_OK)
        return tr_fail(err, st, "frb: search: %s", tr_boxcar_last_error(q->bx));
    if (probe == TR_OK) {
        q->resident = 1;
        return TR_OK;
    }
    tr_cuda_frb_destroy(dev);
    q->dev = NULL;
    return TR_OK;
}
#endif

tr_frb *tr_frb_create(const tr_frb_config *cfg, tr_error *err)
{
    tr_clear(err);
    if (!cfg) {
        tr_fail(err, TR_ERR_INVALID, "frb: cfg is NULL");
        return NULL;
    }
    if (check_config(cfg, err) != TR_OK) return NULL;
    tr_frb *q = calloc(1, sizeof *q);
    if (!q) {
        tr_fail(err, TR_ERR_NOMEM, "frb: out of memory");
        return NULL;
    }
    q->cfg = *cfg;

    /* Dedispersion decides the backend (AUTO falls back to the CPU without a
     * device); the search follows it. */
    tr_dedisp_config dc = cfg->dedisp;
    dc.backend = cfg->backend;
    dc.device = cfg->device;
    dc.device_layout = TR_DEDISP_SAMPLE_MAJOR;
    q->dd = tr_dedisp_create(&dc, err);
    if (!q->dd) goto fail;
    q->ndm = tr_dedisp_ndm(q->dd);
    q->nchan = tr_dedisp_nchan(q->dd);
    q->L = tr_dedisp_latency(q->dd);

    tr_boxcar_config bc = cfg->search;
    bc.nchan = q->ndm;
    bc.backend = tr_dedisp_backend(q->dd);
    bc.device = cfg->device;
    bc.device_layout = TR_BOXCAR_TIME_MAJOR;
    bc.stage_outputs = 0;
    q->bx = tr_boxcar_create(&bc, err);
    if (!q->bx) goto fail;

    q->trial_lat = alloc_array(q->ndm, sizeof *q->trial_lat);
    q->tmp_cap = 256;
    q->tmp = alloc_array(q->tmp_cap, sizeof *q->tmp);
    if (!q->trial_lat || !q->tmp) {
        tr_fail(err, TR_ERR_NOMEM, "frb: out of memory for %u DM trials", q->ndm);
        goto fail;
    }
    for (uint32_t d = 0; d < q->ndm; d++) {
        uint32_t m = 0;
        for (uint32_t c = 0; c < q->nchan; c++) {
            const uint32_t v = tr_dedisp_channel_delay(q->dd, d, c);
            if (v > m) m = v;
        }
        q->trial_lat[d] = m;
    }
#ifdef TR_HAVE_CUDA
    if (bc.backend == TR_BACKEND_CUDA && device_setup(q, err) != TR_OK) goto fail;
#endif
    /* Host blocks: the device-resident chain needs only the zero spectra of
     * the flush, one device step of them. */
    const size_t B = q->resident ? device_step(q) : cfg->block;
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

    tr_candidates_config cc = tr_candidates_config_default();
    cc.backend = q->resident ? TR_BACKEND_CUDA : TR_BACKEND_CPU;
    cc.device = cfg->device;
    cc.nchan = q->ndm;
    cc.threshold = cfg->threshold;
    cc.link_time = cfg->link_time;
    cc.link_chan = cfg->link_dm;
    cc.link_width = cfg->link_width;
    cc.start_position = 0;
    cc.max_span = cfg->max_span;
    q->cand = tr_candidates_create(&cc, err);
    if (!q->cand) goto fail;
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
    tr_status st = tr_dedisp_reset(q->dd);
    if (st == TR_OK) st = tr_boxcar_reset(q->bx);
    if (st == TR_OK) st = tr_candidates_reset(q->cand);
    if (st != TR_OK)
        return tr_fail(&q->err, st, "frb: reset failed: %s", tr_strerror(st));
    q->position = 0;
    q->searched = 0;
    q->ending = 0;
    q->total = 0;
    memset(&q->timing, 0, sizeof q->timing);
    q->plane_n = 0;
    q->plane_first = 0;
    q->flushed = 0;
    tr_clear(&q->err);
    return TR_OK;
}

/* Room for m more positions in the plane of the current call (keep_plane). */
static float *plane_grow(tr_frb *q, size_t m)
{
    if (q->plane_n == 0) q->plane_first = (int64_t)q->searched;
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
    float *dst = plane_grow(q, m);
    if (!dst) return TR_ERR_NOMEM;
    memcpy(dst, y, m * q->ndm * sizeof *y);
    return TR_OK;
}

static tr_status stage_error(tr_frb *q, tr_status st, const char *stage, const char *msg)
{
    return tr_fail(&q->err, st, "frb: %s: %s", stage, msg);
}

/*
 * The clustering of n search outputs from position first on. At the end of
 * the data, an output whose boxcar reaches an incomplete position of its
 * trial is left out (-inf): its sum holds the replacements of the NaN
 * samples, measured in another window than its start's, not data.
 */
static tr_status cluster(tr_frb *q, uint64_t first, float *snr, const int32_t *width,
                         size_t n)
{
    for (size_t k = 0; q->ending && k < n; k++)
        for (uint32_t d = 0; d < q->ndm; d++) {
            const int32_t w = width[k * q->ndm + d];
            if (first + k + (uint64_t)(w > 1 ? w - 1 : 0) + q->trial_lat[d] >= q->total)
                snr[k * q->ndm + d] = -INFINITY;
        }
    const tr_status st =
        tr_boxcar_candidates_process(q->cand, q->bx, first, snr, width, n);
    if (st != TR_OK)
        return stage_error(q, st, "candidates", tr_candidates_last_error(q->cand));
    return TR_OK;
}

/* The search and the clustering of m <= FRB_SEARCH_PIECE positions. */
/*
 * The bookkeeping after a search call (status st, begun at t0 with the search
 * at position bpos) of m positions: its time, the outputs at negative
 * positions to skip (output k is position bpos - latency + k) and the
 * position of the first one kept.
 */
static tr_status searched(tr_frb *q, tr_status st, double t0, uint64_t bpos, size_t m,
                          size_t *skip, uint64_t *first)
{
    q->timing.search += now_s() - t0;
    if (st != TR_OK) return stage_error(q, st, "search", tr_boxcar_last_error(q->bx));
    q->searched += m;
    const uint64_t lat = tr_boxcar_latency(q->bx);
    *skip = bpos >= lat ? 0 : (size_t)(lat - bpos < m ? lat - bpos : m);
    *first = bpos + *skip - lat;
    return TR_OK;
}

static tr_status search_piece(tr_frb *q, const float *y, size_t m)
{
    const uint64_t bpos = tr_boxcar_position(q->bx);
    const double t0 = now_s();
    size_t skip = 0;
    uint64_t first = 0;
    tr_status st = searched(q, tr_boxcar_process(q->bx, y, m, q->snr, q->width), t0, bpos,
                            m, &skip, &first);
    if (st != TR_OK) return st;
    const double t1 = now_s();
    st = cluster(q, first, q->snr + skip * q->ndm, q->width + skip * q->ndm, m - skip);
    q->timing.candidates += now_s() - t1;
    return st;
}

/* The search and the clustering of m dedispersed positions (q->searched on). */
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
#ifdef TR_HAVE_CUDA
/* cluster() on the device: n search outputs in device memory from position
 * first on; at the end of the data, the outputs whose boxcar reaches an
 * incomplete position are set to -inf there first. */
static tr_status cluster_device(tr_frb *q, uint64_t first, float *d_snr, int32_t *d_width,
                                size_t n)
{
    const double t0 = now_s();
    if (q->ending && n > 0) {
        const tr_status st =
            tr_cuda_frb_mark_tail((tr_cuda_frb *)q->dev, d_snr, d_width, n, first,
                                  q->total, -INFINITY, &q->err);
        if (st != TR_OK) return st;
    }
    const tr_status st =
        tr_boxcar_candidates_process_device(q->cand, q->bx, first, d_snr, d_width, n);
    q->timing.candidates += now_s() - t0;
    if (st != TR_OK)
        return stage_error(q, st, "candidates", tr_candidates_last_error(q->cand));
    return TR_OK;
}

/* The device-resident search and clustering of m <= device_step positions of
 * the device plane d_y (q->searched on); the plane comes down only for
 * keep_plane. At the end of the data, the outputs whose boxcar reaches an
 * incomplete position are set to -inf on the device (as cluster does). */
static tr_status search_device(tr_frb *q, const float *d_y, size_t m)
{
    if (m == 0) return TR_OK;
    tr_cuda_frb *dev = (tr_cuda_frb *)q->dev;
    tr_status st;
    if (q->cfg.keep_plane) {
        float *dst = plane_grow(q, m);
        if (!dst) return TR_ERR_NOMEM;
        st = tr_cuda_frb_download(dev, dst, d_y, m * q->ndm, &q->err);
        if (st != TR_OK) return st;
    }
    float *d_snr = tr_cuda_frb_snr(dev);
    int32_t *d_width = tr_cuda_frb_width(dev);
    const uint64_t bpos = tr_boxcar_position(q->bx);
    const double t0 = now_s();
    size_t skip = 0;
    uint64_t first = 0;
    st = searched(q, tr_boxcar_process_device(q->bx, d_y, m, d_snr, d_width), t0, bpos, m,
                  &skip, &first);
    if (st != TR_OK) return st;
    const size_t off = skip * q->ndm;
    return cluster_device(q, first, d_snr + off, d_width + off, m - skip);
}

/* step() of the device-resident chain: n <= device_step spectra up (or the
 * packed ones, unpacked there), dedispersed into the device plane. */
static tr_status step_device(tr_frb *q, const float *x, const void *raw, size_t n)
{
    tr_cuda_frb *dev = (tr_cuda_frb *)q->dev;
    float *d_y = tr_cuda_frb_plane(dev);
    const uint64_t pin = q->position;
    const double t0 = now_s();
    tr_status st = TR_OK;
    if (raw) {
        st = tr_dedisp_process_raw_device(q->dd, raw, n, d_y);
    } else {
        st = tr_cuda_frb_upload(dev, x, n, &q->err);
        if (st != TR_OK) return st;
        st = tr_dedisp_process_device(q->dd, tr_cuda_frb_spectra(dev), n, d_y);
    }
    q->timing.dedisp += now_s() - t0;
    if (st != TR_OK)
        return stage_error(q, st, "dedispersion", tr_dedisp_last_error(q->dd));
    q->position += n;
    const size_t skip = pin >= q->L ? 0 : (size_t)(q->L - pin < n ? q->L - pin : n);
    return search_device(q, d_y + skip * q->ndm, n - skip);
}

/* The search's flush on the device chain (lat <= device_step positions from
 * bpos - lat on), its outputs clustered there, then every open candidate. */
static tr_status flush_search_device(tr_frb *q, uint32_t lat, uint64_t bpos)
{
    tr_cuda_frb *dev = (tr_cuda_frb *)q->dev;
    float *d_snr = tr_cuda_frb_snr(dev);
    int32_t *d_width = tr_cuda_frb_width(dev);
    const double t0 = now_s();
    tr_status st = tr_boxcar_flush_device(q->bx, d_snr, d_width);
    q->timing.search += now_s() - t0;
    if (st != TR_OK) return stage_error(q, st, "search", tr_boxcar_last_error(q->bx));
    /* Flush output k is position bpos - lat + k. */
    const size_t skip = bpos >= lat ? 0 : (size_t)(lat - bpos);
    const size_t off = skip * q->ndm;
    st = cluster_device(q, bpos + skip - lat, d_snr + off, d_width + off, lat - skip);
    if (st != TR_OK) return st;
    const double t1 = now_s();
    st = tr_candidates_flush(q->cand);
    q->timing.candidates += now_s() - t1;
    if (st != TR_OK)
        return stage_error(q, st, "candidates", tr_candidates_last_error(q->cand));
    q->flushed = 1;
    return TR_OK;
}

/* The flush's zero spectra through the device chain: len <= device_step of
 * them, the incomplete positions of every trial set to NaN on the device. */
static tr_status flush_step_device(tr_frb *q, size_t len)
{
    tr_cuda_frb *dev = (tr_cuda_frb *)q->dev;
    float *d_y = tr_cuda_frb_plane(dev);
    const uint64_t pin = tr_dedisp_position(q->dd);
    const double t0 = now_s();
    tr_status st = tr_cuda_frb_upload(dev, q->zeros, len, &q->err);
    if (st != TR_OK) return st;
    st = tr_dedisp_process_device(q->dd, tr_cuda_frb_spectra(dev), len, d_y);
    q->timing.dedisp += now_s() - t0;
    if (st != TR_OK)
        return stage_error(q, st, "dedispersion", tr_dedisp_last_error(q->dd));
    const size_t skip = pin >= q->L ? 0 : (size_t)(q->L - pin < len ? q->L - pin : len);
    float *y = d_y + skip * q->ndm;
    st = tr_cuda_frb_mark_tail(dev, y, NULL, len - skip, q->searched, q->total, NAN,
                               &q->err);
    if (st != TR_OK) return st;
    return search_device(q, y, len - skip);
}
#endif

/* Dedisperse n <= block spectra (x: floats, or raw bytes when raw is set) and
 * search the complete positions they finish. */
static tr_status step(tr_frb *q, const float *x, const void *raw, size_t n)
{
    const uint64_t pin = q->position;
    const double t0 = now_s();
    const tr_status st = raw ? tr_dedisp_process_raw(q->dd, raw, n, q->y)
                             : tr_dedisp_process(q->dd, x, n, q->y);
    q->timing.dedisp += now_s() - t0;
    if (st != TR_OK)
        return stage_error(q, st, "dedispersion", tr_dedisp_last_error(q->dd));
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
    const size_t bytes = raw ? (size_t)q->nchan * q->cfg.dedisp.raw_nbits / 8 : 0;
    const size_t most = q->resident ? device_step(q) : q->cfg.block;
    for (size_t k = 0; k < n;) {
        const size_t len = n - k < most ? n - k : most;
        const uint8_t *rk = raw ? (const uint8_t *)raw + k * bytes : NULL;
        const float *xk = raw ? NULL : x + k * (size_t)q->nchan;
#ifdef TR_HAVE_CUDA
        const tr_status st =
            q->resident ? step_device(q, xk, rk, len) : step(q, xk, rk, len);
#else
        const tr_status st = step(q, xk, rk, len);
#endif
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

tr_status tr_frb_flush(tr_frb *q)
{
    if (!q) return TR_ERR_INVALID;
    if (q->flushed) return tr_fail(&q->err, TR_ERR_STATE, "frb: flush called twice");
    q->plane_n = 0;
    const uint64_t N = q->position;
    q->ending = 1;
    q->total = N;
    /* The last L positions: L zero spectra through the dedispersion, without
     * counting them as data; a position p of trial d is complete when
     * p + trial_lat[d] < N, otherwise NaN. */
    const size_t most = q->resident ? device_step(q) : q->cfg.block;
    for (uint32_t left = q->L; left > 0;) {
        const size_t len = left < most ? left : most;
#ifdef TR_HAVE_CUDA
        if (q->resident) {
            const tr_status st = flush_step_device(q, len);
            if (st != TR_OK) return st;
            left -= (uint32_t)len;
            continue;
        }
#endif
        const uint64_t pin = tr_dedisp_position(q->dd);
        const double t0 = now_s();
        tr_status st = tr_dedisp_process(q->dd, q->zeros, len, q->y);
        q->timing.dedisp += now_s() - t0;
        if (st != TR_OK)
            return stage_error(q, st, "dedispersion", tr_dedisp_last_error(q->dd));
        left -= (uint32_t)len;
        const size_t skip =
            pin >= q->L ? 0 : (size_t)(q->L - pin < len ? q->L - pin : len);
        const size_t m = len - skip;
        float *y = q->y + skip * q->ndm;
        for (size_t k = 0; k < m; k++) {
            const uint64_t p = q->searched + k;
            for (uint32_t d = 0; d < q->ndm; d++)
                if (p + q->trial_lat[d] >= N) y[k * q->ndm + d] = NAN;
        }
        st = search(q, y, m);
        if (st != TR_OK) return st;
    }
    /* The search's last latency positions, then every open candidate. */
    const uint32_t lat = tr_boxcar_latency(q->bx);
    const uint64_t bpos = tr_boxcar_position(q->bx);
#ifdef TR_HAVE_CUDA
    if (q->resident && lat <= device_step(q)) return flush_search_device(q, lat, bpos);
#endif
    float *snr = alloc_array((size_t)lat * q->ndm + 1, sizeof *snr);
    int32_t *width = alloc_array((size_t)lat * q->ndm + 1, sizeof *width);
    tr_status st = snr && width ? TR_OK : TR_ERR_NOMEM;
    if (st == TR_OK) {
        st = tr_boxcar_flush(q->bx, snr, width);
        if (st != TR_OK) stage_error(q, st, "search", tr_boxcar_last_error(q->bx));
    } else {
        tr_fail(&q->err, st, "frb: out of memory for the search flush");
    }
    if (st == TR_OK) {
        /* Flush output k is position bpos - lat + k. */
        const size_t skip = bpos >= lat ? 0 : (size_t)(lat - bpos);
        st = cluster(q, bpos + skip - lat, snr + skip * q->ndm, width + skip * q->ndm,
                     lat - skip);
        if (st == TR_OK) {
            st = tr_candidates_flush(q->cand);
            if (st != TR_OK)
                stage_error(q, st, "candidates", tr_candidates_last_error(q->cand));
        }
    }
    free(snr);
    free(width);
    if (st == TR_OK) q->flushed = 1;
    return st;
}

size_t tr_frb_read(tr_frb *q, tr_frb_candidate *out, size_t cap)
{
    if (!q || !out) return 0;
    const double *dms = tr_dedisp_dms(q->dd);
    const double tsamp = q->cfg.dedisp.plan.tsamp;
    size_t done = 0;
    while (done < cap) {
        const size_t want = cap - done < q->tmp_cap ? cap - done : q->tmp_cap;
        const size_t got = tr_candidates_read(q->cand, q->tmp, want);
        for (size_t i = 0; i < got; i++) {
            const tr_candidate *e = &q->tmp[i];
            tr_frb_candidate *o = &out[done + i];
            o->dm = dms[e->channel];
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
    const tr_frb_timing none = {0, 0, 0};
    return q ? q->timing : none;
}

uint32_t tr_frb_ndm(const tr_frb *q)
{
    return q ? q->ndm : 0;
}
const double *tr_frb_dms(const tr_frb *q)
{
    return q ? tr_dedisp_dms(q->dd) : NULL;
}
uint32_t tr_frb_max_delay(const tr_frb *q)
{
    return q ? q->L : 0;
}
uint32_t tr_frb_latency(const tr_frb *q)
{
    return q ? q->L + tr_boxcar_latency(q->bx) : 0;
}
uint32_t tr_frb_warmup(const tr_frb *q)
{
    return q ? tr_boxcar_norm_window(tr_boxcar_get_norm(q->bx)) : 0;
}
uint64_t tr_frb_position(const tr_frb *q)
{
    return q ? q->position : 0;
}
uint64_t tr_frb_searched(const tr_frb *q)
{
    return q ? q->searched : 0;
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
    return q ? tr_dedisp_backend(q->dd) : TR_BACKEND_CPU;
}
int tr_frb_device_resident(const tr_frb *q)
{
    return q ? q->resident : 0;
}
void *tr_frb_host_alloc(const tr_frb *q, size_t bytes)
{
    return q ? tr_dedisp_host_alloc(q->dd, bytes) : NULL;
}
void tr_frb_host_free(const tr_frb *q, void *p)
{
    if (q) tr_dedisp_host_free(q->dd, p);
}
int tr_frb_flushed(const tr_frb *q)
{
    return q ? q->flushed : 0;
}
const char *tr_frb_last_error(const tr_frb *q)
{
    return q ? q->err.message : "frb: NULL";
}
