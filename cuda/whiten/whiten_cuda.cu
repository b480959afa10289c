/*
 * The CUDA whitening context (cuda/whiten/whiten_cuda.h): overlap-save with
 * cuFFT, one transform per block.
 *
 * Paper: B. Allen et al., "FINDCHIRP", Phys. Rev. D 85, 122006 (2012).
 *
 * A run copies the ntaps - 1 + nb * B input samples up, expands them into nb
 * blocks of M, transforms each, multiplies by the filter spectrum,
 * transforms each back and gathers the last B samples of each block. The
 * plans transform one block: a batched real transform may compute two
 * blocks together, so that a block's bits would depend on its neighbour in
 * the batch and so on how the stream was split into calls. Each block's
 * real samples start at a multiple of 2 nbin floats, the alignment cuFFT
 * asks of a transform's data.
 */
#include "common/cuda_check.h"
#include "common/cuda_raii.cuh"
#include "whiten/whiten_cuda.h"
#include "whiten/whiten_kernels.cuh"

#include <cufft.h>

#include <new>

namespace
{

/* Elementwise kernels: 256 threads x 4 elements per tile. */
constexpr int EW_THREADS = 256, EW_ITEMS = 4;

unsigned grid_for(size_t total)
{
    const size_t tile = (size_t)EW_THREADS * EW_ITEMS;
    return (unsigned)((total + tile - 1) / tile);
}

/* A cuFFT plan, owned. */
struct fft_plan {
    cufftHandle h = 0;
    bool made = false;
    fft_plan() = default;
    fft_plan(const fft_plan &) = delete;
    fft_plan &operator=(const fft_plan &) = delete;
    ~fft_plan()
    {
        if (made) (void)cufftDestroy(h);
    }
};

tr_status cufft_check(cufftResult r, tr_error *err, const char *what)
{
    if (r == CUFFT_SUCCESS) return TR_OK;
    return tr_fail(err, r == CUFFT_ALLOC_FAILED ? TR_ERR_NOMEM : TR_ERR_CUDA,
                   "whiten: %s failed (cufftResult %d)", what, (int)r);
}

} // namespace

struct tr_cuda_whiten {
    int device = 0;
    size_t ntaps = 0, M = 0, B = 0, nbin = 0, batch = 0;
    tr_device_buffer<cufftComplex> spec; /* nbin */
    tr_device_buffer<float> in;          /* ntaps - 1 + batch * B */
    tr_device_buffer<float> time;        /* batch * 2 nbin (M used of each) */
    tr_device_buffer<cufftComplex> freq; /* batch * nbin */
    tr_device_buffer<float> out;         /* batch * B */
    tr_cuda_stream stream;
    fft_plan fwd, inv;
};

static tr_status make_plan(tr_cuda_whiten *c, fft_plan *p, cufftType type, tr_error *err)
{
    tr_status s = cufft_check(cufftPlan1d(&p->h, (int)c->M, type, 1), err, "cufftPlan1d");
    if (s != TR_OK) return s;
    p->made = true;
    return cufft_check(cufftSetStream(p->h, c->stream), err, "cufftSetStream");
}

extern "C" tr_status tr_cuda_whiten_create(int device, const float *spec, size_t ntaps,
                                           size_t M, size_t batch, tr_cuda_whiten **out,
                                           tr_error *err)
{
    *out = nullptr;
    if (batch > ((size_t)1 << 31) / M)
        return tr_fail(err, TR_ERR_INVALID, "whiten: CUDA batch %zu x %zu too large",
                       batch, M);
    tr_cuda_whiten *c = new (std::nothrow) tr_cuda_whiten;
    if (!c) return tr_fail(err, TR_ERR_NOMEM, "whiten: cannot allocate the CUDA context");
    *out = c;
    c->device = device;
    c->ntaps = ntaps;
    c->M = M;
    c->B = M - ntaps + 1;
    c->nbin = M / 2 + 1;
    c->batch = batch;
    TR_CUDA_CHECK(cudaSetDevice(device), err, "whiten: cudaSetDevice");
    TR_CUDA_CHECK(c->stream.create(cudaStreamNonBlocking), err,
                  "whiten: cudaStreamCreate");
    TR_CUDA_CHECK(c->spec.alloc(c->nbin), err, "whiten: cudaMalloc (spectrum)");
    TR_CUDA_CHECK(c->in.alloc(ntaps - 1 + batch * c->B), err,
                  "whiten: cudaMalloc (input)");
    TR_CUDA_CHECK(c->time.alloc(batch * 2 * c->nbin), err, "whiten: cudaMalloc (blocks)");
    TR_CUDA_CHECK(c->freq.alloc(batch * c->nbin), err, "whiten: cudaMalloc (spectra)");
    TR_CUDA_CHECK(c->out.alloc(batch * c->B), err, "whiten: cudaMalloc (output)");
    TR_CUDA_CHECK(
        cudaMemcpy(c->spec, spec, c->nbin * sizeof(cufftComplex), cudaMemcpyHostToDevice),
        err, "whiten: cudaMemcpy (spectrum)");
    tr_status s = make_plan(c, &c->fwd, CUFFT_R2C, err);
    if (s == TR_OK) s = make_plan(c, &c->inv, CUFFT_C2R, err);
    return s;
}

extern "C" void tr_cuda_whiten_destroy(tr_cuda_whiten *c)
{
    if (!c) return;
    (void)cudaSetDevice(c->device);
    delete c;
}

extern "C" tr_status tr_cuda_whiten_run(tr_cuda_whiten *c, const float *in, size_t nb,
                                        float *out, tr_error *err)
{
    if (nb == 0) return TR_OK;
    if (nb > c->batch)
        return tr_fail(err, TR_ERR_INVALID, "whiten: %zu blocks exceed the batch of %zu",
                       nb, c->batch);
    TR_CUDA_CHECK(cudaSetDevice(c->device), err, "whiten: cudaSetDevice");
    const size_t nin = c->ntaps - 1 + nb * c->B, nout = nb * c->B;
    TR_CUDA_CHECK(cudaMemcpyAsync(c->in, in, nin * sizeof(float), cudaMemcpyHostToDevice,
                                  c->stream),
                  err, "whiten: cudaMemcpyAsync (input)");
    const size_t ntime = nb * c->M, nfreq = nb * c->nbin, stride = 2 * c->nbin;
    tr_whiten_expand<EW_THREADS, EW_ITEMS><<<grid_for(ntime), EW_THREADS, 0, c->stream>>>(
        c->in, c->B, c->M, stride, ntime, c->time);
    TR_CUDA_CHECK(cudaGetLastError(), err, "whiten: tr_whiten_expand launch");
    tr_status s = TR_OK;
    for (size_t b = 0; b < nb && s == TR_OK; ++b)
        s = cufft_check(
            cufftExecR2C(c->fwd.h, c->time + b * stride, c->freq + b * c->nbin), err,
            "cufftExecR2C");
    if (s != TR_OK) return s;
    tr_whiten_multiply<EW_THREADS, EW_ITEMS>
        <<<grid_for(nfreq), EW_THREADS, 0, c->stream>>>(c->freq, c->spec, c->nbin, nfreq);
    TR_CUDA_CHECK(cudaGetLastError(), err, "whiten: tr_whiten_multiply launch");
    for (size_t b = 0; b < nb && s == TR_OK; ++b)
        s = cufft_check(
            cufftExecC2R(c->inv.h, c->freq + b * c->nbin, c->time + b * stride), err,
            "cufftExecC2R");
    if (s != TR_OK) return s;
    tr_whiten_gather<EW_THREADS, EW_ITEMS><<<grid_for(nout), EW_THREADS, 0, c->stream>>>(
        c->time, c->B, stride, c->ntaps - 1, nout, c->out);
    TR_CUDA_CHECK(cudaGetLastError(), err, "whiten: tr_whiten_gather launch");
    TR_CUDA_CHECK(cudaMemcpyAsync(out, c->out, nout * sizeof(float),
                                  cudaMemcpyDeviceToHost, c->stream),
                  err, "whiten: cudaMemcpyAsync (output)");
    TR_CUDA_CHECK(cudaStreamSynchronize(c->stream), err, "whiten: cudaStreamSynchronize");
    return TR_OK;
}
