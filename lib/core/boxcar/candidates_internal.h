/*
 * Candidates, internal: the choice of the scan that finds the positions with
 * values at or above the threshold, the clustering's cost (for tests and
 * benchmarks), the clustering of peaks found on the device, and the part of
 * a device buffer given to the CUDA backend (warm-up masking).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6.
 */
#ifndef TRANSIENT_CANDIDATES_INTERNAL_H
#define TRANSIENT_CANDIDATES_INTERNAL_H

#include <transient/candidates.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "reference" (every position in turn: the rules as written), "generic",
 * "avx2" (a vectorised scan skips the positions without peaks), or NULL for
 * the best this CPU supports. Returns 0 if unavailable. Every kernel emits
 * the same events. Process-wide: call it while no clustering runs. */
int tr_candidates_select(const char *kernel);

/* The kernel in use: "reference", "generic" or "avx2". */
const char *tr_candidates_kernel(void);

/*
 * CUDA backend: positions k0 .. k0 + n - 1 of a device buffer, time-major or
 * channel-major with ld positions per channel; skip: NULL or nchan host
 * flags (1: the channel yields no peak in these positions); src:
 * TR_SRC_CALLER_DEVICE, or TR_SRC_OWN_DEVICE for a buffer this library wrote
 * and waited for (cuda/common/device_src.h).
 */
tr_status tr_candidates_process_device_part(tr_candidates *q, const float *d_snr,
                                            const int32_t *d_width, int64_t ld,
                                            int64_t k0, size_t n, int channel_major,
                                            const uint8_t *skip, int src);

/*
 * The clustering of n positions whose peaks (values at or above the
 * threshold) were found elsewhere: pk[0 .. npk) in stream order, k counted
 * from the object's position. The CUDA backend's path (the device selects
 * the peaks); emits exactly what tr_candidates_process emits for the values.
 */
struct tr_cuda_cand_peak;
tr_status tr_candidates_process_peaks(tr_candidates *q,
                                      const struct tr_cuda_cand_peak *pk, size_t npk,
                                      size_t n);

/* The peaks of one run of the last selection into out (run->members). */
struct tr_cuda_cand_run;
typedef tr_status (*tr_candidates_run_peaks_fn)(void *arg,
                                                const struct tr_cuda_cand_run *run,
                                                struct tr_cuda_cand_peak *out,
                                                tr_error *err);

/*
 * tr_candidates_process_peaks from the peaks' runs (one channel, link_width
 * 0 and a scanning kernel: TR_ERR_INVALID otherwise): the same events; fetch
 * gives the peaks of a run that a span limit cuts.
 */
tr_status tr_candidates_process_runs(tr_candidates *q,
                                     const struct tr_cuda_cand_run *runs, size_t nruns,
                                     size_t n, tr_candidates_run_peaks_fn fetch,
                                     void *arg);

/*
 * 1 when the boxcar search's statistics for position p of channel c were
 * measured (not warm-up): those of its normalisation object, or those
 * measured on the device for a stream of tr_boxcar_process_device.
 */
struct tr_boxcar;
int tr_boxcar_ready(const struct tr_boxcar *q, uint64_t p, uint32_t c);

/*
 * The positions from search position p on (at most n) to give the clustering
 * in one part, returned as a count: when some channel is still warming up in
 * p's statistics window, the rest of that window, with *flags = skip (nchan
 * entries, 1 = the channel is warming up there); else the run of windows
 * from p on in which every channel is ready, with *flags = NULL (FIXED mode:
 * always all n).
 */
size_t tr_boxcar_ready_piece(const struct tr_boxcar *q, uint64_t p, size_t n,
                             uint8_t *skip, const uint8_t **flags);

/* tr_boxcar_candidates_process_device for positions k0 .. k0 + n - 1 of a
 * device buffer (ld positions per channel when channel-major); `position` is
 * the search position of k0. */
tr_status tr_boxcar_cluster_device(tr_candidates *c, const struct tr_boxcar *q,
                                   uint64_t position, const float *d_snr,
                                   const int32_t *d_width, int64_t ld, int64_t k0,
                                   size_t n, int channel_major);

/* Channel entries looked at by the peaks since create or reset: the cost
 * of the clustering, which tests bound (O(nchan + peaks) per position with
 * link_width = 0, whatever link_chan). */
uint64_t tr_candidates_visits(const tr_candidates *q);

/* Channels of the input streams (cfg.nchan). */
uint32_t tr_candidates_nchan(const tr_candidates *q);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CANDIDATES_INTERNAL_H */
