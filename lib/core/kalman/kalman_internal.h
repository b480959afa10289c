/*
 * Kalman-bank detector: internal contract between the model (kalman_model.c),
 * the object (kalman.c), its CPU variants (kalman_ref.c, kalman_cpu.c) and the
 * CUDA backend (cuda/kalman/kalman_cuda.cu). Not installed.
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector" (equations 2-15).
 *
 * Indexing used by every array below: hypothesis k = 1..M is stored at index
 * k-1. Index M-1 (hypothesis M) is the noise-only steady-state filter.
 * Per hypothesis the log-likelihood of eq. 5 is evaluated as
 *   q_k = c[k-1] - h[k-1] * e^2,  e = r - (z{1} + z{Q+1}),
 *   c = -1/2 log(2 pi Sigma_k),   h = 1/(2 Sigma_k).
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

#ifdef __cplusplus
extern "C" {
#endif

struct tr_kalman_model {
    uint32_t Q;        /* AR order; state size n = 2Q */
    uint32_t n;        /* 2Q */
    uint32_t M;        /* hypotheses */
    double *A;         /* n x n, row-major */
    double *K;         /* M x n: row k-1 = K_k; row M-1 = noise-only gain */
    double *sigma;     /* M: Sigma_{r,k|k-1}; [M-1] = noise-only */
    double *log_sigma; /* M: log Sigma_k */
    double *inv_sigma; /* M: 1 / Sigma_k */
    double *c;         /* M: -1/2 log(2 pi Sigma_k) */
    double *h;         /* M: 1 / (2 Sigma_k) */
    int companion;     /* A = blkdiag(companion(ax), companion(an)) */
    double *ax;        /* Q: first row of the target block (when companion) */
    double *an;        /* Q: first row of the noise block (when companion) */
};

/* Run-time parameters shared by every variant. */
typedef struct {
    uint32_t Ns;        /* present: hypotheses 1..Ns */
    double log_alpha;   /* log(alpha) */
    double log1m_alpha; /* log(1 - alpha) (log1p(-alpha)) */
} tr_kalman_params;

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

/* ---- CUDA backend (cuda/kalman/kalman_cuda.cu, built with TR_HAVE_CUDA) ---------
 * variant: TR_VARIANT_FAST (batched diagonal formulation) or TR_VARIANT_PAPER
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

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_KALMAN_INTERNAL_H */
