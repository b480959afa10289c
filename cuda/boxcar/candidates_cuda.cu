/*
 * The CUDA candidates context of candidates_cuda.h: device buffers that grow
 * on demand, the selection and walk launches per piece of a call, and the
 * closed events copied back.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6.
 *
 * Per piece of a call (at most kPieceVals values, so that peak positions and
 * counts fit 32 bits): select (three launches), walk, then one copy of the
 * small scalar state back. The host keeps the last copy of that state and
 * writes it before every walk, so a walk that stopped for room is resumed
 * from it once the buffer has grown.
 */
#include "boxcar/candidates_cuda.h"
#include "boxcar/candidates_kernels.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

namespace cand_cuda
{

constexpr int kNT = 256, kIT = 16;               /* selection: threads, values each */
constexpr int64_t kTile = (int64_t)kNT * kIT;    /* values per selection tile */
constexpr int64_t kPieceVals = (int64_t)1 << 30; /* values per piece, at most */

/* A selection kernel instance as one macro argument of TR_LAUNCH. */
#define CAND_SELECT(kernel) kernel<kNT, kIT>

#define CAND_TRY(call, what)                                                             \
    do {                                                                                 \
        const cudaError_t e_ = (call);                                                   \
        if (e_ != cudaSuccess)                                                           \
            return tr_fail(err, TR_ERR_CUDA, "candidates/cuda: %s: %s", (what),          \
                           cudaGetErrorString(e_));                                      \
    } while (0)

} // namespace cand_cuda

using namespace cand_cuda;

struct tr_cuda_cand {
    int device = -1;
    params prm{};
    int64_t start = 0;
    cudaStream_t stream = nullptr;
    state S{}; /* the device state as of the last walk */
    state *d_st = nullptr;
    arrays a{};
    peak *pk = nullptr;
    uint32_t pkcap = 0;
    uint32_t *tile_count = nullptr, *tile_off = nullptr, *total = nullptr;
    int64_t tilecap = 0;
    float *hs = nullptr; /* host input copied in (time-major) */
    int32_t *hw = nullptr;
    int64_t hcap = 0;
    uint8_t *skip = nullptr;
    std::vector<tr_candidate> events; /* closed by the last call */
};

namespace
{

template <typename T> cudaError_t alloc(T **p, size_t count)
{
    return cudaMalloc((void **)p, std::max<size_t>(count, 1) * sizeof(T));
}

/* A device array of n elements grown to cap2, the first `keep` copied. */
template <typename T>
tr_status regrow(tr_cuda_cand *q, T **p, size_t keep, size_t cap2, tr_error *err)
{
    T *np = nullptr;
    CAND_TRY(alloc(&np, cap2), "grow a buffer");
    if (keep) {
        const cudaError_t e = cudaMemcpyAsync(np, *p, keep * sizeof(T),
                                              cudaMemcpyDeviceToDevice, q->stream);
        if (e != cudaSuccess) {
            cudaFree(np);
            return tr_fail(err, TR_ERR_CUDA, "candidates/cuda: copy a buffer: %s",
                           cudaGetErrorString(e));
        }
        CAND_TRY(cudaStreamSynchronize(q->stream), "copy a buffer");
    }
    cudaFree(*p);
    *p = np;
    return TR_OK;
}

void release(tr_cuda_cand *q)
{
    if (q->device >= 0) cudaSetDevice(q->device);
    void *ptrs[] = {q->d_st,     q->a.cl,  q->a.freel, q->a.open, q->a.e,
                    q->a.en,     q->a.sum, q->a.out,   q->pk,     q->tile_count,
                    q->tile_off, q->total, q->hs,      q->hw,     q->skip};
    for (void *p : ptrs)
        if (p) cudaFree(p);
    if (q->stream) cudaStreamDestroy(q->stream);
}

/* Events of the device buffer into q->events; nout back to 0. */
tr_status drain(tr_cuda_cand *q, tr_error *err)
{
    if (q->S.nout == 0) return TR_OK;
    const size_t m = q->events.size();
    q->events.resize(m + q->S.nout);
    CAND_TRY(cudaMemcpyAsync(q->events.data() + m, q->a.out,
                             q->S.nout * sizeof(tr_candidate), cudaMemcpyDeviceToHost,
                             q->stream),
             "copy the events");
    CAND_TRY(cudaStreamSynchronize(q->stream), "copy the events");
    q->S.nout = 0;
    return TR_OK;
}

/* Room for what the walk stopped at. */
tr_status make_room(tr_cuda_cand *q, tr_error *err)
{
    arrays &A = q->a;
    switch (q->S.stop) {
    case kClustersFull: {
        const uint32_t c2 = A.capcl * 2;
        tr_status s;
        if ((s = regrow(q, &A.cl, A.capcl, c2, err)) != TR_OK) return s;
        if ((s = regrow(q, &A.freel, q->S.nfree, c2, err)) != TR_OK) return s;
        if ((s = regrow(q, &A.open, q->S.nopen, c2, err)) != TR_OK) return s;
        A.capcl = c2;
        return TR_OK;
    }
    case kEntriesFull: {
        const uint32_t e2 = A.ecap * 2;
        entry *ne = nullptr;
        CAND_TRY(alloc(&ne, (size_t)q->prm.nchan * e2), "grow the active peaks");
        const cudaError_t e = cudaMemcpy2DAsync(
            ne, e2 * sizeof(entry), A.e, A.ecap * sizeof(entry), A.ecap * sizeof(entry),
            q->prm.nchan, cudaMemcpyDeviceToDevice, q->stream);
        const cudaError_t e2s = cudaStreamSynchronize(q->stream);
        if (e != cudaSuccess || e2s != cudaSuccess) {
            cudaFree(ne);
            return tr_fail(err, TR_ERR_CUDA, "candidates/cuda: copy the active peaks: %s",
                           cudaGetErrorString(e != cudaSuccess ? e : e2s));
        }
        cudaFree(A.e);
        A.e = ne;
        A.ecap = e2;
        return TR_OK;
    }
    case kEventsFull: {
        tr_status s = drain(q, err);
        if (s != TR_OK) return s;
        if (A.capout < q->S.nopen) {
            const uint32_t c2 = std::max(A.capout * 2, q->S.nopen);
            if ((s = regrow(q, &A.out, 0, c2, err)) != TR_OK) return s;
            A.capout = c2;
        }
        return TR_OK;
    }
    default:
        return tr_fail(err, TR_ERR_CUDA, "candidates/cuda: walk stopped (%u)",
                       (unsigned)q->S.stop);
    }
}

/* One walk launch and its state back. */
tr_status walk_once(tr_cuda_cand *q, const uint32_t *npk, int64_t base, int64_t n,
                    tr_error *err)
{
    CAND_TRY(
        cudaMemcpyAsync(q->d_st, &q->S, sizeof(state), cudaMemcpyHostToDevice, q->stream),
        "write the state");
    TR_LAUNCH(walk, 1, 1, 0, q->stream, q->d_st, q->a, q->prm, q->pk, npk, q->pkcap, base,
              n);
    CAND_TRY(cudaGetLastError(), "walk launch");
    CAND_TRY(
        cudaMemcpyAsync(&q->S, q->d_st, sizeof(state), cudaMemcpyDeviceToHost, q->stream),
        "read the state");
    CAND_TRY(cudaStreamSynchronize(q->stream), "walk");
    return TR_OK;
}

/* Walk until done, making room whenever it stops; select_again re-selects
 * the piece's peaks into a grown peak buffer. */
template <typename F>
tr_status walk_all(tr_cuda_cand *q, const uint32_t *npk, int64_t base, int64_t n,
                   F select_again, tr_error *err)
{
    for (;;) {
        tr_status s = walk_once(q, npk, base, n, err);
        if (s != TR_OK) return s;
        if (q->S.stop == kDone) return drain(q, err);
        if (q->S.stop == kPeaksFull) {
            uint32_t total = 0;
            CAND_TRY(cudaMemcpy(&total, q->total, sizeof total, cudaMemcpyDeviceToHost),
                     "read the peak count");
            cudaFree(q->pk);
            q->pk = nullptr;
            q->pkcap = 0;
            CAND_TRY(alloc(&q->pk, total), "grow the peak buffer");
            q->pkcap = total;
            if ((s = select_again()) != TR_OK) return s;
        } else if ((s = make_room(q, err)) != TR_OK) {
            return s;
        }
    }
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
    q->prm = params{cfg->nchan, cfg->link_time, cfg->link_chan, cfg->link_width,
                    cfg->max_span};
    q->start = cfg->start_position;
    arrays &A = q->a;
    A.capcl = 1024;
    A.capout = 256;
    A.ecap = cfg->link_width == 0.0 ? 0 : 8;
    q->pkcap = 4096;
    const size_t C = cfg->nchan;
    tr_status s = TR_OK;
    auto fail = [&](const char *what, cudaError_t e) {
        s = tr_fail(err, e == cudaErrorMemoryAllocation ? TR_ERR_NOMEM : TR_ERR_CUDA,
                    "candidates/cuda: %s: %s", what, cudaGetErrorString(e));
    };
    cudaError_t e;
    if ((e = cudaSetDevice(device)) != cudaSuccess) {
        fail("select device", e);
    } else {
        q->device = device;
        if ((e = cudaStreamCreateWithFlags(&q->stream, cudaStreamNonBlocking)) ||
            (e = alloc(&q->d_st, 1)) || (e = alloc(&A.cl, A.capcl)) ||
            (e = alloc(&A.freel, A.capcl)) || (e = alloc(&A.open, A.capcl)) ||
            (e = alloc(&A.out, A.capout)) || (e = alloc(&q->pk, q->pkcap)) ||
            (e = alloc(&q->total, 1)) || (e = alloc(&q->skip, C)) ||
            (A.ecap ? ((e = alloc(&A.e, C * A.ecap)) || (e = alloc(&A.en, C)))
                    : (e = alloc(&A.sum, C)) != cudaSuccess))
            fail("allocate", e);
    }
    if (s == TR_OK) s = tr_cuda_cand_reset(q, err);
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

extern "C" tr_status tr_cuda_cand_reset(tr_cuda_cand *q, tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "candidates/cuda: NULL context");
    CAND_TRY(cudaSetDevice(q->device), "select device");
    q->S = state{};
    q->S.position = q->S.closed = q->start;
    q->S.next_check = INT64_MAX;
    q->events.clear();
    const size_t C = q->prm.nchan;
    if (q->a.ecap)
        CAND_TRY(cudaMemsetAsync(q->a.en, 0, C * sizeof(uint32_t), q->stream),
                 "clear the active peaks");
    else
        CAND_TRY(cudaMemsetAsync(q->a.sum, 0, C * sizeof(chan_sum), q->stream),
                 "clear the active peaks");
    CAND_TRY(cudaStreamSynchronize(q->stream), "reset");
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_cand_process(tr_cuda_cand *q, const float *snr,
                                          const int32_t *width, int64_t ld, int64_t k0,
                                          size_t n, int channel_major, int on_device,
                                          float threshold, const uint8_t *skip,
                                          tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "candidates/cuda: NULL context");
    q->events.clear();
    if (n == 0) return TR_OK;
    if (!snr || k0 < 0 || (channel_major && ld < k0 + (int64_t)n))
        return tr_fail(err, TR_ERR_INVALID, "candidates/cuda: bad buffer description");
    if (!on_device && (channel_major || k0 != 0))
        return tr_fail(err, TR_ERR_INVALID,
                       "candidates/cuda: host buffers are time-major from k0 = 0");
    CAND_TRY(cudaSetDevice(q->device), "select device");
    const int64_t C = q->prm.nchan;
    if (skip)
        CAND_TRY(
            cudaMemcpyAsync(q->skip, skip, (size_t)C, cudaMemcpyHostToDevice, q->stream),
            "copy the channel flags");
    const int64_t piece = std::max<int64_t>(1, kPieceVals / C);
    for (int64_t done = 0; done < (int64_t)n;) {
        const int64_t m = std::min<int64_t>(piece, (int64_t)n - done);
        const int64_t nv = m * C, ntiles = (nv + kTile - 1) / kTile;
        view v{snr,
               width,
               skip ? q->skip : nullptr,
               (uint32_t)C,
               channel_major,
               ld,
               k0 + done,
               m,
               threshold};
        if (!on_device) {
            /* host values: this piece into the device copy, time-major */
            if (nv > q->hcap) {
                cudaFree(q->hs);
                cudaFree(q->hw);
                q->hs = nullptr;
                q->hw = nullptr;
                q->hcap = 0;
                CAND_TRY(alloc(&q->hs, (size_t)nv), "allocate the input copy");
                CAND_TRY(alloc(&q->hw, (size_t)nv), "allocate the input copy");
                q->hcap = nv;
            }
            CAND_TRY(cudaMemcpyAsync(q->hs, snr + done * C, (size_t)nv * sizeof(float),
                                     cudaMemcpyHostToDevice, q->stream),
                     "copy the S/N in");
            if (width)
                CAND_TRY(cudaMemcpyAsync(q->hw, width + done * C,
                                         (size_t)nv * sizeof(int32_t),
                                         cudaMemcpyHostToDevice, q->stream),
                         "copy the widths in");
            v.snr = q->hs;
            v.width = width ? q->hw : nullptr;
            v.k0 = 0;
        }
        if (ntiles > q->tilecap) {
            cudaFree(q->tile_count);
            cudaFree(q->tile_off);
            q->tile_count = q->tile_off = nullptr;
            q->tilecap = 0;
            CAND_TRY(alloc(&q->tile_count, (size_t)ntiles), "allocate the tile counts");
            CAND_TRY(alloc(&q->tile_off, (size_t)ntiles), "allocate the tile counts");
            q->tilecap = ntiles;
        }
        auto write = [&]() -> tr_status {
            TR_LAUNCH(CAND_SELECT(select_write), (unsigned)ntiles, kNT, 0, q->stream, v,
                      q->tile_off, q->pk, q->pkcap);
            CAND_TRY(cudaGetLastError(), "select launch");
            return TR_OK;
        };
        TR_LAUNCH(CAND_SELECT(select_count), (unsigned)ntiles, kNT, 0, q->stream, v,
                  q->tile_count);
        CAND_TRY(cudaGetLastError(), "select launch");
        TR_LAUNCH(select_scan<kNT>, 1, kNT, 0, q->stream, q->tile_count, (uint32_t)ntiles,
                  q->tile_off, q->total);
        CAND_TRY(cudaGetLastError(), "select launch");
        tr_status s = write();
        if (s != TR_OK) return s;
        q->S.resume = 0;
        q->S.resume_k = 0;
        s = walk_all(q, q->total, q->S.position, m, write, err);
        if (s != TR_OK) return s;
        done += m;
    }
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_cand_flush(tr_cuda_cand *q, tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "candidates/cuda: NULL context");
    CAND_TRY(cudaSetDevice(q->device), "select device");
    q->events.clear();
    const tr_status s = walk_all(
        q, nullptr, q->S.position, 0, []() { return TR_OK; }, err);
    if (s == TR_OK) tr_clear(err);
    return s;
}

extern "C" size_t tr_cuda_cand_events(const tr_cuda_cand *q, const tr_candidate **events)
{
    if (!q || !events) return 0;
    *events = q->events.data();
    return q->events.size();
}

extern "C" void tr_cuda_cand_get_info(const tr_cuda_cand *q, tr_cuda_cand_info *info)
{
    if (!q || !info) return;
    info->position = q->S.position;
    info->closed = q->S.closed;
    info->peaks = q->S.peaks;
    info->emitted = q->S.emitted;
    info->open = q->S.nopen;
}
