/*
 * Boxcar normalisation on the device: the C interface between
 * lib/core/boxcar/boxcar.c (tr_boxcar_process_device with WHITE or LEVELS)
 * and norm_cuda.cu (kernels in norm_kernels.cuh). The samples that are
 * already on the device are measured there: per statistics window and
 * channel the robust summaries per level, the values in effect merged over
 * the last H windows, the per-width tables of the search and the cleaned
 * samples (non-finite replaced by the input mean in effect), with the
 * definitions of <transient/boxcar_norm.h> (WHITE and LEVELS without
 * baseline removal). Only the ready flags (one byte per channel and window,
 * for the warm-up masking of the candidates) come back to the host.
 * With first_own (window 0 normalised by its own values) the cleaned samples
 * go through a delay line of W positions on the device, as
 * lib/core/boxcar/boxcar.c holds window 0 on the host: a call gives the
 * samples W positions behind its own, window 0's non-finite ones replaced by
 * window 0's own mean; tr_cuda_norm_finish gives the held rest at the end.
 * The work is queued on one stream (the search's when given, so that the
 * search follows it without waiting on the host); process and tables return
 * without waiting for it, tr_cuda_norm_settle waits.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * eqs. 3-5 and section 4.6.2.
 */
#ifndef TRANSIENT_CUDA_NORM_CUDA_H
#define TRANSIENT_CUDA_NORM_CUDA_H

#include <transient/boxcar.h>

#include "common/device_src.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tr_cuda_norm tr_cuda_norm;

/* What the device normalisation measures (the host resolves the config). */
typedef struct {
    uint32_t nchan, window, history;
    uint32_t nlev;       /* levels measured: 1 for WHITE, K + 1 for LEVELS */
    double reject_sigma; /* 0: no rejection */
    uint32_t reject_max_iter;
    double clip_factor; /* tr_boxcar_norm_clip_factor, or 1 without correction */
    double init_mean, init_sigma;
    const uint32_t *widths; /* the plan's widths in plan order (copied) */
    uint32_t total;         /* how many */
    uint64_t latency;       /* of the search: tables are asked for positions up to
                               latency behind the samples taken (the hold included) */
    int first_own;          /* 1: window 0 by its own values, the delay line */
    void *stream;           /* cudaStream_t to queue the work on; NULL: its own */
} tr_cuda_norm_setup;

tr_status tr_cuda_norm_create(int device, const tr_cuda_norm_setup *s, tr_cuda_norm **ctx,
                              tr_error *err);
void tr_cuda_norm_destroy(tr_cuda_norm *ctx);

/* Back to position 0 (window 0 in warm-up). */
tr_status tr_cuda_norm_reset(tr_cuda_norm *ctx, tr_error *err);

/*
 * Take n new samples per channel of device buffer x (layout as given, n
 * positions per channel for CHANNEL_MAJOR; src TR_SRC_CALLER_DEVICE or
 * TR_SRC_OWN_DEVICE, common/device_src.h); *clean receives a device buffer
 * of the cleaned samples in the same layout (valid until the next call),
 * written by work queued on the context's stream. The values of every
 * window from that of position - n - latency on stay kept.
 * first_own: *clean holds the positions p >= 0 of p = position - W + k,
 * k < n, that is the last n - min(n, max(0, W - position)) of them (with
 * that many positions per channel for CHANNEL_MAJOR; position before the
 * call).
 */
tr_status tr_cuda_norm_process(tr_cuda_norm *ctx, const float *x, size_t n,
                               tr_boxcar_layout layout, int src, const float **clean,
                               tr_error *err);

/*
 * Wait for the work queued so far; then tr_cuda_norm_ready answers for the
 * windows of every call before, and *nonfinite is increased by the
 * non-finite samples of the calls since the last settle.
 */
tr_status tr_cuda_norm_settle(tr_cuda_norm *ctx, uint64_t *nonfinite, tr_error *err);

/*
 * End of the stream (first_own; otherwise *m = 0): when window 0 is not
 * complete, its own values from the samples it has; *held receives the
 * last min(position, W) cleaned samples from the delay line (*m of them per
 * channel, layout as given, valid until the next call). Then only tables,
 * ready flags and reset.
 */
tr_status tr_cuda_norm_finish(tr_cuda_norm *ctx, tr_boxcar_layout layout,
                              const float **held, size_t *m, tr_error *err);

/* Device tables of windows first .. first + nwin - 1 (kept ones, see
 * process), as tr_cuda_boxcar_set_norm_windows takes them; valid until the
 * next call. Written on the context's stream: ready for work queued after
 * them on that stream (with a stream of its own, ready at return). */
tr_status tr_cuda_norm_tables(tr_cuda_norm *ctx, uint64_t first, uint32_t nwin,
                              const float **mu, const float **sigma, tr_error *err);

/* 1 when the values of window floor(p / window) of channel c were measured;
 * -1 when that window is not kept (the calls up to the last settle). */
int tr_cuda_norm_ready(const tr_cuda_norm *ctx, uint64_t p, uint32_t c);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_NORM_CUDA_H */
