/*
 * Device side of the FRB search object (lib/core/frb/frb.c) on the CUDA
 * backend: the buffers of its device-resident chain (spectra in, the DM-time
 * plane, the search's S/N and widths) and the per-trial largest delays, the
 * end-of-data marking of the plane and of the search outputs, and the copies
 * in and out. Plain C interface.
 */
#ifndef TRANSIENT_CUDA_FRB_CUDA_H
#define TRANSIENT_CUDA_FRB_CUDA_H

#include <transient/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tr_cuda_frb tr_cuda_frb;

/* Buffers for `step` positions (spectra of nchan, planes and outputs of ndm
 * >= 1 trials whose largest delays are lat[0 .. ndm - 1]) on `device`. */
tr_status tr_cuda_frb_create(int device, size_t step, uint32_t nchan, uint32_t ndm,
                             const uint32_t *lat, tr_cuda_frb **out, tr_error *err);
void tr_cuda_frb_destroy(tr_cuda_frb *ctx);

float *tr_cuda_frb_spectra(const tr_cuda_frb *ctx); /* step * nchan floats */
float *tr_cuda_frb_plane(const tr_cuda_frb *ctx);   /* step * ndm floats */
float *tr_cuda_frb_snr(const tr_cuda_frb *ctx);     /* step * ndm floats */
int32_t *tr_cuda_frb_width(const tr_cuda_frb *ctx); /* step * ndm int32 */

/* Copy n <= step host spectra into the spectra buffer; returns when done. */
tr_status tr_cuda_frb_upload(tr_cuda_frb *ctx, const float *x, size_t n, tr_error *err);

/*
 * Sample-major device values v[k * ndm + d], k < n, of positions first + k:
 * v = value where first + k + (w - 1) + lat[d] >= total, w the width
 * d_width[k * ndm + d] (1 when d_width is NULL or the width is below 1),
 * i.e. where the value reaches a position past the last complete one of its
 * trial. Returns when done.
 */
tr_status tr_cuda_frb_mark_tail(tr_cuda_frb *ctx, float *d_v, const int32_t *d_width,
                                size_t n, uint64_t first, uint64_t total, float value,
                                tr_error *err);

/* Copy n device floats to host memory; returns when done. */
tr_status tr_cuda_frb_download(tr_cuda_frb *ctx, float *dst, const float *d_src, size_t n,
                               tr_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_FRB_CUDA_H */
