/*
 * Kalman-bank detector on CUDA: declarations shared by the FAST context
 * (kalman_cuda.cu) and the PAPER variant (kalman_paper.cu). Not installed.
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector" (equations 2-15).
 */
#ifndef TRANSIENT_CUDA_KALMAN_CUDA_CUH
#define TRANSIENT_CUDA_KALMAN_CUDA_CUH

#include "kalman/kalman_cuda.h"

/* PAPER variant: one kernel launch per sample over M-2 threads (k = 2..M-1),
 * two copies of the registers z, d on the device read and written
 * alternately, the gains interleaved (element i of K_2, K_3, ..., K_{M-1},
 * then element i+1), filters #1 and #M, L_X, S1/S2, norm_factor and the LLR on
 * the host in double, with the per-sample copies these imply. */
struct tr_kalman_paper;
tr_status tr_kalman_paper_create(int device, const tr_kalman_model *m,
                                 const tr_kalman_params *p, tr_kalman_paper **out,
                                 tr_error *err);
void tr_kalman_paper_destroy(tr_kalman_paper *c);
tr_status tr_kalman_paper_reset(tr_kalman_paper *c, tr_error *err);
void tr_kalman_paper_set_params(tr_kalman_paper *c, const tr_kalman_params *p);
/* Host samples in, host LLR (double, may be NULL) and kmax (may be NULL) out. */
tr_status tr_kalman_paper_run(tr_kalman_paper *c, const float *x, size_t n, double *llr,
                              uint32_t *kmax, double kmax_above, uint64_t *nonfinite,
                              tr_error *err);

#endif /* TRANSIENT_CUDA_KALMAN_CUDA_CUH */
