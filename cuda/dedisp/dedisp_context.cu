/*
 * The CUDA dedispersion context (cuda/dedisp/dedisp_cuda.h): device history
 * of the last L spectra, batches through the kernels of dedisp_kernels.cuh.
 *
 * Paper: B. R. Barsdell et al., "Accelerating incoherent dedispersion"
 * (MNRAS 422, 379, 2012).
 *
 * History: two channel-major buffers of nused rows x cap = L + B spectra (B
 * = spectra per batch). A batch fills columns L .. L + m of the current one,
 * sums m outputs, then copies columns m .. m + L of every row to the front of
 * the other buffer (one 2D copy) and swaps: the rows never move in place.
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
#include <new>
#include <vector>

namespace
{

/* Tile of the sum: 256 threads x 4 outputs, 16 trials (each staged channel
 * window serves 16 trials x 1024 outputs, so the history is read from memory
 * about ndm / 16 times); 4 channels staged at a time, each while its trials'
 * delays span at most 1536 samples (40 KiB of shared memory). */
constexpr int SUM_THREADS = 256, SUM_ITEMS = 4, SUM_TRIALS = 16, SUM_CHANS = 4,
              SUM_SPREAD = 1536;
/* Transposition tile of the fill. */
constexpr int FILL_TILE = 32, FILL_ROWS = 8;
/* Most spectra per batch: keeps the sum's grid.y (output tiles) below 65536. */
constexpr size_t MAX_BATCH = (size_t)1 << 24;

} // namespace

struct tr_cuda_dedisp {
    int device = 0;
    unsigned nchan = 0, nused = 0, ndm = 0, latency = 0, nbits = 8;
    int zero_dm = 0, mean = 0;
    size_t batch = 0, cap = 0;
    unsigned long long position = 0;
    tr_device_buffer<uint32_t> chans, delays; /* delays channel-major: [j * ndm + d] */
    tr_device_buffer<float> hist[2];
    int cur = 0;
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

/* Zero the history columns 0 .. L of the current buffer. */
static tr_status clear_history(tr_cuda_dedisp *c, tr_error *err)
{
    if (c->latency == 0) return TR_OK;
    TR_CUDA_CHECK(cudaMemset2DAsync(c->hist[c->cur], c->cap * sizeof(float), 0,
                                    c->latency * sizeof(float), c->nused, c->stream),
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
    c->cap = (size_t)p->latency + c->batch;
    tr_status s = set_device(c, err);
    if (s != TR_OK) return s;
    TR_CUDA_CHECK(c->stream.create(cudaStreamNonBlocking), err,
                  "dedisp: cudaStreamCreate");
    std::vector<uint32_t> dl((size_t)p->nused * p->ndm);
    for (size_t d = 0; d < p->ndm; ++d)
        for (size_t j = 0; j < p->nused; ++j)
            dl[j * p->ndm + d] = p->delays[d * p->nused + j];
    const size_t rows = (size_t)p->nused * c->cap;
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

/* One batch of m spectra: fill, zero-DM, sum into out (strides sk, sd), shift. */
static tr_status batch(tr_cuda_dedisp *c, tr_cuda_dedisp_input kind, const void *in,
                       size_t m, float *out, size_t sk, size_t sd, tr_error *err)
{
    float *h = c->hist[c->cur];
    const size_t pitch = c->cap * sizeof(float);
    if (kind == TR_CUDA_DEDISP_ZEROS) {
        TR_CUDA_CHECK(cudaMemset2DAsync(h + c->latency, pitch, 0, m * sizeof(float),
                                        c->nused, c->stream),
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
                         c->nchan, c->chans.get(), c->nused, m, h + c->latency, c->cap);
        TR_CUDA_CHECK(cudaGetLastError(), err, "dedisp: fill kernel launch");
        if (c->zero_dm) {
            TR_DEDISP_LAUNCH(tr_dedisp_zero_dm_kernel, (unsigned)((m + 255) / 256), 256,
                             c->stream, h + c->latency, c->cap, c->nused, m);
            TR_CUDA_CHECK(cudaGetLastError(), err, "dedisp: zero-DM kernel launch");
        }
    }
    constexpr size_t TILE = (size_t)SUM_THREADS * SUM_ITEMS;
    const dim3 grid((c->ndm + SUM_TRIALS - 1) / SUM_TRIALS,
                    (unsigned)((m + TILE - 1) / TILE));
    TR_DEDISP_LAUNCH(
        (tr_dedisp_sum_kernel<SUM_THREADS, SUM_ITEMS, SUM_TRIALS, SUM_CHANS, SUM_SPREAD>),
        grid, SUM_THREADS, c->stream, h, c->cap, c->nused, c->ndm, c->delays.get(), m,
        c->mean, c->position, c->latency, out, sk, sd);
    TR_CUDA_CHECK(cudaGetLastError(), err, "dedisp: sum kernel launch");
    if (c->latency) {
        TR_CUDA_CHECK(cudaMemcpy2DAsync(c->hist[1 - c->cur], pitch, h + m, pitch,
                                        c->latency * sizeof(float), c->nused,
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
