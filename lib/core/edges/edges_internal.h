/*
 * Internal contract between the edge localizer object (edges.c) and its
 * CPU variants (edges_ref.c, edges_cpu.c). Every variant, the CUDA ones
 * (cuda/edges/) included, runs the same state machine over a span of samples
 * (edges_state.h) and must give identical results.
 */
#ifndef TRANSIENT_EDGES_INTERNAL_H
#define TRANSIENT_EDGES_INTERNAL_H

#include <transient/edges.h>

/* State, levels and the crossing formula, shared with the CUDA variants. */
#include "edges/edges_state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Variant runner: process n samples from carry c, writing at most cap
 * transitions; stops at the first sample whose transition does not fit.
 * Returns the number of transitions written; *consumed gets samples used. */
typedef size_t (*tr_edges_run_fn)(tr_edges_lv lv, tr_edges_carry *c, const float *x,
                                  size_t n, tr_edge *out, size_t cap, size_t *consumed);

size_t tr_edges_run_reference(tr_edges_lv lv, tr_edges_carry *c, const float *x, size_t n,
                              tr_edge *out, size_t cap, size_t *consumed);
size_t tr_edges_run_cpu(tr_edges_lv lv, tr_edges_carry *c, const float *x, size_t n,
                        tr_edge *out, size_t cap, size_t *consumed);

/* Choose the CPU variant's sample classifier: "generic", "sse2", "avx2" or NULL
 * for the best this CPU supports. Returns 0 if unavailable. For tests. */
int tr_edges_cpu_select(const char *kernel);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_EDGES_INTERNAL_H */
