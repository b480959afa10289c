/*
 * Triggers of a SPIIR filter bank: peaks of |SNR| over a threshold, clustered
 * per template (<transient/spiir_triggers.h> has the definition).
 *
 * Paper: X. Guo, Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of
 * low-latency gravitational wave searches using Maxwell-microarchitecture GPUs"
 * (equation 8: the SNR these triggers are taken from).
 *
 * REFERENCE: one pass over the samples; per template the state of its open
 * cluster is kept between calls, so the triggers do not depend on the chunking.
 *
 * FAST: a sample of template t changes the state only when |z|^2 exceeds
 * B_t = max(threshold^2, |z|^2 of the open cluster's candidate) (it starts a
 * cluster or becomes the candidate); the rest of the state (the neighbours of
 * the candidate, the latest value) is read from the samples when needed, and a
 * cluster is decided at the known sample k + window. So the scan compares
 * float re^2 + im^2 with a float bound below B_t by a relative 2^-20 (which
 * the float rounding, 3 x 2^-24 at most, cannot cross: a sample under the
 * bound is under B_t in double), 4 templates per AVX2 instruction, stops at
 * rows with a sample over the bound or a decision due, and there does exactly
 * what the reference does, in double. Templates are split over a persistent
 * pool of threads; each thread writes its triggers with the sample that
 * decided them, and the caller merges them in (sample, template) order. A
 * stretch of samples is scanned at once only when `cap` has room for every
 * trigger it could decide (triggers of one template are decided more than
 * `window` samples apart) plus ntemplates, so that the reference would not
 * have stopped inside it; the rest of a call runs the reference loop, which
 * stops where the reference stops.
 */
#define _POSIX_C_SOURCE 200809L

#include <transient/spiir.h>
#include <transient/spiir_triggers.h>

#include "common/core_util.h"
#include "common/pool.h"
#include "common/simd.h"
#include "spiir/spiir_triggers_internal.h"
#include "spiir/triggers_cuda.h" /* the cluster state (and the launcher with CUDA) */

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Marks a |z|^2 that is unknown (no such sample) or not finite. */
#define NO_VALUE TR_SPIIR_TRIG_NO_VALUE

#define MAX_THREADS  64
#define AUTO_THREADS 8     /* automatic: at most this many threads */
#define PART_ALIGN   16    /* templates of a thread: a multiple of this (not the last) */
#define MAX_EVENTS   65536 /* FAST: triggers one stretch may decide, about */
#define MIN_THREADED 32768 /* template-samples of a stretch worth waking the pool */

/* The open cluster of a template: the same state on the CPU and the device. */
typedef tr_spiir_trig_cluster cluster;

/* FAST: a trigger and the sample that decided it. */
typedef struct {
    uint64_t decided;
    tr_spiir_trigger trig;
} event;

/* FAST: the templates [t0, t1) of one thread and its triggers of a stretch. */
typedef struct {
    uint32_t t0, t1;
    event *ev;
    size_t nev, cap;
    uint32_t *hits; /* scratch: templates of a row to test exactly */
    int overflow;   /* more triggers than cap (cannot happen; checked) */
} part;

struct tr_spiir_triggers {
    tr_spiir_triggers_config cfg;
    cluster *c;        /* one per template */
    uint64_t position; /* samples scanned */
    tr_error err;

    /* FAST */
    float *bnd; /* per template, twice (the layout of z): its float bound */
    part *parts;
    uint32_t nparts;
    /* The stretch being scanned: rows [k0, k1) of snr, row 0 at sample pos0. */
    const float *snr;
    size_t k0, k1;
    uint64_t pos0;
    double thr2;
    tr_pool *pool; /* one task per part; NULL: the caller runs them all */

    /* CUDA */
    void
        *cuda; /* tr_cuda_spiir_trig, made at create (CUDA) or first device call (AUTO) */
    int on_dev; /* the open clusters live on the device (else in c) */
};

tr_spiir_triggers_config tr_spiir_triggers_config_default(void)
{
    tr_spiir_triggers_config c;
    memset(&c, 0, sizeof c);
    c.ntemplates = 1;
    c.threshold = 8.0f;
    c.window = 64;
    c.variant = TR_VARIANT_FAST;
    c.nthreads = 0;
    c.backend = TR_BACKEND_AUTO;
    c.device = 0;
    c.device_capacity = 0;
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

/* ---- scan kernels (FAST) ------------------------------------------------- */

/*
 * A float bound below b: float re^2 + im^2 < bound implies re^2 + im^2 <= b in
 * double (the float sum is within (1 - 2^-24)^2 of the exact one, the double
 * one rounds the exact one once, b is a double). 0 (every sample tested
 * exactly) for b below 1e-30, where float underflow would spoil the margin.
 */
static float fbound(double b)
{
    if (!(b >= 1e-30)) return 0.0f;
    const double s = b * (1.0 - 0x1p-20);
    if (s > (double)FLT_MAX) return FLT_MAX;
    float f = (float)s;
    if ((double)f > s) f = nextafterf(f, 0.0f);
    return f;
}

/* May template z (re, im) exceed the bound b? NaN and overflow say yes. */
static inline int maybe_over(const float *z, float b)
{
    const float v = z[0] * z[0] + z[1] * z[1];
    return !(v < b);
}

/* The first of nrows rows (stride floats apart, m templates each, bounds bnd
 * twice per template) with a template that may exceed its bound; nrows if none. */
typedef size_t (*scan_fn)(const float *z, size_t stride, size_t nrows, const float *bnd,
                          uint32_t m);
/* The templates of one row that may exceed their bound, into idx; their count. */
typedef uint32_t (*hits_fn)(const float *z, const float *bnd, uint32_t m, uint32_t *idx);

static size_t scan_generic(const float *z, size_t stride, size_t nrows, const float *bnd,
                           uint32_t m)
{
    for (size_t r = 0; r < nrows; r++, z += stride) {
        int any = 0;
        for (uint32_t i = 0; i < m; i++)
            any |= maybe_over(z + 2 * i, bnd[2 * i]);
        if (any) return r;
    }
    return nrows;
}

static uint32_t hits_generic(const float *z, const float *bnd, uint32_t m, uint32_t *idx)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m; i++)
        if (maybe_over(z + 2 * i, bnd[2 * i])) idx[n++] = i;
    return n;
}

#ifdef TR_X86

/* 4 templates: all-ones in both lanes of each that may exceed its bound. */
static inline __attribute__((always_inline)) TR_AVX2 __m256 over4(const float *z,
                                                                  const float *bnd)
{
    const __m256 x = _mm256_loadu_ps(z);
    const __m256 sq = _mm256_mul_ps(x, x);
    const __m256 v = _mm256_add_ps(sq, _mm256_permute_ps(sq, 0xB1)); /* re^2 + im^2 */
    return _mm256_cmp_ps(v, _mm256_loadu_ps(bnd), _CMP_NLT_UQ);
}

TR_AVX2 static size_t scan_avx2(const float *z, size_t stride, size_t nrows,
                                const float *bnd, uint32_t m)
{
    const uint32_t m4 = m & ~3u, m16 = m & ~15u;
    for (size_t r = 0; r < nrows; r++, z += stride) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        uint32_t i = 0;
        for (; i < m16; i += 16) {
            a0 = _mm256_or_ps(a0, over4(z + 2 * i, bnd + 2 * i));
            a1 = _mm256_or_ps(a1, over4(z + 2 * i + 8, bnd + 2 * i + 8));
            a2 = _mm256_or_ps(a2, over4(z + 2 * i + 16, bnd + 2 * i + 16));
            a3 = _mm256_or_ps(a3, over4(z + 2 * i + 24, bnd + 2 * i + 24));
        }
        for (; i < m4; i += 4)
            a0 = _mm256_or_ps(a0, over4(z + 2 * i, bnd + 2 * i));
        const __m256 a = _mm256_or_ps(_mm256_or_ps(a0, a1), _mm256_or_ps(a2, a3));
        int any = _mm256_movemask_ps(a);
        for (; i < m; i++)
            any |= maybe_over(z + 2 * i, bnd[2 * i]);
        if (any) return r;
    }
    return nrows;
}

TR_AVX2 static uint32_t hits_avx2(const float *z, const float *bnd, uint32_t m,
                                  uint32_t *idx)
{
    const uint32_t m4 = m & ~3u;
    uint32_t n = 0, i = 0;
    for (; i < m4; i += 4) {
        int bits = _mm256_movemask_ps(over4(z + 2 * i, bnd + 2 * i)) & 0x55;
        while (bits) {
            const int b = __builtin_ctz((unsigned)bits);
            idx[n++] = i + (uint32_t)(b >> 1);
            bits &= bits - 1;
        }
    }
    for (; i < m; i++)
        if (maybe_over(z + 2 * i, bnd[2 * i])) idx[n++] = i;
    return n;
}
#endif

typedef struct {
    tr_simd_kernel info;
    scan_fn scan;
    hits_fn hits;
} kernel_t;

static const kernel_t kernels[] = {
    {{"generic", 0, 0}, scan_generic, hits_generic},
#ifdef TR_X86
    {{"avx2", TR_CPU_AVX2, 0}, scan_avx2, hits_avx2},
#endif
};
static tr_simd_table table = TR_SIMD_TABLE(kernels);

int tr_spiir_triggers_select(const char *name)
{
    return tr_simd_select(&table, name);
}

const char *tr_spiir_triggers_kernel(void)
{
    return ((const kernel_t *)tr_simd_get(&table))->info.name;
}

/* ---- one stretch, one thread's templates (FAST) --------------------------- */

/* |z|^2 in double, NO_VALUE when not finite. */
static inline double mag2(const float *z)
{
    const double v = (double)z[0] * (double)z[0] + (double)z[1] * (double)z[1];
    return isfinite(v) ? v : NO_VALUE;
}

static void emit(cluster *c, uint32_t t, tr_spiir_trigger *out);

static void scan_part(tr_spiir_triggers *q, part *p, const kernel_t *kern)
{
    const uint32_t nt = q->cfg.ntemplates;
    const uint64_t w = q->cfg.window;
    const size_t stride = (size_t)nt * 2;
    const size_t k0 = q->k0, k1 = q->k1;
    const uint64_t pos0 = q->pos0;
    const double thr2 = q->thr2;
    const float fthr = fbound(thr2);
    const uint32_t t0 = p->t0, m = p->t1 - p->t0;
    const float *base = q->snr + 2 * (size_t)t0; /* template t0 of row 0 */
    float *bnd = q->bnd + 2 * (size_t)t0;
    cluster *c = q->c + t0;
    uint64_t dmin = UINT64_MAX; /* no decision before this sample */
    p->nev = 0;

    /* Candidates at the sample before the stretch get their next neighbour; the
     * bounds and the first decision from the open clusters. */
    for (uint32_t i = 0; i < m; i++) {
        cluster *ci = &c[i];
        float b = fthr;
        if (ci->open) {
            if (ci->k + 1 == pos0 + k0) ci->next = mag2(base + k0 * stride + 2 * i);
            if (ci->val > thr2) b = fbound(ci->val);
            if (ci->k + w < dmin) dmin = ci->k + w;
        }
        bnd[2 * i] = bnd[2 * i + 1] = b;
    }

    size_t r = k0;
    while (r < k1) {
        size_t stop = k1;
        if (dmin < pos0 + k1) stop = (size_t)(dmin - pos0);
        if (stop < r) stop = r; /* (open clusters are decided at dmin >= this row) */
        const size_t rh = r + kern->scan(base + r * stride, stride, stop - r, bnd, m);
        if (rh >= k1) break;
        const uint64_t pos = pos0 + rh;
        const float *row = base + rh * stride;
        /* Samples that start a cluster or become its candidate. */
        const uint32_t nh = kern->hits(row, bnd, m, p->hits);
        for (uint32_t j = 0; j < nh; j++) {
            const uint32_t i = p->hits[j];
            cluster *ci = &c[i];
            const float *z = row + 2 * i;
            const double v = (double)z[0] * (double)z[0] + (double)z[1] * (double)z[1];
            if (!isfinite(v) || !(v > thr2)) continue;
            if (ci->open && !(v > ci->val)) continue;
            ci->open = 1;
            ci->k = pos;
            ci->val = v;
            ci->prev = rh > 0 ? mag2(z - stride) : ci->last;
            ci->next = rh + 1 < k1 ? mag2(z + stride) : NO_VALUE;
            ci->re = z[0];
            ci->im = z[1];
            bnd[2 * i] = bnd[2 * i + 1] = fbound(v);
            if (pos + w < dmin) dmin = pos + w;
        }
        /* Clusters decided at this sample. */
        if (pos >= dmin) {
            dmin = UINT64_MAX;
            for (uint32_t i = 0; i < m; i++) {
                cluster *ci = &c[i];
                if (!ci->open) continue;
                if (pos - ci->k >= w) {
                    if (p->nev < p->cap) {
                        p->ev[p->nev].decided = pos;
                        emit(ci, t0 + i, &p->ev[p->nev].trig);
                        p->nev++;
                    } else {
                        p->overflow = 1;
                        ci->open = 0;
                    }
                    bnd[2 * i] = bnd[2 * i + 1] = fthr;
                } else if (ci->k + w < dmin) {
                    dmin = ci->k + w;
                }
            }
        }
        r = rh + 1;
    }
    for (uint32_t i = 0; i < m; i++)
        c[i].last = mag2(base + (k1 - 1) * stride + 2 * i);
}

/* ---- parts on the pool (FAST) ------------------------------------------- */

/* Templates split into parts of multiples of PART_ALIGN over `threads`. */
static int make_parts(tr_spiir_triggers *q, uint32_t threads)
{
    const uint32_t nt = q->cfg.ntemplates;
    uint32_t per = (nt + threads - 1) / threads;
    per = (per + PART_ALIGN - 1) / PART_ALIGN * PART_ALIGN;
    const uint32_t np = (nt + per - 1) / per;
    q->parts = calloc(np, sizeof *q->parts);
    if (!q->parts) return 0;
    q->nparts = np;
    for (uint32_t i = 0; i < np; i++) {
        part *p = &q->parts[i];
        p->t0 = i * per;
        p->t1 = p->t0 + per < nt ? p->t0 + per : nt;
        p->hits = malloc(sizeof *p->hits * (p->t1 - p->t0));
        if (!p->hits) return 0;
    }
    return 1;
}

/* A stretch's parts and the kernel that scans them. */
typedef struct {
    tr_spiir_triggers *q;
    const kernel_t *kern;
} scan_job;

static void scan_task(void *arg, size_t i)
{
    const scan_job *jb = (const scan_job *)arg;
    scan_part(jb->q, &jb->q->parts[i], jb->kern);
}

/* Scan the stretch: every part, on the pool when it is worth it. */
static void run_parts(tr_spiir_triggers *q, int threaded)
{
    scan_job jb = {q, (const kernel_t *)tr_simd_get(&table)};
    tr_pool_run(threaded ? q->pool : NULL, scan_task, &jb, q->nparts);
}

static uint32_t auto_threads(uint32_t nt)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1) cpus = 1;
    uint32_t t = nt / 32;
    if (t < 1) t = 1;
    if ((long)t > cpus) t = (uint32_t)cpus;
    if (t > AUTO_THREADS) t = AUTO_THREADS;
    return t;
}

/* ---- object --------------------------------------------------------------- */

static void destroy_fast(tr_spiir_triggers *q)
{
    tr_pool_destroy(q->pool);
    if (q->parts)
        for (uint32_t i = 0; i < q->nparts; i++) {
            free(q->parts[i].ev);
            free(q->parts[i].hits);
        }
    free(q->parts);
    free(q->bnd);
}

/* The CUDA context; the clusters then live on the device (cleared there). */
static tr_status make_cuda(tr_spiir_triggers *q, tr_error *err)
{
#ifdef TR_HAVE_CUDA
    tr_cuda_spiir_trig *ctx = NULL;
    const tr_status s =
        tr_cuda_spiir_trig_create(q->cfg.device, q->cfg.ntemplates, q->cfg.window,
                                  q->cfg.device_capacity, &ctx, err);
    if (s != TR_OK) return s;
    q->cuda = ctx;
    q->on_dev = 0; /* the first device call copies the clusters in */
    return TR_OK;
#else
    (void)q;
    return tr_fail(err, TR_ERR_NO_DEVICE,
                   "spiir triggers: CUDA backend requested but built without CUDA");
#endif
}

tr_spiir_triggers *tr_spiir_triggers_create(const tr_spiir_triggers_config *cfg,
                                            tr_error *err)
{
    if (!cfg) {
        tr_fail(err, TR_ERR_INVALID, "spiir triggers: NULL configuration");
        return NULL;
    }
    if (cfg->ntemplates == 0 || cfg->ntemplates > TR_SPIIR_MAX_TEMPLATES) {
        tr_fail(err, TR_ERR_INVALID, "spiir triggers: ntemplates must be 1..%u, got %u",
                TR_SPIIR_MAX_TEMPLATES, cfg->ntemplates);
        return NULL;
    }
    if (cfg->window == 0) {
        tr_fail(err, TR_ERR_INVALID, "spiir triggers: window must be >= 1 sample");
        return NULL;
    }
    if (cfg->variant != TR_VARIANT_FAST && cfg->variant != TR_VARIANT_REFERENCE) {
        tr_fail(err, TR_ERR_INVALID,
                "spiir triggers: variant must be FAST or REFERENCE, got %d",
                (int)cfg->variant);
        return NULL;
    }
    if (cfg->nthreads > MAX_THREADS) {
        tr_fail(err, TR_ERR_INVALID, "spiir triggers: nthreads must be <= %d, got %u",
                MAX_THREADS, cfg->nthreads);
        return NULL;
    }
    if (check_threshold(cfg->threshold, err) != TR_OK) return NULL;
    if (cfg->device_capacity != 0 && cfg->device_capacity < cfg->ntemplates) {
        tr_fail(err, TR_ERR_INVALID,
                "spiir triggers: device_capacity must be 0 (automatic) or >= ntemplates "
                "(%u), got %zu",
                cfg->ntemplates, cfg->device_capacity);
        return NULL;
    }
    /* AUTO probes for a GPU only at the first device call; here the fields. */
    tr_placement pl;
    if (tr_place("spiir triggers",
                 cfg->backend == TR_BACKEND_AUTO ? TR_BACKEND_CPU : cfg->backend,
                 cfg->variant, cfg->device, 1, &pl, err) != TR_OK)
        return NULL;
    tr_spiir_triggers *q = calloc(1, sizeof *q);
    if (q) q->c = calloc(cfg->ntemplates, sizeof *q->c);
    if (!q || !q->c) {
        if (q) free(q->c);
        free(q);
        tr_fail(err, TR_ERR_NOMEM, "spiir triggers: cannot allocate %u clusters",
                cfg->ntemplates);
        return NULL;
    }
    q->cfg = *cfg;
    /* The CPU scan's state and threads (the CUDA backend scans on the GPU). */
    if (cfg->variant == TR_VARIANT_FAST && cfg->backend != TR_BACKEND_CUDA) {
        const uint32_t threads =
            cfg->nthreads ? cfg->nthreads : auto_threads(cfg->ntemplates);
        q->bnd = malloc(sizeof *q->bnd * 2 * (size_t)cfg->ntemplates);
        if (!q->bnd || !make_parts(q, threads)) {
            destroy_fast(q);
            free(q->c);
            free(q);
            tr_fail(err, TR_ERR_NOMEM, "spiir triggers: cannot allocate the scan state");
            return NULL;
        }
        /* Threads that cannot be had leave q->pool NULL: the caller then
         * scans every part, with the same triggers. */
        if (q->nparts > 1) tr_pool_create(q->nparts, "spiir triggers", &q->pool, NULL);
    }
    clear_clusters(q);
    if (pl.need_cuda && make_cuda(q, err) != TR_OK) {
        tr_spiir_triggers_destroy(q);
        return NULL;
    }
    tr_clear(err);
    tr_clear(&q->err);
    return q;
}

void tr_spiir_triggers_destroy(tr_spiir_triggers *q)
{
    if (!q) return;
#ifdef TR_HAVE_CUDA
    tr_cuda_spiir_trig_destroy((tr_cuda_spiir_trig *)q->cuda);
#endif
    destroy_fast(q);
    free(q->c);
    free(q);
}

tr_status tr_spiir_triggers_reset(tr_spiir_triggers *q)
{
    if (!q) return TR_ERR_INVALID;
    clear_clusters(q);
    q->on_dev = 0;
    tr_clear(&q->err);
    return TR_OK;
}

/* The candidate of an open cluster as a trigger; closes the cluster. */
static void emit(cluster *c, uint32_t t, tr_spiir_trigger *out)
{
    tr_spiir_trig_make(c, t, out);
    c->open = 0;
}

/* REFERENCE: rows [k, n) of snr one by one while cap leaves room for a row's
 * triggers; returns the row it stopped before. */
static size_t scan_reference(tr_spiir_triggers *q, const float *snr, size_t k, size_t n,
                             tr_spiir_trigger *out, size_t cap, size_t *written_io)
{
    const uint32_t nt = q->cfg.ntemplates;
    const uint32_t window = q->cfg.window;
    /* Compared as squares: |z|^2 = re^2 + im^2 in double is exact up to one
     * rounding for float parts, and the square root is needed only at a
     * trigger. */
    const double thr2 = (double)q->cfg.threshold * (double)q->cfg.threshold;
    size_t written = *written_io;
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
    *written_io = written;
    return k;
}

/* FAST: stretches of rows, each with room in cap for all it can decide. */
static tr_status process_fast(tr_spiir_triggers *q, const float *snr, size_t n,
                              tr_spiir_trigger *out, size_t cap, size_t *consumed,
                              size_t *nout)
{
    const uint32_t nt = q->cfg.ntemplates;
    const uint64_t w1 = (uint64_t)q->cfg.window + 1;
    size_t written = 0, k = 0;
    q->thr2 = (double)q->cfg.threshold * (double)q->cfg.threshold;
    while (k < n) {
        /* Triggers per template the stretch may decide: cap - written >= nt * (e + 1). */
        const uint64_t room = (cap - written) / nt;
        if (room < 2) break;
        uint64_t e = room - 1;
        const uint64_t ecap = MAX_EVENTS / nt > 0 ? MAX_EVENTS / nt : 1;
        if (e > ecap) e = ecap;
        const uint64_t rem = (uint64_t)(n - k);
        const uint64_t need = (rem - 1) / w1 + 1; /* at most, in rem samples */
        if (e > need) e = need;
        const size_t len = rem <= e * w1 ? (size_t)rem : (size_t)(e * w1);
        for (uint32_t i = 0; i < q->nparts; i++) {
            part *p = &q->parts[i];
            const size_t want = (size_t)(p->t1 - p->t0) * (size_t)e;
            if (p->cap < want) {
                event *ev = realloc(p->ev, sizeof *ev * want);
                if (!ev) {
                    *consumed = k;
                    *nout = written;
                    return tr_fail(&q->err, TR_ERR_NOMEM,
                                   "spiir triggers: cannot allocate %zu triggers", want);
                }
                p->ev = ev;
                p->cap = want;
            }
            p->overflow = 0;
        }
        q->snr = snr;
        q->k0 = k;
        q->k1 = k + len;
        q->pos0 = q->position - k;
        run_parts(q, (uint64_t)len * nt >= MIN_THREADED);
        /* Merge in the order of the deciding sample, then of template (parts
         * hold ascending templates, each in sample order). */
        size_t idx[MAX_THREADS];
        int overflow = 0;
        for (uint32_t i = 0; i < q->nparts; i++) {
            idx[i] = 0;
            overflow |= q->parts[i].overflow;
        }
        for (;;) {
            int best = -1;
            uint64_t bd = 0;
            for (uint32_t i = 0; i < q->nparts; i++) {
                const part *p = &q->parts[i];
                if (idx[i] < p->nev && (best < 0 || p->ev[idx[i]].decided < bd)) {
                    best = (int)i;
                    bd = p->ev[idx[i]].decided;
                }
            }
            if (best < 0) break;
            out[written++] = q->parts[best].ev[idx[best]++].trig;
        }
        q->position += len;
        k += len;
        if (overflow) {
            *consumed = k;
            *nout = written;
            return tr_fail(&q->err, TR_ERR_STATE,
                           "spiir triggers: internal error: more triggers than bounded");
        }
    }
    if (k < n) k = scan_reference(q, snr, k, n, out, cap, &written);
    *consumed = k;
    *nout = written;
    return TR_OK;
}

#ifdef TR_HAVE_CUDA
/* The open clusters to where the next scan runs. */
static tr_status clusters_to(tr_spiir_triggers *q, int dev)
{
    if (q->on_dev == dev) return TR_OK;
    tr_cuda_spiir_trig *ctx = (tr_cuda_spiir_trig *)q->cuda;
    const tr_status s = dev ? tr_cuda_spiir_trig_set(ctx, q->c, &q->err)
                            : tr_cuda_spiir_trig_get(ctx, q->c, &q->err);
    if (s == TR_OK) q->on_dev = dev;
    return s;
}

/* Device events as triggers, in the order the device context gave them. */
static void make_triggers(const tr_spiir_trig_event *ev, size_t nev,
                          tr_spiir_trigger *out)
{
    for (size_t i = 0; i < nev; i++)
        tr_spiir_trig_make(&ev[i].c, ev[i].t, &out[i]);
}

/* Scan on the device: snr in device memory (on_device) or host memory. */
static tr_status process_cuda(tr_spiir_triggers *q, const float *snr, size_t n,
                              int on_device, tr_spiir_trigger *out, size_t cap,
                              size_t *consumed, size_t *nout)
{
    tr_status s = clusters_to(q, 1);
    if (s != TR_OK) return s;
    const tr_spiir_trig_event *ev = NULL;
    size_t nev = 0, used = 0;
    s = tr_cuda_spiir_trig_scan((tr_cuda_spiir_trig *)q->cuda, snr, n, on_device,
                                q->position, q->cfg.threshold, cap, &ev, &nev, &used,
                                &q->err);
    if (s != TR_OK) return s;
    make_triggers(ev, nev, out);
    q->position += used;
    *consumed = used;
    *nout = nev;
    return TR_OK;
}
#endif

/* What every process call checks; n == 0 returns early through *done. */
static tr_status check_process(tr_spiir_triggers *q, const float *snr, size_t n,
                               const tr_spiir_trigger *out, size_t cap, size_t *consumed,
                               size_t *nout, int *done)
{
    *done = 1;
    if (consumed) *consumed = 0;
    if (nout) *nout = 0;
    if (!q) return TR_ERR_INVALID;
    if (!consumed || !nout)
        return tr_fail(&q->err, TR_ERR_INVALID, "spiir triggers: NULL consumed or nout");
    if (n == 0) return TR_OK;
    if (!snr || (!out && cap > 0))
        return tr_fail(&q->err, TR_ERR_INVALID, "spiir triggers: NULL %s",
                       !snr ? "snr" : "out");
    *done = 0;
    return TR_OK;
}

tr_status tr_spiir_triggers_process(tr_spiir_triggers *q, const float *snr, size_t n,
                                    tr_spiir_trigger *out, size_t cap, size_t *consumed,
                                    size_t *nout)
{
    int done;
    tr_status s = check_process(q, snr, n, out, cap, consumed, nout, &done);
    if (done) return s;
#ifdef TR_HAVE_CUDA
    if (q->cfg.backend == TR_BACKEND_CUDA)
        return process_cuda(q, snr, n, 0, out, cap, consumed, nout);
    if (q->cuda && (s = clusters_to(q, 0)) != TR_OK) return s;
#endif
    if (q->cfg.variant == TR_VARIANT_FAST)
        return process_fast(q, snr, n, out, cap, consumed, nout);
    size_t written = 0;
    *consumed = scan_reference(q, snr, 0, n, out, cap, &written);
    *nout = written;
    return TR_OK;
}

tr_status tr_spiir_triggers_process_device(tr_spiir_triggers *q, const float *d_snr,
                                           size_t n, tr_spiir_trigger *out, size_t cap,
                                           size_t *consumed, size_t *nout)
{
    int done;
    tr_status s = check_process(q, d_snr, n, out, cap, consumed, nout, &done);
    if (done) return s;
    if (tr_spiir_triggers_backend(q) != TR_BACKEND_CUDA)
        return tr_fail(&q->err, TR_ERR_UNSUPPORTED,
                       "spiir triggers: device SNR needs the CUDA backend (this object "
                       "runs on the CPU: backend %s, variant %s%s)",
                       tr_backend_name(q->cfg.backend),
                       q->cfg.variant == TR_VARIANT_FAST ? "FAST" : "REFERENCE",
                       tr_cuda_compiled() ? "" : ", built without CUDA");
#ifdef TR_HAVE_CUDA
    if (!q->cuda && (s = make_cuda(q, &q->err)) != TR_OK) return s;
    return process_cuda(q, d_snr, n, 1, out, cap, consumed, nout);
#else
    return TR_ERR_UNSUPPORTED;
#endif
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
#ifdef TR_HAVE_CUDA
    if (q->on_dev) {
        const tr_spiir_trig_event *ev = NULL;
        size_t nev = 0;
        const tr_status s = tr_cuda_spiir_trig_flush((tr_cuda_spiir_trig *)q->cuda,
                                                     q->position, &ev, &nev, &q->err);
        if (s != TR_OK) return s;
        make_triggers(ev, nev, out);
        *nout = nev;
        return TR_OK;
    }
#endif
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

uint32_t tr_spiir_triggers_nthreads(const tr_spiir_triggers *q)
{
    if (!q) return 0;
    return tr_pool_threads(q->pool);
}

tr_backend tr_spiir_triggers_backend(const tr_spiir_triggers *q)
{
    if (!q) return TR_BACKEND_CPU;
    if (q->cuda || q->cfg.backend == TR_BACKEND_CUDA) return TR_BACKEND_CUDA;
    if (q->cfg.backend != TR_BACKEND_AUTO || q->cfg.variant != TR_VARIANT_FAST)
        return TR_BACKEND_CPU;
    return tr_cuda_device_count(NULL, 0) > q->cfg.device ? TR_BACKEND_CUDA
                                                         : TR_BACKEND_CPU;
}

const char *tr_spiir_triggers_last_error(const tr_spiir_triggers *q)
{
    return q ? q->err.message : "spiir triggers: NULL object";
}
