/*
 * CUDA backend of the Kalman-bank detector: the context tr_cuda_kalman_*,
 * implemented in cuda/kalman/kalman_cuda.cu (FAST) and
 * cuda/kalman/kalman_paper.cu (PAPER). A C header that needs only the model
 * and parameters of kalman_bank.h.
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector" (equations 2-15).
 *
 * What the caller (lib/core/kalman/kalman.c) provides and gets:
 *  - tr_cuda_kalman_create(device, model, params, variant, batch, &ctx, &err):
 *    the model (copied to the device in float, gains in double kept on the
 *    host for the PAPER variant's CPU filters #1 and #M), the run-time
 *    parameters (N_s, log alpha, log(1 - alpha)), TR_VARIANT_FAST or
 *    TR_VARIANT_PAPER, and `batch` (FAST: most samples per device block; the
 *    context lowers it so that the block's register buffer of (M-1) x batch
 *    floats fits the buffer size below). Fails with TR_ERR_UNSUPPORTED when
 *    FAST is asked for a model whose A is not block companion or whose Q exceeds
 *    TR_CUDA_KALMAN_FAST_MAX_Q (the caller then falls back to the CPU under
 *    AUTO, as for every detector), TR_ERR_CUDA / TR_ERR_NOMEM on device
 *    failures. The context keeps a pointer to nothing of the caller's: the
 *    model may be destroyed after create.
 *    For M <= 2048 FAST runs the normaliser and the LLR of a block on a
 *    second stream, overlapping the next block's noise-only filter and
 *    diagonals (two register buffers of at most 1 GiB); with the environment
 *    variable TR_KALMAN_CUDA_SERIAL set (not "0") at create, one stream and
 *    one buffer of at most 2 GiB. For M > 2048, one stream and one buffer of
 *    at most 6 GiB and a quarter of the free device memory (at least 2 GiB),
 *    so that blocks are many times M long.
 *  - tr_cuda_kalman_set_params: new N_s / alpha, used from the next call on
 *    (registers are kept, as on the CPU).
 *  - tr_cuda_kalman_reset: back to the start of a stream (d_k = -inf, states 0).
 *  - tr_cuda_kalman_run_host(x, n, llr, kmax, kmax_above, &nonfinite): host
 *    samples in (any pointer, pageable is fine), host LLR out as double (may be
 *    NULL), kmax exactly as the CPU run() (argmax_{k<M} d_k, 1-based, written
 *    only where llr > kmax_above; may be NULL), non-finite samples counted
 *    into *nonfinite (may be NULL). Non-finite samples are "missing" as in
 *    kalman.h. Any chunking gives the same result within float rounding.
 *  - tr_cuda_kalman_run_device(d_x, n, d_llr, d_decision, threshold): device
 *    samples in, device float LLR and uint8 decisions (LLR > threshold) out,
 *    either may be NULL; returns when the work is done. Missing samples are
 *    handled but not counted.
 *
 * Glue in kalman.c (under TR_HAVE_CUDA, include "kalman/kalman_cuda.h"):
 * create the context when tr_place() says try_cuda, keep it in the object,
 * forward reset / set_ns / set_alpha (as tr_kalman_params) / process (run_host
 * with the object's llr and kmax buffers, then the decision and event logic
 * on the host as for the CPU variants) / process_device (run_device), and
 * destroy it with the object. Every call fills tr_error and never prints.
 *
 * Precision: FAST runs the Kalman filters in float with compensated (Kahan)
 * sums of q_k - q_M along each diagonal, keeps the normaliser's prefix sums
 * in double and evaluates the log-sum-exp in float (measured on an H100: within
 * 1e-3 max(1, |LLR|) of the reference wherever the reference's literal exp()
 * is in range; about 1e-2 where registers reach +-600); for M <= 256 the
 * normaliser keeps its lag-M window in float registers of one warp (C itself
 * in double). PAPER runs filters #2..#M-1 in float with double registers d_k
 * and exp_d_k, the CPU parts in double. The profile below and the GPU
 * numbers: bench/results/2026-11-22-h100-kalman/README.md and
 * bench/results/2026-11-22-h100-kalman-fast/README.md.
 */
#ifndef TRANSIENT_CUDA_KALMAN_CUDA_H
#define TRANSIENT_CUDA_KALMAN_CUDA_H

#include "kalman/kalman_bank.h"

#ifdef __cplusplus
extern "C" {
#endif

/* variant: TR_VARIANT_FAST (batched diagonal formulation) or TR_VARIANT_PAPER
 * (one launch per sample over M-2 threads, eqs. 2-15 with norm_factor).
 * The context owns device copies of the model and all registers. */
typedef struct tr_cuda_kalman tr_cuda_kalman;
tr_status tr_cuda_kalman_create(int device, const tr_kalman_model *m,
                                const tr_kalman_params *p, tr_variant variant,
                                size_t batch, tr_cuda_kalman **ctx, tr_error *err);
void tr_cuda_kalman_destroy(tr_cuda_kalman *ctx);
tr_status tr_cuda_kalman_reset(tr_cuda_kalman *ctx, tr_error *err);
/* New N_s / alpha, used from the next call. */
tr_status tr_cuda_kalman_set_params(tr_cuda_kalman *ctx, const tr_kalman_params *p,
                                    tr_error *err);
/* Host samples in, host LLR out (n doubles); kmax as in the CPU run() (may be
 * NULL); *nonfinite increased by the non-finite samples met. */
tr_status tr_cuda_kalman_run_host(tr_cuda_kalman *ctx, const float *x, size_t n,
                                  double *llr, uint32_t *kmax, double kmax_above,
                                  uint64_t *nonfinite, tr_error *err);
/* Device samples in, device LLR (float) and decisions (LLR > threshold) out;
 * either output may be NULL. */
tr_status tr_cuda_kalman_run_device(tr_cuda_kalman *ctx, const float *d_x, size_t n,
                                    float *d_llr, uint8_t *d_decision, double threshold,
                                    tr_error *err);

/* FAST only, for benchmarks: with on = 1, time every device block's stages
 * (events; each block then waits for its end). stage_ms (may be NULL) gets
 * the milliseconds accumulated since the last call, in the order
 * [prep + noise-only filter, diagonals, normaliser, LLR, window shift];
 * the accumulators are cleared. */
tr_status tr_cuda_kalman_profile(tr_cuda_kalman *ctx, int on, double *stage_ms,
                                 tr_error *err);

#ifdef __cplusplus
}
#endif

/* Largest AR order Q the FAST kernels are compiled for (state size 2Q). */
#define TR_CUDA_KALMAN_FAST_MAX_Q 8

#endif /* TRANSIENT_CUDA_KALMAN_CUDA_H */
