/*
 * CUDA backend of the multirate SPIIR filter bank (section 2.2 of Guo et al.):
 * C interface between lib/core and cuda/spiir/spiir_mr_cuda.cu. The context owns one
 * single-rate context per level (cuda/spiir/spiir_cuda.h) running the level's
 * rescaled filters, the decimation and interpolation kernels and the
 * histories they carry between batches; every CUDA call is checked.
 */
#ifndef TRANSIENT_CUDA_SPIIR_MR_CUDA_H
#define TRANSIENT_CUDA_SPIIR_MR_CUDA_H

#include "spiir/spiir_mr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tr_cuda_spiir_mr tr_cuda_spiir_mr;

/* variant: FAST or PAPER (the levels' filter kernels; the resamplers are the
 * same). batch: full-rate samples per step. The plan must outlive the context. */
tr_status tr_cuda_spiir_mr_create(int device, const tr_spiir_mr_plan *plan,
                                  int complex_input, tr_variant variant, size_t batch,
                                  tr_cuda_spiir_mr **ctx, tr_error *err);
void tr_cuda_spiir_mr_destroy(tr_cuda_spiir_mr *ctx);
tr_status tr_cuda_spiir_mr_reset(tr_cuda_spiir_mr *ctx, tr_error *err);
tr_status tr_cuda_spiir_mr_run_host(tr_cuda_spiir_mr *ctx, const float *x, size_t n,
                                    float *snr, uint64_t *nonfinite, tr_error *err);
tr_status tr_cuda_spiir_mr_run_device(tr_cuda_spiir_mr *ctx, const float *d_x, size_t n,
                                      float *d_snr, uint64_t *nonfinite, tr_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_SPIIR_MR_CUDA_H */
