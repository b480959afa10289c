/*
 * Layout kernels of the boxcar context: transposes between the caller's
 * time-major buffers and the channel-major rows the search works on, and the
 * stream's device history after a call.
 */
#ifndef TRANSIENT_CUDA_BOXCAR_LAYOUT_CUH
#define TRANSIENT_CUDA_BOXCAR_LAYOUT_CUH

#include "boxcar/boxcar_source.cuh"

namespace boxcar_cuda
{

/* out[c * ldo + k] = in[k * nchan + c] (time-major to channel-major), k < n. */
template <typename T>
__global__ void to_channel_major(const T *__restrict__ in, T *__restrict__ out, int nchan,
                                 int64_t n, int64_t ldo)
{
    __shared__ T tile[32][33];
    const int64_t k0 = (int64_t)blockIdx.x * 32;
    const int c0 = blockIdx.y * 32;
    for (int r = threadIdx.y; r < 32; r += blockDim.y) {
        const int64_t k = k0 + r;
        const int c = c0 + threadIdx.x;
        if (k < n && c < nchan) tile[r][threadIdx.x] = in[k * nchan + c];
    }
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += blockDim.y) {
        const int c = c0 + r;
        const int64_t k = k0 + threadIdx.x;
        if (k < n && c < nchan) out[(int64_t)c * ldo + k] = tile[threadIdx.x][r];
    }
}

/* out[k * nchan + c] = in[c * ldi + k] (channel-major to time-major). */
template <typename T>
__global__ void to_time_major(const T *__restrict__ in, T *__restrict__ out, int nchan,
                              int64_t n, int64_t ldi)
{
    __shared__ T tile[32][33];
    const int64_t k0 = (int64_t)blockIdx.x * 32;
    const int c0 = blockIdx.y * 32;
    for (int r = threadIdx.y; r < 32; r += blockDim.y) {
        const int c = c0 + r;
        const int64_t k = k0 + threadIdx.x;
        if (k < n && c < nchan) tile[r][threadIdx.x] = in[(int64_t)c * ldi + k];
    }
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += blockDim.y) {
        const int64_t k = k0 + r;
        const int c = c0 + threadIdx.x;
        if (k < n && c < nchan) out[k * nchan + c] = tile[threadIdx.x][r];
    }
}

/* New history: positions [pos + n - H, pos + n) from the old history and the
 * new block (cleaned like the kernels see them). */
__global__ void history_kernel(source s, float *__restrict__ dst, int64_t new_start)
{
    const int c = blockIdx.y;
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < s.H;
         j += (int64_t)gridDim.x * blockDim.x) {
        bool bad;
        dst[(int64_t)c * s.H + j] = load_sample(s, c, new_start + j, bad);
    }
}

} // namespace boxcar_cuda

#endif /* TRANSIENT_CUDA_BOXCAR_LAYOUT_CUH */
