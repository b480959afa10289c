/*
 * Device buffers for host samples that are searched and clustered on the
 * device (tr_boxcar_search_candidates): the samples of a call copied in, and
 * the S/N and widths that stay on the device. Plain C interface for
 * lib/core/boxcar/boxcar.c.
 */
#ifndef TRANSIENT_CUDA_STAGE_CUDA_H
#define TRANSIENT_CUDA_STAGE_CUDA_H

#include <transient/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tr_cuda_stage tr_cuda_stage;

/* Buffers of `values` floats (x, S/N) and int32 (widths) on `device`. */
tr_status tr_cuda_stage_create(int device, size_t values, tr_cuda_stage **st,
                               tr_error *err);
void tr_cuda_stage_destroy(tr_cuda_stage *st);

/* Copy n <= values host floats into the device x buffer; returns when done. */
tr_status tr_cuda_stage_upload(tr_cuda_stage *st, const float *x, size_t n,
                               tr_error *err);

float *tr_cuda_stage_x(const tr_cuda_stage *st);
float *tr_cuda_stage_snr(const tr_cuda_stage *st);
int32_t *tr_cuda_stage_width(const tr_cuda_stage *st);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_STAGE_CUDA_H */
