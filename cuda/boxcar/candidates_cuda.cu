/*
 * The CUDA candidates context of candidates_cuda.h: the selection launches
 * of a call and its peaks copied back.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6.
 *
 * Per call: count per tile, scan, write below the peak buffer's capacity,
 * then the total and the peaks back in one round trip (a second one when the
 * buffer grows or the count outgrows what was copied). Host values are
 * copied in first (time-major).
 */
#include "boxcar/candidates_cuda.h"
#include "boxcar/candidates_kernels.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace cand_cuda
{
constexpr int kNT = 256, kIT = 16;            /* selection: threads, values each */
constexpr int64_t kTile = (int64_t)kNT * kIT; /* values per selection tile */

/* A selection kernel instance as one macro argument of TR_LAUNCH. */
#define CAND_SELECT(kernel) kernel<kNT, kIT>

#define CAND_TRY(call, what) TR_BOXCAR_TRY(call, err, "candidates/cuda", what)
} // namespace cand_cuda

using namespace cand_cuda;

struct tr_cuda_cand {
    int device = -1;
    uint32_t nchan = 0;
    cudaStream_t stream = nullptr;
    tr_cuda_cand_peak *pk = nullptr; /* device peaks of the call */
    uint32_t pkcap = 0;
    uint32_t *tile_count = nullptr, *tile_off = nullptr, *total = nullptr;
    int64_t tilecap = 0;
    float *hs = nullptr; /* host input copied in (time-major) */
    int32_t *hw = nullptr;
    int64_t hcap = 0;
    uint8_t *skip = nullptr;
    /* the last call's peaks and count on the host (page-locked: copied back
     * in the same round trip as the count) */
    tr_cuda_cand_peak *hpk = nullptr;
    size_t hpkcap = 0;
    uint32_t *htotal = nullptr;
    uint32_t last = 0; /* the count of the call before */
};

namespace
{
template <typename T> cudaError_t alloc(T **p, size_t count)
{
    return cudaMalloc((void **)p, std::max<size_t>(count, 1) * sizeof(T));
}

/* *p re-allocated for count elements (contents dropped). */
template <typename T> cudaError_t realloc_dev(T **p, size_t count)
{
    cudaFree(*p);
    *p = nullptr;
    return alloc(p, count);
}

/* The host peak buffer holds at least count peaks (contents kept). */
cudaError_t host_reserve(tr_cuda_cand *q, size_t count)
{
    if (count <= q->hpkcap) return cudaSuccess;
    const size_t cap = std::max<size_t>(count, 2 * q->hpkcap);
    tr_cuda_cand_peak *p = nullptr;
    const cudaError_t e = cudaMallocHost((void **)&p, cap * sizeof *p);
    if (e != cudaSuccess) return e;
    if (q->hpk) {
        std::memcpy(p, q->hpk, q->hpkcap * sizeof *p);
        cudaFreeHost(q->hpk);
    }
    q->hpk = p;
    q->hpkcap = cap;
    return cudaSuccess;
}

void release(tr_cuda_cand *q)
{
    if (q->device >= 0) cudaSetDevice(q->device);
    void *ptrs[] = {q->pk, q->tile_count, q->tile_off, q->total, q->hs, q->hw, q->skip};
    for (void *p : ptrs)
        if (p) cudaFree(p);
    if (q->hpk) cudaFreeHost(q->hpk);
    if (q->htotal) cudaFreeHost(q->htotal);
    if (q->stream) cudaStreamDestroy(q->stream);
}
} // namespace

extern "C" tr_status tr_cuda_cand_create(int device, const tr_candidates_config *cfg,
                                         tr_cuda_cand **out, tr_error *err)
{
    if (out) *out = NULL;
    if (!out || !cfg || cfg->nchan < 1)
        return tr_fail(err, TR_ERR_INVALID,
                       "candidates/cuda: need a config with nchan >= 1");
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || device < 0 || device >= count)
        return tr_fail(err, TR_ERR_NO_DEVICE, "candidates/cuda: no CUDA device %d",
                       device);
    void *mem = calloc(1, sizeof(tr_cuda_cand));
    if (!mem)
        return tr_fail(err, TR_ERR_NOMEM, "candidates/cuda: cannot allocate the context");
    tr_cuda_cand *q = new (mem) tr_cuda_cand();
    q->nchan = cfg->nchan;
    q->pkcap = 4096;
    tr_status s = TR_OK;
    cudaError_t e;
    if ((e = cudaSetDevice(device)) != cudaSuccess) {
        s = tr_fail(err, TR_ERR_CUDA, "candidates/cuda: select device: %s",
                    cudaGetErrorString(e));
    } else {
        q->device = device;
        if ((e = cudaStreamCreateWithFlags(&q->stream, cudaStreamNonBlocking)) ||
            (e = alloc(&q->pk, q->pkcap)) || (e = alloc(&q->total, 1)) ||
            (e = alloc(&q->skip, cfg->nchan)) ||
            (e = cudaMallocHost((void **)&q->htotal, sizeof *q->htotal)))
            s = tr_fail(err, e == cudaErrorMemoryAllocation ? TR_ERR_NOMEM : TR_ERR_CUDA,
                        "candidates/cuda: allocate: %s", cudaGetErrorString(e));
    }
    if (s != TR_OK) {
        tr_cuda_cand_destroy(q);
        return s;
    }
    *out = q;
    tr_clear(err);
    return TR_OK;
}

extern "C" void tr_cuda_cand_destroy(tr_cuda_cand *q)
{
    if (!q) return;
    release(q);
    q->~tr_cuda_cand();
    free(q);
}

extern "C" tr_status tr_cuda_cand_select(tr_cuda_cand *q, const float *snr,
                                         const int32_t *width, int64_t ld, int64_t k0,
                                         size_t n, int channel_major, int on_device,
                                         float threshold, const uint8_t *skip,
                                         const tr_cuda_cand_peak **peaks, size_t *npeaks,
                                         tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "candidates/cuda: NULL context");
    if (!peaks || !npeaks)
        return tr_fail(err, TR_ERR_INVALID, "candidates/cuda: NULL peak output");
    *peaks = q->hpk;
    *npeaks = 0;
    if (n == 0) return TR_OK;
    const int64_t C = q->nchan, nv = (int64_t)n * C;
    if (!snr || k0 < 0 || (channel_major && ld < k0 + (int64_t)n) ||
        nv > TR_CUDA_CAND_MAX_VALUES)
        return tr_fail(err, TR_ERR_INVALID, "candidates/cuda: bad buffer description");
    if (!on_device && (channel_major || k0 != 0))
        return tr_fail(err, TR_ERR_INVALID,
                       "candidates/cuda: host buffers are time-major from k0 = 0");
    CAND_TRY(cudaSetDevice(q->device), "select device");
    if (on_device) CAND_TRY(tr_cuda_caller_ready(), "wait for the caller's stream");
    if (skip)
        CAND_TRY(
            cudaMemcpyAsync(q->skip, skip, (size_t)C, cudaMemcpyHostToDevice, q->stream),
            "copy the channel flags");
    const int64_t ntiles = (nv + kTile - 1) / kTile;
    view v{snr,         width,         skip ? q->skip : nullptr,
           (uint32_t)C, channel_major, ld,
           k0,          (int64_t)n,    threshold};
    if (!on_device) {
        /* host values into the device copy, time-major */
        if (nv > q->hcap) {
            q->hcap = 0;
            CAND_TRY(realloc_dev(&q->hs, (size_t)nv), "allocate the input copy");
            CAND_TRY(realloc_dev(&q->hw, (size_t)nv), "allocate the input copy");
            q->hcap = nv;
        }
        CAND_TRY(cudaMemcpyAsync(q->hs, snr, (size_t)nv * sizeof(float),
                                 cudaMemcpyHostToDevice, q->stream),
                 "copy the S/N in");
        if (width)
            CAND_TRY(cudaMemcpyAsync(q->hw, width, (size_t)nv * sizeof(int32_t),
                                     cudaMemcpyHostToDevice, q->stream),
                     "copy the widths in");
        v.snr = q->hs;
        v.width = width ? q->hw : nullptr;
    }
    if (ntiles > q->tilecap) {
        q->tilecap = 0;
        CAND_TRY(realloc_dev(&q->tile_count, (size_t)ntiles), "allocate the tile counts");
        CAND_TRY(realloc_dev(&q->tile_off, (size_t)ntiles), "allocate the tile counts");
        q->tilecap = ntiles;
    }
    TR_LAUNCH(CAND_SELECT(select_count), (unsigned)ntiles, kNT, 0, q->stream, v,
              q->tile_count);
    CAND_TRY(cudaGetLastError(), "select launch");
    TR_LAUNCH(select_scan<kNT>, 1, kNT, 0, q->stream, q->tile_count, (uint32_t)ntiles,
              q->tile_off, q->total);
    CAND_TRY(cudaGetLastError(), "select launch");
    /* One round trip: the peaks are written (below the buffer's capacity)
     * and copied back with the count, as many as about twice the count of
     * the call before; more take a second round trip. */
    TR_LAUNCH(CAND_SELECT(select_write), (unsigned)ntiles, kNT, 0, q->stream, v,
              q->tile_off, q->pk, q->pkcap);
    CAND_TRY(cudaGetLastError(), "select launch");
    size_t want = std::min<size_t>(q->pkcap, std::max<size_t>(4096, 2 * (size_t)q->last));
    CAND_TRY(host_reserve(q, want), "allocate the host peaks");
    CAND_TRY(cudaMemcpyAsync(q->htotal, q->total, sizeof *q->htotal,
                             cudaMemcpyDeviceToHost, q->stream),
             "read the peak count");
    CAND_TRY(cudaMemcpyAsync(q->hpk, q->pk, want * sizeof(tr_cuda_cand_peak),
                             cudaMemcpyDeviceToHost, q->stream),
             "copy the peaks back");
    CAND_TRY(cudaStreamSynchronize(q->stream), "select");
    const uint32_t total = *q->htotal;
    if (total > q->pkcap) {
        /* the buffer grows and the peaks are written again */
        q->pkcap = 0;
        CAND_TRY(realloc_dev(&q->pk, total), "grow the peak buffer");
        q->pkcap = total;
        TR_LAUNCH(CAND_SELECT(select_write), (unsigned)ntiles, kNT, 0, q->stream, v,
                  q->tile_off, q->pk, q->pkcap);
        CAND_TRY(cudaGetLastError(), "select launch");
        want = 0;
    }
    if (total > want) {
        CAND_TRY(host_reserve(q, total), "allocate the host peaks");
        CAND_TRY(cudaMemcpyAsync(q->hpk + want, q->pk + want,
                                 (total - want) * sizeof(tr_cuda_cand_peak),
                                 cudaMemcpyDeviceToHost, q->stream),
                 "copy the peaks back");
        CAND_TRY(cudaStreamSynchronize(q->stream), "select");
    }
    q->last = total;
    *peaks = q->hpk;
    *npeaks = total;
    tr_clear(err);
    return TR_OK;
}
