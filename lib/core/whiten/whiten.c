/*
 * The streaming whitening object (<transient/whiten.h>): validation, the
 * filter design, the stream's history in blocks anchored at absolute
 * positions, the gate of non-finite input, the latency, and dispatch to the
 * reference, CPU fast (FFTW) or CUDA (cuFFT) variant.
 *
 * Paper: B. Allen et al., "FINDCHIRP", Phys. Rev. D 85, 122006 (2012).
 *
 * Data path of a call: the new samples (non-finite ones as 0, their gates
 * recorded) go into `buf` after the ntaps - 1 samples before them; every
 * complete block of B samples is convolved by the variant into the causal
 * outputs c[q] = z[q - half], queued in `fifo`; then output p of the stream
 * is c[p - B] = z[p - D], D = half + B, which the block of p - B has always
 * completed by then. The blocks start at multiples of B whatever the calls
 * are, so every variant gives the same bits for any chunking.
 */
#include "common/core_util.h"
#include "whiten/whiten_internal.h"

#include "whiten/whiten_cuda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A span of outputs written as 0: [lo, hi], absolute positions of z. */
typedef struct {
    uint64_t lo, hi;
} gate;

struct tr_whiten {
    tr_whiten_config cfg; /* copy; psd points to our array */
    double *psd;          /* nfft/2 + 1 */
    double *taps;         /* L = 2 half + 1 */
    size_t half, ntaps, M, B;
    size_t nb;     /* blocks per variant run */
    float *buf;    /* ntaps - 1 history + up to nb * B new samples */
    size_t fill;   /* new samples in buf */
    float *blocks; /* nb * B outputs of one run */
    float *fifo;   /* ring of causal outputs not yet written */
    size_t fifo_cap, fifo_head, fifo_count;
    gate *gates; /* ring of pending gates, increasing */
    size_t gate_cap, gate_head, gate_count;
    tr_whiten_fftw *fftw; /* CPU fast */
    void *cuda;           /* tr_cuda_whiten with CUDA */
    uint64_t position;    /* samples consumed */
    uint64_t gated;       /* outputs gated */
    tr_backend backend;
    tr_variant variant;
    tr_error err;
};

tr_whiten_config tr_whiten_config_default(void)
{
    tr_whiten_config c;
    memset(&c, 0, sizeof c);
    c.rate = 0.0;
    c.psd = NULL;
    c.nfft = 0;
    c.fmin = 15.0;
    c.half_len = 0;
    c.fft_len = 0;
    c.backend = TR_BACKEND_AUTO;
    c.device = 0;
    c.variant = TR_VARIANT_FAST;
    c.batch = 8;
    return c;
}

static size_t pow2_at_least(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

/* Checks, and the derived sizes half, ntaps, M, B. */
static tr_status check_config(tr_whiten *q, const tr_whiten_config *c, tr_error *err)
{
    tr_status s = tr_psd_check_grid("whiten", c->rate, c->nfft, err);
    if (s != TR_OK) return s;
    if (!c->psd) return tr_fail(err, TR_ERR_INVALID, "whiten: NULL psd");
    if (!(c->fmin >= 0.0) || !(c->fmin < c->rate / 2.0))
        return tr_fail(err, TR_ERR_INVALID,
                       "whiten: fmin must be in [0, rate / 2 = %g), got %g",
                       c->rate / 2.0, c->fmin);
    if (c->variant == TR_VARIANT_PAPER)
        return tr_fail(err, TR_ERR_UNSUPPORTED, "whiten: there is no paper variant");
    q->half = c->half_len ? c->half_len : c->nfft / 2 - 1;
    if (q->half >= c->nfft / 2)
        return tr_fail(err, TR_ERR_INVALID,
                       "whiten: half_len must be in [1, nfft / 2 - 1 = %zu], got %zu",
                       c->nfft / 2 - 1, q->half);
    q->ntaps = 2 * q->half + 1;
    q->M = c->fft_len ? c->fft_len : pow2_at_least(2 * q->ntaps);
    if (q->M < q->ntaps + 1 || q->M > TR_PSD_MAX_NFFT)
        return tr_fail(
            err, TR_ERR_INVALID,
            "whiten: fft_len must be in [L + 1 = %zu, %zu] (L = 2 half_len + 1 "
            "taps), got %zu",
            q->ntaps + 1, (size_t)TR_PSD_MAX_NFFT, q->M);
    q->B = q->M - q->ntaps + 1;
    return TR_OK;
}

#ifdef TR_HAVE_CUDA
static tr_status cuda_start(tr_whiten *q, const float *spec, tr_error *err)
{
    tr_cuda_whiten *ctx = NULL;
    tr_status s = tr_cuda_whiten_create(q->cfg.device, spec, q->ntaps, q->M, q->cfg.batch,
                                        &ctx, err);
    q->cuda = ctx;
    return s;
}
#endif

/* Where to run, and the variant's state (spec: the filter spectrum). */
static tr_status choose_backend(tr_whiten *q, const float *spec, tr_error *err)
{
    const tr_whiten_config *c = &q->cfg;
    q->variant = c->variant;
    tr_placement p;
    tr_status s =
        tr_place("whiten", c->backend, c->variant, c->device, c->batch, &p, err);
    if (s != TR_OK) return s;
    if (p.try_cuda) {
#ifdef TR_HAVE_CUDA
        s = cuda_start(q, spec, err);
        if (s == TR_OK) {
            q->backend = TR_BACKEND_CUDA;
            q->nb = c->batch;
            return TR_OK;
        }
        if (q->cuda) tr_cuda_whiten_destroy((tr_cuda_whiten *)q->cuda);
        q->cuda = NULL;
        if (p.need_cuda) return s;
#endif
    }
    q->backend = TR_BACKEND_CPU;
    q->nb = 1;
    if (q->variant == TR_VARIANT_REFERENCE) return TR_OK;
    return tr_whiten_fftw_create(spec, q->ntaps, q->M, &q->fftw, err);
}

/* Filter, spectrum and backend. */
static tr_status build(tr_whiten *q, tr_error *err)
{
    const size_t nbin = tr_psd_len(q->cfg.nfft);
    q->psd = (double *)malloc(nbin * sizeof *q->psd);
    q->taps = (double *)malloc(q->ntaps * sizeof *q->taps);
    float *spec = (float *)malloc((q->M / 2 + 1) * 2 * sizeof *spec);
    tr_status s = TR_OK;
    if (!q->psd || !q->taps || !spec) {
        s = tr_fail(err, TR_ERR_NOMEM, "whiten: cannot allocate the filter");
        goto done;
    }
    memcpy(q->psd, q->cfg.psd, nbin * sizeof *q->psd);
    q->cfg.psd = q->psd;
    s = tr_whiten_design(q->psd, q->cfg.nfft, q->cfg.rate, q->cfg.fmin, q->half, q->taps,
                         err);
    if (s == TR_OK) s = tr_whiten_spectrum(q->taps, q->ntaps, q->M, spec, err);
    if (s == TR_OK) s = choose_backend(q, spec, err);
done:
    free(spec);
    return s;
}

/* History, output queue and gate ring. */
static tr_status alloc_stream(tr_whiten *q, tr_error *err)
{
    const size_t span = q->nb * q->B;
    if (q->nb > SIZE_MAX / 4 / sizeof(float) / q->B)
        return tr_fail(err, TR_ERR_INVALID, "whiten: batch %zu too large", q->nb);
    q->fifo_cap = span + q->B;
    /* Pending gates start no earlier than half before the next output and no
     * later than the newest sample; merged gates are 2 half + 2 apart at least. */
    q->gate_cap = (q->half + q->half + q->B + span) / (2 * q->half + 1) + 3;
    q->buf = (float *)calloc(q->ntaps - 1 + span, sizeof *q->buf);
    q->blocks = (float *)malloc(span * sizeof *q->blocks);
    q->fifo = (float *)malloc(q->fifo_cap * sizeof *q->fifo);
    q->gates = (gate *)malloc(q->gate_cap * sizeof *q->gates);
    if (!q->buf || !q->blocks || !q->fifo || !q->gates)
        return tr_fail(err, TR_ERR_NOMEM,
                       "whiten: cannot allocate the stream buffers (%zu samples)", span);
    return TR_OK;
}

tr_whiten *tr_whiten_create(const tr_whiten_config *cfg, tr_error *err)
{
    if (!cfg) {
        tr_fail(err, TR_ERR_INVALID, "whiten: NULL configuration");
        return NULL;
    }
    tr_whiten *q = (tr_whiten *)calloc(1, sizeof *q);
    if (!q) {
        tr_fail(err, TR_ERR_NOMEM, "whiten: cannot allocate the object");
        return NULL;
    }
    q->cfg = *cfg;
    tr_placement dummy;
    if (check_config(q, cfg, err) != TR_OK ||
        tr_place("whiten", cfg->backend, cfg->variant, cfg->device, cfg->batch, &dummy,
                 err) != TR_OK ||
        build(q, err) != TR_OK || alloc_stream(q, err) != TR_OK) {
        tr_whiten_destroy(q);
        return NULL;
    }
    tr_clear(err);
    tr_clear(&q->err);
    return q;
}

void tr_whiten_destroy(tr_whiten *q)
{
    if (!q) return;
#ifdef TR_HAVE_CUDA
    if (q->cuda) tr_cuda_whiten_destroy((tr_cuda_whiten *)q->cuda);
#endif
    tr_whiten_fftw_destroy(q->fftw);
    free(q->psd);
    free(q->taps);
    free(q->buf);
    free(q->blocks);
    free(q->fifo);
    free(q->gates);
    free(q);
}

tr_status tr_whiten_reset(tr_whiten *q)
{
    if (!q) return TR_ERR_INVALID;
    memset(q->buf, 0, (q->ntaps - 1 + q->nb * q->B) * sizeof *q->buf);
    q->fill = 0;
    q->fifo_head = q->fifo_count = 0;
    q->gate_head = q->gate_count = 0;
    q->position = 0;
    q->gated = 0;
    tr_clear(&q->err);
    return TR_OK;
}

/* ---- gates ---- */

/* A non-finite sample at position b: gate z[b - half .. b + half]. */
static void gate_add(tr_whiten *q, uint64_t b)
{
    const uint64_t lo = b > q->half ? b - q->half : 0, hi = b + q->half;
    if (q->gate_count) {
        gate *last = &q->gates[(q->gate_head + q->gate_count - 1) % q->gate_cap];
        if (lo <= last->hi + 1) {
            last->hi = hi;
            return;
        }
    }
    /* Cannot overflow: gate_cap bounds the pending gates (alloc_stream). */
    q->gates[(q->gate_head + q->gate_count) % q->gate_cap] = (gate){lo, hi};
    q->gate_count++;
}

/* Whether z[t] is gated; drops the gates that end before t (t increases). */
static int gate_covers(tr_whiten *q, uint64_t t)
{
    while (q->gate_count && q->gates[q->gate_head].hi < t) {
        q->gate_head = (q->gate_head + 1) % q->gate_cap;
        q->gate_count--;
    }
    return q->gate_count && q->gates[q->gate_head].lo <= t;
}

/* ---- the stream ---- */

/* Convolve k complete blocks of buf into the output queue. */
static tr_status run_blocks(tr_whiten *q, size_t k)
{
    const size_t n = k * q->B;
    if (q->variant == TR_VARIANT_REFERENCE) {
        tr_whiten_blocks_ref(q->taps, q->ntaps, q->buf, n, q->blocks);
    } else if (q->fftw) {
        tr_whiten_fftw_blocks(q->fftw, q->buf, k, q->blocks);
    } else {
#ifdef TR_HAVE_CUDA
        tr_status s =
            tr_cuda_whiten_run((tr_cuda_whiten *)q->cuda, q->buf, k, q->blocks, &q->err);
        if (s != TR_OK) return s;
#endif
    }
    for (size_t i = 0; i < n; ++i)
        q->fifo[(q->fifo_head + q->fifo_count + i) % q->fifo_cap] = q->blocks[i];
    q->fifo_count += n;
    /* Keep the ntaps - 1 samples before the next block, and its partial fill. */
    memmove(q->buf, q->buf + n, (q->ntaps - 1 + q->fill - n) * sizeof *q->buf);
    q->fill -= n;
    return TR_OK;
}

/* m <= nb * B - fill samples in, m outputs out. */
static tr_status step(tr_whiten *q, const float *x, size_t m, float *y)
{
    float *dst = q->buf + q->ntaps - 1 + q->fill;
    for (size_t i = 0; i < m; ++i) {
        if (isfinite(x[i])) {
            dst[i] = x[i];
        } else {
            dst[i] = 0.0f;
            gate_add(q, q->position + i);
        }
    }
    q->fill += m;
    const size_t k = q->fill / q->B;
    if (k) {
        tr_status s = run_blocks(q, k);
        if (s != TR_OK) return s;
    }
    const uint64_t D = q->half + q->B;
    for (size_t i = 0; i < m; ++i) {
        const uint64_t p = q->position + i;
        float v = 0.0f;
        if (p >= q->B) { /* c[p - B] is queued */
            v = q->fifo[q->fifo_head];
            q->fifo_head = (q->fifo_head + 1) % q->fifo_cap;
            q->fifo_count--;
            if (p < D) {
                v = 0.0f; /* z[t], t < 0 */
            } else if (gate_covers(q, p - D)) {
                v = 0.0f;
                q->gated++;
            }
        }
        y[i] = v;
    }
    q->position += m;
    return TR_OK;
}

tr_status tr_whiten_process(tr_whiten *q, const float *x, size_t n, float *y)
{
    if (!q) return TR_ERR_INVALID;
    if (n && (!x || !y)) return tr_fail(&q->err, TR_ERR_INVALID, "whiten: NULL buffer");
    const size_t span = q->nb * q->B;
    for (size_t done = 0; done < n;) {
        size_t m = span - q->fill;
        if (m > n - done) m = n - done;
        tr_status s = step(q, x + done, m, y + done);
        if (s != TR_OK) return s;
        done += m;
    }
    return TR_OK;
}

tr_status tr_whiten_taps(const tr_whiten *q, double *taps, size_t len)
{
    if (!q || !taps || len != q->ntaps) return TR_ERR_INVALID;
    memcpy(taps, q->taps, len * sizeof *taps);
    return TR_OK;
}

uint64_t tr_whiten_latency(const tr_whiten *q)
{
    return q ? q->half + q->B : 0;
}
uint64_t tr_whiten_position(const tr_whiten *q)
{
    return q ? q->position : 0;
}
uint64_t tr_whiten_gated(const tr_whiten *q)
{
    return q ? q->gated : 0;
}
size_t tr_whiten_half_len(const tr_whiten *q)
{
    return q ? q->half : 0;
}
size_t tr_whiten_fft_len(const tr_whiten *q)
{
    return q ? q->M : 0;
}
tr_backend tr_whiten_backend(const tr_whiten *q)
{
    return q ? q->backend : TR_BACKEND_CPU;
}
tr_variant tr_whiten_variant(const tr_whiten *q)
{
    return q ? q->variant : TR_VARIANT_FAST;
}
const char *tr_whiten_last_error(const tr_whiten *q)
{
    return q ? q->err.message : "whiten: NULL object";
}
