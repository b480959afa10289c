/*
 * Boxcar single-pulse search object: configuration, backend choice, the
 * normalisation in front of the search, latency, flush and per-stage outputs
 * around the variants (boxcar_ref.c, boxcar_cpu.c, cuda/boxcar/).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020).
 *
 * Host path: every call is cut into pieces of at most TR_BOXCAR_SUBCHUNK
 * samples per channel (CUDA: `batch`); each piece goes through the
 * normalisation (cleaned samples, statistics) and then through the variant.
 * CUDA backend:
 *  - FIXED without baseline removal: no host normalisation at all; the whole
 *    call goes to the GPU as it is, where non-finite samples are replaced by
 *    the fixed means (the values the normalisation would write) and counted.
 *  - measured statistics (WHITE, LEVELS) with the FAST variant and a window
 *    that is a multiple of the kernel's tile (tr_cuda_boxcar_table_granule;
 *    the default window 16384 always is): one search per piece with the
 *    tables of every window its outputs touch (tr_cuda_boxcar_set_norm_windows).
 *  - otherwise (PAPER, other windows, or TR_BOXCAR_CUDA_PERWINDOW=1 in the
 *    environment at create, the former path kept as a benchmark baseline):
 *    one normalisation table at a time, so a piece whose outputs cross a
 *    window boundary is cut there (flush: run once per window, each time
 *    keeping the positions of that window).
 * All three give the same bits.
 * First window (measured statistics with norm.first_own): the cleaned samples
 * pass through a delay line of W samples (`ring`) before the variant, so the
 * variant sees position p when the input is at p + W, after window 0's own
 * values were fixed; the NaN the normalisation writes for non-finite samples
 * of window 0 are replaced by window 0's own mean at that moment (release).
 * Device path (tr_boxcar_process_device): the samples never reach the host.
 * FIXED: non-finite samples are replaced on the device by the fixed mean of
 * their channel and counted. WHITE and LEVELS: the statistics are measured on
 * the device (cuda/boxcar/norm_cuda.h, created at the first device call), the
 * search takes its per-window tables from there; such a stream stays on the
 * device until reset (host calls are TR_ERR_STATE), flush included.
 * Baseline removal runs on the host only (TR_ERR_UNSUPPORTED here).
 * With first_own the device normalisation holds window 0 in its own delay
 * line of W positions (norm_cuda.h), as `ring` does on the host: a call's
 * positions before the end of window 0 come out as zeros (positions < 0),
 * the rest is searched; the search's outputs of a call that ends the hold,
 * and those of the flush (the held rest, then the search's latency), are
 * placed into the caller's buffers through a device scratch (`hstage`).
 * The same latency, warnings and outputs as the host path.
 * Host samples to candidates (tr_boxcar_search_candidates): a call goes
 * through the device path in pieces of up to TR_BOXCAR_CAND_VALUES values;
 * piece j is copied in while piece j - 1 is searched, and searched on one
 * thread while the peaks of piece j - 1 are selected and clustered on a
 * second (a pool of two), with the same events as one piece at a time. A
 * pipelined call leaves its last piece for the next call's first step (or
 * the drain, which every other device call and the flush make first), so
 * that calls of one piece overlap too.
 */
#include <transient/boxcar.h>
#include <transient/candidates.h>

#include "boxcar/boxcar_variants.h"
#include "common/core_util.h"
#include "common/pool.h"
#include "boxcar/candidates_internal.h"
#ifdef TR_HAVE_CUDA
#include "boxcar/boxcar_cuda.h"
#include "boxcar/norm_cuda.h"
#include "boxcar/stage_cuda.h"
#endif

/* tr_boxcar_search_candidates: the most values per piece, the granule of a
 * piece's samples per channel (a FAST tile), and the least values of each
 * half of a call cut in two (candidates_call_piece). */
#define TR_BOXCAR_CAND_VALUES ((size_t)1 << 22)
#define TR_BOXCAR_CAND_UNIT   ((size_t)8192)
#define TR_BOXCAR_CAND_HALF   ((size_t)1 << 21)

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tr_boxcar {
    tr_boxcar_config cfg; /* validated configuration (norm tables not kept) */
    tr_boxcar_plan plan;
    tr_boxcar_norm *norm;
    tr_backend backend;
    tr_variant variant;
    tr_boxcar_ref *ref;
    tr_boxcar_cpu *fast;
    void *cuda;             /* tr_cuda_boxcar with CUDA */
    size_t piece;           /* samples per channel per variant call */
    float *clean;           /* piece * nchan cleaned samples */
    uint64_t position;      /* samples per channel consumed */
    uint64_t dev_nonfinite; /* replaced on the device */
    int flushed;
    tr_boxcar_stage_buf *st; /* per-stage outputs, or NULL */
    /* CUDA: tables of the window in effect */
    float *tmu, *tsig, *fill;
    uint32_t *widths; /* plan list */
    uint64_t cur_win; /* window whose tables the CUDA context holds */
    int have_win;     /* it holds some */
    int cur_fill;     /* they were set with the fill values (device path) */
    float *fl_snr;    /* flush scratch (CUDA, several windows) */
    int32_t *fl_width;
    /* CUDA host path (see the top of this file) */
    int direct_fixed;  /* FIXED without baseline: raw samples, cleaned on the GPU */
    int multiwin;      /* measured statistics: one run per piece, per-window tables */
    float *wmu, *wsig; /* per-window tables of a piece */
    size_t wcap;       /* windows they hold */
    uint64_t wlo, whi; /* windows the CUDA context holds (multiwin) */
    int have_wins;
    void *dnorm;    /* tr_cuda_norm: statistics of device samples, or NULL */
    void *stage;    /* tr_cuda_stage: device buffers of tr_boxcar_search_candidates */
    size_t cpiece;  /* its largest piece, samples per channel (set with the stage) */
    tr_pool *cpool; /* its two threads: search and clustering side by side */
    struct cand_part_s *parts; /* its clustering parts of the last piece searched */
    uint8_t *part_flags;       /* their channel flags, nchan per part */
    size_t nparts, partcap;
    int cslot; /* its stage slot of the next piece */
    /* tr_boxcar_search_candidates_pipelined: the candidates object the
     * pieces left by the last call belong to, or NULL. Those pieces: the
     * last one copied but not searched (psearch_m samples per channel in
     * stage slot cslot; 0: none), and the one before it searched but not
     * clustered (its parts above, its pend_ld outputs in stage slot
     * cslot ^ 1; pend_ld 0: none) */
    tr_candidates *pend;
    int64_t pend_ld;   /* outputs of the piece to cluster (0: none) */
    int64_t pend_k0;   /* its first output to cluster */
    float pend_thr;    /* the threshold when its samples were given */
    size_t psearch_m;  /* samples per channel of the piece to search (0: none) */
    float psearch_thr; /* the threshold when its samples were given */
    void *hstage;      /* tr_cuda_stage: outputs of a held device stream, placed */
    int dnorm_active;  /* this stream's statistics are measured on the device */
    /* hold of the first window (see the top of this file) */
    uint32_t hold; /* W with measured statistics and first_own, else 0 */
    float *ring;   /* hold * nchan cleaned samples: position p at (p % hold) * nchan */
    unsigned warn; /* TR_BOXCAR_WARN_* */
    char warn_msg[512]; /* the warnings, one line */
    tr_error err;
};

static tr_status check_config(const tr_boxcar_config *c, tr_error *err)
{
    if (c->nchan < 1 || c->nchan > TR_BOXCAR_MAX_NCHAN)
        return tr_fail(err, TR_ERR_INVALID, "boxcar: nchan must be in 1..%u, got %u",
                       TR_BOXCAR_MAX_NCHAN, c->nchan);
    if (c->stage_outputs != 0 && c->stage_outputs != 1)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar: stage_outputs must be 0 or 1, got %d", c->stage_outputs);
    if (c->device_layout != TR_BOXCAR_TIME_MAJOR &&
        c->device_layout != TR_BOXCAR_CHANNEL_MAJOR)
        return tr_fail(
            err, TR_ERR_INVALID,
            "boxcar: device_layout must be TIME_MAJOR (0) or CHANNEL_MAJOR (1), "
            "got %d",
            (int)c->device_layout);
    return TR_OK;
}

#ifdef TR_HAVE_CUDA
static tr_status cuda_start(tr_boxcar *q, tr_error *err)
{
    const tr_boxcar_config *c = &q->cfg;
    if (c->stage_outputs)
        return tr_fail(err, TR_ERR_UNSUPPORTED,
                       "boxcar: per-stage outputs are produced on the CPU only");
    tr_cuda_boxcar *ctx = NULL;
    tr_status s = tr_cuda_boxcar_create(c->device, &q->plan, c->nchan, c->variant,
                                        c->batch, &ctx, err);
    if (s != TR_OK) return s;
    q->cuda = ctx;
    const size_t tw = tr_boxcar_plan_total_widths(&q->plan);
    q->tmu = malloc(tw * c->nchan * sizeof(float));
    q->tsig = malloc(tw * c->nchan * sizeof(float));
    q->fill = malloc(c->nchan * sizeof(float));
    q->widths = malloc(tw * sizeof(uint32_t));
    q->fl_snr =
        malloc((size_t)tr_boxcar_plan_latency(&q->plan) * c->nchan * sizeof(float));
    q->fl_width =
        malloc((size_t)tr_boxcar_plan_latency(&q->plan) * c->nchan * sizeof(int32_t));
    if (!q->tmu || !q->tsig || !q->fill || !q->widths || !q->fl_snr || !q->fl_width)
        return tr_fail(err, TR_ERR_NOMEM, "boxcar: cannot allocate the CUDA tables");
    tr_boxcar_plan_list(&q->plan, q->widths, NULL, (uint32_t)tw);
    /* TR_BOXCAR_CUDA_PERWINDOW=1: the former host path (CPU normalisation, one
     * synchronous run per statistics window), kept as a benchmark baseline */
    const char *e = getenv("TR_BOXCAR_CUDA_PERWINDOW");
    const int legacy = e && e[0] == '1';
    const uint32_t g = tr_cuda_boxcar_table_granule(ctx);
    q->direct_fixed = !legacy && c->norm.mode == TR_BOXCAR_NORM_FIXED &&
                      c->norm.baseline == TR_BOXCAR_BASELINE_NONE;
    q->multiwin = !legacy && c->norm.mode != TR_BOXCAR_NORM_FIXED && g > 0 &&
                  c->norm.window % g == 0;
    return TR_OK;
}
#endif

/* Resolve AUTO and create the variant. */
static tr_status choose_backend(tr_boxcar *q, tr_error *err)
{
    const tr_boxcar_config *c = &q->cfg;
    q->variant = c->variant;
    tr_placement p;
    tr_status placed =
        tr_place("boxcar", c->backend, c->variant, c->device, c->batch, &p, err);
    if (placed != TR_OK) return placed;
    if (p.try_cuda) {
#ifdef TR_HAVE_CUDA
        tr_status s = cuda_start(q, err);
        if (s == TR_OK) {
            q->backend = TR_BACKEND_CUDA;
            return TR_OK;
        }
        if (q->cuda) tr_cuda_boxcar_destroy((tr_cuda_boxcar *)q->cuda);
        q->cuda = NULL;
        if (p.need_cuda) return s;
#endif
    }
    q->backend = TR_BACKEND_CPU;
    if (c->variant == TR_VARIANT_REFERENCE)
        q->ref = tr_boxcar_ref_create(&q->plan, c->nchan, q->norm);
    else
        q->fast = tr_boxcar_cpu_create(&q->plan, c->nchan, q->norm);
    if (!q->ref && !q->fast)
        return tr_fail(err, TR_ERR_NOMEM, "boxcar: cannot allocate the search state");
    tr_clear(err);
    return TR_OK;
}

tr_boxcar *tr_boxcar_create(const tr_boxcar_config *cfg, tr_error *err)
{
    if (!cfg) {
        tr_fail(err, TR_ERR_INVALID, "boxcar: NULL configuration");
        return NULL;
    }
    tr_boxcar_plan plan;
    if (tr_boxcar_plan_build(cfg, &plan, err) != TR_OK) return NULL;
    if (check_config(cfg, err) != TR_OK) return NULL;
    if (tr_boxcar_norm_validate(&cfg->norm, cfg->nchan, plan.lend, err) != TR_OK)
        return NULL;
    tr_placement dummy;
    if (tr_place("boxcar", cfg->backend, cfg->variant, cfg->device, cfg->batch, &dummy,
                 err) != TR_OK)
        return NULL;
    tr_boxcar *q = calloc(1, sizeof *q);
    if (!q) {
        tr_fail(err, TR_ERR_NOMEM, "boxcar: cannot allocate the object");
        return NULL;
    }
    q->cfg = *cfg;
    q->plan = plan;
    /* The normalisation copies its tables; do not keep the caller's pointers. */
    q->cfg.norm.fixed_means = q->cfg.norm.fixed_sigmas = NULL;
    q->cfg.norm.fixed_mu_L = q->cfg.norm.fixed_sigma_L = NULL;
    /* CUDA host path: pieces of `batch` samples per channel, but at most 2^24
     * samples of all channels (64 MB of cleaned samples), and at least
     * TR_BOXCAR_SUBCHUNK (the CUDA context splits long calls itself). */
    q->piece = cfg->batch;
    if (q->piece > ((size_t)1 << 24) / cfg->nchan)
        q->piece = ((size_t)1 << 24) / cfg->nchan;
    if (q->piece < TR_BOXCAR_SUBCHUNK) q->piece = TR_BOXCAR_SUBCHUNK;
    if (cfg->norm.mode != TR_BOXCAR_NORM_FIXED && cfg->norm.first_own)
        q->hold = cfg->norm.window;
    const uint64_t lookback =
        (uint64_t)tr_boxcar_plan_latency(&plan) + q->hold + q->piece + 64;
    tr_boxcar_norm_config nc = cfg->norm;
    {
        /* the former CUDA host path (benchmark baseline, see cuda_start) also
         * had a single-threaded normalisation */
        const char *e = getenv("TR_BOXCAR_CUDA_PERWINDOW");
        if (e && e[0] == '1') nc.threads = 1;
    }
    q->norm = tr_boxcar_norm_create(&nc, cfg->nchan, plan.lend, lookback, err);
    if (!q->norm) {
        free(q);
        return NULL;
    }
    if (choose_backend(q, err) != TR_OK) {
        tr_boxcar_destroy(q);
        return NULL;
    }
    if (q->backend == TR_BACKEND_CPU) q->piece = TR_BOXCAR_SUBCHUNK;
    q->clean = malloc(q->piece * cfg->nchan * sizeof(float));
    if (q->hold) q->ring = calloc((size_t)q->hold * cfg->nchan, sizeof(float));
    if (cfg->stage_outputs) q->st = calloc(plan.nstages, sizeof *q->st);
    if (!q->clean || (q->hold && !q->ring) || (cfg->stage_outputs && !q->st)) {
        tr_fail(err, TR_ERR_NOMEM, "boxcar: cannot allocate the work buffers");
        tr_boxcar_destroy(q);
        return NULL;
    }
    tr_clear(err);
    tr_clear(&q->err);
    return q;
}

void tr_boxcar_destroy(tr_boxcar *q)
{
    if (!q) return;
#ifdef TR_HAVE_CUDA
    /* the device normalisation queues on the search's stream: first */
    if (q->dnorm) tr_cuda_norm_destroy((tr_cuda_norm *)q->dnorm);
    if (q->cuda) tr_cuda_boxcar_destroy((tr_cuda_boxcar *)q->cuda);
    tr_cuda_stage_destroy((tr_cuda_stage *)q->stage);
    tr_cuda_stage_destroy((tr_cuda_stage *)q->hstage);
#endif
    tr_pool_destroy(q->cpool);
    free(q->parts);
    free(q->part_flags);
    tr_boxcar_ref_destroy(q->ref);
    tr_boxcar_cpu_destroy(q->fast);
    tr_boxcar_norm_destroy(q->norm);
    if (q->st)
        for (uint32_t i = 0; i < q->plan.nstages; i++) {
            free(q->st[i].snr);
            free(q->st[i].width);
        }
    free(q->st);
    free(q->clean);
    free(q->ring);
    free(q->tmu);
    free(q->tsig);
    free(q->fill);
    free(q->widths);
    free(q->fl_snr);
    free(q->fl_width);
    free(q->wmu);
    free(q->wsig);
    free(q);
}

tr_status tr_boxcar_reset(tr_boxcar *q)
{
    if (!q) return TR_ERR_INVALID;
    q->position = 0;
    q->dev_nonfinite = 0;
    q->flushed = 0;
    q->warn = 0;
    q->warn_msg[0] = '\0';
    /* FIXED values never change: the CUDA context keeps its tables over reset */
    if (q->cfg.norm.mode != TR_BOXCAR_NORM_FIXED) q->have_win = 0;
    q->have_wins = 0;
    if (q->st)
        for (uint32_t i = 0; i < q->plan.nstages; i++)
            q->st[i].count = 0;
    tr_status s = tr_boxcar_norm_reset(q->norm);
    if (s != TR_OK)
        return tr_fail(&q->err, s, "boxcar: %s", tr_boxcar_norm_last_error(q->norm));
#ifdef TR_HAVE_CUDA
    q->dnorm_active = 0;
    q->pend = NULL; /* a pipelined call's last pieces are dropped */
    q->psearch_m = 0;
    if (q->dnorm && (s = tr_cuda_norm_reset((tr_cuda_norm *)q->dnorm, &q->err)) != TR_OK)
        return s;
    if (q->cuda) return tr_cuda_boxcar_reset((tr_cuda_boxcar *)q->cuda, &q->err);
#endif
    if (q->ref) tr_boxcar_ref_reset(q->ref);
    if (q->fast) tr_boxcar_cpu_reset(q->fast);
    tr_clear(&q->err);
    return TR_OK;
}

/* Per-stage buffers large enough for the outputs of n positions. */
static tr_status stage_prepare(tr_boxcar *q, size_t n)
{
    if (!q->st) return TR_OK;
    for (uint32_t i = 0; i < q->plan.nstages; i++) {
        tr_boxcar_stage_buf *b = &q->st[i];
        b->count = 0;
        b->first = 0;
        const size_t need = n / q->plan.stages[i].stride + 2;
        if (need <= b->cap) continue;
        free(b->snr);
        free(b->width);
        b->snr = malloc(need * q->cfg.nchan * sizeof(float));
        b->width = malloc(need * q->cfg.nchan * sizeof(int32_t));
        b->cap = need;
        if (!b->snr || !b->width) {
            free(b->snr);
            free(b->width);
            b->snr = NULL;
            b->width = NULL;
            b->cap = 0;
            return tr_fail(&q->err, TR_ERR_NOMEM,
                           "boxcar: cannot allocate the per-stage outputs");
        }
    }
    return TR_OK;
}

#ifdef TR_HAVE_CUDA
/* Tables of the window of output position p (>= 0) into the CUDA context. */
static tr_status cuda_tables(tr_boxcar *q, uint64_t p, int with_fill)
{
    const uint64_t w = tr_boxcar_norm_window_of(q->norm, p);
    if (q->have_win && q->cur_win == w && q->cur_fill == with_fill) return TR_OK;
    const uint32_t tw = tr_boxcar_plan_total_widths(&q->plan);
    for (uint32_t c = 0; c < q->cfg.nchan; c++) {
        tr_status s =
            tr_boxcar_norm_table(q->norm, p, c, q->widths, tw, q->tmu + (size_t)c * tw,
                                 q->tsig + (size_t)c * tw);
        if (s != TR_OK)
            return tr_fail(&q->err, s, "boxcar: %s", tr_boxcar_norm_last_error(q->norm));
        if (with_fill) {
            double mu = 0.0;
            tr_boxcar_norm_stats(q->norm, p, c, 1, &mu, NULL);
            q->fill[c] = (float)mu;
        }
    }
    tr_status s = tr_cuda_boxcar_set_norm((tr_cuda_boxcar *)q->cuda, q->tmu, q->tsig,
                                          with_fill ? q->fill : NULL, &q->err);
    if (s != TR_OK) return s;
    q->cur_win = w;
    q->cur_fill = with_fill;
    q->have_win = 1;
    return TR_OK;
}

/* Per-window tables of the windows that hold output positions [first, last]
 * (clamped to >= 0) into the CUDA context (multiwin). */
static tr_status cuda_window_tables(tr_boxcar *q, int64_t first, int64_t last)
{
    const uint64_t wlo =
        tr_boxcar_norm_window_of(q->norm, first > 0 ? (uint64_t)first : 0);
    const uint64_t whi = tr_boxcar_norm_window_of(q->norm, last > 0 ? (uint64_t)last : 0);
    if (q->have_wins && q->wlo == wlo && q->whi == whi) return TR_OK;
    const uint32_t C = q->cfg.nchan, tw = tr_boxcar_plan_total_widths(&q->plan);
    const uint64_t W = tr_boxcar_norm_window(q->norm);
    const size_t nw = (size_t)(whi - wlo + 1), per = (size_t)C * tw;
    if (nw > q->wcap) {
        free(q->wmu);
        free(q->wsig);
        q->wmu = malloc(nw * per * sizeof(float));
        q->wsig = malloc(nw * per * sizeof(float));
        q->wcap = q->wmu && q->wsig ? nw : 0;
        if (!q->wcap)
            return tr_fail(&q->err, TR_ERR_NOMEM, "boxcar: cannot allocate the tables");
    }
    q->have_wins = 0;
    for (size_t j = 0; j < nw; j++)
        for (uint32_t c = 0; c < C; c++) {
            const size_t o = j * per + (size_t)c * tw;
            tr_status s = tr_boxcar_norm_table(q->norm, (wlo + j) * W, c, q->widths, tw,
                                               q->wmu + o, q->wsig + o);
            if (s != TR_OK)
                return tr_fail(&q->err, s, "boxcar: %s",
                               tr_boxcar_norm_last_error(q->norm));
        }
    tr_status s =
        tr_cuda_boxcar_set_norm_windows((tr_cuda_boxcar *)q->cuda, wlo, (uint32_t)nw,
                                        (uint32_t)W, q->wmu, q->wsig, &q->err);
    if (s != TR_OK) return s;
    q->have_win = 0; /* the single table is no longer the one in effect */
    q->wlo = wlo;
    q->whi = whi;
    q->have_wins = 1;
    return TR_OK;
}

/* Run cleaned host samples [0, m) (time-major) whose outputs start at `first`. */
/* The device normalisation, created at the first device call that needs it. */
static tr_status dnorm_start(tr_boxcar *q)
{
    if (q->dnorm) return TR_OK;
    const tr_boxcar_norm_config *nc = &q->cfg.norm;
    const uint32_t g = tr_cuda_boxcar_table_granule((const tr_cuda_boxcar *)q->cuda);
    if (g == 0 || nc->window % g != 0)
        return tr_fail(&q->err, TR_ERR_UNSUPPORTED,
                       "boxcar: device samples with measured statistics need the FAST "
                       "variant and a window that is a multiple of %u (got %u)",
                       g, nc->window);
    double f = nc->reject_sigma > 0.0 && nc->reject_correct
                   ? tr_boxcar_norm_clip_factor(nc->reject_sigma)
                   : 1.0;
    if (!(f > 0.0)) f = 1.0;
    tr_cuda_norm_setup su;
    su.nchan = q->cfg.nchan;
    su.window = nc->window;
    su.history = nc->history;
    su.nlev = tr_boxcar_norm_levels(q->norm);
    su.reject_sigma = nc->reject_sigma;
    su.reject_max_iter = nc->reject_max_iter;
    su.clip_factor = f;
    su.init_mean = nc->init_mean;
    su.init_sigma = nc->init_sigma;
    su.widths = q->widths;
    su.total = tr_boxcar_plan_total_widths(&q->plan);
    su.latency = tr_boxcar_plan_latency(&q->plan) + q->hold;
    su.first_own = q->hold != 0;
    su.stream = tr_cuda_boxcar_stream((tr_cuda_boxcar *)q->cuda);
    tr_cuda_norm *ctx = NULL;
    const tr_status s = tr_cuda_norm_create(q->cfg.device, &su, &ctx, &q->err);
    if (s == TR_OK) q->dnorm = ctx;
    return s;
}

/* Device tables of the windows that hold output positions [first, last]
 * (clamped to >= 0) into the CUDA context. */
static tr_status dnorm_tables(tr_boxcar *q, int64_t first, int64_t last)
{
    const uint64_t W = q->cfg.norm.window;
    const uint64_t lo = first > 0 ? (uint64_t)first / W : 0;
    const uint64_t hi = last > 0 ? (uint64_t)last / W : 0;
    const float *mu = NULL, *sg = NULL;
    tr_status s = tr_cuda_norm_tables((tr_cuda_norm *)q->dnorm, lo,
                                      (uint32_t)(hi - lo + 1), &mu, &sg, &q->err);
    if (s != TR_OK) return s;
    return tr_cuda_boxcar_set_norm_windows_device((tr_cuda_boxcar *)q->cuda, lo,
                                                  (uint32_t)(hi - lo + 1), (uint32_t)W,
                                                  mu, sg, &q->err);
}

static tr_status cuda_run_host(tr_boxcar *q, const float *y, size_t m, int64_t first,
                               float *snr, int32_t *width)
{
    const uint32_t C = q->cfg.nchan;
    if (q->multiwin) {
        tr_status s = cuda_window_tables(q, first, first + (int64_t)m - 1);
        if (s != TR_OK) return s;
        return tr_cuda_boxcar_run((tr_cuda_boxcar *)q->cuda, y, m, TR_BOXCAR_TIME_MAJOR,
                                  0, snr, width, NULL, &q->err);
    }
    size_t k = 0;
    while (k < m) {
        const int64_t p = first + (int64_t)k;
        const uint64_t pp = p > 0 ? (uint64_t)p : 0;
        size_t len = m - k;
        const uint64_t w = tr_boxcar_norm_window_of(q->norm, pp);
        const uint64_t W = tr_boxcar_norm_window(q->norm);
        const int64_t last = first + (int64_t)m - 1;
        if (last >= 0 && tr_boxcar_norm_window_of(q->norm, (uint64_t)last) != w) {
            const int64_t nb = (int64_t)((w + 1) * W); /* next window's first position */
            len = (size_t)(nb - p);
        }
        tr_status s = cuda_tables(q, pp, 0);
        if (s != TR_OK) return s;
        s = tr_cuda_boxcar_run((tr_cuda_boxcar *)q->cuda, y + k * C, len,
                               TR_BOXCAR_TIME_MAJOR, 0, snr + k * C,
                               width ? width + k * C : NULL, NULL, &q->err);
        if (s != TR_OK) return s;
        k += len;
    }
    return TR_OK;
}
#endif

static tr_status check_io(tr_boxcar *q, const void *x, size_t n, const void *snr)
{
    if (!q) return TR_ERR_INVALID;
    if (q->flushed)
        return tr_fail(&q->err, TR_ERR_STATE,
                       "boxcar: the stream was flushed; reset before new samples");
    if (n > 0 && (!x || !snr))
        return tr_fail(&q->err, TR_ERR_INVALID, "boxcar: NULL %s with n > 0",
                       !x ? "samples" : "S/N output");
    return TR_OK;
}

/* Warning w with its part of the message. */
static void warn(tr_boxcar *q, unsigned w, const char *text)
{
    if (q->warn & w) return;
    q->warn |= w;
    const size_t len = strlen(q->warn_msg);
    snprintf(q->warn_msg + len, sizeof q->warn_msg - len, "%s%s", len ? "; " : "", text);
}

/* Window 0's values are fixed: the channels without statistics in it. */
static void warn_unmeasured(tr_boxcar *q)
{
    const uint32_t C = q->cfg.nchan;
    int unmeasured = 0;
    for (uint32_t c = 0; c < C; c++)
        if (!tr_boxcar_ready(q, 0, c)) unmeasured++;
    if (unmeasured) {
        char t[160];
        snprintf(t, sizeof t,
                 "%d of %u channel(s) had no statistics in the first window (too few "
                 "finite or varying values): no candidates from it",
                 unmeasured, C);
        warn(q, TR_BOXCAR_WARN_UNMEASURED, t);
    }
}

/* The flush of a stream of N samples, 0 < N < W, held in window 0. */
static void warn_short(tr_boxcar *q, uint64_t N)
{
    char t[200];
    snprintf(t, sizeof t,
             "the stream ended after %llu samples, before the first statistics "
             "window (%u) was complete: its statistics were measured on those "
             "%llu samples",
             (unsigned long long)N, q->hold, (unsigned long long)N);
    warn(q, TR_BOXCAR_WARN_SHORT_STREAM, t);
}

/*
 * Window 0's values are fixed (its end, or the flush of a shorter stream):
 * the n0 held samples of window 0 get their non-finite ones (NaN) replaced by
 * window 0's own mean, and channels left unmeasured are reported.
 */
static void release_first(tr_boxcar *q, uint64_t n0)
{
    const uint32_t C = q->cfg.nchan;
    for (uint32_t c = 0; c < C; c++) {
        double mu = 0.0;
        tr_boxcar_norm_stats(q->norm, 0, c, 1, &mu, NULL);
        for (uint64_t p = 0; p < n0; p++) {
            float *v = q->ring + p * C + c;
            if (isnan(*v)) *v = (float)mu;
        }
    }
    warn_unmeasured(q);
}

/* The m cleaned samples in q->clean (positions position .. position + m - 1)
 * into the delay line, and the m samples W positions earlier out of it, in
 * their place. */
static void hold_swap(tr_boxcar *q, size_t m)
{
    const size_t C = q->cfg.nchan;
    size_t k = 0;
    while (k < m) {
        const size_t r = (size_t)((q->position + k) % q->hold);
        const size_t len = m - k < q->hold - r ? m - k : q->hold - r;
        float *a = q->clean + k * C, *b = q->ring + r * C;
        for (size_t i = 0; i < len * C; i++) {
            const float t = a[i];
            a[i] = b[i];
            b[i] = t;
        }
        k += len;
    }
}

/* The variant on m cleaned samples y of positions vpos .. vpos + m - 1. */
static tr_status run_variant(tr_boxcar *q, const float *y, size_t m, uint64_t vpos,
                             float *so, int32_t *wo)
{
#ifdef TR_HAVE_CUDA
    if (q->cuda)
        return cuda_run_host(
            q, y, m, (int64_t)vpos - (int64_t)tr_boxcar_plan_latency(&q->plan), so, wo);
#endif
    (void)vpos; /* the CPU variants count positions themselves */
    if (q->ref) {
        tr_boxcar_ref_run(q->ref, y, m, so, wo, q->st);
        return TR_OK;
    }
    tr_boxcar_cpu_run(q->fast, y, m, so, wo, q->st);
    if (tr_boxcar_cpu_failed(q->fast))
        return tr_fail(&q->err, TR_ERR_NOMEM,
                       "boxcar: out of memory for the search state (reset it)");
    return TR_OK;
}

tr_status tr_boxcar_process(tr_boxcar *q, const float *x, size_t n, float *snr,
                            int32_t *width)
{
    tr_status s = check_io(q, x, n, snr);
    if (s != TR_OK) return s;
    if ((s = stage_prepare(q, n)) != TR_OK) return s;
    if (n == 0) return TR_OK;
    /* a pipelined call's pieces first: they come before these samples */
    if ((s = tr_boxcar_search_candidates_drain(q)) != TR_OK) return s;
    const uint32_t C = q->cfg.nchan;
    if (q->dnorm_active)
        return tr_fail(&q->err, TR_ERR_STATE,
                       "boxcar: this stream's statistics are measured on the device "
                       "(tr_boxcar_process_device); reset before giving host samples");
#ifdef TR_HAVE_CUDA
    if (q->cuda && q->direct_fixed) {
        /* FIXED: nothing to measure; the GPU replaces non-finite samples by the
         * fixed means (what the normalisation would write) and counts them */
        s = cuda_tables(q, 0, 1);
        if (s != TR_OK) return s;
        s = tr_cuda_boxcar_run((tr_cuda_boxcar *)q->cuda, x, n, TR_BOXCAR_TIME_MAJOR, 0,
                               snr, width, &q->dev_nonfinite, &q->err);
        if (s == TR_OK) q->position += n;
        return s;
    }
#endif
    size_t done = 0;
    while (done < n) {
        size_t m = n - done < q->piece ? n - done : q->piece;
        /* a piece ends where window 0 does: its values are fixed there */
        if (q->hold && q->position < q->hold && q->position + m > q->hold)
            m = (size_t)(q->hold - q->position);
        s = tr_boxcar_norm_process(q->norm, x + done * C, m, q->clean);
        if (s != TR_OK)
            return tr_fail(&q->err, s, "boxcar: %s", tr_boxcar_norm_last_error(q->norm));
        float *so = snr + done * C;
        int32_t *wo = width ? width + done * C : NULL;
        if (q->hold) hold_swap(q, m);
        if (q->position < q->hold) {
            /* window 0 held: these outputs are positions < 0 */
            memset(so, 0, m * C * sizeof *so);
            if (wo) memset(wo, 0, m * C * sizeof *wo);
        } else if ((s = run_variant(q, q->clean, m, q->position - q->hold, so, wo)) !=
                   TR_OK) {
            return s;
        }
        q->position += m;
        done += m;
        if (q->hold && q->position == q->hold) release_first(q, q->hold);
    }
    return TR_OK;
}

/* The flush's warning when the stream is shorter than the widest boxcar. */
static void warn_if_narrow(tr_boxcar *q)
{
    if (q->position >= q->plan.lend) return;
    char t[160];
    snprintf(t, sizeof t,
             "the stream has %llu samples, fewer than the widest boxcar (%u): "
             "longer boxcars were not searched",
             (unsigned long long)q->position, q->plan.lend);
    warn(q, TR_BOXCAR_WARN_NARROW, t);
}

/*
 * Flush with a hold: window 0's values fixed if the stream ended inside it,
 * then the held samples through the variant. Writes the first `hold`
 * positions of the flush (zeros for positions before the data).
 */
static tr_status flush_held(tr_boxcar *q, float *snr, int32_t *width)
{
    const uint32_t C = q->cfg.nchan;
    const uint64_t N = q->position;
    if (N < q->hold) {
        tr_boxcar_norm_finish(q->norm);
        if (N > 0) {
            release_first(q, N);
            warn_short(q, N);
        }
    }
    const size_t have = (size_t)(N < q->hold ? N : q->hold);
    const size_t zeros = q->hold - have;
    memset(snr, 0, zeros * C * sizeof *snr);
    if (width) memset(width, 0, zeros * C * sizeof *width);
    size_t k = 0;
    while (k < have) {
        const uint64_t p0 = N - have + k;
        const size_t r = (size_t)(p0 % q->hold);
        size_t m = have - k < q->piece ? have - k : q->piece;
        if (m > q->hold - r) m = q->hold - r;
        memcpy(q->clean, q->ring + r * C, m * C * sizeof(float));
        const tr_status s = run_variant(q, q->clean, m, p0, snr + (zeros + k) * C,
                                        width ? width + (zeros + k) * C : NULL);
        if (s != TR_OK) return s;
        k += m;
    }
    return TR_OK;
}

#ifdef TR_HAVE_CUDA
/* The device scratch of held outputs (hstage) with room for n positions. */
static tr_status hstage_reserve(tr_boxcar *q, size_t n)
{
    const size_t v = n * q->cfg.nchan;
    if (q->hstage) return tr_cuda_stage_reserve((tr_cuda_stage *)q->hstage, v, &q->err);
    tr_cuda_stage *st = NULL;
    const tr_status s = tr_cuda_stage_create(q->cfg.device, v, &st, &q->err);
    if (s == TR_OK) q->hstage = st;
    return s;
}

/* The search on m held device samples y (layout) of variant positions vpos ..
 * vpos + m - 1, its outputs into hstage. */
static tr_status held_search(tr_boxcar *q, const float *y, size_t m, uint64_t vpos,
                             tr_boxcar_layout layout, int with_width)
{
    tr_status s = hstage_reserve(q, m);
    if (s != TR_OK || m == 0) return s;
    const int64_t first = (int64_t)vpos - (int64_t)tr_boxcar_plan_latency(&q->plan);
    if ((s = dnorm_tables(q, first, first + (int64_t)m - 1)) != TR_OK) return s;
    tr_cuda_stage *st = (tr_cuda_stage *)q->hstage;
    return tr_cuda_boxcar_run((tr_cuda_boxcar *)q->cuda, y, m, layout, 1,
                              tr_cuda_stage_snr(st),
                              with_width ? tr_cuda_stage_width(st) : NULL, NULL, &q->err);
}

/*
 * Flush of a held device stream: window 0's values fixed if the stream ended
 * inside it, the held rest searched and written as the first `hold` positions
 * of the flush: device outputs of ld positions per channel in `layout`, or
 * host outputs (on_device 0, time-major).
 */
static tr_status dev_flush_held(tr_boxcar *q, tr_boxcar_layout layout, int on_device,
                                size_t ld, float *snr, int32_t *width)
{
    const uint32_t C = q->cfg.nchan;
    const uint64_t N = q->position;
    const float *held = NULL;
    size_t have = 0;
    tr_status s =
        tr_cuda_norm_finish((tr_cuda_norm *)q->dnorm, layout, &held, &have, &q->err);
    if (s != TR_OK) return s;
    if (N > 0 && N < q->hold) {
        warn_unmeasured(q);
        warn_short(q, N);
    }
    if ((s = held_search(q, held, have, N - have, layout, width != NULL)) != TR_OK)
        return s;
    tr_cuda_stage *st = (tr_cuda_stage *)q->hstage;
    const size_t zeros = q->hold - have;
    if (on_device)
        return tr_cuda_stage_place(st, layout, C, 0, zeros, have, ld, snr, width,
                                   &q->err);
    memset(snr, 0, zeros * C * sizeof *snr);
    if (width) memset(width, 0, zeros * C * sizeof *width);
    return tr_cuda_stage_download(st, have * C, snr + zeros * C,
                                  width ? width + zeros * C : NULL, &q->err);
}
#endif

tr_status tr_boxcar_flush(tr_boxcar *q, float *snr, int32_t *width)
{
    if (!q) return TR_ERR_INVALID;
    const uint32_t L = tr_boxcar_plan_latency(&q->plan);
    tr_status s = check_io(q, snr, 0, snr);
    if (s != TR_OK || (s = tr_boxcar_search_candidates_drain(q)) != TR_OK) return s;
    if (L + q->hold > 0 && !snr)
        return tr_fail(&q->err, TR_ERR_INVALID, "boxcar: NULL S/N output for the flush");
    if ((s = stage_prepare(q, (size_t)L + q->hold)) != TR_OK) return s;
    q->flushed = 1;
    warn_if_narrow(q);
    if (q->hold) {
#ifdef TR_HAVE_CUDA
        if (q->dnorm_active)
            s = dev_flush_held(q, TR_BOXCAR_TIME_MAJOR, 0, 0, snr, width);
        else
#endif
            s = flush_held(q, snr, width);
        if (s != TR_OK) return s;
        snr += (size_t)q->hold * q->cfg.nchan;
        if (width) width += (size_t)q->hold * q->cfg.nchan;
    }
    if (L == 0) return TR_OK;
#ifdef TR_HAVE_CUDA
    if (q->dnorm_active) {
        const int64_t first = (int64_t)q->position - (int64_t)L;
        if ((s = dnorm_tables(q, first, first + (int64_t)L - 1)) != TR_OK) return s;
        return tr_cuda_boxcar_flush((tr_cuda_boxcar *)q->cuda, TR_BOXCAR_TIME_MAJOR, 0,
                                    snr, width, &q->err);
    }
    if (q->cuda && q->multiwin) {
        const int64_t first = (int64_t)q->position - (int64_t)L;
        if ((s = cuda_window_tables(q, first, first + (int64_t)L - 1)) != TR_OK) return s;
        return tr_cuda_boxcar_flush((tr_cuda_boxcar *)q->cuda, TR_BOXCAR_TIME_MAJOR, 0,
                                    snr, width, &q->err);
    }
    if (q->cuda) {
        const uint32_t C = q->cfg.nchan;
        const int64_t first = (int64_t)q->position - (int64_t)L;
        /* One flush per window among the output positions; keep its part. */
        size_t k = 0;
        while (k < L) {
            const int64_t p = first + (int64_t)k;
            const uint64_t pp = p > 0 ? (uint64_t)p : 0;
            const uint64_t w = tr_boxcar_norm_window_of(q->norm, pp);
            size_t len = L - k;
            const int64_t last = first + (int64_t)L - 1;
            if (last >= 0 && tr_boxcar_norm_window_of(q->norm, (uint64_t)last) != w)
                len = (size_t)((int64_t)((w + 1) * tr_boxcar_norm_window(q->norm)) - p);
            if ((s = cuda_tables(q, pp, 0)) != TR_OK) return s;
            if (k == 0 && len == L) {
                return tr_cuda_boxcar_flush((tr_cuda_boxcar *)q->cuda,
                                            TR_BOXCAR_TIME_MAJOR, 0, snr, width, &q->err);
            }
            s = tr_cuda_boxcar_flush((tr_cuda_boxcar *)q->cuda, TR_BOXCAR_TIME_MAJOR, 0,
                                     q->fl_snr, q->fl_width, &q->err);
            if (s != TR_OK) return s;
            memcpy(snr + k * C, q->fl_snr + k * C, len * C * sizeof(float));
            if (width)
                memcpy(width + k * C, q->fl_width + k * C, len * C * sizeof(int32_t));
            k += len;
        }
        return TR_OK;
    }
#endif
    if (q->ref)
        tr_boxcar_ref_flush(q->ref, snr, width, q->st);
    else {
        tr_boxcar_cpu_flush(q->fast, snr, width, q->st);
        if (tr_boxcar_cpu_failed(q->fast))
            return tr_fail(&q->err, TR_ERR_NOMEM,
                           "boxcar: out of memory for the search state (reset it)");
    }
    return TR_OK;
}

/* The checks of the device path (TR_OK when it can take samples). */
static tr_status device_check(tr_boxcar *q)
{
    if (!q->cuda)
        return tr_fail(
            &q->err, TR_ERR_UNSUPPORTED,
            "boxcar: device samples need the CUDA backend (this object runs on "
            "%s)",
            tr_backend_name(q->backend));
    if (q->cfg.norm.baseline != TR_BOXCAR_BASELINE_NONE)
        return tr_fail(&q->err, TR_ERR_UNSUPPORTED,
                       "boxcar: device samples need norm.baseline NONE (baseline removal "
                       "runs on the host)");
    if (q->cfg.norm.mode != TR_BOXCAR_NORM_FIXED && tr_boxcar_norm_position(q->norm) != 0)
        return tr_fail(&q->err, TR_ERR_STATE,
                       "boxcar: this stream's statistics are measured on the host "
                       "(tr_boxcar_process); reset before giving device samples");
    return TR_OK;
}

#ifdef TR_HAVE_CUDA
/* n device samples in `layout` searched into d_snr, d_width (device_check
 * passed, n > 0); src: whose buffer d_x is (cuda/common/device_src.h). */
static tr_status device_run(tr_boxcar *q, const float *d_x, size_t n,
                            tr_boxcar_layout layout, int src, float *d_snr,
                            int32_t *d_width)
{
    tr_cuda_boxcar *ctx = (tr_cuda_boxcar *)q->cuda;
    tr_status s;
    if (q->cfg.norm.mode == TR_BOXCAR_NORM_FIXED) {
        /* FIXED: one table for every position; fill = the fixed input means. */
        s = cuda_tables(q, 0, 1);
        if (s != TR_OK) return s;
        s = tr_cuda_boxcar_run(ctx, d_x, n, layout, src, d_snr, d_width,
                               &q->dev_nonfinite, &q->err);
    } else {
        /* measured on the device: cleaned samples (with first_own the held
         * ones, W positions behind) and per-window tables */
        const float *clean = NULL;
        const uint64_t pos = q->position;
        if ((s = dnorm_start(q)) != TR_OK) return s;
        s = tr_cuda_norm_process((tr_cuda_norm *)q->dnorm, d_x, n, layout, src, &clean,
                                 &q->err);
        if (s != TR_OK) return s;
        q->dnorm_active = 1;
        if (pos >= q->hold) {
            const int64_t first = (int64_t)pos - (int64_t)tr_boxcar_latency(q);
            if ((s = dnorm_tables(q, first, first + (int64_t)n - 1)) != TR_OK) return s;
            s = tr_cuda_boxcar_run(ctx, clean, n, layout, TR_SRC_OWN_DEVICE, d_snr,
                                   d_width, NULL, &q->err);
        } else {
            /* window 0 held: the first z outputs are positions < 0 */
            const size_t z = n < q->hold - pos ? n : (size_t)(q->hold - pos);
            s = held_search(q, clean, n - z, 0, layout, d_width != NULL);
            if (s == TR_OK)
                s = tr_cuda_stage_place((tr_cuda_stage *)q->hstage, layout, q->cfg.nchan,
                                        0, z, n - z, n, d_snr, d_width, &q->err);
        }
        /* the search waited for its stream: the count and flags are back */
        if (s == TR_OK)
            s = tr_cuda_norm_settle((tr_cuda_norm *)q->dnorm, &q->dev_nonfinite, &q->err);
        if (s == TR_OK && pos < q->hold && pos + n >= q->hold) warn_unmeasured(q);
    }
    if (s == TR_OK) q->position += n;
    return s;
}
#endif

tr_status tr_boxcar_process_device(tr_boxcar *q, const float *d_x, size_t n, float *d_snr,
                                   int32_t *d_width)
{
    tr_status s = check_io(q, d_x, n, d_snr);
    if (s != TR_OK) return s;
    if ((s = device_check(q)) != TR_OK || n == 0) return s;
    if ((s = tr_boxcar_search_candidates_drain(q)) != TR_OK) return s;
#ifdef TR_HAVE_CUDA
    return device_run(q, d_x, n, q->cfg.device_layout, TR_SRC_CALLER_DEVICE, d_snr,
                      d_width);
#else
    (void)d_width;
    return TR_ERR_UNSUPPORTED;
#endif
}

tr_status tr_boxcar_flush_device(tr_boxcar *q, float *d_snr, int32_t *d_width)
{
    tr_status s = check_io(q, d_snr, 0, d_snr);
    if (s != TR_OK || (s = tr_boxcar_search_candidates_drain(q)) != TR_OK) return s;
    if ((s = device_check(q)) != TR_OK) return s;
    const uint32_t L = tr_boxcar_plan_latency(&q->plan);
    if (L + q->hold > 0 && !d_snr)
        return tr_fail(&q->err, TR_ERR_INVALID, "boxcar: NULL S/N output for the flush");
    const int fixed = q->cfg.norm.mode == TR_BOXCAR_NORM_FIXED;
    if (!fixed && !q->dnorm_active && q->position > 0)
        return tr_fail(&q->err, TR_ERR_STATE,
                       "boxcar: no device stream to flush (the statistics are measured "
                       "on the host: tr_boxcar_flush)");
    q->flushed = 1;
    warn_if_narrow(q);
#ifdef TR_HAVE_CUDA
    const tr_boxcar_layout lay = q->cfg.device_layout;
    const int64_t first = (int64_t)q->position - (int64_t)L;
    if (!fixed && !q->dnorm_active && (s = dnorm_start(q)) != TR_OK) return s;
    if (q->hold) {
        /* the held rest, then the search's latency placed behind it */
        const size_t F = (size_t)q->hold + L;
        if ((s = dev_flush_held(q, lay, 1, F, d_snr, d_width)) != TR_OK) return s;
        if (L == 0) return TR_OK;
        tr_cuda_stage *st = (tr_cuda_stage *)q->hstage;
        if ((s = hstage_reserve(q, L)) != TR_OK ||
            (s = dnorm_tables(q, first, first + (int64_t)L - 1)) != TR_OK ||
            (s = tr_cuda_boxcar_flush(
                 (tr_cuda_boxcar *)q->cuda, lay, 1, tr_cuda_stage_snr(st),
                 d_width ? tr_cuda_stage_width(st) : NULL, &q->err)) != TR_OK)
            return s;
        return tr_cuda_stage_place(st, lay, q->cfg.nchan, q->hold, q->hold, L, F, d_snr,
                                   d_width, &q->err);
    }
    if (L == 0) return TR_OK;
    s = fixed ? cuda_tables(q, 0, 1) : dnorm_tables(q, first, first + (int64_t)L - 1);
    if (s != TR_OK) return s;
    return tr_cuda_boxcar_flush((tr_cuda_boxcar *)q->cuda, lay, 1, d_snr, d_width,
                                &q->err);
#else
    (void)d_width;
    return TR_ERR_UNSUPPORTED;
#endif
}

#ifdef TR_HAVE_CUDA
/* A piece's samples per channel are a multiple of this. */
static size_t candidates_unit(const tr_boxcar *q)
{
    const size_t W = q->cfg.norm.mode == TR_BOXCAR_NORM_FIXED ? 0 : q->cfg.norm.window;
    return W > TR_BOXCAR_CAND_UNIT ? W : TR_BOXCAR_CAND_UNIT;
}

/* The most samples per channel of one piece of tr_boxcar_search_candidates:
 * about TR_BOXCAR_CAND_VALUES values (TR_BOXCAR_CUDA_CAND_VALUES overrides
 * it), in whole statistics windows (or FAST tiles in FIXED mode), at most
 * q->piece. Every piece costs a few fixed round trips and a search that
 * takes about as long for one tile per multiprocessor as for two, so pieces
 * are large; a call of several pieces copies, searches and clusters them
 * side by side. */
static size_t candidates_piece(const tr_boxcar *q)
{
    size_t values = TR_BOXCAR_CAND_VALUES;
    const char *e = getenv("TR_BOXCAR_CUDA_CAND_VALUES");
    if (e && atol(e) > 0) values = (size_t)atol(e);
    const size_t unit = candidates_unit(q);
    size_t s = values / q->cfg.nchan / unit * unit;
    if (s < unit) s = unit;
    return s < q->piece ? s : q->piece;
}

/* The piece of a call of n samples per channel: the largest, but a call that
 * would be one piece of at least twice TR_BOXCAR_CAND_HALF values is cut in
 * two, so that the copy of its second half overlaps the search of its
 * first. */
static size_t candidates_call_piece(const tr_boxcar *q, size_t largest, size_t n)
{
    const size_t unit = candidates_unit(q);
    if (n > largest || n * q->cfg.nchan < 2 * TR_BOXCAR_CAND_HALF) return largest;
    const size_t half = (n / 2 + unit - 1) / unit * unit;
    return half > 0 && half < n ? half : largest;
}

/* The clustering parts of the last piece searched (tr_boxcar_ready_piece
 * runs): output offset, length and, for a part with warming-up channels,
 * its flags (nchan bytes at flags + i * nchan). */
typedef struct cand_part_s {
    size_t k, len;
    int flagged;
} cand_part;

/* One piece of tr_boxcar_search_candidates: search (task 0) and the
 * clustering of the piece before it (task 1), run side by side. */
typedef struct {
    tr_boxcar *q;
    tr_candidates *c;
    tr_cuda_stage *st;
    /* task 0: search piece `m` samples from x slot `slot` into output slot
     * `slot` and start copying the next piece (m2 samples at x2) into the
     * other x slot, whose search ended with the last step: before the search
     * from page-locked memory (the GPU copies while it searches), after it
     * from pageable memory (the host copies, the GPU searches meanwhile) */
    int slot, run, pinned;
    size_t m, m2;
    const float *x2;
    tr_status s0;
    /* task 1: cluster the parts of the piece before from output slot `oslot`
     * (ld positions, outputs from k0) with the threshold thr it was searched
     * with */
    int cluster, oslot;
    int64_t ld, k0;
    float thr;
    tr_status s1;
    tr_error e1; /* task 1's message (task 0 writes q->err meanwhile) */
} cand_step;

static void cand_task(void *arg, size_t task)
{
    cand_step *t = (cand_step *)arg;
    tr_boxcar *q = t->q;
    if (task == 0) {
        if (!t->run) return;
        float *y = NULL;
        int32_t *w = NULL;
        const size_t nv = t->m2 * q->cfg.nchan;
        tr_status s = tr_cuda_stage_wait(t->st, t->slot, &q->err);
        if (s == TR_OK) s = tr_cuda_stage_outputs(t->st, t->slot, &y, &w, &q->err);
        if (s == TR_OK && nv > 0 && t->pinned)
            s = tr_cuda_stage_upload(t->st, t->slot ^ 1, t->x2, nv, &q->err);
        if (s == TR_OK)
            s = device_run(q, tr_cuda_stage_x(t->st, t->slot), t->m, TR_BOXCAR_TIME_MAJOR,
                           TR_SRC_OWN_DEVICE, y, w);
        if (s == TR_OK && nv > 0 && !t->pinned)
            s = tr_cuda_stage_upload(t->st, t->slot ^ 1, t->x2, nv, &q->err);
        t->s0 = s;
        return;
    }
    if (!t->cluster) return;
    float *y = NULL;
    int32_t *w = NULL;
    /* a piece left by a pipelined call: the threshold of its time */
    const float thr = tr_candidates_threshold(t->c);
    if (thr != t->thr) tr_candidates_set_threshold(t->c, t->thr);
    tr_status s = tr_cuda_stage_outputs(t->st, t->oslot, &y, &w, &t->e1);
    for (size_t i = 0; i < q->nparts && s == TR_OK; i++) {
        const cand_part *pt = &q->parts[i];
        /* the stage's outputs: searched by this library, waited for */
        s = tr_candidates_process_device_part(
            t->c, y, w, t->ld, t->k0 + (int64_t)pt->k, pt->len, 0,
            pt->flagged ? q->part_flags + i * q->cfg.nchan : NULL, TR_SRC_OWN_DEVICE);
        if (s != TR_OK) tr_fail(&t->e1, s, "boxcar: %s", tr_candidates_last_error(t->c));
    }
    if (thr != t->thr) tr_candidates_set_threshold(t->c, thr);
    t->s1 = s;
}

/* The parts of n outputs of the piece just searched, from position p. */
static tr_status cand_parts(tr_boxcar *q, uint64_t p, size_t n)
{
    const size_t C = q->cfg.nchan;
    q->nparts = 0;
    for (size_t k = 0; k < n;) {
        if (q->nparts == q->partcap) {
            const size_t cap = q->partcap ? 2 * q->partcap : 16;
            cand_part *np = realloc(q->parts, cap * sizeof *np);
            if (np) q->parts = np;
            uint8_t *nf = np ? realloc(q->part_flags, cap * C) : NULL;
            if (nf) q->part_flags = nf;
            if (!np || !nf)
                return tr_fail(&q->err, TR_ERR_NOMEM,
                               "boxcar: cannot allocate the parts");
            q->partcap = cap;
        }
        const uint8_t *flags = NULL;
        uint8_t *f = q->part_flags + q->nparts * C;
        const size_t len = tr_boxcar_ready_piece(q, p + k, n - k, f, &flags);
        q->parts[q->nparts].k = k;
        q->parts[q->nparts].len = len;
        q->parts[q->nparts].flagged = flags != NULL;
        q->nparts++;
        k += len;
    }
    return TR_OK;
}
#endif

/* Host samples to candidates; defer: the call's last piece is copied but
 * searched with the next call (or the drain), beside the copy of that call's
 * first piece, and the piece before it is clustered there too. */
static tr_status search_candidates(tr_candidates *c, tr_boxcar *q, const float *x,
                                   size_t n, int defer)
{
    if (!c) return TR_ERR_INVALID;
    tr_status s = check_io(q, x, n, x);
    if (s != TR_OK) return s;
    if ((s = device_check(q)) != TR_OK) return s;
    if (tr_candidates_backend(c) != TR_BACKEND_CUDA)
        return tr_fail(&q->err, TR_ERR_UNSUPPORTED,
                       "boxcar: tr_boxcar_search_candidates needs candidates on the CUDA "
                       "backend");
#ifdef TR_HAVE_CUDA
    if (q->pend && q->pend != c)
        return tr_fail(&q->err, TR_ERR_STATE,
                       "boxcar: the last pieces of a pipelined call wait for the "
                       "candidates they were given for (drain them first)");
    if (n == 0 && (defer || !q->pend)) return TR_OK;
    const uint32_t C = q->cfg.nchan;
    if (!q->stage) {
        /* the stage holds the largest piece: both are fixed from here on */
        tr_cuda_stage *st = NULL;
        q->cpiece = candidates_piece(q);
        if ((s = tr_cuda_stage_create(q->cfg.device, q->cpiece * C, &st, &q->err)) !=
            TR_OK)
            return s;
        q->stage = st;
    }
    /* a pipelined call copies its samples beside the search of the last
     * call's: no need to cut it in two for that */
    const size_t piece = defer ? q->cpiece : candidates_call_piece(q, q->cpiece, n);
    /* Two threads when a step has two tasks (without them, the tasks run
     * one after the other in the same order). */
    if ((n > piece || q->pend || defer) && !q->cpool) {
        tr_error perr;
        if (tr_pool_create(2, "boxcar", &q->cpool, &perr) != TR_OK) q->cpool = NULL;
    }
    tr_cuda_stage *st = (tr_cuda_stage *)q->stage;
    const uint64_t lat = tr_boxcar_latency(q);
    /* Piece j is copied into sample slot j % 2 while piece j - 1 is
     * searched, and searched into output slot j % 2 while the peaks of piece
     * j - 1 are selected and clustered (their outputs in the other slot): a
     * slot is reused two pieces later, after both have finished. The slots
     * alternate across calls: a pipelined call leaves its last piece copied
     * but not searched (piece -1 of the next call, searched beside the copy
     * of that call's first piece), and the piece before it searched but not
     * clustered (piece -2). */
    int slot = q->cslot;
    size_t up = 0; /* samples per channel of x whose copy has started */
    size_t m;      /* the piece to search next, copied into sample slot `slot` */
    float mthr;    /* the threshold in effect when its samples were given */
    if (q->psearch_m > 0) {
        m = q->psearch_m;
        mthr = q->psearch_thr;
        q->psearch_m = 0;
    } else {
        m = n < piece ? n : piece;
        mthr = tr_candidates_threshold(c);
        if (m > 0 && (s = tr_cuda_stage_upload(st, slot, x, m * C, &q->err)) != TR_OK)
            return s;
        up = m;
    }
    cand_step t;
    memset(&t, 0, sizeof t);
    t.q = q;
    t.c = c;
    t.st = st;
    t.pinned = tr_cuda_stage_pinned(x);
    t.cluster = q->pend != NULL && q->pend_ld > 0;
    t.oslot = slot ^ 1;
    t.ld = q->pend_ld;
    t.k0 = q->pend_k0;
    t.thr = q->pend_thr;
    q->pend = NULL;
    for (;; slot ^= 1) {
        const uint64_t pos = q->position;
        const size_t m2 = n - up < piece ? n - up : piece; /* the next piece to copy */
        if (defer && m > 0 && m2 == 0) {
            /* the last piece waits, copied, for the next call (the caller's
             * samples must not be read after the return); so does the
             * clustering of the piece before it */
            if ((s = tr_cuda_stage_wait(st, slot, &q->err)) != TR_OK) {
                q->cslot = slot;
                return s;
            }
            q->psearch_m = m;
            q->psearch_thr = mthr;
            q->pend = c;
            q->pend_ld = t.cluster ? t.ld : 0;
            q->pend_k0 = t.k0;
            q->pend_thr = t.thr;
            q->cslot = slot;
            return TR_OK;
        }
        t.run = m > 0;
        t.slot = slot;
        t.m = m;
        t.m2 = m2;
        t.x2 = x ? x + up * C : NULL;
        up += m2;
        t.s0 = t.s1 = TR_OK;
        tr_pool_run(q->cpool, cand_task, &t, 2);
        s = t.s0 != TR_OK ? t.s0 : t.s1;
        if (t.s0 == TR_OK && t.s1 != TR_OK) q->err = t.e1;
        if (s != TR_OK || m == 0) {
            /* the caller's samples must not be read after the return */
            if (s != TR_OK && m2 > 0) (void)tr_cuda_stage_wait(st, slot ^ 1, NULL);
            q->cslot = slot;
            return s;
        }
        /* outputs k are positions pos - lat + k; those below 0 are skipped */
        const size_t neg = pos >= lat ? 0 : (size_t)(lat - pos < m ? lat - pos : m);
        t.cluster = m > neg;
        if (t.cluster && (s = cand_parts(q, pos + neg - lat, m - neg)) != TR_OK) {
            if (m2 > 0) (void)tr_cuda_stage_wait(st, slot ^ 1, NULL);
            q->cslot = slot ^ 1;
            return s;
        }
        t.oslot = slot;
        t.ld = (int64_t)m;
        t.k0 = (int64_t)neg;
        t.thr = mthr;
        m = m2;
        mthr = tr_candidates_threshold(c);
    }
#else
    (void)defer;
    return TR_ERR_UNSUPPORTED;
#endif
}

tr_status tr_boxcar_search_candidates(tr_candidates *c, tr_boxcar *q, const float *x,
                                      size_t n)
{
    return search_candidates(c, q, x, n, 0);
}

tr_status tr_boxcar_search_candidates_pipelined(tr_candidates *c, tr_boxcar *q,
                                                const float *x, size_t n)
{
    return search_candidates(c, q, x, n, 1);
}

tr_status tr_boxcar_search_candidates_drain(tr_boxcar *q)
{
    if (!q) return TR_ERR_INVALID;
#ifdef TR_HAVE_CUDA
    if (q->pend) return search_candidates(q->pend, q, NULL, 0, 0);
#endif
    return TR_OK;
}

int tr_boxcar_ready(const tr_boxcar *q, uint64_t p, uint32_t c)
{
    if (!q) return 0;
#ifdef TR_HAVE_CUDA
    if (q->dnorm_active)
        return tr_cuda_norm_ready((const tr_cuda_norm *)q->dnorm, p, c) > 0;
#endif
    return tr_boxcar_norm_ready(q->norm, p, c);
}

void *tr_boxcar_host_alloc(const tr_boxcar *q, size_t bytes)
{
    if (!q) return NULL;
#ifdef TR_HAVE_CUDA
    if (q->cuda) return tr_cuda_boxcar_host_alloc((tr_cuda_boxcar *)q->cuda, bytes);
#endif
    return malloc(bytes ? bytes : 1);
}

void tr_boxcar_host_free(const tr_boxcar *q, void *p)
{
    if (!q || !p) return;
#ifdef TR_HAVE_CUDA
    if (q->cuda) {
        tr_cuda_boxcar_host_free(p);
        return;
    }
#endif
    free(p);
}

tr_status tr_boxcar_stage_output(const tr_boxcar *q, uint32_t stage,
                                 tr_boxcar_stage_out *out)
{
    if (!q || !out) return TR_ERR_INVALID;
    if (!q->st || stage >= q->plan.nstages) return TR_ERR_INVALID;
    const tr_boxcar_stage_buf *b = &q->st[stage];
    out->stride = q->plan.stages[stage].stride;
    out->first = b->first;
    out->count = b->count;
    out->snr = b->snr;
    out->width = b->width;
    return TR_OK;
}

const tr_boxcar_plan *tr_boxcar_get_plan(const tr_boxcar *q)
{
    return q ? &q->plan : NULL;
}
const tr_boxcar_norm *tr_boxcar_get_norm(const tr_boxcar *q)
{
    return q ? q->norm : NULL;
}
uint32_t tr_boxcar_latency(const tr_boxcar *q)
{
    return q ? tr_boxcar_plan_latency(&q->plan) + q->hold : 0;
}
uint32_t tr_boxcar_lend(const tr_boxcar *q)
{
    return q ? q->plan.lend : 0;
}
uint32_t tr_boxcar_nchan(const tr_boxcar *q)
{
    return q ? q->cfg.nchan : 0;
}
tr_boxcar_layout tr_boxcar_device_layout(const tr_boxcar *q)
{
    return q ? q->cfg.device_layout : TR_BOXCAR_TIME_MAJOR;
}
uint64_t tr_boxcar_position(const tr_boxcar *q)
{
    /* a pipelined call's piece that waits for its search is consumed */
    return q ? q->position + q->psearch_m : 0;
}
uint64_t tr_boxcar_nonfinite(const tr_boxcar *q)
{
    return q ? tr_boxcar_norm_nonfinite(q->norm) + q->dev_nonfinite : 0;
}
int tr_boxcar_flushed(const tr_boxcar *q)
{
    return q ? q->flushed : 0;
}
tr_backend tr_boxcar_backend(const tr_boxcar *q)
{
    return q ? q->backend : TR_BACKEND_CPU;
}
tr_variant tr_boxcar_variant(const tr_boxcar *q)
{
    return q ? q->variant : TR_VARIANT_FAST;
}
unsigned tr_boxcar_warnings(const tr_boxcar *q)
{
    return q ? q->warn : 0;
}
const char *tr_boxcar_warning(const tr_boxcar *q)
{
    return q ? q->warn_msg : "";
}
const char *tr_boxcar_last_error(const tr_boxcar *q)
{
    return q ? q->err.message : "";
}
