/*
 * The device normalisation context of norm_cuda.h: the window buffer, the
 * rings of summaries (H windows) and values in effect (E windows), the
 * cleaned copy of a call, and the launches per window piece.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * eqs. 3-5 and section 4.6.2.
 *
 * The ring of values in effect holds the windows a call's outputs can reach
 * (latency + the call's samples); a longer call grows it first, keeping the
 * windows it holds. A call is cut at window boundaries; each piece is gathered into the
 * window buffer and cleaned with the fill values of its window, and a piece that
 * completes window j is followed by the summaries of j and the values in
 * effect for j + 1, all in order on one stream (the values of window j + 1
 * depend only on data before (j + 1) W, so the next piece may use them).
 * Whole windows inside a call skip the buffer: up to P.batch of them are
 * summarised from the call's input in one launch, their values in effect
 * set in one launch, then their samples cleaned in one (whole_windows); the
 * summary ring has H + P.batch - 1 slots, so a batch never overwrites what
 * its first windows merge.
 *
 * The work goes on one stream, the search's when the setup gives it: the
 * search follows the cleaned samples and tables without a wait on the host.
 * The non-finite count and the ready flags come back into page-locked
 * memory on that stream; settle (after the search has waited for its
 * stream) takes them.
 *
 * first_own: the cleaned samples pass through a delay line of W positions
 * (`ring`, as lib/core/boxcar/boxcar.c holds them on the host), so that
 * window 0 is searched after its own values were fixed at its end. Until
 * then the fill value of window 0 is NaN, so its non-finite samples stay
 * marked in the line and are replaced by window 0's own mean on the way out.
 */
#include "boxcar/norm_cuda.h"
#include "boxcar/norm_kernels.cuh"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <vector>

using namespace norm_cuda;

#define NORM_TRY(call, what) TR_BOXCAR_TRY(call, err, "boxcar_norm/cuda", what)

struct tr_cuda_norm {
    int device = -1;
    nparams P{};
    uint64_t latency = 0;
    uint64_t pos = 0;
    cudaStream_t stream = nullptr;
    int own_stream = 0;       /* the stream was created here */
    float *win = nullptr;     /* nchan * W: the current window, NaN = non-finite */
    acc *sum = nullptr;       /* Hs * nchan * nlev summaries */
    lev *eff = nullptr;       /* E * nchan * nlev values in effect */
    uint8_t *ready = nullptr; /* E * nchan */
    float *fill = nullptr;    /* E * nchan: input mean in effect */
    uint32_t *widths = nullptr;
    unsigned long long *count = nullptr;
    unsigned long long *hcount = nullptr; /* page-locked: the count of the last call */
    uint8_t *hready_pin = nullptr;        /* page-locked: the flags of the last call */
    int pending = 0;                      /* hcount, hready_pin being written */
    uint64_t ppos = 0;                    /* position after the pending call */
    uint64_t rpos = 0;                    /* position up to which hready holds flags */
    uint64_t nonfinite = 0;               /* count of the settled calls not yet taken */
    float *clean = nullptr;
    size_t cleancap = 0;
    float *tmu = nullptr, *tsig = nullptr;
    size_t tcap = 0;
    std::vector<uint8_t> hready; /* host copy of the ready ring (at rpos) */
    int first_own = 0;           /* window 0 by its own values: the delay line */
    float *ring = nullptr;       /* W * nchan held cleaned samples, time-major */
    float *held = nullptr;       /* a call's samples out of the line */
    size_t heldcap = 0;
};

namespace
{

template <typename T> cudaError_t alloc(T **p, size_t count)
{
    return cudaMalloc((void **)p, std::max<size_t>(count, 1) * sizeof(T));
}

/* Grow a device buffer to at least need elements (contents dropped). */
template <typename T> cudaError_t reserve(T **p, size_t *cap, size_t need)
{
    if (need <= *cap) return cudaSuccess;
    cudaFree(*p);
    *p = nullptr;
    *cap = 0;
    const cudaError_t e = alloc(p, need);
    if (e == cudaSuccess) *cap = need;
    return e;
}

/* The summaries of windows j0 .. j0 + grid.z - 1 of src with ns samples each:
 * the fewest values per thread in registers that hold a window's level-0
 * values, or the most. */
cudaError_t launch_summaries(const tr_cuda_norm *q, const win_src &src, dim3 grid,
                             uint32_t ns, uint64_t j0)
{
    constexpr int NT = kSumThreads;
    const nparams &P = q->P;
    if (ns <= (uint32_t)NT * 2)
        TR_LAUNCH(summarise<2>, grid, NT, 0, q->stream, src, P, ns, j0, q->sum);
    else if (ns <= (uint32_t)NT * 8)
        TR_LAUNCH(summarise<8>, grid, NT, 0, q->stream, src, P, ns, j0, q->sum);
    else
        TR_LAUNCH(summarise<kSumMaxVPT>, grid, NT, 0, q->stream, src, P, ns, j0, q->sum);
    return cudaGetLastError();
}

unsigned blocks_for(int64_t n)
{
    return (unsigned)std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, 4096));
}

/* Queue the copies of the ready flags (and the count) into page-locked
 * memory; settle takes them. */
tr_status queue_results(tr_cuda_norm *q, bool count, tr_error *err)
{
    if (count)
        NORM_TRY(cudaMemcpyAsync(q->hcount, q->count, sizeof *q->hcount,
                                 cudaMemcpyDeviceToHost, q->stream),
                 "read the count");
    NORM_TRY(cudaMemcpyAsync(q->hready_pin, q->ready, q->hready.size(),
                             cudaMemcpyDeviceToHost, q->stream),
             "copy the flags");
    if (!count) *q->hcount = 0;
    q->pending = 1;
    q->ppos = q->pos;
    return TR_OK;
}

/* Wait for the queued work; take the count and flags of a pending call. */
tr_status settle(tr_cuda_norm *q, tr_error *err)
{
    NORM_TRY(cudaStreamSynchronize(q->stream), "normalisation");
    if (q->pending) {
        q->nonfinite += *q->hcount;
        std::copy(q->hready_pin, q->hready_pin + q->hready.size(), q->hready.begin());
        q->rpos = q->ppos;
        q->pending = 0;
    }
    return TR_OK;
}

/* The values in effect that the summaries of windows j .. j + nw - 1 fix:
 * window 0's own (first_own, j = 0) and those of windows j + 1 .. j + nw, in
 * one launch (each window's values depend on summaries only). */
tr_status effects_after(tr_cuda_norm *q, uint64_t j, uint32_t nw, tr_error *err)
{
    const nparams &P = q->P;
    const unsigned nb = (P.nchan + 127) / 128;
    if (j == 0 && q->first_own) {
        TR_LAUNCH(effect, nb, 128, 0, q->stream, q->sum, P, (uint64_t)0, (uint64_t)1, 1u,
                  q->eff, q->ready, q->fill);
        NORM_TRY(cudaGetLastError(), "effect launch");
    }
    TR_LAUNCH(effect, dim3(nb, nw), 128, 0, q->stream, q->sum, P, j + 1, j + 1, P.H,
              q->eff, q->ready, q->fill);
    NORM_TRY(cudaGetLastError(), "effect launch");
    return TR_OK;
}

/* Summaries of the first n samples of window j in the window buffer (n = W
 * but at the end of a short stream), then the values they fix. */
tr_status window_done(tr_cuda_norm *q, uint64_t j, uint32_t n, tr_error *err)
{
    const nparams &P = q->P;
    const win_src src{q->win, 1, (int64_t)P.W, 0};
    NORM_TRY(launch_summaries(q, src, dim3(P.nchan, P.nlev), n, j), "summary launch");
    return effects_after(q, j, 1, err);
}

/* Whole windows j .. j + nw - 1 at positions k0 .. of a call's input x (ld
 * positions, nw <= P.batch): their summaries from x in one launch (a window
 * per grid layer: one channel's windows, one block per level each, would
 * leave most of the GPU idle one window after another), the values they fix
 * in one launch, then their samples into the cleaned copy in one launch. */
tr_status whole_windows(tr_cuda_norm *q, const float *x, int cm, int64_t ld, int64_t k0,
                        uint64_t j, uint32_t nw, tr_error *err)
{
    const nparams &P = q->P;
    const win_src src{x, cm, ld, k0};
    NORM_TRY(launch_summaries(q, src, dim3(P.nchan, P.nlev, nw), P.W, j),
             "summary launch");
    const tr_status s = effects_after(q, j, nw, err);
    if (s != TR_OK) return s;
    const int64_t m = (int64_t)nw * P.W;
    TR_LAUNCH(ingest, blocks_for(m * P.nchan), 256, 0, q->stream, x, cm, ld, k0, m,
              P.nchan, P.W, 0u, j, P.E, (float *)nullptr, q->fill, q->clean, q->count);
    NORM_TRY(cudaGetLastError(), "ingest launch");
    return TR_OK;
}

/* Positions p0 .. p0 + m - 1 out of the delay line into q->held (see
 * hold_out), the last min(n, W) of the call's n cleaned samples (clean, the
 * first at position pos; none at the end) into it. */
tr_status hold_pass(tr_cuda_norm *q, const float *clean, int cm, size_t n, uint64_t pos,
                    uint64_t p0, size_t m, tr_error *err)
{
    const nparams &P = q->P;
    NORM_TRY(reserve(&q->held, &q->heldcap, m * P.nchan), "allocate the held samples");
    if (m > 0) {
        TR_LAUNCH(hold_out, blocks_for((int64_t)(m * P.nchan)), 256, 0, q->stream, clean,
                  cm, (int64_t)n, pos, q->ring, P.W, P.nchan, p0, (int64_t)m, q->fill,
                  q->held);
        NORM_TRY(cudaGetLastError(), "hold launch");
    }
    const size_t keep = std::min<size_t>(n, P.W);
    if (keep > 0) {
        TR_LAUNCH(hold_in, blocks_for((int64_t)(keep * P.nchan)), 256, 0, q->stream,
                  clean, cm, (int64_t)n, pos, (int64_t)keep, P.W, P.nchan, q->ring);
        NORM_TRY(cudaGetLastError(), "hold launch");
    }
    return TR_OK;
}

/* The rings of values in effect with E2 > E slots, the kept windows moved
 * to their new slots. */
tr_status grow_ring(tr_cuda_norm *q, uint32_t E2, tr_error *err)
{
    nparams &P = q->P;
    const size_t C = P.nchan, L = P.nlev;
    lev *eff = nullptr;
    uint8_t *ready = nullptr, *pin = nullptr;
    float *fill = nullptr;
    std::vector<uint8_t> hready((size_t)E2 * C, 0);
    auto fail = [&](cudaError_t e) {
        cudaFree(eff);
        cudaFree(ready);
        cudaFree(fill);
        if (pin) cudaFreeHost(pin);
        return tr_fail(err, e == cudaErrorMemoryAllocation ? TR_ERR_NOMEM : TR_ERR_CUDA,
                       "boxcar_norm/cuda: grow the values: %s", cudaGetErrorString(e));
    };
    cudaError_t e;
    if ((e = alloc(&eff, (size_t)E2 * C * L)) || (e = alloc(&ready, (size_t)E2 * C)) ||
        (e = alloc(&fill, (size_t)E2 * C)) ||
        (e = cudaMallocHost((void **)&pin, (size_t)E2 * C)))
        return fail(e);
    const uint64_t cur = q->pos / P.W;
    for (uint64_t j = cur >= P.E - 1 ? cur - (P.E - 1) : 0; j <= cur; j++) {
        const size_t o = (size_t)(j % P.E), n2 = (size_t)(j % E2);
        if ((e = cudaMemcpyAsync(eff + n2 * C * L, q->eff + o * C * L,
                                 C * L * sizeof(lev), cudaMemcpyDeviceToDevice,
                                 q->stream)) ||
            (e = cudaMemcpyAsync(ready + n2 * C, q->ready + o * C, C,
                                 cudaMemcpyDeviceToDevice, q->stream)) ||
            (e = cudaMemcpyAsync(fill + n2 * C, q->fill + o * C, C * sizeof(float),
                                 cudaMemcpyDeviceToDevice, q->stream)))
            return fail(e);
        std::copy(q->hready.begin() + o * C, q->hready.begin() + (o + 1) * C,
                  hready.begin() + n2 * C);
    }
    if ((e = cudaStreamSynchronize(q->stream))) return fail(e);
    cudaFree(q->eff);
    cudaFree(q->ready);
    cudaFree(q->fill);
    cudaFreeHost(q->hready_pin);
    q->eff = eff;
    q->ready = ready;
    q->fill = fill;
    q->hready_pin = pin;
    q->hready.swap(hready);
    P.E = E2;
    return TR_OK;
}

} // namespace

extern "C" tr_status tr_cuda_norm_create(int device, const tr_cuda_norm_setup *s,
                                         tr_cuda_norm **out, tr_error *err)
{
    if (out) *out = NULL;
    if (!out || !s || s->nchan < 1 || s->window < 16 || s->history < 1 || s->nlev < 1 ||
        !s->widths || s->total < 1 || !(s->clip_factor > 0.0))
        return tr_fail(err, TR_ERR_INVALID, "boxcar_norm/cuda: invalid setup");
    void *mem = calloc(1, sizeof(tr_cuda_norm));
    if (!mem)
        return tr_fail(err, TR_ERR_NOMEM,
                       "boxcar_norm/cuda: cannot allocate the context");
    tr_cuda_norm *q = new (mem) tr_cuda_norm();
    nparams &P = q->P;
    P.nchan = s->nchan;
    P.W = s->window;
    P.H = s->history;
    P.nlev = s->nlev;
    /* A call's whole windows summarised in few launches: up to about 4096
     * blocks (several waves of 8 per SM on 132 SMs; each launch costs the
     * host as much as a few microseconds of kernel), at most 256 windows. */
    P.batch = (uint32_t)std::max<uint64_t>(
        1, std::min<uint64_t>(256, 4096 / ((uint64_t)s->nchan * s->nlev)));
    P.Hs = P.H + P.batch - 1;
    q->first_own = s->first_own;
    P.E = (uint32_t)((s->latency + 65536) / s->window + 3);
    P.total = s->total;
    P.k = s->reject_sigma;
    P.f = s->clip_factor;
    P.f2 = s->clip_factor * s->clip_factor;
    P.max_iter = s->reject_max_iter;
    P.init_mean = s->init_mean;
    P.init_sigma = s->init_sigma;
    q->latency = s->latency;
    const size_t C = P.nchan;
    tr_status st = TR_OK;
    auto attempt = [&]() -> tr_status {
        NORM_TRY(cudaSetDevice(device), "select device");
        q->device = device;
        if (s->stream) {
            q->stream = (cudaStream_t)s->stream;
        } else {
            NORM_TRY(cudaStreamCreateWithFlags(&q->stream, cudaStreamNonBlocking),
                     "create stream");
            q->own_stream = 1;
        }
        NORM_TRY(alloc(&q->win, C * P.W), "allocate the window");
        NORM_TRY(alloc(&q->sum, (size_t)P.Hs * C * P.nlev), "allocate the summaries");
        NORM_TRY(alloc(&q->eff, (size_t)P.E * C * P.nlev), "allocate the values");
        NORM_TRY(alloc(&q->ready, (size_t)P.E * C), "allocate the flags");
        NORM_TRY(alloc(&q->fill, (size_t)P.E * C), "allocate the fill values");
        NORM_TRY(alloc(&q->widths, P.total), "allocate the widths");
        NORM_TRY(alloc(&q->count, 1), "allocate the counter");
        NORM_TRY(cudaMallocHost((void **)&q->hcount, sizeof *q->hcount),
                 "allocate the counter");
        NORM_TRY(cudaMallocHost((void **)&q->hready_pin, (size_t)P.E * C),
                 "allocate the flags");
        if (q->first_own) NORM_TRY(alloc(&q->ring, C * P.W), "allocate the delay line");
        NORM_TRY(cudaMemcpy(q->widths, s->widths, P.total * sizeof(uint32_t),
                            cudaMemcpyHostToDevice),
                 "copy the widths");
        q->hready.assign((size_t)P.E * C, 0);
        return tr_cuda_norm_reset(q, err);
    };
    st = attempt();
    if (st != TR_OK) {
        tr_cuda_norm_destroy(q);
        return st;
    }
    *out = q;
    tr_clear(err);
    return TR_OK;
}

extern "C" void tr_cuda_norm_destroy(tr_cuda_norm *q)
{
    if (!q) return;
    if (q->device >= 0) cudaSetDevice(q->device);
    void *ptrs[] = {q->win,   q->sum,   q->eff, q->ready, q->fill, q->widths,
                    q->count, q->clean, q->tmu, q->tsig,  q->ring, q->held};
    if (q->stream) cudaStreamSynchronize(q->stream);
    for (void *p : ptrs)
        if (p) cudaFree(p);
    if (q->hcount) cudaFreeHost(q->hcount);
    if (q->hready_pin) cudaFreeHost(q->hready_pin);
    if (q->stream && q->own_stream) cudaStreamDestroy(q->stream);
    q->~tr_cuda_norm();
    free(q);
}

extern "C" tr_status tr_cuda_norm_reset(tr_cuda_norm *q, tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "boxcar_norm/cuda: NULL context");
    NORM_TRY(cudaSetDevice(q->device), "select device");
    NORM_TRY(cudaStreamSynchronize(q->stream), "reset");
    q->pos = q->rpos = 0;
    q->pending = 0;
    q->nonfinite = 0;
    const nparams &P = q->P;
    /* window 0: warm-up values (no summaries before it); with first_own its
     * fill value is NaN until its own values are fixed (see the top) */
    TR_LAUNCH(effect, (P.nchan + 127) / 128, 128, 0, q->stream, q->sum, P, (uint64_t)0,
              (uint64_t)0, 0u, q->eff, q->ready, q->fill);
    NORM_TRY(cudaGetLastError(), "effect launch");
    if (q->first_own)
        NORM_TRY(cudaMemsetAsync(q->fill, 0xff, P.nchan * sizeof(float), q->stream),
                 "mark window 0");
    NORM_TRY(cudaMemcpyAsync(q->hready.data(), q->ready, q->hready.size(),
                             cudaMemcpyDeviceToHost, q->stream),
             "copy the flags");
    NORM_TRY(cudaStreamSynchronize(q->stream), "reset");
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_norm_process(tr_cuda_norm *q, const float *x, size_t n,
                                          tr_boxcar_layout layout, int src,
                                          const float **clean, tr_error *err)
{
    if (!q || !clean || (n && !x))
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar_norm/cuda: process needs x and clean");
    NORM_TRY(cudaSetDevice(q->device), "select device");
    if (src == TR_SRC_CALLER_DEVICE)
        NORM_TRY(tr_cuda_caller_ready(), "wait for the caller's stream");
    /* the page-locked results of a call not settled yet are taken first */
    if (q->pending) {
        const tr_status s = settle(q, err);
        if (s != TR_OK) return s;
    }
    const uint64_t need = (q->latency + n) / q->P.W + 3;
    if (need > q->P.E) {
        const tr_status s =
            grow_ring(q, (uint32_t)std::max<uint64_t>(need, 2ull * q->P.E), err);
        if (s != TR_OK) return s;
    }
    const nparams &P = q->P;
    NORM_TRY(reserve(&q->clean, &q->cleancap, n * P.nchan), "allocate the cleaned copy");
    NORM_TRY(cudaMemsetAsync(q->count, 0, sizeof *q->count, q->stream),
             "clear the count");
    const int cm = layout == TR_BOXCAR_CHANNEL_MAJOR;
    for (size_t done = 0; done < n;) {
        const uint64_t j = q->pos / P.W;
        const uint32_t off = (uint32_t)(q->pos % P.W);
        if (off == 0 && n - done >= P.W) {
            const uint32_t nw =
                (uint32_t)std::min<uint64_t>((n - done) / P.W, (uint64_t)P.batch);
            const tr_status s =
                whole_windows(q, x, cm, (int64_t)n, (int64_t)done, j, nw, err);
            if (s != TR_OK) return s;
            q->pos += (uint64_t)nw * P.W;
            done += (size_t)nw * P.W;
            continue;
        }
        const size_t m = std::min<size_t>(P.W - off, n - done);
        TR_LAUNCH(ingest, blocks_for((int64_t)(m * P.nchan)), 256, 0, q->stream, x, cm,
                  (int64_t)n, (int64_t)done, (int64_t)m, P.nchan, P.W, off, j, P.E,
                  q->win, q->fill, q->clean, q->count);
        NORM_TRY(cudaGetLastError(), "ingest launch");
        q->pos += m;
        done += m;
        if (q->pos % P.W == 0) {
            const tr_status s = window_done(q, j, P.W, err);
            if (s != TR_OK) return s;
        }
    }
    const float *out = q->clean;
    if (q->first_own) {
        /* positions >= 0 of the delay line's output */
        const uint64_t pos = q->pos - n, first = std::max<uint64_t>(pos, P.W);
        const size_t m = (size_t)(q->pos - std::min<uint64_t>(first, q->pos));
        const tr_status s = hold_pass(q, q->clean, cm, n, pos, first - P.W, m, err);
        if (s != TR_OK) return s;
        out = q->held;
    }
    const tr_status s = queue_results(q, true, err);
    if (s != TR_OK) return s;
    *clean = out;
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_norm_settle(tr_cuda_norm *q, uint64_t *nonfinite,
                                         tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "boxcar_norm/cuda: NULL context");
    NORM_TRY(cudaSetDevice(q->device), "select device");
    const tr_status s = settle(q, err);
    if (s != TR_OK) return s;
    if (nonfinite) *nonfinite += q->nonfinite;
    q->nonfinite = 0;
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_norm_finish(tr_cuda_norm *q, tr_boxcar_layout layout,
                                         const float **held, size_t *m, tr_error *err)
{
    if (!q || !held || !m)
        return tr_fail(err, TR_ERR_INVALID, "boxcar_norm/cuda: finish needs held and m");
    *held = nullptr;
    *m = 0;
    if (!q->first_own) return TR_OK;
    NORM_TRY(cudaSetDevice(q->device), "select device");
    if (q->pending) {
        const tr_status s = settle(q, err);
        if (s != TR_OK) return s;
    }
    const nparams &P = q->P;
    if (q->pos > 0 && q->pos < P.W) {
        /* window 0 incomplete: its own values from the samples it has */
        const tr_status s = window_done(q, 0, (uint32_t)q->pos, err);
        if (s != TR_OK) return s;
    }
    const size_t have = (size_t)std::min<uint64_t>(q->pos, P.W);
    tr_status s = hold_pass(q, nullptr, layout == TR_BOXCAR_CHANNEL_MAJOR, 0, q->pos,
                            q->pos - have, have, err);
    if (s == TR_OK) s = queue_results(q, false, err);
    if (s == TR_OK) s = settle(q, err);
    if (s != TR_OK) return s;
    *held = q->held;
    *m = have;
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_norm_tables(tr_cuda_norm *q, uint64_t first, uint32_t nwin,
                                         const float **mu, const float **sigma,
                                         tr_error *err)
{
    if (!q || !mu || !sigma || nwin < 1)
        return tr_fail(err, TR_ERR_INVALID, "boxcar_norm/cuda: tables need nwin >= 1");
    const nparams &P = q->P;
    const uint64_t cur = q->pos / P.W;
    if (first + nwin - 1 > cur || cur - first >= P.E)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar_norm/cuda: windows %llu..%llu are not kept",
                       (unsigned long long)first, (unsigned long long)(first + nwin - 1));
    NORM_TRY(cudaSetDevice(q->device), "select device");
    const size_t nt = (size_t)nwin * P.nchan * P.total;
    size_t cap = q->tcap;
    NORM_TRY(reserve(&q->tmu, &cap, nt), "allocate the tables");
    NORM_TRY(reserve(&q->tsig, &q->tcap, nt), "allocate the tables");
    TR_LAUNCH(tables, blocks_for((int64_t)nt), 256, 0, q->stream, q->eff, P, first, nwin,
              q->widths, q->tmu, q->tsig);
    NORM_TRY(cudaGetLastError(), "tables launch");
    if (q->own_stream) NORM_TRY(cudaStreamSynchronize(q->stream), "tables");
    *mu = q->tmu;
    *sigma = q->tsig;
    tr_clear(err);
    return TR_OK;
}

extern "C" int tr_cuda_norm_ready(const tr_cuda_norm *q, uint64_t p, uint32_t c)
{
    if (!q || c >= q->P.nchan) return -1;
    const uint64_t j = p / q->P.W, cur = q->rpos / q->P.W;
    if (j > cur || cur - j >= q->P.E) return -1;
    return q->hready[(size_t)(j % q->P.E) * q->P.nchan + c];
}
