/*
 * Candidates, internal: the choice of the scan that finds the positions with
 * values at or above the threshold, and the clustering's cost (for tests and
 * benchmarks).
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

/* Channel entries looked at by the peaks since create or reset: the cost
 * of the clustering, which tests bound (O(nchan + peaks) per position with
 * link_width = 0, whatever link_chan). */
uint64_t tr_candidates_visits(const tr_candidates *q);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CANDIDATES_INTERNAL_H */
