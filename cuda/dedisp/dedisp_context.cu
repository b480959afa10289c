/*
 * The CUDA dedispersion context (cuda/dedisp/dedisp_cuda.h): device history
 * of the last L spectra, batches through the kernels of dedisp_kernels.cuh.
 *
 * Paper: B. R. Barsdell et al., "Accelerating incoherent dedispersion"
 * (MNRAS 422, 379, 2012).
 *
 * History: two channel-major buffers of nused rows x cap = H + B spectra (B
 * = spectra per batch, H = L + smax - 1 with smax the largest scrunch factor:
 * the first output's block may start smax - 1 spectra before it). A batch
 * fills columns H .. H + m of the current one, sums m outputs, then copies
 * columns m .. m + H of every row to the front of the other buffer (one 2D
 * copy) and swaps: the rows never move in place. Scrunched trials: the
 * factors' block means go level by level into two buffers used in turn
 * (each level from the previous one), each group of one factor is summed
 * over them by the same sum kernel into a coarse output and expanded.
 * With TR_DEDISP_HOST_EMU the includer provides the CUDA runtime and
 * TR_DEDISP_LAUNCH (the host emulation of tests/core/dedisp).
 */
#ifndef TR_DEDISP_HOST_EMU
#include "common/cuda_check.h"
#define TR_DEDISP_LAUNCH(kern, grid, block, stream, ...)                                 \
    kern<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
#endif
#include "common/cuda_raii.cuh"
#include "dedisp/dedisp_cuda.h"
#include "dedisp/dedisp_kernels.cuh"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <vector>

namespace
{

/* Tile of the sum: 256 threads x 2 outputs, 16 trials (each staged channel
 * window serves 16 trials x 512 outputs, so the history is read from memory
 * about ndm / 16 times); 4 channels staged at a time, each while its trials'
 * delays span at most 1536 samples (32 KiB of shared memory). The tile of
 * 1024 outputs before it needed more shared memory and registers per block;
 * the shapes were timed against each other with TR_DEDISP_CUDA_SHAPE
 * (docs/dedisp.md). */
constexpr int SUM_THREADS = 256, SUM_ITEMS = 2, SUM_TRIALS = 16, SUM_CHANS = 4,
              SUM_SPREAD = 1536;
/* Transposition tile of the fill. */
constexpr int FILL_TILE = 32, FILL_ROWS = 8;
/* Most spectra per batch: keeps the sum's grid.y (output tiles of 512 or
 * more) below 65536. */
constexpr size_t MAX_BATCH = (size_t)1 << 24;

} // namespace

/* What one launch of the sum kernel takes (tr_dedisp_sum_kernel's arguments). */
struct sum_args {
    const float *hist;
    size_t cap;
    unsigned nused, ndm;
    const uint32_t *dl;
    size_t m, filled;
    int mean;
    unsigned long long pos0, zero_below;
    float *out;
    size_t sk, sd;
};

template <int THREADS, int ITEMS, int TRIALS, int CHANS, int SPREAD>
static void sum_shape(cudaStream_t s, const sum_args &a)
{
    constexpr size_t TILE = (size_t)THREADS * ITEMS;
    const dim3 grid((a.ndm + TRIALS - 1) / TRIALS, (unsigned)((a.m + TILE - 1) / TILE));
    TR_DEDISP_LAUNCH((tr_dedisp_sum_kernel<THREADS, ITEMS, TRIALS, CHANS, SPREAD>), grid,
                     THREADS, s, a.hist, a.cap, a.nused, a.ndm, a.dl, a.m, a.filled,
                     a.mean, a.pos0, a.zero_below, a.out, a.sk, a.sd);
}

/* The sum with the context's shape: 0 (the default, above) or, as a benchmark
 * hook read at creation (TR_DEDISP_CUDA_SHAPE=k), one of the alternatives
 * (threads, outputs per thread, trials, channels staged at a time). */
static void launch_sum(int shape, cudaStream_t s, const sum_args &a)
{
    switch (shape) {
    case 1:
        sum_shape<256, 4, 32, 2, SUM_SPREAD>(s, a);
        break;
    case 2:
        sum_shape<128, 8, 16, 4, SUM_SPREAD>(s, a);
        break;
    case 3:
        sum_shape<256, 8, 16, 2, SUM_SPREAD>(s, a);
        break;
    case 4:
        sum_shape<256, 4, 8, 4, SUM_SPREAD>(s, a);
        break;
    case 5:
        sum_shape<256, 4, 16, 4, SUM_SPREAD>(s, a);
        break;
    default:
        sum_shape<SUM_THREADS, SUM_ITEMS, SUM_TRIALS, SUM_CHANS, SUM_SPREAD>(s, a);
    }
}

/* Trials d0 .. d0 + nd - 1, all of factor s; their delays channel-major at
 * offset dl of the context's table: [dl + j * nd + d]. */
struct dedisp_group {
    unsigned s, d0, nd;
    size_t dl;
};

/* Rows of one level: block q (of its factor) in column q - first. */
struct dedisp_level {
    float *buf;
    size_t cap;
    long long first;
    size_t cols;
};

/* Blocks of 256 threads for a grid-stride loop over n elements. */
static unsigned grid_for(size_t n)
{
    const size_t b = (n + 255) / 256;
    return (unsigned)std::min<size_t>(b ? b : 1, (size_t)1 << 16);
}

static long long floor_div(long long a, long long b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

struct tr_cuda_dedisp {
    int device = 0;
    unsigned nchan = 0, nused = 0, ndm = 0, latency = 0, nbits = 8;
    int zero_dm = 0, mean = 0;
    size_t batch = 0, keep = 0, cap = 0, lev_cap = 0;
    unsigned long long position = 0;
    std::vector<dedisp_group> groups;
    tr_device_buffer<uint32_t> chans, delays; /* the groups' delay tables */
    tr_device_buffer<float> hist[2];
    tr_device_buffer<float> lev[2]; /* block means of scrunched trials */
    tr_device_buffer<float> coarse; /* a group's coarse outputs */
    int cur = 0;
    int shape = 0;                       /* the sum kernel's shape (launch_sum) */
    tr_device_buffer<float> in;          /* host float input staged */
    tr_device_buffer<unsigned char> raw; /* host packed input staged */
    tr_device_buffer<float> out;         /* host output staged, sample-major */
    tr_cuda_stream stream;
};

static tr_status set_device(const tr_cuda_dedisp *c, tr_error *err)
{
    TR_CUDA_CHECK(cudaSetDevice(c->device), err, "dedisp: cudaSetDevice");
    return TR_OK;
}

/* Zero the history columns 0 .. H of the current buffer. */
static tr_status clear_history(tr_cuda_dedisp *c, tr_error *err)
{
    if (c->keep == 0) return TR_OK;
    TR_CUDA_CHECK(cudaMemset2DAsync(c->hist[c->cur], c->cap * sizeof(float), 0,
                                    c->keep * sizeof(float), c->nused, c->stream),
                  err, "dedisp: cudaMemset2DAsync (history)");
    TR_CUDA_CHECK(cudaStreamSynchronize(c->stream), err, "dedisp: cudaStreamSynchronize");
    return TR_OK;
}

extern "C" tr_status tr_cuda_dedisp_create(int device, const tr_cuda_dedisp_plan *p,
                                           tr_cuda_dedisp **out, tr_error *err)
{
    *out = nullptr;
    tr_cuda_dedisp *c = new (std::nothrow) tr_cuda_dedisp;
    if (!c) return tr_fail(err, TR_ERR_NOMEM, "dedisp: cannot allocate the CUDA context");
    *out = c;
    c->device = device;
    c->nchan = p->nchan;
    c->nused = p->nused;
    c->ndm = p->ndm;
    c->latency = p->latency;
    c->nbits = p->raw_nbits;
    c->zero_dm = p->zero_dm;
    c->mean = p->mean;
    c->batch = std::min(p->batch, MAX_BATCH);
    if (const char *e = std::getenv("TR_DEDISP_CUDA_SHAPE")) c->shape = std::atoi(e);
    std::vector<uint32_t> dl((size_t)p->nused * p->ndm);
    for (unsigned d0 = 0; d0 < p->ndm;) {
        const unsigned s = p->factors ? p->factors[d0] : 1u;
        unsigned d1 = d0;
        while (d1 < p->ndm && (p->factors ? p->factors[d1] : 1u) == s)
            ++d1;
        const dedisp_group g = {s, d0, d1 - d0, (size_t)d0 * p->nused};
        for (size_t d = 0; d < g.nd; ++d)
            for (size_t j = 0; j < p->nused; ++j)
                dl[g.dl + j * g.nd + d] = p->delays[(d0 + d) * p->nused + j];
        c->groups.push_back(g);
        d0 = d1;
    }
    const unsigned smax = c->groups.back().s;
    c->keep = (size_t)p->latency + smax - 1;
    c->cap = c->keep + c->batch;
    tr_status s = set_device(c, err);
    if (s != TR_OK) return s;
    TR_CUDA_CHECK(c->stream.create(cudaStreamNonBlocking), err,
                  "dedisp: cudaStreamCreate");
    const size_t rows = (size_t)p->nused * c->cap;
    if (smax > 1) {
        c->lev_cap = c->cap / 2 + 1;
        for (int i = 0; i < 2; ++i)
            TR_CUDA_CHECK(c->lev[i].alloc(c->lev_cap * p->nused), err,
                          "dedisp: cudaMalloc (block means)");
        TR_CUDA_CHECK(c->coarse.alloc((c->batch / 2 + 2) * p->ndm), err,
                      "dedisp: cudaMalloc (coarse outputs)");
    }
    TR_CUDA_CHECK(c->chans.alloc(p->nused), err, "dedisp: cudaMalloc (channels)");
    TR_CUDA_CHECK(c->delays.alloc(dl.size()), err, "dedisp: cudaMalloc (delays)");
    TR_CUDA_CHECK(c->hist[0].alloc(rows), err, "dedisp: cudaMalloc (history)");
    TR_CUDA_CHECK(c->hist[1].alloc(rows), err, "dedisp: cudaMalloc (history)");
    TR_CUDA_CHECK(c->in.alloc(c->batch * p->nchan), err, "dedisp: cudaMalloc (input)");
    TR_CUDA_CHECK(c->raw.alloc(c->batch * p->nchan * p->raw_nbits / 8), err,
                  "dedisp: cudaMalloc (packed)");
    TR_CUDA_CHECK(c->out.alloc(c->batch * p->ndm), err, "dedisp: cudaMalloc (output)");
    TR_CUDA_CHECK(cudaMemcpy(c->chans, p->chans, p->nused * sizeof(uint32_t),
                             cudaMemcpyHostToDevice),
                  err, "dedisp: cudaMemcpy (channels)");
    TR_CUDA_CHECK(cudaMemcpy(c->delays, dl.data(), dl.size() * sizeof(uint32_t),
                             cudaMemcpyHostToDevice),
                  err, "dedisp: cudaMemcpy (delays)");
    return clear_history(c, err);
}

extern "C" void tr_cuda_dedisp_destroy(tr_cuda_dedisp *c)
{
    if (!c) return;
    (void)cudaSetDevice(c->device);
    delete c;
}

extern "C" tr_status tr_cuda_dedisp_reset(tr_cuda_dedisp *c, tr_error *err)
{
    tr_status s = set_device(c, err);
    if (s != TR_OK) return s;
    c->position = 0;
    return clear_history(c, err);
}

/* Group g's sums over the rows of lev (its factor's level) for the m outputs
 * from position p0 on: coarse outputs, then expanded into out. */
static tr_status scrunched_sum(tr_cuda_dedisp *c, const dedisp_group &g,
                               const dedisp_level &lev, long long p0, size_t m,
                               float *out, size_t sk, size_t sd, tr_error *err)
{
    const long long qa = floor_div(p0, g.s), qb = floor_div(p0 + (long long)m - 1, g.s);
    const size_t nq = (size_t)(qb - qa + 1), skip = (size_t)(qa - lev.first);
    launch_sum(c->shape, c->stream,
               {lev.buf + skip, lev.cap, c->nused, g.nd, c->delays.get() + g.dl, nq,
                lev.cols - skip, c->mean, 0ull, 0ull, c->coarse.get(), (size_t)g.nd,
                (size_t)1});
    TR_CUDA_CHECK(cudaGetLastError(), err, "dedisp: sum kernel launch (scrunched)");
    TR_DEDISP_LAUNCH(tr_dedisp_expand_kernel, grid_for(m * g.nd), 256, c->stream,
                     c->coarse.get(), g.nd, qa, g.s, p0, m, out + (size_t)g.d0 * sd, sk,
                     sd);
    TR_CUDA_CHECK(cudaGetLastError(), err, "dedisp: expand kernel launch");
    return TR_OK;
}

/* The sums of m outputs over the filled history h: the full-rate group
 * straight into out, the scrunched ones over their levels. */
static tr_status sums(tr_cuda_dedisp *c, float *h, size_t m, float *out, size_t sk,
                      size_t sd, tr_error *err)
{
    const long long p0 = (long long)c->position - (long long)c->latency;
    dedisp_level lev = {h, c->cap, p0 + (long long)c->latency - (long long)c->keep,
                        c->keep + m};
    unsigned level_s = 1;
    int which = 0;
    for (const dedisp_group &g : c->groups) {
        if (g.s == 1) {
            launch_sum(c->shape, c->stream,
                       {h + (c->keep - c->latency), c->cap, c->nused, g.nd,
                        c->delays.get() + g.dl, m, m + c->latency, c->mean, c->position,
                        (unsigned long long)c->latency, out, sk, sd});
            TR_CUDA_CHECK(cudaGetLastError(), err, "dedisp: sum kernel launch");
            continue;
        }
        for (; level_s < g.s; level_s *= 2, which = 1 - which) {
            const long long lo = floor_div(lev.first + 1, 2);
            const long long hi = floor_div(lev.first + (long long)lev.cols, 2);
            const size_t cols = hi > lo ? (size_t)(hi - lo) : 0;
            if (cols)
                TR_DEDISP_LAUNCH(tr_dedisp_scrunch_kernel, grid_for(cols * c->nused), 256,
                                 c->stream, lev.buf + (2 * lo - lev.first), lev.cap,
                                 c->lev[which].get(), c->lev_cap, cols, c->nused);
            TR_CUDA_CHECK(cudaGetLastError(), err, "dedisp: scrunch kernel launch");
            lev = {c->lev[which].get(), c->lev_cap, lo, cols};
        }
        tr_status s = scrunched_sum(c, g, lev, p0, m, out, sk, sd, err);
        if (s != TR_OK) return s;
    }
    return TR_OK;
}

/* One batch of m spectra: fill, zero-DM, sums into out (strides sk, sd), shift. */
static tr_status batch(tr_cuda_dedisp *c, tr_cuda_dedisp_input kind, const void *in,
                       size_t m, float *out, size_t sk, size_t sd, tr_error *err)
{
    float *h = c->hist[c->cur];
    float *fresh = h + c->keep;
    const size_t pitch = c->cap * sizeof(float);
    if (kind == TR_CUDA_DEDISP_ZEROS) {
        TR_CUDA_CHECK(
            cudaMemset2DAsync(fresh, pitch, 0, m * sizeof(float), c->nused, c->stream),
            err, "dedisp: cudaMemset2DAsync (zeros)");
    } else {
        const float *x = nullptr;
        const unsigned char *raw = nullptr;
        if (kind == TR_CUDA_DEDISP_HOST_FLOAT) {
            TR_CUDA_CHECK(cudaMemcpyAsync(c->in, in, m * c->nchan * sizeof(float),
                                          cudaMemcpyHostToDevice, c->stream),
                          err, "dedisp: cudaMemcpyAsync (input)");
            x = c->in;
        } else if (kind == TR_CUDA_DEDISP_HOST_RAW) {
            TR_CUDA_CHECK(cudaMemcpyAsync(c->raw, in, m * c->nchan * c->nbits / 8,
                                          cudaMemcpyHostToDevice, c->stream),
                          err, "dedisp: cudaMemcpyAsync (packed input)");
            raw = c->raw;
        } else {
            x = (const float *)in;
        }
        const dim3 grid((unsigned)((m + FILL_TILE - 1) / FILL_TILE),
                        (c->nused + FILL_TILE - 1) / FILL_TILE);
        TR_DEDISP_LAUNCH((tr_dedisp_fill_kernel<FILL_TILE, FILL_ROWS>), grid,
                         dim3(FILL_TILE, FILL_ROWS), c->stream, x, raw, c->nbits,
                         c->nchan, c->chans.get(), c->nused, m, fresh, c->cap);
        TR_CUDA_CHECK(cudaGetLastError(), err, "dedisp: fill kernel launch");
        if (c->zero_dm) {
            TR_DEDISP_LAUNCH(tr_dedisp_zero_dm_kernel, (unsigned)((m + 255) / 256), 256,
                             c->stream, fresh, c->cap, c->nused, m);
            TR_CUDA_CHECK(cudaGetLastError(), err, "dedisp: zero-DM kernel launch");
        }
    }
    tr_status s = sums(c, h, m, out, sk, sd, err);
    if (s != TR_OK) return s;
    if (c->keep) {
        TR_CUDA_CHECK(cudaMemcpy2DAsync(c->hist[1 - c->cur], pitch, h + m, pitch,
                                        c->keep * sizeof(float), c->nused,
                                        cudaMemcpyDeviceToDevice, c->stream),
                      err, "dedisp: cudaMemcpy2DAsync (history)");
        c->cur = 1 - c->cur;
    }
    c->position += m;
    return TR_OK;
}

extern "C" tr_status tr_cuda_dedisp_run(tr_cuda_dedisp *c, tr_cuda_dedisp_input kind,
                                        const void *in, size_t n, float *y, int on_device,
                                        tr_dedisp_layout layout, tr_error *err)
{
    tr_status s = set_device(c, err);
    if (s != TR_OK) return s;
    if (kind == TR_CUDA_DEDISP_DEVICE_FLOAT)
        TR_CUDA_CHECK(tr_cuda_caller_ready(), err,
                      "dedisp: wait for the caller's stream");
    const size_t in_bytes = kind == TR_CUDA_DEDISP_HOST_RAW
                                ? (size_t)c->nchan * c->nbits / 8
                                : (size_t)c->nchan * sizeof(float);
    for (size_t done = 0; done < n;) {
        const size_t m = std::min(c->batch, n - done);
        const void *src = in ? (const unsigned char *)in + done * in_bytes : nullptr;
        if (on_device) {
            const int dm_major = layout == TR_DEDISP_DM_MAJOR;
            float *o = y + (dm_major ? done : done * c->ndm);
            s = batch(c, kind, src, m, o, dm_major ? 1 : c->ndm, dm_major ? n : 1, err);
        } else {
            s = batch(c, kind, src, m, c->out, c->ndm, 1, err);
            if (s == TR_OK)
                TR_CUDA_CHECK(cudaMemcpyAsync(y + done * c->ndm, c->out,
                                              m * c->ndm * sizeof(float),
                                              cudaMemcpyDeviceToHost, c->stream),
                              err, "dedisp: cudaMemcpyAsync (output)");
        }
        if (s != TR_OK) return s;
        /* The staging buffers are reused by the next batch. */
        TR_CUDA_CHECK(cudaStreamSynchronize(c->stream), err,
                      "dedisp: cudaStreamSynchronize");
        done += m;
    }
    return TR_OK;
}

extern "C" void *tr_cuda_dedisp_host_alloc(size_t bytes)
{
    void *p = nullptr;
    return cudaMallocHost(&p, bytes ? bytes : 1) == cudaSuccess ? p : nullptr;
}

extern "C" void tr_cuda_dedisp_host_free(void *p)
{
    if (p) (void)cudaFreeHost(p);
}
