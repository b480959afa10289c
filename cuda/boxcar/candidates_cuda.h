/*
 * CUDA backend of the boxcar candidates (<transient/candidates.h>): the C
 * interface between lib/core/boxcar/candidates.c and the peak selection on
 * the device (candidates_cuda.cu, kernels in candidates_kernels.cuh).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6.
 *
 * The S/N and widths of a call (device or host pointers) are searched on the
 * device for the values at or above the threshold (the peaks); only those
 * come back, in stream order, and the host clusters them with the same code
 * as the CPU backend (candidates.c). Peaks are sparse (the threshold lies far
 * above the noise), so the dense values never cross PCIe; the clustering is
 * a serial walk over the peaks, which a CPU core runs far faster than one
 * GPU thread would. The peak buffer grows on demand: no count of peaks is an
 * error. With one channel and any widths linking, a pulse gives a run of
 * peaks that the host would merge one by one; the device merges them
 * (tr_cuda_cand_select_runs) and only the runs come back.
 */
#ifndef TRANSIENT_CUDA_CANDIDATES_CUDA_H
#define TRANSIENT_CUDA_CANDIDATES_CUDA_H

#include <transient/candidates.h>

#include "common/device_src.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One value at or above the threshold. */
typedef struct tr_cuda_cand_peak {
    uint32_t k; /* position index in the call */
    uint32_t c; /* channel */
    int32_t w;  /* width (at least 1) */
    float s;    /* S/N */
} tr_cuda_cand_peak;

/* Peaks of one channel, in stream order, that link in a chain: each starts
 * at most link_time after the largest end (k + w) of those before it; for
 * the clustering with any widths linking (candidates.c), where the chain is
 * one set. Chains are cut every TR_CUDA_CAND_RUN_CHUNK peaks of the call. */
typedef struct tr_cuda_cand_run {
    uint32_t k0, k1;   /* positions of the first and last peak */
    uint32_t kb;       /* position of the best: highest S/N, the first of equals */
    int32_t wb;        /* its width (at least 1) */
    float sb;          /* its S/N */
    uint32_t end;      /* largest k + w of the peaks */
    uint32_t members;  /* peaks */
    uint32_t wlo, whi; /* smallest and largest width */
    uint32_t i0;       /* index of the first peak among the call's peaks */
} tr_cuda_cand_run;

/* Peaks per chunk of the chain search: no run holds more. */
#define TR_CUDA_CAND_RUN_CHUNK 64

typedef struct tr_cuda_cand tr_cuda_cand;

/* Context for cfg->nchan channels on `device`. */
tr_status tr_cuda_cand_create(int device, const tr_candidates_config *cfg,
                              tr_cuda_cand **ctx, tr_error *err);
void tr_cuda_cand_destroy(tr_cuda_cand *ctx);

/* Values of one select call, at most (peak positions and counts fit 32 bits). */
#define TR_CUDA_CAND_MAX_VALUES ((int64_t)1 << 30)

/*
 * The peaks (values >= threshold; NaN never is) of positions k0 .. k0 + n - 1
 * of a buffer that is time-major (snr[k * nchan + c]) or channel-major
 * (snr[c * ld + k]); width in the same layout or NULL (1). skip: NULL or
 * nchan host flags, 1 = the channel has no peak in these positions. Host or
 * device pointers (on_device, common/device_src.h; host buffers are
 * time-major from k0 = 0);
 * n * nchan <= TR_CUDA_CAND_MAX_VALUES.
 * *peaks (owned by the context, valid until the next call) receives *npeaks
 * peaks in stream order: k ascending, then c; k counts from 0 at k0.
 */
tr_status tr_cuda_cand_select(tr_cuda_cand *ctx, const float *snr, const int32_t *width,
                              int64_t ld, int64_t k0, size_t n, int channel_major,
                              int on_device, float threshold, const uint8_t *skip,
                              const tr_cuda_cand_peak **peaks, size_t *npeaks,
                              tr_error *err);

/*
 * One channel (nchan = 1): the same selection, but what comes back is the
 * peaks' runs (tr_cuda_cand_run, chains with link_time), *nruns of them in
 * stream order, and *npeaks the count of peaks; the peaks stay on the device
 * until the next call (tr_cuda_cand_run_peaks).
 */
tr_status tr_cuda_cand_select_runs(tr_cuda_cand *ctx, const float *snr,
                                   const int32_t *width, int64_t ld, int64_t k0, size_t n,
                                   int channel_major, int on_device, float threshold,
                                   const uint8_t *skip, uint32_t link_time,
                                   const tr_cuda_cand_run **runs, size_t *nruns,
                                   size_t *npeaks, tr_error *err);

/* The run->members peaks of a run of the last tr_cuda_cand_select_runs into
 * out (host memory). */
tr_status tr_cuda_cand_run_peaks(tr_cuda_cand *ctx, const tr_cuda_cand_run *run,
                                 tr_cuda_cand_peak *out, tr_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_CANDIDATES_CUDA_H */
