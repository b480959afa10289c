/*
 * The boxcar CUDA context of boxcar_cuda.h: its lifetime, device buffers and
 * streams, and the streaming pipeline that takes a call's samples from the
 * caller's buffers (host or device, either layout) through the search
 * (boxcar_launch.cu) back into the caller's buffers.
 *
 * Streaming (both variants). The context keeps the last H samples of every
 * channel on the device (cleaned, positions [pos - H, pos)); a call of n new
 * samples writes the outputs of positions [pos - latency, pos - latency + n).
 * Data beyond the end of what has arrived (only flush sees it) and before
 * position 0 read as 0; flush evaluates only the boxcars with p + L <= end.
 */
#include "boxcar/boxcar_context.cuh"
#include "boxcar/boxcar_layout.cuh"
#include "common/host_stager.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace boxcar_cuda
{

constexpr int64_t kPipeElems = (int64_t)1 << 18; /* values per host-path sub-batch */

static void release(tr_cuda_boxcar *q)
{
    if (q->device >= 0) cudaSetDevice(q->device);
    void *ptrs[] = {q->hist[0], q->hist[1], q->mu,     q->sigma,  q->fill,   q->coef,
                    q->widths,  q->in,      q->y,      q->w,      q->count,  q->line[0],
                    q->line[1], q->X[0],    q->X[1],   q->Yl,     q->Wl,     q->hin[0],
                    q->hin[1],  q->hcm[0],  q->hcm[1], q->hy[0],  q->hy[1],  q->hw[0],
                    q->hw[1],   q->hoy[0],  q->hoy[1], q->how[0], q->how[1], q->wmu,
                    q->wsig};
    for (void *p : ptrs)
        if (p) cudaFree(p);
    for (int b = 0; b < 2; b++) {
        if (q->ev_h[b]) cudaEventDestroy(q->ev_h[b]);
        if (q->ev_c[b]) cudaEventDestroy(q->ev_c[b]);
        if (q->ev_d[b]) cudaEventDestroy(q->ev_d[b]);
    }
    for (int b = 0; b < 2; b++) {
        if (q->px[b]) cudaFreeHost(q->px[b]);
        if (q->py[b]) cudaFreeHost(q->py[b]);
        if (q->pw[b]) cudaFreeHost(q->pw[b]);
    }
    delete q->stager;
    q->stager = nullptr;
    if (q->stream) cudaStreamDestroy(q->stream);
    if (q->sh) cudaStreamDestroy(q->sh);
    if (q->sd) cudaStreamDestroy(q->sd);
}

/* Device path, time-major: the channel-major results of this batch into the
 * caller's device buffers (CHANNEL_MAJOR was written in place). */
static tr_status deliver(tr_cuda_boxcar *q, size_t nb, size_t k0, float *snr,
                         int32_t *width, tr_error *err)
{
    const cudaStream_t st = q->stream;
    const dim3 tb(32, 8);
    const dim3 grid((unsigned)((nb + 31) / 32), (q->nchan + 31) / 32);
    TR_LAUNCH(to_time_major<float>, grid, tb, 0, st, q->y, snr + k0 * q->nchan,
              (int)q->nchan, (int64_t)nb, (int64_t)nb);
    TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: transpose launch", fail);
    if (width) {
        TR_LAUNCH(to_time_major<int32_t>, grid, tb, 0, st, q->w, width + k0 * q->nchan,
                  (int)q->nchan, (int64_t)nb, (int64_t)nb);
        TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: transpose launch", fail);
    }
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

} // namespace boxcar_cuda

using namespace boxcar_cuda;

extern "C" tr_status tr_cuda_boxcar_create(int device, const tr_boxcar_plan *plan,
                                           uint32_t nchan, tr_variant variant,
                                           size_t batch, tr_cuda_boxcar **out,
                                           tr_error *err)
{
    if (out) *out = NULL;
    if (!out || !plan || plan->nstages < 1 || nchan < 1 || batch < 1)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: need a plan, nchan >= 1 and batch >= 1");
    if (variant != TR_VARIANT_FAST && variant != TR_VARIANT_PAPER)
        return tr_fail(err, TR_ERR_UNSUPPORTED, "boxcar/cuda: no %s variant on CUDA",
                       tr_variant_name(variant));
    void *mem = calloc(1, sizeof(tr_cuda_boxcar));
    if (!mem)
        return tr_fail(err, TR_ERR_NOMEM, "boxcar/cuda: cannot allocate the context");
    tr_cuda_boxcar *q = new (mem) tr_cuda_boxcar();
    q->plan = *plan;
    q->nchan = nchan;
    q->variant = variant;
    q->lend = plan->lend;
    q->lat = (int64_t)plan->lend - 1;
    q->batch = std::min<size_t>(batch, (size_t)1 << 24);
    q->nmax = std::max<int64_t>((int64_t)q->batch, q->lat);
    for (uint32_t i = 0; i < plan->nstages; i++) {
        const tr_boxcar_stage &s = plan->stages[i];
        q->A = std::max<int64_t>(q->A, s.stride);
        for (uint32_t m = 0; m < s.nwidths; m++)
            q->hwidths.push_back(s.width_first + m * s.width_step);
    }
    q->total = (uint32_t)q->hwidths.size();
    q->Ap = std::max<int64_t>(q->A, (int64_t)1 << (plan->nstages - 1));
    q->Tmax = (int)std::max<int64_t>(kTileMax, q->A);
    q->H = (q->lat + std::max<int64_t>(q->Tmax, q->Ap) + kMeanBack + 4 + 3) / 4 * 4;
    int dev_count = 0;
    std::vector<int32_t> wv(q->hwidths.begin(), q->hwidths.end());

    if (check_plan(q, err) != TR_OK) goto fail_nocuda;

    TR_CUDA_TRY(cudaGetDeviceCount(&dev_count), err, "boxcar/cuda: count devices", fail);
    if (device < 0 || device >= dev_count) {
        tr_fail(err, TR_ERR_NO_DEVICE, "boxcar/cuda: no CUDA device %d", device);
        goto fail;
    }
    TR_CUDA_TRY(cudaSetDevice(device), err, "boxcar/cuda: select device", fail);
    q->device = device;
    if (fast_smem_max(device, &q->smem_max, err) != TR_OK) goto fail;
    TR_CUDA_TRY(cudaStreamCreateWithFlags(&q->stream, cudaStreamNonBlocking), err,
                "boxcar/cuda: create stream", fail);
    TR_CUDA_TRY(cudaStreamCreateWithFlags(&q->sh, cudaStreamNonBlocking), err,
                "boxcar/cuda: create stream", fail);
    TR_CUDA_TRY(cudaStreamCreateWithFlags(&q->sd, cudaStreamNonBlocking), err,
                "boxcar/cuda: create stream", fail);
    for (int b = 0; b < 2; b++) {
        TR_CUDA_TRY(cudaEventCreateWithFlags(&q->ev_h[b], cudaEventDisableTiming), err,
                    "boxcar/cuda: create event", fail);
        TR_CUDA_TRY(cudaEventCreateWithFlags(&q->ev_c[b], cudaEventDisableTiming), err,
                    "boxcar/cuda: create event", fail);
        TR_CUDA_TRY(cudaEventCreateWithFlags(&q->ev_d[b], cudaEventDisableTiming), err,
                    "boxcar/cuda: create event", fail);
    }

    if (variant == TR_VARIANT_FAST) {
        if (fast_setup(q, err) != TR_OK) goto fail;
    } else {
        q->ldl = (q->nmax + q->lend + 4 * q->Ap + 1024 + 3) / 4 * 4;
        const size_t ll = (size_t)nchan * q->ldl;
        TR_CUDA_TRY(dev_alloc(&q->line[0], ll), err, "boxcar/cuda: allocate line",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->line[1], ll), err, "boxcar/cuda: allocate line",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->X[0], ll), err, "boxcar/cuda: allocate X", fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->X[1], ll), err, "boxcar/cuda: allocate X", fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->Yl, 2 * ll + 64 * (size_t)nchan), err,
                    "boxcar/cuda: allocate Y^i", fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->Wl, 2 * ll + 64 * (size_t)nchan), err,
                    "boxcar/cuda: allocate W^i", fail_mem);
    }
    {
        /* the staging buffers come with the first call that needs them */
        const size_t hn = (size_t)nchan * q->H, tn = (size_t)nchan * q->total;
        TR_CUDA_TRY(dev_alloc(&q->hist[0], hn), err, "boxcar/cuda: allocate history",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->hist[1], hn), err, "boxcar/cuda: allocate history",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->mu, tn), err, "boxcar/cuda: allocate mu_L", fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->sigma, tn), err, "boxcar/cuda: allocate sigma_L",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->coef, tn), err, "boxcar/cuda: allocate coefficients",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->fill, (size_t)nchan), err, "boxcar/cuda: allocate fill",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->widths, (size_t)q->total), err,
                    "boxcar/cuda: allocate widths", fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->count, 1), err, "boxcar/cuda: allocate counter",
                    fail_mem);
    }
    /* host path sub-batches: about kPipeElems values, at least 4 tiles */
    q->nbp = std::min<int64_t>((int64_t)q->batch,
                               std::max<int64_t>(kPipeElems / (int64_t)nchan,
                                                 4 * (q->T > 0 ? (int64_t)q->T : q->Ap)));
    q->nbp = std::max<int64_t>(q->nbp, 1);
    TR_CUDA_TRY(cudaMemcpy(q->widths, wv.data(), wv.size() * 4, cudaMemcpyHostToDevice),
                err, "boxcar/cuda: upload widths", fail);
    if (white_tables(q, nullptr, nullptr, nullptr, err) != TR_OK) goto fail;
    if (tr_cuda_boxcar_reset(q, err) != TR_OK) goto fail;
    *out = q;
    tr_clear(err);
    return TR_OK;
fail_mem:
    if (err) err->code = TR_ERR_NOMEM;
fail : {
    (void)cudaGetLastError(); /* leave no error behind for later calls */
    const tr_status s = err ? err->code : TR_ERR_CUDA;
    release(q);
    q->~tr_cuda_boxcar();
    free(q);
    return s;
}
fail_nocuda:
    q->~tr_cuda_boxcar();
    free(q);
    return err ? err->code : TR_ERR_UNSUPPORTED;
}

extern "C" void tr_cuda_boxcar_destroy(tr_cuda_boxcar *q)
{
    if (!q) return;
    release(q);
    q->~tr_cuda_boxcar();
    free(q);
}

extern "C" tr_status tr_cuda_boxcar_reset(tr_cuda_boxcar *q, tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: NULL context");
    TR_CUDA_TRY(cudaSetDevice(q->device), err, "boxcar/cuda: select device", fail);
    TR_CUDA_TRY(cudaMemsetAsync(q->hist[0], 0, (size_t)q->nchan * q->H * 4, q->stream),
                err, "boxcar/cuda: clear history", fail);
    TR_CUDA_TRY(cudaStreamSynchronize(q->stream), err, "boxcar/cuda: clear history",
                fail);
    q->cur = 0;
    q->pos = 0;
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

extern "C" void *tr_cuda_boxcar_stream(tr_cuda_boxcar *q)
{
    return q ? (void *)q->stream : nullptr;
}

extern "C" void *tr_cuda_boxcar_host_alloc(tr_cuda_boxcar *q, size_t bytes)
{
    if (!q || cudaSetDevice(q->device) != cudaSuccess) return nullptr;
    void *p = nullptr;
    if (cudaMallocHost(&p, bytes ? bytes : 1) != cudaSuccess) {
        (void)cudaGetLastError();
        return nullptr;
    }
    return p;
}

extern "C" void tr_cuda_boxcar_host_free(void *p)
{
    if (p) cudaFreeHost(p);
}

extern "C" uint64_t tr_cuda_boxcar_position(const tr_cuda_boxcar *q)
{
    return q ? q->pos : 0;
}

/* Search nb new samples per channel (xin channel-major, ldx per channel; NULL for
 * flush) on q->stream: outputs into y, w (channel-major, ldy), then the new
 * history. */
static tr_status search_batch(tr_cuda_boxcar *q, const float *xin, int64_t ldx, size_t nb,
                              bool flush, float *y, int32_t *w, int64_t ldy,
                              tr_error *err)
{
    const cudaStream_t st = q->stream;
    source src{};
    src.hist = q->hist[q->cur];
    src.H = q->H;
    src.hist_start = (int64_t)q->pos - q->H;
    src.x = xin;
    src.ldx = ldx;
    src.pos = (int64_t)q->pos;
    src.end = (int64_t)q->pos + (flush ? 0 : (int64_t)nb);
    src.fill = q->has_fill ? q->fill : nullptr;
    /* groups of 4 samples are 16-byte aligned in both buffers */
    src.vec = q->pos % 4 == 0 && q->H % 4 == 0 &&
              (!xin || ((uintptr_t)xin % 16 == 0 && ldx % 4 == 0));
    const int64_t q0 = (int64_t)q->pos - q->lat;
    if (compute(q, src, q0, (int64_t)nb, y, w, ldy, err) != TR_OK) return err->code;
    if (!flush) {
        const dim3 hgrid((unsigned)std::min<int64_t>((q->H + 255) / 256, 1024),
                         std::min(q->nchan, kMaxGridY));
        for (uint32_t c0 = 0; c0 < q->nchan; c0 += kMaxGridY) {
            source s = src;
            s.hist = src.hist + (int64_t)c0 * q->H;
            s.x = src.x + (int64_t)c0 * src.ldx;
            s.fill = src.fill ? src.fill + c0 : nullptr;
            const dim3 g(hgrid.x, std::min(kMaxGridY, q->nchan - c0));
            TR_LAUNCH(history_kernel, g, 256, 0, st, s,
                      q->hist[1 - q->cur] + (int64_t)c0 * q->H, src.end - q->H);
            TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: history launch", fail);
        }
        q->cur = 1 - q->cur;
        q->pos += nb;
    }
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

/* Device buffers: batches of `batch` samples on q->stream. */
static tr_status run_device(tr_cuda_boxcar *q, const float *x, size_t n, bool flush,
                            tr_boxcar_layout layout, float *snr, int32_t *width,
                            tr_error *err)
{
    const cudaStream_t st = q->stream;
    const size_t total = flush ? (size_t)q->lat : n;
    /* one channel: time-major is channel-major, nothing to transpose */
    const bool direct = layout == TR_BOXCAR_CHANNEL_MAJOR || q->nchan == 1;
    if (!direct && !q->y) {
        const size_t bn = (size_t)q->nchan * q->nmax;
        TR_CUDA_TRY(dev_alloc(&q->in, bn), err, "boxcar/cuda: allocate input staging",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->w, bn), err, "boxcar/cuda: allocate width staging",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->y, bn), err, "boxcar/cuda: allocate S/N staging",
                    fail_mem);
    }
    for (size_t k0 = 0; k0 < total;) {
        const size_t nb = flush ? total : std::min<size_t>((size_t)q->batch, total - k0);
        const float *xin = nullptr;
        int64_t ldx = (int64_t)nb;
        if (!flush) {
            if (direct) {
                xin = x + k0;
                ldx = (int64_t)n;
            } else {
                const dim3 tb(32, 8);
                const dim3 tgrid((unsigned)((nb + 31) / 32), (q->nchan + 31) / 32);
                TR_LAUNCH(to_channel_major<float>, tgrid, tb, 0, st, x + k0 * q->nchan,
                          q->in, (int)q->nchan, (int64_t)nb, (int64_t)nb);
                TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: transpose launch",
                            fail);
                xin = q->in;
            }
        }
        float *yo = direct ? snr + k0 : q->y;
        int32_t *wo = direct ? (width ? width + k0 : nullptr) : (width ? q->w : nullptr);
        const int64_t ldy = direct ? (int64_t)total : (int64_t)nb;
        if (search_batch(q, xin, ldx, nb, flush, yo, wo, ldy, err) != TR_OK)
            return err->code;
        if (!direct && deliver(q, nb, k0, snr, width, err) != TR_OK) return err->code;
        k0 += nb;
    }
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
fail_mem:
    if (err) err->code = TR_ERR_NOMEM;
    (void)cudaGetLastError();
    return TR_ERR_NOMEM;
}

/*
 * Host buffers: sub-batches of nbp samples per channel through two slots of
 * device buffers. Sub-batch k: its input is copied on q->sh (once the search
 * of k - 2 has read that slot), searched on q->stream (once the outputs of
 * k - 2 have left that slot), and its outputs are copied out on q->sd, issued
 * after the search of k + 1 so that a copy into pageable memory (which the
 * host waits for) still overlaps the next search. Page-locked caller buffers
 * are copied directly by the GPU; pageable ones through the driver.
 */
static tr_status run_host(tr_cuda_boxcar *q, const float *x, size_t n, bool flush,
                          tr_boxcar_layout layout, float *snr, int32_t *width,
                          tr_error *err)
{
    const cudaStream_t st = q->stream;
    const uint32_t C = q->nchan;
    const size_t total = flush ? (size_t)q->lat : n;
    const bool cm = layout == TR_BOXCAR_CHANNEL_MAJOR;
    const bool tr = !cm && C > 1; /* time-major with several channels: transposes */
    const size_t cap = (size_t)std::max<int64_t>(q->nbp, q->lat);
    if (!q->hy[0] || (int64_t)cap > q->hcap) {
        TR_CUDA_TRY(cudaStreamSynchronize(st), err, "boxcar/cuda: sync", fail);
        for (int b = 0; b < 2; b++) {
            void *old[] = {q->hin[b], q->hcm[b], q->hy[b],
                           q->hw[b],  q->hoy[b], q->how[b]};
            for (void *p : old)
                if (p) cudaFree(p);
            q->hin[b] = q->hcm[b] = q->hy[b] = q->hoy[b] = nullptr;
            q->hw[b] = q->how[b] = nullptr;
        }
        q->hcap = 0;
        const size_t bn = (size_t)C * cap;
        for (int b = 0; b < 2; b++) {
            TR_CUDA_TRY(dev_alloc(&q->hin[b], bn), err, "boxcar/cuda: allocate staging",
                        fail_mem);
            TR_CUDA_TRY(dev_alloc(&q->hy[b], bn), err, "boxcar/cuda: allocate staging",
                        fail_mem);
            TR_CUDA_TRY(dev_alloc(&q->hw[b], bn), err, "boxcar/cuda: allocate staging",
                        fail_mem);
            if (C > 1) {
                TR_CUDA_TRY(dev_alloc(&q->hcm[b], bn), err,
                            "boxcar/cuda: allocate staging", fail_mem);
                TR_CUDA_TRY(dev_alloc(&q->hoy[b], bn), err,
                            "boxcar/cuda: allocate staging", fail_mem);
                TR_CUDA_TRY(dev_alloc(&q->how[b], bn), err,
                            "boxcar/cuda: allocate staging", fail_mem);
            }
        }
        q->hcap = (int64_t)cap;
    }
    { /* (a scope of its own: the jumps above pass over it) */
        /* pageable caller buffers go through page-locked staging, copied by host
         * threads while the GPU works on the neighbouring sub-batches */
        const bool sin = !flush && !tr_host_is_pinned(x);
        const bool sout = !tr_host_is_pinned(snr) || (width && !tr_host_is_pinned(width));
        if ((sin || sout) && !q->px[0]) {
            const size_t bn = (size_t)C * cap;
            for (int b = 0; b < 2; b++) {
                TR_CUDA_TRY(cudaMallocHost((void **)&q->px[b], bn * 4), err,
                            "boxcar/cuda: allocate page-locked staging", fail_mem);
                TR_CUDA_TRY(cudaMallocHost((void **)&q->py[b], bn * 4), err,
                            "boxcar/cuda: allocate page-locked staging", fail_mem);
                TR_CUDA_TRY(cudaMallocHost((void **)&q->pw[b], bn * 4), err,
                            "boxcar/cuda: allocate page-locked staging", fail_mem);
            }
        }
        if ((sin || sout) && !q->stager) {
            try {
                q->stager = new tr_host_stager(tr_host_stager_threads());
            } catch (...) {
                return tr_fail(err, TR_ERR_NOMEM,
                               "boxcar/cuda: cannot start staging threads");
            }
        }
        {
            /* downloads into the staging slots not yet copied to the caller */
            size_t dk0[2] = {0, 0}, dnb[2] = {0, 0};
            bool dv[2] = {false, false};
            auto drain = [&](int s2) -> bool {
                if (!dv[s2]) return true;
                dv[s2] = false;
                if (cudaEventSynchronize(q->ev_d[s2]) != cudaSuccess) return false;
                const size_t k0 = dk0[s2], nb = dnb[s2];
                if (cm) {
                    q->stager->copy_rows(snr + k0, total * 4, q->py[s2], nb * 4, nb * 4,
                                         C);
                    if (width)
                        q->stager->copy_rows(width + k0, total * 4, q->pw[s2], nb * 4,
                                             nb * 4, C);
                } else {
                    q->stager->copy(snr + k0 * C, q->py[s2], nb * C * 4);
                    if (width) q->stager->copy(width + k0 * C, q->pw[s2], nb * C * 4);
                }
                return true;
            };
            const size_t nbp = flush ? total : std::min<size_t>((size_t)q->nbp, total);
            /* the pending download: sub-batch k - 1 */
            size_t pk0 = 0, pnb = 0;
            int pb = -1;
            const dim3 tb(32, 8);
            for (size_t k0 = 0, k = 0; k0 < total || pb >= 0; k++) {
                const int b = (int)(k & 1);
                size_t nb = 0;
                if (k0 < total) {
                    nb = std::min(nbp, total - k0);
                    const dim3 tgrid((unsigned)((nb + 31) / 32), (C + 31) / 32);
                    const float *xin = nullptr;
                    if (!flush) {
                        if (k >= 2)
                            TR_CUDA_TRY(cudaStreamWaitEvent(q->sh, q->ev_c[b], 0), err,
                                        "boxcar/cuda: wait", fail);
                        if (sin) {
                            /* the upload of k - 2 has left px[b] */
                            if (k >= 2)
                                TR_CUDA_TRY(cudaEventSynchronize(q->ev_h[b]), err,
                                            "boxcar/cuda: wait for upload", fail);
                            if (cm)
                                q->stager->copy_rows(q->px[b], nb * 4, x + k0, n * 4,
                                                     nb * 4, C);
                            else
                                q->stager->copy(q->px[b], x + k0 * C, nb * C * 4);
                            TR_CUDA_TRY(cudaMemcpyAsync(
                                            cm && C > 1 ? q->hcm[b] : q->hin[b], q->px[b],
                                            nb * C * 4, cudaMemcpyHostToDevice, q->sh),
                                        err, "boxcar/cuda: upload samples", fail);
                        } else if (cm)
                            TR_CUDA_TRY(cudaMemcpy2DAsync(C > 1 ? q->hcm[b] : q->hin[b],
                                                          nb * 4, x + k0, n * 4, nb * 4,
                                                          C, cudaMemcpyHostToDevice,
                                                          q->sh),
                                        err, "boxcar/cuda: upload samples", fail);
                        else
                            TR_CUDA_TRY(cudaMemcpyAsync(q->hin[b], x + k0 * C, nb * C * 4,
                                                        cudaMemcpyHostToDevice, q->sh),
                                        err, "boxcar/cuda: upload samples", fail);
                        TR_CUDA_TRY(cudaEventRecord(q->ev_h[b], q->sh), err,
                                    "boxcar/cuda: record", fail);
                        TR_CUDA_TRY(cudaStreamWaitEvent(st, q->ev_h[b], 0), err,
                                    "boxcar/cuda: wait", fail);
                        xin = cm && C > 1 ? q->hcm[b] : q->hin[b];
                        if (tr) {
                            TR_LAUNCH(to_channel_major<float>, tgrid, tb, 0, st,
                                      q->hin[b], q->hcm[b], (int)C, (int64_t)nb,
                                      (int64_t)nb);
                            TR_CUDA_TRY(cudaGetLastError(), err,
                                        "boxcar/cuda: transpose launch", fail);
                            xin = q->hcm[b];
                        }
                    }
                    if (k >= 2)
                        TR_CUDA_TRY(cudaStreamWaitEvent(st, q->ev_d[b], 0), err,
                                    "boxcar/cuda: wait", fail);
                    if (search_batch(q, xin, (int64_t)nb, nb, flush, q->hy[b],
                                     width ? q->hw[b] : nullptr, (int64_t)nb,
                                     err) != TR_OK)
                        return err->code;
                    if (tr) {
                        TR_LAUNCH(to_time_major<float>, tgrid, tb, 0, st, q->hy[b],
                                  q->hoy[b], (int)C, (int64_t)nb, (int64_t)nb);
                        TR_CUDA_TRY(cudaGetLastError(), err,
                                    "boxcar/cuda: transpose launch", fail);
                        if (width) {
                            TR_LAUNCH(to_time_major<int32_t>, tgrid, tb, 0, st, q->hw[b],
                                      q->how[b], (int)C, (int64_t)nb, (int64_t)nb);
                            TR_CUDA_TRY(cudaGetLastError(), err,
                                        "boxcar/cuda: transpose launch", fail);
                        }
                    }
                    TR_CUDA_TRY(cudaEventRecord(q->ev_c[b], st), err,
                                "boxcar/cuda: record", fail);
                }
                if (pb >= 0) { /* download sub-batch k - 1 */
                    TR_CUDA_TRY(cudaStreamWaitEvent(q->sd, q->ev_c[pb], 0), err,
                                "boxcar/cuda: wait", fail);
                    if (sout) {
                        /* into page-locked staging in the device layout */
                        TR_CUDA_TRY(cudaMemcpyAsync(
                                        q->py[pb], C > 1 && !cm ? q->hoy[pb] : q->hy[pb],
                                        pnb * C * 4, cudaMemcpyDeviceToHost, q->sd),
                                    err, "boxcar/cuda: download S/N", fail);
                        if (width)
                            TR_CUDA_TRY(cudaMemcpyAsync(
                                            q->pw[pb],
                                            C > 1 && !cm ? q->how[pb] : q->hw[pb],
                                            pnb * C * 4, cudaMemcpyDeviceToHost, q->sd),
                                        err, "boxcar/cuda: download widths", fail);
                        dk0[pb] = pk0;
                        dnb[pb] = pnb;
                        dv[pb] = true;
                    } else if (cm) {
                        TR_CUDA_TRY(cudaMemcpy2DAsync(snr + pk0, total * 4, q->hy[pb],
                                                      pnb * 4, pnb * 4, C,
                                                      cudaMemcpyDeviceToHost, q->sd),
                                    err, "boxcar/cuda: download S/N", fail);
                        if (width)
                            TR_CUDA_TRY(cudaMemcpy2DAsync(width + pk0, total * 4,
                                                          q->hw[pb], pnb * 4, pnb * 4, C,
                                                          cudaMemcpyDeviceToHost, q->sd),
                                        err, "boxcar/cuda: download widths", fail);
                    } else {
                        TR_CUDA_TRY(
                            cudaMemcpyAsync(snr + pk0 * C, C > 1 ? q->hoy[pb] : q->hy[pb],
                                            pnb * C * 4, cudaMemcpyDeviceToHost, q->sd),
                            err, "boxcar/cuda: download S/N", fail);
                        if (width)
                            TR_CUDA_TRY(cudaMemcpyAsync(width + pk0 * C,
                                                        C > 1 ? q->how[pb] : q->hw[pb],
                                                        pnb * C * 4,
                                                        cudaMemcpyDeviceToHost, q->sd),
                                        err, "boxcar/cuda: download widths", fail);
                    }
                    TR_CUDA_TRY(cudaEventRecord(q->ev_d[pb], q->sd), err,
                                "boxcar/cuda: record", fail);
                    /* staging: hand over sub-batch k - 2 while the GPU works on
                     * k and k - 1 */
                    if (!drain(1 - pb)) goto fail_sync;
                }
                if (nb > 0) {
                    pk0 = k0;
                    pnb = nb;
                    pb = b;
                    k0 += nb;
                } else {
                    pb = -1;
                }
            }
            if (!drain(0) || !drain(1)) goto fail_sync;
        }
    }
    TR_CUDA_TRY(cudaStreamSynchronize(q->sh), err, "boxcar/cuda: upload", fail);
    tr_clear(err);
    return TR_OK;
fail_sync:
    return tr_fail(err, TR_ERR_CUDA, "boxcar/cuda: wait for a download: %s",
                   cudaGetErrorString(cudaGetLastError()));
fail:
    return err ? err->code : TR_ERR_CUDA;
fail_mem:
    if (err) err->code = TR_ERR_NOMEM;
    (void)cudaGetLastError();
    return TR_ERR_NOMEM;
}

static tr_status run_or_flush(tr_cuda_boxcar *q, const float *x, size_t n, bool flush,
                              tr_boxcar_layout layout, int on_device, float *snr,
                              int32_t *width, uint64_t *nonfinite, tr_error *err)
{
    const cudaStream_t st = q->stream;
    const size_t total = flush ? (size_t)q->lat : n;
    unsigned long long cnt = 0;
    tr_status s = TR_OK;
    if (layout != TR_BOXCAR_TIME_MAJOR && layout != TR_BOXCAR_CHANNEL_MAJOR)
        return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: unknown layout %d",
                       (int)layout);
    if (total == 0) {
        tr_clear(err);
        return TR_OK;
    }
    if ((!flush && !x) || !snr)
        return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: NULL buffer");
    TR_CUDA_TRY(cudaSetDevice(q->device), err, "boxcar/cuda: select device", fail);
    (void)cudaGetLastError(); /* an earlier failure elsewhere is not this call's */
    if (on_device == TR_SRC_CALLER_DEVICE && !flush)
        TR_CUDA_TRY(tr_cuda_caller_ready(), err,
                    "boxcar/cuda: wait for the caller's stream", fail);
    if (q->has_fill)
        TR_CUDA_TRY(cudaMemsetAsync(q->count, 0, sizeof(unsigned long long), st), err,
                    "boxcar/cuda: clear counter", fail);
    s = on_device ? run_device(q, x, n, flush, layout, snr, width, err)
                  : run_host(q, x, n, flush, layout, snr, width, err);
    if (s == TR_OK && q->has_fill)
        TR_CUDA_TRY(
            cudaMemcpyAsync(&cnt, q->count, sizeof cnt, cudaMemcpyDeviceToHost, st), err,
            "boxcar/cuda: read counter", fail);
    /* every stream idle before returning, also after a failure */
    {
        const cudaError_t e1 = cudaStreamSynchronize(st);
        const cudaError_t e2 = cudaStreamSynchronize(q->sd);
        const cudaError_t e3 = cudaStreamSynchronize(q->sh);
        if (s != TR_OK) return s;
        TR_CUDA_TRY(e1 != cudaSuccess ? e1 : (e2 != cudaSuccess ? e2 : e3), err,
                    "boxcar/cuda: run", fail);
    }
    if (nonfinite) *nonfinite += cnt;
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

extern "C" tr_status tr_cuda_boxcar_run(tr_cuda_boxcar *q, const float *x, size_t n,
                                        tr_boxcar_layout layout, int on_device,
                                        float *snr, int32_t *width, uint64_t *nonfinite,
                                        tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: NULL context");
    return run_or_flush(q, x, n, false, layout, on_device, snr, width, nonfinite, err);
}

extern "C" tr_status tr_cuda_boxcar_flush(tr_cuda_boxcar *q, tr_boxcar_layout layout,
                                          int on_device, float *snr, int32_t *width,
                                          tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: NULL context");
    return run_or_flush(q, nullptr, 0, true, layout, on_device, snr, width, nullptr, err);
}
