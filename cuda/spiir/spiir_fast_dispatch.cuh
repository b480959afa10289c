/*
 * SPIIR filter bank on CUDA: the FAST dispatch, from the shape chosen at run
 * time (F filters per thread, P threads per template, real or complex
 * samples, split poles, segmented time) to the compiled kernel instance.
 */
#ifndef TRANSIENT_CUDA_SPIIR_FAST_DISPATCH_CUH
#define TRANSIENT_CUDA_SPIIR_FAST_DISPATCH_CUH

#include "spiir/spiir_kernels.cuh"

namespace
{

template <int F, int P, int C>
cudaError_t launch_fast_fpc(const fast_args &a, cudaStream_t s)
{
    constexpr int kBlock = P > 32 ? P : kSmallBlock;
    constexpr int kTB = kBlock / P;
    const int rows = a.seg > 0 ? (a.n - a.kbeg0 + a.seg - 1) / a.seg : 1;
    const dim3 grid((unsigned)((a.nt + kTB - 1) / kTB), (unsigned)rows);
    if (a.seg > 0) {
        /* Segmented kernels: P <= 8 and F <= 8 (tr_cuda_spiir_create). */
        if constexpr (P <= 8 && F <= 8) {
            if (a.lo)
                spiir_fast_kernel<F, P, C, true, true><<<grid, kBlock, 0, s>>>(a);
            else
                spiir_fast_kernel<F, P, C, false, true><<<grid, kBlock, 0, s>>>(a);
        } else {
            return cudaErrorInvalidValue;
        }
    } else if (a.lo) {
        spiir_fast_kernel<F, P, C, true, false><<<grid, kBlock, 0, s>>>(a);
    } else {
        spiir_fast_kernel<F, P, C, false, false><<<grid, kBlock, 0, s>>>(a);
    }
    return cudaGetLastError();
}

template <int F, int C>
cudaError_t launch_fast_fc(int p, const fast_args &a, cudaStream_t s)
{
    switch (p) {
    case 1:
        return launch_fast_fpc<F, 1, C>(a, s);
    case 2:
        return launch_fast_fpc<F, 2, C>(a, s);
    case 4:
        return launch_fast_fpc<F, 4, C>(a, s);
    case 8:
        return launch_fast_fpc<F, 8, C>(a, s);
    case 16:
        return launch_fast_fpc<F, 16, C>(a, s);
    case 32:
        return launch_fast_fpc<F, 32, C>(a, s);
    case 64:
        return launch_fast_fpc<F, 64, C>(a, s);
    case 128:
        return launch_fast_fpc<F, 128, C>(a, s);
    case 256:
        return launch_fast_fpc<F, 256, C>(a, s);
    default:
        return cudaErrorInvalidValue;
    }
}

/* 16 filters per thread (real input, large templates): P >= 16. */
template <int F, int C>
cudaError_t launch_fast_fc_wide(int p, const fast_args &a, cudaStream_t s)
{
    switch (p) {
    case 16:
        return launch_fast_fpc<F, 16, C>(a, s);
    case 32:
        return launch_fast_fpc<F, 32, C>(a, s);
    case 64:
        return launch_fast_fpc<F, 64, C>(a, s);
    default:
        return cudaErrorInvalidValue;
    }
}

template <int C>
cudaError_t launch_fast_c(int f, int p, const fast_args &a, cudaStream_t s)
{
    /* Complex input runs at most 4 filters per thread (fast_shape). */
    if constexpr (C == 2) {
        if (f > 4) return cudaErrorInvalidValue;
    }
    switch (f) {
    case 1:
        return launch_fast_fc<1, C>(p, a, s);
    case 2:
        return launch_fast_fc<2, C>(p, a, s);
    case 3:
        return launch_fast_fc<3, C>(p, a, s);
    case 4:
        return launch_fast_fc<4, C>(p, a, s);
    default:
        if constexpr (C == 1) {
            switch (f) {
            case 5:
                return launch_fast_fc<5, C>(p, a, s);
            case 6:
                return launch_fast_fc<6, C>(p, a, s);
            case 7:
                return launch_fast_fc<7, C>(p, a, s);
            case 8:
                return launch_fast_fc<8, C>(p, a, s);
            case 16:
                return launch_fast_fc_wide<16, C>(p, a, s);
            }
        }
        return cudaErrorInvalidValue;
    }
}

} // namespace

#endif /* TRANSIENT_CUDA_SPIIR_FAST_DISPATCH_CUH */
