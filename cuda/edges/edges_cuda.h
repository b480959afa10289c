/*
 * CUDA backend of the edge localizer: C interface between lib/core (C99) and
 * the kernels in cuda/edges/ (CUDA C++). Built only when CUDA is enabled. It
 * speaks in the plain structs of edges_state.h and the public tr_edge, so that
 * the CUDA layer needs nothing from lib/core.
 *
 * Two levels:
 *  - tr_cuda_edges_*: a context (device, stream, staging and device buffers)
 *    used by tr_edges objects; every CUDA call is checked and reported through
 *    tr_error, nothing is printed.
 *  - tr_cuda_edges_{fast,paper}_launch: stream-ordered launchers over device
 *    memory, CUB style (call with d_temp == NULL to get *temp_bytes).
 */
#ifndef TRANSIENT_CUDA_EDGES_CUDA_H
#define TRANSIENT_CUDA_EDGES_CUDA_H

#include "edges/edges_state.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tr_cuda_edges tr_cuda_edges;

/* Create a context on `device`; batch = samples per device batch (> 0). */
tr_status tr_cuda_edges_create(int device, size_t batch, tr_variant variant,
                               tr_cuda_edges **ctx, tr_error *err);
void tr_cuda_edges_destroy(tr_cuda_edges *ctx);

/* Host samples in, host transitions out; same contract as the CPU variants
 * (tr_edges_run_fn of lib/core/edges/edges_internal.h). */
tr_status tr_cuda_edges_run_host(tr_cuda_edges *ctx, tr_edges_lv lv, tr_edges_carry *c,
                                 const float *x, size_t n, tr_edge *out, size_t cap,
                                 size_t *consumed, size_t *nout, tr_error *err);

/* Device samples in, device transitions out; same contract. */
tr_status tr_cuda_edges_run_device(tr_cuda_edges *ctx, tr_edges_lv lv, tr_edges_carry *c,
                                   const float *d_x, size_t n, tr_edge *d_out, size_t cap,
                                   size_t *consumed, size_t *nout, tr_error *err);

/*
 * Launchers. Process d_x[0..n) (n < 2^31) continuing from *d_cin. Transition
 * number k (0-based, in stream order) is written to d_out[k] for k < cap; the
 * total number found goes to *d_count (it may exceed cap); if it does,
 * transition number cap goes to *d_stop so the caller can stop before it. When
 * *d_count <= cap, *d_cout is the carry after the n samples (d_cout must not
 * alias d_cin: blocks read *d_cin while the last block writes *d_cout). Everything is
 * stream-ordered on `stream`; nothing is synchronized. Return: cudaSuccess or the error
 * of the first failing call (as int, so that this header needs no CUDA include).
 */
int tr_cuda_edges_fast_launch(const float *d_x, int64_t n, tr_edges_lv lv,
                              const tr_edges_carry *d_cin, tr_edges_carry *d_cout,
                              tr_edge *d_out, int64_t cap, tr_edge *d_stop,
                              unsigned long long *d_count, void *d_temp,
                              size_t *temp_bytes, void *stream);

/* The paper's multi-pass design (classify, level scan, segmented min-scan,
 * compaction as separate passes with CUB/Thrust): benchmark baseline. */
int tr_cuda_edges_paper_launch(const float *d_x, int64_t n, tr_edges_lv lv,
                               const tr_edges_carry *d_cin, tr_edges_carry *d_cout,
                               tr_edge *d_out, int64_t cap, tr_edge *d_stop,
                               unsigned long long *d_count, void *d_temp,
                               size_t *temp_bytes, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_EDGES_CUDA_H */
