/*
 * CUDA backend of the boxcar single-pulse search: the C interface between
 * lib/core/boxcar/boxcar.c and the CUDA code of cuda/boxcar/ (the streaming
 * context boxcar_context.cu, its normalisation tables boxcar_norm_tables.cu,
 * the kernel choice boxcar_launch.cu, the kernels boxcar_fast.cuh and
 * boxcar_paper.cuh). Plans are passed as they are: their fields (struct
 * tr_boxcar_plan) are defined with this interface, in boxcar_plan_def.h.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020):
 * PAPER is the paper's GPU design (section 3.1.1 and Algorithm 2 for BoxDIT,
 * section 3.2.1 and Algorithms 4-5 for IGRID); FAST is our own exact design.
 * Both evaluate exactly the plan's boxcars (<transient/boxcar.h>), the
 * nominal set, nothing more.
 *
 * What the caller (lib/core/boxcar/boxcar.c) provides and can rely on
 *   - The context is a complete streaming object: it keeps its own device copy
 *     of the input history (per channel the last latency + max(8192, A) + 1024
 *     samples, latency = L_end - 1 = tr_boxcar_plan_latency, A = the largest
 *     stage stride: a call's first output is rounded down to a tile or grid
 *     boundary, because every stage's grid is absolute), its position and its
 *     normalisation tables. The caller passes only the NEW samples of each call;
 *     no alignment of the call's start or length is needed (chunk size 1
 *     works): output k of a run is position position_in - latency + k,
 *     positions < 0 get snr = 0, width = 0, exactly like tr_boxcar_process.
 *   - Layout per call: TR_BOXCAR_TIME_MAJOR x[k * nchan + c] or
 *     TR_BOXCAR_CHANNEL_MAJOR x[c * n + k] (n = samples of the call); snr and
 *     width are written in the same layout (flush: n = latency). Host or device
 *     pointers (on_device). Host buffers need no pinning or alignment. Calls
 *     longer than `batch` samples per channel are split internally (the result
 *     does not depend on it).
 *   - Normalisation: before the first run, and whenever the values in effect
 *     change, call tr_cuda_boxcar_set_norm with mu_L and sigma_L for every
 *     channel and every evaluated width in plan order (tr_boxcar_plan_list
 *     order, total = tr_boxcar_plan_total_widths): mu[c * total + k]. The
 *     tables apply to every output position of the following runs/flush. The
 *     normalisation of boxcar (p, L) is that of the window holding p, so when
 *     a window boundary falls inside a call's outputs, split the call there
 *     (outputs of a run are positions position_in - latency + k) and set the
 *     next window's tables in between; splitting never changes the output.
 *   - Non-finite input: the host path of boxcar.c hands over samples already
 *     cleaned by tr_boxcar_norm_process; then pass fill = NULL. With fill !=
 *     NULL (nchan values, e.g. for device input that was never on the host) a
 *     NaN/Inf sample of channel c is replaced by fill[c] on the device and
 *     counted into *nonfinite.
 *   - Precision: float32 sums. S/N = X * (1/sigma_L) + (L m - mu_L)/sigma_L
 *     where X is the boxcar sum of x - m (m: a per-tile offset chosen from the
 *     data; the offset term is formed in double). Within TR_BOXCAR_FAST_TOL of
 *     the reference for the inputs boxcar.h names; the same bits for any
 *     chunking of the stream (tiles are aligned to absolute positions).
 *   - Every CUDA call is checked; failures return TR_ERR_CUDA (or
 *     TR_ERR_NOMEM for allocations) with the failing call in err->message.
 *     The context uses its own non-blocking streams; run and flush return when
 *     the results are in the caller's buffers.
 *   - Host buffers: a call is cut into sub-batches of about 2^18 values
 *     (nchan x samples, at most `batch` samples per channel) that go through
 *     two sets of device buffers on three streams, so that the copy in of one
 *     sub-batch, the search of the next and the copy out of the one before
 *     overlap. Page-locked caller buffers (cudaHostAlloc, cudaHostRegister)
 *     are copied by the GPU directly at PCIe speed; pageable ones through the
 *     driver's staging.
 *
 * Variants: TR_VARIANT_FAST (default) or TR_VARIANT_PAPER; REFERENCE is
 * TR_ERR_UNSUPPORTED here. Per-stage outputs (cfg.stage_outputs) are not
 * produced by the CUDA backend. Limits (TR_ERR_UNSUPPORTED at create): PAPER
 * BoxDIT/ideal at most 448 widths per iteration (its block of 512 threads),
 * PAPER IGRID at most 256 layers; FAST needs its tile (>= the largest stride)
 * with the prefix sums of the tile and halo in shared memory (ideal up to some
 * 20000 widths). L_end <= 2^24.
 */
#ifndef TRANSIENT_CUDA_BOXCAR_CUDA_H
#define TRANSIENT_CUDA_BOXCAR_CUDA_H

#include <transient/boxcar.h>

#include "boxcar/boxcar_plan_def.h"
#include "common/device_src.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tr_cuda_boxcar tr_cuda_boxcar;

/* Context for nchan channels of the plan (copied) on `device`; batch: samples
 * per channel per launch (>= 1; memory is sized by it). */
tr_status tr_cuda_boxcar_create(int device, const tr_boxcar_plan *plan, uint32_t nchan,
                                tr_variant variant, size_t batch, tr_cuda_boxcar **ctx,
                                tr_error *err);
void tr_cuda_boxcar_destroy(tr_cuda_boxcar *ctx);

/* Back to position 0 with an empty history (the tables stay). */
tr_status tr_cuda_boxcar_reset(tr_cuda_boxcar *ctx, tr_error *err);

/*
 * Normalisation in effect for the following outputs: mu[c * total + k],
 * sigma[c * total + k] (> 0, finite) for width k of the plan list; fill: NULL
 * or nchan replacement values for non-finite input. Host pointers, copied.
 */
tr_status tr_cuda_boxcar_set_norm(tr_cuda_boxcar *ctx, const float *mu,
                                  const float *sigma, const float *fill, tr_error *err);

/* The same for white noise: mu_L = L mean[c], sigma_L = sqrt(L) sigma[c]
 * (eq. 5), formed in double; fill as above. */
tr_status tr_cuda_boxcar_set_norm_white(tr_cuda_boxcar *ctx, const double *mean,
                                        const double *sigma, const float *fill,
                                        tr_error *err);

/*
 * Per-window normalisation for the following outputs (FAST only): nwin tables
 * for the statistics windows first .. first + nwin - 1 of `window` samples,
 * mu[(j * nchan + c) * total + k] as in set_norm for window first + j. Output
 * position p takes the table of window floor(p / window), clamped to the
 * given range (positions < 0: the first). One run or flush may thus span
 * many windows. Needs `window` to be a multiple of tr_cuda_boxcar_table_granule
 * (TR_ERR_UNSUPPORTED otherwise: split the calls at window boundaries and use
 * set_norm). No fill values (host input already cleaned); set_norm or
 * set_norm_white returns to one table. Host pointers, copied.
 */
tr_status tr_cuda_boxcar_set_norm_windows(tr_cuda_boxcar *ctx, uint64_t first,
                                          uint32_t nwin, uint32_t window, const float *mu,
                                          const float *sigma, tr_error *err);

/* The same with device pointers (e.g. the tables of norm_cuda.h), taken as
 * they are: sigma > 0 and finite is the caller's promise. Not copied: they
 * are read where they lie by the searches until the next set_norm* call
 * (keep them valid and unchanged until then), on the search's stream
 * (tr_cuda_boxcar_stream) in the order of its work. */
tr_status tr_cuda_boxcar_set_norm_windows_device(tr_cuda_boxcar *ctx, uint64_t first,
                                                 uint32_t nwin, uint32_t window,
                                                 const float *d_mu, const float *d_sigma,
                                                 tr_error *err);

/* The stream (cudaStream_t) the search of device samples runs on: work
 * queued there before a run (device normalisation, tables) is done before
 * the search reads its results, without a wait on the host. */
void *tr_cuda_boxcar_stream(tr_cuda_boxcar *ctx);

/* The tile of the FAST kernel (a power of two): statistics windows that are a
 * multiple of it can take per-window tables; 0 for PAPER. */
uint32_t tr_cuda_boxcar_table_granule(const tr_cuda_boxcar *ctx);

/*
 * Consume n new samples per channel and write n output positions (see the
 * top of this file). x, snr, width: host or device pointers as on_device says
 * (common/device_src.h: TR_SRC_OWN_DEVICE skips the wait for the caller);
 * width may be NULL; n = 0 is allowed. *nonfinite (may be NULL) is increased
 * by the samples replaced by fill.
 */
tr_status tr_cuda_boxcar_run(tr_cuda_boxcar *ctx, const float *x, size_t n,
                             tr_boxcar_layout layout, int on_device, float *snr,
                             int32_t *width, uint64_t *nonfinite, tr_error *err);

/*
 * End of data: write the last latency positions (latency values per channel),
 * evaluating only the boxcars that end inside the data. The state is not
 * changed (reset before new data).
 */
tr_status tr_cuda_boxcar_flush(tr_cuda_boxcar *ctx, tr_boxcar_layout layout,
                               int on_device, float *snr, int32_t *width, tr_error *err);

uint64_t tr_cuda_boxcar_position(const tr_cuda_boxcar *ctx); /* samples consumed */

/* Page-locked host memory (cudaMallocHost on the context's device), NULL on
 * failure; free with tr_cuda_boxcar_host_free. */
void *tr_cuda_boxcar_host_alloc(tr_cuda_boxcar *ctx, size_t bytes);
void tr_cuda_boxcar_host_free(void *p);

/* Benchmark knob of the FAST kernel: output positions per thread block
 * (power of two >= the largest stride, 0 = automatic). */
tr_status tr_cuda_boxcar_set_tile(tr_cuda_boxcar *ctx, uint32_t tile, tr_error *err);

/* Former benchmark knob of the first FAST kernel (skewed shared-memory
 * layout, bench/results/2026-11-22-h100-boxcar); the present kernel always
 * uses its padded layout, so this only checks ctx and has no effect. */
tr_status tr_cuda_boxcar_set_skew(tr_cuda_boxcar *ctx, int on, tr_error *err);

/* Benchmark knob of the FAST kernel: 1 (default) = the last stages whose
 * stride is at least twice the positions per thread are evaluated first,
 * their starts spread over the block's threads, 0 = the thread that owns a
 * start evaluates it in turn. The same bits either way. */
tr_status tr_cuda_boxcar_set_split(tr_cuda_boxcar *ctx, int on, tr_error *err);

/* Benchmark knob of the FAST kernel: consecutive positions per thread, 8
 * (default) or 16 (half the per-stage work per position, twice the
 * registers). The same bits either way. */
tr_status tr_cuda_boxcar_set_positions(tr_cuda_boxcar *ctx, int kq, tr_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_BOXCAR_CUDA_H */
