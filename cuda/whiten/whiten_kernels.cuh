/*
 * Kernels of the overlap-save whitening (cuda/whiten/whiten_cuda.h): block
 * expansion, the product with the filter spectrum, and the gather of the
 * valid outputs. A tile of THREADS x ITEMS elements per thread block, striped
 * so that a warp touches consecutive elements; the grid covers the array.
 */
#ifndef TRANSIENT_CUDA_WHITEN_KERNELS_CUH
#define TRANSIENT_CUDA_WHITEN_KERNELS_CUH

#include <cufft.h>

#include <cstddef>

/* f(idx) for this thread's elements idx < total of the tile. */
template <int THREADS, int ITEMS, typename F>
__device__ __forceinline__ void tr_whiten_tile(size_t total, F f)
{
    const size_t base = (size_t)blockIdx.x * THREADS * ITEMS + threadIdx.x;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const size_t idx = base + (size_t)i * THREADS;
        if (idx < total) f(idx);
    }
}

/* blocks[b * stride + j] = in[b * B + j], j < M (total = nb * M). */
template <int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS)
    tr_whiten_expand(const float *__restrict__ in, size_t B, size_t M, size_t stride,
                     size_t total, float *__restrict__ blocks)
{
    tr_whiten_tile<THREADS, ITEMS>(total, [&](size_t idx) {
        const size_t b = idx / M, j = idx - b * M;
        blocks[b * stride + j] = in[b * B + j];
    });
}

/* X[i] *= H[i mod nbin] for every bin of every block (total = nb * nbin);
 * the same float operations as the CPU variant's product. */
template <int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS)
    tr_whiten_multiply(cufftComplex *__restrict__ X, const cufftComplex *__restrict__ H,
                       size_t nbin, size_t total)
{
    tr_whiten_tile<THREADS, ITEMS>(total, [&](size_t idx) {
        const cufftComplex x = X[idx], h = H[idx % nbin];
        X[idx] = make_cuFloatComplex(x.x * h.x - x.y * h.y, x.x * h.y + x.y * h.x);
    });
}

/* out[b * B + i] = blocks[b * stride + skip + i]: the B outputs of each
 * block where the circular convolution is the linear one (skip = ntaps - 1;
 * total = nb * B). */
template <int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS)
    tr_whiten_gather(const float *__restrict__ blocks, size_t B, size_t stride,
                     size_t skip, size_t total, float *__restrict__ out)
{
    tr_whiten_tile<THREADS, ITEMS>(total, [&](size_t idx) {
        const size_t b = idx / B, j = idx - b * B;
        out[idx] = blocks[b * stride + skip + j];
    });
}

#endif /* TRANSIENT_CUDA_WHITEN_KERNELS_CUH */
