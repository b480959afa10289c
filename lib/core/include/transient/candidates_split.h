/*
 * Candidates of a search whose channels are split into ranges searched apart
 * (one boxcar search per GPU: the FRB search over several devices), clustered
 * as one stream by one tr_candidates object.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6 (<transient/candidates.h>).
 *
 * Part j holds the nchan[j] channels that follow those of parts 0 .. j - 1
 * (the parts together are the clustering's nchan). Each part gives its
 * positions in order, from the clustering's position at create or reset on,
 * at its own pace: a part may be ahead of the others (the FRB search's
 * low-DM trials come out of the dedispersion earlier than the high-DM ones).
 * Its peaks (values at or above the threshold) are kept until every part has
 * reached their position; tr_candidates_split_merge then gives the clustering
 * every such position, the peaks in stream order (position, then channel in
 * the clustering's numbering): the events are those that one search over all
 * channels, given in the same calls, would emit. Peaks are selected when a
 * part gives its values, with the threshold of that moment: a threshold
 * change applies to each part from the next position it gives.
 *
 * Errors go to the err argument of each call (messages start with
 * "candidates: "); a part's call leaves the others untouched, so calls for
 * different parts may run at the same time on different threads. Merge,
 * reset and destroy run alone.
 */
#ifndef TRANSIENT_CANDIDATES_SPLIT_H
#define TRANSIENT_CANDIDATES_SPLIT_H

#include <transient/candidates.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Limits checked at create. */
#define TR_CANDIDATES_SPLIT_MAX_PARTS 64u

/* One value at or above the threshold, as a part gives it. */
typedef struct {
    uint32_t k; /* position, counted from the call's first */
    uint32_t c; /* channel within the part */
    int32_t w;  /* boxcar width (below 1 counts as 1) */
    float s;    /* S/N */
} tr_candidates_peak;

typedef struct tr_candidates_split tr_candidates_split;

/*
 * nparts parts of nchan[0 .. nparts) channels (each >= 1, summing to c's
 * nchan) clustered by c (not owned; keep it until destroy). devices: NULL, or
 * nparts CUDA device indices on which the parts' device values are selected
 * (tr_boxcar_candidates_split_device); a device may repeat.
 */
tr_candidates_split *tr_candidates_split_create(tr_candidates *c, uint32_t nparts,
                                                const uint32_t *nchan, const int *devices,
                                                tr_error *err);
void tr_candidates_split_destroy(tr_candidates_split *s);

/* Drop the kept peaks; every part restarts at c's position (reset c first). */
tr_status tr_candidates_split_reset(tr_candidates_split *s);

/*
 * Part `part`'s n next positions: its peaks pk[0 .. npk) in stream order
 * (k ascending, then c), k < n.
 */
tr_status tr_candidates_split_add(tr_candidates_split *s, uint32_t part,
                                  const tr_candidates_peak *pk, size_t npk, size_t n,
                                  tr_error *err);

/*
 * The boxcar search output of part `part` (q: its search, of nchan[part]
 * channels) for its next n positions, which must be search positions
 * position .. position + n - 1: device pointers in q's device layout
 * (tr_boxcar_process_device), or host pointers (time-major, tr_boxcar_flush
 * output) when on_device is 0. The peaks are selected on the part's device,
 * the warm-up masked as tr_boxcar_candidates_process_device does. Needs
 * devices at create (TR_ERR_UNSUPPORTED otherwise).
 */
struct tr_boxcar;
tr_status tr_boxcar_candidates_split_select(tr_candidates_split *s, uint32_t part,
                                            const struct tr_boxcar *q, uint64_t position,
                                            const float *snr, const int32_t *width,
                                            size_t n, int on_device, tr_error *err);

/* Cluster (tr_candidates_process of c) every position that all parts have
 * given and c has not had yet. */
tr_status tr_candidates_split_merge(tr_candidates_split *s, tr_error *err);

/* Next position of part `part` (-1 for a part that does not exist). */
int64_t tr_candidates_split_position(const tr_candidates_split *s, uint32_t part);

/* Peaks kept for positions some part has not reached yet. */
size_t tr_candidates_split_kept(const tr_candidates_split *s);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CANDIDATES_SPLIT_H */
