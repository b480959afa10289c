/*
 * Kalman-bank detector: internal contract between the model (kalman_model.c),
 * the object (kalman.c) and its CPU variants (kalman_ref.c, kalman_cpu.c); the
 * model and parameters every variant reads, the CUDA backend
 * (cuda/kalman/kalman_cuda.h) included, are in kalman_bank.h. Not installed.
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector" (equations 2-15).
 *
 * Arrays are indexed by hypothesis as kalman_bank.h describes.
 *
 * Batched (diagonal) formulation, used by the fast variants (docs/kalman.md):
 * the filter of hypothesis k at sample j continues hypothesis k-1 at j-1, so
 * the filters form diagonals s = j - k + 1 (the onset sample). Diagonal s
 * starts from the noise-only filter's predicted state for sample s and runs
 * with gains K_1, K_2, ... along samples s, s+1, ...; its states depend only on
 * the data, never on the registers d. With Lambda[j] = sum_{t<=j} L_X[t]:
 *   d_k[j] = log(alpha) + sum_{i=1}^{k} q_i[s+i-1] - (Lambda[j] - Lambda[s-1])
 * and with c_X[t] = L_X[t] - q_M[t] = log(1 - alpha + exp(d_{M-1}[t-1])) and
 * Dt_{s,k} = sum_{i=1}^{k} (q_i[s+i-1] - q_M[s+i-1]) (small numbers):
 *   d_k[j] = log(alpha) + Dt_{s,k} - (C[j] - C[s-1]),  C = prefix sum of c_X,
 *   c_X[j] = log(1 - alpha + alpha exp(Dt_{j-M+1,M-1} - (C[j-1] - C[j-M]))),
 * a scalar recursion with lag M once the Dt are known, and
 *   LLR[j] = LSE_{k=1..N_s} d_k[j] - LSE(0, d_k[j] for k = N_s+1..M-1).
 */
#ifndef TRANSIENT_KALMAN_INTERNAL_H
#define TRANSIENT_KALMAN_INTERNAL_H

#include <transient/kalman.h>

/* The model arrays and run-time parameters, shared with the CUDA variants. */
#include "kalman/kalman_bank.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fill derived arrays (log_sigma, inv_sigma, c, h, companion detection). */
void tr_kalman_model_finish(tr_kalman_model *m);

/* ---- CPU variants ------------------------------------------------------
 * run(): n samples (non-finite = missing, see kalman.h), writes llr[i]; when
 * kmax != NULL, kmax[i] = argmax_{k=1..M-1} d_k (1-based k) for every i with
 * llr[i] > kmax_above (other entries untouched). Returns the number of
 * non-finite samples met. */
typedef struct tr_kalman_ref tr_kalman_ref;
tr_kalman_ref *tr_kalman_ref_create(const tr_kalman_model *m); /* NULL: no memory */
void tr_kalman_ref_destroy(tr_kalman_ref *r);
void tr_kalman_ref_reset(tr_kalman_ref *r);
uint64_t tr_kalman_ref_run(tr_kalman_ref *r, const tr_kalman_params *p, const float *x,
                           size_t n, double *llr, uint32_t *kmax, double kmax_above);

typedef struct tr_kalman_cpu tr_kalman_cpu;
tr_kalman_cpu *tr_kalman_cpu_create(const tr_kalman_model *m); /* NULL: no memory */
void tr_kalman_cpu_destroy(tr_kalman_cpu *c);
void tr_kalman_cpu_reset(tr_kalman_cpu *c);
uint64_t tr_kalman_cpu_run(tr_kalman_cpu *c, const tr_kalman_params *p, const float *x,
                           size_t n, double *llr, uint32_t *kmax, double kmax_above);
/* Kernel of the fast CPU variant: "generic", "avx2" or NULL (best). 0 when
 * unavailable. For tests and benchmarks. */
int tr_kalman_cpu_select(const char *kernel);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_KALMAN_INTERNAL_H */
