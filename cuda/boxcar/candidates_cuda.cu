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
 * copied in first (time-major). Runs: after the write, the peaks' runs per
 * chunk of peaks (count, scan, write), and only the counts and runs back.
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
constexpr int kRunNT = 128;                   /* runs: threads (a chunk each) */
constexpr int kRunP = TR_CUDA_CAND_RUN_CHUNK; /* runs: peaks per chunk */
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
    /* runs (tr_cuda_cand_select_runs): device runs (pkcap of them: never
     * more than peaks), per-chunk counts and offsets, the total; the last
     * call's runs and count on the host (page-locked) */
    tr_cuda_cand_run *runs = nullptr;
    uint32_t runcap = 0;
    uint32_t *run_count = nullptr, *run_off = nullptr, *rtotal = nullptr;
    uint32_t chunkcap = 0;
    tr_cuda_cand_run *hruns = nullptr;
    size_t hruncap = 0;
    uint32_t *hrtotal = nullptr;
    uint32_t rlast = 0; /* the run count of the call before */
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

/* A page-locked host buffer (*buf, *cap elements) that holds at least count
 * elements (contents kept). */
template <typename T> cudaError_t host_reserve(T **buf, size_t *cap, size_t count)
{
    if (count <= *cap) return cudaSuccess;
    const size_t nc = std::max<size_t>(count, 2 * *cap);
    T *p = nullptr;
    const cudaError_t e = cudaMallocHost((void **)&p, nc * sizeof *p);
    if (e != cudaSuccess) return e;
    if (*buf) {
        std::memcpy(p, *buf, *cap * sizeof *p);
        cudaFreeHost(*buf);
    }
    *buf = p;
    *cap = nc;
    return cudaSuccess;
}

void release(tr_cuda_cand *q)
{
    if (q->device >= 0) cudaSetDevice(q->device);
    void *ptrs[] = {q->pk,   q->tile_count, q->tile_off,  q->total,   q->hs,    q->hw,
                    q->skip, q->runs,       q->run_count, q->run_off, q->rtotal};
    for (void *p : ptrs)
        if (p) cudaFree(p);
    void *hptrs[] = {q->hpk, q->htotal, q->hruns, q->hrtotal};
    for (void *p : hptrs)
        if (p) cudaFreeHost(p);
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
            (e = alloc(&q->skip, cfg->nchan)) || (e = alloc(&q->rtotal, 1)) ||
            (e = cudaMallocHost((void **)&q->htotal, sizeof *q->htotal)) ||
            (e = cudaMallocHost((void **)&q->hrtotal, sizeof *q->hrtotal)))
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

namespace
{
/* The selection of a call queued on q->stream (count per tile, scan, write
 * below the buffer's capacity) after its checks; *v and *ntiles for a
 * second write. */
tr_status launch_select(tr_cuda_cand *q, const float *snr, const int32_t *width,
                        int64_t ld, int64_t k0, size_t n, int channel_major,
                        int on_device, float threshold, const uint8_t *skip, view *vout,
                        int64_t *ntiles_out, tr_error *err)
{
    const int64_t C = q->nchan, nv = (int64_t)n * C;
    if (!snr || k0 < 0 || (channel_major && ld < k0 + (int64_t)n) ||
        nv > TR_CUDA_CAND_MAX_VALUES)
        return tr_fail(err, TR_ERR_INVALID, "candidates/cuda: bad buffer description");
    if (!on_device && (channel_major || k0 != 0))
        return tr_fail(err, TR_ERR_INVALID,
                       "candidates/cuda: host buffers are time-major from k0 = 0");
    CAND_TRY(cudaSetDevice(q->device), "select device");
    if (on_device == TR_SRC_CALLER_DEVICE)
        CAND_TRY(tr_cuda_caller_ready(), "wait for the caller's stream");
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
    TR_LAUNCH(CAND_SELECT(select_write), (unsigned)ntiles, kNT, 0, q->stream, v,
              q->tile_off, q->pk, q->pkcap);
    CAND_TRY(cudaGetLastError(), "select launch");
    *vout = v;
    *ntiles_out = ntiles;
    return TR_OK;
}

/* The peak buffer (and the run buffer, as large) grown to total, and the
 * peaks of view v written again. */
tr_status grow_and_rewrite(tr_cuda_cand *q, const view &v, int64_t ntiles, uint32_t total,
                           tr_error *err)
{
    q->pkcap = 0;
    CAND_TRY(realloc_dev(&q->pk, total), "grow the peak buffer");
    q->pkcap = total;
    TR_LAUNCH(CAND_SELECT(select_write), (unsigned)ntiles, kNT, 0, q->stream, v,
              q->tile_off, q->pk, q->pkcap);
    CAND_TRY(cudaGetLastError(), "select launch");
    return TR_OK;
}

/* The runs of the peaks written (chunks of kRunP, then their offsets, then
 * the runs), queued on q->stream; the run buffer holds as many as the peak
 * buffer. */
tr_status launch_runs(tr_cuda_cand *q, uint32_t lt, tr_error *err)
{
    if (q->runcap < q->pkcap) {
        q->runcap = 0;
        CAND_TRY(realloc_dev(&q->runs, q->pkcap), "allocate the runs");
        q->runcap = q->pkcap;
    }
    const uint32_t nchunks = (q->pkcap + kRunP - 1) / kRunP;
    if (nchunks > q->chunkcap) {
        q->chunkcap = 0;
        CAND_TRY(realloc_dev(&q->run_count, nchunks), "allocate the run counts");
        CAND_TRY(realloc_dev(&q->run_off, nchunks), "allocate the run counts");
        q->chunkcap = nchunks;
    }
    const unsigned nb = (nchunks + kRunNT - 1) / kRunNT;
    TR_LAUNCH((runs_count<kRunNT, kRunP>), nb, kRunNT, 0, q->stream, q->pk, q->total,
              q->pkcap, lt, nchunks, q->run_count);
    CAND_TRY(cudaGetLastError(), "runs launch");
    TR_LAUNCH(select_scan<kNT>, 1, kNT, 0, q->stream, q->run_count, nchunks, q->run_off,
              q->rtotal);
    CAND_TRY(cudaGetLastError(), "runs launch");
    TR_LAUNCH((runs_write<kRunNT, kRunP>), nb, kRunNT, 0, q->stream, q->pk, q->total,
              q->pkcap, lt, nchunks, q->run_off, q->runs);
    CAND_TRY(cudaGetLastError(), "runs launch");
    return TR_OK;
}
} // namespace

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
    view v{};
    int64_t ntiles = 0;
    tr_status s = launch_select(q, snr, width, ld, k0, n, channel_major, on_device,
                                threshold, skip, &v, &ntiles, err);
    if (s != TR_OK) return s;
    /* One round trip: the peaks are written (below the buffer's capacity)
     * and copied back with the count, as many as about twice the count of
     * the call before; more take a second round trip. */
    size_t want = std::min<size_t>(q->pkcap, std::max<size_t>(4096, 2 * (size_t)q->last));
    CAND_TRY(host_reserve(&q->hpk, &q->hpkcap, want), "allocate the host peaks");
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
        if ((s = grow_and_rewrite(q, v, ntiles, total, err)) != TR_OK) return s;
        want = 0;
    }
    if (total > want) {
        CAND_TRY(host_reserve(&q->hpk, &q->hpkcap, total), "allocate the host peaks");
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

extern "C" tr_status
tr_cuda_cand_select_runs(tr_cuda_cand *q, const float *snr, const int32_t *width,
                         int64_t ld, int64_t k0, size_t n, int channel_major,
                         int on_device, float threshold, const uint8_t *skip,
                         uint32_t link_time, const tr_cuda_cand_run **runs, size_t *nruns,
                         size_t *npeaks, tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "candidates/cuda: NULL context");
    if (!runs || !nruns || !npeaks)
        return tr_fail(err, TR_ERR_INVALID, "candidates/cuda: NULL run output");
    if (q->nchan != 1)
        return tr_fail(err, TR_ERR_INVALID, "candidates/cuda: runs need one channel");
    *runs = q->hruns;
    *nruns = *npeaks = 0;
    if (n == 0) return TR_OK;
    view v{};
    int64_t ntiles = 0;
    tr_status s = launch_select(q, snr, width, ld, k0, n, channel_major, on_device,
                                threshold, skip, &v, &ntiles, err);
    if (s == TR_OK) s = launch_runs(q, link_time, err);
    if (s != TR_OK) return s;
    /* one round trip for both counts and about twice the runs of the call
     * before; a second when the peaks outgrow their buffer or the runs what
     * was copied */
    size_t want =
        std::min<size_t>(q->runcap, std::max<size_t>(1024, 2 * (size_t)q->rlast));
    CAND_TRY(host_reserve(&q->hruns, &q->hruncap, want), "allocate the host runs");
    CAND_TRY(cudaMemcpyAsync(q->htotal, q->total, sizeof *q->htotal,
                             cudaMemcpyDeviceToHost, q->stream),
             "read the peak count");
    CAND_TRY(cudaMemcpyAsync(q->hrtotal, q->rtotal, sizeof *q->hrtotal,
                             cudaMemcpyDeviceToHost, q->stream),
             "read the run count");
    CAND_TRY(cudaMemcpyAsync(q->hruns, q->runs, want * sizeof(tr_cuda_cand_run),
                             cudaMemcpyDeviceToHost, q->stream),
             "copy the runs back");
    CAND_TRY(cudaStreamSynchronize(q->stream), "select");
    const uint32_t total = *q->htotal;
    if (total > q->pkcap) {
        if ((s = grow_and_rewrite(q, v, ntiles, total, err)) != TR_OK ||
            (s = launch_runs(q, link_time, err)) != TR_OK)
            return s;
        CAND_TRY(cudaMemcpyAsync(q->hrtotal, q->rtotal, sizeof *q->hrtotal,
                                 cudaMemcpyDeviceToHost, q->stream),
                 "read the run count");
        CAND_TRY(cudaStreamSynchronize(q->stream), "select");
        want = 0;
    }
    const uint32_t nr = *q->hrtotal;
    if (nr > want) {
        CAND_TRY(host_reserve(&q->hruns, &q->hruncap, nr), "allocate the host runs");
        CAND_TRY(cudaMemcpyAsync(q->hruns + want, q->runs + want,
                                 (nr - want) * sizeof(tr_cuda_cand_run),
                                 cudaMemcpyDeviceToHost, q->stream),
                 "copy the runs back");
        CAND_TRY(cudaStreamSynchronize(q->stream), "select");
    }
    q->last = total;
    q->rlast = nr;
    *runs = q->hruns;
    *nruns = nr;
    *npeaks = total;
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_cand_run_peaks(tr_cuda_cand *q, const tr_cuda_cand_run *run,
                                            tr_cuda_cand_peak *out, tr_error *err)
{
    if (!q || !run || !out)
        return tr_fail(err, TR_ERR_INVALID, "candidates/cuda: run_peaks needs a run");
    if ((uint64_t)run->i0 + run->members > q->last || run->members > kRunP)
        return tr_fail(err, TR_ERR_INVALID,
                       "candidates/cuda: not a run of the last call");
    CAND_TRY(cudaSetDevice(q->device), "select device");
    CAND_TRY(cudaMemcpyAsync(out, q->pk + run->i0, run->members * sizeof *out,
                             cudaMemcpyDeviceToHost, q->stream),
             "copy a run's peaks back");
    CAND_TRY(cudaStreamSynchronize(q->stream), "select");
    tr_clear(err);
    return TR_OK;
}
