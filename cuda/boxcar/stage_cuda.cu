/*
 * Device buffers of stage_cuda.h: one allocation per buffer (two sample
 * slots, allocated at their first copy in, so that a stage used only for
 * held outputs has none; each with the event of its last copy), a stream for
 * the copies and the placement of held outputs. Page-locked host memory is
 * copied by the GPU directly; pageable memory is first copied by host
 * threads into a page-locked buffer of its slot (one thread through the
 * driver's staging cannot keep up with PCIe, docs/architecture.md).
 */
#include "boxcar/stage_cuda.h"

#include "boxcar/boxcar_target.cuh"
#include "common/host_stager.cuh"

#include <algorithm>
#include <cstdlib>
#include <new>

#define STAGE_TRY(call, what) TR_BOXCAR_TRY(call, err, "stage/cuda", what)

namespace
{

/* Outputs of ld positions per channel: z0 .. off - 1 zero, off .. off + m - 1
 * from src (m positions per channel). */
template <typename T>
__global__ void place(const T *src, int cm, uint32_t nchan, int64_t z0, int64_t off,
                      int64_t m, int64_t ld, T *dst)
{
    const int64_t span = off + m - z0, nv = span * (int64_t)nchan;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nv;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = z0 + (cm ? i % span : i / nchan), c = cm ? i / span : i % nchan;
        const T v = k < off ? T(0) : src[cm ? c * m + (k - off) : (k - off) * nchan + c];
        dst[cm ? c * ld + k : k * nchan + c] = v;
    }
}

unsigned place_blocks(int64_t n)
{
    return (unsigned)std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, 4096));
}

} // namespace

struct tr_cuda_stage {
    int device = -1;
    size_t values = 0;
    cudaStream_t stream = nullptr;
    cudaEvent_t copied[2] = {nullptr, nullptr}; /* the last copy into each x slot */
    float *x[2] = {nullptr, nullptr}, *snr = nullptr;
    int32_t *width = nullptr;
    float *snr1 = nullptr; /* output slot 1 (tr_cuda_stage_outputs) */
    int32_t *width1 = nullptr;
    float *px[2] = {nullptr, nullptr}; /* page-locked staging of pageable input */
    tr_host_stager *stager = nullptr;  /* its copying threads */
};

extern "C" void tr_cuda_stage_destroy(tr_cuda_stage *st)
{
    if (!st) return;
    if (st->device >= 0) cudaSetDevice(st->device);
    for (int i = 0; i < 2; i++) {
        cudaFree(st->x[i]);
        if (st->px[i]) cudaFreeHost(st->px[i]);
        if (st->copied[i]) cudaEventDestroy(st->copied[i]);
    }
    delete st->stager;
    cudaFree(st->snr);
    cudaFree(st->width);
    cudaFree(st->snr1);
    cudaFree(st->width1);
    if (st->stream) cudaStreamDestroy(st->stream);
    st->~tr_cuda_stage();
    free(st);
}

static tr_status stage_setup(tr_cuda_stage *st, int device, size_t values, tr_error *err)
{
    STAGE_TRY(cudaSetDevice(device), "select device");
    st->device = device;
    st->values = values;
    STAGE_TRY(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking),
              "create stream");
    const size_t b = (values ? values : 1) * 4;
    for (int i = 0; i < 2; i++)
        STAGE_TRY(cudaEventCreateWithFlags(&st->copied[i], cudaEventDisableTiming),
                  "create event");
    STAGE_TRY(cudaMalloc((void **)&st->snr, b), "allocate S/N");
    STAGE_TRY(cudaMalloc((void **)&st->width, b), "allocate widths");
    return TR_OK;
}

extern "C" tr_status tr_cuda_stage_create(int device, size_t values, tr_cuda_stage **out,
                                          tr_error *err)
{
    if (!out) return tr_fail(err, TR_ERR_INVALID, "stage/cuda: NULL output");
    *out = NULL;
    void *mem = calloc(1, sizeof(tr_cuda_stage));
    if (!mem)
        return tr_fail(err, TR_ERR_NOMEM, "stage/cuda: cannot allocate the context");
    tr_cuda_stage *st = new (mem) tr_cuda_stage();
    const tr_status s = stage_setup(st, device, values, err);
    if (s != TR_OK) {
        tr_cuda_stage_destroy(st);
        return s;
    }
    *out = st;
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_stage_upload(tr_cuda_stage *st, int slot, const float *x,
                                          size_t n, tr_error *err)
{
    if (!st || (n && !x) || n > st->values || (slot != 0 && slot != 1))
        return tr_fail(err, TR_ERR_INVALID, "stage/cuda: upload of %zu values", n);
    STAGE_TRY(cudaSetDevice(st->device), "select device");
    const size_t cap = (st->values ? st->values : 1) * 4;
    if (!st->x[slot])
        STAGE_TRY(cudaMalloc((void **)&st->x[slot], cap), "allocate samples");
    const float *src = x;
    if (n && !tr_host_is_pinned(x)) {
        if (!st->px[slot])
            STAGE_TRY(cudaMallocHost((void **)&st->px[slot], cap),
                      "allocate page-locked staging");
        if (!st->stager) {
            try {
                st->stager = new tr_host_stager(tr_host_stager_threads());
            } catch (...) {
                return tr_fail(err, TR_ERR_NOMEM,
                               "stage/cuda: cannot start staging threads");
            }
        }
        /* the slot's last copy read this staging buffer */
        STAGE_TRY(cudaEventSynchronize(st->copied[slot]), "copy samples in");
        st->stager->copy(st->px[slot], x, n * sizeof(float));
        src = st->px[slot];
    }
    STAGE_TRY(cudaMemcpyAsync(st->x[slot], src, n * sizeof(float), cudaMemcpyHostToDevice,
                              st->stream),
              "copy samples in");
    STAGE_TRY(cudaEventRecord(st->copied[slot], st->stream), "copy samples in");
    return TR_OK;
}

extern "C" int tr_cuda_stage_pinned(const void *p)
{
    return tr_host_is_pinned(p) ? 1 : 0;
}

extern "C" tr_status tr_cuda_stage_wait(tr_cuda_stage *st, int slot, tr_error *err)
{
    if (!st || (slot != 0 && slot != 1))
        return tr_fail(err, TR_ERR_INVALID, "stage/cuda: no sample slot %d", slot);
    STAGE_TRY(cudaEventSynchronize(st->copied[slot]), "copy samples in");
    return TR_OK;
}

extern "C" tr_status tr_cuda_stage_outputs(tr_cuda_stage *st, int slot, float **snr,
                                           int32_t **width, tr_error *err)
{
    if (!st || !snr || !width || (slot != 0 && slot != 1))
        return tr_fail(err, TR_ERR_INVALID, "stage/cuda: no output slot %d", slot);
    if (slot == 1 && (!st->snr1 || !st->width1)) {
        STAGE_TRY(cudaSetDevice(st->device), "select device");
        const size_t b = (st->values ? st->values : 1) * 4;
        if (!st->snr1) STAGE_TRY(cudaMalloc((void **)&st->snr1, b), "allocate S/N");
        if (!st->width1)
            STAGE_TRY(cudaMalloc((void **)&st->width1, b), "allocate widths");
    }
    *snr = slot ? st->snr1 : st->snr;
    *width = slot ? st->width1 : st->width;
    return TR_OK;
}

extern "C" float *tr_cuda_stage_x(const tr_cuda_stage *st, int slot)
{
    return st && (slot == 0 || slot == 1) ? st->x[slot] : nullptr;
}
extern "C" float *tr_cuda_stage_snr(const tr_cuda_stage *st)
{
    return st ? st->snr : nullptr;
}
extern "C" int32_t *tr_cuda_stage_width(const tr_cuda_stage *st)
{
    return st ? st->width : nullptr;
}

extern "C" tr_status tr_cuda_stage_reserve(tr_cuda_stage *st, size_t values,
                                           tr_error *err)
{
    if (!st) return tr_fail(err, TR_ERR_INVALID, "stage/cuda: NULL stage");
    if (values <= st->values) return TR_OK;
    STAGE_TRY(cudaSetDevice(st->device), "select device");
    STAGE_TRY(cudaStreamSynchronize(st->stream), "finish the copies in");
    for (int i = 0; i < 2; i++) {
        cudaFree(st->x[i]);
        if (st->px[i]) cudaFreeHost(st->px[i]);
        st->px[i] = nullptr;
    }
    cudaFree(st->snr);
    cudaFree(st->width);
    cudaFree(st->snr1);
    cudaFree(st->width1);
    st->x[0] = st->x[1] = st->snr = st->snr1 = nullptr;
    st->width = st->width1 = nullptr;
    st->values = 0;
    STAGE_TRY(cudaMalloc((void **)&st->snr, values * 4), "allocate S/N");
    STAGE_TRY(cudaMalloc((void **)&st->width, values * 4), "allocate widths");
    st->values = values;
    return TR_OK;
}

extern "C" tr_status tr_cuda_stage_place(tr_cuda_stage *st, tr_boxcar_layout layout,
                                         uint32_t nchan, size_t z0, size_t off, size_t m,
                                         size_t ld, float *d_snr, int32_t *d_width,
                                         tr_error *err)
{
    if (!st || !d_snr || z0 > off || off + m > ld || m * nchan > st->values)
        return tr_fail(err, TR_ERR_INVALID, "stage/cuda: placement out of range");
    STAGE_TRY(cudaSetDevice(st->device), "select device");
    const int cm = layout == TR_BOXCAR_CHANNEL_MAJOR;
    const int64_t nv = (int64_t)(off + m - z0) * nchan;
    if (nv == 0) return TR_OK;
    TR_LAUNCH(place<float>, place_blocks(nv), 256, 0, st->stream, st->snr, cm, nchan,
              (int64_t)z0, (int64_t)off, (int64_t)m, (int64_t)ld, d_snr);
    STAGE_TRY(cudaGetLastError(), "place S/N");
    if (d_width) {
        TR_LAUNCH(place<int32_t>, place_blocks(nv), 256, 0, st->stream, st->width, cm,
                  nchan, (int64_t)z0, (int64_t)off, (int64_t)m, (int64_t)ld, d_width);
        STAGE_TRY(cudaGetLastError(), "place widths");
    }
    STAGE_TRY(cudaStreamSynchronize(st->stream), "place");
    return TR_OK;
}

extern "C" tr_status tr_cuda_stage_download(tr_cuda_stage *st, size_t n, float *snr,
                                            int32_t *width, tr_error *err)
{
    if (!st || (n && !snr) || n > st->values)
        return tr_fail(err, TR_ERR_INVALID, "stage/cuda: download of %zu values", n);
    if (n == 0) return TR_OK;
    STAGE_TRY(cudaSetDevice(st->device), "select device");
    STAGE_TRY(cudaMemcpyAsync(snr, st->snr, n * sizeof(float), cudaMemcpyDeviceToHost,
                              st->stream),
              "copy S/N out");
    if (width)
        STAGE_TRY(cudaMemcpyAsync(width, st->width, n * sizeof(int32_t),
                                  cudaMemcpyDeviceToHost, st->stream),
                  "copy widths out");
    STAGE_TRY(cudaStreamSynchronize(st->stream), "copy out");
    return TR_OK;
}
