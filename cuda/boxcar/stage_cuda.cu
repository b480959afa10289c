/*
 * Device buffers of stage_cuda.h: one allocation per buffer, a stream for
 * the copy in (page-locked host memory is copied by the GPU directly, other
 * memory through the driver's staging).
 */
#include "boxcar/stage_cuda.h"

#include "common/cuda_check.h"

#include <cstdlib>
#include <new>

struct tr_cuda_stage {
    int device = -1;
    size_t values = 0;
    cudaStream_t stream = nullptr;
    float *x = nullptr, *snr = nullptr;
    int32_t *width = nullptr;
};

extern "C" void tr_cuda_stage_destroy(tr_cuda_stage *st)
{
    if (!st) return;
    if (st->device >= 0) cudaSetDevice(st->device);
    cudaFree(st->x);
    cudaFree(st->snr);
    cudaFree(st->width);
    if (st->stream) cudaStreamDestroy(st->stream);
    st->~tr_cuda_stage();
    free(st);
}

static tr_status stage_setup(tr_cuda_stage *st, int device, size_t values, tr_error *err)
{
    TR_CUDA_CHECK(cudaSetDevice(device), err, "stage/cuda: select device");
    st->device = device;
    st->values = values;
    TR_CUDA_CHECK(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking), err,
                  "stage/cuda: create stream");
    const size_t b = (values ? values : 1) * 4;
    TR_CUDA_CHECK(cudaMalloc((void **)&st->x, b), err, "stage/cuda: allocate samples");
    TR_CUDA_CHECK(cudaMalloc((void **)&st->snr, b), err, "stage/cuda: allocate S/N");
    TR_CUDA_CHECK(cudaMalloc((void **)&st->width, b), err, "stage/cuda: allocate widths");
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

extern "C" tr_status tr_cuda_stage_upload(tr_cuda_stage *st, const float *x, size_t n,
                                          tr_error *err)
{
    if (!st || (n && !x) || n > st->values)
        return tr_fail(err, TR_ERR_INVALID, "stage/cuda: upload of %zu values", n);
    TR_CUDA_CHECK(cudaSetDevice(st->device), err, "stage/cuda: select device");
    TR_CUDA_CHECK(
        cudaMemcpyAsync(st->x, x, n * sizeof(float), cudaMemcpyHostToDevice, st->stream),
        err, "stage/cuda: copy samples in");
    TR_CUDA_CHECK(cudaStreamSynchronize(st->stream), err, "stage/cuda: copy samples in");
    return TR_OK;
}

extern "C" float *tr_cuda_stage_x(const tr_cuda_stage *st)
{
    return st ? st->x : nullptr;
}
extern "C" float *tr_cuda_stage_snr(const tr_cuda_stage *st)
{
    return st ? st->snr : nullptr;
}
extern "C" int32_t *tr_cuda_stage_width(const tr_cuda_stage *st)
{
    return st ? st->width : nullptr;
}
