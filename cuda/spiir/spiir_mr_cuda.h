/*
 * CUDA backend of the multirate SPIIR filter bank (section 2.2 of Guo et al.):
 * C interface between lib/core and cuda/spiir/spiir_mr_cuda.cu. The context
 * owns one single-rate context per level (cuda/spiir/spiir_cuda.h) running the
 * level's rescaled filters, the decimation and interpolation kernels and the
 * histories they carry between batches; every CUDA call is checked.
 *
 * The resamplers' geometry below is shared with the CPU variants
 * (lib/core/spiir/spiir_mr.h includes this header).
 */
#ifndef TRANSIENT_CUDA_SPIIR_MR_CUDA_H
#define TRANSIENT_CUDA_SPIIR_MR_CUDA_H

#include "spiir/spiir_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TR_SPIIR_MR_DEC_TAPS  67 /* decimator: 100 dB stopband, Kaiser beta 10.061 */
#define TR_SPIIR_MR_DEC_DELAY 33 /* its group delay, in the higher rate's samples */
#define TR_SPIIR_MR_INT_TAPS  47 /* interpolator: 60 dB design, Kaiser beta 5.653 */
#define TR_SPIIR_MR_INT_DELAY 23 /* its group delay, in the higher rate's samples */
/* Samples of x_L kept before a block for the decimator, and of S_{L+1} kept
 * before a block for the interpolator (see lib/core/spiir/spiir_mr.c). */
#define TR_SPIIR_MR_XHIST (TR_SPIIR_MR_DEC_TAPS - 1)
#define TR_SPIIR_MR_SHIST ((TR_SPIIR_MR_INT_TAPS + 1) / 2)

/* Number of level-L samples among full-rate samples [0, pos): ceil(pos / 2^L). */
static inline uint64_t tr_spiir_mr_count(uint64_t pos, int level)
{
    return (pos + ((uint64_t)1 << level) - 1) >> level;
}

/* A multirate plan as the backend reads it (read at creation only). */
typedef struct {
    int nlev;            /* levels 0 .. nlev - 1 */
    uint32_t ntemplates; /* templates of every level */
    const double *dec;   /* TR_SPIIR_MR_DEC_TAPS decimator taps */
    const double *itp;   /* TR_SPIIR_MR_INT_TAPS interpolator taps (used as 2 p) */
    /* Level L's filters at its rate; ntemplates 0: no filters at that level. */
    tr_cuda_spiir_bank level[TR_SPIIR_MAX_LEVEL + 1];
} tr_cuda_spiir_mr_plan;

typedef struct tr_cuda_spiir_mr tr_cuda_spiir_mr;

/* variant: FAST or PAPER (the levels' filter kernels; the resamplers are the
 * same). batch: full-rate samples per step. */
tr_status tr_cuda_spiir_mr_create(int device, const tr_cuda_spiir_mr_plan *plan,
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
