/*
 * CUDA backend of the boxcar candidates (<transient/candidates.h>): the C
 * interface between lib/core/boxcar/candidates.c and the clustering on the
 * device (candidates_cuda.cu, kernels in candidates_kernels.cuh).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6.
 *
 * The context is the whole streaming clustering: position, open events and
 * the active peaks per channel live on the device; a call's S/N and widths
 * (device or host pointers) are searched for peaks there, the peaks are
 * clustered there, and only the events closed by the call come back. Events
 * come in the order of candidates.c (each closing batch sorted by first,
 * channel, start; ties by width). Every buffer grows on demand (a walk that
 * runs out of room stops before the step and is resumed), so no count of
 * peaks or events is an error.
 */
#ifndef TRANSIENT_CUDA_CANDIDATES_CUDA_H
#define TRANSIENT_CUDA_CANDIDATES_CUDA_H

#include <transient/candidates.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tr_cuda_cand tr_cuda_cand;

/* Context for cfg (nchan, link_*, max_span, start_position; the threshold
 * is given per call) on `device`. */
tr_status tr_cuda_cand_create(int device, const tr_candidates_config *cfg,
                              tr_cuda_cand **ctx, tr_error *err);
void tr_cuda_cand_destroy(tr_cuda_cand *ctx);

/* Back to cfg.start_position with no open events or active peaks. */
tr_status tr_cuda_cand_reset(tr_cuda_cand *ctx, tr_error *err);

/*
 * The next n positions: values of positions k0 .. k0 + n - 1 of a buffer
 * that is time-major (snr[k * nchan + c]) or channel-major
 * (snr[c * ld + k]); width in the same layout or NULL (1). skip: NULL or
 * nchan host flags, 1 = the channel has no peak in these positions.
 * Host or device pointers (on_device). The closed events are then those of
 * tr_cuda_cand_events.
 */
tr_status tr_cuda_cand_process(tr_cuda_cand *ctx, const float *snr, const int32_t *width,
                               int64_t ld, int64_t k0, size_t n, int channel_major,
                               int on_device, float threshold, const uint8_t *skip,
                               tr_error *err);

/* Close every open event (end of data); processing may continue. */
tr_status tr_cuda_cand_flush(tr_cuda_cand *ctx, tr_error *err);

/* The events closed by the last process or flush (valid until the next
 * call), in emission order; returns how many. */
size_t tr_cuda_cand_events(const tr_cuda_cand *ctx, const tr_candidate **events);

typedef struct {
    int64_t position; /* next input position */
    int64_t closed;   /* min(position, first of the open events) */
    uint64_t peaks, emitted;
    uint32_t open; /* events still growing */
} tr_cuda_cand_info;

void tr_cuda_cand_get_info(const tr_cuda_cand *ctx, tr_cuda_cand_info *info);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_CANDIDATES_CUDA_H */
