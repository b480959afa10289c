/*
 * CUDA backend of whitening: the C interface between lib/core/whiten/whiten.c
 * and cuda/whiten/whiten_cuda.cu.
 *
 * Paper: B. Allen et al., "FINDCHIRP", Phys. Rev. D 85, 122006 (2012): the
 * truncated inverse-ASD filter applied by FFT (overlap-save).
 *
 * What the caller provides and can rely on
 *   - The filter as its spectrum for FFTs of M points (M / 2 + 1
 *     interleaved float pairs, already divided by M) and its tap count.
 *   - The context is stateless between runs: the core keeps the stream's
 *     history and hands each run the ntaps - 1 samples before the first
 *     output and the new samples, contiguous in host memory.
 *   - A run computes nb <= batch blocks of B = M - ntaps + 1 outputs with one
 *     cuFFT plan made for `batch` blocks at create (unused blocks are zeros),
 *     so a block's bits do not depend on how many blocks a run holds: the
 *     output is identical for any chunking of the stream.
 *   - Every CUDA and cuFFT call is checked; failures return TR_ERR_CUDA
 *     (TR_ERR_NOMEM for allocations) with the failing call in err->message.
 */
#ifndef TRANSIENT_CUDA_WHITEN_CUDA_H
#define TRANSIENT_CUDA_WHITEN_CUDA_H

#include <transient/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tr_cuda_whiten tr_cuda_whiten;

tr_status tr_cuda_whiten_create(int device, const float *spec, size_t ntaps, size_t M,
                                size_t batch, tr_cuda_whiten **out, tr_error *err);
void tr_cuda_whiten_destroy(tr_cuda_whiten *ctx);

/* in: ntaps - 1 + nb * B host samples; out: nb * B host outputs,
 * out[i] = sum_m taps[m] in[ntaps - 1 + i - m]. Returns when out holds them. */
tr_status tr_cuda_whiten_run(tr_cuda_whiten *ctx, const float *in, size_t nb, float *out,
                             tr_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_WHITEN_CUDA_H */
