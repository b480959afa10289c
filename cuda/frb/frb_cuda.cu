/*
 * Device side of the FRB search object (frb_cuda.h): owned buffers
 * (cuda_raii.cuh), one stream, every CUDA call checked.
 */
#include "frb/frb_cuda.h"

#include "common/cuda_check.h"
#include "common/cuda_raii.cuh"

#include <cstdint>
#include <cstdlib>
#include <new>

struct tr_cuda_frb {
    int device = -1;
    size_t step = 0;
    uint32_t nchan = 0, ndm = 0;
    cudaStream_t stream = nullptr;
    tr_device_buffer<uint32_t> lat; /* largest delay of each trial */
    tr_device_buffer<float> spectra, plane, snr;
    tr_device_buffer<int32_t> width;
};

/* One thread per value; the grid strides over n * ndm. */
template <int BLOCK_THREADS>
__global__ void __launch_bounds__(BLOCK_THREADS)
    mark_tail_kernel(float *v, const int32_t *width, size_t count, uint32_t ndm,
                     const uint32_t *lat, uint64_t first, uint64_t total, float value)
{
    for (size_t i = (size_t)blockIdx.x * BLOCK_THREADS + threadIdx.x; i < count;
         i += (size_t)gridDim.x * BLOCK_THREADS) {
        const size_t k = i / ndm;
        const uint32_t d = (uint32_t)(i - k * ndm);
        const int32_t w = width ? width[i] : 1;
        const uint64_t reach = first + k + (uint64_t)(w > 1 ? w - 1 : 0) + lat[d];
        if (reach >= total) v[i] = value;
    }
}

extern "C" void tr_cuda_frb_destroy(tr_cuda_frb *ctx)
{
    if (!ctx) return;
    if (ctx->device >= 0) cudaSetDevice(ctx->device);
    if (ctx->stream) cudaStreamDestroy(ctx->stream);
    ctx->~tr_cuda_frb();
    free(ctx);
}

static tr_status frb_setup(tr_cuda_frb *ctx, int device, size_t step, uint32_t nchan,
                           uint32_t ndm, const uint32_t *lat, tr_error *err)
{
    TR_CUDA_CHECK(cudaSetDevice(device), err, "frb/cuda: select device");
    ctx->device = device;
    ctx->step = step;
    ctx->nchan = nchan;
    ctx->ndm = ndm;
    TR_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking), err,
                  "frb/cuda: create stream");
    TR_CUDA_CHECK(ctx->lat.alloc(ndm), err, "frb/cuda: allocate trial delays");
    TR_CUDA_CHECK(ctx->spectra.alloc(step * nchan), err, "frb/cuda: allocate spectra");
    TR_CUDA_CHECK(ctx->plane.alloc(step * ndm), err, "frb/cuda: allocate the plane");
    TR_CUDA_CHECK(ctx->snr.alloc(step * ndm), err, "frb/cuda: allocate S/N");
    TR_CUDA_CHECK(ctx->width.alloc(step * ndm), err, "frb/cuda: allocate widths");
    TR_CUDA_CHECK(cudaMemcpyAsync(ctx->lat.get(), lat, (size_t)ndm * sizeof *lat,
                                  cudaMemcpyHostToDevice, ctx->stream),
                  err, "frb/cuda: copy trial delays in");
    TR_CUDA_CHECK(cudaStreamSynchronize(ctx->stream), err,
                  "frb/cuda: copy trial delays in");
    return TR_OK;
}

extern "C" tr_status tr_cuda_frb_create(int device, size_t step, uint32_t nchan,
                                        uint32_t ndm, const uint32_t *lat,
                                        tr_cuda_frb **out, tr_error *err)
{
    if (!out || !lat || ndm == 0 || nchan == 0 || step == 0 ||
        step > SIZE_MAX / 4 / (nchan > ndm ? nchan : ndm))
        return tr_fail(err, TR_ERR_INVALID, "frb/cuda: invalid arguments");
    *out = NULL;
    void *mem = calloc(1, sizeof(tr_cuda_frb));
    if (!mem) return tr_fail(err, TR_ERR_NOMEM, "frb/cuda: cannot allocate the context");
    tr_cuda_frb *ctx = new (mem) tr_cuda_frb();
    const tr_status s = frb_setup(ctx, device, step, nchan, ndm, lat, err);
    if (s != TR_OK) {
        tr_cuda_frb_destroy(ctx);
        return s;
    }
    *out = ctx;
    tr_clear(err);
    return TR_OK;
}

extern "C" float *tr_cuda_frb_spectra(const tr_cuda_frb *ctx)
{
    return ctx ? ctx->spectra.get() : nullptr;
}
extern "C" float *tr_cuda_frb_plane(const tr_cuda_frb *ctx)
{
    return ctx ? ctx->plane.get() : nullptr;
}
extern "C" float *tr_cuda_frb_snr(const tr_cuda_frb *ctx)
{
    return ctx ? ctx->snr.get() : nullptr;
}
extern "C" int32_t *tr_cuda_frb_width(const tr_cuda_frb *ctx)
{
    return ctx ? ctx->width.get() : nullptr;
}

extern "C" tr_status tr_cuda_frb_upload(tr_cuda_frb *ctx, const float *x, size_t n,
                                        tr_error *err)
{
    if (!ctx || (n && !x) || n > ctx->step)
        return tr_fail(err, TR_ERR_INVALID, "frb/cuda: upload of %zu spectra", n);
    if (n == 0) return TR_OK;
    TR_CUDA_CHECK(cudaSetDevice(ctx->device), err, "frb/cuda: select device");
    TR_CUDA_CHECK(cudaMemcpyAsync(ctx->spectra.get(), x, n * ctx->nchan * sizeof(float),
                                  cudaMemcpyHostToDevice, ctx->stream),
                  err, "frb/cuda: copy spectra in");
    TR_CUDA_CHECK(cudaStreamSynchronize(ctx->stream), err, "frb/cuda: copy spectra in");
    return TR_OK;
}

extern "C" tr_status tr_cuda_frb_mark_tail(tr_cuda_frb *ctx, float *d_v,
                                           const int32_t *d_width, size_t n,
                                           uint64_t first, uint64_t total, float value,
                                           tr_error *err)
{
    if (!ctx || (n && !d_v)) return tr_fail(err, TR_ERR_INVALID, "frb/cuda: NULL values");
    if (n == 0) return TR_OK;
    constexpr int BLOCK_THREADS = 256;
    const size_t count = n * ctx->ndm;
    const size_t blocks = (count + BLOCK_THREADS - 1) / BLOCK_THREADS;
    const unsigned grid = blocks < 65535 ? (unsigned)blocks : 65535u;
    TR_CUDA_CHECK(cudaSetDevice(ctx->device), err, "frb/cuda: select device");
    mark_tail_kernel<BLOCK_THREADS><<<grid, BLOCK_THREADS, 0, ctx->stream>>>(
        d_v, d_width, count, ctx->ndm, ctx->lat.get(), first, total, value);
    TR_CUDA_CHECK(cudaGetLastError(), err, "frb/cuda: launch the tail marking");
    TR_CUDA_CHECK(cudaStreamSynchronize(ctx->stream), err, "frb/cuda: tail marking");
    return TR_OK;
}

extern "C" tr_status tr_cuda_frb_download(tr_cuda_frb *ctx, float *dst,
                                          const float *d_src, size_t n, tr_error *err)
{
    if (!ctx || (n && (!dst || !d_src)))
        return tr_fail(err, TR_ERR_INVALID, "frb/cuda: NULL copy");
    if (n == 0) return TR_OK;
    TR_CUDA_CHECK(cudaSetDevice(ctx->device), err, "frb/cuda: select device");
    TR_CUDA_CHECK(cudaMemcpyAsync(dst, d_src, n * sizeof(float), cudaMemcpyDeviceToHost,
                                  ctx->stream),
                  err, "frb/cuda: copy the plane out");
    TR_CUDA_CHECK(cudaStreamSynchronize(ctx->stream), err,
                  "frb/cuda: copy the plane out");
    return TR_OK;
}
