/*
 * Device buffers for host samples that are searched and clustered on the
 * device (tr_boxcar_search_candidates): the samples of a call copied in (two
 * slots, so that the next piece is copied while this one is searched), and
 * the S/N and widths that stay on the device (two slots, so that one piece is
 * searched while the one before is clustered). Also the scratch of a held
 * device stream (measured statistics with first_own): the search's outputs
 * placed into the caller's buffers behind the positions held or flushed
 * before them. Plain C interface for lib/core/boxcar/boxcar.c.
 */
#ifndef TRANSIENT_CUDA_STAGE_CUDA_H
#define TRANSIENT_CUDA_STAGE_CUDA_H

#include <transient/boxcar.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tr_cuda_stage tr_cuda_stage;

/* Buffers of `values` floats (x, S/N) and int32 (widths) on `device`. */
tr_status tr_cuda_stage_create(int device, size_t values, tr_cuda_stage **st,
                               tr_error *err);
void tr_cuda_stage_destroy(tr_cuda_stage *st);

/* Start copying n <= values host floats into sample slot `slot` (0 or 1,
 * allocated at its first copy) on the stage's own stream: page-locked memory
 * is copied by the GPU while the caller goes on; other memory is first copied
 * by host threads into page-locked staging of the slot, before this returns.
 * The caller must not refill a slot that a search still reads. */
tr_status tr_cuda_stage_upload(tr_cuda_stage *st, int slot, const float *x, size_t n,
                               tr_error *err);

/* Whether host memory at p is page-locked (its copy does not keep the host
 * busy). */
int tr_cuda_stage_pinned(const void *p);

/* Wait until the last copy into `slot` is complete. */
tr_status tr_cuda_stage_wait(tr_cuda_stage *st, int slot, tr_error *err);

/* Buffers of at least `values` each (grown, contents dropped; the sample
 * slots are allocated again at their next copy). */
tr_status tr_cuda_stage_reserve(tr_cuda_stage *st, size_t values, tr_error *err);

/*
 * Device outputs of ld positions per channel (layout, nchan channels):
 * positions z0 .. off - 1 set to 0, positions off .. off + m - 1 from the
 * stage's S/N and widths (m positions per channel in the same layout).
 * d_width may be NULL. Returns when done.
 */
tr_status tr_cuda_stage_place(tr_cuda_stage *st, tr_boxcar_layout layout, uint32_t nchan,
                              size_t z0, size_t off, size_t m, size_t ld, float *d_snr,
                              int32_t *d_width, tr_error *err);

/* The stage's first n S/N values and widths into host buffers (width may be
 * NULL); returns when done. */
tr_status tr_cuda_stage_download(tr_cuda_stage *st, size_t n, float *snr, int32_t *width,
                                 tr_error *err);

/* The S/N and width buffers of output slot `slot` (0: those of
 * tr_cuda_stage_snr and tr_cuda_stage_width; 1: a second pair, allocated at
 * its first use), so that one piece is searched while the last is clustered. */
tr_status tr_cuda_stage_outputs(tr_cuda_stage *st, int slot, float **snr, int32_t **width,
                                tr_error *err);

float *tr_cuda_stage_x(const tr_cuda_stage *st, int slot);
float *tr_cuda_stage_snr(const tr_cuda_stage *st);
int32_t *tr_cuda_stage_width(const tr_cuda_stage *st);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_STAGE_CUDA_H */
