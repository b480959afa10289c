/*
 * SPIIR filter bank on CUDA: the context of cuda/spiir/spiir_cuda.h (device
 * data, FAST shape, uploads) and the host pipeline. The kernels are in
 * spiir_kernels.cuh, the FAST dispatch in spiir_fast_dispatch.cuh.
 *
 * Data on the device:
 *  - the delay line: [max_delay samples of history | the batch], cleaned
 *    (non-finite values are zero), rebuilt for every batch by line_kernel from
 *    the previous line and the new samples (two buffers, ping-pong), so the
 *    output does not depend on how the stream is cut into calls or batches.
 *    The line is stored as S = 4 / C shifted copies (C = floats per sample):
 *    copy s holds sample i + s at position i. Any 8 consecutive samples then
 *    start on a 16-byte boundary of one copy and load as 16-byte vectors,
 *    whatever the filter's delay.
 *  - the filters: FAST keeps each template's filters sorted by delay (lanes
 *    that run side by side read nearby samples), padded with zero filters
 *    (a1 = b0 = 0: they contribute exact zeros); for the window kernel
 *    (window_plan) they are placed on lanes by the shared-memory bank group
 *    their samples fall in (window_slots); PAPER keeps the bank's order,
 *    padded to the paper's thread counts. Coefficients are rounded to float
 *    once; states y are complex float.
 */
#include "common/cuda_check.h"
#include "common/host_stager.cuh"
#include "spiir/spiir_cuda.h"
#include "spiir/spiir_fast_dispatch.cuh"
#include "spiir/spiir_kernels.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

namespace
{

constexpr int kSeg = 256; /* segmented time: anchor spacing (power of 2) */
constexpr size_t kSegBytes = (size_t)256 << 20; /* segment states, at most */

/* One group of templates for a PAPER kernel. */
struct paper_group {
    uint32_t count = 0; /* templates */
    int m = 0;          /* threads per template */
    uint32_t *d_ids = nullptr;
    float4 *d_coef = nullptr;
    float2 *d_lo = nullptr;
    int32_t *d_off = nullptr;
    float2 *d_state = nullptr;
    size_t slots = 0;
};

} // namespace

struct tr_cuda_spiir {
    int device;
    int cplx; /* floats per sample: 1 or 2 */
    tr_variant variant;
    size_t batch;      /* samples per launch from device memory */
    size_t host_batch; /* samples per launch from host memory (output staging) */
    uint32_t nt;
    int64_t hist; /* max_delay */
    int64_t lc;   /* samples per line copy */
    float scale;  /* 2 dt */
    cudaStream_t stream;

    /* FAST */
    int f, p, rounds;
    int seg;        /* segmented time: anchor spacing L (0: off) */
    size_t seg_cap; /* segments per batch, at most */
    uint64_t pos;   /* samples processed since the last reset */
    float2 *d_A;    /* a1^L per slot */
    float2 *d_seg;  /* per segment and slot: E, then the anchor state */
    float4 *d_coef;
    float2 *d_lo; /* NULL unless the bank needs split poles */
    int32_t *d_off;
    float2 *d_state;
    size_t slots;
    size_t win_bytes;             /* window kernel's shared memory (0: the FAST kernel) */
    int wbase, wspan, wc, wchunk; /* its window (fast_args) */

    /* PAPER */
    paper_group small, large;

    float *d_line[2]; /* ping-pong delay lines */
    int cur;          /* the line holding the last batch */
    int64_t n_prev;   /* samples of the last batch in d_line[cur] */

    unsigned long long *d_bad, *h_bad; /* non-finite values of the current call */
    float *d_in[2], *h_in[2];          /* host path: input */
    float *d_out[2], *h_out[2];        /* host path: output */
    cudaEvent_t done[2];
    tr_host_stager *stager;
};

namespace
{

void ctx_free(tr_cuda_spiir *c)
{
    if (!c) return;
    if (c->device >= 0) {
        cudaSetDevice(c->device);
        if (c->stream) cudaStreamSynchronize(c->stream);
    }
    cudaFree(c->d_coef);
    cudaFree(c->d_lo);
    cudaFree(c->d_off);
    cudaFree(c->d_state);
    cudaFree(c->d_A);
    cudaFree(c->d_seg);
    for (paper_group *g : {&c->small, &c->large}) {
        cudaFree(g->d_ids);
        cudaFree(g->d_coef);
        cudaFree(g->d_lo);
        cudaFree(g->d_off);
        cudaFree(g->d_state);
    }
    for (int i = 0; i < 2; i++) {
        cudaFree(c->d_line[i]);
        cudaFree(c->d_in[i]);
        cudaFreeHost(c->h_in[i]);
        cudaFree(c->d_out[i]);
        cudaFreeHost(c->h_out[i]);
        if (c->done[i]) cudaEventDestroy(c->done[i]);
    }
    cudaFree(c->d_bad);
    cudaFreeHost(c->h_bad);
    if (c->stream) cudaStreamDestroy(c->stream);
    cudaGetLastError(); /* teardown errors are not the caller's */
    delete c->stager;
    c->~tr_cuda_spiir();
    free(c);
}

int pow2_ceil(uint64_t v)
{
    int p = 1;
    while ((uint64_t)p < v)
        p <<= 1;
    return p;
}

float4 coef_of(const tr_spiir_filter &f)
{
    return make_float4((float)f.a1_re, (float)f.a1_im, (float)f.b0_re, (float)f.b0_im);
}

/*
 * A pole rounded to float moves by up to 2^-25 relative, which changes the gain
 * of a filter with 1 - |a1| = g by about 2^-25 / g relative: 3e-5 at g = 1e-3,
 * 3e-4 at g = 1e-4. When some filter of the bank would move by more than 1e-4,
 * both variants keep every pole as the float pair hi + lo (lo = a1 - hi
 * rounded, as the CPU variant does): 4 more FMA per update. Banks with
 * 1 - |a1| >= 1e-3 (such as the benchmark's) keep the 6-FMA recurrence.
 */
bool needs_split_poles(const tr_cuda_spiir_bank *bank)
{
    for (uint64_t i = 0; i < bank->total; i++) {
        const tr_spiir_filter &f = bank->filters[i];
        const double lr = f.a1_re - (double)(float)f.a1_re;
        const double li = f.a1_im - (double)(float)f.a1_im;
        const double gap = 1.0 - std::hypot(f.a1_re, f.a1_im);
        if (std::hypot(lr, li) > 1e-4 * gap) return true;
    }
    return false;
}

/* a1^L in complex double (repeated squaring, L a power of two), rounded once. */
float2 pole_power(const tr_spiir_filter &f, int L)
{
    double re = f.a1_re, im = f.a1_im;
    for (int m = 1; m < L; m *= 2) {
        const double r = re * re - im * im, i = 2.0 * re * im;
        re = r;
        im = i;
    }
    return make_float2((float)re, (float)im);
}

/* Benchmark hook: TR_SPIIR_CUDA_SEGMENT=0 keeps whole batches per thread. */
bool seg_disabled()
{
    const char *e = std::getenv("TR_SPIIR_CUDA_SEGMENT");
    return e && e[0] == '0';
}

float2 pole_lo(const tr_spiir_filter &f)
{
    return make_float2((float)(f.a1_re - (double)(float)f.a1_re),
                       (float)(f.a1_im - (double)(float)f.a1_im));
}

/*
 * FAST shape: F filters per thread, P threads per template, rounds. Larger F
 * gives more independent chains per thread and fewer partial sums to combine,
 * but fewer threads; F is halved while the grid has fewer than 48 threads
 * per SM, where the shuffle latency of a wider reduction would be exposed with
 * one warp per scheduler (measurements: docs/spiir.md, GPU performance, Shape).
 */
void fast_shape(uint64_t max_filters, uint32_t nt, int sms, int cplx, int *F, int *P,
                int *rounds)
{
    int f =
        cplx == 2 ? 4 : 8; /* complex input: 8 filters spill registers in some shapes */
    for (; f > 1; f >>= 1) {
        const uint64_t per = (max_filters + f - 1) / f;
        const uint64_t p = (uint64_t)std::min<int>(pow2_ceil(per), kMaxP);
        if ((uint64_t)nt * p >= (uint64_t)48 * sms) break;
    }
    const uint64_t per = (max_filters + f - 1) / f;
    *F = f;
    *P = std::min<int>(pow2_ceil(per), kMaxP);
    *rounds = (int)((max_filters + (uint64_t)f * *P - 1) / ((uint64_t)f * *P));
    /* The fewest filters per thread that still cover the template with these
     * P and rounds: 65 filters take F = 5, P = 16 (80 slots) rather than 128
     * slots of F = 8 (the levels of a multirate bank have such counts). */
    *F = (int)((max_filters + (uint64_t)*P * *rounds - 1) / ((uint64_t)*P * *rounds));
    /* Large templates, real input: 16 filters on half the threads (same slots).
     * With P = 32 a template is one warp: no shared-memory exchange and barrier
     * per time block, half the shuffles per update, for more registers per
     * thread (docs/spiir.md, Shape). */
    if (cplx == 1 && *rounds == 1 && *F == 8 && (*P == 64 || *P == 128)) {
        *F = 16;
        *P /= 2;
    }
}

/*
 * Benchmark hook: TR_SPIIR_CUDA_SHAPE="N:F:P[,N:F:P...]" runs contexts whose
 * largest template has N filters (N = '*': any) with F filters per thread and
 * P threads per template instead of fast_shape's choice, so that shapes can be
 * compared in one build. Entries that the kernels do not provide are ignored.
 */
bool shape_override(uint64_t max_filters, int cplx, int *F, int *P, int *rounds)
{
    const char *e = std::getenv("TR_SPIIR_CUDA_SHAPE");
    if (!e) return false;
    while (*e) {
        char key[24] = {0};
        int f = 0, p = 0, used = 0;
        if (std::sscanf(e, " %23[^:]:%d:%d%n", key, &f, &p, &used) != 3) return false;
        e += used;
        while (*e == ',' || *e == ' ')
            e++;
        const bool match =
            !std::strcmp(key, "*") || std::strtoull(key, nullptr, 10) == max_filters;
        const bool pok = p >= 1 && p <= kMaxP && (p & (p - 1)) == 0;
        const bool fok = (f >= 1 && f <= (cplx == 2 ? 4 : 8)) ||
                         (cplx == 1 && f == 16 && p >= 16 && p <= 64);
        if (match && pok && fok) {
            *F = f;
            *P = p;
            *rounds = (int)((max_filters + (uint64_t)f * p - 1) / ((uint64_t)f * p));
            return true;
        }
    }
    return false;
}

/* Benchmark hook: TR_SPIIR_CUDA_WINDOW=0 keeps every FAST load in global memory. */
bool window_disabled()
{
    const char *e = std::getenv("TR_SPIIR_CUDA_WINDOW");
    return e && e[0] == '0';
}

typedef void (*fast_kernel_fn)(fast_args);

/* Benchmark hook: TR_SPIIR_CUDA_WINDOW_CHUNK=256 refills the window every 256
 * samples even where 512 fit. */
int window_chunk_forced()
{
    const char *e = std::getenv("TR_SPIIR_CUDA_WINDOW_CHUNK");
    return e ? std::atoi(e) : 0;
}

/*
 * The window kernel (spiir_window_kernel) for contexts of one-warp templates
 * (F = 16, P = 32, one round, real input, whole batches): used when its blocks,
 * with their windows of the delay span plus the refill length (kWinChunks, the
 * longest that does), keep at least as many warps on an SM as the FAST kernel
 * does. Sets win_bytes, wbase, wspan, wc and wchunk; win_bytes stays 0
 * otherwise.
 */
cudaError_t window_plan(tr_cuda_spiir *c, int32_t max_delay, bool split)
{
    c->win_bytes = 0;
    if (c->cplx != 1 || c->f != 16 || c->p != 32 || c->rounds != 1 || c->seg ||
        window_disabled())
        return cudaSuccess;
    const int64_t wbase = (c->hist - max_delay) & ~(int64_t)3;
    const int64_t wspan = c->hist - wbase; /* zero-filter slots read at hist */
    int optin = 0, fast_blocks = 0;
    cudaError_t e = cudaDeviceGetAttribute(
        &optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, c->device);
    if (e != cudaSuccess) return e;
    const fast_kernel_fn fk = split ? spiir_fast_kernel<16, 32, 1, true, false>
                                    : spiir_fast_kernel<16, 32, 1, false, false>;
    const fast_kernel_fn wk =
        split ? spiir_window_kernel<16, true> : spiir_window_kernel<16, false>;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fast_blocks, fk, kSmallBlock, 0);
    if (e != cudaSuccess) return e;
    /* The limit is per kernel, not per context: the device's largest, so that
     * contexts with windows of different sizes can all launch. */
    e = cudaFuncSetAttribute(wk, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
    if (e != cudaSuccess) return e;
    const int forced = window_chunk_forced();
    for (int chunk : kWinChunks) {
        if (forced && chunk != forced) continue;
        int64_t wc = (wspan + chunk + kT + 3) & ~(int64_t)3;
        wc += (8 - wc % 32 + 32) % 32; /* copies 2 bank groups apart */
        const size_t bytes = 4 * (size_t)wc * sizeof(float);
        if (bytes > (size_t)optin) continue;
        int win_blocks = 0;
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&win_blocks, wk, kWinWarps * 32,
                                                          bytes);
        if (e != cudaSuccess) return e;
        if (win_blocks * kWinWarps * 32 < fast_blocks * kSmallBlock) continue;
        c->win_bytes = bytes;
        c->wbase = (int)wbase;
        c->wspan = (int)wspan;
        c->wc = (int)wc;
        c->wchunk = chunk;
        return cudaSuccess;
    }
    return cudaSuccess;
}

/* Bank group (16 bytes, of 8) of a sample at window index i (spiir_window_kernel). */
int window_group(int64_t i)
{
    return (int)((2 * (i & 3) + (i >> 2)) & 7);
}

/*
 * Window kernel: places a template's n <= 512 filters (line offsets o[],
 * sorted by delay) on its 512 slots (slot = 32 f + lane), so that the 8 lanes
 * of a quarter warp in one filter slot mostly read different bank groups: such
 * a load takes as many passes as the most lanes on one group. Greedy, slot
 * group by slot group: each lane takes, from the bank groups with filters
 * left, one its slot group does not use yet, the one with the most filters
 * left; zero filters (n < 512) fill lanes that would repeat a bank group,
 * at an offset of a bank group their slot group lacks. src[slot] = the
 * filter's index, or -1 for a zero filter at line offset pad[slot].
 */
void window_slots(const std::vector<int32_t> &o, int wbase, int wspan,
                  std::vector<int64_t> &src, std::vector<int32_t> &pad)
{
    const size_t n = o.size();
    std::vector<int64_t> bucket[8];
    for (size_t q = 0; q < n; q++)
        bucket[window_group(o[q] - wbase)].push_back((int64_t)q);
    size_t next[8] = {0};
    size_t pads = 512 - n;
    src.assign(512, -1);
    pad.assign(512, wbase + wspan);
    for (int g = 0; g < 64; g++) {
        int used[8] = {0};
        for (int k = 0; k < 8; k++) {
            const int slot = (g / 4) * 32 + (g % 4) * 8 + k;
            int best = -1;
            for (int j = 0; j < 8; j++) {
                const size_t left = bucket[j].size() - next[j];
                if (left == 0) continue;
                if (best < 0 || used[j] < used[best] ||
                    (used[j] == used[best] && left > bucket[best].size() - next[best]))
                    best = j;
            }
            if (best < 0 || (used[best] > 0 && pads > 0)) {
                /* A zero filter, at an offset in a group not used yet. */
                pads--;
                for (int64_t i = wspan; i >= 0 && i >= wspan - 31; i--)
                    if (!used[window_group(i)]) {
                        pad[slot] = (int32_t)(wbase + i);
                        break;
                    }
                used[window_group(pad[slot] - wbase)]++;
                continue;
            }
            src[slot] = bucket[best][next[best]++];
            used[best]++;
        }
    }
}

template <class T> cudaError_t upload(T **d, const std::vector<T> &h, cudaStream_t s)
{
    cudaError_t e = cudaMalloc(d, (h.empty() ? 1 : h.size()) * sizeof(T));
    if (e != cudaSuccess || h.empty()) return e;
    return cudaMemcpyAsync(*d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, s);
}

} // namespace

extern "C" tr_status tr_cuda_spiir_create(int device, const tr_cuda_spiir_bank *bank,
                                          int complex_input, tr_variant variant,
                                          size_t batch, tr_cuda_spiir **out,
                                          tr_error *err)
{
    *out = NULL;
    if (!bank || bank->ntemplates == 0 || batch == 0)
        return tr_fail(err, TR_ERR_INVALID, "spiir/cuda: empty bank or zero batch");
    if (variant != TR_VARIANT_FAST && variant != TR_VARIANT_PAPER)
        return tr_fail(err, TR_ERR_UNSUPPORTED, "spiir/cuda: no %s variant on CUDA",
                       tr_variant_name(variant));
    void *mem = calloc(1, sizeof(tr_cuda_spiir));
    if (!mem)
        return tr_fail(err, TR_ERR_NOMEM, "spiir/cuda: cannot allocate the context");
    tr_cuda_spiir *c = new (mem) tr_cuda_spiir();
    c->device = -1;
    c->cplx = complex_input ? 2 : 1;
    c->variant = variant;
    c->nt = bank->ntemplates;
    c->hist = bank->max_delay;
    c->scale = (float)(2.0 * bank->dt);
    /* Launch sizes stay well inside int and the line offsets inside int32. */
    c->batch = std::min<size_t>(batch, (size_t)1 << 24);
    {
        /* Host path: keep the output staging near 32 MiB per slot. */
        const size_t per_sample = (size_t)c->nt * 2 * sizeof(float);
        const size_t cap = std::max<size_t>(64, ((size_t)32 << 20) / per_sample);
        c->host_batch = std::min(c->batch, cap);
    }
    c->lc = (c->hist + (int64_t)c->batch + kT + 3) / 4 * 4;
    uint64_t max_filters = 0;
    for (uint32_t t = 0; t < c->nt; t++)
        max_filters =
            std::max<uint64_t>(max_filters, bank->first[t + 1] - bank->first[t]);

    int sms = 1;
    bool split = false;
    TR_CUDA_TRY(cudaSetDevice(device), err, "spiir/cuda: select device", fail);
    c->device = device;
    TR_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), err,
                "spiir/cuda: query multiprocessors", fail);
    TR_CUDA_TRY(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), err,
                "spiir/cuda: create stream", fail);

    split = needs_split_poles(bank);
    if (variant == TR_VARIANT_FAST) {
        fast_shape(max_filters, c->nt, sms, c->cplx, &c->f, &c->p, &c->rounds);
        /* Small banks (fewer than 4 warps per SM): segmented time, and the
         * shape for a bank with many templates (the segments are the rest of
         * the parallelism). */
        c->seg = 0;
        if ((uint64_t)c->nt * c->p < (uint64_t)128 * sms && !bank->whole_batches &&
            !seg_disabled()) {
            int f, p, rounds;
            fast_shape(max_filters, c->nt * 64u, sms, c->cplx, &f, &p, &rounds);
            if (p <= 8 && f <= 8) { /* the segmented kernels' shapes */
                c->seg = kSeg;
                c->f = f, c->p = p, c->rounds = rounds;
            }
        }
        {
            int f = c->f, p = c->p, rounds = c->rounds;
            if (shape_override(max_filters, c->cplx, &f, &p, &rounds) &&
                (!c->seg || (p <= 8 && f <= 8)))
                c->f = f, c->p = p, c->rounds = rounds;
        }
        const size_t per_t = (size_t)c->rounds * c->f * c->p;
        c->slots = per_t * c->nt;
        TR_CUDA_TRY(window_plan(c, bank->max_delay, split), err,
                    "spiir/cuda: plan the window kernel", fail);
        if (c->seg) {
            /* Anchors up to L - 1 samples before a batch: a longer history;
             * at most kSegBytes of segment states. */
            c->hist += c->seg;
            c->seg_cap = std::max<size_t>(4, kSegBytes / (c->slots * sizeof(float2)));
            c->batch = std::min(c->batch, (c->seg_cap - 2) * (size_t)c->seg);
            c->seg_cap = c->batch / c->seg + 2;
            c->host_batch = std::min(c->host_batch, c->batch);
            c->lc = (c->hist + (int64_t)c->batch + kT + 3) / 4 * 4;
        }
        std::vector<float4> coef(c->slots, make_float4(0, 0, 0, 0));
        std::vector<float2> lo(split ? c->slots : 0, make_float2(0, 0));
        std::vector<float2> pw(c->seg ? c->slots : 0, make_float2(0, 0));
        std::vector<int32_t> off(c->slots, (int32_t)c->hist);
        std::vector<uint64_t> order;
        for (uint32_t t = 0; t < c->nt; t++) {
            const uint64_t b = bank->first[t], L = bank->first[t + 1] - b;
            order.resize(L);
            for (uint64_t i = 0; i < L; i++)
                order[i] = b + i;
            std::stable_sort(order.begin(), order.end(), [&](uint64_t u, uint64_t v) {
                return bank->filters[u].delay < bank->filters[v].delay;
            });
            if (c->win_bytes) {
                /* Slots placed for the window kernel's bank groups. */
                std::vector<int32_t> o(L), pad;
                std::vector<int64_t> src;
                for (uint64_t q = 0; q < L; q++)
                    o[q] = (int32_t)(c->hist - bank->filters[order[q]].delay);
                window_slots(o, c->wbase, c->wspan, src, pad);
                for (size_t q = 0; q < per_t; q++) {
                    if (src[q] < 0) {
                        off[t * per_t + q] = pad[q];
                        continue;
                    }
                    const tr_spiir_filter &fl = bank->filters[order[src[q]]];
                    coef[t * per_t + q] = coef_of(fl);
                    if (split) lo[t * per_t + q] = pole_lo(fl);
                    off[t * per_t + q] = o[src[q]];
                }
                continue;
            }
            for (uint64_t q = 0; q < L; q++) {
                const tr_spiir_filter &fl = bank->filters[order[q]];
                coef[t * per_t + q] = coef_of(fl);
                if (split) lo[t * per_t + q] = pole_lo(fl);
                if (c->seg) pw[t * per_t + q] = pole_power(fl, c->seg);
                off[t * per_t + q] = (int32_t)(c->hist - fl.delay);
            }
        }
        if (c->seg) {
            TR_CUDA_TRY(upload(&c->d_A, pw, c->stream), err,
                        "spiir/cuda: upload pole powers", fail);
            TR_CUDA_TRY(cudaMalloc(&c->d_seg, c->seg_cap * c->slots * sizeof(float2)),
                        err, "spiir/cuda: allocate segment states", fail);
        }
        TR_CUDA_TRY(upload(&c->d_coef, coef, c->stream), err,
                    "spiir/cuda: upload coefficients", fail);
        if (split)
            TR_CUDA_TRY(upload(&c->d_lo, lo, c->stream), err,
                        "spiir/cuda: upload coefficients", fail);
        TR_CUDA_TRY(upload(&c->d_off, off, c->stream), err, "spiir/cuda: upload delays",
                    fail);
        TR_CUDA_TRY(cudaMalloc(&c->d_state, c->slots * sizeof(float2)), err,
                    "spiir/cuda: allocate states", fail);
        TR_CUDA_TRY(cudaStreamSynchronize(c->stream), err, "spiir/cuda: upload bank",
                    fail);
    } else {
        if (max_filters > (uint64_t)kPaperMaxBlock) {
            tr_fail(err, TR_ERR_UNSUPPORTED,
                    "spiir/cuda: the paper variant takes at most %d filters per template "
                    "(this bank has %llu)",
                    kPaperMaxBlock, (unsigned long long)max_filters);
            goto fail;
        }
        /* Warp-based group: one power of two for all templates of <= 32 filters;
         * block-based group: one multiple of 32 for the others. */
        uint64_t max_small = 0, max_large = 0;
        for (uint32_t t = 0; t < c->nt; t++) {
            const uint64_t L = bank->first[t + 1] - bank->first[t];
            if (L <= 32) {
                max_small = std::max(max_small, L);
                c->small.count++;
            } else {
                max_large = std::max(max_large, L);
                c->large.count++;
            }
        }
        c->small.m = pow2_ceil(max_small);
        c->large.m = (int)((max_large + 31) / 32 * 32);
        for (paper_group *g : {&c->small, &c->large}) {
            if (g->count == 0) continue;
            const bool is_small = g == &c->small;
            g->slots = (size_t)g->count * g->m;
            if (is_small) /* whole blocks: idle lanes read slot data too */
                g->slots =
                    (g->slots + kPaperWarpBlock - 1) / kPaperWarpBlock * kPaperWarpBlock;
            std::vector<uint32_t> ids;
            std::vector<float4> coef(g->slots, make_float4(0, 0, 0, 0));
            std::vector<float2> lo(split ? g->slots : 0, make_float2(0, 0));
            std::vector<int32_t> off(g->slots, (int32_t)(c->hist * c->cplx));
            for (uint32_t t = 0; t < c->nt; t++) {
                const uint64_t b = bank->first[t], L = bank->first[t + 1] - b;
                if ((L <= 32) != is_small) continue;
                const size_t e = ids.size();
                ids.push_back(t);
                for (uint64_t i = 0; i < L; i++) {
                    const tr_spiir_filter &fl = bank->filters[b + i];
                    coef[e * g->m + i] = coef_of(fl);
                    if (split) lo[e * g->m + i] = pole_lo(fl);
                    off[e * g->m + i] = (int32_t)((c->hist - fl.delay) * c->cplx);
                }
            }
            TR_CUDA_TRY(upload(&g->d_ids, ids, c->stream), err,
                        "spiir/cuda: upload template map", fail);
            TR_CUDA_TRY(upload(&g->d_coef, coef, c->stream), err,
                        "spiir/cuda: upload coefficients", fail);
            if (split)
                TR_CUDA_TRY(upload(&g->d_lo, lo, c->stream), err,
                            "spiir/cuda: upload coefficients", fail);
            TR_CUDA_TRY(upload(&g->d_off, off, c->stream), err,
                        "spiir/cuda: upload delays", fail);
            TR_CUDA_TRY(cudaMalloc(&g->d_state, g->slots * sizeof(float2)), err,
                        "spiir/cuda: allocate states", fail);
            TR_CUDA_TRY(cudaStreamSynchronize(c->stream), err, "spiir/cuda: upload bank",
                        fail);
        }
    }

    for (int i = 0; i < 2; i++) {
        const size_t in_bytes = c->host_batch * c->cplx * sizeof(float);
        const size_t out_bytes = c->host_batch * c->nt * 2 * sizeof(float);
        TR_CUDA_TRY(cudaMalloc(&c->d_line[i], (size_t)c->lc * 4 * sizeof(float)), err,
                    "spiir/cuda: allocate delay line", fail);
        TR_CUDA_TRY(cudaMalloc(&c->d_in[i], in_bytes), err,
                    "spiir/cuda: allocate device input", fail);
        TR_CUDA_TRY(cudaMallocHost(&c->h_in[i], in_bytes), err,
                    "spiir/cuda: allocate pinned input", fail);
        TR_CUDA_TRY(cudaMalloc(&c->d_out[i], out_bytes), err,
                    "spiir/cuda: allocate device output", fail);
        TR_CUDA_TRY(cudaMallocHost(&c->h_out[i], out_bytes), err,
                    "spiir/cuda: allocate pinned output", fail);
        TR_CUDA_TRY(cudaEventCreateWithFlags(&c->done[i], cudaEventDisableTiming), err,
                    "spiir/cuda: create event", fail);
    }
    TR_CUDA_TRY(cudaMalloc(&c->d_bad, sizeof *c->d_bad), err, "spiir/cuda: allocate",
                fail);
    TR_CUDA_TRY(cudaMallocHost(&c->h_bad, sizeof *c->h_bad), err,
                "spiir/cuda: allocate pinned counter", fail);
    try {
        c->stager = new tr_host_stager(tr_host_stager_threads());
    } catch (...) {
        tr_fail(err, TR_ERR_NOMEM, "spiir/cuda: cannot start the staging threads");
        goto fail;
    }
    if (tr_cuda_spiir_reset(c, err) != TR_OK) goto fail;
    *out = c;
    return TR_OK;
fail:
    ctx_free(c);
    return err ? err->code : TR_ERR_CUDA;
}

extern "C" void tr_cuda_spiir_destroy(tr_cuda_spiir *c)
{
    ctx_free(c);
}

extern "C" tr_status tr_cuda_spiir_reset(tr_cuda_spiir *c, tr_error *err)
{
    TR_CUDA_TRY(cudaSetDevice(c->device), err, "spiir/cuda: select device", fail);
    for (int i = 0; i < 2; i++)
        TR_CUDA_TRY(cudaMemsetAsync(c->d_line[i], 0, (size_t)c->lc * 4 * sizeof(float),
                                    c->stream),
                    err, "spiir/cuda: clear delay line", fail);
    if (c->d_state)
        TR_CUDA_TRY(cudaMemsetAsync(c->d_state, 0, c->slots * sizeof(float2), c->stream),
                    err, "spiir/cuda: clear states", fail);
    for (paper_group *g : {&c->small, &c->large})
        if (g->d_state)
            TR_CUDA_TRY(
                cudaMemsetAsync(g->d_state, 0, g->slots * sizeof(float2), c->stream), err,
                "spiir/cuda: clear states", fail);
    TR_CUDA_TRY(cudaStreamSynchronize(c->stream), err, "spiir/cuda: reset", fail);
    c->cur = 0;
    c->n_prev = 0;
    c->pos = 0;
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

namespace
{

/* One of the four instances of a PAPER kernel (samples real or complex, poles
 * split or not). */
typedef void (*paper_kernel)(paper_args);
void launch_paper(paper_kernel r, paper_kernel r_lo, paper_kernel c, paper_kernel c_lo,
                  int cplx, const paper_args &a, unsigned grid, int block, cudaStream_t s)
{
    paper_kernel k = cplx == 1 ? (a.lo ? r_lo : r) : (a.lo ? c_lo : c);
    k<<<grid, block, 0, s>>>(a);
}

/* Enqueue one batch: device samples d_x[0..n) (n <= c->batch) into the next
 * delay line, then the variant's kernels writing d_snr[0 .. n * nt). */
tr_status enqueue_batch(tr_cuda_spiir *c, const float *d_x, int64_t n, float2 *d_snr,
                        tr_error *err)
{
    const int nxt = c->cur ^ 1;
    {
        const int64_t total = (4 / c->cplx) * c->lc;
        const int threads = 256;
        const int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 4096);
        if (c->cplx == 1)
            line_kernel<1><<<blocks, threads, 0, c->stream>>>(
                c->d_line[c->cur], c->d_line[nxt], d_x, n, c->n_prev, c->hist, c->lc,
                c->d_bad);
        else
            line_kernel<2><<<blocks, threads, 0, c->stream>>>(
                c->d_line[c->cur], c->d_line[nxt], d_x, n, c->n_prev, c->hist, c->lc,
                c->d_bad);
        TR_CUDA_TRY(cudaGetLastError(), err, "spiir/cuda: launch delay-line kernel",
                    fail);
    }
    c->cur = nxt;
    c->n_prev = n;
    if (c->variant == TR_VARIANT_FAST) {
        fast_args a;
        a.coef = c->d_coef;
        a.lo = c->d_lo;
        a.off = c->d_off;
        a.state = c->d_state;
        a.line = c->d_line[c->cur];
        a.n = (int)n;
        a.nt = c->nt;
        a.rounds = c->rounds;
        a.scale = c->scale;
        a.out = d_snr;
        a.lc = c->lc;
        a.hist = (int)c->hist;
        a.skip = 0;
        a.seg = c->seg;
        a.kbeg0 = 0;
        a.yseg = c->d_seg;
        a.slots = c->slots;
        if (c->seg) {
            /* Anchors: multiples of L in the stream; the first segment starts at
             * the anchor at or before this batch's first sample. */
            const int L = c->seg;
            a.kbeg0 = -(int)(c->pos % (uint64_t)L);
            const int nseg = (int)((n - a.kbeg0 + L - 1) / L);
            const int nc = (int)((n - a.kbeg0) / L);
            if (nc > 0) {
                const size_t th = c->slots * (size_t)nc;
                const unsigned blocks = (unsigned)((th + 255) / 256);
                if (c->cplx == 1)
                    seg_end_kernel<1><<<blocks, 256, 0, c->stream>>>(
                        c->d_coef, c->d_off, a.line, c->lc, L, a.kbeg0, nc, c->slots,
                        c->d_seg);
                else
                    seg_end_kernel<2><<<blocks, 256, 0, c->stream>>>(
                        c->d_coef, c->d_off, a.line, c->lc, L, a.kbeg0, nc, c->slots,
                        c->d_seg);
                TR_CUDA_TRY(cudaGetLastError(), err, "spiir/cuda: launch segment kernel",
                            fail);
            }
            seg_scan_kernel<<<(unsigned)((c->slots + 255) / 256), 256, 0, c->stream>>>(
                c->d_A, c->d_state, c->d_seg, nseg, nc, c->slots);
            TR_CUDA_TRY(cudaGetLastError(), err, "spiir/cuda: launch scan kernel", fail);
        }
        c->pos += (uint64_t)n;
        a.wbase = c->wbase;
        a.wspan = c->wspan;
        a.wc = c->wc;
        a.wchunk = c->wchunk;
        cudaError_t e;
        if (c->win_bytes) {
            const unsigned grid = (unsigned)((c->nt + kWinWarps - 1) / kWinWarps);
            if (a.lo)
                spiir_window_kernel<16, true>
                    <<<grid, kWinWarps * 32, c->win_bytes, c->stream>>>(a);
            else
                spiir_window_kernel<16, false>
                    <<<grid, kWinWarps * 32, c->win_bytes, c->stream>>>(a);
            e = cudaGetLastError();
        } else {
            e = c->cplx == 1 ? launch_fast_c<1>(c->f, c->p, a, c->stream)
                             : launch_fast_c<2>(c->f, c->p, a, c->stream);
        }
        TR_CUDA_TRY(e, err, "spiir/cuda: launch fast kernel", fail);
    } else {
        if (c->large.count)
            TR_CUDA_TRY(
                cudaMemsetAsync(d_snr, 0, (size_t)n * c->nt * sizeof(float2), c->stream),
                err, "spiir/cuda: clear output", fail);
        for (paper_group *g : {&c->small, &c->large}) {
            if (g->count == 0) continue;
            paper_args a;
            a.ids = g->d_ids;
            a.coef = g->d_coef;
            a.lo = g->d_lo;
            a.off = g->d_off;
            a.state = g->d_state;
            a.line = c->d_line[c->cur];
            a.n = (int)n;
            a.count = g->count;
            a.nt = c->nt;
            a.m = g->m;
            a.scale = c->scale;
            a.out = d_snr;
            if (g == &c->small)
                launch_paper(
                    spiir_paper_warp_kernel<1, false>, spiir_paper_warp_kernel<1, true>,
                    spiir_paper_warp_kernel<2, false>, spiir_paper_warp_kernel<2, true>,
                    c->cplx, a, (unsigned)(g->slots / kPaperWarpBlock), kPaperWarpBlock,
                    c->stream);
            else
                launch_paper(
                    spiir_paper_block_kernel<1, false>, spiir_paper_block_kernel<1, true>,
                    spiir_paper_block_kernel<2, false>, spiir_paper_block_kernel<2, true>,
                    c->cplx, a, g->count, g->m, c->stream);
            TR_CUDA_TRY(cudaGetLastError(), err, "spiir/cuda: launch paper kernel", fail);
        }
    }
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

/* Wait for the call's work and add its non-finite count. */
tr_status finish_call(tr_cuda_spiir *c, uint64_t *nonfinite, tr_error *err)
{
    TR_CUDA_TRY(cudaMemcpyAsync(c->h_bad, c->d_bad, sizeof *c->h_bad,
                                cudaMemcpyDeviceToHost, c->stream),
                err, "spiir/cuda: download non-finite count", fail);
    TR_CUDA_TRY(cudaStreamSynchronize(c->stream), err, "spiir/cuda: kernels", fail);
    if (nonfinite) *nonfinite += *c->h_bad;
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

} // namespace

extern "C" tr_status tr_cuda_spiir_run_device(tr_cuda_spiir *c, const float *d_x,
                                              size_t n, float *d_snr, uint64_t *nonfinite,
                                              tr_error *err)
{
    if (n == 0) return TR_OK;
    TR_CUDA_TRY(cudaSetDevice(c->device), err, "spiir/cuda: select device", fail);
    TR_CUDA_TRY(tr_cuda_caller_ready(), err, "spiir/cuda: wait for the caller's stream",
                fail);
    TR_CUDA_TRY(cudaMemsetAsync(c->d_bad, 0, sizeof *c->d_bad, c->stream), err,
                "spiir/cuda: clear counter", fail);
    for (size_t off = 0; off < n; off += c->batch) {
        const size_t len = std::min(c->batch, n - off);
        const tr_status s =
            enqueue_batch(c, d_x + off * c->cplx, (int64_t)len,
                          reinterpret_cast<float2 *>(d_snr) + off * c->nt, err);
        if (s != TR_OK) return s;
    }
    return finish_call(c, nonfinite, err);
fail:
    return err ? err->code : TR_ERR_CUDA;
}

extern "C" tr_status tr_cuda_spiir_enqueue(tr_cuda_spiir *c, const float *d_x, size_t n,
                                           float *d_snr, tr_error *err)
{
    for (size_t off = 0; off < n; off += c->batch) {
        const size_t len = std::min(c->batch, n - off);
        const tr_status s =
            enqueue_batch(c, d_x + off * c->cplx, (int64_t)len,
                          reinterpret_cast<float2 *>(d_snr) + off * c->nt, err);
        if (s != TR_OK) return s;
    }
    return TR_OK;
}

extern "C" void *tr_cuda_spiir_stream(tr_cuda_spiir *c)
{
    return c->stream;
}

/*
 * Host samples: batches alternate between two slots, so that while the GPU
 * runs batch b, the host stages the input of batch b + 1 and copies the output
 * of batch b - 1 out of pinned memory (pinned caller buffers are used directly).
 */
extern "C" tr_status tr_cuda_spiir_run_host(tr_cuda_spiir *c, const float *x, size_t n,
                                            float *snr, uint64_t *nonfinite,
                                            tr_error *err)
{
    if (n == 0) return TR_OK;
    const int direct_in = tr_host_is_pinned(x), direct_out = tr_host_is_pinned(snr);
    const size_t per_out = (size_t)c->nt * 2; /* floats per sample of output */
    size_t pend_off[2] = {0, 0}, pend_len[2] = {0, 0};
    size_t b = 0;
    TR_CUDA_TRY(cudaSetDevice(c->device), err, "spiir/cuda: select device", fail);
    TR_CUDA_TRY(cudaMemsetAsync(c->d_bad, 0, sizeof *c->d_bad, c->stream), err,
                "spiir/cuda: clear counter", fail);
    for (size_t off = 0; off < n; off += c->host_batch, b++) {
        const int s = (int)(b & 1);
        const size_t len = std::min(c->host_batch, n - off);
        /* The slot's previous batch: its upload, kernels and download are done. */
        if (pend_len[s]) {
            TR_CUDA_TRY(cudaEventSynchronize(c->done[s]), err, "spiir/cuda: kernels",
                        fail);
            if (!direct_out)
                c->stager->copy(snr + pend_off[s] * per_out, c->h_out[s],
                                pend_len[s] * per_out * sizeof(float));
            pend_len[s] = 0;
        }
        const float *src = x + off * c->cplx;
        const size_t in_bytes = len * c->cplx * sizeof(float);
        if (!direct_in) {
            c->stager->copy(c->h_in[s], src, in_bytes);
            src = c->h_in[s];
        }
        TR_CUDA_TRY(
            cudaMemcpyAsync(c->d_in[s], src, in_bytes, cudaMemcpyHostToDevice, c->stream),
            err, "spiir/cuda: upload samples", fail);
        const tr_status st = enqueue_batch(c, c->d_in[s], (int64_t)len,
                                           reinterpret_cast<float2 *>(c->d_out[s]), err);
        if (st != TR_OK) return st;
        TR_CUDA_TRY(cudaMemcpyAsync(direct_out ? snr + off * per_out : c->h_out[s],
                                    c->d_out[s], len * per_out * sizeof(float),
                                    cudaMemcpyDeviceToHost, c->stream),
                    err, "spiir/cuda: download SNR", fail);
        TR_CUDA_TRY(cudaEventRecord(c->done[s], c->stream), err, "spiir/cuda: event",
                    fail);
        pend_off[s] = off;
        pend_len[s] = len;
    }
    {
        const tr_status st = finish_call(c, nonfinite, err);
        if (st != TR_OK) return st;
    }
    if (!direct_out) {
        /* Older batch first (the order does not matter: the slots are disjoint). */
        for (int s = 0; s < 2; s++)
            if (pend_len[s])
                c->stager->copy(snr + pend_off[s] * per_out, c->h_out[s],
                                pend_len[s] * per_out * sizeof(float));
    }
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}
