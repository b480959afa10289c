/*
 * CUDA backend of dedispersion: the C interface between
 * lib/core/dedisp/dedisp.c and cuda/dedisp/ (the streaming context
 * dedisp_context.cu, the kernels dedisp_kernels.cuh).
 *
 * Paper: B. R. Barsdell et al., "Accelerating incoherent dedispersion"
 * (MNRAS 422, 379, 2012): the direct algorithm, one thread per (trial,
 * sample) summing the delayed channels, input tiles staged in shared memory.
 *
 * What the caller provides and can rely on
 *   - The plan as plain arrays: the used channels (increasing) and the delay
 *     table delays[d * nused + j] in samples, the latency L (largest delay).
 *     The context copies what it needs.
 *   - Time scrunching: factors[d] (non-decreasing powers of two, or NULL: all
 *     1) with the delays of a scrunched trial in its coarse samples and L the
 *     plan's latency (<transient/dedisp.h>); the context computes each
 *     factor's block means once per batch (a level from the previous one),
 *     sums every group of one factor over them and copies each coarse output
 *     to the full-rate positions of its block.
 *   - The context is a complete streaming object: it keeps the last
 *     L + smax - 1 spectra (after zero-DM subtraction, used channels only;
 *     smax the largest factor) on the device
 *     and its position; output k of a run is position position_in - L + k,
 *     positions < 0 are 0, exactly as tr_dedisp_process. Runs longer than
 *     `batch` spectra are split internally; the result does not depend on it.
 *   - Inputs: host float32 spectra, host packed spectra (raw_nbits, unpacked
 *     on the device after a copy of the packed bytes), device float32
 *     spectra, or zeros (flush). Outputs to host (sample-major) or device
 *     (either layout).
 *   - Arithmetic: the zero-DM mean is summed in channel order in float32 and
 *     divided by nused; each output sums its channels in increasing order in
 *     float32 (no FMA: plain additions), then divides by nused for MEAN. The
 *     bits equal the CPU variants'.
 *   - Every CUDA call is checked; failures return TR_ERR_CUDA (TR_ERR_NOMEM
 *     for allocations) with the failing call in err->message.
 */
#ifndef TRANSIENT_CUDA_DEDISP_CUDA_H
#define TRANSIENT_CUDA_DEDISP_CUDA_H

#include <transient/dedisp.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the context reads of the plan. */
typedef struct {
    uint32_t nchan;          /* channels per input spectrum */
    uint32_t nused;          /* channels summed */
    uint32_t ndm;            /* trials */
    uint32_t latency;        /* L: largest delay */
    const uint32_t *chans;   /* nused channel indices, increasing */
    const uint32_t *delays;  /* ndm x nused delays in samples of the trial's factor */
    const uint32_t *factors; /* ndm scrunch factors, non-decreasing; NULL = all 1 */
    int zero_dm;             /* subtract each spectrum's mean over the used channels */
    int mean;                /* divide the sums by nused */
    uint32_t raw_nbits;      /* bits per packed sample: 1, 2, 4, 8, 16, 32 */
    size_t batch;            /* spectra per internal run */
} tr_cuda_dedisp_plan;

/* Where a run's input comes from. */
typedef enum {
    TR_CUDA_DEDISP_HOST_FLOAT = 0,   /* host float32 x[k * nchan + c] */
    TR_CUDA_DEDISP_HOST_RAW = 1,     /* host packed spectra of raw_nbits */
    TR_CUDA_DEDISP_DEVICE_FLOAT = 2, /* device float32 x[k * nchan + c] */
    TR_CUDA_DEDISP_ZEROS = 3         /* n spectra of zeros (flush) */
} tr_cuda_dedisp_input;

typedef struct tr_cuda_dedisp tr_cuda_dedisp;

tr_status tr_cuda_dedisp_create(int device, const tr_cuda_dedisp_plan *p,
                                tr_cuda_dedisp **out, tr_error *err);
void tr_cuda_dedisp_destroy(tr_cuda_dedisp *ctx);

/* Empty history, position 0. */
tr_status tr_cuda_dedisp_reset(tr_cuda_dedisp *ctx, tr_error *err);

/*
 * n spectra in (kind), n outputs to y: host memory sample-major
 * (on_device = 0) or device memory in `layout` (on_device = 1). Returns when
 * y holds them.
 */
tr_status tr_cuda_dedisp_run(tr_cuda_dedisp *ctx, tr_cuda_dedisp_input kind,
                             const void *in, size_t n, float *y, int on_device,
                             tr_dedisp_layout layout, tr_error *err);

/* Page-locked host memory (NULL when it cannot be had). */
void *tr_cuda_dedisp_host_alloc(size_t bytes);
void tr_cuda_dedisp_host_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_DEDISP_CUDA_H */
